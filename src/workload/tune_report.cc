// SPDX-License-Identifier: Apache-2.0
// parity tune's report: the JSON document, the text table and the plan's vars.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/text_table.h"
#include "workload/tune.h"

namespace parity::workload {
namespace {

// Per rung, the default's losses over its seeds, step by step: the lowest and the highest
// (null where no seed's loss is finite). parity quality curve judges against these runs.
Json Envelopes(const TuneReport& r) {
  std::map<int, std::vector<const TuneTrial*>> by_rung;
  for (const TuneTrial& t : r.trials) {
    if (t.config == 0 && !t.confirmation && t.status == "ok" && t.losses.is_array()) {
      by_rung[t.rung].push_back(&t);
    }
  }
  Json out = Json::array();
  for (const auto& [rung, runs] : by_rung) {
    if (runs.size() < 2) continue;  // the first run alone: no envelope was made at this rung
    std::size_t steps = 0;
    Json seeds = Json::array();
    for (const TuneTrial* t : runs) {
      steps = std::max(steps, t->losses.size());
      seeds.push_back(t->seed);
    }
    Json low = Json::array(), high = Json::array();
    for (std::size_t i = 0; i < steps; ++i) {
      std::optional<double> lo, hi;
      for (const TuneTrial* t : runs) {
        if (i >= t->losses.size() || !t->losses[i].is_number()) continue;
        const double v = t->losses[i].get<double>();
        if (!std::isfinite(v)) continue;
        lo = lo ? std::min(*lo, v) : v;
        hi = hi ? std::max(*hi, v) : v;
      }
      low.push_back(lo ? Json(*lo) : Json(nullptr));
      high.push_back(hi ? Json(*hi) : Json(nullptr));
    }
    out.push_back({{"rung", rung},
                   {"steps", runs.front()->steps},
                   {"seeds", seeds},
                   {"loss_low", low},
                   {"loss_high", high}});
  }
  return out;
}

}  // namespace

Json TuneJson(const TuneReport& r) {
  Json doc = Document("parity-tune", 1);
  doc["workload"] = r.workload;
  doc["space_size"] = r.space_size;
  doc["configs_tried"] = r.configs.size();
  doc["rung_steps"] = r.rung_steps;
  doc["final_rung"] = r.final_rung;
  doc["budget_s"] = r.budget_s;
  doc["lr_rule"] = r.lr_rule;
  doc["allow_result_changes"] = r.allow_result_changes;
  doc["elapsed_s"] = r.elapsed_s;
  doc["stopped_by_budget"] = r.stopped_by_budget;
  doc["resumed_trials"] = r.resumed_trials;
  auto final_rate = [&](std::size_t config) -> Json {
    for (const TuneTrial& t : r.trials) {
      if (t.config == config && t.rung == r.final_rung && !t.envelope && t.rate) return *t.rate;
    }
    return nullptr;
  };
  auto config_json = [&](std::size_t config) {
    Json c = r.configs[config].ToJson();
    c["label"] = r.configs[config].Label();
    c["samples_per_s"] = final_rate(config);
    if (r.inside[config]) c["loss_inside_envelope"] = *r.inside[config];
    if (r.departure[config]) c["loss_departs_at_step"] = *r.departure[config];
    c["changes_results"] = r.inside[config] == false;
    return c;
  };
  doc["default"] = config_json(0);
  doc["best"] = r.best ? config_json(*r.best) : Json(nullptr);
  if (r.speedup) {
    doc["speedup"] = {{"ratio", *r.speedup},
                      {"low", *r.low},
                      {"high", *r.high},
                      {"confidence", kTuneConfidence},
                      {"method", "percentile bootstrap of the median step's samples/s ratio"},
                      {"interleaved_pairs", r.confirmed_pairs},
                      {"runs_each", 1 + r.confirmed_pairs}};
  } else {
    doc["speedup"] = nullptr;
  }
  if (!r.note.empty()) doc["note"] = r.note;
  doc["envelopes"] = Envelopes(r);
  Json trials = Json::array();
  for (const TuneTrial& t : r.trials) {
    Json j = {{"id", t.id},
              {"config", r.configs[t.config].ToJson()},
              {"label", r.configs[t.config].Label()},
              {"rung", t.rung},
              {"steps", t.steps},
              {"seed", t.seed},
              {"status", t.status},
              {"seconds", t.seconds},
              {"envelope", t.envelope},
              {"confirmation", t.confirmation},
              {"resumed", t.resumed}};
    j["samples_per_s"] = t.rate ? Json(*t.rate) : Json(nullptr);
    if (!t.error.empty()) j["error"] = t.error;
    if (t.losses.is_array()) j["losses"] = t.losses;
    if (t.inside) {
      j["loss_check"] = {{"inside_envelope", *t.inside},
                         {"departs_at_step", t.departure ? Json(*t.departure) : Json(nullptr)}};
    }
    trials.push_back(std::move(j));
  }
  doc["trials"] = std::move(trials);
  return doc;
}

std::string TuneText(const TuneReport& r) {
  std::string text = fmt::format(
      "parity tune {}: {} configurations tried of {} in the space, {} trials, rungs of {} "
      "steps; {:.0f} s of a {:.0f} s budget{}\n\n",
      r.workload, r.configs.size(), r.space_size, r.trials.size(), fmt::join(r.rung_steps, "/"),
      r.elapsed_s, r.budget_s, r.stopped_by_budget ? " (stopped by the budget)" : "");
  if (r.final_rung >= 0) {
    Table table({"configuration", "samples/s", "x default", "losses", "status"},
                {false, true, true, false, false});
    std::vector<const TuneTrial*> rows;
    for (const TuneTrial& t : r.trials) {
      if (t.rung == r.final_rung && !t.envelope && t.status != "not-run") rows.push_back(&t);
    }
    std::sort(rows.begin(), rows.end(), [](const TuneTrial* a, const TuneTrial* b) {
      return a->rate.value_or(-1.0) > b->rate.value_or(-1.0);
    });
    double base = 0.0;
    for (const TuneTrial* t : rows) {
      if (t->config == 0 && t->rate) base = *t->rate;
    }
    for (const TuneTrial* t : rows) {
      std::string losses = "-";
      if (r.inside[t->config]) {
        losses = *r.inside[t->config]
                     ? "inside"
                     : fmt::format("leave at step {:g}", r.departure[t->config].value_or(0.0));
      }
      table.AddRow({r.configs[t->config].Label(), t->rate ? fmt::format("{:.4g}", *t->rate) : "-",
                    t->rate && base > 0 ? fmt::format("{:.3f}", *t->rate / base) : "-", losses,
                    t->status == "ok" ? (r.best == t->config ? "best" : "ok")
                                      : t->status + ": " + t->error});
    }
    text += fmt::format("final rung ({} steps):\n",
                        r.rung_steps[static_cast<std::size_t>(r.final_rung)]);
    text += table.Render() + "\n";
  }
  if (r.best && r.speedup) {
    text += fmt::format(
        "best: {} at {:.3f}x the default [{:.3f}, {:.3f}] (95% bootstrap over {} run{} each{})\n",
        r.configs[*r.best].Label(), *r.speedup, *r.low, *r.high, 1 + r.confirmed_pairs,
        r.confirmed_pairs > 0 ? "s" : "", r.confirmed_pairs > 0 ? ", interleaved" : "");
    if (r.inside[*r.best] == false) {
      text += fmt::format(
          "changes results: its losses leave the default's seed envelope at step {:g} "
          "(recommended only because of --allow-result-changes; judge it with parity quality "
          "curve before adopting it)\n",
          r.departure[*r.best].value_or(0.0));
    }
  } else {
    text += fmt::format("no recommendation: {}\n", r.note);
  }
  return text;
}

std::string TunePlanVars(const TuneReport& r) {
  std::string out = fmt::format("# parity tune {}: the best configuration", r.workload);
  if (r.speedup)
    out += fmt::format(" ({:.3f}x the default [{:.3f}, {:.3f}])", *r.speedup, *r.low, *r.high);
  out += "\nvars:\n";
  if (!r.best) return out + "  {}\n";
  const TuneConfig& c = r.configs[*r.best];
  for (const auto& [key, value] : c.knobs.items()) {
    out +=
        fmt::format("  {}: \"{}\"\n", key,
                    value.is_string() ? value.get<std::string>()
                                      : value.dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  for (const auto& [key, value] : c.env) out += fmt::format("  env_{}: \"{}\"\n", key, value);
  if (c.is_default()) out += "  {}\n";
  return out;
}

}  // namespace parity::workload
