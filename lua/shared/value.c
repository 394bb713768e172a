/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — vec3 and mat3 userdata: constructors, conversion from plain tables,
 * arithmetic metamethods, indexing, methods, printing. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "shared/bind.h"

/* ---------------------------------------------------------------- helpers */
const char *lfb_typename(lua_State *L, int idx)
{
    int t = luaL_getmetafield(L, idx, "__name"); /* pushes nothing when there is no such field */
    if (t == LUA_TSTRING) {
        const char *n = lua_tostring(L, -1);
        lua_pop(L, 1); /* the name string stays alive in the metatable */
        return n;
    }
    if (t != LUA_TNIL) lua_pop(L, 1); /* a non-string __name */
    return luaL_typename(L, idx);
}

int lfb_error(lua_State *L, const lf_error *e) { return luaL_error(L, "%s", e->msg); }

int lfb_error_in(lua_State *L, const char *fn, const lf_error *e)
{
    const size_t n = strlen(fn);
    if (strncmp(e->msg, fn, n) == 0 && e->msg[n] == ':') return luaL_error(L, "%s", e->msg);
    return luaL_error(L, "%s: %s", fn, e->msg);
}

double lfb_checkfinite(lua_State *L, int idx, const char *what)
{
    int ok;
    double x = lua_tonumberx(L, idx, &ok);
    if (!ok) luaL_error(L, "%s: number expected, got %s", what, lfb_typename(L, idx));
    if (!isfinite(x)) luaL_error(L, "%s: finite number expected, got %f", what, x);
    return x;
}

double lfb_optnumber(lua_State *L, int t, const char *key, double def, const char *fn, const char *noun)
{
    double x = def;
    if (lua_getfield(L, t, key) != LUA_TNIL) {
        char w[96];
        snprintf(w, sizeof w, "%s: %s '%s'", fn, noun, key);
        x = lfb_checkfinite(L, -1, w);
    }
    lua_pop(L, 1);
    return x;
}

double lfb_optfield_number(lua_State *L, int t, const char *key, double def, const char *fn)
{
    return lfb_optnumber(L, t, key, def, fn, "field");
}

int lfb_optfield_vec3(lua_State *L, int t, const char *key, double v[3], const char *fn)
{
    int present = lua_getfield(L, t, key) != LUA_TNIL;
    if (present) {
        char w[96];
        snprintf(w, sizeof w, "%s: field '%s'", fn, key);
        lfb_tovec3(L, -1, v, w);
    }
    lua_pop(L, 1);
    return present;
}

int lfb_optfield_rotation(lua_State *L, int t, const char *key, double R[9], const char *fn)
{
    int present = lua_getfield(L, t, key) != LUA_TNIL;
    if (present) {
        char w[200];
        snprintf(w, sizeof w, "%s: field '%s'", fn, key);
        lfb_torotation(L, -1, R, w);
    }
    lua_pop(L, 1);
    return present;
}

double *lfb_testvec3(lua_State *L, int idx) { return luaL_testudata(L, idx, LFB_VEC3); }
double *lfb_testmat3(lua_State *L, int idx) { return luaL_testudata(L, idx, LFB_MAT3); }

double *lfb_pushvec3(lua_State *L, const double v[3])
{
    double *u = lua_newuserdatauv(L, 3 * sizeof(double), 0);
    if (v) memcpy(u, v, 3 * sizeof(double));
    luaL_setmetatable(L, LFB_VEC3);
    return u;
}

double *lfb_pushmat3(lua_State *L, const double M[9])
{
    double *u = lua_newuserdatauv(L, 9 * sizeof(double), 0);
    if (M) memcpy(u, M, 9 * sizeof(double));
    luaL_setmetatable(L, LFB_MAT3);
    return u;
}

static void check_components(lua_State *L, const double *x, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i])) luaL_error(L, "%s: component %d is not finite (%f)", what, i + 1, x[i]);
}

/* Read t[i] (1-based) of the table at idx as a number. */
static double table_number(lua_State *L, int idx, lua_Integer i, const char *what, const char *expect)
{
    int ok;
    lua_rawgeti(L, idx, i);
    double x = lua_tonumberx(L, -1, &ok);
    if (!ok) luaL_error(L, "%s: %s expected, element %I is %s", what, expect, i, lfb_typename(L, -1));
    lua_pop(L, 1);
    return x;
}

