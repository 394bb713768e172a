/* lieflow Lua binding — holds: a system and a method kept alive for the rest of a C call.
 *
 * Objects of the binding can be finalized by hand (getmetatable(x).__gc(x)) by any Lua code a C
 * function runs: an argument's metamethod, a potential or right-hand side written in Lua. A C
 * function that uses a system or a method across such code takes a hold: a to-be-closed stack slot
 * (Lua 5.4 closes it when the function returns or raises) that retains both and releases them on
 * close. Their __gc then only marks them finalized (every later entry point refuses them), and the
 * last release frees the C side. Integrators keep their system and method the same way for their
 * whole life (lintegrator.c).
 *
 * A hold of a system alone is the system's own hold object, made once and kept as its uservalue
 * LFB_SYSTEM_UV_HOLD (system methods take one on every call: no allocation); nested calls put it in
 * several slots, each retaining once and releasing once. A hold with a method is a new object whose
 * uservalue is the method. */
#include "lbind.h"

#define LFB_HOLD "lf.hold"

typedef struct {
    lfb_system *s;
} lfb_hold_t;

static int hold_close(lua_State *L)
{
    lfb_hold_t *h = lua_touserdata(L, 1); /* never reachable from Lua code: always a hold */
    lfb_system_release(L, h->s);
    lua_getiuservalue(L, 1, 1); /* a method, or nil */
    lfb_method_release(L, -1);
    return 0;
}

static lfb_hold_t *new_hold(lua_State *L, lfb_system *s, int nuv)
{
    lfb_hold_t *h = lua_newuserdatauv(L, sizeof *h, nuv);
    h->s = s;
    if (luaL_newmetatable(L, LFB_HOLD)) {
        lua_pushcfunction(L, hold_close);
        lua_setfield(L, -2, "__close");
    }
    lua_setmetatable(L, -2);
    return h;
}

lfb_system *lfb_hold(lua_State *L, int sys_idx, int method_idx)
{
    sys_idx = lua_absindex(L, sys_idx);
    if (method_idx) method_idx = lua_absindex(L, method_idx);
    lfb_system *s = lfb_checksystem(L, sys_idx);
    if (!method_idx) {
        if (lua_getiuservalue(L, sys_idx, LFB_SYSTEM_UV_HOLD) != LUA_TUSERDATA) {
            lua_pop(L, 1);
            new_hold(L, s, 0);
            lua_pushvalue(L, -1);
            lua_setiuservalue(L, sys_idx, LFB_SYSTEM_UV_HOLD);
        }
    } else {
        new_hold(L, s, 1);
        lua_pushvalue(L, method_idx);
        lua_setiuservalue(L, -2, 1);
    }
    lua_toclose(L, -1);
    /* retained only once the slot will release them */
    lfb_system_retain(s);
    if (method_idx) lfb_method_retain(L, method_idx);
    return s;
}
