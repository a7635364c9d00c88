// SPDX-License-Identifier: Apache-2.0
// The results store: a fresh file, round trips, re-recording, the migration from the first
// release's schema, files that are not stores, and the queries behind `parity history`.
#include "store/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "testdata.h"

namespace parity::store {
namespace {

using ::parity::testing::TempDir;

namespace fs = std::filesystem;

/// A raw connection, for looking at the file behind the Store's back.
class Raw {
 public:
  explicit Raw(const std::string& path) { EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK); }
  ~Raw() { sqlite3_close(db_); }
  void Exec(const std::string& sql) {
    char* message = nullptr;
    ASSERT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message), SQLITE_OK)
        << (message ? message : "") << " in " << sql;
  }
  /// The rows of `sql`, each column as text ("NULL" for NULL), joined by '|'.
  std::vector<std::string> Rows(const std::string& sql) {
    std::vector<std::string> rows;
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db_) << " in " << sql;
    while (st != nullptr && sqlite3_step(st) == SQLITE_ROW) {
      std::string row;
      for (int i = 0; i < sqlite3_column_count(st); ++i) {
        if (i > 0) row += "|";
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(st, i));
        row += text ? text : "NULL";
      }
      rows.push_back(row);
    }
    sqlite3_finalize(st);
    return rows;
  }
  std::string One(const std::string& sql) {
    auto rows = Rows(sql);
    return rows.empty() ? "<none>" : rows.front();
  }

 private:
  sqlite3* db_ = nullptr;
};

std::unique_ptr<Store> OpenOrDie(const std::string& path) {
  auto store = Store::Open(path);
  EXPECT_TRUE(store.ok()) << store.status().message();
  return store.ok() ? std::move(store).value() : nullptr;
}

RunRecord SampleRun(const std::string& uid, double started) {
  RunRecord run;
  run.uid = uid;
  run.kind = "collect";
  run.node = "gpu01";
  run.started = started;
  run.finished = started + 120.5;
  run.level = 2;
  run.backend = "cuda";
  run.plan = "acceptance";
  run.bundle = "/data/bundles/" + uid;
  run.status = "failed";
  run.tool_version = "1.2.3";
  run.fingerprint = R"({"gpu":"H100"})";
  run.stages = {{"env", "env", "passed", "", 1.5},
                {"stream", "bench", "failed", "triad below 90%", 60.25},
                {"burn", "stress", "skipped", "level 2 skips it", std::nullopt}};
  run.metrics = {{"stream", "stream.triad", "float64", R"({"n":33554432})", "GB/s", 3000.0, 0.01,
                  true, "higher"},
                 {"stream", "latency.launch", "", "{}", "us", 4.5, std::nullopt, false, "lower"}};
  return run;
}

// The description of every table and index, to compare two files' structure.
std::vector<std::string> Structure(Raw& raw) {
  std::vector<std::string> out;
  for (const std::string table : {"runs", "stages", "metrics"}) {
    for (const auto& row : raw.Rows("PRAGMA table_info(" + table + ")")) {
      out.push_back(table + ":" + row);
    }
    for (const auto& row : raw.Rows("PRAGMA foreign_key_list(" + table + ")")) {
      out.push_back(table + " fk:" + row);
    }
  }
  for (const auto& row :
       raw.Rows("SELECT type, name, tbl_name FROM sqlite_master ORDER BY type, name")) {
    out.push_back("object:" + row);
  }
  for (const std::string index : {"metrics_name_run", "runs_node_started"}) {
    for (const auto& row : raw.Rows("PRAGMA index_info(" + index + ")")) {
      out.push_back(index + ":" + row);
    }
  }
  return out;
}

RunQuery Runs(std::string node, std::string kind = "", std::optional<double> since = {},
              std::size_t limit = 0) {
  RunQuery q;
  q.node = std::move(node);
  q.kind = std::move(kind);
  q.since = since;
  q.limit = limit;
  return q;
}

SeriesQuery Series(std::string node, std::string glob, std::optional<double> since = {}) {
  SeriesQuery q;
  q.node = std::move(node);
  q.name_glob = std::move(glob);
  q.since = since;
  return q;
}

