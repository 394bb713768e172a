/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — lf.lie_ode: Lie-group ODEs on products of so3, s2, s3, gl3, ts2, tgl3, se3, r<m>,
 * with the vector field f written in Lua (called through the callback layer) or a built-in in C.
 *
 *   lf.lie_ode{factors = {"so3", "r3"}, trivialization = "right" | "left", y0 = {...},
 *              f = function(t, y) return {xi_1, ...} end | "builtin name", params = {...},
 *              energy = function(y) return number end, jacobian = function(t, y) return D end,
 *              H = function(y) return number end, dH = function(y) return {g_1, ...} end,
 *              skew = function(y, a) return {w_1, ...} end | "mqr"}
 * H and dH (both, for a Lua f; "autodiff" for dH is turned into a function by init.lua) give the
 * first-integral form; a built-in brings its own H, dH and skew map, and skew = "mqr" replaces its
 * skew map by the default one.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/bind.h"
#include "lib/open.h"
#include "shared/model.h"
#include "shared/trace.h"
#include "model/model_graph.h"

typedef struct {
    lfb_system *s;
    double t;
    const double *y;
} f_args;

/* the arguments (t,) y (, params) of the user's functions */
static int push_t_y(lua_State *L, void *ud)
{
    const f_args *a = ud;
    lua_pushnumber(L, a->t);
    lfb_push_field(L, a->s->sys, lf_system_field(a->s->sys, 0), a->y);
    return 2 + lfb_push_params(L, a->s);
}

static int push_y(lua_State *L, void *ud)
{
    const f_args *a = ud;
    lfb_push_field(L, a->s->sys, lf_system_field(a->s->sys, 0), a->y);
    return 1 + lfb_push_params(L, a->s);
}

/* ---- derivatives at a point of the interpreted f and H (jacobian = "autodiff", dH = "autodiff") */
/* t and y as traced inputs (t is input 0, y the inputs 1 .. np) */
static int push_traced_t_y(lua_State *L, int tidx, void *ud)
{
    const f_args *a = ud;
    const lf_manifold *M = lf_system_manifold(a->s->sys);
    lfb_trace_push_inputs(L, tidx, 1, &a->t);
    lua_createtable(L, lf_manifold_nfactors(M), 0);
    for (int i = 0; i < lf_manifold_nfactors(M); i++) {
        const lf_factor *f = lf_manifold_factor(M, i);
        lfb_trace_push_factor(L, tidx, f, a->y + f->op, 0);
        lua_rawseti(L, -2, i + 1);
    }
    return 2 + lfb_push_params(L, a->s);
}

static int push_traced_y(lua_State *L, int tidx, void *ud)
{
    int n = push_traced_t_y(L, tidx, ud);
    lua_remove(L, -n); /* without t (the input t stays: the graph's input 0) */
    return n - 1;
}

static int read_xi(lua_State *L, int tidx, int idx, void *ud, int *ids, lf_error *err)
{
    const f_args *a = ud;
    return lfb_trace_read_algebra(L, tidx, idx, lf_system_manifold(a->s->sys), ids, "f(t, y)", err);
}

static int autodiff_jacobian(void *ctx, double t, const double *y, double *D, lf_error *err)
{
    lfb_system *s = ctx;
    const lf_manifold *M = lf_system_manifold(s->sys);
    const int np = lf_manifold_nparam(M), nd = lf_manifold_ndim(M);
    f_args a = {s, t, y};
    double *w = malloc(((size_t)nd * (np + 1) + (size_t)nd * np + (size_t)np * nd + np + nd) * sizeof *w);
    if (!w) return lf_error_set(err, LF_ENOMEM, "autodiff Jacobian of f: out of memory");
    double *Jt = w, *J = Jt + (size_t)nd * (np + 1), *work = J + (size_t)nd * np;
    lua_State *L = s->L;
    int rc = lfb_point_derivatives(L, s->ref[LFB_REF_F], push_traced_t_y, read_xi, &a, nd, 1 + np, NULL, Jt,
                                   "autodiff Jacobian of f(t, y)", err);
    s->L = L;
    if (rc == LF_OK) {
        for (int i = 0; i < nd; i++) memcpy(J + (size_t)i * np, Jt + (size_t)i * (np + 1) + 1, (size_t)np * sizeof *J);
        lf_lie_trivialize_jacobian(M, y, J, D, work);
    }
    free(w);
    return rc;
}

