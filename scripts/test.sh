#!/usr/bin/env bash
# The test suite: install, build (Release, -Werror) and the static demo page (WebAssembly), run
# every test through CTest (the browser tests among them); then build again with clang,
# AddressSanitizer + UBSan and run the unit and simulator tests under them, and run each libFuzzer
# target from the same build for about 20 s.
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
# The demo's static page (WebAssembly), which a browser test opens.
scripts/build_wasm.sh build-wasm
ctest --test-dir build --output-on-failure -j 2 --timeout 600
# One sanitizer build (clang, ASan + UBSan, with libFuzzer's coverage hooks) for both the unit and
# simulator tests and the fuzz targets (fuzz/): the tests first, then each target for a short
# bounded time from its committed seed corpus with a fixed seed; a crash fails the suite.
export HAPAIR_FUZZ_BUILD=build-asan HAPAIR_FUZZ_TESTS=ON
scripts/fuzz.sh build
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j 2 --timeout 600 -L 'protocols|operators|roles|driver|sim|scenarios|harness'
HAPAIR_FUZZ_SEED="${HAPAIR_FUZZ_SEED:-1}" scripts/fuzz.sh "${HAPAIR_FUZZ_SECONDS:-20}"
echo "test.sh: all tests passed (release and browser, ASan/UBSan, fuzz targets)"
