// SPDX-License-Identifier: Apache-2.0
// What every subcommand shares: common flags, argument parsing, errors, output.
#ifndef PARITY_CLI_COMMON_H_
#define PARITY_CLI_COMMON_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"

namespace parity::cli {

/// The flags docs/DESIGN.md gives every command.
struct CommonOptions {
  std::string json_path;  ///< --json FILE; "-" is standard output
  bool quiet = false;     ///< --quiet: no human-readable output
  int threads = 0;        ///< --threads N; 0 = one per CPU

  /// True when the human-readable report should be printed (not --quiet, not --json -).
  bool human() const { return !quiet && json_path != "-"; }
};

/// A CLI11 app for `parity <name>` with the common flags bound to `options`.
std::unique_ptr<CLI::App> MakeApp(std::string_view name, std::string_view description,
                                  CommonOptions* options);

/// Parses argv into `app` and applies the common options. Returns the exit code to end with
/// when parsing ends the command (--help: 0; a bad flag: 2, with the error printed), or
/// nothing when the command should run.
std::optional<int> Parse(CLI::App& app, const CommonOptions& options, int argc, char** argv);

/// One subcommand of a command group (`parity quality auc`, `parity rng check`).
struct Subcommand {
  std::string name;
  std::string summary;
  std::function<int(int, char**)> run;  ///< called with argv[0] = the subcommand's name
};

/// Runs the subcommand argv[1] of `parity <group>`: --help (or -h) prints `usage` and the
/// subcommands with their summaries (exit 0); none given prints them to stderr (exit 2); an
/// unknown name gets "parity: error: <group>: unknown subcommand" with "did you mean" (exit 2).
int DispatchSubcommand(std::string_view group, std::string_view usage,
                       const std::vector<Subcommand>& subcommands, int argc, char** argv);

/// The non-empty items of a comma-separated list ("nvml,,host" is nvml and host).
std::vector<std::string> SplitList(const std::string& text);

/// Prints "parity: error: <message>" to stderr and returns the exit code for `status`.
int Fail(const Status& status);
/// The same exit code as Fail on every rank of a job; only the rank with `print` says why.
int Fail(const Status& status, bool print);

/// Prints "parity: warning: <message>" to stderr.
void Warn(std::string_view message);

/// Writes `doc` to options.json_path when one was given.
Status WriteJsonOutput(const CommonOptions& options, const Json& doc);

}  // namespace parity::cli

#endif  // PARITY_CLI_COMMON_H_
