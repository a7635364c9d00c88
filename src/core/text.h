// SPDX-License-Identifier: Apache-2.0
// Text for messages and command lines: bytes made printable, a command split into words.
#ifndef PARITY_CORE_TEXT_H_
#define PARITY_CORE_TEXT_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace parity {

/// `text` fit for a one-line message: control bytes written as \xNN, cut at 80 bytes ("..."
/// marks the cut).
std::string Printable(std::string_view text);

/// Splits like a POSIX shell splits words, without expansion: blanks (space, tab, newline,
/// carriage return, vertical tab, form feed) separate words; '...' keeps everything literal;
/// "..." keeps everything literal but \" and \\ (a backslash before anything else stays); a
/// backslash outside quotes escapes the next character, and a backslash before a newline joins
/// the lines. Quoted and unquoted pieces with no blank between them form one word ("a'b c'd"
/// is "ab cd"); '' and "" are an empty word. Bytes pass through unchanged (UTF-8 included).
/// kInvalidInput for an unterminated quote, a trailing backslash, a NUL byte, or a command with
/// no words. Messages name no flag; callers add it (Status::WithContext).
Result<std::vector<std::string>> SplitCommand(std::string_view text);

/// Unix seconds as UTC text in strftime's `format` (ISO 8601 by default); "?" when it can't be
/// formatted.
std::string UtcTime(double unix_seconds, const char* format = "%Y-%m-%dT%H:%M:%SZ");

}  // namespace parity

#endif  // PARITY_CORE_TEXT_H_
