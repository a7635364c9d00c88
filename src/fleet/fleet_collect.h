// SPDX-License-Identifier: Apache-2.0
// `parity fleet collect PLAN -o FLEET_DIR` under mpirun: every rank runs `parity collect` on
// its own node (or device) as a child process with a time limit, packs the bundle and sends it
// to rank 0, which writes FLEET_DIR:
//
//   FLEET_DIR/
//     fleet.json      {"format":"parity-fleet","version":1,"plan","ranks","per_device",
//                      "inject","started","duration_s","collect_seconds_max",
//                      "members":[{"rank","host","local_rank","name","status","reason",
//                      "exit","seconds","bundle"}]}
//     nodes/NAME/     each member's bundle (the collect format)
//
// A member whose collect fails, is killed or outlasts --timeout is recorded as failed, with
// the reason, and the others finish.
#ifndef PARITY_FLEET_FLEET_COLLECT_H_
#define PARITY_FLEET_FLEET_COLLECT_H_

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"
#include "fleet/mpi_session.h"

namespace parity::fleet {

struct FleetCollectOptions {
  std::string plan;        ///< the plan file, as every rank sees it
  std::string fleet_dir;   ///< written by rank 0
  std::string parity_bin;  ///< the parity that runs each collect
  /// Passed on to every `parity collect`: --level, --backend, --var K=V.
  std::vector<std::string> collect_args;
  double timeout = 3600.0;  ///< seconds one member's collect may take
  bool per_device = false;  ///< one member per device: ranks of a host take devices 0, 1, ...
  /// Members collect one at a time in rank order (for members that share a host's CPUs and
  /// memory, whose benchmarks would otherwise measure each other).
  bool sequential = false;
  std::string work_dir;  ///< where each rank collects before sending ("" = $TMPDIR or /tmp)
  /// Test injections: rank `slow_rank`'s CPU benchmarks take `slow_factor` times as long; rank
  /// `kill_rank`'s collect gets SIGKILL after `kill_after` seconds.
  std::optional<int> slow_rank;
  double slow_factor = 4.0;
  std::optional<int> kill_rank;
  double kill_after = 2.0;
  std::string inject;                              ///< the --inject text, recorded in fleet.json
  std::function<void(std::string_view)> progress;  ///< rank 0 only
};

/// What rank 0 wrote (fleet.json), on rank 0; an empty object on the others.
struct FleetCollectRun {
  Json manifest = Json::object();
  int failed = 0;  ///< failed members, on every rank (so that every rank exits alike)
  /// Ranks that never answered: rank 0 ends the job (MPI_Abort) once it has written the fleet.
  std::vector<int> silent;
};

/// Whether this rank's collect may start before MPI does (EarlyCollect): it needs nothing from
/// the other ranks (not sequential, not per device, no injection).
bool MayStartEarly(const FleetCollectOptions& options);

/// A member's collect started before MPI_Init, which then runs beside it (Open MPI's start-up
/// takes about half a second on a small node). In a work directory of its own under
/// options.work_dir ($TMPDIR, /tmp).
class EarlyCollect {
 public:
  explicit EarlyCollect(const FleetCollectOptions& options);
  /// Stops a collect still running (SIGTERM to its process group, then SIGKILL) and removes the
  /// work directory.
  ~EarlyCollect();
  EarlyCollect(const EarlyCollect&) = delete;
  EarlyCollect& operator=(const EarlyCollect&) = delete;

  /// Waits for the collect to end: status, reason, exit, seconds, log_tail, has_bundle.
  Json Wait();
  /// Where the bundle is written ("" when no directory could be made).
  const std::string& work() const { return work_; }

 private:
  std::string work_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  Json outcome_ = Json::object();
};

/// Every rank's collect, gathered by rank 0. `early`, when given, is this rank's collect
/// already started (the same on every rank: all or none).
Result<FleetCollectRun> FleetCollect(const MpiSession& session, const FleetCollectOptions& options,
                                     EarlyCollect* early = nullptr);

/// With --per-device, the device the rank with `local_rank` of the `host_ranks` ranks of `host`
/// collects on, as CUDA_VISIBLE_DEVICES (and HIP's, ROCR's) will name it: the local_rank-th of
/// the devices these variables already list, else local_rank; "" when srun bound the task's
/// devices (--gpus-per-task). kInvalidInput when the list names fewer devices than the host
/// has ranks.
Result<std::string> DeviceOf(int local_rank, int host_ranks, const std::string& host);

/// The member names: the host, "host-devN" with per_device, "host.rN" when hosts repeat.
std::vector<std::string> MemberNames(const std::vector<std::string>& hosts, bool per_device);

/// Reads FLEET_DIR/fleet.json: kInvalidInput naming the file and key when malformed.
Result<Json> LoadFleetManifest(const std::string& fleet_dir);

/// The checks of LoadFleetManifest on fleet.json's text; `path` names it in errors.
Result<Json> ParseFleetManifest(std::string_view text, const std::string& path);

/// True when `dir` holds a fleet.json (a fleet directory, not a bundle).
bool IsFleetDir(const std::string& dir);

}  // namespace parity::fleet

#endif  // PARITY_FLEET_FLEET_COLLECT_H_
