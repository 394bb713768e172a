/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — automatic differentiation at a point on the expression graph (shared/trace.h):
 * the C face of lf.autodiff (scripts/lieflow/autodiff.lua).
 *
 *   core.trace_gradient(f, x1, ..., xn) -> f(x1, ...), df/dx1, ..., df/dxn
 *       x_i numbers, vec3, mat3 or plain tables of these (recursively): each gradient has its
 *       argument's shape; one evaluation of f on traced values, one reverse sweep.
 *   core.lie_gradient(H, y, factors, trivialization), core.lie_jacobian(f, t, y, factors, trivialization)
 *       the trivialized differential of H and the Jacobian of f along the action (model_graph.h).
 *   core.dual(v [, {d1, d2, d3}]), core.traced_value(x), core.traced_grad(x), core.is_traced(x)
 *       forward mode: a traced number carrying three directions, in one trace shared by every
 *       value made this way (collected with the last of them).
 *   core.natural(fn): lfb_natural. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/open.h"
#include "shared/trace.h"
#include "model/model_graph.h"

#define MAXDEPTH 8

/* The message of an error raised while f ran on traced values, with the likely cause explained
 * when a traced value reached a function of plain numbers. */
static void explain_error(lua_State *L, const char *what)
{
    const char *m = lua_tostring(L, -1);
    if (m && strstr(m, "got lf.traced"))
        lua_pushfstring(L, "%s cannot be differentiated: it passes a traced value to a function of plain numbers (a "
                           "local alias like `local sqrt = math.sqrt`? call math.sqrt in it; or give the derivative "
                           "yourself): %s", what, m);
    else
        lua_pushfstring(L, "%s", m ? m : "(error object is not a string)");
    lua_error(L);
}

/* ---------------------------------------------------------------- shaped arguments */
/* Push the value at idx with its numbers made traced inputs of the trace at tidx: numbers, vec3,
 * mat3, and plain tables of these (recursively); anything else as it is. */
static void push_traced_copy(lua_State *L, int tidx, int idx, int depth)
{
    idx = lua_absindex(L, idx);
    const double *u;
    if (depth > MAXDEPTH) luaL_error(L, "autodiff: arguments nested deeper than %d tables", MAXDEPTH);
    luaL_checkstack(L, 8, "autodiff");
    if (lua_type(L, idx) == LUA_TNUMBER) {
        double v = lua_tonumber(L, idx);
        lfb_trace_push_inputs(L, tidx, 1, &v);
    } else if ((u = lfb_testvec3(L, idx))) lfb_trace_push_inputs(L, tidx, 3, u);
    else if ((u = lfb_testmat3(L, idx))) lfb_trace_push_inputs(L, tidx, 9, u);
    else if (lfb_plain_table(L, idx)) {
        lua_newtable(L);
        lua_pushnil(L);
        while (lua_next(L, idx)) {
            push_traced_copy(L, tidx, -1, depth + 1);
            lua_remove(L, -2);
            lua_pushvalue(L, -2);
            lua_insert(L, -2);
            lua_rawset(L, -4);
        }
    } else
        lua_pushvalue(L, idx);
}

/* Push the gradient shaped like the value at idx (as push_traced_copy walked it), reading g[*k..]. */
static void push_shaped(lua_State *L, int idx, const double *g, int *k, int depth)
{
    idx = lua_absindex(L, idx);
    luaL_checkstack(L, 8, "autodiff");
    if (lua_type(L, idx) == LUA_TNUMBER) lua_pushnumber(L, g[(*k)++]);
    else if (lfb_testvec3(L, idx)) {
        lfb_pushvec3(L, g + *k);
        *k += 3;
    } else if (lfb_testmat3(L, idx)) {
        lfb_pushmat3(L, g + *k);
        *k += 9;
    } else if (lfb_plain_table(L, idx) && depth <= MAXDEPTH) {
        lua_newtable(L);
        lua_pushnil(L);
        while (lua_next(L, idx)) {
            push_shaped(L, -1, g, k, depth + 1);
            lua_remove(L, -2);
            lua_pushvalue(L, -2);
            lua_insert(L, -2);
            lua_rawset(L, -4);
        }
    } else
        lua_pushnil(L);
}

