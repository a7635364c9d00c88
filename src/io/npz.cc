// SPDX-License-Identifier: Apache-2.0
#include "io/npz.h"

#include <fmt/format.h>
#include <zip.h>

#include <algorithm>
#include <array>
#include <vector>

#include "io/npy.h"

namespace parity {
namespace {

struct ZipDiscard {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};
struct ZipFileClose {
  void operator()(zip_file_t* file) const { zip_fclose(file); }
};
using ZipPtr = std::unique_ptr<zip_t, ZipDiscard>;
using ZipFilePtr = std::unique_ptr<zip_file_t, ZipFileClose>;

constexpr std::size_t kFirstChunk = std::size_t{1} << 20;

struct Member {
  zip_uint64_t index = 0;
  std::string where;  // "archive.npz: member 'x.npy'", for messages
  NpyHeader header;
  uint64_t declared_size = 0;
};

class NpzFile final : public TensorFile {
 public:
  NpzFile(ByteSource source, ZipPtr archive)
      : source_(std::move(source)), zip_(std::move(archive)) {}

  Status Scan();

  FileFormat format() const override { return FileFormat::kNpz; }
  const std::vector<TensorMeta>& tensors() const override { return tensors_; }
  Result<Tensor> Load(std::size_t index) const override;

 private:
  Result<ZipFilePtr> OpenMember(const Member& member) const {
    zip_file_t* file = zip_fopen_index(zip_.get(), member.index, 0);
    if (file == nullptr) {
      return Status::Invalid(member.where, zip_error_strerror(zip_get_error(zip_.get())));
    }
    return ZipFilePtr(file);
  }

