/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the executable's module search (lua/exe/modules.c), for lua/exe/main.c. */
#ifndef LIEFLOW_MODULES_H
#define LIEFLOW_MODULES_H

#include <lua.h>

/* package.preload["lieflow.core"] = the statically linked binding; the built-in modules' searcher
 * second in package.searchers; lieflow's own installed directories appended to the paths. Call
 * after luaL_openlibs, before any code runs (LUA_INIT). */
void lf_setup_modules(lua_State *L);

#endif
