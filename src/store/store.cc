// SPDX-License-Identifier: Apache-2.0
#include "store/store.h"

#include <fmt/format.h>
#include <fnmatch.h>
#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <system_error>

namespace parity::store {
namespace {

// Schema version 1, the first release's. Kept to document what step 1 -> 2 starts from.
//   CREATE TABLE runs(id INTEGER PRIMARY KEY, uid TEXT UNIQUE NOT NULL, kind TEXT NOT NULL,
//                     node TEXT, started REAL NOT NULL, level INTEGER, bundle TEXT, status TEXT);
//   CREATE TABLE results(run_id INTEGER NOT NULL REFERENCES runs(id), benchmark TEXT NOT NULL,
//                        dtype TEXT, params TEXT, unit TEXT, median REAL);

// The tables and indexes version 2 adds, shared by the migration and a fresh file.
constexpr char kStagesAndMetrics[] = R"sql(
CREATE TABLE stages(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                    name TEXT NOT NULL, kind TEXT, status TEXT, reason TEXT, seconds REAL,
                    PRIMARY KEY(run_id, name));
CREATE TABLE metrics(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                     stage TEXT, name TEXT NOT NULL, dtype TEXT NOT NULL DEFAULT '',
                     params TEXT NOT NULL DEFAULT '{}', unit TEXT, value REAL NOT NULL, cv REAL,
                     valid INTEGER NOT NULL DEFAULT 1, better TEXT);
CREATE INDEX metrics_name_run ON metrics(name, run_id);
CREATE INDEX metrics_run ON metrics(run_id);
CREATE INDEX runs_node_started ON runs(node, started);
)sql";

// A fresh file at version 2: the columns of runs in the order a migrated file has them.
constexpr char kCreateV2Runs[] = R"sql(
CREATE TABLE runs(id INTEGER PRIMARY KEY, uid TEXT UNIQUE NOT NULL, kind TEXT NOT NULL,
                  node TEXT, started REAL NOT NULL, level INTEGER, bundle TEXT, status TEXT,
                  finished REAL, backend TEXT, plan TEXT, tool_version TEXT, fingerprint TEXT);
)sql";

// Step 1 -> 2, around kStagesAndMetrics: the run's new columns, then the results copied into
// metrics. A result without a median is dropped, and so is one whose run is missing (version
// 1 did not enforce the reference).
constexpr char kV1ToV2Columns[] = R"sql(
ALTER TABLE runs ADD COLUMN finished REAL;
ALTER TABLE runs ADD COLUMN backend TEXT;
ALTER TABLE runs ADD COLUMN plan TEXT;
ALTER TABLE runs ADD COLUMN tool_version TEXT;
ALTER TABLE runs ADD COLUMN fingerprint TEXT;
)sql";
constexpr char kV1ToV2Copy[] = R"sql(
INSERT INTO metrics(run_id, stage, name, dtype, params, unit, value, cv, valid, better)
  SELECT run_id, 'bench', benchmark, COALESCE(dtype, ''), COALESCE(params, '{}'), unit, median,
         NULL, 1,
         CASE WHEN unit IN ('s', 'ms', 'us', 'ns') THEN 'lower'
              WHEN instr(unit, '/s') > 0 THEN 'higher'
              ELSE '' END
  FROM results
  WHERE median IS NOT NULL AND run_id IN (SELECT id FROM runs)
  ORDER BY rowid;
DROP TABLE results;
)sql";

/// One migration step: from version `from` to `from + 1`, run inside a transaction.
struct Migration {
  int from;
  const char* const* sql;  ///< statements' texts, in order, ending with nullptr
};

constexpr const char* kV1ToV2[] = {kV1ToV2Columns, kStagesAndMetrics, kV1ToV2Copy, nullptr};
constexpr const char* kCreateV2[] = {kCreateV2Runs, kStagesAndMetrics, nullptr};

