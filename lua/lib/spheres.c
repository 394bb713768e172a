/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — systems on (S^2)^n lifted to SO(3) (core/model/spheres.h):
 *
 *   core.spheres.new{M = number | n x n rows, q = {q_1, ..., q_n}, qdot = {...} | omega = {...},
 *                    potential = V(qs), gradient = dV(qs) -> {g_1, ..., g_n}, axis = {...}}
 *   core.spheres.pendulum{m=, l=, g=, up=, q=, qdot= | omega=, axis=}
 *   core.spheres.double_pendulum{m1=, m2=, l1=, l2=, g=, up=, q=, qdot= | omega=, axis=}
 *   core.spheres.dipoles{rows=, cols=, spacing=, m=, l=, moment=, q=, qdot= | omega=, axis=}
 *   sys:potential(qs) -> V, sys:gradient(qs) -> {dV/dq_i}, sys:alpha([state]) -> {alpha_i},
 *   sys.n, sys.M, sys.axis, sys.potential_name
 *
 * Vectors: q, qdot, omega are arrays of n vec3 (plain tables accepted; for n = 1 a single vector
 * too). The Lua potential receives the array qs of n vec3 and returns a number; the gradient returns
 * n vectors (the Euclidean gradient in R^3 of each q_i). lf.spheres (scripts/lieflow/init.lua)
 * supplies the gradient by forward-mode autodiff when only V is given. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/bind.h"
#include "lib/open.h"
#include "shared/model.h"
#include "shared/trace.h"

/* ---------------------------------------------------------------- reading vectors */
/* n vectors from the value at idx: an array of n vectors, or (n == 1 allowed) one vector. */
static void read_vectors(lua_State *L, int idx, int n, double *out, const char *fn, const char *what)
{
    idx = lua_absindex(L, idx);
    char w[128];
    int single = lfb_testvec3(L, idx) != NULL;
    if (!single && lua_type(L, idx) == LUA_TTABLE) {
        lua_rawgeti(L, idx, 1);
        single = lua_type(L, -1) == LUA_TNUMBER;
        lua_pop(L, 1);
    }
    if (single) {
        if (n != 1)
            luaL_error(L, "%s: '%s' must be an array of %d vectors (one per sphere), got a single vector", fn, what, n);
        snprintf(w, sizeof w, "%s: '%s'", fn, what);
        lfb_tovec3(L, idx, out, w);
        return;
    }
    if (lua_type(L, idx) != LUA_TTABLE)
        luaL_error(L, "%s: '%s' must be an array of %d vectors, got %s", fn, what, n, lfb_typename(L, idx));
    int len = (int)lua_rawlen(L, idx);
    if (len != n) luaL_error(L, "%s: '%s' must hold %d vectors (one per sphere), got %d", fn, what, n, len);
    for (int i = 0; i < n; i++) {
        snprintf(w, sizeof w, "%s: %s[%d]", fn, what, i + 1);
        lua_rawgeti(L, idx, i + 1);
        lfb_tovec3(L, -1, out + 3 * i, w);
        lua_pop(L, 1);
    }
}

/* number of vectors in field q of the table at t (an array of vectors, or one vector) */
static int count_q(lua_State *L, int t, const char *fn)
{
    int tp = lua_getfield(L, t, "q");
    int n;
    if (tp == LUA_TNIL) return luaL_error(L, "%s: field 'q' (the initial unit vectors, an array of vec3) is required", fn);
    if (lfb_testvec3(L, -1)) n = 1;
    else if (tp == LUA_TTABLE) {
        lua_rawgeti(L, -1, 1);
        n = lua_type(L, -1) == LUA_TNUMBER ? 1 : (int)lua_rawlen(L, -2);
        lua_pop(L, 1);
    } else
        return luaL_error(L, "%s: field 'q' must be an array of unit vectors, got %s", fn, lfb_typename(L, -1));
    lua_pop(L, 1);
    if (n < 1) return luaL_error(L, "%s: field 'q' is empty", fn);
    return n;
}

/* qdot or omega (optional, not both; default 0) of the table at t into y + 3n, with q already in
 * y[0..3n). qdot must be tangent: |q . qdot| <= 1e-12 max(1, |qdot|). */
