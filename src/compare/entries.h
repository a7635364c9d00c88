// SPDX-License-Identifier: Apache-2.0
// What `parity compare` compares: the tensors of two (or three) inputs, paired.
#ifndef PARITY_COMPARE_ENTRIES_H_
#define PARITY_COMPARE_ENTRIES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "io/dump.h"
#include "io/tensor.h"
#include "io/tensor_file.h"

namespace parity {

struct OpenFileCache;  // the tensor file a side opened last

/// One tensor of one input: from a tensor file, or an input, param or output of a dump record.
struct Entry {
  std::string key;   ///< what pairs it with the other side
  std::string name;  ///< shown in reports
  TensorMeta meta;   ///< dtype and shape (meta.name: the tensor's own name)
  std::string path;  ///< plain files: the file and the tensor's index in it
  std::size_t index = 0;
  std::shared_ptr<OpenFileCache> cache;
  const DumpDir* dump = nullptr;  ///< dumps: the record and the tensor in it
  const DumpRecord* record = nullptr;
  const DumpTensorRef* ref = nullptr;
  std::string role;  ///< dumps: "input", "param" or "output"
  std::string slot;  ///< dumps: role and position in the record ("input.0", "param.weight")
  std::optional<Tensor> memory;  ///< in memory (the Python bindings' arrays): what Load returns

  /// Whether parity compares it: false for a dump's tensor it does not hold or of a complex
  /// dtype (ref->not_comparable says why).
  bool comparable() const { return ref == nullptr || ref->comparable(); }
  /// A comparable dump tensor recorded as statistics only.
  bool stats_only() const { return ref != nullptr && ref->comparable() && !ref->has_data(); }
  /// The dtype's name as recorded (a dump's complex64 or quint8 included).
  std::string DTypeName() const {
    return ref != nullptr ? ref->DTypeName() : std::string(Name(meta.dtype));
  }
  /// Reads the data (checked against the dump record, for dumps). Not thread-safe.
  Result<Tensor> Load() const;
};

/// One input of compare: a tensor file, a directory of tensor files or a dump directory.
struct Side {
  enum class Kind { kFile, kDirectory, kDump };
  std::string path;
  Kind kind = Kind::kFile;
  std::vector<Entry> entries;     ///< file order, or record order for dumps
  std::unique_ptr<DumpDir> dump;  ///< owns the records entries point into
  std::vector<std::string> warnings;
};

/// Opens `path` as whichever of the three kinds it is; every error names the path.
Result<Side> OpenSide(const std::string& path);

/// A side of kind kFile holding one tensor already in memory (a view of a Python array, say),
/// shown as `name`; `tensor` must stay valid as long as the side is used.
Side MemorySide(const std::string& name, Tensor tensor);

/// Two (or three) entries that belong together, in execution order. A missing side, or a
/// dtype or shape that differs, makes the pair structural; otherwise a side parity does not
/// compare (a tensor the dump does not hold, a complex dtype) leaves it not compared.
struct EntryPair {
  std::string name;
  const Entry* a = nullptr;
  const Entry* b = nullptr;
  const Entry* golden = nullptr;
  std::string structural;  ///< why the pair can't be compared elementwise; empty otherwise
  /// Why the pair is not compared ("B: not stored: sparse_coo layout"); empty otherwise (and
  /// always when structural).
  std::string not_compared;
};

/// What the names of a dump record's tensors start with: "NAME.PASS.CALL", after "rank<R>."
/// and "step<S>." where the rank and the step are not 0 ("rank1.step2.fc1.forward.0"); an
/// entry's name adds ".ROLE.SLOT" ("input.0", "output.0", "param.weight").
std::string RecordTensorPrefix(int64_t rank, int64_t step, std::string_view name,
                               std::string_view pass, int64_t call);

/// Pairs the records of two dumps in A's order: by (rank, step, name, pass, call), then the
/// rest by (rank, seq) with a warning; a record of one side only is paired with null (B's last).
std::vector<std::pair<const DumpRecord*, const DumpRecord*>> PairRecords(
    const DumpDir& a, const DumpDir& b, std::vector<std::string>* warnings);

/// Pairs the entries of `a` and `b` (and `golden`, matched to `a` the same way):
/// two files of one tensor each pair whatever the names, else by tensor name; directories by
/// relative path and tensor name, then by tensor name alone where unique; dumps by (rank, step,
/// name, pass, call), then by seq (with a warning), and within records by role and position.
/// Sides of different kinds can't be paired (kInvalidInput). Warnings go to `warnings`.
Result<std::vector<EntryPair>> PairSides(const Side& a, const Side& b, const Side* golden,
                                         std::vector<std::string>* warnings);

}  // namespace parity

#endif  // PARITY_COMPARE_ENTRIES_H_