/* ---------------------------------------------------------------- gradient */
/* f (at 1) called on traced copies of its arguments 2..n; the trace at n + 1, the result at n + 2 */
static lfb_trace *call_traced(lua_State *L, int *n)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    *n = lua_gettop(L);
    lfb_trace *t = lfb_trace_new(L, LFB_TRACE_POINT, 0);
    const int tidx = lua_gettop(L);
    lua_pushvalue(L, 1);
    for (int i = 2; i <= *n; i++) push_traced_copy(L, tidx, i, 0);
    if (lua_pcall(L, *n - 1, 1, 0) != LUA_OK) {
        t->active = 0;
        explain_error(L, "f(x)");
    }
    return t;
}

static int l_trace_gradient(lua_State *L)
{
    int n;
    lfb_trace *t = call_traced(L, &n);
    const int tidx = n + 1, nin = lf_graph_ninputs(t->g);
    int out;
    lf_error e;
    if (lfb_trace_read_number(L, tidx, -1, NULL, &out, &e) != LF_OK) {
        t->active = 0;
        return luaL_error(L, "autodiff: f(x) returned %s, expected a number", lfb_typename(L, -1));
    }
    double *g = lua_newuserdatauv(L, ((size_t)nin + 1) * sizeof(double), 0);
    int *wrt = lua_newuserdatauv(L, ((size_t)nin + 1) * sizeof(int), 0);
    for (int i = 0; i < nin; i++) wrt[i] = lf_graph_input_node(t->g, i);
    if (lf_graph_gradient(t->g, out, nin, wrt, g, &e) != LF_OK) return lfb_error(L, &e);
    const double v = lf_graph_value(t->g, out);
    t->active = 0;
    if (!isfinite(v)) return luaL_error(L, "autodiff: f(x) is not finite (%f) at this point", v);
    for (int i = 0; i < nin; i++)
        if (!isfinite(g[i]))
            return luaL_error(L, "autodiff: f(x): the derivative is not finite (%f with respect to input %d): not "
                                 "differentiable at this point (e.g. atan2(0, 0), log(0), sqrt at 0)", g[i], i + 1);
    lua_pushnumber(L, v);
    int k = 0;
    for (int i = 2; i <= n; i++) push_shaped(L, i, g, &k, 0);
    return n;
}

/* ---------------------------------------------------------------- along the action */
/* A manifold from factor names (argument fi) and a trivialization (argument ti), owned by a
 * userdata pushed on the stack (freed by its __gc). */
static int manifold_gc(lua_State *L)
{
    lf_manifold **M = lua_touserdata(L, 1);
    lf_manifold_free(*M);
    *M = NULL;
    return 0;
}

static lf_manifold *arg_manifold(lua_State *L, int fi, int ti, const char *fn)
{
    luaL_checktype(L, fi, LUA_TTABLE);
    const int n = (int)lua_rawlen(L, fi);
    if (n < 1 || n > 10000) luaL_error(L, "%s: factors must list 1 to 10000 factor names", fn);
    lf_factor_kind *kinds = lua_newuserdatauv(L, (size_t)n * (sizeof *kinds + sizeof(int)), 0);
    int *dims = (int *)(kinds + n);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, fi, i + 1);
        const char *name = lua_tostring(L, -1);
        if (!name || lua_type(L, -1) != LUA_TSTRING || lf_factor_parse(name, &kinds[i], &dims[i]) != 0)
            luaL_error(
                L,
                "%s: factors[%d] is not a factor name (\"so3\", \"s2\", \"s3\", \"gl3\", \"ts2\", \"tgl3\", \"se3\", "
                "\"r<m>\")",
                fn, i + 1);
        lua_pop(L, 1);
    }
    const char *triv = luaL_optstring(L, ti, "right");
    if (strcmp(triv, "left") != 0 && strcmp(triv, "right") != 0)
        luaL_error(L, "%s: trivialization must be \"right\" or \"left\", got \"%s\"", fn, triv);
    lf_error e;
    lf_manifold *M = lf_manifold_new(n, kinds, dims, strcmp(triv, "left") == 0 ? LF_LEFT_TRIVIALIZED : LF_RIGHT_TRIVIALIZED, &e);
    if (!M) lfb_error(L, &e);
    lf_manifold **u = lua_newuserdatauv(L, sizeof *u, 0);
    *u = M;
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, manifold_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    return M;
}

