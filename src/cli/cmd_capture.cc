// SPDX-License-Identifier: Apache-2.0
// parity capture [OPTIONS] -o DIR -- COMMAND...: a user's training script captured op by op
// without a line of it changed (workload/launch.h; python/parity_dump/launcher.py).
#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cli/bench_ranks.h"
#include "cli/command.h"
#include "cli/common.h"
#include "core/exit_code.h"
#include "workload/launch.h"
#include "workload/python_env.h"

namespace parity::cli {
namespace {

constexpr char kUsage[] = "Usage: parity capture [OPTIONS] -o DIR -- COMMAND [ARGS...]";
constexpr char kLogName[] = "parity-capture.log";  // python/parity_dump/dumpdir.py LOG_NAME

void Log(const std::string& dir, const std::string& text) {
  std::ofstream out(dir + "/" + kLogName, std::ios::app);
  char stamp[32] = {};
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::localtime_r(&now, &tm);
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
  out << stamp << " parity: " << text << "\n";
}

// Whether a capture wrote a manifest: DIR's own, or a rank directory's.
bool HasManifest(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir + "/manifest.json", ec)) return true;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory(ec) && entry.path().filename().string().rfind("rank", 0) == 0 &&
        fs::exists(entry.path() / "manifest.json", ec)) {
      return true;
    }
  }
  return false;
}

Result<std::pair<int, int>> ParseSteps(const std::string& text) {
  // Exactly two decimal numbers that fit an int, around one colon.
  auto number = [](std::string_view digits, int* out) {
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) {
      return false;
    }
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *out);
    return ec == std::errc() && end == digits.data() + digits.size();
  };
  const std::string_view view(text);
  const std::size_t colon = view.find(':');
  int a = 0, b = 0;
  if (colon == std::string_view::npos || !number(view.substr(0, colon), &a) ||
      !number(view.substr(colon + 1), &b) || b <= a) {
    return Status::Invalid("--steps", fmt::format("'{}': expected A:B, 0 <= A < B (the steps "
                                                  "A to B-1, counted from 0)",
                                                  text));
  }
  return std::make_pair(a, b);
}

}  // namespace

