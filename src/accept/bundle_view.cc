// SPDX-License-Identifier: Apache-2.0
#include "accept/bundle_view.h"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "core/file_util.h"
#include "core/text.h"

namespace parity::accept {

std::vector<const StageView*> BundleView::OfKind(std::string_view kind) const {
  std::vector<const StageView*> out;
  for (const StageView& s : stages) {
    if (s.kind == kind) out.push_back(&s);
  }
  return out;
}

std::string BundleView::PathOf(std::string_view rel) const {
  return fmt::format("{}/{}", path, rel);
}

Json BundleView::Identity() const {
  Json out = {{"bundle", path}};
  if (!manifest.is_object()) {
    out["problem"] = problem;
    return out;
  }
  for (const char* key : {"uid", "node", "level", "backend", "status", "created", "finished"}) {
    if (!manifest.contains(key)) continue;
    const Json& v = manifest[key];
    // Times as UTC text: the manifest's are Unix seconds.
    const bool time = std::string_view(key) == "created" || std::string_view(key) == "finished";
    out[key] = time && v.is_number() ? Json(UtcTime(v.get<double>())) : v;
  }
  if (manifest.contains("plan") && manifest["plan"].is_object()) {
    out["plan"] = StringField(manifest["plan"], "name");
    if (manifest["plan"].contains("vars")) out["vars"] = manifest["plan"]["vars"];
  }
  if (manifest.contains("tool")) out["tool"] = manifest["tool"];
  out["fingerprint"] = manifest.value("fingerprint", Json::object());
  return out;
}

Result<BundleView> OpenBundle(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    return Status::Invalid(path, std::filesystem::exists(path, ec)
                                     ? "not a directory (a bundle is the directory a collect "
                                       "wrote)"
                                     : "no such directory");
  }
  BundleView view;
  view.path = path;
  auto doc = ReadBundleJson(view, "manifest.json", "parity-bundle");
  if (!doc.ok()) {
    view.problem = doc.status().message();
    return view;
  }
  view.manifest = std::move(doc).value();
  const Json* stages = view.manifest.contains("stages") ? &view.manifest["stages"] : nullptr;
  if (stages == nullptr || !stages->is_array()) {
    view.problem =
        fmt::format("{}: 'stages' is missing or not a list", view.PathOf("manifest.json"));
    view.manifest = Json();
    return view;
  }
  for (const Json& s : *stages) {
    if (!s.is_object()) continue;
    StageView stage;
    stage.name = StringField(s, "name");
    stage.kind = StringField(s, "kind");
    stage.status = StringField(s, "status");
    stage.reason = StringField(s, "reason");
    stage.result = StringField(s, "result");
    if (s.contains("level") && s["level"].is_number_integer()) stage.level = s["level"].get<int>();
    if (stage.name.empty() || stage.kind.empty()) continue;
    view.stages.push_back(std::move(stage));
  }
  return view;
}

Result<Json> ReadBundleJson(const BundleView& bundle, std::string_view rel,
                            std::string_view format) {
  const std::string path = bundle.PathOf(rel);
  if (rel.empty() || rel.find("..") != std::string_view::npos || rel.front() == '/') {
    return Status::Invalid(path, "not a path inside the bundle");
  }
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, kMaxResultBytes, "result file"));
  Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded()) return Status::Invalid(path, "not valid JSON");
  if (!format.empty()) {
    if (!doc.is_object() || StringField(doc, "format") != format) {
      return Status::Invalid(path, fmt::format("not a {} document", format));
    }
    if (!doc.contains("version") || doc["version"] != 1) {
      return Status::Invalid(path, fmt::format("{} version is not 1", format));
    }
  }
  return doc;
}

}  // namespace parity::accept
