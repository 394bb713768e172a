/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow (internal) — Newton on one body's 3-vector equation for the methods whose implicit
 * equation is small and not in the torque (eln, vlv, lgvi, prk). Same stopping rule and messages as
 * lf_newton (newton.h), analytic Jacobian, no workspace; static inline so that the residual
 * callback inlines on the hot path. Also the gyroscopic residual that eln and prk share, and the
 * phases of a step with lanes (lanes_internal.h) that these methods share. */
#ifndef LF_NEWTON3_H
#define LF_NEWTON3_H

#include <float.h>
#include <math.h>

#include "base/lanes_internal.h"
#include "base/linalg.h"
#include "method/method_internal.h"

/* max-norm; NaN if any component is NaN (so a NaN residual stops Newton) */
static inline double lf_maxabs3(const double *v)
{
    double a = fabs(v[0]), b = fabs(v[1]), c = fabs(v[2]);
    if (isnan(a + b + c)) return NAN;
    return a > b ? (a > c ? a : c) : (b > c ? b : c);
}

/* Residual r(x) and its Jacobian A = dr/dx (row-major) at x. Residuals and the driver are forced
 * inline: the driver is then specialized for its residual in each step function (a call through
 * the pointer costs about a fifth of a vlv step). */
typedef void (*lf_newton3_fn)(const void *ctx, const double *x, double *r, double *A);
#define LF_ALWAYS_INLINE static inline __attribute__((always_inline))

/* The context of every residual here: one body's equation with inertias J (3), its right-hand side
 * c (3) and the step h (unused by an equation that has no h of its own). */
typedef struct {
    const double *J, *c;
    double h;
} lf_body_eq;

/* Solve r(x) = 0 from the predictor in x. `what` names the equation in messages ("eq. (6)");
 * `hint` is appended to the non-convergence message ("" for none). Counts iterations in s. */
LF_ALWAYS_INLINE int lf_newton3(lf_stepper *s, lf_newton3_fn f, const void *ctx, double *x, const char *what,
                             const char *hint, int body)
{
    const double tol = s->opts.newton_tol;
    double r[3], A[9], dx[3];
    int it = 0; /* Newton updates made */
    for (;;) {
        f(ctx, x, r, A);
        const double res = lf_maxabs3(r);
        if (res == 0) break; /* exact root */
        if (it >= s->opts.max_iter || !isfinite(res)) {
            s->stats.newton_iters += it;
            return lf_error_set(&s->err, LF_ENOCONV, "newton did not converge in %d iterations (|residual|=%.3g)%s",
                                it, res, hint);
        }
        if (lf_m3_solve(A, r, dx) != LF_OK)
            return lf_error_set(&s->err, LF_EDOMAIN, "singular Newton Jacobian in %s for body %d", what, body + 1);
        lf_v3_sub(x, dx, x);
        it++;
        if (lf_maxabs3(dx) <= tol * (1 + lf_maxabs3(x))) break;
    }
    s->stats.newton_iters += it;
    return LF_OK;
}

/* The same Newton on every lane of a stepper with lanes, in lockstep: x of lane j is X[k B + j]
 * (B = s->lanes), and lane j's equation is f with the context {J, c_j, h}, c_j the lane's entry of
 * C (3 B, in lanes). Each sweep updates the lanes still iterating; a lane stops where lf_newton3
 * would stop, so its iterates are bitwise lf_newton3's. flag: B doubles of workspace. Errors name
 * the first failing lane. */
LF_ALWAYS_INLINE void lf_newton3_lane_eval(lf_newton3_fn f, const double *J, const double *C, double h, int B, int j,
                                           const double *x, double *r, double *A)
{
    double c[3];
    lf_lane_get(3, C, B, j, c);
    const lf_body_eq q = {J, c, h};
    f(&q, x, r, A);
}

