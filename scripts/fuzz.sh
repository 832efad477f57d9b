#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/; clang++, -fsanitize=fuzzer,address,undefined) into
# build-fuzz/ (or $HAPAIR_FUZZ_BUILD) and runs each for SECONDS (default 60) on its committed
# seed corpus, one after another (two at once on 2 cores would only halve each).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     e.g. scripts/fuzz.sh 120, scripts/fuzz.sh 30 decode_fuzz
#
# SECONDS 0 runs every corpus input once and stops (a quick check of the seeds and past finds);
# SECONDS "build" only configures and builds. HAPAIR_FUZZ_TESTS=ON builds the test executables
# in the same folder too: scripts/test.sh runs the unit and simulator tests from this one
# sanitizer build (clang, ASan + UBSan) instead of compiling everything a second time.
# New inputs that add coverage go to build-fuzz/corpus/<target>/ (not the committed corpus; copy
# the few worth keeping into fuzz/corpus/<target>/). A crash stops that target, leaves its input
# in build-fuzz/crashes/<target>/ and makes the script exit 1 after the other targets ran;
# reproduce it with build-fuzz/fuzz/<target> <file>, then turn it into a test in tests/.
# HAPAIR_FUZZ_SEED sets libFuzzer's -seed (default 0: a new random seed each run); the test suite
# passes 1, so a CI run explores the same inputs in the same order and a crash it finds is found
# again by the same command (longer local runs with random seeds are where new finds come from).
# Each target's last statistics line (executions, coverage, corpus) is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
case "$seconds" in build) ;; ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number or build, not '$seconds'" >&2; exit 2;; esac
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(decode_fuzz envelope_fuzz topology_fuzz experiment_fuzz); fi
dir="${HAPAIR_FUZZ_BUILD:-build-fuzz}"

# Warnings stay warnings here: clang warns about things g++ (the -Werror build) does not.
# -O1 and line tables only: a third of -O2 -g's build time, and still a stack trace with lines.
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ \
      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" \
      -DCMAKE_C_FLAGS_RELEASE="-O1 -gline-tables-only" \
      -DHAPAIR_FUZZ=ON -DHAPAIR_TESTS="${HAPAIR_FUZZ_TESTS:-OFF}" -DHAPAIR_WERROR=OFF \
      ${HAPAIR_FUZZ_CMAKE_ARGS:-} >/dev/null
build_targets=("${targets[@]}")
if [ "${HAPAIR_FUZZ_TESTS:-OFF}" = ON ]; then
  build_targets+=(test_protocols test_operators test_roles test_driver test_sim test_scenarios test_harness)
fi
cmake --build "$dir" -j "$(nproc)" --target "${build_targets[@]}"
if [ "$seconds" = build ]; then exit 0; fi

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
status=0
summary=()
for t in "${targets[@]}"; do
  corpus="$dir/corpus/$t"
  crashes="$dir/crashes/$t"
  mkdir -p "$corpus" "$crashes"
  log="$dir/$t.log"
  echo "fuzz.sh: $t for ${seconds} s"
  # -max_len: wire frames and config files that matter are small; -timeout: one input that runs
  # for 25 s is a hang, reported like a crash; -rss_limit_mb bounds memory (a leak or an
  # allocation driven by a count in the input). 25 s, not less: on a loaded machine a niced target
  # can stall for tens of seconds without any fault of its own.
  if [ "$seconds" -eq 0 ]; then limit=(-runs=0); else limit=(-max_total_time="$seconds"); fi
  if "$dir/fuzz/$t" "${limit[@]}" -max_len=8192 -timeout=25 -rss_limit_mb=2048 \
       -seed="${HAPAIR_FUZZ_SEED:-0}" -print_final_stats=1 -artifact_prefix="$crashes/" "$corpus" "fuzz/corpus/$t" >"$log" 2>&1; then
    :
  else
    status=1
    echo "fuzz.sh: $t FAILED (input in $crashes/, log in $log):" >&2
    grep -E "ERROR|invariant violated|_fuzz: |SUMMARY|Test unit written" "$log" | head -20 >&2 || true
  fi
  last=$(grep -E "^#[0-9]+.*(DONE|pulse|NEW|REDUCE)" "$log" | tail -1 || true)
  runs=$(grep -E "stat::number_of_executed_units" "$log" | awk '{print $2}' || true)
  summary+=("$t: ${runs:-?} executions; last: ${last:-none}")
done
echo "fuzz.sh: statistics"
for line in "${summary[@]}"; do echo "  $line"; done
if [ "$status" -ne 0 ]; then echo "fuzz.sh: a target crashed (see above)" >&2; fi
exit "$status"
