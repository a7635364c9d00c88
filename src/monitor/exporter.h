// SPDX-License-Identifier: Apache-2.0
// The Prometheus exporter: a read-only HTTP server with two routes, /metrics (the exposition
// of the last sample) and /healthz. Everything else is 404; methods other than GET and HEAD
// are refused.
#ifndef PARITY_MONITOR_EXPORTER_H_
#define PARITY_MONITOR_EXPORTER_H_

#include <memory>
#include <string>

#include "core/status.h"

namespace parity::monitor {

/// "HOST:PORT" or "[V6]:PORT" split; kInvalidInput naming `text` when it is neither or the
/// port is not 0..65535. Port 0 asks the system for a free one.
struct ListenAddress {
  std::string host;
  int port = 0;
};
Result<ListenAddress> ParseListenAddress(const std::string& text);

/// Whether every address `host` resolves to (a name, an address, an IPv6 address with or
/// without brackets) is a loopback address (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104); false
/// when it resolves to none. Decided on addresses, never on the name: "127.evil.example" is
/// loopback only if it resolves there.
bool IsLoopback(const std::string& host);

class Exporter {
 public:
  Exporter();
  ~Exporter();
  Exporter(const Exporter&) = delete;
  Exporter& operator=(const Exporter&) = delete;

  /// Binds `address` and serves from a thread of its own. kUnavailable when the address can't
  /// be bound (in use, not local).
  Status Start(const ListenAddress& address);
  /// The port bound (the one chosen when 0 was asked for).
  int port() const;
  /// Replaces what /metrics serves. `healthy` and `health` are what /healthz answers (200 "ok"
  /// or 503 with the reason).
  void Publish(std::string exposition, bool healthy, std::string health);
  /// Stops serving and joins the thread; the destructor does it too.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace parity::monitor

#endif  // PARITY_MONITOR_EXPORTER_H_
