/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — Runge–Kutta–Munthe-Kaas methods (Munthe-Kaas 1998; Ortolan's thesis §7.1.2) on any
 * system, from the tableaux of their methods.def entries (RKMK).
 *
 * For y' = f(t, y) . y (or y . f), with the action act(u, y) of the manifold layer:
 *   u_i  = h sum_j a_ij kt_j,   Y_i = act(u_i, y0),   k_i = f(t + c_i h, Y_i),
 *   kt_i = dexpinv(u_i, k_i)    (exact, or truncated to q Bernoulli terms: order min(p, q)),
 *   y1   = act(h sum_j b_j kt_j, y0).
 * Explicit tableaux run the stages in order. Implicit ones (Gauss–Legendre) solve for the stage
 * values Kt = (kt_1..kt_s) the equation F(Kt) = kt(u(Kt)) - Kt = 0 with u_i = h sum_j a_ij kt_j: by
 * the fixed-point iteration Kt <- Kt + F(Kt) (the iteration of Ortolan's thesis §7.1.2, on
 * U = h A Kt) or by Newton with the Jacobian
 *   dF_i/dkt_j = h a_ij dexpinv_{u_i} Jf(Y_i) dexp_{u_i} - delta_ij I
 * (Jf along the action, analytic when the system has one; the derivative of dexpinv in u is left
 * out) or with forward differences of F (full, or block-diagonal per factor), formed once per step
 * (simplified Newton: linear convergence with a rate O(h |u|), for one Jacobian instead of one per
 * iteration). RKMK is not symmetric whatever the tableau: its coordinates are centred at y0, and stepping back
 * from y1 uses coordinates centred at y1 (Zanna, Engø & Munthe-Kaas, BIT 41 (2001): the adjoint
 * differs by O(h^{p+1}); measured for rkmk_gl4: 1.3e-9 after h = 0.25 and -h). The symmetric
 * variants (rkmk_gl4_sym, rkmk_gl6_sym) centre the coordinates at the midpoint m = exp(W/2) y0,
 * W = h sum_j b_j kt_j, as that paper proposes: u_i = -W/2 + h sum_j a_ij kt_j, Y_i = act(u_i, m),
 * y1 = act(W, y0); with a symmetric tableau the step from y1 with -h has the same midpoint and
 * the mirrored stages, so it returns to y0 (measured to round-off). The order is that of the
 * tableau (the variant is the RKMK method applied in coordinates around m).
 * The embedded pair (rkmk_dp45) estimates the local error e = h sum_j (b_j - bhat_j) kt_j in the
 * algebra and controls it with the mixed tolerance err = rms_i(e_i / (atol + rtol s_i)), s_i = 1
 * on group factors (the algebra coordinates are angles / relative matrix entries) and
 * max(|y0_i|, |y1_i|) on R^m factors; accepted when err <= 1, next step h (0.9 err^{-1/5}) clamped
 * to [0.2 h, 5 h]. FSAL: the last stage's f(y1) is the next step's first. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/linalg.h"
#include "method/method_internal.h"

#define MAXS 16

typedef struct {
    int s;
    const double *A, *b, *c, *bhat;
    const double *bhat3; /* rkmk_dp853: the 3rd-order weights of Hairer's combined estimate (else NULL) */
    int dexpinv_order; /* forced by the method (lie_euler_implicit: 1), else 0 */
    int explicit_;
    int midpoint;      /* implicit: coordinates centred at the step's midpoint (symmetric variant) */
    int continuation;  /* implicit Lie-Euler: continuation in h at large steps (below) */
} rk_tableau;

static int strictly_lower(int s, const double *A)
{
    for (int i = 0; i < s; i++)
        for (int j = i; j < s; j++)
            if (A[i * s + j] != 0) return 0;
    return 1;
}

/* ---------------------------------------------------------------- workspace */
/* y0 (np) | Y (np) | mid (np) | u (nd) | k (nd) | v (nd) | kt (s nd) | U (s nd) | err (nd) |
 * Jacobian scratch (4 nd^2, analytic Jacobians only) | unknowns (s nd) | Newton. The fixed-point solver needs
 * neither the Jacobian scratch nor Newton's matrix; the block Jacobian by body stores its blocks
 * only, not the (s nd)^2 matrix (large systems: 32 x 32 needles, nd = 6144). */
static int fixed_point(const lf_stepper *st) { return st->opts.solver == LF_SOLVER_FIXED_POINT; }

/* The Jacobian Newton uses (LF_JAC_AUTO resolved): the system's analytic one when it has one, else
 * forward differences, block-diagonal by body beyond 64 unknowns. */
static int jacobian_kind(const lf_stepper *st, int n)
{
    const int jac = st->opts.jacobian;
    if (jac != LF_JAC_AUTO) return jac;
    return lf_system_has_jacobian(st->sys) ? LF_JAC_ANALYTIC : (n <= 64 ? LF_JAC_FD : LF_JAC_BLOCK_FD);
}

static size_t jac_doubles(const lf_stepper *st)
{
    const rk_tableau *T = st->method->cls->data;
    if (T->explicit_ || fixed_point(st) || jacobian_kind(st, T->s * st->nd) != LF_JAC_ANALYTIC) return 0;
    return 4 * (size_t)st->nd * st->nd;
}

/* The sum over the bodies (factor groups) of (s x the body's algebra dimension)^2: the doubles of
 * a block Jacobian. 0 if it cannot be computed (then the full n^2). */
static size_t block_doubles(const lf_stepper *st, int s)
{
    const int nf = lf_manifold_nfactors(st->M);
    int *group = malloc(2 * (size_t)nf * sizeof(int));
    if (!group) return 0;
    int *gdim = group + nf;
    const int ng = lf_system_factor_groups(st->sys, group);
    for (int g = 0; g < ng; g++) gdim[g] = 0;
    for (int f = 0; f < nf; f++) gdim[group[f]] += lf_manifold_factor(st->M, f)->nd;
    size_t sum = 0;
    for (int g = 0; g < ng; g++) sum += (size_t)(s * gdim[g]) * (size_t)(s * gdim[g]);
    free(group);
    return sum;
}

static size_t newton_doubles(const lf_stepper *st)
{
    const rk_tableau *T = st->method->cls->data;
    const int n = T->s * st->nd;
    if (fixed_point(st)) return lf_newton_fixed_point_work_size(n);
    if (jacobian_kind(st, n) == LF_JAC_BLOCK_FD) {
        const size_t b = block_doubles(st, T->s);
        if (b) return lf_newton_block_work_size(n, b);
    }
    return lf_newton_work_size(n);
}

static size_t rk_work(const lf_stepper *st)
{
    const rk_tableau *T = st->method->cls->data;
    const size_t np = (size_t)st->np, nd = (size_t)st->nd, s = (size_t)T->s;
    size_t w = 3 * np + 4 * nd + 2 * s * nd;
    if (!T->explicit_) w += jac_doubles(st) + newton_doubles(st) + s * nd; /* + the unknowns */
    return w;
}

/* the FSAL cache of the embedded pair: f at the current state (nd) */
static size_t rk_cache(const lf_stepper *st)
{
    const rk_tableau *T = st->method->cls->data;
    return T->bhat ? (size_t)st->nd : 0;
}

typedef struct {
    double *y0, *Y, *mid, *u, *k, *v, *kt, *U, *err, *jac, *unknowns, *newton;
} rk_buffers;

static rk_buffers buffers(const lf_stepper *st)
{
    const rk_tableau *T = st->method->cls->data;
    const int np = st->np, nd = st->nd, s = T->s;
    rk_buffers b;
    double *p = st->work;
    b.y0 = p; p += np;
    b.Y = p; p += np;
    b.mid = p; p += np;
    b.u = p; p += nd;
    b.k = p; p += nd;
    b.v = p; p += nd;
    b.kt = p; p += (size_t)s * nd;
    b.U = p; p += (size_t)s * nd;
    b.err = p; p += nd;
    b.jac = p; p += jac_doubles(st);
    b.unknowns = p; p += (size_t)s * nd; /* implicit methods: the stage unknowns, then Newton's */
    b.newton = p;
    return b;
}

static int order_of(const lf_stepper *st)
{
    const rk_tableau *T = st->method->cls->data;
    return T->dexpinv_order ? T->dexpinv_order : st->opts.dexpinv_order;
}

/* kt = dexpinv(u, k) (u == 0 exactly: kt = k) */
static int dexpinv(lf_stepper *st, const double *u, const double *k, double *kt)
{
    int zero = 1;
    for (int i = 0; i < st->nd && zero; i++) zero = u[i] == 0;
    if (zero) {
        memmove(kt, k, (size_t)st->nd * sizeof(double));
        return LF_OK;
    }
    return lf_manifold_dexpinv(st->M, u, k, order_of(st), kt, &st->err);
}

/* Stage i: Y = act(u, base), k = f(t + c h, Y), kt = dexpinv(u, k). */
static int stage(lf_stepper *st, const rk_buffers *b, const double *base, double t, const double *u, double *kt)
{
    memcpy(b->Y, base, (size_t)st->np * sizeof(double));
    lf_manifold_act(st->M, u, b->Y);
    int rc = lf_stepper_f(st, t, b->Y, b->k);
    if (rc != LF_OK) return rc;
    return dexpinv(st, u, b->k, kt);
}

/* ---------------------------------------------------------------- explicit */
static int explicit_stages(lf_stepper *st, const rk_tableau *T, const rk_buffers *b, double h, int first)
{
    const int nd = st->nd, s = T->s;
    for (int i = first; i < s; i++) {
        for (int k = 0; k < nd; k++) {
            double a = 0;
            for (int j = 0; j < i; j++) a += T->A[i * s + j] * b->kt[j * nd + k];
            b->u[k] = h * a;
        }
        int rc = stage(st, b, b->y0, st->t + T->c[i] * h, b->u, b->kt + (size_t)i * nd);
        if (rc != LF_OK) return rc;
    }
    return LF_OK;
}

/* v = h sum_j w_j kt_j */
static void combine(int nd, int s, const double *w, const double *kt, double h, double *v)
{
    for (int k = 0; k < nd; k++) {
        double a = 0;
        for (int j = 0; j < s; j++) a += w[j] * kt[j * nd + k];
        v[k] = h * a;
    }
}

static int explicit_step(lf_stepper *st, double h)
{
    const rk_tableau *T = st->method->cls->data;
    rk_buffers b = buffers(st);
    memcpy(b.y0, st->y, (size_t)st->np * sizeof(double));
    int rc = explicit_stages(st, T, &b, h, 0);
    if (rc != LF_OK) return rc;
    combine(st->nd, T->s, T->b, b.kt, h, b.v);
    lf_manifold_act(st->M, b.v, st->y);
    return LF_OK;
}

/* ---------------------------------------------------------------- implicit */
typedef struct {
    lf_stepper *st;
    const rk_tableau *T;
    rk_buffers *b;
    double h;
} implicit_ctx;

/* dexp (inverse = 0) or dexpinv (1) at u as an nd x nd matrix, column by column */
static int dexp_matrix(lf_stepper *st, const double *u, int inverse, double *D, double *col, double *out)
{
    const int nd = st->nd;
    for (int j = 0; j < nd; j++) {
        memset(col, 0, (size_t)nd * sizeof(double));
        col[j] = 1;
        int rc = inverse ? lf_manifold_dexpinv(st->M, u, col, order_of(st), out, &st->err)
                         : lf_manifold_dexp(st->M, u, col, out, &st->err);
        if (rc != LF_OK) return rc;
        for (int i = 0; i < nd; i++) D[i * nd + j] = out[i];
    }
    return LF_OK;
}

static void matmul(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}

/* F(Kt) = kt(u(Kt)) - Kt, and (J != NULL) the analytic Jacobian above. */
static int implicit_residual(void *ctxp, const double *Kt, double *F, double *J, lf_error *err)
{
    (void)err; /* helpers report into st->err, which is what lf_stepper_solve passes */
    implicit_ctx *c = ctxp;
    lf_stepper *st = c->st;
    const rk_tableau *T = c->T;
    rk_buffers *b = c->b;
    const int nd = st->nd, s = T->s, n = s * nd;
    const double *base = b->y0;
    if (T->midpoint) { /* m = act(W/2, y0), stages start from -W/2 */
        combine(nd, s, T->b, Kt, 0.5 * c->h, b->v);
        memcpy(b->mid, b->y0, (size_t)st->np * sizeof(double));
        lf_manifold_act(st->M, b->v, b->mid);
        base = b->mid;
    }
    if (J) memset(J, 0, (size_t)n * n * sizeof(double));
    for (int i = 0; i < s; i++) {
        double *ui = b->U + (size_t)i * nd;
        combine(nd, s, T->A + (size_t)i * s, Kt, c->h, ui);
        if (T->midpoint)
            for (int k = 0; k < nd; k++) ui[k] -= b->v[k];
        int rc = stage(st, b, base, st->t + T->c[i] * c->h, ui, b->kt + (size_t)i * nd);
        if (rc != LF_OK) return rc;
        if (J) { /* B_i = dexpinv_{u_i} Jf(Y_i) dexp_{u_i} in the row block i, scaled by h a_ij */
            const size_t nn = (size_t)nd * nd;
            double *Jf = b->jac, *D = Jf + nn, *Di = D + nn, *P = Di + nn;
            rc = lf_system_jacobian(st->sys, st->t + T->c[i] * c->h, b->Y, Jf, &st->err);
            if (rc == LF_OK) rc = dexp_matrix(st, ui, 0, D, b->u, b->k);
            if (rc == LF_OK) rc = dexp_matrix(st, ui, 1, Di, b->u, b->k);
            if (rc != LF_OK) return rc;
            matmul(nd, Jf, D, P);
            matmul(nd, Di, P, Jf); /* Jf now holds B_i */
            for (int j = 0; j < s; j++) {
                const double a = c->h * T->A[i * s + j];
                for (int r = 0; r < nd; r++)
                    for (int q = 0; q < nd; q++) J[(size_t)(i * nd + r) * n + j * nd + q] = a * Jf[r * nd + q];
            }
        }
    }
    for (int i = 0; i < n; i++) F[i] = b->kt[i] - Kt[i];
    if (J)
        for (int i = 0; i < n; i++) J[(size_t)i * n + i] -= 1;
    return LF_OK;
}

/* ---------------------------------------------------------------- continuation in h */
/* Implicit Lie–Euler, y1 = exp(h f(y1)) y0 (Tumiotto, Cokaj, Celledoni, Owren, Arnold, Def. 1), has
 * spurious roots once h |f'| > 1 (on the S^2 gradient flow the latitude equation phi1 - phi0 =
 * (h k/2) sin 2 phi1 has several), and Newton from the explicit predictor lands on them (measured:
 * from latitude -46 deg at h = 10, +67.6 deg instead of -86.0 deg). The method is the branch of
 * solutions connected to y1 = y0 at h = 0: when |h| L > 1/2 (L = |f'(y0)|_inf along the action:
 * the analytic Jacobian, else the growth of f along two directions by differences), the step solves
 * at h_0 = 0.5/L, then at h_j+1 = 1.5 h_j up to h, each from the secant prediction of the previous
 * two (xi = h kt saturates as h grows: a constant kt would overshoot past the attractor), halving
 * the increment after a failure or a jump away from the prediction. */
static double jacobian_norm(lf_stepper *st, const rk_buffers *b)
{
    const int nd = st->nd;
    double L = 0;
    if (lf_system_has_jacobian(st->sys)) {
        if (lf_system_jacobian(st->sys, st->t, b->y0, b->jac, &st->err) != LF_OK) return NAN;
        for (int i = 0; i < nd; i++) {
            double r = 0;
            for (int j = 0; j < nd; j++) r += fabs(b->jac[i * nd + j]);
            L = fmax(L, r);
        }
        return L;
    }
    /* two steps of the power iteration with differences f(act(e v, y0)) - f(y0), v = 1/sqrt(nd) */
    for (int i = 0; i < nd; i++) b->v[i] = 1 / sqrt((double)nd);
    for (int k = 0; k < 2; k++) {
        const double e = 1e-7;
        for (int i = 0; i < nd; i++) b->u[i] = e * b->v[i];
        memcpy(b->Y, b->y0, (size_t)st->np * sizeof(double));
        lf_manifold_act(st->M, b->u, b->Y);
        double *fe = b->err;
        if (lf_stepper_f(st, st->t, b->Y, fe) != LF_OK) return NAN;
        double n = 0;
        for (int i = 0; i < nd; i++) {
            b->v[i] = (fe[i] - b->k[i]) / e;
            n += b->v[i] * b->v[i];
        }
        n = sqrt(n);
        L = fmax(L, n);
        if (!(n > 0)) break;
        for (int i = 0; i < nd; i++) b->v[i] /= n;
    }
    return L;
}

/* xi_j = h_j Kt_j along the branch; secant predictor in h; a stage whose solution is far from its
 * prediction (|xi - xi_pred| > |xi - xi_j|/2 and > |xi|/100: Newton jumped to another branch) is
 * redone with half the increment. xa, xb, xp: nd doubles each. */
static int continued_solve(lf_stepper *st, void *cv, double *hp, double h, double L, double *Kt, lf_newton_opts o,
                           double *work, double *xa, double *xb, double *xp)
{
    const int n = st->nd;
    double hprev = 0, hprev2 = 0, hj = copysign(0.5 / L, h);
    for (int i = 0; i < n; i++) xa[i] = xb[i] = 0; /* xi at h = 0 */
    for (int stages = 0, fails = 0;; stages++) {
        /* predictor: secant through (hprev2, xb), (hprev, xa); the first stage from the explicit Kt */
        if (stages > 0) {
            const double r = hprev == hprev2 ? hj / hprev : (hj - hprev) / (hprev - hprev2);
            for (int i = 0; i < n; i++) {
                xp[i] = hprev == hprev2 ? r * xa[i] : xa[i] + r * (xa[i] - xb[i]);
                Kt[i] = xp[i] / hj;
            }
        } else
            for (int i = 0; i < n; i++) xp[i] = hj * Kt[i];
        *hp = hj;
        int rc = lf_stepper_solve(st, implicit_residual, cv, n, Kt, o, work);
        double dpred = 0, dstep = 0, xn = 0;
        for (int i = 0; rc == LF_OK && i < n; i++) {
            const double x = hj * Kt[i];
            dpred = fmax(dpred, fabs(x - xp[i]));
            dstep = fmax(dstep, fabs(x - xa[i]));
            xn = fmax(xn, fabs(x));
        }
        if (rc != LF_OK || (stages > 0 && dpred > 0.5 * dstep && dpred > 1e-2 * xn)) {
            if (++fails > 30 || stages > 400)
                return lf_error_set(&st->err, LF_ENOCONV, "implicit Lie-Euler: Newton with continuation in h failed at "
                                                          "h=%g on the way to h=%g (the branch of solutions from "
                                                          "h = 0 folds)", hj, h);
            hj = hprev + 0.5 * (hj - hprev);
            continue;
        }
        if (hj == h) return LF_OK;
        for (int i = 0; i < n; i++) {
            xb[i] = xa[i];
            xa[i] = hj * Kt[i];
        }
        hprev2 = hprev;
        hprev = hj;
        hj = fabs(hj) * 1.5 >= fabs(h) ? h : 1.5 * hj;
    }
}

static int implicit_step(lf_stepper *st, double h)
{
    const rk_tableau *T = st->method->cls->data;
    rk_buffers b = buffers(st);
    const int nd = st->nd, s = T->s, n = s * nd;
    memcpy(b.y0, st->y, (size_t)st->np * sizeof(double));
    /* predictor: every stage value f(t, y0) */
    int rc = lf_stepper_f(st, st->t, b.y0, b.k);
    if (rc != LF_OK) return rc;
    double *Kt = b.unknowns;
    for (int i = 0; i < s; i++) memcpy(Kt + (size_t)i * nd, b.k, (size_t)nd * sizeof(double));
    implicit_ctx c = {st, T, &b, h};
    lf_newton_opts o = {0};
    if (st->opts.solver == LF_SOLVER_FIXED_POINT) o.fixed_point = 1;
    else {
        const int jac = jacobian_kind(st, n);
        if (jac == LF_JAC_ANALYTIC && !lf_system_has_jacobian(st->sys))
            return lf_error_set(&st->err, LF_EINVAL, "the system has no analytic Jacobian: use jacobian = \"fd\" or \"block\"");
        o.jacobian = jac;
        /* differenced Jacobians cost n residuals: formed once per step (simplified Newton) */
        o.simplified = jac != LF_JAC_ANALYTIC;
        if (jac == LF_JAC_BLOCK_FD) { /* block: the factor's coupling group (a body), over every stage;
                                         color: (stage, position in the group) */
            int *block = st->iwork + lf_newton_iwork_size(n), *color = block + n, *group = color + n;
            const int nf = lf_manifold_nfactors(st->M), ng = lf_system_factor_groups(st->sys, group);
            int *gdim = group + nf, maxg = 0; /* each group's dimension so far, then the largest */
            for (int g = 0; g < ng; g++) gdim[g] = 0;
            for (int f = 0; f < nf; f++) {
                const lf_factor *fac = lf_manifold_factor(st->M, f);
                const int g = group[f];
                for (int i = 0; i < s; i++)
                    for (int k = 0; k < fac->nd; k++) {
                        block[i * nd + fac->od + k] = g;
                        color[i * nd + fac->od + k] = gdim[g] + k; /* the stage is added below */
                    }
                gdim[g] += fac->nd;
                if (gdim[g] > maxg) maxg = gdim[g];
            }
            for (int i = 0; i < s; i++)
                for (int k = 0; k < nd; k++) color[i * nd + k] += i * maxg;
            o.ncolors = s * maxg;
            o.block = block;
            o.color = color;
        }
    }
    if (T->continuation) {
        const double L = jacobian_norm(st, &b);
        if (isnan(L)) return st->err.code ? st->err.code : LF_EDOMAIN;
        if (fabs(h) * L > 0.5) rc = continued_solve(st, &c, &c.h, h, L, Kt, o, b.newton, b.err, b.mid, b.v);
        else rc = lf_stepper_solve(st, implicit_residual, &c, n, Kt, o, b.newton);
    } else
        rc = lf_stepper_solve(st, implicit_residual, &c, n, Kt, o, b.newton);
    if (rc != LF_OK) return rc;
    combine(nd, s, T->b, Kt, h, b.v); /* y1 = act(h b^T Kt, y0) */
    lf_manifold_act(st->M, b.v, st->y);
    return LF_OK;
}

/* ---------------------------------------------------------------- adaptive (embedded pair) */
static double error_norm(const lf_stepper *st, const double *e, const double *y0, const double *y1)
{
    double sum = 0;
    for (int f = 0; f < lf_manifold_nfactors(st->M); f++) {
        const lf_factor *fac = lf_manifold_factor(st->M, f);
        for (int k = 0; k < fac->nd; k++) {
            double scale = 1;
            if (fac->kind == LF_RM) scale = fmax(fabs(y0[fac->op + k]), fabs(y1[fac->op + k]));
            double r = e[fac->od + k] / (st->opts.atol + st->opts.rtol * scale);
            sum += r * r;
        }
    }
    return sqrt(sum / st->nd);
}

static int adaptive_step(lf_stepper *st, double hmax)
{
    const rk_tableau *T = st->method->cls->data;
    rk_buffers b = buffers(st);
    const int nd = st->nd, s = T->s;
    const double dir = hmax > 0 ? 1 : -1, habs = fabs(hmax);
    memcpy(b.y0, st->y, (size_t)st->np * sizeof(double));
    if (st->h_next <= 0) st->h_next = isfinite(habs) ? habs : 1e-3;
    /* the first stage: f(t, y0), from the cache when the previous step left it (FSAL) */
    if (!st->cache_valid) {
        int rc = lf_stepper_f(st, st->t, b.y0, st->cache);
        if (rc != LF_OK) return rc;
        st->cache_valid = 1;
    }
    for (int attempt = 0;; attempt++) {
        double h = fmin(st->h_next, habs);
        const double t0 = st->t;
        if (!(h > 1e-14 * fmax(1, fabs(t0))) || attempt > 60)
            return lf_error_set(&st->err, LF_ENOCONV, "step size underflow (h=%g) after %d rejected steps: the tolerances "
                                                      "rtol=%g, atol=%g cannot be met", h, attempt, st->opts.rtol, st->opts.atol);
        h *= dir;
        memcpy(b.kt, st->cache, (size_t)nd * sizeof(double));
        int rc = explicit_stages(st, T, &b, h, 1);
        if (rc != LF_OK) return rc;
        combine(nd, s, T->b, b.kt, h, b.v);
        memcpy(st->y, b.y0, (size_t)st->np * sizeof(double));
        lf_manifold_act(st->M, b.v, st->y);
        double w[MAXS];
        for (int j = 0; j < s; j++) w[j] = T->b[j] - T->bhat[j];
        combine(nd, s, w, b.kt, h, b.err);
        double err = error_norm(st, b.err, b.y0, st->y);
        if (T->bhat3) { /* DOP853: e5^2 / sqrt(e5^2 + 0.01 e3^2), which behaves as h^8 */
            for (int j = 0; j < s; j++) w[j] = T->b[j] - T->bhat3[j];
            combine(nd, s, w, b.kt, h, b.err);
            const double e3 = error_norm(st, b.err, b.y0, st->y), d = sqrt(err * err + 0.01 * e3 * e3);
            err = d > 0 ? err * err / d : 0;
        }
        /* the next step from err ~ h^(order): h (0.9 err^(-1/order)), clamped to [0.2 h, 5 h] */
        double fac = err > 0 ? 0.9 * pow(err, -1.0 / st->method->info.order) : 5;
        fac = fmin(5, fmax(0.2, fac));
        if (err <= 1) {
            st->h_taken = h;
            if (fabs(h) >= st->h_next * (1 - 1e-15) || fac < 1) st->h_next = fabs(h) * fac;
            /* FSAL: the last stage ran at y1 (its u equals v), its raw f is the next first stage */
            memcpy(st->cache, b.k, (size_t)nd * sizeof(double));
            st->cache_set = 1;
            return LF_OK;
        }
        st->stats.rejected++;
        st->h_next = fabs(h) * fac;
        memcpy(st->y, b.y0, (size_t)st->np * sizeof(double));
    }
}

/* ---------------------------------------------------------------- the methods */
static int rk_step(lf_stepper *st, double h)
{
    const rk_tableau *T = st->method->cls->data;
    if (T->bhat) return adaptive_step(st, h);
    return T->explicit_ ? explicit_step(st, h) : implicit_step(st, h);
}

static const lf_method_class rk_class = {.work_doubles = rk_work, .cache_doubles = rk_cache, .step = rk_step};

/* The methods.def entries: the tableau (s = the number of nodes c; an adaptive entry's b holds the
 * weights, then bhat) and the class lf_class_<id>. */
#define RKMK(id, title, ref, order, props, A_, b_, c_)                                                                 \
    static const double id##_A[] = {A_}, id##_b[] = {b_}, id##_c[] = {c_};                                             \
    const lf_method_class lf_class_##id = {                                                                            \
        .work_doubles = rk_work,                                                                                       \
        .cache_doubles = rk_cache,                                                                                     \
        .step = rk_step,                                                                                               \
        .data = &(const rk_tableau){(int)(sizeof id##_c / sizeof(double)), id##_A, id##_b, id##_c,                     \
                                    ((props)&LF_MP_ADAPTIVE) ? id##_b + sizeof id##_c / sizeof(double) : NULL,         \
                                    sizeof id##_b == 3 * sizeof id##_c ? id##_b + 2 * sizeof id##_c / sizeof(double)   \
                                                                       : NULL,                                         \
                                    ((props)&LF_MP_DEXPINV_1) ? 1 : 0, !((props)&LF_MP_IMPLICIT),                      \
                                    ((props)&LF_MP_MIDPOINT) != 0, ((props)&LF_MP_CONTINUATION) != 0}};
#include "method/methods.def"

/* ---------------------------------------------------------------- tableaux from the user */
typedef struct {
    lf_method m;
    lf_method_class cls;
    rk_tableau T;
    double A[MAXS * MAXS], b[MAXS], c[MAXS];
    char name[64], title[96];
} user_rkmk;

/* The classical order conditions up to order 4 (Hairer, Nørsett & Wanner I, §II.2), with the
 * node vector taken as the row sums of A: the largest p whose conditions all hold to 1e-12. */
static int classical_order(int s, const double *A, const double *b)
{
    double c[MAXS], Ac[MAXS], Ac2[MAXS], AAc[MAXS];
    for (int i = 0; i < s; i++) {
        c[i] = 0;
        for (int j = 0; j < s; j++) c[i] += A[i * s + j];
    }
    for (int i = 0; i < s; i++) {
        Ac[i] = Ac2[i] = 0;
        for (int j = 0; j < s; j++) {
            Ac[i] += A[i * s + j] * c[j];
            Ac2[i] += A[i * s + j] * c[j] * c[j];
        }
    }
    for (int i = 0; i < s; i++) {
        AAc[i] = 0;
        for (int j = 0; j < s; j++) AAc[i] += A[i * s + j] * Ac[j];
    }
    double q[8] = {0};
    for (int i = 0; i < s; i++) {
        q[0] += b[i];
        q[1] += b[i] * c[i];
        q[2] += b[i] * c[i] * c[i];
        q[3] += b[i] * Ac[i];
        q[4] += b[i] * c[i] * c[i] * c[i];
        q[5] += b[i] * c[i] * Ac[i];
        q[6] += b[i] * Ac2[i];
        q[7] += b[i] * AAc[i];
    }
    static const double want[8] = {1, 0.5, 1.0 / 3, 1.0 / 6, 0.25, 0.125, 1.0 / 12, 1.0 / 24};
    static const int upto[5] = {0, 1, 2, 4, 8}; /* conditions of order <= p: q[0 .. upto[p]) */
    int p = 0;
    for (int k = 1; k <= 4; k++) {
        int ok = 1;
        for (int i = upto[k - 1]; i < upto[k]; i++) ok &= fabs(q[i] - want[i]) <= 1e-12;
        if (!ok) break;
        p = k;
    }
    return p;
}

/* Symmetric (Hairer, Lubich & Wanner, GNI §V.2): b_i = b_{s+1-i}, a_{s+1-i,s+1-j} + a_ij = b_j. */
static int tableau_symmetric(int s, const double *A, const double *b)
{
    for (int i = 0; i < s; i++) {
        if (fabs(b[i] - b[s - 1 - i]) > 1e-14) return 0;
        for (int j = 0; j < s; j++)
            if (fabs(A[(s - 1 - i) * s + (s - 1 - j)] + A[i * s + j] - b[j]) > 1e-14) return 0;
    }
    return 1;
}

lf_method *lf_rkmk_method_new(const char *name, int s, const double *A, const double *b, const double *c, int order,
                              int midpoint, lf_error *err)
{
    if (!name || !*name || strlen(name) >= 64) {
        lf_error_set(err, LF_EINVAL, "rkmk: a name of 1 to 63 characters is required");
        return NULL;
    }
    if (s < 1 || s > MAXS) {
        lf_error_set(err, LF_EINVAL, "rkmk %s: %d stages, expected 1 to %d", name, s, MAXS);
        return NULL;
    }
    if (!A || !b || !c) {
        lf_error_set(err, LF_EINVAL, "rkmk %s: A, b and c are required", name);
        return NULL;
    }
    for (int i = 0; i < s * s; i++)
        if (!isfinite(A[i])) {
            lf_error_set(err, LF_EINVAL, "rkmk %s: A[%d][%d] = %g is not finite", name, i / s + 1, i % s + 1, A[i]);
            return NULL;
        }
    for (int i = 0; i < s; i++)
        if (!isfinite(b[i]) || !isfinite(c[i])) {
            lf_error_set(err, LF_EINVAL, "rkmk %s: b[%d] = %g or c[%d] = %g is not finite", name, i + 1, b[i], i + 1, c[i]);
            return NULL;
        }
    for (int i = 0; i < s; i++) { /* the order conditions (classical_order) take c_i = sum_j a_ij */
        double rs = 0, as = 0;
        for (int j = 0; j < s; j++) {
            rs += A[i * s + j];
            as += fabs(A[i * s + j]);
        }
        if (!(fabs(c[i] - rs) <= 1e-13 * (1 + as))) {
            lf_error_set(err, LF_EINVAL, "rkmk %s: c[%d] = %.17g is not the row sum of A (%.17g): Runge-Kutta methods "
                                         "need c_i = sum_j a_ij", name, i + 1, c[i], rs);
            return NULL;
        }
    }
    int p = classical_order(s, A, b);
    if (p < 1) {
        double sb = 0;
        for (int i = 0; i < s; i++) sb += b[i];
        lf_error_set(err, LF_EINVAL, "rkmk %s: the weights b sum to %.17g, not 1: the method is not consistent", name, sb);
        return NULL;
    }
    if (order > 0 && order > p && p < 4) {
        lf_error_set(err, LF_EINVAL, "rkmk %s: order %d was declared, but the tableau satisfies the order conditions "
                                     "up to order %d only", name, order, p);
        return NULL;
    }
    const int expl = strictly_lower(s, A);
    if (midpoint && (expl || !tableau_symmetric(s, A, b))) {
        lf_error_set(err, LF_EINVAL, "rkmk %s: midpoint-centred coordinates make a symmetric method only from a "
                                     "symmetric implicit tableau (b_i = b_{s+1-i}, a_ij + a_{s+1-i,s+1-j} = b_j)", name);
        return NULL;
    }
    user_rkmk *u = calloc(1, sizeof *u);
    if (!u) {
        lf_error_set(err, LF_ENOMEM, "rkmk %s: out of memory", name);
        return NULL;
    }
    memcpy(u->A, A, (size_t)s * s * sizeof(double));
    memcpy(u->b, b, (size_t)s * sizeof(double));
    memcpy(u->c, c, (size_t)s * sizeof(double));
    snprintf(u->name, sizeof u->name, "%s", name);
    snprintf(u->title, sizeof u->title, "RKMK from a user tableau (%d stages)", s);
    u->T = (rk_tableau){s, u->A, u->b, u->c, NULL, NULL, 0, expl, midpoint != 0, 0};
    u->m.info = (lf_method_info){.name = u->name, .title = u->title, .reference = "user tableau", .family = "rkmk",
                                 .order = order > 0 ? order : p, .symmetric = midpoint != 0, /* see the header */
                                 .symplectic = "no", .implicit = !expl, .form = LF_FORM_LIE_ODE};
    u->cls = rk_class;
    u->cls.data = &u->T;
    u->m.cls = &u->cls;
    u->m.allocated = 1;
    return &u->m;
}

void lf_method_free(lf_method *m)
{
    if (m && m->allocated) free(m); /* m is the first member of its user_rkmk */
}
