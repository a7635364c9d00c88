// SPDX-License-Identifier: Apache-2.0
#include "monitor/exposition.h"

#include <fmt/format.h>

#include <cmath>
#include <set>
#include <vector>

#include "monitor/metrics.h"

namespace parity::monitor {
namespace {

std::string EscapeHelp(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);  // shortest representation that reads back exactly
}

std::string FormatLabels(const Labels& labels) {
  if (labels.empty()) return {};
  std::string out = "{";
  bool first = true;
  for (const auto& [name, value] : labels) {
    if (!first) out += ',';
    first = false;
    out += name;
    out += "=\"";
    out += EscapeLabelValue(value);
    out += '"';
  }
  out += '}';
  return out;
}

void Header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out +=
      fmt::format("# HELP parity_{} {}\n# TYPE parity_{} {}\n", name, EscapeHelp(help), name, type);
}

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string RenderExposition(const Sample& sample, const ExporterState& state) {
  // Series by metric, in the order they were read.
  std::map<std::string_view, std::vector<std::pair<Labels, double>>> series;
  for (const DeviceReadings& device : sample.devices) {
    const Labels device_labels = DeviceLabels(device);
    for (const Reading& r : device.readings) {
      Labels labels = device_labels;
      labels.insert(r.labels.begin(), r.labels.end());
      series[r.metric].emplace_back(std::move(labels), r.value);
    }
  }
  for (const Reading& r : sample.host) series[r.metric].emplace_back(r.labels, r.value);

  std::string out;
  out.reserve(4096 + 160 * (sample.devices.size() * 32 + sample.host.size()));
  for (const MetricSpec& spec : Catalogue()) {
    const auto it = series.find(spec.name);
    if (it == series.end()) continue;
    Header(out, spec.name, spec.type == MetricType::kCounter ? "counter" : "gauge", spec.help);
    std::set<std::string> seen;
    for (const auto& [labels, value] : it->second) {
      std::string key = FormatLabels(labels);
      if (!seen.insert(key).second) continue;
      out += fmt::format("parity_{}{} {}\n", spec.name, key, FormatValue(value));
    }
  }
  Header(out, "alerts_total", "counter", "Alerts fired by the monitor's rules, by rule.");
  for (const auto& [rule, count] : state.alerts_total) {
    out += fmt::format("parity_alerts_total{{rule=\"{}\"}} {}\n", EscapeLabelValue(rule), count);
  }
  Header(out, "source_up", "gauge",
         "1 when the telemetry source answered in the last sample, else 0.");
  for (const SourceState& s : sample.sources) {
    out += fmt::format("parity_source_up{{source=\"{}\"}} {}\n", EscapeLabelValue(s.name),
                       s.up ? 1 : 0);
  }
  Header(out, "monitor_samples_total", "counter", "Samples taken since the monitor started.");
  out += fmt::format("parity_monitor_samples_total {}\n", state.samples_total);
  Header(out, "monitor_last_sample_timestamp_seconds", "gauge",
         "Wall-clock time of the last sample, seconds since 1970.");
  out += fmt::format("parity_monitor_last_sample_timestamp_seconds {}\n",
                     FormatValue(sample.time_unix));
  return out;
}

}  // namespace parity::monitor
