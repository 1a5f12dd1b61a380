#!/usr/bin/env bash
# Installs what aerodem needs to build, test and draw on Debian/Ubuntu; a no-op when all is there.
# deps.sh --test adds what the test suite needs besides: clang with libFuzzer and its OpenMP (the fuzzers),
# and chromium (the live view's page, opened headless).
set -euo pipefail
pkgs=(build-essential cmake pkg-config libinih-dev libpng-dev libmicrohttpd-dev libopenmpi-dev openmpi-bin python3 python3-vtk9 python3-numpy ffmpeg)
[ "${1:-}" = "--test" ] && pkgs+=(clang libclang-rt-dev libomp-dev chromium)
missing=()
for p in "${pkgs[@]}"; do
  [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" == *"install ok installed"* ]] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps.sh: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
