// SPDX-License-Identifier: Apache-2.0
#include "explain/evidence.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <map>
#include <set>

namespace parity {
namespace {

// One rank's steps by step number.
std::map<int64_t, const DumpStep*> ByStep(const std::vector<DumpStep>& steps) {
  std::map<int64_t, const DumpStep*> out;
  for (const DumpStep& s : steps) out.emplace(s.step, &s);
  return out;
}

void FindGeneratorDifference(const std::map<int64_t, std::vector<DumpStep>>& a,
                             const std::map<int64_t, std::vector<DumpStep>>& b, RunEvidence* out) {
  std::set<int64_t> compared;
  // step -> the generators (and ranks) that differ there.
  std::map<int64_t, std::pair<std::set<std::string>, std::set<int64_t>>> differ;
  for (const auto& [rank, steps_a] : a) {
    const auto other = b.find(rank);
    if (other == b.end()) continue;
    const auto by_step_b = ByStep(other->second);
    for (const auto& [step, sa] : ByStep(steps_a)) {
      const auto sb = by_step_b.find(step);
      if (sb == by_step_b.end()) continue;
      for (const auto& [name, digest] : sa->generators) {
        const auto it = sb->second->generators.find(name);
        if (it == sb->second->generators.end()) continue;
        compared.insert(step);
        if (it->second != digest) {
          differ[step].first.insert(name);
          differ[step].second.insert(rank);
        }
      }
    }
  }
  out->generator_steps_compared = static_cast<int64_t>(compared.size());
  if (differ.empty()) return;
  const auto& [step, what] = *differ.begin();
  out->generators_first_differ = GeneratorDifference{
      step, {what.first.begin(), what.first.end()}, {what.second.begin(), what.second.end()}};
}

// The lowest rank's steps that record anything of a scaler, or null.
const std::vector<DumpStep>* ScalerSteps(const std::map<int64_t, std::vector<DumpStep>>& ranks) {
  for (const auto& [rank, steps] : ranks) {
    for (const DumpStep& s : steps) {
      if (s.scale || s.skipped) return &steps;
    }
  }
  return nullptr;
}

void CompareScaler(const std::map<int64_t, std::vector<DumpStep>>& a,
                   const std::map<int64_t, std::vector<DumpStep>>& b, RunEvidence* out) {
  const std::vector<DumpStep>* steps_a = ScalerSteps(a);
  const std::vector<DumpStep>* steps_b = ScalerSteps(b);
  if (steps_a == nullptr && steps_b == nullptr) return;
  static const std::vector<DumpStep> kNone;
  const auto by_a = ByStep(steps_a != nullptr ? *steps_a : kNone);
  const auto by_b = ByStep(steps_b != nullptr ? *steps_b : kNone);
  ScalerEvidence s;
  auto trajectory = [](const std::map<int64_t, const DumpStep*>& steps, std::vector<double>* scales,
                       std::vector<int64_t>* skipped) {
    for (const auto& [step, st] : steps) {
      if (st->scale) scales->push_back(*st->scale);
      if (st->skipped.value_or(false)) skipped->push_back(step);
    }
  };
  trajectory(by_a, &s.a, &s.skipped_a);
  trajectory(by_b, &s.b, &s.skipped_b);
  for (const auto& [step, sa] : by_a) {
    const auto sb = by_b.find(step);
    if (sb == by_b.end()) continue;
    if (sa->scale != sb->second->scale ||
        sa->skipped.value_or(false) != sb->second->skipped.value_or(false)) {
      s.first_differ_step = step;
      break;
    }
  }
  out->scaler = std::move(s);
}

std::string Skipped(const std::vector<int64_t>& steps) {
  return steps.empty() ? "none" : fmt::format("{}", fmt::join(steps, ", "));
}

}  // namespace

RunEvidence CompareEvidence(const DumpDir& a, const DumpDir& b) {
  RunEvidence out;
  const auto steps_a = a.StepsByRank();
  const auto steps_b = b.StepsByRank();
  FindGeneratorDifference(steps_a, steps_b, &out);
  CompareScaler(steps_a, steps_b, &out);
  return out;
}

Json EvidenceJson(const RunEvidence& e) {
  Json doc = Json::object();
  if (e.generators_first_differ) {
    const GeneratorDifference& g = *e.generators_first_differ;
    doc["generators_first_differ"] = {
        {"step", g.step}, {"generators", g.generators}, {"ranks", g.ranks}};
  } else {
    doc["generators_first_differ"] = nullptr;
  }
  doc["generator_steps_compared"] = e.generator_steps_compared;
  if (e.scaler) {
    const ScalerEvidence& s = *e.scaler;
    Json scaler = Json::object();
    // JSON has no Inf or NaN: such a scale is null.
    auto scales = [](const std::vector<double>& values) {
      Json out = Json::array();
      for (double v : values) out.push_back(std::isfinite(v) ? Json(v) : Json());
      return out;
    };
    scaler["a"] = scales(s.a);
    scaler["b"] = scales(s.b);
    scaler["skipped_a"] = s.skipped_a;
    scaler["skipped_b"] = s.skipped_b;
    scaler["differ"] = s.differ();
    scaler["first_differ_step"] = s.first_differ_step ? Json(*s.first_differ_step) : Json();
    doc["scaler"] = std::move(scaler);
  } else {
    doc["scaler"] = nullptr;
  }
  return doc;
}

std::string EvidenceText(const RunEvidence& e, const std::string& indent) {
  std::string out = indent + "generators: ";
  if (e.generators_first_differ) {
    const GeneratorDifference& g = *e.generators_first_differ;
    out += fmt::format("first differ at step {} ({}{})\n", g.step, fmt::join(g.generators, ", "),
                       g.ranks.size() == 1 && g.ranks[0] == 0
                           ? ""
                           : fmt::format("; rank {}", fmt::join(g.ranks, ", ")));
  } else if (e.generator_steps_compared > 0) {
    out += fmt::format("identical at every step ({} compared)\n", e.generator_steps_compared);
  } else {
    out += "not recorded on both sides\n";
  }
  out += indent + "scaler: ";
  if (!e.scaler) return out + "not recorded\n";
  const ScalerEvidence& s = *e.scaler;
  if (!s.differ()) {
    return out + fmt::format("identical at every step (skipped steps: {})\n", Skipped(s.skipped_a));
  }
  return out +
         fmt::format("first differs at step {}; scale A [{}], B [{}]; skipped steps A {}, B {}\n",
                     *s.first_differ_step, fmt::join(s.a, ", "), fmt::join(s.b, ", "),
                     Skipped(s.skipped_a), Skipped(s.skipped_b));
}

}  // namespace parity
