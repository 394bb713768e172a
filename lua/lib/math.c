/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — lf.math and the traced versions of the lf.so3 / lf.s2 / lf.quat maps and of
 * the lf.vec3 / lf.mat3 constructors (core/graph/graph_lie.h): what a traced value meets besides
 * arithmetic (shared/trace.c). lf.math holds functions that take numbers and traced values (the standard
 * function for numbers), lf.math.select and the conditions lt/le/gt/ge/eq/ne for branch-free code;
 * the maps are entries of the dispatch table the C maps hand traced arguments to (LFB_DUAL). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/open.h"
#include "shared/trace_internal.h"

/* ---------------------------------------------------------------- constructors (the dispatch of lf.vec3 / lf.mat3) */
static int d_vec3(lua_State *L)
{
    int n = lua_gettop(L);
    int tidx = lfb_tr_find(L, n), r[3];
    if (n >= 3) {
        for (int i = 0; i < 3; i++) lfb_tr_args(L, tidx, i + 1, 1, r + i, "lf.vec3");
    } else
        lfb_tr_args(L, tidx, 1, 3, r, "lf.vec3");
    return lfb_tr_result(L, tidx, 3, r);
}

static int d_mat3(lua_State *L)
{
    lua_settop(L, 1);
    int tidx = lfb_tr_find(L, 1), r[9];
    lfb_tr_args(L, tidx, 1, 9, r, "lf.mat3");
    return lfb_tr_result(L, tidx, 9, r);
}

/* ---------------------------------------------------------------- maps */
/* What the C map requires of an argument: checked at the point in a point trace, with the C
 * function's message (a compiled model's arguments are the system's state, on its manifold). */
enum { ANY = 0, ROTATION = 1, UNIT = 2, UNIT_QUAT = 3 };

static void check_point(lua_State *L, int tidx, int argn, const int *ids, int n, int what, const char *fn)
{
    lfb_trace *t = lfb_tr_at(L, tidx);
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
    const double nq = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3]);
    if (what == UNIT_QUAT && !(fabs(nq - 1) <= 1e-9)) {
        char num[32];
        snprintf(num, sizeof num, "%.17g", nq);
        luaL_error(L, "%s: unit quaternion expected, |q| = %s", w, num);
    }
}

static void arg_checked(lua_State *L, int tidx, int i, int n, int *ids, int what, const char *fn)
{
    lfb_tr_args(L, tidx, i, n, ids, fn);
    check_point(L, tidx, i, ids, n, what, fn);
}

typedef void (*map_vv)(lf_graph *, const int *, int *); /* vec/mat -> vec/mat */

static int map1(lua_State *L, int nin, int nout, map_vv f, int what, const char *fn)
{
    lua_settop(L, 1);
    int tidx = lfb_tr_find(L, 1), a[9], r[9];
    arg_checked(L, tidx, 1, nin, a, what, fn);
    f(lfb_tr_graph(L, tidx), a, r);
    return lfb_tr_result(L, tidx, nout, r);
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
    int tidx = lfb_tr_find(L, 2), R[9], x[3], r[3];
    arg_checked(L, tidx, 1, 9, R, ROTATION, "so3.Ad");
    lfb_tr_args(L, tidx, 2, 3, x, "so3.Ad");
    lf_gm3_apply(lfb_tr_graph(L, tidx), R, x, r);
    return lfb_tr_result(L, tidx, 3, r);
}

static int pair_scalar(lua_State *L, int n, int (*f)(lf_graph *, const int *, const int *), const char *fn, int opt_identity)
{
    lua_settop(L, 2);
    const int what = n == 9 ? ROTATION : UNIT;
    int tidx = lfb_tr_find(L, 2), a[9], b[9];
    arg_checked(L, tidx, 1, n, a, what, fn);
    if (opt_identity && lua_isnil(L, 2)) lf_gm3_identity(lfb_tr_graph(L, tidx), b);
    else arg_checked(L, tidx, 2, n, b, what, fn);
    int r = f(lfb_tr_graph(L, tidx), a, b);
    return lfb_tr_result(L, tidx, 1, &r);
}
static int d_so3_dist(lua_State *L) { return pair_scalar(L, 9, lf_gso3_dist, "so3.dist", 0); }
static int d_so3_angle(lua_State *L) { return pair_scalar(L, 9, lf_gso3_angle, "so3.angle", 1); }
static int d_s2_dist(lua_State *L) { return pair_scalar(L, 3, lf_gs2_dist, "s2.dist", 0); }

