#!/usr/bin/env bash
# Builds the teaching demo as static files (docs/DEMO.md, "Static page"): the simulator and the
# pure protocol cores compiled to WebAssembly with Debian's emscripten (src/wasm/), then the demo
# page with it inlined: OUT/demo/index.html (default OUT: build-wasm), one file that runs from
# file:// or any web server, no hapair process needed.
#
#   scripts/build_wasm.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(realpath -m "${1:-build-wasm}")"
if ! command -v em++ >/dev/null; then
  echo "build_wasm.sh: em++ not found (apt-get install emscripten node-acorn)" >&2
  exit 1
fi
# Debian's emscripten runs its JavaScript tools with the system Node and needs acorn from here.
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
mkdir -p "$out/include" "$out/demo"
# Header-only nlohmann-json from Debian, alone on the include path (not all of /usr/include).
ln -sfn /usr/include/nlohmann "$out/include/nlohmann"
version="$(git describe --always --dirty --tags 2>/dev/null || echo unknown)"
emcmake cmake -S src/wasm -B "$out/cmake" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DHAPAIR_WASM_INCLUDE="$out/include" -DHAPAIR_VERSION_STRING="0.1.0+$version" >/dev/null
cmake --build "$out/cmake" -j "$(nproc)"
# The page: web/demo/ with its scripts inlined, the WebAssembly glue among them.
rm -rf "$out/web"
cp -r web "$out/web"
mkdir -p "$out/web/demo/wasm"
cp "$out/cmake/hapair_sim.js" "$out/web/demo/wasm/hapair_sim.js"
cmake -DWEB="$out/web" -DINLINE=demo/index.html -DOUT="$out/demo/index.html" -P scripts/embed_web.cmake
echo "build_wasm.sh: wrote $out/demo/index.html ($(du -h "$out/demo/index.html" | cut -f1)); open it in a browser"
