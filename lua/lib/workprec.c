/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — measuring work against precision (examples/work_precision.lua): a lieflow
 * method or a non-geometric baseline (core/solve/baseline.h) run from a system's initial state to T
 * in C, timed around the integration loop only, with the energy error checked every k steps.
 *
 *   core.timed_run(method, system, {T=, h=, energy_every=0, newton_tol=, max_iter=, adapt=false})
 *   core.baseline(system, {solver = "rk8pd" | "rk4" | "quat_rk4", renormalize = false, T=, h=, tol=,
 *                          energy_every=0})
 * both -> {seconds=, cpu_seconds=, steps=, f_evals=, newton_iters=, max_energy_error=,
 *          state = {t=, R=, omega=}}.
 * `seconds` is wall time (CLOCK_MONOTONIC) of the loop, `cpu_seconds` the CPU time of the thread over
 * it (CLOCK_THREAD_CPUTIME_ID: what the wall time would be on an idle core; on a shared machine the
 * robust figure); with energy_every = k > 0 the loop also
 * evaluates the energy every k steps (and at the end) and max_energy_error is max |E - E(0)|. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shared/bind.h"
#include "lib/open.h"

const lf_method *lfb_checkmethod(lua_State *L, int idx, const char *fn); /* lib/integrator.c */
void lfb_open_workprec(lua_State *L);                                   /* called from lib/integrator.c */

