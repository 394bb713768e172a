/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — models from expression graphs (model_graph.h): the derivatives each form needs are
 * built on the graph, compiled into one module per model, and evaluated behind the callback
 * interfaces of potentials (potential.h), Lie ODEs (lie_ode.h) and spheres (spheres.h). */
#include "model/model_graph.h"

#include <stdlib.h>
#include <string.h>

#include "graph/graph_lie.h"
#include "base/linalg.h"

/* ---------------------------------------------------------------- shared */
/* lf_compiled: the first member of every model made here (gpot, gode, gsph), so that one set of
 * accessors serves them all */
struct lf_compiled {
    lf_gmodule *m;
    int npar;
    double *par;
    /* pair kernels: what depends on r_ij and the parameters alone, per pair (see hoist_init) */
    lf_gmodule *pre;  /* r_ij, parameters -> the nsub hoisted values */
    int nsub, npairs;
    const double *r;  /* the pairs' r_ij (owned by the model) */
    double *sub;      /* npairs x nsub */
};
typedef struct lf_compiled compiled;

static void compiled_free(compiled *c)
{
    lf_gmodule_free(c->m);
    lf_gmodule_free(c->pre);
    free(c->par);
    free(c->sub);
}

/* The hoisted values of every pair at the current parameters. */
static void hoist_update(compiled *c)
{
    for (int p = 0; c->pre && p < c->npairs; p++) {
        const double *in[2] = {NULL, c->r + 3 * p};
        lf_gmodule_eval(c->pre, 0, in, c->par, c->sub + (size_t)p * c->nsub, NULL);
    }
}

/* Loop-invariant code motion for a pair kernel whose inputs are nstate state numbers followed by
 * r_ij (3): the nodes the outputs need that depend on r_ij and the parameters only but feed a node
 * that depends on the state (e.g. kappa / |r|^3 and r/|r| of a dipole kernel) are computed once
 * per pair (c->pre, c->sub) and read by the kernel as a segment of its layout. */
static int hoist_init(compiled *c, lf_graph *g, int nstate, int nf, const lf_gfunc_spec *f, lf_glayout *layout,
                      int npairs, const double *r, const lf_model_graph_opts *o, lf_error *err)
{
    const int n = lf_graph_size(g);
    char *dep = calloc((size_t)n + 1, 1), *live = calloc((size_t)n + 1, 1);
    int *sub = malloc(((size_t)n + 1) * sizeof *sub);
    if (!dep || !live || !sub) {
        free(dep);
        free(live);
        free(sub);
        return lf_error_set(err, LF_ENOMEM, "compiled model: out of memory");
    }
    for (int k = 0; k < nf; k++)
        for (int i = 0; i < f[k].nout; i++) live[f[k].out[i]] = 1;
    for (int i = n - 1; i >= 0; i--) {
        const lf_gnode *nd = lf_graph_node(g, i);
        if (!live[i]) continue;
        const int opd[3] = {nd->a, nd->b, nd->c};
        for (int w = 0; w < lf_gop_arity(nd->op); w++) live[opd[w]] = 1;
    }
    int ns = 0;
    for (int i = 0; i < n; i++) {
        const lf_gnode *nd = lf_graph_node(g, i);
        const int opd[3] = {nd->a, nd->b, nd->c};
        dep[i] = nd->op == LF_G_INPUT && nd->k < nstate;
        for (int w = 0; w < lf_gop_arity(nd->op); w++) dep[i] |= dep[opd[w]];
    }
    for (int i = 0; i < n; i++) { /* hoisted: not state-dependent, not constant, used by a state-dependent node */
        const lf_gnode *nd = lf_graph_node(g, i);
        if (!live[i] || !dep[i]) continue;
        const int opd[3] = {nd->a, nd->b, nd->c};
        for (int w = 0; w < lf_gop_arity(nd->op); w++) {
            int x = opd[w];
            if (!dep[x] && !lf_graph_is_const(g, x, NULL) && live[x] != 2) {
                live[x] = 2;
                sub[ns++] = x;
            }
        }
    }
    for (int k = 0; k < nf; k++) /* outputs that do not depend on the state at all */
        for (int i = 0; i < f[k].nout; i++) {
            int x = f[k].out[i];
            if (!dep[x] && !lf_graph_is_const(g, x, NULL) && live[x] != 2) {
                live[x] = 2;
                sub[ns++] = x;
            }
        }
    free(dep);
    free(live);
    int rc = LF_OK;
    if (ns > 0) {
        lf_glayout pl = {2, {nstate, 3}, 0, 0, NULL};
        lf_gfunc_spec ps = {ns, sub};
        c->pre = lf_gmodule_new(g, &pl, 1, &ps, LF_BACKEND_TAPE, o ? o->jit : NULL, err);
        c->sub = malloc(((size_t)npairs * ns + 1) * sizeof *c->sub);
        if (!c->pre) rc = err ? err->code : LF_EINVAL;
        else if (!c->sub) rc = lf_error_set(err, LF_ENOMEM, "compiled model: out of memory");
    }
    c->nsub = ns;
    c->npairs = npairs;
    c->r = r;
    layout->seglen[layout->nseg] = ns;
    layout->subseg = layout->nseg++;
    layout->nsub = ns;
    layout->sub = sub; /* read by compiled_init below; freed by hoist_done */
    return rc;
}

static void hoist_done(lf_glayout *layout) { free((void *)layout->sub); }

static int compiled_init(compiled *c, const lf_graph *g, const lf_glayout *layout, int nf, const lf_gfunc_spec *f,
                         const double *par, const lf_model_graph_opts *o, lf_error *err)
{
    c->npar = lf_graph_nparams(g);
    c->par = malloc(((size_t)c->npar + 1) * sizeof *c->par);
    if (!c->par) return lf_error_set(err, LF_ENOMEM, "compiled model: out of memory");
    for (int i = 0; i < c->npar; i++) c->par[i] = par ? par[i] : 0;
    c->m = lf_gmodule_new(g, layout, nf, f, o ? o->backend : LF_BACKEND_AUTO, o ? o->jit : NULL, err);
    if (!c->m) return err ? err->code : LF_EINVAL;
    hoist_update(c);
    return LF_OK;
}

static int set_params(compiled *c, int n, const double *par, lf_error *err)
{
    if (n != c->npar)
        return lf_error_set(err, LF_EINVAL, "compiled model: %d parameter values given, the model has %d", n, c->npar);
    for (int i = 0; i < n; i++)
        if (!isfinite(par[i])) return lf_error_set(err, LF_EINVAL, "compiled model: parameter %d = %g is not finite", i + 1, par[i]);
    memcpy(c->par, par, (size_t)n * sizeof *par);
    hoist_update(c);
    return LF_OK;
}

static int graph_ok(const lf_graph *g, lf_error *err)
{
    if (!g) return lf_error_set(err, LF_EINVAL, "compiled model: no graph");
    if (lf_graph_status(g) != LF_OK) {
        if (err) *err = *lf_graph_error(g);
        return lf_graph_status(g);
    }
    return LF_OK;
}

/* out = a buffer of n doubles: the stack's when small, else the heap's (free with buf_done) */
#define SMALL 512
static double *buf_get(double *small, size_t n) { return n <= SMALL ? small : malloc(n * sizeof(double)); }
static void buf_done(double *small, double *b) { if (b != small) free(b); }

/* A factor c common to the nonzero entries of column k of G (each a product c * h_a), with the h_a;
 * -1 when there is none. */
