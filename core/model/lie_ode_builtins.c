/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — built-in Lie-ODE vector fields in C (the list and formulas are in lie_ode.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/lie_ode.h"
#include "base/linalg.h"
#include "lie/quat.h"

typedef struct {
    double p[18];
    lf_trivialization triv;
} builtin_ctx;

/* ---------------------------------------------------------------- S^2 gradient flow */
/* q' = -D q + (q^T D q) q is the tangential part of -D q; with q' = xi x q, xi = D q x q:
 * (Dq x q) x q = q (q . Dq) - Dq (q . q). Along the action q_e = exp(e hat(e_j)) q, q_e' = e_j x q,
 * so column j of the Jacobian is D(e_j x q) x q + D q x (e_j x q). */
static int s2gf_f(void *ctx, double t, const double *q, double *xi, lf_error *err)
{
    (void)t; (void)err;
    const double *D = ((builtin_ctx *)ctx)->p;
    double Dq[3];
    lf_v3_mul(D, q, Dq);
    lf_v3_cross(Dq, q, xi);
    return LF_OK;
}

static int s2gf_jac(void *ctx, double t, const double *q, double *J, lf_error *err)
{
    (void)t; (void)err;
    const double *D = ((builtin_ctx *)ctx)->p;
    double Dq[3];
    lf_v3_mul(D, q, Dq);
    for (int j = 0; j < 3; j++) {
        double e[3] = {0, 0, 0}, dq[3], Ddq[3], a[3], b[3];
        e[j] = 1;
        lf_v3_cross(e, q, dq);
        lf_v3_mul(D, dq, Ddq);
        lf_v3_cross(Ddq, q, a);
        lf_v3_cross(Dq, dq, b);
        for (int i = 0; i < 3; i++) J[3 * i + j] = a[i] + b[i];
    }
    return LF_OK;
}

static int s2gf_energy(void *ctx, const double *q, double *E, lf_error *err)
{
    (void)err;
    const double *D = ((builtin_ctx *)ctx)->p;
    *E = 0.5 * (D[0] * q[0] * q[0] + D[1] * q[1] * q[1] + D[2] * q[2] * q[2]);
    return LF_OK;
}

/* ---------------------------------------------------------------- linear ODE on GL(3) */
static int gl3lin_f(void *ctx, double t, const double *Y, double *xi, lf_error *err)
{
    (void)Y; (void)err;
    const double *A0 = ((builtin_ctx *)ctx)->p, *A1 = A0 + 9, s = sin(t);
    for (int k = 0; k < 9; k++) xi[k] = A0[k] + s * A1[k];
    return LF_OK;
}

static int gl3lin_jac(void *ctx, double t, const double *Y, double *J, lf_error *err)
{
    (void)ctx; (void)t; (void)Y; (void)err;
    memset(J, 0, 81 * sizeof(double));
    return LF_OK;
}

/* ---------------------------------------------------------------- free rigid body on S^3 */
/* The attitude R(q) of a free rigid body with spatial momentum m0 moves with the spatial angular
 * velocity w_s = R J^{-1} R^T m0 (R' = hat(w_s) R), or the body one w = J^{-1} R^T m0 (R' = R hat(w)).
 * With the s3 action q <- quat_exp(xi/2) q, R(q) moves by exp(hat(xi)): xi = w_s (right-trivialized)
 * or w (left). H = 1/2 m0^T R J^{-1} R^T m0. */
static void frq_body(const builtin_ctx *c, const double *q, double *R, double *w)
{
    const double *J = c->p, *m0 = c->p + 3;
    lf_quat_to_matrix(q, R);
    lf_m3_tapply(R, m0, w);
    lf_v3_div(w, J, w);
}

static int frq_f(void *ctx, double t, const double *q, double *xi, lf_error *err)
{
    (void)t; (void)err;
    const builtin_ctx *c = ctx;
    double R[9], w[3];
    frq_body(c, q, R, w);
    if (c->triv == LF_RIGHT_TRIVIALIZED) lf_m3_apply(R, w, xi);
    else lf_v3_copy(w, xi);
    return LF_OK;
}

static int frq_energy(void *ctx, const double *q, double *E, lf_error *err)
{
    (void)err;
    const builtin_ctx *c = ctx;
    double R[9], w[3], P[3];
    frq_body(c, q, R, w);
    lf_m3_tapply(R, c->p + 3, P); /* R^T m0 */
    *E = 0.5 * lf_v3_dot(P, w);
    return LF_OK;
}

/* dH: d/de H(exp(e hat xi) R) = xi . (w_s x m0) (right), d/de H(R exp(e hat xi)) = xi . (W x M) with
 * the body momentum M = R^T m0 and W = J^-1 M (left) */
static int frq_dH(void *ctx, const double *q, double *g, lf_error *err)
{
    (void)err;
    const builtin_ctx *c = ctx;
    double R[9], w[3], M[3], ws[3];
    frq_body(c, q, R, w);
    if (c->triv == LF_RIGHT_TRIVIALIZED) {
        lf_m3_apply(R, w, ws);
        lf_v3_cross(ws, c->p + 3, g);
    } else {
        lf_m3_tapply(R, c->p + 3, M);
        lf_v3_cross(w, M, g);
    }
    return LF_OK;
}

/* ---------------------------------------------------------------- free rigid body on S^2 */
/* m' = m x I^-1 m = xi x m with xi = -I^-1 m; H = 1/2 m . I^-1 m; d/de H(exp(e hat a) m) =
 * I^-1 m . (a x m) = a . (m x I^-1 m); Lie–Poisson skew map w(m)(a) = m x a. Jacobian along the
 * action: d/de (-I^-1 exp(e hat e_j) m) = -I^-1 (e_j x m). */
static int rbs2_f(void *ctx, double t, const double *m, double *xi, lf_error *err)
{
    (void)t; (void)err;
    const double *I = ((builtin_ctx *)ctx)->p;
    for (int k = 0; k < 3; k++) xi[k] = -m[k] / I[k];
    return LF_OK;
}

static int rbs2_jac(void *ctx, double t, const double *m, double *J, lf_error *err)
{
    (void)t; (void)err;
    const double *I = ((builtin_ctx *)ctx)->p;
    for (int j = 0; j < 3; j++) {
        double e[3] = {0, 0, 0}, d[3];
        e[j] = 1;
        lf_v3_cross(e, m, d);
        for (int i = 0; i < 3; i++) J[3 * i + j] = -d[i] / I[i];
    }
    return LF_OK;
}

static int rbs2_H(void *ctx, const double *m, double *H, lf_error *err)
{
    (void)err;
    const double *I = ((builtin_ctx *)ctx)->p;
    *H = 0.5 * (m[0] * m[0] / I[0] + m[1] * m[1] / I[1] + m[2] * m[2] / I[2]);
    return LF_OK;
}

static int rbs2_dH(void *ctx, const double *m, double *g, lf_error *err)
{
    (void)err;
    const double *I = ((builtin_ctx *)ctx)->p;
    double w[3];
    lf_v3_div(m, I, w);
    lf_v3_cross(m, w, g);
    return LF_OK;
}

static int rbs2_skew(void *ctx, const double *m, const double *a, double *out, lf_error *err)
{
    (void)ctx; (void)err;
    lf_v3_cross(m, a, out);
    return LF_OK;
}

/* ---------------------------------------------------------------- pseudo-rigid body on T*GL(3) */
/* params J (3, diagonal), lambda, mu. S = lambda tr(E) I + 2 mu E, E = (F^T F - I)/2. */
static void prb_S(const double *p, const double *F, double *S, double *W)
{
    double E[9];
    lf_m3_tmul(F, F, E);
    for (int i = 0; i < 9; i++) E[i] *= 0.5;
    E[0] -= 0.5, E[4] -= 0.5, E[8] -= 0.5;
    double trE = E[0] + E[4] + E[8], trE2 = 0;
    for (int i = 0; i < 9; i++) trE2 += E[i] * E[i]; /* tr(E^2) = |E|_F^2 (E symmetric) */
    for (int i = 0; i < 9; i++) S[i] = 2 * p[4] * E[i];
    S[0] += p[3] * trE, S[4] += p[3] * trE, S[8] += p[3] * trE;
    if (W) *W = 0.5 * p[3] * trE * trE + p[4] * trE2;
}

/* Q = P J^-1 (J diagonal) */
static void prb_PJi(const double *p, const double *P, double *Q)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) Q[3 * i + j] = P[3 * i + j] / p[j];
}