/// The steps, in order. A version 3 adds {2, kV2ToV3} here and raises kSchemaVersion.
constexpr Migration kMigrations[] = {{1, kV1ToV2}};

/// A prepared statement, finalized when it goes out of scope.
class Statement {
 public:
  Statement() = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(stmt_); }

  sqlite3_stmt** out() { return &stmt_; }
  sqlite3_stmt* get() const { return stmt_; }

  /// Binds parameter `i` (1-based). Text is copied.
  void Text(int i, std::string_view text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  /// Text, or NULL when `text` is empty.
  void TextOrNull(int i, std::string_view text) {
    if (text.empty()) {
      sqlite3_bind_null(stmt_, i);
    } else {
      Text(i, text);
    }
  }
  void Real(int i, double value) { sqlite3_bind_double(stmt_, i, value); }
  void Real(int i, std::optional<double> value) {
    if (value && !std::isnan(*value)) {
      sqlite3_bind_double(stmt_, i, *value);
    } else {
      sqlite3_bind_null(stmt_, i);
    }
  }
  void Int(int i, int64_t value) { sqlite3_bind_int64(stmt_, i, value); }
  void Int(int i, std::optional<int> value) {
    if (value) {
      sqlite3_bind_int64(stmt_, i, *value);
    } else {
      sqlite3_bind_null(stmt_, i);
    }
  }

  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  /// Column `col` (0-based) as text; "" when NULL.
  std::string ColumnText(int col) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    if (text == nullptr) return "";
    return std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)));
  }
  double ColumnReal(int col) const { return sqlite3_column_double(stmt_, col); }
  std::optional<double> ColumnOptionalReal(int col) const {
    if (IsNull(col)) return std::nullopt;
    return sqlite3_column_double(stmt_, col);
  }
  std::optional<int> ColumnOptionalInt(int col) const {
    if (IsNull(col)) return std::nullopt;
    return static_cast<int>(sqlite3_column_int64(stmt_, col));
  }
  int64_t ColumnInt(int col) const { return sqlite3_column_int64(stmt_, col); }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

/// The smallest string greater than every string that starts with `prefix` (bytewise), or ""
/// when there is none (a prefix of 0xff bytes).
std::string PrefixEnd(std::string prefix) {
  while (!prefix.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(prefix.back());
    if (last != 0xff) {
      ++last;
      return prefix;
    }
    prefix.pop_back();
  }
  return "";
}

/// The literal start of an fnmatch pattern: everything before its first special character.
std::string LiteralPrefix(const std::string& pattern) {
  const std::size_t end = pattern.find_first_of("*?[\\");
  return pattern.substr(0, end);
}

}  // namespace

std::string DefaultPath() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg != nullptr && xdg[0] == '/') {
    return (std::filesystem::path(xdg) / "parity" / "parity.db").string();
  }
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') {
    return (std::filesystem::path(home) / ".local" / "share" / "parity" / "parity.db").string();
  }
  return "";
}

Status Store::Error(std::string_view doing) const {
  const std::string message = sqlite3_errmsg(db_);
  if (doing.empty()) return Status::Invalid(path_, message);
  return Status::Invalid(path_, fmt::format("{}: {}", doing, message));
}

Status Store::Exec(const char* sql) const {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message != nullptr ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    return Status::Invalid(path_, text);
  }
  return Status::Ok();
}

Result<int> Store::UserVersion() const {
  Statement st;
  if (sqlite3_prepare_v2(db_, "PRAGMA user_version", -1, st.out(), nullptr) != SQLITE_OK ||
      sqlite3_step(st.get()) != SQLITE_ROW) {
    return Error();
  }
  return static_cast<int>(st.ColumnInt(0));
}

namespace {

/// BEGIN IMMEDIATE on construction (see ok()); ROLLBACK on destruction unless committed.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) {
    began_ = sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK;
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction() {
    if (began_ && !committed_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  bool ok() const { return began_; }
  bool Commit() {
    committed_ = sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) == SQLITE_OK;
    return committed_;
  }

 private:
  sqlite3* db_;
  bool began_ = false;
  bool committed_ = false;
};

}  // namespace