TEST(StoreOpen, FreshFileIsVersion2InWalMode) {
  TempDir dir;
  const std::string path = dir.File("a/b/parity.db");  // parents are created
  auto store = OpenOrDie(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->schema_version(), kSchemaVersion);
  EXPECT_EQ(store->path(), path);
  ASSERT_TRUE(fs::exists(path));
  Raw raw(path);
  EXPECT_EQ(raw.One("PRAGMA user_version"), "2");
  EXPECT_EQ(raw.One("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw.Rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"),
            (std::vector<std::string>{"metrics", "runs", "stages"}));
  // Stages and metrics go with their run.
  for (const std::string table : {"stages", "metrics"}) {
    EXPECT_EQ(raw.One("SELECT \"table\", \"from\", \"to\", on_delete FROM "
                      "pragma_foreign_key_list('" +
                      table + "')"),
              "runs|run_id|id|CASCADE");
  }
}

TEST(StoreRecord, RoundTripsEveryField) {
  TempDir dir;
  auto store = OpenOrDie(dir.File("parity.db"));
  ASSERT_NE(store, nullptr);
  const RunRecord run = SampleRun("run-1", 1'764'000'000.25);
  RunRecord bare;  // only what a run must have: optional fields stay absent
  bare.uid = "run-2";
  bare.kind = "accept";
  bare.started = 1'764'000'100.0;
  ASSERT_TRUE(store->Record(run).ok());
  ASSERT_TRUE(store->Record(bare).ok());

  auto runs = store->Runs({});
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 2u);
  // Newest first.
  const RunRecord& b = (*runs)[0];
  const RunRecord& r = (*runs)[1];
  EXPECT_EQ(b.uid, "run-2");
  EXPECT_EQ(b.kind, "accept");
  EXPECT_EQ(b.node, "");
  EXPECT_FALSE(b.finished.has_value());
  EXPECT_FALSE(b.level.has_value());
  EXPECT_EQ(b.status, "");
  EXPECT_TRUE(b.stages.empty());

  EXPECT_EQ(r.uid, "run-1");
  EXPECT_EQ(r.kind, "collect");
  EXPECT_EQ(r.node, "gpu01");
  EXPECT_DOUBLE_EQ(r.started, 1'764'000'000.25);
  ASSERT_TRUE(r.finished.has_value());
  EXPECT_DOUBLE_EQ(*r.finished, 1'764'000'120.75);
  EXPECT_EQ(r.level, std::optional<int>(2));
  EXPECT_EQ(r.backend, "cuda");
  EXPECT_EQ(r.plan, "acceptance");
  EXPECT_EQ(r.bundle, "/data/bundles/run-1");
  EXPECT_EQ(r.status, "failed");
  EXPECT_EQ(r.tool_version, "1.2.3");
  EXPECT_EQ(r.fingerprint, R"({"gpu":"H100"})");
  EXPECT_TRUE(r.metrics.empty());  // Runs leaves metrics out
  ASSERT_EQ(r.stages.size(), 3u);  // in the order recorded, not by name
  EXPECT_EQ(r.stages[0].name, "env");
  EXPECT_EQ(r.stages[1].name, "stream");
  EXPECT_EQ(r.stages[1].kind, "bench");
  EXPECT_EQ(r.stages[1].status, "failed");
  EXPECT_EQ(r.stages[1].reason, "triad below 90%");
  EXPECT_EQ(r.stages[1].seconds, std::optional<double>(60.25));
  EXPECT_EQ(r.stages[2].name, "burn");
  EXPECT_EQ(r.stages[2].status, "skipped");
  EXPECT_FALSE(r.stages[2].seconds.has_value());
  EXPECT_EQ(r.stages[0].reason, "");

  auto points = store->Series({});
  ASSERT_TRUE(points.ok()) << points.status().message();
  ASSERT_EQ(points->size(), 2u);
  // Ordered by name: latency.launch before stream.triad.
  const SeriesPoint& lat = (*points)[0];
  const SeriesPoint& triad = (*points)[1];
  EXPECT_EQ(lat.name, "latency.launch");
  EXPECT_EQ(lat.dtype, "");
  EXPECT_EQ(lat.params, "{}");
  EXPECT_EQ(lat.unit, "us");
  EXPECT_EQ(lat.better, "lower");
  EXPECT_FALSE(lat.valid);
  EXPECT_FALSE(lat.cv.has_value());
  EXPECT_EQ(triad.uid, "run-1");
  EXPECT_EQ(triad.node, "gpu01");
  EXPECT_DOUBLE_EQ(triad.started, 1'764'000'000.25);
  EXPECT_EQ(triad.stage, "stream");
  EXPECT_EQ(triad.dtype, "float64");
  EXPECT_EQ(triad.params, R"({"n":33554432})");
  EXPECT_EQ(triad.unit, "GB/s");
  EXPECT_EQ(triad.better, "higher");
  EXPECT_DOUBLE_EQ(triad.value, 3000.0);
  EXPECT_EQ(triad.cv, std::optional<double>(0.01));
  EXPECT_TRUE(triad.valid);
}

TEST(StoreRecord, SameUidReplacesStagesAndMetrics) {
  TempDir dir;
  const std::string path = dir.File("parity.db");
  auto store = OpenOrDie(path);
  ASSERT_NE(store, nullptr);
  RunRecord run = SampleRun("resumed", 2000.0);
  run.status = "running";
  run.finished.reset();
  ASSERT_TRUE(store->Record(run).ok());
  run.status = "passed";
  run.finished = 2500.0;
  run.stages = {{"env", "env", "passed", "", 1.0}, {"stream", "bench", "passed", "", 50.0}};
  run.metrics = {{"stream", "stream.triad", "float64", "{}", "GB/s", 3100.0, 0.02, true, "higher"}};
  ASSERT_TRUE(store->Record(run).ok());

  auto runs = store->Runs({});
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].status, "passed");
  EXPECT_EQ((*runs)[0].finished, std::optional<double>(2500.0));
  ASSERT_EQ((*runs)[0].stages.size(), 2u);
  EXPECT_EQ((*runs)[0].stages[1].status, "passed");
  auto points = store->Series({});
  ASSERT_TRUE(points.ok());
  ASSERT_EQ(points->size(), 1u);
  EXPECT_DOUBLE_EQ((*points)[0].value, 3100.0);
  store.reset();
  Raw raw(path);
  EXPECT_EQ(raw.One("SELECT count(*) FROM runs"), "1");
  EXPECT_EQ(raw.One("SELECT count(*) FROM stages"), "2");
  EXPECT_EQ(raw.One("SELECT count(*) FROM metrics"), "1");
}

TEST(StoreRecord, RefusesBadRunsAndLeavesNothingBehind) {
  TempDir dir;
  const std::string path = dir.File("parity.db");
  auto store = OpenOrDie(path);
  ASSERT_NE(store, nullptr);
  RunRecord no_uid = SampleRun("", 1.0);
  Status s = store->Record(no_uid);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_NE(s.message().find(path), std::string::npos) << s.message();

  RunRecord nan_metric = SampleRun("nan", 1.0);
  nan_metric.metrics[0].value = std::nan("");
  EXPECT_EQ(store->Record(nan_metric).code(), StatusCode::kInvalidInput);

  // Two stages with one name: SQLite refuses the second, and the whole run is rolled back.
  RunRecord twice = SampleRun("twice", 1.0);
  twice.stages.push_back(twice.stages[0]);
  s = store->Record(twice);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_NE(s.message().find("UNIQUE"), std::string::npos) << s.message();
  auto runs = store->Runs({});
  ASSERT_TRUE(runs.ok());
  EXPECT_TRUE(runs->empty());
}

/// The uids of the runs the query returns, in order.
std::vector<std::string> Uids(Store& store, const RunQuery& query) {
  std::vector<std::string> out;
  auto runs = store.Runs(query);
  EXPECT_TRUE(runs.ok());
  if (runs.ok()) {
    for (const auto& r : *runs) out.push_back(r.uid);
  }
  return out;
}

TEST(StoreRuns, FiltersAndLimits) {
  TempDir dir;
  auto store = OpenOrDie(dir.File("parity.db"));
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 5; ++i) {
    RunRecord run = SampleRun("c" + std::to_string(i), 1000.0 + 100 * i);
    run.node = i % 2 == 0 ? "even" : "odd";
    ASSERT_TRUE(store->Record(run).ok());
  }
  RunRecord accept = SampleRun("a", 1050.0);
  accept.kind = "accept";
  accept.node = "even";
  ASSERT_TRUE(store->Record(accept).ok());

  auto uids = [&](const RunQuery& q) { return Uids(*store, q); };
  using V = std::vector<std::string>;
  EXPECT_EQ(uids({}), (V{"c4", "c3", "c2", "c1", "a", "c0"}));
  EXPECT_EQ(uids(Runs("even")), (V{"c4", "c2", "a", "c0"}));
  EXPECT_EQ(uids(Runs("even", "collect")), (V{"c4", "c2", "c0"}));
  EXPECT_EQ(uids(Runs("", "accept")), (V{"a"}));
  EXPECT_EQ(uids(Runs("", "", 1200.0)), (V{"c4", "c3", "c2"}));  // started >= since
  EXPECT_EQ(uids(Runs("", "", {}, 2)), (V{"c4", "c3"}));
  EXPECT_EQ(uids(Runs("nowhere")), V{});
}

