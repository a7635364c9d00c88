// SPDX-License-Identifier: Apache-2.0
// A collect bundle as `parity accept` reads it: the manifest's stages and the result files they
// name, each read with a bound on its size. A bundle whose files are missing or corrupt still
// opens: each problem is kept to mark the criteria that needed the file.
#ifndef PARITY_ACCEPT_BUNDLE_VIEW_H_
#define PARITY_ACCEPT_BUNDLE_VIEW_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"

namespace parity::accept {

/// One stage of a bundle's manifest.
struct StageView {
  std::string name, kind;
  std::string status;  ///< passed, failed, error, skipped, interrupted, pending, running
  std::string reason;
  std::string result;  ///< its result, relative to the bundle ("" when it has none)
  int level = 1;
};

struct BundleView {
  std::string path;     ///< as given
  std::string problem;  ///< the manifest can't be read: "BUNDLE/manifest.json: problem"
  Json manifest;        ///< null when `problem` is set
  std::vector<StageView> stages;

  /// The stages of one kind, in the manifest's order.
  std::vector<const StageView*> OfKind(std::string_view kind) const;
  /// BUNDLE/rel.
  std::string PathOf(std::string_view rel) const;
  /// {"bundle","uid","node","plan","level","backend","status","created","vars","fingerprint"},
  /// the fields the manifest has.
  Json Identity() const;
};

/// The largest result file accept reads into memory (JSON documents, not tensors).
inline constexpr std::size_t kMaxResultBytes = std::size_t{256} << 20;

/// Opens the bundle at `path`. kInvalidInput only when `path` is not a directory; a directory
/// whose manifest is missing or is not a parity-bundle document gives a view with `problem`.
Result<BundleView> OpenBundle(const std::string& path);

/// Reads BUNDLE/rel as JSON, requiring `format` (and version 1) when given: kInvalidInput
/// "BUNDLE/rel: problem" for a missing, oversized or malformed file.
Result<Json> ReadBundleJson(const BundleView& bundle, std::string_view rel,
                            std::string_view format = {});

}  // namespace parity::accept

#endif  // PARITY_ACCEPT_BUNDLE_VIEW_H_
