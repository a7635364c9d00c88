// SPDX-License-Identifier: Apache-2.0
// A parser for the Python literals that .npy headers are written in.
#ifndef PARITY_IO_PY_LITERAL_H_
#define PARITY_IO_PY_LITERAL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace parity {

/// A Python literal: None, bool, int, str, tuple, list or dict with str keys.
struct PyValue {
  enum class Kind { kNone, kBool, kInt, kStr, kTuple, kList, kDict };
  Kind kind = Kind::kNone;
  bool boolean = false;
  int64_t integer = 0;
  bool integer_overflow = false;  ///< the int does not fit int64 (its digits are in `text`)
  std::string text;               ///< a str's value, or an int's digits
  std::vector<PyValue> items;     ///< tuple and list elements; dict values
  std::vector<std::string> keys;  ///< dict keys, in order (items[i] is the value of keys[i])

  /// The dict value under `key`, or null.
  const PyValue* Find(std::string_view key) const;
};

/// Parses one literal filling all of `text` (surrounding whitespace allowed). Nesting deeper
/// than 16 levels, non-str dict keys, and anything that is not a literal are errors; the
/// message names `path` and the offset.
Result<PyValue> ParsePyLiteral(std::string_view text, std::string_view path);

}  // namespace parity

#endif  // PARITY_IO_PY_LITERAL_H_