TEST(StoreRuns, PagesSearchesCountsAndFindsById) {
  TempDir dir;
  auto store = OpenOrDie(dir.File("parity.db"));
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 7; ++i) {
    RunRecord run = SampleRun("c" + std::to_string(i), 1000.0 + 100 * i);
    run.status = i == 3 ? "failed" : "passed";
    run.plan = i < 2 ? "nightly" : "weekly";
    run.bundle = "/data/Bundles/run-" + std::to_string(i);
    ASSERT_TRUE(store->Record(run).ok());
  }
  auto uids = [&](const RunQuery& q) { return Uids(*store, q); };
  using V = std::vector<std::string>;
  RunQuery page;
  page.limit = 2;
  page.offset = 2;
  EXPECT_EQ(uids(page), (V{"c4", "c3"}));
  page.offset = 6;
  EXPECT_EQ(uids(page), (V{"c0"}));
  RunQuery failed;
  failed.status = "failed";
  EXPECT_EQ(uids(failed), (V{"c3"}));
  RunQuery nightly;
  nightly.plan = "nightly";
  EXPECT_EQ(uids(nightly), (V{"c1", "c0"}));
  RunQuery search;
  search.search = "BUNDLES/RUN-5";  // case-insensitive, on the bundle path
  EXPECT_EQ(uids(search), (V{"c5"}));
  auto count = store->CountRuns(nightly);
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 2u);
  page.offset = 0;
  page.limit = 1;
  auto all = store->CountRuns(page);  // limit and offset don't count
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, 7u);
  auto newest = store->Runs(page);
  ASSERT_TRUE(newest.ok());
  ASSERT_EQ(newest->size(), 1u);
  RunQuery by_id;
  by_id.id = newest->front().id;
  EXPECT_EQ(uids(by_id), (V{"c6"}));
  auto found = store->RunByUid("c2");
  ASSERT_TRUE(found.ok());
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->bundle, "/data/Bundles/run-2");
  EXPECT_FALSE((*found)->stages.empty());
  auto missing = store->RunByUid("nope");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
}

