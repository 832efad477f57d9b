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
  stages+=("$(printf '%-64s %4d s' "$1" "$took")")
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
# idle), one niced chain (nice 19: it takes only the CPU the tests leave; theirs is kept) compiles
# the demo's static WebAssembly page, then the sanitizer build, then runs the sanitizer tests and
# the fuzz targets. Its logs go to build-logs/, each step's time and exit status beside them; a
# failed step prints its log and fails the suite.
mkdir -p build-logs
rm -f build-logs/*.status build-logs/*.took
export HAPAIR_FUZZ_BUILD=build-asan HAPAIR_FUZZ_TESTS=ON
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
set -m  # the chain in its own process group, so the trap below stops its compilers and tests too
nice -n 19 bash -c '
  step() {  # step NAME COMMAND...: runs it, logs it, records its time and status; stops the chain on failure
    local name=$1 started=$SECONDS; shift
    "$@" > "build-logs/$name.log" 2>&1; local rc=$?
    echo $((SECONDS - started)) > "build-logs/$name.took"; echo $rc > "build-logs/$name.status"
    return $rc
  }
  step wasm scripts/build_wasm.sh build-wasm || exit 1
  step sanitizer scripts/fuzz.sh build || exit 1
  # Niced tests can wait minutes for a core while the Release sweeps use both: a longer timeout.
  step sanitizer-tests ctest --test-dir build-asan --output-on-failure -j 2 --timeout 1500 \
       -L "protocols|operators|roles|driver|sim|scenarios|harness" || exit 1
  HAPAIR_FUZZ_SEED="${HAPAIR_FUZZ_SEED:-1}" step fuzz scripts/fuzz.sh "${HAPAIR_FUZZ_SECONDS:-6}"' &
chain_pid=$!
set +m
trap 'kill -- "-$chain_pid" 2>/dev/null || true' EXIT
chain_failed() {  # chain_failed NAME WHAT
  echo "test.sh: the $2 failed; its log, build-logs/$1.log, ends:" >&2
  tail -60 "build-logs/$1.log" >&2
  exit 1
}
wait_step() {  # wait_step NAME WHAT: until the chain's step NAME has ended; fails the suite if it failed
  while [ ! -s "build-logs/$1.status" ]; do
    if ! kill -0 "$chain_pid" 2>/dev/null; then
      [ -s "build-logs/$1.status" ] || chain_failed "$1" "$2 (the chain stopped before it)"
    fi
    sleep 1
  done
  [ "$(cat "build-logs/$1.status")" = 0 ] || chain_failed "$1" "$2"
  stage "$2 (niced, $(cat "build-logs/$1.took") s in all; what remained)"
}
ctest --test-dir build --output-on-failure -j 2 --timeout 600 -L 'runtime|e2e|layers|package|sweeps'
stage "release tests (the niced chain beside)"
# The browser tests open the WebAssembly page.
wait_step wasm "WebAssembly page"
ctest --test-dir build --output-on-failure -j 2 --timeout 600 -L 'browser'
stage "browser tests"
wait_step sanitizer "sanitizer build"
wait_step sanitizer-tests "sanitizer tests"
grep -E "tests passed|tests failed" build-logs/sanitizer-tests.log || true
wait_step fuzz "fuzz targets"
sed -n '/fuzz.sh: statistics/,$p' build-logs/fuzz.log
wait "$chain_pid" || chain_failed fuzz "chain"
trap - EXIT
# The hosts over ssh last, with nothing beside them: their faults are nft and tc commands over ssh
# at planned instants, and a compile beside them (its processes and its disk writes) delayed a
# cut by 0.6 s, past the run's end for its heal.
ctest --test-dir build --output-on-failure -j 2 --timeout 900 -L 'hosts'
stage "hosts over ssh (release)"
echo "test.sh: all tests passed (release: real processes, browser, sweeps; ASan/UBSan: the rest; fuzz targets)"
echo "test.sh: time per stage"
for s in "${stages[@]}"; do echo "  $s"; done
echo "  $(printf '%-64s %4d s' total "$SECONDS")"
