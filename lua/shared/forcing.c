/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — forcings of rigid bodies (core/model/forcing.h): the fields `forcing` and
 * `damping` of lf.rigidbody and lf.bodies, and the damping spec shared with lf.forcing.damping
 * (lib/forcing.c).
 *
 * A Lua forcing(t, state [, p]) returns {torque = ..., force = ...}: state.R, state.omega and, for
 * bodies that translate, state.x and state.v (one body: a mat3 / vec3 each; several: arrays of them);
 * torques in the body frame, forces in space (bodies that translate only), a missing one 0. It is
 * traced once at the initial state (t = 0) into an expression graph and compiled (lf_forcing_graph:
 * what it depends on read from the graph, its Jacobian in the velocities by forward mode) under the
 * system's option `compile`, like its potential; when it cannot be traced (compile = "auto") it is
 * called at each evaluation, counted as a forcing of the velocities and of t without a Jacobian, and
 * called once here at the initial state so that a wrong result is an error of the constructor. The
 * returned table is checked either way: unknown fields, wrong shapes and values that are not finite
 * are errors naming the field and the body. */
#include "shared/forcing.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/model.h"
#include "shared/trace.h"

/* ---------------------------------------------------------------- the returned table */
/* Where the result goes: plain numbers (tidx == 0: tau, F) or graph nodes of the trace at tidx (ids:
 * 3 nb torques, then 3 nb forces). */
typedef struct {
    int tidx;
    double *tau, *F;
    int *ids;
} result_out;

/* "a number", "an lf.mat3", "a table of length 2", "nil": the value at idx for messages */
static void describe(lua_State *L, int idx, char *buf, size_t size)
{
    const int t = lua_type(L, idx);
    if (t == LUA_TNIL) snprintf(buf, size, "nil");
    else if (lfb_is_traced(L, idx)) snprintf(buf, size, "a traced value (a number, vec3 or mat3)");
    else if (t == LUA_TTABLE && lfb_plain_table(L, idx))
        snprintf(buf, size, "a table of length %d", (int)lua_rawlen(L, idx));
    else {
        const char *n = lfb_typename(L, idx);
        snprintf(buf, size, "%s %s", strchr("aeiou", n[0]) || strncmp(n, "lf.", 3) == 0 ? "an" : "a", n);
    }
}

/* One vector at idx into slot k of out (0 .. nb-1: torques, nb .. 2nb-1: forces): 1; 0 and what was
 * found in msg if it is not a vec3 or 3 numbers; 2 and the component if one is not finite. */
static int read_vector(lua_State *L, int idx, const result_out *out, int nb, int k, char *msg, size_t size)
{
    idx = lua_absindex(L, idx);
    if (out->tidx) {
        char found[120];
        if (lfb_trace_read(L, out->tidx, idx, 3, out->ids + 3 * k, found, sizeof found)) return 1;
        if (lfb_is_traced(L, idx)) snprintf(msg, size, "%s", found);
        else describe(L, idx, msg, size);
        return 0;
    }
    double *v = k < nb ? out->tau + 3 * k : out->F + 3 * (k - nb);
    const double *u = lfb_testvec3(L, idx);
    if (u) memcpy(v, u, 3 * sizeof *v);
    else if (lfb_plain_table(L, idx) && lua_rawlen(L, idx) == 3) {
        for (int i = 0; i < 3; i++) {
            lua_rawgeti(L, idx, i + 1);
            int ok;
            v[i] = lua_tonumberx(L, -1, &ok);
            ok = ok && lua_type(L, -1) == LUA_TNUMBER;
            lua_pop(L, 1);
            if (!ok) return snprintf(msg, size, "a table whose element %d is not a number", i + 1), 0;
        }
    } else return describe(L, idx, msg, size), 0;
    for (int i = 0; i < 3; i++)
        if (!isfinite(v[i])) return snprintf(msg, size, "component %d = %g", i + 1, v[i]), 2;
    return 1;
}

