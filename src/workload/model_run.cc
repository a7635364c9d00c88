// SPDX-License-Identifier: Apache-2.0
#include "workload/model_run.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <array>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>

#include "core/file_util.h"
#include "core/process.h"
#include "workload/python_env.h"

namespace parity::workload {
namespace {

constexpr std::string_view kAmp[] = {"none", "bf16", "fp16"};
constexpr std::string_view kCompile[] = {"off", "inductor", "max-autotune-no-cudagraphs"};
constexpr std::string_view kOptimizer[] = {"default", "foreach", "fused", "for-loop"};

constexpr std::string_view kSdpaBackend[] = {"math", "flash", "efficient", "cudnn"};
constexpr std::string_view kLrRule[] = {"held", "linear", "sqrt"};

constexpr std::array<Knob, 12> kKnobs = {{
    {"batch_size", Knob::Type::kInt, "--batch-size", "samples per batch (the workload's own)"},
    {"num_workers", Knob::Type::kInt, "--num-workers", "DataLoader worker processes (0)"},
    {"pin_memory", Knob::Type::kBool, "--pin-memory", "DataLoader pinned memory (false)"},
    {"prefetch_factor", Knob::Type::kInt, "--prefetch-factor",
     "batches each worker loads ahead (DataLoader's; needs num_workers > 0)"},
    {"persistent_workers", Knob::Type::kBool, "--persistent-workers",
     "DataLoader workers kept between epochs (needs num_workers > 0)"},
    {"threads", Knob::Type::kInt, "--threads", "torch's intra-op threads"},
    {"channels_last", Knob::Type::kBool, "--channels-last",
     "the model and 4-d inputs in channels-last memory format"},
    {"amp", Knob::Type::kString, "--amp", "autocast: none, bf16 or fp16 (fp16: GPU, GradScaler)",
     kAmp},
    {"compile", Knob::Type::kString, "--compile",
     "torch.compile (torch 2.x): off, inductor (its default mode) or max-autotune-no-cudagraphs",
     kCompile},
    {"optimizer", Knob::Type::kString, "--optimizer",
     "the optimizer's implementation: default (the workload's), foreach, fused or for-loop",
     kOptimizer},
    {"sdpa_backend", Knob::Type::kString, "--sdpa-backend",
     "scaled_dot_product_attention limited to one backend (torch >= 2.3): math, flash, "
     "efficient or cudnn",
     kSdpaBackend},
    {"lr_rule", Knob::Type::kString, "--lr-rule",
     "the learning rate at another batch_size: held, linear or sqrt in the batch sizes' ratio",
     kLrRule},
}};

constexpr std::array<std::string_view, 3> kReference = {"recsys", "transformer", "cnn"};

std::string TemporaryDirectory() {
  std::error_code ec;
  std::string tmpl = (std::filesystem::temp_directory_path(ec) / "parity-model-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) return "";
  return tmpl;
}

bool IsNumberList(const Json& j) {
  if (!j.is_array()) return false;
  for (const Json& x : j) {
    if (!x.is_number()) return false;
  }
  return true;
}

}  // namespace

std::span<const Knob> Knobs() { return kKnobs; }

const Knob* FindKnob(std::string_view name) {
  for (const Knob& k : kKnobs) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::string CheckKnobValue(const Knob& knob, const Json& value) {
  switch (knob.type) {
    case Knob::Type::kBool:
      return value.is_boolean()
                 ? ""
                 : fmt::format("{} is {}, not true or false", knob.name,
                               value.dump(-1, ' ', false, Json::error_handler_t::replace));
    case Knob::Type::kInt: {
      const int64_t low = knob.name == "num_workers" || knob.name == "prefetch_factor" ? 0 : 1;
      if (!value.is_number_integer() || value.get<int64_t>() < low ||
          value.get<int64_t>() > (int64_t{1} << 20)) {
        return fmt::format("{} is {}, not a whole number from {} to 1048576", knob.name,
                           value.dump(-1, ' ', false, Json::error_handler_t::replace), low);
      }
      return "";
    }
    case Knob::Type::kString: {
      if (value.is_string() && std::find(knob.values.begin(), knob.values.end(),
                                         value.get<std::string>()) != knob.values.end()) {
        return "";
      }
      std::string allowed;
      for (std::string_view v : knob.values) {
        allowed += fmt::format("{}{}", allowed.empty() ? "" : ", ", v);
      }
      return fmt::format("{} is {}, not one of {}", knob.name,
                         value.dump(-1, ' ', false, Json::error_handler_t::replace), allowed);
    }
  }
  return "";
}

Result<Json> KnobFromText(std::string_view key, std::string_view text) {
  const Knob* knob = FindKnob(key);
  if (knob == nullptr) {
    std::string names;
    for (const Knob& k : kKnobs) names += fmt::format("{}{}", names.empty() ? "" : ", ", k.name);
    return Status::Invalid("", fmt::format("unknown setting '{}' (the settings: {})", key, names));
  }
  Json value = std::string(text);
  if (knob->type == Knob::Type::kBool) {
    if (text == "true" || text == "1") value = true;
    if (text == "false" || text == "0") value = false;
  } else if (knob->type == Knob::Type::kInt) {
    Json parsed = Json::parse(text, nullptr, false);
    if (!parsed.is_discarded()) value = parsed;
  }
  if (std::string problem = CheckKnobValue(*knob, value); !problem.empty()) {
    return Status::Invalid("", problem);
  }
  return value;
}

std::span<const std::string_view> ReferenceWorkloads() { return kReference; }

std::string LossCurveCsv(const Json& losses) {
  std::string csv = "step,value\n";
  int step = 0;
  for (const Json& loss : losses) {
    csv += fmt::format("{},{}\n", step++,
                       loss.is_number() ? fmt::format("{:.9g}", loss.get<double>()) : "nan");
  }
  return csv;
}

Status CheckModelReport(const Json& r, std::string_view path) {
  auto bad = [&](std::string_view problem) { return Status::Invalid(path, problem); };
  if (!r.is_object() || r.value("format", "") != "parity-model-run") {
    return bad("not a parity-model-run report");
  }
  if (!r.contains("version") || r["version"] != 1) {
    return bad("version is not 1 (a newer harness than this parity?)");
  }
  for (const char* key : {"workload", "size", "device"}) {
    if (!r.contains(key) || !r[key].is_string())
      return bad(fmt::format("'{}' is not a string", key));
  }
  for (const char* key : {"batch_size", "steps", "warmup"}) {
    if (!r.contains(key) || !r[key].is_number_integer() || r[key].get<int64_t>() < 0) {
      return bad(fmt::format("'{}' is not a whole number", key));
    }
  }
  if (!r.contains("step_s") || !IsNumberList(r["step_s"]) ||
      r["step_s"].size() != r["steps"].get<std::size_t>()) {
    return bad("'step_s' is not one number per timed step");
  }
  for (const Json& s : r["step_s"]) {
    if (!(s.get<double>() > 0.0) || !std::isfinite(s.get<double>())) {
      return bad("'step_s' holds a step time that is not a positive number");
    }
  }
  if (!r.contains("losses") || !r["losses"].is_array() ||
      r["losses"].size() != r["steps"].get<std::size_t>() + r["warmup"].get<std::size_t>()) {
    return bad("'losses' is not one value per step (warm-up included)");
  }
  for (const Json& loss : r["losses"]) {
    // json.dumps writes NaN and Infinity, which nlohmann reads as numbers only when allowed:
    // the harness's non-finite losses arrive as numbers or as null.
    if (!loss.is_number() && !loss.is_null())
      return bad("'losses' holds a value that is not a number");
  }
  if (!r.contains("settings") || !r["settings"].is_object())
    return bad("'settings' is not an object");
  return Status::Ok();
}

bench::BenchResult ModelResult(const Json& report) {
  bench::BenchResult r;
  r.benchmark = fmt::format("model.{}.train", report["workload"].get<std::string>());
  const Json& settings = report["settings"];
  const std::string amp = settings.value("amp", "none");
  r.dtype = amp == "bf16" ? "bfloat16" : amp == "fp16" ? "float16" : "float32";
  r.params = {{"workload_size", report["size"]},
              {"batch_size", report["batch_size"]},
              {"steps", report["steps"]},
              {"warmup", report["warmup"]},
              {"device", report["device"]}};
  Json knobs = Json::object();
  for (const auto& [key, value] : settings.items()) {
    if (key != "amp") knobs[key] = value;
  }
  r.params["settings"] = knobs;
  r.unit = "samples/s";
  r.higher_is_better = true;
  const double batch = report["batch_size"].get<double>();
  for (const Json& s : report["step_s"]) r.samples.push_back(batch / s.get<double>());
  double best = 0.0;
  for (double x : r.samples) best = std::max(best, x);
  if (!r.samples.empty()) r.best = best;
  r.implementation = fmt::format("torch {} on {}", report.value("torch", "?"),
                                 report.value("device_name", report["device"].get<std::string>()));
  int nonfinite = 0, first = -1, index = 0;
  for (const Json& loss : report["losses"]) {
    if (!loss.is_number() || !std::isfinite(loss.get<double>())) {
      ++nonfinite;
      if (first < 0) first = index;
    }
    ++index;
  }
  r.validation = {{"method", "every step's loss is finite"},
                  {"steps", report["losses"].size()},
                  {"nonfinite", nonfinite}};
  if (nonfinite > 0) {
    r.outcome = bench::Outcome::kInvalid;
    r.reason = fmt::format("the loss is not finite at {} of {} steps, first at step {}", nonfinite,
                           report["losses"].size(), first);
  }
  for (const char* key : {"tokens_per_s", "step_ms", "data_wait_share", "peak_rss_bytes",
                          "peak_device_memory_bytes", "torch_threads", "losses"}) {
    if (report.contains(key) && !report[key].is_null()) r.extra[key] = report[key];
  }
  return r;
}

Result<ModelRunOutcome> RunModel(const ModelRunOptions& o) {
  const std::string dir = TemporaryDirectory();
  if (dir.empty()) return Status::Unavailable("cannot make a temporary directory");
  const std::string json_path = dir + "/report.json";
  ProcessSpec spec;
  spec.argv = {o.python,
               "-m",
               "parity_workloads.harness",
               "--workload",
               o.workload,
               "--size",
               o.size,
               "--steps",
               std::to_string(o.steps),
               "--warmup",
               std::to_string(o.warmup),
               "--device",
               o.device,
               "--seed",
               std::to_string(o.seed),
               "--json",
               json_path};
  if (o.knobs_only) spec.argv.emplace_back("--knobs");
  for (const auto& [key, value] : o.settings.items()) {
    if (o.knobs_only) break;
    const Knob* knob = FindKnob(key);
    if (knob == nullptr) {
      std::filesystem::remove_all(dir);
      return Status::Invalid("", fmt::format("unknown setting '{}'", key));
    }
    if (knob->type == Knob::Type::kBool) {
      if (value.get<bool>()) spec.argv.emplace_back(knob->flag);
    } else {
      spec.argv.emplace_back(knob->flag);
      spec.argv.push_back(value.is_string()
                              ? value.get<std::string>()
                              : value.dump(-1, ' ', false, Json::error_handler_t::replace));
    }
  }
  spec.env = WorkloadEnvironment();
  for (const auto& [key, value] : o.env) spec.env[key] = value;
  spec.log_path = o.log_path.empty() ? dir + "/harness.log" : o.log_path;
  spec.timeout = o.timeout;
  const ProcessResult process = RunProcess(spec, o.stop);
  const std::string log = LogTail(spec.log_path, 1 << 16);
  ModelRunOutcome out;
  out.seconds = process.seconds;
  auto cleanup = [&] {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  };
  if (!process.started) {
    cleanup();
    return Status::Unavailable(fmt::format("{}: {}", o.python, process.error));
  }
  const std::string error = LastParityError(log);
  if (process.exit_code == 2) {
    cleanup();
    return Status::Invalid("", error.empty() ? fmt::format("workload '{}': the harness refused "
                                                           "it (exit 2)",
                                                           o.workload)
                                             : error);
  }
  if (process.exit_code != 0) {
    out.failure =
        !error.empty() ? error : fmt::format("workload '{}': {}", o.workload, process.Describe());
    if (process.timed_out || process.interrupted || process.signal != 0) {
      out.failure = fmt::format("workload '{}': {}", o.workload, process.Describe());
    }
    cleanup();
    return out;
  }
  Result<std::string> text = ReadSmallFile(json_path, std::size_t{64} << 20, "harness report");
  cleanup();
  if (!text.ok()) {
    out.failure = text.status().message();
    return out;
  }
  Json report = Json::parse(*text, nullptr, false, false);
  if (report.is_discarded()) {
    out.failure = fmt::format("workload '{}': the harness's report is not JSON", o.workload);
    return out;
  }
  if (o.knobs_only) {
    if (!report.is_object() || report.value("format", "") != "parity-workload-knobs") {
      out.failure = fmt::format("workload '{}': the harness's report is not its knobs", o.workload);
    } else {
      out.report = std::move(report);
    }
    return out;
  }
  if (Status s = CheckModelReport(report, "harness report"); !s.ok()) {
    out.failure = s.message();
    return out;
  }
  out.report = std::move(report);
  return out;
}

Result<WorkloadKnobs> ProbeKnobs(const ModelRunOptions& options) {
  ModelRunOptions o = options;
  o.knobs_only = true;
  PARITY_ASSIGN_OR_RETURN(ModelRunOutcome outcome, RunModel(o));
  if (!outcome.failure.empty()) return Status::Invalid("", outcome.failure);
  WorkloadKnobs knobs;
  const Json& has = outcome.report["knobs"];
  const Json& lacks = outcome.report["lacks"];
  if (!has.is_array() || !lacks.is_object()) {
    return Status::Invalid("", fmt::format("workload '{}': the harness's knobs report lacks "
                                           "'knobs' or 'lacks'",
                                           o.workload));
  }
  for (const Json& k : has) {
    if (k.is_string()) knobs.has.push_back(k.get<std::string>());
  }
  for (const auto& [k, why] : lacks.items()) {
    knobs.lacks[k] = why.is_string() ? why.get<std::string>() : "";
  }
  return knobs;
}

Result<bench::BenchRun> RunModelSuite(const ModelSuiteOptions& options) {
  std::vector<std::string> workloads = options.workloads;
  if (workloads.empty()) {
    for (std::string_view w : kReference) workloads.emplace_back(w);
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string started = bench::Iso8601Now();
  std::vector<std::vector<bench::BenchResult>> runs;
  Json devices = Json::object();
  for (int run = 0; run < options.repeat; ++run) {
    std::vector<bench::BenchResult> results;
    for (const std::string& w : workloads) {
      if (options.progress) {
        options.progress(options.repeat > 1
                             ? fmt::format("run {}/{}: model {}", run + 1, options.repeat, w)
                             : fmt::format("model {}", w));
      }
      ModelRunOptions o = options.run;
      o.workload = w;
      PARITY_ASSIGN_OR_RETURN(ModelRunOutcome outcome, RunModel(o));
      if (!outcome.failure.empty()) {
        bench::BenchResult failed;
        failed.benchmark = fmt::format("model.{}.train", w);
        failed.dtype = "float32";
        failed.unit = "samples/s";
        failed.outcome = bench::Outcome::kInvalid;
        failed.reason = outcome.failure;
        results.push_back(std::move(failed));
        continue;
      }
      devices[outcome.report["device"].get<std::string>()] =
          outcome.report.value("device_name", "");
      bench::BenchResult r = ModelResult(outcome.report);
      if (!options.curves_dir.empty()) {
        const std::string name = fmt::format(
            "{}/{}{}.csv", options.curves_dir, outcome.report["workload"].get<std::string>(),
            options.repeat > 1 ? fmt::format(".run{}", run + 1) : "");
        PARITY_RETURN_IF_ERROR(WriteTextFile(name, LossCurveCsv(outcome.report["losses"])));
      }
      results.push_back(std::move(r));
    }
    runs.push_back(std::move(results));
  }
  bench::BenchRun out;
  PARITY_ASSIGN_OR_RETURN(out.results, bench::MergeRuns(runs));
  for (const bench::BenchResult& r : out.results) {
    switch (r.outcome) {
      case bench::Outcome::kOk:
        ++out.ok;
        break;
      case bench::Outcome::kInvalid:
        ++out.invalid;
        break;
      case bench::Outcome::kSkipped:
        ++out.skipped;
        break;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Json doc = Document("parity-bench", 1);
  Json platform = options.platform.is_object() ? options.platform : Json::object();
  const std::string device = options.run.device;
  platform["device"] = {{"backend", options.backend},
                        {"name", devices.value(device, device)},
                        {"torch_device", device}};
  doc["platform"] = std::move(platform);
  doc["backend"] = options.backend;
  doc["device"] = devices.value(device, device);
  doc["suites"] = Json::array({"model"});
  doc["repeat"] = options.repeat;
  Json settings = options.run.settings;
  settings["workloads"] = workloads;
  settings["size"] = options.run.size;
  settings["steps"] = options.run.steps;
  settings["warmup"] = options.run.warmup;
  settings["seed"] = options.run.seed;
  doc["settings"] = settings;
  doc["started"] = started;
  doc["duration_s"] = seconds;
  doc["summary"] = {{"ok", out.ok}, {"invalid", out.invalid}, {"skipped", out.skipped}};
  Json results = Json::array();
  for (const bench::BenchResult& r : out.results) results.push_back(bench::ToJson(r));
  doc["results"] = std::move(results);
  out.document = std::move(doc);
  return out;
}

}  // namespace parity::workload
