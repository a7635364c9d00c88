// SPDX-License-Identifier: Apache-2.0
#include "cli/common.h"

#include <fmt/format.h>

#include <cstdio>

#include "core/exit_code.h"
#include "core/file_util.h"
#include "core/parallel.h"
#include "core/spellcheck.h"

namespace parity::cli {

std::unique_ptr<CLI::App> MakeApp(std::string_view name, std::string_view description,
                                  CommonOptions* options) {
  auto app = std::make_unique<CLI::App>(std::string(description), "parity " + std::string(name));
  app->add_option("--json", options->json_path,
                  "write machine-readable JSON to FILE ('-' for standard output)")
      ->option_text("FILE");
  app->add_flag("-q,--quiet", options->quiet, "print no human-readable report");
  app->add_option("--threads", options->threads, "worker threads (default: one per CPU)")
      ->check(CLI::Range(0, 4096))
      ->option_text("N");
  app->get_formatter()->column_width(30);
  return app;
}

std::optional<int> Parse(CLI::App& app, const CommonOptions& options, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "parity: error: %s: %s\nRun '%s --help' for usage.\n",
                 app.get_name().c_str(), e.what(), app.get_name().c_str());
    return kExitUsage;
  }
  SetThreadCount(options.threads);
  return std::nullopt;
}

int DispatchSubcommand(std::string_view group, std::string_view usage,
                       const std::vector<Subcommand>& subcommands, int argc, char** argv) {
  auto print_usage = [&](std::FILE* out) {
    std::string text = std::string(usage) + "\n\nSubcommands:\n";
    for (const Subcommand& s : subcommands) text += fmt::format("  {:<10}{}\n", s.name, s.summary);
    text += fmt::format("\nRun 'parity {} <subcommand> --help' for its options.\n", group);
    std::fputs(text.c_str(), out);
  };
  if (argc < 2) {
    print_usage(stderr);
    return kExitUsage;
  }
  const std::string_view name = argv[1];
  if (name == "--help" || name == "-h") {
    print_usage(stdout);
    return kExitOk;
  }
  std::vector<std::string_view> names;
  for (const Subcommand& s : subcommands) {
    if (s.name == name) return s.run(argc - 1, argv + 1);
    names.push_back(s.name);
  }
  std::string message = fmt::format("parity: error: {}: unknown subcommand '{}'", group, name);
  if (auto suggestion = Suggest(name, names)) {
    message += fmt::format("; did you mean '{}'?", *suggestion);
  }
  std::fprintf(stderr, "%s\n", message.c_str());
  print_usage(stderr);
  return kExitUsage;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    if (end > begin) out.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

int Fail(const Status& status) {
  std::fprintf(stderr, "parity: error: %s\n", status.message().c_str());
  return ExitCodeFor(status);
}

int Fail(const Status& status, bool print) { return print ? Fail(status) : ExitCodeFor(status); }

void Warn(std::string_view message) {
  std::fprintf(stderr, "parity: warning: %.*s\n", static_cast<int>(message.size()), message.data());
}

Status WriteJsonOutput(const CommonOptions& options, const Json& doc) {
  if (options.json_path.empty()) return Status::Ok();
  return WriteTextFile(options.json_path, Dump(doc));
}

}  // namespace parity::cli