/* The field key ("torque", slots 0.., or "force", slots nb..) of the result at res, absent: left as it
 * is (0) */
static int read_field(lua_State *L, int res, const char *key, int nb, const result_out *out, char *reason, size_t size)
{
    char found[160], who[48];
    lua_pushstring(L, key);
    const int tp = lua_rawget(L, res), at = lua_gettop(L), k0 = key[0] == 't' ? 0 : nb;
    int rc = 1;
    if (tp == LUA_TNIL) {
    } else if (nb == 1) {
        snprintf(who, sizeof who, "%s", key);
        rc = read_vector(L, at, out, nb, k0, found, sizeof found);
    } else if (!lfb_plain_table(L, at) || (int)lua_rawlen(L, at) != nb) {
        describe(L, at, found, sizeof found);
        snprintf(reason, size, "forcing: %s is %s, expected an array of %d vec3 (one per body)", key, found, nb);
        lua_settop(L, at - 1);
        return 0;
    } else
        for (int i = 0; i < nb && rc == 1; i++) {
            lua_rawgeti(L, at, i + 1);
            snprintf(who, sizeof who, "%s of body %d", key, i + 1);
            rc = read_vector(L, -1, out, nb, k0 + i, found, sizeof found);
            lua_pop(L, 1);
        }
    if (rc == 0) snprintf(reason, size, "forcing: %s is %s, expected a vec3", who, found);
    if (rc == 2) snprintf(reason, size, "forcing: %s has %s, expected a finite number", who, found);
    lua_settop(L, at - 1);
    return rc == 1;
}

/* The result {torque = ..., force = ...} at idx into out (what is absent stays as it is): 1, or 0 with
 * the reason ("forcing: torque of body 2 is a number, expected a vec3"). Reads raw: no metamethod runs. */
static int read_result(lua_State *L, int idx, int nb, int translating, const result_out *out, char *reason, size_t size)
{
    idx = lua_absindex(L, idx);
    if (!lfb_plain_table(L, idx)) {
        char found[120];
        describe(L, idx, found, sizeof found);
        snprintf(reason, size, "forcing returned %s, expected a table {torque = ...%s}", found,
                 translating ? ", force = ..." : "");
        return 0;
    }
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (k && (strcmp(k, "torque") == 0 || (translating && strcmp(k, "force") == 0))) continue;
        if (k && strcmp(k, "force") == 0)
            snprintf(reason, size,
                     "forcing: field 'force' is for bodies that translate (with a mass); these only rotate");
        else if (k)
            snprintf(reason, size, "forcing: unknown field '%s' in the returned table (fields: torque%s)", k,
                     translating ? ", force" : "");
        else
            snprintf(reason, size, "forcing: the returned table has a key that is a %s (fields: torque%s)",
                     luaL_typename(L, -1), translating ? ", force" : "");
        lua_pop(L, 1);
        return 0;
    }
    return read_field(L, idx, "torque", nb, out, reason, size) &&
           (!translating || read_field(L, idx, "force", nb, out, reason, size));
}

/* ---------------------------------------------------------------- the interpreted forcing */
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

/* The state argument's metatable: reading a field it does not have is an error naming the fields
 * (a typo, state.omgea, would otherwise be nil, and a missing torque 0) */
static int state_index(lua_State *L)
{
    const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;
    if (k && (strcmp(k, "x") == 0 || strcmp(k, "v") == 0))
        return luaL_error(L,
                          "forcing: state.%s is of bodies that translate (with a mass); these only rotate (fields: "
                          "R, omega)",
                          k);
    if (k)
        return luaL_error(L, "forcing: state has no field '%s' (fields: R, omega; x, v for bodies that translate)", k);
    return luaL_error(L, "forcing: state has no field of type %s (fields: R, omega; x, v for bodies that translate)",
                      luaL_typename(L, 2));
}

