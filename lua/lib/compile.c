/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — lf.compile: any Lua function of numbers, vec3, mat3 and arrays traced into an
 * expression graph and compiled with its gradient (the same as compiled models, shared/model.c); and
 * core.time_potential, the benchmarks' timer of a system's potential. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shared/bind.h"
#include "lib/open.h"
#include "shared/trace.h"
#include "shared/model.h"
#include "model/model_graph.h"

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
static lfb_compiled *checkcompiled(lua_State *L, int idx)
{
    lfb_compiled *c = luaL_checkudata(L, idx, LFB_COMPILED);
    if (!c->m) luaL_error(L, "the compiled function has been finalized");
    return c;
}

static int cf_gc(lua_State *L)
{
    lfb_compiled *c = luaL_checkudata(L, 1, LFB_COMPILED);
    lf_gmodule_free(c->m);
    c->m = NULL;
    return 0;
}

/* An argument's kind: "number" 1, "vec3" 3, "mat3" 9; an integer n: an array of n numbers, -n (an
 * array of 3 is not a vec3: its function gets a table, its gradient is a table) */
static int arg_kind(lua_State *L, int idx, int i)
{
    if (lua_type(L, idx) == LUA_TSTRING) {
        const char *k = lua_tostring(L, idx);
        if (strcmp(k, "number") == 0) return 1;
        if (strcmp(k, "vec3") == 0) return 3;
        if (strcmp(k, "mat3") == 0) return 9;
    } else if (lua_isinteger(L, idx) && lua_tointeger(L, idx) >= 1 && lua_tointeger(L, idx) <= 4096)
        return -(int)lua_tointeger(L, idx);
    return luaL_error(L, "lf.compile: args[%d] must be \"number\", \"vec3\", \"mat3\" or an array length 1..4096, got %s",
                      i, lfb_typename(L, idx));
}

static int kind_size(int kind) { return kind < 0 ? -kind : kind; }

/* read argument idx of the given kind into x (numbers, vec3, mat3, arrays) */
static void read_arg(lua_State *L, int idx, int kind, double *x, int i)
{
    char w[64];
    snprintf(w, sizeof w, "argument #%d to the compiled function", i);
    if (kind == 1) x[0] = lfb_checkfinite(L, idx, w);
    else if (kind == 3) lfb_tovec3(L, idx, x, w);
    else if (kind == 9) lfb_tomat3(L, idx, x, w);
    else {
        const int n = -kind;
        if (lua_type(L, idx) != LUA_TTABLE || (int)lua_rawlen(L, idx) != n)
            luaL_error(L, "%s: an array of %d numbers expected, got %s", w, n, lfb_typename(L, idx));
        for (int k = 0; k < n; k++) {
            lua_rawgeti(L, idx, k + 1);
            x[k] = lfb_checkfinite(L, -1, w);
            lua_pop(L, 1);
        }
    }
}

/* push values of a kind (an output of n numbers: kind n, a number, vec3 or mat3) */
static void push_shaped(lua_State *L, int kind, const double *v)
{
    if (kind == 1) lua_pushnumber(L, v[0]);
    else if (kind == 3) lfb_pushvec3(L, v);
    else if (kind == 9) lfb_pushmat3(L, v);
    else {
        const int n = kind_size(kind);
        lua_createtable(L, n, 0);
        for (int k = 0; k < n; k++) {
            lua_pushnumber(L, v[k]);
            lua_rawseti(L, -2, k + 1);
        }
    }
}

static int cf_eval(lua_State *L, int gradient)
{
    lfb_compiled *c = checkcompiled(L, 1);
    if (gradient && !c->scalar) return luaL_error(L, "compiled function: gradient needs a function returning a number");
    double *x = lua_newuserdatauv(L, ((size_t)c->nin + (size_t)c->nout + (size_t)c->nin + 1) * sizeof(double), 0);
    double *y = x + c->nin;
    const double *seg[LF_GPROG_MAXSEG];
    int off = 0;
    for (int i = 0; i < c->nargs; i++) {
        read_arg(L, i + 2, c->argkind[i], x + off, i + 1);
        seg[i] = x + off;
        off += kind_size(c->argkind[i]);
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
        push_shaped(L, c->argkind[i], y + off);
        off += kind_size(c->argkind[i]);
    }
    return 1 + c->nargs;
}