LF_ALWAYS_INLINE int lf_newton3_lanes(lf_stepper *s, lf_newton3_fn f, const double *J, const double *C, double h,
                                      double *restrict X, double *restrict flag, const char *what, const char *hint)
{
    const int B = s->lanes;
    const double tol = s->opts.newton_tol;
    /* flag of a lane after a sweep: 2 updated and iterating, 1 updated and converged, 0 idle (not
     * iterating, or an exact root), -1 failed */
    for (int j = 0; j < B; j++) flag[j] = 2;
    int it = 0;
    for (; it < s->opts.max_iter; it++) {
        LF_LANES_INDEPENDENT
        for (int j = 0; j < B; j++) { /* the loop body of lf_newton3 with selects for its branches */
            double x[3], r[3], A[9], dx[3], xn[3];
            lf_lane_get(3, X, B, j, x);
            lf_newton3_lane_eval(f, J, C, h, B, j, x, r, A);
            /* conditions as doubles 0 or 1 (masks as wide as the lanes' data, which vectorizes) */
            const double d = lf_m3_cramer(A, r, dx), res = lf_maxabs3(r);
            lf_v3_sub(x, dx, xn);
            const double on = flag[j] > 1 ? 1.0 : 0.0;
            const double active = fabs(r[0]) + fabs(r[1]) + fabs(r[2]) == 0 ? 0.0 : on; /* not an exact root */
            const double bad = !(res <= DBL_MAX) || lf_m3_singular(d) ? 1.0 : 0.0;  /* res is NaN if r is */
            const double conv = lf_maxabs3(dx) <= tol * (1 + lf_maxabs3(xn)) ? 1.0 : 0.0;
            const double upd = active * (1 - bad);
            for (int k = 0; k < 3; k++) x[k] = upd > 0 ? xn[k] : x[k];
            lf_lane_put(3, x, X, B, j);
            flag[j] = active * bad > 0 ? -1.0 : upd * (2 - conv);
        }
        long iterating = 0, failed = 0, updates = 0;
        for (int j = 0; j < B; j++) {
            iterating += flag[j] > 1;
            failed += flag[j] < 0;
            updates += flag[j] > 0;
        }
        s->stats.newton_iters += updates;
        if (failed > 0) break;
        if (iterating == 0) return LF_OK;
    }
    /* a lane failed, or max_iter updates were made: lf_newton3's checks on the first lane that did not stop */
    for (int j = 0; j < B; j++) {
        if (flag[j] == 0 || flag[j] == 1) continue; /* stopped without error */
        double x[3], r[3], A[9], dx[3];
        lf_lane_get(3, X, B, j, x);
        lf_newton3_lane_eval(f, J, C, h, B, j, x, r, A);
        const double res = lf_maxabs3(r);
        if (res == 0) continue; /* an exact root at the last iterate */
        if (it >= s->opts.max_iter || !isfinite(res))
            return lf_error_set(&s->err, LF_ENOCONV, "lane %d: newton did not converge in %d iterations "
                                "(|residual|=%.3g)%s", j + 1, it, res, hint);
        if (lf_m3_singular(lf_m3_cramer(A, r, dx)))
            return lf_error_set(&s->err, LF_EDOMAIN, "lane %d: singular Newton Jacobian in %s", j + 1, what);
    }
    return LF_OK;
}

/* The phases of a lanes step that apply one body's kernel to every lane (gather, kernel, scatter):
 * a kick v <- k(J, v, t, h) with the lane's torque t (V and T: 3 B, in lanes), and a predictor
 * k(J, v, t, h, c) that also writes the right-hand side c of the lane's equation into C. */
typedef void (*lf_lane_kick_fn)(const double *J, double *v, const double *t, double h);
typedef void (*lf_lane_predict_fn)(const double *J, double *v, const double *t, double h, double *c);

