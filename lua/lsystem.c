/* lieflow Lua binding — systems: the lf.system userdata over any lf_system (schema-driven fields,
 * observables and errors), rigid bodies (lf.rigidbody, lf.bodies) and their potentials
 * (lf.potential.*), including potentials written in Lua: U(R) (U(Rs) for several bodies), an
 * optional torque(R), and otherwise the torque from U: compiled from its expression graph
 * (lcompile.c), or at each evaluation by one reverse sweep over the graph traced at the point. The
 * option autodiff = "forward" | "reverse" | "auto" of earlier versions is still checked and kept;
 * every mode is that one sweep. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbind.h"
#include "ltrace.h"
#include "model_graph.h"

#define LFB_POTENTIAL "lf.potential"
/* rigid systems: registry reference of the autodiff mode ("forward", "reverse", "auto") of a Lua U */
#define LFB_REF_AUTODIFF 3

/* ---------------------------------------------------------------- system lifetime */
lfb_system *lfb_newsystem(lua_State *L)
{
    lfb_system *s = lua_newuserdatauv(L, sizeof *s, LFB_SYSTEM_NUV);
    memset(s, 0, sizeof *s);
    for (int i = 0; i < LFB_NREF; i++) s->ref[i] = LUA_NOREF;
    s->L = L;
    luaL_setmetatable(L, LFB_SYSTEM);
    return s;
}

static void pot_release(void *pot_object);

static void free_system(lua_State *L, lfb_system *s)
{
    for (int i = 0; i < LFB_NREF; i++) {
        if (s->ref[i] != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, s->ref[i]);
        s->ref[i] = LUA_NOREF;
    }
    lf_system_free(s->sys);
    s->sys = NULL;
    lf_potential_free(s->pot);
    s->pot = NULL;
    lf_potential_free(s->pot_inner);
    s->pot_inner = NULL;
    pot_release(s->pot_object);
    s->pot_object = NULL;
}

lfb_system *lfb_checksystem(lua_State *L, int idx)
{
    lfb_system *s = luaL_checkudata(L, idx, LFB_SYSTEM);
    if (s->finalized || !s->sys) luaL_error(L, "the system has been finalized (garbage-collected) and cannot be used");
    s->L = L;
    return s;
}

void lfb_system_retain(lfb_system *s) { s->users++; }

void lfb_system_release(lua_State *L, lfb_system *s)
{
    if (s->users > 0) s->users--;
    if (s->users == 0 && s->finalized) free_system(L, s);
}

/* __gc (and a __gc or __close called by hand): the C system is freed once no integrator uses it;
 * from now on every entry point refuses the system. */
static int sys_gc(lua_State *L)
{
    lfb_system *s = luaL_checkudata(L, 1, LFB_SYSTEM);
    s->finalized = 1;
    if (s->users == 0) free_system(L, s); /* (also a system whose construction failed: what it holds) */
    return 0;
}

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

/* ---------------------------------------------------------------- potential objects */
/* A potential's lifetime follows the system's (sys_gc above): systems using it retain it, and its
 * __gc (also one called by hand) frees the C potential only when no system uses it any more; from
 * then on every entry point refuses it. */
typedef struct {
    lf_potential *p; /* NULL for the free body */
    int free_body;
    int users;     /* systems using p (they keep the userdata alive through a uservalue) */
    int finalized; /* __gc has run */
} lfb_potential;

static lfb_potential *checkpot(lua_State *L, int idx)
{
    lfb_potential *u = luaL_checkudata(L, idx, LFB_POTENTIAL);
    if (u->finalized || (!u->p && !u->free_body)) luaL_error(L, "the potential has been finalized and cannot be used");
    return u;
}

static void pot_release(void *pot_object)
{
    lfb_potential *u = pot_object;
    if (!u) return;
    if (u->users > 0) u->users--;
    if (u->users == 0 && u->finalized) {
        lf_potential_free(u->p);
        u->p = NULL;
    }
}

static void newpot(lua_State *L, lf_potential *p, const lf_error *e)
{
    if (!p) lfb_error(L, e);
    lfb_potential *u = lua_newuserdatauv(L, sizeof *u, 0);
    memset(u, 0, sizeof *u);
    u->p = p;
    luaL_setmetatable(L, LFB_POTENTIAL);
}

