// SPDX-License-Identifier: Apache-2.0
// Stability, of the candidate: each stress stage's silent data corruption and fault recovery
// (parity stress), and from its telemetry record the junction temperature, uncorrectable ECC
// errors, XID events and fatal alerts (parity monitor's metrics and rules).
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "accept/criterion.h"

namespace parity::accept {
namespace {

CriterionResult Make(std::string id, std::string stage, std::string title) {
  CriterionResult r;
  r.id = std::move(id);
  r.part = "stability";
  r.stage = std::move(stage);
  r.title = std::move(title);
  return r;
}

int64_t IntField(const Json& doc, const char* key) {
  return doc.contains(key) && doc[key].is_number() ? doc[key].get<int64_t>() : 0;
}

std::vector<CriterionResult> JudgeStress(const AcceptInput& input, const StageView& stage) {
  const StabilityCriteria& c = input.criteria.stability;
  CriterionResult sdc =
      Make(fmt::format("stability.{}.sdc", stage.name), stage.name,
           c.max_sdc_events == 0
               ? std::string("no silent data corruption")
               : fmt::format("at most {} silent-data-corruption events", c.max_sdc_events));
  CriterionResult faults = Make(fmt::format("stability.{}.faults", stage.name), stage.name,
                                "every injected fault recovered from, no step lost");
  auto both = [&](Verdict status, const std::string& reason) {
    sdc.status = faults.status = status;
    sdc.reason = faults.reason = reason;
    return std::vector<CriterionResult>{sdc, faults};
  };
  if (auto problem = SideProblem("candidate", stage)) return both(problem->first, problem->second);
  auto doc = ReadBundleJson(input.candidate, stage.result, "parity-stress");
  if (!doc.ok()) return both(Verdict::kError, doc.status().message());
  const int64_t events = IntField(*doc, "sdc_event_count");
  sdc.evidence = {{"workload", StringField(*doc, "workload")},
                  {"backend", StringField(*doc, "backend")},
                  {"steps", IntField(*doc, "steps")},
                  {"duration_s", doc->value("duration_s", 0.0)},
                  {"sdc_event_count", events},
                  {"nondeterministic_results", IntField(*doc, "nondeterministic_results")},
                  {"limit", c.max_sdc_events}};
  if (doc->contains("sdc_events") && (*doc)["sdc_events"].is_array()) {
    Json events_list = Json::array();
    for (const Json& e : (*doc)["sdc_events"]) {
      if (events_list.size() >= 20) break;
      events_list.push_back(e);
    }
    sdc.evidence["events"] = std::move(events_list);
  }
  sdc.status = events <= c.max_sdc_events ? Verdict::kPass : Verdict::kFail;
  sdc.reason = fmt::format("{} silent-data-corruption event{} in {} steps", events,
                           events == 1 ? "" : "s", IntField(*doc, "steps"));

  const int64_t injected = IntField(*doc, "faults_injected");
  const int64_t recovered = IntField(*doc, "faults_recovered");
  const int64_t lost = IntField(*doc, "lost_steps");
  faults.evidence = {{"faults_injected", injected},
                     {"faults_recovered", recovered},
                     {"lost_steps", lost},
                     {"duplicated_steps", IntField(*doc, "duplicated_steps")},
                     {"restarts", IntField(*doc, "restarts")},
                     {"limit", c.max_unrecovered_faults}};
  if (doc->contains("recovery_s")) faults.evidence["recovery_s"] = (*doc)["recovery_s"];
  if (injected == 0) {
    faults.status = Verdict::kSkip;
    faults.reason = "no fault was injected, so recovery was not tested";
  } else if (injected - recovered > c.max_unrecovered_faults || lost > 0) {
    faults.status = Verdict::kFail;
    faults.reason = fmt::format("{} of {} faults not recovered from, {} steps lost",
                                injected - recovered, injected, lost);
  } else {
    faults.status = Verdict::kPass;
    faults.reason =
        fmt::format("{} of {} faults recovered from, no step lost", recovered, injected);
  }
  return {sdc, faults};
}

std::string LabelText(const std::map<std::string, std::string>& labels) {
  std::string text;
  for (const auto& [k, v] : labels) {
    if (k == "uuid" || k == "model" || k == "vendor") continue;
    text += fmt::format("{}{}=\"{}\"", text.empty() ? "" : ",", k, v);
  }
  return text;
}

/// The uncorrectable-error counters to sum: per metric and device, the volatile scope when the
/// source reports both scopes (the aggregate one repeats it), else every series.
std::vector<const TelemetrySeries*> EccSeries(const TelemetryRecord& record) {
  std::vector<const TelemetrySeries*> all;
  for (const char* metric : {"gpu_ecc_errors_total", "host_ecc_errors_total"}) {
    for (const TelemetrySeries* s : record.Find(metric, {{"severity", "uncorrectable"}})) {
      all.push_back(s);
    }
  }
  std::map<std::string, bool> has_volatile;
  auto owner = [](const TelemetrySeries* s) {
    auto d = s->labels.find("device");
    return s->metric + ":" + (d == s->labels.end() ? "" : d->second);
  };
  for (const TelemetrySeries* s : all) {
    auto scope = s->labels.find("scope");
    if (scope != s->labels.end() && scope->second == "volatile") has_volatile[owner(s)] = true;
  }
  std::vector<const TelemetrySeries*> out;
  for (const TelemetrySeries* s : all) {
    auto scope = s->labels.find("scope");
    if (has_volatile[owner(s)] && (scope == s->labels.end() || scope->second != "volatile")) {
      continue;
    }
    out.push_back(s);
  }
  return out;
}

std::vector<CriterionResult> JudgeTelemetry(const AcceptInput& input) {
  const StabilityCriteria& c = input.criteria.stability;
  std::vector<CriterionResult> out = {
      Make("stability.temperature", "",
           fmt::format("junction temperature at most {:g} °C", c.max_junction_celsius)),
      Make("stability.ecc", "", "no uncorrectable ECC error"),
      Make("stability.xid", "", "no XID event"),
      Make("stability.alerts", "", "no fatal telemetry alert")};
  if (c.max_uncorrectable_ecc > 0) {
    out[1].title = fmt::format("at most {} uncorrectable ECC errors", c.max_uncorrectable_ecc);
  }
  if (c.max_xid_events > 0) out[2].title = fmt::format("at most {} XID events", c.max_xid_events);
  if (c.max_fatal_alerts > 0) {
    out[3].title = fmt::format("at most {} fatal telemetry alerts", c.max_fatal_alerts);
  }
  auto all = [&](Verdict status, const std::string& reason) {
    for (CriterionResult& r : out) {
      r.status = status;
      r.reason = reason;
    }
    return out;
  };
  if (!input.candidate.problem.empty()) return all(Verdict::kError, input.candidate.problem);
  const auto monitors = input.candidate.OfKind("monitor");
  if (monitors.empty()) {
    return all(Verdict::kSkip, "the candidate bundle has no monitor stage: no telemetry");
  }
  const StageView& monitor = *monitors.front();
  for (CriterionResult& r : out) r.stage = monitor.name;
  if (monitor.status == "skipped" || monitor.status == "error" || monitor.status == "interrupted") {
    return all(monitor.status == "skipped" ? Verdict::kSkip : Verdict::kError,
               fmt::format("the candidate's stage '{}' is {}{}", monitor.name, monitor.status,
                           monitor.reason.empty() ? "" : ": " + monitor.reason));
  }
  const TelemetryRecord* record = input.candidate_telemetry;
  if (record == nullptr) {
    return all(Verdict::kError, input.candidate_telemetry_problem.empty()
                                    ? input.candidate.PathOf("telemetry.jsonl") + ": missing"
                                    : input.candidate_telemetry_problem);
  }
  const Json span = {{"samples", record->samples}, {"seconds", record->end - record->start}};

  // Junction temperature.
  CriterionResult& temp = out[0];
  const auto junction = record->Find("gpu_temperature_celsius", {{"sensor", "junction"}});
  std::optional<double> hottest;
  std::string where;
  for (const TelemetrySeries* s : junction) {
    auto m = s->Max();
    if (m && (!hottest || *m > *hottest)) {
      hottest = m;
      where = LabelText(s->labels);
    }
  }
  temp.evidence = {{"metric", "gpu_temperature_celsius"},
                   {"labels", {{"sensor", "junction"}}},
                   {"limit", c.max_junction_celsius},
                   {"series", junction.size()},
                   {"telemetry", span}};
  if (!hottest) {
    temp.status = Verdict::kSkip;
    temp.reason = "no source reported gpu_temperature_celsius{sensor=\"junction\"}";
  } else {
    temp.evidence["max"] = *hottest;
    temp.evidence["where"] = where;
    temp.status = *hottest <= c.max_junction_celsius ? Verdict::kPass : Verdict::kFail;
    temp.reason = fmt::format("hottest {:.1f} °C ({}), limit {:g} °C", *hottest, where,
                              c.max_junction_celsius);
  }

  // Uncorrectable ECC errors, counted as the counters' increase over the record.
  CriterionResult& ecc = out[1];
  const auto ecc_series = EccSeries(*record);
  double errors = 0.0;
  Json per = Json::array();
  for (const TelemetrySeries* s : ecc_series) {
    const double inc = s->Increase();
    errors += inc;
    per.push_back({{"metric", s->metric},
                   {"labels", LabelText(s->labels)},
                   {"increase", inc},
                   {"first", s->v.front()},
                   {"last", s->v.back()}});
  }
  ecc.evidence = {{"series", per}, {"limit", c.max_uncorrectable_ecc}, {"telemetry", span}};
  if (ecc_series.empty()) {
    ecc.status = Verdict::kSkip;
    ecc.reason =
        "no source reported an uncorrectable-error counter (gpu_ecc_errors_total, "
        "host_ecc_errors_total)";
  } else {
    ecc.evidence["errors"] = errors;
    ecc.status =
        errors <= static_cast<double>(c.max_uncorrectable_ecc) ? Verdict::kPass : Verdict::kFail;
    ecc.reason = fmt::format("{:g} uncorrectable errors during the collect, over {} counters",
                             errors, ecc_series.size());
  }

  // XID events.
  CriterionResult& xid = out[2];
  const auto xids = record->Find("gpu_xid_events_total");
  double events = 0.0;
  Json by_xid = Json::object();
  // NVML's source counts the events since the monitor started: the last value is the count.
  for (const TelemetrySeries* s : xids) {
    const double inc = s->v.back();
    events += inc;
    auto code = s->labels.find("xid");
    if (inc > 0) by_xid[code == s->labels.end() ? "?" : code->second] = inc;
  }
  xid.evidence = {{"by_xid", by_xid}, {"limit", c.max_xid_events}, {"telemetry", span}};
  bool nvml_up = !xids.empty();
  for (const TelemetrySeries& s : record->series) {
    auto vendor = s.labels.find("vendor");
    nvml_up = nvml_up || (vendor != s.labels.end() && vendor->second == "NVIDIA");
  }
  if (!nvml_up) {
    xid.status = Verdict::kSkip;
    xid.reason = "no NVIDIA GPU in the telemetry: XID events come from NVML";
  } else {
    xid.evidence["events"] = events;
    xid.status = events <= static_cast<double>(c.max_xid_events) ? Verdict::kPass : Verdict::kFail;
    xid.reason = fmt::format("{:g} XID events during the collect", events);
  }

  // Fatal alerts from the monitor stage's rules.
  CriterionResult& alerts = out[3];
  int64_t fatal = 0;
  Json list = Json::array();
  for (const Json& a : record->alerts) {
    if (StringField(a, "severity") != "fatal" || a.value("resolved", false)) continue;
    ++fatal;
    if (list.size() < 20) list.push_back(a);
  }
  alerts.evidence = {{"fatal", fatal},
                     {"alerts", record->alerts.size()},
                     {"first", list},
                     {"limit", c.max_fatal_alerts},
                     {"telemetry", span}};
  alerts.status = fatal <= c.max_fatal_alerts ? Verdict::kPass : Verdict::kFail;
  alerts.reason = fmt::format("{} fatal alert{} of {} alerts in {} samples", fatal,
                              fatal == 1 ? "" : "s", record->alerts.size(), record->samples);
  if (record->samples == 0) {
    for (CriterionResult& r : out) {
      r.status = Verdict::kError;
      r.reason = fmt::format("{}: no sample recorded", input.candidate.PathOf("telemetry.jsonl"));
    }
  }
  return out;
}

class Stability final : public Part {
 public:
  std::string_view name() const override { return "stability"; }
  std::vector<CriterionResult> Evaluate(const AcceptInput& input) const override {
    std::vector<CriterionResult> out;
    const auto stress = input.candidate.OfKind("stress");
    for (const StageView* s : stress) {
      for (CriterionResult& r : JudgeStress(input, *s)) out.push_back(std::move(r));
    }
    if (stress.empty()) {
      CriterionResult r = NoStage(input, "stability", "no silent data corruption", "stress");
      r.id = "stability.sdc";
      if (r.status == Verdict::kSkip) r.reason = "the candidate bundle has no stress stage";
      out.push_back(std::move(r));
    }
    for (CriterionResult& r : JudgeTelemetry(input)) out.push_back(std::move(r));
    return out;
  }
};

}  // namespace

const Part* StabilityPart() {
  static const Stability part;
  return &part;
}

}  // namespace parity::accept
