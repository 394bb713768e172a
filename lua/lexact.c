/* lieflow Lua binding — lf.exact: closed-form solutions (core/solve/exact.h). */
#include "exact.h"
#include "lbind.h"

void lfb_open_exact(lua_State *L); /* exact table (into the module table at -1); called from lcore.c */

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

void lfb_open_exact(lua_State *L)
{
    static const luaL_Reg fns[] = {{"free_body", exact_free_body}, {NULL, NULL}};
    luaL_newlib(L, fns);
    lua_setfield(L, -2, "exact");
}
