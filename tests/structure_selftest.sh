#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Tests of the structure test (make test-structure): a copy of the tree passes tests/structure_check.sh;
# then each rule is broken once in a fresh copy, and the check must fail with the message that names
# the violation. A check that cannot fail is no check.
# usage: bash tests/structure_selftest.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pass=0
die() { echo "structure selftest FAILED: $1"; exit 1; }

fresh() {
    rm -rf "$dir/t" && mkdir -p "$dir/t/docs" "$dir/t/tests"
    cp -r "$ROOT/core" "$ROOT/lua" "$ROOT/scripts" "$dir/t/"
    cp "$ROOT/docs/architecture.md" "$dir/t/docs/"
    cp "$ROOT/tests/structure_allow.txt" "$dir/t/tests/"
}
check() { bash "$ROOT/tests/structure_check.sh" "$dir/t" > "$dir/out" 2>&1; }

fresh
check || { cat "$dir/out"; die "the unchanged tree does not pass"; }
echo "ok   - the tree as it is passes"

# plant NAME EXPECTED-MESSAGE: run after the planting commands; the check must fail with the message
expect() {
    if check; then die "$1: the check passed"; fi
    grep -qF -- "$2" "$dir/out" || { cat "$dir/out"; die "$1: the failure does not say '$2'"; }
    pass=$((pass + 1))
    echo "ok   - $1: fails ($2)"
    fresh
}
append() { printf '%s\n' "$2" >> "$dir/t/$1"; }

append core/lie/s2.c '#include "error.h"'
expect "an include without its folder" 'does not name its folder'

append core/base/error.c '#include "model/system.h"'
expect "base/ including model/" 'a folder not below it'

append core/lie/s2.c 'void lf_plant(void) { lf_rigid_new(0, 0, 0, 0); }'
expect "lie/ calling a function of model/" 'uses lf_rigid_new of core/model/rigid.c'

append core/method/adapt.c 'void lf_plant(lf_stepper *s) { lf_stepper_step(s, 1, 1); }'
expect "adapt.c calling the stepper that calls it" 'call cycle: core/method/adapt -> core/method/stepper'

append core/base/dense.h '#include "base/linalg.h"'
append core/base/linalg.h '#include "base/dense.h"'
expect "two headers including each other" 'include cycle'

append lua/lib/rigid.c 'int lfb_plant(void) { return 1; }'
expect "a library exporting a helper" 'exports lfb_plant'

append lua/lib/rigid.c 'int lfb_plant(void) { return 1; }'
append lua/lib/maps.c 'int lfb_plant_caller(void) { return lfb_plant(); }'
expect "a library calling another library" 'libraries never call each other'

append lua/shared/value.c 'void lfb_plant(lua_State *L) { lfb_open_maps(L); }'
expect "the shared layer opening a library" 'only lua/module/ opens the libraries'

append lua/lib/maps.c '#include "method/method_internal.h"'
expect "the binding including an internal header" 'which is not public'

append core/lie/so3.h '#include "lie/so3_kernels_internal.h"'
expect "a public header including an internal one" 'the public header core/lie/so3.h includes'

mkdir -p "$dir/t/core/extra" && echo 'int lf_plant(void) { return 0; }' > "$dir/t/core/extra/plant.c"
expect "a folder the layers do not list" 'is not in the layers block'

printf 'local M = {}\nfunction M.f() return require("lieflow.files.plant_b") end\nreturn M\n' > "$dir/t/scripts/lieflow/files/plant_a.lua"
printf 'local a = require "lieflow.files.plant_a"\nreturn {}\n' > "$dir/t/scripts/lieflow/files/plant_b.lua"
expect "two Lua modules requiring each other (one lazily)" 'require cycle'

printf 'local v = require "lieflow.view"\nreturn {}\n' > "$dir/t/scripts/lieflow/files/plant.lua"
expect "files/ requiring the view" 'a folder above it'

{ echo 'int lf_plant_long(void)'; echo '{'; echo '    int x = 0;'
  for _ in $(seq 1 120); do echo '    x++;'; done; echo '    return x;'; echo '}'; } >> "$dir/t/core/base/error.c"
expect "a function of 124 lines" 'lf_plant_long at line'

echo "structure selftest: $pass planted violations, each caught"
