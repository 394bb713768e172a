/* lieflow Lua binding — compiled models: the Lua functions a system takes traced once into an
 * expression graph (ltrace.h) and compiled (core/model/model_graph.h), the options `compile` and
 * `params`, sys.compiled, sys:set_params, and lf.compile for any function.
 *
 * compile = "auto" (default) | "native" | "tape" | false. "auto" falls back to the interpreted path
 * when a function cannot be traced (a branch on its inputs, a map without a traced version, an
 * error) and says why in sys.compiled; "native" and "tape" raise instead. Native code that the
 * compiler or the cache refuses falls back to the tape either way (lf_gmodule_report says why).
 * Parameters (`params = {alpha = 0.3, Rm = ...}`: numbers, vec3, mat3) are the functions' last
 * argument and inputs of the graph, not constants: set_params changes them without compiling. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ltrace.h"
#include "model_graph.h"

#define LFB_COMPILED "lf.compiled"

/* ---------------------------------------------------------------- options */
int lfb_compile_option(lua_State *L, int t, const char *fn)
{
    int tp = lua_getfield(L, t, "compile"), r = LF_BACKEND_AUTO;
    const char *v = tp == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    if (tp == LUA_TNIL || (tp == LUA_TBOOLEAN && lua_toboolean(L, -1))) r = LF_BACKEND_AUTO;
    else if (tp == LUA_TBOOLEAN) r = -1;
    else if (v && strcmp(v, "auto") == 0) r = LF_BACKEND_AUTO;
    else if (v && strcmp(v, "native") == 0) r = LF_BACKEND_NATIVE;
    else if (v && strcmp(v, "tape") == 0) r = LF_BACKEND_TAPE;
    else
        luaL_error(L, "%s: field 'compile' must be \"auto\", \"native\", \"tape\" or false, got %s%s%s", fn, v ? "\"" : "",
                   v ? v : lfb_typename(L, -1), v ? "\"" : "");
    lua_pop(L, 1);
    return r;
}

static const char *backend_name(int b) { return b == LF_BACKEND_NATIVE ? "native" : b == LF_BACKEND_TAPE ? "tape" : "auto"; }

/* A refusal of the code cache (a directory or file another user could have written) is also said
 * on stderr, once per process and reason: the model runs, on the tape, but the user should know. */
static void notice(lua_State *L, const char *report)
{
    if (!strstr(report, "refused")) return;
    lua_getfield(L, LUA_REGISTRYINDEX, "lieflow.notices");
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, "lieflow.notices");
    }
    if (lua_getfield(L, -1, report) == LUA_TNIL) {
        fprintf(stderr, "lieflow: notice: compiled code was not loaded, the tape runs instead: %s\n", report);
        lua_pushboolean(L, 1);
        lua_setfield(L, -3, report);
    }
    lua_pop(L, 2);
}

void lfb_set_compiled(lua_State *L, lfb_system *s, const char *report)
{
    notice(L, report);
    if (s->ref[LFB_REF_COMPILED] != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, s->ref[LFB_REF_COMPILED]);
    lua_pushstring(L, report);
    s->ref[LFB_REF_COMPILED] = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* A copy of the parameter value at idx (numbers as they are, vec3 / mat3 / tables of numbers as new
 * vec3 / mat3), so that changing the caller's table later changes nothing. */
static void push_param_copy(lua_State *L, int idx, const char *key, const char *fn)
{
    double v[9];
    int n = lfb_params_read_one(L, idx, key, v, fn);
    if (n == 1) lua_pushnumber(L, v[0]);
    else if (n == 3) lfb_pushvec3(L, v);
    else lfb_pushmat3(L, v);
}

int lfb_store_params(lua_State *L, lfb_system *s, int t, double *par, int maxpar, const char *fn)
{
    if (lua_getfield(L, t, "params") == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    const int p = lua_gettop(L);
    int n = lfb_params_read(L, p, par, maxpar, fn); /* checks every value */
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, p)) {
        push_param_copy(L, -1, lua_tostring(L, -2), fn);
        lua_remove(L, -2);
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, -4);
    }
    if (s->ref[LFB_REF_PARAMS] != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, s->ref[LFB_REF_PARAMS]);
    s->ref[LFB_REF_PARAMS] = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pop(L, 1);
    return n;
}

