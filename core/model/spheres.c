/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — systems on (S^2)^n lifted to SO(3) (spheres.h), after Ortolan's thesis, Part II
 * (eqs. (6.1)-(6.11), §7.1, §7.2, App. A), with the examples' potentials of §7.2.1-7.2.3.
 *
 * The angular acceleration alpha (thesis (6.5b)).
 *   (6.5b):  M_ii alpha_i = sum_{j != i} M_ij [ q_i x (q_j x alpha_j) + (omega_j . omega_j) q_i x q_j ]
 *                           - q_i x g_i,                 g_i = dV/dq_i,
 * i.e. the 3n x 3n system Mbar alpha = b with Mbar_ii = M_ii I, Mbar_ij = -M_ij hat(q_i) hat(q_j)
 * (thesis §7.2.2 and App. A.2 for n = 2, whose block inverse needs two corrections: the middle
 * factor of det Mbar is M11 M22 - M12^2 (q1.q2)^2, and the lower-right block of Mbar^{-1} is
 * (M22 I - M12^2/M11 q2^ q1^ q1^ q2^)^{-1}). We solve the same equations in n x n form:
 * derivation. On the tangent bundle the Euler-Lagrange equations in R^{3n} with multipliers are
 *     sum_j M_ij qddot_j = -g_i + lambda_i q_i,      q_i . qddot_i = -|qdot_i|^2,            (*)
 * (the second from d^2/dt^2 |q_i|^2 = 0). Taking q_i x (*) removes lambda_i and gives (6.5b) with
 * qddot_j = alpha_j x q_j - |omega_j|^2 q_j (omega_j . q_j = 0, q_j . alpha_j = 0). Conversely,
 * with W = M^{-1}, qddot_i = sum_j W_ij (lambda_j q_j - g_j), and the constraint rows give
 *     A lambda = r,    A_ij = W_ij (q_i . q_j),    r_i = q_i . sum_j W_ij g_j - s_i,
 * with the centripetal terms s_i = |qdot_i|^2; then alpha_i = q_i x qddot_i (= omega_i' on TS^2).
 * A is the Schur (entrywise) product of the SPD W and the PSD Gram matrix of the unit q_i with unit
 * diagonal, so lambda_min(W) <= eig(A) <= lambda_max(W) (Horn & Johnson, Thm. 5.3.4): Cholesky
 * always succeeds and cond(A) <= cond(M), even for (nearly) parallel q_i. alpha_i = q_i x a_i is
 * orthogonal to q_i by construction. Off TS^2 we take s_i = omega_i . omega_i, the thesis's (6.5b)
 * read literally; then the n x n form, Mbar alpha = b and the tangent 2n x 2n form coincide for
 * every (q, omega) (tests/c/test_spheres.c checks alpha against a dense solve of Mbar alpha = b and
 * against the Cartesian KKT system of (*) with Lagrange multipliers), and q_i . omega_i is an
 * exact first integral: d/dt (q_i . omega_i) = (omega_i x q_i) . omega_i + q_i . alpha_i = 0.
 * alpha is affine in s: alpha = alphaV + L s, L_ik = -q_i x sum_j W_ij (A^{-1})_jk q_j (used by the
 * Newton solve of eln_spatial's (7.1d)). Diagonal M decouples: alpha_i = -(q_i x g_i)/M_ii.
 *
 * Acting on q or on the lift R. The thesis integrates R_i' = hat(omega_i) R_i with q_i = R_i q_i(0)
 * (6.6)-(6.7). Every quantity a Lie-group step computes depends on R only through q = R q(0), which
 * is equivariant (exp(u) R q(0) = exp(u) q), so acting on q directly (the s2 factor,
 * q <- exp(hat u) q) performs the same arithmetic up to how exp(u) is applied: the iterates are the
 * same in exact arithmetic (R(0) = I), which test_spheres.c measures to rounding. We implement the
 * s2 form: 6n numbers per state and no orthogonality drift of R.
 *
 * The dipole pair sum runs over i < j with the pair geometry (kappa/|r|^3 and e = r/|r|) taken from
 * a table indexed by the grid offset (rows x (2 cols - 1) entries): O(n^2) flops, O(n) memory. */
#include "model/spheres.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/linalg.h"
#include "base/dense.h"
#include "model/system_internal.h"

enum { POT_FREE = 0, POT_LINEAR, POT_DIPOLES, POT_CALLBACK };

typedef struct {
    int n;
    double *M, *W;      /* n x n each */
    int diagonal;
    double axis[3];
    int pot;
    const char *pot_name;
    double *lin;        /* POT_LINEAR: V = sum_i lin_i . q_i, gradient lin (3n) */
    int rows, cols;     /* POT_DIPOLES */
    double *table;      /* 3 per grid offset: kappa / |r|^3, e_x, e_y */
    lf_spheres_def def; /* POT_CALLBACK */
    lf_form_second_order second_order; /* the forms' records (system.h) */
    lf_form_constrained cons;
} spheres_ctx;

static const lf_system_class spheres_class;

static const spheres_ctx *ctx_of(const lf_system *s)
{
    return (s && s->cls == &spheres_class) ? lf_system_ctx(s) : NULL;
}

const lf_spheres_def *lf_spheres_definition(const lf_system *s)
{
    const spheres_ctx *c = ctx_of(s);
    return c && c->pot == POT_CALLBACK ? &c->def : NULL;
}

/* ------------------------------------------------------------------------------------ potentials */

static void dipoles_eval(const spheres_ctx *c, const double *q, double *Vout, double *g)
{
    const int n = c->n, cols = c->cols, w = 2 * cols - 1;
    double V = 0;
    if (g) memset(g, 0, 3 * (size_t)n * sizeof(double));
    for (int i = 0; i < n; i++) {
        const double *qi = q + 3 * i;
        const int ci = i % cols;
        double gi[3] = {0, 0, 0};
        int dy = 0, dx = 1; /* offset of pair (i, j) on the grid, j = i + 1 first */
        if (ci + dx >= cols) {
            dy = 1;
            dx = -ci;
        }
        for (int j = i + 1; j < n; j++) {
            const double *T = c->table + 3 * ((size_t)dy * w + (size_t)(dx + cols - 1));
            const double k = T[0], ex = T[1], ey = T[2], *qj = q + 3 * j;
            const double ai = qi[0] * ex + qi[1] * ey, aj = qj[0] * ex + qj[1] * ey;
            if (Vout) V += k * (lf_v3_dot(qi, qj) - 3 * ai * aj);
            if (g) {
                double *gj = g + 3 * j;
                gi[0] += k * (qj[0] - 3 * aj * ex);
                gi[1] += k * (qj[1] - 3 * aj * ey);
                gi[2] += k * qj[2];
                gj[0] += k * (qi[0] - 3 * ai * ex);
                gj[1] += k * (qi[1] - 3 * ai * ey);
                gj[2] += k * qi[2];
            }
            if (++dx + ci >= cols) { /* next grid row */
                dy++;
                dx = -ci;
            }
        }
        if (g) lf_v3_add(g + 3 * i, gi, g + 3 * i);
    }
    if (Vout) *Vout = V;
}

static int potential(const lf_system *s, const spheres_ctx *c, const double *q, double *V, double *g, lf_error *err)
{
    const int n = c->n;
    switch (c->pot) {
    case POT_FREE:
        if (V) *V = 0;
        if (g) memset(g, 0, 3 * (size_t)n * sizeof(double));
        return LF_OK;
    case POT_LINEAR:
        if (V) {
            double v = 0;
            for (int i = 0; i < n; i++) v += lf_v3_dot(c->lin + 3 * i, q + 3 * i);
            *V = v;
        }
        if (g) memcpy(g, c->lin, 3 * (size_t)n * sizeof(double));
        return LF_OK;
    case POT_DIPOLES: dipoles_eval(c, q, V, g); return LF_OK;
    default: break;
    }
    int rc = c->def.potential(c->def.ctx, n, q, V, g, err);
    if (rc != LF_OK) return rc;
    if (V && !isfinite(*V))
        return lf_error_set(err, LF_EDOMAIN, "%s: the potential %s is not finite (V = %g)", lf_system_kind(s), c->pot_name, *V);
    for (int i = 0; g && i < 3 * n; i++)
        if (!isfinite(g[i]))
            return lf_error_set(err, LF_EDOMAIN, "%s: the gradient of the potential %s is not finite (dV/dq_%d component %d = %g)",
                                lf_system_kind(s), c->pot_name, i / 3 + 1, i % 3 + 1, g[i]);
    return LF_OK;
}

/* ------------------------------------------------------------------------------------ alpha */

/* alpha_i = -(q_i x g_i) / M_ii (alpha may alias g). */
static void alpha_diag(const spheres_ctx *c, const double *q, const double *g, double *alpha)
{
    const int n = c->n;
    for (int i = 0; i < n; i++) {
        double a[3];
        const double m = c->M[(size_t)i * n + i];
        lf_v3_cross(q + 3 * i, g + 3 * i, a);
        alpha[3 * i] = -a[0] / m;
        alpha[3 * i + 1] = -a[1] / m;
        alpha[3 * i + 2] = -a[2] / m;
    }
}

/* The constraint-force form (header): g (3n, the gradient) is read, alpha (3n) written (alpha may
 * alias g); t (3n) scratch not aliasing them; A (n x n) is left holding the Cholesky factor of A,
 * lam (n) the multipliers. w: the velocities for s_i = |w_i|^2, or NULL for s = 0. */
static int alpha_coupled(const lf_system *s, const spheres_ctx *c, const double *q, const double *w, const double *g,
                         double *t, double *alpha, double *A, double *lam, lf_error *err)
{
    const int n = c->n;
    const double *W = c->W;
    for (int i = 0; i < n; i++) {
        const double *qi = q + 3 * i;
        double Wg[3] = {0, 0, 0};
        for (int j = 0; j < n; j++) {
            const double wij = W[(size_t)i * n + j];
            A[(size_t)i * n + j] = wij * lf_v3_dot(qi, q + 3 * j);
            Wg[0] += wij * g[3 * j];
            Wg[1] += wij * g[3 * j + 1];
            Wg[2] += wij * g[3 * j + 2];
        }
        lam[i] = lf_v3_dot(qi, Wg) - (w ? lf_v3_dot(w + 3 * i, w + 3 * i) : 0);
    }
    double piv = 0;
    int k = lf_cholesky_factor(n, A, &piv);
    if (k)
        return lf_error_set(err, LF_EDOMAIN, "%s: the constraint matrix W o Gram(q) is not positive definite (pivot %d = %g): "
                                             "is q_%d a unit vector?", lf_system_kind(s), k, piv, k);
    lf_cholesky_solve(n, A, lam);
    for (int j = 0; j < n; j++)
        for (int d = 0; d < 3; d++) t[3 * j + d] = lam[j] * q[3 * j + d] - g[3 * j + d];
    for (int i = 0; i < n; i++) { /* alpha_i = q_i x qddot_i, qddot_i = sum_j W_ij t_j */
        double a[3] = {0, 0, 0};
        for (int j = 0; j < n; j++) {
            const double wij = W[(size_t)i * n + j];
            a[0] += wij * t[3 * j];
            a[1] += wij * t[3 * j + 1];
            a[2] += wij * t[3 * j + 2];
        }
        lf_v3_cross(q + 3 * i, a, alpha + 3 * i);
    }
    return LF_OK;
}

/* alpha at (q, w) into ga, which holds the gradient on entry; t: 3n scratch or NULL. Scratch for
 * coupled M: on the stack up to LF_SPHERES_STACK_N spheres, else one heap block (spheres.h). */
static int alpha_inplace(const lf_system *s, const spheres_ctx *c, const double *q, const double *w, double *ga,
                         double *t, lf_error *err)
{
    if (c->diagonal) {
        alpha_diag(c, q, ga, ga);
        return LF_OK;
    }
    const int n = c->n;
    double stack[LF_SPHERES_STACK_N * LF_SPHERES_STACK_N + 4 * LF_SPHERES_STACK_N], *mem = stack;
    if (n > LF_SPHERES_STACK_N) {
        mem = malloc(((size_t)n * n + 4 * (size_t)n) * sizeof(double));
        if (!mem) return lf_error_set(err, LF_ENOMEM, "%s: out of memory (%d coupled spheres)", lf_system_kind(s), n);
    }
    double *A = mem, *lam = A + (size_t)n * n;
    int rc = alpha_coupled(s, c, q, w, ga, t ? t : lam + n, ga, A, lam, err);
    if (mem != stack) free(mem);
    return rc;
}

size_t lf_spheres_work_size(int n) { return (size_t)n * n + 8 * (size_t)n; }

int lf_spheres_alpha(const lf_system *s, const double *q, const double *omega, double *alpha, double *work, lf_error *err)
{
    const spheres_ctx *c = ctx_of(s);
    if (!c) return lf_error_set(err, LF_EINVAL, "lf_spheres_alpha: not a system on spheres");
    int rc = potential(s, c, q, NULL, alpha, err);
    if (rc != LF_OK) return rc;
    if (c->diagonal) {
        alpha_diag(c, q, alpha, alpha);
        return LF_OK;
    }
    const int n = c->n;
    double *t = work, *A = t + 3 * n, *lam = A + (size_t)n * n;
    return alpha_coupled(s, c, q, omega, alpha, t, alpha, A, lam, err);
}

int lf_spheres_alpha_affine(const lf_system *s, const double *q, double *alphaV, double *L, double *work, lf_error *err)
{
    const spheres_ctx *c = ctx_of(s);
    if (!c) return lf_error_set(err, LF_EINVAL, "lf_spheres_alpha_affine: not a system on spheres");
    const int n = c->n;
    int rc = potential(s, c, q, NULL, alphaV, err);
    if (rc != LF_OK) return rc;
    if (c->diagonal) {
        alpha_diag(c, q, alphaV, alphaV);
        if (L) memset(L, 0, 3 * (size_t)n * n * sizeof(double));
        return LF_OK;
    }
    double *t = work, *A = t + 3 * n, *lam = A + (size_t)n * n, *x = lam + n;
    rc = alpha_coupled(s, c, q, NULL, alphaV, t, alphaV, A, lam, err);
    if (rc != LF_OK || !L) return rc;
    const double *W = c->W;
    for (int k = 0; k < n; k++) { /* column k of A^{-1}, then L_ik = -q_i x sum_j W_ij x_j q_j */
        memset(x, 0, (size_t)n * sizeof(double));
        x[k] = 1;
        lf_cholesky_solve(n, A, x);
        for (int i = 0; i < n; i++) {
            double b[3] = {0, 0, 0}, cr[3];
            for (int j = 0; j < n; j++) {
                const double f = W[(size_t)i * n + j] * x[j];
                b[0] += f * q[3 * j];
                b[1] += f * q[3 * j + 1];
                b[2] += f * q[3 * j + 2];
            }
            lf_v3_cross(q + 3 * i, b, cr);
            for (int d = 0; d < 3; d++) L[(size_t)(3 * i + d) * n + k] = -cr[d];
        }
    }
    return LF_OK;
}

/* ------------------------------------------------------------------------------------ the class */

/* f = (omega, alpha): the gradient goes into alpha's slot, omega's slot is scratch until the end. */
static int sph_f(const lf_system *s, double t, const double *y, double *xi, lf_error *err)
{
    (void)t; /* autonomous */
    const spheres_ctx *c = lf_system_ctx(s);
    const int n = c->n;
    const double *q = y, *w = y + 3 * n;
    int rc = potential(s, c, q, NULL, xi + 3 * n, err);
    if (rc == LF_OK) rc = alpha_inplace(s, c, q, w, xi + 3 * n, xi, err);
    if (rc != LF_OK) return rc;
    memcpy(xi, w, 3 * (size_t)n * sizeof(double));
    return LF_OK;
}

static int sph_accel(const lf_system *s, double t, const double *y, double *a, lf_error *err)
{
    (void)t;
    const spheres_ctx *c = lf_system_ctx(s);
    const int n = c->n;
    int rc = potential(s, c, y, NULL, a, err);
    if (rc != LF_OK) return rc;
    return alpha_inplace(s, c, y, y + 3 * n, a, NULL, err);
}

/* qdot_i = w_i x q_i; kinetic energy 1/2 sum_ij M_ij qdot_i . qdot_j and p_i = sum_j M_ij qdot_j. */
static void momentum_i(const spheres_ctx *c, const double *q, const double *w, int i, double p[3])
{
    const int n = c->n;
    if (c->diagonal) {
        lf_v3_cross(w + 3 * i, q + 3 * i, p);
        lf_v3_scale(p, c->M[(size_t)i * n + i], p);
        return;
    }
    p[0] = p[1] = p[2] = 0;
    for (int j = 0; j < n; j++) {
        double v[3];
        lf_v3_cross(w + 3 * j, q + 3 * j, v);
        lf_v3_axpy(p, c->M[(size_t)i * n + j], v, p);
    }
}

static double kinetic(const spheres_ctx *c, const double *q, const double *w)
{
    double T = 0;
    for (int i = 0; i < c->n; i++) {
        double p[3], v[3];
        momentum_i(c, q, w, i, p);
        lf_v3_cross(w + 3 * i, q + 3 * i, v);
        T += lf_v3_dot(v, p);
    }
    return 0.5 * T;
}

static int sph_energy(const lf_system *s, const double *y, double *E, lf_error *err)
{
    const spheres_ctx *c = lf_system_ctx(s);
    double V;
    int rc = potential(s, c, y, &V, NULL, err);
    if (rc != LF_OK) return rc;
    *E = kinetic(c, y, y + 3 * c->n) + V;
    return LF_OK;
}

/* energy | norm_error | qdotw | angular_momentum (3) | axial_momentum */
static int sph_observe(const lf_system *s, double t, const double *y, double *out, lf_error *err)
{
    (void)t;
    const spheres_ctx *c = lf_system_ctx(s);
    const int n = c->n;
    const double *q = y, *w = y + 3 * n;
    int rc = sph_energy(s, y, out, err);
    if (rc != LF_OK) return rc;
    double ne = 0, qw = 0, Lm[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        double p[3], l[3];
        ne = fmax(ne, fabs(lf_v3_norm(q + 3 * i) - 1));
        qw = fmax(qw, fabs(lf_v3_dot(q + 3 * i, w + 3 * i)));
        momentum_i(c, q, w, i, p);
        lf_v3_cross(q + 3 * i, p, l);
        lf_v3_add(Lm, l, Lm);
    }
    out[1] = ne;
    out[2] = qw;
    memcpy(out + 3, Lm, sizeof Lm);
    out[6] = lf_v3_dot(Lm, c->axis);
    return LF_OK;
}

static void sph_destroy(void *p)
{
    spheres_ctx *c = p;
    if (!c) return;
    if (c->pot == POT_CALLBACK && c->def.destroy) c->def.destroy(c->def.ctx);
    free(c->M);
    free(c->W);
    free(c->lin);
    free(c->table);
    free(c);
}

static const lf_system_class spheres_class = {
    .kind = "spheres",
    .forms = LF_FORM_LIE_ODE, /* and second_order, constrained: the records */
    .f = sph_f,
    .energy = sph_energy,
    .observe = sph_observe,
    .destroy = sph_destroy,
};

/* ---- the second-order form's record: alpha affine in the centripetal terms (eln_spatial) */
static size_t so_affine_work(const lf_system *s) { return lf_spheres_work_size(lf_spheres_n(s)); }

static int so_accel_work(const lf_system *s, const double *y, double *a, double *work, lf_error *err)
{
    return lf_spheres_alpha(s, y, y + 3 * lf_spheres_n(s), a, work, err);
}

static int so_accel_affine(const lf_system *s, const double *y, double *aV, double *L, double *work, lf_error *err)
{
    return lf_spheres_alpha_affine(s, y, aV, L, work, err);
}

/* ---- the constrained view (RATTLE) */
static int cons_potential(const lf_system *s, const double *x, double *V, double *g, lf_error *err)
{
    return potential(s, lf_system_ctx(s), x, V, g, err);
}

static void cons_to(const lf_system *s, const double *y, double *x, double *v)
{
    const int n = ((const spheres_ctx *)lf_system_ctx(s))->n;
    memcpy(x, y, 3 * (size_t)n * sizeof(double));
    for (int i = 0; i < n; i++) lf_v3_cross(y + 3 * n + 3 * i, y + 3 * i, v + 3 * i);
}

static void cons_from(const lf_system *s, const double *x, const double *v, double *y)
{
    const int n = ((const spheres_ctx *)lf_system_ctx(s))->n;
    memmove(y, x, 3 * (size_t)n * sizeof(double));
    for (int i = 0; i < n; i++) lf_v3_cross(x + 3 * i, v + 3 * i, y + 3 * n + 3 * i);
}

/* ------------------------------------------------------------------------------------ construction */

static spheres_ctx *new_ctx(int n, lf_error *err)
{
    spheres_ctx *c = calloc(1, sizeof *c);
    if (c) {
        c->n = n;
        c->M = malloc((size_t)n * n * sizeof(double));
        c->W = malloc((size_t)n * n * sizeof(double));
        c->axis[2] = 1;
    }
    if (!c || !c->M || !c->W) {
        sph_destroy(c);
        lf_error_set(err, LF_ENOMEM, "spheres: out of memory (%d spheres)", n);
        return NULL;
    }
    return c;
}

/* Check M (finite, symmetric, positive definite) and set c->M, c->diagonal and W = M^{-1}. */
static int set_mass(spheres_ctx *c, const double *M, lf_error *err)
{
    const int n = c->n;
    if (!M) return lf_error_set(err, LF_EINVAL, "spheres: the coupling M is required");
    for (int i = 0; i < n * n; i++)
        if (!isfinite(M[i])) return lf_error_set(err, LF_EINVAL, "spheres: M[%d][%d] = %g is not finite", i / n + 1, i % n + 1, M[i]);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) {
            double a = M[(size_t)i * n + j], b = M[(size_t)j * n + i];
            if (fabs(a - b) > 1e-12 * fmax(fabs(a), fabs(b)))
                return lf_error_set(err, LF_EINVAL, "spheres: M is not symmetric: M[%d][%d] = %.17g, M[%d][%d] = %.17g",
                                    i + 1, j + 1, a, j + 1, i + 1, b);
        }
    c->diagonal = 1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double m = i == j ? M[(size_t)i * n + i] : 0.5 * (M[(size_t)i * n + j] + M[(size_t)j * n + i]);
            c->M[(size_t)i * n + j] = m;
            if (i != j && m != 0) c->diagonal = 0;
        }
    double *chol = malloc(((size_t)n * n + n) * sizeof(double));
    if (!chol) return lf_error_set(err, LF_ENOMEM, "spheres: out of memory (%d spheres)", n);
    memcpy(chol, c->M, (size_t)n * n * sizeof(double));
    double piv = 0;
    int k = lf_cholesky_factor(n, chol, &piv);
    if (k) {
        free(chol);
        if (n == 1) return lf_error_set(err, LF_EINVAL, "spheres: M = %g must be positive", M[0]);
        return lf_error_set(err, LF_EINVAL, "spheres: M is not positive definite (Cholesky pivot %d = %g)", k, piv);
    }
    for (int j = 0; j < n; j++) { /* W = M^{-1} column by column, then symmetrized */
        double *x = chol + (size_t)n * n;
        memset(x, 0, (size_t)n * sizeof(double));
        x[j] = 1;
        lf_cholesky_solve(n, chol, x);
        for (int i = 0; i < n; i++) c->W[(size_t)i * n + j] = x[i];
    }
    free(chol);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) {
            double m = 0.5 * (c->W[(size_t)i * n + j] + c->W[(size_t)j * n + i]);
            c->W[(size_t)i * n + j] = c->W[(size_t)j * n + i] = c->diagonal ? 0 : m;
        }
    if (c->diagonal)
        for (int i = 0; i < n; i++) c->W[(size_t)i * n + i] = 1 / c->M[(size_t)i * n + i];
    return LF_OK;
}

