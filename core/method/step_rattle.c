/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — RATTLE (Andersen 1983; Leimkuhler & Reich, Simulating Hamiltonian Dynamics, §7.2;
 * Ortolan's thesis (7.4)) for the constrained form (system.h): n points x_i in R^3 with
 * |x_i|^2 = 1, mass M (x) I_3 (W = M^{-1}), potential V. With c = h^2/2 and the constraint
 * gradients x_i (constraints g_i = (|x_i|^2 - 1)/2; the factor 1/2 only rescales the multipliers):
 *   vt_i  = v_i - h/2 sum_j W_ij dV/dx_j(x),        a_i = x_i + h vt_i
 *   x'_i  = a_i - c sum_j W_ij lambda_j x_j,         |x'_i|^2 = 1          (7.4a-c)
 *   vt'_i = (x'_i - x_i)/h - h/2 sum_j W_ij dV/dx_j(x')
 *   v'_i  = vt'_i - h/2 sum_j W_ij mu_j x'_j,        x'_i . v'_i = 0       (7.4d-e)
 * The position multipliers lambda solve n nonlinear equations: Newton from lambda = 0 with
 * J_ik = -2 c W_ik (x'_i . x_k) (LU), until max_i ||x'_i|^2 - 1| <= max(newton_tol/10, 4e-16);
 * for diagonal M each sphere has the closed form of the smaller root,
 *   c W_ii lambda_i = (|a_i|^2 - 1) / ((a_i . x_i) + sqrt(D_i)),  D_i = (a_i . x_i)^2 - |x_i|^2 (|a_i|^2 - 1),
 * and no real multiplier exists when D_i < 0 (h |vt_i x x_i| > 1 on the unit sphere: the step is too
 * large; LF_ENOCONV naming the sphere). The velocity multipliers solve the linear SPD system
 * A mu = (2/h)(x'_i . vt'_i), A_ij = W_ij (x'_i . x'_j) (Cholesky; diagonal M: a projection).
 * The thesis's (7.4) calls (7.4c) and (7.4d) the constraints; they are (7.4c) and (7.4e).
 * The system's state (spheres: q, omega) is read and written through the constrained view
 * (x = q, v = omega x q; omega = x x v); the exact velocity v is kept in the stepper's cache between
 * steps, so the iterates are RATTLE's in R^{3n}. After each step the residuals
 * max_i ||x'_i|^2 - 1| and max_i |x'_i . v'_i| are recorded in the statistics (their maxima).
 * RATTLE is symplectic and symmetric (Leimkuhler & Reich, Thm. 7.1; Hairer, Lubich & Wanner
 * VII.1) and conserves the angular momentum about an axis when V is invariant about it. */
#include <math.h>
#include <string.h>

#include "base/linalg.h"
#include "base/dense.h"
#include "method/method_internal.h"

/* work: x (3n) | g (3n) | a (3n) | xn (3n) | vt (3n) | lam (n) | F (n) | J (n n, coupled M only) */
static size_t rattle_work(const lf_stepper *st)
{
    const lf_form_constrained *c = lf_system_constrained(st->sys);
    const size_t n = c ? (size_t)c->n : 0;
    return 15 * n + 2 * n + (c && !c->diagonal ? n * n : 0);
}

static size_t rattle_cache(const lf_stepper *st)
{
    const lf_form_constrained *c = lf_system_constrained(st->sys);
    return c ? 3 * (size_t)c->n : 0;
}

static int gradient(lf_stepper *st, const lf_form_constrained *c, const double *x, double *g)
{
    st->stats.f_evals++;
    return c->potential(st->sys, x, NULL, g, &st->err);
}

/* out_i = base_i + f sum_j W_ij g_j (O(n) for diagonal W) */
static void kick(const lf_form_constrained *c, const double *base, double f, const double *g, double *out)
{
    const int n = c->n;
    const double *W = c->W;
    for (int i = 0; i < n; i++) {
        if (c->diagonal) {
            lf_v3_axpy(base + 3 * i, f * W[(size_t)i * n + i], g + 3 * i, out + 3 * i);
            continue;
        }
        double s[3] = {base[3 * i], base[3 * i + 1], base[3 * i + 2]};
        for (int j = 0; j < n; j++) lf_v3_axpy(s, f * W[(size_t)i * n + j], g + 3 * j, s);
        memcpy(out + 3 * i, s, sizeof s);
    }
}

/* x'(lambda) = a - c_ sum_j W_ij lambda_j x_j */
static void positions(int n, const double *W, double c_, const double *a, const double *x, const double *lam, double *xn)
{
    for (int i = 0; i < n; i++) {
        double p[3] = {a[3 * i], a[3 * i + 1], a[3 * i + 2]};
        for (int j = 0; j < n; j++) lf_v3_axpy(p, -c_ * W[(size_t)i * n + j] * lam[j], x + 3 * j, p);
        memcpy(xn + 3 * i, p, sizeof p);
    }
}

static int position_multipliers(lf_stepper *st, const lf_form_constrained *c, double h, const double *x, const double *a,
                                double *xn, double *lam, double *F, double *J)
{
    const int n = c->n;
    const double *W = c->W, c_ = 0.5 * h * h;
    if (c->diagonal) {
        for (int i = 0; i < n; i++) {
            const double *xi = x + 3 * i, *ai = a + 3 * i;
            const double ax = lf_v3_dot(ai, xi), a2 = lf_v3_dot(ai, ai), x2 = lf_v3_dot(xi, xi);
            const double D = ax * ax - x2 * (a2 - 1);
            if (!(D >= 0) || !(ax + sqrt(D) > 0)) {
                double cr[3];
                lf_v3_cross(ai, xi, cr);
                return lf_error_set(&st->err, LF_ENOCONV, "no real position multiplier for sphere %d: the unconstrained "
                                    "step leaves the sphere's reach (|a x q| = %.4g > 1); use a smaller h", i + 1, lf_v3_norm(cr));
            }
            const double mu = (a2 - 1) / (ax + sqrt(D)); /* c W_ii lambda_i */
            lam[i] = mu / (c_ * W[(size_t)i * n + i]);
            lf_v3_axpy(ai, -mu, xi, xn + 3 * i);
        }
        return LF_OK;
    }
    const double ftol = fmax(0.1 * st->opts.newton_tol, 4e-16);
    memset(lam, 0, (size_t)n * sizeof(double));
    for (int it = 0;; it++) {
        positions(n, W, c_, a, x, lam, xn);
        double res = 0;
        for (int i = 0; i < n; i++) {
            F[i] = lf_v3_dot(xn + 3 * i, xn + 3 * i) - 1;
            res = fmax(res, fabs(F[i]));
            if (isnan(F[i])) res = NAN;
        }
        if (res <= ftol) {
            st->stats.newton_iters += it;
            return LF_OK;
        }
        if (it >= st->opts.max_iter || !isfinite(res)) {
            st->stats.newton_iters += it;
            return lf_error_set(&st->err, LF_ENOCONV, "newton on the position constraints (7.4c) did not converge in %d "
                                "iterations (max ||q_i|^2 - 1| = %.3g): h may be too large for a real multiplier", it, res);
        }
        for (int i = 0; i < n; i++)
            for (int k = 0; k < n; k++) J[(size_t)i * n + k] = -2 * c_ * W[(size_t)i * n + k] * lf_v3_dot(xn + 3 * i, x + 3 * k);
        if (lf_lu_factor(n, J, st->iwork) != LF_OK)
            return lf_error_set(&st->err, LF_EDOMAIN, "singular Newton Jacobian in (7.4c) at iteration %d", it + 1);
        for (int i = 0; i < n; i++) F[i] = -F[i];
        lf_lu_solve(n, J, st->iwork, F);
        for (int i = 0; i < n; i++) lam[i] += F[i];
    }
}

static int rattle_step(lf_stepper *st, double h)
{
    const lf_form_constrained *c = lf_system_constrained(st->sys);
    const int n = c->n;
    const double *W = c->W;
    double *v = st->cache, *x = st->work, *g = x + 3 * n, *a = g + 3 * n, *xn = a + 3 * n, *vt = xn + 3 * n;
    double *lam = vt + 3 * n, *F = lam + n, *J = F + n;
    c->to_cartesian(st->sys, st->y, x, vt);
    if (!st->cache_valid) memcpy(v, vt, 3 * (size_t)n * sizeof(double)); /* else: the exact v of the last step */
    int rc = gradient(st, c, x, g);
    if (rc != LF_OK) return rc;
    kick(c, v, -0.5 * h, g, a); /* half kick without constraint force, then the unconstrained drift */
    for (int i = 0; i < 3 * n; i++) a[i] = x[i] + h * a[i];
    rc = position_multipliers(st, c, h, x, a, xn, lam, F, J);
    if (rc != LF_OK) return rc;
    rc = gradient(st, c, xn, g);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < 3 * n; i++) vt[i] = (xn[i] - x[i]) / h;
    kick(c, vt, -0.5 * h, g, vt);
    /* velocity multipliers: (h/2) sum_j W_ij (x'_i . x'_j) mu_j = x'_i . vt'_i */
    if (c->diagonal) {
        for (int i = 0; i < n; i++) {
            const double *xi = xn + 3 * i;
            lf_v3_axpy(vt + 3 * i, -lf_v3_dot(xi, vt + 3 * i) / lf_v3_dot(xi, xi), xi, v + 3 * i);
        }
    } else {
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) J[(size_t)i * n + j] = W[(size_t)i * n + j] * lf_v3_dot(xn + 3 * i, xn + 3 * j);
            lam[i] = lf_v3_dot(xn + 3 * i, vt + 3 * i);
        }
        double piv = 0;
        int k = lf_cholesky_factor(n, J, &piv);
        if (k)
            return lf_error_set(&st->err, LF_EDOMAIN, "velocity constraints (7.4e): W o Gram(q') not positive definite "
                                "(pivot %d = %g)", k, piv);
        lf_cholesky_solve(n, J, lam); /* lam = (h/2) mu */
        for (int i = 0; i < n; i++)
            for (int d = 0; d < 3; d++) {
                double s = vt[3 * i + d];
                for (int j = 0; j < n; j++) s -= W[(size_t)i * n + j] * lam[j] * xn[3 * j + d];
                v[3 * i + d] = s;
            }
    }
    double rp = 0, rv = 0;
    for (int i = 0; i < n; i++) {
        rp = fmax(rp, fabs(lf_v3_dot(xn + 3 * i, xn + 3 * i) - 1));
        rv = fmax(rv, fabs(lf_v3_dot(xn + 3 * i, v + 3 * i)));
    }
    st->stats.constraint_position = fmax(st->stats.constraint_position, rp);
    st->stats.constraint_velocity = fmax(st->stats.constraint_velocity, rv);
    c->from_cartesian(st->sys, xn, v, st->y);
    st->cache_set = 1;
    return LF_OK;
}

const lf_method_class lf_class_rattle = {.work_doubles = rattle_work, .cache_doubles = rattle_cache,
                                         .step = rattle_step};