int lfb_push_params(lua_State *L, const lfb_system *s)
{
    if (s->ref[LFB_REF_PARAMS] == LUA_NOREF) return 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->ref[LFB_REF_PARAMS]);
    return 1;
}

/* ---------------------------------------------------------------- tracing a system's functions */
typedef struct {
    int first, n;
} arg_range;

static int push_range(lua_State *L, void *ud)
{
    const arg_range *r = ud;
    for (int i = 0; i < r->n; i++) lua_pushvalue(L, r->first + i);
    return r->n;
}

/* Call the function under ref with the n values at first.. as arguments; the result at the top. */
static int call_traced(lua_State *L, int ref, int first, int n, const char *what, lf_error *err)
{
    arg_range r = {first, n};
    return lfb_call(L, ref, push_range, &r, 1, what, err);
}

/* "<what>: <the first line of the Lua error>" from lfb_call's message */
static void reason_of(const lf_error *e, const char *prefix, char *buf, size_t size)
{
    const char *m = e->msg, *cut = strstr(m, " raised an error: ");
    if (cut) m = cut + strlen(" raised an error: ");
    size_t len = strcspn(m, "\n");
    snprintf(buf, size, "%s%.*s", prefix, (int)len, m);
}

/* n vectors as nodes from the result at idx: an array of n vec3 (or one vec3 when n = 1); 0 and a
 * reason if it is not that */
static int read_vectors(lua_State *L, int tidx, int idx, int n, int *ids, const char *what, char *reason, size_t size)
{
    char msg[120];
    idx = lua_absindex(L, idx);
    if (n == 1 && lfb_trace_read(L, tidx, idx, 3, ids, msg, sizeof msg)) return 1;
    if (!lfb_plain_table(L, idx) || (int)lua_rawlen(L, idx) != n) {
        snprintf(reason, size, "%s returned %s, expected an array of %d vec3", what, lfb_typename(L, idx), n);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, idx, i + 1);
        int ok = lfb_trace_read(L, tidx, -1, 3, ids + 3 * i, msg, sizeof msg);
        lua_pop(L, 1);
        if (!ok) {
            snprintf(reason, size, "%s: element %d is %s, expected a vec3", what, i + 1, msg);
            return 0;
        }
    }
    return 1;
}

/* The traced parameters (if the system has params) pushed after the arguments; their values into
 * par. Returns the number of Lua values pushed (0 or 1). */
static int push_traced_params(lua_State *L, const lfb_system *s, int tidx, double *par, int *npar)
{
    *npar = 0;
    if (!lfb_push_params(L, s)) return 0;
    const int p = lua_gettop(L);
    lfb_trace_push_params(L, tidx, p, par, npar, LFB_MAXPAR);
    lua_remove(L, p);
    return 1;
}

/* A failed trace: for compile = "auto" the reason goes to the report and NULL/0 comes back; an
 * explicit backend raises. */
static int trace_failed(lua_State *L, int backend, const char *fn, const char *reason, char *report, size_t size)
{
    if (backend != LF_BACKEND_AUTO)
        return luaL_error(L, "%s: compile = \"%s\": the model cannot be compiled: %s", fn, backend_name(backend), reason);
    snprintf(report, size, "interpreted: %s", reason);
    return 0;
}