/* Check q0 (unit vectors) and omega0 (orthogonal to them; NULL: 0) into y0 (6n). */
static int initial_state(int n, const double *q0, const double *w0, double *y0, lf_error *err)
{
    if (!q0) return lf_error_set(err, LF_EINVAL, "spheres: the initial unit vectors q are required");
    for (int i = 0; i < n; i++) {
        const double *q = q0 + 3 * i, *w = w0 ? w0 + 3 * i : NULL;
        if (!lf_v3_isfinite(q) || (w && !lf_v3_isfinite(w)))
            return lf_error_set(err, LF_EINVAL, "spheres: q[%d] or omega[%d] is not finite", i + 1, i + 1);
        double d = lf_v3_norm(q) - 1;
        if (!(fabs(d) <= 1e-12))
            return lf_error_set(err, LF_EINVAL, "spheres: q[%d] = (%g, %g, %g) is not a unit vector: |q| - 1 = %.3g "
                                "(tolerance 1e-12)", i + 1, q[0], q[1], q[2], d);
        if (w) {
            double qw = lf_v3_dot(q, w), tol = 1e-12 * fmax(1, lf_v3_norm(w));
            if (!(fabs(qw) <= tol))
                return lf_error_set(err, LF_EINVAL, "spheres: omega[%d] is not orthogonal to q[%d]: q . omega = %.3g "
                                    "(tolerance %.1g); the angular velocity of a sphere is perpendicular to it (omega = "
                                    "q x qdot)", i + 1, i + 1, qw, tol);
        }
        memcpy(y0 + 3 * i, q, 3 * sizeof(double));
        if (w) memcpy(y0 + 3 * n + 3 * i, w, 3 * sizeof(double));
        else memset(y0 + 3 * n + 3 * i, 0, 3 * sizeof(double));
    }
    return LF_OK;
}