static void read_velocities(lua_State *L, int t, int n, double *y, const char *fn)
{
    int has_qd = lua_getfield(L, t, "qdot") != LUA_TNIL, has_w = lua_getfield(L, t, "omega") != LUA_TNIL;
    if (has_qd && has_w) luaL_error(L, "%s: give either 'qdot' or 'omega', not both", fn);
    if (has_w) read_vectors(L, -1, n, y + 3 * n, fn, "omega");
    else if (has_qd) {
        double *qd = lua_newuserdatauv(L, 3 * (size_t)n * sizeof(double), 0);
        read_vectors(L, -3, n, qd, fn, "qdot");
        for (int i = 0; i < n; i++) {
            double d = lf_v3_dot(y + 3 * i, qd + 3 * i), tol = 1e-12 * fmax(1, lf_v3_norm(qd + 3 * i));
            if (!(fabs(d) <= tol)) {
                char msg[160]; /* lua_pushfstring has no %g */
                snprintf(msg, sizeof msg, "qdot[%d] is not tangent to the sphere at q[%d]: q . qdot = %g (tolerance %.1g)",
                         i + 1, i + 1, d, tol);
                luaL_error(L, "%s: %s", fn, msg);
            }
        }
        lf_spheres_omega_from_qdot(n, y, qd, y + 3 * n);
        lua_pop(L, 1);
    } else
        memset(y + 3 * n, 0, 3 * (size_t)n * sizeof(double));
    lua_pop(L, 2);
}

/* q (required) and the velocities of the table at t into y = (q, omega), 6n doubles */
static void read_state(lua_State *L, int t, int n, double *y, const char *fn)
{
    lua_getfield(L, t, "q");
    read_vectors(L, -1, n, y, fn, "q");
    lua_pop(L, 1);
    read_velocities(L, t, n, y, fn);
}

static void args_table(lua_State *L, const char *fn, const char *const *keys)
{
    if (lua_type(L, 1) != LUA_TTABLE) luaL_error(L, "%s: table of parameters expected, got %s", fn, lfb_typename(L, 1));
    lua_settop(L, 1);
    lfb_check_keys(L, 1, keys, fn, "field");
}

/* the new system userdata at the top gets sys (or raises e); axis from field 'axis' */
static int finish(lua_State *L, lfb_system *s, lf_system *sys, const lf_error *e, const char *fn)
{
    if (!sys) return lfb_error(L, e);
    s->sys = sys;
    double k[3];
    if (lfb_optfield_vec3(L, 1, "axis", k, fn)) {
        lf_error e2;
        if (lf_spheres_set_axis(sys, k, &e2) != LF_OK) return lfb_error(L, &e2);
    }
    lfb_check_initial(L, s, 0, fn);
    return 1;
}

/* ---------------------------------------------------------------- Lua potentials */
typedef struct {
    lfb_system *s;
    int n;
    const double *q;
} q_args;

/* V's arguments: the array qs, then the parameters if the system has them */
static int push_qs(lua_State *L, void *ud)
{
    const q_args *a = ud;
    luaL_checkstack(L, 4, "qs");
    lua_createtable(L, a->n, 0);
    for (int i = 0; i < a->n; i++) {
        lfb_pushvec3(L, a->q + 3 * i);
        lua_rawseti(L, -2, i + 1);
    }
    return 1 + lfb_push_params(L, a->s);
}

/* the same as traced values (inputs 0 .. 3n - 1), for the gradient at a point */
static int push_traced_qs(lua_State *L, int tidx, void *ud)
{
    const q_args *a = ud;
    luaL_checkstack(L, 4, "qs");
    lua_createtable(L, a->n, 0);
    for (int i = 0; i < a->n; i++) {
        lfb_trace_push_inputs(L, tidx, 3, a->q + 3 * i);
        lua_rawseti(L, -2, i + 1);
    }
    return 1 + lfb_push_params(L, a->s);
}

/* one vector raw (vec3 userdata or a table of 3 numbers) at idx into v; 0 if it is neither */
static int raw_vec(lua_State *L, int idx, double *v)
{
    const double *u = lfb_testvec3(L, idx);
    if (u) {
        memcpy(v, u, 3 * sizeof(double));
        return 1;
    }
    if (lua_type(L, idx) != LUA_TTABLE || lua_rawlen(L, idx) != 3) return 0;
    for (int k = 0; k < 3; k++) {
        int ok;
        lua_rawgeti(L, idx, k + 1);
        v[k] = lua_tonumberx(L, -1, &ok);
        lua_pop(L, 1);
        if (!ok) return 0;
    }
    return 1;
}