lf_potential *lfb_compile_rigid(lua_State *L, lfb_system *s, int nb, const double *R0, int backend, const char *fn,
                                char *report, size_t size)
{
    const int top = lua_gettop(L);
    lfb_trace *t = lfb_trace_new(L, LFB_TRACE_STRICT, 0);
    const int tidx = lua_gettop(L);
    if (nb == 1) lfb_trace_push_inputs(L, tidx, 9, R0);
    else {
        lua_createtable(L, nb, 0);
        for (int i = 0; i < nb; i++) {
            lfb_trace_push_inputs(L, tidx, 9, R0 + 9 * i);
            lua_rawseti(L, -2, i + 1);
        }
    }
    const int first = lua_gettop(L);
    double *par = lua_newuserdatauv(L, LFB_MAXPAR * sizeof(double), 0);
    lua_insert(L, first); /* (scratch below the arguments) */
    int npar, nargs = 1 + push_traced_params(L, s, tidx, par, &npar);
    lf_error e;
    char reason[300] = "";
    lf_potential *pot = NULL;
    int U = -1, *tau = NULL, rc = call_traced(L, s->ref[LFB_REF_U], first + 1, nargs, nb == 1 ? "U(R)" : "U(Rs)", &e);
    if (rc != LF_OK) reason_of(&e, "", reason, sizeof reason);
    else if (lfb_trace_read_number(L, tidx, -1, NULL, &U, &e) != LF_OK)
        snprintf(reason, sizeof reason, "U %s", e.msg);
    lua_settop(L, first + nargs);
    if (!reason[0] && s->ref[LFB_REF_TAU] != LUA_NOREF) { /* the user's torque, traced on the same inputs */
        tau = lua_newuserdatauv(L, 3 * (size_t)nb * sizeof(int), 0);
        lua_insert(L, first);
        rc = call_traced(L, s->ref[LFB_REF_TAU], first + 2, nargs, nb == 1 ? "torque(R)" : "torque(Rs)", &e);
        if (rc != LF_OK) reason_of(&e, "", reason, sizeof reason);
        else read_vectors(L, tidx, -1, nb, tau, "torque", reason, sizeof reason);
    }
    if (!reason[0]) {
        lf_model_graph_opts o = {backend, NULL, 1};
        pot = lf_potential_graph(t->g, U, tau, nb, par, &o, &e);
        if (pot) snprintf(report, size, "%s", lf_potential_graph_report(pot));
        else snprintf(reason, sizeof reason, "%s", e.msg);
    }
    lfb_trace_end(t);
    lua_settop(L, top);
    if (!pot) trace_failed(L, backend, fn, reason, report, size);
    return pot;
}

/* ---------------------------------------------------------------- Lie ODEs */
/* y as a table of traced factor values (new inputs after t) */
static void push_traced_state(lua_State *L, int tidx, const lf_system *sys_or_null, const lf_manifold *M,
                              const double *y)
{
    (void)sys_or_null;
    const int n = lf_manifold_nfactors(M);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        const lf_factor *f = lf_manifold_factor(M, i);
        lfb_trace_push_factor(L, tidx, f, y + f->op, 0);
        lua_rawseti(L, -2, i + 1);
    }
}

int lfb_compile_lie_ode(lua_State *L, lfb_system *s, const lf_manifold *M, const double *y0, int backend,
                        const lf_lie_ode_graph *own, lf_lie_ode_def *def, const char *fn, char *report, size_t size)
{
    const int top = lua_gettop(L);
    lfb_trace *t = lfb_trace_new(L, LFB_TRACE_STRICT, 0);
    const int tidx = lua_gettop(L);
    double *par = lua_newuserdatauv(L, LFB_MAXPAR * sizeof(double), 0);
    int *xi = lua_newuserdatauv(L, (size_t)lf_manifold_ndim(M) * sizeof(int), 0);
    const double t0 = 0;
    lfb_trace_push_inputs(L, tidx, 1, &t0);
    const int first = lua_gettop(L);
    push_traced_state(L, tidx, NULL, M, y0);
    int npar, np = push_traced_params(L, s, tidx, par, &npar);
    lf_error e;
    char reason[300] = "";
    lf_lie_ode_graph nodes = *own;
    nodes.xi = xi;
    nodes.energy = nodes.H = -1;
    if (call_traced(L, s->ref[LFB_REF_F], first, 2 + np, "f(t, y)", &e) != LF_OK) reason_of(&e, "", reason, sizeof reason);
    else if (lfb_trace_read_algebra(L, tidx, -1, M, xi, "f(t, y)", &e) != LF_OK) snprintf(reason, sizeof reason, "%s", e.msg);
    lua_settop(L, first + 1 + np);
    static const int refs[2] = {LFB_REF_ENERGY, LFB_REF_H};
    static const char *const names[2] = {"energy(y)", "H(y)"};
    int *out[2] = {&nodes.energy, &nodes.H};
    for (int k = 0; k < 2 && !reason[0]; k++) {
        if (s->ref[refs[k]] == LUA_NOREF) continue;
        if (call_traced(L, s->ref[refs[k]], first + 1, 1 + np, names[k], &e) != LF_OK) reason_of(&e, "", reason, sizeof reason);
        else if (lfb_trace_read_number(L, tidx, -1, NULL, out[k], &e) != LF_OK)
            snprintf(reason, sizeof reason, "%s %s", names[k], e.msg);
        lua_settop(L, first + 1 + np);
    }
    int ok = 0;
    if (!reason[0]) {
        lf_model_graph_opts o = {backend, NULL, 1};
        if (lf_lie_ode_graph_def(t->g, M, &nodes, par, &o, def, &e) == LF_OK) {
            ok = 1;
            snprintf(report, size, "%s", lf_lie_ode_def_report(def));
        } else
            snprintf(reason, sizeof reason, "%s", e.msg);
    }
    lfb_trace_end(t);
    lua_settop(L, top);
    if (!ok) trace_failed(L, backend, fn, reason, report, size);
    return ok;
}