static int prb_f(void *ctx, double t, const double *y, double *xi, lf_error *err)
{
    (void)t;
    const double *p = ((builtin_ctx *)ctx)->p, *F = y, *P = y + 9;
    double S[9], Q[9], Fi[9], FiT[9], T[9], U[9];
    if (lf_m3_inverse(F, Fi) != LF_OK) return lf_error_set(err, LF_EDOMAIN, "pseudo_rigid_svk: F is singular");
    lf_m3_transpose(Fi, FiT);
    prb_S(p, F, S, NULL);
    prb_PJi(p, P, Q);
    lf_m3_mul(Q, Fi, xi);   /* A = P J^-1 F^-1 */
    lf_m3_mul(F, S, T);     /* F S */
    lf_m3_mult(T, F, T);    /* F S F^T */
    lf_m3_tmul(Q, P, U);    /* (P J^-1)^T P = J^-1 P^T P */
    lf_m3_mul(FiT, U, U);   /* F^-T J^-1 P^T P */
    lf_m3_mult(U, F, U);    /* ... F^T */
    lf_m3_sub(U, T, xi + 9);
    return LF_OK;
}

static int prb_H(void *ctx, const double *y, double *H, lf_error *err)
{
    (void)err;
    const double *p = ((builtin_ctx *)ctx)->p;
    double S[9], Q[9], W, K = 0;
    prb_S(p, y, S, &W);
    prb_PJi(p, y + 9, Q);
    for (int i = 0; i < 9; i++) K += Q[i] * y[9 + i]; /* tr(P J^-1 P^T) */
    *H = 0.5 * K + W;
    return LF_OK;
}

