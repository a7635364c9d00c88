// SPDX-License-Identifier: Apache-2.0
#include "serve/head_guard.h"

#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/json_util.h"
#include "serve/context.h"

namespace parity::serve {
namespace {

using Clock = std::chrono::steady_clock;

/// Whether `sock` has `events` within `ms` milliseconds.
bool Wait(int sock, short events, long long ms) {
  pollfd p{sock, events, 0};
  for (;;) {
    const int n = poll(&p, 1, static_cast<int>(std::clamp<long long>(ms, 0, 1 << 30)));
    if (n < 0 && errno == EINTR) continue;
    return n > 0 && (p.revents & (events | POLLHUP | POLLERR)) != 0;
  }
}

long long Millis(time_t sec, time_t usec) {
  return static_cast<long long>(sec) * 1000 + static_cast<long long>(usec) / 1000;
}

/// A socket as cpp-httplib's Stream, reading through a buffer (cpp-httplib reads a head a byte
/// at a time) that is kept across the requests of a connection: bytes of the next request
/// read with this one are not lost.
class BufferedSocketStream final : public httplib::Stream {
 public:
  BufferedSocketStream(int sock, long long read_ms, long long write_ms)
      : sock_(sock), read_ms_(read_ms), write_ms_(write_ms), buffer_(4096) {}

  bool is_readable() const override { return begin_ < end_ || Wait(sock_, POLLIN, read_ms_); }
  bool is_writable() const override { return Wait(sock_, POLLOUT, write_ms_); }

