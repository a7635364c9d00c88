// SPDX-License-Identifier: Apache-2.0
// Dump directories (format "parity-dump", versions 1 and 2): one run of a workload, op call by
// op call; a distributed run as one rank<N>/ directory per rank.
#ifndef PARITY_IO_DUMP_H_
#define PARITY_IO_DUMP_H_

#include <cstddef>
#include <cstdint>
#include <map>
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
/// NaN, Inf and zero counts, a digest of the data); any may be absent.
struct RecordedStats {
  std::optional<double> min, max, mean, l2;
  std::optional<int64_t> nan, inf;
  std::optional<int64_t> zero;      ///< zero elements (version 2)
  std::optional<std::string> hash;  ///< a digest of the data, hex (version 2)
};

/// One tensor of a record: its data in a file (an .npy, or `key` in a .safetensors shard),
/// statistics only, or (version 2) neither: a tensor the dump does not hold ("not stored").
/// A tensor parity cannot compare (not stored, or of a complex dtype) says why in
/// `not_comparable`; readers judge such a tensor by nothing else (neither its data nor its
/// statistics).
struct DumpTensorRef {
  std::string file;  ///< relative to the record's directory; empty for statistics-only tensors
  std::string key;   ///< tensor name inside a .safetensors shard; empty for .npy
  std::string arg;   ///< the op's argument name ("self", "mat1"); empty when not recorded
  std::optional<int64_t> index;  ///< the position within a list argument, when it is one
  /// The recorded dtype; meaningful only when `dtype_name` is empty.
  DType dtype = DType::kFloat32;
  /// The recorded dtype's name when parity has no DType for it ("complex64", "complex128",
  /// torch's "quint8"); empty when `dtype` is the recorded one.
  std::string dtype_name;
  std::vector<int64_t> shape;  ///< empty when not recorded (shape_known is then false)
  /// False for a not-stored tensor recorded without `shape` (a nested tensor's ragged
  /// dimension): its shape is unknown, not 0-d.
  bool shape_known = true;
  std::optional<RecordedStats> stats;
  std::string not_stored;  ///< the dump's `not stored` reason, verbatim; empty when stored
  std::string layout;      ///< torch's layout name ("sparse_coo"), when recorded
  /// Why parity does not compare this tensor ("not stored: sparse_coo layout", "complex64:
  /// parity compares real dtypes only ..."); empty when it does.
  std::string not_comparable;

  /// Whether parity compares this tensor (by data or by statistics).
  bool comparable() const { return not_comparable.empty(); }
  /// Whether parity can load its data: comparable, with a file.
  bool has_data() const { return comparable() && !file.empty(); }
  /// The recorded dtype's name: parity's, else `dtype_name`.
  std::string DTypeName() const {
    return dtype_name.empty() ? std::string(Name(dtype)) : dtype_name;
  }
};

/// Where in the user's code a record's op was called (version 2 `source`, capture(...,
/// stack=True)).
struct RecordSource {
  std::string file;      ///< the path as recorded
  int64_t line = 0;      ///< 1-based (0 when the frame named none)
  std::string function;  ///< empty when not recorded
  std::string code;      ///< the source line, stripped; empty when not recorded
};

/// One op call.
struct DumpRecord {
  int64_t seq = 0;
  int64_t rank = 0;
  int64_t step = 0;  ///< the training step from 0; 0 when not recorded (version 1)
  std::string name;
  std::string op;
  std::string overload;  ///< the aten overload ("default", "Tensor"); empty when not recorded
  std::string module;    ///< the innermost module path; empty when not recorded
  std::string pass;      ///< "forward", "backward" or (version 2 only) "optimizer"
  int64_t call = 0;
  Json attrs = Json::object();
  std::vector<DumpTensorRef> inputs;
  std::vector<std::pair<std::string, DumpTensorRef>> params;  ///< in record order
  std::vector<DumpTensorRef> outputs;
  std::optional<double> time_us;
  /// Where the user's code called the op; absent when not recorded (or malformed: ignored,
  /// with a warning of DumpDir).
  std::optional<RecordSource> source;
  int line = 0;          ///< 1-based line in its records.jsonl
  std::size_t part = 0;  ///< the directory it was read from: an index into DumpDir::parts()
};

/// What a version 2 manifest records about one training step.
struct DumpStep {
  int64_t step = 0;
  std::map<std::string, std::string> generators;  ///< generator ("cpu", "cuda:0") -> digest
  std::optional<double> scale;                    ///< the GradScaler's scale during the step
  std::optional<bool> skipped;     ///< whether the GradScaler skipped the optimizer step
  std::optional<int64_t> records;  ///< how many records the step wrote
};

