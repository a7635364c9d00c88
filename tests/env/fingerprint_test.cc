// SPDX-License-Identifier: Apache-2.0
// The fingerprint against recorded trees (tests/fixtures/env/README.md): what each tree holds
// is written here from the tree's files, not from parity's output.
#include "env/fingerprint.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "env/env_diff.h"
#include "testdata.h"

namespace parity::env {
namespace {

std::string Tree(const std::string& name) { return fmt::format("{}/../{}", PARITY_FIXTURES, name); }

FingerprintOptions At(const std::string& tree) {
  FingerprintOptions o;
  o.fs_root = Tree(tree);
  return o;
}

const Json* GpuAt(const Json& gpus, const std::string& bus_id) {
  for (const Json& g : gpus) {
    if (StringField(g, "pci_bus_id") == bus_id) return &g;
  }
  return nullptr;
}

TEST(GpuFingerprint, Mi250NodeFromSysfsAndKfd) {
  const Json gpus = GpuFingerprint(At("monitor/mi250-node"));
  ASSERT_EQ(gpus.size(), 4u);
  for (const char* id : {"0000:c1:00.0", "0000:c6:00.0", "0000:29:00.0", "0000:2e:00.0"}) {
    const Json* g = GpuAt(gpus, id);
    ASSERT_NE(g, nullptr) << id;
    EXPECT_EQ((*g)["source"], "amdgpu");
    EXPECT_EQ((*g)["vendor"], "AMD");
    EXPECT_EQ((*g)["gfx_target"], "gfx90a") << id;
    EXPECT_EQ((*g)["driver"]["name"], "amdgpu");
    EXPECT_EQ((*g)["driver"]["version"], "6.8.5");
    EXPECT_EQ((*g)["pcie"]["generation"], 4);
    EXPECT_EQ((*g)["pcie"]["width"], 16);
    EXPECT_EQ((*g)["pcie"]["max_generation"], 4);
  }
  const Json* c1 = GpuAt(gpus, "0000:c1:00.0");
  EXPECT_EQ((*c1)["vbios"], "113-D65209-063");
  EXPECT_EQ((*c1)["numa_node"], 1);
}

TEST(GpuFingerprint, H100FromPciAndTheDriversVersionFile) {
  const Json gpus = GpuFingerprint(At("env/h100-node"));
  // 0000:00:00.0 is a host bridge and 0000:19:00.0 an NVIDIA bridge function (class 0x0680).
  ASSERT_EQ(gpus.size(), 1u) << gpus.dump();
  const Json& g = gpus[0];
  EXPECT_EQ(g["source"], "pci");
  EXPECT_EQ(g["vendor"], "NVIDIA");
  EXPECT_EQ(g["pci_bus_id"], "0000:18:00.0");
  EXPECT_EQ(g["pci_device_id"], "0x2330");
  EXPECT_EQ(g["driver"]["name"], "nvidia");
  EXPECT_EQ(g["driver"]["version"], "550.54.15");
  EXPECT_EQ(g["pcie"]["generation"], 5);
  EXPECT_EQ(g["pcie"]["width"], 16);
  EXPECT_EQ(g["numa_node"], 0);
  EXPECT_FALSE(g.contains("gfx_target"));
  EXPECT_FALSE(g.contains("model"));  // unreadable: absent, not ""
}

TEST(GpuFingerprint, NoGpusIsAnEmptyList) {
  const Json gpus = GpuFingerprint(At("monitor/host-rapl-edac"));
  EXPECT_TRUE(gpus.is_array());
  EXPECT_TRUE(gpus.empty());
}

TEST(LibraryFingerprint, CudaToolkitVersionsFromFileNamesAndVersionFiles) {
  const Json libs = LibraryFingerprint(At("env/h100-node"));
  EXPECT_EQ(libs["cuda"]["version"], "12.4.1");
  EXPECT_EQ(libs["cudart"]["version"], "12.4.127");  // the fuller of libcudart.so.12{,.4.127}
  EXPECT_EQ(libs["cublas"]["version"], "12.4.5.8");
  EXPECT_EQ(libs["cublaslt"]["version"], "12.4.5.8");
  EXPECT_EQ(libs["cudnn"]["version"], "9.1.0");  // libcudnn.so.9 + cudnn_version.h
  EXPECT_EQ(libs["curand"]["version"], "10.3.5.147");
  EXPECT_EQ(libs["nccl"]["version"], "2.21.5");
  EXPECT_EQ(libs["nvml"]["version"], "550.54.15");
  for (const char* absent : {"rocm", "hip", "rocblas", "miopen", "rccl", "hipblaslt"}) {
    EXPECT_FALSE(libs.contains(absent)) << absent;
  }
  EXPECT_NE(StringField(libs["cublas"], "path").find("/usr/local/cuda/lib64/"), std::string::npos);
}

TEST(LibraryFingerprint, RocmVersions) {
  const Json libs = LibraryFingerprint(At("monitor/mi250-node"));
  EXPECT_EQ(libs["rocm"]["version"], "6.2.0-66");
  EXPECT_EQ(libs["hip"]["version"], "6.2.60200");
  EXPECT_EQ(libs["rocblas"]["version"], "4.2.60200");
  EXPECT_EQ(libs["miopen"]["version"], "1.0.60200");
  EXPECT_EQ(libs["rccl"]["version"], "1.0.60200");
  EXPECT_EQ(libs["hipblaslt"]["version"], "0.8.60200");
  EXPECT_FALSE(libs.contains("cuda"));
  EXPECT_FALSE(libs.contains("cublas"));
}

TEST(Fingerprint, EnvironmentHasTheKnowledgeBasesVariablesOnly) {
  std::string e1 = "MIOPEN_FIND_MODE=3", e2 = "HOME=/root", e3 = "OMP_NUM_THREADS=4",
              e4 = "HIP_ENABLE_DETERMINISTIC=1", e5 = "MIOPEN_FIND_MODE=1";
  char* envp[] = {e1.data(), e2.data(), e3.data(), e4.data(), e5.data(), nullptr};
  FingerprintOptions o = At("env/h100-node");
  o.envp = envp;
  const Json fp = Fingerprint(o);
  const Json& env = fp["environment"];
  EXPECT_EQ(env["MIOPEN_FIND_MODE"], "3");  // the first of a repeated name, as getenv
  EXPECT_EQ(env["OMP_NUM_THREADS"], "4");
  EXPECT_FALSE(env.contains("HOME"));
  // Invented, but listed in the knowledge base so that doctor can say so.
  EXPECT_EQ(env["HIP_ENABLE_DETERMINISTIC"], "1");
  EXPECT_EQ(fp["os"]["distribution"], "Rocky Linux 9.3 (Blue Onyx)");
  EXPECT_EQ(fp["gpus"].size(), 1u);
  EXPECT_TRUE(fp.contains("libraries"));
  EXPECT_FALSE(fp.contains("python"));
}

TEST(Fingerprint, AMissingPythonIsRecordedNotFatal) {
  FingerprintOptions o = At("env/h100-node");
  o.python = "/nonexistent/python3";
  const Json fp = Fingerprint(o);
  ASSERT_TRUE(fp["python"].contains("error"));
  EXPECT_NE(fp["python"]["error"].get<std::string>().find("/nonexistent/python3"),
            std::string::npos);
}

TEST(Fingerprint, PythonProbeAnswersWithOrWithoutTorch) {
  auto py = PythonFingerprint("/usr/bin/python3");
  ASSERT_TRUE(py.ok()) << py.status().message();
  EXPECT_FALSE(StringField(*py, "version").empty());
  if (!py->contains("torch")) {
    EXPECT_TRUE(py->contains("torch_error"));  // says why instead of guessing
    return;
  }
  // Debian's torch (1.13, CPU) has these switches; each is "true"/"false" under its API name.
  const Json& s = (*py)["settings"];
  EXPECT_EQ(s["torch.backends.cudnn.allow_tf32"], "true");  // PyTorch's default
  EXPECT_EQ(s["torch.backends.cuda.matmul.allow_tf32"], "false");
  EXPECT_EQ(s["torch.set_float32_matmul_precision"], "highest");
  EXPECT_EQ(s["torch.use_deterministic_algorithms"], "false");
  EXPECT_TRUE((*py)["torch"]["devices"].empty());
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(ReadFingerprint, RoundTripAndErrorsNameTheKey) {
  parity::testing::TempDir dir;
  const Json doc = EnvDocument(At("env/h100-node"), Json());
  Write(dir.File("env.json"), doc.dump());
  auto back = ReadFingerprint(dir.File("env.json"));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ((*back)["host"]["gpus"], doc["host"]["gpus"]);

  const std::pair<const char*, const char*> bad[] = {
      {R"({"format":"parity-env","version":2,"host":{}})", "version"},
      {R"({"format":"parity-env","version":1})", "host"},
      {R"({"format":"parity-env","version":1,"host":{"environment":{"A":1}}})",
       "host.environment.A"},
      {R"({"format":"parity-env","version":1,"host":{"gpus":{}}})", "host.gpus"},
      {R"({"format":"parity-env","version":1,"host":{"python":{"settings":[]}}})",
       "host.python.settings"},
      {R"({"format":"parity-compare","version":1})", "format"},
      {R"({"format":"parity-env","version":1,"host":)", "not valid JSON"},
      {R"([1,2])", "not a JSON object"},
  };
  for (const auto& [text, key] : bad) {
    Write(dir.File("bad.json"), text);
    auto r = ReadFingerprint(dir.File("bad.json"));
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
    EXPECT_NE(r.status().message().find(dir.File("bad.json")), std::string::npos);
    EXPECT_NE(r.status().message().find(key), std::string::npos) << r.status().message();
  }
}

TEST(ReadFingerprint, ADumpManifestGivesTorchSettingsUnderTheirApiNames) {
  parity::testing::TempDir dir;
  Write(dir.File("manifest.json"), R"({"format":"parity-dump","version":1,
    "environment":{"NVIDIA_TF32_OVERRIDE":"0"},
    "framework":{"name":"torch","version":"2.5.1","cuda":"12.4","hip":null,
                 "settings":{"allow_tf32_cudnn":true,"float32_matmul_precision":"high"}}})");
  auto doc = ReadFingerprint(dir.path());
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const Json& host = (*doc)["host"];
  EXPECT_EQ(host["environment"]["NVIDIA_TF32_OVERRIDE"], "0");
  EXPECT_EQ(host["python"]["torch"]["cuda"], "12.4");
  EXPECT_EQ(host["python"]["settings"]["torch.backends.cudnn.allow_tf32"], "true");
  EXPECT_EQ(host["python"]["settings"]["torch.set_float32_matmul_precision"], "high");
}

TEST(ReadFingerprint, ADistributedDumpIsReadFromItsLowestRank) {
  parity::testing::TempDir dir;
  std::filesystem::create_directories(dir.File("rank1"));
  std::filesystem::create_directories(dir.File("rank10"));
  std::filesystem::create_directories(dir.File("ranks"));
  auto manifest = [](const char* precision) {
    return std::string(R"({"format":"parity-dump","version":2,"level":"aten",
      "framework":{"name":"torch","version":"2.5.1",
                   "settings":{"float32_matmul_precision":")") +
           precision + R"("}}})";
  };
  Write(dir.File("rank10/manifest.json"), manifest("highest"));
  Write(dir.File("rank1/manifest.json"), manifest("high"));
  Write(dir.File("ranks/manifest.json"), manifest("medium"));  // not a rank directory
  auto doc = ReadFingerprint(dir.path());
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ((*doc)["host"]["python"]["settings"]["torch.set_float32_matmul_precision"], "high");
  // A directory with neither a manifest nor rank directories says what it looked for.
  parity::testing::TempDir empty;
  auto none = ReadFingerprint(empty.path());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("rank<N>"), std::string::npos) << none.status().message();
}