TEST(StoreOpenReadOnly, ReadsWithoutWritingAndRefusesOtherSchemas) {
  TempDir dir;
  const std::string path = dir.File("parity.db");
  {
    auto store = OpenOrDie(path);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Record(SampleRun("c0", 1000.0)).ok());
  }
  auto ro = Store::OpenReadOnly(path);
  ASSERT_TRUE(ro.ok()) << ro.status().message();
  auto runs = (*ro)->Runs({});
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(runs->size(), 1u);
  EXPECT_FALSE((*ro)->Record(SampleRun("c1", 2000.0)).ok());  // read-only

  EXPECT_FALSE(Store::OpenReadOnly(dir.File("missing.db")).ok());
  EXPECT_FALSE(fs::exists(dir.File("missing.db")));  // nothing created
  const std::string future = dir.File("future.db");
  {
    Raw raw(future);
    raw.Exec("CREATE TABLE runs(id INTEGER PRIMARY KEY); PRAGMA user_version = 9;");
  }
  auto newer = Store::OpenReadOnly(future);
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().message(),
            future + ": schema version 9 is newer than this parity's (2)");
}

TEST(StoreMetricNames, CountsPointsPerName) {
  TempDir dir;
  auto store = OpenOrDie(dir.File("parity.db"));
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Record(SampleRun("c0", 1000.0)).ok());
  ASSERT_TRUE(store->Record(SampleRun("c1", 2000.0)).ok());
  auto names = store->MetricNames(100);
  ASSERT_TRUE(names.ok());
  ASSERT_FALSE(names->empty());
  for (const auto& [name, points] : *names) EXPECT_EQ(points % 2, 0u) << name;
  auto one = store->MetricNames(1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->size(), 1u);
}

