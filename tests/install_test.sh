#!/usr/bin/env bash
# `make install PREFIX=tmp` (make test-install), then, with what the install message prints:
# - a stock lua5.4 with the printed LUA_PATH/LUA_CPATH can require "lieflow" (from disk);
# - the installed executable works, puts its own module directories after the user's paths, and
#   can load C modules (it exports the Lua API);
# - help() of the installed module shows docs/api.md; the man page is installed and renders cleanly;
# - C programs build with exactly the documented lines (README "Embedding", examples/embed/host.c),
#   shared and static, and run: a program of the C API that uses the inline helpers (needs -lm),
#   and the Lua host example.
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
[ "$out" = "1.000000000000	@$dir/share/lua/5.4/lieflow/run.lua" ] || die "stock lua5.4 printed '$out'"
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
cmp -s "$page" "$ROOT/docs/lieflow.1" || die "the man page is not installed as $page"
ok "the man page is installed as share/man/man1/lieflow.1"
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

# The documented build lines, run exactly as written (in a shell, from the program's directory).
cat > "$dir/prog.c" <<'EOC'
#include <lieflow.h>
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
readme_lines=$(sed -n '/^## Embedding/,/^## /p' "$ROOT/README.md" | grep -E '^cc (prog|host)\.c ' || true)
host_lines=$(sed -n 's/^ \*   \(cc host\.c .*\)$/\1/p' "$ROOT/examples/embed/host.c")
[ "$(echo "$readme_lines" | grep -c '^cc prog.c')" -ge 2 ] || die "README 'Embedding' lists no shared and static build lines for prog.c"
[ "$(echo "$readme_lines" | grep -c '^cc host.c')" -ge 2 ] || die "README 'Embedding' lists no shared and static build lines for host.c"
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
done <<< "$readme_lines
$host_lines"
echo "install test: $checks checks passed"
