// SPDX-License-Identifier: Apache-2.0
// The Transport interface: what moves the collective suite's buffers. MPI on host buffers is
// always there (transport_mpi.cc); NCCL and RCCL on device buffers come with the GPU plugins.
#ifndef PARITY_FLEET_TRANSPORT_H_
#define PARITY_FLEET_TRANSPORT_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "fleet/collective.h"

namespace parity::bench {
class Backend;
}  // namespace parity::bench

namespace parity::fleet {

class MpiSession;

/// One rank's end of a communicator over MPI_COMM_WORLD's ranks.
class Transport {
 public:
  virtual ~Transport() = default;
  /// "mpi", "nccl", "rccl": the results' params.transport.
  virtual std::string_view name() const = 0;
  /// What it is, for the results' implementation: "Open MPI v4.1.4", "NCCL 2.21.5".
  virtual std::string implementation() const = 0;
  /// Whether the out-of-place (or in-place) form of `kind` exists on this transport.
  virtual bool Supports(CollectiveKind kind, bool in_place) const = 0;

  /// Memory the transport's collectives take, `bytes` long; freed with Free.
  virtual Result<void*> Allocate(std::size_t bytes) = 0;
  virtual void Free(void* ptr) = 0;
  /// Copies between host memory and memory from Allocate.
  virtual Status Upload(void* dst, const float* src, std::size_t count) = 0;
  virtual Status Download(float* dst, const void* src, std::size_t count) = 0;

  /// One collective of `layout`'s counts. Out of place it reads `send` and writes `recv`; in
  /// place `buffer` holds the input where InPlaceInputOffset says (in elements) and the
  /// result where InPlaceResultOffset says. May return before the data has moved: Synchronize
  /// waits.
  virtual Status Run(CollectiveKind kind, const Layout& layout, const void* send, void* recv) = 0;
  virtual Status RunInPlace(CollectiveKind kind, const Layout& layout, void* buffer) = 0;
  virtual std::size_t InPlaceResultOffset(CollectiveKind kind, const Layout& layout) const = 0;
  virtual Status Synchronize() = 0;

  /// Point to point (the interconnect suite): `count` floats to or from rank `peer`.
  virtual Status Send(const void* buffer, std::size_t count, int peer) = 0;
  virtual Status Recv(void* buffer, std::size_t count, int peer) = 0;
  /// Sends `send` to `peer` while receiving `recv` from it (both directions at once).
  virtual Status Exchange(const void* send, void* recv, std::size_t count, int peer) = 0;
};

/// Where the in-place input of `kind` goes in the buffer, in elements: rank r's part of an
/// all_gather at r·part (as MPI_IN_PLACE and NCCL both want), everything else at 0.
std::size_t InPlaceInputOffset(CollectiveKind kind, const Layout& layout, int rank, int ranks);

/// The MPI transport over MPI_COMM_WORLD, on host memory.
std::unique_ptr<Transport> MakeMpiTransport(const MpiSession& session);

/// The NCCL library for `transport` ("nccl" or "rccl"): $PARITY_NCCL_LIBRARY when set, else
/// libnccl.so.2 or librccl.so.1.
std::string DefaultNcclLibrary(std::string_view transport);

/// The NCCL (or RCCL: same C ABI) transport on `backend`'s device buffers (opened on this
/// rank's device; it must outlive the transport), with `library` loaded by dlopen on every
/// rank and one communicator over MPI_COMM_WORLD's ranks. kUnavailable, naming the rank, when
/// any rank cannot load the library, lacks a symbol or cannot make the communicator.
Result<std::unique_ptr<Transport>> MakeNcclTransport(const MpiSession& session,
                                                     bench::Backend* backend,
                                                     std::string_view transport,
                                                     const std::string& library);

}  // namespace parity::fleet

#endif  // PARITY_FLEET_TRANSPORT_H_
