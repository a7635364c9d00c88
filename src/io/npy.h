// SPDX-License-Identifier: Apache-2.0
// NumPy .npy files: format versions 1.0, 2.0 and 3.0.
// https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
#ifndef PARITY_IO_NPY_H_
#define PARITY_IO_NPY_H_

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"
#include "io/tensor.h"
#include "io/tensor_file.h"

namespace parity {

/// Headers longer than this are rejected before parsing (numpy writes well under 1 KiB).
inline constexpr std::size_t kMaxNpyHeaderBytes = 1 << 20;

/// The parsed preamble of an .npy file.
struct NpyHeader {
  int major_version = 1;
  int minor_version = 0;
  DType dtype = DType::kFloat32;
  RawLayout layout;
  std::vector<int64_t> shape;
  std::size_t data_offset = 0;  ///< bytes from the start of the file to the data
};

/// Parses the magic, version and header dict at the start of `bytes`. Needs only the header
/// (not the data); fails naming `path` on a wrong magic, a header past the end of `bytes`, a
/// malformed dict, or a dtype parity can't read (object, structured, complex, strings...).
Result<NpyHeader> ParseNpyHeader(std::span<const std::byte> bytes, std::string_view path);

/// Opens an .npy held in `source`: the tensor's name is the file's stem.
Result<std::unique_ptr<TensorFile>> OpenNpy(ByteSource source);

/// The bytes of an .npy header (magic to the padding newline) for `meta`, version 1.0 unless
/// the header needs 2.0; data after it is 64-byte aligned. bfloat16 and float8 (which numpy
/// can't name) are written as uint16/uint8 bit patterns.
std::string EncodeNpyHeader(const TensorMeta& meta);

/// Writes `tensor` to `path` as .npy (C order, little-endian), through a temporary file that
/// is renamed into place.
Status WriteNpy(const std::string& path, const Tensor& tensor);

}  // namespace parity

#endif  // PARITY_IO_NPY_H_
