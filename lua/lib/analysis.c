/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — analysis in C for scripts/lieflow/analysis.lua and the experiments:
 *   core.fit_linear(xs, ys)  -> slope, intercept, slope_stderr, resid_std   (core/analysis/analysis.h, GSL;
 *                               slope_stderr is nil for 2 points, where it is undefined)
 *   core.exact.free_body(J, omega0, t [, R0]) -> omega, R  (core/solve/exact.h)
 *   core.lognorm(A [, G]) -> mu       the logarithmic norm of A in the norm sqrt(x^T G x)
 *                                     (core/analysis/lognorm.h); A, G: n x n as rows, or mat3
 *   core.ts2_sasaki(y0, y1) -> d, iterations, residual   the Sasaki distance on TS^2 (shooting)
 *   core.ts2_sasaki_bound(y0, y1) -> d                   its upper bound (ts2.h)
 *   core.ts2_dist(y0, y1) -> d                           the ts2 factor's product metric
 * The contractivity tools are Tumiotto, Cokaj, Celledoni, Owren & Arnold's; points of TS^2 are
 * {q = vec3, omega = vec3} (or {q, omega}). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "analysis/analysis.h"
#include "solve/exact.h"
#include "shared/bind.h"
#include "lib/open.h"

/* At most this many numbers in an array argument (2^28 doubles = 2 GiB of scratch). */
#define MAX_ARRAY ((lua_Integer)1 << 28)

/* Read the array at idx (a table of n >= 0 numbers) into a userdata buffer left on the stack.
 * Read raw: the length is the table's own border (lua_rawlen) and the elements its own
 * (lua_rawgeti), so a __len or __index metamethod can neither lie about the size of the buffer
 * nor run (and close or collect things) while we read. */
static double *read_array(lua_State *L, int idx, const char *fn, const char *argname, lua_Integer *n)
{
    if (lua_type(L, idx) != LUA_TTABLE)
        luaL_error(L, "%s: argument '%s' must be an array of numbers, got %s", fn, argname, lfb_typename(L, idx));
    size_t len = lua_rawlen(L, idx);
    if (len > (size_t)MAX_ARRAY)
        luaL_error(L, "%s: argument '%s' has %I elements, more than the %I this function takes", fn, argname,
                   (lua_Integer)len, MAX_ARRAY);
    *n = (lua_Integer)len;
    double *a = lua_newuserdatauv(L, (len > 0 ? len : 1) * sizeof(double), 0);
    for (lua_Integer i = 1; i <= *n; i++) {
        int ok;
        lua_rawgeti(L, idx, i);
        double v = lua_tonumberx(L, -1, &ok);
        if (!ok) luaL_error(L, "%s: %s[%I] must be a number, got %s", fn, argname, i, lfb_typename(L, -1));
        if (!isfinite(v)) luaL_error(L, "%s: %s[%I] is not finite (%f)", fn, argname, i, v);
        a[i - 1] = v;
        lua_pop(L, 1);
    }
    return a;
}

/* core.fit_linear(xs, ys) -> slope, intercept, slope_stderr, resid_std (least squares). */
static int l_fit_linear(lua_State *L)
{
    const char *fn = "fit_linear";
    lua_Integer nx, ny;
    lua_settop(L, 2); /* the scratch userdata of xs must not take the place of a missing ys */
    double *x = read_array(L, 1, fn, "xs", &nx);
    double *y = read_array(L, 2, fn, "ys", &ny);
    if (nx != ny) return luaL_error(L, "%s: xs and ys differ in length (%I and %I)", fn, nx, ny);
    if (nx < 2) return luaL_error(L, "%s: at least 2 points needed, got %I", fn, nx);
    double slope, icpt, se, rs;
    int distinct = 0;
    for (lua_Integer i = 1; i < nx && !distinct; i++) distinct = x[i] != x[0];
    if (!distinct) return luaL_error(L, "%s: all %I x values are equal (%f): slope undefined", fn, nx, x[0]);
    int st = lf_fit_linear(x, y, (size_t)nx, &slope, &icpt, &se, &rs);
    if (st == LF_EDOMAIN)
        return luaL_error(L, "%s: the fitted line overflows (its slope or intercept exceeds %f)", fn, DBL_MAX);
    if (st == LF_ENOMEM) return luaL_error(L, "%s: not enough memory", fn);
    if (st != LF_OK) return luaL_error(L, "%s: invalid input (%s)", fn, lf_status_name(st));
    lua_pushnumber(L, slope);
    lua_pushnumber(L, icpt);
    if (nx > 2) lua_pushnumber(L, se);
    else lua_pushnil(L); /* undefined with 2 points (the C API's NaN): absent, not a NaN */
    lua_pushnumber(L, rs);
    return 4;
}

/* ---------------------------------------------------------------- closed-form solutions */
/* exact.free_body(J, omega0, t [, R0]) -> omega (vec3), R (mat3): the exact torque-free motion of the
 * body with principal moments J (vec3 or table, all > 0) from omega(0) = omega0 and R(0) = R0 (body to
 * space, a rotation; default I): body angular velocity and attitude at time t (any finite t).
 * Jacobi elliptic functions and Carlson's R_J from GSL (core/solve/exact.h). */
static int exact_free_body(lua_State *L)
{
    double J[3], w0[3], w[3], R0[9], R[9];
    lf_error e;
    lfb_tovec3(L, 1, J, "argument #1 'J' to 'lf.exact.free_body'");
    lfb_tovec3(L, 2, w0, "argument #2 'omega0' to 'lf.exact.free_body'");
    double t = lfb_checkfinite(L, 3, "argument #3 't' to 'lf.exact.free_body'");
    int has_R0 = !lua_isnoneornil(L, 4);
    if (has_R0) lfb_torotation(L, 4, R0, "argument #4 'R0' to 'lf.exact.free_body'");
    if (lf_exact_free_body_flow(J, has_R0 ? R0 : NULL, w0, t, R, w, &e) != LF_OK) return lfb_error(L, &e);
    lfb_pushvec3(L, w);
    lfb_pushmat3(L, R);
    return 2;
}

