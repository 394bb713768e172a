/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — derivatives of expression graphs: reverse mode (vector-Jacobian products) and forward
 * mode (Jacobian-vector products) built as new nodes of the same graph, and reverse mode evaluated
 * numerically at the trace point.
 *
 * Each operation's partial derivatives are written once below as nodes (and once as numbers in
 * graph_ops_internal.h; tests/c/test_graph.c checks that the two agree). A product of an adjoint
 * or a tangent x with a partial p that can be infinite (1/b, 1/(2 sqrt a), ...) is the guarded
 * LF_G_MULZ(x, p), 0 when x is 0 (graph.h, "Singular points"); a later product of such an adjoint
 * or tangent (it may be infinite) is LF_G_MULZ(p, x), 0 when the partial is 0, as the numeric sweep
 * does; in a graph with select() every product is guarded, since the branch not taken may hold
 * infinite values. */
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "graph/graph_ops_internal.h"

/* How a partial derivative enters: kinds of the symbolic partial. */
enum { P_ZERO, P_ONE, P_MINUS_ONE, P_NODE, P_SINGULAR, P_SEL_TRUE, P_SEL_FALSE };

static int K(lf_graph *g, double v) { return lf_graph_const(g, v); }

/* The partial derivative of node i with respect to its operand number w (0..2): *kind and, for
 * P_NODE / P_SINGULAR, the node. */
static int partial(lf_graph *g, int i, int w, int *kind)
{
    const lf_gnode n = *lf_graph_node(g, i);
    const int a = n.a, b = n.b;
    *kind = P_NODE;
    switch (n.op) {
    case LF_G_NEG: *kind = P_MINUS_ONE; return -1;
    case LF_G_ADD: *kind = P_ONE; return -1;
    case LF_G_SUB: *kind = w == 0 ? P_ONE : P_MINUS_ONE; return -1;
    case LF_G_MUL: return w == 0 ? b : a;
    case LF_G_DIV:
        *kind = P_SINGULAR;
        return w == 0 ? lf_g2(g, LF_G_DIV, K(g, 1), b) : lf_g1(g, LF_G_NEG, lf_g2(g, LF_G_DIV, i, b));
    case LF_G_SQRT: *kind = P_SINGULAR; return lf_g2(g, LF_G_DIV, K(g, 0.5), i);
    case LF_G_EXP: return i;
    case LF_G_LOG: *kind = P_SINGULAR; return lf_g2(g, LF_G_DIV, K(g, 1), a);
    case LF_G_SIN: return lf_g1(g, LF_G_COS, a);
    case LF_G_COS: return lf_g1(g, LF_G_NEG, lf_g1(g, LF_G_SIN, a));
    case LF_G_TAN: *kind = P_SINGULAR; return lf_g2(g, LF_G_ADD, K(g, 1), lf_g2(g, LF_G_MUL, i, i));
    case LF_G_ASIN:
    case LF_G_ACOS: {
        int r = lf_g2(g, LF_G_DIV, K(g, 1), lf_g1(g, LF_G_SQRT, lf_g2(g, LF_G_SUB, K(g, 1), lf_g2(g, LF_G_MUL, a, a))));
        *kind = P_SINGULAR;
        return n.op == LF_G_ASIN ? r : lf_g1(g, LF_G_NEG, r);
    }
    case LF_G_ATAN: return lf_g2(g, LF_G_DIV, K(g, 1), lf_g2(g, LF_G_ADD, K(g, 1), lf_g2(g, LF_G_MUL, a, a)));
    case LF_G_ATAN2: {
        int r = lf_g2(g, LF_G_ADD, lf_g2(g, LF_G_MUL, a, a), lf_g2(g, LF_G_MUL, b, b));
        *kind = P_SINGULAR;
        return w == 0 ? lf_g2(g, LF_G_DIV, b, r) : lf_g1(g, LF_G_NEG, lf_g2(g, LF_G_DIV, a, r));
    }
    case LF_G_POW: /* b a^(b-1) and a^b log a, 0 where b = 0 / a^b = 0 (graph_ops_internal.h) */
        *kind = P_SINGULAR;
        if (w == 0) return lf_g2(g, LF_G_MULZ, b, lf_g2(g, LF_G_POW, a, lf_g2(g, LF_G_SUB, b, K(g, 1))));
        return lf_g2(g, LF_G_MULZ, i, lf_g1(g, LF_G_LOG, a));
    case LF_G_ABS: return lf_g1(g, LF_G_SIGN, a);
    case LF_G_SELECT:
        *kind = w == 0 ? P_ZERO : w == 1 ? P_SEL_TRUE : P_SEL_FALSE;
        return -1;
    case LF_G_STUMPFF: { /* c_k' = (k c_{k+2} - c_{k+1})/2 */
        int c1 = lf_gstumpff(g, n.k + 1, a);
        if (n.k == 0) return lf_g2(g, LF_G_MUL, K(g, -0.5), c1);
        int c2 = lf_gstumpff(g, n.k + 2, a);
        return lf_g2(g, LF_G_MUL, K(g, 0.5), lf_g2(g, LF_G_SUB, lf_g2(g, LF_G_MUL, K(g, n.k), c2), c1));
    }
    case LF_G_MULZ:
        if (w == 0) *kind = P_SINGULAR;
        return w == 0 ? b : a;
    default: *kind = P_ZERO; return -1; /* comparisons, logic, sign: piecewise constant */
    }
}

