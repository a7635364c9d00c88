// SPDX-License-Identifier: Apache-2.0
// parity rng philox|layout|check: reproduce Philox streams, show PyTorch's RNG layout, compare
// random tensors from two platforms.
#include <fmt/format.h>
#include <fmt/printf.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/common.h"
#include "core/exit_code.h"
#include "io/npy.h"
#include "rng/check.h"
#include "rng/layout.h"
#include "rng/philox.h"

namespace parity::cli {
namespace {

int RunCheck(int argc, char** argv) {
  CommonOptions common;
  RngCheckOptions options;
  auto app = MakeApp(
      "rng check",
      "Compare two tensors of random numbers from two platforms: the share of bit-identical "
      "values, max/mean difference, the two-sample Kolmogorov-Smirnov test (exact p for small "
      "samples, asymptotic otherwise, as scipy.stats.ks_2samp), moments, and a chi-square "
      "goodness-of-fit per side against U(0,1) or N(0,1). Verdict same-stream (bit-identical), "
      "same-distribution (KS p >= alpha) or different-distribution (exit 1). Bitwise equality "
      "across GPU models is not a valid criterion: PyTorch's Philox offsets depend on the "
      "launch grid.",
      &common);
  app->add_option("a", options.a, "A's values: a tensor file of one tensor, or text")->required();
  app->add_option("b", options.b, "B's values")->required();
  app->add_option("--dist", options.dist,
                  "reference distribution for chi-square: uniform, normal or auto (default: "
                  "uniform when every value lies in [0, 1])")
      ->option_text("D");
  app->add_option("--alpha", options.alpha, "significance level (default 0.01)")
      ->check(CLI::Range(0.0, 1.0))
      ->option_text("A");
  if (auto code = Parse(*app, common, argc, argv)) return *code;
  auto report = RunRngCheck(options);
  if (!report.ok()) return Fail(report.status());
  if (common.human()) std::fputs(RngCheckText(*report).c_str(), stdout);
  if (Status s = WriteJsonOutput(common, RngCheckJson(*report)); !s.ok()) return Fail(s);
  return report->verdict == "different-distribution" ? kExitCheckFailed : kExitOk;
}

int RunPhilox(int argc, char** argv) {
  CommonOptions common;
  uint64_t seed = 0, subsequence = 0, offset = 0;
  int64_t count = 0;
  std::string dist = "uint32", out;
  auto app = MakeApp(
      "rng philox",
      "The exact stream of cuRAND's device API for Philox4x32-10: curand_init(seed, "
      "subsequence, offset, &state), then COUNT calls of curand (uint32), curand_uniform "
      "(uniform), curand_normal (normal), curand_uniform_double or curand_normal_double, as "
      "CUDA 13's headers define them. Normals use the C library's sin/cos (cuRAND's host "
      "branch); the device's __sincosf/sincospi may differ in the last bits. One value per "
      "line (%.9g for float, %.17g for double), or --out FILE.npy.",
      &common);
  app->add_option("--seed", seed, "the seed (64 bits)")->required()->option_text("S");
  app->add_option("--subsequence", subsequence, "the subsequence (default 0)")->option_text("Q");
  app->add_option("--offset", offset, "32-bit values to skip (default 0)")->option_text("O");
  app->add_option("--count", count, "how many values")
      ->required()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 32))
      ->option_text("N");
  app->add_option("--dist", dist, "uint32, uniform, normal, uniform_double or normal_double")
      ->check(CLI::IsMember({"uint32", "uniform", "normal", "uniform_double", "normal_double"}))
      ->option_text("D");
  app->add_option("--out", out, "write the values to an .npy file instead")->option_text("FILE");
  if (auto code = Parse(*app, common, argc, argv)) return *code;
  auto stream = PhiloxStream(seed, subsequence, offset, count, dist);
  if (!stream.ok()) return Fail(stream.status());
  if (!out.empty()) {
    if (Status s = WriteNpy(out, *stream); !s.ok()) return Fail(s);
    return kExitOk;
  }
  const DType dtype = stream->dtype();
  const auto n = static_cast<std::size_t>(count);
  std::span<const std::byte> buffer = stream->bytes();
  std::string text;
  text.reserve(n * 12);
  for (std::size_t i = 0; i < n; ++i) {
    const std::byte* p = buffer.data() + i * ItemSize(dtype);
    if (dtype == DType::kUInt32) {
      uint32_t v;
      std::memcpy(&v, p, sizeof v);
      text += fmt::format("{}\n", v);
    } else if (dtype == DType::kFloat32) {
      float v;
      std::memcpy(&v, p, sizeof v);
      text += fmt::sprintf("%.9g\n", v);
    } else {
      double v;
      std::memcpy(&v, p, sizeof v);
      text += fmt::sprintf("%.17g\n", v);
    }
    if (text.size() > (1 << 20)) {
      std::fputs(text.c_str(), stdout);
      text.clear();
    }
  }
  std::fputs(text.c_str(), stdout);
  return kExitOk;
}

