/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — the object layer: the userdata every library of the binding shares, and
 * their lifetimes.
 *
 * - Systems (lf.system over any lf_system): creation, checking, retain/release by integrators and
 *   holds, __gc; the surface every system has (fields and observables from its schema, sys:energy,
 *   :f, :columns, :observe, :observable, :error, :check_state, :canonical, :set_params, sys.compiled,
 *   sys.params); and the kinds (rigid bodies, Lie ODEs, spheres: lib/rigid.c, lib/lie_ode.c, lib/spheres.c)
 *   registered with their own fields, printing and methods (lfb_register_kind).
 * - Potential and forcing objects (lf.potential.*, lf.forcing.*: the constructors are in lib/potential.c
 *   and lib/forcing.c) and methods (lf.rkmk, lf.compose: lib/method.c): their userdata, metadata and
 *   lifetimes.
 * - Holds: a system and a method kept alive for the rest of a C call.
 *
 * Lifetimes: objects of the binding can be finalized by hand (getmetatable(x).__gc(x)) by any Lua
 * code a C function runs. Users (integrators, systems using a potential, compositions using a base
 * method, holds) retain an object; its __gc only marks it finalized (every later entry point refuses
 * it) and the last release frees the C side.
 *
 * Holds: a C function that uses a system or a method across Lua code takes a hold, a to-be-closed
 * stack slot (Lua 5.4 closes it when the function returns or raises) that retains both and releases
 * them on close. A hold of a system alone is the system's own hold object, made once and kept as
 * its uservalue LFB_SYSTEM_UV_HOLD (no allocation per call); nested calls put it in several slots,
 * each retaining once and releasing once. A hold with a method is a new object whose uservalue is
 * the method. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/bind.h"
#include "shared/trace.h"
#include "model/model_graph.h"

#define LFB_HOLD "lf.hold"
#define LFB_KINDS "lieflow.kinds" /* registry: kind name -> light userdata lfb_kind */

/* ---------------------------------------------------------------- potential objects */
/* A potential's lifetime follows the system's: systems using it retain it, and its __gc (also one
 * called by hand) frees the C potential only when no system uses it any more. */

static void pot_release(lfb_potential *u)
{
    if (!u) return;
    if (u->users > 0) u->users--;
    if (u->users == 0 && u->finalized) {
        lf_potential_free(u->p);
        u->p = NULL;
    }
}

lfb_potential *lfb_checkpotential(lua_State *L, int idx)
{
    lfb_potential *u = luaL_checkudata(L, idx, LFB_POTENTIAL);
    if (u->finalized || (!u->p && !u->free_body)) luaL_error(L, "the potential has been finalized and cannot be used");
    return u;
}

void lfb_newpotential(lua_State *L, lf_potential *p, int free_body, const lf_error *e)
{
    if (!p && !free_body) lfb_error(L, e);
    lfb_potential *u = lua_newuserdatauv(L, sizeof *u, 1); /* a user value: what the C potential uses (if any) */
    memset(u, 0, sizeof *u);
    u->p = p;
    u->free_body = free_body;
    luaL_setmetatable(L, LFB_POTENTIAL);
}