static int prb_dH(void *ctx, const double *y, double *g, lf_error *err)
{
    const double *p = ((builtin_ctx *)ctx)->p, *F = y, *P = y + 9;
    double S[9], Q[9], Fi[9], T[9];
    if (lf_m3_inverse(F, Fi) != LF_OK) return lf_error_set(err, LF_EDOMAIN, "pseudo_rigid_svk: F is singular");
    prb_S(p, F, S, NULL);
    prb_PJi(p, P, Q);
    lf_m3_mul(F, S, g);
    lf_m3_mult(g, F, g);    /* F S F^T */
    lf_m3_mult(P, Q, T);    /* P (P J^-1)^T = P J^-1 P^T */
    lf_m3_sub(g, T, g);
    lf_m3_mul(Q, Fi, g + 9); /* P J^-1 F^-1 */
    return LF_OK;
}

/* w(a, b) = (b, -a + b^T m - m b^T), m = P F^T */
static int prb_skew(void *ctx, const double *y, const double *a, double *out, lf_error *err)
{
    (void)ctx; (void)err;
    double m[9], t1[9], t2[9], r[18];
    lf_m3_mult(y + 9, y, m);
    lf_m3_tmul(a + 9, m, t1); /* b^T m */
    lf_m3_mult(m, a + 9, t2); /* m b^T */
    for (int i = 0; i < 9; i++) {
        r[i] = a[9 + i];
        r[9 + i] = -a[i] + t1[i] - t2[i];
    }
    memcpy(out, r, sizeof r);
    return LF_OK;
}

/* ---------------------------------------------------------------- TS^2 gradient flow */
/* xi = (a, b) = (D q x q, w x q); along the action (alpha, beta): dq = alpha x q,
 * dw = alpha x w + beta x q, da = D dq x q + D q x dq, db = dw x q + w x dq. */
static int ts2gf_f(void *ctx, double t, const double *y, double *xi, lf_error *err)
{
    (void)t; (void)err;
    const double *D = ((builtin_ctx *)ctx)->p;
    double Dq[3];
    lf_v3_mul(D, y, Dq);
    lf_v3_cross(Dq, y, xi);
    lf_v3_cross(y + 3, y, xi + 3);
    return LF_OK;
}

static int ts2gf_jac(void *ctx, double t, const double *y, double *J, lf_error *err)
{
    (void)t; (void)err;
    const double *D = ((builtin_ctx *)ctx)->p, *q = y, *w = y + 3;
    double Dq[3];
    lf_v3_mul(D, q, Dq);
    for (int j = 0; j < 6; j++) {
        double al[3] = {0, 0, 0}, be[3] = {0, 0, 0}, dq[3], dw[3], c[3], Ddq[3], a1[3], a2[3], b1[3], b2[3];
        if (j < 3) al[j] = 1;
        else be[j - 3] = 1;
        lf_v3_cross(al, q, dq);
        lf_v3_cross(al, w, dw);
        lf_v3_cross(be, q, c);
        lf_v3_add(dw, c, dw);
        lf_v3_mul(D, dq, Ddq);
        lf_v3_cross(Ddq, q, a1);
        lf_v3_cross(Dq, dq, a2);
        lf_v3_cross(dw, q, b1);
        lf_v3_cross(w, dq, b2);
        for (int i = 0; i < 3; i++) {
            J[6 * i + j] = a1[i] + a2[i];
            J[6 * (i + 3) + j] = b1[i] + b2[i];
        }
    }
    return LF_OK;
}

static int ts2gf_energy(void *ctx, const double *y, double *E, lf_error *err)
{
    (void)err;
    const double *D = ((builtin_ctx *)ctx)->p;
    *E = 0.5 * (D[0] * y[0] * y[0] + D[1] * y[1] * y[1] + D[2] * y[2] * y[2]) + 0.5 * lf_v3_dot(y + 3, y + 3);
    return LF_OK;
}

