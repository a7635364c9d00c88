// SPDX-License-Identifier: Apache-2.0
#include "fleet/collective_bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "bench/stats.h"

namespace parity::fleet {
namespace {

using bench::BenchResult;
using bench::Outcome;

// Transport memory freed when it goes out of scope.
class Buffer {
 public:
  Buffer(Transport& t, std::size_t count) : transport_(t) {
    auto p = t.Allocate(std::max<std::size_t>(count, 1) * sizeof(float));
    if (p.ok()) {
      ptr_ = *p;
    } else {
      error_ = p.status().message();
    }
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
    if (ptr_ != nullptr) transport_.Free(ptr_);
  }
  void* get() const { return ptr_; }
  const std::string& error() const { return error_; }

 private:
  Transport& transport_;
  void* ptr_ = nullptr;
  std::string error_;
};

std::string SizeKey(std::size_t bytes, bool in_place) {
  return fmt::format("{} {}", bytes, in_place ? "in-place" : "out-of-place");
}

// One collective at one size, one placement: checked once, then timed.
Result<BenchResult> RunOne(const MpiSession& session, Transport& t, const Collective& c,
                           const Layout& layout, bool in_place, const CollectiveOptions& options) {
  const int rank = session.rank(), ranks = session.size();
  BenchResult r;
  r.benchmark = fmt::format("collective.{}", c.name);
  r.dtype = "float32";
  r.unit = "GB/s";
  r.implementation = t.implementation();
  r.params = {{"size", SizeKey(layout.bytes, in_place)},
              {"bytes", layout.bytes},
              {"count", layout.send_count},
              {"ranks", ranks},
              {"in_place", in_place},
              {"transport", std::string(t.name())}};

  const std::size_t buffer_count = std::max(layout.send_count, layout.recv_count);
  std::vector<float> input, expected, got;
  std::string problem;
  try {
    input.resize(layout.send_count);
    expected.resize(layout.recv_count);
    got.assign(in_place ? buffer_count : layout.recv_count,
               std::numeric_limits<float>::quiet_NaN());
  } catch (const std::bad_alloc&) {
    problem = fmt::format("rank {}: no host memory for {} bytes", rank, layout.bytes);
  }
  Buffer send(t, in_place ? 0 : layout.send_count);
  Buffer recv(t, in_place ? buffer_count : layout.recv_count);
  if (problem.empty() && !send.error().empty())
    problem = fmt::format("rank {}: {}", rank, send.error());
  if (problem.empty() && !recv.error().empty())
    problem = fmt::format("rank {}: {}", rank, recv.error());
  const std::vector<std::string> problems = session.GatherAll(problem);
  for (const std::string& p : problems) {
    if (!p.empty()) {
      r.outcome = Outcome::kSkipped;
      r.reason = p;
      return r;
    }
  }

  FillInput(c.kind, rank, ranks, options.seed, input);
  FillExpected(c.kind, rank, ranks, options.seed, expected);
  // The output buffer starts as NaN, so an element nothing wrote is counted wrong.
  auto prepare = [&]() -> Status {
    if (in_place) {
      std::vector<float> initial = got;
      std::fill(initial.begin(), initial.end(), std::numeric_limits<float>::quiet_NaN());
      const std::size_t at = InPlaceInputOffset(c.kind, layout, rank, ranks);
      std::copy(input.begin(), input.end(), initial.begin() + static_cast<std::ptrdiff_t>(at));
      return t.Upload(recv.get(), initial.data(), initial.size());
    }
    PARITY_RETURN_IF_ERROR(t.Upload(send.get(), input.data(), input.size()));
    return t.Upload(recv.get(), got.data(), got.size());
  };
  auto run = [&]() -> Status {
    return in_place ? t.RunInPlace(c.kind, layout, recv.get())
                    : t.Run(c.kind, layout, send.get(), recv.get());
  };

  PARITY_RETURN_IF_ERROR(prepare());
  PARITY_RETURN_IF_ERROR(run());
  PARITY_RETURN_IF_ERROR(t.Synchronize());
  const std::size_t at = in_place ? t.InPlaceResultOffset(c.kind, layout) : 0;
  std::vector<float> result(layout.recv_count);
  {
    std::vector<float> whole(got.size());
    PARITY_RETURN_IF_ERROR(t.Download(whole.data(), recv.get(), whole.size()));
    std::copy_n(whole.begin() + static_cast<std::ptrdiff_t>(at), layout.recv_count, result.begin());
  }
  if (options.corrupt_rank && *options.corrupt_rank == rank && !result.empty()) {
    result[result.size() / 2] += 1.0f;
  }
  const std::uint64_t wrong = session.SumAll(CountWrong(result, expected, 0));
  const std::uint64_t checked = session.SumAll(result.size());

  const int iters = options.iters.value_or(DefaultIterations(layout.bytes));
  for (int i = 0; i < iters; ++i) PARITY_RETURN_IF_ERROR(run());  // warm-up
  PARITY_RETURN_IF_ERROR(t.Synchronize());
  const double factor = BusBandwidthFactor(c.kind, ranks);
  std::vector<double> times, algbw;
  for (int rep = 0; rep < options.reps; ++rep) {
    session.Barrier();
    const double start = MpiSession::Now();
    for (int i = 0; i < iters; ++i) PARITY_RETURN_IF_ERROR(run());
    PARITY_RETURN_IF_ERROR(t.Synchronize());
    // The slowest rank's time: a collective is done when it is done everywhere.
    const double seconds = session.MaxAll((MpiSession::Now() - start) / iters);
    times.push_back(seconds);
    algbw.push_back(AlgorithmBandwidth(layout.bytes, std::max(seconds, 1e-9)));
    r.samples.push_back(algbw.back() * factor);
  }
  r.best = *std::max_element(r.samples.begin(), r.samples.end());
  const double median_time = bench::Median(times);
  r.extra = {{"time_us", median_time * 1e6},
             {"algbw", bench::Median(algbw)},
             {"busbw", bench::Median(r.samples)},
             {"wrong", wrong}};
  r.validation = {{"method",
                   "integer inputs whose sums are exact in float32; every output element of "
                   "every rank compared in ulps on the ordered-integer mapping"},
                  {"max_ulps", 0},
                  {"checked", checked},
                  {"wrong", wrong},
                  {"busbw_factor", factor}};
  if (wrong > 0) {
    r.outcome = Outcome::kInvalid;
    r.reason = fmt::format("{} of {} output elements wrong", wrong, checked);
  }
  return r;
}

}  // namespace

Status CheckCollectiveNames(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (FindCollective(name) == nullptr) {
      std::string known;
      for (const Collective& c : Collectives())
        known += (known.empty() ? "" : ", ") + std::string(c.name);
      return Status::Invalid("", fmt::format("--collective: '{}' is not one of {}", name, known));
    }
  }
  return Status::Ok();
}