static int read_gradient(lua_State *L, int n, double *g, lf_error *err)
{
    const int top = lua_gettop(L);
    if (n == 1 && raw_vec(L, top, g)) return LF_OK;
    if (lua_type(L, top) != LUA_TTABLE || (int)lua_rawlen(L, top) != n)
        return lf_error_set(err, LF_ECALLBACK, "gradient dV(qs) returned %s, expected an array of %d vec3 (dV/dq_i)",
                            lfb_typename(L, top), n);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, top, i + 1);
        int ok = raw_vec(L, -1, g + 3 * i);
        const char *tn = lfb_typename(L, -1);
        lua_pop(L, 1);
        if (!ok) return lf_error_set(err, LF_ECALLBACK, "gradient dV(qs): element %d is %s, expected a vec3", i + 1, tn);
    }
    return LF_OK;
}

static int lua_potential(void *ctx, int n, const double *q, double *V, double *g, lf_error *err)
{
    lfb_system *s = ctx;
    lua_State *L = s->L;
    q_args a = {s, n, q};
    int rc;
    if (g && s->ref[LFB_REF_TAU] == LUA_NOREF) { /* no gradient function: V differentiated at q */
        rc = lfb_point_derivatives(L, s->ref[LFB_REF_U], push_traced_qs, lfb_trace_read_number, &a, 1, 3 * n, V, g,
                                   "autodiff gradient of V(qs)", err);
        s->L = L;
        return rc;
    }
    if (V) {
        rc = lfb_call(L, s->ref[LFB_REF_U], push_qs, &a, 1, "potential V(qs)", err);
        s->L = L; /* the callback may have rebound the system to another coroutine */
        if (rc != LF_OK) return rc;
        int ok;
        *V = lua_tonumberx(L, -1, &ok);
        if (!ok) rc = lf_error_set(err, LF_ECALLBACK, "potential V(qs) returned %s, expected a number", lfb_typename(L, -1));
        lua_pop(L, 1);
        if (rc != LF_OK) return rc;
    }
    if (g) {
        rc = lfb_call(L, s->ref[LFB_REF_TAU], push_qs, &a, 1, "gradient dV(qs)", err);
        s->L = L;
        if (rc != LF_OK) return rc;
        rc = read_gradient(L, n, g, err);
        lua_pop(L, 1);
        if (rc != LF_OK) return rc;
    }
    return LF_OK;
}

