// SPDX-License-Identifier: Apache-2.0
#include "inspect/inspect.h"

#include <fmt/format.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>

#include "core/text_table.h"
#include "io/dump.h"
#include "io/tensor_file.h"
#include "io/tensor_stats.h"
#include "oracle/coverage.h"

namespace parity {
namespace {

std::string Human(const std::optional<StatValue>& value) {
  if (!value) return "-";
  return std::visit(
      [](auto v) {
        if constexpr (std::is_same_v<decltype(v), double>) return fmt::format("{:.6g}", v);
        return fmt::format("{}", v);
      },
      *value);
}

std::string Human(const std::optional<double>& value) {
  return value ? fmt::format("{:.6g}", *value) : "-";
}

void SetStat(Json& obj, std::string_view key, const std::optional<StatValue>& value) {
  if (!value) {
    obj[std::string(key)] = nullptr;
    return;
  }
  std::visit(
      [&](auto v) {
        if constexpr (std::is_same_v<decltype(v), double>) {
          SetNumber(obj, key, v);
        } else {
          obj[std::string(key)] = v;
        }
      },
      *value);
}

void SetStat(Json& obj, std::string_view key, const std::optional<double>& value) {
  if (value) {
    SetNumber(obj, key, *value);
  } else {
    obj[std::string(key)] = nullptr;
  }
}

Json TensorJson(const TensorMeta& meta, const TensorStats& stats) {
  Json t = Json::object();
  t["name"] = meta.name;
  t["dtype"] = Name(meta.dtype);
  t["shape"] = meta.shape;
  t["numel"] = meta.numel;
  SetStat(t, "min", stats.min);
  SetStat(t, "max", stats.max);
  SetStat(t, "mean", stats.mean);
  SetStat(t, "std", stats.std);
  t["nan"] = stats.nan;
  t["inf"] = stats.inf;
  t["zeros"] = stats.zeros;
  return t;
}

// Inspects one file: appends its JSON entry and, when wanted, gives its table.
Status InspectFile(const std::string& path, const InspectOptions& options, Json* files) {
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<TensorFile> file, OpenTensorFile(path));
  Json entry = Json::object();
  entry["path"] = path;
  entry["format"] = FormatName(file->format());
  entry["tensors"] = Json::array();
  Table table(
      {"name", "dtype", "shape", "numel", "min", "max", "mean", "std", "nan", "inf", "zeros"},
      {false, false, false, true, true, true, true, true, true, true, true});
  for (std::size_t i = 0; i < file->tensors().size(); ++i) {
    PARITY_ASSIGN_OR_RETURN(Tensor tensor, file->Load(i));
    const TensorMeta& meta = tensor.meta();
    PARITY_ASSIGN_OR_RETURN(const TensorStats stats, ComputeStats(tensor));
    entry["tensors"].push_back(TensorJson(meta, stats));
    table.AddRow({meta.name, std::string(Name(meta.dtype)), ShapeString(meta.shape),
                  std::to_string(meta.numel), Human(stats.min), Human(stats.max), Human(stats.mean),
                  Human(stats.std), std::to_string(stats.nan), std::to_string(stats.inf),
                  std::to_string(stats.zeros)});
  }
  if (options.on_text) {
    options.on_text(fmt::format("{} ({}, {} tensor{})\n{}", path, FormatName(file->format()),
                                file->tensors().size(), file->tensors().size() == 1 ? "" : "s",
                                table.Render("  ")));
  }
  files->push_back(std::move(entry));
  return Status::Ok();
}

constexpr std::size_t kNotComparableRows = 50;  // text rows of tensors not comparable

// Where a record's tensor sits in it: "input.0", "param.weight", "output.1".
void EachTensor(const DumpRecord& r,
                const std::function<void(const std::string&, const DumpTensorRef&)>& fn) {
  for (std::size_t i = 0; i < r.inputs.size(); ++i) fn(fmt::format("input.{}", i), r.inputs[i]);
  for (const auto& [key, ref] : r.params) fn("param." + key, ref);
  for (std::size_t i = 0; i < r.outputs.size(); ++i) fn(fmt::format("output.{}", i), r.outputs[i]);
}

// The files of `dump` that hold tensors parity does not read (complex .npy), normalised.
std::set<std::string> NotComparableFiles(const DumpDir& dump) {
  std::set<std::string> files;
  for (const DumpRecord& r : dump.records()) {
    EachTensor(r, [&](const std::string&, const DumpTensorRef& ref) {
      if (ref.comparable() || ref.file.empty()) return;
      const std::filesystem::path dir(dump.parts()[r.part].dir);
      files.insert((dir / ref.file).lexically_normal().string());
    });
  }
  return files;
}

// A dump directory's coverage and its tensors parity does not compare: given as text, and
// appended to `dumps` as {"path", "coverage", "not_comparable"}.
void InspectDump(const std::string& path, const DumpDir& dump, const InspectOptions& options,
                 Json* dumps) {
  const DumpCoverage coverage = CoverageOf(dump);
  Json list = Json::array();
  Table table({"seq", "name", "tensor", "dtype", "shape", "reason"},
              {true, false, false, false, false, false});
  for (const DumpRecord& r : dump.records()) {
    EachTensor(r, [&](const std::string& slot, const DumpTensorRef& ref) {
      if (ref.comparable()) return;
      Json t = {{"seq", r.seq},   {"rank", r.rank}, {"step", r.step}, {"name", r.name},
                {"pass", r.pass}, {"call", r.call}, {"tensor", slot}, {"dtype", ref.DTypeName()}};
      t["shape"] = ref.shape_known ? Json(ref.shape) : Json();
      if (!ref.layout.empty()) t["layout"] = ref.layout;
      if (!ref.file.empty()) t["file"] = ref.file;
      t["reason"] = ref.not_comparable;
      list.push_back(std::move(t));
      if (list.size() <= kNotComparableRows) {
        table.AddRow({std::to_string(r.seq), r.name, slot, ref.DTypeName(),
                      ref.shape_known ? ShapeString(ref.shape) : "?", ref.not_comparable});
      }
    });
  }
  if (options.on_text) {
    std::string text = path + " (parity-dump)\n";
    for (const std::string& w : dump.warnings()) text += "  warning: " + w + "\n";
    text += CoverageText(coverage, "  ");
    if (!list.empty()) {
      text += fmt::format("  tensors not comparable ({}): neither compared nor replayed\n",
                          list.size());
      text += table.Render("    ");
      if (list.size() > kNotComparableRows) {
        text +=
            fmt::format("    ... and {} more (--json has all)\n", list.size() - kNotComparableRows);
      }
    }
    options.on_text(text);
  }
  dumps->push_back(
      {{"path", path}, {"coverage", CoverageJson(coverage)}, {"not_comparable", std::move(list)}});
}

}  // namespace