static int autodiff_dH(void *ctx, const double *y, double *g, lf_error *err)
{
    lfb_system *s = ctx;
    const lf_manifold *M = lf_system_manifold(s->sys);
    const int np = lf_manifold_nparam(M), nd = lf_manifold_ndim(M);
    f_args a = {s, 0, y};
    double *w = malloc(((size_t)np + 1 + (size_t)np * nd + np + nd) * sizeof *w);
    if (!w) return lf_error_set(err, LF_ENOMEM, "autodiff dH: out of memory");
    lua_State *L = s->L;
    int rc = lfb_point_derivatives(L, s->ref[LFB_REF_H], push_traced_y, lfb_trace_read_number, &a, 1, 1 + np, NULL, w,
                                   "autodiff dH of H(y)", err);
    s->L = L;
    if (rc == LF_OK) lf_lie_trivialize_gradient(M, y, w + 1, g, w + 1 + np);
    free(w);
    return rc;
}

static int lua_f(void *ctx, double t, const double *y, double *xi, lf_error *err)
{
    lfb_system *s = ctx;
    f_args a = {s, t, y};
    lua_State *L = s->L;
    int rc = lfb_call(L, s->ref[LFB_REF_F], push_t_y, &a, 1, "f(t, y)", err);
    s->L = L; /* the callback may have rebound the system to another coroutine */
    if (rc != LF_OK) return rc;
    rc = lfb_read_algebra(L, -1, lf_system_manifold(s->sys), xi, "f(t, y)", err);
    lua_pop(L, 1);
    return rc;
}

static int lua_energy(void *ctx, const double *y, double *E, lf_error *err)
{
    lfb_system *s = ctx;
    f_args a = {s, 0, y};
    lua_State *L = s->L;
    int rc = lfb_call(L, s->ref[LFB_REF_ENERGY], push_y, &a, 1, "energy(y)", err);
    s->L = L;
    if (rc != LF_OK) return rc;
    int ok;
    *E = lua_tonumberx(L, -1, &ok);
    if (!ok) rc = lf_error_set(err, LF_ECALLBACK, "energy(y) returned %s, expected a number", lfb_typename(L, -1));
    lua_pop(L, 1);
    return rc;
}

static int lua_H(void *ctx, const double *y, double *H, lf_error *err)
{
    lfb_system *s = ctx;
    f_args a = {s, 0, y};
    lua_State *L = s->L;
    int rc = lfb_call(L, s->ref[LFB_REF_H], push_y, &a, 1, "H(y)", err);
    s->L = L;
    if (rc != LF_OK) return rc;
    int ok;
    *H = lua_tonumberx(L, -1, &ok);
    if (!ok) rc = lf_error_set(err, LF_ECALLBACK, "H(y) returned %s, expected a number", lfb_typename(L, -1));
    lua_pop(L, 1);
    return rc;
}

static int lua_dH(void *ctx, const double *y, double *g, lf_error *err)
{
    lfb_system *s = ctx;
    f_args a = {s, 0, y};
    lua_State *L = s->L;
    int rc = lfb_call(L, s->ref[LFB_REF_DH], push_y, &a, 1, "dH(y)", err);
    s->L = L;
    if (rc != LF_OK) return rc;
    rc = lfb_read_algebra(L, -1, lf_system_manifold(s->sys), g, "dH(y)", err);
    lua_pop(L, 1);
    return rc;
}

