// SPDX-License-Identifier: Apache-2.0
// One line of records.jsonl: an op call, its tensors (data files or statistics) and attrs.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "io/dump_parse.h"

namespace parity::dump_internal {
namespace {

namespace fs = std::filesystem;

// Parse errors carry the location prefix ("DIR/records.jsonl:12: ...").
class RecordParser {
 public:
  RecordParser(const DumpPart& part, const std::string& where) : part_(part), where_(where) {}

  Status Error(std::string_view problem) const { return Status::Invalid(where_, problem); }

  Result<int64_t> Int(const Json& obj, const char* key, std::optional<int64_t> fallback) const {
    const auto it = obj.find(key);
    if (it == obj.end()) {
      if (fallback) return *fallback;
      return Error(fmt::format("'{}' is missing", key));
    }
    if (!it->is_number_integer()) return Error(fmt::format("'{}' is not an integer", key));
    return it->get<int64_t>();
  }

  Result<std::string> String(const Json& obj, const char* key) const {
    const auto it = obj.find(key);
    if (it == obj.end()) return Error(fmt::format("'{}' is missing", key));
    if (!it->is_string()) return Error(fmt::format("'{}' is not a string", key));
    return it->get<std::string>();
  }

  // An optional string: empty when absent or null.
  Result<std::string> OptionalString(const Json& obj, const char* key,
                                     const std::string& what) const {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return std::string();
    if (!it->is_string()) return Error(fmt::format("{}'{}' is not a string", what, key));
    return it->get<std::string>();
  }

  RecordedStats Stats(const Json& stats) const {
    RecordedStats s;
    auto number = [&](const char* key, std::optional<double>* out) {
      const auto it = stats.find(key);
      if (it != stats.end() && it->is_number()) *out = it->get<double>();
    };
    auto count = [&](const char* key, std::optional<int64_t>* out) {
      const auto it = stats.find(key);
      if (it != stats.end() && it->is_number_integer()) *out = it->get<int64_t>();
    };
    number("min", &s.min);
    number("max", &s.max);
    number("mean", &s.mean);
    number("l2", &s.l2);
    count("nan", &s.nan);
    count("inf", &s.inf);
    count("zero", &s.zero);
    if (const auto hash = stats.find("hash"); hash != stats.end() && hash->is_string()) {
      s.hash = hash->get<std::string>();
    }
    return s;
  }

  Status DataFile(const Json& entry, const std::string& what, DumpTensorRef* ref) const {
    const auto file = entry.find("file");
    if (file == entry.end()) return Status::Ok();
    if (!file->is_string()) return Error(fmt::format("{}: 'file' is not a string", what));
    ref->file = file->get<std::string>();
    const fs::path rel(ref->file);
    if (rel.empty() || rel.is_absolute() ||
        std::any_of(rel.begin(), rel.end(), [](const fs::path& part) { return part == ".."; })) {
      return Error(
          fmt::format("{}: file '{}' is not a path inside the dump directory", what, ref->file));
    }
    std::error_code ec;
    if (!fs::is_regular_file(fs::path(part_.dir) / rel, ec)) {
      return Error(fmt::format("{}: tensor file '{}' does not exist", what, ref->file));
    }
    const auto key = entry.find("key");
    if (key != entry.end()) {
      if (!key->is_string()) return Error(fmt::format("{}: 'key' is not a string", what));
      ref->key = key->get<std::string>();
    }
    return Status::Ok();
  }

  Result<DumpTensorRef> Tensor(const Json& entry, const std::string& what) const {
    if (!entry.is_object()) return Error(fmt::format("{} is not an object", what));
    DumpTensorRef ref;
    PARITY_ASSIGN_OR_RETURN(const std::string dtype, String(entry, "dtype"));
    const std::optional<DType> parsed = DTypeFromName(dtype);
    if (!parsed) return Error(fmt::format("{}: unknown dtype '{}'", what, dtype));
    ref.dtype = *parsed;
    const auto shape = entry.find("shape");
    if (shape == entry.end() || !shape->is_array()) {
      return Error(fmt::format("{}: 'shape' is missing or not an array", what));
    }
    for (const Json& dim : *shape) {
      if (!dim.is_number_integer() || dim.get<int64_t>() < 0) {
        return Error(
            fmt::format("{}: 'shape' holds something other than non-negative integers", what));
      }
      ref.shape.push_back(dim.get<int64_t>());
    }
    PARITY_ASSIGN_OR_RETURN(ref.arg, OptionalString(entry, "arg", what + ": "));
    if (const auto index = entry.find("index"); index != entry.end() && !index->is_null()) {
      if (!index->is_number_integer() || index->get<int64_t>() < 0) {
        return Error(fmt::format("{}: 'index' is not a non-negative integer", what));
      }
      ref.index = index->get<int64_t>();
    }
    PARITY_RETURN_IF_ERROR(DataFile(entry, what, &ref));
    const auto stats = entry.find("stats");
    if (stats != entry.end()) {
      if (!stats->is_object()) return Error(fmt::format("{}: 'stats' is not an object", what));
      ref.stats = Stats(*stats);
    }
    if (ref.file.empty() && !ref.stats) {
      return Error(fmt::format("{} has neither 'file' nor 'stats'", what));
    }
    return ref;
  }