/* ---------------------------------------------------------------- spheres */
int lfb_compile_spheres(lua_State *L, lfb_system *s, int n, const double *q0, int backend, lf_spheres_def *inner,
                        lf_spheres_def *def, const char *fn, char *report, size_t size)
{
    const int top = lua_gettop(L);
    lfb_trace *t = lfb_trace_new(L, LFB_TRACE_STRICT, 0);
    const int tidx = lua_gettop(L);
    double *par = lua_newuserdatauv(L, LFB_MAXPAR * sizeof(double), 0);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lfb_trace_push_inputs(L, tidx, 3, q0 + 3 * i);
        lua_rawseti(L, -2, i + 1);
    }
    const int first = lua_gettop(L);
    int npar, np = push_traced_params(L, s, tidx, par, &npar);
    lf_error e;
    char reason[300] = "";
    int V = -1, ok = 0, *grad = NULL;
    if (call_traced(L, s->ref[LFB_REF_U], first, 1 + np, "V(qs)", &e) != LF_OK) reason_of(&e, "", reason, sizeof reason);
    else if (lfb_trace_read_number(L, tidx, -1, NULL, &V, &e) != LF_OK) snprintf(reason, sizeof reason, "V %s", e.msg);
    lua_settop(L, first + np);
    if (!reason[0] && s->ref[LFB_REF_TAU] != LUA_NOREF) { /* the user's gradient, traced on the same inputs */
        grad = lua_newuserdatauv(L, 3 * (size_t)n * sizeof(int), 0);
        lua_insert(L, first);
        if (call_traced(L, s->ref[LFB_REF_TAU], first + 1, 1 + np, "dV(qs)", &e) != LF_OK) reason_of(&e, "", reason, sizeof reason);
        else read_vectors(L, tidx, -1, n, grad, "gradient dV(qs)", reason, sizeof reason);
    }
    if (!reason[0]) {
        lf_model_graph_opts o = {backend, NULL, 1};
        if (lf_spheres_graph_def(t->g, V, grad, n, 0, NULL, NULL, inner, par, &o, def, &e) == LF_OK) {
            ok = 1;
            inner = NULL;
        } else
            snprintf(reason, sizeof reason, "%s", e.msg);
    }
    lfb_trace_end(t);
    lua_settop(L, top);
    if (inner && inner->destroy) inner->destroy(inner->ctx);
    if (ok) snprintf(report, size, "%s", lf_spheres_def_report(def));
    else trace_failed(L, backend, fn, reason, report, size);
    return ok;
}

/* ---------------------------------------------------------------- sys.compiled, sys:set_params */
int lfb_push_compiled(lua_State *L, const lfb_system *s)
{
    if (s->ref[LFB_REF_COMPILED] == LUA_NOREF) return 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->ref[LFB_REF_COMPILED]);
    return 1;
}

static const char *shape_name(int n) { return n == 1 ? "a number" : n == 3 ? "a vec3" : "a mat3"; }

