#!/usr/bin/env bash
# Builds aerodem and runs its test suite (ctest). GPU tests skip themselves where no GPU is found.
set -euo pipefail
cd "$(dirname "$0")"
./deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DAERODEM_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)"
cd build && ctest --output-on-failure -j"$(nproc)" "$@"
