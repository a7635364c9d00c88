// SPDX-License-Identifier: Apache-2.0
#include "compare/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "compare/metrics_kernels.h"
#include "core/convert.h"
#include "core/parallel.h"
#include "core/simd.h"

namespace parity {
namespace {

using metrics_internal::ChunkMetricsBaseline;
using metrics_internal::ChunkMetricsV3;
using metrics_internal::ChunkMetricsV4;
using metrics_internal::InsertWorst;
using metrics_internal::Knobs;
using metrics_internal::WorstThreshold;

constexpr std::size_t kChunk = std::size_t{1} << 15;  // elements per parallel task
constexpr double kInf = std::numeric_limits<double>::infinity();

// The kernel at the active instruction-set level.
void ChunkMetrics(DType dtype, const std::byte* a, const std::byte* b, std::size_t n, int64_t base,
                  const Knobs& knobs, PairMetrics* acc) {
  switch (ActiveIsa()) {
    case Isa::kV4:
      return ChunkMetricsV4(dtype, a, b, n, base, knobs, acc);
    case Isa::kV3:
      return ChunkMetricsV3(dtype, a, b, n, base, knobs, acc);
    case Isa::kBaseline:
      return ChunkMetricsBaseline(dtype, a, b, n, base, knobs, acc);
  }
}

void Merge(PairMetrics* total, const PairMetrics& p, std::size_t k) {
  total->finite += p.finite;
  total->rel_count += p.rel_count;
  total->small_count += p.small_count;
  total->max_abs = std::max(total->max_abs, p.max_abs);
  total->sum_abs += p.sum_abs;
  total->sum_sq += p.sum_sq;
  total->max_rel = std::max(total->max_rel, p.max_rel);
  total->sum_rel += p.sum_rel;
  total->max_abs_small = std::max(total->max_abs_small, p.max_abs_small);
  total->dot += p.dot;
  total->sum_a2 += p.sum_a2;
  total->sum_b2 += p.sum_b2;
  total->max_ulp = std::max(total->max_ulp, p.max_ulp);
  total->sum_ulp += p.sum_ulp;
  for (std::size_t i = 0; i < total->ulp_histogram.size(); ++i) {
    total->ulp_histogram[i] += p.ulp_histogram[i];
  }
  total->rel_le_1e3 += p.rel_le_1e3;
  total->rel_le_5e3 += p.rel_le_5e3;
  total->nan_mismatch += p.nan_mismatch;
  total->inf_mismatch += p.inf_mismatch;
  total->identical += p.identical;
  total->max_excess = std::max(total->max_excess, p.max_excess);
  total->violations += p.violations;
  total->max_ratio = std::max(total->max_ratio, p.max_ratio);
  for (std::size_t i = 0; i < total->ratio_histogram.size(); ++i) {
    total->ratio_histogram[i] += p.ratio_histogram[i];
  }
  for (const WorstElement& w : p.worst) {
    if (w.error > WorstThreshold(total->worst, k)) InsertWorst(&total->worst, k, w);
  }
}

// Runs `body(chunk, a_bytes, b_bytes, n, base)` over aligned chunks of two tensors on
// ThreadCount() threads, reading mapped files with pread; returns the first read error.
template <typename Body>
Status ForEachChunkPair(const Tensor& a, const Tensor& b, std::size_t chunk_elements, Body&& body) {
  const auto count = static_cast<std::size_t>(a.numel());
  const std::size_t chunks = (count + chunk_elements - 1) / chunk_elements;
  const std::size_t size_a = ItemSize(a.dtype());
  const std::size_t size_b = ItemSize(b.dtype());
  std::mutex mutex;
  Status error;
  const auto each = [&](std::size_t c) {
    const std::size_t begin = c * chunk_elements;
    const std::size_t n = std::min(count, begin + chunk_elements) - begin;
    auto pa = a.ReadChunk(begin * size_a, n * size_a, ThreadScratch(chunk_elements * size_a, 0));
    auto pb = b.ReadChunk(begin * size_b, n * size_b, ThreadScratch(chunk_elements * size_b, 1));
    if (!pa.ok() || !pb.ok()) {
      std::lock_guard<std::mutex> lock(mutex);
      if (error.ok()) error = pa.ok() ? pb.status() : pa.status();
      return;
    }
    body(c, *pa, *pb, n, static_cast<int64_t>(begin));
  };
  // Chunks go to whichever thread is free (dynamic), not in fixed shares: on shared cores one
  // thread often runs late, and no result depends on which thread did a chunk.
  const int threads = static_cast<int>(std::min<std::size_t>(ThreadCount(), chunks));
  if (threads <= 1) {
    for (std::size_t c = 0; c < chunks; ++c) each(c);
  } else {
    const auto last = static_cast<long long>(chunks);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4)
    for (long long c = 0; c < last; ++c) each(static_cast<std::size_t>(c));
  }
  return error;
}

}  // namespace

