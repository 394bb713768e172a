/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the Lua binding's entry points, for programs that host their own Lua 5.4 state
 * (liblieflow_lua; pkg-config lieflow-lua). */
#ifndef LIEFLOW_LUA_H
#define LIEFLOW_LUA_H

#include "base/export.h"

LF_BEGIN_DECLS

#include <lua.h> /* inside extern "C" for C++: lua.h does not say extern "C" itself */

/* The whole module `lieflow` (what `require "lieflow"` gives: the C core and the pure-Lua layer, lf.run,
 * plots, ensembles, JSON, ..., all compiled into the library: no file on disk, no LUA_PATH needed):
 *     luaL_requiref(L, "lieflow", luaopen_lieflow, 1);   -- also sets the global lieflow
 * It registers the modules lieflow.core and lieflow.NAME in package.preload (a module already there
 * is kept), runs lieflow's init.lua and pushes the module table, which it also stores in
 * package.loaded["lieflow"]. Needs the package library (luaL_openlibs). */
int luaopen_lieflow(lua_State *L);

/* Only the C module "lieflow.core" (push its table; use with luaL_requiref or package.preload). */
int luaopen_lieflow_core(lua_State *L);

LF_END_DECLS

#endif
