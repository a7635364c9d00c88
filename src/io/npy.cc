// SPDX-License-Identifier: Apache-2.0
#include "io/npy.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <filesystem>

#include "core/file_util.h"
#include "io/py_literal.h"

namespace parity {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;
constexpr bool kLittleEndianHost = std::endian::native == std::endian::little;

uint32_t ReadLe(std::span<const std::byte> bytes, std::size_t offset, std::size_t width) {
  uint32_t value = 0;
  for (std::size_t i = 0; i < width; ++i) {
    value |= static_cast<uint32_t>(bytes[offset + i]) << (8 * i);
  }
  return value;
}

// Why a numpy type code is not readable, or empty when it names a parity dtype.
std::string Unsupported(char kind, int size) {
  switch (kind) {
    case 'O':
      return "numpy object arrays are not supported (they hold pickled Python objects)";
    case 'V':
      return "structured or void dtypes are not supported";
    case 'c':
      return fmt::format("complex{} is not supported", size * 8);
    case 'f':
      return fmt::format("float{} ({}-byte long double) is not supported", size * 8, size);
    case 'S':
    case 'a':
    case 'U':
      return "string dtypes are not supported";
    case 'M':
    case 'm':
      return "datetime and timedelta dtypes are not supported";
    default:
      return {};
  }
}

struct Descr {
  DType dtype;
  bool byte_swapped;
};

Result<Descr> ParseDescr(std::string_view descr, std::string_view path) {
  std::string_view rest = descr;
  char order = '=';
  if (!rest.empty() && (rest[0] == '<' || rest[0] == '>' || rest[0] == '|' || rest[0] == '=')) {
    order = rest[0];
    rest.remove_prefix(1);
  }
  auto bad = [&](std::string_view why) {
    return Status::Invalid(path, fmt::format("dtype '{}': {}", descr, why));
  };
  if (rest.empty()) return bad("unknown dtype string");
  const char kind = rest[0];
  if (std::string_view("OVSaUMm").find(kind) != std::string_view::npos) {
    return bad(Unsupported(kind, 0));
  }
  int size = 0;
  for (char c : rest.substr(1)) {
    if (c < '0' || c > '9' || size > 1000) return bad("unknown dtype string");
    size = size * 10 + (c - '0');
  }
  std::optional<DType> dtype;
  switch (kind) {
    case 'b':
      if (size == 1) dtype = DType::kBool;
      break;
    case 'i':
      if (size == 1) dtype = DType::kInt8;
      if (size == 2) dtype = DType::kInt16;
      if (size == 4) dtype = DType::kInt32;
      if (size == 8) dtype = DType::kInt64;
      break;
    case 'u':
      if (size == 1) dtype = DType::kUInt8;
      if (size == 2) dtype = DType::kUInt16;
      if (size == 4) dtype = DType::kUInt32;
      if (size == 8) dtype = DType::kUInt64;
      break;
    case 'f':
      if (size == 2) dtype = DType::kFloat16;
      if (size == 4) dtype = DType::kFloat32;
      if (size == 8) dtype = DType::kFloat64;
      break;
    default:
      break;
  }
  if (!dtype) {
    const std::string why = Unsupported(kind, size);
    return bad(why.empty() ? std::string("unknown dtype string") : why);
  }
  const bool file_little = order == '<' || (order != '>' && kLittleEndianHost);
  return Descr{*dtype, file_little != kLittleEndianHost};
}

std::string_view DescrFor(DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return "|b1";
    case DType::kInt8:
      return "|i1";
    case DType::kInt16:
      return "<i2";
    case DType::kInt32:
      return "<i4";
    case DType::kInt64:
      return "<i8";
    case DType::kUInt8:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E5M2:
      return "|u1";
    case DType::kUInt16:
    case DType::kBFloat16:
      return "<u2";
    case DType::kUInt32:
      return "<u4";
    case DType::kUInt64:
      return "<u8";
    case DType::kFloat16:
      return "<f2";
    case DType::kFloat32:
      return "<f4";
    case DType::kFloat64:
      return "<f8";
  }
  return "|u1";
}

class NpyFile final : public TensorFile {
 public:
  NpyFile(ByteSource source, NpyHeader header, TensorMeta meta)
      : source_(std::move(source)), header_(std::move(header)) {
    tensors_.push_back(std::move(meta));
  }
  FileFormat format() const override { return FileFormat::kNpy; }
  const std::vector<TensorMeta>& tensors() const override { return tensors_; }
  Result<Tensor> Load(std::size_t index) const override {
    const TensorMeta& meta = tensors_.at(index);
    return MakeTensor(meta, source_.bytes.subspan(header_.data_offset, meta.nbytes), source_,
                      header_.layout);
  }

 private:
  ByteSource source_;
  NpyHeader header_;
  std::vector<TensorMeta> tensors_;
};

}  // namespace

