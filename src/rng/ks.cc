// SPDX-License-Identifier: Apache-2.0
// Kolmogorov–Smirnov distributions. References:
//  [SL]   R. Simard and P. L'Ecuyer, "Computing the Two-Sided Kolmogorov-Smirnov
//         Distribution", Journal of Statistical Software 39(11), 2011: which method where.
//  [MTW]  G. Marsaglia, W. W. Tsang and J. Wang, "Evaluating Kolmogorov's Distribution",
//         Journal of Statistical Software 8(18), 2003: Durbin's matrix, by powering.
//  [Dur]  J. Durbin, "The Probability that the Sample Distribution Function Lies Between Two
//         Parallel Straight Lines", Annals of Mathematical Statistics 39, 1968.
//  [Pom]  J. Pomeranz, "Exact Cumulative Distribution of the Kolmogorov-Smirnov Statistic for
//         Small Samples (Algorithm 487)", Communications of the ACM 17(12), 1974.
//  [PG]   W. Pelz and I. J. Good, "Approximating the Lower Tail-areas of the
//         Kolmogorov-Smirnov One-sample Statistic", JRSS B 38(2), 1976.
//  [RG]   H. Ruben and J. Gambino, "The exact distribution of Kolmogorov's statistic D_n for
//         n <= 10", Annals of the Institute of Statistical Mathematics 34, 1982 (the closed
//         forms near both ends of the support).
//  [Smi]  N. V. Smirnov, 1944, and Z. W. Birnbaum and F. H. Tingey, "One-Sided Confidence
//         Contours for Probability Distribution Functions", Ann. Math. Statist. 22, 1951: the
//         exact one-sided tail; for n > 1e6 the approximation exp(-(6nx+1)^2 / (18n)) of
//         P. van Mulbregt, "Computing the Cumulative Distribution Function and Quantiles of
//         the One-sided Kolmogorov-Smirnov Statistic", arXiv:1802.06966, 2018.
//  [Hod]  J. L. Hodges Jr., "The Significance Probability of the Smirnov Two-Sample Test",
//         Arkiv för Matematik 3(43), 1958: lattice paths for the two-sample test; with the
//         recursion for 1 - p of T. Viehmann, "Numerically more stable computation of the
//         p-values for the two-sample Kolmogorov-Smirnov test", arXiv:2102.08037, 2021.
// The region boundaries are those of scipy 1.10 (scipy.stats._ksstats, scipy.stats.ks_2samp),
// whose results these functions reproduce.
#include "rng/ks.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace parity {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kPi = std::numbers::pi;
// Rescaling step of the exact recursions, whose intermediate values leave double's range.
constexpr int kScaleExp = 128;
const double kBig = std::ldexp(1.0, kScaleExp);
const double kSmall = std::ldexp(1.0, -kScaleExp);
// log(DBL_MIN): a one-sided tail exp(-2 n x^2) below this is 0 in double.
constexpr double kMinLog = -708.3964185322641;

double Clip01(double p) { return std::clamp(p, 0.0, 1.0); }

// Picks P(D_n <= d) or P(D_n >= d) from the pair, clipped to [0, 1].
double Select(bool cdf, double cdf_prob, double sf_prob) {
  return Clip01(cdf ? cdf_prob : sf_prob);
}

// log(n! / n^n) by Stirling's series, free of the cancellation of lgamma(n + 1) - n log n:
// log(n)/2 - n + log(2 pi)/2 + sum_j B_2j / (2j (2j - 1) n^(2j - 1)), eight terms.
double LogFactorialOverPower(int64_t n) {
  static constexpr double kCoeffs[] = {1.0 / 12,   -1.0 / 360,      1.0 / 1260, -1.0 / 1680,
                                       1.0 / 1188, -691.0 / 360360, 1.0 / 156,  -3617.0 / 122400};
  const double nd = static_cast<double>(n);
  const double r = 1.0 / nd, r2 = r * r;
  double series = 0.0;
  for (int j = 7; j >= 0; --j) series = series * r2 + kCoeffs[j];
  return std::log(nd) / 2 - nd + std::log(2 * kPi) / 2 + r * series;
}

