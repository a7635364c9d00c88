// SPDX-License-Identifier: Apache-2.0
// Shared body of the tensor-file fuzz targets: open the bytes as one format, then load and
// summarise every tensor. Any crash, sanitizer report, leak or timeout is a bug; errors are
// expected and fine.
#ifndef PARITY_FUZZ_FUZZ_TENSOR_FILE_H_
#define PARITY_FUZZ_FUZZ_TENSOR_FILE_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/parallel.h"
#include "io/tensor_file.h"
#include "io/tensor_stats.h"

namespace parity::fuzz {

inline int FuzzTensorFile(const uint8_t* data, std::size_t size, FileFormat format) {
  SetThreadCount(1);
  ByteSource source{"fuzz-input", std::as_bytes(std::span(data, size)), nullptr};
  auto file = OpenTensorBytes(source, format);
  if (!file.ok()) return 0;
  for (std::size_t i = 0; i < (*file)->tensors().size(); ++i) {
    auto tensor = (*file)->Load(i);
    if (tensor.ok()) (void)ComputeStats(*tensor).ok();
  }
  return 0;
}

}  // namespace parity::fuzz

#endif  // PARITY_FUZZ_FUZZ_TENSOR_FILE_H_
