#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Run the finalizer sweep (tests/fuzz/finalize_sweep.lua), then the Lua API fuzzer (tests/fuzz/fuzz.lua),
# the compiled-model fuzzer (tests/fuzz/graph_fuzz.lua), the files fuzzer (tests/fuzz/files_fuzz.lua)
# and the code-cache fuzzer (tests/fuzz/cache_fuzz.lua), in a scratch directory and report.
#   tests/fuzz/run.sh EXE smoke            fixed seeds, a fixed number of calls and programs (make test)
#   tests/fuzz/run.sh EXE SECONDS [SEED]   seeds SEED, SEED+1, ... until SECONDS have passed (make fuzz):
#                                          1/2 of the time fuzz.lua, 1/6 each graph_fuzz.lua,
#                                          files_fuzz.lua and cache_fuzz.lua; with FUZZ_ONLY=api|graph|
#                                          files|cache all of it to that one (make fuzz ONLY=...)
# A finding (exit 1 of fuzz.lua or graph_fuzz.lua), a crash (signal, sanitizer report) or a hang
# (the process outlives its time by 60 s) stops the run: the tail of the call log is printed (the
# log itself, a replayable Lua script, is kept and its path printed); for graph_fuzz.lua the
# findings with their programs, and the last program it ran (a crash's culprit).
set -u
if [ $# -lt 2 ] || [ ! -x "$1" ]; then
    echo "usage: tests/fuzz/run.sh path/to/lieflow smoke|SECONDS [SEED]" >&2
    exit 2
fi
EXE="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
HERE="$(cd "$(dirname "$0")" && pwd)"
MODE=$2
SEED=${3:-1}
OUT="${LIEFLOW_FUZZ_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/lieflow-fuzz.XXXXXX")}"
mkdir -p "$OUT"
# sanitizer reports get their own exit codes, so that they are not mistaken for findings
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86:detect_leaks=0"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:print_stacktrace=1:exitcode=87"

# explain RC WHAT DIR TIMEOUT: what a failed run (exit status RC) of WHAT means, with its evidence
explain() {
    case $1 in
        1) echo "fuzz: FINDINGS $2 (above)";;
        86|87) echo "fuzz: SANITIZER REPORT $2:"; grep -a -A30 -E "ERROR: (Address|Undefined|Leak)Sanitizer|runtime error" "$3/err.txt" | head -60;;
        137) echo "fuzz: HANG $2 (killed after $4 s)";;
        *) echo "fuzz: CRASH $2 (exit status $1)"; tail -20 "$3/err.txt";;
    esac
}

run_one() {  # run_one SEED CALLS SECONDS
    local seed=$1 calls=$2 secs=$3 dir="$OUT/seed-$1" rc
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$dir" && LIEFLOW_FUZZ_DIR="$dir" timeout -s KILL $((secs + 60)) \
        "$EXE" "$HERE/fuzz.lua" --seed "$seed" --calls "$calls" --seconds "$secs" --log "$dir/fuzz-log.lua" \
        >"$dir/out.txt" 2>"$dir/err.txt")
    rc=$?
    grep -a -E "^(fuzz:|  [0-9]+x|    first at)" "$dir/err.txt" | head -40
    if [ $rc -eq 0 ]; then rm -rf "$dir"; return 0; fi
    explain $rc "with seed $seed" "$dir" $((secs + 60))
    echo "fuzz: last calls (replay: cd $dir && $EXE $dir/fuzz-log.lua):"
    grep -a -v "^--" "$dir/fuzz-log.lua" | tail -15 | cut -c1-400
    return 1
}

run_graph() {  # run_graph SEED PROGRAMS SECONDS: the compiled-model fuzzer, with a code cache of its own
    local seed=$1 programs=$2 secs=$3 dir="$OUT/graph-seed-$1" rc
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$dir" && XDG_CACHE_HOME="$dir/cache" timeout -s KILL $((secs + 60)) \
        "$EXE" "$HERE/graph_fuzz.lua" --seed "$seed" --programs "$programs" --seconds "$secs" --log "$dir/graph-log.lua" \
        >"$dir/out.txt" 2>"$dir/err.txt")
    rc=$?
    grep -a -h "^graph_fuzz:" "$dir/err.txt" "$dir/out.txt" | head -20
    if [ $rc -eq 0 ]; then rm -rf "$dir"; return 0; fi
    grep -a -v "^graph_fuzz:" "$dir/out.txt" | head -150 | cut -c1-400
    explain $rc "in graph_fuzz.lua with seed $seed" "$dir" $((secs + 60))
    echo "graph_fuzz: replay one program: $EXE $HERE/graph_fuzz.lua --seed $seed --only I; all of them: $dir/graph-log.lua; the last one run:"
    awk '/^-- program /{buf = ""} {buf = buf $0 "\n"} END {printf "%s", buf}' "$dir/graph-log.lua" | head -60 | cut -c1-400
    return 1
}