/* ---------------------------------------------------------------- constructors */
static int l_new(lua_State *L)
{
    const char *fn = "lf.spheres";
    static const char *const keys[] = {"M", "q", "qdot", "omega", "potential", "gradient", "axis", "compile", "params",
                                       "pair", "positions", "cutoff", NULL};
    args_table(L, fn, keys);
    const int n = count_q(L, 1, fn);
    double *buf = lua_newuserdatauv(L, ((size_t)n * n + 6 * (size_t)n) * sizeof(double), 0), *M = buf, *y = M + (size_t)n * n;
    int tm = lua_getfield(L, 1, "M");
    if (tm == LUA_TNUMBER) {
        if (n != 1) return luaL_error(L, "%s: 'M' is a number but there are %d spheres: give the %d x %d coupling as rows", fn, n, n, n);
        M[0] = lfb_checkfinite(L, -1, "lf.spheres: field 'M'");
    } else if (tm == LUA_TTABLE) {
        if ((int)lua_rawlen(L, -1) != n)
            return luaL_error(L, "%s: 'M' must have %d rows of %d numbers (one per sphere), got %d rows", fn, n, n,
                              (int)lua_rawlen(L, -1));
        for (int i = 0; i < n; i++) {
            if (lua_rawgeti(L, -1, i + 1) != LUA_TTABLE || (int)lua_rawlen(L, -1) != n)
                return luaL_error(L, "%s: row %d of 'M' must hold %d numbers", fn, i + 1, n);
            for (int j = 0; j < n; j++) {
                char w[64];
                snprintf(w, sizeof w, "%s: M[%d][%d]", fn, i + 1, j + 1);
                lua_rawgeti(L, -1, j + 1);
                M[(size_t)i * n + j] = lfb_checkfinite(L, -1, w);
                lua_pop(L, 1);
            }
            lua_pop(L, 1);
        }
    } else
        return luaL_error(L, "%s: field 'M' (a number for one sphere, n x n rows for n) is required, got %s", fn,
                          lfb_typename(L, -1));
    lua_pop(L, 1);
    read_state(L, 1, n, y, fn);
    int tv = lua_getfield(L, 1, "potential"), tg = lua_getfield(L, 1, "gradient");
    if (tv != LUA_TNIL && tv != LUA_TFUNCTION)
        return luaL_error(L, "%s: field 'potential' must be a function V(qs) returning a number, got %s", fn, lfb_typename(L, -2));
    if (tg != LUA_TNIL && tg != LUA_TFUNCTION)
        return luaL_error(L, "%s: field 'gradient' must be a function dV(qs) returning {dV/dq_1, ...}, got %s", fn,
                          lfb_typename(L, -1));
    if (tv == LUA_TNIL && tg != LUA_TNIL) return luaL_error(L, "%s: a 'gradient' needs its 'potential' V (for the energy)", fn);
    const int backend = lfb_compile_option(L, 1, fn);
    lfb_system *s = lfb_newsystem(L);
    const int ud = lua_gettop(L);
    lfb_store_params(L, s, 1, NULL, LFB_MAXPAR, fn);
    const int has_pair = lua_getfield(L, 1, "pair") != LUA_TNIL;
    lua_pop(L, 1);
    if (s->ref[LFB_REF_PARAMS] != LUA_NOREF && tv == LUA_TNIL && !has_pair)
        return luaL_error(L, "%s: 'params' are the last argument of a Lua potential; there is none", fn);
    lf_error e;
    lf_system *sys;
    char report[640] = "free (no potential)";
    lf_spheres_def def = {NULL, NULL, NULL, NULL};
    if (tv == LUA_TFUNCTION) {
        lfb_natural(L, -3);
        lua_pushvalue(L, -3);
        s->ref[LFB_REF_U] = luaL_ref(L, LUA_REGISTRYINDEX);
        if (tg == LUA_TFUNCTION) {
            lfb_natural(L, -2);
            lua_pushvalue(L, -2);
            s->ref[LFB_REF_TAU] = luaL_ref(L, LUA_REGISTRYINDEX);
        }
        def = (lf_spheres_def){"lua", lua_potential, s, NULL};
        if (backend >= 0) lfb_compile_spheres(L, s, n, y, backend, NULL, &def, fn, report, sizeof report);
        else snprintf(report, sizeof report, "interpreted: compile = false");
    }
    if (has_pair) { /* a pair kernel over the potential so far (def, owned by the kernel's definition) */
        char kreport[700];
        lf_spheres_def inner = def;
        lfb_pairs_spheres(L, s, 1, n, y, &inner, backend, &def, fn, kreport, sizeof kreport);
        size_t len = strlen(kreport);
        snprintf(kreport + len, sizeof kreport - len, "; potential: %s", report);
        lfb_set_compiled(L, s, kreport);
    } else if (lua_getfield(L, 1, "positions") != LUA_TNIL || lua_getfield(L, 1, "cutoff") != LUA_TNIL)
        return luaL_error(L, "%s: 'positions' and 'cutoff' belong to a 'pair' kernel; there is none", fn);
    else
        lfb_set_compiled(L, s, report);
    lua_settop(L, ud);
    sys = lf_spheres_new(n, M, def.potential ? &def : NULL, y, y + 3 * n, &e);
    return finish(L, s, sys, &e, fn);
}

static int l_pendulum(lua_State *L)
{
    const char *fn = "lf.spheres.pendulum";
    static const char *const keys[] = {"m", "l", "g", "up", "q", "qdot", "omega", "axis", NULL};
    args_table(L, fn, keys);
    double y[6], up[3] = {0, 0, 1};
    if (count_q(L, 1, fn) != 1) return luaL_error(L, "%s: 'q' must be one unit vector", fn);
    read_state(L, 1, 1, y, fn);
    lfb_optfield_vec3(L, 1, "up", up, fn);
    lfb_system *s = lfb_newsystem(L);
    lf_error e;
    lf_system *sys = lf_spheres_pendulum(lfb_optfield_number(L, 1, "m", 1, fn), lfb_optfield_number(L, 1, "l", 1, fn), lfb_optfield_number(L, 1, "g", 9.81, fn), up, y,
                                         y + 3, &e);
    return finish(L, s, sys, &e, fn);
}

