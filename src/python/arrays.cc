// SPDX-License-Identifier: Apache-2.0
#include "python/arrays.h"

#include <fmt/format.h>

#include <cstring>
#include <vector>

namespace py = pybind11;

namespace parity::python {
namespace {

// The parity dtype of a numpy dtype (kind and item size), if parity reads it.
std::optional<DType> FromNumpy(const py::dtype& dt) {
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  switch (kind) {
    case 'b':
      return DType::kBool;
    case 'i':
      return size == 1   ? std::optional(DType::kInt8)
             : size == 2 ? std::optional(DType::kInt16)
             : size == 4 ? std::optional(DType::kInt32)
             : size == 8 ? std::optional(DType::kInt64)
                         : std::nullopt;
    case 'u':
      return size == 1   ? std::optional(DType::kUInt8)
             : size == 2 ? std::optional(DType::kUInt16)
             : size == 4 ? std::optional(DType::kUInt32)
             : size == 8 ? std::optional(DType::kUInt64)
                         : std::nullopt;
    case 'f':
      return size == 2   ? std::optional(DType::kFloat16)
             : size == 4 ? std::optional(DType::kFloat32)
             : size == 8 ? std::optional(DType::kFloat64)
                         : std::nullopt;
    default:
      return std::nullopt;
  }
}

}  // namespace

void ThrowIfError(const Status& status) {
  if (!status.ok()) throw StatusError{status};
}

Tensor ArrayTensor(const py::array& array, const std::string& name,
                   const std::optional<std::string>& dtype) {
  const py::dtype dt = array.dtype();
  std::optional<DType> parity_dtype = FromNumpy(dt);
  if (!parity_dtype) {
    ThrowIfError(Status::Invalid(
        name, fmt::format("numpy dtype '{}' is not one parity reads",
                          py::str(static_cast<py::object>(dt)).cast<std::string>())));
  }
  if (dtype) {
    const std::optional<DType> as = DTypeFromName(*dtype);
    if (!as) ThrowIfError(Status::Invalid(name, fmt::format("unknown dtype '{}'", *dtype)));
    if (ItemSize(*as) != ItemSize(*parity_dtype)) {
      ThrowIfError(
          Status::Invalid(name, fmt::format("dtype '{}' has {}-byte items, the array {}-byte ones",
                                            *dtype, ItemSize(*as), ItemSize(*parity_dtype))));
    }
    parity_dtype = as;
  }
  const int flags = array.flags();
  if (!(flags & py::array::c_style) || !(flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_) ||
      dt.byteorder() == '>') {
    ThrowIfError(
        Status::Invalid(name, "the array must be C-contiguous, aligned and native-endian"));
  }
  std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
  Result<TensorMeta> meta = MakeTensorMeta(name, name, *parity_dtype, std::move(shape));
  ThrowIfError(meta.status());
  const auto* data = static_cast<const std::byte*>(array.data());
  return Tensor(*meta, {data, meta->nbytes}, nullptr, /*zero_copy=*/true);
}

py::array TensorArray(const Tensor& tensor) {
  std::string format;
  switch (tensor.dtype()) {
    case DType::kUInt32:
      format = py::format_descriptor<uint32_t>::format();
      break;
    case DType::kFloat32:
      format = py::format_descriptor<float>::format();
      break;
    case DType::kFloat64:
      format = py::format_descriptor<double>::format();
      break;
    default:
      ThrowIfError(
          Status::Internal(fmt::format("no numpy array for dtype {}", Name(tensor.dtype()))));
  }
  py::array out(py::dtype(format),
                std::vector<py::ssize_t>(tensor.meta().shape.begin(), tensor.meta().shape.end()));
  std::memcpy(out.mutable_data(), tensor.bytes().data(), tensor.bytes().size());
  return out;
}

}  // namespace parity::python
