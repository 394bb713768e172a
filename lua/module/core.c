/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — luaopen_lieflow_core: the C part of the module `lieflow`. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/bind.h"
#include "module/lieflow_lua.h"
#include "lib/open.h"
#include "shared/trace.h"

/* core.binary: the file this code was loaded from (build/lua/lieflow/core.so, an installed
 * core.so, or an executable linking the binding such as build/lieflow), to find its sibling C
 * modules (lieflow.mpi) in a build tree; nil when unknown. */
static void push_binary_path(lua_State *L)
{
    Dl_info info;
    char exe[PATH_MAX];
    ssize_t n;
    int found = dladdr((void *)&luaopen_lieflow_core, &info) && info.dli_fname && info.dli_fname[0];
    if (found && info.dli_fname[0] == '/')
        lua_pushstring(L, info.dli_fname);
    else if (found && strchr(info.dli_fname, '/') && realpath(info.dli_fname, exe)) /* a relative path */
        lua_pushstring(L, exe);
    else if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) > 0) { /* in the executable itself */
        exe[n] = '\0';
        lua_pushstring(L, exe);
    } else
        lua_pushnil(L);
}

/* The libraries of the binding (lib/open.h), opened in this order after the object layer. */
static void (*const libraries[])(lua_State *L) = {
    lfb_open_maps,    lfb_open_potentials,  lfb_open_forcing,  lfb_open_rigid,    lfb_open_lie_ode, lfb_open_spheres,
    lfb_open_methods, lfb_open_integrators, lfb_open_workprec, lfb_open_analysis, lfb_open_os,      lfb_open_proc,
    lfb_open_math,    lfb_open_compile,     lfb_open_autodiff, lfb_open_hdf5,
};

int luaopen_lieflow_core(lua_State *L)
{
    lua_newtable(L);
    lfb_open_values(L);  /* the object layer: vec3, mat3; systems, potentials, methods; traced values */
    lfb_open_objects(L);
    lfb_open_trace(L);
    for (size_t i = 0; i < sizeof libraries / sizeof *libraries; i++) libraries[i](L);
    lua_pushstring(L, LIEFLOW_VERSION);
    lua_setfield(L, -2, "version");
    push_binary_path(L);
    lua_setfield(L, -2, "binary");
    return 1;
}
