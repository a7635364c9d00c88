// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: what parity serve reads from a request. The input's first line is a
// request target, its second an Authorization header (and a Host header), the rest
// "name=value" query parameters; the whole input is also a request head. A path that resolves
// under the root stays under it; an encoded separator is never missed; only the exact bearer
// header matches; only an allowed name with the port passes the Host check; a head judged
// whole is within every limit, and one over a limit stays over as more bytes come;
// parameters that parse are in their ranges.
#include <unistd.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "serve/params.h"
#include "serve/security.h"

namespace {

void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_serve_request: %s\n", what);
  std::abort();
}

std::string_view Line(std::string_view& text) {
  const std::size_t end = text.find('\n');
  const std::string_view line = text.substr(0, end);
  text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static const std::string root = [] {
    std::string dir = (std::filesystem::temp_directory_path() / "fuzz-serve-XXXXXX").string();
    if (mkdtemp(dir.data()) == nullptr) Fail("no temporary directory");
    std::filesystem::create_directories(dir + "/root/reports/r");
    std::filesystem::create_symlink(dir, dir + "/root/reports/out");
    return std::filesystem::canonical(dir + "/root").string();
  }();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string_view target = Line(text);
  const std::string_view authorization = Line(text);

  const bool encoded = parity::serve::HasEncodedSeparator(target);
  const std::string_view path = target.substr(0, target.find('?'));
  for (std::string_view bad : {"%2f", "%2F", "%2e", "%2E", "%5c", "%5C", "%00"}) {
    if (path.find(bad) != std::string_view::npos && !encoded) Fail("an encoded separator missed");
  }
  auto resolved = parity::serve::ResolveUnder(root, path);
  if (resolved.ok() && !parity::IsUnder(*resolved, root)) Fail("a path left the root");
  if (parity::serve::BearerMatches(authorization, "t0ken") && authorization != "Bearer t0ken") {
    Fail("a wrong header matched");
  }

  static const parity::serve::HostPolicy policy =
      parity::serve::MakeHostPolicy("127.0.0.1", 8470, {"parity.example"}, true);
  if (parity::serve::HostAllowed(authorization, policy)) {
    std::string lower(authorization);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower != "localhost:8470" && lower != "127.0.0.1:8470" && lower != "[::1]:8470" &&
        lower != "parity.example:8470") {
      Fail("a Host header passed that names no allowed name with the port");
    }
  }

  parity::serve::HeadLimits limits;
  limits.request_line = 40;
  limits.fields = 4;
  limits.head = 120;
  const std::string_view whole(reinterpret_cast<const char*>(data), size);
  const auto verdict = parity::serve::CheckRequestHead(whole, limits);
  if (verdict == parity::serve::HeadVerdict::kComplete) {
    const std::string_view head = whole.substr(0, whole.find("\r\n\r\n") + 4);
    if (head.size() > limits.head || head.find("\r\n") > limits.request_line) {
      Fail("a head over a limit was judged whole");
    }
  }
  const auto over = [](parity::serve::HeadVerdict v) {
    return v != parity::serve::HeadVerdict::kComplete &&
           v != parity::serve::HeadVerdict::kIncomplete;
  };
  if (over(parity::serve::CheckRequestHead(whole.substr(0, size / 2), limits)) && !over(verdict)) {
    Fail("a head over a limit came back within them with more bytes");
  }

  std::map<std::string, std::string> values;
  while (!text.empty()) {
    const std::string_view line = Line(text);
    const std::size_t eq = line.find('=');
    values[std::string(line.substr(0, eq))] =
        eq == std::string_view::npos ? "" : std::string(line.substr(eq + 1));
  }
  const parity::serve::Params params(values);
  (void)params.Check({"limit", "offset", "q"});
  auto page = parity::serve::ReadPage(params, 100, 500);
  if (page.ok() && (page->limit < 1 || page->limit > 500)) Fail("a limit out of range");
  auto number = params.Number("q", -1.0, 1.0);
  if (number.ok() && *number && (**number < -1.0 || **number > 1.0)) Fail("a number out of range");
  return 0;
}
