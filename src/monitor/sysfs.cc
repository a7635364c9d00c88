// SPDX-License-Identifier: Apache-2.0
#include "monitor/sysfs.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <system_error>

namespace parity::monitor {

std::optional<std::string> ReadSmallFile(const std::string& path, std::size_t limit) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buffer[4096];
  bool failed = false;
  while (out.size() < limit) {
    const std::size_t want = std::min(sizeof(buffer), limit - out.size());
    const ssize_t got = ::read(fd, buffer, want);
    if (got < 0) {
      if (errno == EINTR) continue;
      failed = true;
      break;
    }
    if (got == 0) break;
    out.append(buffer, static_cast<std::size_t>(got));
    // Within one page, a short read is the end of a sysfs attribute or a regular file: one
    // read() per file rather than two (the monitor reads hundreds each second). Larger files
    // (binary attributes such as gpu_vram_bad_pages, which hand out whole lines per read) are
    // read to the end.
    if (limit <= 4096 && static_cast<std::size_t>(got) < want) break;
  }
  ::close(fd);
  if (failed) return std::nullopt;
  return out;
}

std::string_view Trim(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

std::optional<std::string> ReadTrimmed(const std::string& path) {
  auto text = ReadSmallFile(path, 4096);
  if (!text) return std::nullopt;
  std::string_view view = *text;
  view = view.substr(0, view.find('\n'));
  view = Trim(view);
  if (view.empty()) return std::nullopt;
  return std::string(view);
}

std::optional<uint64_t> ParseUnsigned(std::string_view text) {
  text = Trim(text);
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<int64_t> ParseSigned(std::string_view text) {
  text = Trim(text);
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> ParseDecimal(std::string_view text) {
  text = Trim(text);
  if (text.empty() || !(text[0] >= '0' && text[0] <= '9')) return std::nullopt;
  double value = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::fixed);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<uint64_t> ReadUnsigned(const std::string& path) {
  auto text = ReadSmallFile(path, 256);
  if (!text) return std::nullopt;
  return ParseUnsigned(*text);
}

std::optional<int64_t> ReadSigned(const std::string& path) {
  auto text = ReadSmallFile(path, 256);
  if (!text) return std::nullopt;
  return ParseSigned(*text);
}

std::vector<std::string> ListDirectory(const std::string& dir, std::size_t limit) {
  std::vector<std::string> names;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec), end;
  for (; !ec && it != end && names.size() < limit; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string JoinPath(std::string_view dir, std::string_view name) {
  std::string out(dir);
  if (!out.empty() && out.back() != '/' && !name.starts_with('/')) out += '/';
  if (!out.empty() && out.back() == '/' && name.starts_with('/')) name.remove_prefix(1);
  out += name;
  return out;
}

}  // namespace parity::monitor