Status Store::Migrate() {
  for (;;) {
    // Read the version inside the write transaction, so that two processes opening one file
    // at once migrate it once.
    Transaction tx(db_);
    if (!tx.ok()) return Error("starting the schema migration");
    PARITY_ASSIGN_OR_RETURN(const int version, UserVersion());
    if (version > kSchemaVersion) {
      return Status::Invalid(
          path_, fmt::format("schema version {} is newer than this parity's ({})", version,
                             kSchemaVersion));
    }
    if (version == kSchemaVersion) {
      schema_version_ = version;
      return Status::Ok();
    }
    const char* const* steps = nullptr;
    if (version == 0) {
      Statement st;
      if (sqlite3_prepare_v2(db_, "SELECT count(*) FROM sqlite_master", -1, st.out(), nullptr) !=
              SQLITE_OK ||
          sqlite3_step(st.get()) != SQLITE_ROW) {
        return Error();
      }
      if (st.ColumnInt(0) != 0) {
        return Status::Invalid(path_,
                               "not a parity results store: it has tables but no schema version");
      }
      steps = kCreateV2;
    } else {
      for (const Migration& m : kMigrations) {
        if (m.from == version) steps = m.sql;
      }
      if (steps == nullptr) {
        return Status::Invalid(path_, fmt::format("schema version {} is unknown", version));
      }
    }
    for (const char* const* sql = steps; *sql != nullptr; ++sql) {
      PARITY_RETURN_IF_ERROR(
          Exec(*sql).WithContext(fmt::format("migrating the schema from version {}", version)));
    }
    const int next = version == 0 ? kSchemaVersion : version + 1;
    // The version is an integer of ours, not user text; PRAGMA takes no bound parameters.
    PARITY_RETURN_IF_ERROR(Exec(fmt::format("PRAGMA user_version = {}", next).c_str()));
    if (!tx.Commit()) return Error("committing the schema migration");
  }
}

Result<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  if (path.empty()) return Status::Invalid("", "no results store path");
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path file(path);
  if (fs::is_directory(file, ec)) return Status::Invalid(path, "is a directory");
  if (file.has_parent_path() && !fs::exists(file.parent_path(), ec)) {
    fs::create_directories(file.parent_path(), ec);
    if (ec) {
      return Status::Invalid(path, fmt::format("can't create directory {}: {}",
                                               file.parent_path().string(), ec.message()));
    }
  }
  sqlite3* db = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (db == nullptr) return Status::Invalid(path, "out of memory opening the database");
  std::unique_ptr<Store> store(new Store(db, path));
  if (rc != SQLITE_OK) {
    const int err = sqlite3_system_errno(db);
    if (err == 0) return store->Error();
    return Status::Invalid(path, fmt::format("{}: {}", sqlite3_errmsg(db), std::strerror(err)));
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, 5000);
  // SQLite falls back to read-only when the file can't be written; a store must be.
  if (sqlite3_db_readonly(db, "main") == 1) return Status::Invalid(path, "is not writable");
  // The first read of the file: this is where a file that is not a database shows.
  PARITY_ASSIGN_OR_RETURN(const int version, store->UserVersion());
  if (version > kSchemaVersion) {
    return Status::Invalid(path, fmt::format("schema version {} is newer than this parity's ({})",
                                             version, kSchemaVersion));
  }
  {
    Statement st;
    if (sqlite3_prepare_v2(db, "PRAGMA journal_mode = WAL", -1, st.out(), nullptr) != SQLITE_OK ||
        sqlite3_step(st.get()) != SQLITE_ROW) {
      return store->Error("setting WAL journal mode");
    }
  }
  PARITY_RETURN_IF_ERROR(store->Exec("PRAGMA foreign_keys = ON"));
  PARITY_RETURN_IF_ERROR(store->Migrate());
  return store;
}