static int common_factor(const lf_graph *g, const int *G, int k, int *h)
{
    int cand[2] = {-1, -1}, have = 0;
    for (int a = 0; a < 3; a++) {
        double v;
        h[a] = -1;
        if (lf_graph_is_const(g, G[3 * a + k], &v) && v == 0) continue;
        const lf_gnode *nd = lf_graph_node(g, G[3 * a + k]);
        if (nd->op != LF_G_MUL) return -1;
        if (!have) {
            cand[0] = nd->a;
            cand[1] = nd->b;
            have = 1;
        }
        for (int c = 0; c < 2; c++)
            if (cand[c] != nd->a && cand[c] != nd->b) cand[c] = -1;
        if (cand[0] < 0 && cand[1] < 0) return -1;
    }
    const int c = cand[0] >= 0 ? cand[0] : cand[1];
    if (c < 0) return -1;
    for (int a = 0; a < 3; a++) {
        double v;
        if (lf_graph_is_const(g, G[3 * a + k], &v) && v == 0) continue;
        const lf_gnode *nd = lf_graph_node(g, G[3 * a + k]);
        h[a] = nd->a == c ? nd->b : nd->a;
    }
    return c;
}

/* tau = trhat(R^T G) for one body: the torques of so3.h from the Euclidean gradient G = dU/dR. Only
 * the off-diagonal entries (R^T G)_jk are formed, and a factor common to column k of G is taken out
 * of the sum: a potential of R through R b (b a body-fixed vector: dipoles, tops, fields) has G =
 * g b^T, and then (R^T G)_jk = b_k (R^T g)_j with R^T g shared by every k, so that tau = (R^T g) x b
 * costs 24 operations instead of 42. */
static void torque_nodes(lf_graph *g, const int *R, const int *G, int *tau)
{
    int M[9] = {0};
    for (int k = 0; k < 3; k++) {
        int h[3];
        const int c = common_factor(g, G, k, h);
        for (int j = 0; j < 3; j++) {
            if (j == k) continue;
            int sum = lf_graph_const(g, 0);
            for (int a = 0; a < 3; a++) {
                if (c >= 0 && h[a] < 0) continue;
                sum = lf_g2(g, LF_G_ADD, sum, lf_g2(g, LF_G_MUL, R[3 * a + j], c >= 0 ? h[a] : G[3 * a + k]));
            }
            M[3 * j + k] = c >= 0 ? lf_g2(g, LF_G_MUL, c, sum) : sum;
        }
    }
    lf_gm3_trhat(g, M, tau);
}

/* The tangent of R along R exp(e hat(e_m)): row a is r_a x e_m (-1 where zero). */
static void left_tangent(lf_graph *g, const int *R, int m, int *T)
{
    for (int a = 0; a < 3; a++) {
        const int *r = R + 3 * a;
        int *t = T + 3 * a;
        t[m] = -1;
        t[(m + 1) % 3] = r[(m + 2) % 3];
        t[(m + 2) % 3] = lf_g1(g, LF_G_NEG, r[(m + 1) % 3]);
    }
}

/* K (nt x 3nb) of the nt torque nodes tau along the bodies' left trivializations: column 3j + m */
static int torque_jacobian_nodes(lf_graph *g, const int *in, int nb, int nt, const int *tau, int *K)
{
    int *col = malloc((size_t)nt * sizeof *col);
    if (!col) return lf_graph_fail(g, LF_ENOMEM, "compiled model: out of memory"), LF_ENOMEM;
    for (int j = 0; j < nb && lf_graph_status(g) == LF_OK; j++)
        for (int m = 0; m < 3; m++) {
            int T[9];
            left_tangent(g, in + 9 * j, m, T);
            lf_graph_jvp(g, 9, in + 9 * j, T, nt, tau, col);
            for (int r = 0; r < nt; r++) K[(size_t)r * 3 * nb + 3 * j + m] = col[r];
        }
    free(col);
    return lf_graph_status(g);
}

/* ---------------------------------------------------------------- rigid potentials */
typedef struct {
    compiled c;
    int nb;
    int has_jac;
    /* pairs */
    int npairs;
    int *pairs;
    double *r;
    const lf_potential *inner;
    double cutoff; /* pairs of moving centres (lf_potential_pairs_x): the cutoff of |r_ij| */
} gpot;

enum { F_U, F_TAU, F_BOTH, F_JAC };

static void gpot_destroy(void *p)
{
    gpot *q = p;
    if (!q) return;
    compiled_free(&q->c);
    free(q->pairs);
    free(q->r);
    free(q);
}

static int gpot_eval(void *ctx, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    gpot *q = ctx;
    if (nb != q->nb) return lf_error_set(err, LF_EINVAL, "compiled potential of %d bodies evaluated for %d", q->nb, nb);
    const double *in[1] = {R};
    if (U && tau) {
        double small[SMALL], *out = buf_get(small, 1 + 3 * (size_t)nb);
        if (!out) return lf_error_set(err, LF_ENOMEM, "compiled potential: out of memory");
        lf_gmodule_eval(q->c.m, F_BOTH, in, q->c.par, out, NULL);
        *U = out[0];
        memcpy(tau, out + 1, 3 * (size_t)nb * sizeof *tau);
        buf_done(small, out);
    } else if (U)
        lf_gmodule_eval(q->c.m, F_U, in, q->c.par, U, NULL);
    else if (tau)
        lf_gmodule_eval(q->c.m, F_TAU, in, q->c.par, tau, NULL);
    return LF_OK;
}

static int gpot_jacobian(void *ctx, int nb, const double *R, double *K, lf_error *err)
{
    gpot *q = ctx;
    if (nb != q->nb) return lf_error_set(err, LF_EINVAL, "compiled potential of %d bodies evaluated for %d", q->nb, nb);
    const double *in[1] = {R};
    lf_gmodule_eval(q->c.m, F_JAC, in, q->c.par, K, NULL);
    return LF_OK;
}

static gpot *gpot_alloc(lf_error *err)
{
    gpot *q = calloc(1, sizeof *q);
    if (!q) lf_error_set(err, LF_ENOMEM, "compiled potential: out of memory");
    return q;
}

/* The potential over q (owned from now on, also on failure). */
static lf_potential *gpot_finish(gpot *q, const char *name, lf_potential_eval_fn eval, lf_potential_jacobian_fn jac,
                                 lf_error *err)
{
    lf_potential *p = lf_potential_new(name, eval, q, gpot_destroy, err);
    if (!p) {
        gpot_destroy(q);
        return NULL;
    }
    if (q->has_jac) lf_potential_set_jacobian(p, jac);
    return p;
}

lf_potential *lf_potential_graph(lf_graph *g, int U, const int *tau, int nb, const double *par,
                                 const lf_model_graph_opts *o, lf_error *err)
{
    if (graph_ok(g, err) != LF_OK) return NULL;
    if (nb < 1 || lf_graph_ninputs(g) != 9 * nb || !lf_graph_node(g, U)) {
        lf_error_set(err, LF_EINVAL, "lf_potential_graph: %d bodies need 9 nb = %d inputs (the graph has %d) and a node U",
                     nb, 9 * nb, lf_graph_ninputs(g));
        return NULL;
    }
    const int n = 3 * nb, jac = o && o->jacobian && nb <= LF_MODEL_GRAPH_MAX_JAC_BODIES;
    int *in = malloc(9 * (size_t)nb * sizeof *in), *G = malloc(9 * (size_t)nb * sizeof *G);
    int *both = malloc((1 + (size_t)n) * sizeof *both), *K = jac ? malloc((size_t)n * n * sizeof *K) : NULL;
    gpot *q = gpot_alloc(err);
    lf_potential *p = NULL;
    if (!in || !G || !both || (jac && !K) || !q) {
        if (q) lf_error_set(err, LF_ENOMEM, "compiled potential: out of memory");
        goto done;
    }
    for (int i = 0; i < 9 * nb; i++) in[i] = lf_graph_input_node(g, i);
    both[0] = U;
    if (tau) memcpy(both + 1, tau, (size_t)n * sizeof *tau);
    else if (lf_graph_vjp(g, 1, &U, NULL, 9 * nb, in, G) == LF_OK)
        for (int b = 0; b < nb; b++) torque_nodes(g, in + 9 * b, G + 9 * b, both + 1 + 3 * b);
    if (jac) torque_jacobian_nodes(g, in, nb, n, both + 1, K);
    if (graph_ok(g, err) != LF_OK) goto done;
    lf_gfunc_spec f[4] = {{1, &U}, {n, both + 1}, {1 + n, both}, {n * n, K}};
    lf_glayout layout = {1, {9 * nb}, 0, 0, NULL};
    q->nb = nb;
    q->has_jac = jac;
    if (compiled_init(&q->c, g, &layout, jac ? 4 : 3, f, par, o, err) != LF_OK) goto done;
    p = gpot_finish(q, "Lua U", gpot_eval, gpot_jacobian, err);
    q = NULL;
done:
    if (q) gpot_destroy(q);
    free(in);
    free(G);
    free(both);
    free(K);
    return p;
}

