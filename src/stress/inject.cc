// SPDX-License-Identifier: Apache-2.0
#include "stress/inject.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include "core/spellcheck.h"

namespace parity::stress {
namespace {

constexpr std::array<std::string_view, 6> kKindNames = {"kill",      "hang", "corrupt-checkpoint",
                                                        "disk-full", "oom",  "sdc"};
constexpr double kProbInterval = 10.0;

std::uint64_t SplitMix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

Status Bad(std::string_view text, std::string_view problem) {
  return Status::Invalid("", fmt::format("--inject {}: {}", text, problem));
}

}  // namespace

std::string_view FaultKindName(FaultKind kind) { return kKindNames[static_cast<int>(kind)]; }

Result<InjectSpec> ParseInjectSpec(std::string_view text) {
  InjectSpec spec;
  spec.text = std::string(text);
  const std::size_t colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  bool found = false;
  for (std::size_t i = 0; i < kKindNames.size(); ++i) {
    if (kind == kKindNames[i]) {
      spec.kind = static_cast<FaultKind>(i);
      found = true;
    }
  }
  if (!found) {
    const auto suggestion = Suggest(kind, kKindNames);
    return Bad(text, fmt::format("unknown fault '{}'{}", kind,
                                 suggestion ? fmt::format(" (did you mean '{}'?)", *suggestion)
                                            : std::string(" (kill, hang, corrupt-checkpoint, "
                                                          "disk-full, oom, sdc)")));
  }
  if (colon == std::string_view::npos) return spec;
  const std::string_view option = text.substr(colon + 1);
  const std::size_t eq = option.find('=');
  if (eq == std::string_view::npos) {
    return Bad(text, fmt::format("'{}' is not every=SECONDS, p=PROB or at=SECONDS", option));
  }
  const std::string_view key = option.substr(0, eq);
  const std::string_view number = option.substr(eq + 1);
  double value = 0.0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || end != number.data() + number.size() || !std::isfinite(value)) {
    return Bad(text, fmt::format("'{}' is not a number", number));
  }
  spec.value = value;
  if (key == "every") {
    if (value < 0.05) return Bad(text, "every must be at least 0.05 seconds");
    spec.mode = InjectMode::kEvery;
  } else if (key == "p") {
    if (value < 0.0 || value > 1.0) return Bad(text, "p is a probability, in [0, 1]");
    spec.mode = InjectMode::kProb;
  } else if (key == "at") {
    if (value < 0.0) return Bad(text, "at must be 0 seconds or more");
    spec.mode = InjectMode::kAt;
  } else {
    constexpr std::array<std::string_view, 3> keys = {"every", "p", "at"};
    const auto suggestion = Suggest(key, keys);
    return Bad(text, fmt::format("unknown option '{}'{}", key,
                                 suggestion ? fmt::format(" (did you mean '{}'?)", *suggestion)
                                            : std::string(" (every, p, at)")));
  }
  return spec;
}

FaultSchedule::FaultSchedule(std::vector<InjectSpec> specs, std::uint64_t seed, RunLength length,
                             int workers)
    : specs_(std::move(specs)),
      state_(specs_.size()),
      seed_(seed),
      length_(length),
      workers_(std::max(workers, 1)) {
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const InjectSpec& spec = specs_[i];
    SpecState& state = state_[i];
    switch (spec.mode) {
      case InjectMode::kOnce:
        if (length_.seconds) {
          state.next_time = 0.75 * *length_.seconds * Uniform(i, 0, 1);
        } else if (length_.steps) {
          state.once_steps =
              std::max(1.0, 0.75 * static_cast<double>(*length_.steps) * Uniform(i, 0, 1));
        } else {
          state.done = true;  // an unbounded run has no first three quarters
        }
        break;
      case InjectMode::kEvery:
        state.next_time = spec.value;
        break;
      case InjectMode::kAt:
        state.next_time = spec.value;
        break;
      case InjectMode::kProb:
        Advance(i);
        break;
    }
  }
}

double FaultSchedule::Uniform(std::size_t spec, std::int64_t occurrence, std::uint64_t salt) const {
  std::uint64_t h = SplitMix64(seed_ ^ 0x5354524553530000ULL);  // "STRESS"
  h = SplitMix64(h ^ spec);
  h = SplitMix64(h ^ static_cast<std::uint64_t>(occurrence));
  h = SplitMix64(h ^ salt);
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

void FaultSchedule::Advance(std::size_t index) {
  SpecState& state = state_[index];
  const InjectSpec& spec = specs_[index];
  switch (spec.mode) {
    case InjectMode::kOnce:
    case InjectMode::kAt:
      state.done = true;
      break;
    case InjectMode::kEvery:
      state.next_time = spec.value * static_cast<double>(state.next + 1);
      break;
    case InjectMode::kProb: {
      // The next occurrence is in the first undrawn 10-second interval whose draw hits; a p of
      // 0 never hits.
      if (spec.value <= 0.0) {
        state.done = true;
        break;
      }
      for (int tries = 0; tries < 1000000; ++tries) {
        const std::int64_t interval = state.interval++;
        if (Uniform(index, interval, 2) < spec.value) {
          state.next_time =
              kProbInterval * (static_cast<double>(interval) + Uniform(index, interval, 3));
          return;
        }
      }
      state.done = true;
      break;
    }
  }
}

std::vector<DueFault> FaultSchedule::Due(double seconds, double mean_steps) {
  std::vector<std::pair<double, DueFault>> due;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    SpecState& state = state_[i];
    while (!state.done) {
      const bool by_steps = specs_[i].mode == InjectMode::kOnce && state.next_time < 0.0;
      const bool is_due = by_steps ? mean_steps >= state.once_steps : seconds >= state.next_time;
      if (!is_due) break;
      DueFault fault;
      fault.spec = i;
      fault.occurrence = state.next;
      fault.kind = specs_[i].kind;
      fault.worker = static_cast<int>(Uniform(i, state.next, 4) * workers_) % workers_;
      due.emplace_back(by_steps ? seconds : state.next_time, fault);
      ++state.next;
      Advance(i);
    }
  }
  std::stable_sort(due.begin(), due.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<DueFault> out;
  for (auto& [time, fault] : due) out.push_back(fault);
  return out;
}

}  // namespace parity::stress
