// SPDX-License-Identifier: Apache-2.0
#include "cli/bench_ranks.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>

#include "bench/registry.h"
#include "bench/suite.h"
#include "core/exit_code.h"
#include "env/fingerprint.h"
#include "fleet/collective_bench.h"
#include "fleet/mpi_session.h"
#include "fleet/transport.h"

namespace parity::cli {

void AddRankSuiteFlags(CLI::App& app, RankSuiteFlags* flags) {
  app.add_option("--collective", flags->collectives,
                 "collective suite: comma-separated collectives (default all_reduce,all_gather,"
                 "reduce_scatter,alltoall,broadcast,sendrecv)")
      ->option_text("C[,C...]");
  app.add_option("--min-bytes", flags->min_bytes,
                 "collective suite: smallest size, doubled up to --max-bytes (default 8)")
      ->option_text("BYTES");
  app.add_option("--max-bytes", flags->max_bytes,
                 "collective suite: largest size (default 1G); interconnect: the message (default "
                 "64M). K, M, G are powers of 1024")
      ->option_text("BYTES");
  app.add_option("--iters", flags->iters,
                 "collective and interconnect suites: operations per timed sample (default 20, "
                 "fewer above 4 MiB)")
      ->check(CLI::Range(1, 1000000))
      ->option_text("N");
  app.add_option("--transport", flags->transport,
                 "collective and interconnect suites: mpi (host buffers, --backend cpu), nccl or "
                 "rccl (device buffers of --backend's device, the library loaded with dlopen: "
                 "$PARITY_NCCL_LIBRARY, else libnccl.so.2 or librccl.so.1); default mpi on cpu, "
                 "nccl on cuda, rccl on hip")
      ->option_text("T");
  app.add_option("--inject", flags->inject,
                 "collective suite, for tests: corrupt:rank=R changes one output element on rank R "
                 "before the check, which must then report it")
      ->option_text("FAULT");
}

bool IsRankSuite(const std::string& suite) {
  return suite == "collective" || suite == "interconnect";
}

Result<std::size_t> ParseByteSize(const std::string& text, std::string_view flag) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  std::string unit = text.substr(digits);
  if (digits == 0 || digits > 12) {
    return Status::Invalid(
        "", fmt::format("{}: '{}' is not a size in bytes (8, 4K, 64M, 1G)", flag, text));
  }
  const std::size_t value = std::stoull(text.substr(0, digits));
  std::size_t shift = 0;
  if (unit == "" || unit == "B") {
    shift = 0;
  } else if (unit == "K" || unit == "KiB") {
    shift = 10;
  } else if (unit == "M" || unit == "MiB") {
    shift = 20;
  } else if (unit == "G" || unit == "GiB") {
    shift = 30;
  } else {
    return Status::Invalid(
        "", fmt::format("{}: '{}': unit '{}' is not B, K, M or G", flag, text, unit));
  }
  constexpr std::size_t kMax = std::size_t{4} << 30;  // MPI counts are int: 2^31 floats
  if (value == 0 || value > (kMax >> shift)) {
    return Status::Invalid("", fmt::format("{}: '{}' is not between 1 byte and 4 GiB", flag, text));
  }
  return value << shift;
}

