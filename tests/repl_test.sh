#!/usr/bin/env bash
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

# Pipe a session into `lieflow -i`; $TMP/out gets the output without the banner and the prompts.
session() {
    printf '%s\n' "$1" | "$LF" -i >"$TMP/raw" 2>"$TMP/err"
    rc=$?
    sed -E -e '1{/^lieflow /d}' -e 's/^((>|>>) )+//' "$TMP/raw" >"$TMP/out"
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
if head -1 "$TMP/raw" | grep -q '^lieflow 0\.1\.0'; then ok "banner in interactive mode"
else bad "banner in interactive mode" "$TMP/raw"; fi

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
(function() local r = {} for i = 1, 100 do r[i] = i end return r end)()
{}'
check "array literal pretty printed" has_line "{1, 2, 3}"
check "table keys sorted, strings quoted, nested" has_line '{[10] = true, a = "x", b = {c = 1}}'
check "nesting depth limit" has '{…}'
check "cycle detection" has_line "{self = {<cycle>}}"
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
check "--version format" bash -c "grep -Eqx 'lieflow 0\.1\.0 \(Lua 5\.4\.[0-9]+\)' '$TMP/out'"
check "--version exit code 0" rc_is 0

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
check "erroring script: 'lieflow: ' + message on stderr" \
    bash -c "head -1 '$TMP/err' | grep -q '^lieflow: .*fail.lua:1: script failed here'"
check "erroring script: traceback on stderr" has "stack traceback:" err

printf 'x = = 1\n' >"$TMP/syntax.lua"
run "$TMP/syntax.lua"
check "syntax error: exit code 1" rc_is 1
run "$TMP/no_such_script.lua"
check "missing script: exit code 1 and message" bash -c "[ $rc -eq 1 ] && grep -q 'cannot open' '$TMP/err'"
run -e 'error("e failed")'
check "-e error: exit code 1 with message" bash -c "[ $rc -eq 1 ] && grep -q '^lieflow: (command line):1: e failed' '$TMP/err'"
run -x
check "unknown option: exit code 1" bash -c "[ $rc -eq 1 ] && grep -q \"unrecognized option '-x'\" '$TMP/err'"
run -e
check "-e without argument: exit code 1" bash -c "[ $rc -eq 1 ] && grep -q \"'-e' needs argument\" '$TMP/err'"
run -e 'os.exit(3)'
check "os.exit(3) gives exit code 3" rc_is 3

printf 'x = 7\n' >"$TMP/setx.lua"
printf 'x * 6\n' >"$TMP/in.txt"
STDIN="$TMP/in.txt" run -i "$TMP/setx.lua"
sed -E -i -e '1{/^lieflow /d}' -e 's/^((>|>>) )+//' "$TMP/out"
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
press() { tm send-keys -t lf "$@"; }
start_repl() {
    tm kill-server >/dev/null 2>&1
    starts=$((starts + 1))
    SOCK="lieflow-repl-test-$$-$starts"
    tm new-session -d -s lf -x 150 -y 50 \
        "env HOME='$HOME' INPUTRC=/dev/null '$LF'; echo EXITED:\$?; sleep 60" 2>"$TMP/err" \
        && wait_for '`lf` is loaded'
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
    press C-c
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
    press Up
    press Enter
    if wait_count '^2002$' 2; then ok "Up recalls the previous line"
    else bad "Up recalls the previous line" "$TMP/out"; fi

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
    tm kill-server >/dev/null 2>&1
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
