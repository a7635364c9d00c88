// SPDX-License-Identifier: Apache-2.0
#include "env/env_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>
#include <utility>

#include "env/fingerprint.h"
#include "env/knowledge.h"

namespace parity::env {
namespace {

/// Settings that change how results are computed, matched as a substring of the lowercased
/// key, with where each is documented.
struct Relevance {
  std::string_view match;
  std::string_view note;
};

constexpr Relevance kRelevant[] = {
    {"torch_allow_tf32_cublas_override",
     "set to 1, PyTorch up to 1.13 runs float32 matmuls in TF32 whatever allow_tf32 says; from "
     "2.0 it sets only the initial float32 matmul precision (high), which code can set back "
     "(pytorch/pytorch:aten/src/ATen/Context.h)"},
    {"nvidia_tf32_override",
     "named as the process-wide switch of TF32 in NVIDIA's libraries (0: off); no NVIDIA reference "
     "page confirming which libraries read it was found "
     "(https://docs.monai.io/en/stable/precision_accelerating.html)"},
    {"tf32",
     "TF32 keeps 10 of float32's 23 fraction bits in matmul and convolution inputs "
     "(https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-"
     "devices)"},
    {"float32_matmul_precision",
     "'high' lets float32 matmuls use TF32, 'medium' bfloat16 "
     "(https://pytorch.org/docs/stable/generated/torch.set_float32_matmul_precision.html)"},
    {"cublas_workspace_config",
     "cuBLAS gives run-to-run reproducible results only with a fixed workspace configuration "
     "(https://docs.nvidia.com/cuda/cublas/#results-reproducibility)"},
    {"deterministic",
     "deterministic algorithms change which kernels run "
     "(https://pytorch.org/docs/stable/notes/randomness.html)"},
    {"cudnn_benchmark",
     "cuDNN benchmark mode picks the fastest convolution algorithm per run, so the algorithm can "
     "differ "
     "(https://pytorch.org/docs/stable/notes/randomness.html#cuda-convolution-benchmarking)"},
    {"flush_denormal",
     "flushing denormals to zero changes results near underflow "
     "(https://pytorch.org/docs/stable/generated/torch.set_flush_denormal.html)"},
    {"omp_num_threads",
     "the number of OpenMP threads, which splits parallel reductions differently "
     "(https://www.openmp.org/spec-html/5.0/openmpch6.html)"},
    {"threads",
     "the thread count splits parallel reductions differently, so sums are ordered differently"},
    {"blas.", "the BLAS library and its kernel choose how each dot product is blocked and summed"},
    {"onednn", "oneDNN's ISA chooses the kernels of bfloat16 GEMM"},
    {"plan.vars.",
     "a setting of the acceptance plan: the two collects were configured differently"},
    {"framework.version", "a different framework version can run different kernels"},
};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const Relevance* RelevanceOf(const std::string& key) {
  const std::string lower = Lower(key);
  for (const Relevance& r : kRelevant) {
    if (lower.find(r.match) != std::string::npos) return &r;
  }
  return nullptr;
}

/// The knowledge-base entry a key holds the value of: "...environment.NAME" or
/// "...settings.NAME" (torch's settings, whose names have dots themselves).
const Setting* EntryOf(const std::string& key) {
  auto kb = BuiltinKnowledge();
  if (!kb.ok()) return nullptr;
  for (std::string_view marker : {"environment.", "settings."}) {
    std::size_t at = key.find(marker);
    while (at != std::string::npos && at > 0 && key[at - 1] != '.') {
      at = key.find(marker, at + 1);
    }
    if (at == std::string::npos) continue;
    const std::string name = key.substr(at + marker.size());
    if (const Setting* s = (*kb)->Find(name)) return s;
    for (auto [dump, kb_name] : DumpSettingNames()) {
      if (name == dump) return (*kb)->Find(kb_name);
    }
  }
  return nullptr;
}

/// The versions of the components a range can name (kComponents) that a side's settings record
/// (host.python.torch.version, .cuda, .hip).
std::map<std::string, std::string> VersionsOf(const std::map<std::string, Json>& settings) {
  std::map<std::string, std::string> out;
  for (auto [key, component] :
       {std::pair{"host.python.torch.version", "torch"},
        std::pair{"host.python.torch.cuda", "cuda"}, std::pair{"host.python.torch.hip", "hip"}}) {
    const auto it = settings.find(key);
    if (it != settings.end() && it->second.is_string()) {
      out[component] = it->second.get<std::string>();
    }
  }
  return out;
}

/// Whether a statement for `range` may hold on a side with `versions`: an empty range, or the
/// component's version unrecorded, or recorded and in the range.
bool MayApply(const VersionRange& range, const std::map<std::string, std::string>& versions) {
  if (range.empty()) return true;
  const auto it = versions.find(range.component);
  return it == versions.end() || range.Contains(it->second);
}

/// What the entry says about why the difference matters, with its first source: its summary and
/// effects (or claim and advice), then its version-dependent rules that hold for either side's
/// recorded versions, each labelled with its range ("[torch < 2.0] ..."); with no version
/// recorded, every range's statement, labelled.
std::string NoteOf(const Setting& s, const std::map<std::string, std::string>& baseline,
                   const std::map<std::string, std::string>& candidate) {
  std::string note;
  if (!s.real()) {
    note = fmt::format("{} ({}): {} {}", s.name, s.status, s.claim, s.advice);
  } else {
    note = s.summary;
    for (const char* aspect : {"precision", "determinism", "performance"}) {
      if (auto it = s.effect.find(aspect); it != s.effect.end()) {
        note += fmt::format(" {}: {}", aspect, it->second);
      }
    }
  }
  if (!s.versions.empty()) note += fmt::format(" [read by {}]", s.versions.Label());
  for (const Rule& rule : s.rules) {
    if (rule.versions.empty()) continue;
    if (MayApply(rule.versions, baseline) || MayApply(rule.versions, candidate)) {
      note += fmt::format(" [{}] {}", rule.versions.Label(), rule.message);
    }
  }
  return fmt::format("{} ({})", note, s.sources.front().ref);
}

/// Keys that differ between any two runs and say nothing about the platform.
bool Volatile(const std::string& key) {
  for (std::string_view v : {"created", "started", "finished", "time", "uid", "path", "origin",
                             "plugin_directories", "pid"}) {
    const std::size_t dot = key.rfind('.');
    if (key.substr(dot == std::string::npos ? 0 : dot + 1) == v) return true;
  }
  return false;
}

void FlattenInto(const Json& doc, const std::string& prefix, std::map<std::string, Json>& out,
                 int depth) {
  if (depth > 32 || out.size() > 20000) return;
  if (doc.is_object()) {
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      FlattenInto(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out, depth + 1);
    }
  } else if (doc.is_array()) {
    const bool scalars =
        std::all_of(doc.begin(), doc.end(), [](const Json& j) { return j.is_primitive(); });
    if (scalars) {
      std::string joined;
      for (const Json& j : doc) {
        joined += fmt::format("{}{}", joined.empty() ? "" : ",",
                              j.is_string() ? j.get<std::string>() : j.dump());
      }
      out[prefix] = joined;
    } else {
      for (std::size_t i = 0; i < doc.size(); ++i) {
        FlattenInto(doc[i], fmt::format("{}.{}", prefix, i), out, depth + 1);
      }
    }
  } else if (!Volatile(prefix)) {
    out[prefix] = doc;
  }
}

}  // namespace

