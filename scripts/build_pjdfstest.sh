#!/usr/bin/env bash
# Builds pjdfstest (the POSIX file-system test suite of FreeBSD/illumos, not
# packaged by Debian) from its sources, kept outside the repository (the
# project's shared folder beside the repository holds them in
# third_party/pjdfstest; PJDFSTEST_SRC or SOURCE_DIR names another place), in
# a copy under OUT_DIR (never in the repository). Idempotent: a built copy is
# kept. Prints the built tree's path; exits 3 when there are no sources.
# Needs autoconf, automake and a C compiler (make deps).
# Usage: scripts/build_pjdfstest.sh OUT_DIR [SOURCE_DIR]
set -euo pipefail
out=${1:?usage: build_pjdfstest.sh OUT_DIR [SOURCE_DIR]}
beside=$(cd "$(dirname "$0")/../.." && pwd)
src=${2:-${PJDFSTEST_SRC:-$beside/shared/third_party/pjdfstest}}
tree=$out/pjdfstest
if [ -x "$tree/pjdfstest" ]; then echo "$tree"; exit 0; fi
if [ ! -f "$src/pjdfstest.c" ]; then
  echo "build_pjdfstest.sh: no pjdfstest sources at $src (set PJDFSTEST_SRC)" >&2
  exit 3
fi
rm -rf "$tree"
mkdir -p "$out"
cp -r "$src" "$tree"
chmod -R u+w "$tree"
(cd "$tree" && autoreconf -ifs && ./configure && make pjdfstest) >"$out/pjdfstest-build.log" 2>&1 || {
  echo "build_pjdfstest.sh: the build failed; see $out/pjdfstest-build.log" >&2
  tail -20 "$out/pjdfstest-build.log" >&2
  exit 1
}
echo "$tree"