static int d_so3_orth_error(lua_State *L)
{
    lua_settop(L, 1);
    int tidx = lfb_tr_find(L, 1), a[9];
    lfb_tr_args(L, tidx, 1, 9, a, "so3.orth_error");
    int r = lf_gso3_orth_error(lfb_tr_graph(L, tidx), a);
    return lfb_tr_result(L, tidx, 1, &r);
}

typedef void (*map_pair)(lf_graph *, const int *, const int *, int *);
/* s2 maps: x (argument 1) a unit vector, and y (argument 2) too when unit2 */
static int pair_vec(lua_State *L, int na, int nb, int nout, map_pair f, int unit2, const char *fn)
{
    lua_settop(L, 2);
    int tidx = lfb_tr_find(L, 2), a[9], b[9], r[9];
    arg_checked(L, tidx, 1, na, a, UNIT, fn);
    arg_checked(L, tidx, 2, nb, b, unit2 ? UNIT : ANY, fn);
    f(lfb_tr_graph(L, tidx), a, b, r);
    return lfb_tr_result(L, tidx, nout, r);
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
    int tidx = lfb_tr_find(L, 2), p[4], q[4], r[4];
    quat_arg(L, tidx, 1, p, "quat.mul");
    quat_arg(L, tidx, 2, q, "quat.mul");
    lf_gquat_mul(lfb_tr_graph(L, tidx), p, q, r);
    push_quat(L, tidx, r);
    return 1;
}

static int d_quat_conj(lua_State *L)
{
    lua_settop(L, 1);
    int tidx = lfb_tr_find(L, 1), q[4], r[4];
    quat_arg(L, tidx, 1, q, "quat.conj");
    lf_gquat_conj(lfb_tr_graph(L, tidx), q, r);
    push_quat(L, tidx, r);
    return 1;
}

static int d_quat_to_matrix(lua_State *L)
{
    lua_settop(L, 1);
    int tidx = lfb_tr_find(L, 1), q[4], R[9];
    quat_arg(L, tidx, 1, q, "quat.to_matrix");
    lf_gquat_to_matrix(lfb_tr_graph(L, tidx), q, R);
    return lfb_tr_result(L, tidx, 9, R);
}

static int d_quat_from_matrix(lua_State *L)
{
    lua_settop(L, 1);
    int tidx = lfb_tr_find(L, 1), R[9], q[4];
    lfb_tr_args(L, tidx, 1, 9, R, "quat.from_matrix");
    lf_gquat_from_matrix(lfb_tr_graph(L, tidx), R, q);
    push_quat(L, tidx, q);
    return 1;
}

static int d_quat_exp(lua_State *L)
{
    lua_settop(L, 1);
    int tidx = lfb_tr_find(L, 1), v[3], q[4];
    lfb_tr_args(L, tidx, 1, 3, v, "quat.exp");
    lf_gquat_exp(lfb_tr_graph(L, tidx), v, q);
    push_quat(L, tidx, q);
    return 1;
}

static int d_quat_log(lua_State *L)
{
    lua_settop(L, 1);
    int tidx = lfb_tr_find(L, 1), q[4], v[3];
    quat_arg(L, tidx, 1, q, "quat.log");
    check_point(L, tidx, 1, q, 4, UNIT_QUAT, "quat.log");
    lf_gquat_log(lfb_tr_graph(L, tidx), q, v);
    return lfb_tr_result(L, tidx, 3, v);
}

