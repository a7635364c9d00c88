// SPDX-License-Identifier: Apache-2.0
// /api/runs, /api/run and /api/metrics: the results store's runs, filtered and paged, one run
// with its stages, and the names of the recorded metrics.
#include <fmt/format.h>

#include <string>

#include "accept/bundle_view.h"
#include "serve/api.h"
#include "store/json.h"
#include "store/store.h"

namespace parity::serve {

Result<store::Store*> Context::OpenStore() const {
  struct Kept {
    const Context* owner = nullptr;
    std::unique_ptr<store::Store> store;
  };
  thread_local Kept kept;
  if (kept.owner != this || !kept.store) {
    kept.store.reset();
    PARITY_ASSIGN_OR_RETURN(kept.store, store::Store::OpenReadOnly(options.db));
    kept.owner = this;
  }
  return kept.store.get();
}

Answer ErrorAnswer(int status, std::string_view message) {
  Json body = Document("parity-serve-error", 1);
  body["status"] = status;
  body["error"] = std::string(message);
  return {status, std::move(body)};
}

Answer StatusAnswer(const Status& status) {
  return ErrorAnswer(status.code() == StatusCode::kInvalidInput ? 400 : 500, status.message());
}

namespace {

/// The largest page of runs one request returns.
constexpr std::size_t kMaxRunsPage = 500;

}  // namespace

Answer RunsApi(Context& context, const Params& params) {
  if (Status s = params.Check({"kind", "node", "status", "plan", "q", "since", "offset", "limit"});
      !s.ok()) {
    return StatusAnswer(s);
  }
  const std::string kind = params.Text("kind");
  if (!kind.empty() && kind != "collect" && kind != "accept" && kind != "fleet") {
    return ErrorAnswer(400, fmt::format("kind: '{}' is not collect, accept or fleet", kind));
  }
  auto page = ReadPage(params, 100, kMaxRunsPage);
  if (!page.ok()) return StatusAnswer(page.status());
  auto since = params.Number("since", 0.0, 1e12);
  if (!since.ok()) return StatusAnswer(since.status());
  store::RunQuery query;
  query.kind = kind;
  query.node = params.Text("node");
  query.status = params.Text("status");
  query.plan = params.Text("plan");
  query.search = params.Text("q");
  query.since = *since;
  query.offset = page->offset;
  query.limit = page->limit;
  query.stages = false;
  auto store = context.OpenStore();
  if (!store.ok()) return StatusAnswer(store.status());
  auto total = (*store)->CountRuns(query);
  if (!total.ok()) return StatusAnswer(total.status());
  auto runs = (*store)->Runs(query);
  if (!runs.ok()) return StatusAnswer(runs.status());
  Json body = Document("parity-runs", 1);
  body["total"] = *total;
  body["offset"] = page->offset;
  body["limit"] = page->limit;
  Json list = Json::array();
  for (const store::RunRecord& r : *runs) list.push_back(store::RunJson(r, /*stages=*/false));
  body["runs"] = std::move(list);
  return {200, std::move(body)};
}

Answer RunApi(Context& context, const Params& params) {
  if (Status s = params.Check({"id"}); !s.ok()) return StatusAnswer(s);
  auto id = params.Int("id", 1, std::int64_t{1} << 62);
  if (!id.ok()) return StatusAnswer(id.status());
  if (!*id) return ErrorAnswer(400, "id: missing (a run's store id, from /api/runs)");
  auto store = context.OpenStore();
  if (!store.ok()) return StatusAnswer(store.status());
  store::RunQuery query;
  query.id = **id;
  auto runs = (*store)->Runs(query);
  if (!runs.ok()) return StatusAnswer(runs.status());
  if (runs->empty()) return ErrorAnswer(404, fmt::format("id: no run {} in the store", **id));
  Json body = Document("parity-run", 1);
  body["run"] = store::RunJson(runs->front());
  const std::string& fingerprint = runs->front().fingerprint;
  const Json parsed = Json::parse(fingerprint.empty() ? "null" : fingerprint, nullptr, false);
  body["run"]["fingerprint"] = parsed.is_discarded() ? Json(nullptr) : parsed;
  // Whether its bundle can be read (a collect's): unreadable, with the reason, when its
  // manifest is missing, corrupt or half-written.
  if (runs->front().kind == "collect") {
    const std::string& path = runs->front().bundle;
    auto bundle = path.empty() ? Result<accept::BundleView>(Status::Invalid("", "none recorded"))
                               : accept::OpenBundle(path);
    const std::string problem = !bundle.ok() ? bundle.status().message() : bundle->problem;
    body["bundle"] = {{"readable", problem.empty()}};
    if (!problem.empty()) body["bundle"]["problem"] = problem;
  }
  return {200, std::move(body)};
}

Answer MetricsApi(Context& context, const Params& params) {
  if (Status s = params.Check({}); !s.ok()) return StatusAnswer(s);
  auto store = context.OpenStore();
  if (!store.ok()) return StatusAnswer(store.status());
  auto names = (*store)->MetricNames(10000);
  if (!names.ok()) return StatusAnswer(names.status());
  Json body = Document("parity-metrics", 1);
  Json list = Json::array();
  for (const auto& [name, points] : *names) list.push_back({{"name", name}, {"points", points}});
  body["metrics"] = std::move(list);
  return {200, std::move(body)};
}

}  // namespace parity::serve