/* A new state table {} with that metatable, pushed */
static void new_state(lua_State *L)
{
    lua_createtable(L, 0, 4);
    if (luaL_newmetatable(L, "lf.forcing_state")) {
        lua_pushcfunction(L, state_index);
        lua_setfield(L, -2, "__index");
        lua_pushliteral(L, "forcing state");
        lua_setfield(L, -2, "__name");
    }
    lua_setmetatable(L, -2);
}

typedef struct {
    const lfb_system *s;
    const lf_bodies_motion *m;
} motion_args;

/* forcing's arguments: t, state {R =, omega = [, x =, v =]} [, p] */
static int push_motion(lua_State *L, void *ud)
{
    const motion_args *a = ud;
    const lf_bodies_motion *m = a->m;
    const int nb = m->c.nb;
    luaL_checkstack(L, 8, "forcing");
    lua_pushnumber(L, m->t);
    new_state(L);
    push_blocks(L, nb, 9, m->c.R);
    lua_setfield(L, -2, "R");
    push_blocks(L, nb, 3, m->w);
    lua_setfield(L, -2, "omega");
    if (m->v) {
        push_blocks(L, nb, 3, m->c.x);
        lua_setfield(L, -2, "x");
        push_blocks(L, nb, 3, m->v);
        lua_setfield(L, -2, "v");
    }
    return 2 + lfb_push_params(L, a->s);
}

static int lua_forcing_eval(void *ctx, const lf_bodies_motion *m, double *tau, double *F, lf_error *err)
{
    lfb_system *s = ctx;
    lua_State *L = s->L;
    motion_args a = {s, m};
    int rc = lfb_call(L, s->ref[LFB_REF_FORCING], push_motion, &a, 1, "forcing(t, state)", err);
    s->L = L; /* the callback may have evaluated this system from another coroutine (which rebinds it) */
    if (rc != LF_OK) return rc;
    const int nb = m->c.nb;
    memset(tau, 0, 3 * (size_t)nb * sizeof *tau);
    if (m->v) memset(F, 0, 3 * (size_t)nb * sizeof *F);
    result_out out = {0, tau, F, NULL};
    char reason[320];
    if (!read_result(L, -1, nb, m->v != NULL, &out, reason, sizeof reason))
        rc = lf_error_set(err, LF_ECALLBACK, "%s (at t=%.17g)", reason, m->t);
    lua_pop(L, 1);
    return rc;
}

/* ---------------------------------------------------------------- the compiled forcing */
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

typedef struct {
    int first, n;
} arg_range;

static int push_range(lua_State *L, void *ud)
{
    const arg_range *r = ud;
    for (int i = 0; i < r->n; i++) lua_pushvalue(L, r->first + i);
    return r->n;
}

/* The traced arguments t, state (the graph's inputs t, R, omega[, x, v] in that order) and params;
 * their values into par (*npar). Returns the number of arguments pushed. */
static int push_traced_motion(lua_State *L, const lfb_system *s, int tidx, int nb, const double *y0, int translating,
                              double *par, int *npar)
{
    const double t0 = 0;
    lfb_trace_push_inputs(L, tidx, 1, &t0);
    new_state(L);
    static const char *const names[4] = {"R", "omega", "x", "v"};
    static const int sizes[4] = {9, 3, 3, 3}, offsets[4] = {0, 9, 12, 15};
    for (int k = 0; k < (translating ? 4 : 2); k++) {
        push_traced_blocks(L, tidx, nb, sizes[k], y0 + (size_t)offsets[k] * nb);
        lua_setfield(L, -2, names[k]);
    }
    *npar = 0;
    if (!lfb_push_params(L, s)) return 2;
    const int p = lua_gettop(L);
    lfb_trace_push_params(L, tidx, p, par, npar, LFB_MAXPAR);
    lua_remove(L, p);
    return 3;
}