// An unevaluated sum hi + lo with |lo| <= ulp(hi)/2 (Dekker; Knuth's TwoSum).
struct DoubleDouble {
  double hi = 0.0, lo = 0.0;
  void Add(double x) {
    const double s = hi + x;
    const double bb = s - hi;
    const double err = (hi - (s - bb)) + (x - bb);
    Normalize(s, lo + err);
  }
  void AddProduct(double a, double b) {  // += a b, the product taken exactly
    const double p = a * b;
    const double e = std::fma(a, b, -p);
    Add(p);
    lo += e;
    Normalize(hi, lo);
  }

 private:
  void Normalize(double s, double e) {
    hi = s + e;
    lo = e - (hi - s);
  }
};

// ---------------------------------------------------------------------------------------------
// One-sided tail [Smi]: P(D_n^+ >= x) =
//   x sum_{v=0}^{floor(n(1-x))} C(n, v) (x + v/n)^(v-1) (1 - x - v/n)^(n-v),
// a sum of positive terms, each evaluated through its logarithm. The bases x + v/n and
// 1 - x - v/n are formed from n x split exactly into floor + fraction, so that they keep full
// relative precision when one of them is small.
double SmirnovSf(int64_t n, double x) {
  if (!(x >= 0.0 && x <= 1.0)) return kNaN;
  if (n == 1) return 1.0 - x;
  if (x == 0.0) return 1.0;
  if (x == 1.0) return 0.0;
  const double nd = static_cast<double>(n);
  const double nx_hi = nd * x;
  const double nx_lo = std::fma(nd, x, -nx_hi);  // n x == nx_hi + nx_lo exactly
  double floor_nx = std::floor(nx_hi);
  double alpha = (nx_hi - floor_nx) + nx_lo;  // frac(n x)
  if (alpha < 0.0) {
    floor_nx -= 1.0;
    alpha = (nx_hi - floor_nx) + nx_lo;
  }
  if (alpha >= 1.0) {
    floor_nx += 1.0;
    alpha = 0.0;
  }
  const auto nxfl = static_cast<int64_t>(floor_nx);

  // x <= 1/n: P(D_n^+ < x) = x (1 + x)^(n-1).
  if (nxfl == 0 || (nxfl == 1 && alpha == 0.0)) {
    return 1.0 - x * std::pow(1.0 + x, static_cast<double>(n - 1));
  }
  if (-2.0 * nd * x * x < kMinLog) return 0.0;  // below exp(-2 n x^2), underflows
  // x >= 1 - 1/n: only the v = 0 term.
  if (nxfl >= n - 1) return std::pow(1.0 - x, nd);
  // Very large n: van Mulbregt's approximation, as scipy.
  if (n > 1000000) {
    const double logp = -std::pow(6.0 * nd * x + 1.0, 2) / 18.0 / nd;
    return logp < -std::numbers::ln2 ? std::exp(logp) : 1.0 + std::expm1(logp);
  }

  // Each log-term sums parts of size up to ~n (log C(n, v), v log(x + v/n), ...) that cancel
  // to a moderate value: they are carried as double-doubles (exact products and sums), so the
  // only errors left are those of the individual logarithms, not ~n ulps of the parts.
  const int64_t last = n - nxfl - 1;  // v = 0 .. floor(n (1 - x)), without a zero last term
  const double log_x = std::log(x);
  DoubleDouble log_binom;  // log C(n, v)
  double sum = 0.0, previous = 0.0;
  for (int64_t v = 0; v <= last; ++v) {
    const double up = (static_cast<double>(nxfl + v) + alpha) / nd;        // x + v/n
    const double down = (static_cast<double>(n - nxfl - v) - alpha) / nd;  // 1 - x - v/n
    const double log_up = up < 0.5 ? std::log(up) : std::log1p(-down);
    const double log_down = down < 0.5 ? std::log(down) : std::log1p(-up);
    DoubleDouble log_term = log_binom;
    if (v > 0) {  // x (x + v/n)^(v-1): exactly 1 at v = 0
      log_term.Add(log_x);
      log_term.AddProduct(static_cast<double>(v - 1), log_up);
    }
    log_term.AddProduct(static_cast<double>(n - v), log_down);
    const double term = std::exp(log_term.hi) * (1.0 + log_term.lo);
    sum += term;
    if (term > 0.0) {
      // The terms are unimodal in v: stop once the rest cannot reach the last bit.
      if (term <= previous && 4.0 * static_cast<double>(last - v) * term < kEps * sum) break;
    } else if (v > n / 2) {
      break;  // underflowed past the mode
    }
    previous = term;
    log_binom.Add(std::log(static_cast<double>(n - v) / static_cast<double>(v + 1)));
  }
  return sum;
}

