// SPDX-License-Identifier: Apache-2.0
// TensorFile: one interface over the tensor file formats (.npy, .npz, .safetensors).
#ifndef PARITY_IO_TENSOR_FILE_H_
#define PARITY_IO_TENSOR_FILE_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "io/tensor.h"

namespace parity {

enum class FileFormat { kNpy, kNpz, kSafetensors };

/// "npy", "npz" or "safetensors", the names used in JSON.
std::string_view FormatName(FileFormat format);

/// A file of named tensors. Opening validates every tensor's metadata against the file (a
/// malformed file fails to open); Load reads one tensor's data. Not safe to Load from two
/// threads at once.
class TensorFile {
 public:
  virtual ~TensorFile() = default;
  virtual FileFormat format() const = 0;
  /// The tensors, in file order.
  virtual const std::vector<TensorMeta>& tensors() const = 0;
  /// Reads tensor `index` (< tensors().size()): zero-copy from the mapping where the layout
  /// allows, converted otherwise. Fails with kInvalidInput when the data is corrupt.
  virtual Result<Tensor> Load(std::size_t index) const = 0;
};

/// Opens `path`, choosing the format by extension (.npy, .npz, .safetensors) and otherwise by
/// its first bytes. Every failure names the path and the problem.
Result<std::unique_ptr<TensorFile>> OpenTensorFile(const std::string& path);

/// Opens tensors held in memory (fuzzers, tests). `source.owner` keeps the bytes alive, or the
/// caller does for as long as the TensorFile and its Tensors live.
Result<std::unique_ptr<TensorFile>> OpenTensorBytes(ByteSource source, FileFormat format);

/// The format a file name's extension names, if any.
std::optional<FileFormat> FormatFromExtension(std::string_view path);

/// The tensor files under `dir` (recursively, not following symlinked directories), sorted by
/// path. Fails when `dir` can't be read or holds no tensor file.
Result<std::vector<std::string>> ListTensorFiles(const std::string& dir);

}  // namespace parity

#endif  // PARITY_IO_TENSOR_FILE_H_
