#!/usr/bin/env bash
# The browser tests as CTest runs them (tests/CMakeLists.txt, label "browser"): each makes what
# it checks with the built hapair, then drives headless Chromium through the scripts here.
#
#   tests/browser/run_ctest.sh CASE HAPAIR_BINARY OUT_DIR
#
# CASE: unit (inline, view API, the fixture), timeline-sim (a simulated 10 s passive-standby
# run with a crash, trace level data), timeline-checkpoint (a simulated global-checkpoint run
# with a crash: barriers, snapshots, rollback), timeline-real (a real 4 s run with a SIGKILL), demo (the
# page of `hapair demo`), demo-static (the WebAssembly page of scripts/build_wasm.sh).
# Screenshots are kept in OUT_DIR. Exit 77 (CTest: skipped) with a message when Chromium, Node
# or the test's npm packages are missing, 0 when the test passed, 1 otherwise.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
case_name="${1:?CASE}"
hapair="${2:?HAPAIR_BINARY}"
out="${3:?OUT_DIR}"
mkdir -p "$out"
chromium="${HAPAIR_CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then echo "skipped: no Chromium at $chromium (apt-get install chromium)"; exit 77; fi
if ! command -v node >/dev/null; then echo "skipped: no node"; exit 77; fi
if [ ! -d "$here/node_modules/puppeteer-core" ]; then
  echo "skipped: tests/browser/node_modules is missing (cd tests/browser && npm ci; scripts/install-deps.sh does it)"
  exit 77
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/hapair-browser-XXXXXX")"
trap 'rm -rf "$work"' EXIT
case "$case_name" in
  unit)
    # The two page inliners (scripts/embed_web.cmake for the binary, web/inline.mjs for tests and
    # people) must give the same page.
    web="$here/../../web"
    for page in timeline/timeline.html demo/index.html; do
      cmake -DWEB="$web" -DINLINE="$page" -DOUT="$work/cmake.html" -P "$here/../../scripts/embed_web.cmake"
      node "$web/inline.mjs" "$web/$page" >"$work/node.html"
      cmp "$work/cmake.html" "$work/node.html" || { echo "the inliners disagree on $page"; exit 1; }
    done
    cd "$here" && npm test --silent
    ;;
  timeline-sim)
    "$hapair" run --driver sim --ha passive --fail aggregate@5 --duration-s 10 --trace data --out "$work/run" >/dev/null
    node "$here/timeline_test.mjs" "$work/run" --screenshot "$out/timeline-sim.png"
    ;;
  timeline-checkpoint)
    # Global checkpoints: barriers (the coordinator's triggers), every fragment's snapshots,
    # completions, the rollback and the restore are markers.
    "$hapair" run --driver sim --ha checkpoint --fail aggregate@1.5 --duration-s 3 --out "$work/run" >/dev/null
    grep -q '"checkpoint_rollback"' "$work/run/trace.jsonl" || { echo "the checkpoint run has no rollback"; exit 1; }
    node "$here/timeline_test.mjs" "$work/run" --screenshot "$out/timeline-checkpoint.png"
    ;;
  timeline-real)
    "$hapair" run --ha passive --fail aggregate@2 --duration-s 4 --out "$work/run" >/dev/null
    node "$here/timeline_test.mjs" "$work/run" --screenshot "$out/timeline-real.png"
    ;;
  demo)
    "$hapair" demo --port 0 >"$work/demo.log" 2>&1 &
    server=$!
    trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
    url=""
    for _ in $(seq 1 100); do
      url="$(grep -o 'http://[^ ]*' "$work/demo.log" || true)"
      [ -n "$url" ] && break
      sleep 0.1
    done
    if [ -z "$url" ]; then echo "hapair demo did not start:"; cat "$work/demo.log"; exit 1; fi
    node "$here/demo_test.mjs" "$url" --shots "$out"
    ;;
  demo-static)
    page="$(dirname "$hapair")/../../../build-wasm/demo/index.html"
    if [ -n "${HAPAIR_WASM_PAGE:-}" ]; then page="$HAPAIR_WASM_PAGE"; fi
    if [ ! -f "$page" ]; then echo "skipped: no static demo page at $page (scripts/build_wasm.sh builds it)"; exit 77; fi
    mkdir -p "$out/static"
    node "$here/demo_test.mjs" "file://$(realpath "$page")" --shots "$out/static"
    ;;
  *)
    echo "run_ctest.sh: unknown case '$case_name'" >&2
    exit 2
    ;;
esac
