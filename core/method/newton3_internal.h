/* lieflow (internal) — Newton on one body's 3-vector equation for the methods whose implicit
 * equation is small and not in the torque (eln, vlv, lgvi, prk). Same stopping rule and messages as
 * lf_newton (newton.h), analytic Jacobian, no workspace; static inline so that the residual
 * callback inlines on the hot path. Also the gyroscopic residual that eln and prk share. */
#ifndef LF_NEWTON3_H
#define LF_NEWTON3_H

#include <math.h>

#include "linalg.h"
#include "method_internal.h"

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

/* D(W) = d(W x J W)/dW = hat(W) J - hat(J W), J diagonal (row-major). */
LF_ALWAYS_INLINE void lf_gyro_jac(const double *J, const double *W, double *D)
{
    D[0] = 0;                     D[1] = W[2] * (J[2] - J[1]); D[2] = W[1] * (J[2] - J[1]);
    D[3] = W[2] * (J[0] - J[2]); D[4] = 0;                     D[5] = W[0] * (J[0] - J[2]);
    D[6] = W[1] * (J[1] - J[0]); D[7] = W[0] * (J[1] - J[0]); D[8] = 0;
}

/* The implicit midpoint-type gyroscopic equation J W + h/2 W x J W = c of eln's (6) (times J) and
 * prk's (4.8a): g(W) = J W - h/2 (J W x W) - c and its Jacobian J + h/2 D(W). */
typedef struct {
    const double *J, *c;
    double h;
} lf_gyro_eq;

LF_ALWAYS_INLINE void lf_gyro_residual(const void *ctx, const double *W, double *r, double *A)
{
    const lf_gyro_eq *q = ctx;
    double JW[3], cr[3];
    lf_v3_mul(q->J, W, JW);
    lf_v3_cross(JW, W, cr);
    for (int k = 0; k < 3; k++) r[k] = JW[k] - 0.5 * q->h * cr[k] - q->c[k];
    lf_gyro_jac(q->J, W, A);
    for (int k = 0; k < 9; k++) A[k] *= 0.5 * q->h;
    A[0] += q->J[0]; A[4] += q->J[1]; A[8] += q->J[2];
}

#endif
