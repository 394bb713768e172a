/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — lf.forcing: the constructors of the built-in forcings of rigid bodies
 * (core/model/forcing.h), to give to lf.rigidbody / lf.bodies as `forcing =` (alone or in an array with
 * others and a Lua forcing: their sum acts):
 *   lf.forcing.damping{linear = c, angular = {a1, a2, a3} | a}   the force -c v, the body torque -a_k w_k
 *   lf.forcing.torque{torque = vec3, frame = "body" | "space"}   a constant torque
 *   lf.forcing.torque_table{t = {t1, ...}, torque = {tau1, ...}, frame = "body" | "space"}
 *                                                                 a torque linear between the times
 *                                                                 t1 < t2 < ..., constant outside
 * The objects (their lifetime: systems using one retain it) belong to the object layer (shared/object.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/bind.h"
#include "shared/forcing.h"
#include "lib/open.h"

/* lf.forcing.damping{linear =, angular =} */
static int l_damping(lua_State *L)
{
    lua_settop(L, 1);
    char desc[200];
    lf_forcing *f = lfb_read_damping(L, 1, "lf.forcing.damping", -1, desc, sizeof desc);
    lfb_newforcing(L, f, desc, NULL);
    return 1;
}

/* The field frame = "body" (default) | "space" of the table at 1: 1 for space */
static int read_frame(lua_State *L, const char *fn)
{
    const int tp = lua_getfield(L, 1, "frame");
    const char *v = tp == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    int spatial = 0;
    if (tp == LUA_TNIL || (v && strcmp(v, "body") == 0)) spatial = 0;
    else if (v && strcmp(v, "space") == 0) spatial = 1;
    else {
        char got[64];
        snprintf(got, sizeof got, v ? "\"%.40s\"" : "%s", v ? v : lfb_typename(L, -1));
        luaL_error(L, "%s: field 'frame' must be \"body\" or \"space\", got %s", fn, got);
    }
    lua_pop(L, 1);
    return spatial;
}

/* "(0.5, 0, 1)" */
static void vec_desc(char *buf, size_t size, const double *v) { snprintf(buf, size, "(%g, %g, %g)", v[0], v[1], v[2]); }

/* lf.forcing.torque{torque = vec3, frame = "body" | "space"} */
static int l_torque(lua_State *L)
{
    static const char *const fn = "lf.forcing.torque", *const keys[] = {"torque", "frame", NULL};
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    lfb_check_keys(L, 1, keys, fn, "field");
    double tau[3];
    if (!lfb_optfield_vec3(L, 1, "torque", tau, fn))
        return luaL_error(L, "%s: field 'torque' (a vec3) is required", fn);
    const int spatial = read_frame(L, fn);
    lf_error e;
    lf_forcing *f = lf_forcing_torque(tau, spatial, &e);
    if (!f) return lfb_error_in(L, fn, &e);
    char v[96], desc[200];
    vec_desc(v, sizeof v, tau);
    snprintf(desc, sizeof desc, "torque(torque = %s, frame = %s)", v, spatial ? "space" : "body");
    lfb_newforcing(L, f, desc, &e);
    return 1;
}

/* The times t (n of them, finite and increasing) of the table at 1 into t; their count */
static int read_times(lua_State *L, const char *fn, double **t)
{
    if (lua_getfield(L, 1, "t") != LUA_TTABLE)
        return luaL_error(L, "%s: field 't' (an array of increasing times) is required, got %s", fn,
                          lfb_typename(L, -1));
    const int n = (int)lua_rawlen(L, -1);
    if (n < 1 || n > 10000000) return luaL_error(L, "%s: field 't' has %d times, expected 1 to 1e7", fn, n);
    *t = lua_newuserdatauv(L, (size_t)n * sizeof **t, 0);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, -2, i + 1);
        int ok;
        (*t)[i] = lua_tonumberx(L, -1, &ok);
        if (!ok || lua_type(L, -1) != LUA_TNUMBER || !isfinite((*t)[i]))
            return luaL_error(L, "%s: field 't': time %d is %s, expected a finite number", fn, i + 1,
                              ok ? "not finite" : lfb_typename(L, -1));
        if (i > 0 && !((*t)[i] > (*t)[i - 1]))
            return luaL_error(L, "%s: field 't': time %d = %f is not after time %d = %f, expected increasing times", fn,
                              i + 1, (*t)[i], i, (*t)[i - 1]);
        lua_pop(L, 1);
    }
    lua_replace(L, -2); /* the times' userdata stays, in place of the table */
    return n;
}

/* lf.forcing.torque_table{t = {t1, ...}, torque = {tau1, ...}, frame = "body" | "space"} */
static int l_torque_table(lua_State *L)
{
    static const char *const fn = "lf.forcing.torque_table", *const keys[] = {"t", "torque", "frame", NULL};
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    lfb_check_keys(L, 1, keys, fn, "field");
    double *t = NULL;
    const int n = read_times(L, fn, &t); /* (its userdata at 2) */
    const int tt = lua_getfield(L, 1, "torque");
    if (tt != LUA_TTABLE || lua_rawlen(L, -1) != (size_t)n) {
        if (tt == LUA_TTABLE) lua_pushfstring(L, "a table of length %d", (int)lua_rawlen(L, -1));
        else lua_pushstring(L, lfb_typename(L, -1));
        return luaL_error(L, "%s: field 'torque' must be an array of %d vec3 (one per time), got %s", fn, n,
                          lua_tostring(L, -1));
    }
    double *tau = lua_newuserdatauv(L, 3 * (size_t)n * sizeof *tau, 0);
    for (int i = 0; i < n; i++) {
        char what[96];
        snprintf(what, sizeof what, "%s: field 'torque': element %d", fn, i + 1);
        lua_rawgeti(L, 3, i + 1);
        lfb_tovec3(L, -1, tau + 3 * i, what);
        lua_pop(L, 1);
    }
    const int spatial = read_frame(L, fn);
    lf_error e;
    lf_forcing *f = lf_forcing_torque_table(n, t, tau, spatial, &e);
    if (!f) return lfb_error_in(L, fn, &e);
    char desc[200];
    const double *z = tau + 3 * (n - 1);
    snprintf(desc, sizeof desc, "torque_table(%d times in [%g, %g], torque (%g, %g, %g) .. (%g, %g, %g), frame = %s)",
             n, t[0], t[n - 1], tau[0], tau[1], tau[2], z[0], z[1], z[2], spatial ? "space" : "body");
    lfb_newforcing(L, f, desc, &e);
    return 1;
}

void lfb_open_forcing(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"damping", l_damping}, {"torque", l_torque}, {"torque_table", l_torque_table}, {NULL, NULL}};
    luaL_newlib(L, fns);
    lua_setfield(L, -2, "forcing");
}
