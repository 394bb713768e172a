#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lf.ensemble under MPI (make test-mpi): `mpirun -n 4` on this machine (oversubscribed) must give the
# results of a serial run bitwise, with the members spread over the ranks; also 2 ranks x 2 forked
# workers, gather = "all", and a rank that fails ends the whole job (no hang).
# Skipped, with a message, when mpirun or build/lua/lieflow/mpi.so is missing.
# usage: bash tests/mpi_test.sh path/to/lieflow
set -u
if [ $# -ne 1 ] || [ ! -x "$1" ]; then echo "usage: bash tests/mpi_test.sh path/to/lieflow" >&2; exit 2; fi
LF="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MPI_SO="$(dirname "$LF")/lua/lieflow/mpi.so"
if ! command -v mpirun >/dev/null 2>&1; then echo "mpi_test: skipped (no mpirun: apt-get install openmpi-bin)"; exit 0; fi
if [ ! -f "$MPI_SO" ]; then echo "mpi_test: skipped (lieflow.mpi not built: apt-get install libopenmpi-dev; make)"; exit 0; fi

# as root (CI, containers) OpenMPI refuses to start without these; CMA single-copy needs ptrace
# rights that containers often lack
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
MPIRUN=(timeout -k 10 120 mpirun --oversubscribe --allow-run-as-root --bind-to none)

TMP="$(mktemp -d "${TMPDIR:-/tmp}/lieflow-mpi-test.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
cd "$ROOT"
pass=0; fail=0
ok() { pass=$((pass + 1)); echo "ok   - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; sed 's/^/  | /' "$2" | head -30; }

S="$TMP/serial.bin"
if "$LF" tests/mpi/ensemble_mpi.lua dump "$S" > "$TMP/dump.out" 2>&1; then ok "serial run written"; else bad "serial run" "$TMP/dump.out"; fi

run() { # run DESCRIPTION N ARGS...
    local what="$1" n="$2"; shift 2
    if "${MPIRUN[@]}" -n "$n" "$LF" tests/mpi/ensemble_mpi.lua check "$S" "$@" > "$TMP/run.out" 2>&1 \
       && grep -q "rank 0 of $n: 11 members identical to the serial run" "$TMP/run.out"; then
        ok "$what"
    else
        bad "$what" "$TMP/run.out"
    fi
}
run "mpirun -n 4: identical to serial, members on every rank, gathered on rank 0" 4
run "mpirun -n 2 with 2 forked workers per rank: identical to serial" 2 2
run "mpirun -n 3, gather = all: every rank has the serial results" 3 "" all
if [ "$(grep -c "members identical to the serial run" "$TMP/run.out")" = 3 ]; then ok "gather = all: 3 ranks checked"; else bad "gather = all on every rank" "$TMP/run.out"; fi

# a rank that fails (a Lua error after the first ensemble) ends the job: MPI_Abort, no hang
cat > "$TMP/fail.lua" <<'LUA'
local res = lf.ensemble{n = 4, method = "vlv", h = 0.5, T = 1, progress = false,
  make = function() return lf.rigidbody{inertia = {1, 2, 3}, R = lf.so3.I, omega = {0, 0, 1}} end}
if lf.ensemble.rank() == 1 then error("rank 1 fails") end
lf.ensemble{n = 4, method = "vlv", h = 0.5, T = 1, progress = false,
  make = function() return lf.rigidbody{inertia = {1, 2, 3}, R = lf.so3.I, omega = {0, 0, 1}} end}
LUA
# (OpenMPI 4.1.4's mpirun itself may crash while cleaning up after MPI_Abort: its message goes to
# the log through the sh -c that waits for it. Once in a few hundred runs under load it hangs there
# instead (seen once in `make test`; not reproduced in 45 runs, idle or loaded; 3 of those crashed):
# a hang is tried once more, with the processes left at that moment in the log; the second must pass.
# A hung mpirun ignores SIGTERM (seen 2026-11-27): timeout -k sends SIGKILL 5 s later, exit 137.)
fail_job() {  # fail_job ATTEMPT -> sets rc, took
    local start; start=$(date +%s)
    sh -c '"$@"' sh timeout -k 5 60 "${MPIRUN[@]:4}" -n 3 "$LF" "$TMP/fail.lua" > "$TMP/fail.out" 2>&1
    rc=$?
    took=$(( $(date +%s) - start ))
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        { echo "attempt $1: exit $rc after $took s; processes left:"; ps -eo pid,ppid,stat,etime,args | grep -E "[m]pirun|[f]ail.lua"; } >> "$TMP/fail.log"
        return 1
    fi
}
rc=0; took=0; : > "$TMP/fail.log"
fail_job 1 || fail_job 2
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] && [ "$took" -lt 60 ] && grep -q "rank 1 fails" "$TMP/fail.out"; then
    ok "a failing rank ends the job (exit $rc after ${took} s$([ -s "$TMP/fail.log" ] && echo "; mpirun hung once before: $(head -1 "$TMP/fail.log")"))"
else
    cat "$TMP/fail.log" >> "$TMP/fail.out"
    bad "a failing rank must end the job (exit $rc after ${took} s)" "$TMP/fail.out"
fi

echo "mpi_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
