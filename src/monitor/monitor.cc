// SPDX-License-Identifier: Apache-2.0
#include "monitor/monitor.h"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <set>
#include <thread>
#include <tuple>
#include <utility>

#include "core/interrupt.h"
#include "core/spellcheck.h"
#include "monitor/alert_exec.h"
#include "monitor/exporter.h"
#include "monitor/exposition.h"

namespace parity::monitor {
namespace {

/// A series in the run's statistics: the device index (-1 for the host), metric, the
/// reading's own labels. Cheaper to compare than the full label set with uuid and model.
using Key = std::tuple<int, std::string, Labels>;

/// SIGINT/SIGTERM set the stop flag the loop checks, for as long as this object lives;
/// SIGPIPE is ignored (an alert program or a scraper that went away is an error to report,
/// not a death).
class SignalScope {
 public:
  SignalScope() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGPIPE, &ignore, &old_pipe_);
  }
  ~SignalScope() { ::sigaction(SIGPIPE, &old_pipe_, nullptr); }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

 private:
  ScopedStopFlag stop_;
  struct sigaction old_pipe_ {};
};

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double UnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// Sleeps until `deadline` (steady seconds) or a stop signal, in steps short enough to stop
/// promptly.
void SleepUntil(double deadline) {
  while (!StopRequested()) {
    const double left = deadline - SteadySeconds();
    if (left <= 0) return;
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(left, 0.05)));
  }
}

std::string OneLine(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

const Reading* FindReading(const std::vector<Reading>& readings, std::string_view metric,
                           const Labels& labels = {}) {
  for (const Reading& r : readings) {
    if (r.metric == metric && r.labels == labels) return &r;
  }
  return nullptr;
}

/// "dev 0 AMD Instinct MI250X junction 45.0C power 301W util 97% mem 12.3/64.0GiB sclk 1700MHz"
std::string DeviceLine(const DeviceReadings& d) {
  std::string line = fmt::format("dev {} {}", d.device, d.info.model.empty() ? "?" : d.info.model);
  for (std::string_view sensor : {"edge", "junction", "memory"}) {
    if (auto* r =
            FindReading(d.readings, "gpu_temperature_celsius", {{"sensor", std::string(sensor)}})) {
      line += fmt::format(" {} {:.1f}C", sensor, r->value);
    }
  }
  if (auto* r = FindReading(d.readings, "gpu_power_watts"))
    line += fmt::format(" power {:.0f}W", r->value);
  if (auto* r = FindReading(d.readings, "gpu_utilization_ratio")) {
    line += fmt::format(" util {:.0f}%", r->value * 100);
  }
  auto* used = FindReading(d.readings, "gpu_memory_used_bytes");
  auto* total = FindReading(d.readings, "gpu_memory_total_bytes");
  if (used && total) {
    line += fmt::format(" mem {:.1f}/{:.1f}GiB", used->value / (1 << 30), total->value / (1 << 30));
  }
  if (auto* r = FindReading(d.readings, "gpu_clock_hertz", {{"domain", "sm"}})) {
    line += fmt::format(" sclk {:.0f}MHz", r->value / 1e6);
  }
  double ce = 0, ue = 0;
  bool any_ecc = false;
  for (const Reading& r : d.readings) {
    if (r.metric != "gpu_ecc_errors_total") continue;
    const auto block = r.labels.find("block");
    const auto scope = r.labels.find("scope");
    if (scope != r.labels.end() && scope->second != "volatile") continue;
    if (block != r.labels.end() && block->second == "all") continue;  // NVML's total of blocks
    any_ecc = true;
    (r.labels.at("severity") == "correctable" ? ce : ue) += r.value;
  }
  if (any_ecc) line += fmt::format(" ecc ce={} ue={}", ce, ue);
  return line;
}

std::string HostLine(const std::vector<Reading>& host) {
  std::string line = "host";
  if (auto* r = FindReading(host, "host_cpu_utilization_ratio")) {
    line += fmt::format(" cpu {:.0f}%", r->value * 100);
  }
  auto* used = FindReading(host, "host_memory_used_bytes");
  auto* total = FindReading(host, "host_memory_total_bytes");
  if (used && total) {
    line += fmt::format(" mem {:.1f}/{:.1f}GiB", used->value / (1 << 30), total->value / (1 << 30));
  }
  double watts = 0;
  bool any_power = false;
  for (const Reading& r : host) {
    if (r.metric == "host_power_watts" && r.labels.at("domain").find('/') == std::string::npos) {
      watts += r.value;
      any_power = true;
    }
  }
  if (any_power) line += fmt::format(" power {:.0f}W", watts);
  return line;
}

void Accumulate(std::map<Key, SeriesStats, std::less<>>& stats, int device,
                const Labels* device_labels, const Reading& r) {
  constexpr std::size_t kMaxSeries = 65536;
  auto it = stats.find(std::forward_as_tuple(device, r.metric, r.labels));
  if (it == stats.end()) {
    if (stats.size() >= kMaxSeries) return;
    SeriesStats s;
    s.metric = r.metric;
    s.labels = r.labels;
    if (device_labels) s.labels.insert(device_labels->begin(), device_labels->end());
    s.min = s.max = r.value;
    it = stats.emplace(Key{device, r.metric, r.labels}, std::move(s)).first;
  }
  SeriesStats& s = it->second;
  ++s.count;
  s.min = std::min(s.min, r.value);
  s.max = std::max(s.max, r.value);
  s.sum += r.value;
  s.last = r.value;
}

}  // namespace

