#!/usr/bin/env bash
# The GPU ranks' checks alone, for a short device call: configure, build only the program and test_mpi_gpu,
# run tests/test_mpi_gpu.sh, then ctest mpi_gpu_long's script (the default scene whole on 2 GPU ranks against
# backend = cuda). Logs under $OUT. Usage: bench/gpu_ranks_check.sh   (libraries as bench/gpu_session.sh)
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
. <(sed -n '/^setup_deps()/,/^}/p' bench/gpu_session.sh)
setup_deps
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
t0=$(date +%s)
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release > "$OUT/configure.log" 2>&1 || { tail -20 "$OUT/configure.log"; exit 1; }
cmake --build build-gpu -j16 --target aerodem_cli test_mpi_gpu > "$OUT/build.log" 2>&1 ||
  { grep -E "error" "$OUT/build.log" | head -20; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s, warnings: $(grep -c warning "$OUT/build.log")"
t0=$(date +%s)
timeout "${RANKS_LIMIT:-330}" bash tests/test_mpi_gpu.sh build-gpu/tests > "$OUT/test_mpi_gpu.log" 2>&1
echo "test_mpi_gpu.sh rc=$? in $(( $(date +%s) - t0 )) s"
tail -60 "$OUT/test_mpi_gpu.log"
t0=$(date +%s)
timeout "${LONG_LIMIT:-120}" bash tests/test_mpi_long.sh ./build-gpu/aerodem . cuda > "$OUT/mpi_gpu_long.log" 2>&1
echo "mpi_gpu_long rc=$? in $(( $(date +%s) - t0 )) s"
tail -12 "$OUT/mpi_gpu_long.log"