Result<Json> InspectTensorJson(const Tensor& tensor) {
  PARITY_ASSIGN_OR_RETURN(const TensorStats stats, ComputeStats(tensor));
  return TensorJson(tensor.meta(), stats);
}

Result<Json> RunInspect(const InspectOptions& options) {
  Json doc = Document("parity-inspect", 1);
  doc["files"] = Json::array();
  Json dumps = Json::array();
  for (const std::string& path : options.paths) {
    std::error_code ec;
    std::vector<std::string> files{path};
    std::optional<DumpDir> dump;
    std::set<std::string> unread;  // a dump's files of tensors parity does not compare
    if (DumpDir::IsDump(path)) {
      PARITY_ASSIGN_OR_RETURN(DumpDir opened, DumpDir::Open(path));
      dump = std::move(opened);
      unread = NotComparableFiles(*dump);
    }
    if (std::filesystem::is_directory(path, ec)) {
      auto listed = ListTensorFiles(path);
      // A dump of statistics only holds no tensor file; the dump itself is checked below.
      if (!listed.ok() && !dump) return listed.status();
      files = listed.ok() ? std::move(listed).value() : std::vector<std::string>();
    }
    for (const std::string& file : files) {
      if (unread.count(std::filesystem::path(file).lexically_normal().string())) continue;
      PARITY_RETURN_IF_ERROR(InspectFile(file, options, &doc["files"]));
    }
    if (dump) InspectDump(path, *dump, options, &dumps);
  }
  // Dump directories: each one's coverage, and the only one's as `coverage`.
  if (!dumps.empty()) {
    if (dumps.size() == 1) doc["coverage"] = dumps[0]["coverage"];
    doc["dumps"] = std::move(dumps);
  }
  return doc;
}

}  // namespace parity
