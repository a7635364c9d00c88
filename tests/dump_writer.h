// SPDX-License-Identifier: Apache-2.0
// Dump directories written by a test: a manifest, records and .npy files, as
// python/parity_dump would write them (docs/DESIGN.md, "Dump directories").
#ifndef PARITY_TESTS_DUMP_WRITER_H_
#define PARITY_TESTS_DUMP_WRITER_H_

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "core/json_util.h"
#include "io/npy.h"

namespace parity::testing {

/// A dump directory at `dir` (created with its tensors/), filled by the calls below.
class DumpWriter {
 public:
  explicit DumpWriter(std::string dir) : dir_(std::move(dir)) {
    std::filesystem::create_directories(dir_ + "/tensors");
  }
  const std::string& dir() const { return dir_; }

  void Manifest(const Json& manifest) const { Write("manifest.json", manifest.dump()); }
  void Records(const std::vector<Json>& records) const {
    std::string text;
    for (const Json& r : records) text += r.dump() + "\n";
    Write("records.jsonl", text);
  }
  void Write(const std::string& rel, const std::string& text) const {
    std::ofstream(dir_ + "/" + rel, std::ios::binary) << text;
  }
  /// A float32 .npy of `values` (shape [n]) at `rel`.
  void Npy(const std::string& rel, const std::vector<float>& values) const {
    auto meta = MakeTensorMeta("", "t", DType::kFloat32, {static_cast<int64_t>(values.size())});
    ASSERT_TRUE(meta.ok());
    std::vector<std::byte> bytes(values.size() * sizeof(float));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    ASSERT_TRUE(WriteNpy(dir_ + "/" + rel, Tensor::Owned(*meta, std::move(bytes))).ok());
  }

 private:
  std::string dir_;
};

/// A version 2 manifest with `extra`'s keys added.
inline Json Manifest2(const Json& extra = Json::object()) {
  Json m = {{"format", "parity-dump"}, {"version", 2}};
  for (auto it = extra.begin(); it != extra.end(); ++it) m[it.key()] = it.value();
  return m;
}

}  // namespace parity::testing

#endif  // PARITY_TESTS_DUMP_WRITER_H_
