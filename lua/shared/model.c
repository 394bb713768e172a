/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — compiled models: the Lua functions a system takes, traced once into an
 * expression graph (shared/trace.h) and compiled (core/model/model_graph.h); the option `compile`; what
 * runs (sys.compiled).
 *
 * compile = "auto" (default) | "native" | "tape" | false. "auto" falls back to the interpreted path
 * when a function cannot be traced (a branch on its inputs, a map without a traced version, an
 * error) and says why in sys.compiled; "native" and "tape" raise instead. Native code that the
 * compiler or the cache refuses falls back to the tape either way (lf_gmodule_report says why).
 * Parameters (`params = {alpha = 0.3, Rm = ...}`: numbers, vec3, mat3; stored by the object layer)
 * are the functions' last argument and inputs of the graph, not constants. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/model.h"
#include "shared/trace.h"
#include "model/model_graph.h"

/* ---------------------------------------------------------------- options */

/* ---------------------------------------------------------------- options */
int lfb_compile_option(lua_State *L, int t, const char *fn)
{
    int tp = lua_getfield(L, t, "compile"), r = LF_BACKEND_AUTO;
    const char *v = tp == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    if (tp == LUA_TNIL || (tp == LUA_TBOOLEAN && lua_toboolean(L, -1))) r = LF_BACKEND_AUTO;
    else if (tp == LUA_TBOOLEAN) r = -1;
    else if (v && strcmp(v, "auto") == 0) r = LF_BACKEND_AUTO;
    else if (v && strcmp(v, "native") == 0) r = LF_BACKEND_NATIVE;
    else if (v && strcmp(v, "tape") == 0) r = LF_BACKEND_TAPE;
    else
        luaL_error(L, "%s: field 'compile' must be \"auto\", \"native\", \"tape\" or false, got %s%s%s", fn, v ? "\"" : "",
                   v ? v : lfb_typename(L, -1), v ? "\"" : "");
    lua_pop(L, 1);
    return r;
}

static const char *backend_name(int b) { return b == LF_BACKEND_NATIVE ? "native" : b == LF_BACKEND_TAPE ? "tape" : "auto"; }

/* A refusal of the code cache (a directory or file another user could have written) is also said
 * on stderr, once per process and reason: the model runs, on the tape, but the user should know. */
static void notice(lua_State *L, const char *report)
{
    if (!strstr(report, "refused")) return;
    lua_getfield(L, LUA_REGISTRYINDEX, "lieflow.notices");
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, "lieflow.notices");
    }
    if (lua_getfield(L, -1, report) == LUA_TNIL) {
        fprintf(stderr, "lieflow: notice: compiled code was not loaded, the tape runs instead: %s\n", report);
        lua_pushboolean(L, 1);
        lua_setfield(L, -3, report);
    }
    lua_pop(L, 2);
}