/* x times the partial (kind, p) of node i with respect to operand w; -1 for a zero contribution
 * (x is -1 for zero too). *risky: on entry whether x may be infinite (it came through a singular
 * partial), on return whether the product may be. A product with a singular partial is
 * LF_G_MULZ(x, p), 0 when x is 0; a product of a risky x with an ordinary partial is
 * LF_G_MULZ(p, x), 0 when the partial is 0: the numeric sweep skips both (lf_graph_gradient), so
 * that the cone of a norm at 0 gets the subgradient 0 in both (|x| = sqrt(x.x): an infinite adjoint
 * of x.x meets the partial 2x = 0). */
static int times_partial(lf_graph *g, int i, int kind, int p, int x, int *risky)
{
    if (x < 0) return -1;
    const lf_gnode *n = lf_graph_node(g, i);
    switch (kind) {
    case P_ZERO: return -1;
    case P_ONE: return x;
    case P_MINUS_ONE: return lf_g1(g, LF_G_NEG, x);
    case P_SEL_TRUE: return lf_gselect(g, n->a, x, K(g, 0));
    case P_SEL_FALSE: return lf_gselect(g, n->a, K(g, 0), x);
    case P_SINGULAR: *risky = 1; return lf_g2(g, LF_G_MULZ, x, p);
    default:
        if (!*risky) return lf_g2(g, lf_graph_has_select(g) ? LF_G_MULZ : LF_G_MUL, x, p);
        if (!lf_graph_has_select(g)) return lf_g2(g, LF_G_MULZ, p, x);
        /* both may hold the guard's case: x infinite or 0 (a branch not taken), p 0 or infinite */
        return lf_gselect(g, lf_g2(g, LF_G_EQ, p, K(g, 0)), K(g, 0), lf_g2(g, LF_G_MULZ, x, p));
    }
}

static int accumulate(lf_graph *g, int acc, int x)
{
    if (x < 0) return acc;
    return acc < 0 ? x : lf_g2(g, LF_G_ADD, acc, x);
}

static int operand(const lf_gnode *n, int w) { return w == 0 ? n->a : w == 1 ? n->b : n->c; }

int lf_graph_vjp(lf_graph *g, int nout, const int *out, const int *seed, int nwrt, const int *wrt, int *res)
{
    if (lf_graph_status(g) != LF_OK) return lf_graph_status(g);
    const int n0 = lf_graph_size(g);
    int top = -1;
    for (int i = 0; i < nout; i++) {
        if (out[i] < 0 || out[i] >= n0 || (seed && (seed[i] < 0 || seed[i] >= n0)))
            return lf_graph_fail(g, LF_EINVAL, "lf_graph_vjp: an output or seed is not a node"), LF_EINVAL;
        if (out[i] > top) top = out[i];
    }
    for (int j = 0; j < nwrt; j++)
        if (wrt[j] < 0 || wrt[j] >= n0) return lf_graph_fail(g, LF_EINVAL, "lf_graph_vjp: wrt is not a node"), LF_EINVAL;
    /* dep[i]: node i depends on some wrt node (only those carry adjoints worth propagating); 2 once
     * its adjoint may be infinite */
    char *dep = calloc((size_t)n0 + 1, 1);
    int *adj = malloc(((size_t)n0 + 1) * sizeof *adj);
    if (!dep || !adj) {
        free(dep);
        free(adj);
        return lf_graph_fail(g, LF_ENOMEM, "lf_graph_vjp: out of memory"), LF_ENOMEM;
    }
    int lo = n0;
    for (int j = 0; j < nwrt; j++) {
        dep[wrt[j]] = 1;
        if (wrt[j] < lo) lo = wrt[j];
    }
    for (int i = lo; i <= top; i++) {
        const lf_gnode *n = lf_graph_node(g, i);
        for (int w = 0, ar = lf_gop_arity(n->op); w < ar && !dep[i]; w++) dep[i] = dep[operand(n, w)];
    }
    for (int i = 0; i < n0; i++) adj[i] = -1;
    for (int i = 0; i < nout; i++)
        if (dep[out[i]]) adj[out[i]] = accumulate(g, adj[out[i]], seed ? seed[i] : K(g, 1));
    for (int i = top; i >= lo; i--) {
        if (adj[i] < 0 || !dep[i]) continue;
        const lf_gnode nd = *lf_graph_node(g, i);
        for (int w = 0, ar = lf_gop_arity(nd.op); w < ar; w++) {
            int o = operand(&nd, w), kind, risky = dep[i] == 2;
            if (!dep[o]) continue;
            int p = partial(g, i, w, &kind);
            adj[o] = accumulate(g, adj[o], times_partial(g, i, kind, p, adj[i], &risky));
            if (risky) dep[o] = 2; /* its adjoint may be infinite */
        }
    }
    for (int j = 0; j < nwrt; j++) res[j] = adj[wrt[j]] >= 0 ? adj[wrt[j]] : K(g, 0);
    free(dep);
    free(adj);
    return lf_graph_status(g);
}

