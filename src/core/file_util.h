// SPDX-License-Identifier: Apache-2.0
// Writing files so that readers never see half of one; reading small ones; real paths.
#ifndef PARITY_CORE_FILE_UTIL_H_
#define PARITY_CORE_FILE_UTIL_H_

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/status.h"

namespace parity {

/// Writes the concatenation of `pieces` to `path`: first to a temporary file beside it, then
/// renamed over `path` (over the file a symbolic link names, keeping the link). On failure
/// `path` is untouched and the message names it. A `path` that is a device, FIFO or socket
/// (/dev/null, a pipe) is written in place, and one that names an open descriptor (/dev/stdout,
/// /dev/fd/N, /proc/self/fd/N) is written through that descriptor; neither is replaced.
Status WriteFileAtomically(const std::string& path,
                           std::span<const std::span<const std::byte>> pieces);
inline Status WriteFileAtomically(const std::string& path,
                                  std::initializer_list<std::span<const std::byte>> pieces) {
  return WriteFileAtomically(path, std::span(pieces.begin(), pieces.size()));
}

/// The contents of `path`, a small text file of the kind `what` names ("rules file"). kInvalidInput
/// naming the file when it is a directory, can't be read, or holds more than `max_bytes`
/// ("larger than a rules file may be (1 MiB)"); reading stops at the first block past the cap.
Result<std::string> ReadSmallFile(const std::string& path, std::size_t max_bytes,
                                  std::string_view what);

/// Writes `text` to `path` ("-" means standard output), atomically for files.
Status WriteTextFile(const std::string& path, std::string_view text);

/// The real path of `path` (every symbolic link, "." and ".." resolved); std::nullopt when it
/// does not exist or can't be resolved.
std::optional<std::string> RealPath(const std::string& path);

/// Whether the real path `path` is `root_real` or below it (component-wise: /srv/rootkit is
/// not under /srv/root).
bool IsUnder(std::string_view path, std::string_view root_real);

/// The bytes of a string, for WriteFileAtomically.
inline std::span<const std::byte> AsBytes(std::string_view text) {
  return std::as_bytes(std::span<const char>(text.data(), text.size()));
}

}  // namespace parity

#endif  // PARITY_CORE_FILE_UTIL_H_
