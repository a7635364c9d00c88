// SPDX-License-Identifier: Apache-2.0
// Instruction-set levels for the vectorised kernels, chosen at run time.
#ifndef PARITY_CORE_SIMD_H_
#define PARITY_CORE_SIMD_H_

namespace parity {

/// x86-64 micro-architecture levels a kernel is compiled for.
enum class Isa {
  kBaseline = 0,  ///< x86-64 (SSE2), or whatever the compiler targets elsewhere
  kV3 = 1,        ///< x86-64-v3: AVX2, FMA
  kV4 = 2,        ///< x86-64-v4: AVX-512 F/BW/CD/DQ/VL
};

/// Whether this CPU can run kernels built for `isa`.
bool IsaSupported(Isa isa);

/// The level kernels use: the widest supported one, or the lower one $PARITY_ISA names
/// ("baseline", "v3", "v4"), or what SetIsa chose. Thread-safe.
Isa ActiveIsa();

/// Overrides the level (clamped to what the CPU supports); for tests and benchmarks that run
/// every variant on one machine.
void SetIsa(Isa isa);

const char* IsaName(Isa isa);

}  // namespace parity

// Kernel bodies are PARITY_INLINE templates; each file defines one thin entry point per level
// with these attributes and dispatches on ActiveIsa().
#if defined(__x86_64__)
#define PARITY_TARGET_V3 __attribute__((target("arch=x86-64-v3")))
#define PARITY_TARGET_V4 __attribute__((target("arch=x86-64-v4")))
#else
#define PARITY_TARGET_V3
#define PARITY_TARGET_V4
#endif

#define PARITY_INLINE inline __attribute__((always_inline))

#endif  // PARITY_CORE_SIMD_H_
