/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A C program that hosts its own Lua state, opens lieflow in it (the whole module, with lf.run and
 * lf.json, from the library alone: no Lua file on disk, LUA_PATH and LUA_CPATH may be empty), runs a
 * Lua snippet that builds a rotation, integrates a rigid body with lf.run and sends the trajectory
 * through JSON, and reads the numbers back in C.
 * Build, after `make install PREFIX=...` (and export PKG_CONFIG_PATH=PREFIX/lib/pkgconfig unless
 * PREFIX is /usr or /usr/local), with the shared libraries (found at run time through the rpath):
 *   cc host.c -o host $(pkg-config --cflags --libs lieflow-lua) -Wl,-rpath,$(pkg-config --variable=libdir lieflow-lua)
 * or with the static ones (liblieflow_lua.a, liblieflow.a; Lua, GSL and libc stay shared):
 *   cc host.c -o host $(pkg-config --cflags lieflow-lua) $(pkg-config --variable=static_libs lieflow-lua)
 * In the source tree `make` builds it as build/embed_host, against the public headers copied as
 * they are installed (build/include/lieflow/), and `make test-embed` runs it from an empty directory
 * with LUA_PATH and LUA_CPATH empty; tests/install_test.sh runs both lines. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <math.h>
#include <stdio.h>

#include <lieflow/lieflow.h>     /* the C API: PREFIX/include/lieflow/, Cflags -IPREFIX/include */
#include <lieflow/lieflow_lua.h> /* luaopen_lieflow */

static const char *snippet =
    "local lf = require 'lieflow'\n"
    "assert(debug.getinfo(lf.run, 'S').source == '=lieflow/run/init.lua') -- built in, not from a file\n"
    "local R = lf.so3.exp{0, 0, math.pi / 2}\n"
    "local body = lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7227, 0},\n"
    "                          omega = {0, 0, 0.625}, potential = lf.potential.stress{}}\n"
    "local traj = lf.run(body, {method = 'vlv', h = 0.125, T = 10, every = 8})\n"
    "local back = lf.json.decode(traj:to_json()) -- every number exact\n"
    "local n = traj.samples\n"
    "assert(back.data.energy_error[n] == traj.energy_error[n] and back.data.t[n] == traj.t[n])\n"
    "return R:totable(), traj.t[n], traj.energy_error[n], lf._VERSION\n";

int main(void)
{
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    luaL_requiref(L, "lieflow", luaopen_lieflow, 1); /* as `require "lieflow"`; also the global lieflow */
    lua_pop(L, 1);
    if (luaL_dostring(L, snippet) != LUA_OK) {
        fprintf(stderr, "embed: %s\n", lua_tostring(L, -1));
        return 1;
    }
    /* stack: R table, t, energy error, version */
    double R[9];
    for (int i = 0; i < 3; i++) {
        lua_geti(L, 1, i + 1);
        for (int j = 0; j < 3; j++) {
            lua_geti(L, -1, j + 1);
            R[3 * i + j] = lua_tonumber(L, -1);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    double t = lua_tonumber(L, 2), dE = lua_tonumber(L, 3);
    printf("embed: %s, lf.run and lf.json from the library\n", lua_tostring(L, 4));
    lua_close(L);

    /* The same rotation from the C API: exp of (0, 0, pi/2) maps e1 to e2. */
    double x[3] = {0, 0, M_PI / 2}, Rc[9], D[9];
    lf_so3_exp(x, Rc);
    lf_m3_sub(R, Rc, D);
    printf("embed: rotation from Lua = [%.3f %.3f %.3f; %.3f %.3f %.3f; %.3f %.3f %.3f], |R_lua - R_c| = %.1e\n", R[0],
           R[1], R[2], R[3], R[4], R[5], R[6], R[7], R[8], lf_m3_fnorm(D));
    printf("embed: lf.run with vlv reached t = %g with energy error %.2e (the same after JSON)\n", t, dE);
    int ok = lf_m3_fnorm(D) == 0 && fabs(t - 10) < 1e-12 && fabs(dE) < 1e-2 && dE != 0;
    printf("embed: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