/* "<the first line of the Lua error>" from lfb_call's message */
static void reason_of(const lf_error *e, char *buf, size_t size)
{
    const char *m = e->msg, *cut = strstr(m, " raised an error: ");
    if (cut) m = cut + strlen(" raised an error: ");
    snprintf(buf, size, "%.*s", (int)strcspn(m, "\n"), m);
}

/* The Lua forcing traced at (0, y0) and compiled: NULL when it cannot be traced (compile = "auto": the
 * reason in report; an explicit backend raises). A result of the wrong shape raises either way. */
static lf_forcing *compile_forcing(lua_State *L, lfb_system *s, int nb, const double *y0, int translating, int backend,
                                   const char *fn, char *report, size_t size)
{
    const int top = lua_gettop(L);
    lfb_trace *t = lfb_trace_new(L, LFB_TRACE_STRICT, 0);
    const int tidx = lua_gettop(L);
    double *par = lua_newuserdatauv(L, LFB_MAXPAR * sizeof(double), 0);
    int *ids = lua_newuserdatauv(L, 6 * (size_t)nb * sizeof(int), 0), npar;
    const int first = lua_gettop(L) + 1, nargs = push_traced_motion(L, s, tidx, nb, y0, translating, par, &npar);
    for (int i = 0; i < 6 * nb; i++) ids[i] = lf_graph_const(t->g, 0); /* what the result leaves out */
    lf_error e;
    char reason[640] = "";
    int shape = 0;
    arg_range r = {first, nargs};
    if (lfb_call(L, s->ref[LFB_REF_FORCING], push_range, &r, 1, "forcing(t, state)", &e) != LF_OK)
        reason_of(&e, reason, sizeof reason);
    else {
        result_out out = {tidx, NULL, NULL, ids};
        shape = !read_result(L, -1, nb, translating, &out, reason, sizeof reason);
    }
    lf_forcing *f = NULL;
    if (!reason[0]) {
        lf_model_graph_opts o = {backend, NULL, 1};
        f = lf_forcing_graph(t->g, "lua", ids, translating ? ids + 3 * nb : NULL, nb, par, &o, &s->forcing_compiled,
                             &e);
        if (f) snprintf(report, size, "%s", lf_compiled_report(s->forcing_compiled));
        else snprintf(reason, sizeof reason, "%s", e.msg);
    }
    lfb_trace_end(t);
    lua_settop(L, top);
    if (shape) luaL_error(L, "%s: %s", fn, reason);
    if (!f && backend != LF_BACKEND_AUTO)
        luaL_error(L, "%s: compile = \"%s\": the forcing cannot be compiled: %s", fn,
                   backend == LF_BACKEND_NATIVE ? "native" : "tape", reason);
    if (!f) snprintf(report, size, "interpreted: %s", reason);
    return f;
}

/* The Lua forcing at idx: compiled or interpreted (s->forcing_own[0]); what runs into report. It is
 * evaluated once at the initial state: a result that is not finite (or, interpreted, of the wrong
 * shape) is the constructor's error. */
static const lf_forcing *lua_forcing(lua_State *L, lfb_system *s, int idx, int nb, const double *y0, int translating,
                                     int backend, const char *fn, char *report, size_t size)
{
    lfb_natural(L, idx);
    lua_pushvalue(L, idx);
    s->ref[LFB_REF_FORCING] = luaL_ref(L, LUA_REGISTRYINDEX);
    lf_forcing *f = NULL;
    lf_error e;
    if (backend >= 0) f = compile_forcing(L, s, nb, y0, translating, backend, fn, report, size);
    else snprintf(report, size, "interpreted: compile = false");
    if (!f) f = lf_forcing_new("lua", LF_FORCING_VELOCITY | LF_FORCING_TIME, lua_forcing_eval, NULL, s, NULL, &e);
    if (!f) lfb_error_in(L, fn, &e);
    s->forcing_own[0] = f; /* (freed with the system, also if the check below raises) */
    double *out = lua_newuserdatauv(L, 6 * (size_t)nb * sizeof(double), 0);
    const double *x = translating ? y0 + 12 * nb : NULL, *v = translating ? y0 + 15 * nb : NULL;
    lf_bodies_motion m = {{nb, NULL, NULL, x, y0}, y0 + 9 * nb, v, 0};
    if (lf_forcing_eval(f, &m, out, out + 3 * nb, &e) != LF_OK) lfb_error_in(L, fn, &e);
    lua_pop(L, 1);
    return f;
}

