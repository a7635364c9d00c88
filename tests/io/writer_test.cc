// SPDX-License-Identifier: Apache-2.0
// Writers: round trips through parity's readers here; tests/cli/test_cli.py reads the files
// exported by WriterExport with numpy and with a spec-based safetensors parser.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/npy.h"
#include "io/safetensors.h"
#include "io/tensor_file.h"

namespace parity {
namespace {

// A tensor of `dtype` and `shape` whose bytes are a fixed pseudo-random pattern.
Tensor Pattern(const std::string& name, DType dtype, std::vector<int64_t> shape) {
  auto meta = MakeTensorMeta("", name, dtype, std::move(shape));
  EXPECT_TRUE(meta.ok());
  std::vector<std::byte> bytes(meta->nbytes);
  uint32_t state = 12345;
  for (std::byte& b : bytes) {
    state = state * 1664525u + 1013904223u;
    b = static_cast<std::byte>(state >> 24);
  }
  if (dtype == DType::kBool) {
    for (std::byte& b : bytes) b &= std::byte{1};
  }
  return Tensor::Owned(*meta, std::move(bytes));
}

std::string TempDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  std::filesystem::create_directories(dir);
  return dir;
}

void ExpectSameBytes(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.bytes().size(), b.bytes().size());
  if (a.bytes().empty()) return;
  EXPECT_EQ(std::memcmp(a.bytes().data(), b.bytes().data(), a.bytes().size()), 0);
}

TEST(WriteNpy, RoundTripsEveryDType) {
  const std::string dir = TempDir("write_npy");
  for (const DTypeInfo& info : AllDTypes()) {
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{3, 5}, std::vector<int64_t>{}, std::vector<int64_t>{0, 4}}) {
      const Tensor t = Pattern("t", info.dtype, shape);
      const std::string path = dir + "/" + std::string(info.name) + ".npy";
      ASSERT_TRUE(WriteNpy(path, t).ok());
      auto file = OpenTensorFile(path);
      ASSERT_TRUE(file.ok()) << file.status().message();
      auto back = (*file)->Load(0);
      ASSERT_TRUE(back.ok());
      // numpy can't name bfloat16 or float8: their bits are stored as unsigned integers.
      const DType stored =
          info.dtype == DType::kBFloat16 ? DType::kUInt16
          : (info.dtype == DType::kFloat8E4M3FN || info.dtype == DType::kFloat8E5M2) ? DType::kUInt8
                                                                                     : info.dtype;
      EXPECT_EQ(back->dtype(), stored) << info.name;
      EXPECT_EQ(back->meta().shape, shape);
      EXPECT_TRUE(back->zero_copy());
      ExpectSameBytes(t, *back);
    }
  }
}

TEST(WriteNpy, HeaderIsPaddedTo64AndGrowsToVersion2WhenLong) {
  TensorMeta meta;
  meta.name = "x";
  meta.dtype = DType::kFloat32;
  meta.shape = {3};
  const std::string small = EncodeNpyHeader(meta);
  EXPECT_EQ(small.size() % 64, 0u);
  EXPECT_EQ(small[6], '\x01');
  EXPECT_EQ(small.back(), '\n');
  meta.shape.assign(30000, 1);
  const std::string big = EncodeNpyHeader(meta);
  EXPECT_EQ(big.size() % 64, 0u);
  EXPECT_EQ(big[6], '\x02');
  const std::string path = TempDir("write_npy_v2") + "/long.npy";
  ASSERT_TRUE(
      WriteNpy(path, Pattern("long", DType::kFloat32, std::vector<int64_t>(30000, 1))).ok());
  auto file = OpenTensorFile(path);
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ((*file)->tensors()[0].shape.size(), 30000u);
}

TEST(WriteNpy, FailsNamingAnUnwritablePath) {
  const Status status = WriteNpy("/nonexistent-dir/x.npy", Pattern("x", DType::kInt8, {2}));
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("/nonexistent-dir/x.npy"), std::string::npos);
}

TEST(WriteSafetensors, RoundTripsEveryDTypeWithMetadata) {
  std::vector<Tensor> tensors;
  for (const DTypeInfo& info : AllDTypes()) {
    tensors.push_back(Pattern(std::string(info.name), info.dtype, {2, 3}));
  }
  tensors.push_back(Pattern("scalar", DType::kFloat64, {}));
  tensors.push_back(Pattern("empty", DType::kFloat32, {0}));
  const std::string path = TempDir("write_st") + "/all.safetensors";
  ASSERT_TRUE(WriteSafetensors(path, tensors, {{"framework", "parity"}}).ok());
  auto file = OpenTensorFile(path);
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_EQ((*file)->tensors().size(), tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    auto back = (*file)->Load(i);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->meta().name, tensors[i].meta().name);
    EXPECT_EQ(back->dtype(), tensors[i].dtype());
    EXPECT_EQ(back->meta().shape, tensors[i].meta().shape);
    ExpectSameBytes(tensors[i], *back);
  }
}

TEST(WriteSafetensors, RejectsDuplicateAndReservedNames) {
  const std::string path = TempDir("write_st_bad") + "/dup.safetensors";
  const Tensor a = Pattern("a", DType::kInt8, {1});
  EXPECT_FALSE(WriteSafetensors(path, {a, a}).ok());
  EXPECT_FALSE(WriteSafetensors(path, {Pattern("__metadata__", DType::kInt8, {1})}).ok());
  EXPECT_FALSE(std::filesystem::exists(path));
}

// Writes files for numpy to check (tests/cli/test_cli.py sets PARITY_EXPORT_DIR and reads
// them back). Without the variable it writes to a temporary directory and checks nothing more
// than the round trips above.
TEST(WriterExport, FilesForNumpy) {
  const char* env = std::getenv("PARITY_EXPORT_DIR");
  const std::string dir = env != nullptr ? env : TempDir("export");
  std::filesystem::create_directories(dir);
  nlohmann::json manifest = nlohmann::json::array();
  std::vector<Tensor> all;
  for (const DTypeInfo& info : AllDTypes()) {
    const Tensor t = Pattern(std::string(info.name), info.dtype, {4, 3});
    all.push_back(t);
    const std::string file = std::string(info.name) + ".npy";
    ASSERT_TRUE(WriteNpy(dir + "/" + file, t).ok());
    std::string hex;
    for (std::byte b : t.bytes()) hex += fmt::format("{:02x}", static_cast<unsigned>(b));
    manifest.push_back({{"file", file}, {"dtype", info.name}, {"shape", {4, 3}}, {"hex", hex}});
  }
  ASSERT_TRUE(WriteNpy(dir + "/scalar.npy", Pattern("scalar", DType::kFloat64, {})).ok());
  ASSERT_TRUE(WriteSafetensors(dir + "/all.safetensors", all, {{"writer", "parity"}}).ok());
  std::ofstream(dir + "/manifest.json") << manifest.dump(1);
}

}  // namespace
}  // namespace parity
