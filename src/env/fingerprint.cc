// SPDX-License-Identifier: Apache-2.0
#include "env/fingerprint.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <set>

#include "bench/platform.h"
#include "core/file_util.h"
#include "core/text.h"
#include "core/version.h"
#include "env/knowledge.h"

extern char** environ;

namespace parity::env {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxDocumentBytes = std::size_t{64} << 20;

/// The variables of `envp` that bench::IsPerformanceVariable() names or the knowledge base
/// lists, sorted by name; a repeated name keeps its first value, as getenv does.
Json Environment(char** envp) {
  std::set<std::string, std::less<>> known;
  if (auto kb = BuiltinKnowledge(); kb.ok()) {
    for (std::string& name : EnvironmentNames(**kb)) known.insert(std::move(name));
  }
  std::map<std::string, std::string, std::less<>> found;
  for (char** entry = envp; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::size_t eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    const std::string_view name = text.substr(0, eq);
    if (!bench::IsPerformanceVariable(name) && !known.count(name)) continue;
    found.emplace(name, text.substr(eq + 1));
  }
  Json env = Json::object();
  for (const auto& [name, value] : found) env[name] = value;
  return env;
}

Result<Json> ParseObject(const std::string& path, std::string_view what) {
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, kMaxDocumentBytes, what));
  Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded()) return Status::Invalid(path, "not valid JSON");
  if (!doc.is_object()) return Status::Invalid(path, "not a JSON object");
  return doc;
}

/// Checks the parts of a parity-env document that doctor and env diff read.
Status CheckEnvDocument(const Json& doc, const std::string& path) {
  if (!doc.contains("version") || doc["version"] != 1) {
    return Status::Invalid(path, "version: must be 1, the version this parity reads");
  }
  if (!doc.contains("host") || !doc["host"].is_object()) {
    return Status::Invalid(path, "host: must be an object (the platform fingerprint)");
  }
  const Json& host = doc["host"];
  if (host.contains("environment")) {
    if (!host["environment"].is_object()) {
      return Status::Invalid(path, "host.environment: must be an object of strings");
    }
    for (auto it = host["environment"].begin(); it != host["environment"].end(); ++it) {
      if (!it->is_string()) {
        return Status::Invalid(path,
                               fmt::format("host.environment.{}: must be a string", it.key()));
      }
    }
  }
  if (host.contains("gpus") && !host["gpus"].is_array()) {
    return Status::Invalid(path, "host.gpus: must be a list");
  }
  if (host.contains("gpus")) {
    for (std::size_t i = 0; i < host["gpus"].size(); ++i) {
      if (!host["gpus"][i].is_object()) {
        return Status::Invalid(path, fmt::format("host.gpus.{}: must be an object", i));
      }
    }
  }
  if (host.contains("libraries") && !host["libraries"].is_object()) {
    return Status::Invalid(path, "host.libraries: must be an object");
  }
  if (host.contains("python")) {
    const Json& py = host["python"];
    if (!py.is_object()) return Status::Invalid(path, "host.python: must be an object");
    if (py.contains("settings")) {
      if (!py["settings"].is_object()) {
        return Status::Invalid(path, "host.python.settings: must be an object of strings");
      }
      for (auto it = py["settings"].begin(); it != py["settings"].end(); ++it) {
        if (!it->is_string()) {
          return Status::Invalid(
              path, fmt::format("host.python.settings.{}: must be a string", it.key()));
        }
      }
    }
  }
  if (doc.contains("devices") && !doc["devices"].is_object()) {
    return Status::Invalid(path, "devices: must be an object (a parity-devices document)");
  }
  return Status::Ok();
}