const lf_potential *lfb_system_use_potential(lua_State *L, lfb_system *s, int sys_idx, int pot_idx)
{
    pot_idx = lua_absindex(L, pot_idx);
    lfb_potential *u = lfb_checkpotential(L, pot_idx);
    lua_pushvalue(L, pot_idx);
    lua_setiuservalue(L, sys_idx, LFB_SYSTEM_UV_POTENTIAL); /* the system keeps the userdata alive */
    u->users++;                                             /* and its C potential (free_system) */
    s->pot_object = u;
    return u->p;
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

/* potential:energy(R), potential:torque(R) are of one body that only rotates; a potential of the
 * positions needs the bodies' masses and inertias: refused naming the way to it */
static lfb_potential *check_of_attitude(lua_State *L, const char *method)
{
    lfb_potential *u = lfb_checkpotential(L, 1);
    if (u->p && lf_potential_of_positions(u->p))
        luaL_error(L,
                   "potential:%s(R): the potential %s depends on the bodies' positions; evaluate it through bodies "
                   "with a mass: sys:potential(x, R), sys:torque(x, R), sys:force(x, R)",
                   method, lf_potential_name(u->p));
    return u;
}

static int pot_energy(lua_State *L)
{
    lfb_potential *u = check_of_attitude(L, "energy");
    double R[9], U;
    lf_error e;
    lfb_torotation(L, 2, R, "argument #1 to 'potential:energy'");
    if (lf_potential_eval(u->p, 1, R, &U, NULL, &e) != LF_OK) return lfb_error(L, &e);
    lua_pushnumber(L, U);
    return 1;
}

static int pot_torque(lua_State *L)
{
    lfb_potential *u = check_of_attitude(L, "torque");
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
    lfb_potential *u = lfb_checkpotential(L, 1);
    const char *k = luaL_checkstring(L, 2);
    if (strcmp(k, "name") == 0) lua_pushstring(L, lf_potential_name(u->p));
    else if (strcmp(k, "positions") == 0) lua_pushboolean(L, u->p && lf_potential_of_positions(u->p));
    else if (strcmp(k, "energy") == 0) lua_pushcfunction(L, pot_energy);
    else if (strcmp(k, "torque") == 0) lua_pushcfunction(L, pot_torque);
    else lua_pushnil(L);
    return 1;
}

/* ---------------------------------------------------------------- forcing objects */
/* A forcing's lifetime follows the systems' as a potential's does: systems using it retain it, and
 * its __gc frees the C forcing only when no system uses it any more. */
static void forcing_release(lfb_forcing *u)
{
    if (!u) return;
    if (u->users > 0) u->users--;
    if (u->users == 0 && u->finalized) {
        lf_forcing_free(u->f);
        u->f = NULL;
    }
}

lfb_forcing *lfb_testforcing(lua_State *L, int idx)
{
    lfb_forcing *u = luaL_testudata(L, idx, LFB_FORCING);
    if (u && (u->finalized || !u->f)) luaL_error(L, "the forcing has been finalized and cannot be used");
    return u;
}

void lfb_newforcing(lua_State *L, lf_forcing *f, const char *desc, const lf_error *e)
{
    if (!f) lfb_error(L, e);
    lfb_forcing *u = lua_newuserdatauv(L, sizeof *u, 0);
    memset(u, 0, sizeof *u);
    u->f = f;
    snprintf(u->desc, sizeof u->desc, "%s", desc);
    luaL_setmetatable(L, LFB_FORCING);
}

const lf_forcing *lfb_system_use_forcing(lua_State *L, lfb_system *s, int sys_idx, int obj_idx)
{
    obj_idx = lua_absindex(L, obj_idx);
    sys_idx = lua_absindex(L, sys_idx);
    lfb_forcing *u = lfb_testforcing(L, obj_idx);
    if (!u) luaL_error(L, "lfb_system_use_forcing: not an lf.forcing object");
    lfb_forcing **list = realloc(s->forcing_objects, ((size_t)s->nforcing_objects + 1) * sizeof *list);
    if (!list) luaL_error(L, "forcing: out of memory");
    s->forcing_objects = list;
    if (lua_getiuservalue(L, sys_idx, LFB_SYSTEM_UV_FORCING) != LUA_TTABLE) { /* the objects, kept alive */
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setiuservalue(L, sys_idx, LFB_SYSTEM_UV_FORCING);
    }
    lua_pushvalue(L, obj_idx);
    lua_rawseti(L, -2, s->nforcing_objects + 1);
    lua_pop(L, 1);
    list[s->nforcing_objects++] = u; /* and their C forcings (free_system) */
    u->users++;
    return u->f;
}

static int forcing_gc(lua_State *L)
{
    lfb_forcing *u = luaL_checkudata(L, 1, LFB_FORCING);
    u->finalized = 1;
    if (u->users == 0) {
        lf_forcing_free(u->f);
        u->f = NULL;
    }
    return 0;
}

static int forcing_tostring(lua_State *L)
{
    lfb_forcing *u = luaL_checkudata(L, 1, LFB_FORCING);
    if (u->finalized || !u->f) lua_pushstring(L, "lf.forcing (finalized)");
    else lua_pushfstring(L, "lf.forcing.%s", u->desc);
    return 1;
}

/* forcing.name (the C forcing's), .velocity, .time and .affine (what it depends on, how), .jacobian */
static int forcing_index(lua_State *L)
{
    lfb_forcing *u = luaL_checkudata(L, 1, LFB_FORCING);
    if (u->finalized || !u->f) return luaL_error(L, "the forcing has been finalized and cannot be used");
    const char *k = luaL_checkstring(L, 2);
    const unsigned d = lf_forcing_depends(u->f);
    if (strcmp(k, "name") == 0) lua_pushstring(L, lf_forcing_name(u->f));
    else if (strcmp(k, "velocity") == 0) lua_pushboolean(L, (d & LF_FORCING_VELOCITY) != 0);
    else if (strcmp(k, "time") == 0) lua_pushboolean(L, (d & LF_FORCING_TIME) != 0);
    else if (strcmp(k, "affine") == 0) lua_pushboolean(L, (d & LF_FORCING_AFFINE) != 0);
    else if (strcmp(k, "jacobian") == 0) lua_pushboolean(L, lf_forcing_has_jacobian(u->f));
    else lua_pushnil(L);
    return 1;
}

/* ---------------------------------------------------------------- systems: lifetime */

/* ---------------------------------------------------------------- system lifetime */
void lfb_check_initial(lua_State *L, lfb_system *s, int pairs, const char *fn)
{
    if (!s->fell_back && !pairs) return;
    const lf_system *sys = s->sys;
    const double *y = lf_system_initial(sys);
    const lf_manifold *M = lf_system_manifold(sys);
    double *xi = lua_newuserdatauv(L, (size_t)lf_manifold_ndim(M) * sizeof(double), 0), E = 0;
    lf_error e;
    int rc = LF_OK;
    if (strcmp(lf_system_kind(sys), "lie_ode") == 0) { /* its f (a rigid system's torque is checked by its steps) */
        rc = lf_system_f(sys, 0, y, xi, &e);
        for (int i = 0; rc == LF_OK && i < lf_manifold_ndim(M); i++)
            if (!isfinite(xi[i]))
                rc = lf_error_set(&e, LF_EDOMAIN, "f is not finite (component %d = %g)", i + 1, xi[i]);
    }
    if (rc == LF_OK && lf_system_has_energy(sys)) {
        rc = lf_system_energy(sys, y, &E, &e);
        if (rc == LF_OK && !isfinite(E)) rc = lf_error_set(&e, LF_EDOMAIN, "the energy is not finite (%g)", E);
    }
    lua_pop(L, 1);
    if (rc != LF_OK) luaL_error(L, "%s: the model fails at the initial state: %s", fn, e.msg);
}

lfb_system *lfb_newsystem(lua_State *L)
{
    lfb_system *s = lua_newuserdatauv(L, sizeof *s, LFB_SYSTEM_NUV);
    memset(s, 0, sizeof *s);
    for (int i = 0; i < LFB_NREF; i++) s->ref[i] = LUA_NOREF;
    s->L = L;
    luaL_setmetatable(L, LFB_SYSTEM);
    return s;
}

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
    for (int i = LFB_FORCING_OWN - 1; i >= 0; i--) { /* the sum before its parts */
        lf_forcing_free(s->forcing_own[i]);
        s->forcing_own[i] = NULL;
    }
    s->forcing_compiled = NULL;
    for (int i = 0; i < s->nforcing_objects; i++) forcing_release(s->forcing_objects[i]);
    free(s->forcing_objects);
    s->forcing_objects = NULL;
    s->nforcing_objects = 0;
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

/* ---------------------------------------------------------------- methods (lf.rkmk, lf.compose) */

/* ---------------------------------------------------------------- methods and their metadata */
/* A method's metadata as the table lf.methods() lists (implementation: "C", "C (user tableau)", ...). */
void lfb_push_method_info(lua_State *L, const lf_method *method, const char *impl)
{
    const lf_method_info *m = lf_method_get_info(method);
    const lf_method_rigid_info *r = lf_method_get_rigid_info(method);
    lua_createtable(L, 0, 17);
    lua_pushstring(L, m->name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, m->title);
    lua_setfield(L, -2, "title");
    lua_pushstring(L, m->reference);
    lua_setfield(L, -2, "reference");
    lua_pushstring(L, m->family);
    lua_setfield(L, -2, "family");
    lua_pushinteger(L, m->order);
    lua_setfield(L, -2, "order");
    lua_pushboolean(L, m->symmetric);
    lua_setfield(L, -2, "symmetric");
    lua_pushstring(L, m->symplectic);
    lua_setfield(L, -2, "symplectic");
    lua_pushboolean(L, m->implicit);
    lua_setfield(L, -2, "implicit");
    lua_pushboolean(L, m->adaptive);
    lua_setfield(L, -2, "adaptive");
    lua_pushstring(L, lf_form_name(m->form));
    lua_setfield(L, -2, "form");
    lua_pushboolean(L, r->explicit_in_torque);
    lua_setfield(L, -2, "explicit_in_torque");
    lua_pushboolean(L, r->momentum_conserving);
    lua_setfield(L, -2, "momentum_conserving");
    lua_pushboolean(L, r->free_body_only);
    lua_setfield(L, -2, "free_body_only");
    lua_pushboolean(L, r->lanes);
    lua_setfield(L, -2, "lanes");
    lua_pushboolean(L, r->translation);
    lua_setfield(L, -2, "translation");
    lua_pushboolean(L, r->forcing);
    lua_setfield(L, -2, "forcing");
    lua_pushstring(L, impl);
    lua_setfield(L, -2, "implementation");
}

static void method_free(lua_State *L, int idx, lfb_method *u)
{
    idx = lua_absindex(L, idx);
    lf_method_free(u->m);
    u->m = NULL;
    if (lua_getiuservalue(L, idx, 1) == LUA_TUSERDATA) lfb_method_release(L, -1);
    lua_pop(L, 1);
}

void lfb_method_retain(lua_State *L, int idx)
{
    lfb_method *u = luaL_testudata(L, idx, LFB_METHOD);
    if (u) u->users++;
}

void lfb_method_release(lua_State *L, int idx)
{
    lfb_method *u = luaL_testudata(L, idx, LFB_METHOD);
    if (!u) return;
    if (u->users > 0) u->users--;
    if (u->users == 0 && u->finalized && u->m) method_free(L, idx, u);
}

static int method_gc(lua_State *L)
{
    lfb_method *u = luaL_checkudata(L, 1, LFB_METHOD);
    u->finalized = 1;
    if (u->users == 0 && u->m) method_free(L, 1, u);
    return 0;
}

/* The method at idx if it is an lf.rkmk / lf.compose method not finalized, else NULL. */
static lfb_method *testmethod(lua_State *L, int idx)
{
    lfb_method *u = luaL_testudata(L, idx, LFB_METHOD);
    return u && !u->finalized && u->m ? u : NULL;
}

/* The method at idx (an lf.rkmk / lf.compose method); fn's error names a finalized one as such. */
static lfb_method *checkusermethod(lua_State *L, int idx, const char *fn)
{
    lfb_method *u = testmethod(L, idx);
    if (u) return u;
    if (luaL_testudata(L, idx, LFB_METHOD)) luaL_error(L, "%s: the method has been finalized and cannot be used", fn);
    luaL_error(L, "%s: a method name or an lf.rkmk / lf.compose method expected, got %s", fn, lfb_typename(L, idx));
    return NULL;
}

lfb_method *lfb_newmethod(lua_State *L, lf_method *m, int base_idx)
{
    if (base_idx) base_idx = lua_absindex(L, base_idx);
    lfb_method *u = lua_newuserdatauv(L, sizeof *u, 1);
    *u = (lfb_method){.m = m};
    luaL_setmetatable(L, LFB_METHOD);
    if (base_idx && lua_type(L, base_idx) == LUA_TUSERDATA) { /* the base must outlive the composite */
        lua_pushvalue(L, base_idx);
        lua_setiuservalue(L, -2, 1);
        lfb_method_retain(L, base_idx);
    }
    return u;
}

lfb_method *lfb_checkusermethod(lua_State *L, int idx, const char *fn) { return checkusermethod(L, idx, fn); }

/* ---------------------------------------------------------------- compositions (compose.h) */
/* The method at idx: a registered method's name, or an lf.rkmk / lf.compose method. */
const lf_method *lfb_checkmethod(lua_State *L, int idx, const char *fn)
{
    if (lua_type(L, idx) == LUA_TSTRING) {
        const lf_method *m = lf_method_find(lua_tostring(L, idx));
        if (!m) luaL_error(L, "%s: unknown method '%s' (lf.methods() lists them)", fn, lua_tostring(L, idx));
        return m;
    }
    return checkusermethod(L, idx, fn)->m;
}

static int method_index(lua_State *L)
{
    lfb_method *u = luaL_checkudata(L, 1, LFB_METHOD);
    if (!testmethod(L, 1)) return luaL_error(L, "the method has been finalized");
    lfb_push_method_info(L, u->m, lf_compose_base(u->m) ? "C (composition)" : "C (user tableau)");
    lua_getfield(L, -1, luaL_checkstring(L, 2));
    return 1;
}

static int method_tostring(lua_State *L)
{
    lfb_method *u = luaL_checkudata(L, 1, LFB_METHOD);
    if (!testmethod(L, 1)) lua_pushstring(L, "lf.rkmk (finalized)");
    else if (lf_compose_base(u->m)) {
        const lf_method_info *m = lf_method_get_info(u->m);
        lua_pushfstring(L, "lf.compose(%s, order %d)", m->name, m->order);
    } else {
        const lf_method_info *m = lf_method_get_info(u->m);
        lua_pushfstring(L, "lf.rkmk(%s, order %d, %s%s)", m->name, m->order, m->implicit ? "implicit" : "explicit",
                        m->symmetric ? ", symmetric" : "");
    }
    return 1;
}

/* ---------------------------------------------------------------- holds */
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

/* ---------------------------------------------------------------- the surface of every system */

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

/* A copy of the parameter value at idx (numbers as they are, vec3 / mat3 / tables of numbers as new
 * vec3 / mat3), so that changing the caller's table later changes nothing. */
static void push_param_copy(lua_State *L, int idx, const char *key, const char *fn)
{
    double v[9];
    int n = lfb_params_read_one(L, idx, key, v, fn);
    if (n == 1) lua_pushnumber(L, v[0]);
    else if (n == 3) lfb_pushvec3(L, v);
    else lfb_pushmat3(L, v);
}

int lfb_store_params(lua_State *L, lfb_system *s, int t, double *par, int maxpar, const char *fn)
{
    if (lua_getfield(L, t, "params") == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    const int p = lua_gettop(L);
    int n = lfb_params_read(L, p, par, maxpar, fn); /* checks every value */
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, p)) {
        push_param_copy(L, -1, lua_tostring(L, -2), fn);
        lua_remove(L, -2);
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, -4);
    }
    if (s->ref[LFB_REF_PARAMS] != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, s->ref[LFB_REF_PARAMS]);
    s->ref[LFB_REF_PARAMS] = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pop(L, 1);
    return n;
}