double PairMetrics::mean_abs() const {
  return finite ? sum_abs / static_cast<double>(finite) : 0.0;
}
double PairMetrics::rmse() const {
  return finite ? std::sqrt(sum_sq / static_cast<double>(finite)) : 0.0;
}
double PairMetrics::mean_rel() const {
  return rel_count ? sum_rel / static_cast<double>(rel_count) : 0.0;
}
double PairMetrics::cosine() const {
  const double denominator = std::sqrt(sum_a2) * std::sqrt(sum_b2);
  return denominator > 0 ? dot / denominator : std::numeric_limits<double>::quiet_NaN();
}
double PairMetrics::mean_ulp() const {
  return finite ? sum_ulp / static_cast<double>(finite) : 0.0;
}
double PairMetrics::rms_b() const {
  return finite ? std::sqrt(sum_b2 / static_cast<double>(finite)) : 0.0;
}

double SmallestNormal(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return 0x1p-14;
    case DType::kBFloat16:
    case DType::kFloat32:
      return 0x1p-126;
    case DType::kFloat64:
      return 0x1p-1022;
    case DType::kFloat8E4M3FN:
      return 0x1p-6;
    case DType::kFloat8E5M2:
      return 0x1p-14;
    default:
      return 1.0;
  }
}

Result<PairMetrics> ComputePairMetrics(const Tensor& a, const Tensor& b,
                                       const MetricsOptions& options) {
  if (a.dtype() != b.dtype() || a.numel() != b.numel()) {
    return Status::Internal("ComputePairMetrics needs tensors of one dtype and size");
  }
  Knobs knobs{options.rtol,
              options.tiny,
              static_cast<std::size_t>(std::max(options.worst, 0)),
              false,
              Criterion::kAbsRel,
              0.0,
              0.0,
              0.0};
  if (const Tolerance* t = options.tolerance) {
    knobs.judge = true;
    knobs.criterion = t->criterion;
    knobs.rtol = t->criterion == Criterion::kAbsRel ? t->rtol : 0.0;
    knobs.atol = t->criterion == Criterion::kAbsRel ? t->atol : 0.0;
    knobs.inverse_max_ulps = t->max_ulps > 0 ? 1.0 / static_cast<double>(t->max_ulps) : kInf;
  }
  const std::size_t chunks = (static_cast<std::size_t>(a.numel()) + kChunk - 1) / kChunk;
  std::vector<PairMetrics> partials(chunks);
  const DType dtype = a.dtype();
  // Per worker: the k-th worst error of its last chunk, a floor for its next ones. The final
  // list does not depend on it (every element of the global top k is at or above any floor).
  std::vector<double> floors(static_cast<std::size_t>(ThreadCount()), 0.0);
  PARITY_RETURN_IF_ERROR(ForEachChunkPair(
      a, b, kChunk,
      [&](std::size_t c, const std::byte* pa, const std::byte* pb, std::size_t n, int64_t base) {
        double& floor = floors[static_cast<std::size_t>(WorkerIndex()) % floors.size()];
        Knobs chunk_knobs = knobs;
        chunk_knobs.worst_floor = floor;
        ChunkMetrics(dtype, pa, pb, n, base, chunk_knobs, &partials[c]);
        if (partials[c].worst.size() == knobs.worst && knobs.worst > 0) {
          floor = std::max(floor, partials[c].worst.back().error);
        }
      }));
  PairMetrics total;
  total.count = a.numel();
  total.judged = knobs.judge;
  for (const PairMetrics& p : partials) Merge(&total, p, knobs.worst);
  return total;
}

bool WithinTolerance(const PairMetrics& m, const Tolerance& t) {
  if (m.nan_mismatch > 0 || m.inf_mismatch > 0) return false;
  switch (t.criterion) {
    case Criterion::kBitwise:
      return m.identical == m.count;
    case Criterion::kUlps:
      return m.max_ulp <= static_cast<double>(t.max_ulps);
    case Criterion::kAbsRel:
      break;
  }
  return m.finite == 0 || m.max_excess <= t.atol;
}

