/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the rotation group SO(3) and its Lie algebra so(3) ~ R^3.
 *
 * Conventions (used everywhere in lieflow):
 *   - R in SO(3) maps body to space coordinates; matrices are double[9] row-major.
 *   - Body angular velocity w (left trivialization): R' = R hat(w); spatial w_s = R w.
 *   - hat(w) = [[0,-w3,w2],[w3,0,-w1],[-w2,w1,0]], so hat(a) b = a x b; vee is its inverse.
 *   - exp: Rodrigues, exp(x) = I + sin(t)/t hat(x) + (1-cos t)/t^2 hat(x)^2, t = |x|.
 *   - cay(x) = I + 4/(4+|x|^2) hat(x) + 2/(4+|x|^2) hat(x)^2   ([BOS] eq. (7) prints |x|; it is |x|^2)
 *     = (I - hat(x)/2)^{-1} (I + hat(x)/2).
 *   - dexp, dcay are right-trivialized ([O] eqs. 2.1.5-2.1.7):
 *       d/dt exp(x(t)) = hat(dexp(x) x') exp(x),   d/dt cay(x(t)) = hat(dcay(x) x') cay(x).
 *     dexpinv, dcayinv are their inverses.
 * Every map keeps ~1 ulp-level relative accuracy as |x| -> 0 (the coefficients (t - sin t)/t^3 and
 * (1 - (t/2)cot(t/2))/t^2 are Taylor series below t = 1.5 and 2, where the closed forms are back to
 * ~2 ulp) and log stays accurate up to and at angle pi. */
#ifndef LF_SO3_H
#define LF_SO3_H

#include "base/export.h"
#include <stdint.h>

#include "base/error.h"

LF_BEGIN_DECLS

/* W = hat(w). */
void lf_so3_hat(const double w[3], double W[9]);
/* w = vee(W) for skew W; for a general W it returns vee of the skew part (W - W^T)/2. */
void lf_so3_vee(const double W[9], double w[3]);

/* R = exp(hat(x)) by Rodrigues' formula; coefficients by Taylor series for small |x|, the unit
 * axis for |x| > 2^500 (a rotation for every x whose norm is a double; NaN beyond DBL_MAX). */
void lf_so3_exp(const double x[3], double R[9]);
/* x = log(R) with |x| in [0, pi]. The angle is atan2(|vee(R)|, (tr R - 1)/2), accurate at every
 * angle; for angles < pi/2 the axis comes from the skew part (no cancellation, series for tiny
 * angles), for angles >= pi/2 from the symmetric part R + R^T, where it is well conditioned, with
 * the sign from the skew part. At angle exactly pi the sign of x is chosen with the first nonzero
 * component positive. */
void lf_so3_log(const double R[9], double x[3]);

/* R = cay(x), the Cayley transform above. */
void lf_so3_cay(const double x[3], double R[9]);
/* x = cay^{-1}(R) = 2 vee((R - R^T)/(1 + tr R)); LF_EDOMAIN when 1 + tr R <= 1e-12 (angle near pi). */
int lf_so3_cayinv(const double R[9], double x[3], lf_error *err);

/* Right-trivialized differentials as 3x3 matrices acting on R^3:
 *   dexp(x)    = I + (1-cos t)/t^2 hat(x) + (t - sin t)/t^3 hat(x)^2
 *   dexpinv(x) = I - hat(x)/2 + (1 - (t/2) cot(t/2))/t^2 hat(x)^2      (singular at t = 2 pi)
 *   dcay(x)    = 4/(4+|x|^2) (I + hat(x)/2)
 *   dcayinv(x) = I - hat(x)/2 + x x^T/4 */
void lf_so3_dexp(const double x[3], double D[9]);
void lf_so3_dexpinv(const double x[3], double D[9]);
void lf_so3_dcay(const double x[3], double D[9]);
void lf_so3_dcayinv(const double x[3], double D[9]);

/* Adjoint Ad_R acting on so(3) ~ R^3: Ad_R(x) = R x, so the matrix is R itself. */
void lf_so3_Ad(const double R[9], double A[9]);

/* dist(R1,R2) = sqrt(2 tr(I - R1^T R2)) = ||R1 - R2||_F ([BOS] eq. (11)), computed as the
 * Frobenius norm of the difference to keep accuracy when R1 ~ R2. */
double lf_so3_dist(const double R1[9], const double R2[9]);
/* Geodesic angle |log(R1^T R2)| in [0, pi]. */
double lf_so3_angle(const double R1[9], const double R2[9]);

/* Nearest rotation to M in the Frobenius norm: U diag(1,1,det(U V^T)) V^T from the SVD M = U S V^T
 * (GSL, singular values in decreasing order; M is first scaled by a power of two, so any finite
 * magnitude works). LF_EINVAL for non-finite input; LF_EDOMAIN when the nearest rotation is not
 * unique (rank < 2, or a reflection with s2 = s3) or not determined to 1e-9 in double precision
 * (an a posteriori bound, see so3.c); LF_ENOCONV/LF_ENOMEM when GSL fails. R is a rotation to
 * 1e-12 whenever LF_OK is returned. */
int lf_so3_project(const double M[9], double R[9], lf_error *err);

/* Uniformly distributed (Haar) rotation from a seed (unit quaternion of 4 normal deviates, GSL mt19937).
 * The same seed always gives the same rotation (GSL maps seed 0 to its default 4357).
 * LF_ENOMEM (message in err) if GSL cannot allocate its generator. */
int lf_so3_random(unsigned long seed, double R[9], lf_error *err);

/* ||R^T R - I||_F */
double lf_so3_orth_error(const double R[9]);
/* LF_OK if R is finite, ||R^T R - I||_F <= tol and |det R - 1| <= tol; else LF_EINVAL with a
 * message naming `what` and the measured defect. */
int lf_so3_check(const double R[9], double tol, const char *what, lf_error *err);

/* In-place attitude updates R <- R exp(hat x) and R <- R cay(x), computed as R + R (F - I) with
 * F - I from its closed form (so3_update.c): one rounding per entry instead of a matrix product,
 * which keeps ||R^T R - I|| at round-off level over 1e5+ steps. */
void lf_so3_rmul_exp(double R[9], const double x[3]);
void lf_so3_rmul_cay(double R[9], const double x[3]);
/* The same on the left, R <- exp(hat x) R (columns advanced), and for a vector, v <- exp(hat x) v. */
void lf_so3_lmul_exp(double R[9], const double x[3]);
void lf_so3_rotate(const double x[3], double v[3]);

LF_END_DECLS

#endif
