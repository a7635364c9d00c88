// SPDX-License-Identifier: Apache-2.0
// One line of records.jsonl: an op call, its tensors (data files, statistics, or entries of
// tensors the dump does not hold), attrs and the user's source line.
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

  // `shape`: required, or (not-stored tensors) optional, absent meaning unknown.
  Status Shape(const Json& entry, const std::string& what, bool required,
               DumpTensorRef* ref) const {
    const auto shape = entry.find("shape");
    if (!required && (shape == entry.end() || shape->is_null())) {
      ref->shape_known = false;
      return Status::Ok();
    }
    if (shape == entry.end() || !shape->is_array()) {
      return Error(fmt::format("{}: 'shape' is missing or not an array", what));
    }
    for (const Json& dim : *shape) {
      if (!dim.is_number_integer() || dim.get<int64_t>() < 0) {
        return Error(
            fmt::format("{}: 'shape' holds something other than non-negative integers", what));
      }
      ref->shape.push_back(dim.get<int64_t>());
    }
    return Status::Ok();
  }

  // A tensor the dump does not hold: `not stored` (a reason), `dtype` (parity's name or
  // torch's), optional `shape` and `layout`, and neither `file` nor `stats`.
  Status NotStored(const Json& entry, const Json& reason, const std::string& what,
                   DumpTensorRef* ref) const {
    if (!reason.is_string()) return Error(fmt::format("{}: 'not stored' is not a string", what));
    ref->not_stored = reason.get<std::string>();
    if (ref->not_stored.empty()) return Error(fmt::format("{}: 'not stored' is empty", what));
    for (const char* key : {"file", "stats"}) {
      if (entry.contains(key)) {
        return Error(fmt::format("{} has both 'not stored' and '{}'", what, key));
      }
    }
    ref->not_comparable = "not stored: " + ref->not_stored;
    return Shape(entry, what, /*required=*/false, ref);
  }

  Result<DumpTensorRef> Tensor(const Json& entry, const std::string& what) const {
    if (!entry.is_object()) return Error(fmt::format("{} is not an object", what));
    DumpTensorRef ref;
    const auto dtype_it = entry.find("dtype");
    if (dtype_it == entry.end() || !dtype_it->is_string()) {
      return Error(fmt::format("{}: 'dtype' is missing or not a string", what));
    }
    const std::string dtype = dtype_it->get<std::string>();
    if (const std::optional<DType> parsed = DTypeFromName(dtype)) {
      ref.dtype = *parsed;
    } else {
      ref.dtype_name = dtype;
    }
    PARITY_ASSIGN_OR_RETURN(ref.arg, OptionalString(entry, "arg", what + ": "));
    if (const auto index = entry.find("index"); index != entry.end() && !index->is_null()) {
      if (!index->is_number_integer() || index->get<int64_t>() < 0) {
        return Error(fmt::format("{}: 'index' is not a non-negative integer", what));
      }
      ref.index = index->get<int64_t>();
    }
    PARITY_ASSIGN_OR_RETURN(ref.layout, OptionalString(entry, "layout", what + ": "));
    if (const auto reason = entry.find("not stored"); reason != entry.end() && !reason->is_null()) {
      PARITY_RETURN_IF_ERROR(NotStored(entry, *reason, what, &ref));
      return ref;
    }
    // A stored tensor: parity's dtypes, and complex ones (held, not compared).
    const bool complex = dtype == "complex64" || dtype == "complex128";
    if (!ref.dtype_name.empty() && !complex) {
      return Error(fmt::format("{}: unknown dtype '{}'", what, dtype));
    }
    PARITY_RETURN_IF_ERROR(Shape(entry, what, /*required=*/true, &ref));
    PARITY_RETURN_IF_ERROR(DataFile(entry, what, &ref));
    const auto stats = entry.find("stats");
    if (stats != entry.end()) {
      if (!stats->is_object()) return Error(fmt::format("{}: 'stats' is not an object", what));
      ref.stats = Stats(*stats);
    }
    if (ref.file.empty() && !ref.stats) {
      return Error(fmt::format("{} has neither 'file', 'stats' nor 'not stored'", what));
    }
    if (complex) {
      ref.not_comparable = fmt::format(
          "{}: parity compares real dtypes only ({})", dtype,
          ref.file.empty() ? "its statistics are of the real and imaginary parts together"
                           : "the .npy holds it for numpy");
    }
    return ref;
  }

  // `source`: {"file", "line", "function", "code"}. Returns the problem of a malformed one
  // ("" when it is well formed or absent); `out` is set only when it is well formed.
  std::string Source(const Json& obj, std::optional<RecordSource>* out) const {
    const auto it = obj.find("source");
    if (it == obj.end() || it->is_null()) return "";
    if (!it->is_object()) return "'source' is not an object";
    RecordSource s;
    const auto file = it->find("file");
    if (file == it->end() || !file->is_string() || file->get<std::string>().empty()) {
      return "'source.file' is missing or not a non-empty string";
    }
    s.file = file->get<std::string>();
    const auto line = it->find("line");
    if (line == it->end() || !line->is_number_integer() || line->get<int64_t>() < 0) {
      return "'source.line' is missing or not a non-negative integer";
    }
    s.line = line->get<int64_t>();
    for (const auto& [key, field] :
         {std::pair{"function", &s.function}, std::pair{"code", &s.code}}) {
      const auto value = it->find(key);
      if (value == it->end() || value->is_null()) continue;
      if (!value->is_string()) return fmt::format("'source.{}' is not a string", key);
      *field = value->get<std::string>();
    }
    *out = std::move(s);
    return "";
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

  Result<DumpRecord> Record(const Json& obj, int line, std::string* source_problem) const {
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
    if (std::string problem = Source(obj, &r.source); !problem.empty() && source_problem) {
      *source_problem = std::move(problem);
    }
    return r;
  }

 private:
  const DumpPart& part_;
  const std::string& where_;
};

}  // namespace

Result<DumpRecord> ReadRecord(const Json& obj, int line, const DumpPart& part,
                              const std::string& where, std::string* source_problem) {
  return RecordParser(part, where).Record(obj, line, source_problem);
}

}  // namespace parity::dump_internal
