// SPDX-License-Identifier: Apache-2.0
// parity_mutation: can the float64 oracle fail? For every replayable record of the dumps given,
// each float output is judged against its replay as recorded, then with the largest-magnitude
// element multiplied by (1 + 2^-8) and by (1 + 2^-11) (rounded to the stored dtype), one
// mutant at a time; a mutant is detected when the replay calls it beyond its bound. Prints one
// JSON object per (record, output) on standard output (tests/gen/mutation.py aggregates them).
//
//   parity_mutation [--every N] DUMP...
//
// --every N judges every Nth replayable record only (1: all). Exit 0, or 2 with
// "parity: error: ..." when a dump can't be read.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "compare/tolerance.h"
#include "core/status.h"
#include "io/dump.h"
#include "oracle/oracle.h"
#include "oracle/replay.h"

namespace parity {
namespace {

constexpr double kFactors[] = {0x1p-8, 0x1p-11};
constexpr const char* kFactorNames[] = {"2^-8", "2^-11"};

// The index of the largest finite |value|, or -1.
int64_t LargestElement(const Array& a) {
  int64_t best = -1;
  double largest = -1.0;
  for (std::size_t i = 0; i < a.data.size(); ++i) {
    const double v = std::fabs(a.data[i]);
    if (std::isfinite(v) && v > largest) {
      largest = v;
      best = static_cast<int64_t>(i);
    }
  }
  return best;
}

// The bound over the observed error at the element whose float32 error is largest: how far
// the recorded error could grow there before the replay calls it. Nothing when the recorded
// output is exact, or the criterion is not abs/rel.
std::optional<double> Looseness(const Array& recorded, const Array& expected, DType dtype,
                                const Tolerance& t) {
  if (t.criterion != Criterion::kAbsRel) return std::nullopt;
  auto reference = ToArray(FromArray(expected, dtype, "oracle"));
  if (!reference.ok()) return std::nullopt;
  double worst = 0.0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < recorded.data.size(); ++i) {
    const double d = std::fabs(recorded.data[i] - reference->data[i]);
    if (std::isfinite(d) && d > worst) {
      worst = d;
      at = i;
    }
  }
  if (worst == 0.0) return std::nullopt;
  const double atol = t.element_scale && at < t.element_scale->size()
                          ? t.atol_per_scale * (*t.element_scale)[at]
                          : t.atol;
  return (atol + t.rtol * std::fabs(reference->data[at])) / worst;
}

Json OutputLine(const std::string& dump, const DumpRecord& record, std::size_t index,
                const Tensor& recorded, const OutputJudgement& base) {
  Json j = Json::object();
  j["dump"] = dump;
  j["seq"] = record.seq;
  j["op"] = record.op;
  j["family"] = FamilyOf(record.op).name;
  j["pass"] = record.pass;
  j["output"] = index;
  j["dtype"] = std::string(Name(recorded.dtype()));
  j["numel"] = recorded.numel();
  j["tolerance"] = base.tolerance.reason;
  if (base.tolerance.k) j["k"] = *base.tolerance.k;
  j["within"] = base.within;
  j["violations"] = base.metrics.violations;
  return j;
}

Status MutateDump(const std::string& path, int every, std::FILE* out) {
  PARITY_ASSIGN_OR_RETURN(DumpDir dump, DumpDir::Open(path));
  int replayable = 0;
  for (const DumpRecord& record : dump.records()) {
    if (!NotReplayableReason(record).empty()) continue;
    auto loaded = LoadRecord(dump, record);
    if (!loaded.ok()) {
      if (loaded.status().message().starts_with("not replayable")) continue;
      return loaded.status();
    }
    if (CheckRandomOp(loaded->call)) continue;  // not judged: random ops
    auto replayed = Replay(loaded->call);
    if (!replayed.ok() || replayed->size() != loaded->outputs.size()) continue;
    if (replayable++ % every != 0) continue;
    for (std::size_t i = 0; i < replayed->size(); ++i) {
      const Tensor& recorded = loaded->outputs[i];
      const Array& expected = (*replayed)[i];
      if (!IsFloat(recorded.dtype()) || expected.shape != recorded.meta().shape) continue;
      PARITY_ASSIGN_OR_RETURN(Tolerance t,
                              OutputTolerance(record, *loaded, i, {&dump.ManifestFor(record)}));
      PARITY_ASSIGN_OR_RETURN(OutputJudgement base, JudgeOutput(recorded, expected, t));
      Json line = OutputLine(path, record, i, recorded, base);
      const Array& values = loaded->call.recorded_outputs[i];
      if (auto loose = Looseness(values, expected, recorded.dtype(), base.tolerance)) {
        line["looseness"] = *loose;
      }
      const int64_t at = LargestElement(values);
      Json mutants = Json::array();
      for (std::size_t f = 0; at >= 0 && f < std::size(kFactors); ++f) {
        Array mutated = values;
        mutated.data[static_cast<std::size_t>(at)] *= 1.0 + kFactors[f];
        const Tensor mutant = FromArray(mutated, recorded.dtype(), "mutant");
        PARITY_ASSIGN_OR_RETURN(Array stored, ToArray(mutant));
        Json m = {{"factor", kFactorNames[f]}};
        // A change the stored dtype can't hold (bfloat16 at 2^-11) is no mutant at all.
        m["equivalent"] = stored.data[static_cast<std::size_t>(at)] == values.data[at];
        if (!m["equivalent"].get<bool>()) {
          PARITY_ASSIGN_OR_RETURN(OutputJudgement j, JudgeOutput(mutant, expected, t));
          m["detected"] = !j.within;
          // Caught at the element that was changed, not elsewhere.
          m["at_index"] = !j.metrics.worst.empty() && j.metrics.worst[0].index == at;
        }
        mutants.push_back(std::move(m));
      }
      line["mutants"] = std::move(mutants);
      std::fprintf(out, "%s\n", line.dump().c_str());
    }
  }
  return Status::Ok();
}

}  // namespace
}  // namespace parity

int main(int argc, char** argv) {
  int every = 1;
  std::vector<std::string> dumps;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--every" && i + 1 < argc) {
      every = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "-h" || arg == "--help") {
      std::puts("usage: parity_mutation [--every N] DUMP...");
      return 0;
    } else {
      dumps.push_back(arg);
    }
  }
  if (dumps.empty()) {
    std::fputs("parity: error: parity_mutation: no dump given\n", stderr);
    return 2;
  }
  for (const std::string& d : dumps) {
    if (parity::Status s = parity::MutateDump(d, every, stdout); !s.ok()) {
      std::fprintf(stderr, "parity: error: %s: %s\n", d.c_str(), s.message().c_str());
      return 2;
    }
  }
  return 0;
}
