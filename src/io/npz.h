// SPDX-License-Identifier: Apache-2.0
// NumPy .npz archives (zip of .npy members, stored or deflated), read through libzip.
#ifndef PARITY_IO_NPZ_H_
#define PARITY_IO_NPZ_H_

#include <memory>

#include "core/status.h"
#include "io/tensor_file.h"

namespace parity {

/// Opens an .npz held in `source`. Every member must be an .npy; a tensor's name is its member
/// name without ".npy". Members are decompressed into owned buffers on Load, growing with the
/// data actually read, so a header that claims more than the member holds fails without
/// allocating the claim.
Result<std::unique_ptr<TensorFile>> OpenNpz(ByteSource source);

}  // namespace parity

#endif  // PARITY_IO_NPZ_H_
