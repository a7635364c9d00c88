// SPDX-License-Identifier: Apache-2.0
// parity serve: the dashboard across runs (docs/SERVE.md), a local read-only web application
// over the results store and the report directories under the roots.
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/common.h"
#include "core/exit_code.h"
#include "core/file_util.h"
#include "core/interrupt.h"
#include "core/json_util.h"
#include "monitor/exporter.h"
#include "serve/server.h"
#include "store/store.h"

namespace parity::cli {

int RunServe(int argc, char** argv) {
  CommonOptions common;
  serve::ServeOptions options;
  std::string listen = "127.0.0.1:8470", token_file;
  auto app = MakeApp(
      "serve",
      "A local, read-only web dashboard across every run in the results store: the runs (live "
      "while a collect writes), any metric's trend with its verdicts and the environment "
      "differences at each change, two bundles compared (bench compare, env diff, numerics, "
      "accept's criteria), every report under the roots with its signature checked, and a "
      "dump pair's explain, paginated. The page and its JSON API (/api/runs, /api/trend, "
      "/api/compare, /api/reports, /api/explain; docs/SERVE.md) are served from the binary, "
      "offline. It listens on 127.0.0.1:8470; any other address needs --token or --token-file, "
      "and then every request needs 'Authorization: Bearer TOKEN'. A request is answered only when "
      "its Host header names localhost, 127.0.0.1, [::1], the --listen address or an --allow-host "
      "name, with the port (else 421: DNS rebinding). Only GET and HEAD; nothing outside the "
      "roots (a symbolic link out is 403); a page under a root runs sandboxed, never as the "
      "dashboard. Once listening it prints the URL (with --json FILE, a parity-serve "
      "document naming it and the port). Runs until interrupted; exit 2 on bad input (a store of a "
      "newer "
      "schema), 3 when the address can't be bound.",
      &common);
  app->add_option("--db", options.db, "the results store (default: as parity history's)")
      ->option_text("PATH");
  app->add_option("--root", options.roots,
                  "a directory whose report directories (and dumps) are served; repeatable")
      ->option_text("DIR");
  app->add_option("--listen", listen,
                  "HOST:PORT to listen on (default 127.0.0.1:8470; port 0 picks a free one)")
      ->option_text("HOST:PORT");
  app->add_option("--token", options.token,
                  "require 'Authorization: Bearer TOKEN' on every request (needed off loopback)")
      ->option_text("TOKEN");
  app->add_option("--token-file", token_file, "read the token from FILE (its first line)")
      ->option_text("FILE");
  app->add_option("--allow-host", options.allow_hosts,
                  "a further name the server answers to in a request's Host header (with a "
                  "token only; needed on 0.0.0.0 or ::); repeatable")
      ->option_text("NAME");
  double head_timeout = 10.0;
  app->add_option("--head-timeout", head_timeout,
                  "seconds a request's head (request line and header fields) may take to arrive; "
                  "a slower client is answered 408 (default 10)")
      ->option_text("SECONDS")
      ->check(CLI::Range(0.1, 600.0));
  if (auto code = Parse(*app, common, argc, argv)) return *code;
  options.head_timeout_ms = static_cast<int>(head_timeout * 1000.0);
  if (!options.token.empty() && !token_file.empty()) {
    return Fail(Status::Invalid("--token-file", "give --token or --token-file, not both"));
  }
  if (!token_file.empty()) {
    auto text = ReadSmallFile(token_file, 4096, "token file");
    if (!text.ok()) return Fail(text.status());
    std::string token = text->substr(0, text->find('\n'));
    while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
    if (token.empty()) return Fail(Status::Invalid(token_file, "the token file is empty"));
    options.token = token;
  }
  auto address = monitor::ParseListenAddress(listen);
  if (!address.ok()) return Fail(address.status());
  options.host = address->host;
  options.port = address->port;
  if (options.db.empty()) options.db = store::DefaultPath();
  if (options.db.empty()) {
    return Fail(Status::Invalid("", "no results store: set XDG_DATA_HOME or HOME, or give --db"));
  }
  if (Status s = serve::CheckOptions(options); !s.ok()) return Fail(s);
  ExitOnInterrupt();
  serve::Server server(options);
  if (Status s = server.Bind(); !s.ok()) return Fail(s);
  const std::string host =
      options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
  const std::string url = fmt::format("http://{}:{}/", host, server.port());
  if (common.human()) {
    std::printf("parity serve: %s (store %s%s)\n", url.c_str(), options.db.c_str(),
                options.token.empty() ? "" : "; bearer token required");
    std::fflush(stdout);
  }
  // Once listening: where, for scripts that started it on port 0.
  Json doc = Document("parity-serve", 1);
  doc["url"] = url;
  doc["port"] = server.port();
  doc["db"] = options.db;
  doc["roots"] = options.roots;
  doc["token_required"] = !options.token.empty();
  if (Status s = WriteJsonOutput(common, doc); !s.ok()) return Fail(s);
  server.Listen();
  return kExitOk;
}

}  // namespace parity::cli
