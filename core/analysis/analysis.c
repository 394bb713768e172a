/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — least-squares fits (GSL). */
#include "analysis/analysis.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>

#include "base/error.h"
#include "base/gsl_guard_internal.h"

/* Exponent e with max |a_i| = m 2^e, m in [0.5, 1) (0 for an all-zero array). */
static int scale_exponent(const double *a, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs(a[i]));
    int e = 0;
    if (m > 0) frexp(m, &e);
    return e;
}

int lf_fit_linear(const double *x, const double *y, size_t n, double *slope, double *intercept,
                  double *slope_stderr, double *resid_std)
{
    if (!x || !y || n < 2) return LF_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]) || !isfinite(y[i])) return LF_EINVAL;
    int distinct = 0;
    for (size_t i = 1; i < n && !distinct; i++) distinct = x[i] != x[0];
    if (!distinct) return LF_EDOMAIN;
    if (n > SIZE_MAX / (2 * sizeof(double))) return LF_ENOMEM;

    /* Scale x and y by powers of two (exact) so that their largest entries are in [0.5, 1):
     * gsl_fit_linear sums squares and products, which overflow for data ~1e155 and lose digits
     * in subnormal numbers for data ~1e-160. Every operation of the fit commutes with the
     * scaling, so in the safe range the results are the same bit for bit. */
    int ex = scale_exponent(x, n), ey = scale_exponent(y, n);
    double *xs = malloc(2 * n * sizeof(double));
    if (!xs) return LF_ENOMEM;
    double *ys = xs + n;
    for (size_t i = 0; i < n; i++) {
        xs[i] = ldexp(x[i], -ex);
        ys[i] = ldexp(y[i], -ey);
    }
    double c0, c1, cov00, cov01, cov11, sumsq;
    lf_gsl_guard g;
    lf_gsl_guard_begin(&g);
    int st = gsl_fit_linear(xs, 1, ys, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
    int gerr = lf_gsl_guard_end(&g);
    free(xs);
    if (st || gerr) return LF_EDOMAIN;
    /* back to the original units: y = c0 2^ey + c1 2^(ey - ex) x */
    double s = ldexp(c1, ey - ex), b = ldexp(c0, ey);
    double se = n > 2 ? ldexp(sqrt(cov11), ey - ex) : NAN;
    double rs = n > 2 ? ldexp(sqrt(sumsq / (double)(n - 2)), ey) : 0.0;
    /* a slope or intercept beyond DBL_MAX (e.g. y ~ 1e300 over x ~ 1e-300) has no double value */
    if (!isfinite(s) || !isfinite(b) || !isfinite(rs) || isinf(se) || !isfinite(c1) || !isfinite(c0))
        return LF_EDOMAIN;
    if (slope) *slope = s;
    if (intercept) *intercept = b;
    /* gsl_fit_linear divides sumsq by n - 2 for the covariances; with n == 2 that is 0/0. */
    if (slope_stderr) *slope_stderr = se;
    if (resid_std) *resid_std = rs;
    return LF_OK;
}
