// SPDX-License-Identifier: Apache-2.0
#include "io/safetensors.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <unordered_set>
#include <utility>

#include "core/file_util.h"

namespace parity {
namespace {

using Json = nlohmann::ordered_json;

struct CodeEntry {
  DType dtype;
  std::string_view code;
};

constexpr std::array<CodeEntry, 15> kCodes = {{
    {DType::kBool, "BOOL"},
    {DType::kUInt8, "U8"},
    {DType::kInt8, "I8"},
    {DType::kInt16, "I16"},
    {DType::kUInt16, "U16"},
    {DType::kInt32, "I32"},
    {DType::kUInt32, "U32"},
    {DType::kInt64, "I64"},
    {DType::kUInt64, "U64"},
    {DType::kFloat16, "F16"},
    {DType::kBFloat16, "BF16"},
    {DType::kFloat32, "F32"},
    {DType::kFloat64, "F64"},
    {DType::kFloat8E4M3FN, "F8_E4M3"},
    {DType::kFloat8E5M2, "F8_E5M2"},
}};

constexpr int kMaxJsonDepth = 4;

struct Entry {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t tensor = 0;  // index into tensors
};

class SafetensorsFile final : public TensorFile {
 public:
  SafetensorsFile(ByteSource source, std::size_t buffer_offset, std::vector<TensorMeta> tensors,
                  std::vector<std::size_t> begins)
      : source_(std::move(source)),
        buffer_offset_(buffer_offset),
        tensors_(std::move(tensors)),
        begins_(std::move(begins)) {}

  FileFormat format() const override { return FileFormat::kSafetensors; }
  const std::vector<TensorMeta>& tensors() const override { return tensors_; }
  Result<Tensor> Load(std::size_t index) const override {
    const TensorMeta& meta = tensors_.at(index);
    return MakeTensor(meta, source_.bytes.subspan(buffer_offset_ + begins_[index], meta.nbytes),
                      source_, RawLayout{});
  }

 private:
  ByteSource source_;
  std::size_t buffer_offset_;
  std::vector<TensorMeta> tensors_;
  std::vector<std::size_t> begins_;
};

struct DepthExceeded {};

Result<Json> ParseHeaderJson(std::string_view text, const std::string& path) {
  std::unordered_set<std::string> keys;
  std::string duplicate;
  Json::parser_callback_t guard = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (depth > kMaxJsonDepth) throw DepthExceeded{};
    if (event == Json::parse_event_t::key && depth == 1 && duplicate.empty() &&
        !keys.insert(parsed.get<std::string>()).second) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  try {
    Json header = Json::parse(text, guard);
    if (!duplicate.empty()) {
      return Status::Invalid(path, fmt::format("header names tensor '{}' twice", duplicate));
    }
    return header;
  } catch (const DepthExceeded&) {
    return Status::Invalid(path, "header JSON is nested too deeply");
  } catch (const Json::exception& e) {
    return Status::Invalid(path, fmt::format("header is not valid JSON: {}", e.what()));
  }
}

bool IsUnsigned(const Json& value) { return value.is_number_unsigned(); }

}  // namespace

std::string_view SafetensorsDTypeCode(DType dtype) {
  for (const CodeEntry& entry : kCodes) {
    if (entry.dtype == dtype) return entry.code;
  }
  return "";
}

std::optional<DType> DTypeFromSafetensorsCode(std::string_view code) {
  for (const CodeEntry& entry : kCodes) {
    if (entry.code == code) return entry.dtype;
  }
  return std::nullopt;
}

Result<std::unique_ptr<TensorFile>> OpenSafetensors(ByteSource source) {
  const std::string& path = source.path;
  const std::span<const std::byte> bytes = source.bytes;
  if (bytes.size() < 8) {
    return Status::Invalid(path, fmt::format("truncated: {} bytes, a .safetensors file starts "
                                             "with an 8-byte header size",
                                             bytes.size()));
  }
  uint64_t header_size = 0;
  for (int i = 0; i < 8; ++i) header_size |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  if (header_size > kMaxSafetensorsHeaderBytes) {
    return Status::Invalid(path, fmt::format("header size {} exceeds the format's limit of {} "
                                             "bytes",
                                             header_size, kMaxSafetensorsHeaderBytes));
  }
  if (header_size > bytes.size() - 8) {
    return Status::Invalid(path, fmt::format("header size {} runs past the end of the file "
                                             "({} bytes)",
                                             header_size, bytes.size()));
  }
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + 8, header_size);
  if (text.empty() || text.front() != '{') {
    return Status::Invalid(path, "header does not start with '{': not a .safetensors file");
  }
  PARITY_ASSIGN_OR_RETURN(Json header, ParseHeaderJson(text, path));
  if (!header.is_object()) return Status::Invalid(path, "header is not a JSON object");

