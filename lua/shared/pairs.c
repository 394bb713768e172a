/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — pair kernels: U = sum over the listed pairs i < j of pair(x_i, x_j, r_ij, p)
 * (x = R for lf.bodies, q for lf.spheres), r_ij = positions[j] - positions[i], pairs within `cutoff`
 * (all pairs without one), plus the system's own potential if it has one. Bodies with a mass move:
 * r_ij = x_j - x_i of their centres of mass at each evaluation, pairs within the cutoff at that
 * moment, and the kernel's derivative in r gives the forces. The kernel is traced once and compiled
 * (model_graph.h: lf_potential_pairs, lf_potential_pairs_x, lf_spheres_graph_def), the loop over the
 * pairs runs in C; interpreted (compile = false, or a kernel that cannot be traced) it is called per
 * pair and differentiated at each pair's point. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/model.h"
#include "shared/trace.h"
#include "model/model_graph.h"

/* ---------------------------------------------------------------- the pair list */
typedef struct {
    int n, npairs;
    int *pairs;  /* 2 npairs, 0-based */
    double *r;   /* 3 npairs */
} pair_list;

static void pair_list_free(pair_list *p)
{
    free(p->pairs);
    free(p->r);
    p->pairs = NULL;
    p->r = NULL;
}

/* positions (n vectors) and cutoff of the table at t into a list (malloc'd); moving (x0: the initial
 * centres of mass of bodies with a mass): every pair, the cutoff applied at each evaluation (*cutoff) */
static void read_pairs(lua_State *L, int t, int n, const double *x0, pair_list *pl, double *cutoff_out, const char *fn)
{
    memset(pl, 0, sizeof *pl);
    pl->n = n;
    const double *x;
    if (x0) {
        if (lua_getfield(L, t, "positions") != LUA_TNIL)
            luaL_error(L,
                       "%s: bodies with a mass move: their pair kernel takes r_ij from their centres of mass x, not "
                       "from 'positions'",
                       fn);
        x = x0;
    } else {
        if (lua_getfield(L, t, "positions") != LUA_TTABLE || (int)lua_rawlen(L, -1) != n)
            luaL_error(L, "%s: a 'pair' kernel needs 'positions', an array of %d vectors (one per %s), got %s", fn, n,
                       strstr(fn, "spheres") ? "sphere" : "body", lfb_typename(L, -1));
        double *xs = lua_newuserdatauv(L, 3 * (size_t)n * sizeof(double), 0);
        for (int i = 0; i < n; i++) {
            char w[96];
            snprintf(w, sizeof w, "%s: positions[%d]", fn, i + 1);
            lua_rawgeti(L, -2, i + 1);
            lfb_tovec3(L, -1, xs + 3 * i, w);
            lua_pop(L, 1);
        }
        x = xs;
    }
    double cutoff = INFINITY;
    if (lua_getfield(L, t, "cutoff") != LUA_TNIL) {
        cutoff = lfb_checkfinite(L, -1, "field 'cutoff'");
        if (!(cutoff > 0)) luaL_error(L, "%s: field 'cutoff' must be positive, got %f", fn, cutoff);
    }
    lua_pop(L, 1);
    *cutoff_out = cutoff;
    if (x0) cutoff = INFINITY; /* the pairs within it are chosen at each evaluation */
    size_t cap = 64, np = 0;
    int *pairs = malloc(2 * cap * sizeof *pairs);
    double *r = malloc(3 * cap * sizeof *r);
    for (int i = 0; i < n && pairs && r; i++)
        for (int j = i + 1; j < n; j++) {
            double d[3];
            lf_v3_sub(x + 3 * j, x + 3 * i, d);
            if (!(lf_v3_norm(d) < cutoff)) continue;
            if (np == cap) {
                cap *= 2;
                int *p2 = realloc(pairs, 2 * cap * sizeof *p2);
                if (p2) pairs = p2;
                double *r2 = p2 ? realloc(r, 3 * cap * sizeof *r2) : NULL;
                if (r2) r = r2;
                if (!p2 || !r2) break;
            }
            pairs[2 * np] = i;
            pairs[2 * np + 1] = j;
            memcpy(r + 3 * np, d, sizeof d);
            np++;
        }
    lua_pop(L, x0 ? 1 : 2);
    if (!pairs || !r || (np == cap && np > 0 && 0)) {
        free(pairs);
        free(r);
        luaL_error(L, "%s: out of memory listing the pairs", fn);
    }
    pl->pairs = pairs;
    pl->r = r;
    pl->npairs = (int)np;
}

