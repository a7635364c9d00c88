// SPDX-License-Identifier: Apache-2.0
#include "monitor/exporter.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netdb.h>
#include <netinet/in.h>

#include <charconv>
#include <mutex>
#include <thread>

namespace parity::monitor {

Result<ListenAddress> ParseListenAddress(const std::string& text) {
  std::string host;
  std::string port;
  if (text.starts_with("[")) {
    const std::size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return Status::Invalid("--serve", "'" + text + "' is not [IPV6]:PORT");
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string::npos || text.find(':') != colon) {
      return Status::Invalid("--serve", "'" + text + "' is not HOST:PORT (e.g. 127.0.0.1:9400)");
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (host.empty()) {
    return Status::Invalid("--serve", "'" + text +
                                          "' has no host: say 127.0.0.1:PORT, or "
                                          "0.0.0.0:PORT to serve on every interface");
  }
  int value = -1;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value < 0 ||
      value > 65535) {
    return Status::Invalid("--serve", "'" + text + "': port must be 0..65535");
  }
  return ListenAddress{host, value};
}

bool IsLoopback(const std::string& host) {
  std::string name = host;
  if (name.size() > 2 && name.front() == '[' && name.back() == ']') {
    name = name.substr(1, name.size() - 2);
  }
  if (name.empty()) return false;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(name.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) return false;
  bool all = true;
  for (const addrinfo* a = found; a != nullptr && all; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      const auto* v4 = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
      all = (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
    } else if (a->ai_family == AF_INET6) {
      const in6_addr& v6 = reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr;
      all = IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
    } else {
      all = false;
    }
  }
  freeaddrinfo(found);
  return all;
}

struct Exporter::Impl {
  httplib::Server server;
  std::thread thread;
  int port = 0;
  std::mutex mutex;
  std::shared_ptr<const std::string> metrics = std::make_shared<const std::string>();
  bool healthy = false;
  std::string health = "no sample yet";
};

Exporter::Exporter() : impl_(std::make_unique<Impl>()) {}

Exporter::~Exporter() { Stop(); }

Status Exporter::Start(const ListenAddress& address) {
  Impl& impl = *impl_;
  // A thread per connection up to 64: a keep-alive connection holds its thread, and a scraper
  // pool (or wrk -c 50) must not wait behind the default pool of hardware_concurrency - 1.
  impl.server.new_task_queue = [] { return new httplib::ThreadPool(64); };
  impl.server.set_keep_alive_max_count(1000);
  impl.server.set_read_timeout(5, 0);
  impl.server.set_write_timeout(5, 0);
  impl.server.set_payload_max_length(1 << 16);
  impl.server.Get("/metrics", [&impl](const httplib::Request&, httplib::Response& response) {
    std::shared_ptr<const std::string> body;
    {
      std::lock_guard lock(impl.mutex);
      body = impl.metrics;
    }
    response.set_content(*body, "text/plain; version=0.0.4; charset=utf-8");
  });
  impl.server.Get("/healthz", [&impl](const httplib::Request&, httplib::Response& response) {
    std::lock_guard lock(impl.mutex);
    response.status = impl.healthy ? 200 : 503;
    response.set_content(impl.healthy ? std::string("ok\n") : impl.health + "\n",
                         "text/plain; charset=utf-8");
  });
  // Read-only: the two routes above; anything else is 404 (httplib's default), and a request
  // with another method gets 405.
  const auto refuse = [](const httplib::Request&, httplib::Response& response) {
    response.status = 405;
    response.set_header("Allow", "GET, HEAD");
    response.set_content("method not allowed\n", "text/plain; charset=utf-8");
  };
  impl.server.Post(".*", refuse);
  impl.server.Put(".*", refuse);
  impl.server.Delete(".*", refuse);
  impl.server.Patch(".*", refuse);
  if (address.port == 0) {
    impl.port = impl.server.bind_to_any_port(address.host.c_str());
    if (impl.port < 0) {
      return Status::Unavailable("--serve " + address.host + ":0: can't bind a port there");
    }
  } else {
    if (!impl.server.bind_to_port(address.host.c_str(), address.port)) {
      return Status::Unavailable("--serve " + address.host + ":" + std::to_string(address.port) +
                                 ": can't bind (in use, or not an address of this machine)");
    }
    impl.port = address.port;
  }
  impl.thread = std::thread([&impl] { impl.server.listen_after_bind(); });
  return Status::Ok();
}

int Exporter::port() const { return impl_->port; }

void Exporter::Publish(std::string exposition, bool healthy, std::string health) {
  auto body = std::make_shared<const std::string>(std::move(exposition));
  std::lock_guard lock(impl_->mutex);
  impl_->metrics = std::move(body);
  impl_->healthy = healthy;
  impl_->health = std::move(health);
}

void Exporter::Stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  impl_->server.stop();
  impl_->thread.join();
}

}  // namespace parity::monitor