static double now(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double field_number(lua_State *L, int t, const char *k, double def, const char *fn)
{
    return lfb_optnumber(L, t, k, def, fn, "option");
}

static int energy_every(lua_State *L, int t, const char *fn)
{
    double e = field_number(L, t, "energy_every", 0, fn);
    if (!(e >= 0 && e <= 1e9 && e == floor(e)))
        return luaL_error(L, "%s: option 'energy_every' must be an integer >= 0, got %f", fn, e);
    return (int)e;
}

static void push_result(lua_State *L, const lf_system *sys, double seconds, double cpu, long steps, long f_evals,
                        long newton, double maxerr, double T, const double *y)
{
    lua_createtable(L, 0, 8);
    lua_pushnumber(L, seconds);
    lua_setfield(L, -2, "seconds");
    lua_pushnumber(L, cpu);
    lua_setfield(L, -2, "cpu_seconds");
    lua_pushinteger(L, steps);
    lua_setfield(L, -2, "steps");
    lua_pushinteger(L, f_evals);
    lua_setfield(L, -2, "f_evals");
    lua_pushinteger(L, newton);
    lua_setfield(L, -2, "newton_iters");
    lua_pushnumber(L, maxerr);
    lua_setfield(L, -2, "max_energy_error");
    lfb_push_state(L, sys, T, y);
    lua_setfield(L, -2, "state");
}

/* core.timed_run(method, system, {T=, h=, energy_every=, newton_tol=, max_iter=, adapt=}): with adapt = true,
 * reversible adaptive steps (the torque monitor; h: the step at the start) up to T exactly */
static int l_timed_run(lua_State *L)
{
    const char *fn = "timed_run";
    const lf_method *m = lfb_checkmethod(L, 1, fn);
    lfb_system *s = lfb_checksystem(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    lua_settop(L, 3);
    lfb_hold(L, 2, 1); /* the options' metamethods and the callbacks may finalize them */
    static const char *const keys[] = {"T", "h", "energy_every", "newton_tol", "max_iter", "adapt", NULL};
    lfb_check_keys(L, 3, keys, fn, "option");
    const double T = field_number(L, 3, "T", NAN, fn), h = field_number(L, 3, "h", NAN, fn);
    if (!(T > 0) || !(h > 0)) return luaL_error(L, "%s: options T and h must be positive, got %f and %f", fn, T, h);
    lua_getfield(L, 3, "adapt");
    const int adapt = lua_toboolean(L, -1);
    lua_pop(L, 1);
    const double q = T / h;
    const long n = adapt ? LONG_MAX : lround(q);
    if (!adapt && (n < 1 || fabs(q - (double)n) > 1e-9 * (double)n))
        return luaL_error(L, "%s: T/h = %f is not a whole number of steps", fn, q);
    const int every = energy_every(L, 3, fn);
    lf_stepper_opts o = {.newton_tol = field_number(L, 3, "newton_tol", 1e-14, fn),
                         .max_iter = (int)field_number(L, 3, "max_iter", 50, fn), .adapt = adapt};
    lf_error e;
    lfb_checksystem(L, 2);     /* neither finalized while the options were read */
    lfb_checkmethod(L, 1, fn);
    const lf_system *sys = s->sys;
    lf_stepper *st = lf_stepper_new(m, sys, lf_system_initial(sys), 0, &o, &e);
    if (!st) return lfb_error(L, &e);
    lf_stepper_set_cancel(st, lfb_cancel_flag(L));
    double E0 = 0, E, maxerr = 0;
    int rc = every > 0 ? lf_system_energy(sys, lf_stepper_state(st), &E0, &e) : LF_OK;
    const double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
    if (rc == LF_OK && every == 0) {
        rc = adapt ? lf_stepper_advance_to(st, T, h) : lf_stepper_step(st, h, n);
        if (rc != LF_OK) e = *lf_stepper_error(st);
    }
    for (long k = 0; rc == LF_OK && every > 0 && k < n && lf_stepper_time(st) < T; k += every) {
        long chunk = n - k < every ? n - k : every;
        rc = adapt ? lf_stepper_advance(st, T, h, chunk) : lf_stepper_step(st, h, chunk);
        if (rc != LF_OK) e = *lf_stepper_error(st);
        else if ((rc = lf_system_energy(sys, lf_stepper_state(st), &E, &e)) == LF_OK) maxerr = fmax(maxerr, fabs(E - E0));
    }
    const double cpu = now(CLOCK_THREAD_CPUTIME_ID) - c0, seconds = now(CLOCK_MONOTONIC) - t0;
    if (rc != LF_OK) {
        lf_stepper_free(st);
        return lfb_error(L, &e);
    }
    lf_stepper_stats stats;
    lf_stepper_get_stats(st, &stats);
    push_result(L, sys, seconds, cpu, stats.steps, stats.f_evals, stats.newton_iters, maxerr, T, lf_stepper_state(st));
    lf_stepper_free(st);
    return 1;
}

/* core.baseline(system, {solver=, renormalize=, T=, h=, tol=, energy_every=}) */
static int l_baseline(lua_State *L)
{
    const char *fn = "baseline";
    lfb_system *s = lfb_checksystem(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    lfb_hold(L, 1, 0); /* the options' metamethods and the callbacks may finalize it */
    static const char *const keys[] = {"solver", "renormalize", "T", "h", "tol", "energy_every", NULL};
    lfb_check_keys(L, 2, keys, fn, "option");
    static const char *const solvers[] = {"rk8pd", "rk4", "quat_rk4", NULL};
    lua_getfield(L, 2, "solver");
    const int kind = luaL_checkoption(L, -1, NULL, solvers);
    lua_pop(L, 1);
    lua_getfield(L, 2, "renormalize");
    const int renorm = lua_toboolean(L, -1);
    lua_pop(L, 1);
    const double T = field_number(L, 2, "T", NAN, fn);
    if (!(T > 0)) return luaL_error(L, "%s: option T must be positive, got %f", fn, T);
    lf_baseline_opts o = {.kind = kind, .renormalize = renorm, .h = field_number(L, 2, "h", 0, fn),
                          .tol = field_number(L, 2, "tol", 0, fn), .energy_every = energy_every(L, 2, fn)};
    lfb_checksystem(L, 1); /* not finalized while the options were read */
    const lf_system *sys = s->sys;
    const int np = lf_system_nparam(sys);
    double *yT = lua_newuserdatauv(L, (size_t)np * sizeof(double), 0);
    lf_baseline_result r;
    lf_error e;
    if (lf_baseline_run(sys, lf_system_initial(sys), T, &o, yT, &r, &e) != LF_OK) return lfb_error(L, &e);
    push_result(L, sys, r.seconds, r.cpu_seconds, r.steps, r.f_evals, 0, r.max_energy_error, T, yT);
    return 1;
}

void lfb_open_workprec(lua_State *L)
{
    static const luaL_Reg fns[] = {{"timed_run", l_timed_run}, {"baseline", l_baseline}, {NULL, NULL}};
    luaL_setfuncs(L, fns, 0);
}