int lfb_push_params(lua_State *L, const lfb_system *s)
{
    if (s->ref[LFB_REF_PARAMS] == LUA_NOREF) return 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->ref[LFB_REF_PARAMS]);
    return 1;
}

/* ---------------------------------------------------------------- sys.compiled, sys:set_params */
int lfb_push_compiled(lua_State *L, const lfb_system *s)
{
    if (s->ref[LFB_REF_COMPILED] == LUA_NOREF) return 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->ref[LFB_REF_COMPILED]);
    return 1;
}

static const char *shape_name(int n) { return n == 1 ? "a number" : n == 3 ? "a vec3" : "a mat3"; }

/* sys:set_params{name = value, ...}: new values for some of the system's parameters (same names
 * and sizes as given at construction); the compiled model takes them without compiling again */
int lfb_sys_set_params(lua_State *L)
{
    lfb_system *s = lfb_checksystem(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    lfb_hold(L, 1, 0);
    if (!lfb_push_params(L, s)) return luaL_error(L, "system:set_params: the system has no parameters to change (it was made without "
                          "'params' for its Lua functions; the params of a built-in are fixed when it is made)");
    const int cur = lua_gettop(L);
    /* check every new value first (names known, same size), then copy */
    lua_newtable(L);
    const int next = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, cur)) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, next);
    }
    lua_pushnil(L);
    while (lua_next(L, 2)) {
        if (lua_type(L, -2) != LUA_TSTRING) return luaL_error(L, "system:set_params: parameter names are strings");
        const char *key = lua_tostring(L, -2);
        lua_pushvalue(L, -2);
        if (lua_rawget(L, cur) == LUA_TNIL) return luaL_error(L, "system:set_params: unknown parameter '%s'", key);
        double a[9], b[9];
        int na = lfb_params_read_one(L, -1, key, a, "system:set_params");
        int nb = lfb_params_read_one(L, -2, key, b, "system:set_params");
        if (na != nb)
            return luaL_error(L, "system:set_params: parameter '%s' is %s, got %s", key, shape_name(na), shape_name(nb));
        lua_pop(L, 1);
        push_param_copy(L, -1, key, "system:set_params");
        lua_pushvalue(L, -3);
        lua_insert(L, -2);
        lua_rawset(L, next);
        lua_pop(L, 1);
    }
    double *par = lua_newuserdatauv(L, LFB_MAXPAR * sizeof(double), 0);
    int n = lfb_params_read(L, next, par, LFB_MAXPAR, "system:set_params");
    lf_error e;
    int rc = LF_OK;
    /* every compiled part of the model: the potential, its inner potential, a Lie ODE or spheres system */
    lf_compiled *parts[] = {s->pot ? lf_potential_compiled(s->pot) : NULL,
                            s->pot_inner ? lf_potential_compiled(s->pot_inner) : NULL, lf_system_compiled(s->sys),
                            s->forcing_compiled};
    for (int k = 0; k < 4 && rc == LF_OK; k++)
        if (parts[k]) rc = lf_compiled_set_params(parts[k], n, par, &e);
    if (rc != LF_OK) return lfb_error_in(L, "system:set_params", &e);
    lua_pushvalue(L, next); /* the interpreted path reads the table */
    luaL_unref(L, LUA_REGISTRYINDEX, s->ref[LFB_REF_PARAMS]);
    s->ref[LFB_REF_PARAMS] = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_settop(L, 1);
    return 1;
}

