// SPDX-License-Identifier: Apache-2.0
#include "core/text_table.h"

#include <algorithm>

namespace parity {

Table::Table(std::vector<std::string> header, std::vector<bool> numeric)
    : numeric_(std::move(numeric)) {
  rows_.push_back(std::move(header));
}

void Table::AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

std::string Table::Render(const std::string& indent) const {
  std::vector<std::size_t> width;
  for (const auto& row : rows_) {
    if (row.size() > width.size()) width.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows_) {
    std::string line = indent;
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::string pad(width[i] - row[i].size(), ' ');
      const bool right = i < numeric_.size() && numeric_[i];
      if (i > 0) line += "  ";
      line += right ? pad + row[i] : row[i] + (i + 1 < row.size() ? pad : "");
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace parity