/* The manifold s2^n x (R^3)^n, right-trivialized. */
static lf_manifold *spheres_manifold(int n, lf_error *err)
{
    lf_factor_kind *kinds = malloc(2 * (size_t)n * sizeof *kinds);
    int *dims = malloc(2 * (size_t)n * sizeof *dims);
    lf_manifold *Mf = NULL;
    if (!kinds || !dims) lf_error_set(err, LF_ENOMEM, "spheres: out of memory (%d spheres)", n);
    else {
        for (int i = 0; i < n; i++) {
            kinds[i] = LF_S2;
            kinds[n + i] = LF_RM;
            dims[i] = 0;
            dims[n + i] = 3;
        }
        Mf = lf_manifold_new(2 * n, kinds, dims, LF_RIGHT_TRIVIALIZED, err);
    }
    free(kinds);
    free(dims);
    return Mf;
}

/* Check M, q0 and omega0 and build the system (its forms, fields and observables); takes c (and
 * destroys it on failure). */
static lf_system *finish(spheres_ctx *c, const double *M, const double *q0, const double *w0, lf_error *err)
{
    const int n = c->n;
    double *y0 = malloc(6 * (size_t)n * sizeof(double));
    lf_manifold *Mf = NULL;
    if (!y0) lf_error_set(err, LF_ENOMEM, "spheres: out of memory (%d spheres)", n);
    if (!y0 || set_mass(c, M, err) != LF_OK || initial_state(n, q0, w0, y0, err) != LF_OK ||
        !(Mf = spheres_manifold(n, err))) {
        sph_destroy(c);
        free(y0);
        return NULL;
    }
    c->second_order = (lf_form_second_order){n, sph_accel, c->diagonal, so_affine_work, so_accel_work, so_accel_affine};
    c->cons = (lf_form_constrained){n, c->W, c->diagonal, cons_potential, cons_to, cons_from};
    lf_system *sys = lf_system_create(&spheres_class, c, Mf, y0, err); /* owns c and Mf from here, also on failure */
    free(y0);
    if (!sys) return NULL;
    sys->second_order = &c->second_order;
    sys->constrained = &c->cons;
    lf_system_add_field(sys, "q", 0, n, 0, 0);
    lf_system_add_field(sys, "omega", n, n, 0, 1);
    lf_system_add_observable(sys, "energy", LF_OBS_SCALAR, 1, "energy");
    lf_system_add_observable(sys, "norm_error", LF_OBS_SCALAR, 1, "norm_error");
    lf_system_add_observable(sys, "qdotw", LF_OBS_SCALAR, 1, "qdotw");
    lf_system_add_observable(sys, "angular_momentum", LF_OBS_VEC3, 3, "L1,L2,L3");
    lf_system_add_observable(sys, "axial_momentum", LF_OBS_SCALAR, 1, "Lk");
    return sys;
}

