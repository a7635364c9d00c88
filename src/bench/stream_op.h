// SPDX-License-Identifier: Apache-2.0
// The BabelStream kernels by name: shared by the Backend interface and the GPU kernels, which
// include nothing else of parity (their device compilers need not see JSON or strings).
#ifndef PARITY_BENCH_STREAM_OP_H_
#define PARITY_BENCH_STREAM_OP_H_

namespace parity::bench {

/// The BabelStream kernels (BabelStream's definitions; `dot` is Backend::Dot).
enum class StreamOp {
  kCopy,     ///< c[i] = a[i]
  kMul,      ///< b[i] = scalar·c[i]
  kAdd,      ///< c[i] = a[i] + b[i]
  kTriad,    ///< a[i] = b[i] + scalar·c[i]
  kNstream,  ///< a[i] += b[i] + scalar·c[i]
};

}  // namespace parity::bench

#endif  // PARITY_BENCH_STREAM_OP_H_