/* y (argument yi, one value per factor) into a new array */
static double *arg_point(lua_State *L, int yi, const lf_manifold *M, const char *fn)
{
    luaL_checktype(L, yi, LUA_TTABLE);
    double *y = lua_newuserdatauv(L, (size_t)lf_manifold_nparam(M) * sizeof(double), 0);
    for (int i = 0; i < lf_manifold_nfactors(M); i++) {
        char w[64];
        snprintf(w, sizeof w, "%s: y[%d]", fn, i + 1);
        lua_rawgeti(L, yi, i + 1);
        const lf_factor *f = lf_manifold_factor(M, i);
        lfb_read_factor(L, -1, f, y + f->op, w);
        lua_pop(L, 1);
    }
    return y;
}

/* the traced state (t as input 0 when with_t) and the call of the function at fi */
static lfb_trace *call_on_state(lua_State *L, int fi, const lf_manifold *M, const double *y, int with_t, double t0,
                                const char *what)
{
    lfb_trace *t = lfb_trace_new(L, LFB_TRACE_POINT, 0);
    const int tidx = lua_gettop(L);
    lua_pushvalue(L, fi);
    lfb_trace_push_inputs(L, tidx, 1, &t0); /* input 0: t (left out of H's arguments) */
    if (!with_t) lua_pop(L, 1);
    lua_createtable(L, lf_manifold_nfactors(M), 0);
    for (int i = 0; i < lf_manifold_nfactors(M); i++) {
        const lf_factor *f = lf_manifold_factor(M, i);
        lfb_trace_push_factor(L, tidx, f, y + f->op, 0);
        lua_rawseti(L, -2, i + 1);
    }
    if (lua_pcall(L, with_t ? 2 : 1, 1, 0) != LUA_OK) {
        t->active = 0;
        explain_error(L, what);
    }
    return t;
}

/* core.lie_gradient(H, y, factors, trivialization) -> {g_1, ..., g_nd} */
static int l_lie_gradient(lua_State *L)
{
    const char *fn = "autodiff lie_gradient";
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_settop(L, 4);
    const lf_manifold *M = arg_manifold(L, 3, 4, fn);
    const double *y = arg_point(L, 2, M, fn);
    const int np = lf_manifold_nparam(M), nd = lf_manifold_ndim(M);
    double *w = lua_newuserdatauv(L, ((size_t)np + 1 + (size_t)np * nd + np + nd + nd) * sizeof(double), 0);
    int *wrt = lua_newuserdatauv(L, ((size_t)np + 1) * sizeof(int), 0);
    lfb_trace *t = call_on_state(L, 1, M, y, 0, 0, "H(y)");
    const int tidx = lua_gettop(L) - 1;
    int out;
    lf_error e;
    if (lfb_trace_read_number(L, tidx, -1, NULL, &out, &e) != LF_OK)
        return luaL_error(L, "%s: H(y) returned %s, expected a number", fn, lfb_typename(L, -1));
    for (int i = 0; i < np + 1; i++) wrt[i] = lf_graph_input_node(t->g, i);
    if (lf_graph_gradient(t->g, out, np + 1, wrt, w, &e) != LF_OK) return lfb_error(L, &e);
    t->active = 0;
    double *g = w + np + 1 + (size_t)np * nd + np + nd;
    lf_lie_trivialize_gradient(M, y, w + 1, g, w + np + 1);
    lua_createtable(L, nd, 0);
    for (int j = 0; j < nd; j++) {
        if (!isfinite(g[j])) return luaL_error(L, "%s: the derivative is not finite (%f)", fn, g[j]);
        lua_pushnumber(L, g[j]);
        lua_rawseti(L, -2, j + 1);
    }
    return 1;
}

