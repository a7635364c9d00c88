// SPDX-License-Identifier: Apache-2.0
#include "stress/fault_firing.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "stress/worker_process.h"

namespace parity::stress {
namespace {

std::uint64_t Mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

void SignalGroup(const FaultTarget& target, int sig) {
  if (target.pid > 0) ::kill(-target.pid, sig);
}

void FireDiskFull(const FaultTarget& target, FiredFault* fired) {
  if (SetSoftLimit(target.pid, RLIMIT_FSIZE, 0)) {
    fired->disk_full = true;
    fired->detail = fmt::format(
        "file size limit 0 on worker {}: its next checkpoint write "
        "fails",
        target.worker);
  } else {
    fired->detail = fmt::format("prlimit(RLIMIT_FSIZE) on worker {} failed: {}", target.worker,
                                std::strerror(errno));
  }
}

void FireOom(const FaultTarget& target, FiredFault* fired) {
  const std::uint64_t vm = VirtualSize(target.pid);
  const std::uint64_t headroom = std::uint64_t{64} << 20;
  const bool limited = vm > 0 && SetSoftLimit(target.pid, RLIMIT_AS, vm + headroom);
  if (target.builtin) SendControl(target.control_fd, OomMessage(std::uint64_t{1} << 30));
  fired->kill_expected = true;
  fired->needs_new_process = target.builtin;
  fired->detail = limited ? fmt::format(
                                "address space of worker {} limited to {} MiB (64 MiB above what "
                                "it maps){}",
                                target.worker, (vm + headroom) >> 20,
                                target.builtin ? "; told to allocate past it" : "")
                          : fmt::format("prlimit(RLIMIT_AS) on worker {} failed", target.worker);
}

}  // namespace

bool CanFire(FaultKind kind, const FaultTarget& target) {
  if (!target.running || target.pid <= 0 || target.settling || target.steps_this_process < 1) {
    return false;
  }
  if (kind == FaultKind::kCorruptCheckpoint && !target.newest_checkpoint) return false;
  if (kind == FaultKind::kDiskFull && target.disk_full) return false;
  return true;
}

FiredFault FireFault(const DueFault& due, const FaultTarget& target, std::uint64_t seed) {
  FiredFault fired;
  switch (due.kind) {
    case FaultKind::kKill:
      SignalGroup(target, SIGKILL);
      fired.kill_expected = fired.needs_new_process = true;
      fired.detail = fmt::format("SIGKILL to worker {} (pid {}) at step {}", target.worker,
                                 target.pid, target.step);
      break;
    case FaultKind::kHang:
      SignalGroup(target, SIGSTOP);
      fired.needs_new_process = true;
      fired.detail = fmt::format("SIGSTOP to worker {} (pid {}) at step {}", target.worker,
                                 target.pid, target.step);
      break;
    case FaultKind::kCorruptCheckpoint: {
      const CheckpointRef& newest = *target.newest_checkpoint;
      const std::string done =
          CorruptFile(newest.path, seed ^ (static_cast<std::uint64_t>(due.occurrence) << 8));
      SignalGroup(target, SIGKILL);
      fired.kill_expected = fired.needs_new_process = true;
      fired.resume_at_most = newest.step;
      fired.detail = fmt::format(
          "checkpoint of step {} ({}): {}; worker {} killed so that its "
          "restart must read it",
          newest.step, newest.path, done, target.worker);
      break;
    }
    case FaultKind::kDiskFull:
      FireDiskFull(target, &fired);
      break;
    case FaultKind::kOom:
      FireOom(target, &fired);
      break;
    case FaultKind::kSdc:
      fired.plant_seed = Mix(seed ^ 0x5344430000ULL ^ static_cast<std::uint64_t>(due.occurrence));
      SendControl(target.control_fd, PlantMessage(fired.plant_seed));
      fired.sdc = true;
      fired.detail = "one bit of one result to be flipped in the next step";
      break;
  }
  return fired;
}

std::string CorruptFile(const std::string& path, std::uint64_t seed) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return "could not open it";
  struct stat st {};
  ::fstat(fd, &st);
  const auto size = static_cast<std::uint64_t>(std::max<off_t>(st.st_size, 0));
  int flipped = 0;
  for (int i = 0; i < 8 && size > 0; ++i) {
    const std::uint64_t at = Mix(seed ^ static_cast<std::uint64_t>(i)) % size;
    unsigned char byte = 0;
    if (::pread(fd, &byte, 1, static_cast<off_t>(at)) == 1) {
      byte ^= 0xff;
      if (::pwrite(fd, &byte, 1, static_cast<off_t>(at)) == 1) ++flipped;
    }
  }
  ::close(fd);
  return fmt::format("{} bytes flipped", flipped);
}

bool SetSoftLimit(int pid, int resource, rlim_t soft) {
  struct rlimit old {};
  const auto which = static_cast<__rlimit_resource>(resource);
  if (::prlimit(pid, which, nullptr, &old) != 0) return false;
  struct rlimit limit = old;
  limit.rlim_cur = std::min(soft, old.rlim_max);
  return ::prlimit(pid, which, &limit, nullptr) == 0;
}

std::uint64_t VirtualSize(int pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string key;
  while (in >> key) {
    if (key == "VmSize:") {
      std::uint64_t kib = 0;
      in >> kib;
      return kib * 1024;
    }
    std::getline(in, key);
  }
  return 0;
}

}  // namespace parity::stress