/* sys:set_params{name = value, ...}: new values for some of the system's parameters (same names
 * and sizes as given at construction); the compiled model takes them without compiling again */
int lfb_sys_set_params(lua_State *L)
{
    lfb_system *s = lfb_checksystem(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    lfb_hold(L, 1, 0);
    if (!lfb_push_params(L, s)) return luaL_error(L, "system:set_params: the system has no parameters to change (it was made without "
                          "'params' for its Lua functions; the params of a built-in are fixed when it is made)");
    const int cur = lua_gettop(L);
    /* check every new value first (names known, same size), then copy */
    lua_newtable(L);
    const int next = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, cur)) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, next);
    }
    lua_pushnil(L);
    while (lua_next(L, 2)) {
        if (lua_type(L, -2) != LUA_TSTRING) return luaL_error(L, "system:set_params: parameter names are strings");
        const char *key = lua_tostring(L, -2);
        lua_pushvalue(L, -2);
        if (lua_rawget(L, cur) == LUA_TNIL) return luaL_error(L, "system:set_params: unknown parameter '%s'", key);
        double a[9], b[9];
        int na = lfb_params_read_one(L, -1, key, a, "system:set_params");
        int nb = lfb_params_read_one(L, -2, key, b, "system:set_params");
        if (na != nb)
            return luaL_error(L, "system:set_params: parameter '%s' is %s, got %s", key, shape_name(na), shape_name(nb));
        lua_pop(L, 1);
        push_param_copy(L, -1, key, "system:set_params");
        lua_pushvalue(L, -3);
        lua_insert(L, -2);
        lua_rawset(L, next);
        lua_pop(L, 1);
    }
    double *par = lua_newuserdatauv(L, LFB_MAXPAR * sizeof(double), 0);
    int n = lfb_params_read(L, next, par, LFB_MAXPAR, "system:set_params");
    lf_error e;
    int rc = LF_OK;
    const lf_system *sys = s->sys;
    if (s->pot && lf_potential_graph_module(s->pot)) rc = lf_potential_graph_set_params(s->pot, n, par, &e);
    if (rc == LF_OK && s->pot_inner && lf_potential_graph_module(s->pot_inner))
        rc = lf_potential_graph_set_params(s->pot_inner, n, par, &e);
    if (rc == LF_OK && lf_lie_ode_graph_module(sys)) rc = lf_lie_ode_graph_set_params(s->sys, n, par, &e);
    if (rc == LF_OK && lf_spheres_graph_module(sys)) rc = lf_spheres_graph_set_params(s->sys, n, par, &e);
    if (rc != LF_OK) return lfb_error_in(L, "system:set_params", &e);
    lua_pushvalue(L, next); /* the interpreted path reads the table */
    luaL_unref(L, LUA_REGISTRYINDEX, s->ref[LFB_REF_PARAMS]);
    s->ref[LFB_REF_PARAMS] = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_settop(L, 1);
    return 1;
}

/* core.time_potential(sys [, reps]) -> seconds per evaluation of U, of the torques, of both, at the
 * system's initial attitudes (CPU time over reps evaluations; for benchmarks: bench/compile.lua) */
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int l_time_potential(lua_State *L)
{
    lfb_system *s = lfb_checksystem(L, 1);
    const lua_Integer reps = luaL_optinteger(L, 2, 100);
    luaL_argcheck(L, reps >= 1 && reps <= 100000000, 2, "reps 1..1e8 expected");
    lua_settop(L, 2);
    lfb_hold(L, 1, 0);
    const int nb = lf_rigid_nbodies(s->sys);
    if (!nb) return luaL_error(L, "time_potential: a rigid-body system expected");
    double *tau = lua_newuserdatauv(L, 3 * (size_t)nb * sizeof(double), 0), U;
    const double *R = lf_system_initial(s->sys);
    lf_error e;
    for (int k = 0; k < 3; k++) {
        double t0 = cpu_seconds();
        for (lua_Integer r = 0; r < reps; r++)
            if (lf_rigid_potential_eval(s->sys, R, k != 1 ? &U : NULL, k != 0 ? tau : NULL, &e) != LF_OK)
                return lfb_error(L, &e);
        lua_pushnumber(L, (cpu_seconds() - t0) / (double)reps);
    }
    return 3;
}

