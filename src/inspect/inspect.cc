// SPDX-License-Identifier: Apache-2.0
#include "inspect/inspect.h"

#include <fmt/format.h>

#include <filesystem>
#include <memory>

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

// A dump directory's coverage: given as text, and appended to `dumps` as {"path", "coverage"}.
Status InspectDump(const std::string& path, const InspectOptions& options, Json* dumps) {
  PARITY_ASSIGN_OR_RETURN(const DumpDir dump, DumpDir::Open(path));
  const DumpCoverage coverage = CoverageOf(dump);
  if (options.on_text) {
    std::string text = path + " (parity-dump)\n";
    for (const std::string& w : dump.warnings()) text += "  warning: " + w + "\n";
    options.on_text(text + CoverageText(coverage, "  "));
  }
  dumps->push_back({{"path", path}, {"coverage", CoverageJson(coverage)}});
  return Status::Ok();
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
    const bool dump = DumpDir::IsDump(path);
    if (std::filesystem::is_directory(path, ec)) {
      auto listed = ListTensorFiles(path);
      // A dump of statistics only holds no tensor file; the dump itself is checked below.
      if (!listed.ok() && !dump) return listed.status();
      files = listed.ok() ? std::move(listed).value() : std::vector<std::string>();
    }
    for (const std::string& file : files) {
      PARITY_RETURN_IF_ERROR(InspectFile(file, options, &doc["files"]));
    }
    if (dump) PARITY_RETURN_IF_ERROR(InspectDump(path, options, &dumps));
  }
  // Dump directories: each one's coverage, and the only one's as `coverage`.
  if (!dumps.empty()) {
    if (dumps.size() == 1) doc["coverage"] = dumps[0]["coverage"];
    doc["dumps"] = std::move(dumps);
  }
  return doc;
}

}  // namespace parity
