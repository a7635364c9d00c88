// SPDX-License-Identifier: Apache-2.0
// The libraries of the fingerprint: which vendor and BLAS libraries a process here would load,
// and their versions, read from file names and the toolkits' version files; nothing is loaded.
#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "env/fingerprint.h"
#include "monitor/sysfs.h"

namespace parity::env {
namespace {

namespace fs = std::filesystem;
using monitor::JoinPath;

struct LibrarySpec {
  std::string_view key;
  std::string_view file;  ///< the name without version: "libcublas.so"
};

constexpr LibrarySpec kLibraries[] = {
    {"cudart", "libcudart.so"},     {"cublas", "libcublas.so"},
    {"cublaslt", "libcublasLt.so"}, {"cudnn", "libcudnn.so"},
    {"curand", "libcurand.so"},     {"nccl", "libnccl.so"},
    {"nvml", "libnvidia-ml.so"},    {"hip", "libamdhip64.so"},
    {"rocblas", "librocblas.so"},   {"hipblaslt", "libhipblaslt.so"},
    {"miopen", "libMIOpen.so"},     {"rccl", "librccl.so"},
    {"rocrand", "librocrand.so"},   {"openblas", "libopenblas.so"},
};

/// Where a process here finds its libraries, in the order looked at.
std::vector<std::string> SearchDirectories(const FingerprintOptions& options) {
  std::vector<std::string> dirs;
  if (options.fs_root.empty()) {
    if (const char* ld = std::getenv("LD_LIBRARY_PATH")) {
      std::string_view rest(ld);
      while (!rest.empty() && dirs.size() < 64) {
        const std::size_t colon = rest.find(':');
        const std::string_view dir = rest.substr(0, colon);
        if (!dir.empty() && dir.front() == '/') dirs.emplace_back(dir);
        if (colon == std::string_view::npos) break;
        rest.remove_prefix(colon + 1);
      }
    }
  }
  for (std::string_view dir :
       {"/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib",
        "/usr/local/cuda/targets/sbsa-linux/lib", "/opt/rocm/lib", "/opt/rocm/lib64",
        "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
        "/usr/local/lib"}) {
    dirs.emplace_back(options.fs_root.empty() ? std::string(dir) : JoinPath(options.fs_root, dir));
  }
  return dirs;
}

/// The version in a library's file name: after ".so." ("libcublas.so.13.0.2.14" ->
/// "13.0.2.14"), else the first dotted number ("libopenblasp-r0.3.21.so" -> "0.3.21").
std::string VersionOf(const std::string& name) {
  auto dotted = [](std::string_view s) {
    std::size_t n = 0;
    while (n < s.size() && (std::isdigit(static_cast<unsigned char>(s[n])) || s[n] == '.')) ++n;
    while (n > 0 && s[n - 1] == '.') --n;
    return std::string(s.substr(0, n));
  };
  if (const std::size_t so = name.find(".so."); so != std::string::npos) {
    if (std::string v = dotted(std::string_view(name).substr(so + 4)); !v.empty()) return v;
  }
  for (std::size_t i = 0; i + 2 < name.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(name[i])) && name[i + 1] == '.' &&
        (i == 0 || !std::isdigit(static_cast<unsigned char>(name[i - 1])))) {
      std::string v = dotted(std::string_view(name).substr(i));
      if (v.find('.') != std::string::npos) return v;
    }
  }
  return "";
}

