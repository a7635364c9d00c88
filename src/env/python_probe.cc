// SPDX-License-Identifier: Apache-2.0
// The Python part of the fingerprint: the interpreter, PyTorch's versions and devices, and its
// numerics settings under the knowledge base's names, asked of `--python PY` in a child process.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "core/file_util.h"
#include "core/process.h"
#include "env/fingerprint.h"

namespace parity::env {
namespace {

/// Prints one JSON object. Every torch attribute is read defensively: a switch the installed
/// torch lacks is left out, never guessed.
constexpr std::string_view kProbe = R"PY(
import json, sys, platform
out = {"executable": sys.executable, "version": platform.python_version()}
def safe(get):
    try:
        return get()
    except Exception:
        return None
def text(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)
try:
    import torch
except Exception as e:
    out["torch_error"] = "%s: %s" % (type(e).__name__, e)
else:
    t = {"version": torch.__version__, "cuda": torch.version.cuda,
         "hip": getattr(torch.version, "hip", None), "cudnn": safe(torch.backends.cudnn.version)}
    devices = []
    if safe(torch.cuda.is_available):
        for i in range(safe(torch.cuda.device_count) or 0):
            p = torch.cuda.get_device_properties(i)
            d = {"name": p.name, "capability": "%d.%d" % (p.major, p.minor),
                 "multiprocessor_count": p.multi_processor_count}
            arch = getattr(p, "gcnArchName", None)
            if arch:
                d["gcn_arch"] = arch
            devices.append(d)
    t["devices"] = devices
    out["torch"] = {k: v for k, v in t.items() if v is not None}
    m = safe(lambda: torch.backends.cuda.matmul)
    s = {
        "torch.backends.cuda.matmul.allow_tf32": safe(lambda: m.allow_tf32),
        "torch.backends.cudnn.allow_tf32": safe(lambda: torch.backends.cudnn.allow_tf32),
        "torch.set_float32_matmul_precision": safe(torch.get_float32_matmul_precision),
        "torch.backends.cudnn.deterministic": safe(lambda: torch.backends.cudnn.deterministic),
        "torch.backends.cudnn.benchmark": safe(lambda: torch.backends.cudnn.benchmark),
        "torch.use_deterministic_algorithms": safe(torch.are_deterministic_algorithms_enabled),
        "torch.backends.cuda.preferred_blas_library":
            safe(lambda: torch.backends.cuda.preferred_blas_library()),
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction":
            safe(lambda: m.allow_fp16_reduced_precision_reduction),
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction":
            safe(lambda: m.allow_bf16_reduced_precision_reduction),
    }
    # torch 2.x's precision switches: fp32_precision per backend and op (2.9 on), the SDPA
    # kernels enabled, autocast's default dtypes, deterministic mode's warn-only flag.
    for path in ("", "cuda.matmul", "cudnn", "cudnn.conv", "cudnn.rnn", "mkldnn",
                 "mkldnn.matmul", "mkldnn.conv", "mkldnn.rnn"):
        def prec(path=path):
            node = torch.backends
            for part in filter(None, path.split(".")):
                node = getattr(node, part)
            return str(node.fp32_precision)
        s["torch.backends." + (path + "." if path else "") + "fp32_precision"] = safe(prec)
    for kernel in ("flash", "mem_efficient", "math", "cudnn"):
        s["torch.backends.cuda.%s_sdp_enabled" % kernel] = safe(
            lambda k=kernel: getattr(torch.backends.cuda, k + "_sdp_enabled")())
    for device in ("cuda", "cpu"):
        s["torch.get_autocast_dtype(%s)" % device] = safe(
            lambda d=device: str(torch.get_autocast_dtype(d)).replace("torch.", ""))
    s["torch.is_deterministic_algorithms_warn_only_enabled"] = safe(
        torch.is_deterministic_algorithms_warn_only_enabled)
    out["settings"] = {k: text(v) for k, v in s.items() if v is not None}
print("PARITY-PROBE " + json.dumps(out))
)PY";

}  // namespace

Result<Json> PythonFingerprint(const std::string& python) {
  std::error_code ec;
  std::string tmpl = (std::filesystem::temp_directory_path(ec) / "parity-probe-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    return Status::Unavailable(fmt::format("{}: cannot make a directory", tmpl));
  }
  const std::string dir = tmpl;
  ProcessSpec spec;
  spec.argv = {python, "-c", std::string(kProbe)};
  spec.log_path = dir + "/probe.log";
  spec.timeout = 60.0;
  const ProcessResult result = RunProcess(spec, nullptr);
  const std::string log = LogTail(spec.log_path, 1 << 20);
  std::filesystem::remove_all(dir, ec);
  if (!result.started) return Status::Unavailable(fmt::format("{}: {}", python, result.error));
  const std::size_t at = log.rfind("PARITY-PROBE ");
  if (result.exit_code != 0 || at == std::string::npos) {
    std::string tail = log.size() > 400 ? log.substr(log.size() - 400) : log;
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
    return Status::Unavailable(
        fmt::format("{}: {}{}", python, result.Describe(), tail.empty() ? "" : ": " + tail));
  }
  const std::size_t end = log.find('\n', at);
  try {
    Json doc = Json::parse(log.substr(at + 13, end == std::string::npos ? end : end - at - 13));
    if (doc.is_object()) return doc;
    return Status::Unavailable(fmt::format("{}: the probe's answer is not an object", python));
  } catch (const Json::exception& e) {
    return Status::Unavailable(
        fmt::format("{}: the probe's answer is not JSON: {}", python, e.what()));
  }
}

}  // namespace parity::env
