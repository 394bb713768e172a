/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — lf.so3, lf.s2, lf.quat: thin wrappers over core/lie/so3.h, s2.h, quat.h. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "shared/bind.h"
#include "lib/open.h"

static void argname(char *buf, size_t n, int i, const char *fn) { snprintf(buf, n, "argument #%d to '%s'", i, fn); }

static void vecarg(lua_State *L, int i, double v[3], const char *fn)
{
    char w[96];
    argname(w, sizeof w, i, fn);
    lfb_tovec3(L, i, v, w);
}
static void matarg(lua_State *L, int i, double M[9], const char *fn)
{
    char w[96];
    argname(w, sizeof w, i, fn);
    lfb_tomat3(L, i, M, w);
}
static void rotarg(lua_State *L, int i, double R[9], const char *fn)
{
    char w[96];
    argname(w, sizeof w, i, fn);
    lfb_torotation(L, i, R, w);
}

/* A finite argument whose result overflows (|x| ~ 1e154 and beyond) is an error, not NaNs. */
static void check_result_arg(lua_State *L, const double *out, int n, const double *in, int argn, const char *fn)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(out[i])) {
            char msg[200];
            snprintf(msg, sizeof msg, "argument #%d to '%s' is too large (components %g, %g, %g): the result is not finite",
                     argn, fn, in[0], in[1], in[2]);
            luaL_error(L, "%s", msg);
        }
}
static void check_result(lua_State *L, const double *out, int n, const double *in, const char *fn)
{
    check_result_arg(L, out, n, in, 1, fn);
}

