// SPDX-License-Identifier: Apache-2.0
#include "accept/accept.h"

#include <fmt/format.h>
#include <sodium.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <future>
#include <system_error>

#include "accept/bundle_view.h"
#include "accept/env_diff.h"
#include "accept/junit.h"
#include "accept/report_html.h"
#include "accept/signing.h"
#include "accept/telemetry_record.h"
#include "core/file_util.h"
#include "core/text.h"
#include "core/version.h"
#include "store/store.h"

namespace parity::accept {
namespace {

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string NewUid() {
  unsigned char bytes[16];
  randombytes_buf(bytes, sizeof bytes);
  std::string out;
  for (unsigned char b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

std::string Hostname() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "";
  return host;
}

/// OUT made, or checked to hold nothing but a previous report (whose signature is removed: it
/// would not cover the new files).
Status PrepareOut(const std::string& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec)) {
    return Status::Invalid(out, "exists and is not a directory");
  }
  if (!fs::exists(out, ec)) {
    fs::create_directories(out, ec);
    if (ec) return Status::Invalid(out, ec.message());
    return Status::Ok();
  }
  for (const fs::directory_entry& e : fs::directory_iterator(out, ec)) {
    const std::string name = e.path().filename().string();
    bool ours = false;
    for (const char* f : kReportFiles) ours = ours || name == f;
    if (!ours) {
      return Status::Invalid(out, fmt::format("holds '{}', which is not a report's file: accept "
                                              "writes only into an empty or a report directory, "
                                              "so that a signature covers the report alone",
                                              name));
    }
  }
  if (ec) return Status::Invalid(out, ec.message());
  fs::remove(fs::path(out) / "report.sig", ec);
  return Status::Ok();
}

/// The bundle's telemetry record, when it has a monitor stage that ran.
std::optional<Result<TelemetryRecord>> LoadTelemetry(const BundleView& bundle) {
  if (bundle.manifest.is_null()) return std::nullopt;
  bool ran = false;
  for (const StageView* s : bundle.OfKind("monitor")) ran = ran || s->status != "skipped";
  if (!ran) return std::nullopt;
  return ReadTelemetry(bundle.PathOf("telemetry.jsonl"));
}

/// Records the accept in the results store; why it could not, or "".
std::string Record(const AcceptOptions& options, const BundleView& base, const AcceptResult& result,
                   double started) {
  if (options.db_path.empty()) return "";
  auto store = store::Store::Open(options.db_path);
  if (!store.ok()) return store.status().message();
  store::RunRecord run;
  run.uid = NewUid();
  run.kind = "accept";
  run.node = Hostname();
  run.started = started;
  run.finished = UnixNow();
  std::error_code ec;
  run.bundle = std::filesystem::absolute(options.out, ec).string();
  if (base.manifest.is_object()) {
    if (base.manifest.contains("plan") && base.manifest["plan"].is_object()) {
      run.plan = StringField(base.manifest["plan"], "name");
    }
    if (base.manifest.contains("level") && base.manifest["level"].is_number_integer()) {
      run.level = base.manifest["level"].get<int>();
    }
    run.backend = StringField(base.manifest, "backend");
  }
  run.status = result.pass ? "passed" : "failed";
  run.tool_version = kParityVersion;
  for (const CriterionResult& c : result.criteria) {
    store::StageRecord s;
    s.name = c.id;
    s.kind = c.part;
    s.status = c.status == Verdict::kPass   ? "passed"
               : c.status == Verdict::kFail ? "failed"
               : c.status == Verdict::kSkip ? "skipped"
                                            : "error";
    s.reason = c.reason;
    run.stages.push_back(std::move(s));
    if (c.part == "throughput" && c.evidence.contains("geomean") &&
        c.evidence["geomean"].is_number()) {
      store::MetricRecord m;
      m.stage = c.id;
      m.name = fmt::format("geomean.{}", StringField(c.evidence, "suite"));
      m.params = "{}";
      m.unit = "ratio";
      m.value = c.evidence["geomean"].get<double>();
      m.better = "higher";
      run.metrics.push_back(std::move(m));
    }
  }
  const Status recorded = (*store)->Record(run);
  return recorded.ok() ? "" : recorded.message();
}

}  // namespace

namespace {

/// JudgeCriteria, keeping the candidate's telemetry record it read in `cand_telemetry`.
std::vector<CriterionResult> Judge(const BundleView& base, const BundleView& cand,
                                   const Criteria& criteria,
                                   std::optional<Result<TelemetryRecord>>& cand_telemetry) {
  // The candidate's telemetry record is read while the other parts run; the stability part
  // judges it.
  auto cand_telemetry_future =
      std::async(std::launch::async, [&cand] { return LoadTelemetry(cand); });
  AcceptInput input{base, cand, criteria, nullptr, ""};
  std::vector<CriterionResult> out;
  for (const Part* part : Parts()) {
    if (part == StabilityPart()) {
      cand_telemetry = cand_telemetry_future.get();
      if (cand_telemetry && cand_telemetry->ok()) {
        input.candidate_telemetry = &cand_telemetry->value();
      } else if (cand_telemetry) {
        input.candidate_telemetry_problem = cand_telemetry->status().message();
      }
    }
    for (CriterionResult& c : part->Evaluate(input)) out.push_back(std::move(c));
  }
  if (cand_telemetry_future.valid()) cand_telemetry = cand_telemetry_future.get();
  return out;
}

}  // namespace

std::vector<CriterionResult> JudgeCriteria(const BundleView& base, const BundleView& cand,
                                           const Criteria& criteria) {
  std::optional<Result<TelemetryRecord>> cand_telemetry;
  return Judge(base, cand, criteria, cand_telemetry);
}

