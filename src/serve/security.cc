// SPDX-License-Identifier: Apache-2.0
#include "serve/security.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <system_error>
#include <utility>

namespace parity::serve {

bool BearerMatches(std::string_view authorization, std::string_view token) {
  constexpr std::string_view kScheme = "Bearer ";
  if (token.empty()) return false;
  const std::string expected = std::string(kScheme) + std::string(token);
  // Every byte of the longer one is looked at, whatever the first difference.
  const std::size_t n = std::max(expected.size(), authorization.size());
  unsigned diff = expected.size() == authorization.size() ? 0u : 1u;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char a = i < authorization.size() ? authorization[i] : 0;
    const unsigned char e = i < expected.size() ? expected[i] : 0;
    diff |= static_cast<unsigned>(a ^ e);
  }
  return diff == 0;
}

bool HasEncodedSeparator(std::string_view target) {
  const std::string_view path = target.substr(0, target.find('?'));
  for (std::size_t i = 0; i + 2 < path.size(); ++i) {
    if (path[i] != '%') continue;
    const char hi = path[i + 1];
    const char lo = static_cast<char>(std::tolower(static_cast<unsigned char>(path[i + 2])));
    if ((hi == '2' && (lo == 'f' || lo == 'e')) || (hi == '5' && lo == 'c') ||
        (hi == '0' && lo == '0')) {
      return true;
    }
  }
  return false;
}

HostPolicy MakeHostPolicy(const std::string& listen_host, int port,
                          const std::vector<std::string>& allowed, bool token) {
  HostPolicy policy;
  policy.port = port;
  policy.names = {"localhost", "127.0.0.1", "[::1]"};
  auto add = [&policy](std::string name) {
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (name.find(':') != std::string::npos && name.front() != '[') name = "[" + name + "]";
    if (std::find(policy.names.begin(), policy.names.end(), name) == policy.names.end()) {
      policy.names.push_back(std::move(name));
    }
  };
  if (!listen_host.empty() && listen_host != "0.0.0.0" && listen_host != "::" &&
      listen_host != "[::]") {
    add(listen_host);
  }
  if (token) {
    for (const std::string& name : allowed) add(name);
  }
  return policy;
}

bool HostAllowed(std::string_view host_header, const HostPolicy& policy) {
  if (host_header.empty() || host_header.size() > 255) return false;
  std::string_view name = host_header;
  std::string_view port;
  const std::size_t close = host_header.rfind(']');
  const std::size_t colon = host_header.rfind(':');
  if (colon != std::string_view::npos && (close == std::string_view::npos || colon > close)) {
    name = host_header.substr(0, colon);
    port = host_header.substr(colon + 1);
  }
  if (port.empty()) {
    if (colon != std::string_view::npos && (close == std::string_view::npos || colon > close)) {
      return false;  // "name:" with no port
    }
    if (policy.port != 80) return false;
  } else if (port != std::to_string(policy.port)) {
    return false;  // the port as a browser writes it: decimal, no sign, no leading zero
  }
  for (const std::string& allowed : policy.names) {
    if (allowed.size() != name.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < name.size() && same; ++i) {
      same = std::tolower(static_cast<unsigned char>(name[i])) == allowed[i];
    }
    if (same) return true;
  }
  return false;
}

HeadVerdict CheckRequestHead(std::string_view received, const HeadLimits& limits) {
  const std::size_t end = received.find("\r\n\r\n");
  const std::string_view head =
      end == std::string_view::npos ? received : received.substr(0, end + 4);
  const std::size_t first = head.find("\r\n");
  // Without its CRLF yet, the line is at least what came, a last CR perhaps its end.
  const std::size_t line = first != std::string_view::npos ? first
                           : head.ends_with('\r')          ? head.size() - 1
                                                           : head.size();
  if (line > limits.request_line) {
    return HeadVerdict::kLineTooLong;
  }
  if (head.size() > limits.head) return HeadVerdict::kHeadTooLarge;
  if (first != std::string_view::npos) {
    // Lines after the request line, the blank one not counted.
    std::size_t fields = 0;
    for (std::size_t at = first + 2; at < head.size();) {
      const std::size_t next = head.find("\r\n", at);
      if (next == std::string_view::npos || next == at) break;
      if (++fields > limits.fields) return HeadVerdict::kTooManyFields;
      at = next + 2;
    }
  }
  return end == std::string_view::npos ? HeadVerdict::kIncomplete : HeadVerdict::kComplete;
}

Result<std::string> ResolveUnder(const std::string& root, std::string_view rel, bool* outside) {
  const std::string shown(rel);
  if (rel.find('\0') != std::string_view::npos) return Status::Invalid(shown, "holds a NUL");
  if (rel.find('\\') != std::string_view::npos) return Status::Invalid(shown, "holds a backslash");
  if (!rel.empty() && rel.front() == '/') return Status::Invalid(shown, "is absolute");
  std::size_t start = 0;
  while (start <= rel.size()) {
    const std::size_t end = std::min(rel.find('/', start), rel.size());
    const std::string_view part = rel.substr(start, end - start);
    if (part == ".." || part == ".") return Status::Invalid(shown, "has a '.' or '..' component");
    start = end + 1;
  }
  const std::optional<std::string> root_real = RealPath(root);
  if (!root_real) return Status::Invalid(root, "the root can't be resolved");
  std::optional<std::string> real = RealPath(*root_real + "/" + shown);
  if (!real) return Status::Invalid(shown, "no such file");
  if (!IsUnder(*real, *root_real)) {
    if (outside != nullptr) *outside = true;
    return Status::Invalid(shown, "leads outside the served root");
  }
  return std::move(*real);
}

void LogRefused(std::string_view what, std::string_view why) {
  std::fprintf(stderr, "parity serve: refused %.*s: %.*s\n", static_cast<int>(what.size()),
               what.data(), static_cast<int>(why.size()), why.data());
  std::fflush(stderr);
}

}  // namespace parity::serve