/* ---------------------------------------------------------------- lf.compile */
typedef struct {
    lf_gmodule *m;
    int nargs, nin, nout, npar, scalar;
    int argsize[LF_GPROG_MAXSEG];
    double par[];
} compiled_fn;

static compiled_fn *checkcompiled(lua_State *L, int idx)
{
    compiled_fn *c = luaL_checkudata(L, idx, LFB_COMPILED);
    if (!c->m) luaL_error(L, "the compiled function has been finalized");
    return c;
}

static int cf_gc(lua_State *L)
{
    compiled_fn *c = luaL_checkudata(L, 1, LFB_COMPILED);
    lf_gmodule_free(c->m);
    c->m = NULL;
    return 0;
}

/* the size of an argument kind: "number" 1, "vec3" 3, "mat3" 9, an integer n: an array of n */
static int arg_size(lua_State *L, int idx, int i)
{
    if (lua_type(L, idx) == LUA_TSTRING) {
        const char *k = lua_tostring(L, idx);
        if (strcmp(k, "number") == 0) return 1;
        if (strcmp(k, "vec3") == 0) return 3;
        if (strcmp(k, "mat3") == 0) return 9;
    } else if (lua_isinteger(L, idx) && lua_tointeger(L, idx) >= 1 && lua_tointeger(L, idx) <= 4096)
        return (int)lua_tointeger(L, idx);
    return luaL_error(L, "lf.compile: args[%d] must be \"number\", \"vec3\", \"mat3\" or an array length 1..4096, got %s",
                      i, lfb_typename(L, idx));
}

/* read argument idx of size n into x (numbers, vec3, mat3, arrays) */
static void read_arg(lua_State *L, int idx, int n, double *x, int i)
{
    char w[64];
    snprintf(w, sizeof w, "argument #%d to the compiled function", i);
    if (n == 1) x[0] = lfb_checkfinite(L, idx, w);
    else if (n == 3) lfb_tovec3(L, idx, x, w);
    else if (n == 9) lfb_tomat3(L, idx, x, w);
    else {
        if (lua_type(L, idx) != LUA_TTABLE || (int)lua_rawlen(L, idx) != n)
            luaL_error(L, "%s: an array of %d numbers expected, got %s", w, n, lfb_typename(L, idx));
        for (int k = 0; k < n; k++) {
            lua_rawgeti(L, idx, k + 1);
            x[k] = lfb_checkfinite(L, -1, w);
            lua_pop(L, 1);
        }
    }
}

static void push_shaped(lua_State *L, int n, const double *v)
{
    if (n == 1) lua_pushnumber(L, v[0]);
    else if (n == 3) lfb_pushvec3(L, v);
    else if (n == 9) lfb_pushmat3(L, v);
    else {
        lua_createtable(L, n, 0);
        for (int k = 0; k < n; k++) {
            lua_pushnumber(L, v[k]);
            lua_rawseti(L, -2, k + 1);
        }
    }
}

static int cf_eval(lua_State *L, int gradient)
{
    compiled_fn *c = checkcompiled(L, 1);
    if (gradient && !c->scalar) return luaL_error(L, "compiled function: gradient needs a function returning a number");
    double *x = lua_newuserdatauv(L, ((size_t)c->nin + (size_t)c->nout + (size_t)c->nin + 1) * sizeof(double), 0);
    double *y = x + c->nin;
    const double *seg[LF_GPROG_MAXSEG];
    int off = 0;
    for (int i = 0; i < c->nargs; i++) {
        read_arg(L, i + 2, c->argsize[i], x + off, i + 1);
        seg[i] = x + off;
        off += c->argsize[i];
    }
    lf_gmodule_eval(c->m, gradient, seg, c->par, y, NULL);
    const int nres = gradient ? 1 + c->nin : c->nout;
    for (int i = 0; i < nres; i++)
        if (!isfinite(y[i])) return luaL_error(L, "compiled function: the result is not finite (%f)", y[i]);
    if (!gradient) {
        push_shaped(L, c->nout, y);
        return 1;
    }
    lua_pushnumber(L, y[0]);
    off = 1;
    for (int i = 0; i < c->nargs; i++) {
        push_shaped(L, c->argsize[i], y + off);
        off += c->argsize[i];
    }
    return 1 + c->nargs;
}