/* ---------------------------------------------------------------- the table */
typedef struct {
    const char *name;
    lf_factor_kind factor;
    int nparams;
    lf_lie_ode_param params[3];
    lf_lie_ode_fn f;
    lf_lie_ode_jacobian_fn jacobian;
    lf_lie_ode_energy_fn energy;
    lf_lie_ode_energy_fn H;
    lf_lie_ode_dH_fn dH;
    lf_lie_ode_skew_fn skew;
    int right_only; /* needs the right trivialization */
} builtin;

static const builtin builtins[] = {
    {"s2_gradient_flow", LF_S2, 1, {{"D", 3}}, s2gf_f, s2gf_jac, s2gf_energy, NULL, NULL, NULL, 0},
    {"gl3_linear", LF_GL3, 2, {{"A0", 9}, {"A1", 9}}, gl3lin_f, gl3lin_jac, NULL, NULL, NULL, NULL, 0},
    {"free_rigid_quat", LF_S3, 2, {{"J", 3}, {"m0", 3}}, frq_f, NULL, frq_energy, frq_energy, frq_dH, NULL, 0},
    {"rigid_body_s2", LF_S2, 1, {{"I", 3}}, rbs2_f, rbs2_jac, rbs2_H, rbs2_H, rbs2_dH, rbs2_skew, 0},
    {"pseudo_rigid_svk", LF_TGL3, 3, {{"J", 3}, {"lambda", 1}, {"mu", 1}}, prb_f, NULL, prb_H, prb_H, prb_dH, prb_skew, 1},
    {"ts2_gradient_flow", LF_TS2, 1, {{"D", 3}}, ts2gf_f, ts2gf_jac, ts2gf_energy, NULL, NULL, NULL, 0},
};
#define NBUILTIN ((int)(sizeof builtins / sizeof builtins[0]))

static const char *const builtin_names[] = {"s2_gradient_flow", "gl3_linear", "free_rigid_quat", "rigid_body_s2",
                                            "pseudo_rigid_svk", "ts2_gradient_flow", NULL};

const char *const *lf_lie_ode_builtin_names(void) { return builtin_names; }

static const builtin *find(const char *name)
{
    for (int i = 0; name && i < NBUILTIN; i++)
        if (strcmp(builtins[i].name, name) == 0) return &builtins[i];
    return NULL;
}

const lf_lie_ode_param *lf_lie_ode_builtin_params(const char *name, int *nparams)
{
    const builtin *b = find(name);
    if (!b) return NULL;
    *nparams = b->nparams;
    return b->params;
}

int lf_lie_ode_builtin_def(const char *name, const lf_manifold *M, const double *params, lf_lie_ode_def *def,
                           lf_error *err)
{
    const builtin *b = find(name);
    if (!b)
        return lf_error_set(err, LF_EINVAL, "unknown built-in vector field '%s' (known: s2_gradient_flow, gl3_linear, "
                                            "free_rigid_quat, rigid_body_s2, pseudo_rigid_svk, ts2_gradient_flow)",
                            name ? name : "(null)");
    if (lf_manifold_nfactors(M) != 1 || lf_manifold_factor(M, 0)->kind != b->factor)
        return lf_error_set(err, LF_EINVAL, "built-in vector field '%s' acts on the factors {\"%s\"}", name,
                            lf_factor_kind_name(b->factor));
    if (b->right_only && lf_manifold_trivialization(M) != LF_RIGHT_TRIVIALIZED)
        return lf_error_set(err, LF_EINVAL, "built-in vector field '%s' is right-trivialized (y' = xi y)", name);
    int n = 0;
    for (int i = 0; i < b->nparams; i++) n += b->params[i].size;
    for (int i = 0; i < n; i++)
        if (!isfinite(params[i]))
            return lf_error_set(err, LF_EINVAL, "built-in vector field '%s': parameter value %d is not finite", name, i + 1);
    if (b->f == frq_f || b->f == rbs2_f || b->f == prb_f)
        for (int i = 0; i < 3; i++)
            if (!(params[i] > 0))
                return lf_error_set(err, LF_EINVAL, "%s: inertia %s[%d] = %g must be positive", name, b->params[0].name,
                                    i + 1, params[i]);
    builtin_ctx *c = calloc(1, sizeof *c);
    if (!c) return lf_error_set(err, LF_ENOMEM, "out of memory");
    memcpy(c->p, params, (size_t)n * sizeof(double));
    c->triv = lf_manifold_trivialization(M);
    *def = (lf_lie_ode_def){name, b->f, b->jacobian, b->energy, c, free, b->H, b->dH, b->skew};
    return LF_OK;
}

lf_system *lf_lie_ode_builtin(const char *name, const lf_manifold *M, const double *y0, const double *params,
                              lf_error *err)
{
    lf_lie_ode_def def;
    if (lf_lie_ode_builtin_def(name, M, params, &def, err) != LF_OK) return NULL;
    return lf_lie_ode_new(M, y0, &def, err);
}