  ssize_t read(char* ptr, size_t size) override {
    if (begin_ == end_) {
      if (!Wait(sock_, POLLIN, read_ms_)) return -1;
      ssize_t n;
      do {
        n = recv(sock_, buffer_.data(), buffer_.size(), 0);
      } while (n < 0 && errno == EINTR);
      if (n <= 0) return n;
      begin_ = 0;
      end_ = static_cast<std::size_t>(n);
    }
    const std::size_t k = std::min(size, end_ - begin_);
    std::memcpy(ptr, buffer_.data() + begin_, k);
    begin_ += k;
    return static_cast<ssize_t>(k);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    ssize_t n;
    do {
      n = send(sock_, ptr, size, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    Address(getpeername, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    Address(getsockname, ip, port);
  }
  socket_t socket() const override { return sock_; }

  /// The bytes read from the socket and not yet given to cpp-httplib.
  std::string_view buffered() const { return {buffer_.data() + begin_, end_ - begin_}; }

 private:
  using NameFn = int (*)(int, sockaddr*, socklen_t*);
  void Address(NameFn fn, std::string& ip, int& port) const {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    if (fn(sock_, reinterpret_cast<sockaddr*>(&address), &length) != 0) return;
    char host[NI_MAXHOST];
    char service[NI_MAXSERV];
    if (getnameinfo(reinterpret_cast<sockaddr*>(&address), length, host, sizeof host, service,
                    sizeof service, NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
      ip = host;
      port = std::atoi(service);
    }
  }

  int sock_;
  long long read_ms_;
  long long write_ms_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

/// What waiting for a head gave: a head to parse, a refusal to send, or a closed peer.
struct Admission {
  int status = 0;  ///< 0: the head is complete and within the limits; -1: the peer left
  std::string_view reason;
  std::string message;
};

Admission Judge(HeadVerdict verdict, const HeadLimits& limits) {
  switch (verdict) {
    case HeadVerdict::kLineTooLong:
      return {414, "URI Too Long",
              fmt::format("the request line is longer than {} bytes", limits.request_line)};
    case HeadVerdict::kTooManyFields:
      return {431, "Request Header Fields Too Large",
              fmt::format("more than {} header fields", limits.fields)};
    case HeadVerdict::kHeadTooLarge:
      return {431, "Request Header Fields Too Large",
              fmt::format("the request head is larger than {} bytes", limits.head)};
    case HeadVerdict::kComplete:
    case HeadVerdict::kIncomplete:
      break;
  }
  return {};
}

/// Looks at the next head (what the stream holds, then what the socket holds, unconsumed)
/// until it is complete, over a limit, late, or the peer leaves.
Admission AwaitHead(const BufferedSocketStream& stream, int sock, const GuardOptions& options) {
  const HeadLimits& limits = options.limits;
  const auto until = Clock::now() + options.head_deadline;
  // One buffer a thread, neither allocated nor cleared per request (it holds only a copy).
  thread_local std::vector<char> head;
  head.resize(limits.head + 1);
  for (;;) {
    const std::string_view held = stream.buffered().substr(0, head.size());
    std::copy(held.begin(), held.end(), head.begin());
    ssize_t n;
    do {
      n = recv(sock, head.data() + held.size(), head.size() - held.size(), MSG_PEEK | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    const bool left_us = n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
    const std::size_t total = held.size() + static_cast<std::size_t>(std::max<ssize_t>(n, 0));
    const HeadVerdict verdict = CheckRequestHead({head.data(), total}, limits);
    if (verdict == HeadVerdict::kComplete) return {};
    if (verdict != HeadVerdict::kIncomplete) return Judge(verdict, limits);
    if (left_us) return {-1, "", ""};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (left.count() <= 0) {
      return {408, "Request Timeout",
              fmt::format("the request head did not arrive within {} ms",
                          options.head_deadline.count())};
    }
    if (n > 0) {
      // Bytes wait unconsumed, so poll would return at once: wait for more a little at a time.
      std::this_thread::sleep_for(std::min(left, std::chrono::milliseconds(2)));
    } else {
      Wait(sock, POLLIN, left.count());
    }
  }
}

/// Answers `admission` as JSON (parity-serve-error) and closes gently: the peer's unread bytes
/// are drained briefly so that it reads the answer rather than a reset.
void Refuse(int sock, const Admission& admission) {
  const std::string body = Dump(ErrorAnswer(admission.status, admission.message).body) + "\n";
  const std::string text = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: "
      "{}\r\nCache-Control: no-store\r\nConnection: close\r\n{}\r\n{}",
      admission.status, admission.reason, body.size(),
      admission.status == 503 ? "Retry-After: 1\r\n" : "", body);
  std::size_t sent = 0;
  while (sent < text.size() && Wait(sock, POLLOUT, 1000)) {
    const ssize_t n = send(sock, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  shutdown(sock, SHUT_WR);
  char sink[16384];
  std::size_t drained = 0;
  const auto until = Clock::now() + std::chrono::milliseconds(200);
  while (drained < (std::size_t{1} << 20) && Clock::now() < until && Wait(sock, POLLIN, 50)) {
    const ssize_t n = recv(sock, sink, sizeof sink, 0);
    if (n <= 0) break;
    drained += static_cast<std::size_t>(n);
  }
}

}  // namespace

void GuardedServer::WidenBacklog() {
  if (svr_sock_ != INVALID_SOCKET) ::listen(svr_sock_, SOMAXCONN);
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  BufferedSocketStream stream(sock, Millis(read_timeout_sec_, read_timeout_usec_),
                              Millis(write_timeout_sec_, write_timeout_usec_));
  bool ret = false;
  for (std::size_t count = keep_alive_max_count_; svr_sock_ != INVALID_SOCKET && count > 0;
       --count) {
    if (stream.buffered().empty() &&
        !Wait(sock, POLLIN, static_cast<long long>(keep_alive_timeout_sec_) * 1000)) {
      break;
    }
    // A head that is whole within the grace (a client sends it at once) takes no place among
    // the waiting ones; only slow heads are counted and bounded.
    GuardOptions grace = options_;
    grace.head_deadline = std::min(options_.head_deadline, options_.grace);
    Admission admission = AwaitHead(stream, sock, grace);
    if (admission.status == 408) {
      if (waiting_.fetch_add(1) >= options_.max_waiting) {
        admission = {503, "Service Unavailable",
                     fmt::format("more than {} connections are sending a request head slowly",
                                 options_.max_waiting)};
      } else {
        admission = AwaitHead(stream, sock, options_);
      }
      waiting_.fetch_sub(1);
    }
    if (admission.status != 0) {
      if (admission.status > 0) Refuse(sock, admission);
      break;
    }
    bool connection_closed = false;
    ret = process_request(stream, count == 1, connection_closed, nullptr);
    if (!ret || connection_closed) break;
  }
  shutdown(sock, SHUT_RDWR);
  close(sock);
  return ret;
}

}  // namespace parity::serve
