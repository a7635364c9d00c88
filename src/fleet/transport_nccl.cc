// SPDX-License-Identifier: Apache-2.0
// The NCCL and RCCL transport: the collectives on a backend's device buffers, with NCCL's C ABI
// (RCCL has the same names) loaded by dlopen. The communicator's unique id travels over MPI.
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/backend.h"
#include "core/dynlib.h"
#include "fleet/mpi_session.h"
#include "fleet/transport.h"

namespace parity::fleet {
namespace {

// NCCL's ABI, from nccl.h (NCCL 2.x; RCCL keeps it): enums are ints, the id 128 bytes by value.
using NcclResult = int;
using NcclComm = void*;
using NcclStream = void*;  // cudaStream_t / hipStream_t; null is the default stream
struct NcclUniqueId {
  char internal[128];
};
constexpr NcclResult kNcclSuccess = 0;
constexpr int kNcclFloat32 = 7;
constexpr int kNcclSum = 0;

struct NcclApi {
  NcclResult (*GetVersion)(int*);
  const char* (*GetErrorString)(NcclResult);
  NcclResult (*GetUniqueId)(NcclUniqueId*);
  NcclResult (*CommInitRank)(NcclComm*, int, NcclUniqueId, int);
  NcclResult (*CommDestroy)(NcclComm);
  NcclResult (*AllReduce)(const void*, void*, std::size_t, int, int, NcclComm, NcclStream);
  NcclResult (*AllGather)(const void*, void*, std::size_t, int, NcclComm, NcclStream);
  NcclResult (*ReduceScatter)(const void*, void*, std::size_t, int, int, NcclComm, NcclStream);
  NcclResult (*Broadcast)(const void*, void*, std::size_t, int, int, NcclComm, NcclStream);
  NcclResult (*Send)(const void*, std::size_t, int, int, NcclComm, NcclStream);
  NcclResult (*Recv)(void*, std::size_t, int, int, NcclComm, NcclStream);
  NcclResult (*GroupStart)();
  NcclResult (*GroupEnd)();
};

class NcclTransport final : public Transport {
 public:
  NcclTransport(std::string name, void* lib, NcclApi api, bench::Backend* backend, int rank,
                int ranks)
      : name_(std::move(name)),
        lib_(lib),
        api_(api),
        backend_(backend),
        rank_(rank),
        ranks_(ranks) {}
  ~NcclTransport() override {
    if (comm_ != nullptr) api_.CommDestroy(comm_);
    // The library stays loaded: its threads may outlive the communicator.
    (void)lib_;
  }

  Status Init(const MpiSession& session) {
    NcclUniqueId id{};
    std::string problem;
    if (rank_ == 0) {
      if (NcclResult r = api_.GetUniqueId(&id); r != kNcclSuccess)
        problem = Error("ncclGetUniqueId", r);
    }
    const std::string agreed = session.GatherAll(problem)[0];
    if (!agreed.empty()) return Status::Unavailable(agreed);
    const std::string bytes =
        session.GatherAll(rank_ == 0 ? std::string(id.internal, sizeof id.internal) : "")[0];
    if (bytes.size() != sizeof id.internal) {
      return Status::Internal("the NCCL unique id did not reach every rank");
    }
    std::memcpy(id.internal, bytes.data(), sizeof id.internal);
    NcclResult r = api_.CommInitRank(&comm_, ranks_, id, rank_);
    std::string mine =
        r == kNcclSuccess ? "" : fmt::format("rank {}: {}", rank_, Error("ncclCommInitRank", r));
    for (const std::string& p : session.GatherAll(mine)) {
      if (!p.empty()) return Status::Unavailable(p);
    }
    int version = 0;
    if (api_.GetVersion(&version) == kNcclSuccess && version > 0) {
      // NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9; major*1000 + ... before.
      const int major = version >= 10000 ? version / 10000 : version / 1000;
      const int minor = version >= 10000 ? version / 100 % 100 : version / 100 % 10;
      implementation_ = fmt::format("{} {}.{}.{}", name_ == "rccl" ? "RCCL" : "NCCL", major, minor,
                                    version % 100);
    } else {
      implementation_ = name_ == "rccl" ? "RCCL" : "NCCL";
    }
    return Status::Ok();
  }

  std::string_view name() const override { return name_; }
  std::string implementation() const override { return implementation_; }