void lfb_set_compiled(lua_State *L, lfb_system *s, const char *report)
{
    notice(L, report);
    if (s->ref[LFB_REF_COMPILED] != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, s->ref[LFB_REF_COMPILED]);
    lua_pushstring(L, report);
    s->ref[LFB_REF_COMPILED] = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* ---------------------------------------------------------------- tracing a system's functions */
typedef struct {
    int first, n;
} arg_range;

static int push_range(lua_State *L, void *ud)
{
    const arg_range *r = ud;
    for (int i = 0; i < r->n; i++) lua_pushvalue(L, r->first + i);
    return r->n;
}

/* Call the function under ref with the n values at first.. as arguments; the result at the top. */
static int call_traced(lua_State *L, int ref, int first, int n, const char *what, lf_error *err)
{
    arg_range r = {first, n};
    return lfb_call(L, ref, push_range, &r, 1, what, err);
}

/* "<what>: <the first line of the Lua error>" from lfb_call's message */
static void reason_of(const lf_error *e, const char *prefix, char *buf, size_t size)
{
    const char *m = e->msg, *cut = strstr(m, " raised an error: ");
    if (cut) m = cut + strlen(" raised an error: ");
    size_t len = strcspn(m, "\n");
    snprintf(buf, size, "%s%.*s", prefix, (int)len, m);
}

/* n vectors as nodes from the result at idx: an array of n vec3 (or one vec3 when n = 1); 0 and a
 * reason if it is not that */
static int read_vectors(lua_State *L, int tidx, int idx, int n, int *ids, const char *what, char *reason, size_t size)
{
    char msg[120];
    idx = lua_absindex(L, idx);
    if (n == 1 && lfb_trace_read(L, tidx, idx, 3, ids, msg, sizeof msg)) return 1;
    if (!lfb_plain_table(L, idx) || (int)lua_rawlen(L, idx) != n) {
        snprintf(reason, size, "%s returned %s, expected an array of %d vec3", what, lfb_typename(L, idx), n);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, idx, i + 1);
        int ok = lfb_trace_read(L, tidx, -1, 3, ids + 3 * i, msg, sizeof msg);
        lua_pop(L, 1);
        if (!ok) {
            snprintf(reason, size, "%s: element %d is %s, expected a vec3", what, i + 1, msg);
            return 0;
        }
    }
    return 1;
}

/* The traced parameters (if the system has params) pushed after the arguments; their values into
 * par. Returns the number of Lua values pushed (0 or 1). */
static int push_traced_params(lua_State *L, const lfb_system *s, int tidx, double *par, int *npar)
{
    *npar = 0;
    if (!lfb_push_params(L, s)) return 0;
    const int p = lua_gettop(L);
    lfb_trace_push_params(L, tidx, p, par, npar, LFB_MAXPAR);
    lua_remove(L, p);
    return 1;
}

/* A failed trace: for compile = "auto" the reason goes to the report and NULL/0 comes back; an
 * explicit backend raises. */
static int trace_failed(lua_State *L, int backend, const char *fn, const char *reason, char *report, size_t size)
{
    if (backend != LF_BACKEND_AUTO)
        return luaL_error(L, "%s: compile = \"%s\": the model cannot be compiled: %s", fn, backend_name(backend), reason);
    snprintf(report, size, "interpreted: %s", reason);
    return 0;
}

/* nb blocks of n traced inputs (one block: the value itself; several: an array of them) */
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