run_files() {  # run_files SEED CASES SECONDS: the files fuzzer (files_fuzz.lua)
    local seed=$1 cases=$2 secs=$3 dir="$OUT/files-seed-$1" rc
    rm -rf "$dir" && mkdir -p "$dir"
    # a reader that believes a lying size fails under the address-space limit instead of taking the
    # machine (not under ASan, whose shadow memory needs terabytes of address space)
    local limit="ulimit -v 4000000;"
    ldd "$EXE" 2>/dev/null | grep -q libasan && limit=""
    (cd "$dir" && XDG_CACHE_HOME="$dir/cache" timeout -s KILL $((secs + 60)) bash -c "$limit exec \"\$@\"" files_fuzz \
        "$EXE" "$HERE/files_fuzz.lua" --seed "$seed" --cases "$cases" --seconds "$secs" \
        >"$dir/out.txt" 2>"$dir/err.txt")
    rc=$?
    grep -a -A2 -E "^(files_fuzz:|  [0-9]+x)" "$dir/err.txt" | head -40
    if [ $rc -eq 0 ]; then rm -rf "$dir"; return 0; fi
    explain $rc "in files_fuzz.lua with seed $seed" "$dir" $((secs + 60))
    echo "files_fuzz: the last case (its file is kept in $dir):"
    cat "$dir/last-case.txt" 2>/dev/null
    return 1
}

run_cache() {  # run_cache SEED CASES SECONDS: the code-cache fuzzer (cache_fuzz.lua), in a cache of its own
    local seed=$1 cases=$2 secs=$3 dir="$OUT/cache-seed-$1" rc
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$dir" && XDG_CACHE_HOME="$dir/cache" timeout -s KILL $((secs + 60)) \
        "$EXE" "$HERE/cache_fuzz.lua" --seed "$seed" --cases "$cases" --seconds "$secs" --verbose \
        >"$dir/out.txt" 2>"$dir/err.txt")
    rc=$?
    grep -a -A2 -E "^(cache_fuzz: (seed|FINDING|no native)|  [0-9]+x)" "$dir/err.txt" | head -40
    if [ $rc -eq 0 ]; then rm -rf "$dir"; return 0; fi
    explain $rc "in cache_fuzz.lua with seed $seed" "$dir" $((secs + 60))
    echo "cache_fuzz: the last case (the cache is kept in $dir/cache):"
    grep -a "^cache_fuzz: case " "$dir/err.txt" | tail -1
    return 1
}

run_sweep() {  # the finalizer sweep (finalize_sweep.lua): deterministic, a few seconds
    local dir="$OUT/finalize-sweep" rc
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$dir" && timeout -s KILL 600 "$EXE" "$HERE/finalize_sweep.lua" >"$dir/out.txt" 2>"$dir/err.txt")
    rc=$?
    grep -a "^finalize_sweep:" "$dir/err.txt" | head -40
    if [ $rc -eq 0 ]; then rm -rf "$dir"; return 0; fi
    explain $rc "in the finalizer sweep" "$dir" 600
    return 1
}

run_sweep || exit 1

if [ "$MODE" = smoke ]; then
    # deterministic: fixed seeds and call counts (the wall-clock limit is a safety net only)
    status=0
    for s in 1 2 3; do run_one "$s" 2500 120 || status=1; done
    # 20 programs per seed, 5 of them compiled natively (a few seconds)
    for s in 1 2 3; do run_graph "$s" 20 120 || status=1; done
    # 500 mutated files per seed (a few seconds)
    for s in 1 2; do run_files "$s" 500 120 || status=1; done
    # 100 states of the code cache (a few seconds)
    run_cache 1 100 120 || status=1
    [ $status -eq 0 ] && rm -rf "$OUT" && echo "fuzz: smoke run clean: 3 seeds x 2500 calls, 3 seeds x 20 compiled programs, 2 seeds x 500 files, 100 cache states"
    exit $status
fi

# the time: 1/2 for fuzz.lua, 1/6 each for graph_fuzz.lua, files_fuzz.lua and cache_fuzz.lua (each
# seed at most 120 s, seed after seed)
timed() {  # timed RUNNER SECONDS FIRST_SEED CASES: prints the next seed
    local runner=$1 secs=$2 seed=$3 cases=$4 end left
    end=$(( $(date +%s) + secs ))
    while [ "$(date +%s)" -lt "$end" ]; do
        left=$(( end - $(date +%s) ))
        [ $left -gt 120 ] && left=120
        [ $left -lt 1 ] && break
        $runner "$seed" "$cases" "$left" >&2 || return 1
        seed=$((seed + 1))
    done
    echo "$seed"
}
# FUZZ_ONLY=api|graph|files|cache: all the time to that one fuzzer (make fuzz ONLY=...)
case "${FUZZ_ONLY:-}" in
    "") ;;
    api|graph|files|cache)
        runner=$(case $FUZZ_ONLY in api) echo run_one;; graph) echo run_graph;; files) echo run_files;; cache) echo run_cache;; esac)
        next=$(timed "$runner" "$MODE" "$SEED" 100000000) || exit 1
        rm -rf "$OUT"
        echo "fuzz: $FUZZ_ONLY clean for $MODE s (seeds $SEED to $((next - 1)))"
        exit 0;;
    *) echo "FUZZ_ONLY must be api, graph, files or cache, got '$FUZZ_ONLY'" >&2; exit 2;;
esac
SIXTH=$(( MODE / 6 ))
S1=$(timed run_one $(( MODE - 3 * SIXTH )) "$SEED" 100000000) || exit 1
S2=$(timed run_graph "$SIXTH" "$SEED" 100000000) || exit 1
S3=$(timed run_files "$SIXTH" "$SEED" 100000000) || exit 1
S4=$(timed run_cache "$SIXTH" "$SEED" 100000000) || exit 1
rm -rf "$OUT"
echo "fuzz: clean for $MODE s (seeds $SEED to: fuzz.lua $((S1 - 1)), graph_fuzz.lua $((S2 - 1)), files_fuzz.lua $((S3 - 1)), cache_fuzz.lua $((S4 - 1)))"
