#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Run the test suites of `make test` one after the other (all of them, even after a failure), show
# their output, and end with one summary line: what passed, with the counts each suite reports.
# usage: bash tests/run_suites.sh LOGDIR MAKE SUITE...   (SUITE: a make target, e.g. test-c)
set -u
logdir=$1
make_cmd=$2
shift 2
mkdir -p "$logdir"

# count SUITE LOG: the suite's own count of passed checks, as a short phrase
count() {
    local log=$2
    case $1 in
        test-c)
            awk '/^\[  PASSED  \] [0-9]+ test/ { n += $4 } /^== / { p++ }
                 END { printf "C %d tests in %d programs", n, p }' "$log" ;;
        test-lua)
            sed -n 's/^\([0-9][0-9]*\) success.*/Lua specs \1/p' "$log" | tail -1 ;;
        test-tape) printf 'on the tape: Lua specs %s, examples %s' "$(sed -n 's/^\([0-9][0-9]*\) success.*/\1/p' "$log" | tail -1)" \
            "$(grep -c '^== examples/.* --quick (tape)$' "$log")" ;;
        test-repl) sed -n 's/^\([0-9][0-9]*\) passed, 0 failed$/REPL \1/p' "$log" | tail -1 ;;
        test-compat) sed -n 's/^\([0-9][0-9]*\) passed, 0 failed$/same as lua5.4 \1/p' "$log" | tail -1 ;;
        test-standalone) sed -n 's/^\([0-9][0-9]*\) passed, 0 failed$/standalone \1/p' "$log" | tail -1 ;;
        test-embed) printf 'embed %s' "$(grep -c '^embed: ok$' "$log")" ;;
        test-examples) printf 'examples %s' "$(grep -c '^== examples/.* --quick$' "$log")" ;;
        test-mpi) { sed -n 's/^mpi_test: \([0-9][0-9]*\) passed, 0 failed$/MPI \1/p' "$log"
                    grep -q '^mpi_test: skipped' "$log" && echo "MPI skipped"; } | tail -1 ;;
        test-fuzz) echo "$(sed -n 's/^fuzz: smoke run clean: 3 seeds x \([0-9][0-9]*\) calls, 3 seeds x \([0-9][0-9]*\) compiled programs$/fuzz 3x\1 calls + 3x\2 compiled programs/p' "$log" | tail -1)" \
            "+ C API $(grep -o '^fuzz_capi: [0-9]* ' "$log" | awk '{s += $2} END {print s}') inputs" ;;
        test-view) sed -n 's/^view: \([0-9][0-9]*\) passed, 0 failed\(.*\)$/browser views \1\2/p' "$log" | tail -1 ;;
        test-install) sed -n 's/^install test: \([0-9][0-9]*\) checks passed$/install \1/p' "$log" | tail -1 ;;
        test-license) sed -n 's/^license check: \([0-9][0-9]*\) checks passed$/license \1/p' "$log" | tail -1 ;;
        test-version) sed -n 's/^version check: \([0-9][0-9]*\) checks passed$/version \1/p' "$log" | tail -1 ;;
        test-abi) sed -n 's/^abi check: \([0-9][0-9]*\) checks passed$/ABI and C++ \1/p' "$log" | tail -1 ;;
        test-rock) sed -n 's/^rock test: \([0-9][0-9]*\) checks passed$/luarocks \1/p' "$log" | tail -1 ;;
        test-structure) echo "$(sed -n 's/^structure: \([0-9][0-9]*\) folders in order.*$/structure: \1 folders in order, no cycle/p' "$log" | tail -1)," \
            "$(sed -n 's/^structure: \([0-9][0-9]*\) functions, none over \([0-9][0-9]*\) lines outside the \([0-9][0-9]*\) allowed$/\1 functions <= \2 lines (\3 allowed)/p' "$log" | tail -1)," \
            "$(sed -n 's/^structure selftest: \([0-9][0-9]*\) planted violations, each caught$/\1 planted violations caught/p' "$log" | tail -1)" ;;
        test-format) sed -n 's/^format check: .* are as .clang-format lays them out (\([0-9]*\) files)$/format: \1 changed files/p' "$log" | tail -1 ;;
    esac
}

passed=()
failed=()
for suite in "$@"; do
    log="$logdir/$suite.log"
    "$make_cmd" --no-print-directory "$suite" 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
    if [ "$status" -eq 0 ]; then
        c=$(count "$suite" "$log")
        passed+=("${c:-$suite}")
    else
        failed+=("$suite")
    fi
done

join() { local IFS=','; echo "$*" | sed 's/,/, /g'; }
if [ ${#failed[@]} -eq 0 ]; then
    echo "make test: all ${#passed[@]} suites passed: $(join "${passed[@]}")"
else
    echo "make test: FAILED: $(join "${failed[@]}") (logs in $logdir); passed: $(join "${passed[@]}")"
    exit 1
fi