/* ---------------------------------------------------------------- kinds */
void lfb_register_kind(lua_State *L, const lfb_kind *k)
{
    lua_getfield(L, LUA_REGISTRYINDEX, LFB_KINDS);
    lua_pushlightuserdata(L, (void *)k);
    lua_setfield(L, -2, k->name);
    lua_pop(L, 1);
}

/* The kind of a system, or NULL (a kind no library registered). */
static const lfb_kind *kind_of(lua_State *L, const lf_system *sys)
{
    lua_getfield(L, LUA_REGISTRYINDEX, LFB_KINDS);
    lua_getfield(L, -1, lf_system_kind(sys));
    const lfb_kind *k = lua_touserdata(L, -1);
    lua_pop(L, 2);
    return k;
}

static lua_CFunction kind_method(const lfb_kind *k, const char *name)
{
    for (const luaL_Reg *r = k && k->methods ? k->methods : NULL; r && r->name; r++)
        if (strcmp(r->name, name) == 0) return r->func;
    return NULL;
}

/* A method of another kind called on this system: say so (instead of "attempt to call a nil value"). */
static int wrong_kind(lua_State *L)
{
    lfb_system *s = lfb_checksystem(L, 1);
    return luaL_error(L, "system:%s: a %s system has no method '%s' (it is one of %s)", lua_tostring(L, lua_upvalueindex(1)),
                      lf_system_kind(s->sys), lua_tostring(L, lua_upvalueindex(1)), lua_tostring(L, lua_upvalueindex(2)));
}

