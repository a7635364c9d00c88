// SPDX-License-Identifier: Apache-2.0
// `parity serve`'s HTTP layer (cpp-httplib): the page and its scripts, embedded in the binary;
// the JSON API (api.h); the report files under the roots. Read-only: GET and HEAD only, a
// bearer token when one is set, nothing outside the roots, bounded requests.
#ifndef PARITY_SERVE_SERVER_H_
#define PARITY_SERVE_SERVER_H_

#include <memory>

#include "core/status.h"
#include "serve/context.h"

namespace parity::serve {

/// The largest file under a root that is served.
inline constexpr std::size_t kMaxFileBytes = std::size_t{256} << 20;

/// kInvalidInput when the options can't be served safely or at all: a host that is not a
/// loopback address without a token, a root that is not a directory, a store that can't be
/// opened read-only (missing, not a store, a schema of another version).
Status CheckOptions(const ServeOptions& options);

class Server {
 public:
  explicit Server(ServeOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Binds the address (port 0: a free port). kUnavailable when it can't.
  Status Bind();
  /// The bound port.
  int port() const;
  /// Serves until Stop; returns at once when not bound.
  void Listen();
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace parity::serve

#endif  // PARITY_SERVE_SERVER_H_
