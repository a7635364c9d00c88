// SPDX-License-Identifier: Apache-2.0
// A cpp-httplib server that judges each request's head before cpp-httplib reads it: Debian's
// cpp-httplib 0.11 buffers a request line or header line of any length and any number of
// header fields, and waits for a slow client's next byte for as long as bytes keep coming.
#ifndef PARITY_SERVE_HEAD_GUARD_H_
#define PARITY_SERVE_HEAD_GUARD_H_

#include <httplib.h>

#include <atomic>
#include <chrono>

#include "serve/security.h"

namespace parity::serve {

/// What a GuardedServer enforces before a request is parsed.
struct GuardOptions {
  HeadLimits limits;
  /// The whole head of each request must arrive within this (slow clients are cut off).
  std::chrono::milliseconds head_deadline{10000};
  /// At most this many connections wait for a head at once after the grace; more are
  /// answered 503 at once, so slow clients can't take every thread of the pool.
  int max_waiting = 16;
  /// A head that arrives whole within this is never counted among the waiting ones.
  std::chrono::milliseconds grace{250};
};

/// cpp-httplib's server with its connection loop replaced: keep-alive as before, and each
/// request's head, seen without being consumed, must be complete within the deadline and
/// within the limits; else the connection is answered 408, 414, 431 or 503 and closed before
/// cpp-httplib reads a byte of it.
class GuardedServer : public httplib::Server {
 public:
  explicit GuardedServer(GuardOptions options) : options_(options) {}

  /// After a bind: the listening socket's queue of connections not yet accepted raised to the
  /// system's maximum (cpp-httplib asks for 5; when its accept loop falls behind, a sixth
  /// client's connection attempt is dropped and retried a second later).
  void WidenBacklog();

 private:
  bool process_and_close_socket(socket_t sock) override;

  GuardOptions options_;
  std::atomic<int> waiting_{0};
};

}  // namespace parity::serve

#endif  // PARITY_SERVE_HEAD_GUARD_H_
