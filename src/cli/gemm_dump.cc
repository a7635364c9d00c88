// SPDX-License-Identifier: Apache-2.0
#include "cli/gemm_dump.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "core/version.h"
#include "io/npy.h"
#include "io/tensor.h"

namespace parity::cli {
namespace {

namespace fs = std::filesystem;

// Writes `bits` (n×n of `dtype`) as DIR/tensors/<file> and returns the record's tensor entry.
Result<Json> WriteMatrix(const std::string& dir, const std::string& file, DType dtype, int64_t n,
                         const std::vector<std::byte>& bits) {
  PARITY_ASSIGN_OR_RETURN(TensorMeta meta, MakeTensorMeta(file, file, dtype, {n, n}));
  if (meta.nbytes != bits.size()) {
    return Status::Internal(
        fmt::format("{}: {} bytes for a {}x{} {} matrix", file, bits.size(), n, n, Name(dtype)));
  }
  const std::string relative = "tensors/" + file;
  PARITY_RETURN_IF_ERROR(
      WriteNpy((fs::path(dir) / relative).string(), Tensor::Owned(std::move(meta), bits)));
  return Json{{"file", relative}, {"dtype", Name(dtype)}, {"shape", {n, n}}};
}

}  // namespace

Result<GemmDumpWriter> GemmDumpWriter::Create(const std::string& dir, const Json& platform) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec))) {
    return Status::Invalid(dir, "--gemm-dump: exists and is not an empty directory");
  }
  fs::create_directories(fs::path(dir) / "tensors", ec);
  if (ec) return Status::Invalid(dir, fmt::format("--gemm-dump: cannot create: {}", ec.message()));
  const Json manifest = {{"format", "parity-dump"},
                         {"version", 1},
                         {"platform", platform},
                         {"framework", {{"name", "parity bench"}, {"version", kParityVersion}}}};
  std::ofstream out(fs::path(dir) / "manifest.json");
  out << manifest.dump(2) << "\n";
  std::ofstream records(fs::path(dir) / "records.jsonl");
  if (!out || !records) return Status::Invalid(dir, "--gemm-dump: cannot write the manifest");
  GemmDumpWriter writer;
  writer.dir_ = dir;
  return writer;
}

Status GemmDumpWriter::Add(const bench::GemmOutput& output) {
  const std::string name = fmt::format("gemm.{}.n{}", output.label, output.n);
  if (!written_.insert(name).second) return Status::Ok();  // a later run of --repeat
  const std::string stem = fmt::format("{:06d}_gemm_{}_n{}", seq_, output.label, output.n);
  Json record = {{"seq", seq_},       {"name", name}, {"op", "matmul"},
                 {"pass", "forward"}, {"call", 0},    {"attrs", Json::object()}};
  if (!output.implementation.empty()) record["attrs"]["implementation"] = output.implementation;
  PARITY_ASSIGN_OR_RETURN(Json a,
                          WriteMatrix(dir_, stem + "_in0.npy", output.dtype, output.n, output.a));
  PARITY_ASSIGN_OR_RETURN(Json b,
                          WriteMatrix(dir_, stem + "_in1.npy", output.dtype, output.n, output.b));
  PARITY_ASSIGN_OR_RETURN(Json c,
                          WriteMatrix(dir_, stem + "_out0.npy", output.dtype, output.n, output.c));
  record["inputs"] = Json::array({std::move(a), std::move(b)});
  record["outputs"] = Json::array({std::move(c)});
  std::ofstream records(fs::path(dir_) / "records.jsonl", std::ios::app);
  records << record.dump() << "\n";
  if (!records) return Status::Invalid(dir_, "--gemm-dump: cannot append to records.jsonl");
  ++seq_;
  return Status::Ok();
}

}  // namespace parity::cli
