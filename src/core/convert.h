// SPDX-License-Identifier: Apache-2.0
// Element conversion from any dtype to float64 (exact for every float dtype).
#ifndef PARITY_CORE_CONVERT_H_
#define PARITY_CORE_CONVERT_H_

#include <cstddef>
#include <span>

#include "core/dtype.h"

namespace parity {

/// Converts `out.size()` elements of `dtype`, stored contiguously in native byte order at
/// `src`, to float64. Float dtypes convert exactly; 64-bit integers beyond 2^53 round to
/// nearest; bool is 0 or 1 (any non-zero byte is 1).
void ConvertToFloat64(DType dtype, const std::byte* src, std::span<double> out);

/// One element: ConvertToFloat64 for a single value.
double ElementToFloat64(DType dtype, const std::byte* element);

}  // namespace parity

#endif  // PARITY_CORE_CONVERT_H_