/* ---------------------------------------------------------------- tracing the kernel */
/* the kernel's arguments: x_i, x_j (m = 9 or 3 numbers each, traced from a, b), r (traced) and the
 * parameters; inputs 0 .. 2m + 2 */
static int push_kernel_args(lua_State *L, int tidx, int m, const double *a, const double *b, const double *r)
{
    lfb_trace_push_inputs(L, tidx, m, a);
    lfb_trace_push_inputs(L, tidx, m, b);
    lfb_trace_push_inputs(L, tidx, 3, r);
    return 3;
}

/* Compile the kernel in s->ref[LFB_REF_PAIR] for elements of m numbers (9: bodies, 3: spheres),
 * traced at the first pair of x; returns the graph's output node, or -1 with the reason. */
static int trace_kernel(lua_State *L, lfb_system *s, int tidx, int m, const double *x, const pair_list *pl,
                        double *par, char *reason, size_t size)
{
    const double zero[3] = {0, 0, 0};
    const int i = pl->npairs ? pl->pairs[0] : 0, j = pl->npairs ? pl->pairs[1] : (pl->n > 1);
    const int first = lua_gettop(L) + 1;
    int n = push_kernel_args(L, tidx, m, x + m * i, x + m * j, pl->npairs ? pl->r : zero);
    int npar = 0;
    if (lfb_push_params(L, s)) {
        const int p = lua_gettop(L);
        lfb_trace_push_params(L, tidx, p, par, &npar, LFB_MAXPAR);
        lua_remove(L, p);
        n++;
    }
    lf_error e;
    int u = -1;
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->ref[LFB_REF_PAIR]);
    lua_insert(L, first);
    if (lua_pcall(L, n, 1, 0) != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        snprintf(reason, size, "pair kernel: %.*s", (int)strcspn(msg ? msg : "", "\n"), msg ? msg : "(error object)");
        lua_settop(L, first - 1);
        return -1;
    }
    if (lfb_trace_read_number(L, tidx, -1, NULL, &u, &e) != LF_OK) snprintf(reason, size, "pair kernel %s", e.msg);
    lua_settop(L, first - 1);
    return u;
}

/* ---------------------------------------------------------------- interpreted kernels */
typedef struct {
    lfb_system *s;
    pair_list pl;
    int m;                          /* 9 (bodies) or 3 (spheres) */
    const lf_potential *inner;      /* bodies */
    lf_spheres_def sinner;          /* spheres (owned) */
    double cutoff;                  /* bodies with a mass (moving centres): |r_ij| below it */
} lua_pairs;

typedef struct {
    lua_pairs *p;
    const double *a, *b, *r;
    int moving; /* r traced too (moving centres) */
} kernel_args;

static int push_plain(lua_State *L, void *ud)
{
    const kernel_args *k = ud;
    luaL_checkstack(L, 6, "pair");
    if (k->p->m == 9) {
        lfb_pushmat3(L, k->a);
        lfb_pushmat3(L, k->b);
    } else {
        lfb_pushvec3(L, k->a);
        lfb_pushvec3(L, k->b);
    }
    lfb_pushvec3(L, k->r);
    return 3 + lfb_push_params(L, k->p->s);
}

static int push_traced(lua_State *L, int tidx, void *ud)
{
    const kernel_args *k = ud;
    luaL_checkstack(L, 6, "pair");
    lfb_trace_push_inputs(L, tidx, k->p->m, k->a);
    lfb_trace_push_inputs(L, tidx, k->p->m, k->b);
    if (k->moving) lfb_trace_push_inputs(L, tidx, 3, k->r);
    else lfb_pushvec3(L, k->r); /* fixed: no derivative */
    return 3 + lfb_push_params(L, k->p->s);
}

