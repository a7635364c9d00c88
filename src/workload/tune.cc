// SPDX-License-Identifier: Apache-2.0
#include "workload/tune.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>

#include "bench/stats.h"
#include "core/file_util.h"
#include "quality/curve.h"
#include "workload/tune_journal.h"

namespace parity::workload {
namespace {

constexpr int kResamples = 4000;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<int> Rungs(int min_steps, int max_steps, int eta) {
  std::vector<int> out;
  for (double s = min_steps; s < max_steps; s *= eta) out.push_back(static_cast<int>(s));
  out.push_back(max_steps);
  return out;
}

// What decides a search (the journal's run): the workload and its settings, the configurations
// in the space, the rungs, seeds and sampling; not the budget.
Json RunKey(const TuneOptions& o, const TuneReport& r) {
  Json configs = Json::array();
  for (const TuneConfig& c : r.configs) configs.push_back(c.ToJson());
  Json env = Json::object();
  for (const auto& [k, v] : o.run.env) env[k] = v;
  return {{"workload", o.run.workload},
          {"size", o.run.size},
          {"device", o.run.device},
          {"warmup", o.run.warmup},
          {"seed", o.run.seed},
          {"settings", o.run.settings},
          {"env", env},
          {"space", configs},
          {"rung_steps", r.rung_steps},
          {"seeds", o.seeds},
          {"eta", o.eta},
          {"max_configs", o.max_configs},
          {"allow_result_changes", o.allow_result_changes},
          {"sample_seed", o.sample_seed}};
}

Json JournalEntry(const TuneConfig& c, const TuneTrial& t) {
  return {{"config", c.ToJson()}, {"rung", t.rung},         {"steps", t.steps},
          {"seed", t.seed},       {"envelope", t.envelope}, {"status", t.status},
          {"error", t.error},     {"seconds", t.seconds},   {"samples", t.samples},
          {"losses", t.losses}};
}

class Search {
 public:
  Search(const TuneOptions& options, TuneReport* report, TuneJournal* journal)
      : options_(options), report_(report), journal_(journal), start_(Now()) {}

  double Elapsed() const { return Now() - start_; }

  /// Whether a run of `config` for `steps` steps fits the budget (the first trial always
  /// does): its own last trial scaled by steps, else the mean of this rung's trials so far.
  bool Fits(std::size_t config, int steps) const {
    if (report_->trials.empty()) return true;
    double estimate = 0.0;
    for (auto it = report_->trials.rbegin(); it != report_->trials.rend(); ++it) {
      if (it->config == config && it->status != "not-run" && it->steps > 0) {
        estimate = it->seconds * (options_.run.warmup + steps) /
                   std::max(1, options_.run.warmup + it->steps);
        break;
      }
    }
    if (estimate == 0.0) {
      double total = 0.0;
      int n = 0;
      for (const TuneTrial& t : report_->trials) {
        if (t.status != "not-run") {
          total += t.seconds * (options_.run.warmup + steps) /
                   std::max(1, options_.run.warmup + t.steps);
          ++n;
        }
      }
      if (n > 0) estimate = total / n;
    }
    return Elapsed() + estimate <= options_.budget_s;
  }