  // Reads up to out.size() bytes; returns how many were read (fewer only at the end).
  static Result<std::size_t> ReadSome(zip_file_t* file, std::span<std::byte> out,
                                      const std::string& where) {
    std::size_t got = 0;
    while (got < out.size()) {
      const zip_int64_t n = zip_fread(file, out.data() + got, out.size() - got);
      if (n < 0) return Status::Invalid(where, zip_file_strerror(file));
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    return got;
  }

  ByteSource source_;
  ZipPtr zip_;
  std::vector<Member> members_;
  std::vector<TensorMeta> tensors_;
};

Status NpzFile::Scan() {
  const zip_int64_t entries = zip_get_num_entries(zip_.get(), 0);
  for (zip_int64_t i = 0; i < entries; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(zip_.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0) {
      return Status::Invalid(source_.path, zip_error_strerror(zip_get_error(zip_.get())));
    }
    const std::string name = (st.valid & ZIP_STAT_NAME) ? st.name : "";
    if (name.ends_with('/')) continue;  // a directory entry holds nothing
    Member member;
    member.index = static_cast<zip_uint64_t>(i);
    member.where = fmt::format("{}: member '{}'", source_.path, name);
    if (!name.ends_with(".npy")) return Status::Invalid(member.where, "not an .npy file");
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE) {
      return Status::Invalid(member.where, "encrypted members are not supported");
    }
    member.declared_size = (st.valid & ZIP_STAT_SIZE) ? st.size : 0;

    // Read the preamble, then exactly as much header as it announces.
    PARITY_ASSIGN_OR_RETURN(ZipFilePtr file, OpenMember(member));
    std::vector<std::byte> head(12);
    PARITY_ASSIGN_OR_RETURN(std::size_t got, ReadSome(file.get(), head, member.where));
    head.resize(got);
    if (got >= 10) {
      const bool v1 = static_cast<int>(head[6]) == 1;
      std::size_t length = static_cast<std::size_t>(head[8]) | static_cast<std::size_t>(head[9])
                                                                   << 8;
      if (!v1 && got >= 12) {
        length |= static_cast<std::size_t>(head[10]) << 16 | static_cast<std::size_t>(head[11])
                                                                 << 24;
      }
      const std::size_t want = std::min(length, kMaxNpyHeaderBytes + 1) + (v1 ? 10 : 12);
      if (want > got) {
        head.resize(want);
        PARITY_ASSIGN_OR_RETURN(std::size_t more,
                                ReadSome(file.get(), std::span(head).subspan(got), member.where));
        head.resize(got + more);
      }
    }
    PARITY_ASSIGN_OR_RETURN(member.header, ParseNpyHeader(head, member.where));
    std::string tensor_name = name.substr(0, name.size() - 4);
    PARITY_ASSIGN_OR_RETURN(
        TensorMeta meta, MakeTensorMeta(member.where, std::move(tensor_name), member.header.dtype,
                                        member.header.shape));
    const uint64_t needed = member.header.data_offset + uint64_t{meta.nbytes};
    if (member.declared_size < needed) {
      return Status::Invalid(
          member.where,
          fmt::format("data is {} bytes, but shape {} of {} needs {}",
                      member.declared_size -
                          std::min<uint64_t>(member.declared_size, member.header.data_offset),
                      ShapeString(meta.shape), Name(meta.dtype), meta.nbytes));
    }
    members_.push_back(std::move(member));
    tensors_.push_back(std::move(meta));
  }
  return Status::Ok();
}

Result<Tensor> NpzFile::Load(std::size_t index) const {
  const Member& member = members_.at(index);
  const TensorMeta& meta = tensors_.at(index);
  PARITY_ASSIGN_OR_RETURN(ZipFilePtr file, OpenMember(member));
  std::vector<std::byte> skip(member.header.data_offset);
  PARITY_ASSIGN_OR_RETURN(std::size_t skipped, ReadSome(file.get(), skip, member.where));
  if (skipped != skip.size()) return Status::Invalid(member.where, "header cut short");

  // Grow the buffer with the data actually decompressed, never trusting the claimed size.
  std::vector<std::byte> data(std::min(meta.nbytes, kFirstChunk));
  std::size_t got = 0;
  while (got < meta.nbytes) {
    if (got == data.size()) data.resize(std::min(meta.nbytes, data.size() * 2));
    PARITY_ASSIGN_OR_RETURN(std::size_t n,
                            ReadSome(file.get(), std::span(data).subspan(got), member.where));
    if (n == 0) break;
    got += n;
  }
  if (got < meta.nbytes) {
    return Status::Invalid(member.where,
                           fmt::format("data is {} bytes, but shape {} of {} needs {}", got,
                                       ShapeString(meta.shape), Name(meta.dtype), meta.nbytes));
  }
  // Drain the member so that libzip checks its CRC.
  std::array<std::byte, 4096> rest{};
  for (;;) {
    PARITY_ASSIGN_OR_RETURN(std::size_t n, ReadSome(file.get(), rest, member.where));
    if (n == 0) break;
  }
  const RawLayout layout = member.header.layout;
  if (!layout.byte_swapped && !(layout.fortran_order && meta.shape.size() > 1)) {
    return Tensor::Owned(meta, std::move(data));
  }
  auto owned = std::make_shared<std::vector<std::byte>>(std::move(data));
  ByteSource decompressed{member.where, *owned, owned};
  return MakeTensor(meta, *owned, decompressed, layout);
}

}  // namespace

Result<std::unique_ptr<TensorFile>> OpenNpz(ByteSource source) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* zsource =
      zip_source_buffer_create(source.bytes.data(), source.bytes.size(), 0, &error);
  if (zsource == nullptr) {
    Status status = Status::Invalid(source.path, zip_error_strerror(&error));
    zip_error_fini(&error);
    return status;
  }
  zip_t* archive = zip_open_from_source(zsource, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  if (archive == nullptr) {
    zip_source_free(zsource);
    Status status = Status::Invalid(
        source.path,
        fmt::format("not a readable .npz (zip) archive: {}", zip_error_strerror(&error)));
    zip_error_fini(&error);
    return status;
  }
  zip_error_fini(&error);
  auto file = std::make_unique<NpzFile>(std::move(source), ZipPtr(archive));
  PARITY_RETURN_IF_ERROR(file->Scan());
  return std::unique_ptr<TensorFile>(std::move(file));
}

}  // namespace parity
