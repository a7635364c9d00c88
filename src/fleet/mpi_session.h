// SPDX-License-Identifier: Apache-2.0
// MPI for the commands that run across ranks (the collective and interconnect suites, parity
// fleet): initialised once per process, finalised when the session ends. Started without
// mpirun or srun, the process is a singleton: one rank.
#ifndef PARITY_FLEET_MPI_SESSION_H_
#define PARITY_FLEET_MPI_SESSION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace parity::fleet {

/// MPI_COMM_WORLD while it lasts. Collective calls here must be made by every rank.
class MpiSession {
 public:
  /// MPI_Init_thread (MPI_THREAD_FUNNELED); kUnavailable when MPI can't start. Under an srun
  /// step of several tasks, kInvalidInput when MPI cannot join them into one job
  /// (CheckSlurmStep), or when it does and counts another number of ranks.
  static Result<MpiSession> Start();
  MpiSession(MpiSession&& other) noexcept;
  MpiSession& operator=(MpiSession&&) = delete;
  MpiSession(const MpiSession&) = delete;
  ~MpiSession();  ///< MPI_Finalize

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// MPI_Get_processor_name: the host this rank runs on.
  const std::string& host() const { return host_; }
  /// "Open MPI v4.1.4, ..." (MPI_Get_library_version, first line).
  const std::string& library() const { return library_; }

  void Barrier() const;
  /// A barrier waited on with sleeps rather than by spinning: for ranks that wait while
  /// others measure.
  void QuietBarrier() const;
  std::uint64_t SumAll(std::uint64_t value) const;
  double MaxAll(double value) const;
  /// True on every rank when `value` is true on every rank.
  bool AllTrue(bool value) const;
  /// Every rank's string, in rank order, on every rank.
  std::vector<std::string> GatherAll(const std::string& value) const;
  /// Sends `bytes` to rank `dest` (its length first, then chunks of at most 1 GiB).
  Status SendBytes(const std::string& bytes, int dest, int tag) const;
  /// Receives what SendBytes sent from `source`, at most `max_bytes`; kUnavailable when
  /// nothing has come by `deadline` (on Now()'s clock), kInvalidInput when it is too long.
  Result<std::string> RecvBytes(int source, int tag, double deadline, std::size_t max_bytes) const;
  /// Ends every rank at once (MPI_Abort): for a rank that no longer answers.
  [[noreturn]] void Abort(int code) const;
  /// Seconds on MPI_Wtime's clock.
  static double Now();

 private:
  MpiSession() = default;
  bool owner_ = false;
  int rank_ = 0;
  int size_ = 1;
  std::string host_;
  std::string library_;
};

/// Whether this process was started by a launcher of ranks (mpirun, srun), from its
/// environment: OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_SIZE or SLURM_NTASKS with SLURM_PROCID.
bool LaunchedByMpi();

/// The srun step this process is a task of (SLURM_STEP_NUM_TASKS, SLURM_PROCID): absent
/// outside srun (a batch script's own shell included) and for the ranks of an mpirun.
struct SlurmStep {
  int tasks = 1;
  int task = 0;
};
std::optional<SlurmStep> CurrentSlurmStep();

/// Before MPI_Init: kInvalidInput when srun started several tasks without PMIx (srun's
/// --mpi=pmix sets PMIX_RANK), which Debian's Open MPI needs to join them: each task would
/// otherwise start alone, or abort in MPI_Init. The same answer on every task.
Status CheckSlurmStep();

/// Whether this process is the one of its job that reports a failure to start: srun's task 0,
/// or any process outside srun.
bool ReportsStartFailure();

}  // namespace parity::fleet

#endif  // PARITY_FLEET_MPI_SESSION_H_
