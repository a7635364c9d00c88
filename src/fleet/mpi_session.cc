// SPDX-License-Identifier: Apache-2.0
#include "fleet/mpi_session.h"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

namespace parity::fleet {

Result<MpiSession> MpiSession::Start() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized != 0) return Status::Internal("MPI was started twice in one process");
  PARITY_RETURN_IF_ERROR(CheckSlurmStep());
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    return Status::Unavailable("MPI_Init_thread failed: MPI can't start here");
  }
  MpiSession session;
  session.owner_ = true;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &session.rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &session.size_);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  session.host_ = name;  // the length some versions give counts the terminator
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  MPI_Get_library_version(version, &length);
  session.library_ = version;
  if (const auto eol = session.library_.find_first_of("\r\n"); eol != std::string::npos) {
    session.library_.resize(eol);
  }
  if (const auto step = CurrentSlurmStep(); step && step->tasks != session.size_) {
    return Status::Invalid(  // the session ends (MPI_Finalize) on every rank alike
        "",
        fmt::format("srun started {} tasks but MPI counts {} ranks", step->tasks, session.size_));
  }
  return session;
}

MpiSession::MpiSession(MpiSession&& other) noexcept
    : owner_(other.owner_),
      rank_(other.rank_),
      size_(other.size_),
      host_(std::move(other.host_)),
      library_(std::move(other.library_)) {
  other.owner_ = false;
}

MpiSession::~MpiSession() {
  if (owner_) MPI_Finalize();
}

void MpiSession::Barrier() const { MPI_Barrier(MPI_COMM_WORLD); }

std::uint64_t MpiSession::SumAll(std::uint64_t value) const {
  std::uint64_t sum = 0;
  MPI_Allreduce(&value, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return sum;
}

double MpiSession::MaxAll(double value) const {
  double max = 0.0;
  MPI_Allreduce(&value, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max;
}

bool MpiSession::AllTrue(bool value) const {
  int in = value ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return out == 1;
}

std::vector<std::string> MpiSession::GatherAll(const std::string& value) const {
  const int length = static_cast<int>(value.size());
  std::vector<int> lengths(static_cast<std::size_t>(size_));
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> offsets(lengths.size());
  int total = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    offsets[i] = total;
    total += lengths[i];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Allgatherv(value.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                 MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> out;
  out.reserve(lengths.size());
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    out.push_back(
        all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(lengths[i])));
  }
  return out;
}

namespace {

constexpr std::size_t kChunk = std::size_t{1} << 30;

// Waits for `request` until `deadline`; cancels it and returns false when it passes.
bool WaitUntil(MPI_Request* request, double deadline) {
  for (;;) {
    int done = 0;
    MPI_Test(request, &done, MPI_STATUS_IGNORE);
    if (done != 0) return true;
    if (MPI_Wtime() > deadline) {
      MPI_Cancel(request);
      MPI_Request_free(request);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

constexpr double kForever = 1e300;

}  // namespace

void MpiSession::QuietBarrier() const {
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  WaitUntil(&request, kForever);
}

Status MpiSession::SendBytes(const std::string& bytes, int dest, int tag) const {
  // Non-blocking sends waited on with sleeps: a rank whose turn has not come leaves the
  // CPU to the ones measuring.
  const std::uint64_t size = bytes.size();
  MPI_Request request;
  if (MPI_Isend(&size, 1, MPI_UINT64_T, dest, tag, MPI_COMM_WORLD, &request) != MPI_SUCCESS) {
    return Status::Internal(fmt::format("MPI_Send to rank {} failed", dest));
  }
  WaitUntil(&request, kForever);
  for (std::size_t at = 0; at < bytes.size(); at += kChunk) {
    const int n = static_cast<int>(std::min(kChunk, bytes.size() - at));
    if (MPI_Isend(bytes.data() + at, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &request) !=
        MPI_SUCCESS) {
      return Status::Internal(fmt::format("MPI_Send to rank {} failed", dest));
    }
    WaitUntil(&request, kForever);
  }
  return Status::Ok();
}

Result<std::string> MpiSession::RecvBytes(int source, int tag, double deadline,
                                          std::size_t max_bytes) const {
  std::uint64_t size = 0;
  MPI_Request request;
  MPI_Irecv(&size, 1, MPI_UINT64_T, source, tag, MPI_COMM_WORLD, &request);
  if (!WaitUntil(&request, deadline)) {
    return Status::Unavailable(fmt::format("rank {} sent nothing in time", source));
  }
  if (size > max_bytes) {
    return Status::Invalid("", fmt::format("rank {} sends {} bytes, more than the {} allowed",
                                           source, size, max_bytes));
  }
  std::string bytes(size, '\0');
  for (std::size_t at = 0; at < bytes.size(); at += kChunk) {
    const int n = static_cast<int>(std::min<std::size_t>(kChunk, bytes.size() - at));
    MPI_Irecv(bytes.data() + at, n, MPI_BYTE, source, tag, MPI_COMM_WORLD, &request);
    if (!WaitUntil(&request, deadline)) {
      return Status::Unavailable(fmt::format("rank {} stopped sending", source));
    }
  }
  return bytes;
}

void MpiSession::Abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();
}

double MpiSession::Now() { return MPI_Wtime(); }

bool LaunchedByMpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return std::getenv("SLURM_NTASKS") != nullptr && std::getenv("SLURM_PROCID") != nullptr;
}

std::optional<SlurmStep> CurrentSlurmStep() {
  const char* tasks = std::getenv("SLURM_STEP_NUM_TASKS");
  const char* task = std::getenv("SLURM_PROCID");
  // Ranks of an mpirun inside an allocation inherit the step of mpirun's daemons (one task per
  // node): they are mpirun's, not srun's.
  if (tasks == nullptr || task == nullptr || std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr) {
    return std::nullopt;
  }
  SlurmStep step;
  step.tasks = std::max(1, std::atoi(tasks));
  step.task = std::max(0, std::atoi(task));
  return step;
}

bool ReportsStartFailure() {
  const auto step = CurrentSlurmStep();
  return !step || step->task == 0;
}

Status CheckSlurmStep() {
  const auto step = CurrentSlurmStep();
  if (!step || step->tasks < 2) return Status::Ok();
  if (std::getenv("PMIX_RANK") != nullptr) return Status::Ok();
  return Status::Invalid(
      "", fmt::format("srun started {} tasks without PMIx, so MPI cannot join them into one job "
                      "(each would be a fleet of one): run srun --mpi=pmix, or set "
                      "MpiDefault=pmix in slurm.conf",
                      step->tasks));
}

}  // namespace parity::fleet