/* ---------------------------------------------------------------- contractivity (TS^2, logarithmic norms) */
/* an n x n matrix from a mat3 or a table of n rows of n numbers; n from the value, or checked
 * against *n when *n > 0. Left on the stack as a userdata buffer. */
static double *read_square(lua_State *L, int idx, int *n, const char *what)
{
    idx = lua_absindex(L, idx);
    if (lfb_testmat3(L, idx)) {
        if (*n > 0 && *n != 3) luaL_error(L, "%s: a %dx%d matrix expected, got a mat3", what, *n, *n);
        *n = 3;
        double *M = lua_newuserdatauv(L, 9 * sizeof(double), 0);
        lfb_tomat3(L, idx, M, what);
        return M;
    }
    if (lua_type(L, idx) != LUA_TTABLE) luaL_error(L, "%s: a square matrix (rows of numbers) expected, got %s", what, lfb_typename(L, idx));
    int rows = (int)lua_rawlen(L, idx);
    if (rows < 1 || rows > 4096 || (*n > 0 && rows != *n))
        luaL_error(L, "%s: %d rows, expected %s", what, rows, *n > 0 ? "the size of A" : "1 to 4096");
    *n = rows;
    double *M = lua_newuserdatauv(L, (size_t)rows * rows * sizeof(double), 0);
    for (int i = 0; i < rows; i++) {
        lua_rawgeti(L, idx, i + 1);
        if (lua_type(L, -1) != LUA_TTABLE && !lfb_testvec3(L, -1))
            luaL_error(L, "%s: row %d is %s, expected %d numbers", what, i + 1, lfb_typename(L, -1), rows);
        for (int j = 0; j < rows; j++) {
            char w[160];
            snprintf(w, sizeof w, "%s[%d][%d]", what, i + 1, j + 1);
            lua_geti(L, -1, j + 1);
            M[i * rows + j] = lfb_checkfinite(L, -1, w);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    return M;
}

static int l_lognorm(lua_State *L)
{
    lua_settop(L, 2);
    int n = 0;
    double *A = read_square(L, 1, &n, "lf.lognorm: A");
    double *G = lua_isnil(L, 2) ? NULL : read_square(L, 2, &n, "lf.lognorm: G");
    double mu;
    lf_error e;
    if (lf_lognorm(n, A, G, &mu, &e) != LF_OK) return lfb_error(L, &e);
    lua_pushnumber(L, mu);
    return 1;
}

/* A point of TS^2 {q =, omega =}, checked on the manifold (|q| = 1, q . omega = 0 within 1e-9). */
static void read_ts2(lua_State *L, int idx, double y[6], const char *what)
{
    lf_factor_kind k = LF_TS2;
    lf_error e;
    lf_manifold *M = lf_manifold_new(1, &k, NULL, LF_RIGHT_TRIVIALIZED, &e);
    if (!M) lfb_error(L, &e);
    const lf_factor f = *lf_manifold_factor(M, 0);
    lf_manifold_free(M); /* freed before reading: a Lua error there must not leak it */
    lfb_read_factor(L, idx, &f, y, what);
    M = lf_manifold_new(1, &k, NULL, LF_RIGHT_TRIVIALIZED, &e);
    if (!M) lfb_error(L, &e);
    const int rc = lf_manifold_check(M, y, 1e-9, what, &e);
    lf_manifold_free(M);
    if (rc != LF_OK) lfb_error(L, &e);
}

static int l_sasaki(lua_State *L)
{
    double a[6], b[6], d;
    read_ts2(L, 1, a, "lf.ts2.sasaki: point 1");
    read_ts2(L, 2, b, "lf.ts2.sasaki: point 2");
    lf_ts2_sasaki_info info;
    lf_error e;
    if (lf_ts2_sasaki_dist(a, b, &d, &info, &e) != LF_OK) return lfb_error(L, &e);
    lua_pushnumber(L, d);
    lua_pushinteger(L, info.iters);
    lua_pushnumber(L, info.residual);
    return 3;
}

static int l_sasaki_bound(lua_State *L)
{
    double a[6], b[6], d;
    read_ts2(L, 1, a, "lf.ts2.sasaki_bound: point 1");
    read_ts2(L, 2, b, "lf.ts2.sasaki_bound: point 2");
    lf_error e;
    if (lf_ts2_sasaki_bound(a, b, &d, &e) != LF_OK) return lfb_error(L, &e);
    lua_pushnumber(L, d);
    return 1;
}

static int l_ts2_dist(lua_State *L)
{
    double a[6], b[6];
    read_ts2(L, 1, a, "lf.ts2.dist: point 1");
    read_ts2(L, 2, b, "lf.ts2.dist: point 2");
    lua_pushnumber(L, lf_ts2_dist(a, b));
    return 1;
}

void lfb_open_analysis(lua_State *L)
{
    const luaL_Reg fns[] = {{"fit_linear", l_fit_linear},
                            {"lognorm", l_lognorm},
                            {"ts2_sasaki", l_sasaki},
                            {"ts2_sasaki_bound", l_sasaki_bound},
                            {"ts2_dist", l_ts2_dist},
                            {NULL, NULL}};
    luaL_setfuncs(L, fns, 0);
    static const luaL_Reg exact[] = {{"free_body", exact_free_body}, {NULL, NULL}};
    luaL_newlib(L, exact);
    lua_setfield(L, -2, "exact");
}
