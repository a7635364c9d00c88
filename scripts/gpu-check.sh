#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The GPU check: on a machine with an NVIDIA GPU and the CUDA toolkit, builds parity and its
# cuda plugin (for this GPU only), then in one run, in about five minutes:
#   1. parity devices
#   2. parity bench --backend cuda --suite stream,gemm (every figure validated)
#   3. bench/gpu_peer.cu: cuBLAS's own GEMM rate and the driver's device-to-device copy rate,
#      timed as parity times (held stream, batched calls: docs/BENCH.md "Timing")
#   4. parity compare of the GPU's float32 GEMM products against the CPU's (--gemm-dump)
#   5. parity stress: gemm-burn on the GPU for 30 s with a kill every 6 s and a planted bit flip
#   6. parity bench --suite peer: copies between every pair of GPUs (SKIP on a one-GPU machine)
# and prints a table: triad GB/s against the copy ceiling, GEMM GFLOP/s per dtype against
# cuBLAS's own figure and the datasheet peak, validation status. The table is written, as a
# section for docs/PERFORMANCE.md, to OUT/gpu-check.md (OUT: $OUT, else build-gpu/check).
#   scripts/gpu-check.sh [--record]   --record also appends that section, failing runs included,
#                                     to $GPU_CHECK_PERFORMANCE_FILE (default docs/PERFORMANCE.md)
# Exit 0 when every figure is valid and reaches its target, 1 when one does not, 3 when this
# machine lacks what the check needs (no GPU, a toolkit piece missing: the message names it and
# how to install it), 2 for bad usage.
#
# Build dependencies: what is missing is installed with scripts/install-deps (as root, or
# through sudo where sudo needs no password); the build inlines Debian's Chart.js
# (libjs-chart.js, /usr/share/javascript/chart.js), which install-deps brings.
#
# For tests (the ctest entry scripts.gpu_check runs it on the fake plugin): GPU_CHECK_PARITY (a
# built parity: no build), GPU_CHECK_BACKEND (default cuda), GPU_CHECK_PEER (the peer's
# command), GPU_CHECK_BENCH_ARGS (added to every parity bench), GPU_CHECK_STRESS=0 (no stress
# drill), GPU_CHECK_PERFORMANCE_FILE (where --record appends), GPU_CHECK_NVCC (the nvcc to use;
# empty or missing: none), GPU_CHECK_NO_INSTALL=1 (never run install-deps).
set -euo pipefail
cd "$(dirname "$0")/.."
record=0
for arg in "$@"; do
  case "$arg" in
    --record) record=1 ;;
    -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown option '$arg' (usage: scripts/gpu-check.sh [--record])" >&2; exit 2 ;;
  esac