std::string SettingText(const Json& v) {
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

/// What a dump's manifest says about the platform, as fingerprint parts: its environment into
/// host.environment (names not there yet), its framework into host.python.
void MergeDumpManifest(const Json& manifest, Json& host) {
  if (manifest.contains("environment") && manifest["environment"].is_object()) {
    Json& env = host["environment"];
    if (!env.is_object()) env = Json::object();
    for (auto it = manifest["environment"].begin(); it != manifest["environment"].end(); ++it) {
      if (it->is_string() && !env.contains(it.key())) env[it.key()] = *it;
    }
  }
  if (!manifest.contains("framework") || !manifest["framework"].is_object()) return;
  const Json& fw = manifest["framework"];
  Json& py = host["python"];
  if (!py.is_object()) py = Json::object();
  if (StringField(fw, "name") == "torch" && !py.contains("torch")) {
    Json torch = Json::object();
    for (const char* key : {"version", "cuda", "hip"}) {
      if (fw.contains(key) && fw[key].is_string()) torch[key] = fw[key];
    }
    if (fw.contains("cudnn") && fw["cudnn"].is_number_integer()) torch["cudnn"] = fw["cudnn"];
    py["torch"] = std::move(torch);
  }
  if (fw.contains("settings") && fw["settings"].is_object()) {
    Json& settings = py["settings"];
    if (!settings.is_object()) settings = Json::object();
    for (auto [dump_name, kb_name] : DumpSettingNames()) {
      const std::string key(dump_name);
      if (fw["settings"].contains(key) && !settings.contains(std::string(kb_name))) {
        settings[std::string(kb_name)] = SettingText(fw["settings"][key]);
      }
    }
  }
}

Json Wrap(Json host) {
  Json doc = Document("parity-env", 1);
  doc["host"] = std::move(host);
  return doc;
}

Result<Json> ReadDumpDirectory(const std::string& dir, const Json& manifest) {
  Json host = manifest.contains("fingerprint") && manifest["fingerprint"].is_object()
                  ? manifest["fingerprint"]
                  : Json::object();
  MergeDumpManifest(manifest, host);
  Json doc = Wrap(std::move(host));
  PARITY_RETURN_IF_ERROR(CheckEnvDocument(doc, dir + "/manifest.json"));
  return doc;
}

Result<Json> ReadBundle(const std::string& dir, const Json& manifest) {
  const std::string manifest_path = dir + "/manifest.json";
  Json doc;
  std::vector<std::string> dumps;
  if (manifest.contains("stages") && manifest["stages"].is_array()) {
    for (const Json& stage : manifest["stages"]) {
      if (!stage.is_object()) continue;
      const std::string kind = StringField(stage, "kind");
      const std::string result = StringField(stage, "result");
      if (result.empty() || StringField(stage, "status") != "passed") continue;
      if (result.find("..") != std::string::npos || result.front() == '/') {
        return Status::Invalid(manifest_path,
                               fmt::format("stages: result '{}' is outside the bundle", result));
      }
      if (kind == "env" && doc.is_null()) {
        PARITY_ASSIGN_OR_RETURN(doc, ParseObject(dir + "/" + result, "env result"));
        if (StringField(doc, "format") != "parity-env") {
          return Status::Invalid(dir + "/" + result, "format: not a parity-env document");
        }
        PARITY_RETURN_IF_ERROR(CheckEnvDocument(doc, dir + "/" + result));
      } else if (kind == "dump") {
        dumps.push_back(dir + "/" + result);
      }
    }
  }
  if (doc.is_null()) {
    if (!manifest.contains("fingerprint") || !manifest["fingerprint"].is_object()) {
      return Status::Invalid(manifest_path,
                             "fingerprint: missing, and no env stage passed: the bundle records "
                             "no platform");
    }
    doc = Wrap(manifest["fingerprint"]);
  }
  for (const std::string& dump : dumps) {
    auto m = ParseObject(dump + "/manifest.json", "dump manifest");
    if (m.ok() && StringField(*m, "format") == "parity-dump") MergeDumpManifest(*m, doc["host"]);
  }
  PARITY_RETURN_IF_ERROR(CheckEnvDocument(doc, manifest_path));
  return doc;
}

}  // namespace

Json Fingerprint(const FingerprintOptions& options) {
  Json fp = options.fs_root.empty() ? bench::HostFingerprint()
                                    : bench::internal::HostFingerprint(options.fs_root);
  fp["environment"] = Environment(options.envp != nullptr ? options.envp : environ);
  fp["gpus"] = GpuFingerprint(options);
  fp["libraries"] = LibraryFingerprint(options);
  if (!options.python.empty()) {
    auto py = PythonFingerprint(options.python);
    fp["python"] = py.ok() ? std::move(py).value() : Json{{"error", py.status().message()}};
  }
  return fp;
}

Json EnvDocument(const FingerprintOptions& options, Json devices) {
  Json doc = Document("parity-env", 1);
  doc["tool"] = {{"name", "parity"}, {"version", kParityVersion}};
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  doc["created"] = UtcTime(now);
  doc["host"] = Fingerprint(options);
  if (!devices.is_null()) doc["devices"] = std::move(devices);
  return doc;
}

namespace {

// A distributed dump (parity-dump version 2) keeps one dump per rank in DIR/rank<N>/: the
// lowest rank's directory that holds a manifest, or empty when there is none.
std::string LowestRankDump(const std::string& dir) {
  std::error_code ec;
  std::string best;
  long best_rank = -1;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 5 || name.compare(0, 4, "rank") != 0 ||
        name.find_first_not_of("0123456789", 4) != std::string::npos || name.size() > 13) {
      continue;
    }
    const long rank = std::stol(name.substr(4));
    if (!fs::exists(entry.path() / "manifest.json", ec)) continue;
    if (best_rank < 0 || rank < best_rank) {
      best_rank = rank;
      best = entry.path().string();
    }
  }
  return best;
}

}  // namespace

