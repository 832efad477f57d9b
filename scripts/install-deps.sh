#!/usr/bin/env bash
# Installs the Debian 12 packages hapair needs (skips apt when they are all present), then the
# browser tests' npm packages (tests/browser: puppeteer-core only, pinned by its lockfile; it
# drives Debian's Chromium and downloads no browser).
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config git
          dpkg-dev  # the Debian package: dpkg-shlibdeps and dpkg-deb (scripts/package.sh)
          libzmq3-dev cppzmq-dev capnproto libcapnp-dev libboost-program-options-dev catch2
          nlohmann-json3-dev libfmt-dev libtomlplusplus-dev
          python3-matplotlib gnuplot-nox iproute2 nftables procps
          openssh-client openssh-server  # several hosts: the ssh layer and its test's sshd per namespace (docs/HOSTS.md)
          libboost-dev  # Boost.Beast and Boost.Asio (hapair demo's web server), header-only
          clang libclang-rt-14-dev  # clang++ -fsanitize=fuzzer (scripts/fuzz.sh)
          chromium  # the browser tests (tests/browser)
          emscripten node-acorn)  # the demo's static WebAssembly page (scripts/build_wasm.sh)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
# The browser tests' packages, when Node is there (the tests skip themselves, saying so, when not).
cd "$(dirname "$0")/../tests/browser"
if ! command -v npm >/dev/null; then
  echo "install-deps: no npm: the browser tests will be skipped"
elif [ ! -d node_modules/puppeteer-core ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
else
  echo "install-deps: tests/browser/node_modules is up to date"
fi