Result<NpyHeader> ParseNpyHeader(std::span<const std::byte> bytes, std::string_view path) {
  if (bytes.size() < kMagicSize || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) {
    if (bytes.size() < kMagicSize) {
      return Status::Invalid(path, fmt::format("truncated: {} bytes, too short for an .npy "
                                               "header",
                                               bytes.size()));
    }
    return Status::Invalid(path, "wrong magic: not an .npy file");
  }
  if (bytes.size() < 10) {
    return Status::Invalid(
        path, fmt::format("truncated: {} bytes, too short for an .npy header", bytes.size()));
  }
  NpyHeader header;
  header.major_version = static_cast<int>(bytes[6]);
  header.minor_version = static_cast<int>(bytes[7]);
  std::size_t length_width = 0;
  if (header.major_version == 1 && header.minor_version == 0) {
    length_width = 2;
  } else if ((header.major_version == 2 || header.major_version == 3) &&
             header.minor_version == 0) {
    length_width = 4;
  } else {
    return Status::Invalid(path, fmt::format("unsupported .npy format version {}.{}",
                                             header.major_version, header.minor_version));
  }
  const std::size_t start = 8 + length_width;
  if (bytes.size() < start) {
    return Status::Invalid(
        path, fmt::format("truncated: {} bytes, too short for an .npy header", bytes.size()));
  }
  const std::size_t length = ReadLe(bytes, 8, length_width);
  if (length > kMaxNpyHeaderBytes) {
    return Status::Invalid(path, fmt::format("header length {} exceeds the limit of {} bytes",
                                             length, kMaxNpyHeaderBytes));
  }
  if (start + length > bytes.size()) {
    return Status::Invalid(path, fmt::format("header length {} runs past the end of the file "
                                             "({} bytes)",
                                             length, bytes.size()));
  }
  header.data_offset = start + length;
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + start, length);
  PARITY_ASSIGN_OR_RETURN(PyValue dict, ParsePyLiteral(text, path));
  if (dict.kind != PyValue::Kind::kDict) return Status::Invalid(path, "header is not a dict");
  for (const std::string& key : dict.keys) {
    if (key != "descr" && key != "fortran_order" && key != "shape") {
      return Status::Invalid(path, fmt::format("header has an unexpected key '{}'", key));
    }
  }
  const PyValue* descr = dict.Find("descr");
  const PyValue* fortran = dict.Find("fortran_order");
  const PyValue* shape = dict.Find("shape");
  if (descr == nullptr || fortran == nullptr || shape == nullptr) {
    return Status::Invalid(path, "header lacks one of 'descr', 'fortran_order', 'shape'");
  }
  if (descr->kind == PyValue::Kind::kList) {
    return Status::Invalid(path, "structured dtypes (a list 'descr') are not supported");
  }
  if (descr->kind != PyValue::Kind::kStr) return Status::Invalid(path, "'descr' is not a string");
  PARITY_ASSIGN_OR_RETURN(Descr parsed, ParseDescr(descr->text, path));
  header.dtype = parsed.dtype;
  header.layout.byte_swapped = parsed.byte_swapped;
  if (fortran->kind != PyValue::Kind::kBool) {
    return Status::Invalid(path, "'fortran_order' is not True or False");
  }
  header.layout.fortran_order = fortran->boolean;
  if (shape->kind != PyValue::Kind::kTuple && shape->kind != PyValue::Kind::kList) {
    return Status::Invalid(path, "'shape' is not a tuple");
  }
  for (const PyValue& dim : shape->items) {
    if (dim.kind != PyValue::Kind::kInt) {
      return Status::Invalid(path, "'shape' holds something other than integers");
    }
    if (dim.integer_overflow) {
      return Status::Invalid(path, fmt::format("shape dimension {} overflows 64 bits", dim.text));
    }
    header.shape.push_back(dim.integer);
  }
  return header;
}

Result<std::unique_ptr<TensorFile>> OpenNpy(ByteSource source) {
  PARITY_ASSIGN_OR_RETURN(NpyHeader header, ParseNpyHeader(source.bytes, source.path));
  std::string name = std::filesystem::path(source.path).stem().string();
  PARITY_ASSIGN_OR_RETURN(TensorMeta meta,
                          MakeTensorMeta(source.path, std::move(name), header.dtype, header.shape));
  const std::size_t available = source.bytes.size() - header.data_offset;
  if (available < meta.nbytes) {
    return Status::Invalid(source.path,
                           fmt::format("data is {} bytes, but shape {} of {} needs {}", available,
                                       ShapeString(meta.shape), Name(meta.dtype), meta.nbytes));
  }
  return std::unique_ptr<TensorFile>(
      new NpyFile(std::move(source), std::move(header), std::move(meta)));
}

std::string EncodeNpyHeader(const TensorMeta& meta) {
  std::string shape = "(";
  for (std::size_t i = 0; i < meta.shape.size(); ++i) {
    if (i > 0) shape += ", ";
    shape += std::to_string(meta.shape[i]);
  }
  if (meta.shape.size() == 1) shape += ",";
  shape += ")";
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                 DescrFor(meta.dtype), shape);
  const bool v2 = dict.size() + 1 + 10 > 65535;
  const std::size_t preamble = v2 ? 12 : 10;
  const std::size_t total = (preamble + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - preamble - dict.size() - 1, ' ');
  dict.push_back('\n');
  std::string out(kMagic, kMagicSize);
  out.push_back(static_cast<char>(v2 ? 2 : 1));
  out.push_back('\0');
  const std::size_t length = dict.size();
  for (std::size_t i = 0; i < preamble - 8; ++i)
    out.push_back(static_cast<char>(length >> (8 * i)));
  out += dict;
  return out;
}

Status WriteNpy(const std::string& path, const Tensor& tensor) {
  static_assert(kLittleEndianHost, "the .npy writer assumes a little-endian host");
  const std::string header = EncodeNpyHeader(tensor.meta());
  return WriteFileAtomically(path, {AsBytes(header), tensor.bytes()});
}

}  // namespace parity