/* core.lie_jacobian(f, t, y, factors, trivialization) -> nd rows of nd numbers */
static int l_lie_jacobian(lua_State *L)
{
    const char *fn = "autodiff lie_jacobian";
    luaL_checktype(L, 1, LUA_TFUNCTION);
    const double t0 = luaL_checknumber(L, 2);
    lua_settop(L, 5);
    const lf_manifold *M = arg_manifold(L, 4, 5, fn);
    const double *y = arg_point(L, 3, M, fn);
    const int np = lf_manifold_nparam(M), nd = lf_manifold_ndim(M);
    double *w = lua_newuserdatauv(L, ((size_t)np + 1 + (size_t)nd * np + (size_t)np * nd + np + nd + (size_t)nd * nd) * sizeof(double), 0);
    int *ids = lua_newuserdatauv(L, ((size_t)np + 1 + nd) * sizeof(int), 0), *xi = ids + np + 1;
    lfb_trace *t = call_on_state(L, 1, M, y, 1, t0, "f(t, y)");
    const int tidx = lua_gettop(L) - 1;
    lf_error e;
    if (lfb_trace_read_algebra(L, tidx, -1, M, xi, "f(t, y)", &e) != LF_OK) return luaL_error(L, "%s: %s", fn, e.msg);
    for (int i = 0; i < np + 1; i++) ids[i] = lf_graph_input_node(t->g, i);
    double *g = w, *J = g + np + 1, *work = J + (size_t)nd * np, *D = work + (size_t)np * nd + np + nd;
    for (int i = 0; i < nd; i++) {
        if (lf_graph_gradient(t->g, xi[i], np + 1, ids, g, &e) != LF_OK) return lfb_error(L, &e);
        memcpy(J + (size_t)i * np, g + 1, (size_t)np * sizeof *g);
    }
    t->active = 0;
    lf_lie_trivialize_jacobian(M, y, J, D, work);
    lua_createtable(L, nd, 0);
    for (int i = 0; i < nd; i++) {
        lua_createtable(L, nd, 0);
        for (int j = 0; j < nd; j++) {
            lua_pushnumber(L, D[(size_t)i * nd + j]);
            lua_rawseti(L, -2, j + 1);
        }
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* ---------------------------------------------------------------- forward mode (dual values) */
/* The shared trace of dual values (weakly referenced: collected with its last value). */
static int push_ambient(lua_State *L)
{
    if (lua_getfield(L, LUA_REGISTRYINDEX, "lieflow.ambient") != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_createtable(L, 0, 1);
        lua_pushliteral(L, "v");
        lua_setfield(L, -2, "__mode");
        lua_setmetatable(L, -2);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, "lieflow.ambient");
    }
    lfb_trace *t = NULL;
    if (lua_rawgeti(L, -1, 1) == LUA_TUSERDATA) t = luaL_testudata(L, -1, LFB_TRACE);
    if (!t || !t->g || lf_graph_size(t->g) > LF_GRAPH_MAX_NODES / 2) {
        lua_pop(L, 1);
        t = lfb_trace_new(L, LFB_TRACE_POINT, 3);
        t->ambient = 1;
        lua_pushvalue(L, -1);
        lua_rawseti(L, -3, 1);
    }
    lua_remove(L, -2);
    return lua_gettop(L);
}

/* core.dual(v [, {d1, d2, d3}]) */
static int l_dual(lua_State *L)
{
    double v = luaL_checknumber(L, 1), d[3] = {0, 0, 0};
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        for (int i = 0; i < 3; i++) {
            lua_rawgeti(L, 2, i + 1);
            d[i] = lua_isnil(L, -1) ? 0 : luaL_checknumber(L, -1);
            lua_pop(L, 1);
        }
    }
    const int tidx = push_ambient(L);
    int id = lf_graph_input(((lfb_trace *)lua_touserdata(L, tidx))->g, v, d);
    lfb_trace_push(L, tidx, 1, &id);
    return 1;
}

