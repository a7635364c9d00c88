// SPDX-License-Identifier: Apache-2.0
// Threshold rules for `parity monitor`: the YAML rules file (--rules, or the built-in defaults)
// and the engine that turns a stream of Samples into alerts, once per episode.
//
// A rules file is a list of rules (or a map whose only key `rules:` holds the list):
//
//   - name: junction_temperature
//     metric: gpu_temperature_celsius       # a catalogue name; the "parity_" prefix is optional
//     labels: {sensor: junction}            # label -> value or list of values (any matches)
//     op: ">"                               # ">", ">=", "<", "<=" or "increase"; quote it
//     value: 85
//     for: 3                                # consecutive samples; default 1
//     severity: warning                     # warning (default) or fatal
//   - name: correctable_ecc_rate
//     metric: gpu_ecc_errors_total
//     labels: {severity: correctable}
//     op: ">"
//     rate_per_hour: 10                     # counters only; increase over the last hour
//
// Every rule keeps its state per series: a metric with its full label set (device labels
// included for gpu_* metrics).
#ifndef PARITY_MONITOR_RULES_H_
#define PARITY_MONITOR_RULES_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"
#include "monitor/metrics.h"
#include "monitor/sample.h"
#include "monitor/telemetry.h"

namespace parity::monitor {

enum class Severity { kWarning, kFatal };

/// "warning" or "fatal".
std::string_view SeverityName(Severity severity);

/// How a rule compares a series with its threshold.
enum class Op { kGreater, kGreaterEqual, kLess, kLessEqual, kIncrease };

/// ">", ">=", "<", "<=" or "increase", as a rules file spells it.
std::string_view OpName(Op op);

/// Label name -> the values a series may have for it (any one matches). A series matches when
/// it has every listed label with one of its values; a series lacking a listed label does not.
using LabelMatchers = std::map<std::string, std::vector<std::string>>;

/// One rule, as ParseRules checked it. A rule built by hand is evaluated as well as it can be
/// (`for_samples` below 1 counts as 1; a metric outside the catalogue never matches).
struct Rule {
  std::string name;
  std::string metric;  ///< catalogue name without "parity_"
  LabelMatchers labels;
  Op op = Op::kGreater;
  /// The threshold of a comparison; for kIncrease, the step a sample must rise by more than
  /// (0: any rise). Unused by rate rules.
  double value = 0.0;
  /// Comparisons: how many consecutive samples of a series the condition must hold in.
  std::int64_t for_samples = 1;
  /// When set, the rule compares the counter's increase over the last hour (op kGreater or
  /// kGreaterEqual) with this, instead of the value itself.
  std::optional<double> rate_per_hour;
  Severity severity = Severity::kWarning;
};

/// Parses a rules file's text. `path` names it in messages ("path: rule 'NAME': problem", or
/// "path: rule #3: problem" for a rule without a usable name); every error is kInvalidInput.
/// An explicit empty list (`[]`, `rules: []`) is valid and means no rules; an empty text is not.
Result<std::vector<Rule>> ParseRules(std::string_view yaml_text, std::string_view path);

/// Reads `path` (at most kMaxRulesFileBytes) and parses it with ParseRules.
Result<std::vector<Rule>> LoadRules(const std::string& path);

/// The largest rules file LoadRules and ParseRules accept: 1 MiB.
inline constexpr std::size_t kMaxRulesFileBytes = std::size_t{1} << 20;

/// The built-in rules as YAML, what `parity monitor --print-default-rules` prints; a valid
/// rules file to start one's own from.
std::string_view DefaultRulesYaml();

/// DefaultRulesYaml() parsed. Aborts with an internal-error message if it does not parse
/// (a build bug the tests catch).
std::vector<Rule> DefaultRules();

/// A rule firing for a series (resolved false), or that series' episode ending (resolved true).
struct Alert {
  std::string rule;
  Severity severity = Severity::kWarning;
  std::string metric;  ///< without "parity_"
  Labels labels;       ///< the series' full label set (device labels included for gpu_*)
  /// The reading; for rate rules the increase over the window (the last hour or less).
  double value = 0.0;
  /// What the value was compared with: the rule's value or rate; for kIncrease, the level the
  /// reading had to exceed (the previous reading plus the rule's step).
  double threshold = 0.0;
  double time_unix = 0.0;  ///< the sample's wall-clock time
  bool resolved = false;
  std::string message;  ///< one line: "rule NAME: METRIC{labels} = V OP THRESHOLD ..."
};

/// {"kind":"alert","rule":..,"severity":"warning"|"fatal","metric":..,"labels":{..},
///  "value":..,"threshold":..,"time":..,"resolved":..,"message":..}
Json AlertToJson(const Alert& alert);

/// Evaluates rules against successive samples and keeps what they need between samples.
///
/// A comparison rule fires for a series when its condition held in `for_samples` consecutive
/// samples, then stays quiet for that series until the condition is false in a sample where the
/// series is present (which reports the episode resolved); the next time it holds long enough
/// is a new episode. A kIncrease rule fires on a sample that rose after one that did not;
/// consecutive rising samples are one episode. A series' first sample is its baseline and never
/// fires kIncrease, whatever its value. For counters, a reading below the previous one is a
/// reset and counts as an increase from 0, in rate and kIncrease rules alike.
///
/// A series absent from a sample (device gone, value unreadable, or a non-finite value) keeps
/// its state, episode included, but its consecutive count starts again.
///
/// Memory is bounded: at most kMaxSeries series are tracked across all rules (readings of
/// further series are not evaluated), and a rate series keeps at most kMaxRatePoints points
/// (samples closer together than about 0.9 s share one, so the window still spans the hour).
class RuleEngine {
 public:
  static constexpr std::size_t kMaxSeries = 65536;
  static constexpr std::size_t kMaxRatePoints = 4096;
  /// The rate window: points older than this (by Sample::monotonic) are dropped.
  static constexpr double kRateWindowSeconds = 3600.0;

  explicit RuleEngine(std::vector<Rule> rules);

  /// The alerts `sample` raises and resolves, in rule order, then series order.
  std::vector<Alert> Evaluate(const Sample& sample);

  const std::vector<Rule>& rules() const { return rules_; }
  /// How many series have state, across all rules (at most kMaxSeries).
  std::size_t tracked_series() const { return tracked_series_; }

 private:
  struct RatePoint {
    double time;   // Sample::monotonic
    double total;  // increase since the series' first sample, resets accounted for
  };
  struct SeriesState {
    std::uint64_t last_seen = 0;  // the Evaluate call that last saw it (from 1)
    std::int64_t consecutive = 0;
    bool firing = false;
    bool has_previous = false;
    double previous = 0.0;
    double total = 0.0;
    std::deque<RatePoint> history;  // oldest first
  };

  /// A series: the monitor's device index (-1 for the host) and the reading's own labels.
  using SeriesKey = std::tuple<int, Labels>;

  void Step(std::size_t rule_index, int device, const Labels& own_labels,
            const Labels* device_labels, double value, const Sample& sample,
            std::vector<Alert>* alerts);

  std::vector<Rule> rules_;
  std::vector<const MetricSpec*> specs_;  // per rule; nullptr: not in the catalogue
  std::vector<std::map<SeriesKey, SeriesState, std::less<>>> state_;  // per rule
  std::size_t tracked_series_ = 0;
  std::uint64_t evaluation_ = 0;
};

}  // namespace parity::monitor

#endif  // PARITY_MONITOR_RULES_H_
