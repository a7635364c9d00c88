// SPDX-License-Identifier: Apache-2.0
#include "bench/platform.h"

#include <gtest/gtest.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

#include <cstring>
#endif

extern char** environ;

namespace parity::bench {
namespace {

std::string Trimmed(std::string s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

// The reference values below are read here with their own small parsers, not the ones under test.

/// The value of the first "key<tabs>: value" line of /proc/cpuinfo.
std::optional<std::string> CpuinfoField(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon != std::string::npos && Trimmed(line.substr(0, colon)) == key) {
      return Trimmed(line.substr(colon + 1));
    }
  }
  return std::nullopt;
}

std::optional<double> MemTotalFromProc() {
  std::ifstream in("/proc/meminfo");
  std::string name, unit;
  double kib = 0;
  while (in >> name >> kib >> unit) {
    if (name == "MemTotal:") return kib * 1024;
    std::getline(in, name);
  }
  return std::nullopt;
}

#if defined(__x86_64__) || defined(__i386__)
/// The processor brand string straight from CPUID (hwloc's x86 backend reads it too; the kernel's
/// /proc/cpuinfo copy can be stale in a VM restored from a snapshot on another host).
std::string CpuidBrand() {
  unsigned regs[12] = {};
  for (unsigned i = 0; i < 3; ++i) {
    if (!__get_cpuid(0x80000002 + i, &regs[4 * i], &regs[4 * i + 1], &regs[4 * i + 2],
                     &regs[4 * i + 3])) {
      return "";
    }
  }
  char brand[49] = {};
  std::memcpy(brand, regs, 48);
  return Trimmed(brand);
}

std::string CpuidVendor() {
  unsigned eax = 0, regs[3] = {};
  if (!__get_cpuid(0, &eax, &regs[0], &regs[2], &regs[1])) return "";  // ebx, edx, ecx
  char vendor[13] = {};
  std::memcpy(vendor, regs, 12);
  return vendor;
}
#endif

/// Fails for every number that is 0 or negative, every "" string, null and empty object under
/// `json`, naming its path. The environment's values are the user's and may be empty.
void ExpectNoEmptyValues(const Json& json, const std::string& path) {
  if (json.is_object()) {
    EXPECT_FALSE(json.empty()) << path << " is an empty object";
    for (const auto& [key, value] : json.items()) {
      if (path == "" && key == "environment") continue;
      ExpectNoEmptyValues(value, path + "/" + key);
    }
  } else if (json.is_array()) {
    for (std::size_t i = 0; i < json.size(); ++i) {
      ExpectNoEmptyValues(json[i], path + "/" + std::to_string(i));
    }
  } else if (json.is_number()) {
    EXPECT_GT(json.get<double>(), 0) << path;
  } else if (json.is_string()) {
    EXPECT_NE(json.get<std::string>(), "") << path;
  } else {
    EXPECT_FALSE(json.is_null()) << path << " is null";
  }
}

class HostFingerprintTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { fingerprint_ = new Json(HostFingerprint()); }
  static void TearDownTestSuite() {
    delete fingerprint_;
    fingerprint_ = nullptr;
  }
  static const Json& fp() { return *fingerprint_; }

 private:
  static Json* fingerprint_;
};
Json* HostFingerprintTest::fingerprint_ = nullptr;

TEST_F(HostFingerprintTest, KeysInTheDocumentedOrder) {
  const std::vector<std::string> all = {"hostname", "cpu",  "memory",     "os",
                                        "compiler", "blas", "environment"};
  std::vector<std::string> keys;
  for (const auto& [key, value] : fp().items()) keys.push_back(key);
  // Every key is a documented one, in the documented order; cpu and memory can be read here.
  std::size_t next = 0;
  for (const std::string& key : keys) {
    while (next < all.size() && all[next] != key) ++next;
    ASSERT_LT(next, all.size()) << "unexpected or out-of-order key " << key;
  }
  EXPECT_TRUE(fp().contains("cpu"));
  EXPECT_TRUE(fp().contains("memory"));
  EXPECT_TRUE(fp().contains("blas"));
  EXPECT_TRUE(fp().contains("environment"));
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  EXPECT_EQ(fp().value("hostname", ""), host);
}

TEST_F(HostFingerprintTest, NothingIsZeroOrEmpty) { ExpectNoEmptyValues(fp(), ""); }