Result<std::unique_ptr<Store>> Store::OpenReadOnly(const std::string& path) {
  if (path.empty()) return Status::Invalid("", "no results store path");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return Status::Invalid(path, "is a directory");
  if (!std::filesystem::exists(path, ec)) return Status::Invalid(path, "no such file");
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  if (db == nullptr) return Status::Invalid(path, "out of memory opening the database");
  std::unique_ptr<Store> store(new Store(db, path));
  if (rc != SQLITE_OK) return store->Error();
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, 5000);
  PARITY_ASSIGN_OR_RETURN(const int version, store->UserVersion());
  if (version > kSchemaVersion) {
    return Status::Invalid(path, fmt::format("schema version {} is newer than this parity's ({})",
                                             version, kSchemaVersion));
  }
  if (version == 0) {
    return Status::Invalid(path, "not a parity results store: it has no schema version");
  }
  if (version < kSchemaVersion) {
    return Status::Invalid(
        path, fmt::format("schema version {} is older than this parity's ({}): `parity history "
                          "--db {}` upgrades it",
                          version, kSchemaVersion, path));
  }
  store->schema_version_ = version;
  return store;
}

Store::~Store() { sqlite3_close_v2(db_); }

Status Store::Record(const RunRecord& run) {
  if (run.uid.empty()) return Status::Invalid(path_, "a run to record needs a uid");
  if (run.kind.empty()) return Status::Invalid(path_, fmt::format("run {}: no kind", run.uid));
  if (!std::isfinite(run.started)) {
    return Status::Invalid(path_, fmt::format("run {}: started is not a finite time", run.uid));
  }
  for (const MetricRecord& m : run.metrics) {
    if (m.name.empty())
      return Status::Invalid(path_, fmt::format("run {}: a metric has no name", run.uid));
    if (std::isnan(m.value)) {
      return Status::Invalid(path_, fmt::format("run {}: metric {} is NaN", run.uid, m.name));
    }
  }
  const std::string doing = fmt::format("recording run {}", run.uid);
  Transaction tx(db_);
  if (!tx.ok()) return Error(doing);

  int64_t id = 0;
  {
    Statement st;
    if (sqlite3_prepare_v2(db_, "SELECT id FROM runs WHERE uid = ?1", -1, st.out(), nullptr) !=
        SQLITE_OK) {
      return Error(doing);
    }
    st.Text(1, run.uid);
    const int rc = sqlite3_step(st.get());
    if (rc == SQLITE_ROW) {
      id = st.ColumnInt(0);
    } else if (rc != SQLITE_DONE) {
      return Error(doing);
    }
  }
  {
    Statement st;
    const char* sql =
        id == 0 ? "INSERT INTO runs(kind, node, started, finished, level, backend, plan, bundle, "
                  "status, tool_version, fingerprint, uid) "
                  "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
                : "UPDATE runs SET kind = ?1, node = ?2, started = ?3, finished = ?4, level = ?5, "
                  "backend = ?6, plan = ?7, bundle = ?8, status = ?9, tool_version = ?10, "
                  "fingerprint = ?11 WHERE uid = ?12";
    if (sqlite3_prepare_v2(db_, sql, -1, st.out(), nullptr) != SQLITE_OK) return Error(doing);
    st.Text(1, run.kind);
    st.TextOrNull(2, run.node);
    st.Real(3, run.started);
    st.Real(4, run.finished);
    st.Int(5, run.level);
    st.TextOrNull(6, run.backend);
    st.TextOrNull(7, run.plan);
    st.TextOrNull(8, run.bundle);
    st.TextOrNull(9, run.status);
    st.TextOrNull(10, run.tool_version);
    st.TextOrNull(11, run.fingerprint);
    st.Text(12, run.uid);
    if (sqlite3_step(st.get()) != SQLITE_DONE) return Error(doing);
    if (id == 0) id = sqlite3_last_insert_rowid(db_);
  }
  for (const char* sql :
       {"DELETE FROM stages WHERE run_id = ?1", "DELETE FROM metrics WHERE run_id = ?1"}) {
    Statement st;
    if (sqlite3_prepare_v2(db_, sql, -1, st.out(), nullptr) != SQLITE_OK) return Error(doing);
    st.Int(1, id);
    if (sqlite3_step(st.get()) != SQLITE_DONE) return Error(doing);
  }
  {
    Statement st;
    if (sqlite3_prepare_v2(db_,
                           "INSERT INTO stages(run_id, name, kind, status, reason, seconds) "
                           "VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
                           -1, st.out(), nullptr) != SQLITE_OK) {
      return Error(doing);
    }
    for (const StageRecord& s : run.stages) {
      sqlite3_reset(st.get());
      st.Int(1, id);
      st.Text(2, s.name);
      st.TextOrNull(3, s.kind);
      st.TextOrNull(4, s.status);
      st.TextOrNull(5, s.reason);
      st.Real(6, s.seconds);
      if (sqlite3_step(st.get()) != SQLITE_DONE) {
        return Error(fmt::format("{}: stage {}", doing, s.name));
      }
    }
  }
  {
    Statement st;
    if (sqlite3_prepare_v2(db_,
                           "INSERT INTO metrics(run_id, stage, name, dtype, params, unit, value, "
                           "cv, valid, better) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                           -1, st.out(), nullptr) != SQLITE_OK) {
      return Error(doing);
    }
    for (const MetricRecord& m : run.metrics) {
      sqlite3_reset(st.get());
      st.Int(1, id);
      st.Text(2, m.stage);
      st.Text(3, m.name);
      st.Text(4, m.dtype);
      st.Text(5, m.params.empty() ? std::string_view("{}") : std::string_view(m.params));
      st.Text(6, m.unit);
      st.Real(7, m.value);
      st.Real(8, m.cv);
      st.Int(9, int64_t{m.valid ? 1 : 0});
      st.Text(10, m.better);
      if (sqlite3_step(st.get()) != SQLITE_DONE) {
        return Error(fmt::format("{}: metric {}", doing, m.name));
      }
    }
  }
  if (!tx.Commit()) return Error(doing);
  return Status::Ok();
}

namespace {

/// The WHERE clause of a RunQuery (parameters ?1 to ?7) and its bindings.
constexpr const char* kRunWhere =
    "WHERE (?1 IS NULL OR node = ?1) AND (?2 IS NULL OR kind = ?2) "
    "AND (?3 IS NULL OR started >= ?3) AND (?4 IS NULL OR status = ?4) "
    "AND (?5 IS NULL OR plan = ?5) AND (?6 IS NULL OR id = ?6) "
    "AND (?7 IS NULL OR instr(lower(uid), ?7) OR instr(lower(COALESCE(node, '')), ?7) "
    "OR instr(lower(COALESCE(plan, '')), ?7) OR instr(lower(COALESCE(bundle, '')), ?7) "
    "OR instr(lower(COALESCE(backend, '')), ?7)) ";

void BindRunWhere(Statement& st, const RunQuery& query) {
  st.TextOrNull(1, query.node);
  st.TextOrNull(2, query.kind);
  st.Real(3, query.since);
  st.TextOrNull(4, query.status);
  st.TextOrNull(5, query.plan);
  if (query.id) st.Int(6, *query.id);
  std::string search = query.search;
  for (char& c : search) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  st.TextOrNull(7, search);
}

}  // namespace

Result<std::size_t> Store::CountRuns(const RunQuery& query) {
  Statement st;
  const std::string sql = std::string("SELECT count(*) FROM runs ") + kRunWhere;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, st.out(), nullptr) != SQLITE_OK) {
    return Error("counting runs");
  }
  BindRunWhere(st, query);
  if (sqlite3_step(st.get()) != SQLITE_ROW) return Error("counting runs");
  return static_cast<std::size_t>(st.ColumnInt(0));
}