int DefaultIterations(std::size_t bytes) {
  constexpr std::size_t kBudget = std::size_t{64} << 20;  // bytes moved per sample, at least
  if (bytes == 0) return 20;
  return static_cast<int>(std::clamp<std::size_t>(kBudget / bytes, 1, 20));
}

Result<std::vector<BenchResult>> RunCollectiveSuite(const MpiSession& session, Transport& transport,
                                                    const CollectiveOptions& options) {
  PARITY_RETURN_IF_ERROR(CheckCollectiveNames(options.collectives));
  if (options.min_bytes == 0 || options.min_bytes > options.max_bytes) {
    return Status::Invalid("", fmt::format("--min-bytes {} and --max-bytes {}: need 0 < min <= max",
                                           options.min_bytes, options.max_bytes));
  }
  std::vector<const Collective*> selected;
  for (const Collective& c : Collectives()) {
    if (options.collectives.empty() ||
        std::find(options.collectives.begin(), options.collectives.end(), c.name) !=
            options.collectives.end()) {
      selected.push_back(&c);
    }
  }
  std::vector<BenchResult> results;
  for (const Collective* c : selected) {
    if (options.progress && session.rank() == 0) {
      options.progress(fmt::format("{} over {} ranks", c->name, session.size()));
    }
    std::set<std::size_t> done;  // sizes already run after rounding to whole parts
    for (std::size_t bytes = options.min_bytes; bytes <= options.max_bytes; bytes *= 2) {
      const std::optional<Layout> layout = LayoutFor(c->kind, bytes, session.size());
      if (layout && done.insert(layout->bytes).second) {
        for (const bool in_place : {false, true}) {
          if (!transport.Supports(c->kind, in_place)) continue;
          PARITY_ASSIGN_OR_RETURN(BenchResult r,
                                  RunOne(session, transport, *c, *layout, in_place, options));
          results.push_back(std::move(r));
        }
      }
      if (bytes > std::numeric_limits<std::size_t>::max() / 2) break;
    }
  }
  return results;
}

