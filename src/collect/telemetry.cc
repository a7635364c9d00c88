// SPDX-License-Identifier: Apache-2.0
#include "collect/telemetry.h"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "collect/stage_util.h"

namespace parity::collect {
namespace {

double Steady() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double Unix() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string SeriesKey(int device, const monitor::Reading& r) {
  std::string key = fmt::format("{}|{}", device, r.metric);
  for (const auto& [k, v] : r.labels) key += fmt::format("|{}={}", k, v);
  return key;
}

}  // namespace

Result<std::unique_ptr<Telemetry>> Telemetry::Start(const Json& params, const std::string& plan_dir,
                                                    const std::string& jsonl_path) {
  std::unique_ptr<Telemetry> t(new Telemetry());
  t->interval_ = params.value("interval", 1.0);
  std::vector<std::string> names;
  if (params.contains("sources")) names = params["sources"].get<std::vector<std::string>>();
  if (params.contains("rules")) {
    PARITY_ASSIGN_OR_RETURN(
        t->rules_, monitor::LoadRules(Resolve(plan_dir, params["rules"].get<std::string>())));
  } else {
    t->rules_ = monitor::DefaultRules();
  }
  PARITY_ASSIGN_OR_RETURN(t->sampler_, monitor::Sampler::Open(names, monitor::SourceOptions{}));
  t->engine_ = std::make_unique<monitor::RuleEngine>(t->rules_);
  t->file_ = std::fopen(jsonl_path.c_str(), "a");
  if (t->file_ == nullptr) return Status::Invalid(jsonl_path, std::strerror(errno));
  t->started_ = Steady();
  t->TakeOne();
  t->thread_ = std::thread([raw = t.get()] { raw->Loop(); });
  return t;
}

Telemetry::~Telemetry() {
  if (thread_.joinable()) Stop();
  if (file_ != nullptr) std::fclose(file_);
}

void Telemetry::SetStage(const std::string& stage) {
  std::lock_guard<std::mutex> lock(mutex_);
  stage_ = stage;
}

std::vector<std::string> Telemetry::TakeFatal(const std::string& stage) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out = std::move(fatal_[stage]);
  fatal_.erase(stage);
  return out;
}

void Telemetry::TakeOne() {
  monitor::Sample sample = sampler_->Take(Unix(), Steady());
  const std::vector<monitor::Alert> alerts = engine_->Evaluate(sample);
  std::lock_guard<std::mutex> lock(mutex_);
  Json line = monitor::SampleToJson(sample);
  if (!stage_.empty()) line["stage"] = stage_;
  std::string text = line.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  for (const monitor::Alert& alert : alerts) {
    Json a = monitor::AlertToJson(alert);
    if (!stage_.empty()) a["stage"] = stage_;
    text += a.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
    if (alert.resolved) continue;
    if (run_.alerts.size() < 10000) run_.alerts.push_back(alert);
    if (alert.severity == monitor::Severity::kFatal) fatal_[stage_].push_back(alert.message);
  }
  std::fputs(text.c_str(), file_);
  std::fflush(file_);
  auto add = [&](int device, const monitor::Labels* device_labels, const monitor::Reading& r) {
    const std::string key = SeriesKey(device, r);
    auto it = stats_.find(key);
    if (it == stats_.end()) {
      if (stats_.size() >= 65536) return;
      monitor::SeriesStats s;
      s.metric = r.metric;
      s.labels = r.labels;
      if (device_labels) s.labels.insert(device_labels->begin(), device_labels->end());
      s.min = s.max = r.value;
      it = stats_.emplace(key, std::move(s)).first;
    }
    monitor::SeriesStats& s = it->second;
    ++s.count;
    s.min = std::min(s.min, r.value);
    s.max = std::max(s.max, r.value);
    s.sum += r.value;
    s.last = r.value;
  };
  for (const monitor::DeviceReadings& d : sample.devices) {
    const monitor::Labels labels = monitor::DeviceLabels(d);
    for (const monitor::Reading& r : d.readings) add(d.device, &labels, r);
  }
  for (const monitor::Reading& r : sample.host) add(-1, nullptr, r);
  ++run_.samples;
  run_.last = std::move(sample);
}

void Telemetry::Loop() {
  double next = Steady() + interval_;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      const double wait = std::max(0.0, next - Steady());
      if (wake_.wait_for(lock, std::chrono::duration<double>(wait), [this] { return stop_; })) {
        break;
      }
    }
    TakeOne();
    next += interval_;
    if (next < Steady()) next = Steady();
  }
}

Json Telemetry::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  TakeOne();
  run_.seconds = Steady() - started_;
  run_.stats.clear();
  for (const auto& [key, s] : stats_) run_.stats.push_back(s);
  return monitor::RunSummaryJson(run_, rules_);
}

}  // namespace parity::collect