  Result<std::vector<DumpTensorRef>> TensorList(const Json& obj, const char* key) const {
    std::vector<DumpTensorRef> out;
    const auto it = obj.find(key);
    if (it == obj.end()) return Error(fmt::format("'{}' is missing", key));
    if (!it->is_array()) return Error(fmt::format("'{}' is not an array", key));
    for (std::size_t i = 0; i < it->size(); ++i) {
      PARITY_ASSIGN_OR_RETURN(DumpTensorRef ref, Tensor((*it)[i], fmt::format("{}[{}]", key, i)));
      out.push_back(std::move(ref));
    }
    return out;
  }

  Status Pass(const std::string& pass) const {
    if (pass == "forward" || pass == "backward") return Status::Ok();
    if (pass == "optimizer") {
      if (part_.version >= 2) return Status::Ok();
      return Error(fmt::format(
          "'pass' is 'optimizer', which needs format version 2 (the manifest says version {})",
          part_.version));
    }
    return Error(fmt::format(
        "'pass' is '{}', expected {}", pass,
        part_.version >= 2 ? "'forward', 'backward' or 'optimizer'" : "'forward' or 'backward'"));
  }

  Result<DumpRecord> Record(const Json& obj, int line) const {
    if (!obj.is_object()) return Error("the line is not a JSON object");
    DumpRecord r;
    r.line = line;
    PARITY_ASSIGN_OR_RETURN(r.seq, Int(obj, "seq", std::nullopt));
    // A record of rank<N>/ without a rank is rank N's.
    PARITY_ASSIGN_OR_RETURN(r.rank, Int(obj, "rank", part_.dir_rank.value_or(0)));
    if (part_.dir_rank && r.rank != *part_.dir_rank) {
      return Error(
          fmt::format("'rank' is {}, but the record lies in rank{}/", r.rank, *part_.dir_rank));
    }
    PARITY_ASSIGN_OR_RETURN(r.step, Int(obj, "step", 0));
    if (r.step < 0) return Error(fmt::format("'step' is {}, not a non-negative integer", r.step));
    PARITY_ASSIGN_OR_RETURN(r.call, Int(obj, "call", std::nullopt));
    PARITY_ASSIGN_OR_RETURN(r.name, String(obj, "name"));
    PARITY_ASSIGN_OR_RETURN(r.op, String(obj, "op"));
    PARITY_ASSIGN_OR_RETURN(r.overload, OptionalString(obj, "overload", ""));
    PARITY_ASSIGN_OR_RETURN(r.module, OptionalString(obj, "module", ""));
    PARITY_ASSIGN_OR_RETURN(r.pass, String(obj, "pass"));
    PARITY_RETURN_IF_ERROR(Pass(r.pass));
    if (const auto attrs = obj.find("attrs"); attrs != obj.end()) {
      if (!attrs->is_object()) return Error("'attrs' is not an object");
      r.attrs = *attrs;
    }
    PARITY_ASSIGN_OR_RETURN(r.inputs, TensorList(obj, "inputs"));
    PARITY_ASSIGN_OR_RETURN(r.outputs, TensorList(obj, "outputs"));
    if (const auto params = obj.find("params"); params != obj.end()) {
      if (!params->is_object()) return Error("'params' is not an object");
      for (auto it = params->begin(); it != params->end(); ++it) {
        PARITY_ASSIGN_OR_RETURN(DumpTensorRef ref, Tensor(it.value(), "params." + it.key()));
        r.params.emplace_back(it.key(), std::move(ref));
      }
    }
    if (const auto time = obj.find("time_us"); time != obj.end()) {
      if (!time->is_number()) return Error("'time_us' is not a number");
      r.time_us = time->get<double>();
    }
    return r;
  }

 private:
  const DumpPart& part_;
  const std::string& where_;
};

}  // namespace

Result<DumpRecord> ReadRecord(const Json& obj, int line, const DumpPart& part,
                              const std::string& where) {
  return RecordParser(part, where).Record(obj, line);
}

}  // namespace parity::dump_internal