/* ---- potentials of translating bodies: inputs x (3 nb), then R (9 nb); functions U | U, F, tau | F, tau
 * | K (the torque Jacobian along the attitudes, the positions fixed) */
enum { FX_U, FX_ALL, FX_FT, FX_JAC };

static int gpotx_eval(void *ctx, const lf_bodies_config *c, double *U, double *F, double *tau, lf_error *err)
{
    gpot *q = ctx;
    const int nb = q->nb, n = 3 * nb;
    if (c->nb != nb) return lf_error_set(err, LF_EINVAL, "compiled potential of %d bodies evaluated for %d", nb, c->nb);
    const double *in[2] = {c->x, c->R};
    if (!F && !tau) {
        if (U) lf_gmodule_eval(q->c.m, FX_U, in, q->c.par, U, NULL);
        return LF_OK;
    }
    double small[SMALL], *out = buf_get(small, 1 + 2 * (size_t)n);
    if (!out) return lf_error_set(err, LF_ENOMEM, "compiled potential: out of memory");
    lf_gmodule_eval(q->c.m, U ? FX_ALL : FX_FT, in, q->c.par, out, NULL);
    if (U) *U = out[0];
    if (F) memcpy(F, out + (U ? 1 : 0), (size_t)n * sizeof *F);
    if (tau) memcpy(tau, out + (U ? 1 : 0) + n, (size_t)n * sizeof *tau);
    buf_done(small, out);
    return LF_OK;
}

static int gpotx_jacobian(void *ctx, const lf_bodies_config *c, double *K, lf_error *err)
{
    gpot *q = ctx;
    if (c->nb != q->nb)
        return lf_error_set(err, LF_EINVAL, "compiled potential of %d bodies evaluated for %d", q->nb, c->nb);
    const double *in[2] = {c->x, c->R};
    lf_gmodule_eval(q->c.m, FX_JAC, in, q->c.par, K, NULL);
    return LF_OK;
}

lf_potential *lf_potential_graph_x(lf_graph *g, int U, int nb, const double *par, const lf_model_graph_opts *o,
                                   lf_error *err)
{
    if (graph_ok(g, err) != LF_OK) return NULL;
    if (nb < 1 || lf_graph_ninputs(g) != 12 * nb || !lf_graph_node(g, U)) {
        lf_error_set(err, LF_EINVAL,
                     "lf_potential_graph_x: %d bodies need 12 nb = %d inputs (the graph has %d) and a "
                     "node U",
                     nb, 12 * nb, lf_graph_ninputs(g));
        return NULL;
    }
    const int n = 3 * nb, jac = o && o->jacobian && nb <= LF_MODEL_GRAPH_MAX_JAC_BODIES;
    int *in = malloc(12 * (size_t)nb * sizeof *in), *G = malloc(12 * (size_t)nb * sizeof *G);
    int *all = malloc((1 + 2 * (size_t)n) * sizeof *all), *K = jac ? malloc((size_t)n * n * sizeof *K) : NULL;
    gpot *q = gpot_alloc(err);
    lf_potential *p = NULL;
    if (!in || !G || !all || (jac && !K) || !q) {
        if (q) lf_error_set(err, LF_ENOMEM, "compiled potential: out of memory");
        goto done;
    }
    for (int i = 0; i < 12 * nb; i++) in[i] = lf_graph_input_node(g, i);
    all[0] = U; /* U, F = -dU/dx, tau from dU/dR: one reverse sweep */
    if (lf_graph_vjp(g, 1, &U, NULL, 12 * nb, in, G) == LF_OK) {
        for (int i = 0; i < n; i++) all[1 + i] = lf_g1(g, LF_G_NEG, G[i]);
        for (int b = 0; b < nb; b++) torque_nodes(g, in + n + 9 * b, G + n + 9 * b, all + 1 + n + 3 * b);
    }
    if (jac) torque_jacobian_nodes(g, in + n, nb, n, all + 1 + n, K);
    if (graph_ok(g, err) != LF_OK) goto done;
    lf_gfunc_spec f[4] = {{1, &U}, {1 + 2 * n, all}, {2 * n, all + 1}, {n * n, K}};
    lf_glayout layout = {2, {n, 9 * nb}, 0, 0, NULL};
    q->nb = nb;
    q->has_jac = jac;
    if (compiled_init(&q->c, g, &layout, jac ? 4 : 3, f, par, o, err) != LF_OK) goto done;
    p = lf_potential_new_x("Lua U", gpotx_eval, q, gpot_destroy, err);
    if (!p) gpot_destroy(q);
    else if (jac) lf_potential_set_jacobian_x(p, gpotx_jacobian);
    q = NULL;
done:
    if (q) gpot_destroy(q);
    free(in);
    free(G);
    free(all);
    free(K);
    return p;
}

/* pair kernels: function outputs u | tau_i, tau_j | u, tau_i, tau_j | the 6 x 6 block of (tau_i,
 * tau_j) along (body i, body j) */
static int pairs_eval(void *ctx, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    gpot *q = ctx;
    if (nb != q->nb) return lf_error_set(err, LF_EINVAL, "pair potential of %d bodies evaluated for %d", q->nb, nb);
    int rc = LF_OK;
    if (q->inner) rc = lf_potential_eval(q->inner, nb, R, U, tau, err);
    else {
        if (U) *U = 0;
        if (tau) memset(tau, 0, 3 * (size_t)nb * sizeof *tau);
    }
    if (rc != LF_OK) return rc;
    double sum = 0;
    const int f = U && tau ? F_BOTH : U ? F_U : F_TAU;
    lf_gmodule_eval_pairs(q->c.m, f, q->npairs, q->pairs, 9, R, q->r, q->c.nsub, q->c.sub, q->c.par, U != NULL,
                          tau ? 3 : 0, tau, &sum);
    if (U) *U += sum;
    return LF_OK;
}

static int pairs_jacobian(void *ctx, int nb, const double *R, double *K, lf_error *err)
{
    gpot *q = ctx;
    const int n = 3 * nb;
    if (nb != q->nb) return lf_error_set(err, LF_EINVAL, "pair potential of %d bodies evaluated for %d", q->nb, nb);
    int rc = LF_OK;
    if (q->inner) rc = lf_potential_jacobian(q->inner, nb, R, K, err);
    else memset(K, 0, (size_t)n * n * sizeof *K);
    if (rc != LF_OK) return rc;
    double B[36];
    for (int p = 0; p < q->npairs; p++) {
        const int b[2] = {q->pairs[2 * p], q->pairs[2 * p + 1]};
        const double *in[4] = {R + 9 * b[0], R + 9 * b[1], q->r + 3 * p, q->c.sub + (size_t)p * q->c.nsub};
        lf_gmodule_eval(q->c.m, F_JAC, in, q->c.par, B, NULL);
        for (int r = 0; r < 6; r++)
            for (int c = 0; c < 6; c++) K[(size_t)(3 * b[r / 3] + r % 3) * n + 3 * b[c / 3] + c % 3] += B[6 * r + c];
    }
    return LF_OK;
}