TEST_F(HostFingerprintTest, CountsMatchTheOnlineCpus) {
  const Json& cpu = fp().at("cpu");
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  ASSERT_GT(online, 0);
  EXPECT_EQ(cpu.at("pus").get<long>(), online);
  EXPECT_GE(cpu.at("cores").get<long>(), 1);
  EXPECT_LE(cpu.at("cores").get<long>(), online);
  EXPECT_GE(cpu.at("packages").get<long>(), 1);
  EXPECT_LE(cpu.at("packages").get<long>(), cpu.at("cores").get<long>());
  EXPECT_GE(cpu.at("numa_nodes").get<long>(), 1);
  EXPECT_LE(cpu.at("numa_nodes").get<long>(), online);
  const Json& numa = fp().at("memory").at("numa_bytes");
  EXPECT_EQ(numa.size(), cpu.at("numa_nodes").get<std::size_t>());
}

TEST_F(HostFingerprintTest, ModelVendorAndArchitecture) {
  const Json& cpu = fp().at("cpu");
  utsname uts{};
  ASSERT_EQ(uname(&uts), 0);
  EXPECT_EQ(cpu.value("architecture", ""), uts.machine);
  const std::optional<std::string> model_name = CpuinfoField("model name");
  std::vector<std::string> accepted;
  if (model_name) accepted.push_back(*model_name);
#if defined(__x86_64__) || defined(__i386__)
  accepted.push_back(CpuidBrand());
  std::vector<std::string> vendors = {CpuidVendor()};
  if (std::optional<std::string> vendor_id = CpuinfoField("vendor_id")) {
    vendors.push_back(*vendor_id);
  }
  EXPECT_NE(std::find(vendors.begin(), vendors.end(), cpu.value("vendor", "")), vendors.end())
      << cpu.value("vendor", "(absent)");
#endif
  if (!accepted.empty()) {
    EXPECT_NE(std::find(accepted.begin(), accepted.end(), cpu.value("model", "")), accepted.end())
        << cpu.value("model", "(absent)");
  }
}

TEST_F(HostFingerprintTest, FlagsAreThoseOfProcCpuinfo) {
  std::optional<std::string> line = CpuinfoField("flags");
  if (!line) line = CpuinfoField("Features");
  if (!line) GTEST_SKIP() << "no flags line in /proc/cpuinfo";
  const std::string padded = " " + *line + " ";
  const auto has = [&padded](const std::string& flag) {
    return padded.find(" " + flag + " ") != std::string::npos;
  };
  Json expected = Json::array();
  for (const char* flag :
       {"avx", "avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile", "neon", "sve"}) {
    if (has(flag) || (std::string(flag) == "neon" && has("asimd"))) expected.push_back(flag);
  }
  EXPECT_EQ(fp().at("cpu").at("flags"), expected);
}

TEST_F(HostFingerprintTest, CachesHaveALevelOneDataCache) {
  const Json& cpu = fp().at("cpu");
#if defined(__x86_64__) || defined(__i386__)
  ASSERT_TRUE(cpu.contains("caches"));
#else
  if (!cpu.contains("caches")) GTEST_SKIP() << "hwloc reports no caches here";
#endif
  const Json* l1d = nullptr;
  int previous_level = 0;
  for (const Json& cache : cpu.at("caches")) {
    const std::string type = cache.at("type");
    EXPECT_TRUE(type == "data" || type == "instruction" || type == "unified") << type;
    EXPECT_GE(cache.at("level").get<int>(), previous_level) << "caches not sorted by level";
    previous_level = cache.at("level").get<int>();
    EXPECT_GE(cache.at("count").get<long>(), 1);
    EXPECT_LE(cache.at("count").get<long>(), cpu.at("pus").get<long>());
    if (cache.at("level") == 1 && type == "data") l1d = &cache;
  }
  ASSERT_NE(l1d, nullptr) << cpu.at("caches").dump();
  EXPECT_GT(l1d->value("size_bytes", 0L), 0);
  // glibc reads the L1d geometry from CPUID itself.
  const long size = sysconf(_SC_LEVEL1_DCACHE_SIZE);
  if (size > 0) {
    EXPECT_EQ(l1d->value("size_bytes", 0L), size);
  }
  const long line = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
  if (line > 0) {
    EXPECT_EQ(l1d->value("line_bytes", 0L), line);
  }
}

TEST_F(HostFingerprintTest, MemoryTotalMatchesTheKernel) {
  const double total = fp().at("memory").at("total_bytes").get<double>();
  if (std::optional<double> proc = MemTotalFromProc()) {
    EXPECT_NEAR(total, *proc, 0.05 * *proc);
  }
  const double phys = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  ASSERT_GT(phys, 0);
  EXPECT_NEAR(total, phys, 0.05 * phys);
}

