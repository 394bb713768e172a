#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The views in a real browser (make test-view, part of make test): the pages of the four examples
# (stress_test, free_body, double_pendulum, dipoles, run --quick), a page of 10^6 samples, a box of 27 rigid
# waters drawn as their sites (its screenshot kept in build/view-test/pages/water/view.png) and a page
# with a broken asset (tests/view/pages.lua), checked in headless Chromium (tests/view/browser_test.js)
# and their glTF files by the Khronos glTF validator.
# Installs what it needs when missing, as root: Debian's chromium, nodejs, npm (apt-get) and, in
# build/view-node, playwright-core and gltf-validator (npm, pinned versions). When they cannot be
# installed (no network, not root) it says so in one line and skips the browser part.
# usage: bash tests/view/run.sh path/to/lieflow
set -u
if [ $# -ne 1 ] || [ ! -x "$1" ]; then echo "usage: bash tests/view/run.sh path/to/lieflow" >&2; exit 2; fi
LF="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
NODE_DIR="$ROOT/build/view-node"
NPM_PKGS="playwright-core@1.65.1 gltf-validator@2.0.0-dev.3.10"
WORK="$ROOT/build/view-test"

skip() { echo "view_test: browser part skipped: $1"; echo "view: 0 passed, 0 failed, 1 skipped"; exit 0; }

# ---------------------------------------------------------------- what the browser test needs
need=""
command -v chromium > /dev/null || need="$need chromium"
command -v node > /dev/null || need="$need nodejs"
command -v npm > /dev/null || need="$need npm"
[ -f /usr/share/javascript/three/three.min.js ] || need="$need libjs-three"
if [ -n "$need" ]; then
    [ "$(id -u)" = 0 ] || skip "missing Debian packages:$need (as root: apt-get install$need)"
    echo "view_test: installing Debian packages:$need"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends $need; } > "$ROOT/build/view-apt.log" 2>&1 \
        || skip "apt-get install$need failed (no network?): see build/view-apt.log"
fi
if [ ! -f "$NODE_DIR/.ok" ] || [ "$(cat "$NODE_DIR/.ok")" != "$NPM_PKGS" ]; then
    echo "view_test: npm install $NPM_PKGS"
    mkdir -p "$NODE_DIR"
    (cd "$NODE_DIR" && npm install --no-audit --no-fund --no-save --prefix "$NODE_DIR" $NPM_PKGS) > "$ROOT/build/view-npm.log" 2>&1 \
        || skip "npm install $NPM_PKGS failed (no network?): see build/view-npm.log"
    echo "$NPM_PKGS" > "$NODE_DIR/.ok"
fi

# ---------------------------------------------------------------- the pages
rm -rf "$WORK" && mkdir -p "$WORK"
cd "$WORK"
for ex in stress_test free_body double_pendulum dipoles; do
    echo "== examples/$ex.lua --quick (view)"
    LIEFLOW_VIEW_CHECK=1 "$LF" "$ROOT/examples/$ex.lua" --quick > "$WORK/$ex.log" 2>&1 || { tail -20 "$WORK/$ex.log"; exit 1; }
    grep '^view: ' "$WORK/$ex.log"
done
"$LF" "$ROOT/tests/view/pages.lua" "$WORK/pages" out/stress_test out/free_body out/double_pendulum out/dipoles || exit 1

# ---------------------------------------------------------------- in the browser
NODE_PATH="$NODE_DIR/node_modules" timeout -k 10 600 node "$ROOT/tests/view/browser_test.js" "$WORK/pages/manifest.json"
