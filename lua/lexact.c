/* lieflow Lua binding — lf.exact: closed-form solutions (core/solve/exact.h). */
#include "exact.h"
#include "lbind.h"

void lfb_open_exact(lua_State *L); /* exact table (into the module table at -1); called from lcore.c */

/* exact.free_body(J, omega0, t) -> vec3: body angular velocity at time t of the torque-free body with
 * principal moments J (vec3 or table, all > 0) from omega0 (Jacobi elliptic functions, GSL). */
static int exact_free_body(lua_State *L)
{
    double J[3], w0[3], w[3];
    lf_error e;
    lfb_tovec3(L, 1, J, "argument #1 'J' to 'lf.exact.free_body'");
    lfb_tovec3(L, 2, w0, "argument #2 'omega0' to 'lf.exact.free_body'");
    double t = lfb_checkfinite(L, 3, "argument #3 't' to 'lf.exact.free_body'");
    if (lf_exact_free_body(J, w0, t, w, &e) != LF_OK) return lfb_error(L, &e);
    lfb_pushvec3(L, w);
    return 1;
}

void lfb_open_exact(lua_State *L)
{
    static const luaL_Reg fns[] = {{"free_body", exact_free_body}, {NULL, NULL}};
    luaL_newlib(L, fns);
    lua_setfield(L, -2, "exact");
}
