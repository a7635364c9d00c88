// SPDX-License-Identifier: Apache-2.0
#include "io/tensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace parity {
namespace {

template <std::size_t kSize>
void SwapBytes(std::byte* data, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) std::reverse(data + i * kSize, data + (i + 1) * kSize);
}

void SwapAll(std::byte* data, std::size_t count, std::size_t itemsize) {
  switch (itemsize) {
    case 2:
      SwapBytes<2>(data, count);
      break;
    case 4:
      SwapBytes<4>(data, count);
      break;
    case 8:
      SwapBytes<8>(data, count);
      break;
    default:
      break;  // single bytes have no order
  }
}

// Copies `src` (Fortran order) to `dst` (C order), element by element.
template <std::size_t kSize>
void FortranToC(const std::byte* src, std::byte* dst, std::span<const int64_t> shape) {
  const std::size_t rank = shape.size();
  std::vector<int64_t> f_stride(rank, 1);
  for (std::size_t k = 1; k < rank; ++k) f_stride[k] = f_stride[k - 1] * shape[k - 1];
  std::vector<int64_t> index(rank, 0);
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  int64_t f_offset = 0;
  for (int64_t c = 0; c < total; ++c) {
    std::memcpy(dst + static_cast<std::size_t>(c) * kSize,
                src + static_cast<std::size_t>(f_offset) * kSize, kSize);
    // Advance the C-order odometer (last index fastest), keeping the Fortran offset in step.
    for (std::size_t k = rank; k-- > 0;) {
      if (++index[k] < shape[k]) {
        f_offset += f_stride[k];
        break;
      }
      f_offset -= f_stride[k] * (shape[k] - 1);
      index[k] = 0;
    }
  }
}

void FortranToCAny(const std::byte* src, std::byte* dst, std::span<const int64_t> shape,
                   std::size_t itemsize) {
  switch (itemsize) {
    case 1:
      return FortranToC<1>(src, dst, shape);
    case 2:
      return FortranToC<2>(src, dst, shape);
    case 4:
      return FortranToC<4>(src, dst, shape);
    default:
      return FortranToC<8>(src, dst, shape);
  }
}

}  // namespace

Result<TensorMeta> MakeTensorMeta(std::string_view path, std::string name, DType dtype,
                                  std::vector<int64_t> shape) {
  uint64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      return Status::Invalid(path, fmt::format("tensor '{}': negative dimension in shape {}", name,
                                               ShapeString(shape)));
    }
    if (__builtin_mul_overflow(numel, static_cast<uint64_t>(d), &numel) ||
        numel > static_cast<uint64_t>(INT64_MAX)) {
      return Status::Invalid(
          path, fmt::format("tensor '{}': shape {} overflows 64 bits", name, ShapeString(shape)));
    }
  }
  uint64_t nbytes = 0;
  if (__builtin_mul_overflow(numel, static_cast<uint64_t>(ItemSize(dtype)), &nbytes) ||
      nbytes > static_cast<uint64_t>(INT64_MAX)) {
    return Status::Invalid(path, fmt::format("tensor '{}': shape {} x {} bytes overflows 64 bits",
                                             name, ShapeString(shape), ItemSize(dtype)));
  }
  TensorMeta meta;
  meta.name = std::move(name);
  meta.dtype = dtype;
  meta.shape = std::move(shape);
  meta.numel = static_cast<int64_t>(numel);
  meta.nbytes = static_cast<std::size_t>(nbytes);
  return meta;
}

Tensor::Tensor(TensorMeta meta, std::span<const std::byte> data, std::shared_ptr<const void> owner,
               bool zero_copy, const MappedFile* file)
    : meta_(std::move(meta)),
      data_(data),
      owner_(std::move(owner)),
      zero_copy_(zero_copy),
      file_(file) {
  if (file_ != nullptr) {
    file_offset_ = static_cast<std::size_t>(data_.data() - file_->bytes().data());
  }
}

Tensor Tensor::WithDType(DType dtype) const {
  Tensor copy = *this;
  copy.meta_.dtype = dtype;
  return copy;
}

Result<const std::byte*> Tensor::ReadChunk(std::size_t offset, std::size_t length,
                                           std::byte* scratch) const {
  if (file_ == nullptr) return data_.data() + offset;
  PARITY_RETURN_IF_ERROR(file_->ReadAt(file_offset_ + offset, std::span(scratch, length)));
  return static_cast<const std::byte*>(scratch);
}

Tensor Tensor::Owned(TensorMeta meta, std::vector<std::byte> buffer) {
  auto owned = std::make_shared<std::vector<std::byte>>(std::move(buffer));
  std::span<const std::byte> data(owned->data(), owned->size());
  return Tensor(std::move(meta), data, std::move(owned), false);
}

Result<Tensor> MakeTensor(TensorMeta meta, std::span<const std::byte> raw, const ByteSource& source,
                          RawLayout layout) {
  if (raw.size() != meta.nbytes) {
    return Status::Internal(fmt::format("{}: tensor '{}' given {} bytes, expected {}", source.path,
                                        meta.name, raw.size(), meta.nbytes));
  }
  const std::size_t itemsize = ItemSize(meta.dtype);
  const bool aligned = reinterpret_cast<std::uintptr_t>(raw.data()) % itemsize == 0;
  const bool needs_transpose = layout.fortran_order && meta.shape.size() > 1;
  const bool needs_swap = layout.byte_swapped && itemsize > 1;
  if (aligned && !needs_transpose && !needs_swap) {
    const MappedFile* file = source.file;
    if (file != nullptr && (raw.data() < file->bytes().data() ||
                            raw.data() + raw.size() > file->bytes().data() + file->size())) {
      file = nullptr;
    }
    return Tensor(std::move(meta), raw, source.owner, true, file);
  }
  std::vector<std::byte> buffer(raw.size());
  if (needs_transpose) {
    FortranToCAny(raw.data(), buffer.data(), meta.shape, itemsize);
  } else if (!raw.empty()) {
    std::memcpy(buffer.data(), raw.data(), raw.size());
  }
  if (needs_swap) SwapAll(buffer.data(), static_cast<std::size_t>(meta.numel), itemsize);
  return Tensor::Owned(std::move(meta), std::move(buffer));
}

std::string ShapeString(std::span<const int64_t> shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

}  // namespace parity
