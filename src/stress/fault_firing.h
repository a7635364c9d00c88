// SPDX-License-Identifier: Apache-2.0
// Firing an injected fault at a stress worker: when a worker can take one, and what each
// kind does to it (signals, resource limits, a corrupted checkpoint, a control message).
#ifndef PARITY_STRESS_FAULT_FIRING_H_
#define PARITY_STRESS_FAULT_FIRING_H_

#include <sys/resource.h>

#include <cstdint>
#include <optional>
#include <string>

#include "stress/inject.h"

namespace parity::stress {

/// A checkpoint a worker reported.
struct CheckpointRef {
  std::int64_t step = 0;
  std::string path;
};

/// A worker as a fault sees it.
struct FaultTarget {
  int worker = 0;
  int pid = -1;           ///< also its process group; <= 0 when it has none
  int control_fd = -1;    ///< its stdin, for a built-in worker; -1 for `exec`
  bool builtin = true;    ///< a built-in workload, not `exec`
  std::int64_t step = 0;  ///< the last step it completed
  bool running = false;   ///< started and not known to have exited
  bool settling = false;  ///< being stopped, or already expected to die (fault, watchdog)
  std::int64_t steps_this_process = 0;
  std::optional<CheckpointRef> newest_checkpoint;
  bool disk_full = false;  ///< a disk-full fault's limit is still on it
};

/// Whether a fault of `kind` can be fired at the worker now: a running process that has
/// completed a step and is not settling; corrupt-checkpoint needs a checkpoint, disk-full a
/// worker without the limit already.
bool CanFire(FaultKind kind, const FaultTarget& target);

/// What firing a fault did, and what ends it.
struct FiredFault {
  std::string detail;
  bool kill_expected = false;                  ///< the worker is meant to die of it
  bool needs_new_process = false;              ///< recovered by a step of a later process
  bool disk_full = false;                      ///< the file size limit is set: needs lifting
  std::optional<std::int64_t> resume_at_most;  ///< the restart must not resume past this step
  bool sdc = false;  ///< a flip asked of the worker, found when it reports it
  std::uint64_t plant_seed = 0;
};

/// Fires `due` at the target: SIGKILL (kill), SIGSTOP (hang), bytes of the newest
/// checkpoint flipped and SIGKILL (corrupt-checkpoint), RLIMIT_FSIZE 0 (disk-full), an
/// address-space limit and, for a built-in worker, the message to allocate past it (oom),
/// the message to flip a bit (sdc). Which bytes and bits follow from `seed` and the
/// occurrence. The target must be one CanFire accepts.
FiredFault FireFault(const DueFault& due, const FaultTarget& target, std::uint64_t seed);

/// Flips up to 8 bytes of a file at places drawn from `seed`: "N bytes flipped", or "could
/// not open it".
std::string CorruptFile(const std::string& path, std::uint64_t seed);

/// Sets the soft limit of `resource` of process `pid` (capped at its hard limit).
bool SetSoftLimit(int pid, int resource, rlim_t soft);

/// VmSize of a process, in bytes, from /proc/PID/status; 0 when unreadable.
std::uint64_t VirtualSize(int pid);

}  // namespace parity::stress

#endif  // PARITY_STRESS_FAULT_FIRING_H_