/* An autodiff value: a table whose metatable has the field __lf_dual (read raw: a metatable's own
 * __index must not run). */
static int is_dual(lua_State *L, int idx)
{
    const int t = lua_type(L, idx);
    if ((t != LUA_TTABLE && t != LUA_TUSERDATA) || !lua_getmetatable(L, idx)) return 0;
    lua_pushliteral(L, "__lf_dual");
    int d = lua_rawget(L, -2) != LUA_TNIL;
    lua_pop(L, 2);
    return d;
}

void lfb_tovec3(lua_State *L, int idx, double v[3], const char *what)
{
    idx = lua_absindex(L, idx);
    const double *u = lfb_testvec3(L, idx);
    if (u) memcpy(v, u, 3 * sizeof(double));
    else if (lua_type(L, idx) == LUA_TTABLE && !is_dual(L, idx)) { /* plain tables (a metatable is
                                                                       not consulted: lengths and
                                                                       entries are read raw) */
        if (lua_rawlen(L, idx) != 3)
            luaL_error(L, "%s: vec3 or table of 3 numbers expected, got a table of length %I", what,
                       (lua_Integer)lua_rawlen(L, idx));
        for (int i = 0; i < 3; i++) v[i] = table_number(L, idx, i + 1, what, "vec3 (3 numbers)");
    } else
        luaL_error(L, "%s: vec3 or table of 3 numbers expected, got %s", what, lfb_typename(L, idx));
    check_components(L, v, 3, what);
}

void lfb_tomat3(lua_State *L, int idx, double M[9], const char *what)
{
    idx = lua_absindex(L, idx);
    const double *u = lfb_testmat3(L, idx);
    if (u) memcpy(M, u, 9 * sizeof(double));
    else if (lua_type(L, idx) == LUA_TTABLE && !is_dual(L, idx)) { /* plain tables, read raw */
        lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
        lua_rawgeti(L, idx, 1);
        int nested = lua_type(L, -1) != LUA_TNUMBER;
        lua_pop(L, 1);
        if (!nested && n == 9) {
            for (int i = 0; i < 9; i++) M[i] = table_number(L, idx, i + 1, what, "mat3 (9 numbers)");
        } else if (nested && n == 3) {
            for (int r = 0; r < 3; r++) {
                lua_rawgeti(L, idx, r + 1);
                char rw[200];
                snprintf(rw, sizeof rw, "%s row %d", what, r + 1);
                lfb_tovec3(L, -1, M + 3 * r, rw);
                lua_pop(L, 1);
            }
        } else
            luaL_error(L, "%s: mat3, 9 numbers or 3 rows of 3 expected, got a table of length %I", what, n);
    } else
        luaL_error(L, "%s: mat3 or table (9 numbers or 3 rows) expected, got %s", what, lfb_typename(L, idx));
    check_components(L, M, 9, what);
}

void lfb_torotation(lua_State *L, int idx, double R[9], const char *what)
{
    lf_error e;
    lfb_tomat3(L, idx, R, what);
    if (lf_so3_check(R, 1e-9, what, &e) != LF_OK) lfb_error(L, &e);
}

/* ---------------------------------------------------------------- autodiff dispatch */

/* Push the dispatch table of the autodiff value at idx: its metatable's field __lf_dual when that is a
 * table (reverse mode, scripts/lieflow/reverse.lua), else the registry table "lieflow.dual" (forward
 * mode, whose metatables have __lf_dual = true). Returns the type of the pushed value. */
static int push_dual_table(lua_State *L, int idx)
{
    lua_getmetatable(L, idx);
    lua_pushliteral(L, "__lf_dual");
    if (lua_rawget(L, -2) == LUA_TTABLE) {
        lua_remove(L, -2);
        return LUA_TTABLE;
    }
    lua_pop(L, 2);
    return lua_getfield(L, LUA_REGISTRYINDEX, "lieflow.dual");
}

/* The __lf_dual field of the autodiff value at idx, as an identity (NULL for forward mode's `true`). */
static const void *dual_mode(lua_State *L, int idx)
{
    lua_getmetatable(L, idx);
    lua_pushliteral(L, "__lf_dual");
    lua_rawget(L, -2);
    const void *p = lua_type(L, -1) == LUA_TTABLE ? lua_topointer(L, -1) : NULL;
    lua_pop(L, 2);
    return p;
}

