// SPDX-License-Identifier: Apache-2.0
// parity bench [options] | parity bench list | parity bench compare BASE CAND: validated
// benchmark suites on a backend, and noise-aware ratios between two platforms' results.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_compare.h"
#include "bench/runner.h"
#include "bench/suite.h"
#include "cli/bench_ranks.h"
#include "cli/command.h"
#include "cli/common.h"
#include "cli/gemm_dump.h"
#include "core/exit_code.h"
#include "env/fingerprint.h"
#include "workload/model_run.h"
#include "workload/python_env.h"

namespace parity::cli {
namespace {

/// The items of a comma-separated list, empty ones left out.
std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size() && !list.empty()) {
    const std::size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

/// The flags of `--suite model`.
struct ModelFlags {
  std::string workloads;
  std::string python;
  std::string size = "small";
  int steps = 20;
  int warmup = 3;
  std::vector<std::string> settings;  ///< KEY=VALUE
  std::string curves;
  double timeout = 0.0;
};

void AddModelFlags(CLI::App& app, ModelFlags* f) {
  app.add_option("--workload", f->workloads,
                 "--suite model: comma-separated workloads, each a reference workload (recsys, "
                 "transformer, cnn; the default is all three), a model-library workload "
                 "(hf-llama, hf-bert, timm-vit, timm-resnet, torchrec-dlrm, minilm: a --python "
                 "with transformers, timm, TorchRec, such as scripts/venv's) or MODULE:FUNCTION "
                 "returning a parity_workloads.Workload (docs/WORKLOADS.md)")
      ->option_text("W[,W...]");
  app.add_option("--python", f->python,
                 "--suite model: the interpreter (default $PARITY_PYTHON, else the first python3 "
                 "on PATH that imports torch, else /usr/bin/python3)")
      ->option_text("PY");
  app.add_option("--size", f->size, "--suite model: tiny, small or base (default small)")
      ->check(CLI::IsMember({"tiny", "small", "base"}))
      ->option_text("S");
  app.add_option("--steps", f->steps, "--suite model: timed training steps (default 20)")
      ->check(CLI::Range(1, 1000000))
      ->option_text("N");
  app.add_option("--warmup", f->warmup,
                 "--suite model: steps run first and left out of the timing (default 3)")
      ->check(CLI::Range(0, 1000000))
      ->option_text("N");
  app.add_option("--set", f->settings,
                 "--suite model: a training setting, KEY=VALUE, repeatable: batch_size, "
                 "num_workers, pin_memory, prefetch_factor, persistent_workers, threads, "
                 "channels_last, amp (none, bf16, fp16)")
      ->option_text("KEY=VALUE");
  app.add_option("--curves", f->curves,
                 "--suite model: write each run's per-step losses to DIR/<workload>.csv "
                 "(step,value) for 'parity quality curve'")
      ->option_text("DIR");
  app.add_option("--timeout", f->timeout,
                 "--suite model: seconds one workload run may take (default: no limit)")
      ->check(CLI::PositiveNumber)
      ->option_text("S");
}

/// Parses "KEY=VALUE" settings into knob values (numbers, true/false, strings as the knob's
/// type wants).
Result<Json> ParseSettings(const std::vector<std::string>& items) {
  Json out = Json::object();
  for (const std::string& item : items) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::Invalid("", fmt::format("--set '{}': expected KEY=VALUE", item));
    }
    const std::string key = item.substr(0, eq);
    Result<Json> value = workload::KnobFromText(key, item.substr(eq + 1));
    if (!value.ok()) return Status::Invalid("", "--set: " + value.status().message());
    out[key] = *value;
  }
  return out;
}

