// SPDX-License-Identifier: Apache-2.0
#include "serve/server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <system_error>

#include "monitor/exporter.h"
#include "serve/api.h"
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

}  // namespace

Status CheckOptions(const ServeOptions& options) {
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
  explicit Impl(ServeOptions options) : context(std::move(options)) {}
  Context context;
  httplib::Server server;
  int port = 0;
  bool bound = false;
};

Server::Server(ServeOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  Impl& impl = *impl_;
  Context& context = impl.context;
  httplib::Server& server = impl.server;
  server.new_task_queue = [] { return new httplib::ThreadPool(32); };
  server.set_keep_alive_max_count(1000);
  server.set_read_timeout(10, 0);
  server.set_write_timeout(30, 0);
  server.set_payload_max_length(1 << 16);
  // Headers and body go out in separate writes: without TCP_NODELAY a keep-alive client's
  // delayed ACK holds the body back 40 ms.
  server.set_tcp_nodelay(true);
  // Every request passes here first: the method, the token, the path's encoding.
  server.set_pre_routing_handler(
      [&context](const httplib::Request& request, httplib::Response& response) {
        const auto refuse = [&response](int status, std::string_view message) {
          SendJson(response, ErrorAnswer(status, message));
          return httplib::Server::HandlerResponse::Handled;
        };
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
    auto path = ResolveUnder(context.options.roots[root], request.matches[2].str());
    if (!path.ok()) {
      SendJson(response, ErrorAnswer(404, path.status().message()));
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
