// SPDX-License-Identifier: Apache-2.0
#include "collect/collect.h"

#include <fmt/format.h>
#include <sodium.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "collect/bundle.h"
#include "collect/stage.h"
#include "collect/stage_util.h"
#include "collect/telemetry.h"
#include "core/file_util.h"
#include "core/text_table.h"
#include "core/version.h"
#include "env/fingerprint.h"
#include "store/store.h"

namespace parity::collect {
namespace {

namespace fs = std::filesystem;

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double Steady() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string Hex(const unsigned char* bytes, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += fmt::format("{:02x}", bytes[i]);
  return out;
}

std::string NewUid() {
  unsigned char bytes[16];
  randombytes_buf(bytes, sizeof bytes);
  return Hex(bytes, sizeof bytes);
}

/// What a stage's result depends on: its kind, its keys at this level, the contents of the
/// files it names (a stress matrix), and the backend for the kinds that use one. The scripts an
/// exec, dump or quality command runs are its own business: --redo runs such a stage again.
std::string StageDigest(const PlanStage& stage, const Json& params, const std::string& backend,
                        const std::string& plan_dir) {
  Json what = {{"kind", stage.kind}, {"params", params}};
  if (stage.kind == "bench" || stage.kind == "stress") what["backend"] = backend;
  if (params.contains("matrix") && params["matrix"].is_string()) {
    auto text = ReadSmallFile(Resolve(plan_dir, params["matrix"].get<std::string>()),
                              std::size_t{1} << 20, "matrix");
    what["matrix_text"] = text.ok() ? *text : std::string();
  }
  const std::string text = what.dump();
  unsigned char digest[32];
  crypto_generichash(digest, sizeof digest, reinterpret_cast<const unsigned char*>(text.data()),
                     text.size(), nullptr, 0);
  return Hex(digest, sizeof digest);
}

std::string Duration(double seconds) {
  if (seconds < 0) seconds = 0;
  if (seconds < 60) return fmt::format("{:.0f}s", seconds);
  if (seconds < 3600)
    return fmt::format("{}m{:02}s", static_cast<int>(seconds) / 60, static_cast<int>(seconds) % 60);
  return fmt::format("{}h{:02}m", static_cast<int>(seconds) / 3600,
                     (static_cast<int>(seconds) % 3600) / 60);
}

bool Completed(const std::string& status) { return status == "passed" || status == "failed"; }

Json MetricToJson(const store::MetricRecord& m) {
  Json j = {{"name", m.name}, {"unit", m.unit}, {"value", m.value}, {"valid", m.valid}};
  if (!m.dtype.empty()) j["dtype"] = m.dtype;
  j["params"] = Json::parse(m.params.empty() ? "{}" : m.params, nullptr, false);
  if (j["params"].is_discarded()) j["params"] = Json::object();
  if (m.cv) j["cv"] = *m.cv;
  if (!m.better.empty()) j["better"] = m.better;
  return j;
}

store::MetricRecord MetricFromJson(const std::string& stage, const Json& j) {
  store::MetricRecord m;
  m.stage = stage;
  m.name = StringField(j, "name");
  m.dtype = StringField(j, "dtype");
  m.params = j.contains("params") ? j["params"].dump() : "{}";
  m.unit = StringField(j, "unit");
  m.value = j.value("value", 0.0);
  if (j.contains("cv") && j["cv"].is_number()) m.cv = j["cv"].get<double>();
  m.valid = j.value("valid", true);
  m.better = StringField(j, "better");
  return m;
}

/// The progress display: a line per stage start and end, or with a terminal, one line
/// redrawn every second with the stage, its elapsed time, and the ETA of the whole plan.
class Progress {
 public:
  Progress(std::FILE* out, bool tty, std::size_t total) : out_(out), tty_(tty), total_(total) {}
  ~Progress() { Finish(); }

  void Begin(std::size_t index, const std::string& name, const std::string& kind, double estimate,
             double remaining_after) {
    if (out_ == nullptr) return;
    std::lock_guard<std::mutex> lock(mutex_);
    index_ = index;
    name_ = name;
    kind_ = kind;
    estimate_ = estimate;
    remaining_after_ = remaining_after;
    started_ = Steady();
    if (!tty_) {
      std::fprintf(out_, "parity collect: [%zu/%zu] %s (%s) started, ETA %s\n", index, total_,
                   name.c_str(), kind.c_str(), Duration(estimate + remaining_after).c_str());
      std::fflush(out_);
    } else if (!ticker_.joinable()) {
      ticker_ = std::thread([this] { Tick(); });
    }
    active_ = true;
  }