/* A table (or rows of a table) holding autodiff duals: lf.vec3 / lf.mat3 of it make dual values
 * (the autodiff module's constructors), so that code written with lf.vec3 differentiates. Returns
 * 1 and pushes the first dual found, else returns 0 and pushes nothing. */
static int holds_duals(lua_State *L, int idx, int depth)
{
    if (lua_type(L, idx) != LUA_TTABLE) return 0;
    for (int i = 1; i <= 9; i++) {
        int t = lua_rawgeti(L, idx, i);
        if ((t == LUA_TTABLE || t == LUA_TUSERDATA) && is_dual(L, -1)) return 1;
        if (t == LUA_TTABLE && depth > 0 && holds_duals(L, lua_gettop(L), depth - 1)) {
            lua_remove(L, -2);
            return 1;
        }
        lua_pop(L, 1);
        if (t == LUA_TNIL) break;
    }
    return 0;
}

int lfb_dual_dispatch(lua_State *L, const char *name, int *nres)
{
    const int n = lua_gettop(L);
    int first = 0;
    for (int i = 1; i <= n && !first; i++) {
        if (is_dual(L, i)) {
            first = i;
            lua_pushvalue(L, i);
        } else if (holds_duals(L, i, 1)) /* a plain table holding traced numbers, e.g. {w, x, y, z} */
            first = i;
    }
    if (!first) return 0;
    const int d = n + 1; /* the autodiff value found */
    const void *mode = dual_mode(L, d);
    for (int i = first + 1; i <= n; i++)
        if (is_dual(L, i) && dual_mode(L, i) != mode)
            luaL_error(L, "%s: cannot mix forward-mode and reverse-mode autodiff values (%s and %s)", name,
                       lfb_typename(L, d), lfb_typename(L, i));
    if (push_dual_table(L, d) != LUA_TTABLE || lua_getfield(L, -1, name) == LUA_TNIL)
        luaL_error(L, "%s is not supported on autodiff values (%s)", name, lfb_typename(L, d));
    lua_insert(L, 1); /* the function, then the arguments, the value found and the table */
    lua_settop(L, n + 1);
    lua_call(L, n, LUA_MULTRET);
    *nres = lua_gettop(L);
    return 1;
}

/* ---------------------------------------------------------------- constructors */
/* lf.vec3 / lf.mat3 of a table holding the dual at the top of the stack: the constructor `name` of
 * that dual's dispatch table (forward or reverse mode). */
static int dual_constructor(lua_State *L, const char *name)
{
    if (push_dual_table(L, lua_gettop(L)) != LUA_TTABLE || lua_getfield(L, -1, name) != LUA_TFUNCTION)
        return luaL_error(L, "lf.%s of autodiff values needs the autodiff module (require \"lieflow\")", name);
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    return 1;
}

static int l_vec3(lua_State *L)
{
    double v[3] = {0, 0, 0};
    int nres;
    if (lfb_dual_dispatch(L, "vec3", &nres)) return nres;
    if (lua_gettop(L) == 1 && holds_duals(L, 1, 0)) return dual_constructor(L, "vec3");
    if (lua_gettop(L) >= 3 && lua_isnumber(L, 1)) {
        for (int i = 0; i < 3; i++) v[i] = lfb_checkfinite(L, i + 1, "lf.vec3");
    } else if (!lua_isnoneornil(L, 1))
        lfb_tovec3(L, 1, v, "argument #1 to 'lf.vec3'");
    lfb_pushvec3(L, v);
    return 1;
}

static int l_mat3(lua_State *L)
{
    double M[9];
    int nres;
    if (lfb_dual_dispatch(L, "mat3", &nres)) return nres;
    if (lua_gettop(L) == 1 && holds_duals(L, 1, 1)) return dual_constructor(L, "mat3");
    if (lua_isnoneornil(L, 1)) lf_m3_identity(M);
    else lfb_tomat3(L, 1, M, "argument #1 to 'lf.mat3'");
    lfb_pushmat3(L, M);
    return 1;
}