lf_potential *lfb_compile_rigid(lua_State *L, lfb_system *s, int nb, const double *R0, const double *x0, int backend,
                                const char *fn, char *report, size_t size)
{
    const int top = lua_gettop(L);
    lfb_trace *t = lfb_trace_new(L, LFB_TRACE_STRICT, 0);
    const int tidx = lua_gettop(L);
    if (x0) push_traced_blocks(L, tidx, nb, 3, x0); /* translating bodies: U(x, R), inputs x then R */
    push_traced_blocks(L, tidx, nb, 9, R0);
    const int first = lua_gettop(L) - (x0 ? 1 : 0);
    double *par = lua_newuserdatauv(L, LFB_MAXPAR * sizeof(double), 0);
    lua_insert(L, first); /* (scratch below the arguments) */
    int npar, nargs = (x0 ? 2 : 1) + push_traced_params(L, s, tidx, par, &npar);
    lf_error e;
    char reason[640] = "";
    lf_potential *pot = NULL;
    const char *what = x0 ? (nb == 1 ? "U(x, R)" : "U(xs, Rs)") : (nb == 1 ? "U(R)" : "U(Rs)");
    int U = -1, *tau = NULL, rc = call_traced(L, s->ref[LFB_REF_U], first + 1, nargs, what, &e);
    if (rc != LF_OK) reason_of(&e, "", reason, sizeof reason);
    else if (lfb_trace_read_number(L, tidx, -1, NULL, &U, &e) != LF_OK)
        snprintf(reason, sizeof reason, "U %s", e.msg);
    else if (!isfinite(lf_graph_value(t->g, U))) { /* a model bug, whatever the backend: said now, not at a step */
        const double u0 = lf_graph_value(t->g, U);
        lfb_trace_end(t);
        luaL_error(L, "%s: the potential %s is not finite at the initial state (U = %f)", fn, what, u0);
    }
    lua_settop(L, first + nargs);
    if (!reason[0] && s->ref[LFB_REF_TAU] != LUA_NOREF) { /* the user's torque, traced on the same inputs */
        tau = lua_newuserdatauv(L, 3 * (size_t)nb * sizeof(int), 0);
        lua_insert(L, first);
        rc = call_traced(L, s->ref[LFB_REF_TAU], first + 2, nargs, nb == 1 ? "torque(R)" : "torque(Rs)", &e);
        if (rc != LF_OK) reason_of(&e, "", reason, sizeof reason);
        else read_vectors(L, tidx, -1, nb, tau, "torque", reason, sizeof reason);
    }
    if (!reason[0]) {
        lf_model_graph_opts o = {backend, NULL, 1};
        pot = x0 ? lf_potential_graph_x(t->g, U, nb, par, &o, &e) : lf_potential_graph(t->g, U, tau, nb, par, &o, &e);
        if (pot) snprintf(report, size, "%s", lf_compiled_report(lf_potential_compiled(pot)));
        else snprintf(reason, sizeof reason, "%s", e.msg);
    }
    lfb_trace_end(t);
    lua_settop(L, top);
    if (!pot) s->fell_back = !trace_failed(L, backend, fn, reason, report, size);
    return pot;
}

/* ---------------------------------------------------------------- Lie ODEs */
/* y as a table of traced factor values (new inputs after t) */
static void push_traced_state(lua_State *L, int tidx, const lf_system *sys_or_null, const lf_manifold *M,
                              const double *y)
{
    (void)sys_or_null;
    const int n = lf_manifold_nfactors(M);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        const lf_factor *f = lf_manifold_factor(M, i);
        lfb_trace_push_factor(L, tidx, f, y + f->op, 0);
        lua_rawseti(L, -2, i + 1);
    }
}

int lfb_compile_lie_ode(lua_State *L, lfb_system *s, const lf_manifold *M, const double *y0, int backend,
                        const lf_lie_ode_graph *own, lf_lie_ode_def *def, const char *fn, char *report, size_t size)
{
    const int top = lua_gettop(L);
    lfb_trace *t = lfb_trace_new(L, LFB_TRACE_STRICT, 0);
    const int tidx = lua_gettop(L);
    double *par = lua_newuserdatauv(L, LFB_MAXPAR * sizeof(double), 0);
    int *xi = lua_newuserdatauv(L, (size_t)lf_manifold_ndim(M) * sizeof(int), 0);
    const double t0 = 0;
    lfb_trace_push_inputs(L, tidx, 1, &t0);
    const int first = lua_gettop(L);
    push_traced_state(L, tidx, NULL, M, y0);
    int npar, np = push_traced_params(L, s, tidx, par, &npar);
    lf_error e;
    char reason[640] = "";
    lf_lie_ode_graph nodes = *own;
    nodes.xi = xi;
    nodes.energy = nodes.H = -1;
    if (call_traced(L, s->ref[LFB_REF_F], first, 2 + np, "f(t, y)", &e) != LF_OK) reason_of(&e, "", reason, sizeof reason);
    else if (lfb_trace_read_algebra(L, tidx, -1, M, xi, "f(t, y)", &e) != LF_OK) snprintf(reason, sizeof reason, "%s", e.msg);
    lua_settop(L, first + 1 + np);
    static const int refs[2] = {LFB_REF_ENERGY, LFB_REF_H};
    static const char *const names[2] = {"energy(y)", "H(y)"};
    int *out[2] = {&nodes.energy, &nodes.H};
    for (int k = 0; k < 2 && !reason[0]; k++) {
        if (s->ref[refs[k]] == LUA_NOREF) continue;
        if (call_traced(L, s->ref[refs[k]], first + 1, 1 + np, names[k], &e) != LF_OK) reason_of(&e, "", reason, sizeof reason);
        else if (lfb_trace_read_number(L, tidx, -1, NULL, out[k], &e) != LF_OK)
            snprintf(reason, sizeof reason, "%s %s", names[k], e.msg);
        lua_settop(L, first + 1 + np);
    }
    int ok = 0;
    if (!reason[0]) {
        lf_model_graph_opts o = {backend, NULL, 1};
        if (lf_lie_ode_graph_def(t->g, M, &nodes, par, &o, def, &e) == LF_OK) {
            ok = 1;
            snprintf(report, size, "%s", lf_compiled_report(lf_lie_ode_def_compiled(def)));
        } else
            snprintf(reason, sizeof reason, "%s", e.msg);
    }
    lfb_trace_end(t);
    lua_settop(L, top);
    if (!ok) s->fell_back = !trace_failed(L, backend, fn, reason, report, size);
    return ok;
}

