#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# One source of the version (make test-version): VERSION (X.Y.Z) and everything made from it agree —
# the generated header (LIEFLOW_VERSION, _MAJOR, _MINOR, _PATCH), `lieflow -v`, lf.version and
# lf._VERSION, the man page's title line, the rockspec (lieflow-X.Y.Z-1.rockspec, up to date with
# lieflow.rockspec.in) — and no other file writes the version out (the .pc files get it at install:
# tests/install_test.sh checks pkg-config --modversion; lf_version(): tests/cxx/client.cpp).
# usage: version_check.sh BUILD_DIR
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
B="$(cd "${1:-$ROOT/build}" && pwd)"
cd "$ROOT"
die() { echo "version check FAILED: $1"; exit 1; }
V=$(cat VERSION)
[[ "$V" =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)$ ]] || die "VERSION is '$V', not MAJOR.MINOR.PATCH"
h="$B/gen/base/lieflow_version.h"
for want in "#define LIEFLOW_VERSION \"$V\"" "#define LIEFLOW_VERSION_MAJOR ${BASH_REMATCH[1]}" \
            "#define LIEFLOW_VERSION_MINOR ${BASH_REMATCH[2]}" "#define LIEFLOW_VERSION_PATCH ${BASH_REMATCH[3]}"; do
    grep -qxF "$want" "$h" || die "$h lacks '$want'"
done
echo "ok   - VERSION $V: lieflow_version.h defines LIEFLOW_VERSION and MAJOR, MINOR, PATCH"
line=$("$B/lieflow" -v < /dev/null | head -1)
[[ "$line" == "lieflow $V — Lua "* ]] || die "lieflow -v printed '$line'"
out=$("$B/lieflow" -e 'io.write(lf.version, "|", lf._VERSION)')
[ "$out" = "$V|lieflow $V" ] || die "lf.version|lf._VERSION = '$out'"
echo "ok   - lieflow -v ('${line%%  Copyright*}'), lf.version, lf._VERSION"
grep -q "^\.TH LIEFLOW 1 [^\"]*\"lieflow $V\"" "$B/lieflow.1" || die "$B/lieflow.1: $(grep '^\.TH' "$B/lieflow.1")"
echo "ok   - the man page (build/lieflow.1, from docs/lieflow.1): $(grep '^\.TH' "$B/lieflow.1")"
specs=$(ls lieflow-*.rockspec)
[ "$specs" = "lieflow-$V-1.rockspec" ] || die "rockspecs in the tree: $specs (expected lieflow-$V-1.rockspec only: make rockspec)"
sed -e "s/@VERSION@/$V/g" lieflow.rockspec.in | cmp -s - "$specs" || die "$specs is not lieflow.rockspec.in made with $V: run make rockspec"
echo "ok   - $specs is lieflow.rockspec.in with version $V-1"
# nothing else spells the version: only VERSION, the changelog, README and the generated rockspec may
# (binary files are skipped: the fuzzers' HDF5 fixtures carry the lieflow_version that wrote them)
hits=$( { grep -rlIF "$V" core lua scripts docs examples tests mk Makefile ./*.pc.in lieflow.rockspec.in 2>/dev/null
          grep -rlIF "${V//./\\.}" core lua scripts docs examples tests mk Makefile 2>/dev/null; } | grep -v '^tests/version_check.sh$' | sort -u || true)
[ -z "$hits" ] || die "the version $V is written out in: $hits (make it from VERSION)"
echo "ok   - no source file writes the version out"
echo "version check: 5 checks passed"
