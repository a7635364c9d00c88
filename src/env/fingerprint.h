// SPDX-License-Identifier: Apache-2.0
// The platform fingerprint every result parity writes carries (bench's "platform", collect's
// manifest, the env stage, `parity env`, a dump's manifest through parity_dump): the host, the
// GPUs, the libraries found and every environment variable the knowledge base knows.
#ifndef PARITY_ENV_FINGERPRINT_H_
#define PARITY_ENV_FINGERPRINT_H_

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"

namespace parity::env {

struct FingerprintOptions {
  /// Prepended to every file path read (/proc, /sys, /etc, /usr, /opt): a recorded tree in
  /// tests. "" is the real root; then the vendor libraries (NVML, ROCm SMI) are asked too.
  std::string fs_root;
  /// NVML and ROCm SMI libraries to load ("" their default search; with `fs_root` set, ""
  /// means not loaded).
  std::string nvml_library, rocm_smi_library;
  /// A Python interpreter to ask for PyTorch's versions and numerics settings ("" none).
  std::string python;
  /// `environ`-style entries; nullptr is this process's environment.
  char** envp = nullptr;
};

/// The fingerprint: bench::HostFingerprint()'s keys ("hostname", "cpu", "memory", "os",
/// "compiler", "blas"), then
///   "environment": {NAME: VALUE} of the variables bench::IsPerformanceVariable() names and
///     those the knowledge base lists (kind env), sorted;
///   "gpus": [{"source" (nvml, rocm-smi, amdgpu, pci), "vendor", "model", "uuid", "pci_bus_id",
///     "memory_total_bytes", "power_limit_watts", "driver": {"name", "version"}, "vbios",
///     "gfx_target" (AMD, from the KFD topology: "gfx90a"), "pcie": {"generation", "width",
///     "max_generation", "max_width"}, "numa_node"}], one per PCI function, the first source
///     that finds a GPU naming it;
///   "libraries": {key: {"version", "path"}} for cuda (the toolkit), cudart, cublas, cublaslt,
///     cudnn, curand, nccl, nvml, rocm, hip (libamdhip64), rocblas, hipblaslt, miopen, rccl,
///     rocrand, openblas; only those found;
///   "python": PythonFingerprint(python) when asked (its problem under "python.error").
/// A value that can't be read is absent, never 0 or "". Never throws.
Json Fingerprint(const FingerprintOptions& options = {});

/// The GPUs part alone (see Fingerprint).
Json GpuFingerprint(const FingerprintOptions& options);

/// The libraries part alone: shared libraries looked for in $LD_LIBRARY_PATH (real root only),
/// /usr/local/cuda, /opt/rocm and the system's library directories, the version read from the
/// file's resolved name (libcublas.so.13.0.2.14), the toolkit versions from
/// /usr/local/cuda/version.json, /opt/rocm/.info/version and cudnn_version.h.
Json LibraryFingerprint(const FingerprintOptions& options);

/// Asks `python` (run without a shell, 60 s at most) for {"executable", "version", "torch":
/// {"version", "cuda", "hip", "cudnn", "devices": [{"name", "capability", "gcn_arch",
/// "multiprocessor_count"}]}, "settings": {API name: value}} where the settings use the names of
/// the knowledge base (torch.backends.cudnn.allow_tf32, ...), booleans as "true"/"false".
/// Without torch, "torch" is absent. kUnavailable when the interpreter can't run or its answer
/// isn't the expected JSON.
Result<Json> PythonFingerprint(const std::string& python);

/// parity_dump's names of torch's settings (a dump manifest's framework.settings:
/// "allow_tf32_matmul", "fp32_precision.cuda.matmul", "sdp_flash" ...) paired with the names
/// PythonFingerprint and the knowledge base give them ("torch.backends.cuda.matmul.allow_tf32").
std::span<const std::pair<std::string_view, std::string_view>> DumpSettingNames();

/// The `parity-env` v1 document: {"format","version","tool","created","host": Fingerprint(),
/// "devices": the backends and their devices as `parity devices` lists them}.
Json EnvDocument(const FingerprintOptions& options, Json devices);

/// A fingerprint read back: a parity-env document, a bundle directory (its env stage's
/// document, else its manifest's fingerprint), a parity-bench result (its platform) or a dump
/// directory's manifest (its fingerprint, or its environment and framework settings). The
/// result is a parity-env document. kInvalidInput naming the file and key when it is none of
/// these or malformed.
Result<Json> ReadFingerprint(const std::string& path);

/// The file form of ReadFingerprint: `text` is the file's contents, `path` names it in errors.
Result<Json> ParseFingerprint(std::string_view text, const std::string& path);

}  // namespace parity::env

#endif  // PARITY_ENV_FINGERPRINT_H_
