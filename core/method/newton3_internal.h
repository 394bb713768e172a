/* lieflow (internal) — Newton on one body's 3-vector equation for the methods whose implicit
 * equation is small and not in the torque (eln, vlv, lgvi, prk). Same stopping rule and messages as
 * lf_newton (newton.h), analytic Jacobian, no workspace; static inline so that the residual
 * callback inlines on the hot path. Also the gyroscopic residual that eln and prk share. */
#ifndef LF_NEWTON3_H
#define LF_NEWTON3_H

#include <float.h>
#include <math.h>

#include "lanes_internal.h"
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

/* The same Newton on every lane of a stepper with lanes, in lockstep: x of lane j is X[k B + j]
 * (B = s->lanes) and f(ctx, j, x, r, A) is lane j's residual. Each sweep updates the lanes still
 * iterating; a lane stops where lf_newton3 would stop, so its iterates are bitwise lf_newton3's.
 * flag: B doubles of workspace. Errors name the first failing lane. */
typedef void (*lf_newton3_lane_fn)(const void *ctx, int j, const double *x, double *r, double *A);

LF_ALWAYS_INLINE int lf_newton3_lanes(lf_stepper *s, lf_newton3_lane_fn f, const void *ctx, double *restrict X,
                                      double *restrict flag, const char *what, const char *hint)
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
            f(ctx, j, x, r, A);
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
        f(ctx, j, x, r, A);
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