TEST(EnvDiff, KnowledgeBaseSettingsComeFirstWithTheirSource) {
  std::map<std::string, Json> a = {{"host.environment.MIOPEN_FIND_MODE", "1"},
                                   {"host.cpu.model", "X"},
                                   {"host.os.kernel", "6.1"}};
  std::map<std::string, Json> b = {{"host.environment.MIOPEN_FIND_MODE", "3"},
                                   {"host.cpu.model", "Y"},
                                   {"host.os.kernel", "6.1"}};
  const auto diff = DiffSettings(a, b);
  ASSERT_EQ(diff.size(), 2u);
  EXPECT_EQ(diff[0].key, "host.environment.MIOPEN_FIND_MODE");
  EXPECT_TRUE(diff[0].relevant);
  EXPECT_NE(diff[0].note.find("ROCm/MIOpen:"), std::string::npos) << diff[0].note;
  EXPECT_EQ(diff[1].key, "host.cpu.model");
  EXPECT_FALSE(diff[1].relevant);
}

TEST(EnvDiff, SettingsOfTakesHostAndBackends) {
  const Json doc = Json::parse(R"({"format":"parity-env","version":1,
    "host":{"cpu":{"model":"X"},"created":"t"},
    "devices":{"backends":[{"name":"cpu","origin":"built-in","devices":[{"name":"c"}]}]}})");
  const auto s = SettingsOf(doc);
  EXPECT_EQ(s.at("host.cpu.model"), "X");
  EXPECT_EQ(s.at("backends.cpu.devices.0.name"), "c");
  EXPECT_EQ(s.count("host.created"), 0u);
}

}  // namespace
}  // namespace parity::env
