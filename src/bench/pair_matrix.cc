// SPDX-License-Identifier: Apache-2.0
#include "bench/pair_matrix.h"

#include <fmt/format.h>

#include <map>

#include "bench/stats.h"
#include "core/text_table.h"

namespace parity::bench {

std::string PairMatrixText(const std::vector<BenchResult>& results, int count,
                           std::string_view corner,
                           const std::function<std::string(const BenchResult&)>& title) {
  // cells[title][row][column]
  std::map<std::string, std::map<int, std::map<int, std::string>>> cells;
  std::vector<std::string> order;
  std::string text, invalid;
  for (const BenchResult& r : results) {
    std::string size;
    if (const auto it = r.params.find("size"); it != r.params.end()) {
      size = " " + (it->is_string() ? it->get<std::string>() : it->dump());
    }
    if (r.outcome == Outcome::kSkipped) {
      text += fmt::format("{}{}: SKIP: {}\n", r.benchmark, size, r.reason);
      continue;
    }
    if (r.outcome == Outcome::kInvalid) {
      invalid += fmt::format("{}{}: INVALID: {}\n", r.benchmark, size, r.reason);
    }
    const std::string name = title(r);
    if (!cells.contains(name)) order.push_back(name);
    const int src = r.params.value("src", 0), dst = r.params.value("dst", 0);
    const std::string cell = r.outcome == Outcome::kInvalid || r.samples.empty()
                                 ? "INVALID"
                                 : fmt::format("{:.3g}", Median(r.samples));
    cells[name][src][dst] = cell;
    if (r.params.value("direction", "") == "bi") cells[name][dst][src] = cell;
  }
  for (const std::string& name : order) {
    std::vector<std::string> header = {std::string(corner)};
    std::vector<bool> right = {false};
    for (int c = 0; c < count; ++c) {
      header.push_back(std::to_string(c));
      right.push_back(true);
    }
    Table table(header, right);
    for (int row = 0; row < count; ++row) {
      std::vector<std::string> line = {std::to_string(row)};
      const auto& m = cells[name][row];
      for (int c = 0; c < count; ++c) {
        line.push_back(row == c ? "-" : (m.contains(c) ? m.at(c) : ""));
      }
      table.AddRow(line);
    }
    text += fmt::format("\n{}\n{}", name, table.Render("  "));
  }
  if (!invalid.empty()) text += "\n" + invalid;
  return text;
}

}  // namespace parity::bench
