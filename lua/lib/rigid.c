/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — rigid bodies: lf.rigidbody and lf.bodies over core/model/rigid.h, their
 * potentials (a built-in lf.potential, a Lua U(R) or U(Rs) with an optional torque, pair kernels),
 * and what rigid systems add to every system (shared/object.c): sys.n, sys.inertia, sys.potential_name,
 * sys:potential, sys:torque, sys:lane_model.
 *
 * A Lua U is compiled from its expression graph (shared/model.c) with its torque, or called at each
 * evaluation with the torque from one reverse sweep over the graph traced at the point. The option
 * autodiff = "forward" | "reverse" | "auto" of earlier versions is still checked and kept; every mode
 * is that one sweep. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/bind.h"
#include "shared/model.h"
#include "lib/open.h"
#include "shared/trace.h"

/* rigid systems: registry reference of the autodiff mode ("forward", "reverse", "auto") of a Lua U */
#define LFB_REF_AUTODIFF 3

/* ---------------------------------------------------------------- Lua potentials */
typedef struct {
    lfb_system *s;
    int nb;
    const double *R;
} rot_args;

/* U's arguments: R (one body) or the array Rs, then the parameters if the system has them */
static int push_rotations(lua_State *L, void *ud)
{
    const rot_args *a = ud;
    luaL_checkstack(L, 4, "rotations");
    if (a->nb == 1) lfb_pushmat3(L, a->R);
    else {
        lua_createtable(L, a->nb, 0);
        for (int i = 0; i < a->nb; i++) {
            lfb_pushmat3(L, a->R + 9 * i);
            lua_rawseti(L, -2, i + 1);
        }
    }
    return 1 + lfb_push_params(L, a->s);
}

/* the same as traced values (inputs 0 .. 9 nb - 1), for the derivatives at a point */
static int push_traced_rotations(lua_State *L, int tidx, void *ud)
{
    const rot_args *a = ud;
    luaL_checkstack(L, 4, "rotations");
    if (a->nb == 1) lfb_trace_push_inputs(L, tidx, 9, a->R);
    else {
        lua_createtable(L, a->nb, 0);
        for (int i = 0; i < a->nb; i++) {
            lfb_trace_push_inputs(L, tidx, 9, a->R + 9 * i);
            lua_rawseti(L, -2, i + 1);
        }
    }
    return 1 + lfb_push_params(L, a->s);
}

/* The torques of a Lua U without a torque function: U traced at R, one reverse sweep for
 * G_i = dU/dR_i, tau_i = trhat(R_i^T G_i) (so3.h's convention; model_graph.h). */
static int autodiff_torque(lfb_system *s, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    lua_State *L = s->L;
    rot_args a = {s, nb, R};
    double small[9 * 16], *G = nb <= 16 ? small : malloc(9 * (size_t)nb * sizeof *G), Uv;
    if (!G) return lf_error_set(err, LF_ENOMEM, "autodiff torque of U: out of memory");
    int rc = lfb_point_derivatives(L, s->ref[LFB_REF_U], push_traced_rotations, lfb_trace_read_number, &a, 1, 9 * nb,
                                   &Uv, G, nb == 1 ? "autodiff torque of potential U(R)" : "autodiff torque of potential U(Rs)", err);
    s->L = L;
    if (rc == LF_OK) {
        for (int b = 0; b < nb; b++) {
            double M[9];
            lf_m3_tmul(R + 9 * b, G + 9 * b, M);
            tau[3 * b] = M[5] - M[7];
            tau[3 * b + 1] = M[6] - M[2];
            tau[3 * b + 2] = M[1] - M[3];
        }
        if (U) *U = Uv;
    }
    if (G != small) free(G);
    return rc;
}

