// SPDX-License-Identifier: Apache-2.0
#include "python/arrays.h"

#include <fmt/format.h>

#include <cstring>
#include <vector>

namespace py = pybind11;

namespace parity::python {
namespace {

// A numpy dtype's kind, item size and byte order, read through its Python attributes: the
// accessors of Debian's pybind11 (2.10) read numpy 1.x's PyArray_Descr fields in place, whose
// layout numpy 2 changed (itemsize then reads another field).
char Kind(const py::dtype& dt) { return py::getattr(dt, "kind").cast<std::string>().at(0); }
py::ssize_t ItemSize(const py::dtype& dt) {
  return py::getattr(dt, "itemsize").cast<py::ssize_t>();
}
char ByteOrder(const py::dtype& dt) {
  return py::getattr(dt, "byteorder").cast<std::string>().at(0);
}

// The parity dtype of a numpy dtype (kind and item size), if parity reads it.
std::optional<DType> FromNumpy(const py::dtype& dt) {
  const char kind = Kind(dt);
  const auto size = ItemSize(dt);
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
    if (parity::ItemSize(*as) != parity::ItemSize(*parity_dtype)) {
      ThrowIfError(Status::Invalid(
          name, fmt::format("dtype '{}' has {}-byte items, the array {}-byte ones", *dtype,
                            parity::ItemSize(*as), parity::ItemSize(*parity_dtype))));
    }
    parity_dtype = as;
  }
  const int flags = array.flags();
  if (!(flags & py::array::c_style) || !(flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_) ||
      ByteOrder(dt) == '>') {
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
  // Strides given (C order), not derived by pybind11 from the dtype's item size (see Kind).
  const py::dtype dt(format);
  std::vector<py::ssize_t> shape(tensor.meta().shape.begin(), tensor.meta().shape.end());
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = ItemSize(dt);
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  py::array out(dt, shape, strides);
  std::memcpy(out.mutable_data(), tensor.bytes().data(), tensor.bytes().size());
  return out;
}

}  // namespace parity::python
