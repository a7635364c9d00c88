// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the float64 oracle on arbitrary ops, attrs and (small) shapes. The input is
// a JSON object {"op": .., "attrs": {..}, "inputs": [shape, ..], "args": [name, ..],
// "positions": [list position or -1, ..],
// "params": {name: shape}} ("args": the inputs' schema argument names, as aten records give);
// tensors of those shapes are filled with fixed values. Replay must answer or refuse
// ("not replayable"), never crash; so must explain's precision inference (replays with
// rounded operands) on the same call.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compare/tolerance.h"
#include "core/json_util.h"
#include "explain/precision.h"
#include "oracle/oracle.h"

namespace {

bool SmallShape(const parity::Json& j, std::vector<int64_t>* shape) {
  if (!j.is_array() || j.size() > 5) return false;
  int64_t numel = 1;
  for (const parity::Json& d : j) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0 || d.get<int64_t>() > 16) return false;
    shape->push_back(d.get<int64_t>());
    numel *= shape->back();
  }
  return numel <= 4096;
}

parity::Array Fill(std::vector<int64_t> shape, int salt) {
  parity::Array a = parity::Array::Filled(std::move(shape));
  for (std::size_t i = 0; i < a.data.size(); ++i) {
    a.data[i] = static_cast<double>((static_cast<int>(i) * 7 + salt) % 11) - 5.0;
  }
  return a;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const parity::Json j = parity::Json::parse(
      std::string_view(reinterpret_cast<const char*>(data), size), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("op") || !j["op"].is_string()) return 0;
  parity::OpCall call;
  call.op = j["op"].get<std::string>();
  if (j.contains("attrs") && j["attrs"].is_object()) call.attrs = j["attrs"];
  int salt = 0;
  if (j.contains("inputs") && j["inputs"].is_array()) {
    for (const parity::Json& s : j["inputs"]) {
      std::vector<int64_t> shape;
      if (!SmallShape(s, &shape)) return 0;
      call.inputs.push_back(Fill(shape, ++salt));
      call.input_dtypes.push_back(parity::DType::kFloat32);
    }
  }
  if (j.contains("args") && j["args"].is_array() && j["args"].size() == call.inputs.size()) {
    for (const parity::Json& a : j["args"]) {
      if (!a.is_string()) return 0;
      call.input_args.push_back(a.get<std::string>());
    }
  }
  if (j.contains("positions") && j["positions"].is_array() &&
      j["positions"].size() == call.inputs.size()) {
    for (const parity::Json& p : j["positions"]) {
      if (!p.is_number_integer()) return 0;
      call.input_positions.push_back(p.get<int64_t>());
    }
  }
  if (j.contains("params") && j["params"].is_object()) {
    for (auto it = j["params"].begin(); it != j["params"].end(); ++it) {
      std::vector<int64_t> shape;
      if (!SmallShape(it.value(), &shape)) return 0;
      call.params.emplace_back(it.key(), Fill(shape, ++salt));
    }
  }
  for (const parity::Array& in : call.inputs) call.recorded_outputs.push_back(in);
  (void)parity::Replay(call).ok();
  parity::Tolerance tolerance;
  tolerance.rtol = 1e-6;
  tolerance.scale = 1.0;
  (void)parity::InferPrecision(call, call.recorded_outputs, tolerance, 1e-3);
  return 0;
}
