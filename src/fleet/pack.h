// SPDX-License-Identifier: Apache-2.0
// A directory as one byte string, to move a rank's bundle to rank 0 over MPI: each regular
// file as (path length u32, relative path, size u64, bytes), little-endian. Unpacking checks
// every path (relative, no "..", no empty part) and every length against what is left.
#ifndef PARITY_FLEET_PACK_H_
#define PARITY_FLEET_PACK_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"

namespace parity::fleet {

/// Every regular file under `dir` (symbolic links and others left out); kInvalidInput when the
/// files hold more than `max_bytes`.
Result<std::string> PackDirectory(const std::string& dir, std::size_t max_bytes);

/// Writes the files of `packed` under `dir` (made if missing). `what` names the source in
/// errors ("rank 3's bundle"): kInvalidInput for a malformed or unsafe entry.
Status UnpackDirectory(std::string_view packed, const std::string& dir, std::string_view what);

}  // namespace parity::fleet

#endif  // PARITY_FLEET_PACK_H_
