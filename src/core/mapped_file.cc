// SPDX-License-Identifier: Apache-2.0
#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace parity {

Result<std::shared_ptr<const MappedFile>> MappedFile::Open(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is then refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::Invalid(path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::Invalid(path, std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Status::Invalid(path, "is a directory, expected a file");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::Invalid(path, "not a regular file");
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  const std::byte* data = nullptr;
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return Status::Invalid(path, std::string("cannot map: ") + std::strerror(err));
    }
    data = static_cast<const std::byte*>(p);
  }
  ::close(fd);
  return std::shared_ptr<const MappedFile>(new MappedFile(path, data, size));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

void MappedFile::AdviseSequential(std::size_t offset, std::size_t length) const {
  if (data_ == nullptr || offset >= size_) return;
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t begin = offset / page * page;
  const std::size_t end = std::min(size_, offset + length);
  void* start = const_cast<std::byte*>(data_) + begin;
  ::madvise(start, end - begin, MADV_SEQUENTIAL);
  ::madvise(start, end - begin, MADV_WILLNEED);
}

void PopulateForRead(const void* data, std::size_t length) {
#ifndef MADV_POPULATE_READ
  constexpr int MADV_POPULATE_READ = 22;  // Linux 5.14; older kernels answer EINVAL
#endif
  if (data == nullptr || length == 0) return;
  static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(data) / page * page;
  const auto end = reinterpret_cast<std::uintptr_t>(data) + length;
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ);
}

}  // namespace parity