TEST(StoreSeries, FiltersByNodeGlobAndSince) {
  TempDir dir;
  auto store = OpenOrDie(dir.File("parity.db"));
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 3; ++i) {
    for (const std::string node : {"n1", "n2"}) {
      RunRecord run;
      run.uid = node + "-" + std::to_string(i);
      run.kind = "collect";
      run.node = node;
      run.started = 100.0 * (3 - i);  // recorded newest first; Series sorts by time
      run.metrics = {
          {"bench", "stream.triad", "float64", "{}", "GB/s", 10.0 + i, {}, true, "higher"},
          {"bench", "stream.copy", "float64", "{}", "GB/s", 20.0 + i, {}, true, "higher"},
          {"bench", "streamx", "float64", "{}", "GB/s", 1.0, {}, true, "higher"},
          {"bench", "gemm", "float32", R"({"n":1024})", "GFLOP/s", 5.0, {}, true, "higher"}};
      ASSERT_TRUE(store->Record(run).ok());
    }
  }
  auto get = [&](const SeriesQuery& q) {
    auto points = store->Series(q);
    EXPECT_TRUE(points.ok()) << points.status().message();
    return points.ok() ? std::move(points).value() : std::vector<SeriesPoint>{};
  };
  auto all = get({});
  EXPECT_EQ(all.size(), 24u);

  auto triad_n1 = get(Series("n1", "stream.triad"));
  ASSERT_EQ(triad_n1.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(triad_n1[i].node, "n1");
    EXPECT_EQ(triad_n1[i].name, "stream.triad");
  }
  // Oldest first within a series.
  EXPECT_DOUBLE_EQ(triad_n1[0].started, 100.0);
  EXPECT_DOUBLE_EQ(triad_n1[0].value, 12.0);
  EXPECT_DOUBLE_EQ(triad_n1[2].started, 300.0);

  // "stream.*" is not "stream*": streamx stays out; ordering is by (node, name, ..., started).
  auto streams = get(Series("", "stream.*"));
  ASSERT_EQ(streams.size(), 12u);
  EXPECT_EQ(streams[0].node, "n1");
  EXPECT_EQ(streams[0].name, "stream.copy");
  EXPECT_EQ(streams[3].name, "stream.triad");
  EXPECT_EQ(streams[6].node, "n2");
  for (const auto& p : streams) EXPECT_NE(p.name, "streamx");

  EXPECT_EQ(get(Series("", "stream*")).size(), 18u);
  EXPECT_EQ(get(Series("", "*.t?iad")).size(), 6u);
  EXPECT_EQ(get(Series("", "[!s]*")).size(), 6u);   // fnmatch negation: gemm only
  EXPECT_EQ(get(Series("", "stream")).size(), 0u);  // an exact name is not a prefix

  auto recent = get(Series("n2", "gemm", 200.0));
  ASSERT_EQ(recent.size(), 2u);
  EXPECT_EQ(recent[0].params, R"({"n":1024})");
  EXPECT_GE(recent[0].started, 200.0);
}

TEST(StoreLastStageSeconds, PicksNewestPassedOrFailed) {
  TempDir dir;
  auto store = OpenOrDie(dir.File("parity.db"));
  ASSERT_NE(store, nullptr);
  auto add = [&](const std::string& uid, double started, const std::string& node,
                 const std::string& plan, const std::string& status,
                 std::optional<double> seconds) {
    RunRecord run;
    run.uid = uid;
    run.kind = "collect";
    run.node = node;
    run.plan = plan;
    run.started = started;
    run.stages = {{"stream", "bench", status, "", seconds}};
    ASSERT_TRUE(store->Record(run).ok());
  };
  add("old", 100.0, "n1", "p", "passed", 40.0);
  add("mid", 200.0, "n1", "p", "failed", 55.0);
  add("new-skipped", 300.0, "n1", "p", "skipped", 0.0);
  add("new-error", 400.0, "n1", "p", "error", 3.0);
  add("other-plan", 500.0, "n1", "q", "passed", 99.0);
  add("other-node", 600.0, "n2", "p", "passed", 77.0);

  auto seconds = store->LastStageSeconds("n1", "p", "stream");
  ASSERT_TRUE(seconds.ok());
  EXPECT_EQ(*seconds, std::optional<double>(55.0));
  EXPECT_EQ(*store->LastStageSeconds("n1", "q", "stream"), std::optional<double>(99.0));
  EXPECT_EQ(*store->LastStageSeconds("n2", "p", "stream"), std::optional<double>(77.0));
  EXPECT_FALSE(store->LastStageSeconds("n1", "p", "gemm")->has_value());
  EXPECT_FALSE(store->LastStageSeconds("n3", "p", "stream")->has_value());
}