/* the traced value at idx: its trace's graph and the value's nodes (n of them); NULL if not traced */
static const lf_graph *traced_nodes(lua_State *L, int idx, int *ids, int *n)
{
    static const int sizes[3] = {1, 3, 9};
    if (!lfb_is_traced(L, idx)) return NULL;
    lua_getiuservalue(L, idx, 1);
    lfb_trace *t = luaL_checkudata(L, -1, LFB_TRACE);
    const int tidx = lua_gettop(L);
    char msg[64];
    for (int s = 0; s < 3; s++)
        if (t->g && lfb_trace_read(L, tidx, idx, sizes[s], ids, msg, sizeof msg)) {
            *n = sizes[s];
            lua_pop(L, 1);
            return t->g;
        }
    lua_pop(L, 1);
    return NULL;
}

static void push_numbers(lua_State *L, int n, const double *v)
{
    if (n == 1) lua_pushnumber(L, v[0]);
    else if (n == 3) lfb_pushvec3(L, v);
    else lfb_pushmat3(L, v);
}

/* core.traced_value(x): a number / vec3 / mat3 for a traced value, anything else as it is */
static int l_traced_value(lua_State *L)
{
    int ids[9], n;
    lua_settop(L, 1);
    const lf_graph *g = traced_nodes(L, 1, ids, &n);
    if (!g) return 1;
    double v[9];
    for (int i = 0; i < n; i++) {
        v[i] = lf_graph_value(g, ids[i]);
        if (!isfinite(v[i]))
            return luaL_error(L, "ad.value: the value is not finite (%f): an operation overflowed or had no value "
                                 "(traced values are plain double arithmetic)", v[i]);
    }
    push_numbers(L, n, v);
    return 1;
}

/* core.traced_grad(x): the three directional derivatives (numbers, vec3 or mat3 each) */
static int l_traced_grad(lua_State *L)
{
    int ids[9], n;
    lua_settop(L, 1);
    if (lua_type(L, 1) == LUA_TNUMBER) {
        for (int k = 0; k < 3; k++) lua_pushnumber(L, 0);
        return 3;
    }
    const lf_graph *g = traced_nodes(L, 1, ids, &n);
    if (!g) return luaL_error(L, "ad.grad: number or dual value expected, got %s", lfb_typename(L, 1));
    if (lf_graph_ntangents(g) < 3) return luaL_error(L, "ad.grad: a traced value without directions (not made by ad.dual)");
    for (int k = 0; k < 3; k++) {
        double v[9];
        for (int i = 0; i < n; i++) {
            v[i] = lf_graph_tangent(g, ids[i])[k];
            if (!isfinite(v[i])) /* as ad.value: an error, never a silent NaN (fuzz finding) */
                return luaL_error(L, "ad.grad: the derivative is not finite (the value went through a singular "
                                     "point of a function, e.g. sqrt or |v| at 0)");
        }
        push_numbers(L, n, v);
    }
    return 3;
}

static int l_is_traced(lua_State *L)
{
    lua_pushboolean(L, lfb_is_traced(L, 1));
    return 1;
}

static int l_natural(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_settop(L, 1);
    lfb_natural(L, 1);
    return 1;
}

void lfb_open_autodiff(lua_State *L)
{
    const luaL_Reg f[] = {{"trace_gradient", l_trace_gradient},
                          {"lie_gradient", l_lie_gradient},     {"lie_jacobian", l_lie_jacobian},
                          {"dual", l_dual},                     {"traced_value", l_traced_value},
                          {"traced_grad", l_traced_grad},       {"is_traced", l_is_traced},
                          {"natural", l_natural},               {NULL, NULL}};
    luaL_setfuncs(L, f, 0);
}
