// SPDX-License-Identifier: Apache-2.0
// The parsers behind DumpDir (io/dump.h): one manifest, one record. Internal to io.
#ifndef PARITY_IO_DUMP_PARSE_H_
#define PARITY_IO_DUMP_PARSE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "core/json_util.h"
#include "core/status.h"
#include "io/dump.h"

namespace parity::dump_internal {

/// Checks part->manifest (already parsed into a JSON object) and fills the part's version and
/// version 2 fields from it. Fails naming `manifest_path` and the key: a `format` other than
/// "parity-dump", a `version` that is missing, not an integer, or not 1 or 2, or a version 2
/// key of the wrong type or value. A version 2 key that is absent or null keeps its default.
Status ReadManifest(const std::string& manifest_path, DumpPart* part);

/// Parses one line of records.jsonl, already parsed as JSON, as a record of `part` (its
/// directory for tensor files, its version for what `pass` may be, its rank<N> for `rank`).
/// Fails with `where` ("DIR/records.jsonl:LINE") and the problem. A malformed `source` is no
/// failure: the record has none, and `source_problem` (when not null) gets the problem.
Result<DumpRecord> ReadRecord(const Json& obj, int line, const DumpPart& part,
                              const std::string& where, std::string* source_problem = nullptr);

}  // namespace parity::dump_internal

#endif  // PARITY_IO_DUMP_PARSE_H_
