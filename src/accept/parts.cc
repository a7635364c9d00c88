// SPDX-License-Identifier: Apache-2.0
// The table of parts, and what they share: pairing the bundles' stages.
#include <fmt/format.h>

#include <optional>
#include <utility>

#include "accept/criterion.h"

namespace parity::accept {

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kFail:
      return "fail";
    case Verdict::kSkip:
      return "skip";
    case Verdict::kError:
      return "error";
  }
  return "error";
}

const std::vector<const Part*>& Parts() {
  static const std::vector<const Part*> parts = {NumericsPart(), QualityPart(), ThroughputPart(),
                                                 StabilityPart()};
  return parts;
}

std::vector<StagePair> PairStages(const AcceptInput& input, std::string_view kind) {
  std::vector<StagePair> pairs;
  for (const StageView* s : input.baseline.OfKind(kind)) {
    StagePair pair{s->name, s, nullptr};
    for (const StageView* c : input.candidate.OfKind(kind)) {
      if (c->name == s->name) pair.candidate = c;
    }
    pairs.push_back(pair);
  }
  for (const StageView* c : input.candidate.OfKind(kind)) {
    bool seen = false;
    for (const StagePair& p : pairs) seen = seen || p.name == c->name;
    if (!seen) pairs.push_back({c->name, nullptr, c});
  }
  return pairs;
}

std::optional<std::pair<Verdict, std::string>> SideProblem(std::string_view side,
                                                           const StageView& s) {
  if (s.status == "passed" || s.status == "failed") {
    if (s.result.empty()) {
      return std::pair{Verdict::kError,
                       fmt::format("the {}'s stage '{}' recorded no result", side, s.name)};
    }
    return std::nullopt;
  }
  if (s.status == "skipped") {
    return std::pair{Verdict::kSkip,
                     fmt::format("the {}'s stage '{}' was skipped: {}", side, s.name,
                                 s.reason.empty() ? "no reason" : s.reason)};
  }
  return std::pair{Verdict::kError,
                   fmt::format("the {}'s stage '{}' is {}{}", side, s.name, s.status,
                               s.reason.empty() ? "" : fmt::format(": {}", s.reason))};
}

std::optional<std::pair<Verdict, std::string>> PairProblem(const AcceptInput& input,
                                                           const StagePair& pair) {
  if (!input.baseline.problem.empty()) return std::pair{Verdict::kError, input.baseline.problem};
  if (!input.candidate.problem.empty()) {
    return std::pair{Verdict::kError, input.candidate.problem};
  }
  if (pair.baseline == nullptr || pair.candidate == nullptr) {
    return std::pair{Verdict::kError,
                     fmt::format("the {} bundle has no stage '{}' (the plans differ)",
                                 pair.baseline == nullptr ? "baseline" : "candidate", pair.name)};
  }
  // An error on either side outweighs a skip on the other.
  auto a = SideProblem("baseline", *pair.baseline);
  auto b = SideProblem("candidate", *pair.candidate);
  if (a && a->first == Verdict::kError) return a;
  if (b && b->first == Verdict::kError) return b;
  if (a) return a;
  return b;
}

CriterionResult NoStage(const AcceptInput& input, std::string_view part, std::string_view title,
                        std::string_view kind) {
  CriterionResult r;
  r.id = std::string(part);
  r.part = std::string(part);
  r.title = std::string(title);
  if (!input.baseline.problem.empty() || !input.candidate.problem.empty()) {
    r.status = Verdict::kError;
    r.reason = !input.baseline.problem.empty() ? input.baseline.problem : input.candidate.problem;
  } else {
    r.status = Verdict::kSkip;
    r.reason = fmt::format("neither bundle has a {} stage", kind);
  }
  return r;
}

}  // namespace parity::accept
