// SPDX-License-Identifier: Apache-2.0
#include "bench/result.h"

#include <fmt/format.h>

#include <cmath>

#include "bench/stats.h"
#include "core/mapped_file.h"

namespace parity::bench {
namespace {

constexpr std::size_t kMaxDocumentBytes = std::size_t{1} << 30;
// The fields of BenchResult::extra that a document's results may carry.
constexpr const char* kExtraFields[] = {
    "algbw",        "busbw",   "time_us",         "wrong",          "calls_per_sample",
    "tokens_per_s", "step_ms", "data_wait_share", "peak_rss_bytes", "peak_device_memory_bytes",
    "torch_threads", "losses"};

std::string SizeText(const Json& params) {
  if (!params.contains("size")) return "";
  const Json& size = params["size"];
  return size.is_string() ? size.get<std::string>() : size.dump();
}

// Reads a list of positive finite numbers at obj[key] (absent = empty).
Status ReadPositiveList(const Json& obj, std::string_view key, std::string_view where,
                        std::vector<double>* out) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) {
    return Status::Invalid("", fmt::format("{}: '{}' is not a list", where, key));
  }
  out->reserve(it->size());
  for (const Json& v : *it) {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0.0) {
      return Status::Invalid(
          "", fmt::format("{}: '{}' holds {}, not a positive number", where, key, v.dump()));
    }
    out->push_back(v.get<double>());
  }
  return Status::Ok();
}

Result<BenchResult> ParseResult(const Json& j, std::string_view where) {
  if (!j.is_object()) return Status::Invalid("", fmt::format("{}: not an object", where));
  BenchResult r;
  auto string_field = [&](std::string_view key, bool required, std::string* out) -> Status {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
      if (required) return Status::Invalid("", fmt::format("{}: no '{}'", where, key));
      return Status::Ok();
    }
    if (!it->is_string()) {
      return Status::Invalid("", fmt::format("{}: '{}' is not a string", where, key));
    }
    *out = it->get<std::string>();
    return Status::Ok();
  };
  PARITY_RETURN_IF_ERROR(string_field("benchmark", true, &r.benchmark));
  if (r.benchmark.empty()) return Status::Invalid("", fmt::format("{}: empty 'benchmark'", where));
  const std::string named = fmt::format("{} ({})", where, r.benchmark);
  PARITY_RETURN_IF_ERROR(string_field("dtype", false, &r.dtype));
  PARITY_RETURN_IF_ERROR(string_field("unit", true, &r.unit));
  if (const auto it = j.find("params"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) {
      return Status::Invalid("", fmt::format("{}: 'params' is not an object", named));
    }
    r.params = *it;
  }
  std::string better = "higher";
  PARITY_RETURN_IF_ERROR(string_field("better", false, &better));
  if (better != "higher" && better != "lower") {
    return Status::Invalid(
        "", fmt::format("{}: 'better' is '{}', not 'higher' or 'lower'", named, better));
  }
  r.higher_is_better = better == "higher";
  std::string status = "ok";
  PARITY_RETURN_IF_ERROR(string_field("status", false, &status));
  if (status == "ok") {
    r.outcome = Outcome::kOk;
  } else if (status == "invalid") {
    r.outcome = Outcome::kInvalid;
  } else if (status == "skipped") {
    r.outcome = Outcome::kSkipped;
  } else {
    return Status::Invalid(
        "", fmt::format("{}: 'status' is '{}', not ok, invalid or skipped", named, status));
  }
  // `valid` is docs/DESIGN.md's field; a document that says valid: false is invalid whatever else.
  if (const auto it = j.find("valid"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) {
      return Status::Invalid("", fmt::format("{}: 'valid' is not true, false or null", named));
    }
    if (!it->get<bool>() && r.outcome == Outcome::kOk) r.outcome = Outcome::kInvalid;
  }
  PARITY_RETURN_IF_ERROR(string_field("reason", false, &r.reason));
  PARITY_RETURN_IF_ERROR(string_field("implementation", false, &r.implementation));
  PARITY_RETURN_IF_ERROR(ReadPositiveList(j, "samples", named, &r.samples));
  PARITY_RETURN_IF_ERROR(ReadPositiveList(j, "runs", named, &r.run_medians));
  if (r.outcome == Outcome::kOk && r.samples.empty()) {
    return Status::Invalid("", fmt::format("{}: no samples", named));
  }
  if (const auto it = j.find("best"); it != j.end() && it->is_number()) r.best = it->get<double>();
  if (const auto it = j.find("validation"); it != j.end() && it->is_object()) r.validation = *it;
  for (const char* key : kExtraFields) {
    if (const auto it = j.find(key); it != j.end()) r.extra[key] = *it;
  }
  return r;
}

}  // namespace

