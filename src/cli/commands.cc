// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "core/exit_code.h"
#include "core/interrupt.h"
#include "core/spellcheck.h"
#include "core/version.h"

namespace parity::cli {
namespace {

constexpr std::array<Command, 21> kCommands = {{
    {"inspect", "list tensors in npy/npz/safetensors files or directories, with statistics",
     RunInspect},
    {"compare", "compare tensors of two runs (files, directories or dumps); verdict per tensor",
     RunCompare},
    {"capture", "run a Python training command captured op by op, no line of it changed",
     RunCapture},
    {"replay", "each op of a dump against its float64 replay on the recorded inputs", RunReplay},
    {"explain", "attribute divergences between two dumps to causes (float64 replay per op)",
     RunExplain},
    {"quality", "model quality of B against A: AUC (DeLong), logloss, accuracy; seeds, TOST",
     RunQuality},
    {"rng", "cuRAND's Philox streams, PyTorch's RNG layout per element, random tensors compared",
     RunRng},
    {"bench", "validated benchmark suites (stream, gemm, transfer, rng, latency, model); compare",
     RunBench},
    {"tune", "the training settings that make a workload fast without changing its losses",
     RunTune},
    {"devices", "backends built in and plugins found, their devices, why any is unavailable",
     RunDevices},
    {"env", "the platform fingerprint (host, GPUs, libraries, settings); env diff A B", RunEnv},
    {"doctor", "check settings against the sourced knowledge base; --rules; --symptom TEXT",
     RunDoctor},
    {"monitor", "GPU and host telemetry, threshold rules and alerts, a Prometheus exporter",
     RunMonitor},
    {"stress", "burn and training workloads supervised: SDC checks, checkpoints, fault injection",
     RunStress},
    {"collect", "run an acceptance plan on this machine into a bundle (resumable, levels 1-4)",
     RunCollect},
    {"accept", "judge a candidate bundle against a baseline: report.json, report.html, JUnit",
     RunAccept},
    {"fleet", "under mpirun: collect a plan on every node into a fleet directory; fleet report",
     RunFleet},
    {"history", "runs recorded in the results store, and the trends of their figures", RunHistory},
    {"serve", "a local, read-only web dashboard of every run, trend, compare and report",
     RunServe},
    {"verify", "check a signed report: its Ed25519 signature and every file's SHA-256", RunVerify},
    {"keygen", "make an Ed25519 key pair (KEY, KEY.pub) for signing reports", RunKeygen},
}};

constexpr bool EveryRowFilled() {
  for (const Command& command : kCommands) {
    if (command.name.empty() || command.run == nullptr) return false;
  }
  return true;
}
static_assert(EveryRowFilled(), "kCommands is larger than its rows: a row is missing");

void PrintUsage(std::FILE* out) {
  std::string text = fmt::format(
      "parity {} - accept a new accelerator platform against a trusted one\n\n"
      "Usage: parity <command> [options]\n"
      "       parity <command> --help\n"
      "       parity --version\n\n"
      "Commands:\n",
      kParityVersion);
  for (const Command& command : kCommands) {
    text += fmt::format("  {:<12}{}\n", command.name, command.summary);
  }
  text +=
      "\nCommon options: --json FILE ('-' = stdout), --quiet, --threads N\n"
      "Exit codes: 0 every check passed, 1 a check failed, 2 usage or input error,\n"
      "            3 nothing asked for can run here, 130 interrupted\n";
  std::fputs(text.c_str(), out);
}

const Command* Find(std::string_view name) {
  for (const Command& command : kCommands) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

}  // namespace

std::span<const Command> Commands() { return kCommands; }

int Main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(stderr);
    return kExitUsage;
  }
  const std::string_view first = argv[1];
  if (first == "--version" || first == "-V") {
    std::printf("parity %s\n", kParityVersion);
    return kExitOk;
  }
  if (first == "--help" || first == "-h" || first == "help") {
    if (first == "help" && argc > 2) {
      if (const Command* command = Find(argv[2])) {
        char help_flag[] = "--help";
        char* help_argv[] = {argv[2], help_flag, nullptr};
        return command->run(2, help_argv);
      }
    } else {
      PrintUsage(stdout);
      return kExitOk;
    }
  }
  const std::string_view name = (first == "help") ? std::string_view(argv[2]) : first;
  const Command* command = Find(name);
  if (command == nullptr) {
    std::vector<std::string_view> names;
    for (const Command& c : kCommands) names.push_back(c.name);
    const std::string kind = name.starts_with("-") ? "option" : "command";
    std::string message = fmt::format("parity: error: unknown {} '{}'", kind, name);
    if (auto suggestion = Suggest(name, names))
      message += fmt::format("; did you mean '{}'?", *suggestion);
    std::fprintf(stderr, "%s\nRun 'parity --help' for the list of commands.\n", message.c_str());
    return kExitUsage;
  }
  ExitOnInterrupt();
  return command->run(argc - 1, argv + 1);
}

}  // namespace parity::cli