static int check_n(int n, lf_error *err)
{
    if (n < 1 || n > 1000000)
        return lf_error_set(err, LF_EINVAL, "spheres: the number of spheres must be in 1..1000000, got %d", n);
    return LF_OK;
}

lf_system *lf_spheres_new(int n, const double *M, const lf_spheres_def *def, const double *q0, const double *omega0,
                          lf_error *err)
{
    if (check_n(n, err) != LF_OK || (def && !def->potential)) {
        if (def && !def->potential) lf_error_set(err, LF_EINVAL, "lf_spheres_new: the potential function is required");
        if (def && def->destroy) def->destroy(def->ctx);
        return NULL;
    }
    spheres_ctx *c = new_ctx(n, err);
    if (!c) {
        if (def && def->destroy) def->destroy(def->ctx);
        return NULL;
    }
    if (def) {
        c->pot = POT_CALLBACK;
        c->def = *def;
        c->pot_name = def->name ? def->name : "callback";
    } else {
        c->pot = POT_FREE;
        c->pot_name = "free";
    }
    return finish(c, M, q0, omega0, err);
}

static int check_pos(const char *fn, const char *what, double x, lf_error *err)
{
    if (!isfinite(x) || !(x > 0)) return lf_error_set(err, LF_EINVAL, "%s: %s = %g must be a finite positive number", fn, what, x);
    return LF_OK;
}