static int pot_gc(lua_State *L)
{
    lfb_potential *u = luaL_checkudata(L, 1, LFB_POTENTIAL);
    u->finalized = 1;
    if (u->users == 0) {
        lf_potential_free(u->p);
        u->p = NULL;
    }
    return 0;
}

static int optrot(lua_State *L, int t, const char *key, double R[9], const char *fn)
{
    int present = lua_getfield(L, t, key) != LUA_TNIL;
    if (present) {
        char w[200];
        snprintf(w, sizeof w, "%s: field '%s'", fn, key);
        lfb_torotation(L, -1, R, w);
    }
    lua_pop(L, 1);
    return present;
}

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
    optrot(L, 1, "Rm", Rm, "potential.stress");
    lf_error e;
    newpot(L, lf_potential_stress(alpha, Rm, &e), &e);
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
    newpot(L, lf_potential_top(mgl, chi, &e), &e);
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
    newpot(L, lf_potential_field(B, m, &e), &e);
    return 1;
}

static int pot_coulomb_wall(lua_State *L)
{
    lf_error e;
    newpot(L, lf_potential_coulomb_wall(&e), &e);
    return 1;
}

/* The free body: a potential object standing for no potential (U = 0). */
static int pot_free(lua_State *L)
{
    lfb_potential *u = lua_newuserdatauv(L, sizeof *u, 0);
    memset(u, 0, sizeof *u);
    u->free_body = 1;
    luaL_setmetatable(L, LFB_POTENTIAL);
    return 1;
}

static int pot_energy(lua_State *L)
{
    lfb_potential *u = checkpot(L, 1);
    double R[9], U;
    lf_error e;
    lfb_torotation(L, 2, R, "argument #1 to 'potential:energy'");
    if (lf_potential_eval(u->p, 1, R, &U, NULL, &e) != LF_OK) return lfb_error(L, &e);
    lua_pushnumber(L, U);
    return 1;
}

static int pot_torque(lua_State *L)
{
    lfb_potential *u = checkpot(L, 1);
    double R[9], tau[3];
    lf_error e;
    lfb_torotation(L, 2, R, "argument #1 to 'potential:torque'");
    if (lf_potential_eval(u->p, 1, R, NULL, tau, &e) != LF_OK) return lfb_error(L, &e);
    lfb_pushvec3(L, tau);
    return 1;
}

static int pot_tostring(lua_State *L)
{
    lfb_potential *u = luaL_checkudata(L, 1, LFB_POTENTIAL);
    if (u->finalized || (!u->p && !u->free_body)) {
        lua_pushstring(L, "lf.potential (finalized)");
        return 1;
    }
    char buf[256];
    lf_potential_describe(u->p, buf, sizeof buf);
    lua_pushfstring(L, "lf.potential.%s", buf);
    return 1;
}

static int pot_index(lua_State *L)
{
    lfb_potential *u = checkpot(L, 1);
    const char *k = luaL_checkstring(L, 2);
    if (strcmp(k, "name") == 0) lua_pushstring(L, lf_potential_name(u->p));
    else if (strcmp(k, "energy") == 0) lua_pushcfunction(L, pot_energy);
    else if (strcmp(k, "torque") == 0) lua_pushcfunction(L, pot_torque);
    else lua_pushnil(L);
    return 1;
}

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
    optrot(L, t, "R", R, fn);
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
        lfb_potential *u = checkpot(L, -1);
        pot = u->p;
        lua_pushvalue(L, -1);
        lua_setiuservalue(L, ud, LFB_SYSTEM_UV_POTENTIAL); /* the system keeps the potential alive */
        u->users++;                  /* and its C potential (released in free_system) */
        s->pot_object = u;
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

/* ---------------------------------------------------------------- generic system methods */
/* The state given as argument idx (a table of fields; nil: the initial state) into a scratch vector
 * left on the stack. */
