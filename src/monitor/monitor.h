// SPDX-License-Identifier: Apache-2.0
// The monitor: sources opened once, sampled at an interval, rules evaluated on each sample,
// samples and alerts recorded, the last one exported.
#ifndef PARITY_MONITOR_MONITOR_H_
#define PARITY_MONITOR_MONITOR_H_

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "monitor/rules.h"
#include "monitor/sample.h"
#include "monitor/sources.h"

namespace parity::monitor {

/// The sources asked for, opened, and read together into Samples.
class Sampler {
 public:
  /// Makes and opens the sources named (`names` empty: every source of the table), in the
  /// table's order. kInvalidInput for an unknown name; kUnavailable, with each source's
  /// reason, when none of them can run here.
  static Result<std::unique_ptr<Sampler>> Open(const std::vector<std::string>& names,
                                               const SourceOptions& options);

  /// Reads every device of every source that opened. AMD devices that rocm-smi and amdgpu
  /// both found (same PCI bus id) are one device: rocm-smi's readings, and sysfs's for what
  /// rocm-smi did not answer. A source whose device read fails is down in this sample, with
  /// the reason; the other devices and sources are still read.
  Sample Take(double time_unix, double monotonic);

  /// How the sources stand after Open().
  const std::vector<SourceState>& opened() const { return opened_; }

 private:
  struct Slot {
    std::unique_ptr<TelemetrySource> source;
    bool up = false;
    std::vector<int> device;  ///< monitor index of each of the source's devices
    std::vector<int> merge;   ///< for amdgpu: the rocm-smi device it joins, or -1
  };
  std::vector<Slot> slots_;
  std::vector<SourceState> opened_;
  int device_count_ = 0;
};

/// Per-series statistics over a run, for the summary.
struct SeriesStats {
  std::string metric;
  Labels labels;
  uint64_t count = 0;
  double min = 0, max = 0, sum = 0, last = 0;
};

struct MonitorOptions {
  double interval_seconds = 1.0;
  std::optional<double> duration_seconds;  ///< none: until interrupted
  bool once = false;
  std::string record_path;              ///< --record: JSON lines, appended and flushed
  std::vector<std::string> alert_exec;  ///< --alert-exec argv, empty for none
  std::string serve;                    ///< --serve HOST:PORT, empty for no exporter
  bool print_samples = false;           ///< a line per device per sample on stdout
  bool quiet = false;                   ///< no alerts on stderr either
};

/// What a run saw.
struct MonitorRun {
  uint64_t samples = 0;
  double seconds = 0.0;
  bool interrupted = false;
  std::vector<Alert> alerts;
  std::optional<Sample> last;
  std::vector<SeriesStats> stats;
  std::vector<std::string> problems;  ///< warnings printed during the run (alert programs)
};

/// Samples until --once is satisfied, --duration has passed, or SIGINT/SIGTERM arrives.
/// Returns kInvalidInput/kUnavailable only for what stops it from starting (record file not
/// writable, address not bindable); anything during the run is reported and sampling goes on.
Result<MonitorRun> RunMonitor(Sampler& sampler, RuleEngine& rules, const MonitorOptions& options);

/// The summary --json writes after a run that was not --once.
Json RunSummaryJson(const MonitorRun& run, const std::vector<Rule>& rules);

}  // namespace parity::monitor

#endif  // PARITY_MONITOR_MONITOR_H_
