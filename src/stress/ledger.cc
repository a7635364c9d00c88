// SPDX-License-Identifier: Apache-2.0
#include "stress/ledger.h"

#include <bit>
#include <cstring>

namespace parity::stress {

void StepLedger::Resume(std::int64_t from) {
  if (from > last_) {
    lost_ += from - last_;  // a checkpoint past every step reported: those steps were not seen
  } else {
    redone_ += last_ - from;
  }
  last_ = from;
}

void StepLedger::Record(std::int64_t step, std::optional<double> loss) {
  ++recorded_;
  if (step <= last_) {
    ++duplicated_;
    return;
  }
  if (step > last_ + 1) lost_ += step - last_ - 1;
  last_ = step;
  if (!loss) return;
  const auto [it, inserted] = losses_.try_emplace(step, *loss);
  if (!inserted &&
      std::bit_cast<std::uint64_t>(it->second) != std::bit_cast<std::uint64_t>(*loss)) {
    ++redo_mismatches_;
    if (!first_mismatch_) first_mismatch_ = step;
  }
  while (losses_.size() > kLossHistory) losses_.erase(losses_.begin());
}

}  // namespace parity::stress
