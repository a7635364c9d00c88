// SPDX-License-Identifier: Apache-2.0
// The faults of a stress run, each open from the moment it hit a worker until that worker
// recovers from it: a step completed (by a new process, for faults that end one), a planted
// flip reported where it was planted.
#ifndef PARITY_STRESS_FAULT_TRACKING_H_
#define PARITY_STRESS_FAULT_TRACKING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_util.h"
#include "stress/fault_firing.h"
#include "stress/supervisor.h"

namespace parity::stress {

/// A failure nobody injected (kind "worker-crash", "worker-hang") at `time` seconds.
FaultRecord UnplannedFault(int worker, double time, std::string kind, std::string detail);

/// The faults of a run, open until recovered.
class FaultBook {
 public:
  /// The records go to `*records`, which must outlive this.
  explicit FaultBook(std::vector<FaultRecord>* records) : records_(records) {}

  /// Records an injected fault fired at process `generation` of its worker.
  void OpenInjected(FaultRecord record, std::int64_t generation, const FiredFault& fired);
  /// Records a failure nobody injected, recovered by the first step of a later process. When
  /// one of the worker's is still open, counts it there instead ("(and N more times: last
  /// HOW)"); with `repeat_how` empty, always records a new one.
  void OpenUnplanned(FaultRecord record, std::int64_t generation, const std::string& repeat_how);

  /// Step `step` completed by process `generation` of `worker` at `time` (seconds since the
  /// start): closes what it recovers, and a planted flip it passed unreported (not
  /// recovered). A disk-full fault stays open while `disk_full`.
  void OnStep(int worker, std::int64_t generation, std::int64_t step, bool disk_full, double time);
  /// An {"event":"sdc"} line: closes the planted flip it reports (same step, array and
  /// position) as recovered.
  void OnSdcEvent(int worker, const Json& event, double time);
  /// An {"event":"planted"} line: where the worker's pending flip went.
  void OnPlanted(int worker, const Json& line);

  /// Open faults of the worker other than flips: it is still recovering.
  bool HasOpen(int worker) const;
  /// Whether an injected hang of the worker is open.
  bool HasOpenHang(int worker) const;
  /// The seeds of flips asked of the worker that it has not planted yet.
  std::vector<std::uint64_t> UnplantedSeeds(int worker) const;
  /// Notes on each fault still open when the run ends.
  void Finish(bool interrupted);

 private:
  struct Open {
    std::size_t record = 0;  // index in *records_
    int worker = 0;
    double time = 0.0;
    std::int64_t generation = 0;
    bool needs_new_process = false;
    bool needs_lift = false;
    bool sdc = false;
    std::uint64_t plant_seed = 0;
    std::optional<std::int64_t> sdc_step;  // the step the flip was planted in
  };
  void Add(FaultRecord record, Open open);

  std::vector<FaultRecord>* records_;
  std::vector<Open> open_;
};

}  // namespace parity::stress

#endif  // PARITY_STRESS_FAULT_TRACKING_H_
