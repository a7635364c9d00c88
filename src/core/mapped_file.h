// SPDX-License-Identifier: Apache-2.0
// Read-only memory-mapped files, also readable with pread for streaming.
#ifndef PARITY_CORE_MAPPED_FILE_H_
#define PARITY_CORE_MAPPED_FILE_H_

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "core/status.h"

namespace parity {

/// A whole file mapped read-only, with its descriptor kept open for ReadAt. Empty files have an
/// empty span and no mapping. Immutable after Open, so it may be shared between threads.
class MappedFile {
 public:
  /// Maps `path`. Fails (kInvalidInput, message naming the path) when it can't be opened,
  /// is a directory or is not a regular file.
  static Result<std::shared_ptr<const MappedFile>> Open(const std::string& path);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  std::span<const std::byte> bytes() const { return {data_, size_}; }
  std::size_t size() const { return size_; }

  /// Copies bytes [offset, offset + out.size()) of the file into `out` with pread. Streaming
  /// kernels read this way into small reused buffers: it costs a copy from the page cache, but
  /// no page faults on a large mapping (which, under some hypervisors, cost more than the copy).
  /// Thread-safe. Fails naming the path when the file has shrunk or can't be read.
  Status ReadAt(std::size_t offset, std::span<std::byte> out) const;

 private:
  MappedFile(std::string path, int fd, const std::byte* data, std::size_t size)
      : path_(std::move(path)), fd_(fd), data_(data), size_(size) {}

  std::string path_;
  int fd_ = -1;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace parity

#endif  // PARITY_CORE_MAPPED_FILE_H_