// ---------------------------------------------------------------------------------------------
// Durbin's matrix [Dur] computed as in [MTW]: with n d = k - h (k integer, 0 <= h < 1) and
// m = 2k - 1, P(D_n < d) = n!/n^n (H^n)_{kk} for the m x m matrix
//   H_ij = 1/(i - j + 1)!  (i - j + 1 >= 0, else 0), 1-based,
// whose first column and last row are replaced by (1 - h^i)/i! (reversed along the row), and
// corner (1 - 2 h^m + max(0, 2h - 1)^m)/m!. Powers are scaled by 2^-128 as they grow.
class Matrix {
 public:
  explicit Matrix(int m) : m_(m), a_(static_cast<std::size_t>(m) * m, 0.0) {}
  static Matrix Identity(int m) {
    Matrix r(m);
    for (int i = 0; i < m; ++i) r(i, i) = 1.0;
    return r;
  }
  double& operator()(int i, int j) { return a_[static_cast<std::size_t>(i) * m_ + j]; }
  double operator()(int i, int j) const { return a_[static_cast<std::size_t>(i) * m_ + j]; }
  Matrix operator*(const Matrix& b) const {
    Matrix r(m_);
    for (int i = 0; i < m_; ++i) {
      for (int k = 0; k < m_; ++k) {
        const double aik = (*this)(i, k);
        if (aik == 0.0) continue;
        for (int j = 0; j < m_; ++j) r(i, j) += aik * b(k, j);
      }
    }
    return r;
  }
  // Divides by 2^128 while the largest entry exceeds 2^128; adds the exponents taken out.
  void Rescale(int64_t& exponent) {
    double largest = 0.0;
    for (double x : a_) largest = std::max(largest, std::fabs(x));
    while (largest > kBig) {
      for (double& x : a_) x *= kSmall;
      largest *= kSmall;
      exponent += kScaleExp;
    }
  }

 private:
  int m_;
  std::vector<double> a_;
};

double DurbinCdf(int64_t n, double d) {
  if (d >= 1.0) return 1.0;
  const double nd = static_cast<double>(n) * d;
  if (nd <= 0.5) return 0.0;
  const auto k = static_cast<int>(std::ceil(nd));
  const double h = k - nd;
  const int m = 2 * k - 1;

  std::vector<double> inv_fact(m + 1);  // 1/i!
  inv_fact[0] = 1.0;
  for (int i = 1; i <= m; ++i) inv_fact[i] = inv_fact[i - 1] / i;
  std::vector<double> edge(m);  // (1 - h^i)/i!, i = 1..m, with the corner's own formula
  for (int i = 1; i <= m; ++i) edge[i - 1] = (1.0 - std::pow(h, i)) * inv_fact[i];
  edge[m - 1] =
      (1.0 + std::pow(std::max(2.0 * h - 1.0, 0.0), m) - 2.0 * std::pow(h, m)) * inv_fact[m];

  Matrix base(m);
  for (int i = 0; i < m; ++i) {
    for (int j = 1; j < m; ++j) {
      if (i - j + 1 >= 0) base(i, j) = inv_fact[i - j + 1];
    }
    base(i, 0) = edge[i];
  }
  for (int j = 0; j < m; ++j) base(m - 1, j) = edge[m - 1 - j];

  // Binary powering; `power` and `base` carry their own power-of-two exponents.
  Matrix power = Matrix::Identity(m);
  int64_t power_exp = 0, base_exp = 0;
  for (int64_t e = n; e > 0; e /= 2) {
    if (e % 2 != 0) {
      power = power * base;
      power_exp += base_exp;
      power.Rescale(power_exp);
    }
    if (e / 2 == 0) break;
    base = base * base;
    base_exp *= 2;
    base.Rescale(base_exp);
  }

  double p = power(k - 1, k - 1);
  const double nn = static_cast<double>(n);
  for (int64_t i = 1; i <= n; ++i) {  // times n!/n^n
    p = static_cast<double>(i) * p / nn;
    if (std::fabs(p) < kSmall) {
      p *= kBig;
      power_exp -= kScaleExp;
    }
  }
  return std::ldexp(p, static_cast<int>(power_exp));
}

