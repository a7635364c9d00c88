// SPDX-License-Identifier: Apache-2.0
// The host platform fingerprint a benchmark result carries: the machine, OS, compiler, BLAS and
// the environment variables a benchmark figure depends on.
#ifndef PARITY_BENCH_PLATFORM_H_
#define PARITY_BENCH_PLATFORM_H_

#include <string_view>

#include "core/json_util.h"

namespace parity::bench {

/// The host part of the platform fingerprint: what a benchmark figure depends on. An object with,
/// in this order:
///   "hostname";
///   "cpu": {"model" (hwloc's CPUModel, else /proc/cpuinfo "model name"), "vendor",
///     "architecture" (uname machine), "packages", "cores", "pus" (the host's online CPUs, also
///     those outside this process's cgroup cpuset), "numa_nodes", "caches" ([{"level", "type":
///     "data"|"instruction"|"unified", "size_bytes", "line_bytes", "count"}], one entry per
///     distinct kind, by level), "flags" (those of avx, avx2, fma, avx512f, avx512_bf16,
///     amx_bf16, amx_tile, neon, sve in /proc/cpuinfo, in that order; arm64's "asimd" is "neon")};
///   "memory": {"total_bytes" (/proc/meminfo MemTotal, else hwloc), "numa_bytes" (per node)};
///   "os": {"kernel" (uname release), "version" (uname version), "distribution" (os-release
///     PRETTY_NAME)};
///   "compiler": {"id" ("gcc" or "clang"), "version" (__VERSION__)};
///   "blas": {"name": "OpenBLAS", "version", "config", "core", "threads"};
///   "environment": PerformanceEnvironment(environ).
/// A value that cannot be read is absent (its key left out), never 0 or ""; an object with
/// nothing readable in it is left out too. Missing or unreadable /proc, /sys or /etc files only
/// leave keys out: this never throws. Loads the hwloc topology on every call.
Json HostFingerprint();

/// The environment variables that change performance or numerics, as {name: value}, taken from
/// `environ`-style entries "NAME=VALUE" (nullptr-terminated array; nullptr gives {}). Sorted by
/// name. Entries without '=' or with an empty name are ignored; when a name repeats, the first
/// entry wins (as getenv does). The value is everything after the first '=', kept even if empty.
Json PerformanceEnvironment(char** envp);

/// True when `name` is such a variable: it starts with one of the prefixes of a library that
/// reads its settings from the environment (OMP_, OPENBLAS_, CUDA_, ...), or is one of a few
/// exact names (LD_PRELOAD, GLIBC_TUNABLES, ...). Case-sensitive.
bool IsPerformanceVariable(std::string_view name);

namespace internal {

/// HostFingerprint() reading its own files (/proc/cpuinfo, /proc/meminfo, /etc/os-release,
/// /usr/lib/os-release) under `fs_root` instead of "/", for tests; hwloc, uname and the rest
/// still see the real host. `fs_root` is prepended as is ("" or "/" is the real root).
Json HostFingerprint(std::string_view fs_root);

}  // namespace internal

}  // namespace parity::bench

#endif  // PARITY_BENCH_PLATFORM_H_