static double *arg_state_tol(lua_State *L, lfb_system *s, int idx, const char *what, double tol)
{
    const int np = lf_system_nparam(s->sys);
    double *y = lua_newuserdatauv(L, (size_t)np * sizeof(double), 0);
    memcpy(y, lf_system_initial(s->sys), (size_t)np * sizeof(double));
    if (!lua_isnoneornil(L, idx)) {
        static const char *const extra[] = {"momentum", "spatial_momentum", "manifold_defect", NULL};
        lfb_read_state_tol(L, idx, s->sys, y, NULL, extra, what, tol);
    }
    return y;
}

static double *arg_state(lua_State *L, lfb_system *s, int idx, const char *what)
{
    return arg_state_tol(L, s, idx, what, 1e-9);
}

/* system:energy([state]) */
static int sys_energy(lua_State *L)
{
    lfb_system *s = lfb_checksystem(L, 1);
    lua_settop(L, 2);
    lfb_hold(L, 1, 0);
    double *y = arg_state(L, s, 2, "argument #1 to 'system:energy'");
    double E;
    lf_error e;
    if (lf_system_energy(s->sys, y, &E, &e) != LF_OK) return lfb_error(L, &e);
    lua_pushnumber(L, E);
    return 1;
}

/* system:check_state(state): an error naming the field when the state is not valid, else true */
static int sys_check_state(lua_State *L)
{
    lfb_system *s = lfb_checksystem(L, 1);
    lua_settop(L, 3);
    lfb_hold(L, 1, 0);
    double tol = lua_isnoneornil(L, 3) ? 1e-9 : lfb_checkfinite(L, 3, "argument #2 'tol' to 'system:check_state'");
    double *y = arg_state_tol(L, s, 2, "system:check_state", tol);
    lf_error e;
    if (lf_system_check_state(s->sys, y, tol, &e) != LF_OK) return lfb_error(L, &e);
    lua_pushboolean(L, 1);
    return 1;
}

/* system:canonical(state [, tol]) -> the state as fresh values of the canonical types (mat3, vec3,
 * arrays), checked on the manifold within tol (default 1e-9); fields absent take the initial
 * state's values. The Lua integrators pass every state their steps return through it. */
static int sys_canonical(lua_State *L)
{
    lfb_system *s = lfb_checksystem(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 3);
    lfb_hold(L, 1, 0);
    double tol = lua_isnoneornil(L, 3) ? 1e-9 : lfb_checkfinite(L, 3, "argument #2 'tol' to 'system:canonical'");
    const int np = lf_system_nparam(s->sys);
    double *y = lua_newuserdatauv(L, (size_t)np * sizeof(double), 0);
    memcpy(y, lf_system_initial(s->sys), (size_t)np * sizeof(double));
    double t = 0;
    lfb_read_state_tol(L, 2, s->sys, y, &t, NULL, "state", tol);
    lf_error e;
    if (lf_system_check_state(s->sys, y, tol, &e) != LF_OK) return lfb_error(L, &e);
    lfb_push_state(L, s->sys, t, y);
    return 1;
}

/* system:f(t, state) -> array of algebra elements */
static int sys_f(lua_State *L)
{
    lfb_system *s = lfb_checksystem(L, 1);
    double t = lfb_checkfinite(L, 2, "argument #1 't' to 'system:f'");
    lua_settop(L, 3);
    lfb_hold(L, 1, 0);
    double *y = arg_state(L, s, 3, "system:f");
    double *xi = lua_newuserdatauv(L, (size_t)lf_system_ndim(s->sys) * sizeof(double), 0);
    lf_error e;
    if (lf_system_f(s->sys, t, y, xi, &e) != LF_OK) return lfb_error(L, &e);
    lfb_push_algebra(L, lf_system_manifold(s->sys), xi);
    return 1;
}

/* Push observable i's value from the flat vector v. */
static void push_observable(lua_State *L, const lf_observable *o, const double *v)
{
    if (o->kind == LF_OBS_SCALAR) lua_pushnumber(L, v[0]);
    else if (o->kind == LF_OBS_VEC3 || o->dim == 3) lfb_pushvec3(L, v);
    else {
        lua_createtable(L, o->dim / 3, 0);
        for (int k = 0; k < o->dim / 3; k++) {
            lfb_pushvec3(L, v + 3 * k);
            lua_rawseti(L, -2, k + 1);
        }
    }
}

