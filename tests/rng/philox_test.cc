// SPDX-License-Identifier: Apache-2.0
// Philox4x32-10 against Random123's known answers (kat_vectors, old_kat_vectors of
// librandom123-doc), and the device-API emulation against values of CUDA 13's curand_kernel.h
// compiled for the host (the header's own code, run on the CPU; integer and uniform values are
// what the GPU computes, normals follow the header's host branch).
#include "rng/philox.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace parity {
namespace {

TEST(Philox, Random123KnownAnswers) {
  struct Kat {
    PhiloxCounter counter;
    PhiloxKey key;
    PhiloxCounter expected;
  };
  const std::vector<Kat> kats = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
      {{1, 0, 0, 0}, {1, 0}, {0xac08141b, 0xdfc5ccbe, 0x79c07a47, 0xa7f66093}},
  };
  for (const Kat& k : kats) EXPECT_EQ(Philox4x32_10(k.counter, k.key), k.expected);
}

TEST(CurandDevice, InitAndCurand) {
  CurandPhilox a(42, 0, 0);
  const std::vector<uint32_t> want = {0x9ceaf053, 0x77f5493b, 0x12bf50ad, 0x5742b3d7,
                                      0xfcdb2127, 0x53ba6cfd, 0x838f5a6e, 0x744e06fb};
  for (uint32_t w : want) EXPECT_EQ(a.Next(), w);
  // Subsequence 1 starts at counter z = 1.
  CurandPhilox b(42, 1, 0);
  EXPECT_EQ(b.Next(), 0x02933769u);
  EXPECT_EQ(b.counter()[2], 1u);
  // Offset 5: the second word of block 1; curand4 straddles blocks from there.
  CurandPhilox c(42, 0, 5);
  EXPECT_EQ(c.Next4(), (std::array<uint32_t, 4>{0x53ba6cfd, 0x838f5a6e, 0x744e06fb, 0xd36c0225}));
  EXPECT_EQ(c.Next(), 0xa8875dcbu);
  // A 64-bit seed is the key; subsequence 3 and offset 10 give counter {2, 0, 3, 0}.
  CurandPhilox d(0x0123456789abcdefULL, 3, 10);
  EXPECT_EQ(d.counter(), (PhiloxCounter{2, 0, 3, 0}));
  EXPECT_EQ(d.Next(), 0x98ab7a1cu);
}

TEST(CurandDevice, UniformAndNormal) {
  CurandPhilox u(42, 0, 0);
  const std::vector<float> uniform = {0.612959862f, 0.468586504f, 0.0732317343f, 0.340861559f,
                                      0.987718642f, 0.327063382f, 0.513906121f,  0.454315603f};
  for (float w : uniform) EXPECT_EQ(u.Uniform(), w);
  CurandPhilox ud(42, 0, 0);
  EXPECT_EQ(ud.UniformDouble(), 0.61295988131314516);
  EXPECT_EQ(ud.UniformDouble(), 0.46858651842921972);
  CurandPhilox n(42, 0, 0);
  const std::vector<float> normal = {0.194018871f, -0.97018981f,   1.92392659f,  -1.23562121f,
                                     0.139137551f, -0.0731815323f, 0.326682925f, -1.10666513f};
  for (float w : normal) EXPECT_EQ(n.Normal(), w);
  CurandPhilox nd(42, 0, 0);
  EXPECT_EQ(nd.NormalDouble(), 1.0360235505368471);
  EXPECT_EQ(nd.NormalDouble(), -0.6653743849976409);
  EXPECT_EQ(nd.NormalDouble(), 0.42328043627196804);
  EXPECT_EQ(nd.NormalDouble(), -1.4338887543449035);
  // curand_normal_double at offset 1 takes an unaligned curand4.
  CurandPhilox nd1(42, 0, 1);
  EXPECT_EQ(nd1.NormalDouble(), -0.1762656967716564);
  EXPECT_EQ(nd1.NormalDouble(), 2.2797322792216175);
  // A curand between normals doesn't disturb the cached second value.
  CurandPhilox mixed(42, 0, 0);
  mixed.Next();
  EXPECT_EQ(mixed.Normal(), 0.546769619f);
  EXPECT_EQ(mixed.Next(), 0x5742b3d7u);
  EXPECT_EQ(mixed.Normal(), 1.10322809f);
}

}  // namespace
}  // namespace parity
