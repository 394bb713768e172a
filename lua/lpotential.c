/* lieflow Lua binding — lf.potential: the constructors of the built-in rigid-body potentials in C
 * (core/model/potential.h). The potential objects themselves (pot:energy, pot:torque, their
 * lifetime) belong to the object layer (lobject.c). */
#include <math.h>
#include <string.h>

#include "lbind.h"
#include "lopen.h"

static void opt_table(lua_State *L, const char *fn)
{
    if (lua_isnoneornil(L, 1)) {
        lua_settop(L, 0);
        lua_newtable(L);
    }
    if (lua_type(L, 1) != LUA_TTABLE) luaL_error(L, "%s: table of parameters expected, got %s", fn, lfb_typename(L, 1));
}

/* lf.potential.stress{alpha = 0.3, Rm = exp((2.5,0,2.5)/sqrt 2)}: eq. (12) of Bou-Rabee, Ortolan & Saccon. */
static int pot_stress(lua_State *L)
{
    opt_table(L, "potential.stress");
    static const char *const keys[] = {"alpha", "Rm", NULL};
    lfb_check_keys(L, 1, keys, "lf.potential.stress", "parameter");
    double Rm[9], vm[3] = {2.5 / sqrt(2.0), 0, 2.5 / sqrt(2.0)};
    lf_so3_exp(vm, Rm);
    double alpha = lfb_optfield_number(L, 1, "alpha", 0.3, "potential.stress");
    lfb_optfield_rotation(L, 1, "Rm", Rm, "potential.stress");
    lf_error e;
    lfb_newpotential(L, lf_potential_stress(alpha, Rm, &e), 0, &e);
    return 1;
}

/* lf.potential.top{mgl = 20, chi = {0,0,1}} or {m =, g =, l =}: Lagrangian top, Krysl §3.3. */
static int pot_top(lua_State *L)
{
    opt_table(L, "potential.top");
    static const char *const keys[] = {"mgl", "m", "g", "l", "chi", NULL};
    lfb_check_keys(L, 1, keys, "lf.potential.top", "parameter");
    double chi[3] = {0, 0, 1};
    double mgl = 20;
    int has_mgl = lua_getfield(L, 1, "mgl") != LUA_TNIL, has_m = lua_getfield(L, 1, "m") != LUA_TNIL;
    int has_g = lua_getfield(L, 1, "g") != LUA_TNIL, has_l = lua_getfield(L, 1, "l") != LUA_TNIL;
    lua_settop(L, 1);
    if (has_mgl) mgl = lfb_optfield_number(L, 1, "mgl", 20, "potential.top");
    else if (has_m || has_g || has_l)
        mgl = lfb_optfield_number(L, 1, "m", 1, "potential.top") * lfb_optfield_number(L, 1, "g", 9.81, "potential.top") *
              lfb_optfield_number(L, 1, "l", 1, "potential.top");
    lfb_optfield_vec3(L, 1, "chi", chi, "potential.top");
    lf_error e;
    lfb_newpotential(L, lf_potential_top(mgl, chi, &e), 0, &e);
    return 1;
}

/* lf.potential.field{B = {..}, m = {..}}: U = -B . R m. */
static int pot_field(lua_State *L)
{
    opt_table(L, "potential.field");
    static const char *const keys[] = {"B", "m", NULL};
    lfb_check_keys(L, 1, keys, "lf.potential.field", "parameter");
    double B[3], m[3];
    if (!lfb_optfield_vec3(L, 1, "B", B, "potential.field") || !lfb_optfield_vec3(L, 1, "m", m, "potential.field"))
        return luaL_error(L, "potential.field: fields B (spatial field) and m (body vector) are required");
    lf_error e;
    lfb_newpotential(L, lf_potential_field(B, m, &e), 0, &e);
    return 1;
}

static int pot_coulomb_wall(lua_State *L)
{
    lf_error e;
    lfb_newpotential(L, lf_potential_coulomb_wall(&e), 0, &e);
    return 1;
}

/* The free body: a potential object standing for no potential (U = 0). */
static int pot_free(lua_State *L)
{
    lfb_newpotential(L, NULL, 1, NULL);
    return 1;
}

void lfb_open_potentials(lua_State *L)
{
    const luaL_Reg pots[] = {{"stress", pot_stress},
                             {"top", pot_top},
                             {"field", pot_field},
                             {"coulomb_wall", pot_coulomb_wall},
                             {"free", pot_free},
                             {NULL, NULL}};
    luaL_newlib(L, pots);
    lua_setfield(L, -2, "potential");
}
