// SPDX-License-Identifier: Apache-2.0
#include "fleet/fleet_collect.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "bench/runner.h"
#include "collect/bundle.h"
#include "core/file_util.h"
#include "core/process.h"
#include "fleet/pack.h"

namespace parity::fleet {
namespace {

namespace fs = std::filesystem;

constexpr int kHeaderTag = 10;
constexpr int kBundleTag = 11;
constexpr std::size_t kMaxHeader = std::size_t{1} << 20;
constexpr std::size_t kMaxBundle = std::size_t{16} << 30;
constexpr std::size_t kLogTail = 4096;

// The variables that choose a member's devices, for every backend.
constexpr const char* kVisibleDevices[] = {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
                                           "ROCR_VISIBLE_DEVICES"};

// Kills a child's process group after a delay unless told it has ended first.
class DelayedKill {
 public:
  explicit DelayedKill(double seconds) : seconds_(seconds) {}
  ~DelayedKill() {
    {
      std::lock_guard lock(mu_);
      ended_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  void Start(int pid) {
    thread_ = std::thread([this, pid] {
      std::unique_lock lock(mu_);
      if (!cv_.wait_for(lock, std::chrono::duration<double>(seconds_), [this] { return ended_; })) {
        ::kill(-pid, SIGKILL);
      }
    });
  }

 private:
  double seconds_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool ended_ = false;
  std::thread thread_;
};

// This rank's collect in `work`, on `device` (all the rank sees when empty): runs it and
// describes the outcome (status, reason, exit, seconds, log_tail, has_bundle). `rank` is known
// unless it started before MPI did (EarlyCollect), which MayStartEarly allows only when it does
// not matter.
Json CollectIn(const FleetCollectOptions& options, std::optional<int> rank,
               const std::string& device, const std::string& work, const std::atomic<bool>* stop) {
  std::error_code ec;
  fs::remove_all(work, ec);
  fs::create_directories(work, ec);
  Json member = Json::object();
  if (ec) {
    member["status"] = "failed";
    member["reason"] = fmt::format("{}: {}", work, ec.message());
    return member;
  }
  const std::string bundle = work + "/bundle";
  ProcessSpec spec;
  spec.argv = {options.parity_bin, "collect", options.plan, "-o", bundle, "--no-store"};
  spec.argv.insert(spec.argv.end(), options.collect_args.begin(), options.collect_args.end());
  spec.log_path = work + "/collect.log";
  spec.timeout = options.timeout;
  if (!device.empty()) {
    for (const char* var : kVisibleDevices) spec.env.insert_or_assign(var, device);
  }
  if (options.slow_rank && options.slow_rank == rank) {
    spec.env.insert_or_assign("PARITY_INJECT_SLOWDOWN", fmt::format("{}", options.slow_factor));
  }
  std::optional<DelayedKill> killer;
  if (options.kill_rank && options.kill_rank == rank) {
    killer.emplace(options.kill_after);
    spec.on_start = [&killer](int pid) { killer->Start(pid); };
  }
  const ProcessResult run = RunProcess(spec, stop);
  killer.reset();
  member["seconds"] = run.seconds;
  member["exit"] =
      run.started && run.signal == 0 && !run.timed_out ? Json(run.exit_code) : Json(nullptr);
  const std::string tail = LogTail(spec.log_path, kLogTail);
  member["log_tail"] = tail;
  auto manifest = collect::LoadManifest(bundle);
  const bool has_bundle = manifest.ok() && manifest->has_value();
  const bool finished = run.started && !run.timed_out && run.signal == 0 &&
                        (run.exit_code == 0 || run.exit_code == 1);
  if (finished && has_bundle) {
    member["status"] = "ok";
    if (run.exit_code == 1) member["reason"] = "the collect found failed checks (exit 1)";
  } else {
    member["status"] = "failed";
    std::string reason = run.started ? run.Describe() : run.error;
    if (run.timed_out) reason = fmt::format("timed out after {} s (--timeout)", options.timeout);
    if (run.interrupted) reason = "stopped: the fleet collect ended before it";
    if (const std::string e = LastParityError(tail); !e.empty()) reason += ": " + e;
    if (finished && !has_bundle) reason += ": no bundle manifest";
    member["reason"] = reason;
  }
  member["has_bundle"] = has_bundle;
  return member;
}

// The rank's own part of its member's entry.
Json MemberHeader(int rank, const std::string& host, int local_rank, const std::string& name) {
  return {{"rank", rank}, {"host", host}, {"local_rank", local_rank}, {"name", name}};
}

}  // namespace

Result<std::string> DeviceOf(int local_rank, int host_ranks, const std::string& host) {
  // srun --gpus-per-task gives each task its own devices: they are the member's already.
  if (const char* bound = std::getenv("SLURM_GPUS_PER_TASK"); bound != nullptr && *bound != 0) {
    return std::string();
  }
  for (const char* var : kVisibleDevices) {
    const char* value = std::getenv(var);
    if (value == nullptr || *value == 0) continue;
    std::vector<std::string> listed;
    for (std::string_view rest = value; !rest.empty();) {
      const auto comma = rest.find(',');
      listed.emplace_back(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    if (static_cast<int>(listed.size()) < host_ranks) {
      return Status::Invalid(
          "",
          fmt::format("--per-device: {} runs {} ranks but {}={} names {} device{}: start as "
                      "many ranks per node as it has devices",
                      host, host_ranks, var, value, listed.size(), listed.size() == 1 ? "" : "s"));
    }
    return listed[static_cast<std::size_t>(local_rank)];
  }
  return std::to_string(local_rank);
}

bool MayStartEarly(const FleetCollectOptions& options) {
  return !options.sequential && !options.per_device && !options.slow_rank && !options.kill_rank;
}

EarlyCollect::EarlyCollect(const FleetCollectOptions& options) {
  std::string base = options.work_dir;
  if (base.empty()) base = std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR") : "/tmp";
  std::string dir = base + "/parity-fleet-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) {
    outcome_ = {{"status", "failed"},
                {"reason", fmt::format("{}: {}", dir, std::strerror(errno))},
                {"has_bundle", false}};
    return;
  }
  work_ = dir;
  thread_ = std::thread([this, options] { outcome_ = CollectIn(options, {}, "", work_, &stop_); });
}

EarlyCollect::~EarlyCollect() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  std::error_code ec;
  if (!work_.empty()) fs::remove_all(work_, ec);
}

Json EarlyCollect::Wait() {
  if (thread_.joinable()) thread_.join();
  return outcome_;
}

std::vector<std::string> MemberNames(const std::vector<std::string>& hosts, bool per_device) {
  std::map<std::string, int> count, seen;
  for (const std::string& h : hosts) ++count[h];
  std::vector<std::string> names;
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    const std::string& h = hosts[r];
    const int local = seen[h]++;
    if (per_device) {
      names.push_back(fmt::format("{}-dev{}", h, local));
    } else if (count[h] > 1) {
      names.push_back(fmt::format("{}.r{}", h, r));
    } else {
      names.push_back(h);
    }
  }
  return names;
}

bool IsFleetDir(const std::string& dir) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(dir) / "fleet.json", ec);
}

