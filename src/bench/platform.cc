// SPDX-License-Identifier: Apache-2.0
#include "bench/platform.h"

#include <hwloc.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

extern "C" {
// OpenBLAS's own introspection (cblas.h of OpenBLAS declares the same); link with -lopenblas.
char* openblas_get_config(void);
char* openblas_get_corename(void);
int openblas_get_num_threads(void);
}

extern char** environ;

namespace parity::bench {
namespace {

/// How an entry of the performance-variable table matches a name.
enum class Match {
  kPrefix,         ///< the name starts with the text: included
  kExact,          ///< the name is the text: included
  kNotPrefix,      ///< the name starts with the text: excluded, whatever else matches
  kNotContaining,  ///< the name contains the text: excluded, whatever else matches
};

struct VariablePattern {
  std::string_view text;
  Match match;
};

// Every variable whose value can change a benchmark figure or the numbers it computes, and the
// exceptions. The values end up in result files that get shared, so exclusions win.
constexpr VariablePattern kPerformanceVariables[] = {
    // Thread counts, kernel choice (CPU core type) and affinity of the BLAS libraries.
    {"OPENBLAS_", Match::kPrefix},
    {"GOTO_", Match::kPrefix},
    {"MKL_", Match::kPrefix},
    {"BLIS_", Match::kPrefix},
    // OpenMP runtimes (GNU, Intel/LLVM): thread counts, binding, wait policy, dynamic teams.
    {"OMP_", Match::kPrefix},
    {"GOMP_", Match::kPrefix},
    {"KMP_", Match::kPrefix},
    // oneDNN: ISA dispatch limits, primitive cache, verbose timing.
    {"DNNL_", Match::kPrefix},
    {"ONEDNN_", Match::kPrefix},
    // NVIDIA: visible devices, launch blocking, cuBLAS/cuBLASLt workspace and math modes, cuDNN
    // algorithm choice, NCCL transports, and the global TF32 switch.
    {"CUDA_", Match::kPrefix},
    {"CUBLAS_", Match::kPrefix},
    {"CUBLASLT_", Match::kPrefix},
    {"CUDNN_", Match::kPrefix},
    {"NCCL_", Match::kPrefix},
    {"NVIDIA_TF32_OVERRIDE", Match::kExact},
    // AMD ROCm: visible devices (HIP_, ROCR_), runtime queues (HSA_), ROCm library settings
    // ("ROC" also covers ROCM_ and ROCBLAS_), hipBLASLt, MIOpen algorithm search, RCCL.
    {"HIP_", Match::kPrefix},
    {"HSA_", Match::kPrefix},
    {"ROC", Match::kPrefix},
    {"HIPBLASLT_", Match::kPrefix},
    {"MIOPEN_", Match::kPrefix},
    {"RCCL_", Match::kPrefix},
    // Frameworks: allocator, matmul precision, compilation and thread settings.
    {"TORCH_", Match::kPrefix},
    {"PYTORCH_", Match::kPrefix},
    {"XLA_", Match::kPrefix},
    {"TF_", Match::kPrefix},
    // Which shared libraries get loaded (a different BLAS or allocator), and glibc malloc tuning.
    {"LD_PRELOAD", Match::kExact},
    {"LD_LIBRARY_PATH", Match::kExact},
    {"MALLOC_ARENA_MAX", Match::kExact},
    {"GLIBC_TUNABLES", Match::kExact},
    // Not TensorFlow but Terraform, which shares the TF_ prefix: its variables (TF_VAR_*,
    // TF_TOKEN_*) hold input values and API tokens, and none of them changes a benchmark.
    {"TF_VAR_", Match::kNotPrefix},
    {"TF_TOKEN_", Match::kNotPrefix},
    {"TF_CLI_", Match::kNotPrefix},
    {"TF_LOG", Match::kNotPrefix},
    {"TF_INPUT", Match::kNotPrefix},
    {"TF_DATA_DIR", Match::kNotPrefix},
    {"TF_WORKSPACE", Match::kNotPrefix},
    {"TF_IN_AUTOMATION", Match::kNotPrefix},
    {"TF_REGISTRY_", Match::kNotPrefix},
    {"TF_STATE_", Match::kNotPrefix},
    {"TF_PLUGIN_", Match::kNotPrefix},
    {"TF_IGNORE", Match::kNotPrefix},
    {"TF_APPEND_USER_AGENT", Match::kNotPrefix},
    // Credentials under any of the prefixes above (e.g. a service token): never written out.
    {"TOKEN", Match::kNotContaining},
    {"SECRET", Match::kNotContaining},
    {"PASSWORD", Match::kNotContaining},
    {"PASSWD", Match::kNotContaining},
    {"CREDENTIAL", Match::kNotContaining},
    {"API_KEY", Match::kNotContaining},
    {"ACCESS_KEY", Match::kNotContaining},
    {"PRIVATE_KEY", Match::kNotContaining},
};

/// SIMD features reported in "cpu.flags", in this order, as /proc/cpuinfo names them.
constexpr std::string_view kSimdFlags[] = {"avx",      "avx2",     "fma",  "avx512f", "avx512_bf16",
                                           "amx_bf16", "amx_tile", "neon", "sve"};

std::string_view Trim(std::string_view s) {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

/// The value of the first "key : value" line of `path` (as /proc/cpuinfo and /proc/meminfo
/// write them) whose trimmed key is `key`, trimmed; nullopt when the file can't be read, has no
/// such line, or the value is empty.
std::optional<std::string> ColonField(const std::string& path, std::string_view key) {
  std::ifstream in(path);
  std::string line;
  while (in && std::getline(in, line)) {
    const std::string_view view(line);
    const std::size_t colon = view.find(':');
    if (colon == std::string_view::npos || Trim(view.substr(0, colon)) != key) continue;
    const std::string_view value = Trim(view.substr(colon + 1));
    if (value.empty()) return std::nullopt;
    return std::string(value);
  }
  return std::nullopt;
}

/// The value of KEY=VALUE in an os-release file, with shell quoting removed; nullopt when
/// unreadable, missing or empty.
std::optional<std::string> OsReleaseField(const std::string& path, std::string_view key) {
  std::ifstream in(path);
  std::string line;
  while (in && std::getline(in, line)) {
    const std::string_view view = Trim(line);
    const std::size_t eq = view.find('=');
    if (eq == std::string_view::npos || view.substr(0, eq) != key) continue;
    std::string_view raw = view.substr(eq + 1);
    std::string value;
    if (raw.size() >= 2 && (raw.front() == '"' || raw.front() == '\'') &&
        raw.back() == raw.front()) {
      const char quote = raw.front();
      raw = raw.substr(1, raw.size() - 2);
      for (std::size_t i = 0; i < raw.size(); ++i) {
        // Inside double quotes a backslash escapes $ " \ and `; single quotes escape nothing.
        if (quote == '"' && raw[i] == '\\' && i + 1 < raw.size() &&
            std::string_view("$\"\\`").find(raw[i + 1]) != std::string_view::npos) {
          ++i;
        }
        value += raw[i];
      }
    } else {
      value = std::string(raw);
    }
    if (value.empty()) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

/// MemTotal of a /proc/meminfo file in bytes; nullopt when unreadable or not positive.
std::optional<std::uint64_t> MemTotalBytes(const std::string& path) {
  const std::optional<std::string> field = ColonField(path, "MemTotal");
  if (!field) return std::nullopt;
  std::uint64_t value = 0;
  std::size_t i = 0;
  for (; i < field->size() && std::isdigit(static_cast<unsigned char>((*field)[i])); ++i) {
    value = value * 10 + static_cast<std::uint64_t>((*field)[i] - '0');
  }
  if (i == 0 || value == 0) return std::nullopt;
  const std::string_view unit = Trim(std::string_view(*field).substr(i));
  if (unit == "kB") return value * 1024;
  if (unit.empty()) return value;
  return std::nullopt;
}

/// The SIMD features of kSimdFlags present in a /proc/cpuinfo file's first "flags" (x86) or
/// "Features" (Arm) line, in kSimdFlags order. arm64 calls NEON "asimd"; it is reported as
/// "neon". nullopt when neither line can be read.
std::optional<Json> SimdFlags(const std::string& cpuinfo_path) {
  std::optional<std::string> line = ColonField(cpuinfo_path, "flags");
  if (!line) line = ColonField(cpuinfo_path, "Features");
  if (!line) return std::nullopt;
  std::vector<std::string> present;
  std::size_t start = 0;
  while (start < line->size()) {
    std::size_t end = line->find_first_of(" \t", start);
    if (end == std::string::npos) end = line->size();
    if (end > start) present.push_back(line->substr(start, end - start));
    start = end + 1;
  }
  const auto has = [&present](std::string_view flag) {
    for (const std::string& p : present) {
      if (p == flag || (flag == "neon" && p == "asimd")) return true;
    }
    return false;
  };
  Json flags = Json::array();
  for (std::string_view flag : kSimdFlags) {
    if (has(flag)) flags.push_back(flag);
  }
  return flags;
}

/// Owns a loaded hwloc topology; topology() is nullptr when hwloc could not load one.
class Topology {
 public:
  Topology() {
    if (hwloc_topology_init(&topology_) != 0) {
      topology_ = nullptr;
      return;
    }
    // Keep the PUs and NUMA nodes outside this process's cgroup: the host, not the container.
    if (hwloc_topology_set_flags(topology_, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) != 0 ||
        hwloc_topology_load(topology_) != 0) {
      hwloc_topology_destroy(topology_);
      topology_ = nullptr;
    }
  }
  ~Topology() {
    if (topology_ != nullptr) hwloc_topology_destroy(topology_);
  }
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  hwloc_topology_t topology() const { return topology_; }

 private:
  hwloc_topology_t topology_ = nullptr;
};

/// Sets obj[key] = count when the topology has a positive number of `type` objects.
void SetCount(Json& obj, const char* key, hwloc_topology_t topology, hwloc_obj_type_t type) {
  const int n = hwloc_get_nbobjs_by_type(topology, type);
  if (n > 0) obj[key] = n;
}

/// hwloc info `name` of the first Package (or of the root when there is no Package).
std::optional<std::string> PackageInfo(hwloc_topology_t topology, const char* name) {
  for (hwloc_obj_t obj :
       {hwloc_get_obj_by_type(topology, HWLOC_OBJ_PACKAGE, 0), hwloc_get_root_obj(topology)}) {
    if (obj == nullptr) continue;
    const char* value = hwloc_obj_get_info_by_name(obj, name);
    if (value == nullptr) continue;
    const std::string_view trimmed = Trim(value);
    if (!trimmed.empty()) return std::string(trimmed);
  }
  return std::nullopt;
}

/// The caches, one entry per distinct (level, type, size, line size) with how many there are,
/// sorted by level, then data, instruction, unified. Empty when hwloc reports none.
Json Caches(hwloc_topology_t topology) {
  constexpr hwloc_obj_type_t kCacheTypes[] = {
      HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE,  HWLOC_OBJ_L3CACHE,  HWLOC_OBJ_L4CACHE,
      HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L1ICACHE, HWLOC_OBJ_L2ICACHE, HWLOC_OBJ_L3ICACHE};
  // (level, type rank, size, line size) -> count; type rank 0 data, 1 instruction, 2 unified.
  std::map<std::tuple<unsigned, int, std::uint64_t, unsigned>, int> groups;
  for (hwloc_obj_type_t type : kCacheTypes) {
    for (hwloc_obj_t obj = hwloc_get_next_obj_by_type(topology, type, nullptr); obj != nullptr;
         obj = hwloc_get_next_obj_by_type(topology, type, obj)) {
      const auto& cache = obj->attr->cache;
      int rank = 2;
      if (cache.type == HWLOC_OBJ_CACHE_DATA) rank = 0;
      if (cache.type == HWLOC_OBJ_CACHE_INSTRUCTION) rank = 1;
      ++groups[{cache.depth, rank, cache.size, cache.linesize}];
    }
  }
  constexpr const char* kTypeNames[] = {"data", "instruction", "unified"};
  Json caches = Json::array();
  for (const auto& [key, count] : groups) {
    const auto& [level, rank, size, line] = key;
    Json entry = Json::object();
    if (level > 0) entry["level"] = level;
    entry["type"] = kTypeNames[rank];
    if (size > 0) entry["size_bytes"] = size;
    if (line > 0) entry["line_bytes"] = line;
    entry["count"] = count;
    caches.push_back(std::move(entry));
  }
  return caches;
}

Json Cpu(hwloc_topology_t topology, const utsname* uts, const std::string& cpuinfo_path) {
  Json cpu = Json::object();
  std::optional<std::string> model;
  if (topology != nullptr) model = PackageInfo(topology, "CPUModel");
  if (!model) model = ColonField(cpuinfo_path, "model name");
  if (model) cpu["model"] = *model;
  if (topology != nullptr) {
    if (std::optional<std::string> vendor = PackageInfo(topology, "CPUVendor")) {
      cpu["vendor"] = *vendor;
    }
  }
  if (uts != nullptr && uts->machine[0] != '\0') cpu["architecture"] = uts->machine;
  if (topology != nullptr) {
    SetCount(cpu, "packages", topology, HWLOC_OBJ_PACKAGE);
    SetCount(cpu, "cores", topology, HWLOC_OBJ_CORE);
    SetCount(cpu, "pus", topology, HWLOC_OBJ_PU);
    SetCount(cpu, "numa_nodes", topology, HWLOC_OBJ_NUMANODE);
    Json caches = Caches(topology);
    if (!caches.empty()) cpu["caches"] = std::move(caches);
  }
  if (std::optional<Json> flags = SimdFlags(cpuinfo_path)) cpu["flags"] = std::move(*flags);
  return cpu;
}

Json Memory(hwloc_topology_t topology, const std::string& meminfo_path) {
  Json memory = Json::object();
  // The kernel's MemTotal first: hwloc sums the NUMA nodes' sysfs meminfo, which some VMs (seen
  // on a Firecracker guest: 6.4 GB of nodes, 24.7 GB MemTotal, 24.5 GB free) under-report.
  std::uint64_t total = MemTotalBytes(meminfo_path).value_or(0);
  Json numa = Json::array();
  if (topology != nullptr) {
    if (total == 0) total = hwloc_get_root_obj(topology)->total_memory;
    for (hwloc_obj_t node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, nullptr);
         node != nullptr; node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, node)) {
      const std::uint64_t local = node->attr->numanode.local_memory;
      // A node of unknown size would make the list lie about which node is which: drop it all.
      if (local == 0) {
        numa = Json::array();
        break;
      }
      numa.push_back(local);
    }
  }
  if (total > 0) memory["total_bytes"] = total;
  if (!numa.empty()) memory["numa_bytes"] = std::move(numa);
  return memory;
}

Json Os(const utsname* uts, std::string_view fs_root) {
  Json os = Json::object();
  if (uts != nullptr) {
    if (uts->release[0] != '\0') os["kernel"] = uts->release;
    if (uts->version[0] != '\0') os["version"] = uts->version;
  }
  // os-release(5): /etc/os-release, falling back to /usr/lib/os-release.
  std::optional<std::string> pretty =
      OsReleaseField(std::string(fs_root) + "/etc/os-release", "PRETTY_NAME");
  if (!pretty) pretty = OsReleaseField(std::string(fs_root) + "/usr/lib/os-release", "PRETTY_NAME");
  if (pretty) os["distribution"] = *pretty;
  return os;
}

Json Compiler() {
  Json compiler = Json::object();
#if defined(__clang__)
  compiler["id"] = "clang";
#elif defined(__GNUC__)
  compiler["id"] = "gcc";
#endif
#if defined(__VERSION__)
  if (std::string_view(__VERSION__).size() > 0) compiler["version"] = __VERSION__;
#endif
  return compiler;
}

Json Blas() {
  Json blas = Json::object();
  blas["name"] = "OpenBLAS";
  const char* config_c = openblas_get_config();
  if (config_c != nullptr) {
    const std::string config(Trim(config_c));
    // "OpenBLAS 0.3.21 DYNAMIC_ARCH ...": the version is the second word.
    const std::string_view kPrefix = "OpenBLAS ";
    if (config.starts_with(kPrefix)) {
      std::string version = config.substr(kPrefix.size());
      version = version.substr(0, version.find(' '));
      if (!version.empty() && std::isdigit(static_cast<unsigned char>(version[0]))) {
        blas["version"] = version;
      }
    }
    if (!config.empty()) blas["config"] = config;
  }
  const char* core = openblas_get_corename();
  if (core != nullptr && !Trim(core).empty()) blas["core"] = std::string(Trim(core));
  const int threads = openblas_get_num_threads();
  if (threads > 0) blas["threads"] = threads;
  return blas;
}

}  // namespace

bool IsPerformanceVariable(std::string_view name) {
  bool included = false;
  for (const VariablePattern& pattern : kPerformanceVariables) {
    switch (pattern.match) {
      case Match::kPrefix:
        included = included || name.starts_with(pattern.text);
        break;
      case Match::kExact:
        included = included || name == pattern.text;
        break;
      case Match::kNotPrefix:
        if (name.starts_with(pattern.text)) return false;
        break;
      case Match::kNotContaining:
        if (name.find(pattern.text) != std::string_view::npos) return false;
        break;
    }
  }
  return included;
}

Json PerformanceEnvironment(char** envp) {
  std::map<std::string, std::string, std::less<>> found;
  for (char** entry = envp; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::size_t eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    const std::string_view name = text.substr(0, eq);
    if (!IsPerformanceVariable(name)) continue;
    found.emplace(name, text.substr(eq + 1));  // emplace keeps the first of a repeated name
  }
  Json env = Json::object();
  for (const auto& [name, value] : found) env[name] = value;
  return env;
}

namespace internal {

Json HostFingerprint(std::string_view fs_root) {
  const std::string root(fs_root);
  Json fingerprint = Json::object();

  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) == 0 && host[0] != '\0') {
    fingerprint["hostname"] = host.data();
  }

  utsname uts_storage{};
  const utsname* uts = uname(&uts_storage) == 0 ? &uts_storage : nullptr;
  const Topology topology;

  const auto set_if_not_empty = [&fingerprint](const char* key, Json value) {
    if (!value.empty()) fingerprint[key] = std::move(value);
  };
  set_if_not_empty("cpu", Cpu(topology.topology(), uts, root + "/proc/cpuinfo"));
  set_if_not_empty("memory", Memory(topology.topology(), root + "/proc/meminfo"));
  set_if_not_empty("os", Os(uts, root));
  set_if_not_empty("compiler", Compiler());
  fingerprint["blas"] = Blas();
  fingerprint["environment"] = PerformanceEnvironment(environ);
  return fingerprint;
}

}  // namespace internal

Json HostFingerprint() { return internal::HostFingerprint(""); }

}  // namespace parity::bench