  void End(const std::string& status, const std::string& reason, double seconds) {
    if (out_ == nullptr) return;
    std::lock_guard<std::mutex> lock(mutex_);
    active_ = false;
    std::string line = fmt::format("parity collect: [{}/{}] {} {} in {:.1f} s", index_, total_,
                                   name_, status, seconds);
    if (!reason.empty()) line += fmt::format(": {}", reason);
    std::fprintf(out_, "%s%s\n", tty_ ? "\r\033[K" : "", line.c_str());
    std::fflush(out_);
  }

  void Note(const std::string& line) {
    if (out_ == nullptr) return;
    std::lock_guard<std::mutex> lock(mutex_);
    std::fprintf(out_, "%sparity collect: %s\n", tty_ ? "\r\033[K" : "", line.c_str());
    std::fflush(out_);
  }

  void Finish() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    if (ticker_.joinable()) ticker_.join();
  }

 private:
  void Tick() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!done_) {
      if (active_) {
        const double elapsed = Steady() - started_;
        const double eta = std::max(0.0, estimate_ - elapsed) + remaining_after_;
        std::fprintf(out_, "\r\033[Kparity collect: [%zu/%zu] %s (%s)  %s elapsed  ETA %s", index_,
                     total_, name_.c_str(), kind_.c_str(), Duration(elapsed).c_str(),
                     Duration(eta).c_str());
        std::fflush(out_);
      }
      wake_.wait_for(lock, std::chrono::seconds(1), [this] { return done_; });
    }
  }

  std::FILE* out_;
  bool tty_;
  std::size_t total_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread ticker_;
  bool done_ = false, active_ = false;
  std::size_t index_ = 0;
  std::string name_, kind_;
  double estimate_ = 0, remaining_after_ = 0, started_ = 0;
};

class Collector {
 public:
  Collector(const Plan& plan, const CollectOptions& options) : plan_(plan), options_(options) {}

  Result<CollectRun> Run();

 private:
  Status Save() { return WriteManifest(bundle_, run_.manifest); }
  Json& StageEntry(std::size_t i) { return run_.manifest["stages"][i]; }
  double EstimateOf(const PlanStage& stage, const Json& params);
  void RunStage(std::size_t i, std::size_t index, double remaining_after);
  void Record();

  const Plan& plan_;
  const CollectOptions& options_;
  std::string bundle_;
  std::string backend_;
  std::string node_;
  CollectRun run_;
  std::vector<Json> params_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Telemetry> telemetry_;
  std::unique_ptr<Progress> progress_;
};

double Collector::EstimateOf(const PlanStage& stage, const Json& params) {
  if (stage.estimate) return *stage.estimate;
  if (store_) {
    auto last = store_->LastStageSeconds(node_, plan_.name, stage.name);
    if (last.ok() && *last) return **last;
  }
  return FindStageKind(stage.kind)->Estimate(params);
}