int RunModel(const std::string& backend, int device, int repeat, const ModelFlags& flags,
             const CommonOptions& common) {
  workload::ModelSuiteOptions options;
  Result<Json> settings = ParseSettings(flags.settings);
  if (!settings.ok()) return Fail(settings.status());
  options.run.settings = *settings;
  if (common.threads > 0 && !options.run.settings.contains("threads")) {
    options.run.settings["threads"] = common.threads;
  }
  if (backend != "cpu" && backend != "cuda" && backend != "hip") {
    return Fail(Status::Invalid("", fmt::format("--backend '{}': the model suite runs on cpu, "
                                                "cuda or hip (torch's cuda device)",
                                                backend)));
  }
  options.run.device = backend == "cpu" ? "cpu" : fmt::format("cuda:{}", device);
  options.run.size = flags.size;
  options.run.steps = flags.steps;
  options.run.warmup = flags.warmup;
  if (flags.timeout > 0) options.run.timeout = flags.timeout;
  Result<std::string> python = workload::FindPython(flags.python);
  if (!python.ok()) return Fail(python.status());
  options.run.python = *python;
  options.workloads = SplitList(flags.workloads);
  options.repeat = repeat;
  options.backend = backend;
  options.platform = env::Fingerprint();
  if (!flags.curves.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(flags.curves, ec);
    if (ec) {
      return Fail(Status::Invalid(flags.curves, fmt::format("cannot make it: {}", ec.message())));
    }
    options.curves_dir = flags.curves;
  }
  if (!common.quiet) {
    options.progress = [](std::string_view line) {
      std::fprintf(stderr, "parity bench: %.*s\n", static_cast<int>(line.size()), line.data());
    };
  }
  Result<bench::BenchRun> run = workload::RunModelSuite(options);
  if (!run.ok()) return Fail(run.status());
  if (common.human()) std::fputs(bench::BenchText(*run).c_str(), stdout);
  if (Status s = WriteJsonOutput(common, run->document); !s.ok()) return Fail(s);
  return run->invalid > 0 ? kExitCheckFailed : kExitOk;
}