/* ---------------------------------------------------------------- printing */
static void fmt_num(char *buf, size_t n, double x)
{
    if (x == 0) x = 0; /* print -0 as 0 */
    snprintf(buf, n, "%.15g", x);
}

static int vec3_tostring(lua_State *L)
{
    const double *v = luaL_checkudata(L, 1, LFB_VEC3);
    char a[32], b[32], c[32];
    fmt_num(a, sizeof a, v[0]);
    fmt_num(b, sizeof b, v[1]);
    fmt_num(c, sizeof c, v[2]);
    lua_pushfstring(L, "vec3{%s, %s, %s}", a, b, c);
    return 1;
}

static int mat3_tostring(lua_State *L)
{
    const double *M = luaL_checkudata(L, 1, LFB_MAT3);
    char s[9][32];
    int wcol[3] = {0, 0, 0};
    for (int i = 0; i < 9; i++) {
        fmt_num(s[i], sizeof s[i], M[i]);
        int len = (int)strlen(s[i]);
        if (len > wcol[i % 3]) wcol[i % 3] = len < 31 ? len : 31;
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int r = 0; r < 3; r++) {
        char line[400];
        snprintf(line, sizeof line, "%s{%*s, %*s, %*s}%s", r == 0 ? "mat3{" : "     ", wcol[0], s[3 * r], wcol[1],
                 s[3 * r + 1], wcol[2], s[3 * r + 2], r == 2 ? "}" : ",\n");
        luaL_addstring(&b, line);
    }
    luaL_pushresult(&b);
    return 1;
}

/* ---------------------------------------------------------------- arithmetic */
/* A scalar, vec3 or mat3 operand (plain tables of 3 or 9 numbers count as vec3 / mat3). */
typedef struct {
    int kind; /* 1 number, 3 vec3, 9 mat3 */
    double x[9];
} operand;

/* A table without a metatable (the only tables taken as vectors and matrices: no __len or
 * __index of the caller's runs while we read). */
static int plain_table(lua_State *L, int idx)
{
    if (lua_type(L, idx) != LUA_TTABLE) return 0;
    if (!lua_getmetatable(L, idx)) return 1;
    lua_pop(L, 1);
    return 0;
}

static void read_operand(lua_State *L, int idx, operand *o, const char *op)
{
    double *u;
    if (lua_type(L, idx) == LUA_TNUMBER) {
        o->kind = 1;
        o->x[0] = lua_tonumber(L, idx);
    } else if ((u = lfb_testvec3(L, idx))) {
        o->kind = 3;
        memcpy(o->x, u, 3 * sizeof(double));
    } else if ((u = lfb_testmat3(L, idx))) {
        o->kind = 9;
        memcpy(o->x, u, 9 * sizeof(double));
    } else if (plain_table(L, idx) && lua_rawlen(L, idx) == 3) {
        char what[64];
        snprintf(what, sizeof what, "operand %d of '%s'", idx, op);
        lua_rawgeti(L, idx, 1);
        int nested = lua_type(L, -1) == LUA_TTABLE;
        lua_pop(L, 1);
        o->kind = nested ? 9 : 3;
        if (nested) lfb_tomat3(L, idx, o->x, what);
        else lfb_tovec3(L, idx, o->x, what);
    } else if (plain_table(L, idx) && lua_rawlen(L, idx) == 9) {
        char what[64];
        snprintf(what, sizeof what, "operand %d of '%s'", idx, op);
        o->kind = 9;
        lfb_tomat3(L, idx, o->x, what);
    } else
        luaL_error(L, "attempt to perform '%s' on %s and %s (numbers, vec3 or mat3 expected)", op,
                   lfb_typename(L, 1), lfb_typename(L, 2));
}

/* vec3 and mat3 hold finite numbers only (their constructors refuse others): a result that
 * overflowed, or came from a division by 0 or a NaN scalar, is an error. */
static void check_finite_result(lua_State *L, const operand *o, const char *op)
{
    for (int i = 0; i < o->kind; i++)
        if (!isfinite(o->x[i])) {
            char num[32];
            snprintf(num, sizeof num, "%g", o->x[i]);
            luaL_error(L, "'%s' on %s and %s: the result has a non-finite component (%s); vec3 and mat3 hold finite numbers only",
                       op, lfb_typename(L, 1), lua_isnoneornil(L, 2) && op[0] == '-' ? "nothing" : lfb_typename(L, 2), num);
        }
}

