#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Tests of the lieflow executable (make test-repl): piped REPL sessions (`lieflow -i` without a
# terminal), script mode as in `lua` (arg, ..., -e, -l, -, --version, --help, exit codes), Ctrl-C,
# and — when tmux is installed — the readline REPL in a terminal: Tab completion, Ctrl-C at the
# prompt and during a computation, multi-line input, history.
# usage: bash tests/repl_test.sh path/to/lieflow
set -u

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
    echo "usage: bash tests/repl_test.sh path/to/lieflow (an executable)" >&2
    exit 2
fi
LF="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/lieflow-repl-test.XXXXXX")"
VRE="$(sed 's/\./\\./g' "$(dirname "$0")/../VERSION")" # the version (VERSION) as a regular expression
SOCK="lieflow-repl-test-$$-0"  # one tmux server per REPL start (see start_repl)
starts=0
cleanup() {
    local n
    if command -v tmux >/dev/null 2>&1; then
        for n in $(seq 0 "$starts"); do tmux -L "lieflow-repl-test-$$-$n" kill-server >/dev/null 2>&1; done
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT
export HOME="$TMP/home"   # history goes here, not into the real home
export INPUTRC=/dev/null  # no user readline settings
mkdir -p "$HOME"

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   - $1"; }
bad() {  # bad DESCRIPTION FILE...: report a failure and show the files involved
    local f
    fail=$((fail + 1))
    echo "FAIL - $1"
    shift
    for f in "$@"; do
        echo "  --- $(basename "$f"):"
        sed 's/^/  | /' "$f" | head -40
    done
}
check() {  # check DESCRIPTION COMMAND... : ok if the command succeeds
    local desc=$1
    shift
    if "$@"; then ok "$desc"; else bad "$desc" "$TMP/out" "$TMP/err"; fi
}
has_line() { grep -qFx -- "$1" "$TMP/out"; }    # an output line equals $1
has() { grep -qF -- "$1" "$TMP/${2:-out}"; }     # output (or err) contains $1
rc_is() { [ "$rc" -eq "$1" ]; }

# Pipe a session into `lieflow -i`; $TMP/out gets the output without the version line and the
# prompt lines (each prompt is followed by the echo of the line read, as with lua5.4 -i).
session() {
    printf '%s\n' "$1" | "$LF" -i >"$TMP/raw" 2>"$TMP/err"
    rc=$?
    sed -E -e '1{/^lieflow /d}' -e '/^(>|>>) /d' "$TMP/raw" >"$TMP/out"
}
# Run lieflow with arguments (stdin from $STDIN if set, else /dev/null).
run() {
    "$LF" "$@" <"${STDIN:-/dev/null}" >"$TMP/out" 2>"$TMP/err"
    rc=$?
}

# ---------------------------------------------------------------- piped REPL sessions
echo "# piped sessions (lieflow -i without a terminal)"
session '1+1'
check "bare expression 1+1 prints 2" has_line 2
check "-i exits 0 at end of input" rc_is 0
if head -1 "$TMP/raw" | grep -q "^lieflow $VRE — Lua"' 5\.4\.[0-9]*  Copyright'; then ok "version line first in interactive mode"
else bad "version line first in interactive mode" "$TMP/raw"; fi
check "each line read is echoed after its prompt (as lua5.4 -i)" grep -qFx '> 1+1' "$TMP/raw"

session 'function double(x)
  local y = 2 * x
  return y
end
double(21)'
check "multi-line function definition, then a call prints 42" has_line 42

session 'for i = 1, 2 do
print(i * 111)
end'
check "multi-line for loop runs after its end" bash -c "grep -qx 111 '$TMP/out' && grep -qx 222 '$TMP/out'"

session 'error("boom")
local t = nil; t.x = 1
40 + 2'
check "runtime error message on stderr" has "boom" err
check "runtime error prints a traceback" has "stack traceback:" err
check "indexing nil reports the error" has "attempt to index a nil value" err
check "session goes on after errors" has_line 42

session 'type(lf)
require("lieflow") == lf'
check "lf is a table in the REPL" has_line table
check "require 'lieflow' returns lf" has_line true

session '{1, 2, 3}
{b = {c = 1}, a = "x", [10] = true}
{{{{{{1}}}}}}
t = {}; t.self = t
t
s = {1}; return {a = s, b = s}
(function() local r = {} for i = 1, 100 do r[i] = i end return r end)()
{}'
check "array literal pretty printed" has_line "{1, 2, 3}"
check "table keys sorted, strings quoted, nested" has_line '{[10] = true, a = "x", b = {c = 1}}'
check "nesting depth limit" has '{…}'
check "cycle detection" has_line "{self = {<cycle>}}"
check "a table shared, not a cycle, prints in full" has_line "{a = {1}, b = {1}}"
check "long table truncated with …" bash -c "grep -q '^{1, 2, 3, .*, …}\$' '$TMP/out'"
check "empty table" has_line "{}"

session '1, "two", nil
"raw string"
=6*7'
check "several values tab-separated" has_line "$(printf '1\ttwo\tnil')"
check "top-level string printed raw" has_line "raw string"
check "=expr is return expr" has_line 42

session 'x = 5'
check "a statement prints nothing" bash -c "[ -z \"\$(tr -d '[:space:]' < '$TMP/out')\" ]"

session 'lf.vec3{1, 2, 3}'
if [ "$rc" -eq 0 ] && grep -q '1.*2.*3' "$TMP/out" && ! has "error" err; then
    ok "vec3 printed with its components"
else
    bad "vec3 printed with its components" "$TMP/raw" "$TMP/err"
fi

session 'while true do'
check "incomplete chunk at end of input reports <eof>" has "<eof>" err

session 'recs = {{name = "a", n = 1, s = "xx"}, {name = "bbb", n = 22, s = "y", flag = true}}
recs
{{1, 2}, {3}}
{{a = 1}, 5}
{{a = 1}, {[1] = "x"}}'
cat >"$TMP/expected" <<'EOT'
#  name   n  s   flag
1  a      1  xx
2  bbb   22  y   true
EOT
if [ "$(head -3 "$TMP/out")" = "$(cat "$TMP/expected")" ]; then
    ok "an array of records prints as an aligned table (name first, numbers right-aligned)"
else
    bad "an array of records prints as an aligned table (name first, numbers right-aligned)" "$TMP/out" "$TMP/expected"
fi
check "an array of arrays prints inline" has_line "{{1, 2}, {3}}"
check "an array with a non-table prints inline" has_line "{{a = 1}, 5}"
check "records with an array part print inline" has_line '{{a = 1}, {"x"}}'

session 'm = {{name = "a", R = lf.so3.exp{0, 0, 0}, v = lf.vec3{1, 2, 3}}}
m'
check "records holding a vec3 and a mat3: one line per cell" \
    has_line "1  a     vec3{1, 2, 3}  mat3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}"

session 'lf.methods()
print("count", #lf.methods())'
n_methods="$(sed -n 's/^count\t//p' "$TMP/out")"
n_rows="$(grep -Ec '^ *[0-9]+  [a-z][a-z0-9_]* ' "$TMP/out")"
if grep -Eq '^ *#  name +title +order ' "$TMP/out" && [ -n "$n_methods" ] && [ "$n_rows" = "$n_methods" ]; then
    ok "lf.methods() prints as a table: a header, one row per method ($n_rows)"
else
    bad "lf.methods() prints as a table: a header, one row per method ($n_rows rows, $n_methods methods)" "$TMP/out"
fi

session 'print = function(...) io.write("P", select("#", ...), ":", tostring((...)), "\n") end
1, 2
{1}'
check "results go through a replaced global print" has_line "P2:1"
check "tables too (no pretty printing then)" bash -c "grep -q '^P1:table: ' '$TMP/out'"

# ---------------------------------------------------------------- script mode
echo "# script mode"
cat >"$TMP/args.lua" <<'EOF'
print("arg0", arg[0])
print("arg1", arg[1], arg[2], #arg)
print("dots", select("#", ...), ...)
print("lf", type(lf))
print("argm1", arg[-1])
print("argm2", arg[-2])
EOF
run "$TMP/args.lua" one two
check "script: arg[0] is the script" has_line "$(printf 'arg0\t%s' "$TMP/args.lua")"
check "script: arg[1], arg[2], #arg" has_line "$(printf 'arg1\tone\ttwo\t2')"
check "script: ... are the arguments" has_line "$(printf 'dots\t2\tone\ttwo')"
check "script: lf is a global" has_line "$(printf 'lf\ttable')"
check "script: exit code 0" rc_is 0
check "script: arg[-1] is the interpreter" has_line "$(printf 'argm1\t%s' "$LF")"

run -e 'x = 1' "$TMP/args.lua" a
check "script: arg[-2], arg[-1] are the options before the script" \
    bash -c "grep -qFx -- \"\$(printf 'argm2\t-e')\" '$TMP/out' && grep -qFx -- \"\$(printf 'argm1\tx = 1')\" '$TMP/out'"

run -e 'print(6 * 7)' -e 'print("second")'
check "-e runs code" has_line 42
check "-e may repeat, in order" bash -c "[ \"\$(tr '\n' ' ' < '$TMP/out')\" = '42 second ' ]"
check "-e exit code 0" rc_is 0

printf 'print("from stdin", ...)\n' >"$TMP/stdin.lua"
STDIN="$TMP/stdin.lua" run - a b
check "'-' reads the chunk from stdin with arguments" has_line "$(printf 'from stdin\ta\tb')"
STDIN="$TMP/stdin.lua" run
check "no arguments and stdin not a terminal: runs stdin" has_line "from stdin"

mkdir -p "$TMP/mods"
printf 'return { answer = 42 }\n' >"$TMP/mods/mymod.lua"
LUA_PATH="$TMP/mods/?.lua;;" run -l mymod -e 'print(mymod.answer)'
check "-l MOD requires MOD into a global" has_line 42
LUA_PATH="$TMP/mods/?.lua;;" run -l m=mymod -e 'print(m.answer, mymod)'
check "-l g=MOD names the global" has_line "$(printf '42\tnil')"
run -l no_such_module_xyz
check "-l of a missing module fails with exit 1" rc_is 1

run --version
check "--version format" bash -c "grep -Eqx 'lieflow $VRE — Lua 5\.4\.[0-9]+  Copyright \(C\) .*PUC-Rio' '$TMP/out'"
check "--version exit code 0" rc_is 0
run -v -e 'print("went on")'
check "-v prints the version line and goes on" bash -c "[ \"\$(sed -n 2p '$TMP/out')\" = 'went on' ] && [ $rc -eq 0 ]"

run --help
missing=""
for opt in "  -e stat " "  -i " "  -l mod " "  -l g=mod " "  -W " "--version " "--help " "  -- " "  - "; do
    grep -qF -- "$opt" "$TMP/out" || missing="$missing '$opt'"
done
if [ -z "$missing" ] && [ "$rc" -eq 0 ]; then ok "--help lists all options"
else bad "--help lists all options (missing:$missing)" "$TMP/out"; fi

printf 'local function inner() error("script failed here") end\ninner()\n' >"$TMP/fail.lua"
run "$TMP/fail.lua"
check "erroring script: exit code 1" rc_is 1
check "erroring script: argv[0] + message on stderr" \
    bash -c "head -1 '$TMP/err' | grep -qF '$LF: $TMP/fail.lua:1: script failed here'"
check "erroring script: traceback on stderr" has "stack traceback:" err

printf 'x = = 1\n' >"$TMP/syntax.lua"
run "$TMP/syntax.lua"
check "syntax error: exit code 1" rc_is 1
run "$TMP/no_such_script.lua"
check "missing script: exit code 1 and message" bash -c "[ $rc -eq 1 ] && grep -q 'cannot open' '$TMP/err'"
run -e 'error("e failed")'
check "-e error: exit code 1 with message" bash -c "[ $rc -eq 1 ] && grep -qF '$LF: (command line):1: e failed' '$TMP/err'"
run -x
check "unknown option: exit code 1" bash -c "[ $rc -eq 1 ] && grep -q \"unrecognized option '-x'\" '$TMP/err'"
run -e
check "-e without argument: exit code 1" bash -c "[ $rc -eq 1 ] && grep -q \"'-e' needs argument\" '$TMP/err'"
run -e 'os.exit(3)'
check "os.exit(3) gives exit code 3" rc_is 3

printf 'x = 7\n' >"$TMP/setx.lua"
printf 'x * 6\n' >"$TMP/in.txt"
STDIN="$TMP/in.txt" run -i "$TMP/setx.lua"
sed -E -i -e '1{/^lieflow /d}' -e '/^(>|>>) /d' "$TMP/out"
check "-i enters the REPL after the script" has_line 42

# ---------------------------------------------------------------- Ctrl-C in script mode
echo "# Ctrl-C"
# sigint_case LABEL CODE: CODE runs forever; one SIGINT after 0.5 s must end it with "interrupted!"
sigint_case() {
    "$LF" -e "$2" >"$TMP/out" 2>"$TMP/err" &
    pid=$!
    sleep 0.5
    kill -INT "$pid" 2>/dev/null
    for i in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        bad "SIGINT stops $1 (still running after 10 s)" "$TMP/err"
    else
        wait "$pid"
        rc=$?
        if [ "$rc" -ne 0 ] && has "interrupted!" err; then ok "SIGINT stops $1 with an 'interrupted!' error"
        else bad "SIGINT stops $1 with an 'interrupted!' error (exit code $rc)" "$TMP/err"; fi
    fi
}
sigint_case "a running Lua loop" 'while true do end'
sigint_case "a long integration inside C" 'local b = lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7, 0}, omega = {0, 0, 1}, potential = lf.potential.stress{}}
lf.integrator("vlv", b, {h = 0.1}):step(4000000000)'

wait_out() {  # wait_out LINE [FILE]: wait up to 10 s until a line of $TMP/out (or FILE) equals LINE
    local i
    for i in $(seq 100); do
        grep -qFx -- "$1" "${2:-$TMP/out}" && return 0
        sleep 0.1
    done
    return 1
}
wait_exit() {  # wait_exit PID: wait up to 10 s for PID to end; rc = its exit code (or 999)
    local i
    for i in $(seq 100); do
        kill -0 "$1" 2>/dev/null || { wait "$1"; rc=$?; return 0; }
        sleep 0.1
    done
    kill -9 "$1" 2>/dev/null
    wait "$1" 2>/dev/null
    rc=999
    return 1
}

# Each Ctrl-C interrupts Lua code, also after a pcall caught the previous one (lua would die at
# the second: its handler stays SIG_DFL until the chunk ends).
"$LF" -e 'for i = 1, 2 do pcall(function() print("loop", i) io.stdout:flush() while true do end end) end
print("survived")' >"$TMP/out" 2>"$TMP/err" &
pid=$!
wait_out "$(printf 'loop\t1')" && sleep 0.3 && kill -INT "$pid"
wait_out "$(printf 'loop\t2')" && sleep 0.3 && kill -INT "$pid"
wait_exit "$pid"
if [ "$rc" -eq 0 ] && has_line survived; then ok "a second Ctrl-C interrupts Lua code again (pcall loop survives)"
else bad "a second Ctrl-C interrupts Lua code again (pcall loop survives; exit code $rc)" "$TMP/out" "$TMP/err"; fi

# One Ctrl-C stops the whole chunk: the cancel flag stays set until the chunk ends, so a second
# long integration that Lua code starts after catching the interrupt with pcall stops too.
"$LF" -e 'local it = lf.integrator("vlv", lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7, 0}, omega = {0, 0, 1}, potential = lf.potential.stress{}}, {h = 0.1})
print("go") io.stdout:flush()
print("first", pcall(it.step, it, 4000000000))
print("second", pcall(it.step, it, 4000000000))' >"$TMP/out" 2>"$TMP/err" &
pid=$!
wait_out go && sleep 0.3 && kill -INT "$pid"
if wait_exit "$pid"; then ok "one Ctrl-C stops the chunk, also a run started after a pcall caught it (exit code $rc)"
else bad "one Ctrl-C stops the chunk, also a run started after a pcall caught it (still running after 10 s)" "$TMP/out" "$TMP/err"; fi

# C code that never returns to Lua: the first Ctrl-C cannot stop it, the second ends the process.
"$LF" -e 'print("start") io.stdout:flush() string.find(string.rep("a", 200000), ".*b")' >"$TMP/out" 2>"$TMP/err" &
pid=$!
wait_out start && sleep 0.3 && kill -INT "$pid"
sleep 0.5
if kill -0 "$pid" 2>/dev/null; then alive=yes; else alive=no; fi
kill -INT "$pid" 2>/dev/null
wait_exit "$pid"
if [ "$alive" = yes ] && [ "$rc" -eq 130 ]; then ok "stuck C code: the first Ctrl-C waits, the second ends the process (as lua)"
else bad "stuck C code: the first Ctrl-C waits, the second ends the process (alive after the first: $alive, exit code $rc)" "$TMP/err"; fi

# The cancel flag is cleared before each REPL line: after an interrupted integration the next
# line integrates normally.
{
    printf '%s\n' 'it = lf.integrator("vlv", lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7, 0}, omega = {0, 0, 1}, potential = lf.potential.stress{}}, {h = 0.1})'
    printf '%s\n' 'print("go") io.stdout:flush() it:step(4000000000)'
    sleep 2
    printf '%s\n' 't0 = it.t; it:step(10); print("after", it.t - t0)'
} | "$LF" -i >"$TMP/out" 2>"$TMP/err" &
pid=$!
wait_out go && sleep 0.5 && kill -INT "$pid"
wait_exit "$pid"
if [ "$rc" -eq 0 ] && grep -q "interrupted" "$TMP/err" && has "$(printf 'after\t1.0')"; then
    ok "Ctrl-C stops an integration; the next REPL line integrates again (cancel flag cleared)"
else
    bad "Ctrl-C stops an integration; the next REPL line integrates again (cancel flag cleared; exit code $rc)" "$TMP/out" "$TMP/err"
fi

# ---------------------------------------------------------------- the terminal REPL (tmux)
echo "# terminal REPL (tmux)"
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
screen() { tm capture-pane -p -t lf -S -200 >"$TMP/out" 2>/dev/null; }
wait_for() {  # wait_for LINE-REGEX: wait up to 5 s until a screen line matches
    local i
    for i in $(seq 50); do
        screen
        grep -Eq -- "$1" "$TMP/out" && return 0
        sleep 0.1
    done
    return 1
}
wait_count() {  # wait_count LINE-REGEX N: wait up to 5 s until N screen lines match
    local i
    for i in $(seq 50); do
        screen
        [ "$(grep -Ec -- "$1" "$TMP/out")" -ge "$2" ] && return 0
        sleep 0.1
    done
    return 1
}
type_text() { tm send-keys -t lf -l -- "$1"; }
cancel_line() {  # Ctrl-C on a typed line, then wait until it shows (typing on before races under load)
    screen
    local n
    n=$(grep -Ec -- '\^C$' "$TMP/out")
    tm send-keys -t lf C-c
    wait_count '\^C$' $((n + 1))
}
press() { tm send-keys -t lf "$@"; }
start_repl() {
    tm kill-server >/dev/null 2>&1
    starts=$((starts + 1))
    SOCK="lieflow-repl-test-$$-$starts"
    tm new-session -d -s lf -x 150 -y 50 \
        "trap : INT; env HOME='$HOME' INPUTRC=/dev/null '$LF'; echo EXITED:\$?; case \"\$(stty -a)\" in *-icanon*) echo TTY:raw;; *) echo TTY:cooked;; esac; sleep 60" 2>"$TMP/err" \
        && wait_for '`lf` is loaded'
}
repl_pid() {  # the pid of lieflow in the pane (a child of the pane's shell)
    pgrep -P "$(tm display -p -t lf '#{pane_pid}')" | head -1
}
history_has() { grep -qFx -- "$1" "$HOME/.lieflow_history" 2>/dev/null; }
wait_history() {  # wait up to 5 s until the history file has the line $1
    local i
    for i in $(seq 50); do
        history_has "$1" && return 0
        sleep 0.1
    done
    return 1
}
tmux_check() {  # tmux_check DESCRIPTION LINE-REGEX
    if wait_for "$2"; then ok "$1"; else bad "$1 (expected a line matching: $2)" "$TMP/out"; fi
}

if ! command -v tmux >/dev/null 2>&1; then
    echo "SKIP - tmux is not installed: terminal REPL tests (completion, Ctrl-C at the prompt, history) not run"
elif ! start_repl; then
    echo "SKIP - could not start lieflow in tmux: terminal REPL tests not run"
    sed 's/^/  | /' "$TMP/out" "$TMP/err" | head -20
else
    ok "REPL starts in a terminal with the banner"

    so_name="$("$LF" -e 'local t = {} for k in pairs(lf) do if type(k) == "string" and k:sub(1, 2) == "so" then t[#t + 1] = k end end print(#t == 1 and t[1] or "")' 2>/dev/null)"
    if [ -n "$so_name" ]; then
        type_text 'lf.so'
        press Tab
        tmux_check "Tab completes lf.so to lf.$so_name" "^> lf\.$so_name\$"
    else
        echo "SKIP - lf has no unique field starting with 'so': lf.so + Tab not tested"
        type_text 'lf.so'
        wait_for '^> lf\.so' >/dev/null
    fi
    cancel_line
    type_text '1000 + 1'
    press Enter
    tmux_check "Ctrl-C at the prompt clears the line" '^1001$'

    type_text 'string.fo'
    press Tab
    tmux_check "Tab completes string.fo to string.format" '^> string\.format$'
    type_text '("%d", 7007)'
    press Enter
    tmux_check "the completed call runs" '^7007$'

    type_text 's = "abc"'
    press Enter
    type_text 's:up'
    press Tab
    type_text '()'
    press Enter
    tmux_check "Tab completes a method through the metatable (s:up -> s:upper)" '^ABC$'

    methods="$("$LF" -e 'local mt = getmetatable(lf.vec3{1, 2, 3}) local i = type(mt) == "table" and rawget(mt, "__index") if type(i) ~= "table" then i = type(mt) == "table" and rawget(mt, "methods") end print(type(i) == "table" and type(rawget(i, "norm")) == "function" and "yes" or "no")' 2>/dev/null)"
    if [ "$methods" = yes ]; then
        type_text 'v = lf.vec3{3, 4, 0}'
        press Enter
        type_text 'v:no'
        press Tab
        type_text '()'
        press Enter
        tmux_check "Tab completes userdata methods (v:no -> v:norm)" '^> v:norm\(\)$'
    else
        echo "SKIP - lf.vec3 has no norm method in a metatable __index or methods table: v:no + Tab not tested"
    fi

    type_text 'while true do end'
    press Enter
    wait_for '^> while true do end$' >/dev/null
    sleep 0.5
    press C-c
    tmux_check "Ctrl-C interrupts a running computation" 'interrupted!'
    type_text '2000 + 2'
    press Enter
    tmux_check "the REPL goes on after Ctrl-C" '^2002$'
    if history_has '2000 + 2'; then ok "history appended to the file right after the line (before exit)"
    else bad "history appended to the file right after the line (before exit)" "$HOME/.lieflow_history"; fi
    press Up
    press Enter
    if wait_count '^2002$' 2; then ok "Up recalls the previous line"
    else bad "Up recalls the previous line" "$TMP/out"; fi

    # completion: fields and methods of objects whose __index is a function (__lf_fields)
    type_text 'v = lf.vec3{1, 2, 2}'
    press Enter
    type_text 'v.'
    press Tab Tab
    tmux_check "v. + Tab lists a vec3's fields and methods" '^copy +cross +dot +norm +normalized +totable +x +y +z *$'
    cancel_line
    type_text 'v:'
    press Tab Tab
    tmux_check "v: + Tab lists a vec3's methods only" '^copy +cross +dot +norm +normalized +totable *$'
    cancel_line
    type_text 'R = lf.so3.exp{0, 0, 1}'
    press Enter
    type_text 'R:tr'
    press Tab
    tmux_check "Tab completes a mat3 method (R:tr -> R:trace)" '^> R:trace$'
    cancel_line
    type_text 'obj = setmetatable({}, {__index = function(t, k) if k == "alpha" then return 1 elseif k == "inner" then return lf.vec3{1, 2, 2} elseif k == "go" then return function() return "went" end end end, __lf_fields = function(o) return {"alpha", "inner", "go"} end})'
    press Enter
    type_text 'obj.al'
    press Tab
    tmux_check "__lf_fields: Tab completes a field (obj.al -> obj.alpha)" '^> obj\.alpha$'
    cancel_line
    type_text 'obj:'
    press Tab
    type_text '()'
    press Enter
    tmux_check "__lf_fields: after ':' only methods (obj: -> obj:go)" '^went$'
    type_text 'obj.inner:no'
    press Tab
    type_text '()'
    press Enter
    tmux_check "__lf_fields: chains through a listed field (obj.inner:no -> obj.inner:norm)" '^3\.0$'

    # a body that translates: its integrator's fields x, v and its momenta complete
    type_text 'tb = lf.integrator("vlv", lf.rigidbody{mass = 2, inertia = {1, 2, 3}, v = {2, 3, 6}}, {h = 0.5}):step(2)'
    press Enter
    type_text 'tb.x:no'
    press Tab
    type_text '()'
    press Enter
    tmux_check "a translating body's position completes (tb.x:no -> tb.x:norm)" '^7\.0$'
    type_text 'tb.linear_mo'
    press Tab
    tmux_check "a translating body's observable completes (tb.linear_mo -> tb.linear_momentum)" '^> tb\.linear_momentum$'
    cancel_line

    # a table of records wider than the terminal (150 columns): the columns that do not fit are named
    type_text 'wide = {{name = "r", a = ("a"):rep(50), b = ("b"):rep(50), c = ("c"):rep(50), d = ("d"):rep(50)}}'
    press Enter
    type_text 'wide'
    press Enter
    tmux_check "a table of records is cut to the terminal width, the rest named" '^\(wider than the terminal, not shown: d\)$'

    # Ctrl-C during an integration in C, then the next line integrates again
    type_text 'it = lf.integrator("vlv", lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7, 0}, omega = {0, 0, 1}, potential = lf.potential.stress{}}, {h = 0.1})'
    press Enter
    type_text 'it:step(4000000000)'
    press Enter
    sleep 0.5
    press C-c
    tmux_check "Ctrl-C interrupts an integration in C" 'interrupted'
    type_text 't0 = it.t; it:step(10); print("stepped", it.t - t0)'
    press Enter
    tmux_check "the next line integrates again (the cancel flag was cleared)" '^stepped +1\.0$'

    type_text 'for i = 1, 3 do'
    press Enter
    tmux_check "an incomplete chunk continues with the >> prompt" '^>> $|^>>$'
    type_text 'print(i * 333)'
    press Enter
    type_text 'end'
    press Enter
    tmux_check "the multi-line chunk runs" '^999$'

    press C-d
    tmux_check "Ctrl-D exits with code 0" '^EXITED:0$'
    if grep -qFx '2000 + 2' "$HOME/.lieflow_history" 2>/dev/null; then ok "history written to \$HOME/.lieflow_history"
    else bad "history written to \$HOME/.lieflow_history" "$HOME/.lieflow_history"; fi

    if start_repl; then
        press Up
        tmux_check "history read at the next start" '^> end$|^> for i = 1, 3 do'
        press C-d
        wait_for '^EXITED:' >/dev/null
    else
        bad "REPL restarts in tmux" "$TMP/out"
    fi

    # sessions that end by a signal lose no history, and leave the terminal as it was
    if start_repl; then
        type_text 'term_marker = 1'
        press Enter
        type_text 'if term_marker then'
        press Enter
        wait_history 'if term_marker then'
        kill -TERM "$(repl_pid)"
        tmux_check "SIGTERM at the prompt ends the REPL (exit 143)" '^EXITED:143$'
        tmux_check "SIGTERM at the prompt restores the terminal" '^TTY:cooked$'
        if history_has 'term_marker = 1' && history_has 'if term_marker then'; then
            ok "SIGTERM loses no history (the first line of an unfinished chunk included)"
        else
            bad "SIGTERM loses no history (the first line of an unfinished chunk included)" "$HOME/.lieflow_history"
        fi
    fi
    if start_repl; then
        type_text 'hup_marker = 1'
        press Enter
        wait_history 'hup_marker = 1'
        kill -HUP "$(repl_pid)"
        tmux_check "SIGHUP ends the REPL (exit 129)" '^EXITED:129$'
        if history_has 'hup_marker = 1'; then ok "SIGHUP loses no history"
        else bad "SIGHUP loses no history" "$HOME/.lieflow_history"; fi
    fi
    if start_repl; then
        type_text 'stuck_marker = 1'
        press Enter
        type_text 'string.find(string.rep("a", 200000), ".*b")'
        press Enter
        sleep 0.5
        press C-c
        sleep 0.5
        press C-c
        tmux_check "a second Ctrl-C ends the REPL stuck in C code (exit 130)" 'EXITED:130$'
        if history_has 'stuck_marker = 1' && history_has 'string.find(string.rep("a", 200000), ".*b")'; then
            ok "a second Ctrl-C loses no history (the running line included)"
        else
            bad "a second Ctrl-C loses no history (the running line included)" "$HOME/.lieflow_history"
        fi
    fi
    tm kill-server >/dev/null 2>&1
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
