// SPDX-License-Identifier: Apache-2.0
#include "io/dump.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <string_view>

#include "core/mapped_file.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

// Parse errors carry the location prefix ("DIR/records.jsonl:12: ...").
class RecordParser {
 public:
  RecordParser(std::string dir, std::string where)
      : dir_(std::move(dir)), where_(std::move(where)) {}

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
    const auto file = entry.find("file");
    if (file != entry.end()) {
      if (!file->is_string()) return Error(fmt::format("{}: 'file' is not a string", what));
      ref.file = file->get<std::string>();
      const fs::path rel(ref.file);
      if (rel.empty() || rel.is_absolute() ||
          std::any_of(rel.begin(), rel.end(), [](const fs::path& part) { return part == ".."; })) {
        return Error(
            fmt::format("{}: file '{}' is not a path inside the dump directory", what, ref.file));
      }
      std::error_code ec;
      if (!fs::is_regular_file(fs::path(dir_) / rel, ec)) {
        return Error(fmt::format("{}: tensor file '{}' does not exist", what, ref.file));
      }
      const auto key = entry.find("key");
      if (key != entry.end()) {
        if (!key->is_string()) return Error(fmt::format("{}: 'key' is not a string", what));
        ref.key = key->get<std::string>();
      }
    }
    const auto stats = entry.find("stats");
    if (stats != entry.end()) {
      if (!stats->is_object()) return Error(fmt::format("{}: 'stats' is not an object", what));
      RecordedStats s;
      auto number = [&](const char* key, std::optional<double>* out) {
        const auto it = stats->find(key);
        if (it != stats->end() && it->is_number()) *out = it->get<double>();
      };
      auto count = [&](const char* key, std::optional<int64_t>* out) {
        const auto it = stats->find(key);
        if (it != stats->end() && it->is_number_integer()) *out = it->get<int64_t>();
      };
      number("min", &s.min);
      number("max", &s.max);
      number("mean", &s.mean);
      number("l2", &s.l2);
      count("nan", &s.nan);
      count("inf", &s.inf);
      ref.stats = s;
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

  Result<DumpRecord> Record(const Json& obj, int line) const {
    if (!obj.is_object()) return Error("the line is not a JSON object");
    DumpRecord r;
    r.line = line;
    PARITY_ASSIGN_OR_RETURN(r.seq, Int(obj, "seq", std::nullopt));
    PARITY_ASSIGN_OR_RETURN(r.rank, Int(obj, "rank", 0));
    PARITY_ASSIGN_OR_RETURN(r.call, Int(obj, "call", std::nullopt));
    PARITY_ASSIGN_OR_RETURN(r.name, String(obj, "name"));
    PARITY_ASSIGN_OR_RETURN(r.op, String(obj, "op"));
    PARITY_ASSIGN_OR_RETURN(r.pass, String(obj, "pass"));
    if (r.pass != "forward" && r.pass != "backward") {
      return Error(fmt::format("'pass' is '{}', expected 'forward' or 'backward'", r.pass));
    }
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
  std::string dir_;
  std::string where_;
};

}  // namespace

bool DumpDir::IsDump(const std::string& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::is_regular_file(fs::path(dir) / "manifest.json", ec);
}

Result<DumpDir> DumpDir::Open(const std::string& dir) {
  const std::string manifest_path = (fs::path(dir) / "manifest.json").string();
  const std::string records_path = (fs::path(dir) / "records.jsonl").string();
  PARITY_ASSIGN_OR_RETURN(auto manifest, MappedFile::Open(manifest_path));
  PARITY_ASSIGN_OR_RETURN(auto records, MappedFile::Open(records_path));
  auto text = [](const MappedFile& f) {
    return std::string_view(reinterpret_cast<const char*>(f.bytes().data()), f.size());
  };
  return Parse(dir, text(*manifest), text(*records));
}

Result<DumpDir> DumpDir::Parse(const std::string& dir, std::string_view manifest,
                               std::string_view records) {
  DumpDir dump;
  dump.path_ = dir;
  const std::string manifest_path = (fs::path(dir) / "manifest.json").string();
  dump.manifest_ = Json::parse(manifest, nullptr, false);
  if (dump.manifest_.is_discarded() || !dump.manifest_.is_object()) {
    return Status::Invalid(manifest_path, "not a JSON object");
  }
  const auto format = dump.manifest_.find("format");
  if (format == dump.manifest_.end() || *format != "parity-dump") {
    return Status::Invalid(manifest_path, "'format' is not \"parity-dump\"");
  }
  const auto version = dump.manifest_.find("version");
  if (version == dump.manifest_.end() || *version != 1) {
    return Status::Invalid(manifest_path, "'version' is not 1 (this parity reads version 1)");
  }
  const std::string records_path = (fs::path(dir) / "records.jsonl").string();
  const std::string_view text = records;
  std::size_t pos = 0;
  int line = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    const bool terminated = end != std::string_view::npos;
    const std::string_view content = text.substr(pos, (terminated ? end : text.size()) - pos);
    pos = terminated ? end + 1 : text.size();
    ++line;
    if (content.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string where = fmt::format("{}:{}", records_path, line);
    Json obj = Json::parse(content, nullptr, false);
    if (obj.is_discarded()) {
      if (!terminated) {
        dump.warnings_.push_back(fmt::format(
            "{}: the last line is cut off (the run stopped while writing it?); ignored", where));
        break;
      }
      return Status::Invalid(where, "not valid JSON");
    }
    PARITY_ASSIGN_OR_RETURN(DumpRecord record, RecordParser(dir, where).Record(obj, line));
    dump.records_.push_back(std::move(record));
  }
  return dump;
}

std::string DumpDir::Where(const DumpRecord& record) const {
  return fmt::format("{}:{}", (fs::path(path_) / "records.jsonl").string(), record.line);
}

Result<Tensor> DumpDir::Load(const DumpRecord& record, const DumpTensorRef& ref) const {
  const std::string where = Where(record);
  if (!ref.has_data()) return Status::Invalid(where, "tensor has statistics only, no data");
  const std::string path = (fs::path(path_) / ref.file).string();
  if (open_path_ != path || !open_file_) {
    auto opened = OpenTensorFile(path);
    if (!opened.ok()) return opened.status().WithContext(where);
    open_file_ = std::move(opened).value();
    open_path_ = path;
  }
  const TensorFile& file = *open_file_;
  std::size_t index = 0;
  if (!ref.key.empty()) {
    while (index < file.tensors().size() && file.tensors()[index].name != ref.key) ++index;
    if (index == file.tensors().size()) {
      return Status::Invalid(where, fmt::format("{} holds no tensor '{}'", path, ref.key));
    }
  } else if (file.tensors().size() != 1) {
    return Status::Invalid(where, fmt::format("{} holds {} tensors and the record names no 'key'",
                                              path, file.tensors().size()));
  }
  const TensorMeta& meta = file.tensors()[index];
  const bool reinterpret = meta.dtype != ref.dtype && ItemSize(meta.dtype) == ItemSize(ref.dtype) &&
                           (meta.dtype == DType::kUInt16 || meta.dtype == DType::kUInt8);
  if (meta.dtype != ref.dtype && !reinterpret) {
    return Status::Invalid(where, fmt::format("{} holds {}, the record says {}", path,
                                              Name(meta.dtype), Name(ref.dtype)));
  }
  if (meta.shape != ref.shape) {
    return Status::Invalid(where, fmt::format("{} has shape {}, the record says {}", path,
                                              ShapeString(meta.shape), ShapeString(ref.shape)));
  }
  auto tensor = file.Load(index);
  if (!tensor.ok()) return tensor.status().WithContext(where);
  return reinterpret ? tensor->WithDType(ref.dtype) : *tensor;
}

}  // namespace parity
