/* lieflow Lua binding — the tracer (ltrace.h): traced values, their operators and methods, lf.math,
 * and the traced versions of the lf.so3 / lf.s2 / lf.quat maps (core/graph/graph_lie.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ltrace.h"

typedef struct {
    int kind; /* 1 scalar, 3 vec3, 9 mat3 */
    int id[9];
} traced;

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

static traced *totraced(lua_State *L, int idx) { return luaL_testudata(L, idx, LFB_TRACED); }

static lfb_trace *trace_at(lua_State *L, int tidx) { return luaL_checkudata(L, tidx, LFB_TRACE); }

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
    traced *v = lua_newuserdatauv(L, sizeof *v, 1);
    v->kind = kind;
    memcpy(v->id, ids, (size_t)kind * sizeof *ids);
    luaL_setmetatable(L, LFB_TRACED);
    lua_pushvalue(L, tidx);
    lua_setiuservalue(L, -2, 1);
    if (lf_graph_status(trace_at(L, tidx)->g) != LF_OK) lfb_error(L, lf_graph_error(trace_at(L, tidx)->g));
}

void lfb_trace_push_inputs(lua_State *L, int tidx, int n, const double *v)
{
    lf_graph *g = trace_at(L, tidx)->g;
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
    lf_graph *g = trace_at(L, tidx)->g;
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
typedef struct {
    int kind;
    int id[9];
} opnd;

/* The scalar at idx as a node of g: a number or a traced scalar of the trace at tidx; -1 if
 * neither. */
static int scalar_node(lua_State *L, int tidx, int idx, lf_graph *g)
{
    if (lua_type(L, idx) == LUA_TNUMBER) return lf_graph_const(g, lua_tonumber(L, idx));
    traced *v = totraced(L, idx);
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
    lf_graph *g = trace_at(L, tidx)->g;
    traced *v = totraced(L, idx);
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
static int find_trace(lua_State *L, int n)
{
    for (int i = 1; i <= n; i++) {
        if (totraced(L, i)) {
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
                int tr = totraced(L, -1) != NULL;
                if (!tr && lfb_plain_table(L, -1)) /* rows */
                    for (int j = 1; j <= 3 && !tr; j++) {
                        lua_rawgeti(L, -1, j);
                        if (totraced(L, -1)) {
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
static void read_opnd(lua_State *L, int tidx, int i, opnd *o, const char *op)
{
    static const int kinds[3] = {1, 3, 9};
    traced *v = totraced(L, i);
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

static lf_graph *graph_at(lua_State *L, int tidx) { return trace_at(L, tidx)->g; }

/* ---------------------------------------------------------------- arithmetic */
/* A result: plain values where every node is a finite constant (a number, vec3, mat3 that no input
 * reaches needs no trace), else a traced value. */
static int push_result(lua_State *L, int tidx, int kind, const int *ids)
{
    lf_graph *g = graph_at(L, tidx);
    double v[9];
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
    int tidx = find_trace(L, 2);
    if (!tidx) return luaL_error(L, "'%s': no traced operand", name);
    lf_graph *g = graph_at(L, tidx);
    opnd a, b;
    read_opnd(L, tidx, 1, &a, name);
    read_opnd(L, tidx, 2, &b, name);
    int r[9], kind;
    if (op == LF_G_ADD || op == LF_G_SUB) {
        if (a.kind != b.kind)
            return luaL_error(L, "attempt to perform '%s' on %s and %s (operands of the same kind expected)", name,
                              lfb_typename(L, 1), lfb_typename(L, 2));
        kind = a.kind;
        for (int i = 0; i < kind; i++) r[i] = lf_g2(g, op, a.id[i], b.id[i]);
    } else if (op == LF_G_MUL) {
        if (a.kind == 1 || b.kind == 1) {
            const opnd *s = a.kind == 1 ? &a : &b, *m = a.kind == 1 ? &b : &a;
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
    return push_result(L, tidx, kind, r);
}

static int t_add(lua_State *L) { return arith(L, LF_G_ADD, "+"); }
static int t_sub(lua_State *L) { return arith(L, LF_G_SUB, "-"); }
static int t_mul(lua_State *L) { return arith(L, LF_G_MUL, "*"); }
static int t_div(lua_State *L) { return arith(L, LF_G_DIV, "/"); }
static int t_pow(lua_State *L) { return arith(L, LF_G_POW, "^"); }

static int t_unm(lua_State *L)
{
    lua_settop(L, 1);
    int tidx = find_trace(L, 1);
    if (!tidx) return luaL_error(L, "'-': no traced operand");
    opnd a;
    read_opnd(L, tidx, 1, &a, "-");
    int r[9];
    for (int i = 0; i < a.kind; i++) r[i] = lf_g1(graph_at(L, tidx), LF_G_NEG, a.id[i]);
    return push_result(L, tidx, a.kind, r);
}

/* a value's description for messages: "0.72 (traced)" */
static const char *describe(lua_State *L, int idx, int tidx, char *buf, size_t size)
{
    traced *v = totraced(L, idx);
    if (v && v->kind == 1) snprintf(buf, size, "%.6g", lf_graph_value(graph_at(L, tidx), v->id[0]));
    else if (lua_type(L, idx) == LUA_TNUMBER) snprintf(buf, size, "%.6g", lua_tonumber(L, idx));
    else snprintf(buf, size, "a %s", lfb_typename(L, idx));
    return buf;
}

/* <, <=, == on traced values: an error in a strict trace, the values compared in a point trace */
static int compare(lua_State *L, const char *op)
{
    lua_settop(L, 2);
    int tidx = find_trace(L, 2);
    if (!tidx) return luaL_error(L, "'%s': no traced operand", op);
    lfb_trace *t = trace_at(L, tidx);
    char a[48], b[48];
    if (t->mode == LFB_TRACE_STRICT)
        return luaL_error(L, "compares a state-dependent value (%s %s %s at the trace point): a compiled function cannot "
                             "branch on its inputs; use lf.math.select(cond, a, b) with lf.math.lt/le/gt/ge/eq, "
                             "lf.math.min/max/abs, or compile = false",
                          describe(L, 1, tidx, a, sizeof a), op, describe(L, 2, tidx, b, sizeof b));
    opnd x, y;
    read_opnd(L, tidx, 1, &x, op);
    read_opnd(L, tidx, 2, &y, op);
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
    int tidx = find_trace(L, 2);
    if (!tidx) return luaL_error(L, "'%s': no traced operand", mod ? "%" : "//");
    lfb_trace *t = trace_at(L, tidx);
    if (t->mode == LFB_TRACE_STRICT)
        return luaL_error(L, "'%s' of a state-dependent value cannot be compiled (it is piecewise); use compile = false",
                          mod ? "%" : "//");
    opnd a, b;
    read_opnd(L, tidx, 1, &a, mod ? "%" : "//");
    read_opnd(L, tidx, 2, &b, mod ? "%" : "//");
    if (a.kind != 1 || b.kind != 1) return luaL_error(L, "attempt to perform arithmetic on %s and %s", lfb_typename(L, 1), lfb_typename(L, 2));
    double fq = floor(lf_graph_value(t->g, a.id[0]) / lf_graph_value(t->g, b.id[0]));
    int q = lf_graph_const(t->g, fq);
    int r = mod ? lf_g2(t->g, LF_G_SUB, a.id[0], lf_g2(t->g, LF_G_MUL, q, b.id[0])) : q;
    return push_result(L, tidx, 1, &r);
}
static int t_mod(lua_State *L) { return floor_div(L, 1); }
static int t_idiv(lua_State *L) { return floor_div(L, 0); }

static int t_concat(lua_State *L)
{
    return luaL_error(L, "attempt to concatenate a traced value (a number being compiled or differentiated has no text)");
}

static int t_tostring(lua_State *L)
{
    traced *v = luaL_checkudata(L, 1, LFB_TRACED);
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
    traced *v = luaL_checkudata(L, 1, LFB_TRACED);
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
static traced *self_of(lua_State *L, int kind, const char *fn, int *tidx)
{
    traced *v = luaL_checkudata(L, 1, LFB_TRACED);
    if (kind && v->kind != kind)
        luaL_error(L, "%s: a traced %s has no such method", fn, v->kind == 1 ? "number" : v->kind == 3 ? "vec3" : "mat3");
    push_trace_of(L, 1);
    *tidx = lua_gettop(L);
    return v;
}

static void arg_nodes(lua_State *L, int tidx, int i, int n, int *ids, const char *fn)
{
    char msg[120];
    if (!lfb_trace_read(L, tidx, i, n, ids, msg, sizeof msg))
        luaL_error(L, "argument #%d to '%s': %s expected, got %s", i, fn, n == 1 ? "a number" : n == 3 ? "a vec3" : "a mat3", msg);
}

static int m_dot(lua_State *L)
{
    lua_settop(L, 2);
    int tidx = find_trace(L, 2), b[3], a[3];
    arg_nodes(L, tidx, 1, 3, a, "dot");
    arg_nodes(L, tidx, 2, 3, b, "dot");
    int r = lf_gv3_dot(graph_at(L, tidx), a, b);
    return push_result(L, tidx, 1, &r);
}

static int m_cross(lua_State *L)
{
    lua_settop(L, 2);
    int tidx = find_trace(L, 2), a[3], b[3], r[3];
    arg_nodes(L, tidx, 1, 3, a, "cross");
    arg_nodes(L, tidx, 2, 3, b, "cross");
    lf_gv3_cross(graph_at(L, tidx), a, b, r);
    return push_result(L, tidx, 3, r);
}

static int m_norm(lua_State *L)
{
    lua_settop(L, 1);
    int tidx = find_trace(L, 1);
    opnd a;
    read_opnd(L, tidx, 1, &a, "norm");
    lf_graph *g = graph_at(L, tidx);
    int r = a.kind == 9 ? lf_gm3_fnorm(g, a.id) : a.kind == 3 ? lf_gv3_norm(g, a.id) : lf_g1(g, LF_G_ABS, a.id[0]);
    return push_result(L, tidx, 1, &r);
}

static int m_normalized(lua_State *L)
{
    int tidx, r[3];
    traced *v = self_of(L, 3, "normalized", &tidx);
    lf_gv3_normalized(graph_at(L, tidx), v->id, r);
    return push_result(L, tidx, 3, r);
}

static int m_totable(lua_State *L)
{
    int tidx;
    traced *v = self_of(L, 0, "totable", &tidx);
    if (v->kind == 1) return luaL_error(L, "totable: a traced number has no such method");
    lua_createtable(L, 3, 0);
    for (int r = 0; r < 3; r++) {
        if (v->kind == 3) push_result(L, tidx, 1, &v->id[r]);
        else {
            lua_createtable(L, 3, 0);
            for (int c = 0; c < 3; c++) {
                push_result(L, tidx, 1, &v->id[3 * r + c]);
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
    traced *v = self_of(L, 0, "copy", &tidx);
    return push_result(L, tidx, v->kind, v->id);
}

static int m_T(lua_State *L)
{
    lua_settop(L, 1);
    int tidx = find_trace(L, 1), a[9], r[9];
    arg_nodes(L, tidx, 1, 9, a, "T");
    lf_gm3_transpose(a, r);
    return push_result(L, tidx, 9, r);
}

static int mat_scalar(lua_State *L, int (*f)(lf_graph *, const int *), const char *fn)
{
    lua_settop(L, 1);
    int tidx = find_trace(L, 1), a[9];
    arg_nodes(L, tidx, 1, 9, a, fn);
    int r = f(graph_at(L, tidx), a);
    return push_result(L, tidx, 1, &r);
}
static int m_det(lua_State *L) { return mat_scalar(L, lf_gm3_det, "det"); }
static int m_trace(lua_State *L) { return mat_scalar(L, lf_gm3_trace, "trace"); }

static int m_inv(lua_State *L)
{
    int tidx, r[9];
    traced *v = self_of(L, 9, "inv", &tidx);
    lf_gm3_inv(graph_at(L, tidx), v->id, r);
    return push_result(L, tidx, 9, r);
}

static int m_row(lua_State *L)
{
    int tidx;
    traced *v = self_of(L, 9, "row", &tidx);
    lua_Integer i = luaL_checkinteger(L, 2);
    luaL_argcheck(L, i >= 1 && i <= 3, 2, "row index 1..3 expected");
    return push_result(L, tidx, 3, v->id + 3 * (i - 1));
}

static int m_col(lua_State *L)
{
    int tidx;
    traced *v = self_of(L, 9, "col", &tidx);
    lua_Integer j = luaL_checkinteger(L, 2);
    luaL_argcheck(L, j >= 1 && j <= 3, 2, "column index 1..3 expected");
    int c[3] = {v->id[j - 1], v->id[3 + j - 1], v->id[6 + j - 1]};
    return push_result(L, tidx, 3, c);
}

static const luaL_Reg methods[] = {{"dot", m_dot},   {"cross", m_cross}, {"norm", m_norm}, {"normalized", m_normalized},
                                   {"totable", m_totable}, {"copy", m_copy}, {"T", m_T}, {"det", m_det},
                                   {"trace", m_trace}, {"inv", m_inv},     {"row", m_row},   {"col", m_col},
                                   {NULL, NULL}};

static int t_index(lua_State *L)
{
    traced *v = luaL_checkudata(L, 1, LFB_TRACED);
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
        if (v->kind == 3) return push_result(L, lua_gettop(L), 1, &v->id[c - 1]);
        return push_result(L, lua_gettop(L), 3, &v->id[3 * (c - 1)]);
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
    traced *v = luaL_checkudata(L, 1, LFB_TRACED);
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

/* ---------------------------------------------------------------- constructors (the dispatch of lf.vec3 / lf.mat3) */
static int d_vec3(lua_State *L)
{
    int n = lua_gettop(L);
    int tidx = find_trace(L, n), r[3];
    if (n >= 3) {
        for (int i = 0; i < 3; i++) arg_nodes(L, tidx, i + 1, 1, r + i, "lf.vec3");
    } else
        arg_nodes(L, tidx, 1, 3, r, "lf.vec3");
    return push_result(L, tidx, 3, r);
}

static int d_mat3(lua_State *L)
{
    lua_settop(L, 1);
    int tidx = find_trace(L, 1), r[9];
    arg_nodes(L, tidx, 1, 9, r, "lf.mat3");
    return push_result(L, tidx, 9, r);
}

/* ---------------------------------------------------------------- maps */
/* What the C map requires of an argument: checked at the point in a point trace, with the C
 * function's message (a compiled model's arguments are the system's state, on its manifold). */
enum { ANY = 0, ROTATION = 1, UNIT = 2 };

static void check_point(lua_State *L, int tidx, int argn, const int *ids, int n, int what, const char *fn)
{
    lfb_trace *t = trace_at(L, tidx);
    if (what == ANY || t->mode != LFB_TRACE_POINT) return;
    double v[9];
    for (int i = 0; i < n; i++) v[i] = lf_graph_value(t->g, ids[i]);
    char w[96];
    snprintf(w, sizeof w, "argument #%d to '%s'", argn, fn);
    lf_error e;
    if (what == ROTATION && lf_so3_check(v, 1e-9, w, &e) != LF_OK) lfb_error(L, &e);
    if (what == UNIT && !(fabs(lf_v3_norm(v) - 1) <= 1e-9)) {
        char num[32];
        snprintf(num, sizeof num, "%.17g", lf_v3_norm(v));
        luaL_error(L, "%s: unit vector expected, |p| = %s", w, num);
    }
}

static void arg_checked(lua_State *L, int tidx, int i, int n, int *ids, int what, const char *fn)
{
    arg_nodes(L, tidx, i, n, ids, fn);
    check_point(L, tidx, i, ids, n, what, fn);
}

typedef void (*map_vv)(lf_graph *, const int *, int *); /* vec/mat -> vec/mat */

static int map1(lua_State *L, int nin, int nout, map_vv f, int what, const char *fn)
{
    lua_settop(L, 1);
    int tidx = find_trace(L, 1), a[9], r[9];
    arg_checked(L, tidx, 1, nin, a, what, fn);
    f(graph_at(L, tidx), a, r);
    return push_result(L, tidx, nout, r);
}

#define MAP1(name, nin, nout, fn, what, label) \
    static int name(lua_State *L) { return map1(L, nin, nout, fn, what, label); }
MAP1(d_so3_hat, 3, 9, lf_gso3_hat, ANY, "so3.hat")
MAP1(d_so3_vee, 9, 3, lf_gso3_vee, ANY, "so3.vee")
MAP1(d_so3_exp, 3, 9, lf_gso3_exp, ANY, "so3.exp")
MAP1(d_so3_log, 9, 3, lf_gso3_log, ROTATION, "so3.log")
MAP1(d_so3_cay, 3, 9, lf_gso3_cay, ANY, "so3.cay")
MAP1(d_so3_cayinv, 9, 3, lf_gso3_cayinv, ROTATION, "so3.cayinv")
MAP1(d_so3_dexp, 3, 9, lf_gso3_dexp, ANY, "so3.dexp")
MAP1(d_so3_dexpinv, 3, 9, lf_gso3_dexpinv, ANY, "so3.dexpinv")
MAP1(d_so3_dcay, 3, 9, lf_gso3_dcay, ANY, "so3.dcay")
MAP1(d_so3_dcayinv, 3, 9, lf_gso3_dcayinv, ANY, "so3.dcayinv")

static void ad_matrix(lf_graph *g, const int *R, int *A)
{
    (void)g;
    memcpy(A, R, 9 * sizeof *A);
}

static int d_so3_Ad(lua_State *L)
{
    if (lua_isnoneornil(L, 2)) return map1(L, 9, 9, ad_matrix, ROTATION, "so3.Ad");
    lua_settop(L, 2);
    int tidx = find_trace(L, 2), R[9], x[3], r[3];
    arg_checked(L, tidx, 1, 9, R, ROTATION, "so3.Ad");
    arg_nodes(L, tidx, 2, 3, x, "so3.Ad");
    lf_gm3_apply(graph_at(L, tidx), R, x, r);
    return push_result(L, tidx, 3, r);
}

static int pair_scalar(lua_State *L, int n, int (*f)(lf_graph *, const int *, const int *), const char *fn, int opt_identity)
{
    lua_settop(L, 2);
    const int what = n == 9 ? ROTATION : UNIT;
    int tidx = find_trace(L, 2), a[9], b[9];
    arg_checked(L, tidx, 1, n, a, what, fn);
    if (opt_identity && lua_isnil(L, 2)) lf_gm3_identity(graph_at(L, tidx), b);
    else arg_checked(L, tidx, 2, n, b, what, fn);
    int r = f(graph_at(L, tidx), a, b);
    return push_result(L, tidx, 1, &r);
}
static int d_so3_dist(lua_State *L) { return pair_scalar(L, 9, lf_gso3_dist, "so3.dist", 0); }
static int d_so3_angle(lua_State *L) { return pair_scalar(L, 9, lf_gso3_angle, "so3.angle", 1); }
static int d_s2_dist(lua_State *L) { return pair_scalar(L, 3, lf_gs2_dist, "s2.dist", 0); }

static int d_so3_orth_error(lua_State *L)
{
    lua_settop(L, 1);
    int tidx = find_trace(L, 1), a[9];
    arg_nodes(L, tidx, 1, 9, a, "so3.orth_error");
    int r = lf_gso3_orth_error(graph_at(L, tidx), a);
    return push_result(L, tidx, 1, &r);
}

typedef void (*map_pair)(lf_graph *, const int *, const int *, int *);
/* s2 maps: x (argument 1) a unit vector, and y (argument 2) too when unit2 */
static int pair_vec(lua_State *L, int na, int nb, int nout, map_pair f, int unit2, const char *fn)
{
    lua_settop(L, 2);
    int tidx = find_trace(L, 2), a[9], b[9], r[9];
    arg_checked(L, tidx, 1, na, a, UNIT, fn);
    arg_checked(L, tidx, 2, nb, b, unit2 ? UNIT : ANY, fn);
    f(graph_at(L, tidx), a, b, r);
    return push_result(L, tidx, nout, r);
}
static int d_s2_midpoint(lua_State *L) { return pair_vec(L, 3, 3, 3, lf_gs2_midpoint, 1, "s2.midpoint"); }
static int d_s2_retract(lua_State *L) { return pair_vec(L, 3, 3, 3, lf_gs2_retract, 0, "s2.retract"); }
static int d_s2_retract_inv(lua_State *L) { return pair_vec(L, 3, 3, 3, lf_gs2_retract_inv, 1, "s2.retract_inv"); }
static int d_s2_tangent(lua_State *L) { return pair_vec(L, 3, 3, 3, lf_gs2_tangent, 0, "s2.tangent"); }
static int d_s2_exp(lua_State *L) { return pair_vec(L, 3, 3, 3, lf_gs2_exp, 0, "s2.exp"); }

/* quaternions: plain tables {w, x, y, z} of traced scalars and numbers */
static void push_quat(lua_State *L, int tidx, const int *q)
{
    tidx = lua_absindex(L, tidx);
    lua_createtable(L, 4, 0);
    for (int k = 0; k < 4; k++) {
        lfb_trace_push(L, tidx, 1, q + k);
        lua_rawseti(L, -2, k + 1);
    }
}

static void quat_arg(lua_State *L, int tidx, int i, int *q, const char *fn)
{
    char msg[120];
    if (!lfb_trace_read(L, tidx, i, 4, q, msg, sizeof msg))
        luaL_error(L, "argument #%d to '%s': quaternion {w, x, y, z} expected, got %s", i, fn, msg);
}

static int d_quat_mul(lua_State *L)
{
    lua_settop(L, 2);
    int tidx = find_trace(L, 2), p[4], q[4], r[4];
    quat_arg(L, tidx, 1, p, "quat.mul");
    quat_arg(L, tidx, 2, q, "quat.mul");
    lf_gquat_mul(graph_at(L, tidx), p, q, r);
    push_quat(L, tidx, r);
    return 1;
}

static int d_quat_conj(lua_State *L)
{
    lua_settop(L, 1);
    int tidx = find_trace(L, 1), q[4], r[4];
    quat_arg(L, tidx, 1, q, "quat.conj");
    lf_gquat_conj(graph_at(L, tidx), q, r);
    push_quat(L, tidx, r);
    return 1;
}

static int d_quat_to_matrix(lua_State *L)
{
    lua_settop(L, 1);
    int tidx = find_trace(L, 1), q[4], R[9];
    quat_arg(L, tidx, 1, q, "quat.to_matrix");
    lf_gquat_to_matrix(graph_at(L, tidx), q, R);
    return push_result(L, tidx, 9, R);
}

static int d_quat_from_matrix(lua_State *L)
{
    lua_settop(L, 1);
    int tidx = find_trace(L, 1), R[9], q[4];
    arg_nodes(L, tidx, 1, 9, R, "quat.from_matrix");
    lf_gquat_from_matrix(graph_at(L, tidx), R, q);
    push_quat(L, tidx, q);
    return 1;
}

static int d_quat_exp(lua_State *L)
{
    lua_settop(L, 1);
    int tidx = find_trace(L, 1), v[3], q[4];
    arg_nodes(L, tidx, 1, 3, v, "quat.exp");
    lf_gquat_exp(graph_at(L, tidx), v, q);
    push_quat(L, tidx, q);
    return 1;
}

static int d_quat_log(lua_State *L)
{
    lua_settop(L, 1);
    int tidx = find_trace(L, 1), q[4], v[3];
    quat_arg(L, tidx, 1, q, "quat.log");
    lf_gquat_log(graph_at(L, tidx), q, v);
    return push_result(L, tidx, 3, v);
}

/* Maps that have no traced version: a clear refusal. */
static int d_refuse(lua_State *L)
{
    return luaL_error(L, "%s of a traced value: not supported (it is not differentiable or has no closed form); "
                         "use compile = false", lua_tostring(L, lua_upvalueindex(1)));
}

static const luaL_Reg dispatch[] = {
    {"__add", t_add}, {"__sub", t_sub}, {"__mul", t_mul}, {"__div", t_div}, {"__unm", t_unm},
    {"dot", m_dot}, {"cross", m_cross}, {"norm", m_norm}, {"T", m_T}, {"det", m_det}, {"trace", m_trace},
    {"vec3", d_vec3}, {"mat3", d_mat3},
    {"so3.hat", d_so3_hat}, {"so3.vee", d_so3_vee}, {"so3.exp", d_so3_exp}, {"so3.log", d_so3_log},
    {"so3.cay", d_so3_cay}, {"so3.cayinv", d_so3_cayinv}, {"so3.dexp", d_so3_dexp}, {"so3.dexpinv", d_so3_dexpinv},
    {"so3.dcay", d_so3_dcay}, {"so3.dcayinv", d_so3_dcayinv}, {"so3.Ad", d_so3_Ad}, {"so3.dist", d_so3_dist},
    {"so3.angle", d_so3_angle}, {"so3.orth_error", d_so3_orth_error},
    {"s2.dist", d_s2_dist}, {"s2.midpoint", d_s2_midpoint}, {"s2.retract", d_s2_retract},
    {"s2.retract_inv", d_s2_retract_inv}, {"s2.tangent", d_s2_tangent}, {"s2.exp", d_s2_exp},
    {"quat.mul", d_quat_mul}, {"quat.conj", d_quat_conj}, {"quat.to_matrix", d_quat_to_matrix},
    {"quat.from_matrix", d_quat_from_matrix}, {"quat.exp", d_quat_exp}, {"quat.log", d_quat_log},
    {NULL, NULL}};
static const char *const refused[] = {"so3.project", "so3.is_rotation", "so3.random", "so3._check", NULL};

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

/* ---------------------------------------------------------------- lf.math */
/* Call the standard math function (upvalue 1) when no argument is traced. */
static int std_math(lua_State *L)
{
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

static int any_traced(lua_State *L)
{
    for (int i = 1, n = lua_gettop(L); i <= n; i++)
        if (totraced(L, i)) return 1;
    return 0;
}

static int math1(lua_State *L, int op, const char *fn)
{
    if (!any_traced(L)) return std_math(L);
    lua_settop(L, 1);
    int tidx = find_trace(L, 1), a;
    arg_nodes(L, tidx, 1, 1, &a, fn);
    int r = lf_g1(graph_at(L, tidx), op, a);
    return push_result(L, tidx, 1, &r);
}

#define MATH1(name, op) \
    static int mt_##name(lua_State *L) { return math1(L, op, "math." #name); }
MATH1(sqrt, LF_G_SQRT)
MATH1(exp, LF_G_EXP)
MATH1(sin, LF_G_SIN)
MATH1(cos, LF_G_COS)
MATH1(tan, LF_G_TAN)
MATH1(asin, LF_G_ASIN)
MATH1(acos, LF_G_ACOS)
MATH1(abs, LF_G_ABS)

static int mt_log(lua_State *L)
{
    if (!any_traced(L)) return std_math(L);
    int n = lua_gettop(L) >= 2 && !lua_isnil(L, 2) ? 2 : 1;
    lua_settop(L, n);
    int tidx = find_trace(L, n), a, b;
    lf_graph *g = graph_at(L, tidx);
    arg_nodes(L, tidx, 1, 1, &a, "math.log");
    int r = lf_g1(g, LF_G_LOG, a);
    if (n == 2) {
        arg_nodes(L, tidx, 2, 1, &b, "math.log");
        r = lf_g2(g, LF_G_DIV, r, lf_g1(g, LF_G_LOG, b));
    }
    return push_result(L, tidx, 1, &r);
}

static int mt_atan(lua_State *L)
{
    if (!any_traced(L)) return std_math(L);
    int two = lua_gettop(L) >= 2 && !lua_isnil(L, 2);
    lua_settop(L, two ? 2 : 1);
    int tidx = find_trace(L, two ? 2 : 1), a, b;
    lf_graph *g = graph_at(L, tidx);
    arg_nodes(L, tidx, 1, 1, &a, "math.atan");
    int r;
    if (two) {
        arg_nodes(L, tidx, 2, 1, &b, "math.atan");
        r = lf_g2(g, LF_G_ATAN2, a, b);
    } else
        r = lf_g1(g, LF_G_ATAN, a);
    return push_result(L, tidx, 1, &r);
}

static int mt_atan2(lua_State *L)
{
    lua_settop(L, 2);
    if (!any_traced(L)) {
        lua_pushnumber(L, atan2(luaL_checknumber(L, 1), luaL_checknumber(L, 2)));
        return 1;
    }
    int tidx = find_trace(L, 2), a, b;
    arg_nodes(L, tidx, 1, 1, &a, "math.atan2");
    arg_nodes(L, tidx, 2, 1, &b, "math.atan2");
    int r = lf_g2(graph_at(L, tidx), LF_G_ATAN2, a, b);
    return push_result(L, tidx, 1, &r);
}

static int mt_pow(lua_State *L)
{
    lua_settop(L, 2);
    if (!any_traced(L)) {
        lua_pushnumber(L, pow(luaL_checknumber(L, 1), luaL_checknumber(L, 2)));
        return 1;
    }
    return t_pow(L);
}

/* min / max over any number of arguments with Lua's rule (the first of equal ones) */
static int minmax(lua_State *L, int max)
{
    if (!any_traced(L)) return std_math(L);
    int n = lua_gettop(L);
    int tidx = find_trace(L, n), m;
    lf_graph *g = graph_at(L, tidx);
    arg_nodes(L, tidx, 1, 1, &m, max ? "math.max" : "math.min");
    for (int i = 2; i <= n; i++) {
        int x;
        arg_nodes(L, tidx, i, 1, &x, max ? "math.max" : "math.min");
        m = max ? lf_graph_max(g, m, x) : lf_graph_min(g, m, x);
    }
    return push_result(L, tidx, 1, &m);
}
static int mt_min(lua_State *L) { return minmax(L, 0); }
static int mt_max(lua_State *L) { return minmax(L, 1); }

/* floor, ceil, fmod, modf of a traced value: a point trace gives the value (a constant); a strict
 * trace refuses, naming the function */
static int piecewise(lua_State *L)
{
    if (!any_traced(L)) return std_math(L);
    const char *name = lua_tostring(L, lua_upvalueindex(2));
    int tidx = find_trace(L, lua_gettop(L));
    lfb_trace *t = trace_at(L, tidx);
    if (t->mode == LFB_TRACE_STRICT)
        return luaL_error(L, "math.%s of a state-dependent value cannot be compiled (it is piecewise constant); "
                             "use lf.math.select with a comparison, or compile = false", name);
    /* the function of the values, as a constant */
    int n = tidx - 1;
    lua_pushvalue(L, lua_upvalueindex(1));
    for (int i = 1; i <= n; i++) {
        traced *v = totraced(L, i);
        if (v && v->kind == 1) lua_pushnumber(L, lf_graph_value(t->g, v->id[0]));
        else lua_pushvalue(L, i);
    }
    lua_call(L, n, 1);
    int c = lf_graph_const(t->g, luaL_checknumber(L, -1));
    return push_result(L, tidx, 1, &c);
}

/* lf.math.lt/le/gt/ge/eq/ne(a, b): a boolean for numbers, a traced condition (1 or 0) for traced
 * values, for lf.math.select */
static int condition(lua_State *L, int op, int swap, const char *fn)
{
    lua_settop(L, 2);
    if (!any_traced(L)) {
        double a = luaL_checknumber(L, 1), b = luaL_checknumber(L, 2);
        if (swap) {
            double t = a;
            a = b;
            b = t;
        }
        int r = op == LF_G_LT ? a < b : op == LF_G_LE ? a <= b : op == LF_G_EQ ? a == b : a != b;
        lua_pushboolean(L, r);
        return 1;
    }
    int tidx = find_trace(L, 2), a, b;
    arg_nodes(L, tidx, 1, 1, &a, fn);
    arg_nodes(L, tidx, 2, 1, &b, fn);
    int r = swap ? lf_g2(graph_at(L, tidx), op, b, a) : lf_g2(graph_at(L, tidx), op, a, b);
    return push_result(L, tidx, 1, &r);
}
static int mt_lt(lua_State *L) { return condition(L, LF_G_LT, 0, "math.lt"); }
static int mt_le(lua_State *L) { return condition(L, LF_G_LE, 0, "math.le"); }
static int mt_gt(lua_State *L) { return condition(L, LF_G_LT, 1, "math.gt"); }
static int mt_ge(lua_State *L) { return condition(L, LF_G_LE, 1, "math.ge"); }
static int mt_eq(lua_State *L) { return condition(L, LF_G_EQ, 0, "math.eq"); }
static int mt_ne(lua_State *L) { return condition(L, LF_G_NE, 0, "math.ne"); }

/* lf.math.select(c, a, b): a where c holds, else b, without a branch: c a condition (traced),
 * a boolean, or a number (nonzero: true); a and b numbers, vec3 or mat3 of the same kind */
static int mt_select(lua_State *L)
{
    lua_settop(L, 3);
    if (!any_traced(L)) {
        int c = lua_type(L, 1) == LUA_TNUMBER ? lua_tonumber(L, 1) != 0 : lua_toboolean(L, 1);
        if (lua_isnone(L, 1)) return luaL_error(L, "lf.math.select(cond, a, b): a condition is required");
        lua_pushvalue(L, c ? 2 : 3);
        return 1;
    }
    int tidx = find_trace(L, 3), c;
    lf_graph *g = graph_at(L, tidx);
    if (lua_type(L, 1) == LUA_TBOOLEAN) c = lf_graph_const(g, lua_toboolean(L, 1));
    else arg_nodes(L, tidx, 1, 1, &c, "lf.math.select");
    opnd a, b;
    read_opnd(L, tidx, 2, &a, "lf.math.select");
    read_opnd(L, tidx, 3, &b, "lf.math.select");
    if (a.kind != b.kind)
        return luaL_error(L, "lf.math.select: both values must be of the same kind (got %s and %s)", lfb_typename(L, 2),
                          lfb_typename(L, 3));
    int r[9];
    for (int i = 0; i < a.kind; i++) r[i] = lf_gselect(g, c, a.id[i], b.id[i]);
    return push_result(L, tidx, a.kind, r);
}

static const luaL_Reg math_funcs[] = {
    {"sqrt", mt_sqrt}, {"exp", mt_exp}, {"log", mt_log}, {"sin", mt_sin}, {"cos", mt_cos}, {"tan", mt_tan},
    {"asin", mt_asin}, {"acos", mt_acos}, {"atan", mt_atan}, {"abs", mt_abs}, {"min", mt_min}, {"max", mt_max},
    {NULL, NULL}};
static const luaL_Reg math_own[] = {{"atan2", mt_atan2}, {"pow", mt_pow}, {"select", mt_select}, {"lt", mt_lt},
                                    {"le", mt_le}, {"gt", mt_gt}, {"ge", mt_ge}, {"eq", mt_eq}, {"ne", mt_ne},
                                    {NULL, NULL}};
static const char *const math_piecewise[] = {"floor", "ceil", "fmod", "modf", NULL};

void lfb_open_trace(lua_State *L)
{
    const int mod = lua_gettop(L);
    luaL_newmetatable(L, LFB_TRACE);
    lua_pushcfunction(L, trace_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    luaL_newmetatable(L, LFB_TRACED);
    const luaL_Reg meta[] = {{"__add", t_add}, {"__sub", t_sub}, {"__mul", t_mul}, {"__div", t_div}, {"__unm", t_unm},
                             {"__pow", t_pow}, {"__mod", t_mod}, {"__idiv", t_idiv}, {"__lt", t_lt}, {"__le", t_le},
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
    for (int i = 0; refused[i]; i++) {
        lua_pushstring(L, refused[i]);
        lua_pushcclosure(L, d_refuse, 1);
        lua_setfield(L, -2, refused[i]);
    }
    lua_setfield(L, -2, "__lf_dual");
    lua_pop(L, 1);
    /* lf.math: the traced versions, the standard function for numbers */
    lua_newtable(L);
    lua_getglobal(L, "math");
    const int stdm = lua_gettop(L);
    for (const luaL_Reg *r = math_funcs; r->name; r++) {
        lua_getfield(L, stdm, r->name);
        lua_pushcclosure(L, r->func, 1);
        lua_setfield(L, stdm - 1, r->name);
    }
    for (int i = 0; math_piecewise[i]; i++) {
        lua_getfield(L, stdm, math_piecewise[i]);
        lua_pushstring(L, math_piecewise[i]);
        lua_pushcclosure(L, piecewise, 2);
        lua_setfield(L, stdm - 1, math_piecewise[i]);
    }
    lua_pop(L, 1);
    luaL_setfuncs(L, math_own, 0);
    lua_pushnumber(L, M_PI);
    lua_setfield(L, -2, "pi");
    lua_pushnumber(L, HUGE_VAL);
    lua_setfield(L, -2, "huge");
    lua_createtable(L, 0, 1); /* the rest of the standard math library (random, type, ...) as it is */
    lua_getglobal(L, "math");
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, "lieflow.math"); /* for lfb_natural */
    lua_setfield(L, mod, "math");
}
