#!/usr/bin/env bash
# The test suite: install, build (Release, -Werror) and the static demo page (WebAssembly), run
# every test through CTest (the browser tests among them); then build again with clang,
# AddressSanitizer + UBSan and run the unit and simulator tests under them, and run each libFuzzer
# target from the same build for about 20 s. Each stage prints what it took, and the end a table
# of all of them (README.md, "The two commands", gives the usual figures).
set -euo pipefail
cd "$(dirname "$0")/.."
stages=()
stage_started=$SECONDS
stage() {  # stage NAME: the stage that just ended
  local took=$((SECONDS - stage_started))
  stages+=("$(printf '%-34s %4d s' "$1" "$took")")
  echo "test.sh: $1 took ${took} s"
  stage_started=$SECONDS
}
scripts/install-deps.sh
stage "packages"
# ctest discovers Catch2 tests by name and splits names at ';' (and '[' starts a tag), which
# silently turns one test into several that run nothing: refuse such names.
if grep -rnE 'TEST_CASE\("[^"]*[;[]' tests; then
  echo "test.sh: test names must not contain ';' or '['" >&2
  exit 1
fi
scripts/build.sh build
stage "release build"
# The demo's static page (WebAssembly), which a browser test opens.
scripts/build_wasm.sh build-wasm
stage "WebAssembly page"
ctest --test-dir build --output-on-failure -j 2 --timeout 600
stage "release tests (all, browser too)"
# One sanitizer build (clang, ASan + UBSan, with libFuzzer's coverage hooks) for both the unit and
# simulator tests and the fuzz targets (fuzz/): the tests first, then each target for a short
# bounded time from its committed seed corpus with a fixed seed; a crash fails the suite.
export HAPAIR_FUZZ_BUILD=build-asan HAPAIR_FUZZ_TESTS=ON
scripts/fuzz.sh build
stage "sanitizer build"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j 2 --timeout 600 -L 'protocols|operators|roles|driver|sim|scenarios|harness'
stage "sanitizer tests"
HAPAIR_FUZZ_SEED="${HAPAIR_FUZZ_SEED:-1}" scripts/fuzz.sh "${HAPAIR_FUZZ_SECONDS:-20}"
stage "fuzz targets"
echo "test.sh: all tests passed (release and browser, ASan/UBSan, fuzz targets)"
echo "test.sh: time per stage"
for s in "${stages[@]}"; do echo "  $s"; done
echo "  $(printf '%-34s %4d s' total "$SECONDS")"