std::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kInvalid:
      return "invalid";
    case Outcome::kSkipped:
      return "skipped";
  }
  return "?";
}

std::string BenchResult::Key() const {
  return fmt::format("{}|{}|{}", benchmark, dtype, SizeText(params));
}

std::string BenchResult::Label() const {
  std::string label = benchmark;
  if (!dtype.empty()) label += " " + dtype;
  if (const std::string size = SizeText(params); !size.empty()) label += " size=" + size;
  return label;
}

Json ToJson(const BenchResult& r) {
  Json j = Json::object();
  j["benchmark"] = r.benchmark;
  j["dtype"] = r.dtype.empty() ? Json(nullptr) : Json(r.dtype);
  j["params"] = r.params;
  j["unit"] = r.unit;
  j["better"] = r.higher_is_better ? "higher" : "lower";
  if (!r.samples.empty()) {
    const Summary s = Summarize(r.samples);
    j["median"] = s.median;
    j["min"] = s.min;
    j["max"] = s.max;
    j["cv"] = s.cv;
  } else {
    j["median"] = j["min"] = j["max"] = j["cv"] = nullptr;
  }
  j["best"] = r.best ? Json(*r.best) : Json(nullptr);
  j["samples"] = r.samples;
  if (!r.run_medians.empty()) j["runs"] = r.run_medians;
  j["valid"] = r.outcome == Outcome::kSkipped ? Json(nullptr) : Json(r.outcome == Outcome::kOk);
  j["status"] = OutcomeName(r.outcome);
  if (!r.reason.empty()) j["reason"] = r.reason;
  j["validation"] = r.validation;
  if (!r.implementation.empty()) j["implementation"] = r.implementation;
  for (const auto& [key, value] : r.extra.items()) {
    if (!j.contains(key)) j[key] = value;
  }
  if (r.peak && r.best) {
    j["peak"] = *r.peak;
    j["efficiency"] = *r.best / *r.peak;
    j["peak_source"] = r.peak_source;
  } else {
    j["peak"] = nullptr;
    j["efficiency"] = nullptr;
  }
  return j;
}

Result<BenchDocument> ParseBenchDocument(std::string_view text, std::string_view path) {
  const std::string file(path);
  Json j = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::Invalid(file, "not valid JSON");
  if (!j.is_object()) return Status::Invalid(file, "not a JSON object");
  if (j.value("format", Json()) != "parity-bench") {
    return Status::Invalid(file, "not a parity-bench document (its 'format' is not parity-bench)");
  }
  if (j.value("version", Json()) != 1) {
    return Status::Invalid(file, fmt::format("parity-bench version {} (this parity reads 1)",
                                             j.value("version", Json()).dump()));
  }
  BenchDocument doc;
  if (const auto it = j.find("platform"); it != j.end() && it->is_object()) doc.platform = *it;
  if (const auto it = j.find("backend"); it != j.end() && it->is_string()) doc.backend = *it;
  if (const auto it = j.find("device"); it != j.end() && it->is_string()) doc.device = *it;
  if (const auto it = j.find("repeat"); it != j.end()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > 1000000) {
      return Status::Invalid(file, "'repeat' is not a positive integer");
    }
    doc.repeat = it->get<int>();
  }
  const auto results = j.find("results");
  if (results == j.end() || !results->is_array()) {
    return Status::Invalid(file, "no 'results' list");
  }
  for (std::size_t i = 0; i < results->size(); ++i) {
    Result<BenchResult> r = ParseResult((*results)[i], fmt::format("result {}", i + 1));
    if (!r.ok()) return Status::Invalid(file, r.status().message());
    doc.results.push_back(std::move(r).value());
  }
  return doc;
}

Result<BenchDocument> LoadBenchDocument(const std::string& path) {
  PARITY_ASSIGN_OR_RETURN(auto file, MappedFile::Open(path));
  if (file->size() > kMaxDocumentBytes) {
    return Status::Invalid(path, fmt::format("{} bytes: larger than a benchmark result can be "
                                             "(limit 1 GiB)",
                                             file->size()));
  }
  const auto bytes = file->bytes();
  return ParseBenchDocument(
      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path);
}

}  // namespace parity::bench