/* ---------------------------------------------------------------- damping */
lf_forcing *lfb_read_damping(lua_State *L, int idx, const char *fn, int translating, char *desc, size_t size)
{
    idx = lua_absindex(L, idx);
    if (!lfb_plain_table(L, idx))
        luaL_error(L, "%s must be a table {linear = c, angular = {a1, a2, a3} | a}, got %s", fn, lfb_typename(L, idx));
    static const char *const keys[] = {"linear", "angular", NULL};
    lfb_check_keys(L, idx, keys, fn, "field");
    lua_getfield(L, idx, "linear");
    const int has_linear = !lua_isnil(L, -1);
    lua_pop(L, 1);
    const double c = lfb_optfield_number(L, idx, "linear", 0, fn);
    if (!(c >= 0)) luaL_error(L, "%s: field 'linear' = %f, expected a number >= 0 (the force is -linear v)", fn, c);
    if (has_linear && translating == 0)
        luaL_error(L, "%s: field 'linear' damps bodies that translate (with a mass); these only rotate", fn);
    double a[3] = {0, 0, 0};
    if (lua_getfield(L, idx, "angular") == LUA_TNUMBER) {
        a[0] = a[1] = a[2] = lfb_optfield_number(L, idx, "angular", 0, fn);
    } else lfb_optfield_vec3(L, idx, "angular", a, fn);
    lua_pop(L, 1);
    for (int k = 0; k < 3; k++)
        if (!(a[k] >= 0))
            luaL_error(L,
                       "%s: field 'angular': component %d = %f, expected a number >= 0 (the body torque is "
                       "-angular_k omega_k)",
                       fn, k + 1, a[k]);
    lf_error e;
    lf_forcing *f = lf_forcing_damping(c, a, &e);
    if (!f) lfb_error_in(L, fn, &e);
    snprintf(desc, size, "damping(linear = %g, angular = (%g, %g, %g))", c, a[0], a[1], a[2]);
    return f;
}

/* ---------------------------------------------------------------- a controller */
/* the reason of read_result for the controller ("forcing: torque ..." -> "controller: torque ...") */
static void controller_reason(const char *reason, char *buf, size_t size)
{
    if (strncmp(reason, "forcing", 7) == 0) snprintf(buf, size, "the controller%s", reason + 7);
    else snprintf(buf, size, "the controller: %s", reason);
}

int lfb_controller_update(lua_State *L, lfb_system *s, double t, const double *y, lf_error *err)
{
    const lf_form_rigid *r = lf_system_rigid(s->sys);
    const int nb = r->nb, tr = r->translating;
    const lf_bodies_motion m = {
        {nb, r->mass, r->J, tr ? y + 12 * nb : NULL, y}, y + 9 * nb, tr ? y + 15 * nb : NULL, t};
    motion_args a = {s, &m};
    int rc = lfb_call(L, s->ref[LFB_REF_CONTROLLER], push_motion, &a, 1, "the controller fn(t, state)", err);
    s->L = L;
    if (rc != LF_OK) return rc;
    double *u = calloc(6 * (size_t)nb, sizeof *u);
    if (!u) {
        lua_pop(L, 1);
        return lf_error_set(err, LF_ENOMEM, "the controller: out of memory");
    }
    result_out out = {0, u, u + 3 * nb, NULL};
    char reason[320], msg[360];
    if (!read_result(L, -1, nb, tr, &out, reason, sizeof reason)) {
        controller_reason(reason, msg, sizeof msg);
        rc = lf_error_set(err, LF_ECALLBACK, "%s (at t=%.17g)", msg, t);
    }
    lua_pop(L, 1);
    if (rc == LF_OK) rc = lf_forcing_held_set(s->forcing_own[3], u, tr ? u + 3 * nb : NULL, err);
    free(u);
    return rc;
}

