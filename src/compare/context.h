// SPDX-License-Identifier: Apache-2.0
// What the tolerance model knows about a tensor of a dump record.
#ifndef PARITY_COMPARE_CONTEXT_H_
#define PARITY_COMPARE_CONTEXT_H_

#include <initializer_list>
#include <string>
#include <vector>

#include "compare/tolerance.h"
#include "core/json_util.h"
#include "io/dump.h"

namespace parity {

/// The TensorContext of tensor `index` of `role` ("input", "param" or "output") in `record`:
/// the op, its attrs, its tensors' shapes, and the reduced-precision modes any of `manifests`
/// allowed (framework.settings: allow_tf32_matmul, allow_tf32_cudnn,
/// float32_matmul_precision). TF32 counts only where the manifest's platform could run it: a
/// CUDA device (NVIDIA from compute capability 8.0, AMD's gfx94x and gfx95x; one of unknown
/// model too), never the CPU, whatever the flags say (cudnn.allow_tf32 is true by default).
TensorContext RecordContext(const DumpRecord& record, const std::string& role, DType dtype,
                            const std::vector<int64_t>& shape,
                            std::initializer_list<const Json*> manifests, std::size_t index = 0);

/// Whether the platform a dump manifest describes (platform.device, compute_capability,
/// gcn_arch) can compute in TF32.
bool Tf32Capable(const Json& manifest);

}  // namespace parity

#endif  // PARITY_COMPARE_CONTEXT_H_
