// SPDX-License-Identifier: Apache-2.0
// .safetensors files: an 8-byte little-endian header size, a JSON header, then one buffer.
// https://github.com/huggingface/safetensors (format section of its README)
#ifndef PARITY_IO_SAFETENSORS_H_
#define PARITY_IO_SAFETENSORS_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"
#include "io/tensor.h"
#include "io/tensor_file.h"

namespace parity {

/// The safetensors library's own limit on the JSON header.
inline constexpr std::size_t kMaxSafetensorsHeaderBytes = 100'000'000;

/// The safetensors dtype code ("F32", "BF16", "F8_E4M3", ...) of a parity dtype.
std::string_view SafetensorsDTypeCode(DType dtype);
/// The parity dtype of a safetensors code, if parity reads it.
std::optional<DType> DTypeFromSafetensorsCode(std::string_view code);

/// Opens a .safetensors held in `source`. Validates what the format requires: the header is a
/// JSON object of tensors (plus an optional string map "__metadata__"), every tensor's
/// data_offsets lie in the buffer and match its shape and dtype, and the tensors cover the
/// buffer exactly, without overlap or gaps. Tensors keep the header's order.
Result<std::unique_ptr<TensorFile>> OpenSafetensors(ByteSource source);

/// Writes `tensors` (unique names) to `path` with optional `metadata`, data 8-byte aligned,
/// through a temporary file renamed into place.
Status WriteSafetensors(const std::string& path, const std::vector<Tensor>& tensors,
                        const std::map<std::string, std::string>& metadata = {});

}  // namespace parity

#endif  // PARITY_IO_SAFETENSORS_H_