int lfb_push_control(lua_State *L, const lfb_system *s)
{
    const double *v = s->control_every ? lf_forcing_held_values(s->forcing_own[3]) : NULL;
    if (!v) {
        lua_pushnil(L);
        return 1;
    }
    const int nb = lf_rigid_nbodies(s->sys);
    lua_createtable(L, 0, 2);
    push_blocks(L, nb, 3, v);
    lua_setfield(L, -2, "torque");
    if (lf_rigid_masses(s->sys)) {
        push_blocks(L, nb, 3, v + 3 * nb);
        lua_setfield(L, -2, "force");
    }
    return 1;
}

void lfb_controller_set(lua_State *L, lfb_system *s, int idx, const char *fn)
{
    const int nb = lf_rigid_nbodies(s->sys), tr = lf_rigid_masses(s->sys) != NULL;
    double *u = lua_newuserdatauv(L, 6 * (size_t)nb * sizeof *u, 0);
    memset(u, 0, 6 * (size_t)nb * sizeof *u);
    result_out out = {0, u, u + 3 * nb, NULL};
    char reason[320], msg[360];
    if (!s->control_every) luaL_error(L, "%s: the system has no controller", fn);
    if (!read_result(L, idx, nb, tr, &out, reason, sizeof reason)) {
        controller_reason(reason, msg, sizeof msg);
        luaL_error(L, "%s: %s", fn, msg);
    }
    lf_error e;
    if (lf_forcing_held_set(s->forcing_own[3], u, tr ? u + 3 * nb : NULL, &e) != LF_OK) lfb_error_in(L, fn, &e);
    lua_pop(L, 1);
}

/* ---------------------------------------------------------------- a system's forcing */
/* The parts of a forcing being assembled, and its description ("lua + damping(...) + torque(...)") */
typedef struct {
    const lf_forcing *parts[LFB_MAX_FORCING_PARTS];
    int n;
    char desc[1024];
    char report[640];
} assembly;

static void add_part(lua_State *L, assembly *a, const lf_forcing *f, const char *desc, const char *fn)
{
    if (a->n == LFB_MAX_FORCING_PARTS)
        luaL_error(L, "%s: field 'forcing': more than %d parts", fn, LFB_MAX_FORCING_PARTS - 1);
    a->parts[a->n++] = f;
    const size_t len = strlen(a->desc);
    snprintf(a->desc + len, sizeof a->desc - len, "%s%s", len ? " + " : "", desc);
}

