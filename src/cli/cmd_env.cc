// SPDX-License-Identifier: Apache-2.0
// parity env: the platform fingerprint; parity env diff A B: the differences between two, the
// ones that change numerics or speed first, explained from the knowledge base.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "accept/bundle_view.h"
#include "accept/env_diff.h"
#include "bench/registry.h"
#include "cli/command.h"
#include "cli/common.h"
#include "core/exit_code.h"
#include "core/file_util.h"
#include "env/env_diff.h"
#include "env/fingerprint.h"

namespace parity::cli {
namespace {

std::string Text(const Json& v) {
  if (v.is_null()) return "(absent)";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string Field(const Json& obj, std::string_view key) {
  if (!obj.is_object() || !obj.contains(key)) return "";
  return Text(obj[std::string(key)]);
}

std::string FingerprintText(const Json& doc) {
  const Json& host = doc["host"];
  std::string out;
  const Json cpu = host.value("cpu", Json::object());
  out += fmt::format("host      {}\n", Field(host, "hostname"));
  out += fmt::format("cpu       {} ({} cores, {} NUMA node(s))\n", Field(cpu, "model"),
                     Field(cpu, "cores"), Field(cpu, "numa_nodes"));
  const Json os = host.value("os", Json::object());
  out += fmt::format("os        {}, kernel {}\n", Field(os, "distribution"), Field(os, "kernel"));
  if (host.contains("memory") && host["memory"].contains("total_bytes")) {
    out += fmt::format("memory    {:.1f} GiB\n",
                       host["memory"]["total_bytes"].get<double>() / (1024.0 * 1024 * 1024));
  }
  const Json gpus = host.value("gpus", Json::array());
  if (gpus.empty()) out += "gpus      none found\n";
  for (const Json& g : gpus) {
    std::string line =
        fmt::format("gpu       {} {} [{}]", Field(g, "vendor"),
                    g.contains("model") ? Field(g, "model") : Field(g, "pci_device_id"),
                    Field(g, "pci_bus_id"));
    if (g.contains("gfx_target")) line += " " + Field(g, "gfx_target");
    if (g.contains("pcie")) {
      line += fmt::format(" PCIe gen {} x{}", Field(g["pcie"], "generation"),
                          Field(g["pcie"], "width"));
    }
    if (g.contains("driver") && g["driver"].contains("version")) {
      line += fmt::format(" driver {}", Field(g["driver"], "version"));
    }
    out += line + fmt::format(" (from {})\n", Field(g, "source"));
  }
  const Json libs = host.value("libraries", Json::object());
  for (auto it = libs.begin(); it != libs.end(); ++it) {
    out += fmt::format("library   {:<10} {:<14} {}\n", it.key(), Field(*it, "version"),
                       Field(*it, "path"));
  }
  if (host.contains("python")) {
    const Json& py = host["python"];
    if (py.contains("error")) {
      out += fmt::format("python    unavailable: {}\n", Field(py, "error"));
    } else {
      const Json torch = py.value("torch", Json::object());
      out += fmt::format(
          "python    {} {}{}\n", Field(py, "executable"), Field(py, "version"),
          torch.empty() ? " (no torch)" : fmt::format(", torch {}", Field(torch, "version")));
      if (py.contains("settings")) {
        for (auto it = py["settings"].begin(); it != py["settings"].end(); ++it) {
          out += fmt::format("setting   {} = {}\n", it.key(), Text(*it));
        }
      }
    }
  }
  const Json env = host.value("environment", Json::object());
  for (auto it = env.begin(); it != env.end(); ++it) {
    out += fmt::format("env       {}={}\n", it.key(), Text(*it));
  }
  return out;
}

int RunFingerprint(int argc, char** argv) {
  CommonOptions common;
  env::FingerprintOptions options;
  bool no_devices = false;
  auto app = MakeApp(
      "env",
      "The platform fingerprint every parity result carries: host (CPU, cores, NUMA nodes, "
      "memory, kernel, distribution), GPUs (model, memory, driver, PCIe link, gfx target), the "
      "libraries found (CUDA, cuBLAS, cuDNN, NCCL, ROCm, rocBLAS, hipBLASLt, MIOpen, RCCL, "
      "OpenBLAS), every environment variable the knowledge base knows, the benchmark backends' "
      "devices, and with --python PY PyTorch's versions and numerics settings. `parity env "
      "diff A B` compares two. Exit 0.",
      &common);
  app->add_option("--python", options.python,
                  "Python interpreter to ask for torch's versions and settings");
  app->add_option("--fs-root", options.fs_root,
                  "read /proc, /sys, /etc, /usr and /opt under this directory (a recorded "
                  "tree); the vendor libraries are then not asked");
  app->add_flag("--no-devices", no_devices, "leave out the benchmark backends' devices");
  if (auto code = Parse(*app, common, argc, argv)) return *code;
  Json devices;
  if (!no_devices) devices = bench::DescribeBackends(nullptr, nullptr);
  const Json doc = env::EnvDocument(options, devices);
  if (common.human()) std::fputs(FingerprintText(doc).c_str(), stdout);
  if (Status s = WriteJsonOutput(common, doc); !s.ok()) return Fail(s);
  return kExitOk;
}

/// A bundle directory: its settings as accept compares them. Anything else: the fingerprint.
Result<std::map<std::string, Json>> SettingsAt(const std::string& path, bool bundles) {
  if (bundles) {
    PARITY_ASSIGN_OR_RETURN(accept::BundleView view, accept::OpenBundle(path));
    return accept::Settings(view);
  }
  PARITY_ASSIGN_OR_RETURN(Json doc, env::ReadFingerprint(path));
  return env::SettingsOf(doc);
}

bool IsBundle(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return false;
  auto text = ReadSmallFile(path + "/manifest.json", std::size_t{64} << 20, "manifest");
  if (!text.ok()) return false;
  const Json doc = Json::parse(*text, nullptr, false);
  return !doc.is_discarded() && StringField(doc, "format") == "parity-bundle";
}

int RunDiff(int argc, char** argv) {
  CommonOptions common;
  std::string a, b;
  bool all = false;
  auto app = MakeApp(
      "env diff",
      "The differences between two platforms' fingerprints: parity-env documents (parity env "
      "--json), bundles, parity-bench results or dump directories. Settings that change "
      "numerics, determinism or speed come first, each explained from the knowledge base with "
      "its source. Exit 0 when none of those differ, 1 when one does.",
      &common);
  app->add_option("A", a, "baseline fingerprint, bundle, bench result or dump")->required();
  app->add_option("B", b, "candidate")->required();
  app->add_flag("--all", all, "print every difference, not only the first 40 others");
  if (auto code = Parse(*app, common, argc, argv)) return *code;
  const bool bundles = IsBundle(a) && IsBundle(b);
  auto base = SettingsAt(a, bundles);
  if (!base.ok()) return Fail(base.status());
  auto cand = SettingsAt(b, bundles);
  if (!cand.ok()) return Fail(cand.status());
  const std::vector<env::EnvDifference> diff = env::DiffSettings(*base, *cand, 100000);
  std::size_t relevant = 0;
  for (const env::EnvDifference& d : diff) relevant += d.relevant ? 1 : 0;
  if (common.human()) {
    std::string out;
    std::size_t shown_other = 0;
    for (const env::EnvDifference& d : diff) {
      if (!d.relevant && !all && shown_other++ >= 40) continue;
      out += fmt::format("{} {}\n    A: {}\n    B: {}\n", d.relevant ? "!" : " ", d.key,
                         Text(d.baseline), Text(d.candidate));
      if (!d.note.empty()) out += fmt::format("    {}\n", d.note);
    }
    if (!all && diff.size() - relevant > 40) {
      out += fmt::format("  ... {} more differences that don't change results (--all)\n",
                         diff.size() - relevant - 40);
    }
    out += fmt::format("env diff: {} difference(s), {} that change numerics or speed\n",
                       diff.size(), relevant);
    std::fputs(out.c_str(), stdout);
  }
  Json doc = Document("parity-env-diff", 1);
  doc["baseline"] = a;
  doc["candidate"] = b;
  doc["summary"] = {{"differences", diff.size()}, {"relevant", relevant}};
  doc["differences"] = env::EnvDiffJson(diff);
  if (Status s = WriteJsonOutput(common, doc); !s.ok()) return Fail(s);
  return relevant > 0 ? kExitCheckFailed : kExitOk;
}

}  // namespace

int RunEnv(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "diff") return RunDiff(argc - 1, argv + 1);
  return RunFingerprint(argc, argv);
}

}  // namespace parity::cli