int RunRankSuites(const std::vector<std::string>& suites, const std::string& backend, int reps,
                  std::uint64_t seed, const RankSuiteFlags& flags, const CommonOptions& common) {
  fleet::CollectiveOptions coll;
  fleet::InterconnectOptions link;
  coll.seed = link.seed = seed;
  if (reps > 0) coll.reps = link.reps = reps;
  if (flags.iters > 0) coll.iters = link.iters = flags.iters;
  coll.collectives = SplitList(flags.collectives);
  if (Status s = fleet::CheckCollectiveNames(coll.collectives); !s.ok()) return Fail(s);
  if (!flags.min_bytes.empty()) {
    auto v = ParseByteSize(flags.min_bytes, "--min-bytes");
    if (!v.ok()) return Fail(v.status());
    coll.min_bytes = *v;
  }
  if (!flags.max_bytes.empty()) {
    auto v = ParseByteSize(flags.max_bytes, "--max-bytes");
    if (!v.ok()) return Fail(v.status());
    coll.max_bytes = link.bytes = *v;
  }
  if (coll.min_bytes > coll.max_bytes) {
    return Fail(Status::Invalid(
        "", fmt::format("--min-bytes {} is above --max-bytes {}", coll.min_bytes, coll.max_bytes)));
  }
  if (!flags.inject.empty()) {
    int rank = -1;
    char tail = 0;
    if (std::sscanf(flags.inject.c_str(), "corrupt:rank=%d%c", &rank, &tail) != 1 || rank < 0) {
      return Fail(
          Status::Invalid("", fmt::format("--inject: '{}' is not corrupt:rank=R", flags.inject)));
    }
    coll.corrupt_rank = rank;
  }
  std::string transport_name = flags.transport;
  if (transport_name.empty()) {
    transport_name = backend == "cpu" ? "mpi" : backend == "hip" ? "rccl" : "nccl";
  }
  if (transport_name != "mpi" && transport_name != "nccl" && transport_name != "rccl") {
    return Fail(Status::Invalid(
        "", fmt::format("--transport: '{}' is not mpi, nccl or rccl", transport_name)));
  }
  if ((transport_name == "mpi") != (backend == "cpu")) {
    return Fail(Status::Invalid(
        "", transport_name == "mpi"
                ? fmt::format("--transport mpi moves host buffers: with --backend {} the "
                              "collectives run on nccl or rccl",
                              backend)
                : fmt::format("--transport {} moves device buffers: it needs a GPU backend, "
                              "not --backend cpu",
                              transport_name)));
  }

  Result<fleet::MpiSession> session = fleet::MpiSession::Start();
  if (!session.ok()) return Fail(session.status(), fleet::ReportsStartFailure());
  const bool root = session->rank() == 0;
  if (coll.corrupt_rank && *coll.corrupt_rank >= session->size()) {
    if (root) {
      Fail(Status::Invalid("",
                           fmt::format("--inject: rank {} is not one of the {} ranks (0 to {})",
                                       *coll.corrupt_rank, session->size(), session->size() - 1)));
    }
    return kExitUsage;
  }
  if (root && !common.quiet) {
    coll.progress = link.progress = [](std::string_view line) {
      std::fprintf(stderr, "parity bench: %.*s\n", static_cast<int>(line.size()), line.data());
    };
  }
  std::unique_ptr<bench::Backend> device;
  std::unique_ptr<fleet::Transport> transport;
  if (transport_name == "mpi") {
    transport = fleet::MakeMpiTransport(*session);
  } else {
    // This rank's device: the ranks of a host take its devices in turn.
    const std::vector<std::string> hosts = session->GatherAll(session->host());
    int local_rank = 0;
    for (int r = 0; r < session->rank(); ++r)
      local_rank += hosts[static_cast<std::size_t>(r)] == session->host();
    std::string problem;
    auto opened = bench::OpenBackend(backend);
    if (!opened.ok()) {
      problem = opened.status().message();
    } else {
      device = std::move(opened).value();
      auto devices = device->Devices();
      if (!devices.ok() || devices->empty()) {
        problem = devices.ok() ? fmt::format("{}: no device", backend) : devices.status().message();
      } else if (Status s = device->Open(local_rank % static_cast<int>(devices->size())); !s.ok()) {
        problem = s.message();
      }
    }
    for (const std::string& p : session->GatherAll(problem)) {
      if (!p.empty()) {
        if (root) std::fprintf(stderr, "parity: error: %s\n", p.c_str());
        return kExitUnavailable;
      }
    }
    auto made = fleet::MakeNcclTransport(*session, device.get(), transport_name,
                                         fleet::DefaultNcclLibrary(transport_name));
    if (!made.ok()) {
      if (root) std::fprintf(stderr, "parity: error: %s\n", made.status().message().c_str());
      return kExitUnavailable;
    }
    transport = std::move(made).value();
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<bench::BenchResult> results;
  std::string text;
  for (const std::string& suite : suites) {
    if (suite == "collective") {
      if (session->size() < 2) {
        for (const fleet::Collective& c : fleet::Collectives()) {
          results.push_back(bench::Skipped(
              fmt::format("collective.{}", c.name), "float32", {{"ranks", 1}}, "GB/s",
              "one rank: nothing crosses a link (start it under mpirun -np 2 or more)"));
        }
        continue;
      }
      auto r = fleet::RunCollectiveSuite(*session, *transport, coll);
      if (!r.ok()) return Fail(r.status());
      text += fleet::CollectiveText(*r);
      results.insert(results.end(), r->begin(), r->end());
    } else {
      auto r = fleet::RunInterconnectSuite(*session, *transport, link);
      if (!r.ok()) return Fail(r.status());
      text += fleet::InterconnectText(*r, session->size());
      results.insert(results.end(), r->begin(), r->end());
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Json settings = {{"seed", seed},
                   {"min_bytes", coll.min_bytes},
                   {"max_bytes", coll.max_bytes},
                   {"reps", coll.reps}};
  if (coll.iters) settings["iters"] = *coll.iters;
  if (!coll.collectives.empty()) settings["collectives"] = coll.collectives;
  if (coll.corrupt_rank) settings["inject"] = flags.inject;
  // Every rank takes part in gathering the hosts; only rank 0 reports.
  Json doc = fleet::RanksDocument(*session, root ? env::Fingerprint() : Json::object(), backend,
                                  suites, settings, seconds, results);
  int invalid = 0, ok = 0;
  for (const bench::BenchResult& r : results) {
    invalid += r.outcome == bench::Outcome::kInvalid;
    ok += r.outcome == bench::Outcome::kOk;
  }
  if (root) {
    if (common.human()) {
      std::fputs(fmt::format("parity bench: {} over MPI ({})\n{}", doc["device"].get<std::string>(),
                             session->library(), text)
                     .c_str(),
                 stdout);
    }
    if (Status s = WriteJsonOutput(common, doc); !s.ok()) return Fail(s);
  }
  if (invalid > 0) return kExitCheckFailed;
  if (ok == 0) {
    if (root) {
      std::fprintf(stderr,
                   "parity: error: nothing asked for can run here: every benchmark was "
                   "skipped (reasons above)\n");
    }
    return kExitUnavailable;
  }
  return kExitOk;
}

}  // namespace parity::cli
