/* lieflow (internal) — Newton on one body's 3-vector equation for the methods whose implicit
 * equation is small and not in the torque (eln, vlv, lgvi). Same stopping rules and messages as
 * lf_newton (linalg.c), analytic Jacobian, no workspace; static inline so that the residual
 * callback inlines on the hot path. */
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

/* Residual r(x) and its Jacobian A = dr/dx (row-major) at x. */
typedef void (*lf_newton3_fn)(const void *ctx, const double *x, double *r, double *A);

/* Solve r(x) = 0 from the predictor in x. `what` names the equation in messages ("eq. (6)");
 * `hint` is appended to the non-convergence message ("" for none). Counts iterations in s. */
static inline int lf_newton3(lf_stepper *s, lf_newton3_fn f, const void *ctx, double *x, const char *what,
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

#endif
