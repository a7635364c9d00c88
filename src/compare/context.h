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

/// The TensorContext of a tensor in `record` (role "input", "param" or "output"): the op, its
/// attrs, its tensors' shapes, and the reduced-precision modes any of `manifests` allowed
/// (framework.settings: allow_tf32_matmul, allow_tf32_cudnn, float32_matmul_precision).
TensorContext RecordContext(const DumpRecord& record, const std::string& role, DType dtype,
                            const std::vector<int64_t>& shape,
                            std::initializer_list<const Json*> manifests);

}  // namespace parity

#endif  // PARITY_COMPARE_CONTEXT_H_