static void push_operand(lua_State *L, const operand *o)
{
    if (o->kind == 1) lua_pushnumber(L, o->x[0]);
    else if (o->kind == 3) lfb_pushvec3(L, o->x);
    else lfb_pushmat3(L, o->x);
}

static int arith_addsub(lua_State *L, int sign, const char *op, const char *dualname)
{
    LFB_DUAL(dualname, 2);
    operand a, b;
    read_operand(L, 1, &a, op);
    read_operand(L, 2, &b, op);
    if (a.kind != b.kind || a.kind == 1)
        return luaL_error(L, "attempt to perform '%s' on %s and %s (operands must both be vec3 or both mat3)", op,
                          lfb_typename(L, 1), lfb_typename(L, 2));
    for (int i = 0; i < a.kind; i++) a.x[i] += sign * b.x[i];
    check_finite_result(L, &a, op);
    push_operand(L, &a);
    return 1;
}
static int l_add(lua_State *L) { return arith_addsub(L, 1, "+", "__add"); }
static int l_sub(lua_State *L) { return arith_addsub(L, -1, "-", "__sub"); }

static int l_mul(lua_State *L)
{
    LFB_DUAL("__mul", 2);
    operand a, b, r;
    read_operand(L, 1, &a, "*");
    read_operand(L, 2, &b, "*");
    if (a.kind == 1 || b.kind == 1) {
        const operand *s = a.kind == 1 ? &a : &b, *m = a.kind == 1 ? &b : &a;
        r.kind = m->kind;
        for (int i = 0; i < m->kind; i++) r.x[i] = s->x[0] * m->x[i];
    } else if (a.kind == 9 && b.kind == 9) {
        r.kind = 9;
        lf_m3_mul(a.x, b.x, r.x);
    } else if (a.kind == 9 && b.kind == 3) {
        r.kind = 3;
        lf_m3_apply(a.x, b.x, r.x);
    } else if (a.kind == 3 && b.kind == 9) { /* row vector times matrix: v^T M */
        r.kind = 3;
        lf_m3_tapply(b.x, a.x, r.x);
    } else
        return luaL_error(L, "attempt to multiply two vec3 (use v:dot(w) or v:cross(w))");
    check_finite_result(L, &r, "*");
    push_operand(L, &r);
    return 1;
}

static int l_div(lua_State *L)
{
    LFB_DUAL("__div", 2);
    operand a, b;
    read_operand(L, 1, &a, "/");
    read_operand(L, 2, &b, "/");
    if (b.kind != 1 || a.kind == 1)
        return luaL_error(L, "attempt to divide %s by %s (only vec3/mat3 divided by a number)", lfb_typename(L, 1),
                          lfb_typename(L, 2));
    if (b.x[0] == 0) return luaL_error(L, "attempt to divide %s by zero", lfb_typename(L, 1));
    for (int i = 0; i < a.kind; i++) a.x[i] /= b.x[0];
    check_finite_result(L, &a, "/");
    push_operand(L, &a);
    return 1;
}

static int l_unm(lua_State *L)
{
    LFB_DUAL("__unm", 1); /* (Lua passes the operand twice) */
    operand a;
    read_operand(L, 1, &a, "-");
    for (int i = 0; i < a.kind; i++) a.x[i] = -a.x[i];
    check_finite_result(L, &a, "-"); /* __unm called by hand on inf */
    push_operand(L, &a);
    return 1;
}

static int l_eq(lua_State *L)
{
    const double *a = lfb_testvec3(L, 1), *b = lfb_testvec3(L, 2);
    int n = 3;
    if (!a || !b) {
        a = lfb_testmat3(L, 1);
        b = lfb_testmat3(L, 2);
        n = 9;
    }
    int eq = a && b;
    for (int i = 0; eq && i < n; i++) eq = a[i] == b[i];
    lua_pushboolean(L, eq);
    return 1;
}

/* A number computed from finite vec3/mat3 entries that overflowed (|v . w| > DBL_MAX, ...): an
 * error naming the method, not inf. */
