#!/usr/bin/env bash
# Installs the Debian 12 packages hapair needs (skips apt when they are all present).
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config git
          libzmq3-dev cppzmq-dev capnproto libcapnp-dev libboost-program-options-dev catch2
          nlohmann-json3-dev libfmt-dev libtomlplusplus-dev
          python3-matplotlib gnuplot-nox iproute2 nftables procps
          clang libclang-rt-14-dev)  # clang++ -fsanitize=fuzzer (scripts/fuzz.sh)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