int lf_graph_jvp(lf_graph *g, int nin, const int *in, const int *tan, int nout, const int *out, int *res)
{
    if (lf_graph_status(g) != LF_OK) return lf_graph_status(g);
    const int n0 = lf_graph_size(g);
    int top = -1, lo = n0;
    for (int i = 0; i < nout; i++) {
        if (out[i] < 0 || out[i] >= n0) return lf_graph_fail(g, LF_EINVAL, "lf_graph_jvp: an output is not a node"), LF_EINVAL;
        if (out[i] > top) top = out[i];
    }
    int *t = malloc(((size_t)n0 + 1) * sizeof *t);
    char *risky = calloc((size_t)n0 + 1, 1); /* the tangent of node i may be infinite */
    if (!t || !risky) {
        free(t);
        free(risky);
        return lf_graph_fail(g, LF_ENOMEM, "lf_graph_jvp: out of memory"), LF_ENOMEM;
    }
    for (int i = 0; i < n0; i++) t[i] = -1;
    for (int j = 0; j < nin; j++) {
        if (in[j] < 0 || in[j] >= n0 || (tan[j] >= n0)) {
            free(t);
            free(risky);
            return lf_graph_fail(g, LF_EINVAL, "lf_graph_jvp: an input or tangent is not a node"), LF_EINVAL;
        }
        if (tan[j] >= 0) t[in[j]] = accumulate(g, t[in[j]], tan[j]);
        if (in[j] < lo) lo = in[j];
    }
    for (int i = lo; i <= top; i++) {
        const lf_gnode nd = *lf_graph_node(g, i);
        int acc = t[i];
        for (int w = 0, ar = lf_gop_arity(nd.op); w < ar; w++) {
            int o = operand(&nd, w), kind, r = risky[o];
            if (t[o] < 0) continue;
            int p = partial(g, i, w, &kind);
            acc = accumulate(g, acc, times_partial(g, i, kind, p, t[o], &r));
            risky[i] |= (char)r;
        }
        t[i] = acc;
    }
    for (int i = 0; i < nout; i++) res[i] = t[out[i]] >= 0 ? t[out[i]] : K(g, 0);
    free(t);
    free(risky);
    return lf_graph_status(g);
}

int lf_graph_gradient(const lf_graph *g, int out, int nwrt, const int *wrt, double *grad, lf_error *err)
{
    if (lf_graph_status(g) != LF_OK) {
        if (err) *err = *lf_graph_error(g);
        return lf_graph_status(g);
    }
    const int n0 = lf_graph_size(g);
    if (out < 0 || out >= n0) return lf_error_set(err, LF_EINVAL, "lf_graph_gradient: the output is not a node");
    for (int j = 0; j < nwrt; j++)
        if (wrt[j] < 0 || wrt[j] >= n0) return lf_error_set(err, LF_EINVAL, "lf_graph_gradient: wrt is not a node");
    double *adj = calloc((size_t)out + 1, sizeof *adj);
    if (!adj) return lf_error_set(err, LF_ENOMEM, "lf_graph_gradient: out of memory at %d nodes", n0);
    adj[out] = 1;
    for (int i = out; i >= 0; i--) {
        if (adj[i] == 0) continue; /* a zero adjoint propagates nothing, even through an infinite partial */
        const lf_gnode *n = lf_graph_node(g, i);
        int ar = lf_gop_arity(n->op);
        if (ar < 1) continue;
        double v[3] = {0, 0, 0}, d[3];
        for (int w = 0; w < ar; w++) v[w] = lf_graph_value(g, operand(n, w));
        lf_gop_partials(n->op, n->k, v[0], v[1], v[2], lf_graph_value(g, i), d);
        for (int w = 0; w < ar; w++)
            if (d[w] != 0) adj[operand(n, w)] += adj[i] * d[w];
    }
    for (int j = 0; j < nwrt; j++) grad[j] = wrt[j] <= out ? adj[wrt[j]] : 0;
    free(adj);
    return LF_OK;
}
