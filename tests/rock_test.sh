#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The rockspec (make test-rock): `luarocks make lieflow-VERSION-1.rockspec` in this checkout, with
# Debian's luarocks, into a temporary rocks tree (no network: the only dependency is Lua itself);
# then a stock lua5.4 with that tree's paths (`luarocks path`) requires lieflow from the tree and
# runs an integration and a plot (the PNG when gnuplot is there, else the data and script lf.plot
# writes with its advice).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
VERSION=$(cat VERSION)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
die() { echo "rock test FAILED: $1"; exit 1; }
command -v luarocks > /dev/null || die "luarocks not found (Debian package luarocks: make deps-test)"
unset LUA_INIT LUA_INIT_5_4 LUA_PATH_5_4 LUA_CPATH_5_4
spec="lieflow-$VERSION-1.rockspec"
[ -f "$spec" ] || die "no $spec in the checkout"
luarocks --lua-version=5.4 --tree="$dir/tree" make "$spec" > "$dir/log" 2>&1 || { cat "$dir/log"; die "luarocks make $spec failed"; }
grep -q "lieflow $VERSION-1 is now installed in $dir/tree" "$dir/log" || { cat "$dir/log"; die "luarocks did not say it installed lieflow"; }
echo "ok   - luarocks make $spec installed lieflow $VERSION-1 into a temporary tree"
eval "$(luarocks --lua-version=5.4 --tree="$dir/tree" path)"
cd "$dir"
out=$(lua5.4 - <<'EOL'
local lf = require "lieflow"
local src = debug.getinfo(lf.run, "S").source
local core = package.searchpath("lieflow.core", package.cpath)
local tr = lf.run(lf.rigidbody{inertia = {2, 2, 4}, omega = {0, 0.3, 1}}, {method = "vlv", h = 0.05, T = 5})
require("lieflow.view.plot").warn = function() end
local img, info = tr:plot{y = {"energy_error"}, file = "plot/energy.png"}
local plotted = img and io.open(img) and "png" or (info.data and io.open(info.data) and "data+script")
print(lf._VERSION, src, core, tr.samples, plotted)
EOL
) || die "lua5.4 with the tree's paths: $out"
read -r name version src core samples plotted <<< "$out"
[ "$name $version" = "lieflow $VERSION" ] || die "lf._VERSION is '$name $version'"
[[ "$src" == "@$dir/tree/"*"/lieflow/run/init.lua" ]] || die "lieflow.run came from $src, not the tree"
[[ "$core" == "$dir/tree/"*"/lieflow/core.so" ]] || die "lieflow.core came from $core, not the tree"
[ "$samples" = 101 ] || die "lf.run took $samples samples"
echo "ok   - a stock lua5.4 (luarocks path) requires lieflow $VERSION from the tree (${src#@$dir/}, ${core#$dir/})"
case $plotted in
    png) echo "ok   - lf.run (101 samples) and traj:plot (a PNG by gnuplot)" ;;
    data+script) echo "ok   - lf.run (101 samples) and traj:plot (gnuplot absent: its data and script written)" ;;
    *) die "traj:plot made neither a PNG nor its data: $plotted" ;;
esac
echo "rock test: 3 checks passed"
