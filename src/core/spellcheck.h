// SPDX-License-Identifier: Apache-2.0
// "Did you mean" suggestions for mistyped names.
#ifndef PARITY_CORE_SPELLCHECK_H_
#define PARITY_CORE_SPELLCHECK_H_

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace parity {

/// Edit distance between `a` and `b` counting insertions, deletions, substitutions and swaps of
/// two adjacent letters as one each (optimal string alignment).
std::size_t EditDistance(std::string_view a, std::string_view b);

/// The candidate closest to `word`, if it is close enough to be a plausible typo: within
/// edit distance 2, or (for words of 5+ characters) a third of the word's length; a candidate
/// that `word` is a prefix of also qualifies. Ties go to the earlier candidate.
std::optional<std::string> Suggest(std::string_view word,
                                   std::span<const std::string_view> candidates);

}  // namespace parity

#endif  // PARITY_CORE_SPELLCHECK_H_