// ---------------------------------------------------------------------------------------------
// Pomeranz's recursion [Pom], in the form of [SL] section 2.1. With t = n d = l + f
// (l integer, 0 <= f < 1) and g = min(f, 1 - f), D_n < d holds iff the number N(s) of
// scaled observations n U_i <= s satisfies s - t < N(s) < s + t at the 2n + 2 points
// 0, g, 1 - g, 1 + g, 2 - g, ..., n - g, n (where s - t or s + t is an integer). N is a
// Poisson process conditioned on N(n) = n, so the counts at consecutive points are
// convolved with Poisson weights (Delta/n)^j / j! and the end multiplied by n!.
double PomeranzCdf(int64_t n, double x) {
  const double t = static_cast<double>(n) * x;
  const auto ell = static_cast<int64_t>(std::floor(t));
  const double f = t - static_cast<double>(ell);
  const double g = std::min(f, 1.0 - f);
  // ceil(2f) and floor(-2f), for exact bounds at points k + f and k + 1 - f.
  const int64_t ceil_2f = f == 0.0 ? 0 : (f <= 0.5 ? 1 : 2);
  const int64_t floor_m2f = f == 0.0 ? 0 : (f <= 0.5 ? -1 : -2);

  // Poisson weights (Delta/n)^j / j! for the three step lengths g, 2g and 1 - 2g.
  const auto npowers = static_cast<std::size_t>(2 * ell + 4);
  std::vector<double> w_g(npowers), w_2g(npowers), w_1m2g(npowers);
  w_g[0] = w_2g[0] = w_1m2g[0] = 1.0;
  const double nd = static_cast<double>(n);
  for (std::size_t j = 1; j < npowers; ++j) {
    const double jd = static_cast<double>(j);
    w_g[j] = w_g[j - 1] * (g / nd) / jd;
    w_2g[j] = w_2g[j - 1] * (2.0 * g / nd) / jd;
    w_1m2g[j] = w_1m2g[j - 1] * ((1.0 - 2.0 * g) / nd) / jd;
  }

  std::vector<double> prev(n + 1, 0.0), cur(n + 1, 0.0);
  prev[0] = 1.0;  // N(0) = 0
  int64_t prev_lo = 0, prev_hi = 0;
  int64_t exponent = 0;
  for (int64_t i = 1; i <= 2 * n + 1; ++i) {  // step i reaches the (i + 1)-th point
    const std::vector<double>& w = (i == 1 || i == 2 * n + 1) ? w_g : (i % 2 == 0 ? w_1m2g : w_2g);
    int64_t lo = n, hi = n;  // the last point, s = n
    if (i < 2 * n + 1) {
      const int64_t k = (i - 1) / 2;
      // Point pair k is {k + g, k + 1 - g}: k + f first when f <= 1/2, else k + 1 - f first.
      const bool at_k_plus_f = (f <= 0.5) == (i % 2 == 1);
      if (at_k_plus_f) {  // s - t = k - l is an integer
        lo = k - ell + 1;
        hi = k + ell + ceil_2f - 1;
      } else {  // s + t = k + 1 + l is an integer
        lo = k + 2 - ell + floor_m2f;
        hi = k + ell;
      }
      lo = std::max<int64_t>(lo, 0);
      hi = std::min(hi, n);
    }
    lo = std::max(lo, prev_lo);  // counts never decrease
    if (lo > hi) return 0.0;
    double largest = 0.0;
    for (int64_t j = lo; j <= hi; ++j) {
      double s = 0.0;
      for (int64_t c = prev_lo; c <= std::min(j, prev_hi); ++c) {
        const auto jump = static_cast<std::size_t>(j - c);
        if (jump < npowers) s += prev[c] * w[jump];
      }
      cur[j] = s;
      largest = std::max(largest, s);
    }
    if (largest > 0.0 && largest < kSmall) {
      for (int64_t j = lo; j <= hi; ++j) cur[j] *= kBig;
      exponent -= kScaleExp;
    }
    std::swap(prev, cur);
    prev_lo = lo;
    prev_hi = hi;
  }
  double p = prev[n];
  for (int64_t j = 1; j <= n; ++j) {  // times n!
    if (p > kBig) {
      p *= kSmall;
      exponent += kScaleExp;
    }
    p *= static_cast<double>(j);
  }
  return std::ldexp(p, static_cast<int>(exponent));
}

