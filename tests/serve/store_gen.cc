// SPDX-License-Identifier: Apache-2.0
// parity_store_gen DB N [BUNDLE...]: records N synthetic runs into the results store at DB
// through the store's own Record (store/store.h), so that the schema is the one parity writes:
// for tests/cli/test_serve.py and bench/serve_figures.py, which need stores of thousands of
// runs that real collects would take hours to make.
//
// Run i (0-based, started at 1.7e9 + 3600 i) is on node "node-(i % 4)", kind "accept" when
// i % 10 == 9 else "collect", status "failed" when i % 7 == 3 else "passed", plan "nightly",
// level 1 + i % 3, its bundle the (i % count)-th BUNDLE (none given: a path that does not
// exist). A collect records stream.triad (GB/s, higher is better, cv 0.01) at 100 + (i % 3)
// * 0.1, and 80 from the run at 2N/3 on (a planted regression), whose fingerprint also holds
// environment.OMP_NUM_THREADS "8" where the earlier ones hold "16"; and gemm.fp32 (GFLOP/s)
// at 500 throughout. An accept records geomean.stream (ratio) at 1.0.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "store/store.h"

int main(int argc, char** argv) {
  using parity::store::MetricRecord;
  using parity::store::RunRecord;
  if (argc < 3) {
    std::fprintf(stderr, "usage: parity_store_gen DB N [BUNDLE...]\n");
    return 2;
  }
  const std::string db = argv[1];
  const long n = std::strtol(argv[2], nullptr, 10);
  if (n <= 0 || n > 10000000) {
    std::fprintf(stderr, "parity_store_gen: N must be in [1, 10000000]\n");
    return 2;
  }
  std::vector<std::string> bundles(argv + 3, argv + argc);
  auto store = parity::store::Store::Open(db);
  if (!store.ok()) {
    std::fprintf(stderr, "parity_store_gen: %s\n", store.status().message().c_str());
    return 2;
  }
  const long change = 2 * n / 3;
  for (long i = 0; i < n; ++i) {
    RunRecord run;
    run.uid = "gen-" + std::to_string(i);
    run.kind = i % 10 == 9 ? "accept" : "collect";
    run.node = "node-" + std::to_string(i % 4);
    run.started = 1.7e9 + 3600.0 * static_cast<double>(i);
    run.finished = run.started + 600.0;
    run.level = static_cast<int>(1 + i % 3);
    run.backend = "cpu";
    run.plan = "nightly";
    run.bundle = bundles.empty() ? "/nonexistent/bundle-" + std::to_string(i)
                                 : bundles[static_cast<std::size_t>(i) % bundles.size()];
    run.status = i % 7 == 3 ? "failed" : "passed";
    run.tool_version = "gen";
    run.fingerprint = std::string(R"({"hostname":")") + run.node +
                      R"(","environment":{"OMP_NUM_THREADS":")" + (i >= change ? "8" : "16") +
                      R"("}})";
    run.stages = {{"env", "env", "passed", "", 1.0}, {"bench", "bench", run.status, "", 10.0}};
    if (run.kind == "collect") {
      MetricRecord triad{
          "bench", "stream.triad", "float64",
          "{}",    "GB/s",         i >= change ? 80.0 : 100.0 + static_cast<double>(i % 3) * 0.1,
          0.01,    true,           "higher"};
      MetricRecord gemm{"bench", "gemm.fp32", "float32", "{}",    "GFLOP/s",
                        500.0,   0.02,        true,      "higher"};
      run.metrics = {triad, gemm};
    } else {
      run.metrics = {{"throughput.bench.stream", "geomean.stream", "", "{}", "ratio", 1.0,
                      std::nullopt, true, "higher"}};
    }
    if (auto s = (*store)->Record(run); !s.ok()) {
      std::fprintf(stderr, "parity_store_gen: %s\n", s.message().c_str());
      return 2;
    }
  }
  return 0;
}