static int cf_call(lua_State *L) { return cf_eval(L, 0); }

static int cf_gradient(lua_State *L) { return cf_eval(L, 1); }

static int cf_index(lua_State *L)
{
    lfb_compiled *c = checkcompiled(L, 1);
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
    lfb_compiled *c = luaL_checkudata(L, 1, LFB_COMPILED);
    if (!c->m) lua_pushliteral(L, "lf.compiled (finalized)");
    else lua_pushfstring(L, "lf.compiled(%s)", lf_gmodule_report(c->m));
    return 1;
}

/* lf.compile(fn, {args = {"mat3", "vec3", "number", n, ...}, params = {...}, backend = "auto" |
 * "native" | "tape", at = {example arguments}}) -> a callable: f(...) the value, f:gradient(...)
 * the value and its gradient with respect to each argument (a number result) */
/* The kinds of option `args` of table 2 (their count; nin: the numbers in all). */
static int read_kinds(lua_State *L, int *kind, int *nin, const char *fn)
{
    if (lua_getfield(L, 2, "args") != LUA_TTABLE) luaL_error(L, "%s: option 'args' (a list of kinds) is required", fn);
    const int nargs = (int)lua_rawlen(L, -1);
    if (nargs < 1 || nargs > LF_GPROG_MAXSEG) luaL_error(L, "%s: 1 to %d arguments", fn, LF_GPROG_MAXSEG);
    *nin = 0;
    for (int i = 0; i < nargs; i++) {
        lua_rawgeti(L, -1, i + 1);
        kind[i] = arg_kind(L, -1, i + 1);
        lua_pop(L, 1);
        *nin += kind_size(kind[i]);
    }
    lua_pop(L, 1);
    return nargs;
}

/* The point to trace at: option `at` of table 2, else 0, zero vectors, the identity. */
static void trace_point(lua_State *L, int nargs, const int *kind, double *x0)
{
    int at = lua_getfield(L, 2, "at") == LUA_TTABLE ? lua_gettop(L) : 0;
    for (int i = 0, off = 0; i < nargs; off += kind_size(kind[i]), i++) {
        if (at) {
            lua_rawgeti(L, at, i + 1);
            read_arg(L, lua_gettop(L), kind[i], x0 + off, i + 1);
            lua_pop(L, 1);
        } else
            for (int k = 0; k < kind_size(kind[i]); k++) x0[off + k] = kind[i] == 9 ? (k % 4 == 0) : 0;
    }
    lua_pop(L, 1);
}

/* Push the traced arguments (new inputs with the values x0) and the traced parameters of table 2
 * (their values into par); the number of arguments pushed. */
static int push_traced_args(lua_State *L, int tidx, int nargs, const int *kind, const double *x0, double *par,
                            int *npar)
{
    for (int i = 0, off = 0; i < nargs; off += kind_size(kind[i]), i++) {
        if (kind[i] > 0) lfb_trace_push_inputs(L, tidx, kind[i], x0 + off);
        else {
            lua_createtable(L, -kind[i], 0);
            for (int k = 0; k < -kind[i]; k++) {
                lfb_trace_push_inputs(L, tidx, 1, x0 + off + k);
                lua_rawseti(L, -2, k + 1);
            }
        }
    }
    *npar = 0;
    if (lua_getfield(L, 2, "params") == LUA_TNIL) {
        lua_pop(L, 1);
        return nargs;
    }
    const int p = lua_gettop(L);
    lfb_trace_push_params(L, tidx, p, par, npar, LFB_MAXPAR);
    lua_remove(L, p);
    return nargs + 1;
}

/* The module of the traced function's result (at the top; a number, vec3 or mat3): its value and,
 * for a number, the value with the gradient with respect to every input. */