done
out="${OUT:-build-gpu/check}"
performance="${GPU_CHECK_PERFORMANCE_FILE:-docs/PERFORMANCE.md}"
backend="${GPU_CHECK_BACKEND:-cuda}"
read -r -a bench_args <<< "${GPU_CHECK_BENCH_ARGS:-}"
# The same for the CPU's float32 GEMM run, less any --dtype (that run names its own).
cpu_args=()
for ((i = 0; i < ${#bench_args[@]}; i++)); do
  if [ "${bench_args[i]}" = --dtype ]; then i=$((i + 1)); continue; fi
  cpu_args+=("${bench_args[i]}")
done
mkdir -p "$out"
rm -f "$out/gpu-check.md"
start=$(date +%s)
log() { echo "gpu-check: $* ($(( $(date +%s) - start )) s)" >&2; }
# Exit 3 with what is missing and how to get it.
missing() {
  echo "gpu-check: this machine lacks what the check needs:" >&2
  printf '  - %s\n' "$@" >&2
  exit 3
}

# May this script install packages (scripts/install-deps: as root, or sudo without a password)?
can_install() {
  [ "${GPU_CHECK_NO_INSTALL:-0}" = 1 ] && return 1
  command -v apt-get >/dev/null || return 1
  [ "$(id -u)" -eq 0 ] && return 0
  command -v sudo >/dev/null && sudo -n true 2>/dev/null
}

# What the build needs, each with how to install it; empty when all is there.
build_gaps() {
  local gaps=()
  for tool in cmake ninja c++ pkg-config python3; do
    command -v "$tool" >/dev/null || gaps+=("$tool (scripts/install-deps --build-only)")
  done
  [ -z "$nvcc" ] && gaps+=("the CUDA toolkit: nvcc not on PATH nor in /usr/local/cuda/bin (install it from https://developer.nvidia.com/cuda-downloads into /usr/local/cuda)")
  if [ -n "$nvcc" ]; then
    local cuda_root; cuda_root="$(dirname "$(dirname "$nvcc")")"
    [ -f "$cuda_root/include/cublas_v2.h" ] || gaps+=("cuBLAS headers ($cuda_root/include/cublas_v2.h): the CUDA toolkit's libcublas-dev part")
  fi
  [ -f /usr/share/javascript/chart.js/chart.min.js ] || gaps+=("Chart.js (/usr/share/javascript/chart.js/chart.min.js): apt-get install libjs-chart.js (scripts/install-deps)")
  if [ ${#gaps[@]} -gt 0 ]; then printf '%s\n' "${gaps[@]}"; fi
}

if [ -n "${GPU_CHECK_PARITY:-}" ]; then
  parity="$GPU_CHECK_PARITY"
  [ -x "$parity" ] || missing "GPU_CHECK_PARITY=$parity is not an executable"
else
  if [ -n "${GPU_CHECK_NVCC+set}" ]; then
    nvcc="$GPU_CHECK_NVCC"
    [ -x "$nvcc" ] || nvcc=""
  else
    nvcc="$(command -v nvcc || true)"
    [ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
  fi
  mapfile -t gaps < <(build_gaps)
  if [ ${#gaps[@]} -gt 0 ] && can_install; then
    # install-deps installs only what is missing; without network it fails: say what.
    if ! ./scripts/install-deps --build-only > "$out/install-deps.log" 2>&1; then
      mapfile -t gaps < <(build_gaps)
      missing "${gaps[@]:-packages scripts/install-deps could not install}" \
        "scripts/install-deps --build-only failed (no network or registry?): see $out/install-deps.log"
    fi
    mapfile -t gaps < <(build_gaps)
  fi
  [ ${#gaps[@]} -gt 0 ] && missing "${gaps[@]}"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/nvidia-smi.txt" || true
  fi
  # This GPU's architecture only ("native"), so the build stays short.
  arch=native
  command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || arch="80-real;90-real"
  if [ ! -f build-gpu/build.ninja ]; then
    if ! cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPARITY_BUILD_TESTS=OFF \
        -DPARITY_HIP=OFF -DCMAKE_CUDA_COMPILER="$nvcc" "-DCMAKE_CUDA_ARCHITECTURES=$arch" \
        > "$out/configure.log" 2>&1; then
      rm -f build-gpu/build.ninja
      missing "a library or tool parity's build needs (CMake said: $(grep -m1 -A2 'CMake Error' "$out/configure.log" | tr -s ' \n' ' '))" \
        "install it with scripts/install-deps --build-only; the whole log is $out/configure.log"
    fi
  fi
  if ! cmake --build build-gpu --target parity parity_backend_cuda parity_gpu_peer > "$out/build.log" 2>&1; then
    tail -20 "$out/build.log" >&2
    echo "gpu-check: the build failed (the log is $out/build.log)" >&2
    exit 1
  fi
  log "built"
  parity=build-gpu/parity
fi
peer_cmd="${GPU_CHECK_PEER:-build-gpu/bench/parity_gpu_peer}"

set +e
"$parity" devices | tee "$out/devices.txt"
"$parity" devices --json "$out/devices.json" --quiet
if ! "$parity" devices --json - --quiet | python3 -c '
import json, sys
d = {b["name"]: b for b in json.load(sys.stdin)["backends"]}
sys.exit(0 if d.get(sys.argv[1], {}).get("available") else 1)' "$backend"; then
  echo "gpu-check: the $backend backend has no device here (see above)" >&2
  exit 3
fi
log "devices listed"

rm -rf "$out/cuda-dump" "$out/cpu-dump"
"$parity" bench --backend "$backend" --suite stream,gemm --gemm-dump "$out/cuda-dump" \
  --json "$out/cuda.json" "${bench_args[@]}"
bench_rc=$?
log "parity bench ($backend) exit $bench_rc"
$peer_cmd > "$out/peer.json"
peer_rc=$?
log "cuBLAS and copy peer exit $peer_rc"
"$parity" bench --backend cpu --suite gemm --dtype float32 --gemm-dump "$out/cpu-dump" \
  --json "$out/cpu-gemm.json" --quiet "${cpu_args[@]}"
"$parity" compare "$out/cpu-dump" "$out/cuda-dump" --only 'gemm.float32.*' \
  --json "$out/compare.json" | tee "$out/compare.txt"
compare_rc=${PIPESTATUS[0]}
log "parity compare (cpu float32 GEMM vs $backend) exit $compare_rc"
stress_args=()
if [ "${GPU_CHECK_STRESS:-1}" != 0 ]; then
  "$parity" stress --backend "$backend" --workload gemm-burn --duration 30 --inject kill:every=6 \
    --inject sdc:at=20 --json "$out/stress.json" --quiet
  stress_rc=$?
  stress_args=(--stress-rc "$stress_rc")
  log "parity stress ($backend gemm-burn drill) exit $stress_rc"
fi
# Peer copies need two GPUs: on one the suite is a SKIP (exit 3), reported but not judged.
"$parity" bench --backend "$backend" --suite peer --json "$out/peer-copies.json" \
  "${bench_args[@]}" | tee "$out/peer-copies.txt"
log "parity bench --suite peer exit ${PIPESTATUS[0]}"

# The report's exit (1: a figure invalid or short of its target) is the check's; the section is
# recorded whatever it says.
python3 scripts/gpu_check_report.py --out "$out" --bench-rc "$bench_rc" \
  --compare-rc "$compare_rc" --peer-rc "$peer_rc" "${stress_args[@]}" \
  --seconds "$(( $(date +%s) - start ))"
report_rc=$?
set -e
if [ "$record" = 1 ]; then
  if [ ! -f "$out/gpu-check.md" ]; then
    echo "gpu-check: the report wrote no $out/gpu-check.md (exit $report_rc): nothing recorded" >&2
    exit 1
  fi
  { echo; cat "$out/gpu-check.md"; } >> "$performance"
  log "appended $out/gpu-check.md to $performance"
fi
exit "$report_rc"
