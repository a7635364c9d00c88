// SPDX-License-Identifier: Apache-2.0
#include "serve/security.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <system_error>

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

bool IsUnder(std::string_view path, std::string_view root_real) {
  if (root_real == "/") return !path.empty() && path.front() == '/';
  if (!path.starts_with(root_real)) return false;
  return path.size() == root_real.size() || path[root_real.size()] == '/';
}

Result<std::string> ResolveUnder(const std::string& root, std::string_view rel) {
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
  std::unique_ptr<char, decltype(&std::free)> root_real(realpath(root.c_str(), nullptr),
                                                        &std::free);
  if (!root_real) return Status::Invalid(root, "the root can't be resolved");
  const std::string joined = std::string(root_real.get()) + "/" + shown;
  std::unique_ptr<char, decltype(&std::free)> real(realpath(joined.c_str(), nullptr), &std::free);
  if (!real) return Status::Invalid(shown, "no such file");
  if (!IsUnder(real.get(), root_real.get())) {
    return Status::Invalid(shown, "leads outside the served root");
  }
  return std::string(real.get());
}

}  // namespace parity::serve