std::map<std::string, Json> Flatten(const Json& doc, const std::string& prefix) {
  std::map<std::string, Json> out;
  FlattenInto(doc, prefix, out, 0);
  return out;
}

std::map<std::string, Json> SettingsOf(const Json& env_doc) {
  std::map<std::string, Json> out;
  if (!env_doc.is_object()) return out;
  if (env_doc.contains("host")) out = Flatten(env_doc["host"], "host");
  if (!env_doc.contains("devices") || !env_doc["devices"].is_object()) return out;
  const Json& devices = env_doc["devices"];
  if (!devices.contains("backends") || !devices["backends"].is_array()) return out;
  for (const Json& b : devices["backends"]) {
    const std::string name = StringField(b, "name");
    if (name.empty() || !b.is_object()) continue;
    Json copy = b;
    copy.erase("name");
    copy.erase("reason");
    for (auto& [k, v] : Flatten(copy, "backends." + name)) out.emplace(k, v);
  }
  return out;
}

std::vector<EnvDifference> DiffSettings(const std::map<std::string, Json>& baseline,
                                        const std::map<std::string, Json>& candidate,
                                        std::size_t limit) {
  std::vector<EnvDifference> diff;
  const std::map<std::string, std::string> baseline_versions = VersionsOf(baseline);
  const std::map<std::string, std::string> candidate_versions = VersionsOf(candidate);
  auto add = [&](const std::string& key, const Json& a, const Json& b) {
    EnvDifference d{key, a, b, false, ""};
    if (const Setting* s = EntryOf(key)) {
      d.relevant = true;
      d.note = NoteOf(*s, baseline_versions, candidate_versions);
    } else if (const Relevance* r = RelevanceOf(key)) {
      d.relevant = true;
      d.note = std::string(r->note);
    }
    diff.push_back(std::move(d));
  };
  for (const auto& [key, a] : baseline) {
    auto it = candidate.find(key);
    if (it == candidate.end()) {
      add(key, a, Json());
    } else if (it->second != a) {
      add(key, a, it->second);
    }
  }
  for (const auto& [key, b] : candidate) {
    if (!baseline.count(key)) add(key, Json(), b);
  }
  std::stable_sort(diff.begin(), diff.end(), [](const EnvDifference& x, const EnvDifference& y) {
    if (x.relevant != y.relevant) return x.relevant;
    return x.key < y.key;
  });
  if (diff.size() > limit) diff.resize(limit);
  return diff;
}

Json EnvDiffJson(const std::vector<EnvDifference>& diff) {
  Json out = Json::array();
  for (const EnvDifference& d : diff) {
    Json e = {{"key", d.key},
              {"baseline", d.baseline},
              {"candidate", d.candidate},
              {"relevant", d.relevant}};
    if (!d.note.empty()) e["note"] = d.note;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace parity::env