lf_potential *lf_potential_pairs(lf_graph *g, int u, int nb, int npairs, const int *pairs, const double *r,
                                 const lf_potential *inner, const double *par, const lf_model_graph_opts *o,
                                 lf_error *err)
{
    if (graph_ok(g, err) != LF_OK) return NULL;
    if (nb < 2 || npairs < 0 || (npairs && (!pairs || !r)) || lf_graph_ninputs(g) != 21 || !lf_graph_node(g, u)) {
        lf_error_set(err, LF_EINVAL, "lf_potential_pairs: a kernel of 21 inputs (R_i, R_j, r_ij; the graph has %d), "
                                     "2 or more bodies and the pairs are required", lf_graph_ninputs(g));
        return NULL;
    }
    for (int p = 0; p < npairs; p++)
        if (pairs[2 * p] < 0 || pairs[2 * p] >= nb || pairs[2 * p + 1] < 0 || pairs[2 * p + 1] >= nb ||
            pairs[2 * p] == pairs[2 * p + 1]) {
            lf_error_set(err, LF_EINVAL, "lf_potential_pairs: pair %d = (%d, %d) is not two different bodies of %d", p + 1,
                         pairs[2 * p] + 1, pairs[2 * p + 1] + 1, nb);
            return NULL;
        }
    const int jac = o && o->jacobian && (!inner || lf_potential_has_jacobian(inner));
    gpot *q = gpot_alloc(err);
    if (!q) return NULL;
    q->pairs = malloc((2 * (size_t)npairs + 1) * sizeof *q->pairs);
    q->r = malloc((3 * (size_t)npairs + 1) * sizeof *q->r);
    if (!q->pairs || !q->r) {
        lf_error_set(err, LF_ENOMEM, "pair potential: out of memory");
        gpot_destroy(q);
        return NULL;
    }
    memcpy(q->pairs, pairs, 2 * (size_t)npairs * sizeof *pairs);
    memcpy(q->r, r, 3 * (size_t)npairs * sizeof *r);
    q->npairs = npairs;
    q->nb = nb;
    q->inner = inner;
    int in[18], G[18], both[7], K[36];
    for (int i = 0; i < 18; i++) in[i] = lf_graph_input_node(g, i);
    both[0] = u;
    if (lf_graph_vjp(g, 1, &u, NULL, 18, in, G) == LF_OK) {
        torque_nodes(g, in, G, both + 1);
        torque_nodes(g, in + 9, G + 9, both + 4);
    }
    if (jac) torque_jacobian_nodes(g, in, 2, 6, both + 1, K);
    lf_gfunc_spec f[4] = {{1, &u}, {6, both + 1}, {7, both}, {36, K}};
    lf_glayout layout = {3, {9, 9, 3}, 0, 0, NULL};
    q->has_jac = jac;
    int rc = graph_ok(g, err);
    if (rc == LF_OK) rc = hoist_init(&q->c, g, 18, jac ? 4 : 3, f, &layout, npairs, q->r, o, err);
    if (rc == LF_OK) rc = compiled_init(&q->c, g, &layout, jac ? 4 : 3, f, par, o, err);
    hoist_done(&layout);
    if (rc != LF_OK) {
        gpot_destroy(q);
        return NULL;
    }
    return gpot_finish(q, "compiled pairs", pairs_eval, pairs_jacobian, err);
}

/* ---- pair kernels of moving centres: r_ij = x_j - x_i at each evaluation, pairs within the cutoff;
 * outputs u | tau_i, tau_j, du/dr | u, tau_i, tau_j, du/dr | the 6 x 6 torque block (r fixed) */
enum { PX_U, PX_FT, PX_ALL, PX_JAC };

/* r = x_j - x_i of pair p, 0 if beyond the cutoff */
static int pair_r(const gpot *q, const double *x, int p, double *r)
{
    lf_v3_sub(x + 3 * q->pairs[2 * p + 1], x + 3 * q->pairs[2 * p], r);
    return lf_v3_dot(r, r) < q->cutoff * q->cutoff;
}

static int pairsx_eval(void *ctx, const lf_bodies_config *c, double *U, double *F, double *tau, lf_error *err)
{
    gpot *q = ctx;
    if (c->nb != q->nb)
        return lf_error_set(err, LF_EINVAL, "pair potential of %d bodies evaluated for %d", q->nb, c->nb);
    int rc = lf_potential_eval_x(q->inner, c, U, F, tau, err); /* no inner: zeros */
    if (rc != LF_OK) return rc;
    const int f = U ? PX_ALL : F || tau ? PX_FT : PX_U;
    double sum = 0;
    for (int p = 0; p < q->npairs; p++) {
        double r[3], out[10];
        if (!pair_r(q, c->x, p, r)) continue;
        const int i = q->pairs[2 * p], j = q->pairs[2 * p + 1];
        const double *in[3] = {c->R + 9 * i, c->R + 9 * j, r};
        lf_gmodule_eval(q->c.m, f, in, q->c.par, out, NULL);
        const double *o = out + (f == PX_FT ? 0 : 1);
        if (f != PX_FT) sum += out[0];
        if (f == PX_U) continue;
        if (tau) {
            lf_v3_add(tau + 3 * i, o, tau + 3 * i);
            lf_v3_add(tau + 3 * j, o + 3, tau + 3 * j);
        }
        if (F) { /* F_i = -du/dx_i = du/dr, F_j = -du/dr */
            lf_v3_add(F + 3 * i, o + 6, F + 3 * i);
            lf_v3_sub(F + 3 * j, o + 6, F + 3 * j);
        }
    }
    if (U) *U += sum;
    return LF_OK;
}

static int pairsx_jacobian(void *ctx, const lf_bodies_config *c, double *K, lf_error *err)
{
    gpot *q = ctx;
    const int n = 3 * q->nb;
    if (c->nb != q->nb)
        return lf_error_set(err, LF_EINVAL, "pair potential of %d bodies evaluated for %d", q->nb, c->nb);
    int rc = LF_OK;
    if (q->inner) rc = lf_potential_jacobian_x(q->inner, c, K, err);
    else memset(K, 0, (size_t)n * n * sizeof *K);
    if (rc != LF_OK) return rc;
    double B[36];
    for (int p = 0; p < q->npairs; p++) {
        double r[3];
        if (!pair_r(q, c->x, p, r)) continue;
        const int b[2] = {q->pairs[2 * p], q->pairs[2 * p + 1]};
        const double *in[3] = {c->R + 9 * b[0], c->R + 9 * b[1], r};
        lf_gmodule_eval(q->c.m, PX_JAC, in, q->c.par, B, NULL);
        for (int row = 0; row < 6; row++)
            for (int col = 0; col < 6; col++)
                K[(size_t)(3 * b[row / 3] + row % 3) * n + 3 * b[col / 3] + col % 3] += B[6 * row + col];
    }
    return LF_OK;
}

