#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The executable stands alone (make test-standalone): the pure-Lua modules are compiled into it, so
# a copy in an empty directory works; a module in a directory the user put on LUA_PATH (or on
# package.path) replaces the built-in copy, Lua's default directories do not; the Makefile
# regenerates the embedded modules when a script changes.
# usage: bash tests/standalone_test.sh path/to/lieflow
set -u

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
    echo "usage: bash tests/standalone_test.sh path/to/lieflow (an executable)" >&2
    exit 2
fi
LF="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/lieflow-standalone.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
unset LUA_INIT LUA_INIT_5_4 LUA_PATH LUA_PATH_5_4 LUA_CPATH LUA_CPATH_5_4

pass=0
fail=0
check() {  # check DESCRIPTION EXPECTED-STDOUT COMMAND...: the command prints exactly EXPECTED
    local desc=$1 expected=$2 out
    shift 2
    out="$("$@" 2>"$TMP/err")"
    if [ "$out" = "$expected" ]; then
        pass=$((pass + 1))
        echo "ok   - $desc"
    else
        fail=$((fail + 1))
        echo "FAIL - $desc"
        echo "  expected: $expected"
        echo "  got:      $out"
        sed 's/^/  | /' "$TMP/err" | head -10
    fi
}

# A copy of the executable alone in a directory (no scripts/, no share/ beside it), run elsewhere.
mkdir -p "$TMP/alone/bin" "$TMP/cwd"
cp "$LF" "$TMP/alone/bin/lieflow"
cd "$TMP/cwd" || exit 2
ALONE="$TMP/alone/bin/lieflow"

check "a copied executable loads lf from its built-in modules" "true	=lieflow/run/init.lua	=lieflow/init.lua" \
    "$ALONE" -e 'print(type(lf.run) == "function", debug.getinfo(lf.run, "S").source,
                       debug.getinfo(require("lieflow").integrator, "S").source)'
# scripts/lieflow/A.lua is lieflow.A, A/B.lua lieflow.A.B, A/init.lua lieflow.A, init.lua lieflow; the
# built-in searcher finds each under that name, with the chunk name lieflow/<its path> (one level of
# folders: scripts/lieflow/*.lua and scripts/lieflow/*/*.lua)
check "every module of scripts/lieflow (and its folders) is built in" \
    "$(cd "$ROOT/scripts/lieflow" && ls ./*.lua ./*/*.lua | wc -l)" \
    "$ALONE" -e 'local n = 0
      for f in io.popen("cd '"$ROOT"'/scripts/lieflow && ls *.lua */*.lua"):lines() do
        local m = ("lieflow/" .. f):gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", ".")
        local loader, chunk = package.searchers[2](m)
        if type(loader) == "function" and chunk == "lieflow/" .. f then n = n + 1
        else print("missing", m, chunk) end
      end
      print(n)'
check "a copied executable runs a trajectory and encodes JSON (Lua modules at work)" "ok" \
    "$ALONE" -e 'local body = lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7, 0}, omega = {0, 0, 1},
                                          potential = lf.potential.stress{}}
      local traj = lf.run(body, {method = "vlv", h = 0.125, T = 5, observe = {"energy"}})
      assert(#traj.t > 10 and traj.energy[1] == traj.energy[1])
      print(lf.json.encode{1, 2} == "[1,2]" and "ok")'
check "its package.path is Lua's (nothing of the build tree)" "$(lua5.4 -E -e 'print(package.path)' 2>/dev/null || echo skip)" \
    "$ALONE" -e 'print(package.path)'

# Precedence: a directory the user chose wins over the built-in copy; Lua's defaults do not.
mkdir -p "$TMP/ovr/lieflow/files" "$TMP/cwd/lieflow/files"
printf 'return {marker = "user LUA_PATH"}\n' >"$TMP/ovr/lieflow/files/json.lua"
printf 'return {marker = "./lieflow/files/json.lua"}\n' >"$TMP/cwd/lieflow/files/json.lua"
check "LUA_PATH overrides a built-in module" "user LUA_PATH" \
    env LUA_PATH="$TMP/ovr/?.lua;;" "$ALONE" -e 'print(require("lieflow.files.json").marker)'
check "the overriding file is loaded like Lua's searcher does (file name as 2nd value)" "$TMP/ovr/lieflow/files/json.lua" \
    env LUA_PATH="$TMP/ovr/?.lua;;" "$ALONE" -e 'print(select(2, package.searchers[2]("lieflow.files.json")))'
check "a default directory (./?.lua) does not override the built-in module" "nil" \
    "$ALONE" -e 'print(require("lieflow.files.json").marker)'
check "... while a stock lua5.4 would take ./lieflow/files/json.lua" "./lieflow/files/json.lua" \
    lua5.4 -e 'print(require("lieflow.files.json").marker)'
check "-E: LUA_PATH ignored, the built-in module" "nil" \
    env LUA_PATH="$TMP/ovr/?.lua;;" "$ALONE" -E -e 'print(require("lieflow.files.json").marker)'
check "package.path changed at run time overrides too" "user LUA_PATH" \
    "$ALONE" -e 'package.path = "'"$TMP"'/ovr/?.lua;" .. package.path
                 package.loaded["lieflow.files.json"] = nil
                 print(require("lieflow.files.json").marker)'
mkdir -p "$TMP/ovr2/lieflow"
printf 'return {version = "user lieflow"}\n' >"$TMP/ovr2/lieflow/init.lua"
check "LUA_PATH overrides the top module (lf itself)" "user lieflow" \
    env LUA_PATH="$TMP/ovr2/?/init.lua;;" "$ALONE" -e 'print(lf.version)'
printf 'error("broken on purpose")\n' >"$TMP/ovr/lieflow/files/json.lua"
check "an overriding module that fails to load is reported with its file" "1" \
    bash -c 'env LUA_PATH="'"$TMP"'/ovr/?.lua;;" "'"$ALONE"'" -e "require(\"lieflow.files.json\")" 2>&1 |
             grep -c "ovr/lieflow/files/json.lua:1: broken on purpose"'
check "other modules: the same 'not found' message as lua (no built-in entry)" "0" \
    bash -c '"'"$ALONE"'" -e "require(\"no_such_mod_xyz\")" 2>&1 | grep -c "built"'

# The Makefile regenerates the embedded modules when a script changes (make -n -W: what if).
if command -v make >/dev/null 2>&1 && [ -f "$ROOT/Makefile" ]; then
    rel="${LF#"$ROOT"/}"
    check "a changed script regenerates the embedded modules and relinks lieflow" "2" \
        bash -c "make -C '$ROOT' --no-print-directory -n -W scripts/lieflow/files/json.lua '$rel' 2>/dev/null |
                 grep -cE 'lieflow_scripts\\.c\\.tmp|-o $rel '"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