int RunSuites(int argc, char** argv) {
  CommonOptions common;
  bench::BenchOptions options;
  std::string suites;
  std::string dtypes;
  int64_t n = 0;
  int reps = 0;
  std::string gemm_dump;
  RankSuiteFlags rank_flags;
  auto app = MakeApp(
      "bench",
      "Run validated benchmark suites on one device of a backend and report each figure with "
      "its spread: stream (BabelStream's kernels), gemm, transfer, rng, latency ('parity bench "
      "list' describes each); peer (copies between every pair of the backend's devices, asked "
      "for by name); under mpirun, collective (nccl-tests' collectives, checked) and "
      "interconnect (point-to-point matrix between ranks); model (training throughput of "
      "PyTorch workloads: --workload, run alone). A result whose output is wrong is "
      "INVALID and the run exits 1; "
      "the JSON (format parity-bench v1) is written in every case. Other forms: 'parity bench "
      "list', 'parity bench compare BASE.json CAND.json'.",
      &common);
  app->add_option("--backend", options.backend,
                  "cpu (built in), cuda or hip (plugins; default "
                  "cpu); 'parity devices' lists them")
      ->option_text("NAME");
  app->add_option("--device", options.device, "device index (default 0)")
      ->check(CLI::Range(0, 1 << 20))
      ->option_text("I");
  app->add_option("--suite", suites,
                  "comma-separated suites (default: stream,gemm,transfer,rng,latency; peer "
                  "takes every device of the backend; collective and interconnect run across "
                  "MPI ranks, apart from the others)")
      ->option_text("S[,S...]");
  app->add_option("--dtype", dtypes,
                  "comma-separated dtypes to run: float64, float32 (stream, gemm, rng), tf32, "
                  "float16, bfloat16 (gemm) (default: every one a suite has)")
      ->option_text("D[,D...]");
  app->add_option("--n", n,
                  "elements per array for stream (default 2^25) and rng (2^26); float32 "
                  "elements per copy for peer (2^24)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 34))
      ->option_text("N");
  app->add_option("--reps", reps,
                  "timed repetitions per benchmark (default: stream 100, gemm 20..3 by size, "
                  "transfer 20, rng 20, latency 20, peer 10); one more runs first as warm-up")
      ->check(CLI::Range(1, 1000000))
      ->option_text("R");
  app->add_option("--repeat", options.repeat,
                  "run the whole selection K times; 'bench compare' then uses run-level "
                  "figures (default 1)")
      ->check(CLI::Range(1, 1000))
      ->option_text("K");
  app->add_flag("--full", options.suite.full,
                "the larger sweep: more GEMM orders (to 4096), transfers to 1 GiB");
  app->add_option("--seed", options.suite.seed, "seed of inputs and the Philox key (default 42)")
      ->option_text("S");
  app->add_option("--gemm-dump", gemm_dump,
                  "write the gemm suite's operands and products of order <= 1024 to DIR (new "
                  "or empty) as a parity-dump directory, one matmul record per product, for "
                  "'parity compare' or 'parity explain' against another backend's")
      ->option_text("DIR");
  AddRankSuiteFlags(*app, &rank_flags);
  ModelFlags model_flags;
  AddModelFlags(*app, &model_flags);
  if (auto code = Parse(*app, common, argc, argv)) return *code;
  options.suites = SplitList(suites);
  const bool model =
      std::find(options.suites.begin(), options.suites.end(), "model") != options.suites.end();
  const bool model_flags_given = !model_flags.workloads.empty() || !model_flags.python.empty() ||
                                 !model_flags.settings.empty() || !model_flags.curves.empty() ||
                                 app->count("--steps") + app->count("--warmup") +
                                         app->count("--size") + app->count("--timeout") >
                                     0;
  if (model) {
    if (options.suites.size() != 1) {
      return Fail(Status::Invalid(
          "", "--suite: model runs PyTorch workloads; run it apart from the other suites"));
    }
    if (!gemm_dump.empty() || n > 0 || !dtypes.empty() || reps > 0) {
      return Fail(Status::Invalid("",
                                  "--gemm-dump, --n, --reps and --dtype are not for --suite "
                                  "model (--steps, --warmup, --set are)"));
    }
    return RunModel(options.backend, options.device, options.repeat, model_flags, common);
  }
  if (model_flags_given) {
    return Fail(Status::Invalid("",
                                "--workload, --python, --size, --steps, --warmup, --set, "
                                "--curves and --timeout are for --suite model"));
  }
  int rank_suites = 0;
  for (const std::string& suite : options.suites) rank_suites += IsRankSuite(suite) ? 1 : 0;
  if (rank_suites > 0) {
    if (rank_suites != static_cast<int>(options.suites.size())) {
      return Fail(Status::Invalid("",
                                  "--suite: collective and interconnect run across MPI "
                                  "ranks; run them apart from the host suites"));
    }
    if (options.repeat != 1 || !gemm_dump.empty() || n > 0 || !dtypes.empty()) {
      return Fail(Status::Invalid("",
                                  "--repeat, --gemm-dump, --n and --dtype are for the host "
                                  "suites, not collective or interconnect"));
    }
    return RunRankSuites(options.suites, options.backend, reps, options.suite.seed, rank_flags,
                         common);
  }
  if (!rank_flags.collectives.empty() || !rank_flags.min_bytes.empty() ||
      !rank_flags.max_bytes.empty() || rank_flags.iters > 0 || !rank_flags.inject.empty()) {
    return Fail(Status::Invalid("",
                                "--collective, --min-bytes, --max-bytes, --iters and --inject "
                                "are for --suite collective or interconnect"));
  }
  options.suite.dtypes = SplitList(dtypes);
  for (const std::string& d : options.suite.dtypes) {
    if (d != "float64" && d != "float32" && d != "tf32" && d != "float16" && d != "bfloat16") {
      return Fail(Status::Invalid(
          "", fmt::format("--dtype: '{}' is not float64, float32, tf32, float16 or bfloat16", d)));
    }
  }
  if (n > 0) options.suite.n = static_cast<std::size_t>(n);
  if (reps > 0) options.suite.reps = reps;
  if (!common.quiet) {
    options.suite.progress = [](std::string_view line) {
      std::fprintf(stderr, "parity bench: %.*s\n", static_cast<int>(line.size()), line.data());
    };
  }
  std::optional<GemmDumpWriter> dump;
  if (!gemm_dump.empty()) {
    Result<GemmDumpWriter> writer = GemmDumpWriter::Create(
        gemm_dump, {{"backend", options.backend}, {"device", options.device}});
    if (!writer.ok()) return Fail(writer.status());
    dump = std::move(writer).value();
    options.suite.gemm_output = [&dump](const bench::GemmOutput& out) { return dump->Add(out); };
  }
  options.platform = env::Fingerprint();
  Result<bench::BenchRun> run = bench::RunBench(options);
  if (!run.ok()) return Fail(run.status());
  if (run->results.empty()) {
    return Fail(Status::Invalid(
        "", fmt::format("the selection runs no benchmark: no suite of '{}' has dtype '{}'",
                        suites.empty() ? "stream,gemm,transfer,rng,latency" : suites, dtypes)));
  }
  if (common.human()) std::fputs(bench::BenchText(*run).c_str(), stdout);
  if (Status s = WriteJsonOutput(common, run->document); !s.ok()) return Fail(s);
  if (run->invalid > 0) return kExitCheckFailed;
  if (run->ok == 0 && run->skipped > 0) {
    std::fprintf(stderr,
                 "parity: error: nothing asked for can run here: every benchmark was skipped "
                 "(reasons above)\n");
    return kExitUnavailable;
  }
  return kExitOk;
}

int RunList(int argc, char** argv) {
  CommonOptions common;
  auto app =
      MakeApp("bench list", "Describe each suite: kernels, sizes, units, validation.", &common);
  if (auto code = Parse(*app, common, argc, argv)) return *code;
  Json doc = Document("parity-bench-suites", 1);
  Json list = Json::array();
  std::string text;
  for (const bench::Suite& suite : bench::Suites()) {
    list.push_back({{"name", suite.name}, {"description", suite.description}});
    text += fmt::format("{}\n  {}\n\n", suite.name, suite.description);
  }
  const std::pair<const char*, const char*> rank_suites[] = {
      {"collective",
       "under mpirun, one rank per process: all_reduce, all_gather, reduce_scatter, alltoall, "
       "broadcast, sendrecv on float32, sizes --min-bytes..--max-bytes (8 B to 1 GiB, x2), out "
       "of place and in place; time, algbw and busbw as nccl-tests defines them (all_reduce "
       "busbw = algbw*2(n-1)/n, all_gather/reduce_scatter/alltoall (n-1)/n, broadcast/sendrecv "
       "1); integer inputs whose results are exact, every output element checked (#wrong). "
       "Transport: MPI on host buffers"},
      {"interconnect",
       "under mpirun: for every ordered pair of ranks, one-way and bidirectional bandwidth of "
       "--max-bytes messages (default 64 MiB, GB/s) and latency (half the round trip of 8 B, "
       "us); every message checked"},
      {"model",
       "training throughput of PyTorch workloads (python/parity_workloads' harness, run by "
       "--python): recsys (DLRM-shaped), transformer, cnn, or MODULE:FUNCTION; forward, "
       "backward and Adam step on a real DataLoader, --warmup steps left out, the device "
       "synchronised; model.<workload>.train in samples/s per step, tokens/s, step-time "
       "percentiles, data-wait share, peak memory and every step's loss; invalid when a loss "
       "is not finite"}};
  for (const auto& [name, description] : rank_suites) {
    list.push_back({{"name", name}, {"description", description}});
    text += fmt::format("{}\n  {}\n\n", name, description);
  }
  doc["suites"] = std::move(list);
  if (common.human()) std::fputs(text.c_str(), stdout);
  if (Status s = WriteJsonOutput(common, doc); !s.ok()) return Fail(s);
  return kExitOk;
}

int RunCompareResults(int argc, char** argv) {
  CommonOptions common;
  bench::BenchCompareOptions options;
  double min_ratio = 0.0;
  auto app =
      MakeApp("bench compare",
              "Compare two parity-bench results: per benchmark the ratio of medians (candidate's "
              "performance over base's, so above 1 is faster) with a confidence interval, verdict "
              "faster, slower or same (the interval contains 1), and the geometric mean per suite. "
              "With results of 'parity bench --repeat K' on both sides the interval uses run-level "
              "figures (Welch's t on log medians); otherwise it is a bootstrap over one run's "
              "samples, which reflects within-run noise only. Exit 1 with --min-ratio R when any "
              "ratio's upper bound is below R or a result is invalid.",
              &common);
  app->add_option("base", options.base_path, "the trusted platform's parity-bench JSON")
      ->required();
  app->add_option("cand", options.cand_path, "the candidate's parity-bench JSON")->required();
  auto* min_ratio_opt =
      app->add_option("--min-ratio", min_ratio, "fail when a ratio's upper bound is below R")
          ->check(CLI::PositiveNumber)
          ->option_text("R");
  app->add_flag("--allow-param-mismatch", options.allow_param_mismatch,
                "compare benchmarks that ran with different parameters (n, reps)");
  app->add_option("--confidence", options.confidence, "interval confidence (default 0.95)")
      ->check(CLI::Range(0.5, 0.999))
      ->option_text("C");
  if (auto code = Parse(*app, common, argc, argv)) return *code;
  if (min_ratio_opt->count() > 0) options.min_ratio = min_ratio;
  auto base = bench::LoadBenchDocument(options.base_path);
  if (!base.ok()) return Fail(base.status());
  auto cand = bench::LoadBenchDocument(options.cand_path);
  if (!cand.ok()) return Fail(cand.status());
  auto report = bench::CompareBench(*base, *cand, options);
  if (!report.ok()) return Fail(report.status());
  if (common.human()) std::fputs(bench::BenchCompareText(*report).c_str(), stdout);
  if (Status s = WriteJsonOutput(common, bench::BenchCompareJson(*report)); !s.ok()) {
    return Fail(s);
  }
  return report->failures > 0 ? kExitCheckFailed : kExitOk;
}

}  // namespace

int RunBench(int argc, char** argv) {
  if (argc > 1) {
    const std::string_view first = argv[1];
    if (first == "list") return RunList(argc - 1, argv + 1);
    if (first == "compare") return RunCompareResults(argc - 1, argv + 1);
  }
  return RunSuites(argc, argv);
}

}  // namespace parity::cli
