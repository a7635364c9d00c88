// SPDX-License-Identifier: Apache-2.0
#include "store/trend.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace parity::store {
namespace {

auto Key(const SeriesPoint& p) { return std::tie(p.node, p.name, p.dtype, p.params); }

/// The trend of one series: `points` are its valid points in time order, at least one.
Trend OneTrend(const std::vector<const SeriesPoint*>& points, double threshold) {
  const SeriesPoint& first = *points.front();
  const SeriesPoint& last = *points.back();
  Trend t;
  t.node = first.node;
  t.name = first.name;
  t.dtype = first.dtype;
  t.params = first.params;
  t.unit = last.unit;
  for (auto it = points.rbegin(); it != points.rend() && t.better.empty(); ++it) {
    t.better = (*it)->better;
  }
  t.points = points.size();
  t.first = first.value;
  t.last = last.value;
  t.min = t.max = first.value;
  for (const SeriesPoint* p : points) {
    t.min = std::min(t.min, p->value);
    t.max = std::max(t.max, p->value);
  }
  t.first_started = first.started;
  t.last_started = last.started;
  if (points.size() == 1) {
    t.verdict = "single";
    return t;
  }
  const double previous = points[points.size() - 2]->value;
  if (previous != 0.0) t.vs_previous = (t.last - previous) / std::abs(previous);

  // How far the last value moved, signed so that > 0 is better (or, direction unknown, up).
  double move = 0.0;
  if (t.first != 0.0) {
    t.change = (t.last - t.first) / std::abs(t.first);
    move = *t.change;
  } else if (t.last != t.first) {
    move = t.last > t.first ? HUGE_VAL : -HUGE_VAL;
  }
  if (t.better == "lower") move = -move;
  // Beyond the threshold (a share of the first value) and beyond the noise: three times the
  // larger cv, on the log of the ratio when both values have one sign (noise on a rate is
  // multiplicative, and a fall can't pass 100% however large it is).
  const double noise = 3.0 * std::max(first.cv.value_or(0.0), last.cv.value_or(0.0));
  const bool same_sign = t.first != 0.0 && (t.first > 0.0) == (t.last > 0.0) && t.last != 0.0;
  const double spread = same_sign ? std::abs(std::log(t.last / t.first)) : std::abs(move);
  const bool beyond = std::abs(move) > threshold && spread > noise;
  if (t.better == "higher" || t.better == "lower") {
    t.verdict = !beyond ? "steady" : move < 0 ? "regressed" : "improved";
  } else {
    t.verdict = beyond ? "changed" : "steady";
  }
  return t;
}

}  // namespace

std::vector<Trend> ComputeTrends(const std::vector<SeriesPoint>& points, double threshold) {
  std::vector<const SeriesPoint*> valid;
  for (const SeriesPoint& p : points) {
    if (p.valid && std::isfinite(p.value)) valid.push_back(&p);
  }
  std::stable_sort(valid.begin(), valid.end(), [](const SeriesPoint* a, const SeriesPoint* b) {
    if (Key(*a) != Key(*b)) return Key(*a) < Key(*b);
    return a->started < b->started;
  });
  std::vector<Trend> trends;
  std::vector<const SeriesPoint*> series;
  for (std::size_t i = 0; i < valid.size(); ++i) {
    series.push_back(valid[i]);
    if (i + 1 == valid.size() || Key(*valid[i + 1]) != Key(*valid[i])) {
      trends.push_back(OneTrend(series, threshold));
      series.clear();
    }
  }
  return trends;
}

}  // namespace parity::store