typedef struct {
    lfb_system *s;
    const double *y, *a;
} skew_args;

static int push_y_a(lua_State *L, void *ud)
{
    const skew_args *k = ud;
    lfb_push_field(L, k->s->sys, lf_system_field(k->s->sys, 0), k->y);
    lfb_push_algebra(L, lf_system_manifold(k->s->sys), k->a);
    return 2 + lfb_push_params(L, k->s);
}

static int lua_skew(void *ctx, const double *y, const double *av, double *out, lf_error *err)
{
    lfb_system *s = ctx;
    skew_args k = {s, y, av};
    lua_State *L = s->L;
    int rc = lfb_call(L, s->ref[LFB_REF_SKEW], push_y_a, &k, 1, "skew(y, a)", err);
    s->L = L;
    if (rc != LF_OK) return rc;
    rc = lfb_read_algebra(L, -1, lf_system_manifold(s->sys), out, "skew(y, a)", err);
    lua_pop(L, 1);
    return rc;
}

/* jacobian(t, y) -> nd rows of nd numbers, or nd*nd numbers (row-major) */
static int lua_jacobian(void *ctx, double t, const double *y, double *D, lf_error *err)
{
    lfb_system *s = ctx;
    lua_State *L = s->L;
    f_args a = {s, t, y};
    const int nd = lf_system_ndim(s->sys);
    int rc = lfb_call(L, s->ref[LFB_REF_JAC], push_t_y, &a, 1, "jacobian(t, y)", err);
    s->L = L;
    if (rc != LF_OK) return rc;
    const int top = lua_gettop(L);
    if (lua_type(L, top) != LUA_TTABLE) rc = LF_ECALLBACK;
    lua_Integer len = rc == LF_OK ? (lua_Integer)lua_rawlen(L, top) : 0;
    for (int i = 0; rc == LF_OK && i < nd * nd; i++) {
        int ok;
        if (len == nd * nd) lua_rawgeti(L, top, i + 1);
        else if (len == nd) {
            lua_rawgeti(L, top, i / nd + 1);
            if (lua_type(L, -1) != LUA_TTABLE) {
                lua_pop(L, 1);
                rc = LF_ECALLBACK;
                break;
            }
            lua_rawgeti(L, -1, i % nd + 1);
            lua_remove(L, -2);
        } else {
            rc = LF_ECALLBACK;
            break;
        }
        D[i] = lua_tonumberx(L, -1, &ok);
        lua_pop(L, 1);
        if (!ok || !isfinite(D[i])) rc = LF_ECALLBACK;
    }
    lua_settop(L, top - 1);
    if (rc != LF_OK)
        return lf_error_set(err, LF_ECALLBACK, "jacobian(t, y) must return %d rows of %d finite numbers (or %d numbers)",
                            nd, nd, nd * nd);
    return LF_OK;
}

static const char *const keys[] = {"factors", "trivialization", "y0", "f", "params", "energy", "jacobian", "H", "dH",
                                   "skew", "compile", NULL};

/* skew = "mqr" (or nil): 1 for the default map; a function: 0 (left on the stack for the caller to
 * store); anything else is an error */
static int skew_is_default(lua_State *L, const char *fn, int allow_function)
{
    int t = lua_getfield(L, 1, "skew");
    int r = 1;
    if (t == LUA_TSTRING && strcmp(lua_tostring(L, -1), "mqr") == 0) r = 1;
    else if (t == LUA_TNIL) r = 1;
    else if (t == LUA_TFUNCTION && allow_function) r = 0;
    else
        luaL_error(L, "%s: field 'skew' must be %s\"mqr\" (the default skew map of McLachlan, Quispel & Robidoux), "
                      "got %s", fn, allow_function ? "a function(y, a) returning w(y)(a), or " : "", lfb_typename(L, -1));
    if (r) lua_pop(L, 1);
    return r;
}

