// SPDX-License-Identifier: Apache-2.0
// The results store: every collect (and accept) recorded in SQLite, with its stages and the
// metrics they measured, for `parity history` and the ETA of the next collect.
#ifndef PARITY_STORE_STORE_H_
#define PARITY_STORE_STORE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

struct sqlite3;

namespace parity::store {

/// One stage of a run as it ended.
struct StageRecord {
  std::string name;
  std::string kind;    ///< env, bench, monitor, stress, exec, dump, quality
  std::string status;  ///< passed, failed, error, skipped, interrupted
  std::string reason;  ///< "" when passed
  std::optional<double> seconds;
};

/// One figure a stage measured: a benchmark result, an exec metric, a quality score.
struct MetricRecord {
  std::string stage;   ///< the stage's name
  std::string name;    ///< "stream.triad", "auc", ...
  std::string dtype;   ///< "" when it has none
  std::string params;  ///< compact JSON object text ("{}" when none); part of the series' key
  std::string unit;    ///< "GB/s", "s", "" ...
  double value = 0.0;
  std::optional<double> cv;  ///< coefficient of variation of the samples, when known
  bool valid = true;         ///< false: the result failed its validation
  /// "higher", "lower" or "" (unknown): which direction is better, for trends.
  std::string better;
};

/// A run: one collect into one bundle (kind "collect") or one accept (kind "accept").
struct RunRecord {
  std::int64_t id = 0;   ///< the store's row id (set by Store::Runs; ignored by Record)
  std::string uid;       ///< unique per run, kept when a collect is resumed
  std::string kind;      ///< "collect" or "accept"
  std::string node;      ///< hostname
  double started = 0.0;  ///< Unix seconds
  std::optional<double> finished;
  std::optional<int> level;
  std::string backend;
  std::string plan;          ///< the plan's name
  std::string bundle;        ///< absolute path of the bundle (or accept's output)
  std::string status;        ///< passed, failed, error, interrupted, running
  std::string tool_version;  ///< parity's version
  std::string fingerprint;   ///< compact JSON text, "" when none
  std::vector<StageRecord> stages;
  std::vector<MetricRecord> metrics;
};

/// The default store path: $XDG_DATA_HOME/parity/parity.db when XDG_DATA_HOME is set and
/// absolute, else $HOME/.local/share/parity/parity.db; "" when neither can be formed.
std::string DefaultPath();

/// The schema version this parity writes (`PRAGMA user_version`). 1 was the first release's
/// (runs and results); 2 added the run's details, stages and metrics.
inline constexpr int kSchemaVersion = 2;

/// Which runs Store::Runs returns; empty strings and no `since` match everything.
struct RunQuery {
  std::string node;             ///< hostname, exactly
  std::string kind;             ///< "collect", "accept"
  std::optional<double> since;  ///< Unix seconds: runs started at or after it
  std::size_t limit = 0;        ///< at most this many, newest first; 0 = all
  std::size_t offset = 0;       ///< skip this many of the newest first
  std::string status;           ///< passed, failed, ... exactly
  std::string plan;             ///< the plan's name, exactly
  /// A substring (case-insensitive for ASCII) of the uid, node, plan, bundle or backend.
  std::string search;
  std::optional<std::int64_t> id;  ///< only the run with this store id
  bool stages = true;              ///< false: leave each run's stages empty (faster)
};

/// Which metric points Store::Series returns; empty strings and no `since` match everything.
struct SeriesQuery {
  std::string node;             ///< hostname, exactly
  std::string name_glob;        ///< fnmatch(3) pattern on the metric name: "stream.*", or exact
  std::optional<double> since;  ///< Unix seconds: points of runs started at or after it
  std::string kind;             ///< the runs' kind, exactly ("collect")
};

/// One point of a metric series: a run's value.
struct SeriesPoint {
  std::string uid;                                       ///< the run's
  std::string node;                                      ///< the run's
  double started = 0.0;                                  ///< the run's start, Unix seconds
  std::string stage, name, dtype, params, unit, better;  ///< as in MetricRecord
  double value = 0.0;
  std::optional<double> cv;
  bool valid = true;
};

/// The results store: one SQLite database (WAL journal, so that `parity history` can read while
/// a collect writes). Not safe to share between threads; open one Store per thread instead.
class Store {
 public:
  /// Opens (creating parent directories and the file when missing) the database at `path`,
  /// sets WAL journal mode and a busy timeout of 5 s, enables foreign keys, and migrates the
  /// schema to kSchemaVersion, each step in one transaction. kInvalidInput "path: problem" when
  /// `path` is a directory, the file is not an SQLite database ("file is not a database"), is
  /// unreadable or unwritable, holds tables but no schema version (not a parity store), or has
  /// a schema version newer than this parity knows ("schema version 7 is newer than this
  /// parity's (2)").
  static Result<std::unique_ptr<Store>> Open(const std::string& path);

  /// Opens an existing store read-only (SQLITE_OPEN_READONLY): nothing is created, migrated or
  /// written. kInvalidInput "path: problem" when the file is missing, is not a database, has
  /// no schema version, or a schema version other than kSchemaVersion ("schema version 7 is
  /// newer than this parity's (2)"; an older one asks for `parity history` to upgrade it).
  static Result<std::unique_ptr<Store>> OpenReadOnly(const std::string& path);

  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  ~Store();

  /// The schema version after Open's migration (kSchemaVersion).
  int schema_version() const { return schema_version_; }
  /// The path given to Open.
  const std::string& path() const { return path_; }

  /// Inserts the run, or, when a run with the same uid exists, updates its fields and replaces
  /// its stages and metrics, in one transaction (nothing changes when it fails). Empty strings
  /// of a run and its stages are stored as NULL. kInvalidInput, before anything is written,
  /// for an empty uid or kind, a started time that is not finite, or a metric whose value is
  /// NaN; and for what SQLite refuses (two stages with one name).
  Status Record(const RunRecord& run);

  /// Runs matching the query with their stages in the order recorded (metrics left empty),
  /// newest started first.
  Result<std::vector<RunRecord>> Runs(const RunQuery& query);

  /// How many runs match the query, ignoring its limit and offset.
  Result<std::size_t> CountRuns(const RunQuery& query);

  /// The run with this uid (its stages, not its metrics); nothing when there is none.
  Result<std::optional<RunRecord>> RunByUid(const std::string& uid);

  /// The names of the recorded metrics with how many points each has, by name; at most `limit`.
  Result<std::vector<std::pair<std::string, std::size_t>>> MetricNames(std::size_t limit);

  /// Every metric point matching, ordered by (node, name, dtype, params, started).
  Result<std::vector<SeriesPoint>> Series(const SeriesQuery& query);

  /// The seconds the named stage took in the newest run of `plan` on `node` where it passed or
  /// failed (not skipped), for the next run's ETA; nothing when there is none.
  Result<std::optional<double>> LastStageSeconds(const std::string& node, const std::string& plan,
                                                 const std::string& stage);

 private:
  Store(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  /// "path: <sqlite3_errmsg>", optionally with what was being done.
  Status Error(std::string_view doing = {}) const;
  /// Runs fixed SQL (never built from user strings).
  Status Exec(const char* sql) const;
  Result<int> UserVersion() const;
  /// Brings the schema to kSchemaVersion, one transaction per step.
  Status Migrate();

  sqlite3* db_ = nullptr;
  std::string path_;
  int schema_version_ = 0;
};

}  // namespace parity::store

#endif  // PARITY_STORE_STORE_H_