lf_potential *lf_potential_pairs_x(lf_graph *g, int u, int nb, int npairs, const int *pairs, double cutoff,
                                   const lf_potential *inner, const double *par, const lf_model_graph_opts *o,
                                   lf_error *err)
{
    if (graph_ok(g, err) != LF_OK) return NULL;
    const char *bad = lf_graph_ninputs(g) != 21          ? "a kernel of 21 inputs (R_i, R_j, r_ij)"
                      : !lf_graph_node(g, u)             ? "the kernel's node u"
                      : nb < 2                           ? "2 or more bodies"
                      : npairs < 0 || (npairs && !pairs) ? "the pairs"
                      : !(cutoff > 0)                    ? "a positive cutoff (INFINITY: none)"
                                                         : NULL;
    if (bad) {
        lf_error_set(err, LF_EINVAL,
                     "lf_potential_pairs_x: %s is required (the graph has %d inputs, node %d; %d bodies, %d pairs, "
                     "cutoff %g)",
                     bad, lf_graph_ninputs(g), u, nb, npairs, cutoff);
        return NULL;
    }
    for (int p = 0; p < npairs; p++)
        if (pairs[2 * p] < 0 || pairs[2 * p] >= nb || pairs[2 * p + 1] < 0 || pairs[2 * p + 1] >= nb ||
            pairs[2 * p] == pairs[2 * p + 1]) {
            lf_error_set(err, LF_EINVAL, "lf_potential_pairs_x: pair %d = (%d, %d) is not two different bodies of %d",
                         p + 1, pairs[2 * p] + 1, pairs[2 * p + 1] + 1, nb);
            return NULL;
        }
    const int jac = o && o->jacobian && (!inner || lf_potential_has_jacobian(inner));
    gpot *q = gpot_alloc(err);
    if (!q) return NULL;
    q->pairs = malloc((2 * (size_t)npairs + 1) * sizeof *q->pairs);
    if (!q->pairs) {
        lf_error_set(err, LF_ENOMEM, "pair potential: out of memory");
        gpot_destroy(q);
        return NULL;
    }
    memcpy(q->pairs, pairs, 2 * (size_t)npairs * sizeof *pairs);
    q->npairs = npairs;
    q->nb = nb;
    q->inner = inner;
    q->cutoff = cutoff;
    q->has_jac = jac;
    int in[21], G[21], all[10], K[36];
    for (int i = 0; i < 21; i++) in[i] = lf_graph_input_node(g, i);
    all[0] = u;
    if (lf_graph_vjp(g, 1, &u, NULL, 21, in, G) == LF_OK) {
        torque_nodes(g, in, G, all + 1);
        torque_nodes(g, in + 9, G + 9, all + 4);
        memcpy(all + 7, G + 18, 3 * sizeof *G);
    }
    if (jac) torque_jacobian_nodes(g, in, 2, 6, all + 1, K);
    lf_gfunc_spec f[4] = {{1, &u}, {9, all + 1}, {10, all}, {36, K}};
    lf_glayout layout = {3, {9, 9, 3}, 0, 0, NULL};
    if (graph_ok(g, err) != LF_OK || compiled_init(&q->c, g, &layout, jac ? 4 : 3, f, par, o, err) != LF_OK) {
        gpot_destroy(q);
        return NULL;
    }
    lf_potential *p = lf_potential_new_x("compiled pairs", pairsx_eval, q, gpot_destroy, err);
    if (!p) gpot_destroy(q);
    else if (jac) lf_potential_set_jacobian_x(p, pairsx_jacobian);
    return p;
}

static gpot *gpot_of(const lf_potential *p)
{
    gpot *q = lf_potential_context(p, gpot_eval);
    if (!q) q = lf_potential_context_x(p, gpotx_eval);
    if (!q) q = lf_potential_context_x(p, pairsx_eval);
    return q ? q : lf_potential_context(p, pairs_eval);
}

lf_compiled *lf_potential_compiled(const lf_potential *p)
{
    gpot *q = gpot_of(p);
    return q ? &q->c : NULL;
}

/* ---------------------------------------------------------------- forcings */
/* Inputs t (1), R (9 nb), w (3 nb) and, for bodies that translate, x (3 nb), v (3 nb); functions
 * (tau, F), tau, F and (if any) the Jacobian D = d(tau, F)/d(w, v). */
enum { FF_ALL, FF_TAU, FF_F, FF_JAC };
typedef struct {
    compiled c;
    int nb, translating;
} gforce;

static void gforce_destroy(void *p)
{
    gforce *q = p;
    if (!q) return;
    compiled_free(&q->c);
    free(q);
}

static int gforce_check(const gforce *q, const lf_bodies_motion *m, lf_error *err)
{
    if (m->c.nb != q->nb || (m->v != NULL) != q->translating)
        return lf_error_set(err, LF_EINVAL, "compiled forcing of %d bodies%s evaluated for %d%s", q->nb,
                            q->translating ? " that translate" : "", m->c.nb, m->v ? " that translate" : "");
    return LF_OK;
}

static int gforce_eval(void *ctx, const lf_bodies_motion *m, double *tau, double *F, lf_error *err)
{
    const gforce *q = ctx;
    const int rc = gforce_check(q, m, err);
    if (rc != LF_OK) return rc;
    const double *in[5] = {&m->t, m->c.R, m->w, m->c.x, m->v};
    const size_t n3 = 3 * (size_t)q->nb;
    if (!q->translating) lf_gmodule_eval(q->c.m, FF_TAU, in, q->c.par, tau, NULL);
    else if (2 * n3 <= SMALL) { /* one pass for both, through a buffer on the stack */ double out[SMALL];
        lf_gmodule_eval(q->c.m, FF_ALL, in, q->c.par, out, NULL);
        memcpy(tau, out, n3 * sizeof *tau);
        memcpy(F, out + n3, n3 * sizeof *F);
    } else { /* many bodies: two passes, no allocation */
        lf_gmodule_eval(q->c.m, FF_TAU, in, q->c.par, tau, NULL);
        lf_gmodule_eval(q->c.m, FF_F, in, q->c.par, F, NULL);
    }
    return LF_OK;
}

static int gforce_jacobian(void *ctx, const lf_bodies_motion *m, double *D, lf_error *err)
{
    const gforce *q = ctx;
    const int rc = gforce_check(q, m, err);
    if (rc != LF_OK) return rc;
    const double *in[5] = {&m->t, m->c.R, m->w, m->c.x, m->v};
    lf_gmodule_eval(q->c.m, FF_JAC, in, q->c.par, D, NULL);
    return LF_OK;
}

/* Which inputs the nout nodes out reach: reach[k] = 1 for input k (a walk from the outputs down) */
static int reached_inputs(const lf_graph *g, int nout, const int *out, char *reach)
{
    const int n = lf_graph_size(g);
    char *live = calloc((size_t)n + 1, 1);
    if (!live) return LF_ENOMEM;
    for (int i = 0; i < nout; i++) live[out[i]] = 1;
    for (int i = n - 1; i >= 0; i--) {
        if (!live[i]) continue;
        const lf_gnode *nd = lf_graph_node(g, i);
        if (nd->op == LF_G_INPUT) reach[nd->k] = 1;
        const int opd[3] = {nd->a, nd->b, nd->c};
        for (int w = 0; w < lf_gop_arity(nd->op); w++) live[opd[w]] = 1;
    }
    free(live);
    return LF_OK;
}

/* The Jacobian nodes D (n x n, n = nvel) of the n outputs in the nvel velocity inputs vin: column j
 * is the tangent of the outputs along input j (one forward pass each). */
