// SPDX-License-Identifier: Apache-2.0
// parity inspect PATH... : tensors in files and directories, with statistics; for a dump
// directory, what it covers too.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/common.h"
#include "core/exit_code.h"
#include "core/text_table.h"
#include "io/dump.h"
#include "io/tensor_file.h"
#include "io/tensor_stats.h"
#include "oracle/coverage.h"

namespace parity::cli {
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

// Inspects one file: appends its JSON entry and, when wanted, prints its table.
Status InspectFile(const std::string& path, const CommonOptions& options, Json* files) {
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
    entry["tensors"].push_back(std::move(t));
    table.AddRow({meta.name, std::string(Name(meta.dtype)), ShapeString(meta.shape),
                  std::to_string(meta.numel), Human(stats.min), Human(stats.max), Human(stats.mean),
                  Human(stats.std), std::to_string(stats.nan), std::to_string(stats.inf),
                  std::to_string(stats.zeros)});
  }
  if (options.human()) {
    std::printf("%s (%s, %zu tensor%s)\n%s", path.c_str(),
                std::string(FormatName(file->format())).c_str(), file->tensors().size(),
                file->tensors().size() == 1 ? "" : "s", table.Render("  ").c_str());
  }
  files->push_back(std::move(entry));
  return Status::Ok();
}

// A dump directory's coverage: printed, and appended to `dumps` as {"path", "coverage"}.
Status InspectDump(const std::string& path, const CommonOptions& options, Json* dumps) {
  PARITY_ASSIGN_OR_RETURN(const DumpDir dump, DumpDir::Open(path));
  const DumpCoverage coverage = CoverageOf(dump);
  if (options.human()) {
    std::printf("%s (parity-dump)\n", path.c_str());
    for (const std::string& w : dump.warnings()) std::printf("  warning: %s\n", w.c_str());
    std::fputs(CoverageText(coverage, "  ").c_str(), stdout);
  }
  dumps->push_back({{"path", path}, {"coverage", CoverageJson(coverage)}});
  return Status::Ok();
}

}  // namespace

int RunInspect(int argc, char** argv) {
  CommonOptions options;
  std::vector<std::string> paths;
  auto app =
      MakeApp("inspect",
              "List the tensors in .npy, .npz and .safetensors files (or in every such "
              "file under a directory) with name, dtype, shape, element count, and min, "
              "max, mean and std over the finite elements, with NaN, Inf and zero counts. For a "
              "parity-dump directory, also what it covers: the ops recorded (records per "
              "pass), how many records replay can replay and how many are compared only, "
              "the ops the manifest says were omitted, the steps and the ranks.",
              &options);
  app->add_option("paths", paths, "tensor files or directories")
      ->required()
      ->option_text("PATH...");
  if (auto code = Parse(*app, options, argc, argv)) return *code;

  Json doc = Document("parity-inspect", 1);
  doc["files"] = Json::array();
  Json dumps = Json::array();
  for (const std::string& path : paths) {
    std::error_code ec;
    std::vector<std::string> files{path};
    const bool dump = DumpDir::IsDump(path);
    if (std::filesystem::is_directory(path, ec)) {
      auto listed = ListTensorFiles(path);
      // A dump of statistics only holds no tensor file; the dump itself is checked below.
      if (!listed.ok() && !dump) return Fail(listed.status());
      files = listed.ok() ? std::move(listed).value() : std::vector<std::string>();
    }
    for (const std::string& file : files) {
      if (Status status = InspectFile(file, options, &doc["files"]); !status.ok()) {
        return Fail(status);
      }
    }
    if (dump) {
      if (Status status = InspectDump(path, options, &dumps); !status.ok()) return Fail(status);
    }
  }
  // Dump directories: each one's coverage, and the only one's as `coverage`.
  if (!dumps.empty()) {
    if (dumps.size() == 1) doc["coverage"] = dumps[0]["coverage"];
    doc["dumps"] = std::move(dumps);
  }
  if (Status status = WriteJsonOutput(options, doc); !status.ok()) return Fail(status);
  return kExitOk;
}

}  // namespace parity::cli
