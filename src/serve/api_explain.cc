// SPDX-License-Identifier: Apache-2.0
// /api/explain: a dump pair's explain (explain/explain.h, as `parity explain` runs it),
// computed once per pair and cached, answered a page at a time: the op calls filtered by
// cause, pass, step and module prefix, the counts per cause, and the per-op error plot.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "accept/bundle_view.h"
#include "explain/attribution.h"
#include "explain/explain.h"
#include "io/dump.h"
#include "serve/api.h"
#include "serve/security.h"
#include "store/store.h"

namespace parity::serve {
namespace {

constexpr std::size_t kMaxPage = 500;
constexpr std::size_t kPlotPoints = 2000;

/// The dump directory a side names: a run id and the dump stage (`a`, `stage`), or a path
/// under a root (`dir_a`, `root`). Sets `answer` when it can't.
std::optional<std::string> DumpDir(Context& context, const Params& params, const char* side,
                                   std::optional<Answer>& answer) {
  const std::string dir_param = std::string("dir_") + side;
  if (params.Has(dir_param)) {
    auto root = params.Int("root", 0, static_cast<std::int64_t>(context.options.roots.size()) - 1);
    if (context.options.roots.empty()) {
      answer = ErrorAnswer(400, dir_param + ": serve was given no --root");
      return std::nullopt;
    }
    if (!root.ok()) {
      answer = StatusAnswer(root.status());
      return std::nullopt;
    }
    auto path = ResolveUnder(context.options.roots[static_cast<std::size_t>(root->value_or(0))],
                             params.Text(dir_param));
    if (!path.ok()) {
      answer = ErrorAnswer(404, dir_param + ": " + path.status().message());
      return std::nullopt;
    }
    return *path;
  }
  auto id = params.Int(side, 1, std::int64_t{1} << 62);
  if (!id.ok() || !*id) {
    answer = id.ok() ? ErrorAnswer(400, fmt::format("{}: missing (a collect run's store id, or "
                                                    "dir_{} under a root)",
                                                    side, side))
                     : StatusAnswer(id.status());
    return std::nullopt;
  }
  auto store = context.OpenStore();
  if (!store.ok()) {
    answer = StatusAnswer(store.status());
    return std::nullopt;
  }
  store::RunQuery query;
  query.id = **id;
  query.stages = false;
  auto runs = (*store)->Runs(query);
  if (!runs.ok() || runs->empty()) {
    answer = runs.ok() ? ErrorAnswer(404, fmt::format("{}: no run {} in the store", side, **id))
                       : StatusAnswer(runs.status());
    return std::nullopt;
  }
  auto bundle = accept::OpenBundle(runs->front().bundle);
  if (!bundle.ok() || !bundle->problem.empty()) {
    answer = ErrorAnswer(
        422, "unreadable: " + (bundle.ok() ? bundle->problem : bundle.status().message()));
    return std::nullopt;
  }
  const std::string stage = params.Text("stage");
  for (const accept::StageView* s : bundle->OfKind("dump")) {
    if ((stage.empty() || s->name == stage) && !s->result.empty()) return bundle->PathOf(s->result);
  }
  answer = ErrorAnswer(404, fmt::format("{}: run {} has no dump stage{} with a result", side, **id,
                                        stage.empty() ? "" : " named " + stage));
  return std::nullopt;
}

/// The error a plot shows for an op: its output difference, else its local error on B.
std::optional<double> PlotError(const OpExplanation& e) {
  if (e.output_diff && std::isfinite(*e.output_diff)) return e.output_diff;
  if (e.local_err_b && std::isfinite(*e.local_err_b)) return e.local_err_b;
  return std::nullopt;
}

}  // namespace

Answer ExplainApi(Context& context, const Params& params) {
  if (Status s = params.Check({"a", "b", "stage", "dir_a", "dir_b", "root", "cause", "pass", "step",
                               "module", "offset", "limit"});
      !s.ok()) {
    return StatusAnswer(s);
  }
  auto page = ReadPage(params, 100, kMaxPage);
  if (!page.ok()) return StatusAnswer(page.status());
  auto step = params.Int("step", 0, std::int64_t{1} << 62);
  if (!step.ok()) return StatusAnswer(step.status());
  const std::string cause = params.Text("cause");
  if (!cause.empty()) {
    bool known = false;
    for (Cause c : {Cause::kIdentical, Cause::kWithinRounding, Cause::kReducedPrecision,
                    Cause::kRngDivergence, Cause::kNonfinite, Cause::kInherited,
                    Cause::kAlgorithmic, Cause::kStructural, Cause::kNotJudged}) {
      known = known || CauseName(c) == cause;
    }
    if (!known) return ErrorAnswer(400, fmt::format("cause: '{}' is not a cause", cause));
  }
  std::optional<Answer> answer;
  const auto a = DumpDir(context, params, "a", answer);
  if (!a) return *answer;
  const auto b = DumpDir(context, params, "b", answer);
  if (!b) return *answer;

  const std::string key = *a + '\n' + *b;
  std::shared_ptr<const ExplainReport> report = context.explain_cache.Get(key);
  if (!report) {
    std::lock_guard lock(context.compute_mutex);
    report = context.explain_cache.Get(key);
    if (!report) {
      ExplainOptions options;
      options.a = *a;
      options.b = *b;
      auto computed = RunExplain(options);
      if (!computed.ok()) {
        const std::string& message = computed.status().message();
        if (message.find(kOutsideTheDump) != std::string::npos) {
          LogRefused("/api/explain", message);
          return ErrorAnswer(403, "refused: a file of the dumps " + std::string(kOutsideTheDump));
        }
        return ErrorAnswer(422, "unreadable: " + message);
      }
      report = std::make_shared<const ExplainReport>(std::move(*computed));
      context.explain_cache.Put(key, report);
    }
  }
  const std::string pass = params.Text("pass");
  const std::string module = params.Text("module");
  std::map<std::string, std::size_t> causes;
  std::vector<const OpExplanation*> matched;
  for (const OpExplanation& e : report->ops) {
    ++causes[std::string(CauseName(e.cause))];
    if (!cause.empty() && CauseName(e.cause) != cause) continue;
    if (!pass.empty() && e.pass != pass) continue;
    if (*step && e.step != **step) continue;
    if (!module.empty() && !e.name.starts_with(module)) continue;
    matched.push_back(&e);
  }
  Json ops = Json::array();
  for (std::size_t i = page->offset; i < matched.size() && ops.size() < page->limit; ++i) {
    ops.push_back(OpExplanationJson(*matched[i]));
  }
  // The plot: every matched op's error, or the largest of each bucket when there are more.
  Json plot = Json::array();
  const std::size_t bucket =
      std::max<std::size_t>(1, (matched.size() + kPlotPoints - 1) / kPlotPoints);
  for (std::size_t i = 0; i < matched.size(); i += bucket) {
    const OpExplanation* worst = nullptr;
    std::optional<double> worst_err;
    for (std::size_t k = i; k < std::min(matched.size(), i + bucket); ++k) {
      const auto err = PlotError(*matched[k]);
      if (err && (!worst_err || *err > *worst_err)) {
        worst = matched[k];
        worst_err = err;
      }
    }
    if (worst != nullptr) {
      plot.push_back(
          {{"seq", worst->seq}, {"error", *worst_err}, {"cause", CauseName(worst->cause)}});
    }
  }
  Json origins = Json::array();
  for (const OpExplanation* e : report->origins()) {
    if (origins.size() >= 100) break;
    origins.push_back(OpExplanationJson(*e));
  }
  Json body = Document("parity-explain-page", 1);
  body["a"] = report->a;
  body["b"] = report->b;
  body["total"] = report->ops.size();
  body["matched"] = matched.size();
  body["offset"] = page->offset;
  body["limit"] = page->limit;
  body["causes"] = causes;
  body["origins"] = std::move(origins);
  body["input_difference"] = report->input_difference;
  body["ops"] = std::move(ops);
  body["plot"] = std::move(plot);
  return {200, std::move(body)};
}

}  // namespace parity::serve