/* The field `controller` of the table at pt: a held input among the parts, fn referenced */
static void read_controller(lua_State *L, assembly *a, lfb_system *s, int pt, int nb, const char *fn)
{
    if (lua_getfield(L, pt, "controller") == LUA_TNIL) {
        lua_pop(L, 1);
        return;
    }
    const int c = lua_gettop(L);
    if (!lfb_plain_table(L, c))
        luaL_error(L,
                   "%s: field 'controller' must be a table {every = k, fn = function(t, state [, p]) ... end}, got %s",
                   fn, lfb_typename(L, c));
    static const char *const keys[] = {"every", "fn", NULL};
    lfb_check_keys(L, c, keys, fn, "controller field");
    lua_getfield(L, c, "every");
    int isint = 0;
    const lua_Integer k = lua_tointegerx(L, -1, &isint);
    if (!isint || k < 1 || k > INT_MAX)
        luaL_error(L, "%s: controller.every must be a positive integer (the steps between its calls), got %s", fn,
                   luaL_tolstring(L, -1, NULL));
    if (lua_getfield(L, c, "fn") != LUA_TFUNCTION)
        luaL_error(L,
                   "%s: controller.fn must be a function(t, state [, p]) returning {torque = ..., force = ...}, got %s",
                   fn, lfb_typename(L, -1));
    lf_error e;
    if (!(s->forcing_own[3] = lf_forcing_held(nb, &e))) lfb_error_in(L, fn, &e);
    s->ref[LFB_REF_CONTROLLER] = luaL_ref(L, LUA_REGISTRYINDEX);
    s->control_every = (int)k;
    char desc[64];
    snprintf(desc, sizeof desc, "controller(every = %d)", (int)k);
    add_part(L, a, s->forcing_own[3], desc, fn);
    lua_settop(L, c - 1);
}

/* One element of `forcing` at idx: a Lua function (at most one) or an lf.forcing object */
static void add_element(lua_State *L, assembly *a, lfb_system *s, int ud, int idx, int elem, int nb, const double *y0,
                        int translating, int backend, const char *fn)
{
    char where[48] = "";
    if (elem) snprintf(where, sizeof where, ": element %d", elem);
    lfb_forcing *u = lfb_testforcing(L, idx);
    if (u) add_part(L, a, lfb_system_use_forcing(L, s, ud, idx), u->desc, fn);
    else if (lua_type(L, idx) == LUA_TFUNCTION) {
        if (s->ref[LFB_REF_FORCING] != LUA_NOREF)
            luaL_error(L, "%s: field 'forcing'%s is a second Lua function; give one (it can return the sum)", fn,
                       where);
        add_part(L, a, lua_forcing(L, s, idx, nb, y0, translating, backend, fn, a->report, sizeof a->report), "lua",
                 fn);
    } else
        luaL_error(L,
                   "%s: field 'forcing'%s must be a function(t, state [, p]) returning {torque = ..., force = ...} "
                   "or an lf.forcing object (lf.forcing.damping, .torque, .torque_table)%s, got %s",
                   fn, where, elem ? "" : " or an array of them", lfb_typename(L, idx));
}

/* The field `forcing` of the table at pt */
static void read_forcing_field(lua_State *L, assembly *a, lfb_system *s, int ud, int pt, int nb, const double *y0,
                               int translating, int backend, const char *fn)
{
    const int tp = lua_getfield(L, pt, "forcing"), at = lua_gettop(L);
    if (tp == LUA_TTABLE && lfb_plain_table(L, at)) { /* an array of them */
        const int n = (int)lua_rawlen(L, at);
        lua_pushnil(L);
        while (lua_next(L, at)) {
            lua_pop(L, 1);
            if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > n)
                luaL_error(L,
                           "%s: field 'forcing' must be a function, an lf.forcing object or an array of them; the "
                           "table has the key %s%s%s (build a torque with lf.forcing.torque{torque = ...})",
                           fn, lua_type(L, -1) == LUA_TSTRING ? "'" : "a ",
                           lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : luaL_typename(L, -1),
                           lua_type(L, -1) == LUA_TSTRING ? "'" : "");
        }
        if (n == 0) luaL_error(L, "%s: field 'forcing' is an empty table, expected a forcing or an array of them", fn);
        for (int i = 1; i <= n; i++) {
            lua_rawgeti(L, at, i);
            add_element(L, a, s, ud, lua_gettop(L), i, nb, y0, translating, backend, fn);
            lua_settop(L, at);
        }
    } else if (tp != LUA_TNIL) add_element(L, a, s, ud, at, 0, nb, y0, translating, backend, fn);
    lua_settop(L, at - 1);
}

/* s->ref[LFB_REF_FORCING_INFO] = {name = desc, compiled = report (a Lua forcing)}; sys.compiled gains
 * the report */
