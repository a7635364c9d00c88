// SPDX-License-Identifier: Apache-2.0
#include "compare/context.h"

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

}  // namespace

TensorContext RecordContext(const DumpRecord& record, const std::string& role, DType dtype,
                            const std::vector<int64_t>& shape,
                            std::initializer_list<const Json*> manifests) {
  TensorContext c;
  c.dtype = dtype;
  c.shape = shape;
  c.op = record.op;
  c.role = role;
  c.attrs = record.attrs;
  for (const DumpTensorRef& in : record.inputs) c.input_shapes.push_back(in.shape);
  for (const auto& [key, ref] : record.params) c.param_shapes.emplace_back(key, ref.shape);
  for (const Json* m : manifests) {
    if (m == nullptr) continue;
    c.tf32_matmul = c.tf32_matmul || Allows(*m, "allow_tf32_matmul") || MatmulPrecision(*m, "high");
    c.tf32_conv = c.tf32_conv || Allows(*m, "allow_tf32_cudnn");
    c.bf16_matmul = c.bf16_matmul || MatmulPrecision(*m, "medium");
  }
  return c;
}

}  // namespace parity