static int unit_up(const char *fn, const double *up, double k[3], lf_error *err)
{
    double u[3] = {0, 0, 1};
    if (up) memcpy(u, up, sizeof u);
    double nu = lf_v3_norm(u);
    if (!lf_v3_isfinite(u) || !(nu > 0)) return lf_error_set(err, LF_EINVAL, "%s: the direction 'up' must be a finite nonzero vector", fn);
    lf_v3_scale(u, 1 / nu, k);
    return LF_OK;
}

lf_system *lf_spheres_pendulum(double m, double l, double g, const double up[3], const double *q0,
                               const double *omega0, lf_error *err)
{
    const char *fn = "spheres.pendulum";
    double k[3];
    if (check_pos(fn, "m", m, err) || check_pos(fn, "l", l, err) || unit_up(fn, up, k, err)) return NULL;
    if (!isfinite(g)) {
        lf_error_set(err, LF_EINVAL, "%s: g = %g is not finite", fn, g);
        return NULL;
    }
    spheres_ctx *c = new_ctx(1, err);
    if (!c) return NULL;
    c->lin = malloc(3 * sizeof(double));
    if (!c->lin) {
        sph_destroy(c);
        lf_error_set(err, LF_ENOMEM, "%s: out of memory", fn);
        return NULL;
    }
    lf_v3_scale(k, m * g * l, c->lin); /* V = m g l up . q (thesis §7.2.1 with k = up) */
    memcpy(c->axis, k, sizeof k);
    c->pot = POT_LINEAR;
    c->pot_name = "pendulum";
    double M = m * l * l;
    return finish(c, &M, q0, omega0, err);
}