  /// Runs one trial; the Status only for bad input or an interpreter that can't start.
  Result<TuneTrial*> Run(std::size_t config, int rung, int steps, uint64_t seed, bool envelope) {
    TuneTrial t;
    t.id = static_cast<int>(report_->trials.size());
    t.config = config;
    t.rung = rung;
    t.steps = steps;
    t.seed = seed;
    t.envelope = envelope;
    const TuneConfig& c = report_->configs[config];
    if (const Json* done = journal_ != nullptr
                               ? journal_->Find(c.ToJson(), rung, steps, seed, envelope)
                               : nullptr) {
      t.resumed = true;
      t.status = done->value("status", "failed");
      t.error = done->value("error", "");
      t.seconds = done->value("seconds", 0.0);
      for (const Json& x : done->value("samples", Json::array())) {
        if (x.is_number()) t.samples.push_back(x.get<double>());
      }
      t.losses = done->value("losses", Json());
      if (t.status == "ok" && !t.samples.empty()) t.rate = bench::Median(t.samples);
      ++report_->resumed_trials;
      return Record(std::move(t), rung, steps, seed, envelope, c);
    }
    ModelRunOptions o = options_.run;
    o.steps = steps;
    o.seed = seed;
    o.settings = c.knobs;
    o.env = c.env;
    Result<ModelRunOutcome> outcome = RunModel(o);
    if (!outcome.ok()) {
      // A setting the harness refuses (prefetch_factor without workers): that configuration
      // fails; the workload itself being refused (the default) ends the search.
      if (outcome.status().code() != StatusCode::kInvalidInput || c.is_default()) {
        return outcome.status();
      }
      t.status = "failed";
      t.error = outcome.status().message();
    } else if (!outcome->failure.empty()) {
      t.status = "failed";
      t.error = outcome->failure;
      t.seconds = outcome->seconds;
    } else {
      t.status = "ok";
      t.seconds = outcome->seconds;
      const bench::BenchResult r = ModelResult(outcome->report);
      t.samples = r.samples;
      t.losses = outcome->report["losses"];
      if (r.outcome == bench::Outcome::kInvalid) {
        t.status = "failed";
        t.error = r.reason;
      } else if (!t.samples.empty()) {
        t.rate = bench::Median(t.samples);
      }
    }
    if (journal_ != nullptr) PARITY_RETURN_IF_ERROR(journal_->Append(JournalEntry(c, t)));
    return Record(std::move(t), rung, steps, seed, envelope, c);
  }

  TuneTrial* Record(TuneTrial t, int rung, int steps, uint64_t seed, bool envelope,
                    const TuneConfig& c) {
    report_->trials.push_back(std::move(t));
    TuneTrial* trial = &report_->trials.back();
    if (options_.progress) {
      options_.progress(
          fmt::format("[{}] {} ({} steps{}) {}: {} ({:.1f} s{}; {:.0f} of {:.0f} s)", trial->id + 1,
                      static_cast<std::size_t>(rung) < report_->rung_steps.size()
                          ? fmt::format("rung {}/{}", rung + 1, report_->rung_steps.size())
                          : std::string("confirming"),
                      steps, envelope ? fmt::format(", seed {}", seed) : "", c.Label(),
                      trial->rate ? fmt::format("{:.4g} samples/s", *trial->rate) : trial->error,
                      trial->seconds, trial->resumed ? ", from the journal" : "", Elapsed(),
                      options_.budget_s));
    }
    return trial;
  }

  void NotRun(std::size_t config, int rung, int steps) {
    TuneTrial t;
    t.id = static_cast<int>(report_->trials.size());
    t.config = config;
    t.rung = rung;
    t.steps = steps;
    t.status = "not-run";
    t.error = "the budget ran out";
    report_->trials.push_back(std::move(t));
  }

