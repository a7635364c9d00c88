// SPDX-License-Identifier: Apache-2.0
#include "compare/context.h"

#include <cstdlib>

namespace parity {
namespace {

// framework.settings.<key> of a dump manifest.
const Json* Setting(const Json& manifest, const char* key) {
  const auto framework = manifest.find("framework");
  if (framework == manifest.end() || !framework->is_object()) return nullptr;
  const auto settings = framework->find("settings");
  if (settings == framework->end() || !settings->is_object()) return nullptr;
  const auto it = settings->find(key);
  return it == settings->end() ? nullptr : &*it;
}

bool Allows(const Json& manifest, const char* key) {
  const Json* v = Setting(manifest, key);
  return v != nullptr && v->is_boolean() && v->get<bool>();
}

bool MatmulPrecision(const Json& manifest, const char* level) {
  const Json* v = Setting(manifest, "float32_matmul_precision");
  return v != nullptr && v->is_string() && v->get<std::string>() == level;
}

std::string PlatformField(const Json& manifest, const char* key) {
  const auto platform = manifest.find("platform");
  if (platform == manifest.end() || !platform->is_object()) return "";
  const auto it = platform->find(key);
  return it != platform->end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

bool Tf32Capable(const Json& manifest) {
  const std::string device = PlatformField(manifest, "device");
  if (!device.starts_with("cuda")) return false;  // the CPU, or a manifest that names none
  if (const std::string arch = PlatformField(manifest, "gcn_arch"); !arch.empty()) {
    return arch.starts_with("gfx94") || arch.starts_with("gfx95");  // CDNA3 and later
  }
  const std::string cc = PlatformField(manifest, "compute_capability");
  if (cc.empty()) return true;        // a GPU of unknown model: it may have TF32
  return std::atoi(cc.c_str()) >= 8;  // Ampere (8.0) and later
}

TensorContext RecordContext(const DumpRecord& record, const std::string& role, DType dtype,
                            const std::vector<int64_t>& shape,
                            std::initializer_list<const Json*> manifests, std::size_t index) {
  TensorContext c;
  c.dtype = dtype;
  c.shape = shape;
  c.op = record.op;
  c.role = role;
  c.index = index;
  c.attrs = record.attrs;
  for (const DumpTensorRef& in : record.inputs) c.input_shapes.push_back(in.shape);
  for (const auto& [key, ref] : record.params) c.param_shapes.emplace_back(key, ref.shape);
  for (const Json* m : manifests) {
    if (m == nullptr) continue;
    const bool tf32 = Tf32Capable(*m);
    c.tf32_matmul =
        c.tf32_matmul || (tf32 && (Allows(*m, "allow_tf32_matmul") || MatmulPrecision(*m, "high")));
    c.tf32_conv = c.tf32_conv || (tf32 && Allows(*m, "allow_tf32_cudnn"));
    c.bf16_matmul = c.bf16_matmul || MatmulPrecision(*m, "medium");
  }
  return c;
}

}  // namespace parity