std::string CollectiveText(const std::vector<BenchResult>& results) {
  struct Row {
    std::string out, in;
  };
  std::map<std::string, std::map<std::size_t, Row>> rows;
  std::vector<std::string> order;
  uint64_t wrong_total = 0;
  double busbw_sum = 0.0;
  int busbw_count = 0;
  for (const BenchResult& r : results) {
    if (!rows.contains(r.benchmark)) order.push_back(r.benchmark);
    const std::size_t bytes = r.params.value("bytes", std::size_t{0});
    std::string cell;
    if (r.outcome == Outcome::kSkipped) {
      cell = fmt::format("{:>40}", "SKIP: " + r.reason.substr(0, 34));
    } else {
      const uint64_t wrong = r.extra.value("wrong", uint64_t{0});
      wrong_total += wrong;
      busbw_sum += r.extra.value("busbw", 0.0);
      ++busbw_count;
      cell = fmt::format("{:>10.2f} {:>9.4f} {:>9.4f} {:>8}", r.extra.value("time_us", 0.0),
                         r.extra.value("algbw", 0.0), r.extra.value("busbw", 0.0), wrong);
    }
    Row& row = rows[r.benchmark][bytes];
    (r.params.value("in_place", false) ? row.in : row.out) = cell;
  }
  std::string text;
  const std::string empty = fmt::format("{:>40}", "-");
  for (const std::string& name : order) {
    text += fmt::format("\n# {}\n#{:>14} {:>12}  {:>40}  {:>40}\n", name, "size(B)", "count",
                        "out-of-place: time(us) algbw busbw #wrong",
                        "in-place: time(us) algbw busbw #wrong");
    for (const auto& [bytes, row] : rows[name]) {
      text += fmt::format(" {:>14} {:>12}  {}  {}\n", bytes, bytes / sizeof(float),
                          row.out.empty() ? empty : row.out, row.in.empty() ? empty : row.in);
    }
  }
  text += fmt::format("\n# Out of bounds values : {} {}\n", wrong_total,
                      wrong_total == 0 ? "OK" : "FAILED");
  if (busbw_count > 0) {
    text += fmt::format("# Avg bus bandwidth    : {:.4f} GB/s\n", busbw_sum / busbw_count);
  }
  return text;
}

Json RanksDocument(const MpiSession& session, Json platform, std::string_view backend,
                   const std::vector<std::string>& suites, Json settings, double seconds,
                   const std::vector<BenchResult>& results) {
  const std::vector<std::string> hosts = session.GatherAll(session.host());
  Json doc = Document("parity-bench", 1);
  if (!platform.is_object()) platform = Json::object();
  const std::set<std::string> distinct(hosts.begin(), hosts.end());
  platform["ranks"] = hosts;
  platform["mpi"] = session.library();
  platform["device"] = {{"backend", std::string(backend)},
                        {"name", fmt::format("{} ranks on {} host{}", hosts.size(), distinct.size(),
                                             distinct.size() == 1 ? "" : "s")}};
  doc["platform"] = std::move(platform);
  doc["backend"] = std::string(backend);
  doc["device"] = doc["platform"]["device"]["name"];
  doc["suites"] = suites;
  doc["repeat"] = 1;
  doc["settings"] = std::move(settings);
  doc["duration_s"] = seconds;
  int ok = 0, invalid = 0, skipped = 0;
  Json list = Json::array();
  for (const BenchResult& r : results) {
    ok += r.outcome == Outcome::kOk;
    invalid += r.outcome == Outcome::kInvalid;
    skipped += r.outcome == Outcome::kSkipped;
    list.push_back(bench::ToJson(r));
  }
  doc["summary"] = {{"ok", ok}, {"invalid", invalid}, {"skipped", skipped}};
  doc["results"] = std::move(list);
  return doc;
}

}  // namespace parity::fleet