// ---------------------------------------------------------------------------------------------
// Pelz–Good [PG] (as written in [SL] eq. for large n): with z = d sqrt(n),
//   P(D_n <= d) ~ K0(z) + K1(z)/sqrt(n) + K2(z)/n + K3(z)/n^(3/2),
// the Li-Chien/Korolyuk expansion carried through the Jacobi theta transformation, series in
// exp(-(2k-1)^2 pi^2 / (8 z^2)) and exp(-k^2 pi^2 / (2 z^2)), k = 1 .. ceil(16 z / pi).
double PelzGoodCdf(int64_t n, double x) {
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  const double nd = static_cast<double>(n);
  const double z = std::sqrt(nd) * x;
  const double z2 = z * z, z3 = z2 * z, z4 = z2 * z2, z6 = z4 * z2, z8 = z4 * z4;
  const double log_q = -kPi * kPi / 8.0 / z2;
  if (log_q < -708.0) return 0.0;
  const double pi2 = kPi * kPi, pi4 = pi2 * pi2, pi6 = pi4 * pi2;
  const auto kmax = static_cast<int64_t>(std::ceil(16.0 * z / kPi));

  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;  // sums over odd m = 2k - 1
  double e2 = 0.0, e3 = 0.0;                      // sums over all k
  const double log_q2 = -pi2 / 2.0 / z2;
  for (int64_t k = kmax; k >= 1; --k) {
    const double m = static_cast<double>(2 * k - 1);
    const double m2 = m * m, m4 = m2 * m2, m6 = m4 * m2;
    const double qm = std::exp(log_q * m2);
    s0 += qm;
    s1 += (-z2 + pi2 / 4.0 * m2) * qm;
    s2 += (6.0 * z6 + 2.0 * z4 + (2.0 * z4 - 5.0 * z2) * pi2 / 4.0 * m2 +
           pi4 * (1.0 - 2.0 * z2) / 16.0 * m4) *
          qm;
    s3 += (-30.0 * z6 - 90.0 * z8 + pi2 * (135.0 * z4 - 96.0 * z6) / 4.0 * m2 +
           pi4 * (-60.0 * z2 + 212.0 * z4) / 16.0 * m4 + pi6 * (5.0 - 30.0 * z2) / 64.0 * m6) *
          qm;
    const double kd = static_cast<double>(k), k2 = kd * kd;
    const double qk = std::exp(log_q2 * k2);
    e2 += k2 * qk;
    e3 += (3.0 * z2 - pi2 * k2) * k2 * qk;
  }
  const double sqrt_2pi = std::sqrt(2.0 * kPi);
  const double k0 = sqrt_2pi * s0 / z;
  const double k1 = sqrt_2pi * s1 / (6.0 * z4);
  const double k2 = sqrt_2pi * s2 / (72.0 * z4 * z3) - pi2 * sqrt_2pi / (36.0 * z3) * e2;
  const double k3 = sqrt_2pi * s3 / (6480.0 * z6 * z4) + pi2 * sqrt_2pi / (216.0 * z6) * e3;
  return k0 + k1 / std::sqrt(nd) + k2 / nd + k3 / (nd * std::sqrt(nd));
}

