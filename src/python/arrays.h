// SPDX-License-Identifier: Apache-2.0
// numpy arrays as parity Tensors, without copying: the bindings' side of the buffer protocol.
#ifndef PARITY_PYTHON_ARRAYS_H_
#define PARITY_PYTHON_ARRAYS_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <optional>
#include <string>

#include "io/tensor.h"

namespace parity::python {

/// An exception that the module turns into parity.ParityError with the status's message: the
/// text the CLI prints after "parity: error: ".
struct StatusError {
  Status status;
};

/// Throws StatusError when `status` is not ok.
void ThrowIfError(const Status& status);

/// A view of `array`'s memory as a Tensor named `name` (no copy; the caller keeps `array`
/// alive as long as the Tensor is used). The array must be C-contiguous, aligned and in native
/// byte order (python/parity makes it so); `dtype` overrides its numpy dtype with a parity
/// dtype of the same item size ("bfloat16" over uint16 bits, "float8_e4m3fn" over uint8).
/// Throws StatusError naming `name` otherwise.
Tensor ArrayTensor(const pybind11::array& array, const std::string& name,
                   const std::optional<std::string>& dtype);

/// A numpy array that owns a copy of `tensor`'s bytes, of the numpy dtype of its dtype
/// (uint16 for bfloat16).
pybind11::array TensorArray(const Tensor& tensor);

}  // namespace parity::python

#endif  // PARITY_PYTHON_ARRAYS_H_