Result<Json> LoadFleetManifest(const std::string& fleet_dir) {
  const std::string path = (fs::path(fleet_dir) / "fleet.json").string();
  PARITY_ASSIGN_OR_RETURN(std::string text,
                          ReadSmallFile(path, std::size_t{64} << 20, "fleet manifest"));
  return ParseFleetManifest(text, path);
}

Result<Json> ParseFleetManifest(std::string_view text, const std::string& path) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::Invalid(path, "not a JSON object");
  if (j.value("format", Json()) != "parity-fleet") {
    return Status::Invalid(path, "'format' is not parity-fleet");
  }
  if (j.value("version", Json()) != 1) return Status::Invalid(path, "'version' is not 1");
  const auto members = j.find("members");
  if (members == j.end() || !members->is_array()) return Status::Invalid(path, "no 'members' list");
  for (std::size_t i = 0; i < members->size(); ++i) {
    const Json& m = (*members)[i];
    const std::string where = fmt::format("members[{}]", i);
    if (!m.is_object()) return Status::Invalid(path, where + ": not an object");
    for (const char* key : {"name", "status"}) {
      if (!m.contains(key) || !m[key].is_string() || m[key].get<std::string>().empty()) {
        return Status::Invalid(path, fmt::format("{}: '{}' is not a non-empty string", where, key));
      }
    }
    const std::string status = m["status"];
    if (status != "ok" && status != "failed") {
      return Status::Invalid(path,
                             fmt::format("{}: 'status' is '{}', not ok or failed", where, status));
    }
    const std::string name = m["name"];
    if (name.find('/') != std::string::npos || name == "." || name == "..") {
      return Status::Invalid(path,
                             fmt::format("{}: 'name' '{}' is not a directory name", where, name));
    }
    if (m.contains("bundle") && !m["bundle"].is_null() && !m["bundle"].is_string()) {
      return Status::Invalid(path, where + ": 'bundle' is not a string");
    }
  }
  return j;
}

