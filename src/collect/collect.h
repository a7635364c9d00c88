// SPDX-License-Identifier: Apache-2.0
// `parity collect PLAN -o BUNDLE`: the plan's stages run on this machine into a bundle, with a
// progress display, resumption, telemetry throughout, and the run recorded in the results store.
#ifndef PARITY_COLLECT_COLLECT_H_
#define PARITY_COLLECT_COLLECT_H_

#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

#include "collect/plan.h"
#include "core/json_util.h"
#include "core/status.h"

namespace parity::collect {

struct CollectOptions {
  std::string bundle;   ///< -o BUNDLE
  int level = 1;        ///< --level
  std::string backend;  ///< --backend; "" = the plan's
  /// The results store; "" = none (the run is not recorded).
  std::string db_path;
  /// Stages to run again even when the bundle holds their result.
  std::vector<std::string> redo;
  std::string parity;  ///< this executable, for the stages that run parity
  /// Progress lines go here (stderr), nullptr for none; `tty` redraws one line in place.
  std::FILE* progress = nullptr;
  bool tty = false;
  const std::atomic<bool>* stop = nullptr;  ///< set by SIGINT/SIGTERM
};

/// What the collect did.
struct CollectRun {
  Json manifest;
  std::string bundle;  ///< absolute
  int ran = 0;         ///< stages run by this invocation
  int reused = 0;      ///< stages whose earlier result was kept
  int passed = 0, failed = 0, errors = 0, skipped = 0, pending = 0;
  int unavailable = 0;  ///< stages that could not run here (their backend or sources absent)
  bool interrupted = false;
  std::string store_problem;  ///< why the run could not be recorded ("" when it was, or no db)
};

/// Runs the plan into options.bundle. Rerunning on the same bundle keeps each stage that
/// passed or failed with the same keys at this level (and backend) and runs the rest: stages
/// that were interrupted, errored, are new, or changed. kInvalidInput only for what stops it
/// from starting (the bundle can't be written, holds something else, is locked).
Result<CollectRun> RunCollect(const Plan& plan, const CollectOptions& options);

/// The bundle's stages as a table, for the end of a collect.
std::string CollectText(const CollectRun& run);

}  // namespace parity::collect

#endif  // PARITY_COLLECT_COLLECT_H_