Result<Json> ReadFingerprint(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (!fs::exists(path + "/manifest.json", ec)) {
      if (const std::string rank_dump = LowestRankDump(path); !rank_dump.empty()) {
        return ReadFingerprint(rank_dump);
      }
    }
    const std::string manifest_path = path + "/manifest.json";
    if (!fs::exists(manifest_path, ec)) {
      return Status::Invalid(path,
                             "a directory without manifest.json: neither a bundle nor a "
                             "dump (nor a dump of rank<N>/ directories)");
    }
    PARITY_ASSIGN_OR_RETURN(Json manifest, ParseObject(manifest_path, "manifest"));
    const std::string format = StringField(manifest, "format");
    if (format == "parity-bundle") return ReadBundle(path, manifest);
    if (format == "parity-dump") return ReadDumpDirectory(path, manifest);
    return Status::Invalid(
        manifest_path,
        fmt::format("format: '{}' is neither parity-bundle nor parity-dump", format));
  }
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, kMaxDocumentBytes, "fingerprint"));
  return ParseFingerprint(text, path);
}

Result<Json> ParseFingerprint(std::string_view text, const std::string& path) {
  Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded()) return Status::Invalid(path, "not valid JSON");
  if (!doc.is_object()) return Status::Invalid(path, "not a JSON object");
  const std::string format = StringField(doc, "format");
  if (format == "parity-env") {
    PARITY_RETURN_IF_ERROR(CheckEnvDocument(doc, path));
    return doc;
  }
  if (format == "parity-bench") {
    if (!doc.contains("platform") || !doc["platform"].is_object()) {
      return Status::Invalid(path, "platform: missing from the parity-bench result");
    }
    Json host = doc["platform"];
    host.erase("device");
    Json out = Wrap(std::move(host));
    PARITY_RETURN_IF_ERROR(CheckEnvDocument(out, path));
    return out;
  }
  if (format == "parity-dump") return ReadDumpDirectory(path, doc);
  return Status::Invalid(path, format.empty()
                                   ? "format: missing; expected a parity-env document, a "
                                     "parity-bench result, a bundle or a dump directory"
                                   : fmt::format("format: '{}' is not a fingerprint (parity-env, "
                                                 "parity-bench, a bundle or a dump)",
                                                 format));
}

namespace {
constexpr std::pair<std::string_view, std::string_view> kDumpSettings[] = {
    {"allow_tf32_matmul", "torch.backends.cuda.matmul.allow_tf32"},
    {"allow_tf32_cudnn", "torch.backends.cudnn.allow_tf32"},
    {"float32_matmul_precision", "torch.set_float32_matmul_precision"},
    {"deterministic_algorithms", "torch.use_deterministic_algorithms"},
    {"cudnn_deterministic", "torch.backends.cudnn.deterministic"},
    {"cudnn_benchmark", "torch.backends.cudnn.benchmark"},
    {"preferred_blas_library", "torch.backends.cuda.preferred_blas_library"},
    {"allow_fp16_reduced_precision_reduction",
     "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction"},
    {"allow_bf16_reduced_precision_reduction",
     "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction"},
    {"deterministic_warn_only", "torch.is_deterministic_algorithms_warn_only_enabled"},
    {"fp32_precision", "torch.backends.fp32_precision"},
    {"fp32_precision.cuda.matmul", "torch.backends.cuda.matmul.fp32_precision"},
    {"fp32_precision.cudnn", "torch.backends.cudnn.fp32_precision"},
    {"fp32_precision.cudnn.conv", "torch.backends.cudnn.conv.fp32_precision"},
    {"fp32_precision.cudnn.rnn", "torch.backends.cudnn.rnn.fp32_precision"},
    {"fp32_precision.mkldnn", "torch.backends.mkldnn.fp32_precision"},
    {"fp32_precision.mkldnn.matmul", "torch.backends.mkldnn.matmul.fp32_precision"},
    {"fp32_precision.mkldnn.conv", "torch.backends.mkldnn.conv.fp32_precision"},
    {"fp32_precision.mkldnn.rnn", "torch.backends.mkldnn.rnn.fp32_precision"},
    {"sdp_flash", "torch.backends.cuda.flash_sdp_enabled"},
    {"sdp_mem_efficient", "torch.backends.cuda.mem_efficient_sdp_enabled"},
    {"sdp_math", "torch.backends.cuda.math_sdp_enabled"},
    {"sdp_cudnn", "torch.backends.cuda.cudnn_sdp_enabled"},
    {"autocast_gpu_dtype", "torch.get_autocast_dtype(cuda)"},
    {"autocast_cpu_dtype", "torch.get_autocast_dtype(cpu)"},
};
}  // namespace

std::span<const std::pair<std::string_view, std::string_view>> DumpSettingNames() {
  return kDumpSettings;
}

}  // namespace parity::env