Result<FleetCollectRun> FleetCollect(const MpiSession& session, const FleetCollectOptions& options,
                                     EarlyCollect* early) {
  const int rank = session.rank(), ranks = session.size();
  const double start = MpiSession::Now();
  const std::string started = bench::Iso8601Now();
  const std::vector<std::string> hosts = session.GatherAll(session.host());
  const std::vector<std::string> names = MemberNames(hosts, options.per_device);
  int local_rank = 0;
  for (int r = 0; r < rank; ++r) local_rank += hosts[static_cast<std::size_t>(r)] == session.host();
  const auto host_ranks = static_cast<int>(std::count(hosts.begin(), hosts.end(), session.host()));
  // Every rank checks its device, then rank 0 FLEET_DIR (a new or empty directory), before
  // anyone collects.
  std::string device;
  std::string problem;
  if (options.per_device) {
    auto d = DeviceOf(local_rank, host_ranks, session.host());
    if (d.ok()) {
      device = std::move(d).value();
    } else {
      problem = d.status().message();
    }
  }
  for (const std::string& p : session.GatherAll(problem)) {
    if (!p.empty()) return Status::Invalid("", p);
  }
  if (rank == 0) {
    std::error_code ec;
    if (fs::exists(options.fleet_dir, ec) && !fs::is_empty(options.fleet_dir, ec)) {
      problem = "exists and is not empty (a fleet directory is written once)";
    } else if (fs::create_directories(fs::path(options.fleet_dir) / "nodes", ec); ec) {
      problem = ec.message();
    }
  }
  const std::string agreed = session.GatherAll(problem)[0];
  if (!agreed.empty()) return Status::Invalid(options.fleet_dir, agreed);

  const std::string uid =
      session.GatherAll(rank == 0 ? fmt::format("{}-{}", ::getpid(), std::time(nullptr)) : "")[0];
  std::string base = options.work_dir;
  if (base.empty()) base = std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR") : "/tmp";
  const std::string work = early != nullptr
                               ? early->work()
                               : fmt::format("{}/parity-fleet-{}-rank-{:04}", base, uid, rank);
  if (rank == 0 && options.progress) {
    options.progress(
        fmt::format("{} members collect {} (timeout {} s)", ranks, options.plan, options.timeout));
  }

  const std::string& name = names[static_cast<std::size_t>(rank)];
  Json mine = MemberHeader(rank, session.host(), local_rank, name);
  if (!device.empty()) mine["device"] = device;
  if (early != nullptr) {
    mine.update(early->Wait());
  } else if (options.sequential) {
    // One turn per rank; each collect ends by its own timeout, so every turn ends.
    for (int turn = 0; turn < ranks; ++turn) {
      if (turn == rank) mine.update(CollectIn(options, rank, device, work, nullptr));
      session.QuietBarrier();
    }
  } else {
    mine.update(CollectIn(options, rank, device, work, nullptr));
  }
  std::string packed;
  if (mine.value("has_bundle", false)) {
    auto p = PackDirectory(work + "/bundle", kMaxBundle);
    if (p.ok()) {
      packed = std::move(p).value();
    } else {
      mine["status"] = "failed";
      mine["reason"] = p.status().message();
    }
  }
  std::error_code ec;
  FleetCollectRun out;
  if (rank != 0) {
    const Status a = session.SendBytes(mine.dump(), 0, kHeaderTag);
    const Status b = session.SendBytes(packed, 0, kBundleTag);
    fs::remove_all(work, ec);
    if (!a.ok()) return a;
    if (!b.ok()) return b;
    // Rank 0's count of failed members, once it has written the fleet (or MPI_Abort).
    session.QuietBarrier();
    out.failed = std::atoi(session.GatherAll("")[0].c_str());
    return out;
  }

  // Rank 0: its own member, then every other rank's as it comes, each by the deadline.
  const double deadline = start + options.timeout * (options.sequential ? ranks : 1) + 120.0;
  Json members = Json::array();
  double slowest = 0.0;
  for (int r = 0; r < ranks; ++r) {
    Json member;
    std::string bytes;
    if (r == 0) {
      member = mine;
      bytes = std::move(packed);
    } else {
      auto header = session.RecvBytes(r, kHeaderTag, deadline, kMaxHeader);
      if (header.ok()) member = Json::parse(*header, nullptr, false);
      if (!header.ok() || !member.is_object()) {
        member = {{"rank", r},
                  {"host", hosts[static_cast<std::size_t>(r)]},
                  {"name", names[static_cast<std::size_t>(r)]},
                  {"status", "failed"},
                  {"reason", header.ok() ? "sent a malformed header"
                                         : fmt::format("no answer within the timeout ({})",
                                                       header.status().message())}};
        out.silent.push_back(r);
        members.push_back(member);
        continue;
      }
      auto body = session.RecvBytes(r, kBundleTag, deadline, kMaxBundle);
      if (!body.ok()) {
        member["status"] = "failed";
        member["reason"] = body.status().message();
        out.silent.push_back(r);
      } else {
        bytes = std::move(body).value();
      }
    }
    member["name"] = names[static_cast<std::size_t>(r)];  // rank 0's names, not the sender's
    if (!bytes.empty()) {
      const std::string dir =
          (fs::path(options.fleet_dir) / "nodes" / names[static_cast<std::size_t>(r)]).string();
      if (Status s = UnpackDirectory(bytes, dir, fmt::format("rank {}'s bundle", r)); !s.ok()) {
        member["status"] = "failed";
        member["reason"] = s.message();
      } else {
        member["bundle"] = fmt::format("nodes/{}", names[static_cast<std::size_t>(r)]);
      }
    }
    member.erase("has_bundle");
    slowest = std::max(slowest, member.value("seconds", 0.0));
    if (member.value("status", "") != "ok") {
      ++out.failed;
      if (options.progress) {
        options.progress(fmt::format("{} (rank {}): FAILED: {}", member.value("name", ""), r,
                                     member.value("reason", "")));
      }
    }
    members.push_back(std::move(member));
  }
  fs::remove_all(work, ec);
  Json manifest = Document("parity-fleet", 1);
  manifest["plan"] = options.plan;
  manifest["ranks"] = ranks;
  manifest["per_device"] = options.per_device;
  manifest["sequential"] = options.sequential;
  manifest["inject"] = options.inject.empty() ? Json(nullptr) : Json(options.inject);
  manifest["started"] = started;
  manifest["duration_s"] = MpiSession::Now() - start;
  manifest["collect_seconds_max"] = slowest;
  manifest["mpi"] = session.library();
  manifest["members"] = std::move(members);
  const std::string text = manifest.dump(2) + "\n";
  PARITY_RETURN_IF_ERROR(
      WriteFileAtomically((fs::path(options.fleet_dir) / "fleet.json").string(), {AsBytes(text)}));
  out.manifest = std::move(manifest);
  // A rank that never answered would never reach this gather: the caller ends the job instead.
  if (out.silent.empty()) {
    session.QuietBarrier();
    session.GatherAll(std::to_string(out.failed));
  }
  return out;
}

}  // namespace parity::fleet