static int push_finite(lua_State *L, double x, const char *fn)
{
    if (!isfinite(x)) return luaL_error(L, "%s: the result overflows (its magnitude exceeds %f)", fn, DBL_MAX);
    lua_pushnumber(L, x);
    return 1;
}

/* ---------------------------------------------------------------- vec3 methods and indexing */
static int vec3_dot(lua_State *L)
{
    LFB_DUAL("dot", 2);
    double a[3], b[3];
    lfb_tovec3(L, 1, a, "vec3:dot self");
    lfb_tovec3(L, 2, b, "argument #1 to 'vec3:dot'");
    return push_finite(L, lf_v3_dot(a, b), "vec3:dot");
}

static int vec3_cross(lua_State *L)
{
    LFB_DUAL("cross", 2);
    double a[3], b[3], c[3];
    lfb_tovec3(L, 1, a, "vec3:cross self");
    lfb_tovec3(L, 2, b, "argument #1 to 'vec3:cross'");
    lf_v3_cross(a, b, c);
    if (!lf_v3_isfinite(c)) return luaL_error(L, "vec3:cross: the result overflows (a component exceeds %f)", DBL_MAX);
    lfb_pushvec3(L, c);
    return 1;
}

static int vec3_norm(lua_State *L)
{
    const double *v = luaL_checkudata(L, 1, LFB_VEC3);
    return push_finite(L, lf_v3_norm(v), "vec3:norm"); /* scaled: inf only beyond DBL_MAX */
}

static int vec3_normalized(lua_State *L)
{
    const double *v = luaL_checkudata(L, 1, LFB_VEC3);
    double r[3], m = fmax(fmax(fabs(v[0]), fabs(v[1])), fabs(v[2]));
    if (!(m > 0)) return luaL_error(L, "vec3:normalized: the zero vector has no direction");
    /* divide by the largest component first (exact up to rounding, no overflow), then by the norm
     * of the result, which is in [1, sqrt 3]: no 1/|v| that overflows for subnormal v */
    for (int i = 0; i < 3; i++) r[i] = v[i] / m;
    double n = lf_v3_norm(r);
    for (int i = 0; i < 3; i++) r[i] /= n;
    lfb_pushvec3(L, r);
    return 1;
}

