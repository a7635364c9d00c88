// SPDX-License-Identifier: Apache-2.0
// The readers against files written by numpy and by the safetensors spec, and against every
// kind of malformed file (tests/gen/gen_testdata.py writes both, with the expected results).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>

#include "core/mapped_file.h"
#include "io/npy.h"
#include "io/tensor_file.h"
#include "io/tensor_stats.h"
#include "testdata.h"

namespace parity {
namespace {

using nlohmann::json;
using testing::Expected;
using testing::TestDataPath;

uint64_t Bits(double x) { return std::bit_cast<uint64_t>(x); }

// Element i of an integer or bool tensor, compared exactly with its JSON value.
void ExpectIntEqual(const Tensor& t, std::size_t i, const json& want) {
  const std::byte* p = t.bytes().data() + i * ItemSize(t.dtype());
  auto load = [&](auto zero) {
    decltype(zero) v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  switch (Info(t.dtype()).kind) {
    case DTypeKind::kSignedInt: {
      int64_t v = 0;
      switch (ItemSize(t.dtype())) {
        case 1:
          v = load(int8_t{});
          break;
        case 2:
          v = load(int16_t{});
          break;
        case 4:
          v = load(int32_t{});
          break;
        default:
          v = load(int64_t{});
          break;
      }
      EXPECT_EQ(v, want.get<int64_t>()) << "element " << i;
      break;
    }
    default: {
      uint64_t v = 0;
      switch (ItemSize(t.dtype())) {
        case 1:
          v = load(uint8_t{});
          break;
        case 2:
          v = load(uint16_t{});
          break;
        case 4:
          v = load(uint32_t{});
          break;
        default:
          v = load(uint64_t{});
          break;
      }
      EXPECT_EQ(v, want.get<uint64_t>()) << "element " << i;
      break;
    }
  }
}

// `scale` bounds the rounding error of a float64 sum of n terms: about n·u·scale, where scale
// is the mean magnitude of the summands (numpy's pairwise sum and parity's blocked sum both
// lie within it of the exact value, so within twice it of each other).
void ExpectStatNumber(const std::optional<double>& got, const json& want, double scale,
                      const char* what) {
  if (want.is_null()) {
    EXPECT_FALSE(got.has_value()) << what;
    return;
  }
  ASSERT_TRUE(got.has_value()) << what;
  if (want.is_string()) {  // numpy's own result overflowed: "inf" or "nan"
    const std::string s = want.get<std::string>();
    if (s == "nan") {
      EXPECT_TRUE(std::isnan(*got)) << what;
    } else {
      EXPECT_TRUE(std::isinf(*got) && ((*got > 0) == (s == "inf"))) << what << " " << *got;
    }
    return;
  }
  const double w = want.get<double>();
  EXPECT_NEAR(*got, w, 1e-10 * std::max({1.0, std::fabs(w), scale})) << what;
}

void ExpectStatValue(const std::optional<StatValue>& got, const json& want, const char* what) {
  if (want.is_null()) {
    EXPECT_FALSE(got.has_value()) << what;
    return;
  }
  ASSERT_TRUE(got.has_value()) << what;
  if (const auto* d = std::get_if<double>(&*got)) {
    EXPECT_EQ(*d, want.get<double>()) << what;  // +0 and -0 are both a valid minimum
  } else if (const auto* i = std::get_if<int64_t>(&*got)) {
    EXPECT_EQ(*i, want.get<int64_t>()) << what;
  } else {
    EXPECT_EQ(std::get<uint64_t>(*got), want.get<uint64_t>()) << what;
  }
}

void CheckTensor(const Tensor& tensor, const json& want) {
  SCOPED_TRACE(want["name"].get<std::string>());
  EXPECT_EQ(tensor.meta().name, want["name"].get<std::string>());
  EXPECT_EQ(Name(tensor.dtype()), want["dtype"].get<std::string>());
  EXPECT_EQ(tensor.meta().shape, want["shape"].get<std::vector<int64_t>>());
  if (want.contains("values_f64_hex")) {
    const std::vector<double> got = testing::ToDoubles(tensor);
    const auto& hex = want["values_f64_hex"];
    ASSERT_EQ(got.size(), hex.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      const uint64_t expected = std::stoull(hex[i].get<std::string>(), nullptr, 16);
      const double expected_value = std::bit_cast<double>(expected);
      if (std::isnan(expected_value)) {
        EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
      } else {
        EXPECT_EQ(Bits(got[i]), expected) << "element " << i << " got " << got[i];
      }
    }
  }
  if (want.contains("values_int")) {
    const auto& values = want["values_int"];
    ASSERT_EQ(static_cast<std::size_t>(tensor.numel()), values.size());
    for (std::size_t i = 0; i < values.size(); ++i) ExpectIntEqual(tensor, i, values[i]);
  }
  auto computed = ComputeStats(tensor);
  ASSERT_TRUE(computed.ok()) << computed.status().message();
  const TensorStats& stats = *computed;
  const json& s = want["stats"];
  EXPECT_EQ(stats.count, tensor.numel());
  EXPECT_EQ(stats.nan, s["nan"].get<int64_t>());
  EXPECT_EQ(stats.inf, s["inf"].get<int64_t>());
  EXPECT_EQ(stats.zeros, s["zeros"].get<int64_t>());
  ExpectStatValue(stats.min, s["min"], "min");
  ExpectStatValue(stats.max, s["max"], "max");
  auto scale = [](const json& v) {
    return v.is_string() ? std::numeric_limits<double>::infinity() : v.get<double>();
  };
  ExpectStatNumber(stats.mean, s["mean"], scale(s["abs_mean"]), "mean");
  ExpectStatNumber(stats.std, s["std"], scale(s["rms"]), "std");
}

TEST(GoodFiles, ReadWhatNumpyAndTheSpecWrote) {
  const json& files = Expected()["files"];
  ASSERT_GE(files.size(), 70u);
  for (const json& entry : files) {
    const std::string rel = entry["path"].get<std::string>();
    SCOPED_TRACE(rel);
    auto file = OpenTensorFile(TestDataPath(rel));
    ASSERT_TRUE(file.ok()) << file.status().message();
    EXPECT_EQ(FormatName((*file)->format()), entry["format"].get<std::string>());
    const json& tensors = entry["tensors"];
    ASSERT_EQ((*file)->tensors().size(), tensors.size());
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      EXPECT_EQ((*file)->tensors()[i].name, tensors[i]["name"].get<std::string>());
      auto tensor = (*file)->Load(i);
      ASSERT_TRUE(tensor.ok()) << tensor.status().message();
      CheckTensor(*tensor, tensors[i]);
    }
  }
}

TEST(BadFiles, FailNamingTheFileAndTheProblem) {
  const json& bad = Expected()["bad"];
  ASSERT_GE(bad.size(), 40u);
  for (const json& entry : bad) {
    const std::string rel = entry["path"].get<std::string>();
    const std::string problem = entry["error"].get<std::string>();
    SCOPED_TRACE(rel);
    const std::string path = TestDataPath(rel);
    Status status;
    if (std::filesystem::is_directory(path)) {
      status = ListTensorFiles(path).status();
    } else {
      auto file = OpenTensorFile(path);
      status = file.status();
      for (std::size_t i = 0; file.ok() && status.ok() && i < (*file)->tensors().size(); ++i) {
        status = (*file)->Load(i).status();
      }
    }
    ASSERT_FALSE(status.ok()) << "opened without error";
    EXPECT_EQ(status.code(), StatusCode::kInvalidInput);
    EXPECT_NE(status.message().find(path), std::string::npos) << status.message();
    EXPECT_NE(status.message().find(problem), std::string::npos)
        << "expected '" << problem << "' in: " << status.message();
  }
}

TEST(Readers, ZeroCopyWhereTheLayoutAllows) {
  auto load = [](const std::string& rel) {
    auto file = OpenTensorFile(TestDataPath(rel));
    EXPECT_TRUE(file.ok()) << file.status().message();
    auto tensor = (*file)->Load(0);
    EXPECT_TRUE(tensor.ok());
    return *tensor;
  };
  EXPECT_TRUE(load("npy/float32_le_c.npy").zero_copy());
  EXPECT_FALSE(load("npy/float32_be_c.npy").zero_copy());
  EXPECT_FALSE(load("npy/float32_le_f.npy").zero_copy());
  EXPECT_TRUE(load("safetensors/all_dtypes.safetensors").zero_copy());
  EXPECT_FALSE(load("safetensors/unaligned.safetensors").zero_copy());
  EXPECT_FALSE(load("npz/stored.npz").zero_copy());
}

TEST(Readers, FormatIsSniffedWhenTheExtensionSaysNothing) {
  const std::string dir = ::testing::TempDir() + "/sniff";
  std::filesystem::create_directories(dir);
  for (const char* rel :
       {"npy/int16_le_c.npy", "npz/deflated.npz", "safetensors/all_dtypes.safetensors"}) {
    const std::string copy = dir + "/" + std::filesystem::path(rel).stem().string() + ".bin";
    std::filesystem::copy_file(TestDataPath(rel), copy,
                               std::filesystem::copy_options::overwrite_existing);
    auto file = OpenTensorFile(copy);
    ASSERT_TRUE(file.ok()) << file.status().message();
    EXPECT_EQ(FormatFromExtension(rel), (*file)->format());
  }
  const std::string text = dir + "/notes.txt";
  std::FILE* f = std::fopen(text.c_str(), "w");
  std::fputs("hello\n", f);
  std::fclose(f);
  auto file = OpenTensorFile(text);
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find("not a tensor file"), std::string::npos);
}

TEST(Readers, DirectoriesAreListedRecursivelyInOrder) {
  auto files = ListTensorFiles(TestDataPath("npz"));
  ASSERT_TRUE(files.ok()) << files.status().message();
  ASSERT_EQ(files->size(), 3u);
  EXPECT_TRUE((*files)[0].ends_with("npz/deflated.npz"));
  EXPECT_TRUE((*files)[2].ends_with("npz/stored.npz"));
  EXPECT_FALSE(ListTensorFiles(TestDataPath("no-such-dir")).ok());
}

TEST(Readers, NpyHeaderParsesVersionsAndLayout) {
  auto file = OpenTensorFile(TestDataPath("npy/version_3_0.npy"));
  ASSERT_TRUE(file.ok());
  auto mapped = MappedFile::Open(TestDataPath("npy/float64_be_f.npy"));
  ASSERT_TRUE(mapped.ok());
  auto header = ParseNpyHeader((*mapped)->bytes(), "x");
  ASSERT_TRUE(header.ok()) << header.status().message();
  EXPECT_EQ(header->dtype, DType::kFloat64);
  EXPECT_TRUE(header->layout.byte_swapped);
  EXPECT_TRUE(header->layout.fortran_order);
  EXPECT_EQ(header->shape, (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(header->data_offset % 64, 0u);
}

}  // namespace
}  // namespace parity
