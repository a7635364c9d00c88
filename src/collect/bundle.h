// SPDX-License-Identifier: Apache-2.0
// The bundle directory a collect writes (format `parity-bundle`, version 1):
//
//   BUNDLE/
//     manifest.json     {"format":"parity-bundle","version":1,"uid","plan":{..},"level",
//                        "backend","tool","fingerprint","status","collects":[..],
//                        "stages":[{"name","kind","status","reason","result","log",..}]}
//     plan.yaml         the plan as given
//     stages/NAME/      each stage's result file (bench.json, stress.json, env.json, exec.json,
//                       quality.json, a dump directory) and whatever its command wrote ({out})
//     telemetry.jsonl   the monitor stage's samples and alerts, one JSON object per line
//     logs/NAME.log     each stage's output
//
// The manifest is rewritten atomically whenever a stage starts or ends, so a collect that was
// killed leaves a manifest saying which stages finished.
#ifndef PARITY_COLLECT_BUNDLE_H_
#define PARITY_COLLECT_BUNDLE_H_

#include <optional>
#include <string>

#include "core/json_util.h"
#include "core/status.h"

namespace parity::collect {

/// An exclusive lock on a bundle (BUNDLE/.lock, flock), held while a collect writes it.
class BundleLock {
 public:
  /// kInvalidInput when another process holds it.
  static Result<BundleLock> Acquire(const std::string& bundle);
  BundleLock(BundleLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  BundleLock& operator=(BundleLock&&) = delete;
  ~BundleLock();

 private:
  explicit BundleLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

/// Makes BUNDLE (and stages/, logs/) unless it exists. An existing directory must be a bundle
/// (hold a manifest.json) or be empty: kInvalidInput otherwise, so a collect never writes into
/// a directory that holds something else.
Status PrepareBundle(const std::string& bundle);

/// The manifest of an existing bundle; nothing for a bundle without one. kInvalidInput for a
/// manifest that is not a parity-bundle version 1 document.
Result<std::optional<Json>> LoadManifest(const std::string& bundle);

/// Writes BUNDLE/manifest.json atomically.
Status WriteManifest(const std::string& bundle, const Json& manifest);

}  // namespace parity::collect

#endif  // PARITY_COLLECT_BUNDLE_H_
