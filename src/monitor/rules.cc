// SPDX-License-Identifier: Apache-2.0
#include "monitor/rules.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <utility>

#include "core/file_util.h"
#include "core/spellcheck.h"
#include "core/text.h"
#include "core/yaml_util.h"

namespace parity::monitor {
namespace {

constexpr std::string_view kDefaultRulesYaml =
    R"(# parity monitor's built-in rules. To change them, save this (parity monitor
# --print-default-rules > rules.yaml), edit it and pass --rules rules.yaml.
#
# A rule: name; metric (a name of docs/DESIGN.md "Telemetry", with or without "parity_"); labels
# (label: value, or label: [values] to match any of them); op: ">", ">=", "<", "<=" (quote
# these: a bare > starts a YAML block) or increase; then
#   value and for (the condition must hold in that many consecutive samples; default 1), or
#   rate_per_hour (counters: their increase over the last hour, with op ">" or ">="), or
#   for increase, an optional value (rise by more than it; default 0);
# and severity: warning (the default) or fatal. A rule fires once per episode per series (one
# metric with one set of labels, e.g. one GPU's junction sensor), and reports when it ends.
- name: junction_temperature
  metric: gpu_temperature_celsius
  labels: {sensor: junction}
  op: ">"
  value: 85
  for: 3
  severity: warning
- name: board_power
  metric: gpu_power_watts
  op: ">"
  value: 450
  for: 3
  severity: warning
- name: correctable_ecc_rate
  metric: gpu_ecc_errors_total
  labels: {severity: correctable}
  op: ">"
  rate_per_hour: 10
  severity: warning
- name: uncorrectable_ecc
  metric: gpu_ecc_errors_total
  labels: {severity: uncorrectable}
  op: increase
  severity: fatal
- name: xid_error
  metric: gpu_xid_events_total
  op: increase
  severity: fatal
- name: retired_pages
  metric: gpu_retired_pages_total
  op: increase
  severity: warning
- name: clock_throttling
  metric: gpu_throttle_active
  labels:
    reason: [hw_slowdown, hw_thermal_slowdown, sw_thermal_slowdown, hw_power_brake_slowdown]
  op: ">"
  value: 0
  for: 3
  severity: warning
- name: host_uncorrectable_ecc
  metric: host_ecc_errors_total
  labels: {severity: uncorrectable}
  op: increase
  severity: fatal
)";

constexpr std::string_view kBuiltinOrigin = "built-in rules";
constexpr std::string_view kPrefix = "parity_";
constexpr std::array<std::string_view, 8> kRuleKeys = {
    "name", "metric", "labels", "op", "value", "for", "rate_per_hour", "severity"};
constexpr std::array<std::string_view, 4> kDeviceLabels = {"device", "uuid", "model", "vendor"};
constexpr std::string_view kOpList = R"(">", ">=", "<", "<=" or "increase")";

std::string Join(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

// " (did you mean 'x'?)" when a candidate is close to `word`, else "".
std::string DidYouMean(std::string_view word, const std::vector<std::string_view>& candidates) {
  const std::optional<std::string> best = Suggest(word, candidates);
  return best ? " (did you mean '" + *best + "'?)" : "";
}

bool HasControlCharacter(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

std::optional<Op> ParseOp(std::string_view text) {
  if (text == ">") return Op::kGreater;
  if (text == ">=") return Op::kGreaterEqual;
  if (text == "<") return Op::kLess;
  if (text == "<=") return Op::kLessEqual;
  if (text == "increase") return Op::kIncrease;
  return std::nullopt;
}

// Checks rule number `number` (from 1) of the list. Parse() returns the problem at its line;
// who() says how to name the rule before it ("rule 'NAME'" when the rule has a usable name,
// else "rule #N").
class RuleParser {
 public:
  RuleParser(const YAML::Node& node, int number)
      : node_(node), who_(fmt::format("rule #{}", number)) {}

  const std::string& who() const { return who_; }

  Status Parse(Rule* rule) {
    if (!node_.IsMap()) {
      return YamlAt(node_, fmt::format("is {}, not a map of name, metric, labels, op, value, for, "
                                       "rate_per_hour, severity",
                                       YamlDescribe(node_)));
    }
    // Name the rule before anything else can fail, so that every message names it.
    for (const auto& entry : node_) {
      if (entry.first.IsScalar() && entry.first.Scalar() == "name" && entry.second.IsScalar() &&
          !entry.second.Scalar().empty() && !HasControlCharacter(entry.second.Scalar())) {
        who_ = "rule '" + entry.second.Scalar() + "'";
        break;
      }
    }
    PARITY_ASSIGN_OR_RETURN(fields_, YamlFields::Read(node_, "a rule", kRuleKeys));
    PARITY_RETURN_IF_ERROR(ReadName(rule));
    PARITY_RETURN_IF_ERROR(ReadMetric(rule));
    PARITY_RETURN_IF_ERROR(ReadLabels(rule));
    PARITY_RETURN_IF_ERROR(ReadSeverity(rule));
    return ReadCondition(rule);
  }

 private:
  const YAML::Node* Field(std::string_view key) const { return fields_.Find(key); }

  Status ReadName(Rule* rule) {
    PARITY_ASSIGN_OR_RETURN(const YAML::Node name, fields_.Require("name"));
    PARITY_ASSIGN_OR_RETURN(rule->name, YamlString(name, "'name'"));
    if (HasControlCharacter(rule->name)) return YamlAt(name, "'name' has a control character");
    return Status::Ok();
  }

  Status ReadMetric(Rule* rule) {
    PARITY_ASSIGN_OR_RETURN(const YAML::Node metric, fields_.Require("metric"));
    PARITY_ASSIGN_OR_RETURN(const std::string text, YamlString(metric, "'metric'"));
    std::string_view name = text;
    if (name.starts_with(kPrefix)) name.remove_prefix(kPrefix.size());
    spec_ = FindMetric(name);
    if (spec_ == nullptr) {
      std::vector<std::string_view> known;
      for (const MetricSpec& spec : Catalogue()) known.push_back(spec.name);
      std::string hint = DidYouMean(name, known);
      if (hint.empty()) hint = "; known metrics: " + Join(known);
      return YamlAt(metric, "unknown metric '" + text + "'" + hint);
    }
    rule->metric = std::string(spec_->name);
    return Status::Ok();
  }

  Status ReadLabels(Rule* rule) {
    const YAML::Node* labels = Field("labels");
    if (labels == nullptr || labels->IsNull()) return Status::Ok();
    if (!labels->IsMap()) {
      return YamlAt(*labels, fmt::format("'labels' is {}, not a map of label to value or values",
                                         YamlDescribe(*labels)));
    }
    std::vector<std::string_view> allowed(spec_->labels.begin(), spec_->labels.end());
    if (IsDeviceMetric(spec_->name)) {
      allowed.insert(allowed.end(), kDeviceLabels.begin(), kDeviceLabels.end());
    }
    for (const auto& entry : *labels) {
      if (!entry.first.IsScalar()) return YamlAt(entry.first, "a label name is not a string");
      const std::string& label = entry.first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), label) == allowed.end()) {
        return YamlAt(entry.first, "metric " + rule->metric + " has no label '" + label + "'" +
                                       DidYouMean(label, allowed) +
                                       (allowed.empty() ? "; it has no labels"
                                                        : "; its labels: " + Join(allowed)));
      }
      if (rule->labels.count(label) != 0) {
        return YamlAt(entry.first, "label '" + label + "' is given twice");
      }
      std::vector<std::string>& values = rule->labels[label];
      const YAML::Node& value = entry.second;
      if (value.IsScalar()) {
        values.push_back(value.Scalar());
      } else if (value.IsSequence()) {
        for (const YAML::Node& item : value) {
          if (!item.IsScalar()) {
            return YamlAt(item, "label '" + label + "': a value in the list is not a string");
          }
          values.push_back(item.Scalar());
        }
        if (values.empty()) {
          return YamlAt(value, "label '" + label + "': the list of values is empty");
        }
      } else {
        return YamlAt(value, fmt::format("label '{}' is {}, not a value or a list of values", label,
                                         YamlDescribe(value)));
      }
    }
    return Status::Ok();
  }

