#!/usr/bin/env bash
# Builds the Debian package of hapair: build/hapair_<version>_amd64.deb (CPack, the rules at the
# end of CMakeLists.txt). The version is the project version and git describe, so the build is
# configured again first (a new commit changes it); then only `hapair` is built (the tests are not
# needed for a package), and CPack installs it into a staging folder and writes the package, its
# Depends from dpkg-shlibdeps (dpkg-dev). Install it with `apt install ./build/hapair_*.deb`.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${HAPAIR_BUILD_DIR:-build}"
for tool in cmake ninja cpack dpkg-deb dpkg-shlibdeps; do
  command -v "$tool" >/dev/null || { echo "package.sh: $tool is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
done
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHAPAIR_WERROR=ON >/dev/null
nice cmake --build "$build" -j"$(nproc)" --target hapair
rm -f "$build"/hapair_*.deb
(cd "$build" && cpack -G DEB --config CPackConfig.cmake >/dev/null)
deb=$(ls "$build"/hapair_*.deb)
echo "package.sh: wrote $deb"
dpkg-deb --field "$deb" Package Version Architecture Depends Installed-Size