static int l_double_pendulum(lua_State *L)
{
    const char *fn = "lf.spheres.double_pendulum";
    static const char *const keys[] = {"m1", "m2", "l1", "l2", "g", "up", "q", "qdot", "omega", "axis", NULL};
    args_table(L, fn, keys);
    double y[12], up[3] = {0, 0, 1};
    if (count_q(L, 1, fn) != 2) return luaL_error(L, "%s: 'q' must hold 2 unit vectors", fn);
    read_state(L, 1, 2, y, fn);
    lfb_optfield_vec3(L, 1, "up", up, fn);
    lfb_system *s = lfb_newsystem(L);
    lf_error e;
    lf_system *sys = lf_spheres_double_pendulum(lfb_optfield_number(L, 1, "m1", 1, fn), lfb_optfield_number(L, 1, "m2", 1, fn), lfb_optfield_number(L, 1, "l1", 1, fn),
                                                lfb_optfield_number(L, 1, "l2", 1, fn), lfb_optfield_number(L, 1, "g", 9.81, fn), up, y, y + 6, &e);
    return finish(L, s, sys, &e, fn);
}

static int l_dipoles(lua_State *L)
{
    const char *fn = "lf.spheres.dipoles";
    static const char *const keys[] = {"rows", "cols", "spacing", "m", "l", "moment", "q", "qdot", "omega", "axis", NULL};
    args_table(L, fn, keys);
    double rows = lfb_optfield_number(L, 1, "rows", 4, fn), cols = lfb_optfield_number(L, 1, "cols", 4, fn);
    if (!(rows >= 1 && rows <= 1000 && rows == floor(rows)) || !(cols >= 1 && cols <= 1000 && cols == floor(cols)))
        return luaL_error(L, "%s: 'rows' and 'cols' must be integers in 1..1000, got %s and %s", fn,
                          lua_tostring(L, (lua_pushnumber(L, rows), -1)), lua_tostring(L, (lua_pushnumber(L, cols), -1)));
    const int n = (int)rows * (int)cols;
    double l = lfb_optfield_number(L, 1, "l", 0.02, fn);
    double *y = lua_newuserdatauv(L, 6 * (size_t)n * sizeof(double), 0);
    if (lua_getfield(L, 1, "q") != LUA_TNIL) {
        lua_pop(L, 1);
        int nq = count_q(L, 1, fn);
        if (nq != n) return luaL_error(L, "%s: 'q' must hold rows x cols = %d unit vectors, got %d", fn, n, nq);
        read_state(L, 1, n, y, fn);
    } else { /* all needles along e1 */
        lua_pop(L, 1);
        for (int i = 0; i < n; i++) lf_v3_set(y + 3 * i, 1, 0, 0);
        read_velocities(L, 1, n, y, fn);
    }
    lfb_system *s = lfb_newsystem(L);
    lf_error e;
    lf_system *sys = lf_spheres_dipoles((int)rows, (int)cols, lfb_optfield_number(L, 1, "spacing", 1.2 * l, fn), lfb_optfield_number(L, 1, "m", 0.05, fn), l,
                                        lfb_optfield_number(L, 1, "moment", 0.1, fn), y, y + 3 * n, &e);
    return finish(L, s, sys, &e, fn);
}

/* ---------------------------------------------------------------- methods */
static lfb_system *checkspheres(lua_State *L, int idx, const char *fn)
{
    lfb_system *s = lfb_checksystem(L, idx);
    if (!lf_spheres_n(s->sys)) luaL_error(L, "%s: not a system on spheres (%s)", fn, lf_system_kind(s->sys));
    return s;
}

/* sys:potential([qs]) -> V (qs: the initial positions when absent) */
static int sph_potential(lua_State *L)
{
    lfb_system *s = checkspheres(L, 1, "system:potential");
    const int n = lf_spheres_n(s->sys);
    lua_settop(L, 2);
    lfb_hold(L, 1, 0);
    double *q = lua_newuserdatauv(L, 3 * (size_t)n * sizeof(double), 0), V;
    if (lua_isnil(L, 2)) memcpy(q, lf_system_initial(s->sys), 3 * (size_t)n * sizeof(double));
    else read_vectors(L, 2, n, q, "system:potential", "qs");
    lf_error e;
    if (lf_spheres_potential(s->sys, q, &V, NULL, &e) != LF_OK) return lfb_error(L, &e);
    lua_pushnumber(L, V);
    return 1;
}

static void push_vectors(lua_State *L, int n, const double *v)
{
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lfb_pushvec3(L, v + 3 * i);
        lua_rawseti(L, -2, i + 1);
    }
}

