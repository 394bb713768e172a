#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `make install PREFIX=tmp` (make test-install), then, with what the install message prints:
# - a stock lua5.4 with the printed LUA_PATH/LUA_CPATH can require "lieflow" (from disk);
# - the installed executable works, puts its own module directories after the user's paths, and
#   can load C modules (it exports the Lua API);
# - help() of the installed module shows docs/api.md; the man page is installed and renders cleanly;
# - C programs build with exactly the documented lines (docs/embedding.md, examples/embed/host.c;
#   the build lines of the README's "## Embedding in five lines" must be among those of docs/embedding.md),
#   shared and static, and run: a program of the C API that uses the inline helpers (needs -lm),
#   and the Lua host example;
# - the headers are installed as <lieflow/NAME.h> and cannot collide with a system header: every one
#   compiles on its own (gcc and clang), and a client that includes glibc's <error.h> and
#   <lieflow/lieflow.h> together (both orders) builds with the documented line and calls both.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
unset LUA_INIT LUA_INIT_5_4 LUA_PATH_5_4 LUA_CPATH_5_4
checks=0
ok() { checks=$((checks + 1)); echo "ok   - $1"; }
die() { echo "install test FAILED: $1"; exit 1; }

make -C "$ROOT" --no-print-directory install PREFIX="$dir" > "$dir/install.log"
grep -q "LD_LIBRARY_PATH=$dir/lib" "$dir/install.log" && grep -q -- "-Wl,-rpath" "$dir/install.log" \
    || die "the install message does not say how liblieflow.so is found (rpath or LD_LIBRARY_PATH)"
ok "the install message says how the shared library is found (rpath, LD_LIBRARY_PATH)"
eval "$(grep '^  export' "$dir/install.log")"   # LUA_PATH, LUA_CPATH, PKG_CONFIG_PATH as printed

out=$(lua5.4 -e 'local lf = require "lieflow"; local R = lf.so3.exp{0, 0, 1}; print(("%.12f"):format(lf.so3.log(R).z), debug.getinfo(lf.run, "S").source)')
[ "$out" = "1.000000000000	@$dir/share/lua/5.4/lieflow/run/init.lua" ] || die "stock lua5.4 printed '$out'"
ok "a stock lua5.4 requires the installed module from disk"

