// SPDX-License-Identifier: Apache-2.0
#include "store/json.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace parity::store {
namespace {

/// `text`, or null when it is empty (absent).
Json StringOrNull(const std::string& text) { return text.empty() ? Json(nullptr) : Json(text); }

/// obj[key] = value (null when absent; non-finite as SetNumber writes it).
void SetOptional(Json& obj, std::string_view key, std::optional<double> value) {
  if (value) {
    SetNumber(obj, key, *value);
  } else {
    obj[std::string(key)] = nullptr;
  }
}

}  // namespace

Json RunJson(const RunRecord& run, bool stages) {
  Json j = Json::object();
  j["id"] = run.id;
  j["uid"] = run.uid;
  j["kind"] = run.kind;
  j["node"] = StringOrNull(run.node);
  SetNumber(j, "started", run.started);
  SetOptional(j, "finished", run.finished);
  j["level"] = run.level ? Json(*run.level) : Json(nullptr);
  j["backend"] = StringOrNull(run.backend);
  j["plan"] = StringOrNull(run.plan);
  j["bundle"] = StringOrNull(run.bundle);
  j["status"] = StringOrNull(run.status);
  j["tool_version"] = StringOrNull(run.tool_version);
  if (!stages) return j;
  Json list = Json::array();
  for (const StageRecord& s : run.stages) {
    Json stage = Json::object();
    stage["name"] = s.name;
    stage["kind"] = StringOrNull(s.kind);
    stage["status"] = StringOrNull(s.status);
    stage["reason"] = StringOrNull(s.reason);
    SetOptional(stage, "seconds", s.seconds);
    list.push_back(std::move(stage));
  }
  j["stages"] = std::move(list);
  return j;
}

Json TrendJson(const Trend& t) {
  Json j = Json::object();
  j["node"] = StringOrNull(t.node);
  j["name"] = t.name;
  j["dtype"] = StringOrNull(t.dtype);
  // The params as the object they are; text that is not JSON stays text.
  Json params = Json::parse(t.params.empty() ? "{}" : t.params, nullptr, false);
  j["params"] = params.is_discarded() ? Json(t.params) : std::move(params);
  j["unit"] = StringOrNull(t.unit);
  j["better"] = StringOrNull(t.better);
  j["points"] = t.points;
  SetNumber(j, "first", t.first);
  SetNumber(j, "last", t.last);
  SetNumber(j, "min", t.min);
  SetNumber(j, "max", t.max);
  SetNumber(j, "first_started", t.first_started);
  SetNumber(j, "last_started", t.last_started);
  SetOptional(j, "change", t.change);
  SetOptional(j, "vs_previous", t.vs_previous);
  j["verdict"] = t.verdict;
  return j;
}

}  // namespace parity::store
