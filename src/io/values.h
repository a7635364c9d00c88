// SPDX-License-Identifier: Apache-2.0
// Reading a vector of numbers (labels, scores, a curve's column) from a tensor file or text.
#ifndef PARITY_IO_VALUES_H_
#define PARITY_IO_VALUES_H_

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace parity {

/// The values of `path` as float64: an .npy/.npz/.safetensors file holding one tensor (any
/// shape, flattened in C order), or text: one value per line, or with `column`, a CSV file
/// whose header names the column (a text file whose first line is a number has no header and
/// is read one value per line even then). Empty lines are skipped. Fails (kInvalidInput, naming the
/// file and the line) on a value that is not a number or a file that can't be read.
Result<std::vector<double>> ReadValues(const std::string& path,
                                       const std::optional<std::string>& column);

/// The columns of a CSV file with a header, by name, each parsed as numbers.
Result<std::vector<std::vector<double>>> ReadColumns(const std::string& path,
                                                     const std::vector<std::string>& names);

}  // namespace parity

#endif  // PARITY_IO_VALUES_H_
