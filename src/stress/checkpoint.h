// SPDX-License-Identifier: Apache-2.0
// Checkpoints of `parity stress`: the file the built-in workers write (atomically, with a
// BLAKE2b checksum inside), and the digest the supervisor takes of any worker's checkpoint
// file when it is reported, so that a file changed afterwards is never resumed from.
//
// A built-in worker's checkpoint file, little-endian:
//
//   "PARITYCK"  u32 version (1)  u32 0  i64 step  u64 payload bytes, then 32 bytes of
//   BLAKE2b-256 over those 32 header bytes and the payload, then the payload (the workload's
//   Save()). Every byte of the file is covered by the checksum.
#ifndef PARITY_STRESS_CHECKPOINT_H_
#define PARITY_STRESS_CHECKPOINT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace parity::stress {

/// The largest checkpoint ReadCheckpoint accepts: 4 GiB.
inline constexpr std::uint64_t kMaxCheckpointBytes = std::uint64_t{4} << 30;

/// "step-000000000042.ckpt": names that sort in step order.
std::string CheckpointFileName(std::int64_t step);

/// Writes a checkpoint of `step` to `path` durably: to a temporary file beside it, fsync,
/// rename over `path`, fsync of the directory. On failure (a full disk, a file size limit)
/// `path` is untouched, the temporary file removed, and the message says what failed.
Status WriteCheckpoint(const std::string& path, std::int64_t step, std::string_view payload);

struct Checkpoint {
  std::int64_t step = 0;
  std::string payload;
};

/// Reads and verifies a checkpoint file. kInvalidInput naming the file for a wrong magic or
/// version, a length that disagrees with the file's size, or a checksum mismatch.
Result<Checkpoint> ReadCheckpoint(const std::string& path);

/// BLAKE2b-256 of a file's contents, as 64 hex digits (read in blocks, any size).
/// kInvalidInput when it can't be read.
Result<std::string> FileDigest(const std::string& path);

/// The checkpoint files (CheckpointFileName) in `dir`, oldest first.
std::vector<std::string> ListCheckpoints(const std::string& dir);

/// Removes all but the newest `keep` checkpoint files of `dir`.
void PruneCheckpoints(const std::string& dir, std::size_t keep);

/// Creates a directory and its parents, as `mkdir -p` does. kInvalidInput naming it when
/// one can't be created or it is not a directory.
Status MakeDirectories(const std::string& path);

}  // namespace parity::stress

#endif  // PARITY_STRESS_CHECKPOINT_H_
