// SPDX-License-Identifier: Apache-2.0
#include "fleet/pack.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace parity::fleet {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxPath = 4096;

void PutInt(std::string* out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

bool GetInt(std::string_view* in, int bytes, std::uint64_t* v) {
  if (in->size() < static_cast<std::size_t>(bytes)) return false;
  *v = 0;
  for (int i = 0; i < bytes; ++i) {
    *v |= static_cast<std::uint64_t>(static_cast<unsigned char>((*in)[i])) << (8 * i);
  }
  in->remove_prefix(static_cast<std::size_t>(bytes));
  return true;
}

bool SafePath(std::string_view path) {
  if (path.empty() || path.front() == '/' || path.find('\0') != std::string_view::npos) {
    return false;
  }
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = path.find('/', start);
    const std::string_view part = path.substr(
        start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return true;
}

}  // namespace

Result<std::string> PackDirectory(const std::string& dir, std::size_t max_bytes) {
  std::string out;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec);
  if (ec) return Status::Invalid(dir, ec.message());
  for (const fs::directory_entry& entry : it) {
    if (!entry.is_regular_file(ec) || entry.is_symlink(ec)) continue;
    const std::string rel = fs::relative(entry.path(), dir, ec).generic_string();
    if (ec || !SafePath(rel) || rel.size() > kMaxPath) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) return Status::Invalid(entry.path().string(), "unreadable");
    if (out.size() + bytes.size() + rel.size() + 12 > max_bytes) {
      return Status::Invalid(dir, fmt::format("its files hold more than {} bytes", max_bytes));
    }
    PutInt(&out, rel.size(), 4);
    out += rel;
    PutInt(&out, bytes.size(), 8);
    out += bytes;
  }
  return out;
}

Status UnpackDirectory(std::string_view packed, const std::string& dir, std::string_view what) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::Invalid(dir, ec.message());
  int index = 0;
  while (!packed.empty()) {
    ++index;
    std::uint64_t path_len = 0, size = 0;
    if (!GetInt(&packed, 4, &path_len) || path_len > kMaxPath || path_len > packed.size()) {
      return Status::Invalid(dir, fmt::format("{}: entry {}: bad path length", what, index));
    }
    const std::string rel(packed.substr(0, path_len));
    packed.remove_prefix(path_len);
    if (!SafePath(rel)) {
      return Status::Invalid(dir, fmt::format("{}: entry {}: unsafe path '{}'", what, index, rel));
    }
    if (!GetInt(&packed, 8, &size) || size > packed.size()) {
      return Status::Invalid(dir, fmt::format("{}: {}: truncated", what, rel));
    }
    const fs::path target = fs::path(dir) / rel;
    fs::create_directories(target.parent_path(), ec);
    std::ofstream out(target, std::ios::binary | std::ios::trunc);
    out.write(packed.data(), static_cast<std::streamsize>(size));
    if (!out) return Status::Invalid(target.string(), "could not be written");
    packed.remove_prefix(size);
  }
  return Status::Ok();
}

}  // namespace parity::fleet
