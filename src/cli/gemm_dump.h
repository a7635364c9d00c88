// SPDX-License-Identifier: Apache-2.0
// `parity bench --gemm-dump DIR`: the gemm suite's operands and products written as a
// parity-dump directory (one `matmul` record per product), so that `parity compare` and
// `parity explain` can set one platform's GEMMs against another's.
#ifndef PARITY_CLI_GEMM_DUMP_H_
#define PARITY_CLI_GEMM_DUMP_H_

#include <set>
#include <string>

#include "bench/suite.h"
#include "core/json_util.h"
#include "core/status.h"

namespace parity::cli {

/// Writes records into a new parity-dump directory. Create() makes DIR (which must not exist,
/// or be empty) with its manifest; each Add() writes A, B and C as .npy files and appends a
/// record named "gemm.<label>.n<N>", so dumps from two backends match record by record. With
/// --repeat, only the first run's products are written.
class GemmDumpWriter {
 public:
  /// `platform` goes into the manifest (backend, device).
  static Result<GemmDumpWriter> Create(const std::string& dir, const Json& platform);
  Status Add(const bench::GemmOutput& output);

 private:
  std::string dir_;
  int64_t seq_ = 0;
  std::set<std::string> written_;
};

}  // namespace parity::cli

#endif  // PARITY_CLI_GEMM_DUMP_H_
