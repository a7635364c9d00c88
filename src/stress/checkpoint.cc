// SPDX-License-Identifier: Apache-2.0
#include "stress/checkpoint.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

namespace parity::stress {
namespace {

constexpr char kMagic[8] = {'P', 'A', 'R', 'I', 'T', 'Y', 'C', 'K'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHeaderBytes = 8 + 4 + 4 + 8 + 8 + 32;
constexpr std::size_t kDigestBytes = 32;

void PutLe(std::string* out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

std::uint64_t GetLe(const unsigned char* in, int bytes) {
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= std::uint64_t{in[i]} << (8 * i);
  return value;
}

void InitSodium() {
  static const int once = sodium_init();
  (void)once;
}

/// BLAKE2b-256 of the first 32 header bytes followed by the payload.
std::array<unsigned char, kDigestBytes> Checksum(const void* header, std::string_view payload) {
  InitSodium();
  crypto_generichash_state state;
  crypto_generichash_init(&state, nullptr, 0, kDigestBytes);
  crypto_generichash_update(&state, static_cast<const unsigned char*>(header), 32);
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(payload.data()),
                            payload.size());
  std::array<unsigned char, kDigestBytes> digest{};
  crypto_generichash_final(&state, digest.data(), digest.size());
  return digest;
}

std::string Errno(std::string_view what) {
  return fmt::format("{}: {}", what, std::strerror(errno));
}

/// Writes all of `data` to `fd`; false with errno set on failure.
bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string DirectoryOf(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool IsCheckpointName(std::string_view name) {
  return name.size() == std::string_view("step-000000000000.ckpt").size() &&
         name.starts_with("step-") && name.ends_with(".ckpt") &&
         std::all_of(name.begin() + 5, name.end() - 5, [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::string CheckpointFileName(std::int64_t step) { return fmt::format("step-{:012d}.ckpt", step); }

Status WriteCheckpoint(const std::string& path, std::int64_t step, std::string_view payload) {
  std::string header(kMagic, sizeof(kMagic));
  PutLe(&header, kVersion, 4);
  PutLe(&header, 0, 4);
  PutLe(&header, static_cast<std::uint64_t>(step), 8);
  PutLe(&header, payload.size(), 8);
  const auto digest = Checksum(header.data(), payload);
  header.append(reinterpret_cast<const char*>(digest.data()), digest.size());

  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status::Invalid(path, "checkpoint not written: " + Errno("cannot create " + tmp));
  std::string problem;
  if (!WriteAll(fd, header) || !WriteAll(fd, payload)) {
    problem = Errno("write");
  } else if (::fsync(fd) != 0) {
    problem = Errno("fsync");
  }
  if (::close(fd) != 0 && problem.empty()) problem = Errno("close");
  if (problem.empty() && ::rename(tmp.c_str(), path.c_str()) != 0) problem = Errno("rename");
  if (!problem.empty()) {
    ::unlink(tmp.c_str());
    return Status::Invalid(path, "checkpoint not written: " + problem);
  }
  const int dir = ::open(DirectoryOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return Status::Ok();
}

Result<Checkpoint> ReadCheckpoint(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::Invalid(path, Errno("cannot open checkpoint"));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return Status::Invalid(path, Errno("fstat"));
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  unsigned char header[kHeaderBytes];
  std::string payload;
  std::string problem;
  if (size < kHeaderBytes) {
    problem = fmt::format("{} bytes, shorter than a checkpoint header ({})", size, kHeaderBytes);
  } else if (::pread(fd, header, kHeaderBytes, 0) != static_cast<ssize_t>(kHeaderBytes)) {
    problem = Errno("read");
  } else if (std::memcmp(header, kMagic, sizeof(kMagic)) != 0) {
    problem = "not a parity checkpoint (no PARITYCK magic)";
  } else if (GetLe(header + 8, 4) != kVersion || GetLe(header + 12, 4) != 0) {
    problem =
        fmt::format("checkpoint version {} (this parity reads {})", GetLe(header + 8, 4), kVersion);
  } else if (const std::uint64_t length = GetLe(header + 24, 8);
             length > kMaxCheckpointBytes || length != size - kHeaderBytes) {
    problem =
        fmt::format("header says {} payload bytes, the file holds {}", length, size - kHeaderBytes);
  } else {
    payload.resize(length);
    std::size_t done = 0;
    while (done < length) {
      const ssize_t n = ::pread(fd, payload.data() + done, length - done,
                                static_cast<off_t>(kHeaderBytes + done));
      if (n <= 0) {
        problem = n < 0 ? Errno("read") : "file shrank while read";
        break;
      }
      done += static_cast<std::size_t>(n);
    }
    if (problem.empty() &&
        std::memcmp(Checksum(header, payload).data(), header + 32, kDigestBytes) != 0) {
      problem = "checksum mismatch: the checkpoint is corrupt";
    }
  }
  ::close(fd);
  if (!problem.empty()) return Status::Invalid(path, problem);
  return Checkpoint{static_cast<std::int64_t>(GetLe(header + 16, 8)), std::move(payload)};
}

Result<std::string> FileDigest(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::Invalid(path, Errno("cannot open"));
  InitSodium();
  crypto_generichash_state state;
  crypto_generichash_init(&state, nullptr, 0, kDigestBytes);
  std::vector<unsigned char> block(1 << 20);
  while (true) {
    const ssize_t n = ::read(fd, block.data(), block.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const Status status = Status::Invalid(path, Errno("read"));
      ::close(fd);
      return status;
    }
    if (n == 0) break;
    crypto_generichash_update(&state, block.data(), static_cast<unsigned long long>(n));
  }
  ::close(fd);
  unsigned char digest[kDigestBytes];
  crypto_generichash_final(&state, digest, kDigestBytes);
  std::string hex;
  for (unsigned char byte : digest) hex += fmt::format("{:02x}", byte);
  return hex;
}

std::vector<std::string> ListCheckpoints(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* entry = ::readdir(d)) {
      if (IsCheckpointName(entry->d_name)) names.emplace_back(entry->d_name);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  for (std::string& name : names) name = dir + "/" + name;
  return names;
}

void PruneCheckpoints(const std::string& dir, std::size_t keep) {
  const std::vector<std::string> files = ListCheckpoints(dir);
  for (std::size_t i = 0; i + keep < files.size(); ++i) ::unlink(files[i].c_str());
}

Status MakeDirectories(const std::string& path) {
  std::string partial;
  std::size_t pos = 0;
  while (pos <= path.size()) {
    const std::size_t slash = path.find('/', pos);
    partial = path.substr(0, slash);
    pos = slash == std::string::npos ? path.size() + 1 : slash + 1;
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::Invalid(path,
                             fmt::format("cannot create directory: {}", std::strerror(errno)));
    }
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::Invalid(path, "not a directory");
  }
  return Status::Ok();
}

}  // namespace parity::stress
