// SPDX-License-Identifier: Apache-2.0
// What a side's dump manifest says about the precision an op could have run in: whether the
// device has TF32 at all, whether autocast to float16 was on, and the precision settings
// (framework.settings). Used by `parity explain` where the data alone cannot tell fp16 from
// tf32 (the same 10 fraction bits), and to word what the manifest allowed.
#ifndef PARITY_EXPLAIN_PLATFORM_H_
#define PARITY_EXPLAIN_PLATFORM_H_

#include <optional>
#include <string>

#include "core/json_util.h"
#include "explain/precision.h"

namespace parity {

/// Whether a manifest's device can compute float32 matmuls or convolutions in TF32.
enum class Tf32Support {
  kUnknown,  ///< the manifest does not say: no device, a GPU of unknown model, another kind
  kAbsent,   ///< known not to: a CPU whose oneDNN fp32_precision does not ask for tf32, NVIDIA
             ///< before Ampere (compute capability below 8.0), AMD before CDNA3 (gfx90a ...)
  kPresent,  ///< NVIDIA from compute capability 8.0, AMD gfx94x and gfx95x, a CPU whose oneDNN
             ///< fp32_precision (torch 2.9 on) is tf32
};

/// What a manifest says about TF32 on the device that ran `op`, and that device in words
/// ("cpu", "cuda:0, compute capability 7.0", "cuda:0, gfx90a").
struct DeviceTf32 {
  Tf32Support support = Tf32Support::kUnknown;
  std::string device;  ///< empty when the manifest names none
};

/// Reads platform.device, platform.gcn_arch, platform.compute_capability,
/// platform.device_name, framework.hip and, on a CPU, framework.settings'
/// fp32_precision[.mkldnn[.matmul|.conv]] (the first that is not "none", most specific first,
/// for `op`'s family).
DeviceTf32 DeviceTf32Of(const Json& manifest, const std::string& op);

/// The manifest's record of autocast to float16 for its device's type ("autocast_gpu = true,
/// autocast_gpu_dtype = float16"; autocast_cpu for a CPU, either where the device is not
/// named), or empty when it records none.
std::string AutocastFp16(const Json& manifest);

/// The precision of a side whose data cannot tell fp16 from tf32 (PrecisionFinding's
/// fp16_or_tf32), from its manifest: autocast to float16 recorded, fp16; else a device without
/// TF32, fp16; else neither is ruled out (`precision` unset: both remain).
struct TenBitsResolution {
  std::optional<Precision> precision;
  std::string why;  ///< "B's manifest records autocast to float16 (...)", "B's device (cpu)
                    ///< has no TF32", or why both remain
};
TenBitsResolution ResolveTenBits(const std::string& side, const Json& manifest,
                                 const std::string& op);

/// What `side`'s manifest declared about the precision found (framework.settings), as a
/// clause to append ("; B's manifest allows it (allow_tf32_matmul = true)"), or empty. Where
/// tf32 is established (`p` is kTf32) on a device that may have TF32, a setting that says it
/// was off is blamed ("the setting did not reach the library that ran it"); on a device
/// without TF32 the clause says so and blames no setting. Where fp16 and tf32 both remain
/// (`p` unset) the setting is reported as a fact, never blamed.
std::string ManifestNote(const std::string& side, const Json& manifest, const std::string& op,
                         std::optional<Precision> p);

}  // namespace parity

#endif  // PARITY_EXPLAIN_PLATFORM_H_
