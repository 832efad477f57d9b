#!/usr/bin/env bash
# Configures and builds hapair (Release, warnings as errors) into build/ (or $1); further
# arguments go to cmake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"
shift || true
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHAPAIR_WERROR=ON "$@" >/dev/null
# HAPAIR_BUILD_TARGETS (space separated): build only these targets (default: everything).
targets=()
for t in ${HAPAIR_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$dir" -j "$(nproc)" "${targets[@]}"
