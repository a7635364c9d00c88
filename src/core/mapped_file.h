// SPDX-License-Identifier: Apache-2.0
// Read-only memory-mapped files.
#ifndef PARITY_CORE_MAPPED_FILE_H_
#define PARITY_CORE_MAPPED_FILE_H_

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "core/status.h"

namespace parity {

/// A whole file mapped read-only. Empty files have an empty span and no mapping.
/// Immutable after Open, so it may be shared between threads.
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

  /// Tells the kernel the range will be read sequentially soon (a hint; never fails).
  void AdviseSequential(std::size_t offset, std::size_t length) const;

 private:
  MappedFile(std::string path, const std::byte* data, std::size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}

  std::string path_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

/// Asks the kernel to map, in one call, the pages of [data, data + length) that are about to be
/// read (MADV_POPULATE_READ), instead of one page fault per few pages. A hint: it never fails,
/// and it is harmless on memory that is already mapped.
void PopulateForRead(const void* data, std::size_t length);

}  // namespace parity

#endif  // PARITY_CORE_MAPPED_FILE_H_
