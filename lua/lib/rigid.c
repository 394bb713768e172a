/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — rigid bodies: lf.rigidbody and lf.bodies over core/model/rigid.h, their
 * potentials (a built-in lf.potential, a Lua U(R) or U(Rs) with an optional torque, pair kernels),
 * their forcings (forcing =, damping =: shared/forcing.c), and what rigid systems add to every system
 * (shared/object.c): sys.n, sys.inertia, sys.potential_name, sys.forcing_name, sys.forcing_info, sys.control,
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
#include "shared/forcing.h"
#include "shared/model.h"
#include "lib/open.h"
#include "shared/trace.h"

/* rigid systems: registry reference of the autodiff mode ("forward", "reverse", "auto") of a Lua U */
#define LFB_REF_AUTODIFF 3

/* ---------------------------------------------------------------- Lua potentials */
/* U's arguments: the centres of mass x (translating bodies: x != NULL), the rotations R, each of one
 * body or an array of nb; then the parameters if the system has them */
typedef struct {
    lfb_system *s;
    int nb;
    const double *R, *x;
} rot_args;

/* nb blocks of n numbers as vec3/mat3 (one block: the value itself; several: an array) */
static void push_blocks(lua_State *L, int nb, int n, const double *v)
{
    if (nb == 1) (n == 3 ? lfb_pushvec3 : lfb_pushmat3)(L, v);
    else {
        lua_createtable(L, nb, 0);
        for (int i = 0; i < nb; i++) {
            (n == 3 ? lfb_pushvec3 : lfb_pushmat3)(L, v + (size_t)n * i);
            lua_rawseti(L, -2, i + 1);
        }
    }
}

static void push_traced_blocks(lua_State *L, int tidx, int nb, int n, const double *v)
{
    if (nb == 1) lfb_trace_push_inputs(L, tidx, n, v);
    else {
        lua_createtable(L, nb, 0);
        for (int i = 0; i < nb; i++) {
            lfb_trace_push_inputs(L, tidx, n, v + (size_t)n * i);
            lua_rawseti(L, -2, i + 1);
        }
    }
}

static int push_rotations(lua_State *L, void *ud)
{
    const rot_args *a = ud;
    luaL_checkstack(L, 5, "rotations");
    if (a->x) push_blocks(L, a->nb, 3, a->x);
    push_blocks(L, a->nb, 9, a->R);
    return (a->x ? 2 : 1) + lfb_push_params(L, a->s);
}

/* the same as traced values (inputs x then R), for the derivatives at a point */
static int push_traced_rotations(lua_State *L, int tidx, void *ud)
{
    const rot_args *a = ud;
    luaL_checkstack(L, 5, "rotations");
    if (a->x) push_traced_blocks(L, tidx, a->nb, 3, a->x);
    push_traced_blocks(L, tidx, a->nb, 9, a->R);
    return (a->x ? 2 : 1) + lfb_push_params(L, a->s);
}

/* "U(R)", "U(Rs)", "U(x, R)", "U(xs, Rs)" */
static const char *u_name(const rot_args *a)
{
    return a->x ? (a->nb == 1 ? "U(x, R)" : "U(xs, Rs)") : (a->nb == 1 ? "U(R)" : "U(Rs)");
}

/* The torques (and forces, translating bodies) of a Lua U without a torque function: U traced at
 * (x,) R, one reverse sweep for G = dU/d(x, R): F_i = -dU/dx_i, tau_i = trhat(R_i^T dU/dR_i) (so3.h's
 * convention; model_graph.h). */
