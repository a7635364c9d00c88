// SPDX-License-Identifier: Apache-2.0
#include "quality/auc.h"

#include <algorithm>
#include <array>
#include <bit>
#include <boost/math/distributions/normal.hpp>
#include <cmath>

namespace parity {
namespace {

// The order-preserving unsigned image of a double (-0 and +0 map to the same key).
uint64_t OrderedKey(double x) {
  if (x == 0.0) x = 0.0;
  const uint64_t u = std::bit_cast<uint64_t>(x);
  return (u >> 63) != 0 ? ~u : u | (uint64_t{1} << 63);
}

double Covariance(std::span<const double> x, double mean_x, std::span<const double> y,
                  double mean_y) {
  if (x.size() < 2) return 0.0;
  double s = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) s += (x[i] - mean_x) * (y[i] - mean_y);
  return s / static_cast<double>(x.size() - 1);
}

}  // namespace

Classes ClassesOf(std::span<const uint8_t> labels) {
  Classes c;
  c.labels = labels;
  c.class_index.resize(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    c.class_index[i] = static_cast<uint32_t>(labels[i] != 0 ? c.positives++ : c.negatives++);
  }
  return c;
}

namespace {

// Scores sorted ascending as ordered keys, each with its sample index (low 31 bits) and label
// (top bit): what one sequential walk over the sorted data needs.
struct SortedScores {
  std::vector<uint64_t> keys;
  std::vector<uint32_t> payload;
};

constexpr uint32_t kLabelBit = uint32_t{1} << 31;

// LSD radix sort on 16-bit digits of the ordered keys, skipping digits all keys share:
// stable, O(n) per pass, and three passes for scores that came from float32.
SortedScores RadixSort(std::span<const double> scores, std::span<const uint8_t> labels) {
  const std::size_t n = scores.size();
  SortedScores s;
  s.keys.resize(n);
  s.payload.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    s.keys[i] = OrderedKey(scores[i]);
    s.payload[i] = static_cast<uint32_t>(i) | (!labels.empty() && labels[i] != 0 ? kLabelBit : 0);
  }
  std::vector<uint64_t> keys_tmp;
  std::vector<uint32_t> payload_tmp;
  std::vector<std::size_t> count(1 << 16);
  for (int shift = 0; shift < 64; shift += 16) {
    std::fill(count.begin(), count.end(), 0);
    for (uint64_t k : s.keys) ++count[(k >> shift) & 0xffff];
    if (n == 0 || count[(s.keys[0] >> shift) & 0xffff] == n) continue;  // one digit: no-op
    if (keys_tmp.empty()) {
      keys_tmp.resize(n);
      payload_tmp.resize(n);
    }
    std::size_t sum = 0;
    for (std::size_t& c : count) {
      const std::size_t here = c;
      c = sum;
      sum += here;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t slot = count[(s.keys[i] >> shift) & 0xffff]++;
      keys_tmp[slot] = s.keys[i];
      payload_tmp[slot] = s.payload[i];
    }
    s.keys.swap(keys_tmp);
    s.payload.swap(payload_tmp);
  }
  return s;
}

}  // namespace

std::vector<uint32_t> SortedOrder(std::span<const double> scores) {
  SortedScores s = RadixSort(scores, {});
  return std::move(s.payload);
}

Placements ComputePlacements(const Classes& classes, std::span<const double> scores) {
  Placements p;
  const double m = static_cast<double>(classes.positives);
  const double n = static_cast<double>(classes.negatives);
  p.v10.resize(static_cast<std::size_t>(classes.positives));
  p.v01.resize(static_cast<std::size_t>(classes.negatives));
  const SortedScores sorted = RadixSort(scores, classes.labels);
  const std::vector<uint64_t>& keys = sorted.keys;
  const std::vector<uint32_t>& payload = sorted.payload;
  // Walk groups of equal scores in ascending order: a positive beats every negative below
  // its group and half of those in it; a negative is beaten by every positive above its
  // group and half of those in it.
  double positives_below = 0.0, negatives_below = 0.0, sum_v10 = 0.0;
  for (std::size_t start = 0; start < keys.size();) {
    std::size_t end = start;
    int64_t group_pos = 0;
    while (end < keys.size() && keys[end] == keys[start]) {
      group_pos += (payload[end] & kLabelBit) != 0;
      ++end;
    }
    const double pos = static_cast<double>(group_pos);
    const double neg = static_cast<double>(end - start) - pos;
    const double v10 = (negatives_below + 0.5 * neg) / n;
    const double v01 = (m - positives_below - 0.5 * pos) / m;
    for (std::size_t i = start; i < end; ++i) {
      const uint32_t sample = payload[i] & ~kLabelBit;
      if ((payload[i] & kLabelBit) != 0) {
        p.v10[classes.class_index[sample]] = v10;
      } else {
        p.v01[classes.class_index[sample]] = v01;
      }
    }
    sum_v10 += pos * v10;
    positives_below += pos;
    negatives_below += neg;
    start = end;
  }
  p.auc = sum_v10 / m;
  return p;
}

DeLongTest DeLongPaired(const Placements& a, const Placements& b) {
  DeLongTest t;
  t.auc_a = a.auc;
  t.auc_b = b.auc;
  t.delta = b.auc - a.auc;
  const double m = static_cast<double>(a.v10.size()), n = static_cast<double>(a.v01.size());
  const double s10_aa = Covariance(a.v10, a.auc, a.v10, a.auc);
  const double s10_bb = Covariance(b.v10, b.auc, b.v10, b.auc);
  const double s10_ab = Covariance(a.v10, a.auc, b.v10, b.auc);
  const double s01_aa = Covariance(a.v01, a.auc, a.v01, a.auc);
  const double s01_bb = Covariance(b.v01, b.auc, b.v01, b.auc);
  const double s01_ab = Covariance(a.v01, a.auc, b.v01, b.auc);
  t.var_a = s10_aa / m + s01_aa / n;
  t.var_b = s10_bb / m + s01_bb / n;
  t.covariance = s10_ab / m + s01_ab / n;
  const double var = std::max(t.var_a + t.var_b - 2.0 * t.covariance, 0.0);
  t.se = std::sqrt(var);
  const boost::math::normal_distribution<double> normal;
  if (t.se > 0) {
    t.z = t.delta / t.se;
    t.p_value = 2.0 * boost::math::cdf(boost::math::complement(normal, std::fabs(t.z)));
  } else {
    t.z = 0.0;
    t.p_value = t.delta == 0.0 ? 1.0 : 0.0;
  }
  const double q = boost::math::quantile(boost::math::complement(normal, 0.025));
  t.ci95_lo = t.delta - q * t.se;
  t.ci95_hi = t.delta + q * t.se;
  return t;
}

double WeightedAuc(std::span<const uint8_t> labels, std::span<const double> scores,
                   std::span<const uint32_t> order, std::span<const uint32_t> weight) {
  double negatives_below = 0.0, pairs = 0.0, m = 0.0, n = 0.0;
  for (std::size_t start = 0; start < order.size();) {
    std::size_t end = start;
    double group_pos = 0.0, group_neg = 0.0;
    const double value = scores[order[start]];
    while (end < order.size() && scores[order[end]] == value) {
      const double w = weight[order[end]];
      (labels[order[end]] != 0 ? group_pos : group_neg) += w;
      ++end;
    }
    pairs += group_pos * (negatives_below + 0.5 * group_neg);
    negatives_below += group_neg;
    m += group_pos;
    n += group_neg;
    start = end;
  }
  return m > 0 && n > 0 ? pairs / (m * n) : std::nan("");
}

}  // namespace parity
