/* lieflow Lua binding — contractivity tools (Tumiotto, Cokaj, Celledoni, Owren, Arnold):
 *   core.lognorm(A [, G]) -> mu       the logarithmic norm of A in the norm sqrt(x^T G x)
 *                                     (core/analysis/lognorm.h); A, G: n x n as rows, or mat3
 *   core.ts2_sasaki(y0, y1) -> d, iterations, residual   the Sasaki distance on TS^2 (shooting)
 *   core.ts2_sasaki_bound(y0, y1) -> d                   its upper bound (ts2.h)
 *   core.ts2_dist(y0, y1) -> d                           the ts2 factor's product metric
 * Points of TS^2 are {q = vec3, omega = vec3} (or {q, omega}). */
#include <math.h>
#include <string.h>

#include "lbind.h"

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

void lfb_open_contract(lua_State *L)
{
    const luaL_Reg fns[] = {{"lognorm", l_lognorm},
                            {"ts2_sasaki", l_sasaki},
                            {"ts2_sasaki_bound", l_sasaki_bound},
                            {"ts2_dist", l_ts2_dist},
                            {NULL, NULL}};
    luaL_setfuncs(L, fns, 0);
}