static int forcing_jacobian_nodes(lf_graph *g, int n, const int *vin, const int *out, int *D)
{
    int *tan = malloc((size_t)n * sizeof *tan), *col = malloc((size_t)n * sizeof *col);
    if (!tan || !col) {
        free(tan);
        free(col);
        return lf_graph_fail(g, LF_ENOMEM, "compiled forcing: out of memory"), LF_ENOMEM;
    }
    const int one = lf_graph_const(g, 1);
    for (int j = 0; j < n && lf_graph_status(g) == LF_OK; j++) {
        for (int k = 0; k < n; k++) tan[k] = k == j ? one : -1;
        lf_graph_jvp(g, n, vin, tan, n, out, col);
        for (int r = 0; r < n; r++) D[(size_t)r * n + j] = col[r];
    }
    free(tan);
    free(col);
    return lf_graph_status(g);
}

/* What the outputs depend on: LF_FORCING_VELOCITY | LF_FORCING_TIME as they reach w, v or t. */
static int forcing_depends(const lf_graph *g, int nb, int translating, int nout, const int *out, unsigned *depends,
                           lf_error *err)
{
    const int nin = lf_graph_ninputs(g);
    char *reach = calloc((size_t)nin + 1, 1);
    if (!reach || reached_inputs(g, nout, out, reach) != LF_OK) {
        free(reach);
        return lf_error_set(err, LF_ENOMEM, "compiled forcing: out of memory");
    }
    *depends = reach[0] ? LF_FORCING_TIME : 0;
    for (int k = 1 + 9 * nb; k < 1 + 12 * nb; k++) /* w */
        if (reach[k]) *depends |= LF_FORCING_VELOCITY;
    for (int k = 1 + 15 * nb; translating && k < 1 + 18 * nb; k++) /* v (after x) */
        if (reach[k]) *depends |= LF_FORCING_VELOCITY;
    free(reach);
    return LF_OK;
}

/* The velocity inputs (w, then v) and the outputs (tau, then F) as node lists of n = 3 nb or 6 nb. */
static void forcing_nodes(const lf_graph *g, const int *tau, const int *F, int nb, int *vin, int *out)
{
    const int n3 = 3 * nb;
    for (int i = 0; i < n3; i++) {
        vin[i] = lf_graph_input_node(g, 1 + 9 * nb + i);
        out[i] = tau[i];
        if (F) {
            vin[n3 + i] = lf_graph_input_node(g, 1 + 15 * nb + i);
            out[n3 + i] = F[i];
        }
    }
}

lf_forcing *lf_forcing_graph(lf_graph *g, const char *name, const int *tau, const int *F, int nb, const double *par,
                             const lf_model_graph_opts *o, lf_compiled **compiled_out, lf_error *err)
{
    if (compiled_out) *compiled_out = NULL;
    if (graph_ok(g, err) != LF_OK) return NULL;
    const int translating = F != NULL, nin = 1 + (translating ? 18 : 12) * nb;
    if (nb < 1 || !tau || lf_graph_ninputs(g) != nin) {
        lf_error_set(err, LF_EINVAL, "lf_forcing_graph: %d bodies%s need %d inputs (the graph has %d) and torque nodes",
                     nb, translating ? " that translate" : "", nin, lf_graph_ninputs(g));
        return NULL;
    }
    const int n = (translating ? 6 : 3) * nb;
    for (int i = 0; i < n; i++)
        if (!lf_graph_node(g, i < 3 * nb ? tau[i] : F[i - 3 * nb])) {
            lf_error_set(err, LF_EINVAL, "lf_forcing_graph: output %d is not a node of the graph", i + 1);
            return NULL;
        }
    int *vin = malloc((size_t)n * sizeof *vin), *out = malloc((size_t)n * sizeof *out), *D = NULL;
    gforce *q = calloc(1, sizeof *q);
    lf_forcing *f = NULL;
    unsigned depends = 0;
    if (!vin || !out || !q) {
        lf_error_set(err, LF_ENOMEM, "compiled forcing: out of memory");
        goto done;
    }
    forcing_nodes(g, tau, F, nb, vin, out);
    if (forcing_depends(g, nb, translating, n, out, &depends, err) != LF_OK) goto done;
    const int jac = (depends & LF_FORCING_VELOCITY) && o && o->jacobian && nb <= LF_MODEL_GRAPH_MAX_JAC_BODIES;
    if (jac && (!(D = malloc((size_t)n * n * sizeof *D)) || forcing_jacobian_nodes(g, n, vin, out, D) != LF_OK)) {
        if (!D) lf_error_set(err, LF_ENOMEM, "compiled forcing: out of memory");
        else graph_ok(g, err);
        goto done;
    }
    unsigned djac = 0; /* affine in the velocities: its Jacobian reaches none of them */
    if (jac && forcing_depends(g, nb, translating, n * n, D, &djac, err) != LF_OK) goto done;
    if (jac && !(djac & LF_FORCING_VELOCITY)) depends |= LF_FORCING_AFFINE;
    const int n3 = 3 * nb;
    lf_gfunc_spec fs[4] = {{n, out}, {n3, out}, {translating ? n3 : 1, out + (translating ? n3 : 0)}, {n * n, D}};
    lf_glayout layout = {translating ? 5 : 3, {1, 9 * nb, 3 * nb, 3 * nb, 3 * nb}, 0, 0, NULL};
    *q = (gforce){.nb = nb, .translating = translating};
    if (compiled_init(&q->c, g, &layout, jac ? 4 : 3, fs, par, o, err) != LF_OK) goto done;
    lf_compiled *c = &q->c;
    f = lf_forcing_new(name ? name : "compiled", depends, gforce_eval, jac ? gforce_jacobian : NULL, q, gforce_destroy,
                       err);
    q = NULL; /* owned by the forcing now, also on failure */
    if (f && compiled_out) *compiled_out = c;
done:
    gforce_destroy(q);
    free(vin);
    free(out);
    free(D);
    return f;
}

/* ---------------------------------------------------------------- Lie ODEs */
typedef struct {
    compiled c;
    const lf_manifold *M; /* the copy the system owns is used at evaluation (see ode_manifold) */
    lf_manifold *own;
    int np, nd;
    int f_xi, f_jac, f_energy, f_H, f_dH; /* function indices, -1: none */
    lf_lie_ode_jacobian_fn user_jac;       /* the caller's own functions (lf_lie_ode_graph) */
    lf_lie_ode_dH_fn user_dH;
    lf_lie_ode_skew_fn user_skew;
    void *user;
} gode;

static void gode_destroy(void *p)
{
    gode *q = p;
    if (!q) return;
    compiled_free(&q->c);
    lf_manifold_free(q->own);
    free(q);
}

static int gode_f(void *ctx, double t, const double *y, double *xi, lf_error *err)
{
    (void)err;
    const gode *q = ctx;
    const double *in[2] = {&t, y};
    lf_gmodule_eval(q->c.m, q->f_xi, in, q->c.par, xi, NULL);
    return LF_OK;
}

/* the velocities V (np x nd): column j = d/de act(e e_j, y) at 0; work: np + nd doubles */
static void velocities(const lf_manifold *M, const double *y, double *V, double *work)
{
    const int np = lf_manifold_nparam(M), nd = lf_manifold_ndim(M);
    double *col = work, *e = work + np;
    for (int j = 0; j < nd; j++) {
        memset(e, 0, (size_t)nd * sizeof *e);
        e[j] = 1;
        lf_manifold_velocity(M, y, e, col);
        for (int p = 0; p < np; p++) V[(size_t)p * nd + j] = col[p];
    }
}

void lf_lie_trivialize_jacobian(const lf_manifold *M, const double *y, const double *J, double *D, double *work)
{
    const size_t np = (size_t)lf_manifold_nparam(M), nd = (size_t)lf_manifold_ndim(M);
    double *V = work;
    velocities(M, y, V, work + np * nd);
    for (size_t i = 0; i < nd; i++)
        for (size_t j = 0; j < nd; j++) {
            double s = 0;
            for (size_t p = 0; p < np; p++) s += J[i * np + p] * V[p * nd + j];
            D[i * nd + j] = s;
        }
}

