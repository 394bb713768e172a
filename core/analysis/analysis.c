/* lieflow — least-squares fits (GSL). */
#include "analysis.h"

#include <math.h>

#include <gsl/gsl_fit.h>

#include "error.h"

int lf_fit_linear(const double *x, const double *y, size_t n, double *slope, double *intercept,
                  double *slope_stderr, double *resid_std)
{
    if (!x || !y || n < 2) return LF_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]) || !isfinite(y[i])) return LF_EINVAL;
    int distinct = 0;
    for (size_t i = 1; i < n && !distinct; i++) distinct = x[i] != x[0];
    if (!distinct) return LF_EDOMAIN;

    double c0, c1, cov00, cov01, cov11, sumsq;
    if (gsl_fit_linear(x, 1, y, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq) != 0) return LF_EDOMAIN;
    if (slope) *slope = c1;
    if (intercept) *intercept = c0;
    /* gsl_fit_linear divides sumsq by n - 2 for the covariances; with n == 2 that is 0/0. */
    if (slope_stderr) *slope_stderr = n > 2 ? sqrt(cov11) : NAN;
    if (resid_std) *resid_std = n > 2 ? sqrt(sumsq / (double)(n - 2)) : 0.0;
    return LF_OK;
}