// ---------------------------------------------------------------------------------------------
// The choice of method of [SL] (section 3), x in (0, 1), n >= 1.
double Kolmogorov(int64_t n, double x, bool cdf) {
  if (x >= 1.0) return Select(cdf, 1.0, 0.0);
  if (x <= 0.0) return Select(cdf, 0.0, 1.0);
  const double nd = static_cast<double>(n);
  const double t = nd * x;
  if (t <= 1.0) {
    // [RG]: P(D_n <= x) = n!/n^n (2t - 1)^n for 1/(2n) <= x <= 1/n.
    if (t <= 0.5) return Select(cdf, 0.0, 1.0);
    double p;
    if (n <= 140) {
      p = 1.0;
      for (int64_t i = 1; i <= n; ++i) p *= static_cast<double>(i) * (1.0 / nd) * (2 * t - 1);
    } else {
      p = std::exp(LogFactorialOverPower(n) + nd * std::log(2 * t - 1));
    }
    return Select(cdf, p, 1.0 - p);
  }
  if (t >= nd - 1) {
    // [RG]: P(D_n >= x) = 2 (1 - x)^n for x >= 1 - 1/n.
    const double p = 2.0 * std::pow(1.0 - x, nd);
    return Select(cdf, 1.0 - p, p);
  }
  if (x >= 0.5) {
    // D_n^+ >= x and D_n^- >= x cannot both hold: exactly twice the one-sided tail.
    const double p = 2.0 * SmirnovSf(n, x);
    return Select(cdf, 1.0 - p, p);
  }
  const double nxx = t * x;  // n x^2
  if (n <= 140) {
    if (nxx <= 0.754693) {
      const double p = DurbinCdf(n, x);
      return Select(cdf, p, 1.0 - p);
    }
    if (nxx <= 4.0) {
      const double p = PomeranzCdf(n, x);
      return Select(cdf, p, 1.0 - p);
    }
    // The intersection term is below double precision: twice the one-sided tail.
    const double p = 2.0 * SmirnovSf(n, x);
    return Select(cdf, 1.0 - p, p);
  }
  if (!cdf) {  // the upper tail directly where it is small
    if (nxx >= 370.0) return 0.0;
    if (nxx >= 2.2) return Clip01(2.0 * SmirnovSf(n, x));
  }
  double p;
  if (nxx >= 18.0) {
    p = 1.0;
  } else if (n <= 100000 && nd * std::pow(x, 1.5) <= 1.4) {
    p = DurbinCdf(n, x);
  } else {
    p = PelzGoodCdf(n, x);
  }
  return Select(cdf, p, 1.0 - p);
}

// floor(a / b) and ceil(a / b) for b > 0.
int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0 && a < 0) ? 1 : 0); }
int64_t CeilDiv(int64_t a, int64_t b) { return a / b + ((a % b != 0 && a > 0) ? 1 : 0); }

// [Hod] for m == n: the share of lattice paths from (0,0) to (n,n) reaching |x - y| >= h,
// 2 sum_{k>=1} (-1)^(k-1) C(2n, n - k h) / C(2n, n), summed in nested (Horner) form
// 2 A_1 (1 - A_2 (1 - A_3 (...))) with A_k = C(2n, n - k h) / C(2n, n - (k-1) h).
double ProbOutsideSquare(int64_t n, int64_t h) {
  double p = 0.0;
  for (int64_t k = n / h; k >= 0; --k) {
    double a = 1.0;
    for (int64_t j = 0; j < h; ++j) {
      a = static_cast<double>(n - k * h - j) * a / static_cast<double>(n + k * h + j + 1);
    }
    p = a * (1.0 - p);
  }
  return 2.0 * p;
}

// [Hod] with Viehmann's recursion: the share of lattice paths from (0,0) to (m,n) that leave
// the band |x/m - y/n| < h / lcm(m, n), i.e. |ng x - mg y| < h with g = gcd(m, n),
// mg = m/g, ng = n/g. q(x, y) = 1 outside the band and, inside,
//   q(x, y) = (x q(x - 1, y) + y q(x, y - 1)) / (x + y),
// the complement of (paths staying inside) / C(x + y, y); one column is kept.
double ProbOutsideBand(int64_t m, int64_t n, int64_t g, int64_t h) {
  if (m < n) std::swap(m, n);
  const int64_t mg = m / g, ng = n / g;
  std::vector<double> q(static_cast<std::size_t>(n) + 1, 1.0);
  const int64_t first_max = std::min(CeilDiv(h, mg), n + 1);
  std::fill(q.begin(), q.begin() + first_max, 0.0);
  int64_t last_min = 0;
  for (int64_t x = 1; x <= m; ++x) {
    const int64_t min_y = std::min(std::max(FloorDiv(ng * x - h, mg) + 1, int64_t{0}), n);
    const int64_t end_y = std::min(CeilDiv(ng * x + h, mg), n + 1);  // exclusive
    if (end_y <= min_y) return 1.0;
    for (int64_t y = last_min; y < min_y; ++y) q[y] = 1.0;  // left the band
    const double xd = static_cast<double>(x);
    double below = min_y == 0 ? 0.0 : 1.0;
    for (int64_t y = min_y; y < end_y; ++y) {
      const double yd = static_cast<double>(y);
      below = (q[y] * xd + below * yd) / (xd + yd);
      q[y] = below;
    }
    last_min = min_y;
  }
  return q[n];
}

}  // namespace