Result<std::unique_ptr<Sampler>> Sampler::Open(const std::vector<std::string>& names,
                                               const SourceOptions& options) {
  std::vector<std::string_view> known;
  for (const SourceEntry& entry : SourceTable()) known.push_back(entry.name);
  std::set<std::string, std::less<>> wanted;
  for (const std::string& name : names) {
    if (!FindSource(name)) {
      std::string problem = "unknown source '" + name + "'";
      if (auto guess = Suggest(name, known)) problem += " (did you mean '" + *guess + "'?)";
      problem += "; sources: nvml, rocm-smi, amdgpu, host";
      return Status::Invalid("--source", problem);
    }
    wanted.insert(name);
  }
  auto sampler = std::unique_ptr<Sampler>(new Sampler());
  int rocm_slot = -1;
  for (const SourceEntry& entry : SourceTable()) {
    if (!wanted.empty() && !wanted.contains(entry.name)) continue;
    Slot slot;
    slot.source = entry.make(options);
    const Status status = slot.source->Open();
    slot.up = status.ok();
    sampler->opened_.push_back({std::string(entry.name), slot.up, status.message()});
    const bool host = entry.name == "host";
    if (slot.up && !host) {
      const auto& devices = slot.source->devices();
      for (std::size_t i = 0; i < devices.size(); ++i) {
        int merge = -1;
        if (entry.name == "amdgpu" && rocm_slot >= 0 && !devices[i].pci_bus_id.empty()) {
          const Slot& rocm = sampler->slots_[static_cast<std::size_t>(rocm_slot)];
          const auto& theirs = rocm.source->devices();
          for (std::size_t j = 0; j < theirs.size(); ++j) {
            if (theirs[j].pci_bus_id == devices[i].pci_bus_id) merge = rocm.device[j];
          }
        }
        slot.merge.push_back(merge);
        slot.device.push_back(merge >= 0 ? merge : sampler->device_count_++);
      }
    }
    if (entry.name == "rocm-smi" && slot.up) rocm_slot = static_cast<int>(sampler->slots_.size());
    sampler->slots_.push_back(std::move(slot));
  }
  bool any = false;
  std::string reasons;
  for (const SourceState& s : sampler->opened_) {
    any = any || s.up;
    if (!s.up) reasons += (reasons.empty() ? "" : "; ") + s.name + ": " + s.reason;
  }
  if (!any) return Status::Unavailable("no telemetry source can run here: " + reasons);
  return sampler;
}