void lf_lie_trivialize_gradient(const lf_manifold *M, const double *y, const double *ge, double *g, double *work)
{
    const size_t np = (size_t)lf_manifold_nparam(M), nd = (size_t)lf_manifold_ndim(M);
    double *V = work;
    velocities(M, y, V, work + np * nd);
    for (size_t j = 0; j < nd; j++) {
        double s = 0;
        for (size_t p = 0; p < np; p++) s += ge[p] * V[p * nd + j];
        g[j] = s;
    }
}

static int gode_jacobian(void *ctx, double t, const double *y, double *D, lf_error *err)
{
    const gode *q = ctx;
    const size_t np = (size_t)q->np, nd = (size_t)q->nd;
    double small[SMALL], *w = buf_get(small, nd * np * 2 + np + nd);
    if (!w) return lf_error_set(err, LF_ENOMEM, "compiled Lie ODE: out of memory");
    const double *in[2] = {&t, y};
    lf_gmodule_eval(q->c.m, q->f_jac, in, q->c.par, w, NULL);
    lf_lie_trivialize_jacobian(q->own, y, w, D, w + nd * np);
    buf_done(small, w);
    return LF_OK;
}

static int gode_scalar(const gode *q, int f, const double *y, double *v)
{
    const double t = 0, *in[2] = {&t, y};
    lf_gmodule_eval(q->c.m, f, in, q->c.par, v, NULL);
    return LF_OK;
}

static int gode_energy(void *ctx, const double *y, double *E, lf_error *err)
{
    (void)err;
    const gode *q = ctx;
    return gode_scalar(q, q->f_energy, y, E);
}

static int gode_H(void *ctx, const double *y, double *H, lf_error *err)
{
    (void)err;
    const gode *q = ctx;
    return gode_scalar(q, q->f_H, y, H);
}

static int gode_dH(void *ctx, const double *y, double *gt, lf_error *err)
{
    const gode *q = ctx;
    const size_t np = (size_t)q->np, nd = (size_t)q->nd;
    double small[SMALL], *w = buf_get(small, np * nd + 2 * np + nd);
    if (!w) return lf_error_set(err, LF_ENOMEM, "compiled Lie ODE: out of memory");
    const double t = 0, *in[2] = {&t, y};
    lf_gmodule_eval(q->c.m, q->f_dH, in, q->c.par, w, NULL);
    lf_lie_trivialize_gradient(q->own, y, w, gt, w + np);
    buf_done(small, w);
    return LF_OK;
}

static int user_jacobian(void *ctx, double t, const double *y, double *D, lf_error *err)
{
    const gode *q = ctx;
    return q->user_jac(q->user, t, y, D, err);
}

static int user_dH(void *ctx, const double *y, double *g, lf_error *err)
{
    const gode *q = ctx;
    return q->user_dH(q->user, y, g, err);
}

static int user_skew(void *ctx, const double *y, const double *a, double *out, lf_error *err)
{
    const gode *q = ctx;
    return q->user_skew(q->user, y, a, out, err);
}

int lf_lie_ode_graph_def(lf_graph *g, const lf_manifold *M, const lf_lie_ode_graph *nodes, const double *par,
                         const lf_model_graph_opts *o, lf_lie_ode_def *def, lf_error *err)
{
    if (graph_ok(g, err) != LF_OK) return err ? err->code : LF_EINVAL;
    if (!M || !nodes || !nodes->xi || !def) return lf_error_set(err, LF_EINVAL, "lf_lie_ode_graph_def: arguments missing");
    const int np = lf_manifold_nparam(M), nd = lf_manifold_ndim(M);
    if (lf_graph_ninputs(g) != 1 + np)
        return lf_error_set(err, LF_EINVAL, "lf_lie_ode_graph_def: the graph has %d inputs, t and y need %d",
                            lf_graph_ninputs(g), 1 + np);
    gode *q = calloc(1, sizeof *q);
    int *in = malloc(((size_t)np + 1) * sizeof *in), *J = NULL, *dH = NULL, *tan = NULL;
    int rc = LF_EINVAL;
    if (!q || !in || !(q->own = lf_manifold_copy(M, err))) {
        rc = lf_error_set(err, LF_ENOMEM, "compiled Lie ODE: out of memory");
        goto done;
    }
    q->np = np;
    q->nd = nd;
    for (int i = 0; i < np; i++) in[i] = lf_graph_input_node(g, 1 + i);
    lf_gfunc_spec f[5];
    int nf = 0;
    q->f_xi = nf;
    f[nf++] = (lf_gfunc_spec){nd, nodes->xi};
    q->f_jac = q->f_energy = q->f_H = q->f_dH = -1;
    if (o && o->jacobian && !nodes->jacobian && np <= LF_MODEL_GRAPH_MAX_JAC) { /* J[i][p] = d xi_i / d y_p: one forward pass per p */
        J = malloc((size_t)nd * np * sizeof *J);
        tan = malloc((size_t)np * sizeof *tan);
        int *col = malloc((size_t)nd * sizeof *col);
        if (!J || !tan || !col) {
            free(col);
            rc = lf_error_set(err, LF_ENOMEM, "compiled Lie ODE: out of memory");
            goto done;
        }
        for (int p = 0; p < np; p++) {
            for (int k = 0; k < np; k++) tan[k] = k == p ? lf_graph_const(g, 1) : -1;
            lf_graph_jvp(g, np, in, tan, nd, nodes->xi, col);
            for (int i = 0; i < nd; i++) J[(size_t)i * np + p] = col[i];
        }
        free(col);
        q->f_jac = nf;
        f[nf++] = (lf_gfunc_spec){nd * np, J};
    }
    if (nodes->energy >= 0) {
        q->f_energy = nf;
        f[nf++] = (lf_gfunc_spec){1, &nodes->energy};
    }
    if (nodes->H >= 0 && !nodes->dH) {
        dH = malloc((size_t)np * sizeof *dH);
        if (!dH) {
            rc = lf_error_set(err, LF_ENOMEM, "compiled Lie ODE: out of memory");
            goto done;
        }
        lf_graph_vjp(g, 1, &nodes->H, NULL, np, in, dH);
        q->f_H = nf;
        f[nf++] = (lf_gfunc_spec){1, &nodes->H};
        q->f_dH = nf;
        f[nf++] = (lf_gfunc_spec){np, dH};
    } else if (nodes->H >= 0) {
        q->f_H = nf;
        f[nf++] = (lf_gfunc_spec){1, &nodes->H};
    }
    q->user_jac = nodes->jacobian;
    q->user_dH = nodes->dH;
    q->user_skew = nodes->skew;
    q->user = nodes->user;
    lf_glayout layout = {2, {1, np}, 0, 0, NULL};
    if ((rc = graph_ok(g, err)) != LF_OK || (rc = compiled_init(&q->c, g, &layout, nf, f, par, o, err)) != LF_OK)
        goto done;
    memset(def, 0, sizeof *def);
    def->name = "compiled";
    def->f = gode_f;
    def->jacobian = q->user_jac ? user_jacobian : q->f_jac >= 0 ? gode_jacobian : NULL;
    def->energy = q->f_energy >= 0 ? gode_energy : NULL;
    def->H = q->f_H >= 0 ? gode_H : NULL;
    def->dH = q->f_H < 0 ? NULL : q->user_dH ? user_dH : gode_dH;
    def->skew = q->user_skew ? user_skew : NULL;
    def->ctx = q;
    def->destroy = gode_destroy;
    q = NULL;
    rc = LF_OK;
done:
    gode_destroy(q);
    free(in);
    free(J);
    free(tan);
    free(dH);
    return rc;
}