/* Observable `name` at (t, y): pushes its value and returns 1, or returns 0 (no such observable). */
int lfb_push_observable(lua_State *L, const lf_system *sys, const char *name, double t, const double *y);
int lfb_push_observable(lua_State *L, const lf_system *sys, const char *name, double t, const double *y)
{
    int off = 0;
    for (int i = 0; i < lf_system_nobservables(sys); i++) {
        const lf_observable *o = lf_system_observable(sys, i);
        if (strcmp(o->name, name) == 0) {
            double *v = lua_newuserdatauv(L, (size_t)lf_system_observables_dim(sys) * sizeof(double), 0);
            lf_error e;
            if (lf_system_observe(sys, t, y, v, &e) != LF_OK) lfb_error(L, &e);
            push_observable(L, o, v + off);
            lua_remove(L, -2);
            return 1;
        }
        off += o->dim;
    }
    return 0;
}

/* Push the values of every trajectory column at (t, y) (the columns of the observables, in order);
 * returns their count. */
int lfb_push_columns(lua_State *L, const lf_system *sys, double t, const double *y);
int lfb_push_columns(lua_State *L, const lf_system *sys, double t, const double *y)
{
    const int dim = lf_system_observables_dim(sys);
    double vbuf[64], *v = dim <= 64 ? vbuf : lua_newuserdatauv(L, (size_t)dim * sizeof(double), 0);
    const int scratch = dim > 64;
    lf_error e;
    if (lf_system_observe(sys, t, y, v, &e) != LF_OK) lfb_error(L, &e);
    int n = 0, off = 0;
    for (int i = 0; i < lf_system_nobservables(sys); i++) {
        const lf_observable *o = lf_system_observable(sys, i);
        if (o->columns) {
            int ncol = 1;
            for (const char *c = o->columns; *c; c++) ncol += *c == ',';
            luaL_checkstack(L, ncol + 2, "columns");
            for (int k = 0; k < ncol; k++) lua_pushnumber(L, v[off + k]);
            n += ncol;
        }
        off += o->dim;
    }
    if (scratch) lua_remove(L, -n - 1);
    return n;
}

/* system:columns() -> array of the trajectory column names (observables' columns, in order) */
static int sys_columns(lua_State *L)
{
    lfb_system *s = lfb_checksystem(L, 1);
    lua_newtable(L);
    int n = 0;
    for (int i = 0; i < lf_system_nobservables(s->sys); i++) {
        const lf_observable *o = lf_system_observable(s->sys, i);
        if (!o->columns) continue;
        const char *c = o->columns;
        while (*c) {
            const char *end = strchr(c, ',');
            size_t len = end ? (size_t)(end - c) : strlen(c);
            lua_pushlstring(L, c, len);
            lua_rawseti(L, -2, ++n);
            c += len + (end ? 1 : 0);
        }
    }
    return 1;
}

/* system:observe(state [, t]) -> the column values as numbers (see columns) */
static int sys_observe(lua_State *L)
{
    lfb_system *s = lfb_checksystem(L, 1);
    lua_settop(L, 3);
    lfb_hold(L, 1, 0);
    double t = lua_isnoneornil(L, 3) ? 0 : lfb_checkfinite(L, 3, "argument #2 't' to 'system:observe'");
    double *y = arg_state(L, s, 2, "system:observe");
    return lfb_push_columns(L, s->sys, t, y);
}

/* system:observable(name, state [, t]) -> the named observable's value */
static int sys_observable(lua_State *L)
{
    lfb_system *s = lfb_checksystem(L, 1);
    const char *name = luaL_checkstring(L, 2);
    lua_settop(L, 4);
    lfb_hold(L, 1, 0);
    double t = lua_isnoneornil(L, 4) ? 0 : lfb_checkfinite(L, 4, "argument #3 't' to 'system:observable'");
    double *y = arg_state(L, s, 3, "system:observable");
    if (!lfb_push_observable(L, s->sys, name, t, y))
        return luaL_error(L, "system:observable: %s has no observable '%s'", lf_system_kind(s->sys), name);
    return 1;
}

