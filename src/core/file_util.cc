// SPDX-License-Identifier: Apache-2.0
#include "core/file_util.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace parity {
namespace {

Status WriteAll(int fd, std::span<const std::byte> data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::Invalid(path, std::string("cannot write: ") + std::strerror(errno));
    }
    data = data.subspan(static_cast<std::size_t>(n));
  }
  return Status::Ok();
}

}  // namespace

Status WriteFileAtomically(const std::string& path,
                           std::span<const std::span<const std::byte>> pieces) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Invalid(path, std::string("cannot write: ") + std::strerror(errno));
  Status status;
  for (std::span<const std::byte> piece : pieces) {
    status = WriteAll(fd, piece, path);
    if (!status.ok()) break;
  }
  if (::close(fd) != 0 && status.ok()) {
    status = Status::Invalid(path, std::string("cannot write: ") + std::strerror(errno));
  }
  if (status.ok() && std::rename(tmp.c_str(), path.c_str()) != 0) {
    status = Status::Invalid(path, std::string("cannot write: ") + std::strerror(errno));
  }
  if (!status.ok()) ::unlink(tmp.c_str());
  return status;
}

Status WriteTextFile(const std::string& path, std::string_view text) {
  if (path == "-") {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout)) {
      return Status::Invalid("<stdout>", "cannot write");
    }
    return Status::Ok();
  }
  return WriteFileAtomically(path, {AsBytes(text)});
}

Result<std::string> ReadSmallFile(const std::string& path, std::size_t max_bytes,
                                  std::string_view what) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return Status::Invalid(path, fmt::format("is a directory, not a {}", what));
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::Invalid(path, std::string("cannot read the file: ") +
                                     (errno != 0 ? std::strerror(errno) : "open failed"));
  }
  std::string text;
  char buffer[64 * 1024];
  while (in) {
    in.read(buffer, sizeof buffer);
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) {
      const std::string cap = max_bytes % (std::size_t{1} << 20) == 0
                                  ? fmt::format("{} MiB", max_bytes >> 20)
                                  : fmt::format("{} bytes", max_bytes);
      return Status::Invalid(path, fmt::format("larger than a {} may be ({})", what, cap));
    }
  }
  if (in.bad()) return Status::Invalid(path, "cannot read the file: read error");
  return text;
}

}  // namespace parity