/* the value of pair p, and (G not NULL) its Euclidean gradient with respect to x_i, x_j (2m), and r_ij
 * (3 more) when r (the moving centres' r_ij) is given; r NULL: the fixed r_ij of the list */
static int kernel(lua_pairs *lp, const double *x, int p, const double *r, double *u, double *G, lf_error *err)
{
    lfb_system *s = lp->s;
    lua_State *L = s->L;
    const int i = lp->pl.pairs[2 * p], j = lp->pl.pairs[2 * p + 1], m = lp->m;
    kernel_args k = {lp, x + m * i, x + m * j, r ? r : lp->pl.r + 3 * p, r != NULL};
    int rc;
    if (G)
        rc = lfb_point_derivatives(L, s->ref[LFB_REF_PAIR], push_traced, lfb_trace_read_number, &k, 1,
                                   2 * m + (r ? 3 : 0), u, G, "pair kernel", err);
    else {
        rc = lfb_call(L, s->ref[LFB_REF_PAIR], push_plain, &k, 1, "pair kernel", err);
        if (rc == LF_OK) {
            int ok;
            *u = lua_tonumberx(L, -1, &ok);
            if (!ok) rc = lf_error_set(err, LF_ECALLBACK, "pair kernel returned %s, expected a number", lfb_typename(L, -1));
            lua_pop(L, 1);
        }
    }
    s->L = L;
    return rc;
}

static void trhat_add(const double *R, const double *G, double *tau)
{
    double M[9];
    lf_m3_tmul(R, G, M);
    tau[0] += M[5] - M[7];
    tau[1] += M[6] - M[2];
    tau[2] += M[1] - M[3];
}

static int rigid_eval(void *ctx, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    lua_pairs *lp = ctx;
    int rc = lf_potential_eval(lp->inner, nb, R, U, tau, err);
    double sum = 0;
    for (int p = 0; p < lp->pl.npairs && rc == LF_OK; p++) {
        double u, G[18];
        rc = kernel(lp, R, p, NULL, &u, tau ? G : NULL, err);
        if (rc != LF_OK) break;
        sum += u;
        if (tau) {
            const int i = lp->pl.pairs[2 * p], j = lp->pl.pairs[2 * p + 1];
            trhat_add(R + 9 * i, G, tau + 3 * i);
            trhat_add(R + 9 * j, G + 9, tau + 3 * j);
        }
    }
    if (rc == LF_OK && U) *U += sum;
    return rc;
}

/* bodies with a mass: r_ij = x_j - x_i now, pairs within the cutoff; F_i = du/dr, F_j = -du/dr */
static int rigid_eval_x(void *ctx, const lf_bodies_config *c, double *U, double *F, double *tau, lf_error *err)
{
    lua_pairs *lp = ctx;
    int rc = lf_potential_eval_x(lp->inner, c, U, F, tau, err);
    double sum = 0;
    for (int p = 0; p < lp->pl.npairs && rc == LF_OK; p++) {
        const int i = lp->pl.pairs[2 * p], j = lp->pl.pairs[2 * p + 1];
        double u, G[21], r[3];
        lf_v3_sub(c->x + 3 * j, c->x + 3 * i, r);
        if (!(lf_v3_dot(r, r) < lp->cutoff * lp->cutoff)) continue;
        rc = kernel(lp, c->R, p, r, &u, tau || F ? G : NULL, err);
        if (rc != LF_OK) break;
        sum += u;
        if (tau) {
            trhat_add(c->R + 9 * i, G, tau + 3 * i);
            trhat_add(c->R + 9 * j, G + 9, tau + 3 * j);
        }
        if (F) {
            lf_v3_add(F + 3 * i, G + 18, F + 3 * i);
            lf_v3_sub(F + 3 * j, G + 18, F + 3 * j);
        }
    }
    if (rc == LF_OK && U) *U += sum;
    return rc;
}