/* sys:gradient([qs]) -> {dV/dq_1, ...} */
static int sph_gradient(lua_State *L)
{
    lfb_system *s = checkspheres(L, 1, "system:gradient");
    const int n = lf_spheres_n(s->sys);
    lua_settop(L, 2);
    double *q = lua_newuserdatauv(L, 6 * (size_t)n * sizeof(double), 0), *g = q + 3 * n;
    if (lua_isnil(L, 2)) memcpy(q, lf_system_initial(s->sys), 3 * (size_t)n * sizeof(double));
    else read_vectors(L, 2, n, q, "system:gradient", "qs");
    lf_error e;
    if (lf_spheres_potential(s->sys, q, NULL, g, &e) != LF_OK) return lfb_error(L, &e);
    push_vectors(L, n, g);
    return 1;
}

/* sys:alpha([state]) -> {alpha_1, ...}: the angular acceleration at {q=, omega=} (default: initial) */
static int sph_alpha(lua_State *L)
{
    lfb_system *s = checkspheres(L, 1, "system:alpha");
    const int n = lf_spheres_n(s->sys);
    lua_settop(L, 2);
    lfb_hold(L, 1, 0);
    const size_t nw = lf_spheres_work_size(n);
    double *y = lua_newuserdatauv(L, (9 * (size_t)n + nw) * sizeof(double), 0), *al = y + 6 * n, *w = al + 3 * n;
    memcpy(y, lf_system_initial(s->sys), 6 * (size_t)n * sizeof(double));
    if (!lua_isnil(L, 2)) lfb_read_state(L, 2, s->sys, y, NULL, NULL, "system:alpha");
    lf_error e;
    if (lf_spheres_alpha(s->sys, y, y + 3 * n, al, w, &e) != LF_OK) return lfb_error(L, &e);
    push_vectors(L, n, al);
    return 1;
}

/* sys.<key> for systems on spheres: pushes and returns 1, or returns 0 */
static int sph_index(lua_State *L, lfb_system *s, const char *k)
{
    const lf_system *sys = s->sys;
    const int n = lf_spheres_n(sys);
    if (strcmp(k, "n") == 0) lua_pushinteger(L, n);
    else if (strcmp(k, "M") == 0) {
        const double *M = lf_spheres_mass(sys);
        if (n == 1) lua_pushnumber(L, M[0]);
        else {
            lua_createtable(L, n, 0);
            for (int i = 0; i < n; i++) {
                lua_createtable(L, n, 0);
                for (int j = 0; j < n; j++) {
                    lua_pushnumber(L, M[(size_t)i * n + j]);
                    lua_rawseti(L, -2, j + 1);
                }
                lua_rawseti(L, -2, i + 1);
            }
        }
    } else if (strcmp(k, "axis") == 0) lfb_pushvec3(L, lf_spheres_axis(sys));
    else if (strcmp(k, "potential_name") == 0) lua_pushstring(L, lf_spheres_potential_name(sys));
    else if (strcmp(k, "diagonal") == 0) lua_pushboolean(L, lf_spheres_diagonal(sys));
    else return 0;
    return 1;
}

/* "lf.spheres(n = 2, coupled M, potential = double_pendulum)" */
static int sph_tostring(lua_State *L, lfb_system *s)
{
    const lf_system *sys = s->sys;
    lua_pushfstring(L, "lf.spheres(n = %d, %s M, potential = %s)", lf_spheres_n(sys),
                    lf_spheres_diagonal(sys) ? "diagonal" : "coupled", lf_spheres_potential_name(sys));
    return 1;
}

static const luaL_Reg sph_methods[] = {
    {"potential", sph_potential}, {"gradient", sph_gradient}, {"alpha", sph_alpha}, {NULL, NULL}};
static const char *const sph_fields[] = {"n", "M", "axis", "potential_name", "diagonal", NULL};
static const lfb_kind spheres_kind = {"spheres", "systems on spheres", sph_index, sph_tostring, sph_methods, sph_fields};

void lfb_open_spheres(lua_State *L)
{
    lfb_register_kind(L, &spheres_kind);
    const luaL_Reg fns[] = {{"new", l_new},
                            {"pendulum", l_pendulum},
                            {"double_pendulum", l_double_pendulum},
                            {"dipoles", l_dipoles},
                            {NULL, NULL}};
    luaL_newlib(L, fns);
    lua_setfield(L, -2, "spheres");
}