/* Push {field = distance, ...}: the manifold's distance field by field between two states. */
void lfb_push_errors(lua_State *L, const lf_system *sys, const double *a, const double *b);
void lfb_push_errors(lua_State *L, const lf_system *sys, const double *a, const double *b)
{
    lua_createtable(L, 0, lf_system_nfields(sys));
    for (int i = 0; i < lf_system_nfields(sys); i++) {
        const lf_field *f = lf_system_field(sys, i);
        lua_pushnumber(L, lf_manifold_dist_range(lf_system_manifold(sys), f->first, f->count, a, b));
        lua_setfield(L, -2, f->name);
    }
}

/* system:error(state_a, state_b) -> {field = distance, ...} (manifold distance per field) */
static int sys_error(lua_State *L)
{
    lfb_system *s = lfb_checksystem(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_checktype(L, 3, LUA_TTABLE);
    lua_settop(L, 3);
    lfb_hold(L, 1, 0);
    double *a = arg_state(L, s, 2, "system:error (state 1)");
    double *b = arg_state(L, s, 3, "system:error (state 2)");
    lfb_push_errors(L, s->sys, a, b);
    return 1;
}

/* ---- rigid-only methods */
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

/* ---------------------------------------------------------------- indexing, printing */
static void push_factor_names(lua_State *L, const lf_manifold *M)
{
    const int n = lf_manifold_nfactors(M);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        const lf_factor *f = lf_manifold_factor(M, i);
        if (f->kind == LF_RM) lua_pushfstring(L, "r%d", f->nd);
        else lua_pushstring(L, lf_factor_kind_name(f->kind));
        lua_rawseti(L, -2, i + 1);
    }
}

static int sys_index(lua_State *L)
{
    lfb_system *s = lfb_checksystem(L, 1);
    const char *k = luaL_checkstring(L, 2);
    const lf_system *sys = s->sys;
    const int nb = lf_rigid_nbodies(sys);
    const lf_field *f = lf_system_find_field(sys, k);
    if (f) lfb_push_field(L, sys, f, lf_system_initial(sys));
    else if (strcmp(k, "kind") == 0) lua_pushstring(L, lf_system_kind(sys));
    else if (strcmp(k, "factors") == 0) push_factor_names(L, lf_system_manifold(sys));
    else if (strcmp(k, "trivialization") == 0)
        lua_pushstring(L, lf_manifold_trivialization(lf_system_manifold(sys)) == LF_LEFT_TRIVIALIZED ? "left" : "right");
    else if (strcmp(k, "forms") == 0) {
        lua_newtable(L);
        for (unsigned b = 1; b <= LF_FORM_CONSTRAINED; b <<= 1)
            if (lf_system_forms(sys) & b) {
                lua_pushboolean(L, 1);
                lua_setfield(L, -2, lf_form_name(b));
            }
    } else if (strcmp(k, "fields") == 0) {
        lua_createtable(L, lf_system_nfields(sys), 0);
        for (int i = 0; i < lf_system_nfields(sys); i++) {
            lua_pushstring(L, lf_system_field(sys, i)->name);
            lua_rawseti(L, -2, i + 1);
        }
    } else if (strcmp(k, "observables") == 0) {
        lua_createtable(L, lf_system_nobservables(sys), 0);
        for (int i = 0; i < lf_system_nobservables(sys); i++) {
            lua_pushstring(L, lf_system_observable(sys, i)->name);
            lua_rawseti(L, -2, i + 1);
        }
    } else if (strcmp(k, "has_energy") == 0) lua_pushboolean(L, lf_system_has_energy(sys));
    else if (lfb_spheres_index(L, sys, k)) { /* n, M, axis, potential, gradient, alpha ... (lspheres.c) */
    } else if (nb && strcmp(k, "n") == 0) lua_pushinteger(L, nb);
    else if (nb && strcmp(k, "inertia") == 0) {
        const double *J = lf_rigid_inertia(sys);
        if (nb == 1) lfb_pushvec3(L, J);
        else {
            lua_createtable(L, nb, 0);
            for (int i = 0; i < nb; i++) {
                lfb_pushvec3(L, J + 3 * i);
                lua_rawseti(L, -2, i + 1);
            }
        }
    } else if (nb && strcmp(k, "potential_name") == 0) lua_pushstring(L, lf_potential_name(lf_rigid_potential(sys)));
    else if (strcmp(k, "compiled") == 0) {
        if (!lfb_push_compiled(L, s)) lua_pushstring(L, "C built-in");
    } else if (strcmp(k, "params") == 0) {
        if (!lfb_push_params(L, s)) lua_pushnil(L);
    }
    else {
        luaL_getmetatable(L, LFB_SYSTEM);
        lua_getfield(L, -1, "methods");
        if (lua_getfield(L, -1, k) == LUA_TNIL) { /* an observable at the initial state (momentum, ...) */
            lua_pop(L, 3);
            if (!lfb_push_observable(L, sys, k, 0, lf_system_initial(sys))) lua_pushnil(L);
        }
    }
    return 1;
}