"$dir/bin/lieflow" -e 'assert(lf.so3.angle(lf.so3.exp{0.3, 0, 0}) > 0.29)' || die "installed lieflow"
ok "the installed executable runs"
out=$(env LUA_PATH='/u/?.lua' LUA_CPATH='/u/?.so' "$dir/bin/lieflow" -e 'print(package.path) print(package.cpath)')
[ "$out" = "/u/?.lua;$dir/share/lua/5.4/?.lua;$dir/share/lua/5.4/?/init.lua
/u/?.so;$dir/lib/lua/5.4/?.so" ] || die "installed lieflow paths: '$out'"
ok "the installed executable adds its own module directories after the user's LUA_PATH/LUA_CPATH"
# it exports the Lua API: it can load C modules, e.g. the installed lieflow/core.so itself
"$dir/bin/lieflow" -e 'package.preload["lieflow.core"] = nil; package.loaded["lieflow.core"] = nil
local f = assert(package.searchpath("lieflow.core", package.cpath), "core.so not on the cpath")
assert(f:find("core.so", 1, true)); assert(require("lieflow.core").version == lf.version)' \
    || die "the installed executable cannot load the C module"
ok "the installed executable loads a C module (lieflow/core.so)"

# The documentation: help() of the installed module, the man page (installed, found by man, renders
# without warnings, lists every option of `lieflow -h`).
out=$(lua5.4 -e 'local lf = require "lieflow"; io.write((require("lieflow.help").text(lf.run):match("^[^\n]*")))')
[ "$out" = "### lf.run(system, opts) -> trajectory" ] || die "help(lf.run) of the installed module printed '$out'"
ok "help(lf.run) of the installed module shows its entry of api.md"
page="$dir/share/man/man1/lieflow.1"
VERSION=$(cat "$ROOT/VERSION")
sed -e "s/@VERSION@/$VERSION/g" "$ROOT/docs/lieflow.1" | cmp -s - "$page" || die "the man page (docs/lieflow.1 with the version $VERSION) is not installed as $page"
ok "the man page is installed as share/man/man1/lieflow.1 (its version from VERSION)"
if command -v man > /dev/null; then
    found=$(MANPATH="$dir/share/man" man -w lieflow 2>&1) || true
    [ "$found" = "$page" ] || die "man -w lieflow with MANPATH=$dir/share/man found '$found'"
    ok "man finds it (MANPATH=PREFIX/share/man)"
fi
groff -man -Tascii -P-cbou -ww "$page" > "$dir/man.txt" 2> "$dir/man.err" || die "groff failed on the man page"
[ ! -s "$dir/man.err" ] || { cat "$dir/man.err"; die "groff warns about the man page"; }
for section in NAME SYNOPSIS DESCRIPTION OPTIONS ENVIRONMENT FILES "EXIT STATUS" EXAMPLES "SEE ALSO"; do
    grep -qx "$section" "$dir/man.txt" || die "the man page has no section $section"
done
ok "the man page renders without warnings (groff -man -ww) and has its sections"
synopsis=$(sed -n '/^SYNOPSIS$/,/^DESCRIPTION$/p' "$dir/man.txt")
options=$(sed -n '/^OPTIONS$/,/^ENVIRONMENT$/p' "$dir/man.txt")
missing=""
# the options of `lieflow -h`: "  -e stat ...", "  -h, --help  ...", "  --version ..."
for opt in $("$dir/bin/lieflow" -h | awk '/^  -/ { sub(/,$/, "", $1); print $1; if ($2 ~ /^--/) print $2 }'); do
    # (here-strings, not `echo | grep -q`: under pipefail, grep -q leaving early kills echo with
    # SIGPIPE and the pipeline fails; it made this check fail once in CI)
    grep -q -- "\[$opt[] ]\|\[$opt\]\| $opt[] ]" <<< "$synopsis" || missing="$missing $opt(SYNOPSIS)"
    grep -q -- "^       \(-[^ ]*, \)\{0,1\}$opt\( \|,\|\$\)" <<< "$options" || missing="$missing $opt(OPTIONS)"
done
[ -z "$missing" ] || die "the man page does not list these options of lieflow -h:$missing"
ok "the man page's SYNOPSIS and OPTIONS list every option of lieflow -h"

# The shared libraries as a packager installs them: the real file, the SONAME link, the .so link;
# the .pc files carry the version.
for lib in liblieflow liblieflow_lua; do
    [ -f "$dir/lib/$lib.so.$VERSION" ] && [ "$(readlink "$dir/lib/$lib.so.${VERSION%%.*}")" = "$lib.so.$VERSION" ] \
        && [ "$(readlink "$dir/lib/$lib.so")" = "$lib.so.${VERSION%%.*}" ] || die "$lib.so links: $(ls -l "$dir/lib" | grep "$lib.so")"
    readelf -d "$dir/lib/$lib.so.$VERSION" | grep -q "SONAME.*\[$lib.so.${VERSION%%.*}\]" || die "$lib.so.$VERSION has no SONAME $lib.so.${VERSION%%.*}"
done
[ "$(pkg-config --modversion lieflow)" = "$VERSION" ] && [ "$(pkg-config --modversion lieflow-lua)" = "$VERSION" ] \
    || die "pkg-config --modversion: $(pkg-config --modversion lieflow lieflow-lua | tr '\n' ' ')"
ok "lib/liblieflow{,_lua}.so.$VERSION with SONAMEs and links (.so.${VERSION%%.*}, .so); pkg-config --modversion $VERSION"

# The documented build lines, run exactly as written (in a shell, from the program's directory).
cat > "$dir/prog.c" <<'EOC'
#include <lieflow/lieflow.h>
#include <stdio.h>
int main(void)
{
    double x[3] = {0, 0, 1}, R[9];
    lf_so3_exp(x, R);
    printf("%.6f %.6f\n", R[3], lf_v3_norm(x)); /* lf_v3_norm is inline: sqrt from -lm */
    return 0;
}
EOC
cp "$ROOT/examples/embed/host.c" "$dir/host.c"
doc_lines=$(grep -E '^cc (prog|host)\.c ' "$ROOT/docs/embedding.md" || true)
host_lines=$(sed -n 's/^ \*   \(cc host\.c .*\)$/\1/p' "$ROOT/examples/embed/host.c")
[ "$(echo "$doc_lines" | grep -c '^cc prog.c')" -ge 2 ] || die "docs/embedding.md lists no shared and static build lines for prog.c"
[ "$(echo "$doc_lines" | grep -c '^cc host.c')" -ge 2 ] || die "docs/embedding.md lists no shared and static build lines for host.c"
readme_lines=$(sed -n '/^## Embedding/,/^## /p' "$ROOT/README.md" | grep -E '^cc (prog|host)\.c ' || true)
[ -n "$readme_lines" ] || die "the README's '## Embedding' section shows no build line"
while IFS= read -r line; do
    grep -qxF -- "$line" <<< "$doc_lines" || die "the README's build line is not one of docs/embedding.md (which this test runs): $line"
done <<< "$readme_lines"
ok "the README's build lines ($(grep -c . <<< "$readme_lines")) are among those of docs/embedding.md"
[ "$(echo "$host_lines" | grep -c '^cc host.c')" -ge 2 ] || die "examples/embed/host.c documents no shared and static build lines"
while IFS= read -r line; do
    [ -n "$line" ] || continue
    rm -f "$dir/prog" "$dir/host"
    (cd "$dir" && bash -c "$line") > "$dir/build.log" 2>&1 || { cat "$dir/build.log"; die "documented line failed: $line"; }
    [ ! -s "$dir/build.log" ] || { cat "$dir/build.log"; die "documented line printed warnings: $line"; }
    prog=$(echo "$line" | sed -E 's/^cc ([a-z]+)\.c .*/\1/')
    out=$(env -u LD_LIBRARY_PATH "$dir/$prog") || die "$prog built by '$line' does not run: $out"
    case $prog in
        prog) [ "$out" = "0.841471 1.000000" ] || die "$prog printed '$out'" ;;
        host) grep -q '^embed: ok$' <<< "$out" || die "$prog printed '$out'" ;;
    esac
    if grep -q static_libs <<< "$line"; then
        ! readelf -d "$dir/$prog" | grep 'liblieflow' > /dev/null || die "'$line' links liblieflow dynamically"
        kind=static
    else
        readelf -d "$dir/$prog" | grep 'NEEDED.*liblieflow' > /dev/null || die "'$line' does not use liblieflow.so"
        kind=shared
    fi
    ok "documented line ($kind) builds and runs $prog.c: $line"
    if [ "$prog" = host ]; then # the whole module from the library: no Lua file installed, empty paths
        mv "$dir/share/lua" "$dir/share/lua.away"
        out=$(cd "$dir" && env -u LD_LIBRARY_PATH LUA_PATH= LUA_CPATH= "$dir/host") || die "host without share/lua: $out"
        mv "$dir/share/lua.away" "$dir/share/lua"
        grep -q '^embed: ok$' <<< "$out" || die "host without share/lua printed '$out'"
        ok "  ... and runs lf.run + JSON with share/lua moved away and LUA_PATH, LUA_CPATH empty"
    fi
