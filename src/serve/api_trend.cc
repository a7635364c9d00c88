// SPDX-License-Identifier: Apache-2.0
// /api/trend?metric=NAME: each series of the metric with the store's verdict (store/trend.h),
// its points with their noise band, and at each change point (two consecutive points whose
// own two-point trend is not steady) the environment differences between the two runs.
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "accept/bundle_view.h"
#include "accept/env_diff.h"
#include "env/env_diff.h"
#include "serve/api.h"
#include "store/json.h"
#include "store/store.h"
#include "store/trend.h"

namespace parity::serve {
namespace {

constexpr std::size_t kMaxSeries = 200;
constexpr std::size_t kMaxChangePoints = 20;
constexpr std::size_t kMaxDiffKeys = 50;

/// A run's settings as env diff compares them: its bundle's (accept::Settings) when the
/// bundle can be read, else the fingerprint the store recorded, flattened under "host".
std::map<std::string, Json> RunSettings(store::Store& store, const std::string& uid,
                                        std::map<std::string, std::map<std::string, Json>>& memo) {
  if (auto it = memo.find(uid); it != memo.end()) return it->second;
  std::map<std::string, Json> settings;
  auto run = store.RunByUid(uid);
  if (run.ok() && run->has_value()) {
    const store::RunRecord& r = **run;
    auto bundle = r.bundle.empty() ? Result<accept::BundleView>(Status::Invalid("", "no bundle"))
                                   : accept::OpenBundle(r.bundle);
    if (bundle.ok() && bundle->problem.empty()) {
      settings = accept::Settings(*bundle);
    } else if (!r.fingerprint.empty()) {
      const Json fp = Json::parse(r.fingerprint, nullptr, false);
      if (!fp.is_discarded()) settings = env::Flatten(fp, "host");
      if (!r.backend.empty()) settings["plan.backend"] = r.backend;
    }
  }
  memo[uid] = settings;
  return settings;
}

}  // namespace

Answer TrendApi(Context& context, const Params& params) {
  if (Status s = params.Check({"metric", "node", "kind", "since", "threshold", "max_points"});
      !s.ok()) {
    return StatusAnswer(s);
  }
  const std::string metric = params.Text("metric");
  if (metric.empty()) return ErrorAnswer(400, "metric: missing (a name from /api/metrics)");
  auto threshold = params.Number("threshold", 0.0, 1e6);
  if (!threshold.ok()) return StatusAnswer(threshold.status());
  auto since = params.Number("since", 0.0, 1e12);
  if (!since.ok()) return StatusAnswer(since.status());
  auto max_points = params.Int("max_points", 2, 100000);
  if (!max_points.ok()) return StatusAnswer(max_points.status());
  const double share = threshold->value_or(5.0) / 100.0;
  const std::size_t keep = static_cast<std::size_t>(max_points->value_or(2000));

  auto store = context.OpenStore();
  if (!store.ok()) return StatusAnswer(store.status());
  store::SeriesQuery query;
  query.name_glob = metric;
  query.node = params.Text("node");
  query.kind = params.Text("kind");
  query.since = *since;
  auto points = (*store)->Series(query);
  if (!points.ok()) return StatusAnswer(points.status());
  if (points->empty()) {
    return ErrorAnswer(404, fmt::format("metric: no recorded point of '{}' matches", metric));
  }
  // The points of each series (as ComputeTrends keys them), in the store's order.
  std::map<std::string, std::vector<const store::SeriesPoint*>> by_key;
  for (const store::SeriesPoint& p : *points) {
    by_key[p.node + '\x1f' + p.name + '\x1f' + p.dtype + '\x1f' + p.params].push_back(&p);
  }
  const std::vector<store::Trend> trends = store::ComputeTrends(*points, share);
  std::map<std::string, std::map<std::string, Json>> memo;
  Json series = Json::array();
  for (const store::Trend& t : trends) {
    if (series.size() >= kMaxSeries) break;
    Json s = Json::object();
    s["trend"] = store::TrendJson(t);
    const auto& list = by_key[t.node + '\x1f' + t.name + '\x1f' + t.dtype + '\x1f' + t.params];
    Json pts = Json::array();
    Json changes = Json::array();
    const store::SeriesPoint* previous = nullptr;
    struct Move {
      const store::SeriesPoint *from, *to;
      store::Trend trend;
    };
    std::vector<Move> moves;
    const std::size_t first = list.size() > keep ? list.size() - keep : 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const store::SeriesPoint& p = *list[i];
      const bool usable = p.valid && std::isfinite(p.value);
      if (i >= first) {
        Json j = {{"uid", p.uid}, {"started", p.started}, {"value", p.value}, {"valid", p.valid}};
        j["cv"] = p.cv ? Json(*p.cv) : Json(nullptr);
        // The noise band the verdicts use: 3 cv either side, in log ratio.
        if (p.cv && std::isfinite(*p.cv)) {
          j["band"] = {p.value * std::exp(-3.0 * *p.cv), p.value * std::exp(3.0 * *p.cv)};
        } else {
          j["band"] = nullptr;
        }
        pts.push_back(std::move(j));
      }
      if (!usable) continue;
      if (previous != nullptr && i >= first) {
        std::vector<store::Trend> step = store::ComputeTrends({*previous, p}, share);
        if (!step.empty() && step.front().verdict != "steady" && step.front().verdict != "single") {
          moves.push_back({previous, &p, std::move(step.front())});
        }
      }
      previous = &p;
    }
    // The latest change points, each with the environment differences of its two runs.
    const std::size_t skip = moves.size() > kMaxChangePoints ? moves.size() - kMaxChangePoints : 0;
    for (std::size_t m = skip; m < moves.size(); ++m) {
      const Move& move = moves[m];
      Json change = {{"from_uid", move.from->uid},  {"to_uid", move.to->uid},
                     {"started", move.to->started}, {"from", move.from->value},
                     {"to", move.to->value},        {"verdict", move.trend.verdict}};
      change["change"] = move.trend.change ? Json(*move.trend.change) : Json(nullptr);
      const auto diff = env::DiffSettings(RunSettings(**store, move.from->uid, memo),
                                          RunSettings(**store, move.to->uid, memo), kMaxDiffKeys);
      change["env_diff"] = env::EnvDiffJson(diff);
      changes.push_back(std::move(change));
    }
    s["change_points_total"] = moves.size();
    s["points"] = std::move(pts);
    s["change_points"] = std::move(changes);
    series.push_back(std::move(s));
  }
  Json body = Document("parity-trend", 1);
  body["metric"] = metric;
  body["threshold"] = share * 100.0;
  body["series"] = std::move(series);
  body["truncated"] = trends.size() > kMaxSeries;
  return {200, std::move(body)};
}

}  // namespace parity::serve
