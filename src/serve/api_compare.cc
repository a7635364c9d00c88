// SPDX-License-Identifier: Apache-2.0
// /api/compare?a=ID&b=ID: two collect runs' bundles side by side, each answer computed by the
// code the CLI runs: `bench compare` on each bench stage both hold, `env diff` of the bundles,
// and every criterion `accept` would judge with its default criteria (numerics: compare and
// explain of the dumps both hold). Answers are cached in memory, bounded.
#include <fmt/format.h>

#include <mutex>
#include <optional>
#include <string>

#include "accept/accept.h"
#include "accept/bundle_view.h"
#include "accept/criteria.h"
#include "accept/env_diff.h"
#include "bench/bench_compare.h"
#include "bench/result.h"
#include "serve/api.h"
#include "store/json.h"
#include "store/store.h"

namespace parity::serve {
namespace {

/// The run with this id, or the answer saying why not.
std::optional<Answer> LoadRun(store::Store& store, const Params& params, const char* name,
                              store::RunRecord& out) {
  auto id = params.Int(name, 1, std::int64_t{1} << 62);
  if (!id.ok()) return StatusAnswer(id.status());
  if (!*id) return ErrorAnswer(400, fmt::format("{}: missing (a collect run's store id)", name));
  store::RunQuery query;
  query.id = **id;
  auto runs = store.Runs(query);
  if (!runs.ok()) return StatusAnswer(runs.status());
  if (runs->empty()) return ErrorAnswer(404, fmt::format("{}: no run {} in the store", name, **id));
  out = std::move(runs->front());
  if (out.kind != "collect") {
    return ErrorAnswer(
        400, fmt::format("{}: run {} is a {} run, not a collect (a bundle)", name, **id, out.kind));
  }
  return std::nullopt;
}

Json Throughput(const accept::BundleView& a, const accept::BundleView& b) {
  Json list = Json::array();
  for (const accept::StageView* sa : a.OfKind("bench")) {
    const accept::StageView* sb = nullptr;
    for (const accept::StageView* s : b.OfKind("bench")) {
      if (s->name == sa->name) sb = s;
    }
    if (sb == nullptr) continue;
    Json entry = {{"stage", sa->name}};
    if (sa->result.empty() || sb->result.empty()) {
      entry["problem"] = fmt::format("stage {} has no result in {}", sa->name,
                                     sa->result.empty() ? a.path : b.path);
      list.push_back(std::move(entry));
      continue;
    }
    bench::BenchCompareOptions options;
    options.base_path = a.PathOf(sa->result);
    options.cand_path = b.PathOf(sb->result);
    entry["base"] = options.base_path;
    entry["cand"] = options.cand_path;
    auto base = bench::LoadBenchDocument(options.base_path);
    auto cand = base.ok() ? bench::LoadBenchDocument(options.cand_path) : base;
    if (!cand.ok()) {
      entry["problem"] = cand.status().message();
    } else if (auto report = bench::CompareBench(*base, *cand, options); !report.ok()) {
      entry["problem"] = report.status().message();
    } else {
      entry["report"] = bench::BenchCompareJson(*report);
    }
    list.push_back(std::move(entry));
  }
  return list;
}

Json Dumps(const accept::BundleView& a, const accept::BundleView& b) {
  Json list = Json::array();
  for (const accept::StageView* sa : a.OfKind("dump")) {
    for (const accept::StageView* sb : b.OfKind("dump")) {
      if (sb->name != sa->name || sa->result.empty() || sb->result.empty()) continue;
      list.push_back(
          {{"stage", sa->name}, {"a", a.PathOf(sa->result)}, {"b", b.PathOf(sb->result)}});
    }
  }
  return list;
}

Json Compute(const store::RunRecord& ra, const store::RunRecord& rb, const accept::BundleView& a,
             const accept::BundleView& b) {
  Json body = Document("parity-serve-compare", 1);
  body["a"] = store::RunJson(ra, false);
  body["b"] = store::RunJson(rb, false);
  body["throughput"] = Throughput(a, b);
  const auto diff = accept::DiffSettings(accept::Settings(a), accept::Settings(b));
  std::size_t relevant = 0;
  for (const auto& d : diff) relevant += d.relevant ? 1 : 0;
  body["env_diff"] = {{"summary", {{"differences", diff.size()}, {"relevant", relevant}}},
                      {"differences", accept::EnvDiffJson(diff)}};
  const accept::Criteria criteria;
  Json all = Json::array();
  Json numerics = Json::array();
  Json counts = {{"pass", 0}, {"fail", 0}, {"skip", 0}, {"error", 0}};
  for (const accept::CriterionResult& c : accept::JudgeCriteria(a, b, criteria)) {
    Json j = accept::CriterionJson(c);
    counts[std::string(accept::VerdictName(c.status))] =
        counts[std::string(accept::VerdictName(c.status))].get<int>() + 1;
    if (c.part == "numerics") numerics.push_back(j);
    all.push_back(std::move(j));
  }
  body["criteria"] = std::move(all);
  body["criteria_summary"] = std::move(counts);
  body["numerics"] = std::move(numerics);
  body["dumps"] = Dumps(a, b);
  return body;
}

}  // namespace

Answer CompareApi(Context& context, const Params& params) {
  if (Status s = params.Check({"a", "b"}); !s.ok()) return StatusAnswer(s);
  auto store = context.OpenStore();
  if (!store.ok()) return StatusAnswer(store.status());
  store::RunRecord ra, rb;
  if (auto problem = LoadRun(**store, params, "a", ra)) return *problem;
  if (auto problem = LoadRun(**store, params, "b", rb)) return *problem;
  // A run recorded again (a resumed collect) is a new answer.
  const auto version = [](const store::RunRecord& r) {
    return fmt::format("{}/{}/{}", r.id, r.status, r.finished.value_or(0.0));
  };
  const std::string key = version(ra) + "|" + version(rb);
  if (auto cached = context.compare_cache.Get(key)) return {200, *cached};
  std::lock_guard lock(context.compute_mutex);
  if (auto cached = context.compare_cache.Get(key)) return {200, *cached};
  for (const auto* r : {&ra, &rb}) {
    if (r->bundle.empty()) {
      return ErrorAnswer(422,
                         fmt::format("run {}: unreadable: the store records no bundle", r->id));
    }
  }
  auto a = accept::OpenBundle(ra.bundle);
  auto b = accept::OpenBundle(rb.bundle);
  for (const auto* bundle : {&a, &b}) {
    if (!bundle->ok()) {
      return ErrorAnswer(422, "unreadable: " + bundle->status().message());
    }
    if (!(*bundle)->problem.empty()) return ErrorAnswer(422, "unreadable: " + (*bundle)->problem);
  }
  auto body = std::make_shared<const Json>(Compute(ra, rb, *a, *b));
  context.compare_cache.Put(key, body);
  return {200, *body};
}

}  // namespace parity::serve
