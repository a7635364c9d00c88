// SPDX-License-Identifier: Apache-2.0
// A request's query parameters as `parity serve`'s API reads them: unknown names and
// malformed or out-of-range values refused with the parameter named.
#ifndef PARITY_SERVE_PARAMS_H_
#define PARITY_SERVE_PARAMS_H_

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace parity::serve {

/// The longest parameter value accepted.
inline constexpr std::size_t kMaxParamBytes = 1024;

class Params {
 public:
  Params() = default;
  /// The parameters by name; a name given twice keeps its last value.
  explicit Params(std::map<std::string, std::string> values) : values_(std::move(values)) {}

  /// kInvalidInput "parameter: problem" for a name not in `known` (with "did you mean"), or a
  /// value longer than kMaxParamBytes.
  Status Check(std::initializer_list<std::string_view> known) const;

  bool Has(std::string_view name) const { return values_.count(std::string(name)) > 0; }
  /// The value, "" when absent.
  std::string Text(std::string_view name) const;
  /// A whole number in [min, max]; nothing when absent. kInvalidInput naming the parameter.
  Result<std::optional<std::int64_t>> Int(std::string_view name, std::int64_t min,
                                          std::int64_t max) const;
  /// A finite number in [min, max]; nothing when absent.
  Result<std::optional<double>> Number(std::string_view name, double min, double max) const;

 private:
  std::map<std::string, std::string> values_;
};

/// A page of a list: `offset` and `limit` read from the parameters of those names, the limit
/// at most `max_limit` (default `default_limit`).
struct Page {
  std::size_t offset = 0, limit = 0;
};
Result<Page> ReadPage(const Params& params, std::size_t default_limit, std::size_t max_limit);

}  // namespace parity::serve

#endif  // PARITY_SERVE_PARAMS_H_
