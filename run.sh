#!/usr/bin/env bash
# Sets up, builds and runs the default scene; results land in out/default/. Extra arguments go to `aerodem run`.
set -euo pipefail
cd "$(dirname "$0")"
./deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
build/aerodem run scenes/default.ini "$@"