/* Maps that have no traced version: a clear refusal. */
static int d_refuse(lua_State *L)
{
    /* the position of the Lua code that called the map (level 1 is the C map handing over to us) */
    lua_Debug ar;
    int found = 0;
    for (int level = 1; !found && lua_getstack(L, level, &ar); level++) {
        lua_getinfo(L, "Sl", &ar);
        if ((found = ar.currentline > 0)) lua_pushfstring(L, "%s:%d: ", ar.short_src, ar.currentline);
    }
    if (!found) lua_pushliteral(L, "");
    return luaL_error(L, "%s%s of a traced value: not supported (it is not differentiable or has no closed form); "
                         "use compile = false", lua_tostring(L, -1), lua_tostring(L, lua_upvalueindex(1)));
}

static const luaL_Reg maps[] = {
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
        if (lfb_tr_value(L, i)) return 1;
    return 0;
}

static int math1(lua_State *L, int op, const char *fn)
{
    if (!any_traced(L)) return std_math(L);
    lua_settop(L, 1);
    int tidx = lfb_tr_find(L, 1), a;
    lfb_tr_args(L, tidx, 1, 1, &a, fn);
    int r = lf_g1(lfb_tr_graph(L, tidx), op, a);
    return lfb_tr_result(L, tidx, 1, &r);
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
    int tidx = lfb_tr_find(L, n), a, b;
    lf_graph *g = lfb_tr_graph(L, tidx);
    lfb_tr_args(L, tidx, 1, 1, &a, "math.log");
    int r = lf_g1(g, LF_G_LOG, a);
    if (n == 2) {
        lfb_tr_args(L, tidx, 2, 1, &b, "math.log");
        r = lf_g2(g, LF_G_DIV, r, lf_g1(g, LF_G_LOG, b));
    }
    return lfb_tr_result(L, tidx, 1, &r);
}

static int mt_atan(lua_State *L)
{
    if (!any_traced(L)) return std_math(L);
    int two = lua_gettop(L) >= 2 && !lua_isnil(L, 2);
    lua_settop(L, two ? 2 : 1);
    int tidx = lfb_tr_find(L, two ? 2 : 1), a, b;
    lf_graph *g = lfb_tr_graph(L, tidx);
    lfb_tr_args(L, tidx, 1, 1, &a, "math.atan");
    int r;
    if (two) {
        lfb_tr_args(L, tidx, 2, 1, &b, "math.atan");
        r = lf_g2(g, LF_G_ATAN2, a, b);
    } else
        r = lf_g1(g, LF_G_ATAN, a);
    return lfb_tr_result(L, tidx, 1, &r);
}

static int mt_atan2(lua_State *L)
{
    lua_settop(L, 2);
    if (!any_traced(L)) {
        lua_pushnumber(L, atan2(luaL_checknumber(L, 1), luaL_checknumber(L, 2)));
        return 1;
    }
    int tidx = lfb_tr_find(L, 2), a, b;
    lfb_tr_args(L, tidx, 1, 1, &a, "math.atan2");
    lfb_tr_args(L, tidx, 2, 1, &b, "math.atan2");
    int r = lf_g2(lfb_tr_graph(L, tidx), LF_G_ATAN2, a, b);
    return lfb_tr_result(L, tidx, 1, &r);
}

static int mt_pow(lua_State *L)
{
    lua_settop(L, 2);
    if (!any_traced(L)) {
        lua_pushnumber(L, pow(luaL_checknumber(L, 1), luaL_checknumber(L, 2)));
        return 1;
    }
    return lfb_tr_pow(L);
}

/* min / max over any number of arguments with Lua's rule (the first of equal ones) */
static int minmax(lua_State *L, int max)
{
    if (!any_traced(L)) return std_math(L);
    int n = lua_gettop(L);
    int tidx = lfb_tr_find(L, n), m;
    lf_graph *g = lfb_tr_graph(L, tidx);
    lfb_tr_args(L, tidx, 1, 1, &m, max ? "math.max" : "math.min");
    for (int i = 2; i <= n; i++) {
        int x;
        lfb_tr_args(L, tidx, i, 1, &x, max ? "math.max" : "math.min");
        m = max ? lf_graph_max(g, m, x) : lf_graph_min(g, m, x);
    }
    return lfb_tr_result(L, tidx, 1, &m);
}
static int mt_min(lua_State *L) { return minmax(L, 0); }
static int mt_max(lua_State *L) { return minmax(L, 1); }

/* floor, ceil, fmod, modf of a traced value: a point trace gives the value (a constant); a strict
 * trace refuses, naming the function */