double KolmogorovSf(double d, int64_t n) {
  if (std::isnan(d) || n < 1) return kNaN;
  if (d <= 0.5 / static_cast<double>(n)) return 1.0;  // below the support
  if (d >= 1.0) return 0.0;
  return Kolmogorov(n, d, /*cdf=*/false);
}

double KolmogorovCdf(double d, int64_t n) {
  if (std::isnan(d) || n < 1) return kNaN;
  if (d <= 0.5 / static_cast<double>(n)) return 0.0;
  if (d >= 1.0) return 1.0;
  return Kolmogorov(n, d, /*cdf=*/true);
}

KsTwoSample KsTwoSampleTest(std::span<const double> a, std::span<const double> b) {
  if (a.empty() || b.empty()) {
    throw std::invalid_argument("KsTwoSampleTest: both samples must be non-empty");
  }
  std::vector<double> xs(a.begin(), a.end()), ys(b.begin(), b.end());
  std::sort(xs.begin(), xs.end());
  std::sort(ys.begin(), ys.end());
  const auto n1 = static_cast<int64_t>(xs.size()), n2 = static_cast<int64_t>(ys.size());
  const double n1d = static_cast<double>(n1), n2d = static_cast<double>(n2);

  // F_a - F_b just after each distinct value (both right-continuous), as scipy evaluates it.
  double max_diff = -std::numeric_limits<double>::infinity();
  double min_diff = std::numeric_limits<double>::infinity();
  int64_t i = 0, j = 0;
  while (i < n1 || j < n2) {
    const double v = (j >= n2 || (i < n1 && xs[i] <= ys[j])) ? xs[i] : ys[j];
    while (i < n1 && xs[i] <= v) ++i;
    while (j < n2 && ys[j] <= v) ++j;
    const double diff = static_cast<double>(i) / n1d - static_cast<double>(j) / n2d;
    max_diff = std::max(max_diff, diff);
    min_diff = std::min(min_diff, diff);
  }
  const double min_s = Clip01(-min_diff);
  double d = min_s > max_diff ? min_s : max_diff;

  KsTwoSample result;
  constexpr int64_t kMaxExactN = 10000;  // scipy's MAX_AUTO_N
  bool exact = std::max(n1, n2) <= kMaxExactN;
  double prob = kNaN;
  if (exact) {
    const int64_t g = std::gcd(n1, n2);
    const int64_t lcm = (n1 / g) * n2;
    const auto h = static_cast<int64_t>(std::nearbyint(d * static_cast<double>(lcm)));
    d = static_cast<double>(h) / static_cast<double>(lcm);  // on the lattice, as scipy reports
    if (h == 0) {
      prob = 1.0;
    } else if (n1 == n2) {
      prob = ProbOutsideSquare(n1, h);
    } else {
      prob = ProbOutsideBand(n1, n2, g, h);
    }
    if (!(prob >= 0.0 && prob <= 1.0)) exact = false;  // scipy falls back to asymp
  }
  if (!exact) {
    const double big = std::max(n1d, n2d), small = std::min(n1d, n2d);
    const double en = big * small / (big + small);
    prob = KolmogorovSf(d, static_cast<int64_t>(std::nearbyint(en)));
  }
  result.statistic = d;
  result.p_value = Clip01(prob);
  result.method = exact ? "exact" : "asymp";
  return result;
}

}  // namespace parity
