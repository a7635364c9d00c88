// SPDX-License-Identifier: Apache-2.0
#include "accept/telemetry_record.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <unordered_map>

namespace parity::accept {
namespace {

constexpr std::size_t kMaxProblems = 5;

/// The series key: metric and labels, in one string.
std::string Key(std::string_view metric, const std::map<std::string, std::string>& labels) {
  std::string key(metric);
  for (const auto& [k, v] : labels) {
    key += '\x1f';
    key += k;
    key += '=';
    key += v;
  }
  return key;
}

std::string_view UnitOf(std::string_view metric) {
  auto ends = [&](std::string_view s) {
    return metric.size() >= s.size() && metric.substr(metric.size() - s.size()) == s;
  };
  if (ends("_celsius")) return "°C";
  if (ends("_watts")) return "W";
  if (ends("_bytes")) return "bytes";
  if (ends("_hertz")) return "Hz";
  if (ends("_ratio")) return "ratio";
  if (ends("_total")) return "count";
  if (ends("_active")) return "0/1";
  return "";
}

class Reader {
 public:
  explicit Reader(TelemetryRecord& record) : record_(record) {}

  void Line(std::string_view text, int64_t number, bool last) {
    if (text.empty()) return;
    Json doc = Json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
      if (!last) Problem(number, "not valid JSON");
      return;
    }
    const std::string kind = StringField(doc, "kind");
    if (kind == "sample") {
      Sample(doc, number);
    } else if (kind == "alert") {
      alerts_.push_back(std::move(doc));
    } else {
      Problem(number, kind.empty() ? "no 'kind'" : fmt::format("unknown kind '{}'", kind));
    }
  }

  void Finish() {
    for (Json& a : alerts_) {
      const double time =
          a.contains("time") && a["time"].is_number() ? a["time"].get<double>() : record_.start;
      a["t"] = record_.samples > 0 ? time - record_.start : 0.0;
      record_.alerts.push_back(std::move(a));
    }
    if (!stage_.empty()) {
      record_.stages.push_back(
          {{"name", stage_}, {"start", stage_start_}, {"end", record_.end - record_.start}});
    }
  }

 private:
  void Problem(int64_t number, std::string_view problem) {
    ++record_.bad_lines;
    if (record_.problems.size() < kMaxProblems) {
      record_.problems.push_back(fmt::format("line {}: {}", number, problem));
    }
  }

  void Sample(const Json& doc, int64_t number) {
    if (!doc.contains("time") || !doc["time"].is_number()) {
      Problem(number, "a sample without 'time'");
      return;
    }
    const double time = doc["time"].get<double>();
    if (record_.samples == 0) record_.start = record_.end = time;
    record_.end = std::max(record_.end, time);
    ++record_.samples;
    const double t = time - record_.start;
    const std::string stage = StringField(doc, "stage");
    if (stage != stage_) {
      if (!stage_.empty()) {
        record_.stages.push_back({{"name", stage_}, {"start", stage_start_}, {"end", t}});
      }
      stage_ = stage;
      stage_start_ = t;
    }
    if (doc.contains("devices") && doc["devices"].is_array()) {
      for (const Json& d : doc["devices"]) {
        if (!d.is_object()) continue;
        std::map<std::string, std::string> device;
        if (d.contains("device") && d["device"].is_number_integer()) {
          device["device"] = std::to_string(d["device"].get<int64_t>());
        }
        for (const char* key : {"uuid", "model", "vendor"}) {
          const std::string v = StringField(d, key);
          if (!v.empty()) device[key] = v;
        }
        Readings(d, device, t);
      }
    }
    if (doc.contains("host") && doc["host"].is_object()) Readings(doc["host"], {}, t);
  }

  void Readings(const Json& owner, const std::map<std::string, std::string>& base, double t) {
    if (!owner.contains("metrics") || !owner["metrics"].is_array()) return;
    for (const Json& m : owner["metrics"]) {
      if (!m.is_object() || !m.contains("value") || !m["value"].is_number()) continue;
      const std::string name = StringField(m, "name");
      if (name.empty()) continue;
      std::map<std::string, std::string> labels = base;
      if (m.contains("labels") && m["labels"].is_object()) {
        for (auto it = m["labels"].begin(); it != m["labels"].end(); ++it) {
          if (it.value().is_string()) labels[it.key()] = it.value().get<std::string>();
        }
      }
      const std::string key = Key(name, labels);
      auto found = index_.find(key);
      if (found == index_.end()) {
        if (record_.series.size() >= kMaxTelemetrySeries) continue;
        found = index_.emplace(key, record_.series.size()).first;
        record_.series.push_back({name, std::move(labels), {}, {}});
      }
      TelemetrySeries& s = record_.series[found->second];
      s.t.push_back(t);
      s.v.push_back(m["value"].get<double>());
    }
  }

  TelemetryRecord& record_;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<Json> alerts_;
  std::string stage_;
  double stage_start_ = 0.0;
};

}  // namespace

std::optional<double> TelemetrySeries::Max() const {
  if (v.empty()) return std::nullopt;
  return *std::max_element(v.begin(), v.end());
}

double TelemetrySeries::Increase() const {
  double total = 0.0;
  for (std::size_t i = 1; i < v.size(); ++i) total += v[i] >= v[i - 1] ? v[i] - v[i - 1] : v[i];
  return total;
}

