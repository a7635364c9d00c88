// SPDX-License-Identifier: Apache-2.0
// Small version 1 dumps written by explain's tests: a manifest (platform and settings as a
// test needs them) and module-level records of float32 tensors, explained with RunExplain.
#ifndef PARITY_TESTS_EXPLAIN_DUMP_PAIR_H_
#define PARITY_TESTS_EXPLAIN_DUMP_PAIR_H_

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/json_util.h"
#include "io/npy.h"
#include "io/tensor.h"
#include "oracle/oracle.h"

namespace parity::testing {

/// An array of float32-rounded normal values (mean 0, standard deviation `scale`) from `seed`.
inline Array Normal(std::vector<int64_t> shape, uint32_t seed, double scale) {
  Array a = Array::Filled(std::move(shape));
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (double& x : a.data) x = static_cast<double>(static_cast<float>(dist(gen) * scale));
  return a;
}

/// A version 1 dump directory: manifest.json, records.jsonl and tensors/*.npy.
class TestDump {
 public:
  /// `platform` and `settings` become the manifest's platform and framework.settings.
  TestDump(std::string dir, Json platform, Json settings) : dir_(std::move(dir)) {
    std::filesystem::create_directories(dir_ + "/tensors");
    const Json manifest = {{"format", "parity-dump"},
                           {"version", 1},
                           {"platform", std::move(platform)},
                           {"framework", {{"name", "torch"}, {"settings", std::move(settings)}}}};
    std::ofstream(dir_ + "/manifest.json") << manifest.dump();
  }
  const std::string& dir() const { return dir_; }

  /// A forward record `name` of `op` with float32 inputs, params and outputs (stored rounded to
  /// float32) and attrs; written when Write() is called.
  void Add(const std::string& name, const std::string& op, const std::vector<Array>& inputs,
           const std::vector<std::pair<std::string, Array>>& params,
           const std::vector<Array>& outputs, Json attrs = Json::object()) {
    const int64_t seq = static_cast<int64_t>(records_.size());
    Json r = {{"seq", seq},        {"name", name}, {"op", op},
              {"pass", "forward"}, {"call", 0},    {"attrs", std::move(attrs)}};
    r["inputs"] = Json::array();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      r["inputs"].push_back(Npy(fmt::format("{:06d}_in{}", seq, i), inputs[i]));
    }
    r["params"] = Json::object();
    for (const auto& [key, a] : params)
      r["params"][key] = Npy(fmt::format("{:06d}_{}", seq, key), a);
    r["outputs"] = Json::array();
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      r["outputs"].push_back(Npy(fmt::format("{:06d}_out{}", seq, i), outputs[i]));
    }
    records_.push_back(std::move(r));
  }

  void Write() const {
    std::ofstream out(dir_ + "/records.jsonl");
    for (const Json& r : records_) out << r.dump() << "\n";
  }

 private:
  // `a` as a float32 .npy under tensors/, and its entry.
  Json Npy(const std::string& stem, const Array& a) const {
    const std::string rel = "tensors/" + stem + ".npy";
    auto meta = MakeTensorMeta("", stem, DType::kFloat32, a.shape);
    EXPECT_TRUE(meta.ok());
    std::vector<std::byte> bytes(a.data.size() * sizeof(float));
    for (std::size_t i = 0; i < a.data.size(); ++i) {
      const auto f = static_cast<float>(a.data[i]);
      std::memcpy(bytes.data() + i * sizeof(float), &f, sizeof(float));
    }
    EXPECT_TRUE(WriteNpy(dir_ + "/" + rel, Tensor::Owned(*meta, std::move(bytes))).ok());
    return {{"file", rel}, {"dtype", "float32"}, {"shape", a.shape}};
  }

  std::string dir_;
  std::vector<Json> records_;
};

}  // namespace parity::testing

#endif  // PARITY_TESTS_EXPLAIN_DUMP_PAIR_H_