static int spheres_eval(void *ctx, int n, const double *q, double *V, double *g, lf_error *err)
{
    lua_pairs *lp = ctx;
    int rc = LF_OK;
    if (lp->sinner.potential) rc = lp->sinner.potential(lp->sinner.ctx, n, q, V, g, err);
    else {
        if (V) *V = 0;
        if (g) memset(g, 0, 3 * (size_t)n * sizeof *g);
    }
    double sum = 0;
    for (int p = 0; p < lp->pl.npairs && rc == LF_OK; p++) {
        double u, G[6];
        rc = kernel(lp, q, p, NULL, &u, g ? G : NULL, err);
        if (rc != LF_OK) break;
        sum += u;
        if (g) {
            const int i = lp->pl.pairs[2 * p], j = lp->pl.pairs[2 * p + 1];
            for (int c = 0; c < 3; c++) {
                g[3 * i + c] += G[c];
                g[3 * j + c] += G[3 + c];
            }
        }
    }
    if (rc == LF_OK && V) *V += sum;
    return rc;
}

static void lua_pairs_free(void *ctx)
{
    lua_pairs *lp = ctx;
    if (!lp) return;
    pair_list_free(&lp->pl);
    if (lp->sinner.potential && lp->sinner.destroy) lp->sinner.destroy(lp->sinner.ctx);
    free(lp);
}

/* ---------------------------------------------------------------- systems */
/* The kernel function at idx is the system's (natural math, kept in s->ref[LFB_REF_PAIR]). */
static void take_kernel(lua_State *L, lfb_system *s, int idx, const char *fn)
{
    if (lua_type(L, idx) != LUA_TFUNCTION)
        luaL_error(L, "%s: field 'pair' must be a function(x_i, x_j, r_ij [, p]) returning a number, got %s", fn,
                   lfb_typename(L, idx));
    lfb_natural(L, idx);
    lua_pushvalue(L, idx);
    s->ref[LFB_REF_PAIR] = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* Makes the compiled model from the kernel's node u on graph g (par: the parameters' values): 1, or
 * 0 with the reason; raises for an error that is not a reason to interpret instead. */
typedef int (*pair_build_fn)(lua_State *L, lf_graph *g, int u, pair_list *pl, const double *par, int backend,
                             void *ud, char *why, size_t whysz);

/* What both kinds of pair kernels do first: the kernel kept by s, the pairs read into pl, and the
 * kernel traced (x0: the state, m numbers per body) and compiled by build. Returns 1 if compiled;
 * 0 to interpret (why in reason; an explicit backend raises instead). */
static int pairs_begin(lua_State *L, lfb_system *s, int t, int n, int m, const double *x0, const double *centres,
                       double *cutoff, int backend, pair_build_fn build, void *ud, pair_list *pl, char *reason,
                       size_t rsize, const char *fn)
{
    lua_getfield(L, t, "pair");
    take_kernel(L, s, lua_gettop(L), fn);
    lua_pop(L, 1);
    read_pairs(L, t, n, centres, pl, cutoff, fn);
    snprintf(reason, rsize, "compile = false");
    if (backend < 0) return 0;
    const int top = lua_gettop(L);
    lfb_trace *tr = lfb_trace_new(L, LFB_TRACE_STRICT, 0);
    double *par = lua_newuserdatauv(L, LFB_MAXPAR * sizeof(double), 0);
    int u = trace_kernel(L, s, top + 1, m, x0, pl, par, reason, rsize);
    int ok = u >= 0 && build(L, tr->g, u, pl, par, backend, ud, reason, rsize);
    lfb_trace_end(tr);
    lua_settop(L, top);
    if (!ok && backend != LF_BACKEND_AUTO) {
        pair_list_free(pl);
        luaL_error(L, "%s: compile = \"%s\": the pair kernel cannot be compiled: %s", fn,
                   backend == LF_BACKEND_NATIVE ? "native" : "tape", reason);
    }
    return ok;
}

/* The interpreted kernel's context (owning pl) */
static lua_pairs *new_lua_pairs(lua_State *L, lfb_system *s, pair_list *pl, int m, const char *fn)
{
    lua_pairs *lp = calloc(1, sizeof *lp);
    if (!lp) {
        pair_list_free(pl);
        luaL_error(L, "%s: out of memory", fn);
    }
    lp->s = s;
    lp->pl = *pl;
    lp->m = m;
    return lp;
}

typedef struct {
    int nb;
    const lf_potential *inner;
    lf_potential *p;
    int moving;
    const double *cutoff;
} rigid_build;

