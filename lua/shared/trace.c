/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — the tracer (shared/trace.h): traces, traced values with their operators and
 * methods, parameters, derivatives at a point, functions that see lf.math as math. lf.math and the
 * traced versions of the maps are in lib/math.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/trace_internal.h"


/* ---------------------------------------------------------------- traces */
static int trace_gc(lua_State *L)
{
    lfb_trace *t = luaL_checkudata(L, 1, LFB_TRACE);
    lf_graph_free(t->g);
    t->g = NULL;
    t->active = 0;
    return 0;
}

lfb_trace *lfb_trace_new(lua_State *L, int mode, int nt)
{
    lfb_trace *t = lua_newuserdatauv(L, sizeof *t, 0);
    memset(t, 0, sizeof *t);
    luaL_setmetatable(L, LFB_TRACE);
    lf_error e;
    t->g = lf_graph_new(nt, &e);
    if (!t->g) lfb_error(L, &e);
    t->mode = mode;
    t->active = 1;
    return t;
}

void lfb_trace_end(lfb_trace *t) { t->active = 0; }

int lfb_is_traced(lua_State *L, int idx) { return luaL_testudata(L, idx, LFB_TRACED) != NULL; }

int lfb_plain_table(lua_State *L, int idx)
{
    if (lua_type(L, idx) != LUA_TTABLE) return 0;
    if (!lua_getmetatable(L, idx)) return 1;
    lua_pop(L, 1);
    return 0;
}

lfb_traced *lfb_tr_value(lua_State *L, int idx) { return luaL_testudata(L, idx, LFB_TRACED); }

lfb_trace *lfb_tr_at(lua_State *L, int tidx) { return luaL_checkudata(L, tidx, LFB_TRACE); }

/* Push the trace of the traced value at idx; raise if it has ended. */
static lfb_trace *push_trace_of(lua_State *L, int idx)
{
    lua_getiuservalue(L, idx, 1);
    lfb_trace *t = luaL_checkudata(L, -1, LFB_TRACE);
    if (!t->active || !t->g)
        luaL_error(L, "a traced value is used after the function that was traced returned (kept in an upvalue or a "
                      "global?): compute with the arguments the function receives");
    return t;
}

void lfb_trace_push(lua_State *L, int tidx, int kind, const int *ids)
{
    tidx = lua_absindex(L, tidx);
    lfb_traced *v = lua_newuserdatauv(L, sizeof *v, 1);
    v->kind = kind;
    memcpy(v->id, ids, (size_t)kind * sizeof *ids);
    luaL_setmetatable(L, LFB_TRACED);
    lua_pushvalue(L, tidx);
    lua_setiuservalue(L, -2, 1);
    if (lf_graph_status(lfb_tr_at(L, tidx)->g) != LF_OK) lfb_error(L, lf_graph_error(lfb_tr_at(L, tidx)->g));
}

void lfb_trace_push_inputs(lua_State *L, int tidx, int n, const double *v)
{
    lf_graph *g = lfb_tr_at(L, tidx)->g;
    int ids[9];
    for (int i = 0; i < n; i++) ids[i] = lf_graph_input(g, v[i], NULL);
    lfb_trace_push(L, tidx, n, ids);
}

/* a table of n traced scalars (new inputs with values v) */
static void push_input_array(lua_State *L, int tidx, int n, const double *v)
{
    tidx = lua_absindex(L, tidx);
    lua_createtable(L, n, 0);
    for (int k = 0; k < n; k++) {
        lfb_trace_push_inputs(L, tidx, 1, v + k);
        lua_rawseti(L, -2, k + 1);
    }
}

void lfb_trace_push_factor(lua_State *L, int tidx, const lf_factor *f, const double *p, int rm_as_vec3)
{
    tidx = lua_absindex(L, tidx);
    switch (f->kind) {
    case LF_TS2:
    case LF_TGL3: {
        const int m = f->kind == LF_TS2 ? 3 : 9;
        lua_createtable(L, 0, 2);
        lfb_trace_push_inputs(L, tidx, m, p);
        lua_setfield(L, -2, f->kind == LF_TS2 ? "q" : "F");
        lfb_trace_push_inputs(L, tidx, m, p + m);
        lua_setfield(L, -2, f->kind == LF_TS2 ? "omega" : "P");
        return;
    }
    case LF_SE3: /* {R = traced mat3, p = traced vec3}: inputs in the point's order (R row-major, then p) */
        lua_createtable(L, 0, 2);
        lfb_trace_push_inputs(L, tidx, 9, p);
        lua_setfield(L, -2, "R");
        lfb_trace_push_inputs(L, tidx, 3, p + 9);
        lua_setfield(L, -2, "p");
        return;
    case LF_SO3:
    case LF_GL3: lfb_trace_push_inputs(L, tidx, 9, p); return;
    case LF_S2: lfb_trace_push_inputs(L, tidx, 3, p); return;
    case LF_S3: push_input_array(L, tidx, 4, p); return;
    case LF_RM:
        if (rm_as_vec3 && f->nd == 3) lfb_trace_push_inputs(L, tidx, 3, p);
        else push_input_array(L, tidx, f->nd, p);
        return;
    }
}