TEST_F(HostFingerprintTest, OsIsUname) {
  utsname uts{};
  ASSERT_EQ(uname(&uts), 0);
  const Json& os = fp().at("os");
  EXPECT_EQ(os.value("kernel", ""), uts.release);
  EXPECT_EQ(os.value("version", ""), uts.version);
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
    std::string value = line.substr(12);
    if (value.size() >= 2 && value.front() == '"') value = value.substr(1, value.size() - 2);
    if (value.find('\\') == std::string::npos) {
      EXPECT_EQ(os.value("distribution", ""), value);
    }
  }
}

TEST_F(HostFingerprintTest, CompilerIsTheOneThatBuiltUs) {
  const Json& compiler = fp().at("compiler");
#if defined(__clang__)
  EXPECT_EQ(compiler.value("id", ""), "clang");
#else
  EXPECT_EQ(compiler.value("id", ""), "gcc");
#endif
  EXPECT_FALSE(compiler.value("version", "").empty());
}

TEST_F(HostFingerprintTest, BlasIsOpenBlasWithAVersion) {
  const Json& blas = fp().at("blas");
  EXPECT_EQ(blas.value("name", ""), "OpenBLAS");
  const std::string version = blas.value("version", "");
  EXPECT_TRUE(std::regex_search(version, std::regex(R"(^[0-9]+\.[0-9]+\.[0-9]+)"))) << version;
  EXPECT_EQ(blas.value("config", "").rfind("OpenBLAS " + version + " ", 0), 0u)
      << blas.value("config", "");
  EXPECT_FALSE(blas.value("core", "").empty());
  EXPECT_GE(blas.value("threads", 0), 1);
}

TEST_F(HostFingerprintTest, EnvironmentIsThePerformanceVariablesOfEnviron) {
  EXPECT_EQ(fp().at("environment"), PerformanceEnvironment(environ));
}

TEST(PerformanceEnvironment, FiltersSortsAndKeepsTheFirstOfARepeatedName) {
  std::vector<std::string> entries = {
      "PATH=/usr/bin",
      "OMP_NUM_THREADS=4",
      "HOME=/root",
      "OPENBLAS_CORETYPE=Haswell",
      "OMPX_FOO=1",
      "NVIDIA_TF32_OVERRIDE=0",
      "CUDA_VISIBLE_DEVICES=1,0",
      "OMP_NUM_THREADS=8",  // repeated: getenv sees the first
      "KMP_AFFINITY",       // no '=': ignored
      "=CUDA_X",            // empty name: ignored
      "GLIBC_TUNABLES=glibc.malloc.arena_max=2",
      "LD_PRELOAD=",
      "omp_num_threads=2",
      "TF_VAR_db_password=hunter2",
      "CUDA_AUTH_TOKEN=abc",
      "TF_ENABLE_ONEDNN_OPTS=0",
  };
  std::vector<char*> envp;
  for (std::string& entry : entries) envp.push_back(entry.data());
  envp.push_back(nullptr);

  const Json env = PerformanceEnvironment(envp.data());
  const Json expected = Json::parse(R"({
    "CUDA_VISIBLE_DEVICES": "1,0",
    "GLIBC_TUNABLES": "glibc.malloc.arena_max=2",
    "LD_PRELOAD": "",
    "NVIDIA_TF32_OVERRIDE": "0",
    "OMP_NUM_THREADS": "4",
    "OPENBLAS_CORETYPE": "Haswell",
    "TF_ENABLE_ONEDNN_OPTS": "0"
  })");
  EXPECT_EQ(env, expected);
  std::vector<std::string> keys;
  for (const auto& [key, value] : env.items()) keys.push_back(key);
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_EQ(keys.size(), expected.size());
}

TEST(PerformanceEnvironment, NullAndEmpty) {
  EXPECT_EQ(PerformanceEnvironment(nullptr), Json::object());
  char* empty[] = {nullptr};
  EXPECT_EQ(PerformanceEnvironment(empty), Json::object());
}

