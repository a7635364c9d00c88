// SPDX-License-Identifier: Apache-2.0
// What `parity serve` refuses: requests without the bearer token, requests whose Host is not
// one the server answers to (DNS rebinding), request heads over the limits, encoded separators
// in a request's path, and file paths that leave the roots it serves.
#ifndef PARITY_SERVE_SECURITY_H_
#define PARITY_SERVE_SECURITY_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/file_util.h"
#include "core/status.h"

namespace parity::serve {

/// Whether an Authorization header is exactly "Bearer TOKEN", compared in time that does not
/// depend on where the two first differ. An empty token never matches.
bool BearerMatches(std::string_view authorization, std::string_view token);

/// Whether a raw request target's path (before '?') holds a percent-encoded '/', '\', '.' or
/// NUL (%2f, %5c, %2e, %00, any case): such a path is refused rather than decoded.
bool HasEncodedSeparator(std::string_view target);

/// The names a request's Host header may give, each with the bound port.
struct HostPolicy {
  /// Lower-case names; an IPv6 address in brackets ("[::1]").
  std::vector<std::string> names;
  int port = 0;
};

/// localhost, 127.0.0.1 and [::1]; the listen host when it is one address (not 0.0.0.0 or
/// ::); and, only with a token, the `allowed` names (--allow-host).
HostPolicy MakeHostPolicy(const std::string& listen_host, int port,
                          const std::vector<std::string>& allowed, bool token);

/// Whether a Host header names one of the policy's names with its port (the port may be left
/// out only when it is 80), compared without regard to case. An empty or malformed header
/// never matches.
bool HostAllowed(std::string_view host_header, const HostPolicy& policy);

/// The limits on a request's head, checked before cpp-httplib parses it.
struct HeadLimits {
  std::size_t request_line = 8192;  ///< bytes of the request line
  std::size_t fields = 64;          ///< header fields
  std::size_t head = 32768;         ///< bytes of the whole head, the blank line included
};

/// What the bytes received so far of a request head say.
enum class HeadVerdict {
  kIncomplete,     ///< within the limits, the blank line not yet seen
  kComplete,       ///< a whole head within the limits
  kLineTooLong,    ///< 414
  kTooManyFields,  ///< 431
  kHeadTooLarge,   ///< 431
};

/// Judges the first bytes of a connection (a request line, header lines ending in CRLF, a
/// blank line) against `limits`; over a limit as soon as the bytes so far show it.
HeadVerdict CheckRequestHead(std::string_view received, const HeadLimits& limits);

/// The real path of `rel` (a decoded URL path, '/' separated) under `root`. kInvalidInput
/// "rel: problem" for an absolute path, a ".." or "." component, a backslash or NUL, a path
/// that does not exist, or one whose real path (symbolic links resolved) is not under the
/// root's real path; in that last case `*outside` (when given) is set.
Result<std::string> ResolveUnder(const std::string& root, std::string_view rel,
                                 bool* outside = nullptr);

/// Writes "parity serve: refused WHAT: WHY" to standard error: a file outside the roots is
/// logged with the path it led to, which the answer itself does not name.
void LogRefused(std::string_view what, std::string_view why);

}  // namespace parity::serve

#endif  // PARITY_SERVE_SECURITY_H_