/* ---------------------------------------------------------------- parameters */
/* The string keys of the table at pidx, sorted, pushed as an array; returns their count. */
static int sorted_keys(lua_State *L, int pidx, const char *fn)
{
    pidx = lua_absindex(L, pidx);
    lua_newtable(L);
    int n = 0;
    lua_pushnil(L);
    while (lua_next(L, pidx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            luaL_error(L, "%s: params must have names as keys ({alpha = 0.3, ...}), got a %s key", fn, luaL_typename(L, -1));
        lua_pushvalue(L, -1);
        lua_rawseti(L, -3, ++n);
    }
    /* insertion sort (parameter tables are small) */
    for (int i = 2; i <= n; i++)
        for (int j = i; j > 1; j--) {
            lua_rawgeti(L, -1, j - 1);
            lua_rawgeti(L, -2, j);
            int swap = strcmp(lua_tostring(L, -2), lua_tostring(L, -1)) > 0;
            if (swap) {
                lua_rawseti(L, -3, j - 1);
                lua_rawseti(L, -2, j);
            } else
                lua_pop(L, 2);
            if (!swap) break;
        }
    return n;
}

/* The numbers of one parameter value at idx (a number, vec3, mat3 or plain table of 3 or 9
 * numbers or 3 rows): their count (1, 3 or 9) into v. */
int lfb_params_read_one(lua_State *L, int idx, const char *key, double *v, const char *fn)
{
    char w[160];
    snprintf(w, sizeof w, "%s: params.%s", fn, key);
    if (lua_type(L, idx) == LUA_TNUMBER) {
        v[0] = lfb_checkfinite(L, idx, w);
        return 1;
    }
    if (lfb_testvec3(L, idx)) {
        lfb_tovec3(L, idx, v, w);
        return 3;
    }
    if (lfb_testmat3(L, idx)) {
        lfb_tomat3(L, idx, v, w);
        return 9;
    }
    if (lfb_plain_table(L, idx)) {
        size_t len = lua_rawlen(L, idx);
        int nested = lua_rawgeti(L, idx, 1) == LUA_TTABLE;
        lua_pop(L, 1);
        if (len == 3 && !nested) {
            lfb_tovec3(L, idx, v, w);
            return 3;
        }
        if (len == 9 || (len == 3 && nested)) {
            lfb_tomat3(L, idx, v, w);
            return 9;
        }
    }
    return luaL_error(L, "%s: a number, vec3 or mat3 expected, got %s", w, lfb_typename(L, idx));
}

int lfb_params_read(lua_State *L, int pidx, double *par, int maxpar, const char *fn)
{
    if (lua_isnoneornil(L, pidx)) return 0;
    pidx = lua_absindex(L, pidx);
    if (lua_type(L, pidx) != LUA_TTABLE) return luaL_error(L, "%s: params must be a table, got %s", fn, lfb_typename(L, pidx));
    int nk = sorted_keys(L, pidx, fn), n = 0;
    for (int i = 1; i <= nk; i++) {
        lua_rawgeti(L, -1, i);
        const char *key = lua_tostring(L, -1);
        lua_rawget(L, pidx);
        double v[9];
        int m = lfb_params_read_one(L, -1, key, v, fn);
        lua_pop(L, 1);
        if (n + m > maxpar) return luaL_error(L, "%s: more than %d parameter numbers", fn, maxpar);
        if (par) memcpy(par + n, v, (size_t)m * sizeof *v);
        n += m;
    }
    lua_pop(L, 1);
    return n;
}

void lfb_trace_push_params(lua_State *L, int tidx, int pidx, double *par, int *npar, int maxpar)
{
    tidx = lua_absindex(L, tidx);
    lua_newtable(L);
    const int out = lua_gettop(L);
    if (lua_isnoneornil(L, pidx)) return;
    pidx = lua_absindex(L, pidx);
    lf_graph *g = lfb_tr_at(L, tidx)->g;
    int nk = sorted_keys(L, pidx, "params");
    for (int i = 1; i <= nk; i++) {
        lua_rawgeti(L, -1, i);
        const char *key = lua_tostring(L, -1);
        lua_pushvalue(L, -1);
        lua_rawget(L, pidx);
        double v[9];
        int m = lfb_params_read_one(L, -1, key, v, "params"), ids[9];
        lua_pop(L, 1);
        if (*npar + m > maxpar) luaL_error(L, "params: more than %d parameter numbers", maxpar);
        for (int k = 0; k < m; k++) {
            ids[k] = lf_graph_param(g, v[k]);
            par[(*npar)++] = v[k];
        }
        lfb_trace_push(L, tidx, m, ids);
        lua_setfield(L, out, key);
        lua_pop(L, 1); /* key */
    }
    lua_pop(L, 1); /* the keys */
}

/* ---------------------------------------------------------------- operands */

/* The scalar at idx as a node of g: a number or a traced scalar of the trace at tidx; -1 if
 * neither. */
static int scalar_node(lua_State *L, int tidx, int idx, lf_graph *g)
{
    if (lua_type(L, idx) == LUA_TNUMBER) return lf_graph_const(g, lua_tonumber(L, idx));
    lfb_traced *v = lfb_tr_value(L, idx);
    if (!v || v->kind != 1) return -1;
    lua_getiuservalue(L, idx, 1);
    int same = lua_rawequal(L, -1, tidx);
    lua_pop(L, 1);
    if (!same) luaL_error(L, "traced values of two different traces are combined (a value kept from another "
                             "evaluation?)");
    return v->id[0];
}

int lfb_trace_read(lua_State *L, int tidx, int idx, int n, int *ids, char *msg, size_t size)
{
    tidx = lua_absindex(L, tidx);
    idx = lua_absindex(L, idx);
    lf_graph *g = lfb_tr_at(L, tidx)->g;
    lfb_traced *v = lfb_tr_value(L, idx);
    const double *u;
    if (v) {
        lua_getiuservalue(L, idx, 1);
        int same = lua_rawequal(L, -1, tidx);
        lua_pop(L, 1);
        if (!same) {
            snprintf(msg, size, "a traced value of another trace");
            return 0;
        }
        if (v->kind == n) {
            memcpy(ids, v->id, (size_t)n * sizeof *ids);
            return 1;
        }
        snprintf(msg, size, "a traced %s", v->kind == 1 ? "number" : v->kind == 3 ? "vec3" : "mat3");
        return 0;
    }
    if (n == 1 && lua_type(L, idx) == LUA_TNUMBER) {
        ids[0] = lf_graph_const(g, lua_tonumber(L, idx));
        return 1;
    }
    if ((n == 3 && (u = lfb_testvec3(L, idx))) || (n == 9 && (u = lfb_testmat3(L, idx)))) {
        for (int i = 0; i < n; i++) ids[i] = lf_graph_const(g, u[i]);
        return 1;
    }
    if (lfb_plain_table(L, idx)) {
        size_t len = lua_rawlen(L, idx);
        int parts = len == (size_t)n ? n : (n == 9 && len == 3) ? 3 : ((n == 6 || n == 18) && len == 2) ? 2 : 0;
        for (int k = 0; k < parts; k++) {
            lua_rawgeti(L, idx, k + 1);
            int ok = parts == n ? (ids[k] = scalar_node(L, tidx, lua_gettop(L), g)) >= 0
                                : lfb_trace_read(L, tidx, -1, n / parts, ids + k * (n / parts), msg, size);
            lua_pop(L, 1);
            if (!ok) {
                snprintf(msg, size, "a table whose element %d is not %s", k + 1, parts == n ? "a number" : "of the right size");
                return 0;
            }
        }
        if (parts) return 1;
        snprintf(msg, size, "a table of length %d", (int)len);
        return 0;
    }
    snprintf(msg, size, "%s", lfb_typename(L, idx));
    return 0;
}

int lfb_trace_read_algebra(lua_State *L, int tidx, int idx, const lf_manifold *M, int *xi, const char *what,
                           lf_error *err)
{
    idx = lua_absindex(L, idx);
    const int n = lf_manifold_nfactors(M);
    if (!lfb_plain_table(L, idx)) {
        return lf_error_set(err, LF_ECALLBACK, "%s returned %s, expected an array of %d algebra element%s", what,
                            lfb_typename(L, idx), n, n > 1 ? "s" : "");
    }
    if (lua_rawlen(L, idx) > (size_t)n) /* (one element per factor, no more: a model bug otherwise) */
        return lf_error_set(err, LF_ECALLBACK, "%s returned %d elements, expected %d (one algebra element per factor)",
                            what, (int)lua_rawlen(L, idx), n);
    for (int i = 0; i < n; i++) {
        const lf_factor *f = lf_manifold_factor(M, i);
        char msg[120];
        lua_rawgeti(L, idx, i + 1);
        int ok = lfb_trace_read(L, tidx, -1, f->nd, xi + f->od, msg, sizeof msg);
        lua_pop(L, 1);
        if (!ok)
            return lf_error_set(err, LF_ECALLBACK, "%s: element %d of the result is %s, expected %d numbers for factor %d",
                                what, i + 1, msg, f->nd, i + 1);
    }
    return LF_OK;
}

/* The trace of the first traced argument among 1..n (pushed at the top; returns its index), or 0. */
int lfb_tr_find(lua_State *L, int n)
{
    for (int i = 1; i <= n; i++) {
        if (lfb_tr_value(L, i)) {
            push_trace_of(L, i);
            return lua_gettop(L);
        }
        if (lfb_plain_table(L, i)) { /* a plain table holding traced scalars */
            for (int k = 1; k <= 9; k++) {
                int t = lua_rawgeti(L, i, k);
                if (t == LUA_TNIL) {
                    lua_pop(L, 1);
                    break;
                }
                int tr = lfb_tr_value(L, -1) != NULL;
                if (!tr && lfb_plain_table(L, -1)) /* rows */
                    for (int j = 1; j <= 3 && !tr; j++) {
                        lua_rawgeti(L, -1, j);
                        if (lfb_tr_value(L, -1)) {
                            lua_remove(L, -2);
                            tr = 1;
                        } else
                            lua_pop(L, 1);
                    }
                if (tr) {
                    int v = lua_gettop(L);
                    push_trace_of(L, v);
                    lua_remove(L, v);
                    return lua_gettop(L);
                }
                lua_pop(L, 1);
            }
        }
    }
    return 0;
}

/* Operand i (a number, traced value, vec3, mat3 or plain table) as nodes. */
void lfb_tr_opnd(lua_State *L, int tidx, int i, lfb_opnd *o, const char *op)
{
    static const int kinds[3] = {1, 3, 9};
    lfb_traced *v = lfb_tr_value(L, i);
    char msg[120] = "";
    if (v) {
        if (!lfb_trace_read(L, tidx, i, v->kind, o->id, msg, sizeof msg)) luaL_error(L, "'%s': operand %d is %s", op, i, msg);
        o->kind = v->kind;
        return;
    }
    for (int k = 0; k < 3; k++) {
        int n = kinds[k];
        if (n == 3 && lua_type(L, i) == LUA_TTABLE && lua_rawlen(L, i) == 3) { /* 3 rows or 3 numbers */
            int rows = lua_rawgeti(L, i, 1) == LUA_TTABLE;
            lua_pop(L, 1);
            if (rows) continue;
        }
        if (lfb_trace_read(L, tidx, i, n, o->id, msg, sizeof msg)) {
            o->kind = n;
            return;
        }
    }
    luaL_error(L, "attempt to perform '%s' on %s and %s (numbers, vec3 or mat3 expected)", op, lfb_typename(L, 1),
               lfb_typename(L, 2));
}

lf_graph *lfb_tr_graph(lua_State *L, int tidx) { return lfb_tr_at(L, tidx)->g; }

/* ---------------------------------------------------------------- arithmetic */
/* A result: plain values where every node is a finite constant (a number, vec3, mat3 that no input
 * reaches needs no trace), else a traced value. */
int lfb_tr_result(lua_State *L, int tidx, int kind, const int *ids)
{
    lfb_trace *t = lfb_tr_at(L, tidx);
    lf_graph *g = t->g;
    double v[9];
    if (t->mode == LFB_TRACE_POINT && kind > 1) /* at a point, vectors and matrices hold finite numbers, as
                                                   lf.vec3 and lf.mat3 do (numbers follow Lua's: inf is a value) */
        for (int i = 0; i < kind; i++) {
            const double x = lf_graph_value(g, ids[i]);
            if (!isfinite(x))
                luaL_error(L, "a traced %s: the result has a non-finite component (%s); vec3 and mat3 hold finite numbers "
                              "only", kind == 3 ? "vec3" : "mat3", isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
        }
    int plain = lf_graph_status(g) == LF_OK;
    for (int i = 0; i < kind && plain; i++) plain = lf_graph_is_const(g, ids[i], &v[i]) && isfinite(v[i]);
    if (!plain) lfb_trace_push(L, tidx, kind, ids);
    else if (kind == 1) lua_pushnumber(L, v[0]);
    else if (kind == 3) lfb_pushvec3(L, v);
    else lfb_pushmat3(L, v);
    return 1;
}

static int arith(lua_State *L, int op, const char *name)
{
    lua_settop(L, 2);
    int tidx = lfb_tr_find(L, 2);
    if (!tidx) return luaL_error(L, "'%s': no traced operand", name);
    lf_graph *g = lfb_tr_graph(L, tidx);
    lfb_opnd a, b;
    lfb_tr_opnd(L, tidx, 1, &a, name);
    lfb_tr_opnd(L, tidx, 2, &b, name);
    int r[9], kind;
    if (op == LF_G_ADD || op == LF_G_SUB) {
        if (a.kind != b.kind)
            return luaL_error(L, "attempt to perform '%s' on %s and %s (operands of the same kind expected)", name,
                              lfb_typename(L, 1), lfb_typename(L, 2));
        kind = a.kind;
        for (int i = 0; i < kind; i++) r[i] = lf_g2(g, op, a.id[i], b.id[i]);
    } else if (op == LF_G_MUL) {
        if (a.kind == 1 || b.kind == 1) {
            const lfb_opnd *s = a.kind == 1 ? &a : &b, *m = a.kind == 1 ? &b : &a;
            kind = m->kind;
            for (int i = 0; i < kind; i++) r[i] = a.kind == 1 ? lf_g2(g, LF_G_MUL, s->id[0], m->id[i]) : lf_g2(g, LF_G_MUL, m->id[i], s->id[0]);
        } else if (a.kind == 9 && b.kind == 9) {
            kind = 9;
            lf_gm3_mul(g, a.id, b.id, r);
        } else if (a.kind == 9 && b.kind == 3) {
            kind = 3;
            lf_gm3_apply(g, a.id, b.id, r);
        } else if (a.kind == 3 && b.kind == 9) {
            kind = 3;
            lf_gm3_tapply(g, b.id, a.id, r);
        } else
            return luaL_error(L, "attempt to multiply two vec3 (use v:dot(w) or v:cross(w))");
    } else if (op == LF_G_DIV) {
        if (b.kind != 1)
            return luaL_error(L, "attempt to divide %s by %s (only numbers, vec3 and mat3 divided by a number)",
                              lfb_typename(L, 1), lfb_typename(L, 2));
        kind = a.kind;
        for (int i = 0; i < kind; i++) r[i] = lf_g2(g, LF_G_DIV, a.id[i], b.id[0]);
    } else { /* pow */
        if (a.kind != 1 || b.kind != 1) return luaL_error(L, "attempt to perform '^' on %s and %s (numbers expected)", lfb_typename(L, 1), lfb_typename(L, 2));
        kind = 1;
        r[0] = lf_g2(g, LF_G_POW, a.id[0], b.id[0]);
    }
    return lfb_tr_result(L, tidx, kind, r);
}

static int t_add(lua_State *L) { return arith(L, LF_G_ADD, "+"); }
static int t_sub(lua_State *L) { return arith(L, LF_G_SUB, "-"); }
static int t_mul(lua_State *L) { return arith(L, LF_G_MUL, "*"); }
static int t_div(lua_State *L) { return arith(L, LF_G_DIV, "/"); }
int lfb_tr_pow(lua_State *L) { return arith(L, LF_G_POW, "^"); }

static int t_unm(lua_State *L)
{
    lua_settop(L, 1);
    int tidx = lfb_tr_find(L, 1);
    if (!tidx) return luaL_error(L, "'-': no traced operand");
    lfb_opnd a;
    lfb_tr_opnd(L, tidx, 1, &a, "-");
    int r[9];
    for (int i = 0; i < a.kind; i++) r[i] = lf_g1(lfb_tr_graph(L, tidx), LF_G_NEG, a.id[i]);
    return lfb_tr_result(L, tidx, a.kind, r);
}

/* a value's description for messages: "0.72 (traced)" */
static const char *describe(lua_State *L, int idx, int tidx, char *buf, size_t size)
{
    lfb_traced *v = lfb_tr_value(L, idx);
    if (v && v->kind == 1) snprintf(buf, size, "%.6g", lf_graph_value(lfb_tr_graph(L, tidx), v->id[0]));
    else if (lua_type(L, idx) == LUA_TNUMBER) snprintf(buf, size, "%.6g", lua_tonumber(L, idx));
    else snprintf(buf, size, "a %s", lfb_typename(L, idx));
    return buf;
}

/* <, <=, == on traced values: an error in a strict trace, the values compared in a point trace */
static int compare(lua_State *L, const char *op)
{
    lua_settop(L, 2);
    int tidx = lfb_tr_find(L, 2);
    if (!tidx) return luaL_error(L, "'%s': no traced operand", op);
    lfb_trace *t = lfb_tr_at(L, tidx);
    char a[48], b[48];
    if (t->mode == LFB_TRACE_STRICT)
        return luaL_error(L, "compares a state-dependent value (%s %s %s at the trace point): a compiled function cannot "
                             "branch on its inputs; use lf.math.select(cond, a, b) with lf.math.lt/le/gt/ge/eq, "
                             "lf.math.min/max/abs, or compile = false",
                          describe(L, 1, tidx, a, sizeof a), op, describe(L, 2, tidx, b, sizeof b));
    lfb_opnd x, y;
    lfb_tr_opnd(L, tidx, 1, &x, op);
    lfb_tr_opnd(L, tidx, 2, &y, op);
    if (x.kind != y.kind || (op[0] != '=' && x.kind != 1))
        return luaL_error(L, "attempt to compare %s with %s", lfb_typename(L, 1), lfb_typename(L, 2));
    int res = 1;
    for (int i = 0; i < x.kind; i++) {
        double u = lf_graph_value(t->g, x.id[i]), v = lf_graph_value(t->g, y.id[i]);
        res &= op[0] == '<' ? (op[1] == '=' ? u <= v : u < v) : u == v;
    }
    lua_pushboolean(L, res);
    return 1;
}
static int t_lt(lua_State *L) { return compare(L, "<"); }
static int t_le(lua_State *L) { return compare(L, "<="); }
static int t_eq(lua_State *L) { return compare(L, "=="); }

/* a % b and a // b: piecewise; a point trace treats floor(a / b) as a constant */
static int floor_div(lua_State *L, int mod)
{
    lua_settop(L, 2);
    int tidx = lfb_tr_find(L, 2);
    if (!tidx) return luaL_error(L, "'%s': no traced operand", mod ? "%" : "//");
    lfb_trace *t = lfb_tr_at(L, tidx);
    if (t->mode == LFB_TRACE_STRICT)
        return luaL_error(L, "'%s' of a state-dependent value cannot be compiled (it is piecewise); use compile = false",
                          mod ? "%" : "//");
    lfb_opnd a, b;
    lfb_tr_opnd(L, tidx, 1, &a, mod ? "%" : "//");
    lfb_tr_opnd(L, tidx, 2, &b, mod ? "%" : "//");
    if (a.kind != 1 || b.kind != 1) return luaL_error(L, "attempt to perform arithmetic on %s and %s", lfb_typename(L, 1), lfb_typename(L, 2));
    double fq = floor(lf_graph_value(t->g, a.id[0]) / lf_graph_value(t->g, b.id[0]));
    int q = lf_graph_const(t->g, fq);
    int r = mod ? lf_g2(t->g, LF_G_SUB, a.id[0], lf_g2(t->g, LF_G_MUL, q, b.id[0])) : q;
    return lfb_tr_result(L, tidx, 1, &r);
}
static int t_mod(lua_State *L) { return floor_div(L, 1); }
static int t_idiv(lua_State *L) { return floor_div(L, 0); }

static int t_concat(lua_State *L)
{
    return luaL_error(L, "attempt to concatenate a traced value (a number being compiled or differentiated has no text)");
}

static int t_tostring(lua_State *L)
{
    lfb_traced *v = luaL_checkudata(L, 1, LFB_TRACED);
    lua_getiuservalue(L, 1, 1);
    lfb_trace *t = luaL_testudata(L, -1, LFB_TRACE);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, v->kind == 1 ? "traced{" : v->kind == 3 ? "traced vec3{" : "traced mat3{");
    for (int i = 0; i < v->kind; i++) {
        char num[40];
        snprintf(num, sizeof num, "%s%.15g", i ? ", " : "", t && t->g ? lf_graph_value(t->g, v->id[i]) : NAN);
        luaL_addstring(&b, num);
    }
    luaL_addstring(&b, "}");
    luaL_pushresult(&b);
    return 1;
}

static int t_len(lua_State *L)
{
    lfb_traced *v = luaL_checkudata(L, 1, LFB_TRACED);
    if (v->kind == 1) return luaL_error(L, "attempt to get the length of a traced number");
    lua_pushinteger(L, 3);
    return 1;
}

static int t_newindex(lua_State *L)
{
    return luaL_error(L, "traced values cannot be changed (build a new vec3 or mat3 instead of setting a component)");
}

/* ---------------------------------------------------------------- methods */
/* self (checked) and its trace pushed at the top; returns the trace's index */
static lfb_traced *self_of(lua_State *L, int kind, const char *fn, int *tidx)
{
    lfb_traced *v = luaL_checkudata(L, 1, LFB_TRACED);
    if (kind && v->kind != kind)
        luaL_error(L, "%s: a traced %s has no such method", fn, v->kind == 1 ? "number" : v->kind == 3 ? "vec3" : "mat3");
    push_trace_of(L, 1);
    *tidx = lua_gettop(L);
    return v;
}

void lfb_tr_args(lua_State *L, int tidx, int i, int n, int *ids, const char *fn)
{
    char msg[120];
    if (!lfb_trace_read(L, tidx, i, n, ids, msg, sizeof msg))
        luaL_error(L, "argument #%d to '%s': %s expected, got %s", i, fn, n == 1 ? "a number" : n == 3 ? "a vec3" : "a mat3", msg);
}

static int m_dot(lua_State *L)
{
    lua_settop(L, 2);
    int tidx = lfb_tr_find(L, 2), b[3], a[3];
    lfb_tr_args(L, tidx, 1, 3, a, "dot");
    lfb_tr_args(L, tidx, 2, 3, b, "dot");
    int r = lf_gv3_dot(lfb_tr_graph(L, tidx), a, b);
    return lfb_tr_result(L, tidx, 1, &r);
}

static int m_cross(lua_State *L)
{
    lua_settop(L, 2);
    int tidx = lfb_tr_find(L, 2), a[3], b[3], r[3];
    lfb_tr_args(L, tidx, 1, 3, a, "cross");
    lfb_tr_args(L, tidx, 2, 3, b, "cross");
    lf_gv3_cross(lfb_tr_graph(L, tidx), a, b, r);
    return lfb_tr_result(L, tidx, 3, r);
}

static int m_norm(lua_State *L)
{
    lua_settop(L, 1);
    int tidx = lfb_tr_find(L, 1);
    lfb_opnd a;
    lfb_tr_opnd(L, tidx, 1, &a, "norm");
    lf_graph *g = lfb_tr_graph(L, tidx);
    int r = a.kind == 9 ? lf_gm3_fnorm(g, a.id) : a.kind == 3 ? lf_gv3_norm(g, a.id) : lf_g1(g, LF_G_ABS, a.id[0]);
    return lfb_tr_result(L, tidx, 1, &r);
}

static int m_normalized(lua_State *L)
{
    int tidx, r[3];
    lfb_traced *v = self_of(L, 3, "normalized", &tidx);
    lf_gv3_normalized(lfb_tr_graph(L, tidx), v->id, r);
    return lfb_tr_result(L, tidx, 3, r);
}

static int m_totable(lua_State *L)
{
    int tidx;
    lfb_traced *v = self_of(L, 0, "totable", &tidx);
    if (v->kind == 1) return luaL_error(L, "totable: a traced number has no such method");
    lua_createtable(L, 3, 0);
    for (int r = 0; r < 3; r++) {
        if (v->kind == 3) lfb_tr_result(L, tidx, 1, &v->id[r]);
        else {
            lua_createtable(L, 3, 0);
            for (int c = 0; c < 3; c++) {
                lfb_tr_result(L, tidx, 1, &v->id[3 * r + c]);
                lua_rawseti(L, -2, c + 1);
            }
        }
        lua_rawseti(L, -2, r + 1);
    }
    return 1;
}

static int m_copy(lua_State *L)
{
    int tidx;
    lfb_traced *v = self_of(L, 0, "copy", &tidx);
    return lfb_tr_result(L, tidx, v->kind, v->id);
}

static int m_T(lua_State *L)
{
    lua_settop(L, 1);
    int tidx = lfb_tr_find(L, 1), a[9], r[9];
    lfb_tr_args(L, tidx, 1, 9, a, "T");
    lf_gm3_transpose(a, r);
    return lfb_tr_result(L, tidx, 9, r);
}

static int mat_scalar(lua_State *L, int (*f)(lf_graph *, const int *), const char *fn)
{
    lua_settop(L, 1);
    int tidx = lfb_tr_find(L, 1), a[9];
    lfb_tr_args(L, tidx, 1, 9, a, fn);
    int r = f(lfb_tr_graph(L, tidx), a);
    return lfb_tr_result(L, tidx, 1, &r);
}
static int m_det(lua_State *L) { return mat_scalar(L, lf_gm3_det, "det"); }
static int m_trace(lua_State *L) { return mat_scalar(L, lf_gm3_trace, "trace"); }

static int m_inv(lua_State *L)
{
    int tidx, r[9];
    lfb_traced *v = self_of(L, 9, "inv", &tidx);
    lf_gm3_inv(lfb_tr_graph(L, tidx), v->id, r);
    return lfb_tr_result(L, tidx, 9, r);
}

static int m_row(lua_State *L)
{
    int tidx;
    lfb_traced *v = self_of(L, 9, "row", &tidx);
    lua_Integer i = luaL_checkinteger(L, 2);
    luaL_argcheck(L, i >= 1 && i <= 3, 2, "row index 1..3 expected");
    return lfb_tr_result(L, tidx, 3, v->id + 3 * (i - 1));
}

static int m_col(lua_State *L)
{
    int tidx;
    lfb_traced *v = self_of(L, 9, "col", &tidx);
    lua_Integer j = luaL_checkinteger(L, 2);
    luaL_argcheck(L, j >= 1 && j <= 3, 2, "column index 1..3 expected");
    int c[3] = {v->id[j - 1], v->id[3 + j - 1], v->id[6 + j - 1]};
    return lfb_tr_result(L, tidx, 3, c);
}

static const luaL_Reg methods[] = {{"dot", m_dot},   {"cross", m_cross}, {"norm", m_norm}, {"normalized", m_normalized},
                                   {"totable", m_totable}, {"copy", m_copy}, {"T", m_T}, {"det", m_det},
                                   {"trace", m_trace}, {"inv", m_inv},     {"row", m_row},   {"col", m_col},
                                   {NULL, NULL}};

static int t_index(lua_State *L)
{
    lfb_traced *v = luaL_checkudata(L, 1, LFB_TRACED);
    int c = 0;
    if (lua_type(L, 2) == LUA_TNUMBER) {
        lua_Integer i = lua_tointeger(L, 2);
        c = (i >= 1 && i <= 3 && lua_tonumber(L, 2) == (lua_Number)i) ? (int)i : -1;
    } else if (lua_type(L, 2) == LUA_TSTRING && v->kind == 3) {
        const char *k = lua_tostring(L, 2);
        if (k[0] >= 'x' && k[0] <= 'z' && !k[1]) c = k[0] - 'x' + 1;
    }
    if (c != 0 && v->kind == 1) return luaL_error(L, "attempt to index a traced number");
    if (c < 0) return luaL_error(L, "%s index out of range: %s (expected 1, 2 or 3)", v->kind == 3 ? "vec3" : "mat3 row",
                                 luaL_tolstring(L, 2, NULL));
    if (c > 0) {
        push_trace_of(L, 1);
        if (v->kind == 3) return lfb_tr_result(L, lua_gettop(L), 1, &v->id[c - 1]);
        return lfb_tr_result(L, lua_gettop(L), 3, &v->id[3 * (c - 1)]);
    }
    luaL_getmetatable(L, LFB_TRACED);
    lua_getfield(L, -1, "methods");
    lua_pushvalue(L, 2);
    lua_rawget(L, -2);
    return 1;
}

/* __lf_fields (REPL completion) */
static int t_fields(lua_State *L)
{
    lfb_traced *v = luaL_checkudata(L, 1, LFB_TRACED);
    static const char *const vec[] = {"x", "y", "z", "dot", "cross", "norm", "normalized", "totable", "copy", NULL};
    static const char *const mat[] = {"T", "det", "trace", "norm", "inv", "totable", "row", "col", "copy", NULL};
    const char *const *names = v->kind == 3 ? vec : v->kind == 9 ? mat : NULL;
    lua_newtable(L);
    for (int i = 0; names && names[i]; i++) {
        lua_pushstring(L, names[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* ---------------------------------------------------------------- derivatives at a point */
typedef struct {
    lfb_trace_push_fn push;
    void *ud;
    int tidx;
} push_wrap;

static int push_wrapped(lua_State *L, void *u)
{
    const push_wrap *w = u;
    return w->push(L, w->tidx, w->ud);
}

int lfb_trace_read_number(lua_State *L, int tidx, int idx, void *ud, int *ids, lf_error *err)
{
    (void)ud;
    char msg[120];
    if (lfb_trace_read(L, tidx, idx, 1, ids, msg, sizeof msg)) return LF_OK;
    return lf_error_set(err, LF_ECALLBACK, "returned %s, expected a number", msg);
}

int lfb_point_derivatives(lua_State *L, int ref, lfb_trace_push_fn push, lfb_trace_read_fn read, void *ud, int nout,
                          int nin, double *value, double *J, const char *what, lf_error *err)
{
    const int top = lua_gettop(L);
    if (!lua_checkstack(L, 24)) return lf_error_set(err, LF_ENOMEM, "%s: Lua stack overflow", what);
    lfb_trace *t = lfb_trace_new(L, LFB_TRACE_POINT, 0);
    push_wrap w = {push, ud, lua_gettop(L)};
    int rc = lfb_call(L, ref, push_wrapped, &w, 1, what, err);
    if (rc == LF_ECALLBACK && err && strstr(err->msg, "got lf.traced")) {
        char m[sizeof err->msg];
        memcpy(m, err->msg, sizeof m);
        lf_error_set(err, rc, "%s cannot be differentiated: it passes a traced value to a function of plain numbers (a "
                              "local alias like `local sqrt = math.sqrt`? call math.sqrt in it; or give the derivative "
                              "yourself): %s", what, m);
    }
    int *ids = rc == LF_OK ? malloc(((size_t)nout + (size_t)nin + 1) * sizeof *ids) : NULL;
    if (rc == LF_OK && !ids) rc = lf_error_set(err, LF_ENOMEM, "%s: out of memory", what);
    if (rc == LF_OK && (rc = read(L, w.tidx, lua_gettop(L), ud, ids, err)) != LF_OK && err) {
        char m[sizeof err->msg];
        memcpy(m, err->msg, sizeof m);
        lf_error_set(err, rc, "%s %s", what, m);
    }
    if (rc == LF_OK && lf_graph_ninputs(t->g) != nin)
        rc = lf_error_set(err, LF_ECALLBACK, "%s: %d inputs traced, %d expected", what, lf_graph_ninputs(t->g), nin);
    if (rc == LF_OK) {
        int *wrt = ids + nout;
        for (int i = 0; i < nin; i++) wrt[i] = lf_graph_input_node(t->g, i);
        for (int o = 0; o < nout && rc == LF_OK; o++) {
            const double v = lf_graph_value(t->g, ids[o]);
            if (value) value[o] = v;
            if (!isfinite(v)) rc = lf_error_set(err, LF_EDOMAIN, "%s: the value is not finite (%g)", what, v);
            if (J && rc == LF_OK) rc = lf_graph_gradient(t->g, ids[o], nin, wrt, J + (size_t)o * nin, err);
            for (int i = 0; J && rc == LF_OK && i < nin; i++)
                if (!isfinite(J[(size_t)o * nin + i]))
                    rc = lf_error_set(err, LF_EDOMAIN, "%s: the derivative is not finite (%g with respect to input %d): "
                                      "not differentiable at this point (e.g. atan2(0, 0), log(0), sqrt at 0)", what,
                                      J[(size_t)o * nin + i], i + 1);
        }
    }
    free(ids);
    t->active = 0; /* values kept by the function are refused from now on */
    lf_graph_free(t->g);
    t->g = NULL;
    lua_settop(L, top);
    return rc;
}

/* ---------------------------------------------------------------- natural math */
static void natural_rec(lua_State *L, int f, int seen, int math)
{
    if (lua_type(L, f) != LUA_TFUNCTION || lua_iscfunction(L, f)) return;
    lua_pushvalue(L, f);
    if (lua_rawget(L, seen) != LUA_TNIL) {
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    lua_pushvalue(L, f);
    lua_pushboolean(L, 1);
    lua_rawset(L, seen);
    for (int i = 1; i <= 255; i++) {
        const char *name = lua_getupvalue(L, f, i);
        if (!name) break;
        const int v = lua_gettop(L);
        if (strcmp(name, "_ENV") == 0 && lua_type(L, v) == LUA_TTABLE) {
            lua_pushliteral(L, "math");
            lua_rawget(L, v);
            int done = lua_rawequal(L, -1, math);
            lua_pop(L, 1);
            if (!done) { /* a proxy {math = lf.math} reading and writing the environment, in a cell of its own */
                lua_createtable(L, 0, 1);
                lua_pushvalue(L, math);
                lua_setfield(L, -2, "math");
                lua_createtable(L, 0, 2);
                lua_pushvalue(L, v);
                lua_setfield(L, -2, "__index");
                lua_pushvalue(L, v);
                lua_setfield(L, -2, "__newindex");
                lua_setmetatable(L, -2);
                if (luaL_loadstring(L, "local p = ... return function() return p end") != LUA_OK) lua_error(L);
                lua_insert(L, -2);
                lua_call(L, 1, 1); /* the holder: a closure whose only upvalue is the proxy */
                lua_upvaluejoin(L, f, i, lua_gettop(L), 1);
            }
        } else if (lua_type(L, v) == LUA_TFUNCTION)
            natural_rec(L, v, seen, math);
        lua_settop(L, v - 1);
    }
}

void lfb_natural(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) != LUA_TFUNCTION || lua_iscfunction(L, idx)) return;
    if (lua_getfield(L, LUA_REGISTRYINDEX, "lieflow.math") != LUA_TTABLE) {
        lua_pop(L, 1);
        return;
    }
    lua_newtable(L);
    natural_rec(L, idx, lua_gettop(L), lua_gettop(L) - 1);
    lua_pop(L, 2);
}

/* The autodiff dispatch of the C operators and methods (shared/bind.h: LFB_DUAL): traced arguments
 * handed to lf.vec3 / lf.mat3 arithmetic come here; lib/math.c adds the maps and constructors. */
static const luaL_Reg dispatch[] = {
    {"__add", t_add}, {"__sub", t_sub}, {"__mul", t_mul}, {"__div", t_div}, {"__unm", t_unm},
    {"dot", m_dot}, {"cross", m_cross}, {"norm", m_norm}, {"T", m_T}, {"det", m_det}, {"trace", m_trace},
    {NULL, NULL}};

void lfb_open_trace(lua_State *L)
{
    luaL_newmetatable(L, LFB_TRACE);
    lua_pushcfunction(L, trace_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    luaL_newmetatable(L, LFB_TRACED);
    const luaL_Reg meta[] = {{"__add", t_add}, {"__sub", t_sub}, {"__mul", t_mul}, {"__div", t_div}, {"__unm", t_unm},
                             {"__pow", lfb_tr_pow}, {"__mod", t_mod}, {"__idiv", t_idiv}, {"__lt", t_lt}, {"__le", t_le},
                             {"__eq", t_eq}, {"__concat", t_concat}, {"__len", t_len}, {"__index", t_index},
                             {"__newindex", t_newindex}, {"__tostring", t_tostring}, {"__lf_fields", t_fields},
                             {NULL, NULL}};
    luaL_setfuncs(L, meta, 0);
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "methods");
    /* __lf_dual: the dispatch table the C functions hand traced arguments to */
    lua_newtable(L);
    luaL_setfuncs(L, dispatch, 0);
    lua_setfield(L, -2, "__lf_dual");
    lua_pop(L, 1);
}
