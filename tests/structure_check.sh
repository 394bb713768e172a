#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The house's rules (make test-structure): tests/structure.lua checks the includes, the order of the
# folders (the layers block of docs/architecture.md), the binding's libraries and that there is no
# include, call or require cycle; this script runs it, then checks that no function is over 120
# lines: the C of core/ and lua/, the Lua of scripts/lieflow/.
# usage: bash tests/structure_check.sh [ROOT [ALLOW_FILE]]   (default: the checkout, tests/structure_allow.txt)
#
# A function's length counts its lines from the line that names it to its last line, both included.
# - C (lieflow's style, see any file of core/): a function's body opens with `{` in column 0 and
#   closes with `}` in column 0; its name is the identifier before the first `(` of the nearest line
#   above that starts in column 0 with a letter (the signature's first line), __attribute__((...))
#   skipped. Initializers whose `{` stands in column 0 (the line before ends in `=`) are not
#   functions.
# - Lua: `luac5.4 -p -l` lists every function prototype, nested and anonymous ones included, with
#   its first and last line (<file:first,last>); the name is read from the first line
#   (`local function f`, `function M.f`, `M.f = function`, else "<anonymous>").
# The allow-list names functions known to be longer, one `path:function` a line (# comments); each
# may only shrink: an allowed function that is now within the limit fails too (remove its line),
# so that the list never hides a new long function.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "${1:-$HERE/..}" && pwd)"
cd "$ROOT"
allow_file=${2:-tests/structure_allow.txt}
command -v lua5.4 > /dev/null || { echo "structure check: lua5.4 (package lua5.4) not found"; exit 1; }
lua5.4 "$HERE/structure.lua" "$ROOT" || { echo "structure check FAILED"; exit 1; }
LIMIT=120
SHOW=10
command -v luac5.4 > /dev/null || { echo "structure check: luac5.4 (package lua5.4) not found"; exit 1; }
tab=$(mktemp)
trap 'rm -f "$tab"' EXIT

# C: "length<TAB>path:name<TAB>first line"
for f in core/*.h core/*/*.c core/*/*.h lua/*/*.c lua/*/*.h; do
    awk -v file="$f" '
        /^[A-Za-z_]/ && !/^(typedef|struct|enum|union)[ \t][^(]*$/ { sig = $0; sigline = NR }
        /^\{/ {
            if (prev ~ /=[ \t]*$/) { skip = 1; next }
            skip = 0; name = sig
            gsub(/__attribute__ *\(\([^)]*\)\)/, "", name)
            sub(/\(.*/, "", name); sub(/.*[^A-Za-z0-9_]/, "", name)
            start = sigline; open = 1; next
        }
        /^\}/ && open && !skip { printf "%d\t%s:%s\t%d\n", NR - start + 1, file, name, start; open = 0 }
        { prev = $0 }
    ' "$f"
done >> "$tab"

# Lua: the prototypes luac lists (the main chunk, <file:0,0>, is not a function)
for f in scripts/lieflow/*.lua scripts/lieflow/*/*.lua; do
    luac5.4 -p -l "$f" | sed -n 's/^function <[^:]*:\([0-9]*\),\([0-9]*\)>.*/\1 \2/p' |
    while read -r first last; do
        line=$(sed -n "${first}p" "$f")
        name=$(sed -nE 's/.*function[ \t]+([A-Za-z_][A-Za-z0-9_.:]*)[ \t]*\(.*/\1/p;
                        t; s/^[ \t]*(local[ \t]+)?([A-Za-z_][A-Za-z0-9_.:]*)[ \t]*=[ \t]*function.*/\2/p' <<< "$line")
        printf '%d\t%s:%s\t%d\n' $((last - first + 1)) "$f" "${name:-<anonymous>}" "$first"
    done
done >> "$tab"

n_c=$(awk -F'\t' '$2 !~ /\.lua:/' "$tab" | wc -l)
n_lua=$(awk -F'\t' '$2 ~ /\.lua:/' "$tab" | wc -l)
echo "structure: $n_c C functions (core/, lua/), $n_lua Lua functions (scripts/lieflow/); the longest:"
sort -t$'\t' -k1,1nr "$tab" | awk -F'\t' -v S="$SHOW" 'NR <= S { split($2, a, ":"); printf "  %4d  %s:%d %s\n", $1, a[1], $3, a[2] }'

allowed=$(sed -e 's/#.*//' -e 's/[ \t]*$//' -e '/^$/d' "$allow_file" 2>/dev/null || true)
fail=0
while IFS=$'\t' read -r len key first; do
    if grep -qxF -- "$key" <<< "$allowed"; then
        echo "  allowed: $key ($len lines, listed in $allow_file)"
    else
        echo "FAIL: $key at line $first is $len lines (limit $LIMIT): split it"
        fail=1
    fi
done < <(awk -F'\t' -v L="$LIMIT" '$1 > L' "$tab" | sort -t$'\t' -k1,1nr)
while IFS= read -r key; do
    [ -n "$key" ] || continue
    if ! awk -F'\t' -v k="$key" -v L="$LIMIT" '$2 == k && $1 > L { found = 1 } END { exit !found }' "$tab"; then
        echo "FAIL: $allow_file lists $key, which is not over $LIMIT lines (or no longer exists): remove the line"
        fail=1
    fi
done <<< "$allowed"
[ "$fail" -eq 0 ] || { echo "structure check FAILED"; exit 1; }
echo "structure: $((n_c + n_lua)) functions, none over $LIMIT lines outside the $(grep -c . <<< "$allowed" || true) allowed"
