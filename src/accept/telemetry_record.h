// SPDX-License-Identifier: Apache-2.0
// A bundle's telemetry.jsonl (the monitor stage's samples and alerts, one JSON object a line)
// read into series, for the stability criteria and the report's time series.
#ifndef PARITY_ACCEPT_TELEMETRY_RECORD_H_
#define PARITY_ACCEPT_TELEMETRY_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"

namespace parity::accept {

/// One metric of one device (or of the host) over the record.
struct TelemetrySeries {
  std::string metric;                         ///< without the parity_ prefix: gpu_power_watts
  std::map<std::string, std::string> labels;  ///< the reading's labels, and device/uuid/model
  std::vector<double> t;                      ///< seconds since the record's first sample
  std::vector<double> v;

  /// The largest value; nothing when empty.
  std::optional<double> Max() const;
  /// How much a counter grew: the sum of its rises, a fall being a reset to the lower value.
  double Increase() const;
};

struct TelemetryRecord {
  double start = 0.0, end = 0.0;  ///< Unix seconds of the first and last sample
  int64_t samples = 0;
  std::vector<TelemetrySeries> series;
  std::vector<Json> alerts;  ///< each with "t", seconds since start
  /// Which stage ran when: {"name","start","end"}, seconds since start.
  std::vector<Json> stages;
  /// Lines that could not be used ("line 17: not valid JSON"), at most a few; a crash-cut last
  /// line is not a problem.
  std::vector<std::string> problems;
  int64_t bad_lines = 0;

  /// The series of `metric` whose labels include every pair of `labels`.
  std::vector<const TelemetrySeries*> Find(
      std::string_view metric, const std::map<std::string, std::string>& labels = {}) const;
};

/// Limits on what a record may hold.
inline constexpr std::size_t kMaxTelemetryLine = std::size_t{4} << 20;
inline constexpr std::size_t kMaxTelemetrySeries = 4096;

/// Reads a telemetry.jsonl. kInvalidInput "path: problem" when it can't be opened or read, or
/// holds no sample at all although it has lines that are not samples.
Result<TelemetryRecord> ReadTelemetry(const std::string& path);

/// The record decimated for the report: at most `max_buckets` buckets per series of a round
/// width (1 s, 2 s, 5 s, ... 1 h, ...), each with min, max and mean (null when empty):
/// {"start","end","samples","bucket_s","series":[{"metric","labels","unit","t","min","max",
/// "mean"}],"alerts":[..],"stages":[..]}.
Json TelemetryJson(const TelemetryRecord& record, std::size_t max_buckets = 1500);

}  // namespace parity::accept

#endif  // PARITY_ACCEPT_TELEMETRY_RECORD_H_
