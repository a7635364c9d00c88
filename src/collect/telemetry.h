// SPDX-License-Identifier: Apache-2.0
// The monitor stage at work: telemetry sampled on a thread while the other stages run, samples
// and alerts appended to the bundle's telemetry.jsonl, fatal alerts charged to the stage that
// was running.
#ifndef PARITY_COLLECT_TELEMETRY_H_
#define PARITY_COLLECT_TELEMETRY_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"
#include "monitor/monitor.h"
#include "monitor/rules.h"

namespace parity::collect {

class Telemetry {
 public:
  /// Opens the sources the monitor stage's keys name (`interval`, `sources`, `rules`) and
  /// starts sampling into `jsonl_path` (appended). kUnavailable when no source can run here;
  /// kInvalidInput when the file can't be opened.
  static Result<std::unique_ptr<Telemetry>> Start(const Json& params, const std::string& plan_dir,
                                                  const std::string& jsonl_path);
  ~Telemetry();

  /// The stage now running ("" between stages); alerts and samples are tagged with it.
  void SetStage(const std::string& stage);

  /// The fatal alerts raised while `stage` ran, as one-line messages; cleared by the call.
  std::vector<std::string> TakeFatal(const std::string& stage);

  /// Stops sampling (after one last sample) and returns the run's parity-monitor summary.
  Json Stop();

  /// How the sources stood when opened.
  const std::vector<monitor::SourceState>& sources() const { return sampler_->opened(); }

 private:
  Telemetry() = default;
  void Loop();
  void TakeOne();

  std::unique_ptr<monitor::Sampler> sampler_;
  std::unique_ptr<monitor::RuleEngine> engine_;
  std::vector<monitor::Rule> rules_;
  double interval_ = 1.0;
  std::FILE* file_ = nullptr;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::string stage_;
  std::map<std::string, std::vector<std::string>> fatal_;
  monitor::MonitorRun run_;
  std::map<std::string, monitor::SeriesStats> stats_;
  double started_ = 0.0;
};

}  // namespace parity::collect

#endif  // PARITY_COLLECT_TELEMETRY_H_
