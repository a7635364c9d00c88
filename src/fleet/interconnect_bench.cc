// SPDX-License-Identifier: Apache-2.0
// The interconnect suite (RunInterconnectSuite, InterconnectText in collective_bench.h):
// point-to-point bandwidth, one way and both ways, and latency between every pair of ranks.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "bench/pair_matrix.h"
#include "bench/stats.h"
#include "bench/suite.h"
#include "fleet/collective_bench.h"

namespace parity::fleet {
namespace {

using bench::BenchResult;
using bench::Outcome;

constexpr int kLatencyIterations = 100;

struct Pair {
  int src, dst;
};

BenchResult MakeResult(std::string benchmark, std::string unit, const Pair& p, std::size_t bytes,
                       std::string_view direction, const Transport& t) {
  BenchResult r;
  r.benchmark = std::move(benchmark);
  r.unit = std::move(unit);
  r.higher_is_better = r.unit != "us";
  r.implementation = t.implementation();
  r.params = {{"size", fmt::format("{}->{} {} {}", p.src, p.dst, bytes, direction)},
              {"src", p.src},
              {"dst", p.dst},
              {"bytes", bytes},
              {"direction", std::string(direction)},
              {"transport", std::string(t.name())}};
  return r;
}

}  // namespace

Result<std::vector<BenchResult>> RunInterconnectSuite(const MpiSession& session, Transport& t,
                                                      const InterconnectOptions& options) {
  const int rank = session.rank(), ranks = session.size();
  std::vector<BenchResult> results;
  if (ranks < 2) {
    results.push_back(bench::Skipped("interconnect.bandwidth", "", {{"ranks", ranks}}, "GB/s",
                                     "one rank: there is no pair to measure (start it under "
                                     "mpirun -np 2 or more)"));
    return results;
  }
  const std::size_t count = std::max<std::size_t>(options.bytes / sizeof(float), 1);
  const std::size_t bytes = count * sizeof(float);
  auto send = t.Allocate(bytes);
  auto recv = t.Allocate(bytes);
  const bool allocated = session.AllTrue(send.ok() && recv.ok());
  if (!allocated) {
    if (send.ok()) t.Free(*send);
    if (recv.ok()) t.Free(*recv);
    results.push_back(bench::Skipped("interconnect.bandwidth", "", {{"bytes", bytes}}, "GB/s",
                                     fmt::format("a rank could not allocate 2 x {} bytes", bytes)));
    return results;
  }
  struct Free {
    Transport& t;
    void* a;
    void* b;
    ~Free() {
      t.Free(a);
      t.Free(b);
    }
  } free_both{t, *send, *recv};

  std::vector<float> pattern(count), expected(count), got(count);
  const std::vector<float> nan(count, std::numeric_limits<float>::quiet_NaN());
  FillInput(CollectiveKind::kAllReduce, rank, ranks, options.seed, pattern);
  PARITY_RETURN_IF_ERROR(t.Upload(*send, pattern.data(), count));
  const int iters = options.iters.value_or(DefaultIterations(bytes));

  // Checks one message from p.src to p.dst (both directions when `both`): wrong elements.
  auto check = [&](const Pair& p, bool both) -> Result<std::uint64_t> {
    std::uint64_t wrong = 0;
    if (rank == p.src || rank == p.dst) {
      const int peer = rank == p.src ? p.dst : p.src;
      PARITY_RETURN_IF_ERROR(t.Upload(*recv, nan.data(), count));
      if (both) {
        PARITY_RETURN_IF_ERROR(t.Exchange(*send, *recv, count, peer));
      } else if (rank == p.src) {
        PARITY_RETURN_IF_ERROR(t.Send(*send, count, peer));
      } else {
        PARITY_RETURN_IF_ERROR(t.Recv(*recv, count, peer));
      }
      if (both || rank == p.dst) {
        FillInput(CollectiveKind::kAllReduce, peer, ranks, options.seed, expected);
        PARITY_RETURN_IF_ERROR(t.Download(got.data(), *recv, count));
        wrong = CountWrong(got, expected, 0);
      }
    }
    return session.SumAll(wrong);
  };

  for (int src = 0; src < ranks; ++src) {
    for (int dst = 0; dst < ranks; ++dst) {
      if (src == dst) continue;
      const Pair p{src, dst};
      if (options.progress && rank == 0) {
        options.progress(fmt::format("interconnect {} -> {}", src, dst));
      }
      // One way.
      BenchResult uni = MakeResult("interconnect.bandwidth", "GB/s", p, bytes, "uni", t);
      PARITY_ASSIGN_OR_RETURN(const std::uint64_t wrong, check(p, false));
      float ack = 0.0f;
      std::vector<double> times;
      for (int rep = 0; rep <= options.reps; ++rep) {  // rep 0 is the warm-up
        session.Barrier();
        double seconds = 0.0;
        if (rank == src) {
          const double start = MpiSession::Now();
          for (int i = 0; i < iters; ++i) PARITY_RETURN_IF_ERROR(t.Send(*send, count, dst));
          PARITY_RETURN_IF_ERROR(t.Recv(*recv, 1, dst));  // the receiver has everything
          seconds = (MpiSession::Now() - start) / iters;
        } else if (rank == dst) {
          for (int i = 0; i < iters; ++i) PARITY_RETURN_IF_ERROR(t.Recv(*recv, count, src));
          PARITY_RETURN_IF_ERROR(t.Send(&ack, 1, src));
        }
        seconds = session.MaxAll(seconds);
        if (rep > 0) times.push_back(seconds);
      }
      for (double s : times) uni.samples.push_back(AlgorithmBandwidth(bytes, std::max(s, 1e-9)));
      uni.best = *std::max_element(uni.samples.begin(), uni.samples.end());
      uni.extra = {{"time_us", bench::Median(times) * 1e6}, {"wrong", wrong}};
      uni.validation = {{"method", "every element received compared with the sender's pattern"},
                        {"wrong", wrong}};
      if (wrong > 0) {
        uni.outcome = Outcome::kInvalid;
        uni.reason = fmt::format("{} of {} elements received wrong", wrong, count);
      }
      results.push_back(std::move(uni));

      // Latency: half the round trip of 8 bytes.
      BenchResult lat = MakeResult("interconnect.latency", "us", p, 8, "pingpong", t);
      times.clear();
      for (int rep = 0; rep <= options.reps; ++rep) {
        session.Barrier();
        double seconds = 0.0;
        if (rank == src) {
          const double start = MpiSession::Now();
          for (int i = 0; i < kLatencyIterations; ++i) {
            PARITY_RETURN_IF_ERROR(t.Send(*send, 2, dst));
            PARITY_RETURN_IF_ERROR(t.Recv(*recv, 2, dst));
          }
          seconds = (MpiSession::Now() - start) / kLatencyIterations / 2;
        } else if (rank == dst) {
          for (int i = 0; i < kLatencyIterations; ++i) {
            PARITY_RETURN_IF_ERROR(t.Recv(*recv, 2, src));
            PARITY_RETURN_IF_ERROR(t.Send(*send, 2, src));
          }
        }
        seconds = session.MaxAll(seconds);
        if (rep > 0) lat.samples.push_back(std::max(seconds, 1e-12) * 1e6);
      }
      lat.best = *std::min_element(lat.samples.begin(), lat.samples.end());
      lat.extra = {{"time_us", bench::Median(lat.samples)}};
      lat.validation = {{"method", "timing only: the bandwidth messages are checked"}};
      results.push_back(std::move(lat));

      // Both ways at once, once per unordered pair.
      if (src > dst) continue;
      BenchResult bi = MakeResult("interconnect.bandwidth", "GB/s", p, bytes, "bi", t);
      PARITY_ASSIGN_OR_RETURN(const std::uint64_t bi_wrong, check(p, true));
      times.clear();
      for (int rep = 0; rep <= options.reps; ++rep) {
        session.Barrier();
        double seconds = 0.0;
        if (rank == src || rank == dst) {
          const int peer = rank == src ? dst : src;
          const double start = MpiSession::Now();
          for (int i = 0; i < iters; ++i) {
            PARITY_RETURN_IF_ERROR(t.Exchange(*send, *recv, count, peer));
          }
          seconds = (MpiSession::Now() - start) / iters;
        }
        seconds = session.MaxAll(seconds);
        if (rep > 0) times.push_back(seconds);
      }
      for (double s : times) {
        bi.samples.push_back(AlgorithmBandwidth(2 * bytes, std::max(s, 1e-9)));
      }
      bi.best = *std::max_element(bi.samples.begin(), bi.samples.end());
      bi.extra = {{"time_us", bench::Median(times) * 1e6}, {"wrong", bi_wrong}};
      bi.validation = {{"method",
                        "every element received, both ways, compared with the "
                        "sender's pattern"},
                       {"wrong", bi_wrong}};
      if (bi_wrong > 0) {
        bi.outcome = Outcome::kInvalid;
        bi.reason = fmt::format("{} of {} elements received wrong", bi_wrong, 2 * count);
      }
      results.push_back(std::move(bi));
    }
  }
  return results;
}

std::string InterconnectText(const std::vector<BenchResult>& results, int ranks) {
  return bench::PairMatrixText(
      results, ranks, "rank(row) -> rank(column)", [](const BenchResult& r) -> std::string {
        if (r.benchmark == "interconnect.latency") {
          return "latency (us, half the round trip of 8 B)";
        }
        return fmt::format("{} bandwidth (GB/s, {} B messages)",
                           r.params.value("direction", "") == "bi" ? "bidirectional" : "one-way",
                           r.params.value("bytes", std::size_t{0}));
      });
}

}  // namespace parity::fleet