/// Whether `a` has more version components than `b`, or is numerically larger.
bool MoreSpecific(const std::string& a, const std::string& b) {
  const auto parts = [](const std::string& v) {
    std::vector<long> out;
    std::size_t start = 0;
    while (start <= v.size()) {
      const std::size_t dot = v.find('.', start);
      out.push_back(std::strtol(v.substr(start, dot - start).c_str(), nullptr, 10));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    return out;
  };
  const auto pa = parts(a), pb = parts(b);
  if (pa.size() != pb.size()) return pa.size() > pb.size();
  return pa > pb;
}

/// The first directory holding `spec`'s library: its path and version.
std::optional<Json> FindLibrary(const std::vector<std::string>& dirs, const LibrarySpec& spec) {
  for (const std::string& dir : dirs) {
    std::string best_path, best_version;
    bool found = false;
    for (const std::string& name : monitor::ListDirectory(dir, 100000)) {
      if (name != spec.file && name.rfind(std::string(spec.file) + ".", 0) != 0) continue;
      const std::string path = JoinPath(dir, name);
      std::error_code ec;
      const fs::path resolved = fs::canonical(path, ec);
      if (ec || !fs::is_regular_file(resolved, ec)) continue;
      std::string version = VersionOf(resolved.filename().string());
      if (version.empty()) version = VersionOf(name);
      if (!found || MoreSpecific(version, best_version)) {
        best_path = resolved.string();
        best_version = version;
        found = true;
      }
    }
    if (found) {
      Json j = Json::object();
      if (!best_version.empty()) j["version"] = best_version;
      j["path"] = best_path;
      return j;
    }
  }
  return std::nullopt;
}

/// "#define NAME 9" in a header's text.
std::optional<long> Define(const std::string& text, std::string_view name) {
  const std::string needle = fmt::format("#define {} ", name);
  const std::size_t at = text.find(needle);
  if (at == std::string::npos) return std::nullopt;
  const char* start = text.c_str() + at + needle.size();
  char* end = nullptr;
  const long v = std::strtol(start, &end, 10);
  if (end == start || v < 0) return std::nullopt;
  return v;
}

std::string Under(const FingerprintOptions& o, std::string_view path) {
  return o.fs_root.empty() ? std::string(path) : JoinPath(o.fs_root, path);
}

/// The CUDA toolkit: version.json's "cuda" version, else CUDART_VERSION of its header.
std::optional<Json> CudaToolkit(const FingerprintOptions& o) {
  const std::string root = Under(o, "/usr/local/cuda");
  if (auto text = monitor::ReadSmallFile(JoinPath(root, "version.json"), 1 << 20)) {
    try {
      const Json doc = Json::parse(*text);
      if (doc.contains("cuda") && doc["cuda"].is_object()) {
        const std::string v = StringField(doc["cuda"], "version");
        if (!v.empty()) return Json{{"version", v}, {"path", root}};
      }
    } catch (const Json::exception&) {
    }
  }
  if (auto text = monitor::ReadSmallFile(JoinPath(root, "include/cuda_runtime_api.h"), 1 << 20)) {
    if (auto v = Define(*text, "CUDART_VERSION"); v && *v > 0) {
      return Json{{"version", fmt::format("{}.{}", *v / 1000, *v % 1000 / 10)}, {"path", root}};
    }
  }
  return std::nullopt;
}

std::optional<std::string> CudnnHeaderVersion(const FingerprintOptions& o) {
  for (std::string_view dir :
       {"/usr/local/cuda/include", "/usr/include", "/usr/include/x86_64-linux-gnu"}) {
    auto text = monitor::ReadSmallFile(JoinPath(Under(o, dir), "cudnn_version.h"), 1 << 20);
    if (!text) continue;
    auto major = Define(*text, "CUDNN_MAJOR");
    auto minor = Define(*text, "CUDNN_MINOR");
    auto patch = Define(*text, "CUDNN_PATCHLEVEL");
    if (major && minor && patch) return fmt::format("{}.{}.{}", *major, *minor, *patch);
  }
  return std::nullopt;
}

}  // namespace

Json LibraryFingerprint(const FingerprintOptions& options) {
  Json out = Json::object();
  if (auto cuda = CudaToolkit(options)) out["cuda"] = *cuda;
  const std::string rocm = Under(options, "/opt/rocm");
  if (auto v = monitor::ReadTrimmed(JoinPath(rocm, ".info/version"))) {
    out["rocm"] = {{"version", *v}, {"path", rocm}};
  }
  const std::vector<std::string> dirs = SearchDirectories(options);
  for (const LibrarySpec& spec : kLibraries) {
    if (auto lib = FindLibrary(dirs, spec)) out[std::string(spec.key)] = *lib;
  }
  // libcudnn.so.9 names only the major version; its header names the release.
  if (out.contains("cudnn")) {
    if (auto v = CudnnHeaderVersion(options);
        v && v->rfind(StringField(out["cudnn"], "version"), 0) == 0) {
      out["cudnn"]["version"] = *v;
    }
  }
  return out;
}

}  // namespace parity::env
