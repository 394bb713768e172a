/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the general linear group GL(3) and its algebra gl(3) (3x3 matrices, row-major).
 * exp and log are lf_expm / lf_logm (matfun.h: Padé scaling and squaring; inverse scaling and
 * squaring). The right-trivialized dexp_A = sum_k ad_A^k/(k+1)! = phi1(ad_A) with
 * ad_A(X) = AX - XA is evaluated exactly as the top-right block of exp([[ad_A, I], [0, 0]]) (an
 * 18 x 18 exponential, Van Loan's block trick), and dexpinv_A by solving with that 9 x 9 matrix;
 * for 2 ||A||_F <= 1 (where most steps are) the series themselves, which converge to rounding in
 * 20 (dexp) and 30 (dexpinv, Bernoulli numbers) terms. */
#ifndef LF_GL3_H
#define LF_GL3_H

#include "base/export.h"
#include "base/error.h"

LF_BEGIN_DECLS

/* Y = exp(A). */
int lf_gl3_exp(const double A[9], double Y[9], lf_error *err);
/* A = log(Y), principal logarithm. */
int lf_gl3_log(const double Y[9], double A[9], lf_error *err);
/* out = dexp_A(V), out = dexpinv_A(V) (out may alias V). */
int lf_gl3_dexp(const double A[9], const double V[9], double out[9], lf_error *err);
int lf_gl3_dexpinv(const double A[9], const double V[9], double out[9], lf_error *err);

LF_END_DECLS

#endif