/* Push wrong_kind for `name` if it is a method of some registered kind; returns whether it did. */
static int push_wrong_kind(lua_State *L, const char *name)
{
    luaL_Buffer b;
    int found = 0;
    lua_getfield(L, LUA_REGISTRYINDEX, LFB_KINDS);
    const int kinds = lua_gettop(L);
    luaL_buffinit(L, &b);
    lua_pushnil(L);
    while (lua_next(L, kinds)) {
        const lfb_kind *k = lua_touserdata(L, -1);
        lua_pop(L, 1);
        if (k && kind_method(k, name)) {
            if (found++) luaL_addstring(&b, ", ");
            luaL_addstring(&b, k->what);
        }
    }
    if (!found) {
        lua_settop(L, kinds - 1);
        return 0;
    }
    luaL_pushresult(&b);
    lua_pushstring(L, name);
    lua_insert(L, -2);
    lua_pushcclosure(L, wrong_kind, 2);
    lua_remove(L, kinds);
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

static void push_names(lua_State *L, int n, const char *(*name)(const lf_system *, int), const lf_system *sys)
{
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushstring(L, name(sys, i));
        lua_rawseti(L, -2, i + 1);
    }
}
static const char *field_name(const lf_system *sys, int i) { return lf_system_field(sys, i)->name; }
static const char *observable_name(const lf_system *sys, int i) { return lf_system_observable(sys, i)->name; }

