// SPDX-License-Identifier: Apache-2.0
#include "core/file_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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

}  // namespace parity