std::vector<const TelemetrySeries*> TelemetryRecord::Find(
    std::string_view metric, const std::map<std::string, std::string>& labels) const {
  std::vector<const TelemetrySeries*> out;
  for (const TelemetrySeries& s : series) {
    if (s.metric != metric) continue;
    bool match = true;
    for (const auto& [k, v] : labels) {
      auto it = s.labels.find(k);
      match = match && it != s.labels.end() && it->second == v;
    }
    if (match) out.push_back(&s);
  }
  return out;
}

Result<TelemetryRecord> ReadTelemetry(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) return Status::Invalid(path, std::strerror(errno));
  TelemetryRecord record;
  Reader reader(record);
  std::string pending;
  std::vector<char> buffer(std::size_t{1} << 20);
  int64_t number = 0;
  bool skipping = false;  // inside a line longer than the limit
  while (true) {
    const std::size_t got = std::fread(buffer.data(), 1, buffer.size(), file.get());
    if (got == 0) {
      if (std::ferror(file.get())) return Status::Invalid(path, "read error");
      break;
    }
    std::string_view chunk(buffer.data(), got);
    while (!chunk.empty()) {
      const std::size_t nl = chunk.find('\n');
      const std::string_view piece = chunk.substr(0, nl);
      if (!skipping) pending.append(piece);
      if (pending.size() > kMaxTelemetryLine) {
        pending.clear();
        skipping = true;
      }
      if (nl == std::string_view::npos) break;
      ++number;
      if (skipping) {
        ++record.bad_lines;
        if (record.problems.size() < 5) {
          record.problems.push_back(
              fmt::format("line {}: longer than {} bytes", number, kMaxTelemetryLine));
        }
        skipping = false;
      } else {
        reader.Line(pending, number, false);
      }
      pending.clear();
      chunk.remove_prefix(nl + 1);
    }
  }
  if (!pending.empty() && !skipping) reader.Line(pending, number + 1, true);
  reader.Finish();
  if (record.samples == 0 && record.bad_lines > 0) {
    return Status::Invalid(path,
                           fmt::format("no sample can be read ({})", record.problems.front()));
  }
  return record;
}

namespace {

double BucketWidth(double span, std::size_t max_buckets) {
  static constexpr std::array<double, 16> kWidths = {1,   2,   5,   10,   15,   30,   60,    120,
                                                     300, 600, 900, 1800, 3600, 7200, 21600, 86400};
  const double need = span / static_cast<double>(std::max<std::size_t>(max_buckets, 1));
  for (double w : kWidths) {
    if (w >= need) return w;
  }
  return std::ceil(need / 86400.0) * 86400.0;
}

}  // namespace

Json TelemetryJson(const TelemetryRecord& record, std::size_t max_buckets) {
  double span = record.samples > 0 ? record.end - record.start : 0.0;
  if (!std::isfinite(span) || span < 0) span = 0.0;
  const double width = BucketWidth(span, max_buckets);
  const auto buckets = static_cast<std::size_t>(std::floor(span / width)) + 1;
  Json series = Json::array();
  for (const TelemetrySeries& s : record.series) {
    std::vector<double> lo(buckets, std::numeric_limits<double>::infinity());
    std::vector<double> hi(buckets, -std::numeric_limits<double>::infinity());
    std::vector<double> sum(buckets, 0.0);
    std::vector<int64_t> count(buckets, 0);
    for (std::size_t i = 0; i < s.t.size(); ++i) {
      if (!std::isfinite(s.v[i])) continue;
      const double q = s.t[i] / width;  // NaN and past-the-end land in the last bucket
      const std::size_t b = q >= 0 && q < static_cast<double>(buckets) ? static_cast<std::size_t>(q)
                                                                       : (q < 0 ? 0 : buckets - 1);
      lo[b] = std::min(lo[b], s.v[i]);
      hi[b] = std::max(hi[b], s.v[i]);
      sum[b] += s.v[i];
      ++count[b];
    }
    Json t = Json::array(), mn = Json::array(), mx = Json::array(), mean = Json::array();
    for (std::size_t b = 0; b < buckets; ++b) {
      t.push_back(static_cast<double>(b) * width);
      if (count[b] == 0) {
        mn.push_back(nullptr);
        mx.push_back(nullptr);
        mean.push_back(nullptr);
      } else {
        mn.push_back(lo[b]);
        mx.push_back(hi[b]);
        mean.push_back(sum[b] / static_cast<double>(count[b]));
      }
    }
    Json labels = Json::object();
    for (const auto& [k, v] : s.labels) labels[k] = v;
    series.push_back({{"metric", s.metric},
                      {"labels", std::move(labels)},
                      {"unit", UnitOf(s.metric)},
                      {"t", std::move(t)},
                      {"min", std::move(mn)},
                      {"max", std::move(mx)},
                      {"mean", std::move(mean)}});
  }
  Json out = {{"start", record.start},  {"end", record.end},           {"samples", record.samples},
              {"bucket_s", width},      {"series", std::move(series)}, {"alerts", record.alerts},
              {"stages", record.stages}};
  if (record.bad_lines > 0) {
    out["bad_lines"] = record.bad_lines;
    out["problems"] = record.problems;
  }
  return out;
}

}  // namespace parity::accept
