/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the unit sphere S^2 in R^3 (points are unit double[3]). */
#ifndef LF_S2_H
#define LF_S2_H

#include "base/export.h"
#include "base/error.h"

LF_BEGIN_DECLS

/* Great-circle distance 2 asin(|p - q|/2), evaluated as 2 atan2(|p - q|, |p + q|) (equal for unit
 * p, q) which is accurate for near, far and nearly antipodal points alike. */
double lf_s2_dist(const double p[3], const double q[3]);
/* Geodesic midpoint (p + q)/|p + q|; LF_EDOMAIN for antipodal points (|p + q| < 1e-12). */
int lf_s2_midpoint(const double p[3], const double q[3], double m[3], lf_error *err);
/* Retraction phi_x(v) = (x + v)/|x + v| ([CO] Example 1), v tangent at x. LF_EDOMAIN when
 * x + v = 0 or overflows (no direction). */
int lf_s2_retract(const double x[3], const double v[3], double y[3], lf_error *err);
/* Its inverse phi_x^{-1}(y) = y/(x.y) - x, defined for x.y > 0 (else LF_EDOMAIN). */
int lf_s2_retract_inv(const double x[3], const double y[3], double v[3], lf_error *err);
/* Orthogonal projection of v on the tangent plane at x: v - (x.v) x (applied twice, so that the
 * result is orthogonal to x to working precision even for v nearly normal to the sphere). */
void lf_s2_tangent(const double x[3], const double v[3], double t[3]);
/* Exponential map of the round sphere: cos|v| x + sin|v| v/|v| (series for small |v|). */
void lf_s2_exp(const double x[3], const double v[3], double y[3]);

LF_END_DECLS

#endif