/* A manifold owned by a userdata (freed by its __gc), so that a Lua error while reading the other
 * fields leaks nothing. */
static int manifold_gc(lua_State *L)
{
    lf_manifold **M = lua_touserdata(L, 1);
    lf_manifold_free(*M);
    *M = NULL;
    return 0;
}

static lf_manifold *push_manifold(lua_State *L, lf_manifold *M)
{
    lf_manifold **u = lua_newuserdatauv(L, sizeof *u, 0);
    *u = M;
    if (luaL_newmetatable(L, "lf.manifold_owner")) {
        lua_pushcfunction(L, manifold_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    return M;
}

/* params of a built-in field: {name = number or array, ...} -> flat array in the listed order */
static double *read_params(lua_State *L, int t, const char *fname, int *count)
{
    int np = 0, total = 0;
    const lf_lie_ode_param *ps = lf_lie_ode_builtin_params(fname, &np);
    for (int i = 0; i < np; i++) total += ps[i].size;
    double *v = lua_newuserdatauv(L, (size_t)(total > 0 ? total : 1) * sizeof(double), 0);
    int off = 0;
    for (int i = 0; i < np; i++) {
        char w[96];
        snprintf(w, sizeof w, "lf.lie_ode: params.%s of '%s'", ps[i].name, fname);
        if (t == 0 || lua_getfield(L, t, ps[i].name) == LUA_TNIL)
            luaL_error(L, "%s (%d numbers) is required", w, ps[i].size);
        if (ps[i].size == 1) v[off] = lfb_checkfinite(L, -1, w);
        else if (ps[i].size == 3) lfb_tovec3(L, -1, v + off, w);
        else if (ps[i].size == 9) lfb_tomat3(L, -1, v + off, w);
        lua_pop(L, 1);
        off += ps[i].size;
    }
    if (t) { /* unknown parameter names */
        const char *names[8] = {NULL};
        for (int i = 0; i < np && i < 7; i++) names[i] = ps[i].name;
        char fnname[96];
        snprintf(fnname, sizeof fnname, "lf.lie_ode: params of '%s'", fname);
        lfb_check_keys(L, t, names, fnname, "parameter");
    }
    *count = total;
    return v;
}

/* The manifold of the fields factors and trivialization of table 1 (its owner pushed). */
static const lf_manifold *read_manifold(lua_State *L, const char *fn)
{
    if (lua_getfield(L, 1, "factors") != LUA_TTABLE)
        luaL_error(L,
                   "%s: field 'factors' must be an array of factor names (\"so3\", \"s2\", \"s3\", \"gl3\", "
                   "\"ts2\", \"tgl3\", \"se3\", \"r<m>\"), got %s",
                   fn, lfb_typename(L, -1));
    const int t = lua_gettop(L);
    lua_Integer n = (lua_Integer)lua_rawlen(L, t);
    if (n < 1 || n > 100000) luaL_error(L, "%s: 'factors' must list 1 to 100000 factors, got %d", fn, (int)n);
    lf_factor_kind *kinds = lua_newuserdatauv(L, (size_t)n * (sizeof(lf_factor_kind) + sizeof(int)), 0);
    int *dims = (int *)(kinds + n);
    for (lua_Integer i = 0; i < n; i++) {
        lua_rawgeti(L, t, i + 1);
        const char *name = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (!name || lf_factor_parse(name, &kinds[i], &dims[i]) != 0)
            luaL_error(L,
                       "%s: factors[%d] = %s is not a factor (\"so3\", \"s2\", \"s3\", \"gl3\", \"ts2\", \"tgl3\", "
                       "\"se3\" or \"r<m>\" such as \"r3\")",
                       fn, (int)i + 1, name ? name : lfb_typename(L, -1));
        lua_pop(L, 1);
    }
    lf_trivialization triv = LF_RIGHT_TRIVIALIZED;
    if (lua_getfield(L, 1, "trivialization") != LUA_TNIL) {
        const char *tr = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
        if (strcmp(tr, "left") == 0) triv = LF_LEFT_TRIVIALIZED;
        else if (strcmp(tr, "right") != 0)
            luaL_error(L, "%s: trivialization must be \"right\" (y' = xi . y) or \"left\" (y' = y . xi), got %s", fn,
                       *tr ? tr : lfb_typename(L, -1));
    }
    lf_error e;
    lf_manifold *M0 = lf_manifold_new((int)n, kinds, dims, triv, &e);
    if (!M0) lfb_error(L, &e);
    lua_settop(L, t - 1);
    return push_manifold(L, M0);
}

/* The field y0 of table 1, one value per factor of M, into a scratch vector left on the stack. */
static double *read_y0(lua_State *L, const lf_manifold *M, const char *fn)
{
    const int n = lf_manifold_nfactors(M);
    double *y0 = lua_newuserdatauv(L, (size_t)lf_manifold_nparam(M) * sizeof(double), 0);
    if (lua_getfield(L, 1, "y0") != LUA_TTABLE || (lua_Integer)lua_rawlen(L, -1) != n)
        luaL_error(L, "%s: field 'y0' must be an array of %d values (one per factor), got %s", fn, n,
                   lua_type(L, -1) == LUA_TTABLE ? "an array of another length" : lfb_typename(L, -1));
    for (int i = 0; i < n; i++) {
        char w[64];
        snprintf(w, sizeof w, "%s: y0[%d]", fn, i + 1);
        lua_rawgeti(L, -1, i + 1);
        const lf_factor *f = lf_manifold_factor(M, i);
        lfb_read_factor(L, -1, f, y0 + f->op, w);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return y0;
}

/* A built-in vector field (its name at fidx) with the params of table 1. */
static lf_system *builtin_system(lua_State *L, const lf_manifold *M, const double *y0, int fidx, const char *fn)
{
    const char *name = lua_tostring(L, fidx);
    int nparams = 0;
    if (!lf_lie_ode_builtin_params(name, &nparams)) {
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        const char *const *names = lf_lie_ode_builtin_names();
        for (int i = 0; names[i]; i++) {
            if (i) luaL_addstring(&b, ", ");
            luaL_addstring(&b, names[i]);
        }
        luaL_pushresult(&b);
        luaL_error(L, "%s: unknown built-in vector field '%s' (built-ins: %s)", fn, name, lua_tostring(L, -1));
    }
    int tp = lua_getfield(L, 1, "params");
    if (tp != LUA_TTABLE && tp != LUA_TNIL) luaL_error(L, "%s: field 'params' must be a table, got %s", fn, lfb_typename(L, -1));
    int count;
    double *params = read_params(L, tp == LUA_TTABLE ? lua_gettop(L) : 0, name, &count);
    if (lua_getfield(L, 1, "energy") != LUA_TNIL || lua_getfield(L, 1, "jacobian") != LUA_TNIL ||
        lua_getfield(L, 1, "H") != LUA_TNIL || lua_getfield(L, 1, "dH") != LUA_TNIL)
        luaL_error(L, "%s: a built-in vector field brings its own energy, Jacobian, H and dH", fn);
    const int mqr = lua_getfield(L, 1, "skew") != LUA_TNIL;
    lua_pop(L, 1);
    skew_is_default(L, fn, 0);
    lf_lie_ode_def def;
    lf_error e;
    if (lf_lie_ode_builtin_def(name, M, params, &def, &e) != LF_OK) lfb_error(L, &e);
    if (mqr && !def.H) {
        def.destroy(def.ctx);
        luaL_error(L, "%s: the built-in '%s' has no first integral: 'skew' does not apply", fn, name);
    }
    if (mqr) def.skew = NULL;
    lf_system *sys = lf_lie_ode_new(M, y0, &def, &e);
    if (!sys) lfb_error_in(L, fn, &e);
    return sys;
}

/* The Lua functions of table 1 besides f: energy, jacobian, H, dH, skew, kept by s; whether the
 * Jacobian is "autodiff" and whether there is a skew map. */
static void read_callbacks(lua_State *L, lfb_system *s, const lf_manifold *M, const char *fn, int *jac_autodiff,
                           int *has_skew)
{
    int te = lua_getfield(L, 1, "energy");
    if (te == LUA_TFUNCTION) {
        lfb_natural(L, -1);
        lua_pushvalue(L, -1);
        s->ref[LFB_REF_ENERGY] = luaL_ref(L, LUA_REGISTRYINDEX);
    } else if (te != LUA_TNIL)
        luaL_error(L, "%s: field 'energy' must be a function(y) returning a number, got %s", fn, lfb_typename(L, -1));
    int tj = lua_getfield(L, 1, "jacobian");
    *jac_autodiff = tj == LUA_TSTRING && strcmp(lua_tostring(L, -1), "autodiff") == 0;
    if (tj == LUA_TFUNCTION) {
        lua_pushvalue(L, -1);
        s->ref[LFB_REF_JAC] = luaL_ref(L, LUA_REGISTRYINDEX);
    } else if (tj != LUA_TNIL && !*jac_autodiff)
        luaL_error(L, "%s: field 'jacobian' must be a function(t, y) returning the Jacobian along the action (%d x %d), "
                      "or \"autodiff\", got %s", fn, lf_manifold_ndim(M), lf_manifold_ndim(M), lfb_typename(L, -1));
    int th = lua_getfield(L, 1, "H"), td = lua_getfield(L, 1, "dH");
    const int dH_autodiff = td == LUA_TNIL || (td == LUA_TSTRING && strcmp(lua_tostring(L, -1), "autodiff") == 0);
    if (th == LUA_TFUNCTION && (td == LUA_TFUNCTION || dH_autodiff)) {
        lfb_natural(L, -2);
        lua_pushvalue(L, -2);
        s->ref[LFB_REF_H] = luaL_ref(L, LUA_REGISTRYINDEX);
        if (td == LUA_TFUNCTION) {
            lua_pushvalue(L, -1);
            s->ref[LFB_REF_DH] = luaL_ref(L, LUA_REGISTRYINDEX);
        }
    } else if (th != LUA_TNIL || td != LUA_TNIL) {
        if (th != LUA_TFUNCTION)
            luaL_error(L, "%s: field 'H' must be a function(y) returning a number (the first integral), got %s", fn,
                       lfb_typename(L, -2));
        luaL_error(L, "%s: field 'dH' must be a function(y) returning one algebra element per factor (the trivialized "
                      "differential of H), or \"autodiff\", got %s", fn, lfb_typename(L, -1));
    }
    lua_pop(L, 2);
    *has_skew = !skew_is_default(L, fn, 1);
    if (*has_skew) {
        if (s->ref[LFB_REF_H] == LUA_NOREF) luaL_error(L, "%s: 'skew' needs a first integral (field H)", fn);
        s->ref[LFB_REF_SKEW] = luaL_ref(L, LUA_REGISTRYINDEX);
    }
}

/* A vector field written in Lua (at fidx) with its energy, Jacobian, H, dH, skew map: compiled (and
 * their derivatives), or the Lua functions called at every evaluation. */
static lf_system *lua_system(lua_State *L, lfb_system *s, const lf_manifold *M, const double *y0, int fidx,
                             const char *fn)
{
    const int backend = lfb_compile_option(L, 1, fn);
    lfb_store_params(L, s, 1, NULL, LFB_MAXPAR, fn);
    lfb_natural(L, fidx);
    lua_pushvalue(L, fidx);
    s->ref[LFB_REF_F] = luaL_ref(L, LUA_REGISTRYINDEX);
    int jac_autodiff, has_skew;
    read_callbacks(L, s, M, fn, &jac_autodiff, &has_skew);
    lf_lie_ode_def def = {.name = "lua", .f = lua_f, .ctx = s};
    lf_lie_ode_graph own = {.jacobian = s->ref[LFB_REF_JAC] != LUA_NOREF ? lua_jacobian : NULL,
                            .dH = s->ref[LFB_REF_DH] != LUA_NOREF ? lua_dH : NULL,
                            .skew = has_skew ? lua_skew : NULL,
                            .user = s};
    char report[640];
    int compiled = 0;
    if (backend >= 0) compiled = lfb_compile_lie_ode(L, s, M, y0, backend, &own, &def, fn, report, sizeof report);
    else snprintf(report, sizeof report, "interpreted: compile = false");
    if (!compiled) {
        def.jacobian = own.jacobian ? own.jacobian : jac_autodiff ? autodiff_jacobian : NULL;
        def.energy = s->ref[LFB_REF_ENERGY] != LUA_NOREF ? lua_energy : NULL;
        def.H = s->ref[LFB_REF_H] != LUA_NOREF ? lua_H : NULL;
        def.dH = !def.H ? NULL : own.dH ? own.dH : autodiff_dH;
        def.skew = own.skew;
    }
    lfb_set_compiled(L, s, report);
    lf_error e;
    lf_system *sys = lf_lie_ode_new(M, y0, &def, &e);
    if (!sys) lfb_error_in(L, fn, &e);
    return sys;
}

static int l_lie_ode(lua_State *L)
{
    const char *fn = "lf.lie_ode";
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    lfb_check_keys(L, 1, keys, fn, "field");
    const lf_manifold *M = read_manifold(L, fn);
    const double *y0 = read_y0(L, M, fn);
    int tf = lua_getfield(L, 1, "f");
    const int fidx = lua_gettop(L);
    lfb_system *s = lfb_newsystem(L);
    const int ud = lua_gettop(L);
    if (tf == LUA_TSTRING) s->sys = builtin_system(L, M, y0, fidx, fn);
    else if (tf == LUA_TFUNCTION) s->sys = lua_system(L, s, M, y0, fidx, fn);
    else
        return luaL_error(L, "%s: field 'f' must be a function(t, y) returning one algebra element per factor, or the "
                             "name of a built-in vector field, got %s", fn, lfb_typename(L, fidx));
    lua_settop(L, ud);
    lfb_check_initial(L, s, 0, fn);
    return 1;
}

/* "lf.lie_ode(s2 x r3, right-trivialized, f = s2_gradient_flow)" */
static int lie_ode_tostring(lua_State *L, lfb_system *s)
{
    const lf_manifold *M = lf_system_manifold(s->sys);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "lf.lie_ode(");
    for (int i = 0; i < lf_manifold_nfactors(M); i++) {
        const lf_factor *f = lf_manifold_factor(M, i);
        char name[32];
        if (f->kind == LF_RM) snprintf(name, sizeof name, "r%d", f->nd);
        else snprintf(name, sizeof name, "%s", lf_factor_kind_name(f->kind));
        if (i) luaL_addstring(&b, " x ");
        luaL_addstring(&b, name);
    }
    luaL_addstring(&b, lf_manifold_trivialization(M) == LF_LEFT_TRIVIALIZED ? ", left-trivialized" : ", right-trivialized");
    const char *name = lf_lie_ode_name(s->sys);
    if (*name) {
        luaL_addstring(&b, ", f = ");
        luaL_addstring(&b, name);
    }
    luaL_addstring(&b, ")");
    luaL_pushresult(&b);
    return 1;
}

static const lfb_kind lie_ode_kind = {"lie_ode", "Lie ODEs", NULL, lie_ode_tostring, NULL, NULL};

void lfb_open_lie_ode(lua_State *L)
{
    lfb_register_kind(L, &lie_ode_kind);
    lua_pushcfunction(L, l_lie_ode);
    lua_setfield(L, -2, "lie_ode");
}
