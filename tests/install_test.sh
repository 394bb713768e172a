#!/usr/bin/env bash
# `make install PREFIX=tmp` then: a stock lua5.4 with the printed LUA_PATH/LUA_CPATH can
# require "lieflow"; pkg-config finds lieflow and a C program links against the installed library.
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
make --no-print-directory install PREFIX="$dir" > "$dir/install.log"
eval "$(grep '^  export' "$dir/install.log")"
out=$(lua5.4 -e 'local lf = require "lieflow"; local R = lf.so3.exp{0, 0, 1}; print(("%.12f"):format(lf.so3.log(R).z))')
[ "$out" = "1.000000000000" ] || { echo "install test: stock lua5.4 printed '$out'"; exit 1; }
"$dir/bin/lieflow" -e 'assert(lf.so3.angle(lf.so3.exp{0.3, 0, 0}) > 0.29)'
# the executable exports the Lua API: it can load C modules, e.g. the installed lieflow/core.so itself
"$dir/bin/lieflow" -e 'package.preload["lieflow.core"] = nil; package.loaded["lieflow.core"] = nil
local f = assert(package.searchpath("lieflow.core", package.cpath), "core.so not on the cpath")
assert(f:find("core.so", 1, true)); assert(require("lieflow.core").version == lf.version)'
cat > "$dir/c.c" <<'EOC'
#include <lieflow.h>
#include <stdio.h>
int main(void) { double x[3] = {0, 0, 1}, R[9]; lf_so3_exp(x, R); printf("%.6f\n", R[3]); return 0; }
EOC
PKG_CONFIG_PATH="$dir/lib/pkgconfig" cc "$dir/c.c" -o "$dir/c" -Wl,-rpath,"$dir/lib" $(PKG_CONFIG_PATH="$dir/lib/pkgconfig" pkg-config --cflags --libs --static lieflow)
[ "$("$dir/c")" = "0.841471" ] || { echo "install test: C program against the installed library failed"; exit 1; }
echo "install test: lua5.4 require, installed executable (loading a C module), pkg-config C build: ok"
