// SPDX-License-Identifier: Apache-2.0
#include "serve/server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <system_error>

#include "monitor/exporter.h"
#include "serve/api.h"
#include "serve/head_guard.h"
#include "serve/security.h"

namespace parity::serve {
namespace assets {
extern const std::string_view kPage;
extern const std::string_view kStyle;
extern const std::string_view kScript;
extern const std::string_view kChartJs;
}  // namespace assets

namespace {

constexpr std::size_t kMaxHeaders = 64;

void SendJson(httplib::Response& response, const Answer& answer) {
  response.status = answer.status;
  response.set_header("Cache-Control", "no-store");
  response.set_content(Dump(answer.body) + "\n", "application/json; charset=utf-8");
}

std::string ContentType(const std::string& path) {
  static const std::map<std::string, std::string> kTypes = {
      {".html", "text/html; charset=utf-8"},
      {".json", "application/json; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".xml", "application/xml; charset=utf-8"},
      {".png", "image/png"},
      {".svg", "image/svg+xml"},
      {".txt", "text/plain; charset=utf-8"},
      {".jsonl", "text/plain; charset=utf-8"},
      {".sig", "application/json; charset=utf-8"}};
  const std::string ext = std::filesystem::path(path).extension().string();
  auto it = kTypes.find(ext);
  return it == kTypes.end() ? "application/octet-stream" : it->second;
}

/// Whether a browser could run script in the file as a page: HTML, SVG, XML (XHTML).
bool IsActive(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".html" || ext == ".htm" || ext == ".svg" || ext == ".xml" || ext == ".xhtml";
}

}  // namespace

Status CheckOptions(const ServeOptions& options) {
  if (!options.allow_hosts.empty() && options.token.empty()) {
    return Status::Invalid("--allow-host",
                           "names other hosts the server answers to, which is safe only with "
                           "--token or --token-file");
  }
  for (const std::string& name : options.allow_hosts) {
    const bool v6 = name.size() > 2 && name.front() == '[' && name.back() == ']' &&
                    name.find_first_not_of("0123456789abcdefABCDEF:.", 1) == name.size() - 1;
    const bool plain = !name.empty() && name.size() <= 253 &&
                       name.find_first_not_of(
                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                           "0123456789.-") == std::string::npos;
    if (!v6 && !plain) {
      return Status::Invalid("--allow-host",
                             fmt::format("'{}' is not a host name or address (no port; an IPv6 "
                                         "address in brackets)",
                                         name.substr(0, 300)));
    }
  }
  if (!monitor::IsLoopback(options.host) && options.token.empty()) {
    return Status::Invalid("--listen", fmt::format("{} is not a loopback address: serving it "
                                                   "needs --token or --token-file",
                                                   options.host));
  }
  for (const std::string& root : options.roots) {
    std::error_code ec;
    if (!std::filesystem::is_directory(root, ec)) {
      return Status::Invalid(root, "--root is not a directory");
    }
  }
  return store::Store::OpenReadOnly(options.db).status();
}

struct Server::Impl {
  explicit Impl(ServeOptions options)
      : context(std::move(options)), server(Guard(context.options)) {}
  static GuardOptions Guard(const ServeOptions& options) {
    GuardOptions guard;
    guard.head_deadline = std::chrono::milliseconds(options.head_timeout_ms);
    return guard;
  }
  Context context;
  GuardedServer server;
  HostPolicy hosts;
  int port = 0;
  bool bound = false;
};

Server::Server(ServeOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  Impl& impl = *impl_;
  Context& context = impl.context;
  httplib::Server& server = impl.server;
  HostPolicy& hosts = impl.hosts;
  server.new_task_queue = [] { return new httplib::ThreadPool(32); };
  server.set_keep_alive_max_count(1000);
  server.set_read_timeout(10, 0);
  server.set_write_timeout(30, 0);
  server.set_payload_max_length(1 << 16);
  // Headers and body go out in separate writes: without TCP_NODELAY a keep-alive client's
  // delayed ACK holds the body back 40 ms.
  server.set_tcp_nodelay(true);
  // Every request passes here first: the Host, the method, the token, the path's encoding.
  server.set_pre_routing_handler(
      [&context, &hosts](const httplib::Request& request, httplib::Response& response) {
        const auto refuse = [&response](int status, std::string_view message) {
          SendJson(response, ErrorAnswer(status, message));
          return httplib::Server::HandlerResponse::Handled;
        };
        // A page elsewhere whose name was rebound to this address sends its own name.
        if (!HostAllowed(request.get_header_value("Host"), hosts)) {
          return refuse(421, "the Host header names no address this server answers to");
        }
        if (request.method != "GET" && request.method != "HEAD") {
          response.set_header("Allow", "GET, HEAD");
          return refuse(405, "method not allowed: parity serve is read-only (GET, HEAD)");
        }
        if (!context.options.token.empty() &&
            !BearerMatches(request.get_header_value("Authorization"), context.options.token)) {
          response.set_header("WWW-Authenticate", "Bearer");
          return refuse(401, "a bearer token is required (Authorization: Bearer TOKEN)");
        }
        if (request.headers.size() > kMaxHeaders) return refuse(431, "too many header fields");
        // The API reads no body: a request that announces one is refused before it is read.
        const std::string length = request.get_header_value("Content-Length");
        if (!request.body.empty() || (!length.empty() && length != "0") ||
            request.has_header("Transfer-Encoding")) {
          return refuse(413, "a GET request has no body");
        }
        if (HasEncodedSeparator(request.target) || request.path.find('\0') != std::string::npos) {
          return refuse(400, "the path holds an encoded separator, dot or NUL");
        }
        return httplib::Server::HandlerResponse::Unhandled;
      });
  const auto page = [](std::string_view body, const char* type) {
    return [body, type](const httplib::Request&, httplib::Response& response) {
      response.set_header("Cache-Control", "no-cache");
      response.set_header("X-Content-Type-Options", "nosniff");
      response.set_content(std::string(body), type);
    };
  };
  server.Get("/", page(assets::kPage, "text/html; charset=utf-8"));
  server.Get("/serve.css", page(assets::kStyle, "text/css; charset=utf-8"));
  server.Get("/serve.js", page(assets::kScript, "text/javascript; charset=utf-8"));
  server.Get("/chart.js", page(assets::kChartJs, "text/javascript; charset=utf-8"));
  using Handler = Answer (*)(Context&, const Params&);
  const std::pair<const char*, Handler> routes[] = {
      {"/api/runs", RunsApi},      {"/api/run", RunApi},         {"/api/metrics", MetricsApi},
      {"/api/trend", TrendApi},    {"/api/compare", CompareApi}, {"/api/reports", ReportsApi},
      {"/api/explain", ExplainApi}};
  for (const auto& [path, handler] : routes) {
    server.Get(path, [&context, handler = handler](const httplib::Request& request,
                                                   httplib::Response& response) {
      std::map<std::string, std::string> values;
      for (const auto& [k, v] : request.params) values[k] = v;
      SendJson(response, handler(context, Params(std::move(values))));
    });
  }
  server.Get("/api/.*", [](const httplib::Request& request, httplib::Response& response) {
    SendJson(response, ErrorAnswer(404, "no such endpoint: " + request.path.substr(0, 200)));
  });
  server.Get(R"(/files/(\d{1,4})/(.*))", [&context](const httplib::Request& request,
                                                    httplib::Response& response) {
    const std::size_t root = std::stoul(request.matches[1].str());
    if (root >= context.options.roots.size()) {
      SendJson(response, ErrorAnswer(404, fmt::format("no root {}", root)));
      return;
    }
    bool outside = false;
    auto path = ResolveUnder(context.options.roots[root], request.matches[2].str(), &outside);
    if (!path.ok()) {
      if (outside) LogRefused(request.path, path.status().message());
      SendJson(response, ErrorAnswer(outside ? 403 : 404, path.status().message()));
      return;
    }
    std::error_code ec;
    if (!std::filesystem::is_regular_file(*path, ec)) {
      SendJson(response, ErrorAnswer(404, request.matches[2].str() + ": not a file"));
      return;
    }
    const auto size = std::filesystem::file_size(*path, ec);
    if (ec || size > kMaxFileBytes) {
      SendJson(response,
               ErrorAnswer(404, request.matches[2].str() + ": unreadable or over 256 MiB"));
      return;
    }
    auto file = std::make_shared<std::ifstream>(*path, std::ios::binary);
    if (!*file) {
      SendJson(response, ErrorAnswer(404, request.matches[2].str() + ": can't be opened"));
      return;
    }
    // Streamed a chunk at a time: a large report costs no more memory than a small one.
    response.set_header("X-Content-Type-Options", "nosniff");
    // Nothing under a root runs with the dashboard's origin: a report's page runs its own
    // scripts (Chart.js) in an opaque origin; any other page is a download.
    const std::string name = std::filesystem::path(*path).filename().string();
    if (name == "report.html") {
      response.set_header("Content-Security-Policy", "sandbox allow-scripts");
    } else {
      response.set_header("Content-Security-Policy", "sandbox");
      if (IsActive(*path)) {
        response.set_header(
            "Content-Disposition",
            fmt::format("attachment; filename=\"{}\"",
                        "download" + std::filesystem::path(*path).extension().string()));
      }
    }
    response.set_content_provider(
        static_cast<std::size_t>(size), ContentType(*path),
        [file](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
          char buffer[1 << 16];
          file->seekg(static_cast<std::streamoff>(offset));
          const auto n = static_cast<std::size_t>(
              file->read(buffer, static_cast<std::streamsize>(std::min(length, sizeof buffer)))
                  .gcount());
          if (n == 0) return false;
          return sink.write(buffer, n);
        });
  });
  server.set_error_handler([](const httplib::Request& request, httplib::Response& response) {
    if (!response.body.empty()) return;
    SendJson(response,
             ErrorAnswer(response.status, response.status == 404
                                              ? "not found: " + request.path.substr(0, 200)
                                              : "request refused"));
  });
}

Server::~Server() { Stop(); }

Status Server::Bind() {
  Impl& impl = *impl_;
  const ServeOptions& options = impl.context.options;
  if (options.port == 0) {
    impl.port = impl.server.bind_to_any_port(options.host.c_str());
    if (impl.port < 0) return Status::Unavailable(options.host + ":0: can't bind a port there");
  } else {
    if (!impl.server.bind_to_port(options.host.c_str(), options.port)) {
      return Status::Unavailable(
          fmt::format("{}:{}: can't bind (in use, or not an address of this machine)", options.host,
                      options.port));
    }
    impl.port = options.port;
  }
  impl.bound = true;
  impl.server.WidenBacklog();
  impl.hosts = MakeHostPolicy(options.host, impl.port, options.allow_hosts, !options.token.empty());
  return Status::Ok();
}

int Server::port() const { return impl_->port; }

void Server::Listen() {
  if (impl_->bound) impl_->server.listen_after_bind();
}

void Server::Stop() {
  if (impl_ && impl_->bound) impl_->server.stop();
}

}  // namespace parity::serve