Sample Sampler::Take(double time_unix, double monotonic) {
  Sample sample;
  sample.time_unix = time_unix;
  sample.monotonic = monotonic;
  std::map<int, std::size_t> position;  // monitor index -> entry in sample.devices
  for (std::size_t k = 0; k < slots_.size(); ++k) {
    Slot& slot = slots_[k];
    SourceState state = opened_[k];
    if (!slot.up) {
      sample.sources.push_back(std::move(state));
      continue;
    }
    TelemetrySource& source = *slot.source;
    if (source.name() == "host") {
      auto readings = source.Read(0, monotonic);
      if (readings.ok()) {
        sample.host = std::move(readings).value();
      } else {
        state.up = false;
        state.reason = readings.status().message();
      }
      sample.sources.push_back(std::move(state));
      continue;
    }
    for (std::size_t i = 0; i < slot.device.size(); ++i) {
      auto readings = source.Read(i, monotonic);
      if (!readings.ok()) {
        if (state.up) state.reason = readings.status().message();
        state.up = false;
        continue;
      }
      const int index = slot.device[i];
      const auto at = position.find(index);
      if (slot.merge[i] >= 0 && at != position.end()) {
        DeviceReadings& joined = sample.devices[at->second];
        for (Reading& r : readings.value()) {
          if (!FindReading(joined.readings, r.metric, r.labels)) {
            joined.readings.push_back(std::move(r));
          }
        }
        const DeviceInfo& info = source.devices()[i];
        if (joined.info.model.empty()) joined.info.model = info.model;
        if (joined.info.uuid.empty()) joined.info.uuid = info.uuid;
        continue;
      }
      position[index] = sample.devices.size();
      sample.devices.push_back(
          {index, std::string(source.name()), source.devices()[i], std::move(readings).value()});
    }
    sample.sources.push_back(std::move(state));
  }
  return sample;
}

Result<MonitorRun> RunMonitor(Sampler& sampler, RuleEngine& rules, const MonitorOptions& options) {
  SignalScope signals;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> record(nullptr, &std::fclose);
  if (!options.record_path.empty()) {
    record.reset(std::fopen(options.record_path.c_str(), "a"));
    if (!record) return Status::Invalid(options.record_path, std::strerror(errno));
  }
  std::unique_ptr<Exporter> exporter;
  if (!options.serve.empty()) {
    PARITY_ASSIGN_OR_RETURN(ListenAddress address, ParseListenAddress(options.serve));
    exporter = std::make_unique<Exporter>();
    PARITY_RETURN_IF_ERROR(exporter->Start(address));
    if (!options.quiet) {
      const bool v6 = address.host.find(':') != std::string::npos;
      std::fprintf(stderr, "parity: serving http://%s%s%s:%d/metrics%s\n", v6 ? "[" : "",
                   address.host.c_str(), v6 ? "]" : "", exporter->port(),
                   IsLoopback(address.host) ? "" : " (not loopback: reachable from the network)");
      std::fflush(stderr);
    }
  }
  std::unique_ptr<AlertRunner> runner;
  if (!options.alert_exec.empty()) runner = std::make_unique<AlertRunner>(options.alert_exec);

  ExporterState state;
  for (const Rule& rule : rules.rules()) state.alerts_total[rule.name] = 0;
  MonitorRun run;
  std::map<Key, SeriesStats, std::less<>> stats;
  const auto report = [&](const std::string& problem) {
    run.problems.push_back(problem);
    if (!options.quiet) std::fprintf(stderr, "parity: warning: %s\n", problem.c_str());
  };

  const double start = SteadySeconds();
  if (options.once) {
    // Rates (CPU time, RAPL energy) need two reads: a first, unreported one shortly before.
    sampler.Take(UnixSeconds(), start);
    SleepUntil(start + std::min(options.interval_seconds, 0.25));
  }
  double next = SteadySeconds();
  while (!StopRequested()) {
    const double now = SteadySeconds();
    Sample sample = sampler.Take(UnixSeconds(), now);
    const std::vector<Alert> alerts = rules.Evaluate(sample);
    if (record) {
      const std::string line = OneLine(SampleToJson(sample)) + "\n";
      std::fputs(line.c_str(), record.get());
    }
    for (const Alert& alert : alerts) {
      const Json json = AlertToJson(alert);
      if (record) std::fputs((OneLine(json) + "\n").c_str(), record.get());
      if (!options.quiet) {
        std::fprintf(stderr, "parity: %s: [%s] %s\n", alert.resolved ? "resolved" : "alert",
                     std::string(SeverityName(alert.severity)).c_str(), alert.message.c_str());
      }
      if (alert.resolved) continue;
      ++state.alerts_total[alert.rule];
      if (run.alerts.size() < 10000) run.alerts.push_back(alert);
      if (runner) {
        Status started = runner->Run(OneLine(json), now);
        if (!started.ok()) report(started.message());
      }
    }
    if (record) std::fflush(record.get());
    if (runner) {
      for (const std::string& problem : runner->Poll(now)) report(problem);
    }
    for (const DeviceReadings& d : sample.devices) {
      const Labels device_labels = DeviceLabels(d);
      for (const Reading& r : d.readings) Accumulate(stats, d.device, &device_labels, r);
    }
    for (const Reading& r : sample.host) Accumulate(stats, -1, nullptr, r);
    ++run.samples;
    state.samples_total = run.samples;
    if (exporter) {
      std::string down;
      bool any_up = false;
      for (const SourceState& s : sample.sources) {
        any_up = any_up || s.up;
        if (!s.up) down += (down.empty() ? "" : "; ") + s.name + ": " + s.reason;
      }
      exporter->Publish(RenderExposition(sample, state), any_up,
                        any_up ? std::string() : "no source up: " + down);
    }
    if (options.print_samples) {
      const std::time_t t = static_cast<std::time_t>(sample.time_unix);
      std::tm tm{};
      localtime_r(&t, &tm);
      char stamp[16];
      std::strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
      std::string lines;
      for (const DeviceReadings& d : sample.devices)
        lines += fmt::format("{} {}\n", stamp, DeviceLine(d));
      if (!sample.host.empty()) lines += fmt::format("{} {}\n", stamp, HostLine(sample.host));
      std::fputs(lines.c_str(), stdout);
      std::fflush(stdout);
    }
    run.last = std::move(sample);
    if (options.once) break;
    if (options.duration_seconds && SteadySeconds() - start >= *options.duration_seconds) break;
    next += options.interval_seconds;
    if (next < SteadySeconds()) next = SteadySeconds();  // a slow sample: skip, don't bunch up
    if (options.duration_seconds) next = std::min(next, start + *options.duration_seconds);
    SleepUntil(next);  // the last sample falls at the end of --duration
  }
  run.interrupted = StopRequested();
  run.seconds = SteadySeconds() - start;
  if (runner) {
    for (const std::string& problem : runner->Finish(5.0)) report(problem);
  }
  for (auto& [key, s] : stats) run.stats.push_back(std::move(s));
  return run;
}

