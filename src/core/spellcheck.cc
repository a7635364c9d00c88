// SPDX-License-Identifier: Apache-2.0
#include "core/spellcheck.h"

#include <algorithm>
#include <vector>

namespace parity {

std::size_t EditDistance(std::string_view a, std::string_view b) {
  // Three rows of the optimal-string-alignment table: the one before, the last, this one.
  std::vector<std::size_t> before(b.size() + 1), last(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) last[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = last[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({last[j] + 1, row[j - 1] + 1, substitute});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], before[j - 2] + 1);  // adjacent letters swapped
      }
    }
    std::swap(before, last);
    std::swap(last, row);
  }
  return last[b.size()];
}

std::optional<std::string> Suggest(std::string_view word,
                                   std::span<const std::string_view> candidates) {
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (std::string_view candidate : candidates) {
    std::size_t d = EditDistance(word, candidate);
    if (word.size() >= 3 && candidate.starts_with(word)) d = std::min<std::size_t>(d, 1);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(candidate);
    }
  }
  return best;
}

}  // namespace parity
