/* lieflow Lua binding — rigid-body systems (lf.rigidbody, lf.bodies) and potentials (lf.potential.*),
 * including potentials written in Lua: U(R) (U(Rs) for several bodies), an optional torque(R), and
 * otherwise the torque from U by forward-mode autodiff (scripts/lieflow/autodiff.lua). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbind.h"

#define LFB_POTENTIAL "lf.potential"

struct lfb_system {
    lf_system *sys;
    lua_State *L;     /* the running thread, set by lfb_system_bind before C evaluates the potential */
    int ref_U;        /* Lua potential U (LUA_NOREF for a built-in) */
    int ref_tau;      /* Lua torque (LUA_NOREF: autodiff of U) */
    double *R0, *w0;  /* initial state */
};

/* ---------------------------------------------------------------- reading and pushing states */
void lfb_push_rotations(lua_State *L, int nb, const double *R)
{
    if (nb == 1) {
        lfb_pushmat3(L, R);
        return;
    }
    lua_createtable(L, nb, 0);
    for (int i = 0; i < nb; i++) {
        lfb_pushmat3(L, R + 9 * i);
        lua_rawseti(L, -2, i + 1);
    }
}

void lfb_push_vectors(lua_State *L, int nb, const double *v)
{
    if (nb == 1) {
        lfb_pushvec3(L, v);
        return;
    }
    lua_createtable(L, nb, 0);
    for (int i = 0; i < nb; i++) {
        lfb_pushvec3(L, v + 3 * i);
        lua_rawseti(L, -2, i + 1);
    }
}

static void read_many(lua_State *L, int idx, int nb, double *x, const char *what, int rot)
{
    idx = lua_absindex(L, idx);
    if (nb == 1) {
        if (rot) lfb_torotation(L, idx, x, what);
        else lfb_tovec3(L, idx, x, what);
        return;
    }
    if (lua_type(L, idx) != LUA_TTABLE || luaL_len(L, idx) != nb)
        luaL_error(L, "%s: array of %d %s expected, got %s", what, nb, rot ? "rotations" : "vectors",
                   lfb_typename(L, idx));
    for (int i = 0; i < nb; i++) {
        char w[160];
        snprintf(w, sizeof w, "%s[%d]", what, i + 1);
        lua_geti(L, idx, i + 1);
        if (rot) lfb_torotation(L, -1, x + 9 * i, w);
        else lfb_tovec3(L, -1, x + 3 * i, w);
        lua_pop(L, 1);
    }
}

void lfb_read_rotations(lua_State *L, int idx, int nb, double *R, const char *what) { read_many(L, idx, nb, R, what, 1); }
void lfb_read_vectors(lua_State *L, int idx, int nb, double *v, const char *what) { read_many(L, idx, nb, v, what, 0); }

/* ---------------------------------------------------------------- Lua potentials */
static int msgh(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (!msg) msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    luaL_traceback(L, L, msg, 1);
    return 1;
}

/* Call fn(R) for the function in ref (or, when autodiff is set, the registered autodiff
 * torque(U, R, nb) with U in ref); leaves one result on the stack, or returns an error status. */
