/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — the one callback layer: every call from C into Lua (potentials, torques,
 * vector fields, energies, Jacobians) goes through lfb_call, which holds the function by registry
 * reference (no lookup by name per call), runs it under lua_pcall with a traceback, and turns any
 * Lua error into an lf_error status, so that no Lua error unwinds through C stepping code. */
#include <string.h>

#include "shared/bind.h"

volatile sig_atomic_t *lfb_cancel_flag(lua_State *L)
{
    volatile sig_atomic_t *flag = NULL;
    if (lua_getfield(L, LUA_REGISTRYINDEX, "lieflow.cancel") == LUA_TLIGHTUSERDATA) flag = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return flag;
}

static int traceback(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (!msg) msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    luaL_traceback(L, L, msg, 1);
    return 1;
}

int lfb_call(lua_State *L, int ref, int (*push)(lua_State *L, void *ud), void *ud, int nres, const char *what,
             lf_error *err)
{
    if (!lua_checkstack(L, 16)) return lf_error_set(err, LF_ENOMEM, "%s: Lua stack overflow", what);
    lua_pushcfunction(L, traceback);
    const int base = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
    int nargs = push ? push(L, ud) : 0;
    int st = lua_pcall(L, nargs, nres, base);
    if (st != LUA_OK) {
        volatile sig_atomic_t *cancel = lfb_cancel_flag(L);
        int rc;
        if (cancel && *cancel) rc = lf_error_set(err, LF_EINTR, "interrupted (in %s)", what);
        else {
            const char *msg = lua_tostring(L, -1);
            rc = lf_error_set(err, LF_ECALLBACK, "%s raised an error: %s", what, msg ? msg : "(no message)");
        }
        lua_settop(L, base - 1);
        return rc;
    }
    lua_remove(L, base); /* the handler; the results stay */
    return LF_OK;
}
