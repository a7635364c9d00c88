// SPDX-License-Identifier: Apache-2.0
#include "explain/platform.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <string_view>

#include "compare/tolerance.h"

namespace parity {
namespace {

// The object `key` of `j`, or null.
const Json* Child(const Json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it != j.end() && it->is_object() ? &*it : nullptr;
}

// A string field of an object, or "".
std::string Text(const Json* j, const char* key) {
  if (j == nullptr) return "";
  const auto it = j->find(key);
  return it != j->end() && it->is_string() ? it->get<std::string>() : "";
}

// framework.settings.<key>, or null.
const Json* Setting(const Json& manifest, const std::string& key) {
  const Json* framework = Child(manifest, "framework");
  const Json* settings = framework != nullptr ? Child(*framework, "settings") : nullptr;
  if (settings == nullptr) return nullptr;
  const auto it = settings->find(key);
  return it != settings->end() ? &*it : nullptr;
}

bool IsConv(const std::string& op) {
  const std::string family = FamilyOf(op).name;
  return family == "conv1d" || family == "conv2d";
}

// The number after "MI" in an AMD Instinct name ("AMD Instinct MI250X" -> 250), or -1.
int InstinctNumber(const std::string& name) {
  const std::size_t at = name.find("MI");
  if (at == std::string::npos) return -1;
  std::size_t end = at + 2;
  while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
  return end > at + 2 ? std::atoi(name.substr(at + 2, end - at - 2).c_str()) : -1;
}

// On a CPU: oneDNN's fp32_precision for `op` (torch 2.9 on), the most specific setting that is
// not "none" (which inherits its parent's), or "".
std::string OneDnnPrecision(const Json& manifest, const std::string& op) {
  const std::string leaf =
      IsConv(op) ? "fp32_precision.mkldnn.conv" : "fp32_precision.mkldnn.matmul";
  for (const std::string& key :
       {leaf, std::string("fp32_precision.mkldnn"), std::string("fp32_precision")}) {
    const Json* v = Setting(manifest, key);
    if (v != nullptr && v->is_string() && v->get<std::string>() != "none") {
      return v->get<std::string>();
    }
  }
  return "";
}

}  // namespace

DeviceTf32 DeviceTf32Of(const Json& manifest, const std::string& op) {
  DeviceTf32 d;
  const Json* platform = Child(manifest, "platform");
  const std::string device = Text(platform, "device");
  d.device = device;
  if (device.empty()) return d;
  if (device == "cpu" || device.starts_with("cpu:")) {
    const bool tf32 = OneDnnPrecision(manifest, op) == "tf32";
    d.support = tf32 ? Tf32Support::kPresent : Tf32Support::kAbsent;
    if (tf32) d.device += ", oneDNN fp32_precision = tf32";
    return d;
  }
  if (!device.starts_with("cuda")) return d;  // mps, xpu ...: not known here
  const std::string arch = Text(platform, "gcn_arch");
  const std::string name = Text(platform, "device_name");
  const Json* framework = Child(manifest, "framework");
  const bool amd =
      !arch.empty() || !Text(framework, "hip").empty() || name.find("AMD") != std::string::npos;
  if (amd) {  // ROCm reports its gfx version as compute_capability: not NVIDIA's scale
    if (!arch.empty()) {
      d.device += ", " + arch.substr(0, arch.find(':'));
      d.support = arch.starts_with("gfx94") || arch.starts_with("gfx95") ? Tf32Support::kPresent
                                                                         : Tf32Support::kAbsent;
    } else if (const int mi = InstinctNumber(name); mi > 0) {
      d.device += ", " + name;
      d.support = mi >= 300 ? Tf32Support::kPresent : Tf32Support::kAbsent;  // CDNA3 is MI300
    }
    return d;
  }
  const std::string cc = Text(platform, "compute_capability");
  if (cc.empty()) return d;  // a GPU of unknown model: it may have TF32
  d.device += ", compute capability " + cc;
  d.support = std::atoi(cc.c_str()) >= 8 ? Tf32Support::kPresent : Tf32Support::kAbsent;
  return d;
}

std::string AutocastFp16(const Json& manifest) {
  const std::string device = Text(Child(manifest, "platform"), "device");
  const bool cpu = device == "cpu" || device.starts_with("cpu:");
  const bool gpu = device.starts_with("cuda");
  const bool unnamed = !cpu && !gpu;
  for (const char* kind : {"gpu", "cpu"}) {
    if (!unnamed && (std::string_view(kind) == "gpu") != gpu) continue;
    const std::string on_key = fmt::format("autocast_{}", kind);
    const std::string dtype_key = on_key + "_dtype";
    const Json* on = Setting(manifest, on_key);
    const Json* dtype = Setting(manifest, dtype_key);
    if (on == nullptr || !on->is_boolean() || !on->get<bool>()) continue;
    if (dtype == nullptr || !dtype->is_string()) continue;
    const std::string name = dtype->get<std::string>();
    if (name == "float16" || name == "half") {
      return fmt::format("{} = true, {} = {}", on_key, dtype_key, name);
    }
  }
  return "";
}

TenBitsResolution ResolveTenBits(const std::string& side, const Json& manifest,
                                 const std::string& op) {
  TenBitsResolution r;
  if (const std::string autocast = AutocastFp16(manifest); !autocast.empty()) {
    r.precision = Precision::kFloat16;
    r.why = fmt::format("{}'s manifest records autocast to float16 ({})", side, autocast);
    return r;
  }
  const DeviceTf32 d = DeviceTf32Of(manifest, op);
  if (d.support == Tf32Support::kAbsent) {
    r.precision = Precision::kFloat16;
    r.why = fmt::format("{}'s device ({}) has no TF32", side, d.device);
    return r;
  }
  const std::string device = d.device.empty() ? fmt::format("{}'s manifest names no device", side)
                             : d.support == Tf32Support::kPresent
                                 ? fmt::format("{}'s device ({}) has TF32", side, d.device)
                                 : fmt::format("{}'s device ({}) may have TF32", side, d.device);
  r.why = fmt::format("nothing rules either out: no autocast to float16 recorded, and {}", device);
  return r;
}

std::string ManifestNote(const std::string& side, const Json& manifest, const std::string& op,
                         std::optional<Precision> p) {
  const bool conv = IsConv(op);
  const char* key = conv ? "allow_tf32_cudnn" : "allow_tf32_matmul";
  const Json* allow = Setting(manifest, key);
  const bool has_allow = allow != nullptr && allow->is_boolean();
  if (!p) {  // fp16 or tf32: the setting is a fact, not evidence either way
    return has_allow ? fmt::format("; {}'s manifest has {} = {}", side, key, allow->get<bool>())
                     : "";
  }
  if (*p == Precision::kTf32) {
    if (const DeviceTf32 d = DeviceTf32Of(manifest, op); d.support == Tf32Support::kAbsent) {
      return fmt::format(
          "; {}'s device ({}) has no TF32: something beneath the recorded op (an emulation, a "
          "library's own conversion) rounded the operands so",
          side, d.device);
    }
    if (!has_allow) return "";
    return allow->get<bool>()
               ? fmt::format("; {}'s manifest allows it ({} = true)", side, key)
               : fmt::format(
                     "; yet {}'s manifest says {} = false: the setting did not reach the "
                     "library that ran it",
                     side, key);
  }
  if (*p == Precision::kBFloat16 && !conv) {
    const Json* level = Setting(manifest, "float32_matmul_precision");
    if (level != nullptr && level->is_string() && level->get<std::string>() == "medium") {
      return fmt::format("; {}'s manifest allows it (float32_matmul_precision = medium)", side);
    }
  }
  return "";
}

}  // namespace parity
