// SPDX-License-Identifier: Apache-2.0
#include "io/tensor_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "core/mapped_file.h"
#include "io/npy.h"
#include "io/npz.h"
#include "io/safetensors.h"

namespace parity {
namespace {

struct FormatEntry {
  FileFormat format;
  std::string_view name;
  std::string_view extension;
  bool (*sniff)(std::span<const std::byte> bytes);  ///< do the first bytes look like this format?
  Result<std::unique_ptr<TensorFile>> (*open)(ByteSource source);
};

bool StartsWith(std::span<const std::byte> bytes, std::string_view prefix) {
  return bytes.size() >= prefix.size() &&
         std::memcmp(bytes.data(), prefix.data(), prefix.size()) == 0;
}

bool SniffNpy(std::span<const std::byte> bytes) { return StartsWith(bytes, "\x93NUMPY"); }
bool SniffNpz(std::span<const std::byte> bytes) {
  return StartsWith(bytes, "PK\x03\x04") || StartsWith(bytes, "PK\x05\x06");
}
bool SniffSafetensors(std::span<const std::byte> bytes) {
  return bytes.size() > 8 && static_cast<char>(bytes[8]) == '{';
}

constexpr std::array<FormatEntry, 3> kFormats = {{
    {FileFormat::kNpy, "npy", ".npy", SniffNpy, OpenNpy},
    {FileFormat::kNpz, "npz", ".npz", SniffNpz, OpenNpz},
    {FileFormat::kSafetensors, "safetensors", ".safetensors", SniffSafetensors, OpenSafetensors},
}};

const FormatEntry& EntryFor(FileFormat format) {
  return kFormats[static_cast<std::size_t>(format)];
}

}  // namespace

std::string_view FormatName(FileFormat format) { return EntryFor(format).name; }

std::optional<FileFormat> FormatFromExtension(std::string_view path) {
  for (const FormatEntry& entry : kFormats) {
    if (path.ends_with(entry.extension)) return entry.format;
  }
  return std::nullopt;
}

Result<std::unique_ptr<TensorFile>> OpenTensorBytes(ByteSource source, FileFormat format) {
  return EntryFor(format).open(std::move(source));
}

Result<std::unique_ptr<TensorFile>> OpenTensorFile(const std::string& path) {
  PARITY_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file, MappedFile::Open(path));
  ByteSource source{path, file->bytes(), file, file.get()};
  std::optional<FileFormat> format = FormatFromExtension(path);
  if (!format) {
    for (const FormatEntry& entry : kFormats) {
      if (entry.sniff(source.bytes)) format = entry.format;
    }
  }
  if (!format) {
    return Status::Invalid(path,
                           "not a tensor file (.npy, .npz or .safetensors by name or "
                           "content)");
  }
  return OpenTensorBytes(std::move(source), *format);
}

Result<std::vector<std::string>> ListTensorFiles(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> files;
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec);
  if (ec) return Status::Invalid(dir, fmt::format("cannot read directory: {}", ec.message()));
  for (const fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec) return Status::Invalid(dir, fmt::format("cannot read directory: {}", ec.message()));
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) continue;
    const std::string file = it->path().string();
    if (FormatFromExtension(file)) files.push_back(file);
  }
  if (ec) return Status::Invalid(dir, fmt::format("cannot read directory: {}", ec.message()));
  if (files.empty()) {
    return Status::Invalid(dir, "directory holds no tensor files (.npy, .npz, .safetensors)");
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace parity