/* vec3 -> mat3 maps */
#define VEC_TO_MAT(fname, cfn, dual)        \
    static int fname(lua_State *L)          \
    {                                       \
        dual;                               \
        double x[3], M[9];                  \
        vecarg(L, 1, x, "so3." #cfn);       \
        lf_so3_##cfn(x, M);                 \
        check_result(L, M, 9, x, "so3." #cfn); \
        lfb_pushmat3(L, M);                 \
        return 1;                           \
    }
VEC_TO_MAT(so3_hat, hat, LFB_DUAL("so3.hat", 1))
VEC_TO_MAT(so3_exp, exp, LFB_DUAL("so3.exp", 1))
VEC_TO_MAT(so3_cay, cay, LFB_DUAL("so3.cay", 1))
VEC_TO_MAT(so3_dexp, dexp, LFB_DUAL("so3.dexp", 1))
VEC_TO_MAT(so3_dexpinv, dexpinv, LFB_DUAL("so3.dexpinv", 1))
VEC_TO_MAT(so3_dcay, dcay, LFB_DUAL("so3.dcay", 1))
VEC_TO_MAT(so3_dcayinv, dcayinv, LFB_DUAL("so3.dcayinv", 1))

static int so3_vee(lua_State *L)
{
    LFB_DUAL("so3.vee", 1);
    double W[9], w[3];
    matarg(L, 1, W, "so3.vee");
    lf_so3_vee(W, w);
    lfb_pushvec3(L, w);
    return 1;
}

static int so3_log(lua_State *L)
{
    LFB_DUAL("so3.log", 1);
    double R[9], x[3];
    rotarg(L, 1, R, "so3.log");
    lf_so3_log(R, x);
    lfb_pushvec3(L, x);
    return 1;
}

static int so3_cayinv(lua_State *L)
{
    LFB_DUAL("so3.cayinv", 1);
    double R[9], x[3];
    lf_error e;
    rotarg(L, 1, R, "so3.cayinv");
    if (lf_so3_cayinv(R, x, &e) != LF_OK) return lfb_error(L, &e);
    lfb_pushvec3(L, x);
    return 1;
}

static int so3_Ad(lua_State *L)
{
    LFB_DUAL("so3.Ad", 2);
    double R[9], A[9];
    rotarg(L, 1, R, "so3.Ad");
    lf_so3_Ad(R, A);
    if (lua_isnoneornil(L, 2)) {
        lfb_pushmat3(L, A);
        return 1;
    }
    double x[3], y[3]; /* Ad_R x */
    vecarg(L, 2, x, "so3.Ad");
    lf_m3_apply(A, x, y);
    check_result_arg(L, y, 3, x, 2, "so3.Ad");
    lfb_pushvec3(L, y);
    return 1;
}

static int so3_dist(lua_State *L)
{
    LFB_DUAL("so3.dist", 2);
    double A[9], B[9];
    rotarg(L, 1, A, "so3.dist");
    rotarg(L, 2, B, "so3.dist");
    lua_pushnumber(L, lf_so3_dist(A, B));
    return 1;
}

static int so3_angle(lua_State *L)
{
    LFB_DUAL("so3.angle", 2);
    double A[9], B[9];
    rotarg(L, 1, A, "so3.angle");
    if (lua_isnoneornil(L, 2)) lf_m3_identity(B);
    else rotarg(L, 2, B, "so3.angle");
    lua_pushnumber(L, lf_so3_angle(A, B));
    return 1;
}

static int so3_project(lua_State *L)
{
    LFB_DUAL("so3.project", 1);
    double M[9], R[9];
    lf_error e;
    matarg(L, 1, M, "so3.project");
    if (lf_so3_project(M, R, &e) != LF_OK) return lfb_error(L, &e);
    lfb_pushmat3(L, R);
    return 1;
}

static int so3_random(lua_State *L)
{
    lua_Integer seed = luaL_optinteger(L, 1, 0);
    luaL_argcheck(L, seed >= 0, 1, "seed must be a non-negative integer");
    double R[9];
    lf_error e;
    if (lf_so3_random((unsigned long)seed, R, &e) != LF_OK) return lfb_error(L, &e);
    lfb_pushmat3(L, R);
    return 1;
}

static int so3_orth_error(lua_State *L)
{
    LFB_DUAL("so3.orth_error", 1);
    double M[9];
    matarg(L, 1, M, "so3.orth_error");
    double e = lf_so3_orth_error(M);
    if (!isfinite(e)) {
        char num[32];
        snprintf(num, sizeof num, "%.3g", lf_m3_fnorm(M));
        return luaL_error(L, "so3.orth_error: ||M^T M - I|| overflows (||M|| = %s)", num);
    }
    lua_pushnumber(L, e);
    return 1;
}

/* so3._check(m1, ..., m9, what) -> nil, or the message the functions above raise for an argument
 * with these entries (row-major) that is not a rotation. The autodiff versions of so3.log, dist and
 * angle check their arguments' values with it, so that both refuse the same matrices with the same
 * words; they raise it at their caller's level. Internal: not documented, not fuzzed. */
static int so3_check_arg(lua_State *L)
{
    double R[9];
    for (int i = 0; i < 9; i++) R[i] = luaL_checknumber(L, i + 1);
    lf_error e;
    if (lf_so3_check(R, 1e-9, luaL_checkstring(L, 10), &e) == LF_OK) return 0;
    lua_pushstring(L, e.msg);
    return 1;
}

static int so3_is_rotation(lua_State *L)
{
    LFB_DUAL("so3.is_rotation", 2);
    double M[9];
    matarg(L, 1, M, "so3.is_rotation");
    double tol = luaL_optnumber(L, 2, 1e-9);
    lua_pushboolean(L, lf_so3_check(M, tol, "R", NULL) == LF_OK);
    return 1;
}

/* ---------------------------------------------------------------- S^2 */
static void unitarg(lua_State *L, int i, double p[3], const char *fn)
{
    vecarg(L, i, p, fn);
    double n = lf_v3_norm(p);
    if (fabs(n - 1) > 1e-9) {
        char num[32]; /* lua_pushfstring has no %.17g */
        snprintf(num, sizeof num, "%.17g", n);
        luaL_error(L, "argument #%d to '%s': unit vector expected, |p| = %s", i, fn, num);
    }
}

static int s2_dist(lua_State *L)
{
    LFB_DUAL("s2.dist", 2);
    double p[3], q[3];
    unitarg(L, 1, p, "s2.dist");
    unitarg(L, 2, q, "s2.dist");
    lua_pushnumber(L, lf_s2_dist(p, q));
    return 1;
}

static int s2_midpoint(lua_State *L)
{
    LFB_DUAL("s2.midpoint", 2);
    double p[3], q[3], m[3];
    lf_error e;
    unitarg(L, 1, p, "s2.midpoint");
    unitarg(L, 2, q, "s2.midpoint");
    if (lf_s2_midpoint(p, q, m, &e) != LF_OK) return lfb_error(L, &e);
    lfb_pushvec3(L, m);
    return 1;
}

static int s2_retract(lua_State *L)
{
    LFB_DUAL("s2.retract", 2);
    double x[3], v[3], y[3];
    lf_error e;
    unitarg(L, 1, x, "s2.retract");
    vecarg(L, 2, v, "s2.retract");
    if (lf_s2_retract(x, v, y, &e) != LF_OK) return lfb_error(L, &e);
    lfb_pushvec3(L, y);
    return 1;
}

static int s2_retract_inv(lua_State *L)
{
    LFB_DUAL("s2.retract_inv", 2);
    double x[3], y[3], v[3];
    lf_error e;
    unitarg(L, 1, x, "s2.retract_inv");
    unitarg(L, 2, y, "s2.retract_inv");
    if (lf_s2_retract_inv(x, y, v, &e) != LF_OK) return lfb_error(L, &e);
    lfb_pushvec3(L, v);
    return 1;
}

static int s2_tangent(lua_State *L)
{
    LFB_DUAL("s2.tangent", 2);
    double x[3], v[3], t[3];
    unitarg(L, 1, x, "s2.tangent");
    vecarg(L, 2, v, "s2.tangent");
    lf_s2_tangent(x, v, t);
    check_result_arg(L, t, 3, v, 2, "s2.tangent");
    lfb_pushvec3(L, t);
    return 1;
}

static int s2_exp(lua_State *L)
{
    LFB_DUAL("s2.exp", 2);
    double x[3], v[3], y[3];
    unitarg(L, 1, x, "s2.exp");
    vecarg(L, 2, v, "s2.exp");
    /* exp is defined for tangent vectors: another v would leave the sphere */
    double xv = lf_v3_dot(x, v), nv = lf_v3_norm(v);
    if (!(fabs(xv) <= 1e-9 * fmax(1.0, nv))) {
        char num[32];
        snprintf(num, sizeof num, "%.3g", xv);
        return luaL_error(L, "argument #2 to 's2.exp': tangent vector at x expected, x . v = %s (use s2.tangent(x, v))", num);
    }
    lf_s2_exp(x, v, y);
    check_result_arg(L, y, 3, v, 2, "s2.exp");
    lfb_pushvec3(L, y);
    return 1;
}

/* ---------------------------------------------------------------- quaternions, plain tables {w,x,y,z} */
/* A quaternion is a table of 4 numbers, read raw: neither __len nor __index runs (a metatable that
 * lies about the length or the elements cannot make us read something else). */
static void quatarg(lua_State *L, int i, double q[4], const char *fn)
{
    if (lua_type(L, i) != LUA_TTABLE)
        luaL_error(L, "argument #%d to '%s': quaternion {w, x, y, z} expected, got %s", i, fn, lfb_typename(L, i));
    if (lua_rawlen(L, i) != 4)
        luaL_error(L, "argument #%d to '%s': quaternion {w, x, y, z} expected, got a table of length %I", i, fn,
                   (lua_Integer)lua_rawlen(L, i));
    for (int k = 0; k < 4; k++) {
        lua_rawgeti(L, i, k + 1);
        char w[96];
        argname(w, sizeof w, i, fn);
        q[k] = lfb_checkfinite(L, -1, w);
        lua_pop(L, 1);
    }
}

static void pushquat(lua_State *L, const double q[4])
{
    lua_createtable(L, 4, 0);
    for (int k = 0; k < 4; k++) {
        lua_pushnumber(L, q[k]);
        lua_rawseti(L, -2, k + 1);
    }
}

/* Scale q by 2^-e (exact) so that its largest component is in [0.5, 1); returns e. */
static int quat_scale(double q[4])
{
    double m = 0;
    for (int k = 0; k < 4; k++) m = fmax(m, fabs(q[k]));
    int e = 0;
    if (m > 0) frexp(m, &e);
    for (int k = 0; k < 4; k++) q[k] = ldexp(q[k], -e);
    return e;
}

static int quat_mul(lua_State *L)
{
    LFB_DUAL("quat.mul", 2);
    double p[4], q[4], r[4];
    quatarg(L, 1, p, "quat.mul");
    quatarg(L, 2, q, "quat.mul");
    /* on scaled factors (no spurious overflow in the products: |p q| = |p| |q|), then scaled back */
    int e = quat_scale(p) + quat_scale(q);
    lf_quat_mul(p, q, r);
    for (int k = 0; k < 4; k++) {
        r[k] = ldexp(r[k], e);
        if (!isfinite(r[k]))
            return luaL_error(L, "quat.mul: the product overflows (component %d exceeds %f)", k + 1, DBL_MAX);
    }
    pushquat(L, r);
    return 1;
}
static int quat_conj(lua_State *L)
{
    LFB_DUAL("quat.conj", 1);
    double q[4], r[4];
    quatarg(L, 1, q, "quat.conj");
    lf_quat_conj(q, r);
    pushquat(L, r);
    return 1;
}
static int quat_to_matrix(lua_State *L)
{
    LFB_DUAL("quat.to_matrix", 1);
    double q[4], R[9];
    quatarg(L, 1, q, "quat.to_matrix");
    if (q[0] == 0 && q[1] == 0 && q[2] == 0 && q[3] == 0)
        return luaL_error(L, "quat.to_matrix: the zero quaternion is not a rotation");
    lf_quat_to_matrix(q, R);
    check_result(L, R, 9, q + 1, "quat.to_matrix");
    lfb_pushmat3(L, R);
    return 1;
}
static int quat_from_matrix(lua_State *L)
{
    LFB_DUAL("quat.from_matrix", 1);
    double R[9], q[4];
    rotarg(L, 1, R, "quat.from_matrix");
    lf_quat_from_matrix(R, q);
    pushquat(L, q);
    return 1;
}
static int quat_exp(lua_State *L)
{
    LFB_DUAL("quat.exp", 1);
    double v[3], q[4];
    vecarg(L, 1, v, "quat.exp");
    lf_quat_exp(v, q);
    check_result(L, q, 4, v, "quat.exp");
    pushquat(L, q);
    return 1;
}
static int quat_log(lua_State *L)
{
    LFB_DUAL("quat.log", 1);
    double q[4], v[3];
    quatarg(L, 1, q, "quat.log");
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (fabs(n - 1) > 1e-9) {
        char num[32]; /* lua_pushfstring has no %.17g */
        snprintf(num, sizeof num, "%.17g", n);
        return luaL_error(L, "argument #1 to 'quat.log': unit quaternion expected, |q| = %s", num);
    }
    lf_quat_log(q, v);
    lfb_pushvec3(L, v);
    return 1;
}

static const luaL_Reg so3_funcs[] = {
    {"hat", so3_hat},       {"vee", so3_vee},         {"exp", so3_exp},           {"log", so3_log},
    {"cay", so3_cay},       {"cayinv", so3_cayinv},   {"dexp", so3_dexp},         {"dexpinv", so3_dexpinv},
    {"dcay", so3_dcay},     {"dcayinv", so3_dcayinv}, {"Ad", so3_Ad},             {"dist", so3_dist},
    {"angle", so3_angle},   {"project", so3_project}, {"random", so3_random},     {"orth_error", so3_orth_error},
    {"is_rotation", so3_is_rotation}, {"_check", so3_check_arg}, {NULL, NULL}};
static const luaL_Reg s2_funcs[] = {{"dist", s2_dist},       {"midpoint", s2_midpoint}, {"retract", s2_retract},
                                    {"retract_inv", s2_retract_inv}, {"tangent", s2_tangent}, {"exp", s2_exp},
                                    {NULL, NULL}};
static const luaL_Reg quat_funcs[] = {{"mul", quat_mul},       {"conj", quat_conj}, {"to_matrix", quat_to_matrix},
                                      {"from_matrix", quat_from_matrix}, {"exp", quat_exp}, {"log", quat_log},
                                      {NULL, NULL}};

void lfb_open_maps(lua_State *L)
{
    luaL_newlib(L, so3_funcs);
    double I[9];
    lf_m3_identity(I);
    lfb_pushmat3(L, I);
    lua_setfield(L, -2, "I");
    lua_setfield(L, -2, "so3");
    luaL_newlib(L, s2_funcs);
    lua_setfield(L, -2, "s2");
    luaL_newlib(L, quat_funcs);
    lua_setfield(L, -2, "quat");
}