LF_ALWAYS_INLINE void lf_lanes_kick(int B, lf_lane_kick_fn k, const double *J, double *restrict V,
                                    const double *restrict T, double h)
{
    LF_LANES_INDEPENDENT
    for (int j = 0; j < B; j++) {
        double v[3], t[3];
        lf_lane_get(3, V, B, j, v);
        lf_lane_get(3, T, B, j, t);
        k(J, v, t, h);
        lf_lane_put(3, v, V, B, j);
    }
}

LF_ALWAYS_INLINE void lf_lanes_predict(int B, lf_lane_predict_fn k, const double *J, double *restrict V,
                                       const double *restrict T, double h, double *restrict C)
{
    LF_LANES_INDEPENDENT
    for (int j = 0; j < B; j++) {
        double v[3], t[3], c[3];
        lf_lane_get(3, V, B, j, v);
        lf_lane_get(3, T, B, j, t);
        k(J, v, t, h, c);
        lf_lane_put(3, v, V, B, j);
        lf_lane_put(3, c, C, B, j);
    }
}

/* D(W) = d(W x J W)/dW = hat(W) J - hat(J W), J diagonal (row-major). */
LF_ALWAYS_INLINE void lf_gyro_jac(const double *J, const double *W, double *D)
{
    D[0] = 0;                     D[1] = W[2] * (J[2] - J[1]); D[2] = W[1] * (J[2] - J[1]);
    D[3] = W[2] * (J[0] - J[2]); D[4] = 0;                     D[5] = W[0] * (J[0] - J[2]);
    D[6] = W[1] * (J[1] - J[0]); D[7] = W[0] * (J[1] - J[0]); D[8] = 0;
}

/* The explicit half kick of Euler's equation J w' = J w x w + tau, W <- W + h/2 J^{-1}(J W x W + tau),
 * and (c != NULL) c = J W + h/2 tau at the W before the kick: the right-hand side of the implicit
 * equations of eln (6) and vlv (8), whose predictor the kick is. */
LF_ALWAYS_INLINE void lf_half_kick(const double *J, double *W, const double *tau, double h, double *c)
{
    double JW[3], a[3];
    lf_v3_mul(J, W, JW);
    if (c) lf_v3_axpy(JW, 0.5 * h, tau, c);
    lf_v3_cross(JW, W, a);
    lf_v3_add(a, tau, a);
    lf_v3_div(a, J, a);
    lf_v3_axpy(W, 0.5 * h, a, W);
}

/* Jac[r][3 j + q] += f sum_m K[r][3 j + m] D[m][q] for every row r (Jac and K n x n, D 3 x 3,
 * row-major): the torque's part of an implicit rigid method's Newton Jacobian, with K the torque
 * Jacobian (potential.h) and D how body j's attitude moves with its unknowns (akw, liemid_i). */
static inline void lf_jac_add_torque(int n, double *Jac, const double *K, int j, const double *D, double f)
{
    for (int r = 0; r < n; r++) {
        const double *Kr = K + (size_t)r * n + 3 * j;
        for (int q = 0; q < 3; q++)
            Jac[(size_t)r * n + 3 * j + q] += f * (Kr[0] * D[q] + Kr[1] * D[3 + q] + Kr[2] * D[6 + q]);
    }
}

/* The implicit midpoint-type gyroscopic equation J W + h/2 W x J W = c of eln's (6) (times J) and
 * prk's (4.8a): g(W) = J W - h/2 (J W x W) - c and its Jacobian J + h/2 D(W). */
LF_ALWAYS_INLINE void lf_gyro_residual(const void *ctx, const double *W, double *r, double *A)
{
    const lf_body_eq *q = ctx;
    double JW[3], cr[3];
    lf_v3_mul(q->J, W, JW);
    lf_v3_cross(JW, W, cr);
    for (int k = 0; k < 3; k++) r[k] = JW[k] - 0.5 * q->h * cr[k] - q->c[k];
    lf_gyro_jac(q->J, W, A);
    for (int k = 0; k < 9; k++) A[k] *= 0.5 * q->h;
    A[0] += q->J[0]; A[4] += q->J[1]; A[8] += q->J[2];
}

#endif
