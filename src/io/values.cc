// SPDX-License-Identifier: Apache-2.0
#include "io/values.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/convert.h"
#include "io/tensor_file.h"

namespace parity {
namespace {

bool IsTensorFile(const std::string& path) {
  for (const char* ext : {".npy", ".npz", ".safetensors"}) {
    const std::string e(ext);
    if (path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0) {
      return true;
    }
  }
  return false;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::vector<std::string_view> Split(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    fields.push_back(Trim(line.substr(start, comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

std::optional<double> ParseNumber(std::string_view s) {
  if (s == "nan" || s == "NaN" || s == "NAN") return std::nan("");
  if (s == "inf" || s == "Inf" || s == "+inf") return INFINITY;
  if (s == "-inf" || s == "-Inf") return -INFINITY;
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double v = 0.0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

Result<std::vector<double>> ReadTensor(const std::string& path) {
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<TensorFile> file, OpenTensorFile(path));
  if (file->tensors().size() != 1) {
    return Status::Invalid(
        path, fmt::format("holds {} tensors; give a file of one", file->tensors().size()));
  }
  PARITY_ASSIGN_OR_RETURN(Tensor t, file->Load(0));
  std::vector<double> out(static_cast<std::size_t>(t.numel()));
  ConvertToFloat64(t.dtype(), t.bytes().data(), out);
  return out;
}

Result<std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Invalid(path, "can't be read (missing or not a file)");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

Result<std::vector<std::vector<double>>> ReadColumns(const std::string& path,
                                                     const std::vector<std::string>& names) {
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadText(path));
  std::vector<std::vector<double>> out(names.size());
  std::vector<std::size_t> index;
  std::size_t fields_per_row = 0;
  int line_no = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    ++line_no;
    if (Trim(line).empty()) continue;
    const std::vector<std::string_view> fields = Split(line);
    if (index.empty()) {
      for (const std::string& name : names) {
        auto it = std::find(fields.begin(), fields.end(), name);
        if (it == fields.end()) {
          return Status::Invalid(
              path, fmt::format("line {}: no column '{}' in the header", line_no, name));
        }
        index.push_back(static_cast<std::size_t>(it - fields.begin()));
      }
      fields_per_row = fields.size();
      continue;
    }
    if (fields.size() != fields_per_row) {
      return Status::Invalid(path, fmt::format("line {}: {} fields where the header has {}",
                                               line_no, fields.size(), fields_per_row));
    }
    for (std::size_t c = 0; c < names.size(); ++c) {
      const std::optional<double> v = ParseNumber(fields[index[c]]);
      if (!v) {
        return Status::Invalid(path, fmt::format("line {}: '{}' in column '{}' is not a number",
                                                 line_no, fields[index[c]], names[c]));
      }
      out[c].push_back(*v);
    }
  }
  if (index.empty()) return Status::Invalid(path, "is empty: no header line");
  return out;
}

Result<std::vector<double>> ReadValues(const std::string& path,
                                       const std::optional<std::string>& column) {
  if (IsTensorFile(path)) return ReadTensor(path);
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadText(path));
  if (column) {
    // A file whose first line is a number has no header: one value per line after all.
    std::istringstream first(text);
    std::string line;
    while (std::getline(first, line) && Trim(line).empty()) {
    }
    if (!ParseNumber(Trim(line))) {
      PARITY_ASSIGN_OR_RETURN(auto columns, ReadColumns(path, {*column}));
      return std::move(columns[0]);
    }
  }
  std::vector<double> out;
  int line_no = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    ++line_no;
    const std::string_view v = Trim(line);
    if (v.empty()) continue;
    if (v.find(',') != std::string_view::npos) {
      return Status::Invalid(
          path, fmt::format("line {}: several columns; name one with --column", line_no));
    }
    const std::optional<double> x = ParseNumber(v);
    if (!x) {
      return Status::Invalid(path, fmt::format("line {}: '{}' is not a number", line_no, v));
    }
    out.push_back(*x);
  }
  return out;
}

}  // namespace parity
