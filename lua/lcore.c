/* lieflow Lua binding — luaopen_lieflow_core: the C part of the module `lieflow`. */
#include "lbind.h"
#include "lieflow_lua.h"

int luaopen_lieflow_core(lua_State *L)
{
    lua_newtable(L);
    lfb_open_values(L);
    lfb_open_maps(L);
    lfb_open_systems(L);
    lfb_open_lie_ode(L);
    lfb_open_integrators(L);
    lfb_open_analysis(L);
    lfb_open_exact(L);
    lfb_open_contract(L);
    lua_pushstring(L, LIEFLOW_VERSION);
    lua_setfield(L, -2, "version");
    /* the autodiff dispatch table, filled by scripts/lieflow/autodiff.lua */
    if (lua_getfield(L, LUA_REGISTRYINDEX, "lieflow.dual") != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, "lieflow.dual");
    }
    lua_setfield(L, -2, "dual");
    return 1;
}