Json CriterionJson(const CriterionResult& c) {
  return {{"id", c.id},
          {"part", c.part},
          {"stage", c.stage.empty() ? Json() : Json(c.stage)},
          {"title", c.title},
          {"status", VerdictName(c.status)},
          {"reason", c.reason},
          {"evidence", c.evidence}};
}

Result<AcceptResult> RunAccept(const AcceptOptions& options) {
  const double started = UnixNow();
  const auto clock_start = std::chrono::steady_clock::now();
  PARITY_ASSIGN_OR_RETURN(BundleView base, OpenBundle(options.baseline));
  PARITY_ASSIGN_OR_RETURN(BundleView cand, OpenBundle(options.candidate));
  if (options.sign_key) {
    // Fail before the work when the key can't be read, not after.
    PARITY_RETURN_IF_ERROR(
        ReadSmallFile(*options.sign_key, std::size_t{1} << 16, "secret key").status());
  }
  PARITY_RETURN_IF_ERROR(PrepareOut(options.out));

  AcceptResult result;
  result.out = options.out;
  result.strict = options.strict || options.criteria.strict;
  // The baseline's telemetry record, only drawn, is read while the parts judge.
  auto base_telemetry_future =
      std::async(std::launch::async, [&base] { return LoadTelemetry(base); });
  std::optional<Result<TelemetryRecord>> cand_telemetry;
  result.criteria = Judge(base, cand, options.criteria, cand_telemetry);
  auto base_telemetry = base_telemetry_future.get();
  for (const CriterionResult& c : result.criteria) {
    switch (c.status) {
      case Verdict::kPass:
        ++result.passed;
        break;
      case Verdict::kFail:
        ++result.failed;
        break;
      case Verdict::kSkip:
        ++result.skipped;
        break;
      case Verdict::kError:
        ++result.errors;
        break;
    }
  }
  result.pass = result.failed == 0 && result.errors == 0 && result.passed > 0 &&
                !(result.strict && result.skipped > 0);

  Json& r = result.report;
  r = Document("parity-report", 1);
  r["verdict"] = result.pass ? "pass" : "fail";
  r["strict"] = result.strict;
  r["created"] = UtcTime(started);
  r["tool"] = {{"name", "parity"}, {"version", kParityVersion}, {"chart_js", ChartJsVersion()}};
  r["summary"] = {{"pass", result.passed},
                  {"fail", result.failed},
                  {"skip", result.skipped},
                  {"error", result.errors}};
  if (result.passed == 0 && result.failed == 0 && result.errors == 0) {
    r["summary"]["note"] = "no criterion could be judged: every one was skipped";
  }
  r["criteria_config"] = CriteriaToJson(options.criteria);
  r["baseline"] = base.Identity();
  r["candidate"] = cand.Identity();
  Json criteria = Json::array();
  for (const CriterionResult& c : result.criteria) criteria.push_back(CriterionJson(c));
  r["criteria"] = std::move(criteria);
  r["environment_diff"] = EnvDiffJson(DiffSettings(Settings(base), Settings(cand)));
  auto telemetry = [](const std::optional<Result<TelemetryRecord>>& t) -> Json {
    if (!t) return Json();
    if (!t->ok()) return {{"problem", t->status().message()}};
    return TelemetryJson(t->value());
  };
  r["telemetry"] = {{"baseline", telemetry(base_telemetry)},
                    {"candidate", telemetry(cand_telemetry)}};

  namespace fs = std::filesystem;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - clock_start).count();
  auto write = [&](const char* name, const std::string& text) -> Status {
    const std::string path = (fs::path(options.out) / name).string();
    PARITY_RETURN_IF_ERROR(WriteFileAtomically(path, {AsBytes(text)}));
    result.files.push_back(path);
    return Status::Ok();
  };
  PARITY_RETURN_IF_ERROR(write("report.json", Dump(r) + "\n"));
  PARITY_RETURN_IF_ERROR(write("report.html", ReportHtml(r)));
  PARITY_RETURN_IF_ERROR(
      write("junit.xml", JunitXml(result.criteria, result.strict, UtcTime(started), seconds)));
  if (options.sign_key) {
    PARITY_RETURN_IF_ERROR(SignDirectory(options.out, *options.sign_key));
    result.files.push_back((fs::path(options.out) / "report.sig").string());
  }
  result.store_problem = Record(options, base, result, started);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - clock_start).count();
  return result;
}

std::string AcceptText(const AcceptResult& result) {
  std::size_t id_width = 9, stage_width = 5;
  for (const CriterionResult& c : result.criteria) {
    id_width = std::max(id_width, c.id.size());
    stage_width = std::max(stage_width, c.stage.size());
  }
  std::string text = fmt::format("{:<6}  {:<{}}  {:<{}}  {}\n", "status", "criterion", id_width,
                                 "stage", stage_width, "reason");
  for (const CriterionResult& c : result.criteria) {
    std::string status(VerdictName(c.status));
    for (char& ch : status) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    text += fmt::format("{:<6}  {:<{}}  {:<{}}  {}\n", status, c.id, id_width,
                        c.stage.empty() ? "-" : c.stage, stage_width, c.reason);
  }
  text += fmt::format("verdict: {} ({} passed, {} failed, {} skipped, {} errors{})\n",
                      result.pass ? "PASS" : "FAIL", result.passed, result.failed, result.skipped,
                      result.errors,
                      result.strict && result.skipped > 0 ? "; --strict: a skip fails" : "");
  for (const std::string& f : result.files) text += fmt::format("wrote {}\n", f);
  return text;
}

}  // namespace parity::accept
