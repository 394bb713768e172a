/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the tangent bundle TS^2 = {(q, w): |q| = 1, q . w = 0} as a homogeneous space of
 * SE(3) = SO(3) x| R^3 (Tumiotto, Cokaj, Celledoni, Owren, Arnold, "Nonlinear stability of Lie group
 * integrators": the TS^2 gradient flow; SO(3) alone cannot act transitively on TS^2, it keeps |w|).
 *
 * Points are 6 doubles (q, w). The group SE(3), (Q1, v1)(Q2, v2) = (Q1 Q2, v1 + Q1 v2) (the 4 x 4
 * matrices [[Q, v], [0, 1]]), acts by
 *     (Q, v) . (q, w) = (Q q,  Q w + v x Q q),
 * which keeps |q| = 1 and q . w = 0. Algebra se(3) ~ R^6, (a, b) <-> [[hat a, b], [0, 0]],
 *     [(a1, b1), (a2, b2)] = (a1 x a2,  a1 x b2 - a2 x b1),
 *     exp(a, b) = (exp(hat a), D(a) b),   D(a) = dexp of so(3) (so3.h, right-trivialized),
 * infinitesimal action q' = a x q, w' = a x w + b x q. The right-trivialized dexp of se(3) is the
 * block matrix [[D(a), 0], [D'(a)[b], D(a)]], D'(a)[b] the derivative of D at a in direction b
 * (because ad_(a,b) = [[hat a, 0], [hat b, hat a]] and ad^k has the derivative of hat(a)^k below
 * the diagonal); its inverse is [[D^-1, 0], [-D^-1 D' D^-1, D^-1]].
 *
 * The Sasaki metric (Sasaki 1958) on TS^2: |(dq, dw)|^2 = |dq|^2 + |dw + (dq . w) q|^2 (horizontal
 * plus vertical part, the covariant derivative of w). lf_ts2_sasaki_dist computes its distance by
 * shooting on the geodesic equations; lf_ts2_sasaki_bound is the length of an admissible curve
 * (an upper bound, exact in the two cases named there). */
#ifndef LF_TS2_H
#define LF_TS2_H

#include "base/export.h"
#include "base/error.h"

LF_BEGIN_DECLS

/* y <- exp(a, b) . y in place (y = (q, w), xi = (a, b)). */
void lf_ts2_act(const double xi[6], double y[6]);
/* Velocity of y' = xi . y: (a x q, a x w + b x q). */
void lf_ts2_velocity(const double y[6], const double xi[6], double ydot[6]);
/* xi with exp(xi) . y0 = y1: a the smallest rotation taking q0 to q1 (about q0 x q1), b with
 * D(a) b = q1 x (w1 - exp(a) w0). LF_EDOMAIN for antipodal q0, q1. */
int lf_ts2_diff(const double y0[6], const double y1[6], double xi[6], lf_error *err);
/* out = [x, y] (se(3)'s bracket, lf_se3_bracket). */
void lf_ts2_bracket(const double x[6], const double y[6], double out[6]);
/* out = dexp_u(v), dexpinv_u(v); with transpose = 1 the transposes (dot product on R^6): se(3)'s,
 * lf_se3_dexp. */
void lf_ts2_dexp(const double u[6], const double v[6], int inverse, int transpose, double out[6]);
/* A metric for error measurement: sqrt(angle(q0, q1)^2 + |w0 - w1|^2) (the product of the sphere's
 * great-circle distance and the Euclidean distance of the embedded w). */
double lf_ts2_dist(const double y0[6], const double y1[6]);

/* The Sasaki distance (see above). Shooting: the geodesic from y0 with initial horizontal velocity
 * v0 and covariant derivative U0 of w (both tangent at q0: 4 unknowns) solves, in the embedding,
 *     x' = v,  v' = -|v|^2 x + (u.v) U - (U.v) u,  u' = U - (v.u) x,  U' = -(v.U) x
 * (Sasaki's geodesic equations nabla x' = -R(u, nabla u) x', nabla nabla u = 0 with the unit
 * sphere's curvature R(X,Y)Z = <Y,Z>X - <X,Z>Y), integrated on [0, 1] by GSL rk8pd (tol 1e-13);
 * Gauss–Newton on (x(1) - q1, u(1) - w1) from the bound's curve; the distance is
 * sqrt(|v0|^2 + |U0|^2). info (may be NULL) receives the iterations and the final residual.
 * LF_ENOCONV if the shooting does not converge to 1e-11 (far or nearly antipodal points: use the
 * bound), LF_EDOMAIN for antipodal q0, q1, LF_EINVAL for points off TS^2 (1e-9). */
typedef struct lf_ts2_sasaki_info {
    int iters;
    double residual;
} lf_ts2_sasaki_info;
int lf_ts2_sasaki_dist(const double y0[6], const double y1[6], double *d, lf_ts2_sasaki_info *info, lf_error *err);
/* The length of the curve "q along the minimizing great circle, w affine in the parallel frame":
 * sqrt(d_S2(q0, q1)^2 + |P w0 - w1|^2) with P the parallel transport along the arc. An upper bound
 * of the Sasaki distance, equal to it when q0 = q1, or when P w0 and w1 are parallel (w0 = 0,
 * P w0 = w1 ...: then w and its covariant derivative stay parallel, the curvature term of the
 * geodesic equations vanishes and the curve is a geodesic). LF_EDOMAIN for antipodal q. */
int lf_ts2_sasaki_bound(const double y0[6], const double y1[6], double *d, lf_error *err);

LF_END_DECLS

#endif