static int build_rigid_pairs(lua_State *L, lf_graph *g, int u, pair_list *pl, const double *par, int backend,
                             void *ud, char *why, size_t whysz)
{
    (void)L;
    rigid_build *b = ud;
    lf_model_graph_opts o = {backend, NULL, 1};
    lf_error e;
    b->p = b->moving ? lf_potential_pairs_x(g, u, b->nb, pl->npairs, pl->pairs, *b->cutoff, b->inner, par, &o, &e)
                     : lf_potential_pairs(g, u, b->nb, pl->npairs, pl->pairs, pl->r, b->inner, par, &o, &e);
    if (!b->p) snprintf(why, whysz, "%s", e.msg);
    return b->p != NULL;
}

lf_potential *lfb_pairs_rigid(lua_State *L, lfb_system *s, int t, int nb, const double *R0, const double *x0,
                              const lf_potential *inner, int backend, const char *fn, char *report, size_t size)
{
    pair_list pl;
    char reason[640];
    double cutoff;
    rigid_build b = {nb, inner, NULL, x0 != NULL, &cutoff};
    if (pairs_begin(L, s, t, nb, 9, R0, x0, &cutoff, backend, build_rigid_pairs, &b, &pl, reason, sizeof reason, fn)) {
        snprintf(report, size, "pair kernel %s over %d pairs%s", lf_compiled_report(lf_potential_compiled(b.p)),
                 pl.npairs, x0 ? " of moving centres" : "");
        pair_list_free(&pl);
        return b.p;
    }
    lua_pairs *lp = new_lua_pairs(L, s, &pl, 9, fn);
    lp->inner = inner;
    lp->cutoff = cutoff;
    lf_error e;
    lf_potential *p = x0 ? lf_potential_new_x("lua pairs", rigid_eval_x, lp, lua_pairs_free, &e)
                         : lf_potential_new("lua pairs", rigid_eval, lp, lua_pairs_free, &e);
    if (!p) {
        lua_pairs_free(lp);
        lfb_error(L, &e);
    }
    snprintf(report, size, "pair kernel interpreted over %d pairs: %s", lp->pl.npairs, reason);
    return p;
}

typedef struct {
    int n;
    lf_spheres_def *inner, *def;
    const char *fn;
} spheres_build;

static int build_spheres_pairs(lua_State *L, lf_graph *g, int u, pair_list *pl, const double *par, int backend,
                               void *ud, char *why, size_t whysz)
{
    (void)why, (void)whysz;
    spheres_build *b = ud;
    lf_model_graph_opts o = {backend, NULL, 1};
    lf_spheres_def in = *b->inner;
    lf_error e;
    int ok = lf_spheres_graph_def(g, u, NULL, b->n, pl->npairs, pl->pairs, pl->r, b->inner->potential ? &in : NULL,
                                  par, &o, b->def, &e) == LF_OK;
    b->inner->potential = NULL; /* owned by def now, or destroyed */
    if (!ok) {
        pair_list_free(pl);
        lfb_error_in(L, b->fn, &e);
    }
    return 1;
}

int lfb_pairs_spheres(lua_State *L, lfb_system *s, int t, int n, const double *q0, lf_spheres_def *inner, int backend,
                      lf_spheres_def *def, const char *fn, char *report, size_t size)
{
    pair_list pl;
    char reason[640];
    spheres_build b = {n, inner, def, fn};
    double cutoff;
    if (pairs_begin(L, s, t, n, 3, q0, NULL, &cutoff, backend, build_spheres_pairs, &b, &pl, reason, sizeof reason,
                    fn)) {
        snprintf(report, size, "pair kernel %s over %d pairs", lf_compiled_report(lf_spheres_def_compiled(def)), pl.npairs);
        pair_list_free(&pl);
        return 1;
    }
    lua_pairs *lp = new_lua_pairs(L, s, &pl, 3, fn);
    if (inner->potential) lp->sinner = *inner;
    inner->potential = NULL;
    memset(def, 0, sizeof *def);
    def->name = "lua pairs";
    def->potential = spheres_eval;
    def->ctx = lp;
    def->destroy = lua_pairs_free;
    snprintf(report, size, "pair kernel interpreted over %d pairs: %s", lp->pl.npairs, reason);
    return 0;
}
