#!/usr/bin/env bash
# The test suite: install, build (Release, -Werror), run every test through CTest; then build
# again with AddressSanitizer + UBSan and run the unit and simulator tests under them; then build
# the libFuzzer targets and run each for about 20 s.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# ctest discovers Catch2 tests by name and splits names at ';' (and '[' starts a tag), which
# silently turns one test into several that run nothing: refuse such names.
if grep -rnE 'TEST_CASE\("[^"]*[;[]' tests; then
  echo "test.sh: test names must not contain ';' or '['" >&2
  exit 1
fi
scripts/build.sh build
ctest --test-dir build --output-on-failure -j 2 --timeout 600
# Only the test executables of the labels run below (not test_runtime, test_e2e or the bench).
HAPAIR_BUILD_TARGETS="test_protocols test_operators test_roles test_driver test_sim test_scenarios test_harness" \
  scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHAPAIR_SANITIZE=ON
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j 2 --timeout 600 -L 'protocols|operators|roles|driver|sim|scenarios|harness'
# Fuzz targets (fuzz/): built with clang++ and libFuzzer under ASan + UBSan, each run for a short
# bounded time from its committed seed corpus; a crash fails the suite (scripts/fuzz.sh).
HAPAIR_FUZZ_SEED="${HAPAIR_FUZZ_SEED:-1}" scripts/fuzz.sh "${HAPAIR_FUZZ_SECONDS:-20}"
echo "test.sh: all tests passed (release, ASan/UBSan, fuzz targets)"