done <<< "$doc_lines
$host_lines"

# The README's "embedding in five lines": its ```c block, in a main() with the three includes the
# README names, built with the README's build line(s), run with no Lua file on disk. It calls only
# luaopen_lieflow, so with the linker's --as-needed the program does not list liblieflow.so itself:
# liblieflow_lua.so must find it (its RUNPATH $ORIGIN).
five=$(sed -n '/^## Embedding/,/^## /p' "$ROOT/README.md" | sed -n '/^```c$/,/^```$/p' | sed '1d;$d')
[ "$(grep -c . <<< "$five")" -eq 5 ] || die "the README's '## Embedding' section has no C block of five lines"
{
    printf '#include <lauxlib.h>\n#include <lualib.h>\n#include <lieflow/lieflow_lua.h>\n#include <stdio.h>\n'
    printf 'int main(void)\n{\n%s\n' "$five"
    printf '    if (lua_gettop(L) != 0) { fprintf(stderr, "%%s\\n", lua_tostring(L, -1)); return 1; }\n'
    printf '    puts("five lines: ok");\n    lua_close(L);\n    return 0;\n}\n'
} > "$dir/host.c"
while IFS= read -r line; do
    rm -f "$dir/host"
    (cd "$dir" && bash -c "$line") > "$dir/build.log" 2>&1 || { cat "$dir/build.log"; die "the README's line failed on its five lines: $line"; }
    mv "$dir/share/lua" "$dir/share/lua.away"
    out=$(cd "$dir" && env -u LD_LIBRARY_PATH LUA_PATH= LUA_CPATH= "$dir/host" 2>&1) || { mv "$dir/share/lua.away" "$dir/share/lua"; die "the README's five lines do not run: $out"; }
    mv "$dir/share/lua.away" "$dir/share/lua"
    [ "$out" = "five lines: ok" ] || die "the README's five lines printed '$out'"
    ok "the README's five lines build with '$line' and run lf.run with no Lua file on disk"
done <<< "$(grep '^cc host\.c ' <<< "$readme_lines")"

# The installed headers. PREFIX/include holds nothing but lieflow/ and the Cflags are
# -IPREFIX/include, so a client's #include <NAME.h> never reaches a lieflow header: those are only
# reachable as <lieflow/NAME.h>, and no installed header name (error.h, system.h, method.h, ...)
# can collide with a system header or another library's. Inside lieflow/ the headers include each
# other with quotes ("so3.h"), which gcc and clang look up first in the including header's own
# directory (checked below by compiling each one alone with both). Their include guards are LF_ or
# LIEFLOW_ names: glibc's error.h is guarded by _ERROR_H, and a shared guard would drop one of the two.
[ "$(ls -A "$dir/include")" = "lieflow" ] || die "PREFIX/include holds more than lieflow/: $(ls -A "$dir/include" | tr '\n' ' ')"
cflags=$(echo $(pkg-config --cflags lieflow)) # (echo: without pkg-config's trailing space)
[ "$cflags" = "-I$dir/include" ] || die "pkg-config --cflags lieflow is '$cflags'"
cflags=" $(echo $(pkg-config --cflags lieflow-lua)) "
[[ "$cflags" == *" -I$dir/include "* && "$cflags" != *"-I$dir/include/"* ]] \
    || die "pkg-config --cflags lieflow-lua is '$cflags'"
