// SPDX-License-Identifier: Apache-2.0
// The subcommand table: one row per `parity` subcommand.
#ifndef PARITY_CLI_COMMAND_H_
#define PARITY_CLI_COMMAND_H_

#include <span>
#include <string_view>

namespace parity::cli {

/// A subcommand. `run` gets the arguments after the subcommand name, argv[0] being the name,
/// and returns the process exit code (docs/DESIGN.md "Exit codes").
struct Command {
  std::string_view name;
  std::string_view summary;  ///< one line, for `parity --help`
  int (*run)(int argc, char** argv);
};

/// Every subcommand, in the order `parity --help` lists them.
std::span<const Command> Commands();

/// The whole command line: global flags (--help, --version), then dispatch through the table.
int Main(int argc, char** argv);

// Handlers, one file each.
int RunCompare(int argc, char** argv);
int RunInspect(int argc, char** argv);
int RunReplay(int argc, char** argv);
int RunExplain(int argc, char** argv);
int RunQuality(int argc, char** argv);
int RunRng(int argc, char** argv);
int RunBench(int argc, char** argv);
int RunTune(int argc, char** argv);
int RunCapture(int argc, char** argv);
int RunDevices(int argc, char** argv);
int RunEnv(int argc, char** argv);
int RunDoctor(int argc, char** argv);
int RunFleet(int argc, char** argv);
int RunMonitor(int argc, char** argv);
int RunStress(int argc, char** argv);
int RunCollect(int argc, char** argv);
int RunServe(int argc, char** argv);
int RunHistory(int argc, char** argv);
int RunAccept(int argc, char** argv);
int RunKeygen(int argc, char** argv);
int RunVerify(int argc, char** argv);

}  // namespace parity::cli

#endif  // PARITY_CLI_COMMAND_H_
