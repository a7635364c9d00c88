// SPDX-License-Identifier: Apache-2.0
#include "core/file_util.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

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

// The descriptor a name stands for (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N):
// written to as it is, never reopened or replaced, so that output lands where the caller's
// redirection points, at its offset.
std::optional<int> DescriptorNamed(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (!path.starts_with(prefix)) continue;
    const std::string_view digits = std::string_view(path).substr(prefix.size());
    int fd = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), fd);
    if (ec == std::errc() && end == digits.data() + digits.size() && !digits.empty() &&
        ::fcntl(fd, F_GETFD) != -1) {
      return fd;
    }
  }
  return std::nullopt;
}

Status WritePieces(int fd, std::span<const std::span<const std::byte>> pieces,
                   const std::string& path) {
  for (std::span<const std::byte> piece : pieces) {
    PARITY_RETURN_IF_ERROR(WriteAll(fd, piece, path));
  }
  return Status::Ok();
}

// Writes the pieces to an open descriptor and closes it.
Status WriteAndClose(int fd, std::span<const std::span<const std::byte>> pieces,
                     const std::string& path) {
  Status status = WritePieces(fd, pieces, path);
  if (::close(fd) != 0 && status.ok()) {
    status = Status::Invalid(path, std::string("cannot write: ") + std::strerror(errno));
  }
  return status;
}

}  // namespace

Status WriteFileAtomically(const std::string& path,
                           std::span<const std::span<const std::byte>> pieces) {
  if (const std::optional<int> fd = DescriptorNamed(path)) return WritePieces(*fd, pieces, path);
  struct stat st;
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    return Status::Invalid(path, std::string("cannot write: ") + std::strerror(EISDIR));
  }
  if (exists && !S_ISREG(st.st_mode)) {
    // A device, FIFO or socket (/dev/null, a pipe) is written in place: a rename would replace
    // it with a regular file.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return Status::Invalid(path, std::string("cannot write: ") + std::strerror(errno));
    return WriteAndClose(fd, pieces, path);
  }
  // Through a symbolic link, the file it names is replaced and the link kept.
  std::error_code ec;
  const std::string target = std::filesystem::is_symlink(path, ec)
                                 ? std::filesystem::weakly_canonical(path, ec).string()
                                 : path;
  const std::string& where = ec || target.empty() ? path : target;
  const std::string tmp = where + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Invalid(path, std::string("cannot write: ") + std::strerror(errno));
  Status status = WriteAndClose(fd, pieces, path);
  if (status.ok() && std::rename(tmp.c_str(), where.c_str()) != 0) {
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

std::optional<std::string> RealPath(const std::string& path) {
  char* real = realpath(path.c_str(), nullptr);
  if (real == nullptr) return std::nullopt;
  std::string out(real);
  std::free(real);
  return out;
}

bool IsUnder(std::string_view path, std::string_view root_real) {
  if (root_real == "/") return !path.empty() && path.front() == '/';
  if (!path.starts_with(root_real)) return false;
  return path.size() == root_real.size() || path[root_real.size()] == '/';
}

}  // namespace parity
