// SPDX-License-Identifier: Apache-2.0
// The step ledger of one stress worker: proof that no step is lost or done twice across
// restarts.
//
// A step is done once its effects are in the state the run continues from. A worker restarted
// from the checkpoint of step S continues at S + 1; the steps it had done after S are rolled
// back and done again ("redone"), which is neither a loss nor a duplicate. A worker that
// reports a step it has already done in the state it continues from (a resume that ignored
// its checkpoint) duplicates it; one that skips steps loses them. For workloads that report
// a loss, a redone step must give the loss of its first attempt, bit for bit.
#ifndef PARITY_STRESS_LEDGER_H_
#define PARITY_STRESS_LEDGER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>

namespace parity::stress {

class StepLedger {
 public:
  /// Losses kept for comparing redone steps: the most recent this many steps.
  static constexpr std::size_t kLossHistory = 65536;

  /// The worker (re)starts from the checkpoint of step `from` (0: from the beginning).
  void Resume(std::int64_t from);
  /// The worker reports that it completed `step`, with its loss when it has one.
  void Record(std::int64_t step, std::optional<double> loss);

  /// The last step of the state the worker continues from.
  std::int64_t last() const { return last_; }
  std::int64_t recorded() const { return recorded_; }
  std::int64_t lost() const { return lost_; }
  std::int64_t duplicated() const { return duplicated_; }
  std::int64_t redone() const { return redone_; }
  /// Redone steps whose loss differed from the first attempt's.
  std::int64_t redo_mismatches() const { return redo_mismatches_; }
  /// The first redone step whose loss differed, when there is one.
  std::optional<std::int64_t> first_mismatch() const { return first_mismatch_; }

 private:
  std::int64_t last_ = 0;
  std::int64_t recorded_ = 0;
  std::int64_t lost_ = 0;
  std::int64_t duplicated_ = 0;
  std::int64_t redone_ = 0;
  std::int64_t redo_mismatches_ = 0;
  std::optional<std::int64_t> first_mismatch_;
  std::map<std::int64_t, double> losses_;  // step -> loss of its first attempt
};

}  // namespace parity::stress

#endif  // PARITY_STRESS_LEDGER_H_