/* Read nb torques (a vec3, or an array of nb vec3 / 3-number tables) raw from the value at top. */
static int read_torques(lua_State *L, int nb, double *tau, lf_error *err)
{
    const int top = lua_gettop(L);
    int rc = LF_OK;
    for (int i = 0; i < nb && rc == LF_OK; i++) {
        if (nb > 1) {
            if (lua_type(L, top) != LUA_TTABLE)
                return lf_error_set(err, LF_ECALLBACK, "torque returned %s, expected an array of %d vec3",
                                    lfb_typename(L, top), nb);
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
            rc = lf_error_set(err, LF_ECALLBACK, "torque of body %d is %s, expected a vec3", i + 1, lfb_typename(L, -1));
        lua_pop(L, 1);
    }
    return rc;
}

static int lua_potential_eval(void *ctx, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    lfb_system *s = ctx;
    lua_State *L = s->L;
    rot_args a = {s, nb, R};
    int rc;
    if (tau && s->ref[LFB_REF_TAU] == LUA_NOREF) return autodiff_torque(s, nb, R, U, tau, err);
    if (U) {
        rc = lfb_call(L, s->ref[LFB_REF_U], push_rotations, &a, 1, nb == 1 ? "potential U(R)" : "potential U(Rs)", err);
        s->L = L; /* the callback may have evaluated this system from another coroutine (which rebinds it) */
        if (rc != LF_OK) return rc;
        int ok;
        *U = lua_tonumberx(L, -1, &ok);
        if (!ok) rc = lf_error_set(err, LF_ECALLBACK, "potential U(R) returned %s, expected a number", lfb_typename(L, -1));
        lua_pop(L, 1);
        if (rc != LF_OK) return rc;
    }
    if (tau) {
        rc = lfb_call(L, s->ref[LFB_REF_TAU], push_rotations, &a, 1, "torque(R)", err);
        s->L = L;
        if (rc != LF_OK) return rc;
        rc = read_torques(L, nb, tau, err);
        lua_pop(L, 1);
        if (rc != LF_OK) return rc;
    }
    return LF_OK;
}

/* ---------------------------------------------------------------- lf.rigidbody, lf.bodies */

/* ---------------------------------------------------------------- rigid bodies */
/* Read one body description {inertia=, R=, omega= | momentum=} at table t into J, R, w. */
static void read_body(lua_State *L, int t, double J[3], double R[9], double w[3], const char *fn, int nonphysical)
{
    if (!lfb_optfield_vec3(L, t, "inertia", J, fn)) luaL_error(L, "%s: field 'inertia' (3 principal moments) is required", fn);
    for (int k = 0; k < 3; k++)
        if (!(J[k] > 0)) luaL_error(L, "%s: inertia moment %d = %f, expected a positive number", fn, k + 1, J[k]);
    /* the principal moments of a real body satisfy J_i + J_j >= J_k (they are sums of second moments) */
    if (!nonphysical && (J[0] + J[1] < J[2] || J[1] + J[2] < J[0] || J[0] + J[2] < J[1]))
        luaL_error(L, "%s: inertia (%f, %f, %f) violates the triangle inequality J_i + J_j >= J_k: no real body has "
                      "it (set nonphysical = true to integrate it anyway)", fn, J[0], J[1], J[2]);
    lf_m3_identity(R);
    lfb_optfield_rotation(L, t, "R", R, fn);
    double Pi[3];
    int has_w = lfb_optfield_vec3(L, t, "omega", w, fn), has_p = lfb_optfield_vec3(L, t, "momentum", Pi, fn);
    if (has_w && has_p) luaL_error(L, "%s: give either 'omega' or 'momentum', not both", fn);
    if (has_p) lf_v3_div(Pi, J, w);
    if (!has_w && !has_p) w[0] = w[1] = w[2] = 0;
}

/* The field autodiff = "forward" | "reverse" | "auto" of table pt (earlier versions chose the mode of
 * the torque of a Lua U without a torque function; now every mode is one reverse sweep): checked and
 * kept, so scripts written for them run unchanged. */
static void read_autodiff_mode(lua_State *L, int pt, lfb_system *s, const char *fn)
{
    if (lua_getfield(L, pt, "autodiff") != LUA_TNIL) {
        const char *m = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (!m || (strcmp(m, "forward") != 0 && strcmp(m, "reverse") != 0 && strcmp(m, "auto") != 0))
            luaL_error(L, "%s: field 'autodiff' must be \"forward\", \"reverse\" or \"auto\", got %s%s%s", fn,
                       m ? "\"" : "", m ? m : lfb_typename(L, -1), m ? "\"" : "");
        if (s->ref[LFB_REF_U] == LUA_NOREF || s->ref[LFB_REF_TAU] != LUA_NOREF)
            luaL_error(L, "%s: field 'autodiff' applies to a Lua potential U without a 'torque' function", fn);
        lua_pushvalue(L, -1);
        s->ref[LFB_REF_AUTODIFF] = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    lua_pop(L, 1);
}

/* Build a rigid system of nb bodies from the body tables (the table pt itself when `list` is 0, else
 * its elements pt[1..nb], read one at a time); potential/torque fields in table pt. */
static int build_rigid(lua_State *L, int pt, int nb, int list, const char *fn)
{
    static const char *const body_keys[] = {"inertia", "R",        "omega",   "momentum", "potential", "torque",
                                            "nonphysical", "autodiff", "compile", "params", NULL};
    static const char *const item_keys[] = {"inertia", "R", "omega", "momentum", NULL};
    if (!list) lfb_check_keys(L, pt, body_keys, fn, "field");
    lua_getfield(L, pt, "nonphysical");
    const int nonphysical = lua_toboolean(L, -1);
    lua_pop(L, 1);
    double *scratch = lua_newuserdatauv(L, 15 * (size_t)nb * sizeof(double), 0); /* J | y0 (collected) */
    double *J = scratch, *y0 = scratch + 3 * nb;
    for (int i = 0; i < nb; i++) {
        char who[96];
        if (nb == 1) snprintf(who, sizeof who, "%s", fn);
        else snprintf(who, sizeof who, "%s: body %d", fn, i + 1);
        if (list && lua_geti(L, pt, i + 1) != LUA_TTABLE)
            return luaL_error(L, "%s: body %d must be a table, got %s", fn, i + 1, lfb_typename(L, -1));
        if (list) lfb_check_keys(L, lua_gettop(L), item_keys, who, "field");
        read_body(L, list ? lua_gettop(L) : pt, J + 3 * i, y0 + 9 * i, y0 + 9 * nb + 3 * i, who, nonphysical);
        if (list) lua_pop(L, 1);
    }
    const int backend = lfb_compile_option(L, pt, fn);
    lfb_system *s = lfb_newsystem(L);
    int ud = lua_gettop(L);
    const lf_potential *pot = NULL;
    lfb_store_params(L, s, pt, NULL, LFB_MAXPAR, fn);
    int tp = lua_getfield(L, pt, "potential");
    lf_error e;
    if (tp == LUA_TFUNCTION) {
        lfb_natural(L, -1);
        lua_pushvalue(L, -1);
        s->ref[LFB_REF_U] = luaL_ref(L, LUA_REGISTRYINDEX);
    } else if (tp == LUA_TUSERDATA && luaL_testudata(L, -1, LFB_POTENTIAL)) {
        pot = lfb_system_use_potential(L, s, ud, -1);
    } else if (tp != LUA_TNIL) {
        return luaL_error(L, "%s: field 'potential' must be a function U(R) or a built-in lf.potential, got %s", fn,
                          lfb_typename(L, -1));
    }
    lua_pop(L, 1);
    int tt = lua_getfield(L, pt, "torque");
    if (tt == LUA_TFUNCTION) {
        if (s->ref[LFB_REF_U] == LUA_NOREF)
            return luaL_error(L, "%s: a Lua 'torque' needs a Lua 'potential' U(R) too (for the energy)", fn);
        lfb_natural(L, -1);
        lua_pushvalue(L, -1);
        s->ref[LFB_REF_TAU] = luaL_ref(L, LUA_REGISTRYINDEX);
    } else if (tt != LUA_TNIL) {
        return luaL_error(L, "%s: field 'torque' must be a function tau(R), got %s", fn, lfb_typename(L, -1));
    }
    lua_pop(L, 1);
    read_autodiff_mode(L, pt, s, fn);
    lua_getfield(L, pt, "pair");
    if (s->ref[LFB_REF_PARAMS] != LUA_NOREF && s->ref[LFB_REF_U] == LUA_NOREF && lua_isnil(L, -1))
        return luaL_error(L, "%s: 'params' are the last argument of a Lua potential; there is none", fn);
    lua_pop(L, 1);
    char report[320];
    if (s->ref[LFB_REF_U] != LUA_NOREF) { /* a Lua potential: compiled, or called at every evaluation */
        if (backend >= 0) s->pot = lfb_compile_rigid(L, s, nb, y0, backend, fn, report, sizeof report);
        else snprintf(report, sizeof report, "interpreted: compile = false");
        if (!s->pot) s->pot = lf_potential_new("lua", lua_potential_eval, s, NULL, &e);
        if (!s->pot) return lfb_error(L, &e);
        pot = s->pot;
    } else
        snprintf(report, sizeof report, pot ? "C built-in potential (%s)" : "free bodies (no potential)",
                 lf_potential_name(pot));
    if (lua_getfield(L, pt, "pair") != LUA_TNIL) { /* a pair kernel over the potential so far */
        if (nb < 2) return luaL_error(L, "%s: a 'pair' kernel needs two bodies or more", fn);
        char kreport[700];
        lf_potential *pp = lfb_pairs_rigid(L, s, pt, nb, y0, pot, backend, fn, kreport, sizeof kreport);
        s->pot_inner = s->pot;
        s->pot = pp;
        pot = pp;
        size_t len = strlen(kreport);
        snprintf(kreport + len, sizeof kreport - len, "; potential: %s", report);
        lfb_set_compiled(L, s, kreport);
    } else if (lua_getfield(L, pt, "positions") != LUA_TNIL || lua_getfield(L, pt, "cutoff") != LUA_TNIL)
        return luaL_error(L, "%s: 'positions' and 'cutoff' belong to a 'pair' kernel; there is none", fn);
    else
        lfb_set_compiled(L, s, report);
    lua_settop(L, ud);
    s->sys = lf_rigid_new(nb, J, pot, &e);
    if (!s->sys) return lfb_error(L, &e);
    if (lf_system_set_initial(s->sys, y0, &e) != LF_OK) return lfb_error(L, &e);
    lua_settop(L, ud);
    return 1;
}

/* lf.rigidbody{inertia=, R=, omega=|momentum=, potential=, torque=, autodiff=} */
static int l_rigidbody(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    return build_rigid(L, 1, 1, 0, "lf.rigidbody");
}

/* lf.bodies{ {inertia=, R=, omega=}, ..., potential = U(Rs), torque = tau(Rs), autodiff = mode } */
static int l_bodies(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
    if (n < 1) return luaL_error(L, "lf.bodies: at least one body table expected");
    static const char *const keys[] = {"potential", "torque", "nonphysical", "autodiff", "compile", "params", "pair",
                                       "positions", "cutoff", NULL};
    lua_pushnil(L); /* the bodies 1..n and these fields */
    while (lua_next(L, 1)) {
        lua_pop(L, 1);
        if (lua_isinteger(L, -1)) {
            lua_Integer i = lua_tointeger(L, -1);
            if (i >= 1 && i <= n) continue;
            return luaL_error(L, "lf.bodies: key %I is not one of the bodies 1..%I", i, n);
        }
        if (lua_type(L, -1) != LUA_TSTRING) return luaL_error(L, "lf.bodies: unknown key (a %s)", luaL_typename(L, -1));
        lua_pushvalue(L, -1);
        lua_newtable(L);
        lua_insert(L, -2);
        lua_pushboolean(L, 1);
        lua_settable(L, -3); /* {key = true}: checked against the valid fields */
        lfb_check_keys(L, -1, keys, "lf.bodies", "field");
        lua_pop(L, 1);
    }
    if (n > 100000) return luaL_error(L, "lf.bodies: %I bodies is too many", n);
    return build_rigid(L, 1, (int)n, 1, "lf.bodies");
}

/* ---------------------------------------------------------------- what rigid systems add */
/* The rigid system at idx (its methods can be called by hand with another system) */
static lfb_system *checkrigid(lua_State *L, int idx, const char *fn)
{
    lfb_system *s = lfb_checksystem(L, idx);
    if (!lf_rigid_nbodies(s->sys)) luaL_error(L, "%s: not a rigid-body system (%s)", fn, lf_system_kind(s->sys));
    return s;
}


static double *arg_rotations(lua_State *L, lfb_system *s, int idx, size_t extra, const char *what)
{
    const int nb = lf_rigid_nbodies(s->sys);
    double *R = lua_newuserdatauv(L, (9 * (size_t)nb + extra) * sizeof(double), 0);
    lfb_read_field(L, idx, s->sys, lf_system_find_field(s->sys, "R"), R, what);
    return R;
}

static int sys_potential(lua_State *L)
{
    lfb_system *s = checkrigid(L, 1, "system:potential");
    lua_settop(L, 2); /* scratch userdata below must not take the place of a missing argument */
    lfb_hold(L, 1, 0);
    double *R = arg_rotations(L, s, 2, 0, "argument #1 to 'system:potential'");
    double U;
    lf_error e;
    if (lf_rigid_potential_eval(s->sys, R, &U, NULL, &e) != LF_OK) return lfb_error(L, &e);
    lua_pushnumber(L, U);
    return 1;
}

static int sys_torque(lua_State *L)
{
    lfb_system *s = checkrigid(L, 1, "system:torque");
    lua_settop(L, 2);
    lfb_hold(L, 1, 0);
    const int nb = lf_rigid_nbodies(s->sys);
    double *R = arg_rotations(L, s, 2, 3 * (size_t)nb, "argument #1 to 'system:torque'"), *tau = R + 9 * nb;
    lf_error e;
    if (lf_rigid_potential_eval(s->sys, R, NULL, tau, &e) != LF_OK) return lfb_error(L, &e);
    if (nb == 1) lfb_pushvec3(L, tau);
    else {
        lua_createtable(L, nb, 0);
        for (int i = 0; i < nb; i++) {
            lfb_pushvec3(L, tau + 3 * i);
            lua_rawseti(L, -2, i + 1);
        }
    }
    return 1;
}

/* sys:lane_model() -> a string naming the model exactly (inertia bytes and the built-in potential
 * object), equal for systems that can share a lanes integrator (one-body rigid, C potential or
 * none), or nil. Systems made with the same potential object and inertia share it. */
static int sys_lane_model(lua_State *L)
{
    lfb_system *s = lfb_checksystem(L, 1);
    if (lf_rigid_nbodies(s->sys) != 1 || s->pot || s->ref[LFB_REF_TAU] != LUA_NOREF) {
        lua_pushnil(L);
        return 1;
    }
    char key[64];
    const double *J = lf_rigid_inertia(s->sys);
    memcpy(key, J, 3 * sizeof(double));
    int n = snprintf(key + 24, sizeof key - 24, "%p", (const void *)lf_rigid_potential(s->sys));
    lua_pushlstring(L, key, 24 + (size_t)n);
    return 1;
}

static int rigid_index(lua_State *L, lfb_system *s, const char *k)
{
    const lf_system *sys = s->sys;
    const int nb = lf_rigid_nbodies(sys);
    if (strcmp(k, "n") == 0) lua_pushinteger(L, nb);
    else if (strcmp(k, "inertia") == 0) {
        const double *J = lf_rigid_inertia(sys);
        if (nb == 1) lfb_pushvec3(L, J);
        else {
            lua_createtable(L, nb, 0);
            for (int i = 0; i < nb; i++) {
                lfb_pushvec3(L, J + 3 * i);
                lua_rawseti(L, -2, i + 1);
            }
        }
    } else if (strcmp(k, "potential_name") == 0) lua_pushstring(L, lf_potential_name(lf_rigid_potential(sys)));
    else
        return 0;
    return 1;
}

/* "lf.rigidbody(inertia = {2, 2, 4}, potential = stress(alpha = 0.3))", "lf.bodies(3 bodies, potential = lua)" */
static int rigid_tostring(lua_State *L, lfb_system *s)
{
    const lf_system *sys = s->sys;
    const int nb = lf_rigid_nbodies(sys);
    if (nb == 1) {
        const double *J = lf_rigid_inertia(sys);
        char buf[256];
        lf_potential_describe(lf_rigid_potential(sys), buf, sizeof buf);
        lua_pushfstring(L, "lf.rigidbody(inertia = {%f, %f, %f}, potential = %s)", J[0], J[1], J[2], buf);
    } else
        lua_pushfstring(L, "lf.bodies(%d bodies, potential = %s)", nb, lf_potential_name(lf_rigid_potential(sys)));
    return 1;
}

static const luaL_Reg rigid_methods[] = {
    {"potential", sys_potential}, {"torque", sys_torque}, {"lane_model", sys_lane_model}, {NULL, NULL}};
static const char *const rigid_fields[] = {"n", "inertia", "potential_name", NULL};
static const lfb_kind rigid_kind = {"rigidbody", "rigid bodies", rigid_index, rigid_tostring, rigid_methods, rigid_fields};

void lfb_open_rigid(lua_State *L)
{
    lfb_register_kind(L, &rigid_kind);
    lua_pushcfunction(L, l_rigidbody);
    lua_setfield(L, -2, "rigidbody");
    lua_pushcfunction(L, l_bodies);
    lua_setfield(L, -2, "bodies");
}