lf_system *lf_spheres_double_pendulum(double m1, double m2, double l1, double l2, double g, const double up[3],
                                      const double *q0, const double *omega0, lf_error *err)
{
    const char *fn = "spheres.double_pendulum";
    double k[3];
    if (check_pos(fn, "m1", m1, err) || check_pos(fn, "m2", m2, err) || check_pos(fn, "l1", l1, err) ||
        check_pos(fn, "l2", l2, err) || unit_up(fn, up, k, err))
        return NULL;
    if (!isfinite(g)) {
        lf_error_set(err, LF_EINVAL, "%s: g = %g is not finite", fn, g);
        return NULL;
    }
    spheres_ctx *c = new_ctx(2, err);
    if (!c) return NULL;
    c->lin = malloc(6 * sizeof(double));
    if (!c->lin) {
        sph_destroy(c);
        lf_error_set(err, LF_ENOMEM, "%s: out of memory", fn);
        return NULL;
    }
    /* heights l1 up.q1 and l1 up.q1 + l2 up.q2 (thesis §7.2.2 with k = -up) */
    lf_v3_scale(k, (m1 + m2) * g * l1, c->lin);
    lf_v3_scale(k, m2 * g * l2, c->lin + 3);
    memcpy(c->axis, k, sizeof k);
    c->pot = POT_LINEAR;
    c->pot_name = "double_pendulum";
    const double M[4] = {(m1 + m2) * l1 * l1, m2 * l1 * l2, m2 * l1 * l2, m2 * l2 * l2};
    return finish(c, M, q0, omega0, err);
}