  Status ReadSeverity(Rule* rule) {
    const YAML::Node* severity = Field("severity");
    if (severity == nullptr || severity->IsNull()) return Status::Ok();
    const std::string text = severity->IsScalar() ? severity->Scalar() : "";
    if (text == "warning") {
      rule->severity = Severity::kWarning;
    } else if (text == "fatal") {
      rule->severity = Severity::kFatal;
    } else {
      return YamlAt(*severity,
                    fmt::format("severity {} is not warning or fatal", YamlDescribe(*severity)));
    }
    return Status::Ok();
  }

  Status ReadCondition(Rule* rule) {
    const YAML::Node* op = Field("op");
    const YAML::Node* value = Field("value");
    const YAML::Node* for_samples = Field("for");
    const YAML::Node* rate = Field("rate_per_hour");
    if (op == nullptr || op->IsNull()) {
      return YamlAt(node_, fmt::format("has no 'op' ({})", kOpList));
    }
    if (op->IsScalar() && op->Scalar().empty()) {
      return YamlAt(*op, fmt::format("'op' is empty: quote it (op: \">\"), since a bare > starts "
                                     "a YAML block; ops: {}",
                                     kOpList));
    }
    const std::optional<Op> parsed = op->IsScalar() ? ParseOp(op->Scalar()) : std::nullopt;
    if (!parsed) {
      return YamlAt(*op, fmt::format("op {} is not one of {}", YamlDescribe(*op), kOpList));
    }
    rule->op = *parsed;

    if (rule->op == Op::kIncrease) {
      if (for_samples != nullptr) {
        return YamlAt(*for_samples, "'for' does not apply to op increase");
      }
      if (rate != nullptr) return YamlAt(*rate, "'rate_per_hour' does not apply to op increase");
      if (value == nullptr) return Status::Ok();
      PARITY_ASSIGN_OR_RETURN(rule->value, YamlNumber(*value, "'value'"));
      if (rule->value < 0) {
        return YamlAt(*value, "'value' of op increase (the step) must not be negative");
      }
      return Status::Ok();
    }

    if (rate != nullptr) {
      if (spec_->type != MetricType::kCounter) {
        return YamlAt(*rate,
                      "'rate_per_hour' needs a counter, and " + rule->metric + " is a gauge");
      }
      if (rule->op != Op::kGreater && rule->op != Op::kGreaterEqual) {
        return YamlAt(*op,
                      "'rate_per_hour' takes op \">\" or \">=\", not \"" + op->Scalar() + "\"");
      }
      if (value != nullptr) return YamlAt(*value, "give 'value' or 'rate_per_hour', not both");
      if (for_samples != nullptr) {
        return YamlAt(*for_samples, "'for' does not apply to 'rate_per_hour'");
      }
      PARITY_ASSIGN_OR_RETURN(const double per_hour, YamlNumber(*rate, "'rate_per_hour'"));
      if (per_hour < 0) return YamlAt(*rate, "'rate_per_hour' must not be negative");
      rule->rate_per_hour = per_hour;
      return Status::Ok();
    }

    if (value == nullptr || value->IsNull()) {
      return YamlAt(node_,
                    "has no 'value' to compare with (or 'rate_per_hour' for a counter's rate)");
    }
    PARITY_ASSIGN_OR_RETURN(rule->value, YamlNumber(*value, "'value'"));
    if (for_samples != nullptr) {
      const Result<std::int64_t> count = YamlInteger(*for_samples, "'for'");
      if (!count.ok() || *count < 1) {
        return YamlAt(*for_samples,
                      fmt::format("'for' is {}, not a whole number of samples, 1 or more",
                                  YamlDescribe(*for_samples)));
      }
      rule->for_samples = *count;
    }
    return Status::Ok();
  }