Result<GoldenError> ComputeGoldenError(const Tensor& x, const Tensor& golden) {
  if (x.numel() != golden.numel()) return Status::Internal("golden of another size");
  struct Sums {
    double sq = 0, max_abs = 0, g2 = 0, g_max = 0;
    int64_t finite = 0, mismatch = 0;
  };
  const std::size_t chunks = (static_cast<std::size_t>(x.numel()) + kChunk - 1) / kChunk;
  std::vector<Sums> partials(chunks);
  PARITY_RETURN_IF_ERROR(ForEachChunkPair(
      x, golden, kChunk,
      [&](std::size_t c, const std::byte* px, const std::byte* pg, std::size_t n, int64_t) {
        std::vector<double> vx(n), vg(n);
        ConvertToFloat64(x.dtype(), px, vx);
        ConvertToFloat64(golden.dtype(), pg, vg);
        Sums& s = partials[c];
        for (std::size_t i = 0; i < n; ++i) {
          if (std::isfinite(vx[i]) && std::isfinite(vg[i])) {
            const double d = vx[i] - vg[i];
            s.sq += d * d;
            s.max_abs = std::max(s.max_abs, std::fabs(d));
            s.g2 += vg[i] * vg[i];
            s.g_max = std::max(s.g_max, std::fabs(vg[i]));
            ++s.finite;
          } else if (!((std::isnan(vx[i]) && std::isnan(vg[i])) || vx[i] == vg[i])) {
            ++s.mismatch;
          }
        }
      }));
  Sums total;
  for (const Sums& s : partials) {
    total.sq += s.sq;
    total.max_abs = std::max(total.max_abs, s.max_abs);
    total.g2 += s.g2;
    total.g_max = std::max(total.g_max, s.g_max);
    total.finite += s.finite;
    total.mismatch += s.mismatch;
  }
  GoldenError e;
  if (total.finite > 0) {
    e.rmse = std::sqrt(total.sq / static_cast<double>(total.finite));
    e.golden_rms = std::sqrt(total.g2 / static_cast<double>(total.finite));
  }
  e.max_abs = total.max_abs;
  e.golden_max_abs = total.g_max;
  e.nonfinite_mismatch = total.mismatch;
  return e;
}

Json MetricsJson(const PairMetrics& m, const std::vector<int64_t>& shape) {
  Json j = Json::object();
  j["count"] = m.count;
  SetNumber(j, "max_abs", m.max_abs);
  SetNumber(j, "mean_abs", m.mean_abs());
  SetNumber(j, "rmse", m.rmse());
  SetNumber(j, "max_rel", m.max_rel);
  SetNumber(j, "mean_rel", m.mean_rel());
  SetNumber(j, "max_abs_small", m.max_abs_small);
  j["small_count"] = m.small_count;
  SetNumber(j, "cosine", m.cosine());
  SetNumber(j, "max_ulp", m.max_ulp);
  SetNumber(j, "mean_ulp", m.mean_ulp());
  Json bounds = Json::array();
  for (double b : kUlpBinBounds) bounds.push_back(static_cast<int64_t>(b));
  j["ulp_histogram"] = {{"bounds", bounds}, {"counts", m.ulp_histogram}};
  const double rel = static_cast<double>(std::max<int64_t>(m.rel_count, 1));
  j["frac_rel_le_1e-3"] = m.rel_count ? m.rel_le_1e3 / rel : 1.0;
  j["frac_rel_le_5e-3"] = m.rel_count ? m.rel_le_5e3 / rel : 1.0;
  j["nan_mismatch"] = m.nan_mismatch;
  j["inf_mismatch"] = m.inf_mismatch;
  j["identical"] = m.count ? static_cast<double>(m.identical) / static_cast<double>(m.count) : 1.0;
  Json worst = Json::array();
  for (const WorstElement& w : m.worst) {
    Json e = Json::object();
    e["index"] = w.index;
    std::vector<int64_t> position(shape.size());
    int64_t rest = w.index;
    for (std::size_t d = shape.size(); d-- > 0;) {
      position[d] = shape[d] > 0 ? rest % shape[d] : 0;
      rest = shape[d] > 0 ? rest / shape[d] : 0;
    }
    e["position"] = position;
    SetNumber(e, "a", w.a);
    SetNumber(e, "b", w.b);
    SetNumber(e, "abs_error", w.error);
    worst.push_back(std::move(e));
  }
  j["worst"] = std::move(worst);
  return j;
}

}  // namespace parity
