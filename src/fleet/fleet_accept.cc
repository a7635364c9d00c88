// SPDX-License-Identifier: Apache-2.0
#include "fleet/fleet_accept.h"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "accept/bundle_view.h"
#include "core/file_util.h"
#include "core/text_table.h"
#include "fleet/fleet_collect.h"

namespace parity::fleet {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSummary = "fleet-accept.json";

Status PrepareFleetOut(const std::string& out) {
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec)) {
    return Status::Invalid(out, "exists and is not a directory");
  }
  if (fs::exists(out, ec)) {
    for (const fs::directory_entry& e : fs::directory_iterator(out, ec)) {
      const std::string name = e.path().filename().string();
      if (name != kSummary && name != "nodes") {
        return Status::Invalid(out, fmt::format("holds '{}', which is not a fleet accept's: "
                                                "accept writes only into an empty or a fleet "
                                                "accept's directory",
                                                name));
      }
    }
    if (ec) return Status::Invalid(out, ec.message());
    fs::remove_all(fs::path(out) / "nodes", ec);
    fs::remove(fs::path(out) / kSummary, ec);
  }
  fs::create_directories(fs::path(out) / "nodes", ec);
  if (ec) return Status::Invalid(out, ec.message());
  return Status::Ok();
}

}  // namespace

Result<FleetAcceptResult> RunFleetAccept(const accept::AcceptOptions& options) {
  PARITY_ASSIGN_OR_RETURN(Json manifest, LoadFleetManifest(options.candidate));
  // The baseline is checked once, before any member is judged.
  PARITY_ASSIGN_OR_RETURN(accept::BundleView base, accept::OpenBundle(options.baseline));
  (void)base;
  PARITY_RETURN_IF_ERROR(PrepareFleetOut(options.out));
  const std::string manifest_path = (fs::path(options.candidate) / "fleet.json").string();

  FleetAcceptResult result;
  result.out = options.out;
  Json nodes = Json::array();
  bool all_pass = !manifest["members"].empty();
  for (const Json& m : manifest["members"]) {
    MemberVerdict v;
    v.name = m["name"];
    v.rank = m.value("rank", Json());
    const bool has_bundle = m["status"] == "ok" && m.contains("bundle") && m["bundle"].is_string();
    if (!has_bundle) {
      v.verdict = "error";
      const std::string why = StringField(m, "reason");
      v.reason = fmt::format("no bundle: {}", why.empty() ? "its collect failed" : why);
    } else {
      const std::string rel = m["bundle"];
      if (rel.empty() || rel.front() == '/' || rel.find("..") != std::string::npos) {
        return Status::Invalid(manifest_path, fmt::format("member {}: 'bundle' '{}' is not a path "
                                                          "inside the fleet directory",
                                                          v.name, rel));
      }
      accept::AcceptOptions one = options;
      one.candidate = (fs::path(options.candidate) / rel).string();
      one.out = (fs::path(options.out) / "nodes" / v.name).string();
      Result<accept::AcceptResult> r = accept::RunAccept(one);
      if (!r.ok()) {
        v.verdict = "error";
        v.reason = r.status().message();
      } else {
        v.verdict = r->pass ? "pass" : "fail";
        v.passed = r->passed;
        v.failed = r->failed;
        v.skipped = r->skipped;
        v.errors = r->errors;
        v.report = fmt::format("nodes/{}/report.json", v.name);
      }
    }
    all_pass = all_pass && v.verdict == "pass";
    Json node = {{"name", v.name}, {"rank", v.rank}, {"verdict", v.verdict}};
    if (!v.reason.empty()) node["reason"] = v.reason;
    if (!v.report.empty()) {
      node["report"] = v.report;
      node["criteria"] = {
          {"passed", v.passed}, {"failed", v.failed}, {"skipped", v.skipped}, {"errors", v.errors}};
    }
    nodes.push_back(std::move(node));
    result.members.push_back(std::move(v));
  }
  result.pass = all_pass;
  Json& d = result.document;
  d = Document("parity-fleet-accept", 1);
  d["verdict"] = result.pass ? "pass" : "fail";
  d["baseline"] = fs::absolute(options.baseline).string();
  d["fleet"] = fs::absolute(options.candidate).string();
  d["nodes"] = std::move(nodes);
  PARITY_RETURN_IF_ERROR(
      WriteTextFile((fs::path(options.out) / kSummary).string(), Dump(d) + "\n"));
  return result;
}

std::string FleetAcceptText(const FleetAcceptResult& result) {
  Table table({"member", "rank", "verdict", "pass", "fail", "skip", "error", "reason"},
              {false, true, false, true, true, true, true, false});
  int passed = 0;
  for (const MemberVerdict& v : result.members) {
    passed += v.verdict == "pass";
    const bool judged = !v.report.empty();
    table.AddRow({v.name, v.rank.is_number() ? v.rank.dump() : "-", v.verdict,
                  judged ? std::to_string(v.passed) : "-", judged ? std::to_string(v.failed) : "-",
                  judged ? std::to_string(v.skipped) : "-", judged ? std::to_string(v.errors) : "-",
                  v.reason});
  }
  return fmt::format(
      "parity accept: fleet of {} members, reports in {}/nodes\n{}verdict: {} "
      "({} of {} members passed)\n",
      result.members.size(), result.out, table.Render(), result.pass ? "PASS" : "FAIL", passed,
      result.members.size());
}

}  // namespace parity::fleet