static int cf_call(lua_State *L) { return cf_eval(L, 0); }
static int cf_gradient(lua_State *L) { return cf_eval(L, 1); }

static int cf_index(lua_State *L)
{
    compiled_fn *c = checkcompiled(L, 1);
    const char *k = luaL_checkstring(L, 2);
    if (strcmp(k, "backend") == 0) lua_pushstring(L, lf_gmodule_backend(c->m) == LF_BACKEND_NATIVE ? "native" : "tape");
    else if (strcmp(k, "report") == 0) lua_pushstring(L, lf_gmodule_report(c->m));
    else if (strcmp(k, "nodes") == 0) lua_pushinteger(L, lf_gmodule_ops(c->m));
    else if (strcmp(k, "source") == 0) {
        const char *src = lf_gmodule_source(c->m);
        if (src) lua_pushstring(L, src);
        else lua_pushnil(L);
    } else if (strcmp(k, "gradient") == 0) lua_pushcfunction(L, cf_gradient);
    else if (strcmp(k, "compile_seconds") == 0) lua_pushnumber(L, lf_gmodule_compile_seconds(c->m));
    else if (strcmp(k, "load_seconds") == 0) lua_pushnumber(L, lf_gmodule_load_seconds(c->m));
    else lua_pushnil(L);
    return 1;
}

static int cf_tostring(lua_State *L)
{
    compiled_fn *c = luaL_checkudata(L, 1, LFB_COMPILED);
    if (!c->m) lua_pushliteral(L, "lf.compiled (finalized)");
    else lua_pushfstring(L, "lf.compiled(%s)", lf_gmodule_report(c->m));
    return 1;
}

/* lf.compile(fn, {args = {"mat3", "vec3", "number", n, ...}, params = {...}, backend = "auto" |
 * "native" | "tape", at = {example arguments}}) -> a callable: f(...) the value, f:gradient(...)
 * the value and its gradient with respect to each argument (a number result) */
