// SPDX-License-Identifier: Apache-2.0
// Plain-text tables for human-readable reports.
#ifndef PARITY_CORE_TEXT_TABLE_H_
#define PARITY_CORE_TEXT_TABLE_H_

#include <string>
#include <vector>

namespace parity {

/// Columns padded to their widest cell; columns marked numeric are right-aligned; the last
/// column is not padded.
class Table {
 public:
  /// `numeric[i]` right-aligns column i; missing entries mean left-aligned.
  explicit Table(std::vector<std::string> header, std::vector<bool> numeric = {});
  void AddRow(std::vector<std::string> row);
  /// The table, each line prefixed by `indent` and ended with '\n'.
  std::string Render(const std::string& indent = "") const;

 private:
  std::vector<std::vector<std::string>> rows_;  // rows_[0] is the header
  std::vector<bool> numeric_;
};

}  // namespace parity

#endif  // PARITY_CORE_TEXT_TABLE_H_