  bool Supports(CollectiveKind kind, bool in_place) const override {
    // NCCL's alltoall and sendrecv are grouped sends and receives: one buffer for both races.
    return !in_place || (kind != CollectiveKind::kAllToAll && kind != CollectiveKind::kSendRecv);
  }

  Result<void*> Allocate(std::size_t bytes) override {
    return backend_->Allocate(bytes, bench::MemoryKind::kDevice);
  }
  void Free(void* ptr) override { backend_->Free(ptr, bench::MemoryKind::kDevice); }
  Status Upload(void* dst, const float* src, std::size_t count) override {
    return backend_->Copy(dst, bench::MemoryKind::kDevice, src, bench::MemoryKind::kHostPageable,
                          count * sizeof(float));
  }
  Status Download(float* dst, const void* src, std::size_t count) override {
    return backend_->Copy(dst, bench::MemoryKind::kHostPageable, src, bench::MemoryKind::kDevice,
                          count * sizeof(float));
  }

  Status Run(CollectiveKind kind, const Layout& l, const void* send, void* recv) override {
    switch (kind) {
      case CollectiveKind::kAllReduce:
        return Check(
            api_.AllReduce(send, recv, l.send_count, kNcclFloat32, kNcclSum, comm_, nullptr),
            "ncclAllReduce");
      case CollectiveKind::kAllGather:
        return Check(api_.AllGather(send, recv, l.send_count, kNcclFloat32, comm_, nullptr),
                     "ncclAllGather");
      case CollectiveKind::kReduceScatter:
        return Check(
            api_.ReduceScatter(send, recv, l.recv_count, kNcclFloat32, kNcclSum, comm_, nullptr),
            "ncclReduceScatter");
      case CollectiveKind::kAllToAll: {
        const std::size_t part = l.send_count / static_cast<std::size_t>(ranks_);
        PARITY_RETURN_IF_ERROR(Check(api_.GroupStart(), "ncclGroupStart"));
        for (int peer = 0; peer < ranks_; ++peer) {
          const std::size_t at = static_cast<std::size_t>(peer) * part;
          PARITY_RETURN_IF_ERROR(Check(api_.Send(static_cast<const float*>(send) + at, part,
                                                 kNcclFloat32, peer, comm_, nullptr),
                                       "ncclSend"));
          PARITY_RETURN_IF_ERROR(Check(
              api_.Recv(static_cast<float*>(recv) + at, part, kNcclFloat32, peer, comm_, nullptr),
              "ncclRecv"));
        }
        return Check(api_.GroupEnd(), "ncclGroupEnd");
      }
      case CollectiveKind::kBroadcast:
        return Check(api_.Broadcast(send, recv, l.send_count, kNcclFloat32, 0, comm_, nullptr),
                     "ncclBroadcast");
      case CollectiveKind::kSendRecv: {
        PARITY_RETURN_IF_ERROR(Check(api_.GroupStart(), "ncclGroupStart"));
        PARITY_RETURN_IF_ERROR(Check(
            api_.Send(send, l.send_count, kNcclFloat32, SendPeer(rank_, ranks_), comm_, nullptr),
            "ncclSend"));
        PARITY_RETURN_IF_ERROR(Check(
            api_.Recv(recv, l.recv_count, kNcclFloat32, RecvPeer(rank_, ranks_), comm_, nullptr),
            "ncclRecv"));
        return Check(api_.GroupEnd(), "ncclGroupEnd");
      }
    }
    return Status::Internal("unknown collective");
  }

  Status RunInPlace(CollectiveKind kind, const Layout& l, void* buffer) override {
    float* b = static_cast<float*>(buffer);
    switch (kind) {
      case CollectiveKind::kAllGather:
        // NCCL's in-place all_gather: sendbuff = recvbuff + rank * sendcount.
        return Run(kind, l, b + static_cast<std::size_t>(rank_) * l.send_count, b);
      case CollectiveKind::kReduceScatter:
        // In place: recvbuff = sendbuff + rank * recvcount.
        return Run(kind, l, b, b + static_cast<std::size_t>(rank_) * l.recv_count);
      case CollectiveKind::kAllToAll:
      case CollectiveKind::kSendRecv:
        return Status::Internal(fmt::format("{} has no in-place form", name_));
      default:
        return Run(kind, l, b, b);
    }
  }

  std::size_t InPlaceResultOffset(CollectiveKind kind, const Layout& l) const override {
    return kind == CollectiveKind::kReduceScatter ? static_cast<std::size_t>(rank_) * l.recv_count
                                                  : 0;
  }
  Status Synchronize() override { return backend_->Synchronize(); }