Json RunSummaryJson(const MonitorRun& run, const std::vector<Rule>& rules) {
  Json doc = Document("parity-monitor", 1);
  doc["kind"] = "summary";
  doc["samples"] = run.samples;
  SetNumber(doc, "seconds", run.seconds);
  doc["interrupted"] = run.interrupted;
  Json names = Json::array();
  std::map<std::string, uint64_t> totals;
  for (const Rule& rule : rules) {
    names.push_back(rule.name);
    totals[rule.name] = 0;
  }
  doc["rules"] = std::move(names);
  Json alerts = Json::array();
  for (const Alert& alert : run.alerts) {
    alerts.push_back(AlertToJson(alert));
    ++totals[alert.rule];
  }
  doc["alerts"] = std::move(alerts);
  Json total_json = Json::object();
  for (const auto& [rule, count] : totals) total_json[rule] = count;
  doc["alerts_total"] = std::move(total_json);
  Json series = Json::array();
  for (const SeriesStats& s : run.stats) {
    Json labels = Json::object();
    for (const auto& [k, v] : s.labels) labels[k] = v;
    Json entry = {{"name", s.metric}, {"labels", std::move(labels)}, {"count", s.count}};
    SetNumber(entry, "min", s.min);
    SetNumber(entry, "max", s.max);
    SetNumber(entry, "mean", s.sum / static_cast<double>(s.count));
    SetNumber(entry, "last", s.last);
    series.push_back(std::move(entry));
  }
  doc["series"] = std::move(series);
  if (run.problems.empty()) {
    doc["problems"] = Json::array();
  } else {
    doc["problems"] = run.problems;
  }
  doc["last"] = run.last ? SampleToJson(*run.last) : Json();
  return doc;
}

}  // namespace parity::monitor
