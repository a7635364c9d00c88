// SPDX-License-Identifier: Apache-2.0
// Fault injection for `parity stress`: `--inject KIND[:every=SECONDS|:p=PROB|:at=SECONDS]`
// and the seeded schedule of when each fault is due.
#ifndef PARITY_STRESS_INJECT_H_
#define PARITY_STRESS_INJECT_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace parity::stress {

enum class FaultKind {
  kKill,               ///< SIGKILL a worker
  kHang,               ///< SIGSTOP a worker; the watchdog must notice
  kCorruptCheckpoint,  ///< flip bytes in the newest checkpoint, then kill the worker
  kDiskFull,           ///< the worker's next checkpoint write fails (file size limit 0)
  kOom,                ///< the worker allocates past an address-space limit
  kSdc,                ///< one bit of one result flipped (burn workloads)
};

/// "kill", "hang", "corrupt-checkpoint", "disk-full", "oom", "sdc".
std::string_view FaultKindName(FaultKind kind);

/// When a fault is injected.
enum class InjectMode {
  kOnce,   ///< bare KIND: once, at a random moment in the first three quarters of the run
  kEvery,  ///< every=S: at S, 2S, 3S, ...
  kProb,   ///< p=P: in each 10-second interval, with probability P, at a random moment in it
  kAt,     ///< at=S: once, S seconds after the start
};

struct InjectSpec {
  FaultKind kind = FaultKind::kKill;
  InjectMode mode = InjectMode::kOnce;
  double value = 0.0;  ///< seconds for kEvery and kAt, probability for kProb
  std::string text;    ///< as given
};

/// Parses one --inject value. kInvalidInput naming the value for an unknown kind (with "did
/// you mean"), an unknown option, a missing or non-finite number, every <= 0 (or below
/// 0.05 s), p outside [0, 1], at < 0.
Result<InjectSpec> ParseInjectSpec(std::string_view text);

/// How long the run is, for placing bare KINDs: seconds (--duration) or steps per worker
/// (--steps); when both are given the duration places them.
struct RunLength {
  std::optional<double> seconds;
  std::optional<std::int64_t> steps;
};

/// A fault that is due: which spec, its occurrence number, and the worker it targets.
struct DueFault {
  std::size_t spec = 0;
  std::int64_t occurrence = 0;
  FaultKind kind = FaultKind::kKill;
  int worker = 0;
};

/// When each spec's faults are due, drawn from `seed` (the same seed, the same moments and
/// targets). A bare KIND in a --steps run without --duration is due when the workers have
/// done, on average, a random number of steps in the first three quarters of the run.
class FaultSchedule {
 public:
  FaultSchedule(std::vector<InjectSpec> specs, std::uint64_t seed, RunLength length, int workers);

  /// The faults that fell due since the last call, at `seconds` since the start with
  /// `mean_steps` steps done per worker, in time order.
  std::vector<DueFault> Due(double seconds, double mean_steps);

  const std::vector<InjectSpec>& specs() const { return specs_; }

 private:
  struct SpecState {
    std::int64_t next = 0;      // occurrence to fire next
    double next_time = -1.0;    // seconds; < 0: none (yet)
    double once_steps = -1.0;   // kOnce in a --steps run: mean steps that make it due
    std::int64_t interval = 0;  // kProb: the first 10-second interval not yet drawn
    bool done = false;
  };
  void Advance(std::size_t index);
  double Uniform(std::size_t spec, std::int64_t occurrence, std::uint64_t salt) const;

  std::vector<InjectSpec> specs_;
  std::vector<SpecState> state_;
  std::uint64_t seed_;
  RunLength length_;
  int workers_;
};

}  // namespace parity::stress

#endif  // PARITY_STRESS_INJECT_H_
