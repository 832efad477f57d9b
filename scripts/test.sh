#!/usr/bin/env bash
# The test suite. Every test runs once, in the build that suits it:
#   - the Release build (-Werror, g++) runs what starts real node processes (runtime, e2e), the
#     browser tests on the static WebAssembly demo page and `hapair demo`, the layer checks, the
#     hosts over ssh (root), the Debian package (built by CPack, installed with apt in a private
#     mount namespace), and the many-seed simulator sweeps (tests/sweeps: fast with
#     optimisation, minutes under the sanitizers);
#   - one clang build with AddressSanitizer + UBSan (libFuzzer's coverage hooks in the layers the
#     fuzz targets reach; the test files at -O0) runs every unit, role, driver, simulator,
#     scenario and harness test, then each libFuzzer target for HAPAIR_FUZZ_SECONDS (default 6)
#     from its committed corpus with a fixed seed.
# Each stage prints what it took, and the end a table of all of them (README.md, "The two
# commands", gives the usual figures).
set -euo pipefail
cd "$(dirname "$0")/.."
stages=()
stage_started=$SECONDS
stage() {  # stage NAME: the stage that just ended
  local took=$((SECONDS - stage_started))
  stages+=("$(printf '%-38s %4d s' "$1" "$took")")
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
HAPAIR_BUILD_TARGETS="hapair test_runtime test_e2e test_sweeps test_hosts" scripts/build.sh build
stage "release build"
# While the Release tests run (real processes mostly wait on timers and sockets: a core stays
# idle), the demo's static WebAssembly page and the sanitizer build are compiled beside them at
# the lowest priority (nice 19), so they take only the CPU the tests leave; the tests' processes
# keep theirs. Their logs go to build-logs/; a failed build prints its log and fails the suite.
mkdir -p build-logs
rm -f build-logs/wasm.status
export HAPAIR_FUZZ_BUILD=build-asan HAPAIR_FUZZ_TESTS=ON
# One niced job: the page first (the browser tests need it soonest), then the sanitizer build.
set -m  # the job in its own process group, so the trap below stops its compilers too
nice -n 19 bash -c 'scripts/build_wasm.sh build-wasm > build-logs/wasm.log 2>&1; echo $? > build-logs/wasm.status
                    scripts/fuzz.sh build > build-logs/sanitizer.log 2>&1' &
builds_pid=$!
set +m
trap 'kill -- "-$builds_pid" 2>/dev/null || true' EXIT
build_failed() {  # build_failed NAME LOG
  echo "test.sh: the $1 failed; its log, build-logs/$2, ends:" >&2
  tail -40 "build-logs/$2" >&2
  exit 1
}
ctest --test-dir build --output-on-failure -j 2 --timeout 600 -L 'runtime|e2e|layers|hosts|package|sweeps'
stage "release tests (builds niced beside)"
# The browser tests open the WebAssembly page.
while [ ! -s build-logs/wasm.status ]; do
  kill -0 "$builds_pid" 2>/dev/null || build_failed "WebAssembly page's build" wasm.log
  sleep 1
done
[ "$(cat build-logs/wasm.status)" = 0 ] || build_failed "WebAssembly page's build" wasm.log
stage "WebAssembly page (what remained)"
ctest --test-dir build --output-on-failure -j 2 --timeout 600 -L 'browser'
stage "browser tests"
wait "$builds_pid" || build_failed "sanitizer build" sanitizer.log
stage "sanitizer build (what remained)"
trap - EXIT
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j 2 --timeout 600 -L 'protocols|operators|roles|driver|sim|scenarios|harness'
stage "sanitizer tests"
HAPAIR_FUZZ_SEED="${HAPAIR_FUZZ_SEED:-1}" scripts/fuzz.sh "${HAPAIR_FUZZ_SECONDS:-6}"
stage "fuzz targets"
echo "test.sh: all tests passed (release: real processes, browser, sweeps; ASan/UBSan: the rest; fuzz targets)"
echo "test.sh: time per stage"
for s in "${stages[@]}"; do echo "  $s"; done
echo "  $(printf '%-38s %4d s' total "$SECONDS")"
