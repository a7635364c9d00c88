// SPDX-License-Identifier: Apache-2.0
// Reading the small text files of sysfs and procfs: bounded in size, never throwing, and
// strict about what counts as a number, so a garbage file yields "absent", not 0.
#ifndef PARITY_MONITOR_SYSFS_H_
#define PARITY_MONITOR_SYSFS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parity::monitor {

/// The file's contents, at most `limit` bytes (sysfs attributes are at most a page; a larger
/// file is cut, not read whole). With `limit` at most 4096, one short read() ends the file.
/// nullopt when it can't be opened or read.
std::optional<std::string> ReadSmallFile(const std::string& path, std::size_t limit = 65536);

/// The file's first line without surrounding white space; nullopt when unreadable or empty.
std::optional<std::string> ReadTrimmed(const std::string& path);

/// A whole-file unsigned integer: decimal, or hex with "0x"; surrounding white space allowed,
/// nothing else. nullopt for anything else, or on overflow.
std::optional<uint64_t> ReadUnsigned(const std::string& path);
/// The same for a signed integer (hwmon temperatures can be negative).
std::optional<int64_t> ReadSigned(const std::string& path);

/// Parses `text` as an unsigned decimal (or 0x hex) integer, the whole of it after trimming.
std::optional<uint64_t> ParseUnsigned(std::string_view text);
std::optional<int64_t> ParseSigned(std::string_view text);
/// A decimal number with an optional fraction ("16.0"); nullopt for anything else.
std::optional<double> ParseDecimal(std::string_view text);

std::string_view Trim(std::string_view text);

/// Names in directory `dir` (no "." or ".."), sorted; empty when it can't be listed. At most
/// `limit` names: a directory can't make a reader allocate without bound.
std::vector<std::string> ListDirectory(const std::string& dir, std::size_t limit = 4096);

/// `dir` + '/' + `name`, with one slash between: JoinPath("/tmp/fx/sys", "/class/drm").
std::string JoinPath(std::string_view dir, std::string_view name);

}  // namespace parity::monitor

#endif  // PARITY_MONITOR_SYSFS_H_
