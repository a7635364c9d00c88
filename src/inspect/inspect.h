// SPDX-License-Identifier: Apache-2.0
// `parity inspect`: the tensors of files and directories with their statistics, and what a
// dump directory covers. Shared by the CLI and the Python bindings.
#ifndef PARITY_INSPECT_INSPECT_H_
#define PARITY_INSPECT_INSPECT_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"
#include "io/tensor.h"

namespace parity {

/// One tensor's entry of the report's "tensors": name, dtype, shape, numel, min, max, mean
/// and std over the finite elements (null when there is none), nan, inf and zeros.
Result<Json> InspectTensorJson(const Tensor& tensor);

struct InspectOptions {
  std::vector<std::string> paths;  ///< tensor files, directories of them, dump directories
  /// Given each file's and dump's human-readable table as soon as it is done; may be empty.
  std::function<void(const std::string&)> on_text;
};

/// {"format":"parity-inspect","version":1,"files":[{path, format, tensors}], and for dump
/// directories "dumps":[{path, coverage, not_comparable}] (and "coverage" when there is one)}.
/// A dump's `not_comparable` lists the tensors parity does not compare (not stored, complex)
/// with their record (seq, rank, step, name, pass, call), `tensor` ("input.0"), dtype, shape
/// (null when unknown), layout and file where recorded, and the reason; their files (complex
/// .npy) are not read as files. Fails, naming the file, on the first unreadable or malformed
/// input.
Result<Json> RunInspect(const InspectOptions& options);

}  // namespace parity

#endif  // PARITY_INSPECT_INSPECT_H_