Result<std::optional<RunRecord>> Store::RunByUid(const std::string& uid) {
  Statement st;
  if (sqlite3_prepare_v2(db_, "SELECT id FROM runs WHERE uid = ?1", -1, st.out(), nullptr) !=
      SQLITE_OK) {
    return Error("reading a run");
  }
  st.Text(1, uid);
  const int rc = sqlite3_step(st.get());
  if (rc == SQLITE_DONE) return std::optional<RunRecord>();
  if (rc != SQLITE_ROW) return Error("reading a run");
  RunQuery query;
  query.id = st.ColumnInt(0);
  PARITY_ASSIGN_OR_RETURN(auto runs, Runs(query));
  if (runs.empty()) return std::optional<RunRecord>();
  return std::optional<RunRecord>(std::move(runs.front()));
}

Result<std::vector<RunRecord>> Store::Runs(const RunQuery& query) {
  Statement st;
  const std::string sql =
      std::string(
          "SELECT id, uid, kind, node, started, finished, level, backend, plan, bundle, status, "
          "tool_version, fingerprint FROM runs ") +
      kRunWhere + "ORDER BY started DESC, id DESC LIMIT ?8 OFFSET ?9";
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, st.out(), nullptr) != SQLITE_OK) {
    return Error("reading runs");
  }
  BindRunWhere(st, query);
  constexpr auto kMax = static_cast<std::size_t>(std::numeric_limits<int64_t>::max());
  st.Int(8, query.limit == 0 ? int64_t{-1} : static_cast<int64_t>(std::min(query.limit, kMax)));
  st.Int(9, static_cast<int64_t>(std::min(query.offset, kMax)));
  std::vector<RunRecord> runs;
  std::vector<int64_t> ids;
  int rc;
  while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
    RunRecord r;
    ids.push_back(st.ColumnInt(0));
    r.id = ids.back();
    r.uid = st.ColumnText(1);
    r.kind = st.ColumnText(2);
    r.node = st.ColumnText(3);
    r.started = st.ColumnReal(4);
    r.finished = st.ColumnOptionalReal(5);
    r.level = st.ColumnOptionalInt(6);
    r.backend = st.ColumnText(7);
    r.plan = st.ColumnText(8);
    r.bundle = st.ColumnText(9);
    r.status = st.ColumnText(10);
    r.tool_version = st.ColumnText(11);
    r.fingerprint = st.ColumnText(12);
    runs.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return Error("reading runs");

  if (!query.stages) return runs;
  Statement stages;
  if (sqlite3_prepare_v2(db_,
                         "SELECT name, kind, status, reason, seconds FROM stages "
                         "WHERE run_id = ?1 ORDER BY rowid",
                         -1, stages.out(), nullptr) != SQLITE_OK) {
    return Error("reading stages");
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    sqlite3_reset(stages.get());
    stages.Int(1, ids[i]);
    while ((rc = sqlite3_step(stages.get())) == SQLITE_ROW) {
      StageRecord s;
      s.name = stages.ColumnText(0);
      s.kind = stages.ColumnText(1);
      s.status = stages.ColumnText(2);
      s.reason = stages.ColumnText(3);
      s.seconds = stages.ColumnOptionalReal(4);
      runs[i].stages.push_back(std::move(s));
    }
    if (rc != SQLITE_DONE) return Error("reading stages");
  }
  return runs;
}

