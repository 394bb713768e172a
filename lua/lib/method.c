/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — methods: the registry's metadata (lf.methods), methods made from a user
 * tableau (lf.rkmk) and compositions (lf.compose, lf.compose_schemes: core/method/compose.h). The
 * method userdata and its lifetime belong to the object layer (shared/object.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "shared/bind.h"
#include "lib/open.h"

/* core.methods() -> array of metadata tables, in registry order. */
static int l_methods(lua_State *L)
{
    int n = lf_method_count();
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lfb_push_method_info(L, lf_method_at(i), "C");
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* n numbers from the array at field k of table t */
static void read_coefficients(lua_State *L, int t, const char *k, int n, double *out)
{
    if (lua_getfield(L, t, k) != LUA_TTABLE)
        luaL_error(L, "lf.rkmk: field '%s' must be an array, got %s", k, lfb_typename(L, -1));
    const int idx = lua_gettop(L);
    int nested = lua_rawgeti(L, idx, 1) == LUA_TTABLE;
    lua_pop(L, 1);
    int s = n == 1 ? 1 : (int)lround(sqrt((double)n));
    int rows = (int)lua_rawlen(L, idx);
    if (nested) { /* A as rows */
        if (rows != s) luaL_error(L, "lf.rkmk: field '%s' has %d rows, expected %d", k, rows, s);
        for (int i = 0; i < s; i++) {
            lua_rawgeti(L, idx, i + 1);
            if (lua_type(L, -1) != LUA_TTABLE || (int)lua_rawlen(L, -1) != s)
                luaL_error(L, "lf.rkmk: row %d of '%s' must hold %d numbers", i + 1, k, s);
            for (int j = 0; j < s; j++) {
                lua_rawgeti(L, -1, j + 1);
                char w[64];
                snprintf(w, sizeof w, "lf.rkmk: %s[%d][%d]", k, i + 1, j + 1);
                out[i * s + j] = lfb_checkfinite(L, -1, w);
                lua_pop(L, 1);
            }
            lua_pop(L, 1);
        }
    } else {
        if (rows != n) luaL_error(L, "lf.rkmk: field '%s' has %d numbers, expected %d", k, rows, n);
        for (int i = 0; i < n; i++) {
            lua_rawgeti(L, idx, i + 1);
            char w[64];
            snprintf(w, sizeof w, "lf.rkmk: %s[%d]", k, i + 1);
            out[i] = lfb_checkfinite(L, -1, w);
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
}

/* core.rkmk{name=, A=, b=, c=, order=, symmetric=}: a method from a user tableau. */
static int l_rkmk(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    static const char *const keys[] = {"name", "A", "b", "c", "order", "symmetric", NULL};
    lfb_check_keys(L, 1, keys, "lf.rkmk", "field");
    if (lua_getfield(L, 1, "name") != LUA_TSTRING) return luaL_error(L, "lf.rkmk: field 'name' (string) is required");
    const char *name = lua_tostring(L, -1);
    if (lf_method_find(name)) return luaL_error(L, "lf.rkmk: '%s' is the name of a built-in method", name);
    if (lua_getfield(L, 1, "b") != LUA_TTABLE) return luaL_error(L, "lf.rkmk: field 'b' (array of weights) is required");
    int s = (int)lua_rawlen(L, -1);
    lua_pop(L, 1);
    if (s < 1 || s > 8) return luaL_error(L, "lf.rkmk: %d stages (length of b), expected 1 to 8", s);
    double A[64], b[8], c[8];
    read_coefficients(L, 1, "A", s * s, A);
    read_coefficients(L, 1, "b", s, b);
    read_coefficients(L, 1, "c", s, c);
    int order = 0;
    if (lua_getfield(L, 1, "order") != LUA_TNIL) {
        lua_Integer o = lua_tointeger(L, -1);
        if (!lua_isinteger(L, -1) || o < 1 || o > 20) return luaL_error(L, "lf.rkmk: 'order' must be an integer 1..20");
        order = (int)o;
    }
    lua_getfield(L, 1, "symmetric");
    int midpoint = lua_toboolean(L, -1);
    lf_error e;
    lf_method *m = lf_rkmk_method_new(name, s, A, b, c, order, midpoint, &e);
    if (!m) return lfb_error(L, &e);
    lfb_newmethod(L, m, 0);
    return 1;
}

/* ---------------------------------------------------------------- compositions (compose.h) */

/* core.compose(base, scheme): the composition of a symmetric C method (a name, or an lf.rkmk /
 * lf.compose method, kept alive by the composite) with a scheme of compose.h. */
static int l_compose(lua_State *L)
{
    const lf_method *base = lfb_checkmethod(L, 1, "lf.compose");
    const char *scheme = luaL_checkstring(L, 2);
    lf_error e;
    lf_method *m = lf_compose_method_new(base, scheme, &e);
    if (!m) return lfb_error(L, &e);
    lfb_newmethod(L, m, 1); /* the base must outlive the composite */
    return 1;
}

/* core.compose_schemes() -> {{name=, title=, reference=, order=, form = "symmetric" | "adjoint" | "rkn",
 *                              coefficients={...} [, processor={...}]}, ...} */
static int l_compose_schemes(lua_State *L)
{
    const int n = lf_compose_scheme_count();
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        const lf_compose_scheme *sc = lf_compose_scheme_at(i);
        lua_createtable(L, 0, 6);
        lua_pushstring(L, sc->name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, sc->title);
        lua_setfield(L, -2, "title");
        lua_pushstring(L, sc->reference);
        lua_setfield(L, -2, "reference");
        lua_pushinteger(L, sc->order);
        lua_setfield(L, -2, "order");
        static const char *const forms[] = {"symmetric", "adjoint", "", "rkn"};
        lua_pushstring(L, forms[sc->form]);
        lua_setfield(L, -2, "form");
        lua_createtable(L, sc->n, 0);
        for (int k = 0; k < sc->n; k++) {
            lua_pushnumber(L, sc->c[k]);
            lua_rawseti(L, -2, k + 1);
        }
        lua_setfield(L, -2, "coefficients");
        if (sc->np > 0) { /* a processed scheme: its processor, in the same form */
            lua_createtable(L, sc->np, 0);
            for (int k = 0; k < sc->np; k++) {
                lua_pushnumber(L, sc->p[k]);
                lua_rawseti(L, -2, k + 1);
            }
            lua_setfield(L, -2, "processor");
        }
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

void lfb_open_methods(lua_State *L)
{
    const luaL_Reg fns[] = {{"methods", l_methods},   {"rkmk", l_rkmk}, {"compose", l_compose},
                            {"compose_schemes", l_compose_schemes}, {NULL, NULL}};
    luaL_setfuncs(L, fns, 0);
}