void Collector::RunStage(std::size_t i, std::size_t index, double remaining_after) {
  const PlanStage& stage = plan_.stages[i];
  const StageKind* kind = FindStageKind(stage.kind);
  Json& entry = StageEntry(i);
  StageRun run;
  run.name = stage.name;
  run.params = params_[i];
  run.level = options_.level;
  run.backend = backend_;
  run.bundle_dir = bundle_;
  run.stage_rel = "stages/" + stage.name;
  run.stage_dir = bundle_ + "/" + run.stage_rel;
  run.log_path = bundle_ + "/logs/" + stage.name + ".log";
  run.plan_dir = plan_.dir;
  run.parity = options_.parity;
  run.timeout = stage.timeout;
  run.stop = options_.stop;
  std::error_code ec;
  fs::remove_all(run.stage_dir, ec);
  fs::create_directories(run.stage_dir, ec);
  fs::remove(run.log_path, ec);
  const double started = UnixNow();
  entry["status"] = "running";
  entry["started"] = started;
  entry.erase("reason");
  entry.erase("seconds");
  entry["result"] = nullptr;
  entry["summary"] = Json::object();
  entry["metrics"] = Json::array();
  if (Status s = Save(); !s.ok()) progress_->Note(fmt::format("warning: {}", s.message()));
  if (telemetry_) telemetry_->SetStage(stage.name);
  progress_->Begin(index, stage.name, stage.kind, EstimateOf(stage, run.params), remaining_after);
  const double t0 = Steady();
  StageOutcome outcome;
  if (ec) {
    outcome.reason = fmt::format("{}: {}", run.stage_dir, ec.message());
  } else {
    try {
      outcome = kind->Run(run);
    } catch (const std::exception& e) {
      // A result file shaped in a way the stage did not expect: its result, not the collect.
      outcome = StageOutcome();
      outcome.reason = fmt::format("internal error reading the stage's result: {}", e.what());
    }
  }
  const double seconds = Steady() - t0;
  if (telemetry_) {
    telemetry_->SetStage("");
    const std::vector<std::string> fatal = telemetry_->TakeFatal(stage.name);
    if (!fatal.empty() && (outcome.status == "passed" || outcome.status == "failed")) {
      const std::string reason =
          fmt::format("fatal alert{} while it ran: {}", fatal.size() == 1 ? "" : "s", fatal[0]);
      outcome.reason = outcome.status == "passed" ? reason : outcome.reason + "; " + reason;
      outcome.status = "failed";
    }
  }
  entry["status"] = outcome.status;
  entry["seconds"] = seconds;
  if (!outcome.reason.empty()) entry["reason"] = outcome.reason;
  entry["result"] = outcome.result.empty() ? Json() : Json(outcome.result);
  entry["summary"] = outcome.summary;
  Json metrics = Json::array();
  for (const store::MetricRecord& m : outcome.metrics) metrics.push_back(MetricToJson(m));
  entry["metrics"] = metrics;
  ++run_.ran;
  if (outcome.status == "skipped") ++run_.unavailable;
  progress_->End(outcome.status, outcome.reason, seconds);
  if (Status s = Save(); !s.ok()) progress_->Note(fmt::format("warning: {}", s.message()));
}

void Collector::Record() {
  if (!store_) return;
  const Json& m = run_.manifest;
  store::RunRecord record;
  record.uid = m["uid"];
  record.kind = "collect";
  record.node = node_;
  record.started = m.value("created", 0.0);
  if (m.contains("finished") && m["finished"].is_number())
    record.finished = m["finished"].get<double>();
  record.level = m.value("level", 1);
  record.backend = backend_;
  record.plan = plan_.name;
  record.bundle = bundle_;
  record.status = StringField(m, "status");
  record.tool_version = kParityVersion;
  record.fingerprint = m.contains("fingerprint") ? m["fingerprint"].dump() : "";
  for (const Json& s : m["stages"]) {
    store::StageRecord stage;
    stage.name = StringField(s, "name");
    stage.kind = StringField(s, "kind");
    stage.status = StringField(s, "status");
    stage.reason = StringField(s, "reason");
    if (s.contains("seconds") && s["seconds"].is_number())
      stage.seconds = s["seconds"].get<double>();
    record.stages.push_back(stage);
    if (s.contains("metrics") && s["metrics"].is_array()) {
      for (const Json& metric : s["metrics"]) {
        // A figure that is not a finite number is not a figure (the store refuses NaN).
        if (!metric.is_object() || !metric.contains("value") || !metric["value"].is_number() ||
            !std::isfinite(metric["value"].get<double>())) {
          continue;
        }
        record.metrics.push_back(MetricFromJson(stage.name, metric));
      }
    }
  }
  if (Status s = store_->Record(record); !s.ok()) run_.store_problem = s.message();
}

