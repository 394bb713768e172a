/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — fits used by the analysis tools (convergence orders, energy-drift slopes).
 * Thin wrappers over GSL (gsl_fit_linear); the statistics built on them live in
 * scripts/lieflow/analysis.lua. */
#ifndef LF_ANALYSIS_H
#define LF_ANALYSIS_H

#include "base/export.h"
#include <stddef.h>

LF_BEGIN_DECLS

/* Ordinary least-squares line y ~ intercept + slope * x through n points (GSL gsl_fit_linear).
 * Outputs (each may be NULL):
 *   slope, intercept  the fitted line;
 *   slope_stderr      standard error of the slope, sqrt(s^2 / sum (x_i - mean x)^2) with
 *                     s^2 = sum r_i^2 / (n - 2) (NAN when n == 2: undefined);
 *   resid_std         standard deviation of the residuals r_i = y_i - line(x_i),
 *                     sqrt(sum r_i^2 / (n - 2)) (0 when n == 2: the line is exact).
 * x and y are scaled by powers of two for the fit, so any finite data works (no overflow of the
 * sums of squares for data ~1e200, no loss in subnormal numbers for data ~1e-200).
 * Returns LF_OK; LF_EINVAL if n < 2, x or y is NULL, or a value is not finite; LF_EDOMAIN if all
 * x are equal (the slope is undefined) or the fitted line has no double value (|slope| > DBL_MAX,
 * e.g. y ~ 1e300 over an x range of 1e-300); LF_ENOMEM if a small scratch copy of the data cannot
 * be allocated. GSL errors never abort (core/base/gsl_guard_internal.h). Outputs are untouched
 * on failure. */
int lf_fit_linear(const double *x, const double *y, size_t n, double *slope, double *intercept,
                  double *slope_stderr, double *resid_std);

LF_END_DECLS

#endif
