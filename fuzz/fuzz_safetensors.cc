// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the .safetensors reader.
#include "fuzz_tensor_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  return parity::fuzz::FuzzTensorFile(data, size, parity::FileFormat::kSafetensors);
}