/* sys.<k> from the system's schema: fields, kind, factors, trivialization, forms, ... (1), or 0 */
static int schema_index(lua_State *L, lfb_system *s, const char *k)
{
    const lf_system *sys = s->sys;
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
    } else if (strcmp(k, "fields") == 0) push_names(L, lf_system_nfields(sys), field_name, sys);
    else if (strcmp(k, "observables") == 0) push_names(L, lf_system_nobservables(sys), observable_name, sys);
    else if (strcmp(k, "has_energy") == 0) lua_pushboolean(L, lf_system_has_energy(sys));
    else if (strcmp(k, "compiled") == 0) {
        if (!lfb_push_compiled(L, s)) lua_pushstring(L, "C built-in");
    } else if (strcmp(k, "params") == 0) {
        if (!lfb_push_params(L, s)) lua_pushnil(L);
    } else
        return 0;
    return 1;
}

/* sys.<k>: the schema, the kind's own fields, the methods (the kind's, then every system's), an
 * observable at the initial state, a method of another kind (an error when called), else nil */
static int sys_index(lua_State *L)
{
    lfb_system *s = lfb_checksystem(L, 1);
    const char *k = luaL_checkstring(L, 2);
    const lfb_kind *kind = kind_of(L, s->sys);
    if (schema_index(L, s, k) || (kind && kind->index && kind->index(L, s, k))) return 1;
    lua_CFunction m = kind_method(kind, k);
    if (m) {
        lua_pushcfunction(L, m);
        return 1;
    }
    luaL_getmetatable(L, LFB_SYSTEM);
    lua_getfield(L, -1, "methods");
    if (lua_getfield(L, -1, k) != LUA_TNIL) return 1;
    lua_pop(L, 3);
    if (!lfb_push_observable(L, s->sys, k, 0, lf_system_initial(s->sys)) && !push_wrong_kind(L, k)) lua_pushnil(L);
    return 1;
}

