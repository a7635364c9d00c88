// SPDX-License-Identifier: Apache-2.0
// Philox4x32-10 against Random123's known answers, and the device-API emulation against
// CUDA 13's curand_kernel.h compiled for the host (the header's own code, run on the CPU;
// integer and uniform values are what the GPU computes, normals follow the header's host
// branch). The values are tests/data/rng/philox_kat.json, written by tests/gen/gen_philox.py
// (which checks a Python Philox against Random123's published kat_vectors and Random123's
// philox.h, and runs curand_kernel.h).
#include "rng/philox.h"

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "testdata.h"

namespace parity {
namespace {

using nlohmann::json;

const json& Kat() {
  static const json* data = [] {
    const std::string path = testing::SourcePath("tests/data/rng/philox_kat.json");
    std::ifstream in(path);
    if (!in) {
      ADD_FAILURE() << "cannot open " << path << " (set PARITY_SOURCE_DIR)";
      return new json(
          json::object({{"random123", json::array()}, {"curand_device", json::array()}}));
    }
    return new json(json::parse(in));
  }();
  return *data;
}

template <std::size_t N>
std::array<uint32_t, N> Words(const json& j) {
  std::array<uint32_t, N> out{};
  EXPECT_EQ(j.size(), N);
  for (std::size_t i = 0; i < N && i < j.size(); ++i) out[i] = j[i].get<uint32_t>();
  return out;
}

TEST(Philox, Random123KnownAnswers) {
  const json& cases = Kat()["random123"];
  ASSERT_EQ(cases.size(), 4u);
  int published = 0;
  for (const json& c : cases) {
    published += c["source"] == "kat_vectors";
    EXPECT_EQ(Philox4x32_10(Words<4>(c["counter"]), Words<2>(c["key"])), Words<4>(c["output"]))
        << c.dump();
  }
  EXPECT_EQ(published, 3);
}

// Replays one stream of philox_kat.json's "curand_device": the same calls on a CurandPhilox
// made as curand_init was, every value checked bit for bit.
void Replay(const json& stream) {
  SCOPED_TRACE(stream["name"].get<std::string>());
  CurandPhilox p(stream["seed"].get<uint64_t>(), stream["subsequence"].get<uint64_t>(),
                 stream["offset"].get<uint64_t>());
  ASSERT_FALSE(stream["calls"].empty());
  for (const json& c : stream["calls"]) {
    const std::string call = c["call"];
    SCOPED_TRACE(c.dump());
    if (call == "curand") {
      EXPECT_EQ(p.Next(), c["value"].get<uint32_t>());
    } else if (call == "curand4") {
      EXPECT_EQ(p.Next4(), Words<4>(c["value"]));
    } else if (call == "counter") {
      EXPECT_EQ(p.counter(), Words<4>(c["value"]));
    } else if (call == "uniform") {
      EXPECT_EQ(std::bit_cast<uint32_t>(p.Uniform()), c["bits"].get<uint32_t>());
    } else if (call == "normal") {
      EXPECT_EQ(std::bit_cast<uint32_t>(p.Normal()), c["bits"].get<uint32_t>());
    } else if (call == "uniform_double") {
      EXPECT_EQ(std::bit_cast<uint64_t>(p.UniformDouble()), c["bits"].get<uint64_t>());
    } else if (call == "normal_double") {
      EXPECT_EQ(std::bit_cast<uint64_t>(p.NormalDouble()), c["bits"].get<uint64_t>());
    } else {
      ADD_FAILURE() << "unknown call " << call;
    }
  }
}

std::map<std::string, json> Streams() {
  std::map<std::string, json> streams;
  for (const json& s : Kat()["curand_device"]) streams[s["name"].get<std::string>()] = s;
  return streams;
}

TEST(CurandDevice, InitAndCurand) {
  const auto streams = Streams();
  // Subsequence 1 starts at counter z = 1; offset 5 is the second word of block 1, where
  // curand4 straddles blocks; a 64-bit seed is the key, subsequence 3 and offset 10 give
  // counter {2, 0, 3, 0}.
  for (const char* name : {"words", "subsequence_1", "offset_5", "seed_64_bit"}) {
    ASSERT_TRUE(streams.count(name)) << name;
    Replay(streams.at(name));
  }
}

TEST(CurandDevice, UniformAndNormal) {
  const auto streams = Streams();
  // curand_normal_double at offset 1 takes an unaligned curand4; in "mixed", a curand between
  // normals doesn't disturb the cached second value.
  for (const char* name : {"uniform", "uniform_double", "normal", "normal_double",
                           "normal_double_offset_1", "mixed"}) {
    ASSERT_TRUE(streams.count(name)) << name;
    Replay(streams.at(name));
  }
}

}  // namespace
}  // namespace parity