lf_system *lf_spheres_dipoles(int rows, int cols, double spacing, double m, double l, double moment, const double *q0,
                              const double *omega0, lf_error *err)
{
    const char *fn = "spheres.dipoles";
    if (rows < 1 || cols < 1 || rows > 1000 || cols > 1000 || rows * cols < 2) {
        lf_error_set(err, LF_EINVAL, "%s: rows = %d and cols = %d must be in 1..1000 with at least 2 needles", fn, rows, cols);
        return NULL;
    }
    if (check_pos(fn, "spacing", spacing, err) || check_pos(fn, "m", m, err) || check_pos(fn, "l", l, err)) return NULL;
    if (!isfinite(moment)) {
        lf_error_set(err, LF_EINVAL, "%s: moment = %g is not finite", fn, moment);
        return NULL;
    }
    const int n = rows * cols, w = 2 * cols - 1;
    spheres_ctx *c = new_ctx(n, err);
    if (!c) return NULL;
    double *M = calloc((size_t)n * n, sizeof(double));
    c->table = malloc(3 * (size_t)rows * w * sizeof(double));
    if (!M || !c->table) {
        free(M);
        sph_destroy(c);
        lf_error_set(err, LF_ENOMEM, "%s: out of memory (%d needles)", fn, n);
        return NULL;
    }
    const double kappa = 1e-7 * moment * moment; /* (mu0 / 4 pi) nu_i nu_j, SI */
    for (int dy = 0; dy < rows; dy++)
        for (int dx = -(cols - 1); dx <= cols - 1; dx++) {
            double *T = c->table + 3 * ((size_t)dy * w + (size_t)(dx + cols - 1));
            double rx = spacing * dx, ry = spacing * dy, r = hypot(rx, ry);
            if (r == 0) T[0] = T[1] = T[2] = 0; /* the pair (i, i) is never used */
            else {
                T[0] = kappa / (r * r * r);
                T[1] = rx / r;
                T[2] = ry / r;
            }
        }
    for (int i = 0; i < n; i++) M[(size_t)i * n + i] = m * l * l / 12; /* a needle pinned at its middle */
    c->rows = rows;
    c->cols = cols;
    c->pot = POT_DIPOLES;
    c->pot_name = "dipoles";
    lf_system *s = finish(c, M, q0, omega0, err);
    free(M);
    return s;
}

