#!/usr/bin/env bash
# Builds aerodem and runs its test suite (ctest) three times: an optimised build (with the CUDA
# backend compiled when nvcc is present; GPU tests skip themselves without a GPU), a CPU build
# under AddressSanitizer and UndefinedBehaviorSanitizer (without the long physics runs, label
# slow), a build without MPI (AERODEM_MPI=OFF: the program alone and a short run; 1 minute), and the
# fuzzers (clang's libFuzzer with ASan and UBSan, AERODEM_FUZZ_SECONDS each, 45 by default; label fuzz).
# The extended validations (label long, minutes each) run with AERODEM_LONG=1.
set -euo pipefail
cd "$(dirname "$0")"
./deps.sh --test
jobs=$(nproc)
# ctest runs tests side by side and each uses every core: OpenMP threads that spin while
# waiting would fight over the cores (a suite of 30 s took 170 s), so they sleep instead.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
echo "== release build and tests"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DAERODEM_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
# the extended validations (label long, minutes each) run with AERODEM_LONG=1
long=(-LE long)
[ "${AERODEM_LONG:-0}" = 1 ] && long=()
(cd build && ctest --output-on-failure -j"$jobs" "${long[@]}" "$@")
echo "== AddressSanitizer + UndefinedBehaviorSanitizer build and tests"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAERODEM_SANITIZE=ON -DAERODEM_CUDA=OFF \
      -DAERODEM_WERROR=ON >/dev/null
cmake --build build-asan -j"$jobs"
# the long physics runs (label slow: minutes of stepping, no new code paths) run in the optimised build only
(cd build-asan && ctest --output-on-failure -j"$jobs" -LE "slow|long" "$@")
echo "== a build without MPI (AERODEM_MPI=OFF): the program builds and runs as one process"
cmake -S . -B build-nompi -DCMAKE_BUILD_TYPE=Release -DAERODEM_MPI=OFF -DAERODEM_CUDA=OFF -DAERODEM_WERROR=ON >/dev/null
cmake --build build-nompi -j"$jobs" --target aerodem_cli
grep -q "^mpi backend: not built" <<< "$(build-nompi/aerodem info)" || { echo "build-nompi: info does not say mpi is not built"; exit 1; }
build-nompi/aerodem run scenes/default.ini --steps 50 --quiet --out build-nompi/run
[ -s build-nompi/run/forces.csv ] || { echo "build-nompi: the run wrote no forces.csv"; exit 1; }
echo "== fuzzers (libFuzzer, ASan + UBSan), ${AERODEM_FUZZ_SECONDS:-45} s each"
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAERODEM_FUZZ=ON -DAERODEM_CUDA=OFF \
      -DAERODEM_FUZZ_SECONDS="${AERODEM_FUZZ_SECONDS:-45}" >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz_scene fuzz_airfoil fuzz_checkpoint fuzz_stl
(cd build-fuzz && ctest --output-on-failure -j"$jobs" -L fuzz)