static void store_info(lua_State *L, lfb_system *s, const assembly *a)
{
    lua_createtable(L, 0, 2);
    lua_pushstring(L, a->desc);
    lua_setfield(L, -2, "name");
    if (a->report[0]) {
        lua_pushstring(L, a->report);
        lua_setfield(L, -2, "compiled");
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        if (lfb_push_compiled(L, s)) {
            luaL_addvalue(&b);
            luaL_addstring(&b, "; ");
        }
        luaL_addstring(&b, "forcing: ");
        luaL_addstring(&b, a->report);
        luaL_pushresult(&b);
        lfb_set_compiled(L, s, lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    s->ref[LFB_REF_FORCING_INFO] = luaL_ref(L, LUA_REGISTRYINDEX);
}

const lf_forcing *lfb_system_forcing(lua_State *L, lfb_system *s, int ud, int pt, int nb, const double *y0,
                                     int translating, int backend, const char *fn)
{
    const int top = lua_gettop(L);
    ud = lua_absindex(L, ud);
    pt = lua_absindex(L, pt);
    assembly *a = lua_newuserdatauv(L, sizeof *a, 0);
    memset(a, 0, sizeof *a);
    read_forcing_field(L, a, s, ud, pt, nb, y0, translating, backend, fn);
    read_controller(L, a, s, pt, nb, fn);
    if (lua_getfield(L, pt, "damping") != LUA_TNIL) {
        char who[96], desc[200];
        snprintf(who, sizeof who, "%s: field 'damping'", fn);
        s->forcing_own[1] = lfb_read_damping(L, -1, who, translating, desc, sizeof desc);
        add_part(L, a, s->forcing_own[1], desc, fn);
    }
    lua_pop(L, 1);
    const lf_forcing *f = a->n == 1 ? a->parts[0] : NULL;
    if (a->n > 1) {
        lf_error e;
        if (!(s->forcing_own[2] = lf_forcing_sum(a->n, a->parts, &e))) lfb_error_in(L, fn, &e);
        f = s->forcing_own[2];
    }
    if (f) store_info(L, s, a);
    lua_settop(L, top);
    return f;
}

/* ---------------------------------------------------------------- what a system shows */
int lfb_push_forcing_name(lua_State *L, const lfb_system *s)
{
    if (s->ref[LFB_REF_FORCING_INFO] == LUA_NOREF) lua_pushnil(L);
    else {
        lua_rawgeti(L, LUA_REGISTRYINDEX, s->ref[LFB_REF_FORCING_INFO]);
        lua_getfield(L, -1, "name");
        lua_remove(L, -2);
    }
    return 1;
}

int lfb_push_forcing_info(lua_State *L, const lfb_system *s)
{
    const lf_forcing *f = lf_rigid_forcing(s->sys);
    if (!f || s->ref[LFB_REF_FORCING_INFO] == LUA_NOREF) {
        lua_pushnil(L);
        return 1;
    }
    const unsigned d = lf_forcing_depends(f);
    lua_createtable(L, 0, 6);
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->ref[LFB_REF_FORCING_INFO]);
    lua_getfield(L, -1, "name");
    lua_setfield(L, -3, "name");
    lua_getfield(L, -1, "compiled");
    lua_setfield(L, -3, "compiled");
    lua_pop(L, 1);
    lua_pushboolean(L, (d & LF_FORCING_VELOCITY) != 0);
    lua_setfield(L, -2, "velocity");
    lua_pushboolean(L, (d & LF_FORCING_TIME) != 0);
    lua_setfield(L, -2, "time");
    lua_pushboolean(L, (d & LF_FORCING_AFFINE) != 0);
    lua_setfield(L, -2, "affine");
    lua_pushboolean(L, lf_forcing_has_jacobian(f));
    lua_setfield(L, -2, "jacobian");
    return 1;
}