int RunLayout(int argc, char** argv) {
  CommonOptions common;
  int64_t numel = 0, show = 16;
  std::vector<uint32_t> sm_counts;
  uint32_t threads_per_sm = 2048, block = 256, unroll = 0;
  std::string dtype = "float32";
  std::optional<uint64_t> seed;
  uint64_t offset = 0;
  auto app = MakeApp(
      "rng layout",
      "Which thread, subsequence and offset PyTorch's CUDA/ROCm uniform_ kernel uses for each "
      "element (calc_execution_policy and the grid-stride loop of "
      "aten/src/ATen/native/cuda/DistributionTemplates.h): grid = min(ceil(numel/block), "
      "SMs * threads_per_sm/block); element i comes from thread i mod (block*grid) of its "
      "grid-stride round, i.e. curand_init(seed, thread, offset). Give two --sm-count values "
      "to see how many elements change source between two GPUs; --seed also computes the "
      "values torch.rand writes.",
      &common);
  app->add_option("--numel", numel, "elements in the tensor")
      ->required()
      ->check(CLI::Range(int64_t{1}, (int64_t{1} << 31) - 1))
      ->option_text("N");
  app->add_option("--sm-count", sm_counts,
                  "multiprocessors (SMs, or CUs on AMD); two values compare two devices")
      ->required()
      ->expected(1, 2)
      ->check(CLI::Range(1u, 1u << 20))
      ->option_text("C [C2]");
  app->add_option("--threads-per-sm", threads_per_sm, "maxThreadsPerMultiProcessor (default 2048)")
      ->check(CLI::Range(1u, 1u << 20))
      ->option_text("T");
  app->add_option("--block", block, "threads per block (default 256)")
      ->check(CLI::Range(1u, 1u << 16))
      ->option_text("B");
  app->add_option("--dtype", dtype, "float32 (curand_uniform4) or float64 (curand_uniform2_double)")
      ->check(CLI::IsMember({"float32", "float64"}))
      ->option_text("D");
  app->add_option("--unroll", unroll,
                  "values per curand call (default: 4 for float32, 2 for "
                  "float64)")
      ->check(CLI::Range(1u, 4u))
      ->option_text("U");
  app->add_option("--seed", seed, "also compute the values torch.rand writes")->option_text("S");
  app->add_option("--offset", offset,
                  "the generator's Philox offset (default 0: right after "
                  "manual_seed)")
      ->option_text("O");
  app->add_option("--show", show, "elements to list (default 16)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20))
      ->option_text("N");
  if (auto code = Parse(*app, common, argc, argv)) return *code;
  if (unroll == 0) unroll = dtype == "float64" ? 2 : 4;
  std::vector<LaunchPolicy> policies;
  for (uint32_t sm : sm_counts) {
    policies.push_back(TorchLaunchPolicy(numel, sm, threads_per_sm, block, unroll));
  }
  Json doc = Document("parity-rng-layout", 1);
  doc["numel"] = numel;
  doc["dtype"] = dtype;
  if (seed) doc["seed"] = *seed;
  doc["offset"] = offset;
  Json jp = Json::array();
  std::string text = fmt::format("parity rng layout: {} elements ({})\n", numel, dtype);
  for (std::size_t k = 0; k < policies.size(); ++k) {
    const LaunchPolicy& p = policies[k];
    jp.push_back({{"sm_count", sm_counts[k]},
                  {"threads_per_sm", threads_per_sm},
                  {"block", p.block},
                  {"grid", p.grid},
                  {"threads", p.threads()},
                  {"unroll", p.unroll},
                  {"counter_offset", p.counter_offset}});
    text += fmt::format(
        "  {} SMs: grid {} x block {} = {} threads, {} element(s) per thread per round; the "
        "generator's offset advances by {}\n",
        sm_counts[k], p.grid, p.block, p.threads(), p.unroll, p.counter_offset);
  }
  doc["policies"] = std::move(jp);
  const auto shown = static_cast<int64_t>(std::min(show, numel));
  Json elements = Json::array();
  std::vector<std::string> header = {"element"};
  for (uint32_t sm : sm_counts) {
    header.push_back(fmt::format("{}SM thread", sm));
    header.push_back("call");
    header.push_back("lane");
    if (seed) header.push_back("value");
  }
  std::string rows;
  for (int64_t i = 0; i < shown; ++i) {
    Json e = {{"index", i}};
    Json sources = Json::array();
    std::string row = fmt::format("  {:>10}", i);
    for (const LaunchPolicy& p : policies) {
      const ElementSource src = SourceOf(p, i);
      Json j = {{"thread", src.thread},
                {"subsequence", src.thread},
                {"call", src.call},
                {"lane", src.lane},
                {"offset", offset + 4 * src.call}};
      row += fmt::format(" {:>10} {:>5} {:>4}", src.thread, src.call, src.lane);
      if (seed) {
        const double v = TorchUniformValue(p, src, *seed, offset);
        j["value"] = v;
        row += dtype == "float64" ? fmt::sprintf(" %-23.17g", v) : fmt::sprintf(" %-14.9g", v);
      }
      sources.push_back(std::move(j));
    }
    e["sources"] = std::move(sources);
    elements.push_back(std::move(e));
    rows += row + "\n";
  }
  doc["elements"] = std::move(elements);
  if (shown > 0) {
    text += fmt::format("\n  {:>10}", "element");
    for (uint32_t sm : sm_counts) {
      text +=
          fmt::format(" {:>10} {:>5} {:>4}{}", fmt::format("{}SM:thr", sm), "call", "lane",
                      seed ? fmt::format(" {:<{}}", "value", dtype == "float64" ? 23 : 14) : "");
    }
    text += "\n" + rows;
  }
  if (policies.size() == 2) {
    // Over the first 10^7 elements at most: how many change source, and value.
    const int64_t limit = std::min<int64_t>(numel, 10'000'000);
    int64_t same_source = 0, same_value = 0;
    for (int64_t i = 0; i < limit; ++i) {
      const ElementSource a = SourceOf(policies[0], i), b = SourceOf(policies[1], i);
      const bool same = a.thread == b.thread && a.call == b.call && a.lane == b.lane;
      same_source += same;
      if (seed) {
        same_value += same || TorchUniformValue(policies[0], a, *seed, offset) ==
                                  TorchUniformValue(policies[1], b, *seed, offset);
      }
    }
    Json cmp = {{"elements_compared", limit},
                {"same_source", static_cast<double>(same_source) / static_cast<double>(limit)}};
    text += fmt::format(
        "\n  {} vs {} SMs: {:.2f}% of the first {} elements come from the same "
        "thread, round and lane",
        sm_counts[0], sm_counts[1],
        100.0 * static_cast<double>(same_source) / static_cast<double>(limit), limit);
    if (seed) {
      cmp["same_value"] = static_cast<double>(same_value) / static_cast<double>(limit);
      text += fmt::format("; {:.2f}% get the same value",
                          100.0 * static_cast<double>(same_value) / static_cast<double>(limit));
    }
    text += "\n";
    doc["comparison"] = std::move(cmp);
  }
  if (common.human()) std::fputs(text.c_str(), stdout);
  if (Status s = WriteJsonOutput(common, doc); !s.ok()) return Fail(s);
  return kExitOk;
}

}  // namespace

int RunRng(int argc, char** argv) {
  static const std::vector<Subcommand> kSubcommands = {
      {"philox", "cuRAND's Philox4x32-10 device stream for a seed, subsequence and offset",
       RunPhilox},
      {"layout", "which thread, subsequence and offset PyTorch's uniform_ uses per element",
       RunLayout},
      {"check", "compare random tensors of two platforms: stream, distribution", RunCheck},
  };
  return DispatchSubcommand("rng", "Usage: parity rng <subcommand> [options]", kSubcommands, argc,
                            argv);
}

}  // namespace parity::cli