// The first release's schema, exactly.
constexpr char kV1Schema[] =
    "CREATE TABLE runs(id INTEGER PRIMARY KEY, uid TEXT UNIQUE NOT NULL, kind TEXT NOT NULL, "
    "node TEXT, started REAL NOT NULL, level INTEGER, bundle TEXT, status TEXT);"
    "CREATE TABLE results(run_id INTEGER NOT NULL REFERENCES runs(id), benchmark TEXT NOT NULL, "
    "dtype TEXT, params TEXT, unit TEXT, median REAL);"
    "PRAGMA user_version = 1;";

void MakeV1(const std::string& path) {
  Raw raw(path);
  raw.Exec(kV1Schema);
  raw.Exec(
      "INSERT INTO runs VALUES(1, 'u1', 'collect', 'gpu01', 1000.0, 1, '/b/1', 'passed');"
      "INSERT INTO runs VALUES(2, 'u2', 'collect', NULL, 2000.0, NULL, NULL, NULL);"
      "INSERT INTO results VALUES(1, 'stream.triad', 'float64', '{\"n\":8}', 'GB/s', 900.5);"
      "INSERT INTO results VALUES(1, 'latency.launch', NULL, NULL, 'us', 4.25);"
      "INSERT INTO results VALUES(1, 'gemm', 'float32', '{}', 'GFLOP/s', NULL);"
      "INSERT INTO results VALUES(2, 'rng.philox', 'float32', '{}', 'Gsamples/s', 12.0);"
      "INSERT INTO results VALUES(2, 'odd', NULL, NULL, 'ratio', 0.5);"
      // Version 1 did not enforce the reference: a result of no run is dropped.
      "INSERT INTO results VALUES(7, 'orphan', NULL, NULL, 'GB/s', 1.0);");
}

TEST(StoreMigration, UpgradesVersion1) {
  TempDir dir;
  const std::string path = dir.File("v1.db");
  MakeV1(path);
  {
    auto store = OpenOrDie(path);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->schema_version(), 2);
    auto runs = store->Runs({});
    ASSERT_TRUE(runs.ok()) << runs.status().message();
    ASSERT_EQ(runs->size(), 2u);
    EXPECT_EQ((*runs)[1].uid, "u1");
    EXPECT_EQ((*runs)[1].node, "gpu01");
    EXPECT_EQ((*runs)[1].level, std::optional<int>(1));
    EXPECT_EQ((*runs)[1].bundle, "/b/1");
    EXPECT_EQ((*runs)[1].status, "passed");
    EXPECT_FALSE((*runs)[1].finished.has_value());
    EXPECT_EQ((*runs)[0].uid, "u2");
    EXPECT_EQ((*runs)[0].node, "");
    EXPECT_FALSE((*runs)[0].level.has_value());
    // The migrated store takes new runs.
    ASSERT_TRUE(store->Record(SampleRun("new", 3000.0)).ok());
  }
  Raw raw(path);
  EXPECT_EQ(raw.One("PRAGMA user_version"), "2");
  EXPECT_EQ(raw.One("SELECT count(*) FROM sqlite_master WHERE name = 'results'"), "0");
  EXPECT_EQ(raw.One("SELECT count(*) FROM metrics WHERE name IN ('gemm', 'orphan')"), "0");
  EXPECT_EQ(
      raw.Rows("SELECT run_id, stage, name, dtype, params, unit, value, cv, valid, better "
               "FROM metrics WHERE run_id IN (1, 2) ORDER BY run_id, name"),
      (std::vector<std::string>{"1|bench|latency.launch||{}|us|4.25|NULL|1|lower",
                                "1|bench|stream.triad|float64|{\"n\":8}|GB/s|900.5|NULL|1|higher",
                                "2|bench|odd||{}|ratio|0.5|NULL|1|",
                                "2|bench|rng.philox|float32|{}|Gsamples/s|12.0|NULL|1|higher"}));
}

