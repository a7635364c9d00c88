// SPDX-License-Identifier: Apache-2.0
// parity rng philox|layout|check: reproduce Philox streams, show PyTorch's RNG layout, compare
// random tensors from two platforms.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

#include "cli/command.h"
#include "cli/common.h"
#include "core/exit_code.h"
#include "core/spellcheck.h"
#include "rng/check.h"

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

struct Sub {
  std::string_view name;
  std::string_view summary;
  int (*run)(int, char**);
};

constexpr std::array<Sub, 1> kSubs = {{
    {"check", "compare random tensors of two platforms: stream, distribution", RunCheck},
}};

void Usage(std::FILE* out) {
  std::string text = "Usage: parity rng <command> [options]\n\nCommands:\n";
  for (const Sub& s : kSubs) text += fmt::format("  {:<10}{}\n", s.name, s.summary);
  text += "\nRun 'parity rng <command> --help' for its options.\n";
  std::fputs(text.c_str(), out);
}

}  // namespace

int RunRng(int argc, char** argv) {
  if (argc < 2) {
    Usage(stderr);
    return kExitUsage;
  }
  const std::string_view name = argv[1];
  if (name == "--help" || name == "-h") {
    Usage(stdout);
    return kExitOk;
  }
  for (const Sub& s : kSubs) {
    if (s.name == name) return s.run(argc - 1, argv + 1);
  }
  std::vector<std::string_view> names;
  for (const Sub& s : kSubs) names.push_back(s.name);
  std::string message = fmt::format("parity: error: rng: unknown command '{}'", name);
  if (auto suggestion = Suggest(name, names)) {
    message += fmt::format("; did you mean '{}'?", *suggestion);
  }
  std::fprintf(stderr, "%s\n", message.c_str());
  Usage(stderr);
  return kExitUsage;
}

}  // namespace parity::cli
