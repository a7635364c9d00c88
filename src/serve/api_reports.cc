// SPDX-License-Identifier: Apache-2.0
// /api/reports: every report directory under the roots (a directory holding report.json,
// report.html or report.sig), its verdict from report.json, and its signature checked as
// `parity verify` checks it: valid, invalid with the files that changed, or unsigned. A report
// that can't be read is listed with the reason; the others are still listed.
#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

#include "accept/signing.h"
#include "core/file_util.h"
#include "serve/api.h"
#include "serve/security.h"

namespace parity::serve {
namespace {

constexpr std::size_t kMaxReports = 1000;
constexpr std::size_t kMaxVisited = 200000;
constexpr int kMaxDepth = 8;
constexpr std::size_t kMaxReportBytes = std::size_t{64} << 20;

/// The first file under `dir` (to kMaxDepth) whose real path leaves `root`, if any; logged.
std::optional<std::string> LeavesRoot(const std::filesystem::path& dir,
                                      const std::filesystem::path& root) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::size_t seen = 0;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator() && ++seen <= kMaxVisited;
       it.increment(ec)) {
    if (it.depth() >= kMaxDepth) it.disable_recursion_pending();
    std::error_code e;
    if (!it->is_symlink(e)) continue;
    const std::optional<std::string> real = RealPath(it->path().string());
    if (real && !IsUnder(*real, root.string())) {
      const std::string rel = fs::relative(it->path(), root, e).generic_string();
      LogRefused(rel, "a symbolic link out of the root, to " + *real);
      return rel;
    }
  }
  return std::nullopt;
}

Json SignatureJson(const std::string& dir, const std::filesystem::path& root) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(fs::path(dir) / accept::kSignatureFile, ec)) return {{"status", "unsigned"}};
  if (const auto out = LeavesRoot(dir, root)) {
    return {{"status", "invalid"}, {"problem", *out + ": a symbolic link out of the root"}};
  }
  auto verified = accept::VerifyDirectory(dir, std::nullopt);
  if (!verified.ok()) return {{"status", "invalid"}, {"problem", verified.status().message()}};
  const accept::Verification& v = *verified;
  Json j = {{"status", v.ok() ? "valid" : "invalid"},
            {"key_id", v.key_id},
            {"signature_valid", v.signature_valid},
            {"changed", v.changed},
            {"added", v.added},
            {"missing", v.missing}};
  return j;
}

Json ReportEntry(std::size_t root, const std::filesystem::path& root_path,
                 const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  const std::string rel = fs::relative(dir, root_path).generic_string();
  Json j = {{"root", root}, {"path", rel}};
  j["url"] = fmt::format("/files/{}/{}report.html", root, rel == "." ? "" : rel + "/");
  std::error_code ec;
  // A file of the report is read only where its real path stays under the root.
  const auto inside = [&root_path, &rel](const char* name, const fs::path& file) {
    const std::optional<std::string> real = RealPath(file.string());
    if (!real || IsUnder(*real, root_path.string())) return true;
    LogRefused((rel == "." ? "" : rel + "/") + name,
               "a symbolic link out of the root, to " + *real);
    return false;
  };
  j["has_html"] =
      fs::is_regular_file(dir / "report.html", ec) && inside("report.html", dir / "report.html");
  auto text =
      inside("report.json", dir / "report.json")
          ? ReadSmallFile((dir / "report.json").string(), kMaxReportBytes, "report")
          : Result<std::string>(Status::Invalid((rel == "." ? "" : rel + "/") + "report.json",
                                                "a symbolic link out of the root (not read)"));
  if (!text.ok()) {
    j["readable"] = false;
    j["problem"] = text.status().message();
  } else {
    const Json doc = Json::parse(*text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || StringField(doc, "format") != "parity-report") {
      j["readable"] = false;
      j["problem"] = fmt::format(
          "{}/report.json: not a parity-report document (corrupt or "
          "half-written)",
          rel);
    } else {
      j["readable"] = true;
      j["verdict"] = doc.value("verdict", "");
      j["created"] = doc.contains("created") ? doc["created"] : Json();
      j["summary"] = doc.contains("summary") ? doc["summary"] : Json();
      for (const char* side : {"baseline", "candidate"}) {
        if (doc.contains(side) && doc[side].is_object()) {
          j[side] = {{"uid", doc[side].value("uid", Json())},
                     {"node", doc[side].value("node", Json())},
                     {"bundle", doc[side].value("bundle", Json())}};
        }
      }
    }
  }
  j["signature"] = SignatureJson(dir.string(), root_path);
  return j;
}

}  // namespace

Answer ReportsApi(Context& context, const Params& params) {
  if (Status s = params.Check({}); !s.ok()) return StatusAnswer(s);
  namespace fs = std::filesystem;
  Json list = Json::array();
  std::size_t visited = 0;
  bool truncated = false;
  const auto& roots = context.options.roots;
  for (std::size_t i = 0; i < roots.size() && !truncated; ++i) {
    std::error_code ec;
    const fs::path root = fs::canonical(roots[i], ec);
    if (ec) continue;
    auto is_report = [](const fs::path& dir) {
      std::error_code e;
      for (const char* name : {"report.json", "report.html", "report.sig"}) {
        if (fs::is_regular_file(dir / name, e)) return true;
      }
      return false;
    };
    if (is_report(root)) list.push_back(ReportEntry(i, root, root));
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (++visited > kMaxVisited || list.size() >= kMaxReports) {
        truncated = true;
        break;
      }
      if (it.depth() >= kMaxDepth) it.disable_recursion_pending();
      std::error_code e;
      // Symbolic links are not followed (the iterator's default): nothing outside the root.
      if (it->is_symlink(e) || !it->is_directory(e)) continue;
      if (is_report(it->path())) list.push_back(ReportEntry(i, root, it->path()));
    }
  }
  Json body = Document("parity-reports", 1);
  body["roots"] = roots;
  body["reports"] = std::move(list);
  body["truncated"] = truncated;
  return {200, std::move(body)};
}

}  // namespace parity::serve