Result<std::vector<std::pair<std::string, std::size_t>>> Store::MetricNames(std::size_t limit) {
  Statement st;
  if (sqlite3_prepare_v2(db_,
                         "SELECT name, count(*) FROM metrics GROUP BY name ORDER BY name LIMIT ?1",
                         -1, st.out(), nullptr) != SQLITE_OK) {
    return Error("reading metric names");
  }
  constexpr auto kMax = static_cast<std::size_t>(std::numeric_limits<int64_t>::max());
  st.Int(1, static_cast<int64_t>(std::min(limit, kMax)));
  std::vector<std::pair<std::string, std::size_t>> names;
  int rc;
  while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
    names.emplace_back(st.ColumnText(0), static_cast<std::size_t>(st.ColumnInt(1)));
  }
  if (rc != SQLITE_DONE) return Error("reading metric names");
  return names;
}

Result<std::vector<SeriesPoint>> Store::Series(const SeriesQuery& query) {
  // The pattern's literal prefix narrows the rows through the (name, run_id) index; fnmatch
  // then decides, with its own syntax (SQLite's GLOB differs on [!...]).
  const std::string prefix = LiteralPrefix(query.name_glob);
  const std::string prefix_end = PrefixEnd(prefix);
  Statement st;
  if (sqlite3_prepare_v2(
          db_,
          "SELECT r.uid, r.node, r.started, m.stage, m.name, m.dtype, m.params, m.unit, m.better, "
          "m.value, m.cv, m.valid FROM metrics m JOIN runs r ON r.id = m.run_id "
          "WHERE (?1 IS NULL OR r.node = ?1) AND (?2 IS NULL OR r.started >= ?2) "
          "AND (?3 IS NULL OR r.kind = ?3) "
          "AND (?4 IS NULL OR m.name >= ?4) AND (?5 IS NULL OR m.name < ?5) "
          "ORDER BY COALESCE(r.node, ''), m.name, m.dtype, m.params, r.started, r.id, m.rowid",
          -1, st.out(), nullptr) != SQLITE_OK) {
    return Error("reading metrics");
  }
  st.TextOrNull(1, query.node);
  st.Real(2, query.since);
  st.TextOrNull(3, query.kind);
  st.TextOrNull(4, prefix);
  st.TextOrNull(5, prefix_end);
  std::vector<SeriesPoint> points;
  int rc;
  while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
    SeriesPoint p;
    p.name = st.ColumnText(4);
    if (!query.name_glob.empty() && fnmatch(query.name_glob.c_str(), p.name.c_str(), 0) != 0) {
      continue;
    }
    p.uid = st.ColumnText(0);
    p.node = st.ColumnText(1);
    p.started = st.ColumnReal(2);
    p.stage = st.ColumnText(3);
    p.dtype = st.ColumnText(5);
    p.params = st.ColumnText(6);
    p.unit = st.ColumnText(7);
    p.better = st.ColumnText(8);
    p.value = st.ColumnReal(9);
    p.cv = st.ColumnOptionalReal(10);
    p.valid = st.ColumnInt(11) != 0;
    points.push_back(std::move(p));
  }
  if (rc != SQLITE_DONE) return Error("reading metrics");
  return points;
}

Result<std::optional<double>> Store::LastStageSeconds(const std::string& node,
                                                      const std::string& plan,
                                                      const std::string& stage) {
  Statement st;
  if (sqlite3_prepare_v2(db_,
                         "SELECT s.seconds FROM stages s JOIN runs r ON r.id = s.run_id "
                         "WHERE r.node IS ?1 AND r.plan IS ?2 AND s.name = ?3 "
                         "AND s.status IN ('passed', 'failed') AND s.seconds IS NOT NULL "
                         "ORDER BY r.started DESC, r.id DESC LIMIT 1",
                         -1, st.out(), nullptr) != SQLITE_OK) {
    return Error("reading stage times");
  }
  st.TextOrNull(1, node);
  st.TextOrNull(2, plan);
  st.Text(3, stage);
  const int rc = sqlite3_step(st.get());
  if (rc == SQLITE_ROW) return std::optional<double>(st.ColumnReal(0));
  if (rc != SQLITE_DONE) return Error("reading stage times");
  return std::optional<double>();
}

}  // namespace parity::store