static int sys_tostring(lua_State *L)
{
    lfb_system *s = luaL_checkudata(L, 1, LFB_SYSTEM);
    if (s->finalized || !s->sys) {
        lua_pushstring(L, "lf.system (finalized)");
        return 1;
    }
    const lf_system *sys = s->sys;
    const int nb = lf_rigid_nbodies(sys);
    if (lfb_spheres_tostring(L, sys)) return 1;
    if (nb == 1) {
        const double *J = lf_rigid_inertia(sys);
        char buf[256];
        lf_potential_describe(lf_rigid_potential(sys), buf, sizeof buf);
        lua_pushfstring(L, "lf.rigidbody(inertia = {%f, %f, %f}, potential = %s)", J[0], J[1], J[2], buf);
    } else if (nb > 1)
        lua_pushfstring(L, "lf.bodies(%d bodies, potential = %s)", nb, lf_potential_name(lf_rigid_potential(sys)));
    else {
        const lf_manifold *M = lf_system_manifold(sys);
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        luaL_addstring(&b, "lf.");
        luaL_addstring(&b, lf_system_kind(sys));
        luaL_addstring(&b, "(");
        for (int i = 0; i < lf_manifold_nfactors(M); i++) {
            const lf_factor *f = lf_manifold_factor(M, i);
            char name[32];
            if (f->kind == LF_RM) snprintf(name, sizeof name, "r%d", f->nd);
            else snprintf(name, sizeof name, "%s", lf_factor_kind_name(f->kind));
            if (i) luaL_addstring(&b, " x ");
            luaL_addstring(&b, name);
        }
        luaL_addstring(&b, lf_manifold_trivialization(M) == LF_LEFT_TRIVIALIZED ? ", left-trivialized" : ", right-trivialized");
        const char *name = lf_lie_ode_name(sys);
        if (*name) {
            luaL_addstring(&b, ", f = ");
            luaL_addstring(&b, name);
        }
        luaL_addstring(&b, ")");
        luaL_pushresult(&b);
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

static const luaL_Reg sys_methods[] = {
    {"potential", sys_potential}, {"torque", sys_torque},   {"energy", sys_energy},         {"f", sys_f},
    {"columns", sys_columns},     {"observe", sys_observe}, {"observable", sys_observable},  {"error", sys_error},
    {"check_state", sys_check_state}, {"canonical", sys_canonical}, {"lane_model", sys_lane_model},
    {"set_params", lfb_sys_set_params}, {NULL, NULL}};

void lfb_open_systems(lua_State *L)
{
    luaL_newmetatable(L, LFB_SYSTEM);
    const luaL_Reg meta[] = {{"__gc", sys_gc}, {"__close", sys_gc}, {"__index", sys_index},
                             {"__tostring", sys_tostring}, {NULL, NULL}};
    luaL_setfuncs(L, meta, 0);
    luaL_newlib(L, sys_methods);
    lua_setfield(L, -2, "methods");
    lua_pop(L, 1);

    luaL_newmetatable(L, LFB_POTENTIAL);
    const luaL_Reg pmeta[] = {{"__index", pot_index}, {"__tostring", pot_tostring}, {"__gc", pot_gc}, {NULL, NULL}};
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
