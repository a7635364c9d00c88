// SPDX-License-Identifier: Apache-2.0
// parity monitor: GPU and host telemetry sampled at an interval, threshold rules with alerts,
// a record file, and a Prometheus exporter.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/common.h"
#include "core/exit_code.h"
#include "core/text.h"
#include "core/text_table.h"
#include "monitor/alert_exec.h"
#include "monitor/exporter.h"
#include "monitor/monitor.h"
#include "monitor/rules.h"
#include "monitor/sources.h"

namespace parity::cli {
namespace {

std::string LabelsText(const monitor::Labels& labels) {
  std::string out;
  for (const auto& [k, v] : labels) out += (out.empty() ? "" : ",") + k + "=" + v;
  return out;
}

/// The human-readable form of one sample: sources, then one table per device and the host.
std::string SampleText(const monitor::Sample& sample) {
  std::string out;
  for (const monitor::SourceState& s : sample.sources) {
    out += s.up ? fmt::format("source {}: up\n", s.name)
                : fmt::format("source {}: down: {}\n", s.name, s.reason);
  }
  const auto table = [](const std::vector<monitor::Reading>& readings) {
    Table t({"metric", "labels", "value"}, {false, false, true});
    for (const monitor::Reading& r : readings) {
      t.AddRow({r.metric, LabelsText(r.labels), fmt::format("{}", r.value)});
    }
    return t.Render("  ");
  };
  for (const monitor::DeviceReadings& d : sample.devices) {
    out += fmt::format("\ndevice {} ({}): {} {}{}{}\n", d.device, d.source, d.info.vendor,
                       d.info.model, d.info.pci_bus_id.empty() ? "" : " at " + d.info.pci_bus_id,
                       d.info.uuid.empty() ? "" : " uuid " + d.info.uuid);
    out += table(d.readings);
  }
  if (!sample.host.empty()) out += "\nhost\n" + table(sample.host);
  return out;
}

}  // namespace

int RunMonitor(int argc, char** argv) {
  CommonOptions common;
  monitor::MonitorOptions options;
  monitor::SourceOptions sources;
  std::string source_list, rules_path, alert_exec, serve;
  bool check = false, print_rules = false, list_sources = false;
  double duration = 0.0;
  auto app = MakeApp(
      "monitor",
      "Sample GPU and host telemetry (sources nvml, rocm-smi, amdgpu, host; vendor libraries "
      "loaded with dlopen), evaluate threshold rules on every sample (built-in defaults, or "
      "--rules FILE), record samples and alerts, and serve the last sample to Prometheus. "
      "Metric names are docs/DESIGN.md's (parity_gpu_*, parity_host_*); a value a source can't "
      "read is absent, never 0. Exit 0 when no alert fired, 1 when one did, 3 when none of the "
      "requested sources can run here (with each reason), 130 when interrupted (after the "
      "--json summary is written).",
      &common);
  app->add_flag("--once", options.once,
                "one sample of every device, then exit (rates such as CPU utilisation and RAPL "
                "power come from a first read 0.25 s before)");
  app->add_option("--interval", options.interval_seconds, "seconds between samples (default 1)")
      ->check(CLI::Range(0.01, 86400.0))
      ->option_text("S");
  app->add_option("--duration", duration, "stop after S seconds (default: until interrupted)")
      ->check(CLI::Range(0.0, 1e9))
      ->option_text("S");
  app->add_option("--source", source_list,
                  "comma-separated sources (default all): nvml, rocm-smi, amdgpu, host")
      ->option_text("LIST");
  app->add_option("--record", options.record_path,
                  "append each sample and alert as a JSON line, flushed after every sample")
      ->option_text("FILE.jsonl");
  app->add_option("--rules", rules_path,
                  "threshold rules (YAML) in place of the built-in defaults "
                  "(--print-default-rules shows them)")
      ->option_text("FILE");
  app->add_flag("--check", check, "with --rules: validate the file and exit (0 valid, 2 not)");
  app->add_flag("--print-default-rules", print_rules, "print the built-in rules as YAML");
  app->add_flag("--list-sources", list_sources, "list the sources and exit");
  app->add_option("--alert-exec", alert_exec,
                  "run CMD for each alert with the alert as JSON on its standard input; CMD is "
                  "split into words (quotes group), no shell")
      ->option_text("CMD");
  app->add_option("--serve", serve,
                  "serve /metrics (Prometheus text format) and /healthz on HOST:PORT, read-only "
                  "(default 127.0.0.1:9400, loopback; a non-loopback address such as "
                  "0.0.0.0:9400 must be spelled out). Port 0 picks a free port; the address "
                  "served is printed on stderr")
      ->expected(0, 1)
      ->default_str("127.0.0.1:9400")
      ->option_text("[ADDR]");
  app->add_option("--sysfs-root", sources.roots.sysfs,
                  "read sysfs (amdgpu, hwmon, powercap, EDAC) under DIR instead of /sys")
      ->option_text("DIR");
  app->add_option("--procfs-root", sources.roots.procfs,
                  "read procfs (stat, meminfo, cpuinfo) under DIR instead of /proc")
      ->option_text("DIR");
  if (auto code = Parse(*app, common, argc, argv)) return *code;

  if (list_sources) {
    for (const monitor::SourceEntry& entry : monitor::SourceTable()) {
      std::printf("%-10s%s\n", std::string(entry.name).c_str(), std::string(entry.summary).c_str());
    }
    return kExitOk;
  }
  if (print_rules) {
    std::fputs(std::string(monitor::DefaultRulesYaml()).c_str(), stdout);
    return kExitOk;
  }
  std::vector<monitor::Rule> rules;
  if (!rules_path.empty()) {
    auto loaded = monitor::LoadRules(rules_path);
    if (!loaded.ok()) return Fail(loaded.status());
    rules = std::move(loaded).value();
  } else if (check) {
    return Fail(Status::Invalid("", "--check needs --rules FILE"));
  } else {
    rules = monitor::DefaultRules();
  }
  if (check) {
    if (!common.quiet) std::printf("%s: %zu rules, valid\n", rules_path.c_str(), rules.size());
    return kExitOk;
  }
  if (app->count("--duration")) {
    if (duration <= 0.0) return Fail(Status::Invalid("--duration", "must be more than 0"));
    options.duration_seconds = duration;
  }
  if (!alert_exec.empty()) {
    auto argv_words = SplitCommand(alert_exec);
    if (!argv_words.ok()) return Fail(argv_words.status().WithContext("--alert-exec"));
    options.alert_exec = std::move(argv_words).value();
  }
  if (!serve.empty()) {
    if (auto address = monitor::ParseListenAddress(serve); !address.ok()) {
      return Fail(address.status());
    }
    options.serve = serve;
  }
  options.quiet = common.quiet;
  options.print_samples = common.human() && !options.once && options.serve.empty();

  auto sampler = monitor::Sampler::Open(SplitList(source_list), sources);
  if (!sampler.ok()) return Fail(sampler.status());
  if (common.human() && !options.once) {
    for (const monitor::SourceState& s : (*sampler)->opened()) {
      if (!s.up) Warn(fmt::format("source {} is down: {}", s.name, s.reason));
    }
  }
  monitor::RuleEngine engine(rules);
  auto run = monitor::RunMonitor(**sampler, engine, options);
  if (!run.ok()) return Fail(run.status());
  if (options.once && run->last) {
    if (common.human()) std::fputs(SampleText(*run->last).c_str(), stdout);
    if (Status s = WriteJsonOutput(common, monitor::SampleToJson(*run->last)); !s.ok()) {
      return Fail(s);
    }
  } else if (Status s = WriteJsonOutput(common, monitor::RunSummaryJson(*run, rules)); !s.ok()) {
    return Fail(s);
  }
  if (run->interrupted) return kExitInterrupted;
  return run->alerts.empty() ? kExitOk : kExitCheckFailed;
}

}  // namespace parity::cli
