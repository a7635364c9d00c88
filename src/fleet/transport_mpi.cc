// SPDX-License-Identifier: Apache-2.0
// The MPI transport: MPI's collectives on host buffers, MPI_IN_PLACE for the in-place forms.
#include <fmt/format.h>
#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>

#include "fleet/mpi_session.h"
#include "fleet/transport.h"

namespace parity::fleet {
namespace {

Status Check(int code, std::string_view call) {
  if (code == MPI_SUCCESS) return Status::Ok();
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  return Status::Internal(fmt::format("{}: {}", call, std::string_view(text, length)));
}

int Count(std::size_t count) { return static_cast<int>(count); }

class MpiTransport final : public Transport {
 public:
  MpiTransport(int rank, int ranks, std::string library)
      : rank_(rank), ranks_(ranks), library_(std::move(library)) {}

  std::string_view name() const override { return "mpi"; }
  std::string implementation() const override { return library_; }

  bool Supports(CollectiveKind kind, bool in_place) const override {
    // MPI_Bcast has one buffer: there is no out-of-place broadcast.
    return in_place || kind != CollectiveKind::kBroadcast;
  }

  Result<void*> Allocate(std::size_t bytes) override {
    if (bytes / sizeof(float) > static_cast<std::size_t>(INT_MAX)) {
      return Status::Unavailable(
          fmt::format("{} bytes: more elements than an MPI count holds", bytes));
    }
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (p == nullptr) return Status::Unavailable(fmt::format("{} bytes of host memory", bytes));
    return p;
  }
  void Free(void* ptr) override { std::free(ptr); }
  Status Upload(void* dst, const float* src, std::size_t count) override {
    std::memcpy(dst, src, count * sizeof(float));
    return Status::Ok();
  }
  Status Download(float* dst, const void* src, std::size_t count) override {
    std::memcpy(dst, src, count * sizeof(float));
    return Status::Ok();
  }

  Status Run(CollectiveKind kind, const Layout& l, const void* send, void* recv) override {
    void* s = const_cast<void*>(send);
    switch (kind) {
      case CollectiveKind::kAllReduce:
        return Check(
            MPI_Allreduce(s, recv, Count(l.send_count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
            "MPI_Allreduce");
      case CollectiveKind::kAllGather:
        return Check(MPI_Allgather(s, Count(l.send_count), MPI_FLOAT, recv, Count(l.send_count),
                                   MPI_FLOAT, MPI_COMM_WORLD),
                     "MPI_Allgather");
      case CollectiveKind::kReduceScatter:
        return Check(MPI_Reduce_scatter_block(s, recv, Count(l.recv_count), MPI_FLOAT, MPI_SUM,
                                              MPI_COMM_WORLD),
                     "MPI_Reduce_scatter_block");
      case CollectiveKind::kAllToAll: {
        const int part = Count(l.send_count / static_cast<std::size_t>(ranks_));
        return Check(MPI_Alltoall(s, part, MPI_FLOAT, recv, part, MPI_FLOAT, MPI_COMM_WORLD),
                     "MPI_Alltoall");
      }
      case CollectiveKind::kBroadcast:
        return Status::Unavailable("MPI_Bcast has no out-of-place form");
      case CollectiveKind::kSendRecv:
        return Check(MPI_Sendrecv(s, Count(l.send_count), MPI_FLOAT, SendPeer(rank_, ranks_), 0,
                                  recv, Count(l.recv_count), MPI_FLOAT, RecvPeer(rank_, ranks_), 0,
                                  MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                     "MPI_Sendrecv");
    }
    return Status::Internal("unknown collective");
  }

  Status RunInPlace(CollectiveKind kind, const Layout& l, void* buffer) override {
    switch (kind) {
      case CollectiveKind::kAllReduce:
        return Check(MPI_Allreduce(MPI_IN_PLACE, buffer, Count(l.recv_count), MPI_FLOAT, MPI_SUM,
                                   MPI_COMM_WORLD),
                     "MPI_Allreduce");
      case CollectiveKind::kAllGather:
        return Check(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buffer, Count(l.send_count),
                                   MPI_FLOAT, MPI_COMM_WORLD),
                     "MPI_Allgather");
      case CollectiveKind::kReduceScatter:
        return Check(MPI_Reduce_scatter_block(MPI_IN_PLACE, buffer, Count(l.recv_count), MPI_FLOAT,
                                              MPI_SUM, MPI_COMM_WORLD),
                     "MPI_Reduce_scatter_block");
      case CollectiveKind::kAllToAll: {
        const int part = Count(l.send_count / static_cast<std::size_t>(ranks_));
        return Check(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buffer, part, MPI_FLOAT,
                                  MPI_COMM_WORLD),
                     "MPI_Alltoall");
      }
      case CollectiveKind::kBroadcast:
        return Check(MPI_Bcast(buffer, Count(l.send_count), MPI_FLOAT, kRoot, MPI_COMM_WORLD),
                     "MPI_Bcast");
      case CollectiveKind::kSendRecv:
        return Check(
            MPI_Sendrecv_replace(buffer, Count(l.send_count), MPI_FLOAT, SendPeer(rank_, ranks_), 0,
                                 RecvPeer(rank_, ranks_), 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
            "MPI_Sendrecv_replace");
    }
    return Status::Internal("unknown collective");
  }

  std::size_t InPlaceResultOffset(CollectiveKind, const Layout&) const override { return 0; }
  Status Synchronize() override { return Status::Ok(); }

  Status Send(const void* buffer, std::size_t count, int peer) override {
    return Check(MPI_Send(buffer, Count(count), MPI_FLOAT, peer, 1, MPI_COMM_WORLD), "MPI_Send");
  }
  Status Recv(void* buffer, std::size_t count, int peer) override {
    return Check(
        MPI_Recv(buffer, Count(count), MPI_FLOAT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "MPI_Recv");
  }
  Status Exchange(const void* send, void* recv, std::size_t count, int peer) override {
    return Check(MPI_Sendrecv(send, Count(count), MPI_FLOAT, peer, 2, recv, Count(count), MPI_FLOAT,
                              peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                 "MPI_Sendrecv");
  }

 private:
  int rank_;
  int ranks_;
  std::string library_;
};

}  // namespace

std::size_t InPlaceInputOffset(CollectiveKind kind, const Layout& layout, int rank, int ranks) {
  (void)ranks;
  return kind == CollectiveKind::kAllGather ? static_cast<std::size_t>(rank) * layout.send_count
                                            : 0;
}

std::unique_ptr<Transport> MakeMpiTransport(const MpiSession& session) {
  return std::make_unique<MpiTransport>(session.rank(), session.size(), session.library());
}

}  // namespace parity::fleet
