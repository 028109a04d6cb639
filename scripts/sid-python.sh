#!/usr/bin/env bash
# A CPython this machine's Debian has no package of (3.14, 3.15: users have
# them; bookworm has 3.11), for scripts/test-pythons.sh: Debian sid's build of
# python3.N, unpacked (not installed) under the test cache with sid's glibc and
# the libraries it links, its binary pointed at them (patchelf: interpreter
# and an RPATH its extension modules inherit), and the runner tests' modules
# (IPython, nbformat, pip; matplotlib where PyPI has a wheel) put in its
# dist-packages by this machine's pip. Prints the python3 to give
# EVALHOST_TEST_PYTHON or test-pythons.sh. Needs deb.debian.org's sid and
# PyPI; nothing outside the cache changes but the patchelf package.
#   scripts/sid-python.sh 3.15   ->  ~/.cache/evalhost-test/py3.15sid/usr/bin/python3
set -euo pipefail
ver=${1:?usage: sid-python.sh 3.N}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/evalhost-test
prefix=$cache/py${ver}sid
py=$prefix/usr/bin/python$ver
if "$py" -c 'import IPython, nbformat' 2>/dev/null; then
  echo "$prefix/usr/bin/python3"
  exit 0
fi
command -v patchelf >/dev/null || { apt-get update -qq && apt-get install -y -qq patchelf; } >&2
mirror=http://deb.debian.org/debian
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
curl -fsS -o "$work/Packages.xz" "$mirror/dists/sid/main/binary-amd64/Packages.xz"
xz -d "$work/Packages.xz"
pkgs="python$ver python$ver-minimal libpython$ver-minimal libpython$ver-stdlib libc6 libssl3t64 libffi8
  libexpat1 zlib1g libzstd1 libsqlite3-0 liblzma5 libbz2-1.0 libuuid1 libncursesw6 libtinfo6
  libreadline8t64 libdb5.3t64 libmpdec4 libcrypt1"
rm -rf "$prefix"
mkdir -p "$prefix"
for p in $pkgs; do
  file=$(awk -v p="$p" '$0 == "Package: " p {f = 1} f && /^Filename:/ {print $2; exit}' "$work/Packages")
  [ -n "$file" ] || { echo "sid has no package $p" >&2; exit 1; }
  curl -fsS -o "$work/p.deb" "$mirror/$file"
  dpkg -x "$work/p.deb" "$prefix"
done
lib=$prefix/usr/lib/x86_64-linux-gnu
patchelf --set-interpreter "$lib/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$lib" "$py"
ln -sf "python$ver" "$prefix/usr/bin/python3"
abi=cp${ver/./}
pipargs=(--quiet --disable-pip-version-check --target "$prefix/usr/lib/python3/dist-packages" --python-version "$ver"
  --only-binary=:all: --implementation cp --abi "$abi" --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64
  --platform manylinux_2_28_x86_64)
python3 -m pip install "${pipargs[@]}" ipython nbformat pip setuptools wheel >&2
python3 -m pip install "${pipargs[@]}" matplotlib >&2 2>/dev/null || echo "no matplotlib wheel for $ver: its tests skip" >&2
"$py" -c 'import ssl, ctypes, sqlite3, IPython, nbformat' >&2
echo "$prefix/usr/bin/python3"