int RunCapture(int argc, char** argv) {
  // What follows the first "--" is the command, untouched by option parsing.
  std::vector<std::string> command;
  int own = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--") {
      own = i;
      for (int k = i + 1; k < argc; ++k) command.emplace_back(argv[k]);
      break;
    }
  }
  if (own == argc) {
    bool help = false;
    for (int i = 1; i < argc; ++i) {
      const std::string_view a(argv[i]);
      help = help || a == "-h" || a == "--help";
    }
    if (!help) {
      return Fail(
          Status::Invalid("", fmt::format("capture: no '--' before the command\n{}", kUsage)));
    }
  }
  CommonOptions common;
  std::string out, steps, mode = "stats", max_bytes;
  std::vector<std::string> ops, modules;
  int every = 0;
  bool stack = false;
  auto app = MakeApp(
      "capture",
      "Run a Python training command with the capture installed at interpreter start, no line "
      "of it changed: steps are found at the optimizer's step() (or GradScaler's update()), "
      "the model as the first module called that holds optimized parameters, and every aten "
      "op of forward, backward and the optimizer recorded into a parity-dump directory "
      "(docs/DESIGN.md \"Capture launcher\"). python SCRIPT, python -m MODULE, torchrun "
      "(each rank into DIR/rank<N>/) and programs whose #! line names python. The command's "
      "stdout, stderr and exit code pass through; what parity says goes to "
      "DIR/parity-capture.log.\n\n" +
          std::string(kUsage),
      &common);
  app->add_option("-o,--out", out, "the dump directory: new or empty, writable")
      ->option_text("DIR")
      ->required();
  app->add_option("--steps", steps, "capture steps A to B-1 only (counted from 0)")
      ->option_text("A:B");
  app->add_option("--every", every, "capture only the steps divisible by N")
      ->check(CLI::Range(1, 1 << 30))
      ->option_text("N");
  app->add_option("--mode", mode,
                  "stats: statistics and digests of every tensor (default); tensors: .npy "
                  "files too; hashes: each tensor's digest alone (which tensors differ, "
                  "not by how much)")
      ->check(CLI::IsMember({"stats", "tensors", "hashes"}))
      ->option_text("M");
  app->add_option("--ops", ops,
                  "op-name globs to record (\"addmm\", \"_foreach_*\"; \"!GLOB\" "
                  "excludes); repeat or separate with commas")
      ->delimiter(',')
      ->option_text("GLOB");
  app->add_option("--modules", modules, "module-path globs to record (\"encoder.*\")")
      ->delimiter(',')
      ->option_text("GLOB");
  app->add_option("--max-bytes", max_bytes,
                  "tensor bytes saved as files at most (4K, 64M, 1G); past it statistics only")
      ->option_text("SIZE");
  app->add_flag("--stack", stack, "each record says where in the script its op was called");
  if (auto code = Parse(*app, common, own, argv)) return *code;
  if (command.empty()) {
    return Fail(Status::Invalid("", fmt::format("capture: no command after '--'\n{}", kUsage)));
  }
  nlohmann::json config = {{"mode", mode}, {"stack", stack}};
  if (!steps.empty()) {
    auto window = ParseSteps(steps);
    if (!window.ok()) return Fail(window.status());
    config["steps"] = {window->first, window->second};
  }
  if (every > 0) config["every"] = every;
  if (!ops.empty()) config["ops"] = ops;
  if (!modules.empty()) config["modules"] = modules;
  if (!max_bytes.empty()) {
    auto bytes = ParseByteSize(max_bytes, "--max-bytes");
    if (!bytes.ok()) return Fail(bytes.status());
    config["max_bytes"] = *bytes;
  }
  auto python = workload::ClassifyCommand(command);
  if (!python.ok()) return Fail(python.status());
  config["workers_only"] = python->workers_only;
  const std::string packages = workload::ParityPythonDirectory();
  if (packages.empty()) {
    return Fail(Status::Unavailable(
        "capture: parity's Python packages (parity_dump) are not installed beside this "
        "binary, nor is its source checkout's python/ directory there"));
  }
  if (Status s = workload::PrepareDumpRoot(out); !s.ok()) return Fail(s);
  std::error_code ec;
  const std::string dir = std::filesystem::absolute(out, ec).lexically_normal().string();
  config["out"] = dir;

  std::string path = packages + "/parity_dump/_boot";
  if (const char* current = std::getenv("PYTHONPATH"); current != nullptr && *current != '\0') {
    path += std::string(":") + current;
  }
  path += ":" + packages;
  std::string line;
  for (const std::string& a : command) line += (line.empty() ? "" : " ") + a;
  Log(dir, fmt::format("capture {} into {}{}", line, dir,
                       python->workers_only ? " (torchrun: the workers capture, rank<N>/)" : ""));
  const auto start = std::chrono::steady_clock::now();
  auto code = workload::RunPassingThrough(
      command, {{"PYTHONPATH", path}, {"PARITY_CAPTURE", config.dump()}});
  if (!code.ok()) return Fail(code.status());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const bool captured = HasManifest(dir);
  Log(dir, fmt::format("the command ended with exit code {} after {:.1f} s{}", *code, seconds,
                       captured ? ""
                                : "; nothing was captured (it never imported torch, or the "
                                  "capture could not be installed: see above)"));
  Json doc = Document("parity-capture", 1);
  doc["command"] = command;
  doc["dump"] = dir;
  doc["exit_code"] = *code;
  doc["seconds"] = seconds;
  doc["captured"] = captured;
  if (Status s = WriteJsonOutput(common, doc); !s.ok()) return Fail(s);
  return *code;
}

}  // namespace parity::cli