 private:
  const TuneOptions& options_;
  TuneReport* report_;
  TuneJournal* journal_;
  double start_;
};

// Whether each configuration's losses at the final rung stay inside the default's seed
// envelope: `parity quality curve`'s judgement (RunCurve) on the same CSV files it reads.
Status CheckLosses(const TuneOptions& options, const std::vector<const TuneTrial*>& envelope,
                   const std::vector<TuneTrial*>& candidates, TuneReport* report) {
  std::error_code ec;
  std::string dir = (std::filesystem::temp_directory_path(ec) / "parity-tune-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) return Status::Unavailable("cannot make a directory");
  std::vector<std::string> a;
  for (const TuneTrial* t : envelope) {
    a.push_back(fmt::format("{}/default.seed{}.csv", dir, t->seed));
    PARITY_RETURN_IF_ERROR(WriteTextFile(a.back(), LossCurveCsv(t->losses)));
  }
  for (TuneTrial* t : candidates) {
    CurveOptions curve;
    curve.a = a;
    curve.b = {fmt::format("{}/trial{}.csv", dir, t->id)};
    curve.patience = options.patience;
    PARITY_RETURN_IF_ERROR(WriteTextFile(curve.b.front(), LossCurveCsv(t->losses)));
    Result<CurveReport> judged = RunCurve(curve);
    if (!judged.ok()) {
      std::filesystem::remove_all(dir, ec);
      return judged.status();
    }
    t->inside = !judged->first_departure.has_value();
    t->departure = judged->first_departure;
    report->inside[t->config] = t->inside;
    report->departure[t->config] = t->departure;
  }
  std::filesystem::remove_all(dir, ec);
  return Status::Ok();
}

}  // namespace

Result<TuneReport> RunTune(const TuneOptions& options) {
  TuneReport report;
  report.workload = options.run.workload;
  report.budget_s = options.budget_s;
  report.lr_rule = options.run.settings.value("lr_rule", "held");
  report.allow_result_changes = options.allow_result_changes;
  // Whether a configuration may be promoted and recommended: its losses inside the default's
  // envelope, or checked and outside it where the user allows results to change.
  auto eligible = [&](std::size_t config) {
    return report.inside[config] == true ||
           (options.allow_result_changes && report.inside[config].has_value());
  };
  report.configs = Configurations(options.space);
  report.space_size = report.configs.size();
  report.rung_steps = Rungs(options.min_steps, options.max_steps, options.eta);
  report.inside.assign(report.configs.size(), std::nullopt);
  report.departure.assign(report.configs.size(), std::nullopt);
  if (!options.space.knobs.empty()) {  // a knob the workload lacks: refused before any trial
    PARITY_ASSIGN_OR_RETURN(const WorkloadKnobs has, ProbeKnobs(options.run));
    PARITY_RETURN_IF_ERROR(CheckSpaceKnobs(options.space, has, options.run.workload));
  }
  std::optional<TuneJournal> journal;
  if (!options.journal.empty()) {
    PARITY_ASSIGN_OR_RETURN(journal, TuneJournal::Open(options.journal, RunKey(options, report)));
    if (options.progress && (journal->loaded() > 0 || journal->dropped())) {
      options.progress(fmt::format("{}: {} finished trials to take up{}", options.journal,
                                   journal->loaded(),
                                   journal->dropped() ? " (a last, partial line cut off)" : ""));
    }
  }
  Search search(options, &report, journal ? &*journal : nullptr);

  // The default's first trial tells what a trial costs here; the space is sampled down to
  // what the budget holds: n configurations cost about n * t0 * the rungs' step ratios over
  // the halving, plus the envelope's runs at every rung.
  PARITY_ASSIGN_OR_RETURN(TuneTrial * first,
                          search.Run(0, 0, report.rung_steps.front(), options.run.seed, false));
  if (!first->rate) {  // nothing to measure a speed-up against: no point trying the rest
    report.note = "the default configuration failed (" + first->error +
                  "): there is nothing to measure a speed-up against";
    report.elapsed_s = search.Elapsed();
    return report;
  }
  // (1.5 x: trials of other settings start and run slower than the default's first.)
  const double t0 = 1.5 * std::max(first->seconds, 0.01);
  auto scale = [&](int steps) {
    return static_cast<double>(options.run.warmup + steps) /
           (options.run.warmup + report.rung_steps.front());
  };
  auto cost = [&](std::size_t n) {
    double total = 0.0;
    double alive = static_cast<double>(n);
    for (int steps : report.rung_steps) {
      total += (alive + options.seeds - 1) * t0 * scale(steps);
      alive = std::ceil(alive / options.eta) + 1;  // the fastest 1/eta and the default
    }
    return total;
  };
  std::size_t n = std::min<std::size_t>(report.configs.size(),
                                        static_cast<std::size_t>(std::max(1, options.max_configs)));
  // One trial of each configuration at the first rung is the least a search can be.
  if (const double least = static_cast<double>(n) * first->seconds; least > options.budget_s) {
    return Status::Invalid(
        options.space.path,
        fmt::format("a budget of {:.0f} s is too small for one trial of each of the {} "
                    "configurations: at least {:.0f} s (the default's first trial took {:.1f} "
                    "s; --max-configs samples fewer)",
                    options.budget_s, n, std::ceil(least), first->seconds));
  }
  while (n > 2 && cost(n) > options.budget_s) --n;
  if (n < report.configs.size()) {
    std::vector<TuneConfig> rest(report.configs.begin() + 1, report.configs.end());
    std::mt19937_64 gen(options.sample_seed);
    std::shuffle(rest.begin(), rest.end(), gen);
    rest.resize(n - 1);
    report.configs.resize(1);
    report.configs.insert(report.configs.end(), rest.begin(), rest.end());
    report.inside.assign(report.configs.size(), std::nullopt);
    report.departure.assign(report.configs.size(), std::nullopt);
  }

  std::vector<std::size_t> alive(report.configs.size());
  for (std::size_t i = 0; i < alive.size(); ++i) alive[i] = i;
  std::map<std::size_t, std::size_t> final_trials;  // config -> trial index, final rung
  auto trial = [&](std::size_t config) -> const TuneTrial& {
    return report.trials[final_trials.at(config)];
  };
  std::vector<std::size_t> reserve;  // inside at the rung before, fastest first, not promoted
  std::size_t want = 0;              // configurations promoted besides the default
  for (int rung = 0; rung < static_cast<int>(report.rung_steps.size()); ++rung) {
    const int steps = report.rung_steps[static_cast<std::size_t>(rung)];
    std::map<std::size_t, std::size_t> done;
    bool complete = true;
    for (std::size_t config : alive) {
      if (rung == 0 && config == 0) {  // ran above
        done[0] = 0;
        continue;
      }
      if (report.stopped_by_budget || !search.Fits(config, steps)) {
        report.stopped_by_budget = true;
        search.NotRun(config, rung, steps);
        complete = false;
        continue;
      }
      PARITY_ASSIGN_OR_RETURN(TuneTrial * t,
                              search.Run(config, rung, steps, options.run.seed, false));
      done[config] = static_cast<std::size_t>(t->id);
    }
    if (!complete) break;
    if (!report.trials[done.at(0)].rate) {
      report.note =
          "the default configuration failed: there is nothing to measure a speed-up against";
      break;
    }
    // The default's seed envelope at this rung's steps: configurations whose losses leave it
    // are flagged, and neither promoted nor recommended.
    std::vector<std::size_t> envelope_ids = {done.at(0)};
    for (int seed = 1; seed < options.seeds; ++seed) {
      if (report.stopped_by_budget || !search.Fits(0, steps)) {
        report.stopped_by_budget = true;
        complete = false;
        break;
      }
      PARITY_ASSIGN_OR_RETURN(TuneTrial * t,
                              search.Run(0, rung, steps, options.run.seed + seed, true));
      if (t->status == "ok") envelope_ids.push_back(static_cast<std::size_t>(t->id));
    }
    if (!complete) break;
    if (envelope_ids.size() < 2) {
      report.note =
          "the default's runs with other seeds failed: no envelope to check losses "
          "against, so nothing is recommended";
      break;
    }
    std::vector<const TuneTrial*> envelope;
    std::vector<TuneTrial*> candidates;
    for (std::size_t id : envelope_ids) envelope.push_back(&report.trials[id]);
    for (const auto& [config, index] : done) {
      if (report.trials[index].rate) candidates.push_back(&report.trials[index]);
    }
    PARITY_RETURN_IF_ERROR(CheckLosses(options, envelope, candidates, &report));
    // Configurations flagged only now, with more steps, make room for the next fastest of the
    // rung before (backfill), so that a late flag does not leave the search with none.
    auto inside_here = [&] {
      std::size_t n = 0;
      for (const auto& [config, index] : done) {
        if (config != 0 && report.trials[index].rate && eligible(config)) ++n;
      }
      return n;
    };
    while (rung > 0 && inside_here() < want && !reserve.empty()) {
      const std::size_t config = reserve.front();
      reserve.erase(reserve.begin());
      if (!search.Fits(config, steps)) {
        report.stopped_by_budget = true;
        break;
      }
      PARITY_ASSIGN_OR_RETURN(TuneTrial * t,
                              search.Run(config, rung, steps, options.run.seed, false));
      done[config] = static_cast<std::size_t>(t->id);
      if (!t->rate) continue;
      std::vector<const TuneTrial*> again;  // trials moved as the list grew
      for (std::size_t id : envelope_ids) again.push_back(&report.trials[id]);
      PARITY_RETURN_IF_ERROR(CheckLosses(options, again, {t}, &report));
    }
    report.final_rung = rung;
    final_trials = done;
    // Keep the fastest 1/eta of those that ran with their losses inside, and the default.
    std::vector<std::size_t> ranked;
    for (const auto& [config, index] : final_trials) {
      if (report.trials[index].rate && eligible(config)) ranked.push_back(config);
    }
    std::sort(ranked.begin(), ranked.end(),
              [&](std::size_t x, std::size_t y) { return *trial(x).rate > *trial(y).rate; });
    const std::size_t keep =
        std::max<std::size_t>(1, (ranked.size() + static_cast<std::size_t>(options.eta) - 1) /
                                     static_cast<std::size_t>(options.eta));
    reserve.assign(ranked.begin() + static_cast<std::ptrdiff_t>(std::min(ranked.size(), keep)),
                   ranked.end());
    std::erase(reserve, std::size_t{0});  // the default goes on anyway
    ranked.resize(std::min(ranked.size(), keep));
    want = static_cast<std::size_t>(
        std::count_if(ranked.begin(), ranked.end(), [](std::size_t c) { return c != 0; }));
    if (std::find(ranked.begin(), ranked.end(), 0) == ranked.end()) ranked.push_back(0);
    std::sort(ranked.begin(), ranked.end());
    alive = ranked;
  }
  if (report.final_rung < 0) {
    if (report.note.empty()) report.note = "no rung finished within the budget";
  } else {
    for (const auto& [config, index] : final_trials) {
      const TuneTrial& t = report.trials[index];
      if (!t.rate || !eligible(config)) continue;
      if (!report.best || *t.rate > *trial(*report.best).rate) report.best = config;
    }
    if (!report.best) {
      report.note = "every configuration's losses leave the default's seed envelope";
    } else {
      // The best and the default again, interleaved (default, best, default, best ...), so
      // that a drift of the machine's speed falls on both; their steps join the final rung's.
      const int steps = report.rung_steps[static_cast<std::size_t>(report.final_rung)];
      const int confirm_rung = static_cast<int>(report.rung_steps.size());
      std::vector<double> def_samples = trial(0).samples;
      std::vector<double> best_samples = trial(*report.best).samples;
      for (int pair = 0; *report.best != 0 && pair < options.confirm; ++pair) {
        if (!search.Fits(0, steps) || !search.Fits(*report.best, steps)) {
          report.stopped_by_budget = true;
          break;
        }
        const uint64_t seed = options.run.seed + 1000 + static_cast<uint64_t>(pair);
        PARITY_ASSIGN_OR_RETURN(TuneTrial * d, search.Run(0, confirm_rung, steps, seed, false));
        d->confirmation = true;
        const std::vector<double> d_samples = d->samples;
        PARITY_ASSIGN_OR_RETURN(TuneTrial * b,
                                search.Run(*report.best, confirm_rung, steps, seed, false));
        b->confirmation = true;
        if (d_samples.empty() || b->samples.empty()) break;  // a re-run failed: none counted
        def_samples.insert(def_samples.end(), d_samples.begin(), d_samples.end());
        best_samples.insert(best_samples.end(), b->samples.begin(), b->samples.end());
        ++report.confirmed_pairs;
      }
      report.speedup = bench::Median(best_samples) / bench::Median(def_samples);
      const bench::Interval ci =
          bench::BootstrapMedianRatio(def_samples, best_samples, kTuneConfidence, kResamples, 7);
      report.low = ci.low;
      report.high = ci.high;
    }
  }
  report.elapsed_s = search.Elapsed();
  return report;
}

}  // namespace parity::workload
