// SPDX-License-Identifier: Apache-2.0
// What `parity serve` refuses: requests without the bearer token, encoded separators in a
// request's path, and file paths that leave the roots it serves.
#ifndef PARITY_SERVE_SECURITY_H_
#define PARITY_SERVE_SECURITY_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace parity::serve {

/// Whether an Authorization header is exactly "Bearer TOKEN", compared in time that does not
/// depend on where the two first differ. An empty token never matches.
bool BearerMatches(std::string_view authorization, std::string_view token);

/// Whether a raw request target's path (before '?') holds a percent-encoded '/', '\', '.' or
/// NUL (%2f, %5c, %2e, %00, any case): such a path is refused rather than decoded.
bool HasEncodedSeparator(std::string_view target);

/// The real path of `rel` (a decoded URL path, '/' separated) under `root`. kInvalidInput
/// "rel: problem" for an absolute path, a ".." or "." component, a backslash or NUL, a path
/// that does not exist, or one whose real path (symbolic links resolved) is not under the
/// root's real path.
Result<std::string> ResolveUnder(const std::string& root, std::string_view rel);

/// Whether the real path `path` is `root_real` or below it.
bool IsUnder(std::string_view path, std::string_view root_real);

}  // namespace parity::serve

#endif  // PARITY_SERVE_SECURITY_H_
