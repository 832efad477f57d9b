#!/usr/bin/env bash
# The main job: install, build, and run the comparison on the built-in default network.
# Extra arguments go to `hapair compare` (e.g. --out DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build
exec build/src/cli/hapair compare "$@"
