/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — luaopen_lieflow: the whole module `lieflow` from the library alone.
 *
 * A C program hosting its own Lua state gets what `require "lieflow"` gives in the lieflow
 * executable, with no file on disk and whatever LUA_PATH/LUA_CPATH are:
 *     luaL_requiref(L, "lieflow", luaopen_lieflow, 1);
 * The pure-Lua modules (scripts/lieflow/NAME.lua, compiled into the library as source: module/scripts.h)
 * go into package.preload as lieflow.NAME, and lieflow.core as luaopen_lieflow_core (a module the
 * host already put there is kept); then init.lua runs and its table is the module, also stored in
 * package.loaded["lieflow"] (lieflow.experiment and other modules require it by that name). */
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "module/lieflow_lua.h"
#include "module/scripts.h"

/* The preload loader of built-in module i (upvalue 1): its chunk, called with the module's name and
 * its chunk name, as a searcher's loader is. */
static int load_builtin(lua_State *L)
{
    int i = (int)lua_tointeger(L, lua_upvalueindex(1));
    if (luaL_loadbufferx(L, (const char *)lf_script_source[i], lf_script_size[i], lf_script_chunk[i], "t") != LUA_OK)
        return luaL_error(L, "error loading built-in module '%s':\n\t%s", lf_script_module[i], lua_tostring(L, -1));
    lua_pushstring(L, lf_script_module[i]);
    lua_pushstring(L, lf_script_chunk[i] + 1);
    lua_call(L, 2, 1);
    return 1;
}

/* preload[name] = f, unless the host put something there already */
static void preload_unless_set(lua_State *L, int preload, const char *name)
{
    if (lua_getfield(L, preload, name) == LUA_TNIL) {
        lua_pushvalue(L, -2);
        lua_setfield(L, preload, name);
    }
    lua_pop(L, 2); /* the old value and f */
}

int luaopen_lieflow(lua_State *L)
{
    int init = -1;
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    int preload = lua_gettop(L);
    lua_pushcfunction(L, luaopen_lieflow_core);
    preload_unless_set(L, preload, "lieflow.core");
    for (int i = 0; i < lf_script_count; i++) {
        if (strcmp(lf_script_module[i], "lieflow") == 0) {
            init = i;
            continue;
        }
        lua_pushinteger(L, i);
        lua_pushcclosure(L, load_builtin, 1);
        preload_unless_set(L, preload, lf_script_module[i]);
    }
    if (init < 0)
        return luaL_error(L, "luaopen_lieflow: lieflow's init.lua is not compiled in");
    lua_pushinteger(L, init);
    lua_pushcclosure(L, load_builtin, 1);
    lua_call(L, 0, 1); /* the module table */
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, "lieflow");
    lua_pop(L, 1);
    return 1;
}
