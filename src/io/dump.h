// SPDX-License-Identifier: Apache-2.0
// Dump directories (format "parity-dump", version 1): one run of a workload, op call by op call.
#ifndef PARITY_IO_DUMP_H_
#define PARITY_IO_DUMP_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/json_util.h"
#include "core/status.h"
#include "io/tensor.h"
#include "io/tensor_file.h"

namespace parity {

/// Statistics a record carries instead of data (min, max, mean, l2 over the finite elements,
/// NaN and Inf counts); any may be absent.
struct RecordedStats {
  std::optional<double> min, max, mean, l2;
  std::optional<int64_t> nan, inf;
};

/// One tensor of a record: its data in a file (an .npy, or `key` in a .safetensors shard), or
/// statistics only.
struct DumpTensorRef {
  std::string file;  ///< relative to the dump directory; empty for statistics-only tensors
  std::string key;   ///< tensor name inside a .safetensors shard; empty for .npy
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::optional<RecordedStats> stats;
  bool has_data() const { return !file.empty(); }
};

/// One op call.
struct DumpRecord {
  int64_t seq = 0;
  int64_t rank = 0;
  std::string name;
  std::string op;
  std::string pass;  ///< "forward" or "backward"
  int64_t call = 0;
  Json attrs = Json::object();
  std::vector<DumpTensorRef> inputs;
  std::vector<std::pair<std::string, DumpTensorRef>> params;  ///< in record order
  std::vector<DumpTensorRef> outputs;
  std::optional<double> time_us;
  int line = 0;  ///< 1-based line in records.jsonl
};

/// A parsed dump directory. Records keep file order; tensors are loaded on demand.
class DumpDir {
 public:
  /// Reads DIR/manifest.json and DIR/records.jsonl. Fails (exit 2) naming the file, the line
  /// and the problem on a missing or malformed manifest, a line that is not a valid record, or
  /// a record naming a tensor file that does not exist or lies outside the directory. A last
  /// line cut off mid-record (a crash) is dropped and reported in warnings().
  static Result<DumpDir> Open(const std::string& dir);

  /// Open's parser, on the two files' contents (for fuzzing); tensor files are still looked
  /// up under `dir`.
  static Result<DumpDir> Parse(const std::string& dir, std::string_view manifest,
                               std::string_view records);

  /// True when `dir` holds a manifest.json (whether or not it is valid).
  static bool IsDump(const std::string& dir);

  const std::string& path() const { return path_; }
  const Json& manifest() const { return manifest_; }
  const std::vector<DumpRecord>& records() const { return records_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

  /// "DIR/records.jsonl:LINE", for messages about a record.
  std::string Where(const DumpRecord& record) const;

  /// Loads a tensor with data, checking it against the record's dtype and shape (a "bfloat16"
  /// or float8 record over a uint16/uint8 array is reinterpreted). The last file opened is kept
  /// open for the next call (records of one shard come in a row); others are reopened, so a
  /// dump of many files does not hold many descriptors. Not thread-safe. Fails naming the
  /// record's line and the file.
  Result<Tensor> Load(const DumpRecord& record, const DumpTensorRef& ref) const;

 private:
  std::string path_;
  Json manifest_;
  std::vector<DumpRecord> records_;
  std::vector<std::string> warnings_;
  mutable std::string open_path_;
  mutable std::shared_ptr<const TensorFile> open_file_;
};

}  // namespace parity

#endif  // PARITY_IO_DUMP_H_
