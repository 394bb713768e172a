#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The libraries as a packager and a C++ program see them (make test-abi). usage: abi_check.sh BUILD_DIR
# - liblieflow.so.X.Y.Z and liblieflow_lua.so.X.Y.Z carry the SONAMEs liblieflow.so.X and
#   liblieflow_lua.so.X, with the links .so.X -> .so.X.Y.Z and .so -> .so.X; liblieflow_lua needs
#   liblieflow by its SONAME;
# - only the public API is exported: the functions liblieflow.so exports (nm -D) are exactly the
#   extern functions the installed headers declare (gcc -aux-info over <lieflow/lieflow.h>), no more
#   (no internal function) and no fewer; each of them is documented in its header and called by a
#   test (tests/api_check.lua); the Lua libraries (liblieflow_lua.so, lieflow/core.so) export
#   luaopen_lieflow and luaopen_lieflow_core only, lieflow/mpi.so (when built) luaopen_lieflow_mpi;
# - models compiled to native code (core/graph/jit.c: shared objects that do not link lieflow) still
#   load and run with the hidden symbols: a stock lua5.4 with lieflow/core.so compiles one and runs it;
# - C++: every installed header compiles alone with g++ (-std=c++17 -Wall -Wextra -Werror), and a C++
#   client (tests/cxx/client.cpp) built against the headers and the shared libraries links the C
#   functions (extern "C") and runs: a stepper, lf_version, lieflow hosted in a Lua state.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
B="$(cd "${1:-$ROOT/build}" && pwd)"
cd "$ROOT"
VERSION=$(cat VERSION)
MAJOR=${VERSION%%.*}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
checks=0
ok() { checks=$((checks + 1)); echo "ok   - $1"; }
die() { echo "abi check FAILED: $1"; exit 1; }
CXX=${CXX:-g++}
command -v "$CXX" > /dev/null || die "$CXX not found (Debian package g++: make deps-test)"

