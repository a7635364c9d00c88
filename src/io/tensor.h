// SPDX-License-Identifier: Apache-2.0
// Tensors as read from files: metadata, and data in native byte order and C order.
#ifndef PARITY_IO_TENSOR_H_
#define PARITY_IO_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/mapped_file.h"
#include "core/status.h"

namespace parity {

/// Bytes with whoever keeps them alive: a mapped file, a fuzzer's buffer, an owned vector.
struct ByteSource {
  std::string path;  ///< named in error messages
  std::span<const std::byte> bytes;
  std::shared_ptr<const void> owner;  ///< may be null when the caller guarantees lifetime
  /// The mapped file `bytes` lie in, if any (kept alive by `owner`): lets streaming kernels
  /// read tensors with pread instead of through the mapping.
  const MappedFile* file = nullptr;
};

/// Name, dtype and shape of a tensor. `numel` and `nbytes` are checked against overflow
/// when the metadata is built (see CheckedElementCount).
struct TensorMeta {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;  ///< empty for a 0-d tensor (one element)
  int64_t numel = 0;
  std::size_t nbytes = 0;
};

/// Builds TensorMeta, failing (naming `path`) when a dimension is negative or the element
/// count or byte size overflows 64 bits.
Result<TensorMeta> MakeTensorMeta(std::string_view path, std::string name, DType dtype,
                                  std::vector<int64_t> shape);

/// A tensor's data: contiguous, C (row-major) order, native byte order, aligned for its dtype.
/// Either a view into a mapped file (zero-copy) or an owned buffer. Cheap to copy (shared).
class Tensor {
 public:
  Tensor() = default;
  /// A view of `data` (which must hold meta.nbytes bytes, suitably aligned), kept alive by
  /// `owner`. When `file` is given, `data` lies in its mapping and streaming reads use pread.
  Tensor(TensorMeta meta, std::span<const std::byte> data, std::shared_ptr<const void> owner,
         bool zero_copy, const MappedFile* file = nullptr);
  /// Takes ownership of `buffer` (meta.nbytes bytes).
  static Tensor Owned(TensorMeta meta, std::vector<std::byte> buffer);

  const TensorMeta& meta() const { return meta_; }
  DType dtype() const { return meta_.dtype; }
  int64_t numel() const { return meta_.numel; }
  std::span<const std::byte> bytes() const { return data_; }
  /// True when the data is read in place from the file's mapping.
  bool zero_copy() const { return zero_copy_; }

  /// The same bytes as another dtype of the same item size (bfloat16 bits stored as uint16,
  /// say). Requires ItemSize(dtype) == ItemSize(this->dtype()).
  Tensor WithDType(DType dtype) const;

  template <typename T>
  std::span<const T> as() const {
    return {reinterpret_cast<const T*>(data_.data()), data_.size() / sizeof(T)};
  }

  /// Bytes [offset, offset + length) of the data, for kernels that stream through a tensor a
  /// chunk at a time: read with pread into `scratch` (at least `length` bytes, aligned for the
  /// dtype) when the tensor lies in a mapped file, otherwise a pointer into memory. Thread-safe.
  Result<const std::byte*> ReadChunk(std::size_t offset, std::size_t length,
                                     std::byte* scratch) const;

 private:
  TensorMeta meta_;
  std::span<const std::byte> data_;
  std::shared_ptr<const void> owner_;
  bool zero_copy_ = false;
  const MappedFile* file_ = nullptr;  // kept alive by owner_
  std::size_t file_offset_ = 0;       // of data_ in file_
};

/// How raw element bytes sit in a file.
struct RawLayout {
  bool byte_swapped = false;  ///< stored in the other byte order than this machine's
  bool fortran_order = false;
};

/// Makes a Tensor from `raw` (exactly meta.nbytes bytes inside `source`): a view when the
/// layout is native C order and the data is aligned; otherwise a converted copy.
Result<Tensor> MakeTensor(TensorMeta meta, std::span<const std::byte> raw, const ByteSource& source,
                          RawLayout layout);

/// Formats a shape as "[2, 3]".
std::string ShapeString(std::span<const int64_t> shape);

}  // namespace parity

#endif  // PARITY_IO_TENSOR_H_