  const YAML::Node& node_;
  std::string who_;
  YamlFields fields_;
  const MetricSpec* spec_ = nullptr;
};

// The list of rules in `root`: the document itself, or its 'rules:'. "line N: problem".
Result<YAML::Node> RuleList(const YAML::Node& root) {
  if (root.IsSequence()) return root;
  if (!root.IsMap()) {
    return YamlAt(root, fmt::format("the file is {}, not a list of rules (or a map with 'rules:' "
                                    "holding one)",
                                    YamlDescribe(root)));
  }
  YAML::Node list;
  for (const auto& entry : root) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
    if (key != "rules") {
      return YamlAt(entry.first, "unknown top-level key '" + Printable(key) +
                                     "': expected a list of rules, or 'rules:' holding one");
    }
    list = entry.second;
  }
  if (!list.IsSequence()) {
    return YamlAt(list.IsDefined() ? list : root,
                  fmt::format("'rules' is {}, not a list of rules", YamlDescribe(list)));
  }
  return list;
}

Result<std::vector<Rule>> ParseList(const YAML::Node& root, std::string_view path) {
  if (!root.IsDefined() || root.IsNull()) {
    return Status::Invalid(path, "empty; expected a list of rules");
  }
  Result<YAML::Node> list = RuleList(root);
  if (!list.ok()) return Status::Invalid(path, list.status().message());
  std::vector<Rule> rules;
  std::map<std::string, int> owners;  // name -> rule number
  int number = 0;
  for (const YAML::Node& node : *list) {
    ++number;
    RuleParser parser(node, number);
    Rule rule;
    if (Status status = parser.Parse(&rule); !status.ok()) {
      return Status::Invalid(path, YamlInContext(status, parser.who()).message());
    }
    const auto [owner, is_new] = owners.emplace(rule.name, number);
    if (!is_new) {
      return Status::Invalid(
          path, YamlAt(node, fmt::format("{}: the name is already used by rule #{}", parser.who(),
                                         owner->second))
                    .message());
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

// Prometheus-style label value: backslash, double quote and newline escaped.
std::string Escape(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out;
}

std::string SeriesName(std::string_view metric, const Labels& labels) {
  std::string out(metric);
  if (labels.empty()) return out;
  out += '{';
  bool first = true;
  for (const auto& [key, value] : labels) {
    if (!first) out += ',';
    first = false;
    out += fmt::format("{}=\"{}\"", key, Escape(value));
  }
  out += '}';
  return out;
}

std::string Number(double value) { return fmt::format("{:.6g}", value); }

bool Holds(Op op, double value, double threshold) {
  switch (op) {
    case Op::kGreater:
      return value > threshold;
    case Op::kGreaterEqual:
      return value >= threshold;
    case Op::kLess:
      return value < threshold;
    case Op::kLessEqual:
      return value <= threshold;
    case Op::kIncrease:
      return value > threshold;
  }
  return false;
}

/// Whether the series with `labels` (and `device_labels`, when not null) matches every
/// matcher. A reading's own labels never share a name with the device labels.
bool Matches(const LabelMatchers& matchers, const Labels& labels, const Labels* device_labels) {
  for (const auto& [label, values] : matchers) {
    auto it = labels.find(label);
    if (it == labels.end()) {
      if (device_labels == nullptr) return false;
      it = device_labels->find(label);
      if (it == device_labels->end()) return false;
    }
    if (std::find(values.begin(), values.end(), it->second) == values.end()) return false;
  }
  return true;
}

// "5 min", "1 h", "90 s": the span a rate was measured over.
std::string Span(double seconds) {
  if (seconds >= RuleEngine::kRateWindowSeconds) return "the last hour";
  if (seconds >= 120) return fmt::format("{:.0f} min", seconds / 60);
  return fmt::format("{:.0f} s", seconds);
}

}  // namespace

std::string_view SeverityName(Severity severity) {
  return severity == Severity::kFatal ? "fatal" : "warning";
}

std::string_view OpName(Op op) {
  switch (op) {
    case Op::kGreater:
      return ">";
    case Op::kGreaterEqual:
      return ">=";
    case Op::kLess:
      return "<";
    case Op::kLessEqual:
      return "<=";
    case Op::kIncrease:
      return "increase";
  }
  return "?";
}

Result<std::vector<Rule>> ParseRules(std::string_view yaml_text, std::string_view path) {
  if (yaml_text.size() > kMaxRulesFileBytes) {
    return Status::Invalid(
        path, fmt::format("{} bytes, larger than a rules file may be (1 MiB)", yaml_text.size()));
  }
  try {
    Result<YAML::Node> root = LoadYaml(yaml_text, std::string(path));
    if (!root.ok()) {
      if (root.status().message().find("block scalar") == std::string::npos) return root.status();
      return Status(StatusCode::kInvalidInput,
                    root.status().message() +
                        " (quote comparison ops, op: \">=\": a bare > starts a YAML block)");
    }
    return ParseList(*root, path);
  } catch (const YAML::Exception& e) {
    return Status::Invalid(path, "cannot read the rules: " + e.msg);
  } catch (const std::exception& e) {
    return Status::Invalid(path, std::string("cannot read the rules: ") + e.what());
  }
}

Result<std::vector<Rule>> LoadRules(const std::string& path) {
  PARITY_ASSIGN_OR_RETURN(const std::string text,
                          ReadSmallFile(path, kMaxRulesFileBytes, "rules file"));
  return ParseRules(text, path);
}

std::string_view DefaultRulesYaml() { return kDefaultRulesYaml; }

std::vector<Rule> DefaultRules() {
  Result<std::vector<Rule>> parsed = ParseRules(kDefaultRulesYaml, kBuiltinOrigin);
  if (!parsed.ok()) {
    std::fprintf(stderr, "parity: internal error (a build bug): %s\n",
                 parsed.status().message().c_str());
    std::abort();
  }
  return std::move(parsed).value();
}

Json AlertToJson(const Alert& alert) {
  Json labels = Json::object();
  for (const auto& [key, value] : alert.labels) labels[key] = value;
  Json out = {{"kind", "alert"},
              {"rule", alert.rule},
              {"severity", SeverityName(alert.severity)},
              {"metric", alert.metric},
              {"labels", std::move(labels)}};
  SetNumber(out, "value", alert.value);
  SetNumber(out, "threshold", alert.threshold);
  SetNumber(out, "time", alert.time_unix);
  out["resolved"] = alert.resolved;
  out["message"] = alert.message;
  return out;
}

RuleEngine::RuleEngine(std::vector<Rule> rules) : rules_(std::move(rules)) {
  specs_.reserve(rules_.size());
  for (const Rule& rule : rules_) specs_.push_back(FindMetric(rule.metric));
  state_.resize(rules_.size());
}

std::vector<Alert> RuleEngine::Evaluate(const Sample& sample) {
  ++evaluation_;
  std::vector<Alert> alerts;
  // Each watched series of the sample once. A series is keyed by the monitor's device index
  // (-1 for the host) and the reading's own labels: the device labels (device, uuid, model,
  // vendor) follow from the index, so they are merged in only for matching and for alerts.
  struct Series {
    const std::string* metric;
    int device;
    const Labels* labels;         // the reading's own
    const Labels* device_labels;  // nullptr for host readings
    double value;
  };
  std::vector<Series> series;
  std::vector<Labels> device_labels;
  device_labels.reserve(sample.devices.size());
  const auto watched = [&](const Reading& reading) {
    if (!std::isfinite(reading.value)) return false;  // as if unreadable
    return std::any_of(rules_.begin(), rules_.end(),
                       [&](const Rule& rule) { return rule.metric == reading.metric; });
  };
  for (const DeviceReadings& device : sample.devices) {
    device_labels.push_back(DeviceLabels(device));
    for (const Reading& reading : device.readings) {
      if (!IsDeviceMetric(reading.metric) || !watched(reading)) continue;
      series.push_back(
          {&reading.metric, device.device, &reading.labels, &device_labels.back(), reading.value});
    }
  }
  for (const Reading& reading : sample.host) {
    if (IsDeviceMetric(reading.metric) || !watched(reading)) continue;
    series.push_back({&reading.metric, -1, &reading.labels, nullptr, reading.value});
  }
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    if (specs_[i] == nullptr) continue;
    for (const Series& s : series) {
      if (*s.metric != rules_[i].metric || !Matches(rules_[i].labels, *s.labels, s.device_labels)) {
        continue;
      }
      Step(i, s.device, *s.labels, s.device_labels, s.value, sample, &alerts);
    }
  }
  return alerts;
}

void RuleEngine::Step(std::size_t rule_index, int device, const Labels& own_labels,
                      const Labels* device_labels, double value, const Sample& sample,
                      std::vector<Alert>* alerts) {
  const Rule& rule = rules_[rule_index];
  auto& states = state_[rule_index];
  auto it = states.find(std::forward_as_tuple(device, own_labels));
  if (it == states.end()) {
    if (tracked_series_ >= kMaxSeries) return;
    it = states.emplace(SeriesKey{device, own_labels}, SeriesState{}).first;
    ++tracked_series_;
  }
  SeriesState& state = it->second;
  if (state.last_seen == evaluation_) return;  // the same series twice in one sample
  if (state.last_seen + 1 != evaluation_) state.consecutive = 0;
  state.last_seen = evaluation_;

  const bool counter = specs_[rule_index]->type == MetricType::kCounter;
  bool holds = false;
  double reported = value;
  double threshold = rule.value;
  double previous = state.previous;  // kIncrease: the reading before this one
  bool reset = false;                // kIncrease: a counter went down
  double span = 0.0;                 // rate: the seconds the increase was measured over

  if (rule.op == Op::kIncrease) {
    if (!state.has_previous) {  // the baseline, whatever its value
      state.has_previous = true;
      state.previous = value;
      return;
    }
    reset = counter && value < state.previous;
    const double base = reset ? 0.0 : state.previous;
    threshold = base + rule.value;
    holds = value - base > rule.value;
    state.previous = value;
  } else if (rule.rate_per_hour) {
    const double now = sample.monotonic;
    if (state.has_previous) {
      state.total += value >= state.previous ? value - state.previous : value;
    }
    state.has_previous = true;
    state.previous = value;
    if (!state.history.empty() && now < state.history.back().time) {
      state.history.clear();  // the monotonic clock went back: start the window again
    }
    // Points closer together than `kSpacing` merge into the newest, so that the window holds at
    // most kMaxRatePoints of them and still spans the hour (to within `kSpacing`).
    constexpr double kSpacing = kRateWindowSeconds / (kMaxRatePoints - 4);
    if (state.history.size() >= 2 &&
        now - state.history[state.history.size() - 2].time < kSpacing) {
      state.history.back() = {now, state.total};
    } else {
      state.history.push_back({now, state.total});
    }
    // Points older than the window go, but the one before the newest stays, so that samples
    // further apart than the window still see the last interval's increase.
    while (state.history.size() > 2 && state.history.front().time < now - kRateWindowSeconds) {
      state.history.pop_front();
    }
    while (state.history.size() > kMaxRatePoints) state.history.pop_front();  // never, by kSpacing
    reported = state.total - state.history.front().total;
    threshold = *rule.rate_per_hour;
    span = now - state.history.front().time;
    holds = Holds(rule.op, reported, threshold);
  } else {
    const bool condition = Holds(rule.op, value, threshold);
    const std::int64_t need = std::max<std::int64_t>(rule.for_samples, 1);
    state.consecutive = condition ? std::min(state.consecutive + 1, need) : 0;
    // Held, but not yet `need` samples running: neither a new episode nor the end of one.
    if (condition && state.consecutive < need) return;
    holds = condition;
  }
  if (holds == state.firing) return;
  state.firing = holds;

  std::string detail;
  if (rule.op == Op::kIncrease) {
    if (!holds) {
      detail = fmt::format("= {}, no longer increasing", Number(value));
    } else if (reset) {
      detail = fmt::format("= {} after a counter reset", Number(value));
    } else {
      detail = fmt::format("= {}, up from {}", Number(value), Number(previous));
    }
    if (holds && rule.value > 0) detail += fmt::format(" (by more than {})", Number(rule.value));
  } else if (rule.rate_per_hour) {
    detail = fmt::format("rose by {} in {}{} {} {} per hour", Number(reported), Span(span),
                         holds ? "," : ", no longer", OpName(rule.op), Number(threshold));
  } else {
    detail = fmt::format("= {}{} {} {}", Number(value), holds ? "" : ", no longer", OpName(rule.op),
                         Number(threshold));
    if (holds && rule.for_samples > 1) {
      detail += fmt::format(" for {} samples", rule.for_samples);
    }
  }
  Labels labels = own_labels;
  if (device_labels != nullptr) labels.insert(device_labels->begin(), device_labels->end());
  Alert alert;
  alert.rule = rule.name;
  alert.severity = rule.severity;
  alert.metric = rule.metric;
  alert.labels = labels;
  alert.value = reported;
  alert.threshold = threshold;
  alert.time_unix = sample.time_unix;
  alert.resolved = !holds;
  alert.message = fmt::format("rule {}: {} {}{}", rule.name, SeriesName(rule.metric, labels),
                              detail, holds ? "" : " (resolved)");
  alerts->push_back(std::move(alert));
}

}  // namespace parity::monitor