Result<CollectRun> Collector::Run() {
  if (sodium_init() < 0) return Status::Internal("libsodium failed to initialise");
  std::error_code ec;
  bundle_ = fs::absolute(options_.bundle, ec).lexically_normal().string();
  while (bundle_.size() > 1 && bundle_.back() == '/') bundle_.pop_back();
  run_.bundle = bundle_;
  backend_ = options_.backend.empty() ? plan_.backend : options_.backend;
  PARITY_RETURN_IF_ERROR(PrepareBundle(bundle_));
  PARITY_ASSIGN_OR_RETURN(BundleLock lock, BundleLock::Acquire(bundle_));
  PARITY_ASSIGN_OR_RETURN(std::optional<Json> previous, LoadManifest(bundle_));
  const Json fingerprint = env::Fingerprint();
  node_ = StringField(fingerprint, "hostname");
  if (node_.empty()) {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) node_ = host;
  }
  if (!options_.db_path.empty()) {
    auto opened = store::Store::Open(options_.db_path);
    if (opened.ok()) {
      store_ = std::move(opened).value();
    } else {
      run_.store_problem = opened.status().message();
    }
  }
  if (previous) {
    // A bundle is one machine's evidence, gathered up to its level: resuming it elsewhere, or
    // at a lower level (which would mark the higher stages skipped), would mix or drop results.
    const std::string was = StringField(*previous, "node");
    if (!was.empty() && was != node_) {
      return Status::Invalid(bundle_, fmt::format("was collected on {}, not on this machine ({}); "
                                                  "give a new directory",
                                                  was, node_));
    }
    const int level = previous->contains("level") && (*previous)["level"].is_number_integer()
                          ? (*previous)["level"].get<int>()
                          : 1;
    if (options_.level < level) {
      return Status::Invalid(bundle_, fmt::format("was collected at level {}; resume it at level "
                                                  "{} or above, or give a new directory",
                                                  level, level));
    }
  }
  const double now = UnixNow();
  Json& m = run_.manifest;
  m = Document("parity-bundle", 1);
  m["uid"] = previous ? (*previous)["uid"] : Json(NewUid());
  m["created"] = previous ? previous->value("created", now) : now;
  m["updated"] = now;
  m["finished"] = nullptr;
  m["status"] = "running";
  m["plan"] = PlanToJson(plan_);
  m["plan_file"] = "plan.yaml";
  m["level"] = options_.level;
  m["backend"] = backend_;
  m["tool"] = {{"name", "parity"}, {"version", kParityVersion}};
  m["node"] = node_;
  m["fingerprint"] = fingerprint;
  m["telemetry"] = nullptr;
  Json collects = previous ? previous->value("collects", Json::array()) : Json::array();
  collects.push_back(
      {{"started", now}, {"level", options_.level}, {"backend", backend_}, {"status", "running"}});
  m["collects"] = collects;
  PARITY_RETURN_IF_ERROR(WriteFileAtomically(bundle_ + "/plan.yaml", {AsBytes(plan_.text)}));

  // Each stage: kept from the earlier collect, skipped below its level, or to run.
  const std::set<std::string> redo(options_.redo.begin(), options_.redo.end());
  Json stages = Json::array();
  std::vector<std::size_t> to_run;
  std::optional<std::size_t> monitor_index;
  for (std::size_t i = 0; i < plan_.stages.size(); ++i) {
    const PlanStage& stage = plan_.stages[i];
    params_.push_back(EffectiveParams(stage, options_.level));
    const std::string digest = StageDigest(stage, params_.back(), backend_, plan_.dir);
    Json entry = {{"name", stage.name},
                  {"kind", stage.kind},
                  {"level", stage.level},
                  {"digest", digest},
                  {"log", "logs/" + stage.name + ".log"}};
    const Json* before = nullptr;
    if (previous) {
      for (const Json& s : (*previous)["stages"]) {
        if (s.is_object() && StringField(s, "name") == stage.name) before = &s;
      }
    }
    if (options_.level < stage.level) {
      entry["status"] = "skipped";
      entry["reason"] =
          fmt::format("runs from level {} (this collect is level {})", stage.level, options_.level);
      entry["log"] = nullptr;
    } else if (before != nullptr && StringField(*before, "digest") == digest &&
               Completed(StringField(*before, "status")) && !redo.count(stage.name) &&
               !FindStageKind(stage.kind)->background()) {
      entry = *before;
      entry["reused"] = true;
      ++run_.reused;
    } else if (FindStageKind(stage.kind)->background()) {
      monitor_index = i;
      entry["status"] = "pending";
    } else {
      entry["status"] = "pending";
      to_run.push_back(i);
    }
    stages.push_back(std::move(entry));
  }
  m["stages"] = std::move(stages);
  PARITY_RETURN_IF_ERROR(Save());

  progress_ = std::make_unique<Progress>(options_.progress, options_.tty, to_run.size());
  if (monitor_index) {
    const PlanStage& stage = plan_.stages[*monitor_index];
    Json& entry = StageEntry(*monitor_index);
    entry["started"] = UnixNow();
    auto started =
        Telemetry::Start(params_[*monitor_index], plan_.dir, bundle_ + "/telemetry.jsonl");
    if (started.ok()) {
      telemetry_ = std::move(started).value();
      entry["status"] = "running";
      m["telemetry"] = "telemetry.jsonl";
      Json sources = Json::array();
      for (const monitor::SourceState& s : telemetry_->sources()) {
        Json source = {{"name", s.name}, {"up", s.up}};
        if (!s.up) source["reason"] = s.reason;
        sources.push_back(source);
      }
      entry["summary"] = {{"sources", sources}};
    } else {
      const bool unavailable = started.status().code() == StatusCode::kUnavailable;
      entry["status"] = unavailable ? "skipped" : "error";
      if (unavailable) ++run_.unavailable;
      entry["reason"] = started.status().message();
      progress_->Note(fmt::format("{}: {}", stage.name, started.status().message()));
    }
    PARITY_RETURN_IF_ERROR(Save());
  }

  // Stages in plan order; ETA from the estimates of those still to come.
  std::vector<double> estimates;
  for (std::size_t i : to_run) estimates.push_back(EstimateOf(plan_.stages[i], params_[i]));
  for (std::size_t k = 0; k < to_run.size(); ++k) {
    if (options_.stop && options_.stop->load()) break;
    double after = 0.0;
    for (std::size_t j = k + 1; j < estimates.size(); ++j) after += estimates[j];
    RunStage(to_run[k], k + 1, after);
    if (StageEntry(to_run[k])["status"] == "interrupted") break;
  }
  run_.interrupted = options_.stop && options_.stop->load();

  if (telemetry_) {
    Json& entry = StageEntry(*monitor_index);
    const Json summary = telemetry_->Stop();
    const std::string dir = bundle_ + "/stages/" + plan_.stages[*monitor_index].name;
    fs::create_directories(dir, ec);
    const Status written =
        WriteFileAtomically(dir + "/monitor.json", {AsBytes(Dump(summary) + "\n")});
    entry["seconds"] = summary.value("seconds", 0.0);
    entry["result"] = written.ok()
                          ? Json("stages/" + plan_.stages[*monitor_index].name + "/monitor.json")
                          : Json();
    const std::vector<std::string> fatal = telemetry_->TakeFatal("");
    std::size_t alerts = summary.contains("alerts") ? summary["alerts"].size() : 0;
    entry["summary"]["samples"] = summary.value("samples", 0);
    entry["summary"]["alerts"] = alerts;
    if (run_.interrupted) {
      entry["status"] = "interrupted";
      entry["reason"] = "interrupted";
    } else if (!written.ok()) {
      entry["status"] = "error";
      entry["reason"] = written.message();
    } else if (!fatal.empty()) {
      entry["status"] = "failed";
      entry["reason"] = fmt::format("fatal alert between stages: {}", fatal[0]);
    } else {
      entry["status"] = "passed";
    }
    telemetry_.reset();
  }
  progress_->Finish();

  for (const Json& s : m["stages"]) {
    const std::string status = StringField(s, "status");
    if (status == "passed")
      ++run_.passed;
    else if (status == "failed")
      ++run_.failed;
    else if (status == "skipped")
      ++run_.skipped;
    else if (status == "error")
      ++run_.errors;
    else
      ++run_.pending;  // pending, running, interrupted: to run next time
  }
  const std::string status = run_.interrupted                ? "interrupted"
                             : run_.failed + run_.errors > 0 ? "failed"
                             : run_.pending > 0              ? "incomplete"
                                                             : "passed";
  m["status"] = status;
  m["updated"] = UnixNow();
  m["finished"] = run_.interrupted ? Json() : Json(UnixNow());
  m["collects"].back()["status"] = status;
  m["collects"].back()["finished"] = UnixNow();
  PARITY_RETURN_IF_ERROR(Save());
  Record();
  return std::move(run_);
}

}  // namespace

Result<CollectRun> RunCollect(const Plan& plan, const CollectOptions& options) {
  Collector collector(plan, options);
  return collector.Run();
}

std::string CollectText(const CollectRun& run) {
  Table table({"stage", "kind", "level", "status", "time (s)", "reason"},
              {false, false, true, false, true, false});
  for (const Json& s : run.manifest["stages"]) {
    std::string status = StringField(s, "status");
    if (s.value("reused", false)) status += " (kept)";
    table.AddRow({StringField(s, "name"), StringField(s, "kind"),
                  std::to_string(s.value("level", 1)), status,
                  s.contains("seconds") && s["seconds"].is_number()
                      ? fmt::format("{:.1f}", s["seconds"].get<double>())
                      : "-",
                  StringField(s, "reason")});
  }
  std::string out = table.Render("");
  out += fmt::format("bundle {}: {}, {} stage{} run, {} kept\n", run.bundle,
                     StringField(run.manifest, "status"), run.ran, run.ran == 1 ? "" : "s",
                     run.reused);
  return out;
}

}  // namespace parity::collect