for lib in liblieflow liblieflow_lua; do
    real="$B/$lib.so.$VERSION"
    [ -f "$real" ] && [ ! -L "$real" ] || die "$real is not built"
    soname=$(readelf -d "$real" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [ "$soname" = "$lib.so.$MAJOR" ] || die "$real has the SONAME '$soname', expected $lib.so.$MAJOR"
    [ "$(readlink "$B/$lib.so.$MAJOR")" = "$lib.so.$VERSION" ] || die "$B/$lib.so.$MAJOR does not link to $lib.so.$VERSION"
    [ "$(readlink "$B/$lib.so")" = "$lib.so.$MAJOR" ] || die "$B/$lib.so does not link to $lib.so.$MAJOR"
    ok "$lib.so.$VERSION: SONAME $soname, links $lib.so.$MAJOR and $lib.so"
done
readelf -d "$B/liblieflow_lua.so.$VERSION" | grep -q "NEEDED.*\[liblieflow.so.$MAJOR\]" \
    || die "liblieflow_lua.so does not need liblieflow.so.$MAJOR"
ok "liblieflow_lua.so needs liblieflow by its SONAME (liblieflow.so.$MAJOR)"

# the extern functions of the installed headers (the staged copy, build/include/lieflow)
printf '#include <lieflow/lieflow.h>\n#include <lieflow/lieflow_lua.h>\n' > "$dir/all.c"
gcc -std=c11 -aux-info "$dir/aux.txt" -I"$B/include" $(pkg-config --cflags lua5.4) -c "$dir/all.c" -o "$dir/all.o"
grep '/include/lieflow/' "$dir/aux.txt" | grep -v ' static ' | grep -oE '\blf_[A-Za-z0-9_]+ \(' | tr -d ' (' | sort -u > "$dir/declared"
nm -D --defined-only "$B/liblieflow.so" | awk '{print $3}' | sort > "$dir/exported"
extra=$(comm -13 "$dir/declared" "$dir/exported" | tr '\n' ' ')
missing=$(comm -23 "$dir/declared" "$dir/exported" | tr '\n' ' ')
[ -z "$extra" ] || die "liblieflow.so exports functions no public header declares: $extra"
[ -z "$missing" ] || die "public functions liblieflow.so does not export: $missing"
ok "liblieflow.so exports exactly the $(wc -l < "$dir/declared") functions the public headers declare (nm -D = gcc -aux-info)"
lua5.4 tests/api_check.lua "$dir/exported" "$B/include/lieflow" "$ROOT" || die "the installed API is not all documented and tested"
ok "each of the $(wc -l < "$dir/exported") exported functions has a comment in its header and is called by a test (tests/api_check.lua)"
internal=$(cat core/*/*_internal.h | grep -oE '\blf_[a-z0-9_]+ *\(' | tr -d ' (' | sort -u | comm -12 - "$dir/exported" | comm -23 - "$dir/declared" | tr '\n' ' ')
[ -z "$internal" ] || die "internal functions exported: $internal"
for so in "$B/liblieflow_lua.so" "$B/lua/lieflow/core.so"; do
    got=$(nm -D --defined-only "$so" | awk '{print $3}' | sort | tr '\n' ' ')
    [ "$got" = "luaopen_lieflow luaopen_lieflow_core " ] || die "${so#$B/} exports: $got"
    ok "${so#$B/} exports luaopen_lieflow and luaopen_lieflow_core only"
done
if [ -f "$B/lua/lieflow/mpi.so" ]; then
    got=$(nm -D --defined-only "$B/lua/lieflow/mpi.so" | awk '$2 == "T" {print $3}' | tr '\n' ' ')
    [ "$got" = "luaopen_lieflow_mpi " ] || die "lieflow/mpi.so exports the functions: $got"
    ok "lieflow/mpi.so exports luaopen_lieflow_mpi only"
else
    echo "skip - lieflow/mpi.so not built (OpenMPI absent or switched off): its exports not checked"
fi

# a native model under the hidden symbols: a stock lua5.4 loading lieflow/core.so (empty code cache)
if command -v cc > /dev/null; then
    out=$(XDG_CACHE_HOME="$dir/cache" LUA_PATH="$ROOT/scripts/?.lua;$ROOT/scripts/?/init.lua;;" LUA_CPATH="$B/lua/?.so;;" \
          lua5.4 -e 'local lf = require "lieflow"
local b = lf.rigidbody{inertia = {1, 2, 3}, omega = {0.1, 0.2, 1}, compile = "native",
                       potential = function(R) return R[3][3] ^ 2 + math.sin(R[1][2]) end}
local it = lf.integrator("vlv", b, {h = 0.01}); it:step(100)
io.write(b.compiled:match("^native") and "native" or b.compiled, " ", tostring(it.t))')
    [ "$out" = "native 1.0" ] || die "a model compiled to native code under lua5.4 + core.so: $out"
    ok "a model compiled to native code loads and runs (lua5.4 with lieflow/core.so: its symbols hidden)"
fi

# C++
n=0
for h in "$B"/include/lieflow/*.h; do
    printf '#include <lieflow/%s>\n' "${h##*/}" > "$dir/one.cpp"
    "$CXX" -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I"$B/include" $(pkg-config --cflags lua5.4) "$dir/one.cpp" > "$dir/log" 2>&1 \
        || { cat "$dir/log"; die "<lieflow/${h##*/}> does not compile as C++ ($CXX)"; }
    n=$((n + 1))
done
ok "each of the $n installed headers compiles alone as C++ ($CXX -std=c++17 -Wall -Wextra -Werror)"
"$CXX" -std=c++17 -Wall -Wextra -Werror -I"$B/include" $(pkg-config --cflags lua5.4) tests/cxx/client.cpp -o "$dir/client" \
    -L"$B" -llieflow_lua -llieflow $(pkg-config --libs lua5.4) -Wl,-rpath,"$B" > "$dir/log" 2>&1 || { cat "$dir/log"; die "the C++ client does not build"; }
out=$("$dir/client") || die "the C++ client failed: $out"
echo "$out" | sed 's/^/       /'
grep -q '^cxx client: ok$' <<< "$out" || die "the C++ client printed '$out'"
ok "a C++ client ($CXX) links the C API (extern \"C\") and liblieflow_lua, and runs"
echo "abi check: $checks checks passed"
