#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The GPU check: on a machine with an NVIDIA GPU and the CUDA toolkit, builds parity and its
# cuda plugin (for this GPU only), then in one run, in about five minutes:
#   1. parity devices
#   2. parity bench --backend cuda --suite stream,gemm (every figure validated)
#   3. bench/gpu_peer.cu: cuBLAS's own GEMM rate and the driver's device-to-device copy rate
#   4. parity compare of the GPU's float32 GEMM products against the CPU's (--gemm-dump)
#   5. parity stress: gemm-burn on the GPU for 30 s with a kill every 6 s and a planted bit flip
#   6. parity bench --suite peer: copies between every pair of GPUs (SKIP on a one-GPU machine)
# and prints a table: triad GB/s against the copy ceiling, GEMM GFLOP/s per dtype against
# cuBLAS's own figure and the datasheet peak, validation status. The table is written, as a
# section for docs/PERFORMANCE.md, to OUT/gpu-check.md (OUT: $OUT, else build-gpu/check).
#   scripts/gpu-check.sh [--record]   --record also appends that section to docs/PERFORMANCE.md
# Exit 0 when every figure is valid and reaches its target, 1 when one does not, 3 without a GPU.
# The build inlines web/node_modules/chart.js (npm ci, scripts/install-deps): on a machine
# without network, bring web/node_modules along (the device tool's carry: ["web/node_modules"]).
set -euo pipefail
cd "$(dirname "$0")/.."
record=0
[ "${1:-}" = "--record" ] && record=1
out="${OUT:-build-gpu/check}"
mkdir -p "$out"
start=$(date +%s)
log() { echo "gpu-check: $* ($(( $(date +%s) - start )) s)" >&2; }

nvcc="$(command -v nvcc || true)"
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
if [ -z "$nvcc" ]; then
  echo "gpu-check: no CUDA toolkit (nvcc not on PATH nor in /usr/local/cuda/bin)" >&2
  exit 3
fi
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/nvidia-smi.txt" || true
fi

# Build dependencies: Debian packages where apt-get is there and we may use it.
if command -v apt-get >/dev/null && [ "$(id -u)" -eq 0 ]; then
  ./scripts/install-deps --build-only >&2
fi

# This GPU's architecture only ("native"), so the build stays short.
arch=native
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || arch="80-real;90-real"
if [ ! -f build-gpu/build.ninja ]; then
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPARITY_BUILD_TESTS=OFF \
    -DPARITY_HIP=OFF -DCMAKE_CUDA_COMPILER="$nvcc" "-DCMAKE_CUDA_ARCHITECTURES=$arch" >&2
fi
cmake --build build-gpu --target parity parity_backend_cuda parity_gpu_peer >&2
log "built"
parity=build-gpu/parity

set +e
"$parity" devices | tee "$out/devices.txt"
"$parity" devices --json "$out/devices.json" --quiet
if ! "$parity" devices --json - --quiet | python3 -c '
import json, sys
d = {b["name"]: b for b in json.load(sys.stdin)["backends"]}
sys.exit(0 if d.get("cuda", {}).get("available") else 1)'; then
  echo "gpu-check: the cuda backend has no device here (see above)" >&2
  exit 3
fi
log "devices listed"

rm -rf "$out/cuda-dump" "$out/cpu-dump"
"$parity" bench --backend cuda --suite stream,gemm --gemm-dump "$out/cuda-dump" \
  --json "$out/cuda.json"
bench_rc=$?
log "parity bench (cuda) exit $bench_rc"
build-gpu/bench/parity_gpu_peer > "$out/peer.json"
peer_rc=$?
log "cuBLAS and copy peer exit $peer_rc"
"$parity" bench --backend cpu --suite gemm --dtype float32 --gemm-dump "$out/cpu-dump" \
  --json "$out/cpu-gemm.json" --quiet
"$parity" compare "$out/cpu-dump" "$out/cuda-dump" --only 'gemm.float32.*' \
  --json "$out/compare.json" | tee "$out/compare.txt"
compare_rc=$?
log "parity compare (cpu float32 GEMM vs cuda) exit $compare_rc"
"$parity" stress --backend cuda --workload gemm-burn --duration 30 --inject kill:every=6 \
  --inject sdc:at=20 --json "$out/stress.json" --quiet
stress_rc=$?
log "parity stress (cuda gemm-burn drill) exit $stress_rc"
# Peer copies need two GPUs: on one the suite is a SKIP (exit 3), reported but not judged.
"$parity" bench --backend cuda --suite peer --json "$out/peer-copies.json" | tee "$out/peer-copies.txt"
log "parity bench --suite peer exit ${PIPESTATUS[0]}"
set -e

python3 scripts/gpu_check_report.py --out "$out" --bench-rc "$bench_rc" \
  --compare-rc "$compare_rc" --peer-rc "$peer_rc" --stress-rc "$stress_rc" --seconds "$(( $(date +%s) - start ))"
report_rc=$?
if [ "$record" = 1 ]; then
  { echo; cat "$out/gpu-check.md"; } >> docs/PERFORMANCE.md
  log "appended $out/gpu-check.md to docs/PERFORMANCE.md"
fi
exit "$report_rc"
