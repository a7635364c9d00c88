// SPDX-License-Identifier: Apache-2.0
// The float64 operator oracle: each recorded op recomputed in float64 from the inputs, params
// and attrs its platform saw.
#ifndef PARITY_ORACLE_ORACLE_H_
#define PARITY_ORACLE_ORACLE_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"
#include "io/tensor.h"

namespace parity {

/// A float64 array in C order.
struct Array {
  std::vector<int64_t> shape;
  std::vector<double> data;

  int64_t numel() const;
  /// The array of `shape` filled with `value`.
  static Array Filled(std::vector<int64_t> shape, double value = 0.0);
};

/// A tensor's values as float64 (exact for every float dtype).
Result<Array> ToArray(const Tensor& tensor);

/// An array rounded to `dtype` (nearest even), as a Tensor named `name`.
Tensor FromArray(const Array& array, DType dtype, const std::string& name);

/// One op call to replay: the op, its attrs, and its tensors as float64.
struct OpCall {
  std::string op;
  Json attrs = Json::object();
  /// The recorded dtype of each input (rms_norm's default eps is the first one's machine
  /// epsilon; a bool attention mask keeps rather than adds).
  std::vector<DType> input_dtypes;
  std::vector<Array> inputs;
  /// The schema argument each input was passed as ("self", "mat1", "tensors"), parallel to
  /// `inputs`; empty when the record names none (version 1 dumps, calls built by hand).
  std::vector<std::string> input_args;
  /// Each input's position within its list argument (aten's `indices` of index.Tensor, whose
  /// None entries are not recorded), parallel to `inputs` where recorded; -1 when it is none.
  std::vector<int64_t> input_positions;
  std::vector<std::pair<std::string, Array>> params;
  /// The recorded outputs: dropout recovers its mask from them; nothing else reads them.
  std::vector<Array> recorded_outputs;

  /// The param named `name`, or null.
  const Array* Param(std::string_view name) const;
};

/// Recomputes an op in float64. Fails with kInvalidInput (a "not replayable" reason, never a
/// crash) when the op has no replay here or its inputs and attrs don't fit it.
Result<std::vector<Array>> Replay(const OpCall& call);

/// How many of the replay's `outputs` lead that are the op's values: the rest are the
/// record's own, copied, and not judged (a GPU attention kernel's sequence offsets, RNG state
/// and debug placeholders). Every output for all other ops.
std::size_t ValueOutputs(const OpCall& call, std::size_t outputs);

/// Whether `op` has a float64 replay.
bool Replayable(std::string_view op);

/// The replayable op names, for documentation and listings.
std::vector<std::string_view> ReplayableOps();

}  // namespace parity

#endif  // PARITY_ORACLE_ORACLE_H_