  Status Send(const void* buffer, std::size_t count, int peer) override {
    PARITY_RETURN_IF_ERROR(
        Check(api_.Send(buffer, count, kNcclFloat32, peer, comm_, nullptr), "ncclSend"));
    return Synchronize();
  }
  Status Recv(void* buffer, std::size_t count, int peer) override {
    PARITY_RETURN_IF_ERROR(
        Check(api_.Recv(buffer, count, kNcclFloat32, peer, comm_, nullptr), "ncclRecv"));
    return Synchronize();
  }
  Status Exchange(const void* send, void* recv, std::size_t count, int peer) override {
    PARITY_RETURN_IF_ERROR(Check(api_.GroupStart(), "ncclGroupStart"));
    PARITY_RETURN_IF_ERROR(
        Check(api_.Send(send, count, kNcclFloat32, peer, comm_, nullptr), "ncclSend"));
    PARITY_RETURN_IF_ERROR(
        Check(api_.Recv(recv, count, kNcclFloat32, peer, comm_, nullptr), "ncclRecv"));
    PARITY_RETURN_IF_ERROR(Check(api_.GroupEnd(), "ncclGroupEnd"));
    return Synchronize();
  }

 private:
  std::string Error(std::string_view call, NcclResult r) const {
    const char* text = api_.GetErrorString != nullptr ? api_.GetErrorString(r) : nullptr;
    return fmt::format("{} returned {} ({})", call, r, text != nullptr ? text : "unknown error");
  }
  Status Check(NcclResult r, std::string_view call) const {
    return r == kNcclSuccess ? Status::Ok() : Status::Internal(Error(call, r));
  }

  std::string name_;
  void* lib_;
  NcclApi api_;
  bench::Backend* backend_;
  int rank_, ranks_;
  NcclComm comm_ = nullptr;
  std::string implementation_;
};

}  // namespace

std::string DefaultNcclLibrary(std::string_view transport) {
  if (const char* env = std::getenv("PARITY_NCCL_LIBRARY"); env != nullptr && *env != '\0') {
    return env;
  }
  return transport == "rccl" ? "librccl.so.1" : "libnccl.so.2";
}

Result<std::unique_ptr<Transport>> MakeNcclTransport(const MpiSession& session,
                                                     bench::Backend* backend,
                                                     std::string_view transport,
                                                     const std::string& library) {
  // Every rank loads the library; all of them agree before any calls a collective.
  std::string problem;
  Result<void*> lib = OpenLibrary(library);
  NcclApi api{};
  if (!lib.ok()) {
    problem = lib.status().message();
  } else {
    SymbolResolver symbols(*lib, library);
    symbols.Require({"ncclGetVersion"}, &api.GetVersion);
    symbols.Require({"ncclGetErrorString"}, &api.GetErrorString);
    symbols.Require({"ncclGetUniqueId"}, &api.GetUniqueId);
    symbols.Require({"ncclCommInitRank"}, &api.CommInitRank);
    symbols.Require({"ncclCommDestroy"}, &api.CommDestroy);
    symbols.Require({"ncclAllReduce"}, &api.AllReduce);
    symbols.Require({"ncclAllGather"}, &api.AllGather);
    symbols.Require({"ncclReduceScatter"}, &api.ReduceScatter);
    symbols.Require({"ncclBroadcast"}, &api.Broadcast);
    symbols.Require({"ncclSend"}, &api.Send);
    symbols.Require({"ncclRecv"}, &api.Recv);
    symbols.Require({"ncclGroupStart"}, &api.GroupStart);
    symbols.Require({"ncclGroupEnd"}, &api.GroupEnd);
    if (!symbols.missing().empty()) {
      problem = fmt::format("{}: has no {} (NCCL 2.7 or later has)", library, symbols.missing());
    }
  }
  const std::vector<std::string> problems =
      session.GatherAll(problem.empty() ? "" : fmt::format("rank {}: {}", session.rank(), problem));
  for (const std::string& p : problems) {
    if (!p.empty()) return Status::Unavailable(p);
  }
  auto t = std::make_unique<NcclTransport>(std::string(transport), *lib, api, backend,
                                           session.rank(), session.size());
  PARITY_RETURN_IF_ERROR(t->Init(session));
  return std::unique_ptr<Transport>(std::move(t));
}

}  // namespace parity::fleet
