/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — lf.compile: any Lua function of numbers, vec3, mat3 and arrays traced into an
 * expression graph and compiled with its gradient (the same as compiled models, lmodel.c); and
 * core.time_potential, the benchmarks' timer of a system's potential. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lbind.h"
#include "lopen.h"
#include "ltrace.h"
#include "model_graph.h"

#define LFB_COMPILED "lf.compiled"

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
