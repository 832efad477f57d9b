#!/usr/bin/env bash
# Configures and builds hapair (Release, warnings as errors) into build/ (or $1).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"
shift || true
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHAPAIR_WERROR=ON "$@" >/dev/null
cmake --build "$dir" -j "$(nproc)"