  const std::size_t buffer_offset = 8 + static_cast<std::size_t>(header_size);
  const std::size_t buffer_size = bytes.size() - buffer_offset;
  std::vector<TensorMeta> tensors;
  std::vector<Entry> entries;
  for (auto item = header.begin(); item != header.end(); ++item) {
    const std::string& name = item.key();
    const Json& value = item.value();
    if (name == "__metadata__") {
      if (!value.is_object()) return Status::Invalid(path, "__metadata__ is not an object");
      for (const auto& [key, item] : value.items()) {
        if (!item.is_string()) {
          return Status::Invalid(path, fmt::format("__metadata__ value '{}' is not a string", key));
        }
      }
      continue;
    }
    auto bad = [&](std::string_view why) {
      return Status::Invalid(path, fmt::format("tensor '{}': {}", name, why));
    };
    if (!value.is_object()) return bad("entry is not an object");
    const auto dtype_it = value.find("dtype");
    const auto shape_it = value.find("shape");
    const auto offsets_it = value.find("data_offsets");
    if (dtype_it == value.end() || shape_it == value.end() || offsets_it == value.end()) {
      return bad("entry lacks one of 'dtype', 'shape', 'data_offsets'");
    }
    if (!dtype_it->is_string()) return bad("'dtype' is not a string");
    const std::string code = dtype_it->get<std::string>();
    const std::optional<DType> dtype = DTypeFromSafetensorsCode(code);
    if (!dtype) return bad(fmt::format("unknown or unsupported dtype '{}'", code));
    if (!shape_it->is_array()) return bad("'shape' is not an array");
    std::vector<int64_t> shape;
    for (const Json& dim : *shape_it) {
      if (!IsUnsigned(dim)) return bad("'shape' holds something other than non-negative integers");
      const auto d = dim.get<uint64_t>();
      if (d > static_cast<uint64_t>(INT64_MAX)) return bad("shape dimension overflows 64 bits");
      shape.push_back(static_cast<int64_t>(d));
    }
    if (!offsets_it->is_array() || offsets_it->size() != 2 || !IsUnsigned((*offsets_it)[0]) ||
        !IsUnsigned((*offsets_it)[1])) {
      return bad("'data_offsets' is not a pair of non-negative integers");
    }
    const auto begin = (*offsets_it)[0].get<uint64_t>();
    const auto end = (*offsets_it)[1].get<uint64_t>();
    if (begin > end || end > buffer_size) {
      return bad(fmt::format("data_offsets [{}, {}] out of range (the data buffer is {} bytes)",
                             begin, end, buffer_size));
    }
    PARITY_ASSIGN_OR_RETURN(TensorMeta meta, MakeTensorMeta(path, name, *dtype, std::move(shape)));
    if (end - begin != meta.nbytes) {
      return bad(fmt::format("data_offsets [{}, {}] span {} bytes, but shape {} of {} needs {}",
                             begin, end, end - begin, ShapeString(meta.shape), Name(meta.dtype),
                             meta.nbytes));
    }
    entries.push_back(
        {static_cast<std::size_t>(begin), static_cast<std::size_t>(end), tensors.size()});
    tensors.push_back(std::move(meta));
  }

  // The tensors must tile the buffer: sorted by offset, each starts where the previous ends.
  std::vector<Entry> sorted = entries;
  std::sort(sorted.begin(), sorted.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  std::size_t covered = 0;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const Entry& e = sorted[i];
    if (e.begin < covered) {
      const Entry& previous = sorted[i - 1];
      return Status::Invalid(path,
                             fmt::format("tensors '{}' and '{}' overlap in the data buffer",
                                         tensors[previous.tensor].name, tensors[e.tensor].name));
    }
    if (e.begin > covered) {
      return Status::Invalid(
          path, fmt::format("data buffer bytes [{}, {}) belong to no tensor", covered, e.begin));
    }
    covered = e.end;
  }
  if (covered != buffer_size) {
    return Status::Invalid(
        path, fmt::format("data buffer bytes [{}, {}) belong to no tensor", covered, buffer_size));
  }
  std::vector<std::size_t> begins(entries.size());
  for (const Entry& e : entries) begins[e.tensor] = e.begin;
  return std::unique_ptr<TensorFile>(
      new SafetensorsFile(std::move(source), buffer_offset, std::move(tensors), std::move(begins)));
}

Status WriteSafetensors(const std::string& path, const std::vector<Tensor>& tensors,
                        const std::map<std::string, std::string>& metadata) {
  Json header = Json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::size_t offset = 0;
  std::unordered_set<std::string> names;
  for (const Tensor& tensor : tensors) {
    const TensorMeta& meta = tensor.meta();
    if (meta.name == "__metadata__" || !names.insert(meta.name).second) {
      return Status::Invalid(
          path, fmt::format("cannot write tensor name '{}' twice or reserved", meta.name));
    }
    header[meta.name] = {{"dtype", SafetensorsDTypeCode(meta.dtype)},
                         {"shape", meta.shape},
                         {"data_offsets", {offset, offset + meta.nbytes}}};
    offset += meta.nbytes;
  }
  std::string text = header.dump();
  text.append((8 - (text.size() % 8)) % 8, ' ');
  std::string prefix(8, '\0');
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>(uint64_t{text.size()} >> (8 * i));
  prefix += text;
  std::vector<std::span<const std::byte>> pieces = {AsBytes(prefix)};
  for (const Tensor& tensor : tensors) pieces.push_back(tensor.bytes());
  return WriteFileAtomically(path, pieces);
}

}  // namespace parity