TEST(IsPerformanceVariable, PrefixesExactNamesAndExclusions) {
  for (const char* name : {"OPENBLAS_NUM_THREADS",
                           "GOTO_NUM_THREADS",
                           "OMP_PROC_BIND",
                           "GOMP_SPINCOUNT",
                           "KMP_BLOCKTIME",
                           "MKL_CBWR",
                           "BLIS_NUM_THREADS",
                           "DNNL_MAX_CPU_ISA",
                           "ONEDNN_VERBOSE",
                           "CUDA_LAUNCH_BLOCKING",
                           "CUBLAS_WORKSPACE_CONFIG",
                           "CUBLASLT_LOG_LEVEL",
                           "CUDNN_LOGINFO_DBG",
                           "NCCL_ALGO",
                           "NVIDIA_TF32_OVERRIDE",
                           "HIP_VISIBLE_DEVICES",
                           "HSA_OVERRIDE_GFX_VERSION",
                           "ROCR_VISIBLE_DEVICES",
                           "ROCBLAS_LAYER",
                           "HIPBLASLT_LOG_LEVEL",
                           "MIOPEN_FIND_MODE",
                           "RCCL_MSCCL_ENABLE",
                           "TORCH_ALLOW_TF32",
                           "PYTORCH_CUDA_ALLOC_CONF",
                           "XLA_FLAGS",
                           "TF_ENABLE_ONEDNN_OPTS",
                           "LD_PRELOAD",
                           "LD_LIBRARY_PATH",
                           "MALLOC_ARENA_MAX",
                           "GLIBC_TUNABLES"}) {
    EXPECT_TRUE(IsPerformanceVariable(name)) << name;
  }
  for (const char* name :
       {"PATH", "HOME", "USER", "SHELL", "OMPX_FOO", "omp_num_threads", "LD_PRELOADX",
        "LD_LIBRARY_PATH_64", "XOMP_NUM_THREADS", "CUDA", "NVIDIA_VISIBLE_DEVICES", "TF_VAR_region",
        "TF_TOKEN_app_terraform_io", "TF_CLI_CONFIG_FILE", "TF_LOG", "HF_TOKEN", "CUDA_API_KEY",
        "NCCL_SECRET", ""}) {
    EXPECT_FALSE(IsPerformanceVariable(name)) << name;
  }
}

/// A directory tree under the test temp dir, removed at the end.
class FakeRoot {
 public:
  explicit FakeRoot(const std::string& name)
      : root_(std::filesystem::path(::testing::TempDir()) /
              ("parity_platform_" + name + "_" + std::to_string(getpid()))) {
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  ~FakeRoot() { std::filesystem::remove_all(root_); }
  void Write(const std::string& relative, const std::string& text) const {
    const std::filesystem::path path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  std::string path() const { return root_.string(); }

 private:
  std::filesystem::path root_;
};

TEST(HostFingerprintFromRoot, X86FilesAreParsed) {
  FakeRoot root("x86");
  root.Write("proc/cpuinfo",
             "processor\t: 0\nmodel name\t: Fake CPU\n"
             "flags\t\t: fpu avx2 sse4_2 avx512vl avx512_bf16 avx amx_tile\n\n"
             "processor\t: 1\nflags\t\t: fpu avx512f sve\n");
  root.Write("proc/meminfo", "MemFree:  10 kB\nMemTotal:       1024 kB\n");
  root.Write("etc/os-release", "NAME=Fake\nPRETTY_NAME=\"Fake \\\"OS\\\" 1\"\n");
  const Json fp = internal::HostFingerprint(root.path());
  // First flags line only, table order, whole words (avx512vl is not avx512f).
  EXPECT_EQ(fp.at("cpu").at("flags"), Json::parse(R"(["avx", "avx2", "avx512_bf16", "amx_tile"])"));
  EXPECT_EQ(fp.at("memory").at("total_bytes"), 1024 * 1024);
  EXPECT_EQ(fp.at("os").value("distribution", ""), "Fake \"OS\" 1");
}

TEST(HostFingerprintFromRoot, ArmFeaturesAndUsrLibOsRelease) {
  FakeRoot root("arm");
  root.Write("proc/cpuinfo", "processor\t: 0\nFeatures\t: fp asimd evtstrm sve sve2\n");
  root.Write("usr/lib/os-release", "PRETTY_NAME='Fallback OS'\n");
  const Json fp = internal::HostFingerprint(root.path());
  EXPECT_EQ(fp.at("cpu").at("flags"), Json::parse(R"(["neon", "sve"])"));
  EXPECT_EQ(fp.at("os").value("distribution", ""), "Fallback OS");
}

TEST(HostFingerprintFromRoot, MissingFilesLeaveKeysOut) {
  FakeRoot root("missing");
  root.Write("proc/cpuinfo", "processor\t: 0\nflags\t\t:\n");
  root.Write("etc/os-release", "PRETTY_NAME=\"\"\n");
  for (const std::string& dir : {root.path(), std::string("/nonexistent/parity/root")}) {
    Json fp;
    ASSERT_NO_THROW(fp = internal::HostFingerprint(dir)) << dir;
    EXPECT_FALSE(fp.at("cpu").contains("flags")) << dir;
    EXPECT_FALSE(fp.at("os").contains("distribution")) << dir;
    // hwloc and uname still see the host.
    EXPECT_EQ(fp.at("cpu").at("pus").get<long>(), sysconf(_SC_NPROCESSORS_ONLN)) << dir;
    EXPECT_TRUE(fp.at("os").contains("kernel")) << dir;
    ExpectNoEmptyValues(fp, "");
  }
}

}  // namespace
}  // namespace parity::bench