TEST(StoreMigration, MigratedEqualsFreshAndReopeningIsANoOp) {
  TempDir dir;
  const std::string old_path = dir.File("v1.db");
  const std::string fresh_path = dir.File("fresh.db");
  MakeV1(old_path);
  ASSERT_NE(OpenOrDie(old_path), nullptr);
  ASSERT_NE(OpenOrDie(fresh_path), nullptr);
  std::vector<std::string> migrated_structure, before_rows;
  {
    Raw migrated(old_path), fresh(fresh_path);
    migrated_structure = Structure(migrated);
    EXPECT_EQ(migrated_structure, Structure(fresh));
    EXPECT_FALSE(migrated_structure.empty());
    before_rows = migrated.Rows("SELECT * FROM metrics ORDER BY rowid");
    EXPECT_EQ(before_rows.size(), 4u);
  }
  auto again = OpenOrDie(old_path);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->schema_version(), 2);
  again.reset();
  Raw migrated(old_path);
  EXPECT_EQ(Structure(migrated), migrated_structure);
  EXPECT_EQ(migrated.Rows("SELECT * FROM metrics ORDER BY rowid"), before_rows);
  EXPECT_EQ(migrated.One("SELECT count(*) FROM runs"), "2");
}

TEST(StoreOpen, RefusesANewerSchema) {
  TempDir dir;
  const std::string path = dir.File("future.db");
  {
    Raw raw(path);
    raw.Exec("CREATE TABLE runs(id INTEGER PRIMARY KEY); PRAGMA user_version = 9;");
  }
  auto store = Store::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(store.status().message(), path + ": schema version 9 is newer than this parity's (2)");
  Raw raw(path);  // untouched
  EXPECT_EQ(raw.One("PRAGMA user_version"), "9");
  EXPECT_EQ(raw.One("PRAGMA journal_mode"), "delete");
}

TEST(StoreOpen, RefusesAFileThatIsNotADatabase) {
  TempDir dir;
  const std::string path = dir.File("notes.db");
  {
    std::ofstream out(path);
    for (int i = 0; i < 64; ++i) out << std::string(63, 'a' + i % 26) << "\n";  // 4 KiB of text
  }
  auto store = Store::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(store.status().message(), path + ": file is not a database");
  EXPECT_EQ(fs::file_size(path), 4096u);  // not overwritten
}

TEST(StoreOpen, RefusesADirectoryAndAForeignDatabase) {
  TempDir dir;
  const std::string sub = dir.File("sub");
  fs::create_directories(sub);
  auto store = Store::Open(sub);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(store.status().message().find("directory"), std::string::npos);

  const std::string other = dir.File("other.db");
  {
    Raw raw(other);
    raw.Exec("CREATE TABLE notes(text TEXT)");
  }
  store = Store::Open(other);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(store.status().message().find("not a parity results store"), std::string::npos)
      << store.status().message();
}

TEST(StoreOpen, RefusesAReadOnlyFile) {
  TempDir dir;
  const std::string path = dir.File("ro.db");
  ASSERT_NE(OpenOrDie(path), nullptr);
  fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  auto check = [&path]() {
    auto store = Store::Open(path);
    return !store.ok() && store.status().code() == StatusCode::kInvalidInput &&
           store.status().message() == path + ": is not writable";
  };
  if (::geteuid() != 0) {
    EXPECT_TRUE(check());
    return;
  }
  // Root writes any file: the check runs in a child that has dropped to nobody.
  fs::permissions(fs::path(path).parent_path(), fs::perms::owner_all | fs::perms::group_read |
                                                    fs::perms::group_exec | fs::perms::others_read |
                                                    fs::perms::others_exec);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    ::_exit(check() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the store opened or said something else; 2: setuid";
}

TEST(StoreDefaultPath, FollowsXdgThenHome) {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  const char* home = std::getenv("HOME");
  const std::string saved_xdg = xdg ? xdg : "", saved_home = home ? home : "";
  setenv("XDG_DATA_HOME", "/xdg", 1);
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(DefaultPath(), "/xdg/parity/parity.db");
  setenv("XDG_DATA_HOME", "relative", 1);  // not absolute: ignored, as the XDG spec says
  EXPECT_EQ(DefaultPath(), "/home/u/.local/share/parity/parity.db");
  unsetenv("XDG_DATA_HOME");
  EXPECT_EQ(DefaultPath(), "/home/u/.local/share/parity/parity.db");
  unsetenv("HOME");
  EXPECT_EQ(DefaultPath(), "");
  if (xdg) setenv("XDG_DATA_HOME", saved_xdg.c_str(), 1);
  if (home) setenv("HOME", saved_home.c_str(), 1);
}

}  // namespace
}  // namespace parity::store
