// SPDX-License-Identifier: Apache-2.0
// parity inspect PATH... : tensors in files and directories, with statistics; for a dump
// directory, what it covers too.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/common.h"
#include "core/exit_code.h"
#include "inspect/inspect.h"

namespace parity::cli {

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

  InspectOptions inspect;
  inspect.paths = std::move(paths);
  if (options.human()) {
    inspect.on_text = [](const std::string& text) { std::fputs(text.c_str(), stdout); };
  }
  auto doc = parity::RunInspect(inspect);
  if (!doc.ok()) return Fail(doc.status());
  if (Status status = WriteJsonOutput(options, *doc); !status.ok()) return Fail(status);
  return kExitOk;
}

}  // namespace parity::cli