static int sys_tostring(lua_State *L)
{
    lfb_system *s = luaL_checkudata(L, 1, LFB_SYSTEM);
    if (s->finalized || !s->sys) {
        lua_pushstring(L, "lf.system (finalized)");
        return 1;
    }
    const lfb_kind *kind = kind_of(L, s->sys);
    if (!kind || !kind->tostring || !kind->tostring(L, s)) lua_pushfstring(L, "lf.system(%s)", lf_system_kind(s->sys));
    return 1;
}

void lfb_list_add_once(lua_State *L, int list, int set, const char *name)
{
    if (lua_getfield(L, set, name) == LUA_TNIL) {
        lua_pushboolean(L, 1);
        lua_setfield(L, set, name);
        lua_pushstring(L, name);
        lua_rawseti(L, list, (lua_Integer)lua_rawlen(L, list) + 1);
    }
    lua_pop(L, 1);
}

/* __lf_fields (the REPL's completion): the schema's names, the methods of every system and the kind's,
 * each once (the observable energy and the method sys:energy, the kind's own lane_model) */
static int sys_fields(lua_State *L)
{
    lfb_system *s = lfb_checksystem(L, 1);
    static const char *const schema[] = {"kind", "factors", "trivialization", "forms", "fields", "observables",
                                         "has_energy", "compiled", "params", NULL};
    lua_settop(L, 1);
    lua_newtable(L); /* 2: the list */
    lua_newtable(L); /* 3: the names in it */
    for (int i = 0; schema[i]; i++) lfb_list_add_once(L, 2, 3, schema[i]);
    for (int i = 0; i < lf_system_nfields(s->sys); i++) lfb_list_add_once(L, 2, 3, lf_system_field(s->sys, i)->name);
    for (int i = 0; i < lf_system_nobservables(s->sys); i++)
        lfb_list_add_once(L, 2, 3, lf_system_observable(s->sys, i)->name);
    const lfb_kind *kind = kind_of(L, s->sys);
    for (const char *const *f = kind && kind->fields ? kind->fields : NULL; f && *f; f++)
        lfb_list_add_once(L, 2, 3, *f);
    for (const luaL_Reg *r = kind && kind->methods ? kind->methods : NULL; r && r->name; r++)
        lfb_list_add_once(L, 2, 3, r->name);
    luaL_getmetatable(L, LFB_SYSTEM);
    lua_getfield(L, -1, "methods");
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) == LUA_TSTRING) lfb_list_add_once(L, 2, 3, lua_tostring(L, -1));
    }
    lua_settop(L, 2);
    return 1;
}