static int l_compile(lua_State *L)
{
    const char *fn = "lf.compile";
    luaL_checktype(L, 1, LUA_TFUNCTION);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    static const char *const keys[] = {"args", "params", "backend", "at", NULL};
    lfb_check_keys(L, 2, keys, fn, "option");
    lfb_natural(L, 1);
    if (lua_getfield(L, 2, "args") != LUA_TTABLE) return luaL_error(L, "%s: option 'args' (a list of kinds) is required", fn);
    const int nargs = (int)lua_rawlen(L, 3);
    if (nargs < 1 || nargs > LF_GPROG_MAXSEG) return luaL_error(L, "%s: 1 to %d arguments", fn, LF_GPROG_MAXSEG);
    int size[LF_GPROG_MAXSEG], nin = 0;
    for (int i = 0; i < nargs; i++) {
        lua_rawgeti(L, 3, i + 1);
        size[i] = arg_size(L, -1, i + 1);
        lua_pop(L, 1);
        nin += size[i];
    }
    int backend = LF_BACKEND_AUTO;
    if (lua_getfield(L, 2, "backend") != LUA_TNIL) {
        const char *b = luaL_checkstring(L, -1);
        backend = strcmp(b, "native") == 0 ? LF_BACKEND_NATIVE : strcmp(b, "tape") == 0 ? LF_BACKEND_TAPE :
                  strcmp(b, "auto") == 0 ? LF_BACKEND_AUTO : -1;
        if (backend < 0) return luaL_error(L, "%s: option 'backend' must be \"auto\", \"native\" or \"tape\"", fn);
    }
    lua_pop(L, 1);
    /* the trace point: option `at`, else 0, (0,0,0), I */
    double *x0 = lua_newuserdatauv(L, ((size_t)nin + LFB_MAXPAR) * sizeof(double), 0), *par = x0 + nin;
    int at = lua_getfield(L, 2, "at") == LUA_TTABLE ? lua_gettop(L) : 0;
    for (int i = 0, off = 0; i < nargs; off += size[i], i++) {
        if (at) {
            lua_rawgeti(L, at, i + 1);
            read_arg(L, lua_gettop(L), size[i], x0 + off, i + 1);
            lua_pop(L, 1);
        } else
            for (int k = 0; k < size[i]; k++) x0[off + k] = size[i] == 9 ? (k % 4 == 0) : 0;
    }
    lfb_trace *t = lfb_trace_new(L, LFB_TRACE_STRICT, 0);
    const int tidx = lua_gettop(L);
    lua_pushvalue(L, 1);
    for (int i = 0, off = 0; i < nargs; off += size[i], i++) {
        if (size[i] == 1 || size[i] == 3 || size[i] == 9) lfb_trace_push_inputs(L, tidx, size[i], x0 + off);
        else {
            lua_createtable(L, size[i], 0);
            for (int k = 0; k < size[i]; k++) {
                lfb_trace_push_inputs(L, tidx, 1, x0 + off + k);
                lua_rawseti(L, -2, k + 1);
            }
        }
    }
    int npar = 0, np = 0;
    if (lua_getfield(L, 2, "params") != LUA_TNIL) {
        const int p = lua_gettop(L);
        lfb_trace_push_params(L, tidx, p, par, &npar, LFB_MAXPAR);
        lua_remove(L, p);
        np = 1;
    } else
        lua_pop(L, 1);
    lua_call(L, nargs + np, 1); /* errors (a traced comparison ...) go to the caller as they are */
    int out[9], nout = 0;
    char msg[120];
    static const int sizes[3] = {1, 3, 9};
    for (int k = 0; k < 3 && !nout; k++)
        if (lfb_trace_read(L, tidx, -1, sizes[k], out, msg, sizeof msg)) nout = sizes[k];
    if (!nout) return luaL_error(L, "%s: the function returned %s, expected a number, vec3 or mat3", fn, lfb_typename(L, -1));
    /* functions: the value; the value and its gradient (a number result) */
    int *grad = lua_newuserdatauv(L, ((size_t)nin + 1) * sizeof(int), 0);
    lf_graph *g = t->g;
    lf_gfunc_spec spec[2] = {{nout, out}, {0, grad}};
    int nf = 1;
    if (nout == 1) {
        int *wrt = lua_newuserdatauv(L, (size_t)nin * sizeof(int), 0);
        for (int i = 0; i < nin; i++) wrt[i] = lf_graph_input_node(g, i);
        grad[0] = out[0];
        lf_graph_vjp(g, 1, out, NULL, nin, wrt, grad + 1);
        spec[1].nout = 1 + nin;
        nf = 2;
    }
    lf_glayout layout = {nargs, {0}, 0, 0, NULL};
    for (int i = 0; i < nargs; i++) layout.seglen[i] = size[i];
    lf_error e;
    lf_gmodule *m = lf_gmodule_new(g, &layout, nf, spec, backend, NULL, &e);
    lfb_trace_end(t);
    if (!m) return lfb_error_in(L, fn, &e);
    compiled_fn *c = lua_newuserdatauv(L, sizeof *c + ((size_t)npar + 1) * sizeof(double), 1);
    memset(c, 0, sizeof *c);
    c->m = m;
    luaL_setmetatable(L, LFB_COMPILED);
    c->nargs = nargs;
    c->nin = nin;
    c->nout = nout;
    c->npar = npar;
    c->scalar = nout == 1;
    memcpy(c->argsize, size, sizeof size);
    memcpy(c->par, par, (size_t)npar * sizeof *par);
    return 1;
}

void lfb_open_compile(lua_State *L)
{
    luaL_newmetatable(L, LFB_COMPILED);
    const luaL_Reg meta[] = {{"__call", cf_call}, {"__index", cf_index}, {"__tostring", cf_tostring}, {"__gc", cf_gc},
                             {NULL, NULL}};
    luaL_setfuncs(L, meta, 0);
    lua_pop(L, 1);
    lua_pushcfunction(L, l_compile);
    lua_setfield(L, -2, "compile");
    lua_pushcfunction(L, l_time_potential);
    lua_setfield(L, -2, "time_potential");
}