static gode *gode_of_def(const lf_lie_ode_def *d) { return d && d->f == gode_f ? d->ctx : NULL; }

lf_compiled *lf_lie_ode_def_compiled(const lf_lie_ode_def *def)
{
    gode *q = gode_of_def(def);
    return q ? &q->c : NULL;
}

/* ---------------------------------------------------------------- spheres */
typedef struct {
    compiled c;
    int n, npairs;
    int *pairs;
    double *r;
    lf_spheres_def inner; /* inner.potential NULL: none */
} gsph;

enum { S_V, S_G, S_BOTH };

static void gsph_destroy(void *p)
{
    gsph *q = p;
    if (!q) return;
    compiled_free(&q->c);
    free(q->pairs);
    free(q->r);
    if (q->inner.potential && q->inner.destroy) q->inner.destroy(q->inner.ctx);
    free(q);
}

static int gsph_potential(void *ctx, int n, const double *x, double *V, double *g, lf_error *err)
{
    gsph *q = ctx;
    if (n != q->n) return lf_error_set(err, LF_EINVAL, "compiled potential of %d spheres evaluated for %d", q->n, n);
    const int f = V && g ? S_BOTH : V ? S_V : S_G;
    if (!q->npairs) {
        const double *in[1] = {x};
        if (f != S_BOTH) {
            lf_gmodule_eval(q->c.m, f, in, q->c.par, V ? V : g, NULL);
            return LF_OK;
        }
        double small[SMALL], *out = buf_get(small, 1 + 3 * (size_t)n);
        if (!out) return lf_error_set(err, LF_ENOMEM, "compiled potential: out of memory");
        lf_gmodule_eval(q->c.m, f, in, q->c.par, out, NULL);
        *V = out[0];
        memcpy(g, out + 1, 3 * (size_t)n * sizeof *g);
        buf_done(small, out);
        return LF_OK;
    }
    int rc = LF_OK;
    if (q->inner.potential) rc = q->inner.potential(q->inner.ctx, n, x, V, g, err);
    else {
        if (V) *V = 0;
        if (g) memset(g, 0, 3 * (size_t)n * sizeof *g);
    }
    if (rc != LF_OK) return rc;
    double sum = 0;
    lf_gmodule_eval_pairs(q->c.m, f, q->npairs, q->pairs, 3, x, q->r, q->c.nsub, q->c.sub, q->c.par, V != NULL,
                          g ? 3 : 0, g, &sum);
    if (V) *V += sum;
    return LF_OK;
}

int lf_spheres_graph_def(lf_graph *g, int V, const int *grad, int n, int npairs, const int *pairs, const double *r,
                         lf_spheres_def *inner, const double *par, const lf_model_graph_opts *o, lf_spheres_def *def,
                         lf_error *err)
{
    int rc = graph_ok(g, err);
    gsph *q = rc == LF_OK ? calloc(1, sizeof *q) : NULL;
    if (q && inner) {
        q->inner = *inner;
        inner = NULL; /* owned from now on */
    }
    if (rc != LF_OK || !q) {
        if (rc == LF_OK) rc = lf_error_set(err, LF_ENOMEM, "compiled potential: out of memory");
        goto fail;
    }
    const int nin = npairs > 0 ? 9 : 3 * n;
    if (n < 1 || npairs < 0 || lf_graph_ninputs(g) != nin || !lf_graph_node(g, V) || !def) {
        rc = lf_error_set(err, LF_EINVAL, "lf_spheres_graph_def: %s needs %d inputs (the graph has %d) and a node V",
                          npairs > 0 ? "a pair kernel (q_i, q_j, r_ij)" : "a potential of q", nin, lf_graph_ninputs(g));
        goto fail;
    }
    for (int p = 0; p < npairs; p++)
        if (pairs[2 * p] < 0 || pairs[2 * p] >= n || pairs[2 * p + 1] < 0 || pairs[2 * p + 1] >= n ||
            pairs[2 * p] == pairs[2 * p + 1]) {
            rc = lf_error_set(err, LF_EINVAL, "lf_spheres_graph_def: pair %d = (%d, %d) is not two different spheres of %d",
                              p + 1, pairs[2 * p] + 1, pairs[2 * p + 1] + 1, n);
            goto fail;
        }
    q->n = n;
    q->npairs = npairs;
    if (npairs > 0) {
        q->pairs = malloc(2 * (size_t)npairs * sizeof *q->pairs);
        q->r = malloc(3 * (size_t)npairs * sizeof *q->r);
        if (!q->pairs || !q->r) {
            rc = lf_error_set(err, LF_ENOMEM, "compiled potential: out of memory");
            goto fail;
        }
        memcpy(q->pairs, pairs, 2 * (size_t)npairs * sizeof *pairs);
        memcpy(q->r, r, 3 * (size_t)npairs * sizeof *r);
    }
    const int ng = npairs > 0 ? 6 : 3 * n;
    int *nodes = malloc((1 + (size_t)ng) * sizeof *nodes), *in = malloc((size_t)ng * sizeof *in);
    if (!nodes || !in) {
        free(nodes);
        free(in);
        rc = lf_error_set(err, LF_ENOMEM, "compiled potential: out of memory");
        goto fail;
    }
    for (int i = 0; i < ng; i++) in[i] = lf_graph_input_node(g, i);
    nodes[0] = V;
    if (grad) memcpy(nodes + 1, grad, (size_t)ng * sizeof *grad);
    else lf_graph_vjp(g, 1, &V, NULL, ng, in, nodes + 1);
    lf_gfunc_spec f[3] = {{1, &V}, {ng, nodes + 1}, {1 + ng, nodes}};
    lf_glayout full = {1, {3 * n}, 0, 0, NULL}, kern = {3, {3, 3, 3}, 0, 0, NULL};
    if ((rc = graph_ok(g, err)) == LF_OK && npairs > 0) rc = hoist_init(&q->c, g, 6, 3, f, &kern, npairs, q->r, o, err);
    if (rc == LF_OK) rc = compiled_init(&q->c, g, npairs > 0 ? &kern : &full, 3, f, par, o, err);
    if (npairs > 0) hoist_done(&kern);
    free(nodes);
    free(in);
    if (rc != LF_OK) goto fail;
    memset(def, 0, sizeof *def);
    def->name = "compiled";
    def->potential = gsph_potential;
    def->ctx = q;
    def->destroy = gsph_destroy;
    return LF_OK;
fail:
    if (inner && inner->destroy) inner->destroy(inner->ctx);
    gsph_destroy(q);
    return rc;
}

static gsph *gsph_of_def(const lf_spheres_def *d) { return d && d->potential == gsph_potential ? d->ctx : NULL; }

lf_compiled *lf_spheres_def_compiled(const lf_spheres_def *def)
{
    gsph *q = gsph_of_def(def);
    return q ? &q->c : NULL;
}

/* ---------------------------------------------------------------- any compiled model */
lf_compiled *lf_system_compiled(const lf_system *s)
{
    if (!s) return NULL;
    const lf_lie_ode_def *d = lf_lie_ode_definition(s);
    if (d) return lf_lie_ode_def_compiled(d);
    const lf_spheres_def *sd = lf_spheres_definition(s);
    return sd ? lf_spheres_def_compiled(sd) : NULL;
}

const char *lf_compiled_report(const lf_compiled *c) { return c ? lf_gmodule_report(c->m) : NULL; }
lf_gmodule *lf_compiled_module(const lf_compiled *c) { return c ? c->m : NULL; }

int lf_compiled_set_params(lf_compiled *c, int n, const double *par, lf_error *err)
{
    if (!c) return lf_error_set(err, LF_EINVAL, "the model is not compiled: it has no parameters to set");
    return set_params(c, n, par, err);
}
