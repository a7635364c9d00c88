// SPDX-License-Identifier: Apache-2.0
// Dump directories: the layout (one directory, or rank<N>/ per rank), records.jsonl line by
// line, duplicate records, and tensors loaded on demand.
#include "io/dump.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <set>
#include <string_view>
#include <tuple>

#include "core/file_util.h"
#include "core/mapped_file.h"
#include "io/dump_parse.h"

namespace parity {

struct DumpDir::Seen {
  // (rank, step, name, pass, call) and (rank, seq) -> the first record's part and line.
  std::map<std::tuple<int64_t, int64_t, std::string, std::string, int64_t>,
           std::pair<std::size_t, int>>
      keys;
  std::map<std::pair<int64_t, int64_t>, std::pair<std::size_t, int>> seqs;
};

namespace {

namespace fs = std::filesystem;

std::string RecordsPath(const std::string& dir) {
  return (fs::path(dir) / "records.jsonl").string();
}

// N of a directory named rank<N> (N decimal), or nothing.
std::optional<int64_t> RankOfDirName(const std::string& name) {
  constexpr std::string_view kPrefix = "rank";
  if (!name.starts_with(kPrefix) || name.size() == kPrefix.size()) return std::nullopt;
  const char* begin = name.data() + kPrefix.size();
  const char* end = name.data() + name.size();
  if (!std::all_of(begin, end, [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  int64_t rank = 0;
  const auto [ptr, ec] = std::from_chars(begin, end, rank);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return rank;
}

// The rank<N>/ subdirectories of `dir`, by N.
std::map<int64_t, std::vector<std::string>> RankDirs(const std::string& dir) {
  std::map<int64_t, std::vector<std::string>> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (!it->is_directory(type_ec)) continue;
    const std::string name = it->path().filename().string();
    if (const auto rank = RankOfDirName(name)) out[*rank].push_back(it->path().string());
  }
  for (auto& [rank, dirs] : out) std::sort(dirs.begin(), dirs.end());
  return out;
}

std::string_view Text(const MappedFile& f) {
  return std::string_view(reinterpret_cast<const char*>(f.bytes().data()), f.size());
}

}  // namespace

bool DumpDir::IsDump(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return false;
  if (fs::is_regular_file(fs::path(dir) / "manifest.json", ec)) return true;
  for (const auto& [rank, dirs] : RankDirs(dir)) {
    for (const std::string& d : dirs) {
      if (fs::is_regular_file(fs::path(d) / "manifest.json", ec)) return true;
    }
  }
  return false;
}

Status DumpDir::Confined(const std::string& path) const {
  if (root_real_.empty()) return Status::Ok();
  const std::optional<std::string> real = RealPath(path);
  if (real && !IsUnder(*real, root_real_)) {
    return Status::Invalid(path, std::string(kOutsideTheDump));
  }
  return Status::Ok();
}

Result<DumpDir> DumpDir::Open(const std::string& dir) {
  DumpDir dump;
  dump.path_ = dir;
  dump.root_real_ = RealPath(dir).value_or("");
  Seen seen;
  auto add = [&](const std::string& part_dir, std::optional<int64_t> rank) -> Status {
    const std::string manifest_path = (fs::path(part_dir) / "manifest.json").string();
    PARITY_RETURN_IF_ERROR(dump.Confined(manifest_path));
    PARITY_RETURN_IF_ERROR(dump.Confined(RecordsPath(part_dir)));
    PARITY_ASSIGN_OR_RETURN(auto manifest, MappedFile::Open(manifest_path));
    PARITY_ASSIGN_OR_RETURN(auto records, MappedFile::Open(RecordsPath(part_dir)));
    return dump.AddPart(part_dir, rank, Text(*manifest), Text(*records), &seen);
  };
  std::error_code ec;
  const std::map<int64_t, std::vector<std::string>> ranks =
      fs::exists(fs::path(dir) / "manifest.json", ec)
          ? std::map<int64_t, std::vector<std::string>>()
          : RankDirs(dir);
  if (ranks.empty()) {
    PARITY_RETURN_IF_ERROR(add(dir, std::nullopt));
    return dump;
  }
  for (const auto& [rank, dirs] : ranks) {
    if (dirs.size() > 1) {
      return Status::Invalid(
          dir, fmt::format("{} and {} are both rank {}", fs::path(dirs[0]).filename().string(),
                           fs::path(dirs[1]).filename().string(), rank));
    }
    PARITY_RETURN_IF_ERROR(add(dirs[0], rank));
  }
  return dump;
}

Result<DumpDir> DumpDir::Parse(const std::string& dir, std::string_view manifest,
                               std::string_view records) {
  DumpDir dump;
  dump.path_ = dir;
  Seen seen;
  PARITY_RETURN_IF_ERROR(dump.AddPart(dir, std::nullopt, manifest, records, &seen));
  return dump;
}

Status DumpDir::AddPart(const std::string& dir, std::optional<int64_t> dir_rank,
                        std::string_view manifest, std::string_view records, Seen* seen) {
  const std::size_t index = parts_.size();
  DumpPart part;
  part.dir = dir;
  part.dir_rank = dir_rank;
  const std::string manifest_path = (fs::path(dir) / "manifest.json").string();
  part.manifest = Json::parse(manifest, nullptr, false);
  if (part.manifest.is_discarded() || !part.manifest.is_object()) {
    return Status::Invalid(manifest_path, "not a JSON object");
  }
  PARITY_RETURN_IF_ERROR(dump_internal::ReadManifest(manifest_path, &part));
  if (!parts_.empty()) {
    // The ranks of one run: what version(), level() and mode() say holds for each.
    const DumpPart& first = parts_.front();
    if (part.version != first.version || part.level != first.level || part.mode != first.mode) {
      return Status::Invalid(
          manifest_path,
          fmt::format("version {}, level {}, mode {}; but {} says version {}, level {}, mode {}",
                      part.version, part.level, part.mode,
                      (fs::path(first.dir) / "manifest.json").string(), first.version, first.level,
                      first.mode));
    }
  }
  parts_.push_back(std::move(part));
  const DumpPart& added = parts_.back();

  const std::string records_path = RecordsPath(dir);
  // "first at line L", or at FILE:L when the first lies in another directory.
  auto first_at = [&](const std::pair<std::size_t, int>& first) {
    return first.first == index
               ? fmt::format("line {}", first.second)
               : fmt::format("{}:{}", RecordsPath(parts_[first.first].dir), first.second);
  };
  std::size_t pos = 0;
  int line = 0;
  int64_t bad_sources = 0;  // records whose malformed `source` was dropped; the first's problem
  std::string first_bad_source;
  while (pos < records.size()) {
    const std::size_t end = records.find('\n', pos);
    const bool terminated = end != std::string_view::npos;
    const std::string_view content = records.substr(pos, (terminated ? end : records.size()) - pos);
    pos = terminated ? end + 1 : records.size();
    ++line;
    if (content.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string where = fmt::format("{}:{}", records_path, line);
    Json obj = Json::parse(content, nullptr, false);
    if (obj.is_discarded()) {
      if (!terminated) {
        warnings_.push_back(fmt::format(
            "{}: the last line is cut off (the run stopped while writing it?); ignored", where));
        break;
      }
      return Status::Invalid(where, "not valid JSON");
    }
    std::string source_problem;
    PARITY_ASSIGN_OR_RETURN(DumpRecord record,
                            dump_internal::ReadRecord(obj, line, added, where, &source_problem));
    if (!source_problem.empty() && bad_sources++ == 0) {
      first_bad_source = fmt::format("{}: {}", where, source_problem);
    }
    record.part = index;
    const auto [key, new_key] = seen->keys.try_emplace(
        std::make_tuple(record.rank, record.step, record.name, record.pass, record.call), index,
        line);
    if (!new_key) {
      return Status::Invalid(
          where, fmt::format("duplicate record (rank {}, step {}, name {}, pass {}, call {}), "
                             "first at {}",
                             record.rank, record.step, record.name, record.pass, record.call,
                             first_at(key->second)));
    }
    const auto [seq, new_seq] =
        seen->seqs.try_emplace(std::make_pair(record.rank, record.seq), index, line);
    if (!new_seq) {
      return Status::Invalid(where, fmt::format("duplicate seq {} (rank {}), first at {}",
                                                record.seq, record.rank, first_at(seq->second)));
    }
    records_.push_back(std::move(record));
  }
  if (bad_sources > 0) {
    warnings_.push_back(fmt::format(
        "{}; the record is read without its source{}", first_bad_source,
        bad_sources > 1 ? fmt::format(" (and {} more records like it)", bad_sources - 1) : ""));
  }
  return Status::Ok();
}

std::map<std::string, int64_t> DumpDir::Omitted() const {
  std::map<std::string, int64_t> out;
  for (const DumpPart& part : parts_) {
    for (const auto& [op, n] : part.omitted) out[op] += n;
  }
  return out;
}

std::map<int64_t, std::vector<DumpStep>> DumpDir::StepsByRank() const {
  std::map<int64_t, std::vector<DumpStep>> out;
  for (const DumpPart& part : parts_) {
    if (part.steps.empty()) continue;
    std::vector<DumpStep>& steps = out[part.rank];
    steps.insert(steps.end(), part.steps.begin(), part.steps.end());
  }
  return out;
}

std::vector<int64_t> DumpDir::Steps() const {
  std::set<int64_t> steps;
  for (const DumpRecord& r : records_) steps.insert(r.step);
  for (const DumpPart& part : parts_) {
    for (const DumpStep& s : part.steps) steps.insert(s.step);
  }
  return {steps.begin(), steps.end()};
}

std::vector<int64_t> DumpDir::Ranks() const {
  std::set<int64_t> ranks;
  for (const DumpRecord& r : records_) ranks.insert(r.rank);
  for (const DumpPart& part : parts_) {
    if (part.dir_rank || part.version >= 2) ranks.insert(part.rank);  // the manifest says
  }
  return {ranks.begin(), ranks.end()};
}

std::string DumpDir::Where(const DumpRecord& record) const {
  return fmt::format("{}:{}", RecordsPath(parts_[record.part].dir), record.line);
}

Result<Tensor> DumpDir::Load(const DumpRecord& record, const DumpTensorRef& ref) const {
  const std::string where = Where(record);
  if (!ref.comparable()) {
    return Status::Invalid(where, fmt::format("tensor is not read: {}", ref.not_comparable));
  }
  if (!ref.has_data()) return Status::Invalid(where, "tensor has statistics only, no data");
  const std::string path = (fs::path(parts_[record.part].dir) / ref.file).string();
  if (open_path_ != path || !open_file_) {
    if (Status s = Confined(path); !s.ok()) return s.WithContext(where);
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
