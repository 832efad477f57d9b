#!/usr/bin/env bash
# The Debian package builds, names what it needs, and installs on a clean system
# (docs/HOSTS.md, "The package"). Usage: package_test.sh BUILD_DIR HAPAIR_BINARY
#
#   1. CPack writes hapair_<version>_amd64.deb from the build (as scripts/package.sh does), its
#      version the binary's (`hapair --version`) in Debian's spelling;
#   2. its Depends (dpkg-shlibdeps) name the package of every shared library the binary needs;
#   3. on a clean Debian (apt's resolver with an empty dpkg status: nothing installed) every
#      dependency resolves from the archive's package lists;
#   4. installed for real with `apt-get install ./hapair_*.deb` in a private mount namespace whose
#      /usr, /var and /etc are overlays on tmpfs: what it writes (the files, dpkg's database)
#      disappears with the namespace and this machine's own /usr is never touched. There the
#      installed /usr/bin/hapair prints the version, finds its experiments in
#      /usr/share/hapair, and a short simulated run with a crash is precise; then it is removed.
#
# Why not a chroot of a fresh Debian: debootstrap is not installed here and would download the
# whole base system on every run. The overlay installs on this machine's own packages, which
# have every library already; steps 2 and 3 are what show that a clean system gets them.
# Needs root (mount namespace, overlayfs); otherwise it says why and exits 77 (skipped).
set -euo pipefail
build=$1
built=$2
skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAILED: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || skip "needs root: the install runs in a private mount namespace with overlays on /usr, /var, /etc"
for tool in cpack dpkg-deb dpkg-shlibdeps apt-get unshare readelf ldd; do
  command -v "$tool" >/dev/null || skip "$tool is missing (scripts/install-deps.sh installs dpkg-dev and the rest)"
done
work=$(mktemp -d /tmp/hapair-package-XXXXXX)
trap 'rm -rf "$work"' EXIT

# 1. The package.
started=$(date +%s%N)
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; fail "cpack -G DEB failed"; }
deb=$(ls "$work"/out/hapair_*_amd64.deb) || fail "cpack wrote no hapair_*_amd64.deb: $(ls "$work/out")"
echo "built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB) in $(( ($(date +%s%N) - started) / 1000000 )) ms"
version=$("$built" --version | sed 's/^hapair //')
deb_version=$(printf '%s' "$version" | sed 's/[^A-Za-z0-9.+~]/./g')
[ "$(dpkg-deb --field "$deb" Package)" = hapair ] || fail "Package is not hapair"
[ "$(dpkg-deb --field "$deb" Version)" = "$deb_version" ] ||
  fail "Version $(dpkg-deb --field "$deb" Version) is not the binary's $version as $deb_version"
[ "$(dpkg-deb --field "$deb" Architecture)" = amd64 ] || fail "Architecture is not amd64"
depends=$(dpkg-deb --field "$deb" Depends)
echo "Version: $deb_version"
echo "Depends: $depends"
dpkg-deb --contents "$deb" >"$work/contents.txt"
grep -q ' \./usr/bin/hapair$' "$work/contents.txt" || fail "no /usr/bin/hapair in the package"
grep -q ' \./usr/share/hapair/experiments/networks/default.toml$' "$work/contents.txt" ||
  fail "no experiments in /usr/share/hapair"

# 2. Every library the binary needs comes from a package its Depends names.
for soname in $(readelf -d "$built" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
  path=$(ldd "$built" | awk -v s="$soname" '$1 == s { print $3 }')
  [ -n "$path" ] || fail "ldd does not find $soname"
  owner=$(dpkg -S "$path" 2>/dev/null || dpkg -S "/usr$path" 2>/dev/null || dpkg -S "${path#/usr}" 2>/dev/null) ||
    fail "no package owns $path ($soname)"
  owner=${owner%%:*}
  printf '%s\n' "$depends" | tr ',' '\n' | sed 's/^ *//; s/ .*//' | grep -qx "$owner" ||
    fail "$soname comes from $owner, which Depends does not name"
  echo "  $soname: $owner"
done

# 3. A clean system: apt's resolver with nothing installed.
if ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1; then
  : >"$work/empty-status"
  apt-get -s -o Dir::State::status="$work/empty-status" -o Debug::NoLocking=1 --no-install-recommends \
    install "$deb" >"$work/resolve.log" 2>&1 || { cat "$work/resolve.log"; fail "apt cannot resolve the package on a clean system"; }
  grep -q '^Inst hapair ' "$work/resolve.log" || { cat "$work/resolve.log"; fail "apt would not install hapair"; }
  echo "on a clean system apt installs $(grep -c '^Inst ' "$work/resolve.log") packages: hapair and its dependencies"
else
  echo "NOTE: no apt package lists (apt-get update): the clean-system resolution was not checked"
fi

# 4. Installed for real, in a private mount namespace with overlays.
before_usr=$( [ -e /usr/bin/hapair ] && echo present || echo absent )
mkdir -p "$work/overlay" "$work/run"
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
export work deb version source_dir
unshare --mount --propagation private bash -euo pipefail -c '
  mount -t tmpfs hapair-package "$work/overlay"
  for d in usr var etc; do
    mkdir -p "$work/overlay/$d.upper" "$work/overlay/$d.work"
    mount -t overlay overlay -o "lowerdir=/$d,upperdir=$work/overlay/$d.upper,workdir=$work/overlay/$d.work" "/$d"
  done
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$deb" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; exit 1; }
  dpkg-query -W -f="\${Status}\n" hapair | grep -qx "install ok installed"
  [ "$(/usr/bin/hapair --version)" = "hapair $version" ]
  ! ldd /usr/bin/hapair | grep "not found"
  # The source tree it was built from is hidden: what it needs must come from the package.
  mount -t tmpfs hapair-hidden "$source_dir"
  cd "$work/run"
  env -u HAPAIR_SOURCE_DIR /usr/bin/hapair experiment recovery_vs_interval --quick --out "$work/run/exp" >"$work/exp.log" 2>&1 ||
    { cat "$work/exp.log"; exit 1; }
  /usr/bin/hapair run --driver sim --ha passive --fail aggregate@1 --duration-s 2 --out "$work/run/sim" >"$work/sim.log" 2>&1 ||
    { cat "$work/sim.log"; exit 1; }
  grep -q "\"verdict\": \"precise\"" "$work/run/sim/summary.json" || { cat "$work/sim.log"; exit 1; }
  DEBIAN_FRONTEND=noninteractive apt-get remove -y hapair >"$work/remove.log" 2>&1 || { cat "$work/remove.log"; exit 1; }
  [ ! -e /usr/bin/hapair ]
' || fail "the install in the private mount namespace failed"
echo "installed with apt in a private mount namespace: hapair $version ran an experiment from /usr/share/hapair and a simulated crash run (precise) with the source tree hidden, and was removed"
# Nothing reached this machine's own /usr or dpkg database.
after_usr=$( [ -e /usr/bin/hapair ] && echo present || echo absent )
[ "$before_usr" = "$after_usr" ] || fail "/usr/bin/hapair was $before_usr before and is $after_usr after"
if [ "$before_usr" = absent ]; then
  ! dpkg-query -W hapair >/dev/null 2>&1 || fail "this machine's dpkg database lists hapair after the test"
fi
echo "package test: passed in $(( ($(date +%s%N) - started) / 1000000 )) ms"