/// One directory holding manifest.json and records.jsonl: the whole of a plain dump, or one
/// rank<N>/ of a distributed dump. Version 1 manifests leave the version 2 fields at their
/// defaults.
struct DumpPart {
  std::string dir;
  std::optional<int64_t> dir_rank;  ///< N of rank<N>/; absent for a plain dump
  Json manifest;
  int version = 1;
  /// "modules" or "aten". Version 1 records modules; a version 2 manifest without `level`
  /// is taken as "aten", the level version 2 was made for.
  std::string level = "modules";
  std::string mode =
      "tensors";  ///< "tensors", "stats" or "hashes" (digests only); "tensors" when not recorded
  /// The algorithm of the statistics' digests ("xxh3_128", "sha256"); empty when the
  /// manifest does not say (digests of such dumps are not compared).
  std::string hash;
  int64_t rank = 0;  ///< N of rank<N>/, else the manifest's `rank` (0 when absent)
  std::optional<int64_t> world_size;
  std::map<std::string, int64_t> omitted;  ///< ops not recorded, by op, with their counts
  std::optional<int64_t> truncated_at_seq;
  std::vector<DumpStep> steps;  ///< manifest order; empty for version 1
};

/// The problem named when a file a dump reads resolves outside the dump's directory.
inline constexpr std::string_view kOutsideTheDump =
    "a symbolic link that leads outside the dump directory (parity reads only files inside it)";

/// A parsed dump. Records keep file order (rank directories in rank order); tensors are
/// loaded on demand.
class DumpDir {
 public:
  /// Reads DIR/manifest.json and DIR/records.jsonl (and later the tensor files), each only when
  /// its real path lies inside DIR's (kOutsideTheDump otherwise); when DIR has no manifest.json but
  /// has rank<N>/ subdirectories, reads each of them as one rank of a distributed dump. Fails (exit
  /// 2) naming the file, the line and the problem on a missing or malformed manifest (a version
  /// other than 1 and 2 included, or rank<N>/ manifests that disagree on version, level or mode), a
  /// line that is not a valid record, a record naming a tensor file that does not exist or lies
  /// outside its directory, a record of rank<N>/ whose rank is not N, a second record with the same
  /// (rank, step, name, pass, call) or the same (rank, seq). A last line cut off mid-record (a
  /// crash) is dropped and reported in warnings(); a record's malformed `source` is dropped the
  /// same way (the record is kept without it; one warning per directory).
  static Result<DumpDir> Open(const std::string& dir);

  /// Open's parser for one directory, on its two files' contents (for fuzzing); tensor files
  /// are still looked up under `dir`.
  static Result<DumpDir> Parse(const std::string& dir, std::string_view manifest,
                               std::string_view records);

  /// True when `dir` holds a manifest.json (whether or not it is valid), or has no
  /// manifest.json and a rank<N>/ subdirectory that holds one.
  static bool IsDump(const std::string& dir);

  const std::string& path() const { return path_; }
  /// The directories read: one for a plain dump, one per rank<N>/ in rank order.
  const std::vector<DumpPart>& parts() const { return parts_; }
  bool distributed() const { return parts_.size() > 1 || parts_.front().dir_rank.has_value(); }
  /// The first part's manifest (a plain dump's only one).
  const Json& manifest() const { return parts_.front().manifest; }
  /// The manifest of the directory `record` was read from.
  const Json& ManifestFor(const DumpRecord& record) const { return parts_[record.part].manifest; }
  /// The version, level and mode (every part's: Open rejects parts that disagree).
  int version() const { return parts_.front().version; }
  const std::string& level() const { return parts_.front().level; }
  const std::string& mode() const { return parts_.front().mode; }
  /// The manifests' omitted ops, counts summed over the parts.
  std::map<std::string, int64_t> Omitted() const;
  /// Each rank's per-step evidence from its manifest (empty for version 1).
  std::map<int64_t, std::vector<DumpStep>> StepsByRank() const;
  /// The steps of the records and the manifests, ascending; the ranks of the records and of
  /// the manifests that name one (rank<N>/, a version 2 `rank`), ascending.
  std::vector<int64_t> Steps() const;
  std::vector<int64_t> Ranks() const;

  const std::vector<DumpRecord>& records() const { return records_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

  /// "DIR/records.jsonl:LINE" (DIR the record's own directory), for messages about a record.
  std::string Where(const DumpRecord& record) const;

  /// Loads a tensor with data (has_data(); a tensor not comparable is an error naming why),
  /// checking it against the record's dtype and shape (a "bfloat16" or float8 record over a
  /// uint16/uint8 array is reinterpreted). The last file opened is kept open for the next call
  /// (records of one shard come in a row); others are reopened, so a dump of many files does
  /// not hold many descriptors. Not thread-safe. Fails naming the record's line and the file.
  Result<Tensor> Load(const DumpRecord& record, const DumpTensorRef& ref) const;

 private:
  struct Seen;  // the keys and seqs read so far, for duplicates
  DumpDir() = default;
  /// Parses one directory's files into a new part and appends its records.
  Status AddPart(const std::string& dir, std::optional<int64_t> dir_rank, std::string_view manifest,
                 std::string_view records, Seen* seen);

  /// kInvalidInput (kOutsideTheDump) when `path` resolves outside root_real_ (when set).
  Status Confined(const std::string& path) const;

  std::string path_;
  std::string root_real_;  ///< DIR's real path ("" for Parse: nothing is confined)
  std::vector<DumpPart> parts_;
  std::vector<DumpRecord> records_;
  std::vector<std::string> warnings_;
  mutable std::string open_path_;
  mutable std::shared_ptr<const TensorFile> open_file_;
};

}  // namespace parity

#endif  // PARITY_IO_DUMP_H_