static lf_gmodule *module_of(lua_State *L, lfb_trace *t, int tidx, int nargs, const int *kind, int nin, int backend,
                             int *nout, const char *fn)
{
    int out[9];
    char msg[120];
    static const int sizes[3] = {1, 3, 9};
    *nout = 0;
    for (int k = 0; k < 3 && !*nout; k++)
        if (lfb_trace_read(L, tidx, -1, sizes[k], out, msg, sizeof msg)) *nout = sizes[k];
    if (!*nout) luaL_error(L, "%s: the function returned %s, expected a number, vec3 or mat3", fn, lfb_typename(L, -1));
    int *grad = lua_newuserdatauv(L, ((size_t)nin + 1) * sizeof(int), 0);
    lf_graph *g = t->g;
    lf_gfunc_spec spec[2] = {{*nout, out}, {0, grad}};
    int nf = 1;
    if (*nout == 1) {
        int *wrt = lua_newuserdatauv(L, (size_t)nin * sizeof(int), 0);
        for (int i = 0; i < nin; i++) wrt[i] = lf_graph_input_node(g, i);
        grad[0] = out[0];
        lf_graph_vjp(g, 1, out, NULL, nin, wrt, grad + 1);
        spec[1].nout = 1 + nin;
        nf = 2;
    }
    lf_glayout layout = {nargs, {0}, 0, 0, NULL};
    for (int i = 0; i < nargs; i++) layout.seglen[i] = kind_size(kind[i]);
    lf_error e;
    lf_gmodule *m = lf_gmodule_new(g, &layout, nf, spec, backend, NULL, &e);
    lfb_trace_end(t);
    if (!m) lfb_error_in(L, fn, &e);
    return m;
}

static int l_compile(lua_State *L)
{
    const char *fn = "lf.compile";
    luaL_checktype(L, 1, LUA_TFUNCTION);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    static const char *const keys[] = {"args", "params", "backend", "at", NULL};
    lfb_check_keys(L, 2, keys, fn, "option");
    lfb_natural(L, 1);
    int kind[LF_GPROG_MAXSEG], nin;
    const int nargs = read_kinds(L, kind, &nin, fn);
    int backend = LF_BACKEND_AUTO;
    if (lua_getfield(L, 2, "backend") != LUA_TNIL) {
        const char *b = luaL_checkstring(L, -1);
        backend = strcmp(b, "native") == 0 ? LF_BACKEND_NATIVE : strcmp(b, "tape") == 0 ? LF_BACKEND_TAPE :
                  strcmp(b, "auto") == 0 ? LF_BACKEND_AUTO : -1;
        if (backend < 0) return luaL_error(L, "%s: option 'backend' must be \"auto\", \"native\" or \"tape\"", fn);
    }
    lua_pop(L, 1);
    double *x0 = lua_newuserdatauv(L, ((size_t)nin + LFB_MAXPAR) * sizeof(double), 0), *par = x0 + nin;
    trace_point(L, nargs, kind, x0);
    lfb_trace *t = lfb_trace_new(L, LFB_TRACE_STRICT, 0);
    const int tidx = lua_gettop(L);
    lua_pushvalue(L, 1);
    int npar;
    const int n = push_traced_args(L, tidx, nargs, kind, x0, par, &npar);
    lua_call(L, n, 1); /* errors (a traced comparison ...) go to the caller as they are */
    int nout;
    lf_gmodule *m = module_of(L, t, tidx, nargs, kind, nin, backend, &nout, fn);
    lfb_compiled *c = lua_newuserdatauv(L, sizeof *c + ((size_t)npar + 1) * sizeof(double), 1);
    memset(c, 0, sizeof *c);
    c->m = m;
    luaL_setmetatable(L, LFB_COMPILED);
    c->nargs = nargs;
    c->nin = nin;
    c->nout = nout;
    c->npar = npar;
    c->scalar = nout == 1;
    memcpy(c->argkind, kind, sizeof kind);
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