/* ------------------------------------------------------------------------------------ accessors */

int lf_spheres_n(const lf_system *s) { return ctx_of(s) ? ctx_of(s)->n : 0; }
const double *lf_spheres_mass(const lf_system *s) { return ctx_of(s) ? ctx_of(s)->M : NULL; }
int lf_spheres_diagonal(const lf_system *s) { return ctx_of(s) ? ctx_of(s)->diagonal : 0; }
const char *lf_spheres_potential_name(const lf_system *s) { return ctx_of(s) ? ctx_of(s)->pot_name : ""; }
const double *lf_spheres_axis(const lf_system *s) { return ctx_of(s) ? ctx_of(s)->axis : NULL; }

int lf_spheres_set_axis(lf_system *s, const double k[3], lf_error *err)
{
    spheres_ctx *c = s && s->cls == &spheres_class ? s->ctx : NULL;
    if (!c) return lf_error_set(err, LF_EINVAL, "lf_spheres_set_axis: not a system on spheres");
    double nk = k ? lf_v3_norm(k) : 0;
    if (!k || !lf_v3_isfinite(k) || !(nk > 0)) return lf_error_set(err, LF_EINVAL, "spheres: the axis must be a finite nonzero vector");
    lf_v3_scale(k, 1 / nk, c->axis);
    return LF_OK;
}

int lf_spheres_potential(const lf_system *s, const double *q, double *V, double *g, lf_error *err)
{
    const spheres_ctx *c = ctx_of(s);
    if (!c) return lf_error_set(err, LF_EINVAL, "lf_spheres_potential: not a system on spheres");
    return potential(s, c, q, V, g, err);
}

void lf_spheres_omega_from_qdot(int n, const double *q, const double *qdot, double *omega)
{
    for (int i = 0; i < n; i++) lf_v3_cross(q + 3 * i, qdot + 3 * i, omega + 3 * i);
}