static int vec3_totable(lua_State *L)
{
    const double *v = luaL_checkudata(L, 1, LFB_VEC3);
    lua_createtable(L, 3, 0);
    for (int i = 0; i < 3; i++) {
        lua_pushnumber(L, v[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static int vec3_copy(lua_State *L)
{
    lfb_pushvec3(L, luaL_checkudata(L, 1, LFB_VEC3));
    return 1;
}

/* Index of a component from an integer 1..3 or a name x/y/z; 0 if neither. */
static int component(lua_State *L, int idx)
{
    if (lua_type(L, idx) == LUA_TNUMBER) {
        lua_Integer i = lua_tointeger(L, idx);
        return (i >= 1 && i <= 3 && lua_tonumber(L, idx) == (lua_Number)i) ? (int)i : -1;
    }
    if (lua_type(L, idx) == LUA_TSTRING) {
        const char *k = lua_tostring(L, idx);
        if (k[0] && !k[1] && k[0] >= 'x' && k[0] <= 'z') return k[0] - 'x' + 1;
    }
    return 0;
}

static int vec3_index(lua_State *L)
{
    const double *v = luaL_checkudata(L, 1, LFB_VEC3);
    int c = component(L, 2);
    if (c > 0) {
        lua_pushnumber(L, v[c - 1]);
        return 1;
    }
    if (c < 0) return luaL_error(L, "vec3 index out of range: %s (expected 1, 2 or 3)", luaL_tolstring(L, 2, NULL));
    luaL_getmetatable(L, LFB_VEC3);
    lua_getfield(L, -1, "methods");
    lua_pushvalue(L, 2);
    lua_rawget(L, -2);
    return 1;
}

static int vec3_newindex(lua_State *L)
{
    double *v = luaL_checkudata(L, 1, LFB_VEC3);
    int c = component(L, 2);
    if (c <= 0) return luaL_error(L, "vec3: cannot set field %s (use 1..3 or x/y/z)", luaL_tolstring(L, 2, NULL));
    const double x = lfb_checkfinite(L, 3, "vec3 component");
    v[c - 1] = x;
    /* a row of a mat3 (M[i]) writes through to its matrix: M[i][j] = x sets the entry */
    if (lua_getiuservalue(L, 1, 1) == LUA_TUSERDATA) {
        double *M = luaL_testudata(L, -1, LFB_MAT3);
        lua_getiuservalue(L, 1, 2);
        const lua_Integer i = lua_tointeger(L, -1);
        if (M && i >= 1 && i <= 3) M[3 * (i - 1) + c - 1] = x;
    }
    return 0;
}

static int vec_len(lua_State *L)
{
    lua_pushinteger(L, 3);
    return 1;
}

/* ---------------------------------------------------------------- mat3 methods and indexing */
static const double *selfmat(lua_State *L) { return luaL_checkudata(L, 1, LFB_MAT3); }

static int mat3_T(lua_State *L)
{
    LFB_DUAL("T", 1);
    double R[9];
    lf_m3_transpose(selfmat(L), R);
    lfb_pushmat3(L, R);
    return 1;
}
static int mat3_det(lua_State *L)
{
    LFB_DUAL("det", 1);
    return push_finite(L, lf_m3_det(selfmat(L)), "mat3:det"); /* scaled: inf only when |det| > DBL_MAX */
}
static int mat3_trace(lua_State *L)
{
    LFB_DUAL("trace", 1);
    return push_finite(L, lf_m3_trace(selfmat(L)), "mat3:trace");
}
static int mat3_norm(lua_State *L)
{
    LFB_DUAL("norm", 1);
    return push_finite(L, lf_m3_fnorm(selfmat(L)), "mat3:norm");
}
static int mat3_inv(lua_State *L)
{
    double A[9], rcond;
    if (lf_m3_inverse_scaled(selfmat(L), A, &rcond) != LF_OK) {
        char num[32];
        snprintf(num, sizeof num, "%.3g", rcond);
        if (rcond >= 1e-15) return luaL_error(L, "mat3:inv: the inverse overflows (its entries exceed %f)", DBL_MAX);
        return luaL_error(L, "mat3:inv: the matrix is singular to working precision (reciprocal condition number %s < 1e-15)", num);
    }
    lfb_pushmat3(L, A);
    return 1;
}
static int mat3_totable(lua_State *L)
{
    const double *M = selfmat(L);
    lua_createtable(L, 3, 0);
    for (int r = 0; r < 3; r++) {
        lua_createtable(L, 3, 0);
        for (int c = 0; c < 3; c++) {
            lua_pushnumber(L, M[3 * r + c]);
            lua_rawseti(L, -2, c + 1);
        }
        lua_rawseti(L, -2, r + 1);
    }
    return 1;
}
static int mat3_row(lua_State *L)
{
    lua_Integer i = luaL_checkinteger(L, 2);
    luaL_argcheck(L, i >= 1 && i <= 3, 2, "row index 1..3 expected");
    lfb_pushvec3(L, selfmat(L) + 3 * (i - 1));
    return 1;
}
static int mat3_col(lua_State *L)
{
    const double *M = selfmat(L);
    lua_Integer j = luaL_checkinteger(L, 2);
    luaL_argcheck(L, j >= 1 && j <= 3, 2, "column index 1..3 expected");
    double c[3] = {M[j - 1], M[3 + j - 1], M[6 + j - 1]};
    lfb_pushvec3(L, c);
    return 1;
}
static int mat3_copy(lua_State *L)
{
    lfb_pushmat3(L, selfmat(L));
    return 1;
}

/* M[i] is row i as a vec3 (a copy), so M[i][j] reads row i, column j. */
static int mat3_index(lua_State *L)
{
    const double *M = selfmat(L);
    if (lua_type(L, 2) == LUA_TNUMBER) {
        lua_Integer i = lua_tointeger(L, 2);
        if (i < 1 || i > 3) return luaL_error(L, "mat3 row index out of range: %s (expected 1, 2 or 3)", luaL_tolstring(L, 2, NULL));
        /* the row, a vec3 that writes through to the matrix (M[i][j] = x works) */
        double *r = lua_newuserdatauv(L, 3 * sizeof(double), 2);
        memcpy(r, M + 3 * (i - 1), 3 * sizeof(double));
        luaL_setmetatable(L, LFB_VEC3);
        lua_pushvalue(L, 1);
        lua_setiuservalue(L, -2, 1);
        lua_pushinteger(L, i);
        lua_setiuservalue(L, -2, 2);
        return 1;
    }
    luaL_getmetatable(L, LFB_MAT3);
    lua_getfield(L, -1, "methods");
    lua_pushvalue(L, 2);
    lua_rawget(L, -2);
    return 1;
}

/* M[i] = row (a vec3 or 3 numbers) sets row i; other keys are an error. */
static int mat3_newindex(lua_State *L)
{
    double *M = luaL_checkudata(L, 1, LFB_MAT3);
    if (lua_type(L, 2) != LUA_TNUMBER || !lua_isinteger(L, 2) || lua_tointeger(L, 2) < 1 || lua_tointeger(L, 2) > 3)
        return luaL_error(L, "mat3: cannot set field %s (set a row with M[i] = {x, y, z}, i = 1..3, or an entry "
                             "with M[i][j] = x)", luaL_tolstring(L, 2, NULL));
    const lua_Integer i = lua_tointeger(L, 2);
    double r[3];
    lfb_tovec3(L, 3, r, "mat3 row");
    memcpy(M + 3 * (i - 1), r, sizeof r);
    return 0;
}

static const luaL_Reg vec3_methods[] = {{"dot", vec3_dot},         {"cross", vec3_cross},     {"norm", vec3_norm},
                                        {"normalized", vec3_normalized}, {"totable", vec3_totable}, {"copy", vec3_copy},
                                        {NULL, NULL}};
static const luaL_Reg mat3_methods[] = {{"T", mat3_T},           {"det", mat3_det},   {"trace", mat3_trace},
                                        {"norm", mat3_norm},     {"inv", mat3_inv},   {"totable", mat3_totable},
                                        {"row", mat3_row},       {"col", mat3_col},   {"copy", mat3_copy},
                                        {NULL, NULL}};

/* __lf_fields(v): the names v.name / v:name accepts (REPL completion): the upvalue, a string of
 * space-separated field names, then the methods. */
static int value_fields(lua_State *L)
{
    const char *fields = lua_tostring(L, lua_upvalueindex(1));
    lua_Integer n = 0;
    lua_newtable(L);
    while (*fields) {
        size_t len = strcspn(fields, " ");
        lua_pushlstring(L, fields, len);
        lua_rawseti(L, -2, ++n);
        fields += len + (fields[len] == ' ');
    }
    if (luaL_getmetafield(L, 1, "methods") == LUA_TTABLE) {
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            lua_pop(L, 1);
            lua_pushvalue(L, -1);
            lua_rawseti(L, -4, ++n);
        }
        lua_pop(L, 1);
    }
    return 1;
}

static void new_metatable(lua_State *L, const char *name, lua_CFunction index, lua_CFunction newindex,
                          lua_CFunction tostring, const luaL_Reg *methods, const char *fields)
{
    luaL_newmetatable(L, name);
    const luaL_Reg meta[] = {{"__add", l_add}, {"__sub", l_sub}, {"__mul", l_mul},       {"__div", l_div},
                             {"__unm", l_unm}, {"__eq", l_eq},   {"__len", vec_len},     {"__index", index},
                             {"__tostring", tostring}, {NULL, NULL}};
    luaL_setfuncs(L, meta, 0);
    if (newindex) {
        lua_pushcfunction(L, newindex);
        lua_setfield(L, -2, "__newindex");
    }
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "methods"); /* used by __index and by REPL completion */
    lua_pushstring(L, fields);
    lua_pushcclosure(L, value_fields, 1);
    lua_setfield(L, -2, "__lf_fields");
    lua_pop(L, 1);
}

void lfb_open_values(lua_State *L)
{
    new_metatable(L, LFB_VEC3, vec3_index, vec3_newindex, vec3_tostring, vec3_methods, "x y z");
    new_metatable(L, LFB_MAT3, mat3_index, mat3_newindex, mat3_tostring, mat3_methods, "");
    lua_pushcfunction(L, l_vec3);
    lua_setfield(L, -2, "vec3");
    lua_pushcfunction(L, l_mat3);
    lua_setfield(L, -2, "mat3");
}