static int piecewise(lua_State *L)
{
    if (!any_traced(L)) return std_math(L);
    const char *name = lua_tostring(L, lua_upvalueindex(2));
    int tidx = lfb_tr_find(L, lua_gettop(L));
    lfb_trace *t = lfb_tr_at(L, tidx);
    if (t->mode == LFB_TRACE_STRICT)
        return luaL_error(L, "math.%s of a state-dependent value cannot be compiled (it is piecewise constant); "
                             "use lf.math.select with a comparison, or compile = false", name);
    /* the function of the values, as a constant */
    int n = tidx - 1;
    lua_pushvalue(L, lua_upvalueindex(1));
    for (int i = 1; i <= n; i++) {
        lfb_traced *v = lfb_tr_value(L, i);
        if (v && v->kind == 1) lua_pushnumber(L, lf_graph_value(t->g, v->id[0]));
        else lua_pushvalue(L, i);
    }
    lua_call(L, n, 1);
    int c = lf_graph_const(t->g, luaL_checknumber(L, -1));
    return lfb_tr_result(L, tidx, 1, &c);
}

/* lf.math.lt/le/gt/ge/eq/ne(a, b): a boolean for numbers, a traced condition (1 or 0) for lfb_traced
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
    int tidx = lfb_tr_find(L, 2), a, b;
    lfb_tr_args(L, tidx, 1, 1, &a, fn);
    lfb_tr_args(L, tidx, 2, 1, &b, fn);
    int r = swap ? lf_g2(lfb_tr_graph(L, tidx), op, b, a) : lf_g2(lfb_tr_graph(L, tidx), op, a, b);
    return lfb_tr_result(L, tidx, 1, &r);
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
    int tidx = lfb_tr_find(L, 3), c;
    lf_graph *g = lfb_tr_graph(L, tidx);
    if (lua_type(L, 1) == LUA_TBOOLEAN) c = lf_graph_const(g, lua_toboolean(L, 1));
    else lfb_tr_args(L, tidx, 1, 1, &c, "lf.math.select");
    lfb_opnd a, b;
    lfb_tr_opnd(L, tidx, 2, &a, "lf.math.select");
    lfb_tr_opnd(L, tidx, 3, &b, "lf.math.select");
    if (a.kind != b.kind)
        return luaL_error(L, "lf.math.select: both values must be of the same kind (got %s and %s)", lfb_typename(L, 2),
                          lfb_typename(L, 3));
    int r[9];
    for (int i = 0; i < a.kind; i++) r[i] = lf_gselect(g, c, a.id[i], b.id[i]);
    return lfb_tr_result(L, tidx, a.kind, r);
}

static const luaL_Reg math_funcs[] = {
    {"sqrt", mt_sqrt}, {"exp", mt_exp}, {"log", mt_log}, {"sin", mt_sin}, {"cos", mt_cos}, {"tan", mt_tan},
    {"asin", mt_asin}, {"acos", mt_acos}, {"atan", mt_atan}, {"abs", mt_abs}, {"min", mt_min}, {"max", mt_max},
    {NULL, NULL}};
static const luaL_Reg math_own[] = {{"atan2", mt_atan2}, {"pow", mt_pow}, {"select", mt_select}, {"lt", mt_lt},
                                    {"le", mt_le}, {"gt", mt_gt}, {"ge", mt_ge}, {"eq", mt_eq}, {"ne", mt_ne},
                                    {NULL, NULL}};
static const char *const math_piecewise[] = {"floor", "ceil", "fmod", "modf", NULL};

void lfb_open_math(lua_State *L)
{
    const int mod = lua_gettop(L);
    /* the maps and constructors: entries of the dispatch table of traced values */
    luaL_getmetatable(L, LFB_TRACED);
    lua_getfield(L, -1, "__lf_dual");
    luaL_setfuncs(L, maps, 0);
    for (int i = 0; refused[i]; i++) {
        lua_pushstring(L, refused[i]);
        lua_pushcclosure(L, d_refuse, 1);
        lua_setfield(L, -2, refused[i]);
    }
    lua_pop(L, 2);
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