/* sys:lane_model() of a system whose kind has no lanes: nil (rigid bodies have their own) */
static int sys_lane_model(lua_State *L)
{
    lfb_checksystem(L, 1);
    lua_pushnil(L);
    return 1;
}

static const luaL_Reg sys_methods[] = {
    {"energy", sys_energy},           {"f", sys_f},                     {"columns", sys_columns},
    {"observe", sys_observe},         {"observable", sys_observable},   {"error", sys_error},
    {"check_state", sys_check_state}, {"canonical", sys_canonical},     {"set_params", lfb_sys_set_params},
    {"lane_model", sys_lane_model},   {NULL, NULL}};

/* The metatables of systems, potentials and methods, and the registry of kinds. */
void lfb_open_objects(lua_State *L)
{
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, LFB_KINDS);
    luaL_newmetatable(L, LFB_SYSTEM);
    const luaL_Reg meta[] = {{"__gc", sys_gc},   {"__close", sys_gc},        {"__index", sys_index},
                             {"__tostring", sys_tostring}, {"__lf_fields", sys_fields}, {NULL, NULL}};
    luaL_setfuncs(L, meta, 0);
    luaL_newlib(L, sys_methods);
    lua_setfield(L, -2, "methods");
    lua_pop(L, 1);

    luaL_newmetatable(L, LFB_POTENTIAL);
    const luaL_Reg pmeta[] = {{"__index", pot_index}, {"__tostring", pot_tostring}, {"__gc", pot_gc}, {NULL, NULL}};
    luaL_setfuncs(L, pmeta, 0);
    lua_pop(L, 1);

    luaL_newmetatable(L, LFB_FORCING);
    const luaL_Reg fmeta[] = {
        {"__index", forcing_index}, {"__tostring", forcing_tostring}, {"__gc", forcing_gc}, {NULL, NULL}};
    luaL_setfuncs(L, fmeta, 0);
    lua_pop(L, 1);

    luaL_newmetatable(L, LFB_METHOD);
    const luaL_Reg mmeta[] = {{"__gc", method_gc}, {"__index", method_index}, {"__tostring", method_tostring},
                              {NULL, NULL}};
    luaL_setfuncs(L, mmeta, 0);
    lua_pop(L, 1);
}
