/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — Lua binding entry point, for programs that host their own Lua 5.4 state. */
#ifndef LIEFLOW_LUA_H
#define LIEFLOW_LUA_H

#include <lua.h>

/* Open the C module "lieflow.core" and push its table (use with luaL_requiref or package.preload). */
int luaopen_lieflow_core(lua_State *L);

#endif
