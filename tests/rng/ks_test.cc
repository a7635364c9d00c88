// SPDX-License-Identifier: Apache-2.0
// Kolmogorov–Smirnov: KolmogorovSf/Cdf against scipy.stats.kstwo over every region of the
// method choice, and KsTwoSampleTest against scipy.stats.ks_2samp, from the reference values
// of tests/gen/gen_ks.py (tests/data/rng/ks_expected.json).
#include "rng/ks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace parity {
namespace {

using nlohmann::json;

// $PARITY_KS_EXPECTED, else $PARITY_SOURCE_DIR/tests/data/rng/ks_expected.json, else under
// the source tree the build was configured from, else that path relative to the working
// directory.
std::string ExpectedPath() {
  if (const char* path = std::getenv("PARITY_KS_EXPECTED"); path != nullptr && *path != '\0') {
    return path;
  }
  const std::string rel = "tests/data/rng/ks_expected.json";
  if (const char* dir = std::getenv("PARITY_SOURCE_DIR"); dir != nullptr && *dir != '\0') {
    return std::string(dir) + "/" + rel;
  }
#ifdef PARITY_SOURCE_DIR_DEFAULT
  return std::string(PARITY_SOURCE_DIR_DEFAULT) + "/" + rel;
#else
  return rel;
#endif
}

const json& Expected() {
  static const json* data = [] {
    const std::string path = ExpectedPath();
    std::ifstream in(path);
    if (!in) {
      ADD_FAILURE() << "cannot open " << path << " (set PARITY_KS_EXPECTED or PARITY_SOURCE_DIR)";
      return new json(json::object({{"kstwo", json::array()}, {"ks_2samp", json::array()}}));
    }
    return new json(json::parse(in));
  }();
  return *data;
}

// A probability against scipy's: 1e-6 relative, or 1e-12 absolute for tiny values.
::testing::AssertionResult ProbNear(double got, double want) {
  const double err = std::fabs(got - want);
  if (err <= std::max(1e-6 * std::fabs(want), 1e-12)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", scipy " << want << " (relative error "
                                       << err / std::fabs(want) << ")";
}

// Stricter in the tails: where scipy's value is a normal double, 1e-6 relative however small.
::testing::AssertionResult TailNear(double got, double want) {
  if (std::fabs(want) < std::numeric_limits<double>::min()) {
    return std::fabs(got) < 1e-300
               ? ::testing::AssertionSuccess()
               : ::testing::AssertionFailure() << "got " << got << ", scipy " << want;
  }
  const double rel = std::fabs(got - want) / std::fabs(want);
  if (rel <= 1e-6) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "got " << got << ", scipy " << want << " (relative error " << rel << ")";
}

TEST(Kolmogorov, MatchesScipyKstwo) {
  const json& cases = Expected()["kstwo"];
  ASSERT_GT(cases.size(), 500u);
  for (const json& c : cases) {
    const double d = c["d"].get<double>();
    const auto n = c["n"].get<int64_t>();
    SCOPED_TRACE(::testing::Message()
                 << "n=" << n << " d=" << d << " (" << c["region"].get<std::string>() << ")");
    const double sf = KolmogorovSf(d, n), cdf = KolmogorovCdf(d, n);
    EXPECT_TRUE(ProbNear(sf, c["sf"].get<double>())) << "sf";
    EXPECT_TRUE(ProbNear(cdf, c["cdf"].get<double>())) << "cdf";
    EXPECT_TRUE(TailNear(sf, c["sf"].get<double>())) << "sf tail";
    EXPECT_TRUE(TailNear(cdf, c["cdf"].get<double>())) << "cdf tail";
  }
}

TEST(Kolmogorov, EdgesAndInvalid) {
  EXPECT_TRUE(std::isnan(KolmogorovSf(std::nan(""), 10)));
  EXPECT_TRUE(std::isnan(KolmogorovCdf(std::nan(""), 10)));
  EXPECT_TRUE(std::isnan(KolmogorovSf(0.3, 0)));
  EXPECT_TRUE(std::isnan(KolmogorovCdf(0.3, -4)));
  EXPECT_EQ(KolmogorovSf(-1.0, 10), 1.0);
  EXPECT_EQ(KolmogorovCdf(0.05, 10), 0.0);  // at the support's lower end 1/(2n)
  EXPECT_EQ(KolmogorovSf(1.0, 10), 0.0);
  EXPECT_EQ(KolmogorovCdf(2.0, 10), 1.0);
  // n = 1: D_1 = max(U, 1 - U), P(D_1 <= d) = 2d - 1.
  EXPECT_DOUBLE_EQ(KolmogorovCdf(0.8, 1), 0.6);
  // Monotone in d across the method boundaries (n = 141: Durbin, Pelz-Good, smirnov).
  double last = 1.0;
  for (double d = 0.004; d < 1.0; d += 0.001) {
    const double sf = KolmogorovSf(d, 141);
    EXPECT_LE(sf, last + 1e-9) << d;
    last = sf;
  }
}

TEST(Kolmogorov, LargeNSfAndCdfAreComplementary) {
  // Past n = 1e6 the one-sided sum and Pelz-Good take over from the matrix; their speed is
  // bench/rng_bench.cc's BM_KolmogorovLargeN.
  for (const int64_t n : {int64_t{1000000}, int64_t{50000000}, int64_t{100000000}}) {
    for (const double c : {0.01, 0.5, 1.0, 2.2, 5.0, 17.0, 100.0}) {
      const double d = std::sqrt(c / static_cast<double>(n));
      const double sf = KolmogorovSf(d, n), cdf = KolmogorovCdf(d, n);
      EXPECT_TRUE(sf >= 0.0 && sf <= 1.0) << n << " " << d;
      // Not exactly complementary: for n d^2 >= 2.2 the sf is twice the one-sided tail,
      // which overstates it by P(D+ >= d and D- >= d) ~ 2 exp(-8 n d^2) (5e-8 at 2.2), while
      // the cdf is Pelz-Good's; scipy is the same.
      EXPECT_NEAR(sf + cdf, 1.0, 1e-7) << n << " " << d;
    }
  }
}

// The "weyl" recipe of gen_ks.py: u_i = ((i mult + offset) mod 2^32) / 2^32, optionally
// floor(u_i quant) / quant, plus shift.
std::vector<double> Regenerate(const json& r) {
  EXPECT_EQ(r["kind"].get<std::string>(), "weyl");
  const auto size = r["size"].get<uint64_t>();
  const auto mult = r["mult"].get<uint64_t>();
  const auto offset = r["offset"].get<uint64_t>();
  const auto quant = r["quant"].get<int64_t>();
  const double shift = r["shift"].get<double>();
  std::vector<double> x(size);
  for (uint64_t i = 0; i < size; ++i) {
    double u = static_cast<double>((i * mult + offset) % (uint64_t{1} << 32)) / 4294967296.0;
    if (quant > 0) u = std::floor(u * static_cast<double>(quant)) / static_cast<double>(quant);
    x[i] = u + shift;
  }
  return x;
}

TEST(KsTwoSample, MatchesScipyKs2samp) {
  const json& cases = Expected()["ks_2samp"];
  ASSERT_GE(cases.size(), 12u);
  for (const json& c : cases) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const std::vector<double> a =
        c.contains("a") ? c["a"].get<std::vector<double>>() : Regenerate(c["a_recipe"]);
    const std::vector<double> b =
        c.contains("b") ? c["b"].get<std::vector<double>>() : Regenerate(c["b_recipe"]);
    ASSERT_EQ(a.size(), c["n1"].get<std::size_t>());
    ASSERT_EQ(b.size(), c["n2"].get<std::size_t>());
    const KsTwoSample got = KsTwoSampleTest(a, b);
    EXPECT_EQ(got.statistic, c["statistic"].get<double>());
    EXPECT_TRUE(ProbNear(got.p_value, c["pvalue"].get<double>()));
    EXPECT_TRUE(TailNear(got.p_value, c["pvalue"].get<double>()));
    EXPECT_EQ(got.method, c["method"].get<std::string>());
    // Symmetric in the two samples.
    const KsTwoSample swapped = KsTwoSampleTest(b, a);
    EXPECT_EQ(swapped.statistic, got.statistic);
    EXPECT_TRUE(ProbNear(swapped.p_value, got.p_value));
  }
}

TEST(KsTwoSample, EmptySampleThrows) {
  const std::vector<double> some = {1.0, 2.0};
  EXPECT_THROW(KsTwoSampleTest({}, some), std::invalid_argument);
  EXPECT_THROW(KsTwoSampleTest(some, {}), std::invalid_argument);
}

TEST(KsTwoSample, MethodSwitchesAboveTenThousand) {
  std::vector<double> a(10001), b(50);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i) / a.size();
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = (static_cast<double>(i) + 0.5) / b.size();
  EXPECT_EQ(KsTwoSampleTest(a, b).method, "asymp");
  a.pop_back();
  EXPECT_EQ(KsTwoSampleTest(a, b).method, "exact");
}

}  // namespace
}  // namespace parity