static int autodiff_torque(lfb_system *s, const rot_args *a, double *U, double *F, double *tau, lf_error *err)
{
    lua_State *L = s->L;
    const int nb = a->nb, nx = a->x ? 3 * nb : 0, nin = nx + 9 * nb;
    double small[12 * 16], *G = nb <= 16 ? small : malloc((size_t)nin * sizeof *G), Uv;
    if (!G) return lf_error_set(err, LF_ENOMEM, "autodiff torque of U: out of memory");
    char what[64];
    snprintf(what, sizeof what, "autodiff torque of potential %s", u_name(a));
    int rc = lfb_point_derivatives(L, s->ref[LFB_REF_U], push_traced_rotations, lfb_trace_read_number, (void *)a, 1,
                                   nin, &Uv, G, what, err);
    s->L = L;
    if (rc == LF_OK) {
        for (int b = 0; b < nb; b++) {
            double M[9];
            lf_m3_tmul(a->R + 9 * b, G + nx + 9 * b, M);
            tau[3 * b] = M[5] - M[7];
            tau[3 * b + 1] = M[6] - M[2];
            tau[3 * b + 2] = M[1] - M[3];
        }
        for (int i = 0; F && i < nx; i++) F[i] = -G[i];
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

/* U (plain values) of a Lua potential */
static int lua_U(lfb_system *s, const rot_args *a, double *U, lf_error *err)
{
    lua_State *L = s->L;
    char what[64];
    snprintf(what, sizeof what, "potential %s", u_name(a));
    int rc = lfb_call(L, s->ref[LFB_REF_U], push_rotations, (void *)a, 1, what, err);
    s->L = L; /* the callback may have evaluated this system from another coroutine (which rebinds it) */
    if (rc != LF_OK) return rc;
    int ok;
    *U = lua_tonumberx(L, -1, &ok);
    if (!ok) rc = lf_error_set(err, LF_ECALLBACK, "%s returned %s, expected a number", what, lfb_typename(L, -1));
    lua_pop(L, 1);
    return rc;
}

static int lua_potential_eval(void *ctx, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    lfb_system *s = ctx;
    lua_State *L = s->L;
    rot_args a = {s, nb, R, NULL};
    int rc;
    if (tau && s->ref[LFB_REF_TAU] == LUA_NOREF) return autodiff_torque(s, &a, U, NULL, tau, err);
    if (U && (rc = lua_U(s, &a, U, err)) != LF_OK) return rc;
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

/* translating bodies: U(x, R) with its forces and torques by one reverse sweep */
static int lua_potential_eval_x(void *ctx, const lf_bodies_config *c, double *U, double *F, double *tau, lf_error *err)
{
    lfb_system *s = ctx;
    rot_args a = {s, c->nb, c->R, c->x};
    if (!F && !tau) return U ? lua_U(s, &a, U, err) : LF_OK;
    double small[3 * 16], *t = tau ? tau : c->nb <= 16 ? small : malloc(3 * (size_t)c->nb * sizeof *t);
    if (!t) return lf_error_set(err, LF_ENOMEM, "autodiff torque of U: out of memory");
    int rc = autodiff_torque(s, &a, U, F, t, err);
    if (t != tau && t != small) free(t);
    return rc;
}

/* ---------------------------------------------------------------- lf.rigidbody, lf.bodies */

/* ---------------------------------------------------------------- rigid bodies */
/* The translation of a body {mass=, x=, v= | p=} at table t: its mass (0 if it has none: it only
 * rotates), centre of mass x and velocity v. */
static double read_translation(lua_State *L, int t, double x[3], double v[3], const char *fn)
{
    double m = 0, p[3];
    const int tm = lua_getfield(L, t, "mass");
    if (tm != LUA_TNIL) {
        int ok;
        m = lua_tonumberx(L, -1, &ok);
        if (tm == LUA_TSTRING) { /* the string itself (its first 40 bytes): mass = "2" is not a mass either */
            char val[48];
            snprintf(val, sizeof val, "%.40s", lua_tostring(L, -1));
            luaL_error(L, "%s: field 'mass' must be a number, got the string \"%s\"", fn, val);
        }
        if (!ok || tm != LUA_TNUMBER)
            luaL_error(L, "%s: field 'mass' must be a number, got %s", fn, lfb_typename(L, -1));
        if (!isfinite(m) || !(m > 0)) luaL_error(L, "%s: field 'mass' = %f, expected a finite positive number", fn, m);
    }
    lua_pop(L, 1);
    const int has_x = lfb_optfield_vec3(L, t, "x", x, fn), has_v = lfb_optfield_vec3(L, t, "v", v, fn),
              has_p = lfb_optfield_vec3(L, t, "p", p, fn);
    if (!(m > 0) && (has_x || has_v || has_p))
        luaL_error(L, "%s: field '%s' belongs to a body with a mass (one without a mass only rotates): give 'mass'", fn,
                   has_x   ? "x"
                   : has_v ? "v"
                           : "p");
    if (has_v && has_p) luaL_error(L, "%s: give either 'v' or 'p' (= m v), not both", fn);
    if (!has_x) x[0] = x[1] = x[2] = 0;
    if (has_p) { /* v = p / m, correctly rounded; a tiny mass can make it overflow */
        for (int k = 0; k < 3; k++) v[k] = p[k] / m;
        if (!isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]))
            luaL_error(L, "%s: field 'p' = (%f, %f, %f) with mass %f gives a velocity p/m that is not finite", fn, p[0],
                       p[1], p[2], m);
    } else if (!has_v) v[0] = v[1] = v[2] = 0;
    return m;
}

/* Read one body description {inertia=, R=, omega= | momentum=} at table t into J, R, w. */
static void read_body(lua_State *L, int t, double J[3], double R[9], double w[3], const char *fn, int nonphysical)
{
    if (!lfb_optfield_vec3(L, t, "inertia", J, fn)) luaL_error(L, "%s: field 'inertia' (3 principal moments) is required", fn);
    for (int k = 0; k < 3; k++)
        if (!(J[k] > 0)) luaL_error(L, "%s: inertia moment %d = %f, expected a positive number", fn, k + 1, J[k]);
    /* the principal moments of a real body satisfy J_i + J_j >= J_k (they are sums of second moments); a
     * planar body has the equality, which its computed moments may miss by round-off */
    const double slack = 1e-12 * (J[0] + J[1] + J[2]);
    if (!nonphysical && (J[0] + J[1] + slack < J[2] || J[1] + J[2] + slack < J[0] || J[0] + J[2] + slack < J[1]))
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

/* A Lua potential's signature against the bodies: U(R [, p]) for bodies that only rotate, U(x, R [, p])
 * for bodies with a mass (U(Rs), U(xs, Rs) for several); a function that declares too many or too few
 * parameters (a vararg one is not checked) is refused with the signature expected. */
static void check_signature(lua_State *L, int idx, const lfb_system *s, int nb, int translating, const char *fn)
{
    lua_Debug ar;
    lua_pushvalue(L, idx);
    if (!lua_getinfo(L, ">u", &ar) || ar.isvararg) return;
    const int params = s->ref[LFB_REF_PARAMS] != LUA_NOREF, want = (translating ? 2 : 1) + params;
    if (ar.nparams == want || (ar.nparams > 0 && ar.nparams < want && params && ar.nparams == want - 1)) return;
    const char *x = nb == 1 ? "x" : "xs", *R = nb == 1 ? "R" : "Rs";
    if (translating && ar.nparams < want)
        luaL_error(L,
                   "%s: the potential takes %d argument%s: bodies with a mass take U(%s, %s%s) (%s the centre%s of "
                   "mass, %s the attitude%s)",
                   fn, ar.nparams, ar.nparams == 1 ? "" : "s", x, R, params ? ", p" : "", x, nb == 1 ? "" : "s", R,
                   nb == 1 ? "" : "s");
    if (!translating && ar.nparams > want)
        luaL_error(L,
                   "%s: the potential takes %d arguments: bodies without a mass take U(%s%s); a potential of the "
                   "positions, U(%s, %s), needs the bodies' masses (mass = ...)",
                   fn, ar.nparams, R, params ? ", p" : "", x, R);
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
    static const char *const body_keys[] = {"inertia",    "R",           "omega",     "momentum", "mass",    "x",
                                            "v",          "p",           "potential", "torque",   "forcing", "damping",
                                            "controller", "nonphysical", "autodiff",  "compile",  "params",  NULL};
    static const char *const item_keys[] = {"inertia", "R", "omega", "momentum", "mass", "x", "v", "p", NULL};
    if (!list) lfb_check_keys(L, pt, body_keys, fn, "field");
    lua_getfield(L, pt, "nonphysical");
    const int nonphysical = lua_toboolean(L, -1);
    lua_pop(L, 1);
    /* J | masses | y0 = (R, w, x, v) (collected) */
    double *scratch = lua_newuserdatauv(L, 22 * (size_t)nb * sizeof(double), 0);
    double *J = scratch, *mass = scratch + 3 * nb, *y0 = scratch + 4 * nb;
    int with_mass = 0;
    for (int i = 0; i < nb; i++) {
        char who[96];
        if (nb == 1) snprintf(who, sizeof who, "%s", fn);
        else snprintf(who, sizeof who, "%s: body %d", fn, i + 1);
        if (list && lua_geti(L, pt, i + 1) != LUA_TTABLE)
            return luaL_error(L, "%s: body %d must be a table, got %s", fn, i + 1, lfb_typename(L, -1));
        const int bt = list ? lua_gettop(L) : pt;
        if (list) lfb_check_keys(L, bt, item_keys, who, "field");
        read_body(L, bt, J + 3 * i, y0 + 9 * i, y0 + 9 * nb + 3 * i, who, nonphysical);
        mass[i] = read_translation(L, bt, y0 + 12 * nb + 3 * i, y0 + 15 * nb + 3 * i, who);
        if (i > 0 && (mass[i] > 0) != (with_mass > 0))
            return luaL_error(L,
                              "%s: body %d has %s mass but body 1 %s: give every body a mass (they translate), or "
                              "none (they only rotate)",
                              fn, i + 1, mass[i] > 0 ? "a" : "no", with_mass ? "has one" : "has none");
        with_mass = mass[i] > 0;
        if (list) lua_pop(L, 1);
    }
    const double *x0 = with_mass ? y0 + 12 * nb : NULL;
    const int backend = lfb_compile_option(L, pt, fn);
    lfb_system *s = lfb_newsystem(L);
    int ud = lua_gettop(L);
    const lf_potential *pot = NULL;
    lfb_store_params(L, s, pt, NULL, LFB_MAXPAR, fn);
    int tp = lua_getfield(L, pt, "potential");
    lf_error e;
    if (tp == LUA_TFUNCTION) {
        check_signature(L, -1, s, nb, x0 != NULL, fn);
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
        if (x0)
            return luaL_error(L,
                              "%s: a Lua 'torque' is for bodies that only rotate: the forces and torques of bodies "
                              "with a mass come from their potential U(x, R)",
                              fn);
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
    char report[640];
    if (s->ref[LFB_REF_U] != LUA_NOREF) { /* a Lua potential: compiled, or called at every evaluation */
        if (backend >= 0) s->pot = lfb_compile_rigid(L, s, nb, y0, x0, backend, fn, report, sizeof report);
        else snprintf(report, sizeof report, "interpreted: compile = false");
        if (!s->pot)
            s->pot = x0 ? lf_potential_new_x("lua", lua_potential_eval_x, s, NULL, &e)
                        : lf_potential_new("lua", lua_potential_eval, s, NULL, &e);
        if (!s->pot) return lfb_error(L, &e);
        pot = s->pot;
    } else
        snprintf(report, sizeof report, pot ? "C built-in potential (%s)" : "free bodies (no potential)",
                 lf_potential_name(pot));
    if (lua_getfield(L, pt, "pair") != LUA_TNIL) { /* a pair kernel over the potential so far */
        if (nb < 2) return luaL_error(L, "%s: a 'pair' kernel needs two bodies or more", fn);
        char kreport[700];
        lf_potential *pp = lfb_pairs_rigid(L, s, pt, nb, y0, x0, pot, backend, fn, kreport, sizeof kreport);
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
    const lf_forcing *forcing = lfb_system_forcing(L, s, ud, pt, nb, y0, x0 != NULL, backend, fn);
    lua_getfield(L, pt, "pair");
    if (s->ref[LFB_REF_PARAMS] != LUA_NOREF && s->ref[LFB_REF_U] == LUA_NOREF && s->ref[LFB_REF_FORCING] == LUA_NOREF &&
        lua_isnil(L, -1))
        return luaL_error(L, "%s: 'params' are the last argument of a Lua potential or forcing; there is none", fn);
    lua_settop(L, ud);
    s->sys = lf_rigid_new_translating(nb, J, x0 ? mass : NULL, pot, &e);
    if (!s->sys) return lfb_error_in(L, fn, &e);
    if (forcing && lf_rigid_set_forcing(s->sys, forcing, &e) != LF_OK) return lfb_error_in(L, fn, &e);
    if (lf_system_set_initial(s->sys, y0, &e) != LF_OK) return lfb_error_in(L, fn, &e);
    lfb_check_initial(L, s, lua_getfield(L, pt, "pair") != LUA_TNIL, fn);
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
    static const char *const keys[] = {"potential",   "torque",   "forcing", "damping", "controller",
                                       "nonphysical", "autodiff", "compile", "params",  "pair",
                                       "positions",   "cutoff",   NULL};
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

/* The configuration the methods below take, read into a state y (the fields' places: R at y, x at
 * y + 12 nb; 24 nb doubles, the torques and forces at y + 18 nb and y + 21 nb): sys:potential(R) of
 * bodies that only rotate, sys:potential(x, R) of bodies with a mass (arrays for several). */
static double *arg_configuration(lua_State *L, lfb_system *s, const char *fn, int translating)
{
    const int nb = lf_rigid_nbodies(s->sys);
    double *y = lua_newuserdatauv(L, 24 * (size_t)nb * sizeof(double), 0);
    char what[96];
    if (translating) {
        snprintf(what, sizeof what, "argument #1 (x) to '%s'", fn);
        lfb_read_field(L, 2, s->sys, lf_system_find_field(s->sys, "x"), y, what);
        snprintf(what, sizeof what, "argument #2 (R) to '%s'", fn);
        lfb_read_field(L, 3, s->sys, lf_system_find_field(s->sys, "R"), y, what);
    } else {
        snprintf(what, sizeof what, "argument #1 to '%s'", fn);
        lfb_read_field(L, 2, s->sys, lf_system_find_field(s->sys, "R"), y, what);
    }
    return y;
}

/* What the configuration of the arguments gives: U, or the torques or the forces (only what is asked
 * for is evaluated: sys:potential calls no Lua torque) */
enum { WANT_U, WANT_TORQUE, WANT_FORCE };
static void eval_configuration(lua_State *L, lfb_system *s, const char *fn, int want, double *U, double **tau,
                               double **F)
{
    lua_settop(L, 3); /* scratch userdata below must not take the place of a missing argument */
    lfb_hold(L, 1, 0);
    const int nb = lf_rigid_nbodies(s->sys), translating = lf_rigid_masses(s->sys) != NULL;
    double *y = arg_configuration(L, s, fn, translating);
    *tau = y + 18 * nb;
    *F = y + 21 * nb;
    lf_error e;
    if (lf_rigid_potential_eval_x(s->sys, translating ? y + 12 * nb : NULL, y, want == WANT_U ? U : NULL,
                                  want == WANT_FORCE ? *F : NULL, want == WANT_TORQUE ? *tau : NULL, &e) != LF_OK)
        lfb_error(L, &e);
}

/* nb vectors as a vec3 (one body) or an array of vec3 */
static void push_vectors(lua_State *L, int nb, const double *v)
{
    if (nb == 1) lfb_pushvec3(L, v);
    else {
        lua_createtable(L, nb, 0);
        for (int i = 0; i < nb; i++) {
            lfb_pushvec3(L, v + 3 * i);
            lua_rawseti(L, -2, i + 1);
        }
    }
}

static int sys_potential(lua_State *L)
{
    lfb_system *s = checkrigid(L, 1, "system:potential");
    double U, *tau, *F;
    eval_configuration(L, s, "system:potential", WANT_U, &U, &tau, &F);
    lua_pushnumber(L, U);
    return 1;
}

static int sys_torque(lua_State *L)
{
    lfb_system *s = checkrigid(L, 1, "system:torque");
    double U, *tau, *F;
    eval_configuration(L, s, "system:torque", WANT_TORQUE, &U, &tau, &F);
    push_vectors(L, lf_rigid_nbodies(s->sys), tau);
    return 1;
}

/* sys:force(x, R): the forces -dU/dx on bodies with a mass */
static int sys_force(lua_State *L)
{
    lfb_system *s = checkrigid(L, 1, "system:force");
    if (!lf_rigid_masses(s->sys)) return luaL_error(L, "system:force: the bodies have no mass (they only rotate)");
    double U, *tau, *F;
    eval_configuration(L, s, "system:force", WANT_FORCE, &U, &tau, &F);
    push_vectors(L, lf_rigid_nbodies(s->sys), F);
    return 1;
}

/* sys:lane_model() -> a string naming the model exactly (inertia bytes and the built-in potential
 * object), equal for systems that can share a lanes integrator (one-body rigid, C potential or
 * none), or nil. Systems made with the same potential object and inertia share it. */
static int sys_lane_model(lua_State *L)
{
    lfb_system *s = lfb_checksystem(L, 1);
    if (lf_rigid_nbodies(s->sys) != 1 || s->pot || s->ref[LFB_REF_TAU] != LUA_NOREF || lf_rigid_forcing(s->sys)) {
        lua_pushnil(L);
        return 1;
    }
    char key[80];
    const double *J = lf_rigid_inertia(s->sys), *m = lf_rigid_masses(s->sys), m0 = m ? m[0] : 0;
    memcpy(key, J, 3 * sizeof(double));
    memcpy(key + 24, &m0, sizeof m0); /* 0: no mass */
    int n = snprintf(key + 32, sizeof key - 32, "%p", (const void *)lf_rigid_potential(s->sys));
    lua_pushlstring(L, key, 32 + (size_t)n);
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
    else if (strcmp(k, "forcing_name") == 0) lfb_push_forcing_name(L, s);
    else if (strcmp(k, "forcing_info") == 0) lfb_push_forcing_info(L, s);
    else if (strcmp(k, "control") == 0) lfb_push_control(L, s);
    else if (strcmp(k, "mass") == 0) {
        const double *m = lf_rigid_masses(sys); /* nil for bodies that only rotate */
        if (!m) lua_pushnil(L);
        else if (nb == 1) lua_pushnumber(L, m[0]);
        else {
            lua_createtable(L, nb, 0);
            for (int i = 0; i < nb; i++) {
                lua_pushnumber(L, m[i]);
                lua_rawseti(L, -2, i + 1);
            }
        }
    } else return 0;
    return 1;
}

/* "lf.rigidbody(inertia = {2, 2, 4}, potential = stress(alpha = 0.3))", "lf.bodies(3 bodies, potential = lua)" */
static int rigid_tostring(lua_State *L, lfb_system *s)
{
    const lf_system *sys = s->sys;
    const int nb = lf_rigid_nbodies(sys);
    const double *m = lf_rigid_masses(sys);
    lfb_push_forcing_name(L, s);
    const char *forcing = lua_tostring(L, -1);
    if (nb == 1) {
        const double *J = lf_rigid_inertia(sys);
        char buf[256], mass[64] = "";
        lf_potential_describe(lf_rigid_potential(sys), buf, sizeof buf);
        if (m) snprintf(mass, sizeof mass, "mass = %g, ", m[0]);
        lua_pushfstring(L, "lf.rigidbody(%sinertia = {%f, %f, %f}, potential = %s%s%s)", mass, J[0], J[1], J[2], buf,
                        forcing ? ", forcing = " : "", forcing ? forcing : "");
    } else
        lua_pushfstring(L, "lf.bodies(%d bodies%s, potential = %s%s%s)", nb, m ? " with masses" : "",
                        lf_potential_name(lf_rigid_potential(sys)), forcing ? ", forcing = " : "",
                        forcing ? forcing : "");
    return 1;
}

static const luaL_Reg rigid_methods[] = {{"potential", sys_potential},
                                         {"torque", sys_torque},
                                         {"force", sys_force},
                                         {"lane_model", sys_lane_model},
                                         {NULL, NULL}};
static const char *const rigid_fields[] = {
    "n", "inertia", "mass", "potential_name", "forcing_name", "forcing_info", "control", NULL};
static const lfb_kind rigid_kind = {"rigidbody", "rigid bodies", rigid_index, rigid_tostring, rigid_methods, rigid_fields};

void lfb_open_rigid(lua_State *L)
{
    lfb_register_kind(L, &rigid_kind);
    lua_pushcfunction(L, l_rigidbody);
    lua_setfield(L, -2, "rigidbody");
    lua_pushcfunction(L, l_bodies);
    lua_setfield(L, -2, "bodies");
}
