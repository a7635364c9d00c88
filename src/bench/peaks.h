// SPDX-License-Identifier: Apache-2.0
// The datasheet peaks table (data/peaks.yaml): per device, the peak memory bandwidth and FLOP
// rates that `parity bench` divides a measured rate by to report efficiency.
#ifndef PARITY_BENCH_PEAKS_H_
#define PARITY_BENCH_PEAKS_H_

#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace parity::bench {

/// The metric names a peaks table may use: memory bandwidth in GB/s (10^9 bytes/s) and FLOP rates
/// in GFLOPS (10^9 FLOP/s, an FMA counting 2), dense (no structured sparsity).
inline constexpr std::array<std::string_view, 7> kPeakMetrics = {
    "memory_bandwidth_gbs", "fp64_gflops",        "fp64_tensor_gflops", "fp32_gflops",
    "tf32_tensor_gflops",   "bf16_tensor_gflops", "fp16_tensor_gflops",
};

/// One peak figure and where it comes from.
struct PeakValue {
  double value = 0;    ///< positive and finite, in the metric's unit
  std::string source;  ///< URL of the primary source (datasheet, product page, white paper)
  std::string note;    ///< e.g. "dense; datasheet lists 2x with sparsity"; may be empty
};

/// One device of the table.
struct DevicePeaks {
  std::string name;    ///< e.g. "NVIDIA A100 SXM4 80GB"; unique in a table (ignoring case)
  std::string vendor;  ///< e.g. "NVIDIA", "AMD"
  /// Case-insensitive ECMAScript regular expressions, searched for (not anchored) in the device
  /// name the runtime reports; a plain string is a substring match.
  std::vector<std::string> match;
  std::map<std::string, PeakValue> peaks;  ///< keyed by a name of kPeakMetrics; not empty
};

/// Parses a peaks table (the YAML text of data/peaks.yaml): a map whose only key, "devices", is a
/// non-empty list of devices, each a map of "name", "vendor", "match" (a non-empty list of
/// patterns) and "peaks" (a non-empty map from metric name to {value, source, note}; note may be
/// left out). Checks that every key is known, every value is positive and finite, every source
/// starts with "http://" or "https://", every pattern is a valid regular expression, and that no
/// two devices share a name or a pattern (ignoring case). Never throws: malformed input gives
/// Status::Invalid(origin, problem) with the line and the device (numbered from 1) named, e.g.
/// "line 41: device 3 (H100 SXM): peak 'fp32_gflops' has no source".
Result<std::vector<DevicePeaks>> ParsePeaks(std::string_view yaml_text, std::string_view origin);

/// The built-in table (data/peaks.yaml compiled into the binary), parsed on first use. A broken
/// built-in table is a build bug: this prints the problem to stderr and aborts.
const std::vector<DevicePeaks>& BuiltinPeaks();

/// The entry whose match list matches `device_name` (case-insensitive), or nullptr. When more
/// than one entry matches, the one with the longest matching pattern (in characters of the
/// pattern); on a tie, the earlier entry. A pattern that is not a valid regular expression (only
/// possible in a table not made by ParsePeaks) matches nothing. Never throws.
const DevicePeaks* FindPeaks(const std::vector<DevicePeaks>& table, std::string_view device_name);

}  // namespace parity::bench

#endif  // PARITY_BENCH_PEAKS_H_