ok "headers only in PREFIX/include/lieflow/, Cflags -IPREFIX/include (lieflow, lieflow-lua)"
nh=0
for h in "$dir"/include/lieflow/*.h; do
    grep -qE '^#ifndef (LF_[A-Z0-9_]+|LIEFLOW(_[A-Z0-9_]+)?)_H$' <<< "$(grep -m1 '^#ifndef' "$h")" || die "$h: its include guard is not LF_*_H, LIEFLOW_H or LIEFLOW_*_H"
    nh=$((nh + 1))
done
# exactly the public headers: those core/lieflow.h includes, itself, lieflow_lua.h and the version
expected=$( { echo lieflow.h; echo lieflow_lua.h; echo lieflow_version.h
              sed -n 's/^#include "[a-z]*\/\([a-z_0-9]*\.h\)".*/\1/p' "$ROOT/core/lieflow.h"; } | sort -u | tr '\n' ' ')
got=$(cd "$dir/include/lieflow" && ls *.h | sort | tr '\n' ' ')
[ "$got" = "$expected" ] || die "PREFIX/include/lieflow holds '$got', expected the public headers '$expected'"
ok "PREFIX/include/lieflow holds the $nh public headers (those core/lieflow.h includes) and no internal one"
compilers=""
for c in gcc clang; do command -v $c > /dev/null && compilers="$compilers $c"; done
for c in $compilers; do
    for h in "$dir"/include/lieflow/*.h; do
        printf '#include <lieflow/%s>\n' "${h##*/}" > "$dir/one.c"
        $c -std=c11 -Wall -Wextra -Werror -fsyntax-only $(pkg-config --cflags lieflow-lua) "$dir/one.c" > "$dir/one.log" 2>&1 \
            || { cat "$dir/one.log"; die "<lieflow/${h##*/}> alone does not compile with $c"; }
    done
done
ok "each of the $nh installed headers compiles alone as <lieflow/NAME.h> (${compilers# }: -std=c11 -Wall -Wextra -Werror)"

# A client of glibc's <error.h> (error(), error_message_count: declared by glibc's header only) and
# of <lieflow/lieflow.h> (which includes lieflow's own error.h: lf_error, lf_error_set), in both
# orders, built with the documented shared line for prog.c by each compiler (no warning allowed: an
# undeclared error() would be one) and run.
cat > "$dir/errclient.c" <<'EOC'
#include <error.h>           /* glibc's */
#include <lieflow/lieflow.h> /* includes lieflow's error.h */
#include <stdio.h>
int main(void)
{
    double x[3] = {0, 0, 1}, R[9];
    lf_error e;
    lf_so3_exp(x, R);
    int code = lf_error_set(&e, LF_EINVAL, "lieflow's error.h");
    error(0, 0, "glibc's error.h and %s", lf_status_name(code));
    printf("%u %.6f %s\n", error_message_count, R[3], e.msg);
    return 0;
}
EOC
sed -e '1{h;d}' -e '2{G}' "$dir/errclient.c" > "$dir/errclient2.c" # the two #include lines swapped
shared_line=$(grep -m1 -- '^cc prog\.c .*rpath' <<< "$doc_lines")
for c in $compilers; do
    for src in errclient errclient2; do
        line=$(sed -e "s/^cc prog\.c -o prog /$c $src.c -o $src /" <<< "$shared_line")
        (cd "$dir" && bash -c "$line") > "$dir/build.log" 2>&1 || { cat "$dir/build.log"; die "'$line' failed"; }
        [ ! -s "$dir/build.log" ] || { cat "$dir/build.log"; die "'$line' printed warnings"; }
        out=$(env -u LD_LIBRARY_PATH "$dir/$src" 2> "$dir/stderr.txt") || die "$src does not run"
        [ "$out" = "1 0.841471 lieflow's error.h" ] || die "$src printed '$out'"
        [ "$(cat "$dir/stderr.txt")" = "$dir/$src: glibc's error.h and LF_EINVAL" ] \
            || die "$src: glibc's error() printed '$(cat "$dir/stderr.txt")'"
    done
done
ok "glibc's <error.h> and <lieflow/lieflow.h> together, both orders, built by the documented line (${compilers# }), call both"
echo "  (the client: $line; it printed '$out', and on stderr '$(cat "$dir/stderr.txt")')"
echo "install test: $checks checks passed"
