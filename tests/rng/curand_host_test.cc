// SPDX-License-Identifier: Apache-2.0
// parity's cuRAND device-stream emulation against cuRAND's own host generator
// (curandCreateGeneratorHost, CURAND_RNG_PSEUDO_PHILOX4_32_10), which runs on the CPU. The
// host generator lays the stream out as 65536 subsequences side by side: value i of a fresh
// generator is word i % 4 of block (i / 262144) of subsequence (i / 4) % 65536, i.e. the
// device stream curand_init(seed, (i / 4) % 65536, 4·(i / 262144)). 64-bit kinds take one
// block per pair of values (curand_uniform2_double and curand_normal_double on the device).
#include <curand.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "rng/philox.h"

namespace parity {
namespace {

constexpr uint64_t kThreads = 65536;
constexpr std::size_t kCount = 3 * 262144 + 12;  // three rounds of every subsequence, and more

class HostGenerator {
 public:
  HostGenerator(uint64_t seed, uint64_t offset) {
    EXPECT_EQ(curandCreateGeneratorHost(&gen_, CURAND_RNG_PSEUDO_PHILOX4_32_10),
              CURAND_STATUS_SUCCESS);
    EXPECT_EQ(curandSetPseudoRandomGeneratorSeed(gen_, seed), CURAND_STATUS_SUCCESS);
    EXPECT_EQ(curandSetGeneratorOffset(gen_, offset), CURAND_STATUS_SUCCESS);
  }
  ~HostGenerator() { curandDestroyGenerator(gen_); }
  curandGenerator_t get() { return gen_; }

 private:
  curandGenerator_t gen_ = nullptr;
};

TEST(CurandHost, Uint32UniformAndNormalFloat) {
  for (uint64_t seed : {uint64_t{42}, uint64_t{0x0123456789abcdefULL}}) {
    HostGenerator g1(seed, 0), g2(seed, 0), g3(seed, 0);
    std::vector<uint32_t> bits(kCount);
    std::vector<float> uniform(kCount), normal(kCount);
    ASSERT_EQ(curandGenerate(g1.get(), bits.data(), kCount), CURAND_STATUS_SUCCESS);
    ASSERT_EQ(curandGenerateUniform(g2.get(), uniform.data(), kCount), CURAND_STATUS_SUCCESS);
    ASSERT_EQ(curandGenerateNormal(g3.get(), normal.data(), kCount, 0.0f, 1.0f),
              CURAND_STATUS_SUCCESS);
    // Subsequences 0, 1, a middle one and the last, each through every round the host made.
    for (uint64_t t : {uint64_t{0}, uint64_t{1}, uint64_t{12345}, kThreads - 1}) {
      CurandPhilox s_bits(seed, t, 0), s_uniform(seed, t, 0), s_normal(seed, t, 0);
      for (std::size_t j = 0;; ++j) {
        const std::size_t i = (j / 4) * kThreads * 4 + t * 4 + j % 4;
        if (i >= kCount) break;
        ASSERT_EQ(s_bits.Next(), bits[i]) << "seed " << seed << " subsequence " << t << " j " << j;
        ASSERT_EQ(s_uniform.Uniform(), uniform[i]) << "subsequence " << t << " j " << j;
        float z = s_normal.Normal();
        if (z == 0.0f) z = 0.0f;  // the host adds the mean (0): -0 becomes +0
        ASSERT_EQ(z, normal[i]) << "subsequence " << t << " j " << j;
      }
    }
  }
}

TEST(CurandHost, OffsetsMoveAlongTheRounds) {
  // curandSetGeneratorOffset(4·262144·r) starts every subsequence r blocks in: the device
  // stream curand_init(seed, t, 4·r).
  const uint64_t rounds = 3;
  HostGenerator g(7, 4 * kThreads * rounds);
  std::vector<uint32_t> bits(8 * kThreads);
  ASSERT_EQ(curandGenerate(g.get(), bits.data(), bits.size()), CURAND_STATUS_SUCCESS);
  for (uint64_t t : {uint64_t{0}, uint64_t{999}, kThreads - 1}) {
    CurandPhilox s(7, t, 4 * rounds);
    for (std::size_t j = 0; j < 8; ++j) {
      ASSERT_EQ(s.Next(), bits[(j / 4) * kThreads * 4 + t * 4 + j % 4]) << t << " " << j;
    }
  }
}

TEST(CurandHost, DoublesPairWordsAsTheDeviceDoes) {
  HostGenerator gu(42, 0), gn(42, 0);
  std::vector<double> uniform(kCount), normal(kCount);
  ASSERT_EQ(curandGenerateUniformDouble(gu.get(), uniform.data(), kCount), CURAND_STATUS_SUCCESS);
  ASSERT_EQ(curandGenerateNormalDouble(gn.get(), normal.data(), kCount, 0.0, 1.0),
            CURAND_STATUS_SUCCESS);
  for (uint64_t t : {uint64_t{0}, uint64_t{3}, kThreads - 1}) {
    // Device call k of curand_uniform2_double / curand_normal_double pairs uses block k / 2
    // (uniform: both halves of block k; normal: half k % 2 of block k / 2).
    CurandPhilox blocks(42, t, 0);
    CurandPhilox normals(42, t, 0);
    for (std::size_t b = 0;; ++b) {
      const std::size_t r = b / 2, base = r * kThreads * 4 + t * 4 + 2 * (b % 2);
      if (base + 1 >= kCount) break;
      const std::array<uint32_t, 4> w = blocks.Next4();
      // curand_uniform2_double: hq(w0, w1), hq(w2, w3).
      auto hq = [](uint32_t x, uint32_t y) {
        const uint64_t z = static_cast<uint64_t>(x) ^ (static_cast<uint64_t>(y) << 21);
        return static_cast<double>(z) * 1.1102230246251565e-16 + 1.1102230246251565e-16 / 2.0;
      };
      ASSERT_EQ(hq(w[0], w[1]), uniform[base]) << t << " " << b;
      ASSERT_EQ(hq(w[2], w[3]), uniform[base + 1]) << t << " " << b;
      double z0 = normals.NormalDouble(), z1 = normals.NormalDouble();
      if (z0 == 0.0) z0 = 0.0;
      if (z1 == 0.0) z1 = 0.0;
      ASSERT_EQ(z0, normal[base]) << t << " " << b;
      ASSERT_EQ(z1, normal[base + 1]) << t << " " << b;
    }
  }
}

}  // namespace
}  // namespace parity
