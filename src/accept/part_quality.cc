// SPDX-License-Identifier: Apache-2.0
// Quality: each quality stage's score files of the two bundles judged on the same labels
// (parity quality: DeLong's paired test, TOST equivalence within the criteria's margin).
#include <fmt/format.h>

#include <cmath>
#include <fstream>

#include "accept/criterion.h"
#include "quality/quality.h"

namespace parity::accept {
namespace {

/// Whether the two files hold the same bytes; kInvalidInput naming one that can't be read.
Result<bool> SameBytes(const std::string& a, const std::string& b) {
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  if (!fa) return Status::Invalid(a, "can't be read");
  if (!fb) return Status::Invalid(b, "can't be read");
  std::vector<char> ba(1 << 16), bb(1 << 16);
  while (true) {
    fa.read(ba.data(), static_cast<std::streamsize>(ba.size()));
    fb.read(bb.data(), static_cast<std::streamsize>(bb.size()));
    if (fa.gcount() != fb.gcount()) return false;
    if (!std::equal(ba.begin(), ba.begin() + fa.gcount(), bb.begin())) return false;
    if (fa.gcount() == 0 || !fa || !fb) return fa.eof() && fb.eof();
  }
}

Json Finite(double v) { return std::isfinite(v) ? Json(v) : Json(); }

CriterionResult Base(const StagePair& pair, const QualityCriteria& c, const std::string& scores) {
  CriterionResult r;
  r.id = scores.empty() ? fmt::format("quality.{}", pair.name)
                        : fmt::format("quality.{}.{}", pair.name, scores);
  r.part = "quality";
  r.stage = pair.name;
  r.title = c.relative ? fmt::format("{} equivalent within {:g}% of the baseline's (TOST)",
                                     c.metric, c.margin * 100)
                       : fmt::format("{} equivalent within ±{:g} (TOST)", c.metric, c.margin);
  return r;
}

std::vector<CriterionResult> JudgeStage(const AcceptInput& input, const StagePair& pair) {
  const QualityCriteria& c = input.criteria.quality;
  auto error = [&](Verdict status, std::string reason) {
    CriterionResult r = Base(pair, c, "");
    r.status = status;
    r.reason = std::move(reason);
    return std::vector<CriterionResult>{std::move(r)};
  };
  if (auto problem = PairProblem(input, pair)) return error(problem->first, problem->second);
  auto base = ReadBundleJson(input.baseline, pair.baseline->result, "parity-quality-inputs");
  if (!base.ok()) return error(Verdict::kError, base.status().message());
  auto cand = ReadBundleJson(input.candidate, pair.candidate->result, "parity-quality-inputs");
  if (!cand.ok()) return error(Verdict::kError, cand.status().message());
  const std::string base_dir = input.baseline.PathOf("stages/" + pair.name);
  const std::string cand_dir = input.candidate.PathOf("stages/" + pair.name);
  const std::string labels = StringField(*base, "labels");
  const std::string cand_labels = StringField(*cand, "labels");
  if (labels.empty() || cand_labels.empty() || !(*base)["scores"].is_array() ||
      !(*cand)["scores"].is_array()) {
    return error(Verdict::kError,
                 fmt::format("{}: 'labels' or 'scores' is missing",
                             labels.empty() ? input.baseline.PathOf(pair.baseline->result)
                                            : input.candidate.PathOf(pair.candidate->result)));
  }
  auto same = SameBytes(base_dir + "/" + labels, cand_dir + "/" + cand_labels);
  if (!same.ok()) return error(Verdict::kError, same.status().message());
  if (!*same) {
    return error(Verdict::kError,
                 fmt::format("the labels differ between the bundles ({} and {}): a paired "
                             "comparison needs the same evaluation set",
                             base_dir + "/" + labels, cand_dir + "/" + cand_labels));
  }
  std::vector<CriterionResult> out;
  const bool several = (*base)["scores"].size() > 1;
  for (const Json& s : (*base)["scores"]) {
    const std::string file = StringField(s, "file");
    CriterionResult r = Base(pair, c, several ? file : "");
    bool in_candidate = false;
    for (const Json& t : (*cand)["scores"])
      in_candidate = in_candidate || StringField(t, "file") == file;
    if (!in_candidate) {
      r.status = Verdict::kError;
      r.reason = fmt::format("the candidate's stage '{}' has no score file {}", pair.name, file);
      out.push_back(std::move(r));
      continue;
    }
    QualityOptions options;
    options.metric = c.metric;
    options.labels = base_dir + "/" + labels;
    options.a = {base_dir + "/" + file};
    options.b = {cand_dir + "/" + file};
    if ((*base).contains("column") && (*base)["column"].is_string()) {
      options.column = (*base)["column"].get<std::string>();
    }
    options.margin = c.margin;
    options.relative = c.relative;
    auto q = RunQuality(options);
    if (!q.ok()) {
      r.status = Verdict::kError;
      r.reason = q.status().message();
      out.push_back(std::move(r));
      continue;
    }
    Json& e = r.evidence;
    e["metric"] = q->metric;
    e["scores"] = file;
    e["baseline"] = Finite(q->value_a);
    e["candidate"] = Finite(q->value_b);
    e["delta"] = Finite(q->delta);
    e["margin"] = Finite(q->margin);
    e["relative_margin"] = c.relative ? Json(c.margin) : Json();
    e["ci90"] = {Finite(q->tost.ci90_lo), Finite(q->tost.ci90_hi)};
    e["p_value"] = Finite(q->tost.p_value);
    if (q->delong) e["se"] = Finite(q->delong->se);
    if (q->paired) e["se"] = Finite(q->paired->se);
    e["samples"] = q->samples;
    e["positives"] = q->positives;
    e["verdict"] = q->verdict;
    e["report"] = QualityReportJson(*q);
    r.status = q->verdict == "pass" ? Verdict::kPass : Verdict::kFail;
    r.reason = fmt::format(
        "{} {:.6g} vs {:.6g} (delta {:+.3g}, 90% CI [{:+.3g}, {:+.3g}], margin "
        "±{:.3g}): {}",
        q->metric, q->value_b, q->value_a, q->delta, q->tost.ci90_lo, q->tost.ci90_hi, q->margin,
        q->verdict == "pass" ? "equivalent" : q->reason);
    out.push_back(std::move(r));
  }
  if (out.empty()) {
    return error(Verdict::kError,
                 fmt::format("{}: no score files", input.baseline.PathOf(pair.baseline->result)));
  }
  return out;
}

class Quality final : public Part {
 public:
  std::string_view name() const override { return "quality"; }
  std::vector<CriterionResult> Evaluate(const AcceptInput& input) const override {
    std::vector<CriterionResult> out;
    for (const StagePair& pair : PairStages(input, "quality")) {
      for (CriterionResult& r : JudgeStage(input, pair)) out.push_back(std::move(r));
    }
    if (out.empty()) {
      out.push_back(NoStage(input, "quality", "model quality equivalent (TOST)", "quality"));
    }
    return out;
  }
};

}  // namespace

const Part* QualityPart() {
  static const Quality part;
  return &part;
}

}  // namespace parity::accept
