// SPDX-License-Identifier: Apache-2.0
// `parity fleet report FLEET_DIR`: per benchmark, the fleet's median and spread over its
// members, and the outliers — members more than k median absolute deviations on the slow side
// of the median — with the fingerprint differences that might explain them (DCGM compares
// each GPU with the others the same way).
#ifndef PARITY_FLEET_FLEET_REPORT_H_
#define PARITY_FLEET_FLEET_REPORT_H_

#include <map>
#include <string>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"

namespace parity::fleet {

struct FleetReportOptions {
  double k = 3.0;  ///< --k: deviations from the median that make an outlier
  /// The smallest spread counted, as a fraction of the median: a fleet whose members agree to
  /// the last digit (MAD 0) still flags only members this far off.
  double min_relative_mad = 0.01;
};

/// One member's difference from the rest of the fleet: its value and the fleet's commonest.
struct FingerprintDifference {
  std::string key;
  Json value, fleet;
};

struct Outlier {
  std::string member;
  double value = 0.0;
  double deviations = 0.0;  ///< |value − median| / MAD
  std::vector<FingerprintDifference> differences;
};

struct FleetBenchmark {
  std::string key;    ///< "stage/benchmark|dtype|size"
  std::string label;  ///< "bench: stream.triad float64"
  std::string unit;
  bool higher_is_better = true;
  std::map<std::string, double> values;  ///< member → its median
  double median = 0.0, mad = 0.0, min = 0.0, max = 0.0;
  std::vector<Outlier> outliers;
};

struct FleetReport {
  std::string fleet_dir;
  Json manifest;
  std::vector<std::string> members;  ///< those with a bundle, in rank order
  std::vector<Json> failed;          ///< members that failed: {"name","rank","reason"}
  std::vector<FleetBenchmark> benchmarks;
  int outliers = 0;
  std::vector<std::string> notes;
};

/// Reads FLEET_DIR and its bundles. kInvalidInput naming the file and key for a malformed
/// fleet.json, bundle manifest or benchmark result.
Result<FleetReport> MakeFleetReport(const std::string& fleet_dir,
                                    const FleetReportOptions& options);

/// The fingerprint keys that can explain a slow member: driver, firmware and VBIOS, clocks,
/// power limits, PCIe link, NUMA, kernel, the library versions and the known settings.
bool ExplainsSpeed(const std::string& key);

/// Median absolute deviation: median |x − median(x)|.
double MedianAbsoluteDeviation(const std::vector<double>& values);

/// {"format":"parity-fleet-report","version":1,"fleet","members","failed","benchmarks":[{"key",
/// "label","unit","better","median","mad","min","max","values","outliers":[{"member","value",
/// "deviations","differences":[{"key","value","fleet"}]}]}],"outliers","k","notes"}.
Json FleetReportJson(const FleetReport& report, const FleetReportOptions& options);
std::string FleetReportText(const FleetReport& report, const FleetReportOptions& options);

}  // namespace parity::fleet

#endif  // PARITY_FLEET_FLEET_REPORT_H_