static int call_lua(lfb_system *s, int ref, int autodiff, const double *R, const char *what, lf_error *err)
{
    lua_State *L = s->L;
    int nb = s->sys->nb;
    if (!lua_checkstack(L, 8)) return lf_error_set(err, LF_ENOMEM, "%s: Lua stack overflow", what);
    lua_pushcfunction(L, msgh);
    int base = lua_gettop(L);
    if (autodiff) {
        if (lua_getfield(L, LUA_REGISTRYINDEX, "lieflow.dual") != LUA_TTABLE ||
            lua_getfield(L, -1, "torque") != LUA_TFUNCTION) {
            lua_settop(L, base - 1);
            return lf_error_set(err, LF_ECALLBACK, "no torque function given and autodiff is not loaded "
                                                   "(load the module with require \"lieflow\")");
        }
        lua_remove(L, -2);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
    lfb_push_rotations(L, nb, R);
    if (autodiff) lua_pushinteger(L, nb);
    int st = lua_pcall(L, autodiff ? 3 : 1, 1, base);
    s->L = L; /* the callback may have evaluated this system from another coroutine (which rebinds it) */
    if (st != LUA_OK) {
        int rc = lf_error_set(err, LF_ECALLBACK, "%s raised an error: %s", what, lua_tostring(L, -1));
        lua_settop(L, base - 1);
        return rc;
    }
    lua_remove(L, base);
    return LF_OK;
}

static int lua_potential_eval(const lf_potential *p, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    lfb_system *s = p->ctx;
    lua_State *L = s->L;
    int rc;
    if (U) {
        if ((rc = call_lua(s, s->ref_U, 0, R, nb == 1 ? "potential U(R)" : "potential U(Rs)", err)) != LF_OK)
            return rc;
        int ok;
        *U = lua_tonumberx(L, -1, &ok);
        if (!ok) {
            rc = lf_error_set(err, LF_ECALLBACK, "potential U(R) returned %s, expected a number", lfb_typename(L, -1));
            lua_pop(L, 1);
            return rc;
        }
        lua_pop(L, 1);
    }
    if (tau) {
        int autodiff = s->ref_tau == LUA_NOREF;
        rc = call_lua(s, autodiff ? s->ref_U : s->ref_tau, autodiff, R,
                      autodiff ? "autodiff torque of U" : "torque(R)", err);
        if (rc != LF_OK) return rc;
        /* read the result without raising (raw access: no metamethod may run and raise a Lua error
         * through the C integrator, which would skip its rollback and leak its buffers) */
        int top = lua_gettop(L);
        for (int i = 0; i < nb && rc == LF_OK; i++) {
            if (nb > 1) {
                if (lua_type(L, top) != LUA_TTABLE) {
                    rc = lf_error_set(err, LF_ECALLBACK, "torque returned %s, expected an array of %d vec3",
                                      lfb_typename(L, top), nb);
                    break;
                }
                lua_rawgeti(L, top, i + 1);
            } else
                lua_pushvalue(L, top);
            const double *v = lfb_testvec3(L, -1);
            if (v) memcpy(tau + 3 * i, v, 3 * sizeof(double));
            else if (lua_type(L, -1) == LUA_TTABLE && lua_rawlen(L, -1) == 3) {
                for (int k = 0; k < 3; k++) {
                    lua_rawgeti(L, -1, k + 1);
                    int ok;
                    tau[3 * i + k] = lua_tonumberx(L, -1, &ok);
                    lua_pop(L, 1);
                    if (!ok) rc = lf_error_set(err, LF_ECALLBACK, "torque of body %d: component %d is not a number", i + 1, k + 1);
                }
            } else
                rc = lf_error_set(err, LF_ECALLBACK, "torque of body %d is %s, expected a vec3", i + 1,
                                  lfb_typename(L, -1));
            lua_pop(L, 1);
        }
        lua_settop(L, top - 1);
        if (rc != LF_OK) return rc;
    }
    return LF_OK;
}

/* ---------------------------------------------------------------- potential objects */
static lf_potential *checkpot(lua_State *L, int idx) { return luaL_checkudata(L, idx, LFB_POTENTIAL); }

static lf_potential *newpot(lua_State *L)
{
    lf_potential *p = lua_newuserdatauv(L, sizeof *p, 0);
    memset(p, 0, sizeof *p);
    luaL_setmetatable(L, LFB_POTENTIAL);
    return p;
}

static double optnum(lua_State *L, int t, const char *key, double def, const char *fn)
{
    double x = def;
    if (lua_getfield(L, t, key) != LUA_TNIL) {
        char w[96];
        snprintf(w, sizeof w, "%s: field '%s'", fn, key);
        x = lfb_checkfinite(L, -1, w);
    }
    lua_pop(L, 1);
    return x;
}

static int optvec(lua_State *L, int t, const char *key, double v[3], const char *fn)
{
    int present = lua_getfield(L, t, key) != LUA_TNIL;
    if (present) {
        char w[96];
        snprintf(w, sizeof w, "%s: field '%s'", fn, key);
        lfb_tovec3(L, -1, v, w);
    }
    lua_pop(L, 1);
    return present;
}

static int optrot(lua_State *L, int t, const char *key, double R[9], const char *fn)
{
    int present = lua_getfield(L, t, key) != LUA_TNIL;
    if (present) {
        char w[96];
        snprintf(w, sizeof w, "%s: field '%s'", fn, key);
        lfb_torotation(L, -1, R, w);
    }
    lua_pop(L, 1);
    return present;
}

static int opt_table(lua_State *L, const char *fn)
{
    if (lua_isnoneornil(L, 1)) {
        lua_settop(L, 0);
        lua_newtable(L);
    }
    if (lua_type(L, 1) != LUA_TTABLE) luaL_error(L, "%s: table of parameters expected, got %s", fn, lfb_typename(L, 1));
    return 1;
}

/* lf.potential.stress{alpha = 0.3, Rm = exp((2.5,0,2.5)/sqrt 2)}: seed 000 eq. (12) with its parameters. */
static int pot_stress(lua_State *L)
{
    opt_table(L, "potential.stress");
    double Rm[9], vm[3] = {2.5 / sqrt(2.0), 0, 2.5 / sqrt(2.0)};
    lf_so3_exp(vm, Rm);
    double alpha = optnum(L, 1, "alpha", 0.3, "potential.stress");
    optrot(L, 1, "Rm", Rm, "potential.stress");
    lf_potential_stress(newpot(L), alpha, Rm);
    return 1;
}

/* lf.potential.top{mgl = 20, chi = {0,0,1}} or {m =, g =, l =}: Lagrangian top, seed 003 §3.3. */
static int pot_top(lua_State *L)
{
    opt_table(L, "potential.top");
    double chi[3] = {0, 0, 1};
    double mgl = 20; /* seed 003 §3.3 */
    int has_mgl = lua_getfield(L, 1, "mgl") != LUA_TNIL, has_m = lua_getfield(L, 1, "m") != LUA_TNIL;
    int has_g = lua_getfield(L, 1, "g") != LUA_TNIL, has_l = lua_getfield(L, 1, "l") != LUA_TNIL;
    lua_settop(L, 1);
    if (has_mgl) mgl = optnum(L, 1, "mgl", 20, "potential.top");
    else if (has_m || has_g || has_l)
        mgl = optnum(L, 1, "m", 1, "potential.top") * optnum(L, 1, "g", 9.81, "potential.top") *
              optnum(L, 1, "l", 1, "potential.top");
    optvec(L, 1, "chi", chi, "potential.top");
    lf_potential_top(newpot(L), mgl, chi);
    return 1;
}

/* lf.potential.field{B = {..}, m = {..}}: U = -B . R m. */
static int pot_field(lua_State *L)
{
    opt_table(L, "potential.field");
    double B[3], m[3];
    if (!optvec(L, 1, "B", B, "potential.field") || !optvec(L, 1, "m", m, "potential.field"))
        return luaL_error(L, "potential.field: fields B (spatial field) and m (body vector) are required");
    lf_potential_field(newpot(L), B, m);
    return 1;
}

static int pot_coulomb_wall(lua_State *L)
{
    lf_potential_coulomb_wall(newpot(L));
    return 1;
}

static int pot_free(lua_State *L)
{
    lf_potential_free_body(newpot(L));
    return 1;
}

static int pot_energy(lua_State *L)
{
    lf_potential *p = checkpot(L, 1);
    double R[9], U;
    lf_error e;
    lfb_torotation(L, 2, R, "argument #1 to 'potential:energy'");
    if (!p->eval) U = 0;
    else if (p->eval(p, 1, R, &U, NULL, &e) != LF_OK) return lfb_error(L, &e);
    lua_pushnumber(L, U);
    return 1;
}

static int pot_torque(lua_State *L)
{
    lf_potential *p = checkpot(L, 1);
    double R[9], tau[3] = {0, 0, 0};
    lf_error e;
    lfb_torotation(L, 2, R, "argument #1 to 'potential:torque'");
    if (p->eval && p->eval(p, 1, R, NULL, tau, &e) != LF_OK) return lfb_error(L, &e);
    lfb_pushvec3(L, tau);
    return 1;
}

static int pot_tostring(lua_State *L)
{
    lua_pushfstring(L, "lf.potential(%s)", checkpot(L, 1)->name);
    return 1;
}

static int pot_index(lua_State *L)
{
    lf_potential *p = checkpot(L, 1);
    const char *k = luaL_checkstring(L, 2);
    if (strcmp(k, "name") == 0) lua_pushstring(L, p->name);
    else if (strcmp(k, "energy") == 0) lua_pushcfunction(L, pot_energy);
    else if (strcmp(k, "torque") == 0) lua_pushcfunction(L, pot_torque);
    else lua_pushnil(L);
    return 1;
}

/* ---------------------------------------------------------------- systems */
static lfb_system *checksys(lua_State *L, int idx)
{
    lfb_system *s = luaL_checkudata(L, idx, LFB_SYSTEM);
    /* a finalizer may resurrect a system whose own __gc has already run */
    if (!s->sys) luaL_error(L, "the system has been finalized (garbage-collected) and cannot be used");
    return s;
}

lf_system *lfb_checksystem(lua_State *L, int idx)
{
    lfb_system *s = checksys(L, idx);
    s->L = L;
    return s->sys;
}

void lfb_system_bind(lua_State *L, int idx) { checksys(L, idx)->L = L; }

static int sys_gc(lua_State *L)
{
    lfb_system *s = luaL_checkudata(L, 1, LFB_SYSTEM);
    if (s->ref_U != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, s->ref_U);
    if (s->ref_tau != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, s->ref_tau);
    s->ref_U = s->ref_tau = LUA_NOREF;
    lf_system_free(s->sys);
    s->sys = NULL;
    free(s->R0);
    s->R0 = NULL;
    return 0;
}

/* Read one body description {inertia=, R=, omega= | momentum=} at table idx into J, R, w. */
static void read_body(lua_State *L, int t, double J[3], double R[9], double w[3], const char *who)
{
    char fn[96];
    snprintf(fn, sizeof fn, "%s", who);
    if (!optvec(L, t, "inertia", J, fn)) luaL_error(L, "%s: field 'inertia' (3 principal moments) is required", fn);
    for (int k = 0; k < 3; k++)
        if (!(J[k] > 0)) luaL_error(L, "%s: inertia moment %d = %f, expected a positive number", fn, k + 1, J[k]);
    if (J[0] + J[1] < J[2] || J[1] + J[2] < J[0] || J[0] + J[2] < J[1])
        fprintf(stderr, "lieflow: warning: %s: inertia (%g, %g, %g) violates the triangle inequality\n", fn, J[0],
                J[1], J[2]);
    lf_m3_identity(R);
    optrot(L, t, "R", R, fn);
    double Pi[3];
    int has_w = optvec(L, t, "omega", w, fn), has_p = optvec(L, t, "momentum", Pi, fn);
    if (has_w && has_p) luaL_error(L, "%s: give either 'omega' or 'momentum', not both", fn);
    if (has_p) lf_v3_div(Pi, J, w);
    if (!has_w && !has_p) w[0] = w[1] = w[2] = 0;
}

/* Build the system userdata from nb body tables (the table pt itself when `list` is 0, else its
 * elements pt[1..nb], read one at a time: the stack holds O(1) values whatever nb is);
 * potential/torque fields in table pt. */
static int build_system(lua_State *L, int pt, int nb, int list, const char *fn)
{
    lfb_system *s = lua_newuserdatauv(L, sizeof *s, 1);
    memset(s, 0, sizeof *s);
    s->ref_U = s->ref_tau = LUA_NOREF;
    luaL_setmetatable(L, LFB_SYSTEM);
    int ud = lua_gettop(L);
    s->R0 = malloc(12 * (size_t)nb * sizeof(double)); /* freed by __gc */
    if (!s->R0) return luaL_error(L, "%s: out of memory", fn);
    double *J = lua_newuserdatauv(L, 3 * (size_t)nb * sizeof(double), 0); /* scratch, collected */
    s->w0 = s->R0 + 9 * nb;
    for (int i = 0; i < nb; i++) {
        char who[96];
        if (nb == 1) snprintf(who, sizeof who, "%s", fn);
        else snprintf(who, sizeof who, "%s: body %d", fn, i + 1);
        double Ji[3], Ri[9], wi[3];
        if (list && lua_geti(L, pt, i + 1) != LUA_TTABLE)
            return luaL_error(L, "%s: body %d must be a table, got %s", fn, i + 1, lfb_typename(L, -1));
        read_body(L, list ? lua_gettop(L) : pt, Ji, Ri, wi, who);
        if (list) lua_pop(L, 1);
        memcpy(J + 3 * i, Ji, sizeof Ji);
        memcpy(s->R0 + 9 * i, Ri, sizeof Ri);
        memcpy(s->w0 + 3 * i, wi, sizeof wi);
    }

    lf_potential pot;
    lf_potential_free_body(&pot);
    int tp = lua_getfield(L, pt, "potential");
    if (tp == LUA_TFUNCTION) {
        lua_pushvalue(L, -1);
        s->ref_U = luaL_ref(L, LUA_REGISTRYINDEX);
        pot = (lf_potential){.name = "lua", .eval = lua_potential_eval, .ctx = s};
    } else if (tp == LUA_TUSERDATA && luaL_testudata(L, -1, LFB_POTENTIAL)) {
        pot = *(lf_potential *)lua_touserdata(L, -1);
        lua_pushvalue(L, -1);
        lua_setiuservalue(L, ud, 1);
    } else if (tp != LUA_TNIL) {
        return luaL_error(L, "%s: field 'potential' must be a function U(R) or a built-in lf.potential, got %s", fn,
                          lfb_typename(L, -1));
    }
    lua_pop(L, 1);
    int tt = lua_getfield(L, pt, "torque");
    if (tt == LUA_TFUNCTION) {
        if (s->ref_U == LUA_NOREF) {
            return luaL_error(L, "%s: a Lua 'torque' needs a Lua 'potential' U(R) too (for the energy)", fn);
        }
        lua_pushvalue(L, -1);
        s->ref_tau = luaL_ref(L, LUA_REGISTRYINDEX);
    } else if (tt != LUA_TNIL) {
        return luaL_error(L, "%s: field 'torque' must be a function tau(R), got %s", fn, lfb_typename(L, -1));
    }
    lua_pop(L, 1);

    lf_error e;
    s->sys = lf_system_new(nb, J, &pot, &e);
    if (!s->sys) return lfb_error(L, &e);
    s->L = L;
    lua_settop(L, ud);
    return 1;
}

/* lf.rigidbody{inertia=, R=, omega=|momentum=, potential=, torque=} */
static int l_rigidbody(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    return build_system(L, 1, 1, 0, "lf.rigidbody");
}

/* lf.bodies{ {inertia=, R=, omega=}, ..., potential = U(Rs), torque = tau(Rs) } */
static int l_bodies(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    lua_Integer n = luaL_len(L, 1);
    if (n < 1) return luaL_error(L, "lf.bodies: at least one body table expected");
    if (n > 100000) return luaL_error(L, "lf.bodies: %I bodies is too many", n);
    return build_system(L, 1, (int)n, 1, "lf.bodies");
}

static int sys_potential(lua_State *L)
{
    lfb_system *s = checksys(L, 1);
    lua_settop(L, 2); /* scratch userdata below must not take the place of a missing argument */
    s->L = L;
    int nb = s->sys->nb;
    double *R = lua_newuserdatauv(L, 9 * (size_t)nb * sizeof(double), 0);
    lfb_read_rotations(L, 2, nb, R, "argument #1 to 'system:potential'");
    double U;
    lf_error e;
    if (lf_system_potential(s->sys, R, &U, NULL, &e) != LF_OK) return lfb_error(L, &e);
    lua_pushnumber(L, U);
    return 1;
}

static int sys_torque(lua_State *L)
{
    lfb_system *s = checksys(L, 1);
    lua_settop(L, 2); /* scratch userdata below must not take the place of a missing argument */
    s->L = L;
    int nb = s->sys->nb;
    double *R = lua_newuserdatauv(L, 12 * (size_t)nb * sizeof(double), 0), *tau = R + 9 * nb;
    lfb_read_rotations(L, 2, nb, R, "argument #1 to 'system:torque'");
    lf_error e;
    if (lf_system_potential(s->sys, R, NULL, tau, &e) != LF_OK) return lfb_error(L, &e);
    lfb_push_vectors(L, nb, tau);
    return 1;
}

/* system:energy(state): state is a table {R=, omega=} (or anything with those fields). */
static int sys_energy(lua_State *L)
{
    lfb_system *s = checksys(L, 1);
    lua_settop(L, 2); /* scratch userdata below must not take the place of a missing argument */
    s->L = L;
    int nb = s->sys->nb;
    double *R = lua_newuserdatauv(L, 12 * (size_t)nb * sizeof(double), 0), *w = R + 9 * nb;
    if (lua_isnoneornil(L, 2)) {
        memcpy(R, s->R0, 12 * (size_t)nb * sizeof(double));
    } else {
        if (lua_type(L, 2) != LUA_TTABLE && lua_type(L, 2) != LUA_TUSERDATA)
            return luaL_error(L, "argument #1 to 'system:energy': state {R=, omega=} expected, got %s",
                              lfb_typename(L, 2));
        lua_getfield(L, 2, "R");
        lfb_read_rotations(L, -1, nb, R, "system:energy: state.R");
        lua_getfield(L, 2, "omega");
        lfb_read_vectors(L, -1, nb, w, "system:energy: state.omega");
    }
    double E;
    lf_error e;
    if (lf_system_energy(s->sys, R, w, &E, &e) != LF_OK) return lfb_error(L, &e);
    lua_pushnumber(L, E);
    return 1;
}

static int sys_index(lua_State *L)
{
    lfb_system *s = checksys(L, 1);
    const char *k = luaL_checkstring(L, 2);
    int nb = s->sys->nb;
    if (strcmp(k, "n") == 0) lua_pushinteger(L, nb);
    else if (strcmp(k, "R") == 0) lfb_push_rotations(L, nb, s->R0);
    else if (strcmp(k, "omega") == 0) lfb_push_vectors(L, nb, s->w0);
    else if (strcmp(k, "inertia") == 0) lfb_push_vectors(L, nb, s->sys->J);
    else if (strcmp(k, "momentum") == 0) {
        double *Pi = lua_newuserdatauv(L, 3 * (size_t)nb * sizeof(double), 0);
        for (int i = 0; i < 3 * nb; i++) Pi[i] = s->sys->J[i] * s->w0[i];
        lfb_push_vectors(L, nb, Pi);
    } else if (strcmp(k, "potential_name") == 0) lua_pushstring(L, s->sys->pot.name);
    else if (strcmp(k, "kind") == 0) lua_pushstring(L, "rigidbody");
    else {
        luaL_getmetatable(L, LFB_SYSTEM);
        lua_getfield(L, -1, "methods");
        lua_getfield(L, -1, k);
    }
    return 1;
}

static int sys_tostring(lua_State *L)
{
    lfb_system *s = checksys(L, 1);
    if (s->sys->nb == 1)
        lua_pushfstring(L, "lf.rigidbody(inertia = {%f, %f, %f}, potential = %s)", s->sys->J[0], s->sys->J[1],
                        s->sys->J[2], s->sys->pot.name);
    else lua_pushfstring(L, "lf.bodies(%d bodies, potential = %s)", s->sys->nb, s->sys->pot.name);
    return 1;
}

/* Initial state of the system (R0, w0) for the integrator constructor. */
void lfb_system_initial(lua_State *L, int idx, const double **R0, const double **w0)
{
    lfb_system *s = checksys(L, idx);
    *R0 = s->R0;
    *w0 = s->w0;
}

static const luaL_Reg sys_methods[] = {
    {"potential", sys_potential}, {"torque", sys_torque}, {"energy", sys_energy}, {NULL, NULL}};

void lfb_open_systems(lua_State *L)
{
    luaL_newmetatable(L, LFB_SYSTEM);
    const luaL_Reg meta[] = {{"__gc", sys_gc}, {"__index", sys_index}, {"__tostring", sys_tostring}, {NULL, NULL}};
    luaL_setfuncs(L, meta, 0);
    luaL_newlib(L, sys_methods);
    lua_setfield(L, -2, "methods");
    lua_pop(L, 1);

    luaL_newmetatable(L, LFB_POTENTIAL);
    const luaL_Reg pmeta[] = {{"__index", pot_index}, {"__tostring", pot_tostring}, {NULL, NULL}};
    luaL_setfuncs(L, pmeta, 0);
    lua_pop(L, 1);

    lua_pushcfunction(L, l_rigidbody);
    lua_setfield(L, -2, "rigidbody");
    lua_pushcfunction(L, l_bodies);
    lua_setfield(L, -2, "bodies");
    const luaL_Reg pots[] = {{"stress", pot_stress},
                             {"top", pot_top},
                             {"field", pot_field},
                             {"coulomb_wall", pot_coulomb_wall},
                             {"free", pot_free},
                             {NULL, NULL}};
    luaL_newlib(L, pots);
    lua_setfield(L, -2, "potential");
}