/* ---------------------------------------------------------------- spheres */
int lfb_compile_spheres(lua_State *L, lfb_system *s, int n, const double *q0, int backend, lf_spheres_def *inner,
                        lf_spheres_def *def, const char *fn, char *report, size_t size)
{
    const int top = lua_gettop(L);
    lfb_trace *t = lfb_trace_new(L, LFB_TRACE_STRICT, 0);
    const int tidx = lua_gettop(L);
    double *par = lua_newuserdatauv(L, LFB_MAXPAR * sizeof(double), 0);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lfb_trace_push_inputs(L, tidx, 3, q0 + 3 * i);
        lua_rawseti(L, -2, i + 1);
    }
    const int first = lua_gettop(L);
    int npar, np = push_traced_params(L, s, tidx, par, &npar);
    lf_error e;
    char reason[640] = "";
    int V = -1, ok = 0, *grad = NULL;
    if (call_traced(L, s->ref[LFB_REF_U], first, 1 + np, "V(qs)", &e) != LF_OK) reason_of(&e, "", reason, sizeof reason);
    else if (lfb_trace_read_number(L, tidx, -1, NULL, &V, &e) != LF_OK) snprintf(reason, sizeof reason, "V %s", e.msg);
    lua_settop(L, first + np);
    if (!reason[0] && s->ref[LFB_REF_TAU] != LUA_NOREF) { /* the user's gradient, traced on the same inputs */
        grad = lua_newuserdatauv(L, 3 * (size_t)n * sizeof(int), 0);
        lua_insert(L, first);
        if (call_traced(L, s->ref[LFB_REF_TAU], first + 1, 1 + np, "dV(qs)", &e) != LF_OK) reason_of(&e, "", reason, sizeof reason);
        else read_vectors(L, tidx, -1, n, grad, "gradient dV(qs)", reason, sizeof reason);
    }
    if (!reason[0]) {
        lf_model_graph_opts o = {backend, NULL, 1};
        if (lf_spheres_graph_def(t->g, V, grad, n, 0, NULL, NULL, inner, par, &o, def, &e) == LF_OK) {
            ok = 1;
            inner = NULL;
        } else
            snprintf(reason, sizeof reason, "%s", e.msg);
    }
    lfb_trace_end(t);
    lua_settop(L, top);
    if (inner && inner->destroy) inner->destroy(inner->ctx);
    if (ok) snprintf(report, size, "%s", lf_compiled_report(lf_spheres_def_compiled(def)));
    else s->fell_back = !trace_failed(L, backend, fn, reason, report, size);
    return ok;
}

lfb_compiled *lfb_testcompiled(lua_State *L, int idx)
{
    lfb_compiled *c = luaL_testudata(L, idx, LFB_COMPILED);
    return c && c->m ? c : NULL;
}
