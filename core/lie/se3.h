/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the group of rigid motions SE(3) = SO(3) x| R^3 and its Lie algebra se(3) ~ R^6.
 *
 * Conventions (the se3 factor of manifold.h; so3.h's conventions for the rotation):
 *   - A point y = (R, p) is 12 doubles: R row-major 3x3 (body to space), then the position p; it
 *     stands for the homogeneous 4x4 matrix [[R, p], [0, 1]]. The product is the matrix product,
 *     (R1, p1)(R2, p2) = (R1 R2, p1 + R1 p2); identity (I, 0); (R, p)^-1 = (R^T, -R^T p).
 *   - An algebra element is a twist xi = (w, v), 6 doubles (the angular part first), with
 *     hat(xi) = [[hat(w), v], [0, 0]]. The bracket is the matrix commutator:
 *         [(w1, v1), (w2, v2)] = (w1 x w2,  w1 x v2 - w2 x v1),
 *     i.e. ad_(w,v) = [[hat w, 0], [hat v, hat w]] on (a, b).
 *   - Left trivialization, y' = y hat(xi): xi is the body-fixed twist, R' = R hat(w), p' = R v (a
 *     rigid body whose body frame has origin p: w its body angular velocity, v the velocity of p
 *     in body coordinates). Right trivialization, y' = hat(xi) y: the spatial twist, R' = hat(w) R,
 *     p' = w x p + v. The two are related by the adjoint, xi_spatial = Ad_y xi_body.
 *   - exp(xi) = (exp(hat w), V(w) v), V(w) = I + (1 - cos t)/t^2 hat(w) + (t - sin t)/t^3 hat(w)^2,
 *     t = |w|: V is so(3)'s right-trivialized dexp (so3.h), which is how the maps below compute it.
 *   - dexp and dexpinv are right-trivialized, as everywhere in lieflow (so3.h, [O] eqs. 2.1.5-2.1.7):
 *     d/dt exp(x(t)) = hat(dexp(x) x') exp(x), dexp_x = sum_k ad_x^k/(k+1)!. With the ad above,
 *         dexp(w, v) = [[D(w), 0], [Q(w, v), D(w)]],   D = lf_so3_dexp, Q(w, v) = D'(w)[v]
 *     (ad^k has sum_{i+j=k-1} hat(w)^i hat(v) hat(w)^j below the diagonal: the derivative of
 *     hat(w)^k in the direction v; TS^2 under SE(3), ts2.h, uses these maps). Differentiating
 *     D = I + B(t) hat(w) + C(t) hat(w)^2 (B = (1 - cos t)/t^2, C = (t - sin t)/t^3):
 *         Q = B hat(v) + C (hat(w) hat(v) + hat(v) hat(w)) + (w . v) (g1 hat(w) + g2 hat(w)^2),
 *         g1 = B'(t)/t = (t sin t - 2 (1 - cos t))/t^4,   g2 = C'(t)/t = (t (1 - cos t) - 3 (t - sin t))/t^5.
 *     This is Barfoot's Q of the SE(3) Jacobian ([B17] §7.1.5), rewritten with hat(w) hat(v) hat(w)
 *     = -(w . v) hat(w) and hat(w)^3 = -t^2 hat(w): Barfoot's *left* Jacobian J_l, defined by
 *     exp((xi + d)^) ~ exp((J_l d)^) exp(xi^), is lieflow's right-trivialized dexp; Barfoot orders a
 *     twist (rho, phi) = (v, w), so his [[J, Q], [0, J]] is the block matrix above with the blocks
 *     swapped. The two forms agree with the series sum_k ad^k/(k+1)! to 1e-38 in 40-digit
 *     arithmetic, and with each other to round-off in tests/c/test_se3.c, which also checks both
 *     against central differences of exp.
 *     dexpinv = [[Di, 0], [-Di Q Di, Di]], Di = D^-1 = lf_so3_dexpinv (block-triangular inversion;
 *     singular where D is, at t = 2 pi k, k >= 1).
 *   - Accuracy: B, C, g1, g2 come from Taylor series below t = 1.5 (C), 3 (g1), 4 (g2) and from the
 *     closed forms above, each within ~4 ulp of its value (measured against 50-digit arithmetic);
 *     Q is within 5 ulp of max |Q_ij| for |w| <= 1 and within ~(2 + |w|) ulp beyond, the rounding
 *     of |w| moving the phase of sin |w| (3000 random twists, |w| in [1e-6, 25], against 60-digit
 *     values). Above |w| = 2^100 Q is evaluated on the unit axis (as so3.c does above 2^500), so
 *     every finite twist has finite maps.
 * Distance: sqrt(||R1 - R2||_F^2 + |p1 - p2|^2), the Euclidean distance of the embedding in R^12: a
 * metric, invariant under a change of the spatial frame (y -> g y). */
#ifndef LF_SE3_H
#define LF_SE3_H

#include "base/export.h"
#include "base/error.h"

LF_BEGIN_DECLS

/* X = hat(xi) = [[hat(w), v], [0, 0]], a 4x4 matrix (16 doubles, row-major). */
void lf_se3_hat(const double xi[6], double X[16]);
/* G = [[R, p], [0, 1]], the 4x4 homogeneous matrix of a point (16 doubles, row-major). */
void lf_se3_matrix(const double y[12], double G[16]);

/* y = exp(xi) = (exp(hat w), V(w) v) (closed form above; a rigid motion for every finite xi). */
void lf_se3_exp(const double xi[6], double y[12]);
/* xi = log(y) with |w| in [0, pi] (w = lf_so3_log(R), v = V(w)^-1 p): exp(log(y)) = y for every
 * rigid motion y; log(exp(xi)) = xi when |w| < pi. */
void lf_se3_log(const double y[12], double xi[6]);
/* c = a b (the group product); c may alias a or b. */
void lf_se3_mul(const double a[12], const double b[12], double c[12]);
/* b = a^-1 = (R^T, -R^T p); b may alias a. */
void lf_se3_inv(const double a[12], double b[12]);
/* The adjoint Ad_y as a 6x6 matrix (row-major) on twists (w, v): Ad_y xi = vee(G hat(xi) G^-1) =
 * (R w, R v + p x R w), i.e. [[R, 0], [hat(p) R, R]]. */
void lf_se3_Ad(const double y[12], double A[36]);

/* y <- exp(xi) y (right = 0: the action of a right-trivialized ODE) or y <- y exp(xi) (right = 1:
 * left-trivialized, body-fixed twists), in place. R moves by so3.h's increment form (one rounding
 * per entry, R stays orthogonal to round-off); p <- exp(w) p + V v, or p <- p + R V v. */
void lf_se3_act(const double xi[6], double y[12], int right);
/* Velocity of y' = hat(xi) y (right = 0): (hat(w) R, w x p + v); of y' = y hat(xi) (right = 1):
 * (R hat(w), R v). */
void lf_se3_velocity(const double y[12], const double xi[6], int right, double ydot[12]);
/* The smallest xi (|w| <= pi) with act(xi, y0) = y1: log(y1 y0^-1) (right = 0) or log(y0^-1 y1)
 * (right = 1). */
void lf_se3_diff(const double y0[12], const double y1[12], int right, double xi[6]);
/* out = [x, y] (above); out may alias x or y. */
void lf_se3_bracket(const double x[6], const double y[6], double out[6]);

/* The lower-left block Q(w, v) of dexp (above; 3x3 row-major), xi = (w, v). */
void lf_se3_Q(const double xi[6], double Q[9]);
/* out = dexp_u(v) (inverse = 0) or dexpinv_u(v) (inverse = 1), or their transposes (transpose = 1,
 * for the dot product of R^6): [[D^T, Q^T], [0, D^T]] and [[Di^T, -(Di Q Di)^T], [0, Di^T]].
 * out may alias v but not u. */
void lf_se3_dexp(const double u[6], const double v[6], int inverse, int transpose, double out[6]);
/* The 6x6 matrix (row-major) of dexp_u (inverse = 0) or dexpinv_u (inverse = 1). */
void lf_se3_dexp_matrix(const double u[6], int inverse, double D[36]);

/* sqrt(||R0 - R1||_F^2 + |p0 - p1|^2) (above). */
double lf_se3_dist(const double y0[12], const double y1[12]);
/* LF_OK if y is finite and R is a rotation within tol (||R^T R - I||_F <= tol, |det R - 1| <= tol,
 * lf_so3_check); else LF_EINVAL with a message naming `what`. */
int lf_se3_check(const double y[12], double tol, const char *what, lf_error *err);

LF_END_DECLS

#endif
