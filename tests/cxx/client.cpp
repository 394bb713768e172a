// SPDX-License-Identifier: GPL-3.0-or-later
// A C++ client of lieflow (tests/abi_check.sh builds it with g++ against the headers as installed,
// <lieflow/NAME.h>, and the shared libraries, and runs it): the C API through extern "C" (a rigid
// body stepped by vlv, lf_version against the headers' LIEFLOW_VERSION) and the Lua binding hosted
// in a Lua state (luaopen_lieflow: lf.run and JSON from the library alone).
#include <lieflow/lieflow.h>
#include <lieflow/lieflow_lua.h>

#include <lauxlib.h>
#include <lualib.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

static int fail(const std::string &what)
{
    std::fprintf(stderr, "cxx client: %s\n", what.c_str());
    return 1;
}

int main()
{
    if (std::strcmp(lf_version(), LIEFLOW_VERSION) != 0)
        return fail(std::string("lf_version() = ") + lf_version() + ", headers " + LIEFLOW_VERSION);
    char parts[64];
    std::snprintf(parts, sizeof parts, "%d.%d.%d", LIEFLOW_VERSION_MAJOR, LIEFLOW_VERSION_MINOR, LIEFLOW_VERSION_PATCH);
    if (std::string(parts) != LIEFLOW_VERSION) return fail(std::string("MAJOR.MINOR.PATCH = ") + parts);

    lf_error err;
    const double J[3] = {2, 2, 4};
    const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    lf_potential *pot = lf_potential_stress(0.3, I, &err);
    if (!pot) return fail(err.msg);
    lf_system *sys = lf_rigid_new(1, J, pot, &err);
    if (!sys) return fail(err.msg);
    const lf_method *m = lf_method_find("vlv");
    if (!m) return fail("lf_method_find(\"vlv\") found nothing");
    double y0[12], x[3] = {0, 0.7227, 0};
    lf_so3_exp(x, y0);
    y0[9] = 0, y0[10] = 0, y0[11] = 0.625;
    lf_stepper *st = lf_stepper_new(m, sys, y0, 0, nullptr, &err);
    if (!st) return fail(err.msg);
    if (lf_stepper_step(st, 0.125, 80) != LF_OK) return fail(lf_stepper_error(st)->msg);
    const double *y = lf_stepper_state(st);
    double R[9];
    std::memcpy(R, y, sizeof R);
    double orth = lf_so3_orth_error(R);
    std::printf("cxx client: vlv, 80 steps, t = %g, ||R^T R - I|| = %.1e\n", lf_stepper_time(st), orth);
    bool ok = std::fabs(lf_stepper_time(st) - 10) < 1e-12 && orth < 1e-13;
    lf_stepper_free(st);
    lf_system_free(sys);
    lf_potential_free(pot);
    if (!ok) return fail("wrong time or orthogonality");

    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    luaL_requiref(L, "lieflow", luaopen_lieflow, 1);
    lua_pop(L, 1);
    const char *chunk =
        "local t = lieflow.run(lieflow.rigidbody{inertia = {2, 2, 4}, omega = {0, 0.1, 1}},"
        "                      {method = 'vlv', h = 0.1, T = 1})\n"
        "local back = lieflow.json.decode(t:to_json())\n"
        "assert(back.data.energy[#back.data.energy] == t.energy[#t.energy])\n"
        "return lieflow._VERSION, t.samples\n";
    if (luaL_dostring(L, chunk) != LUA_OK) return fail(lua_tostring(L, -1));
    std::printf("cxx client: %s, lf.run took %d samples, JSON round trip exact\n", lua_tostring(L, -2),
                (int)lua_tointeger(L, -1));
    lua_close(L);
    std::printf("cxx client: ok\n");
    return 0;
}
