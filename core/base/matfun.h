/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — functions of small dense matrices (row-major, n x n with n <= LF_MATFUN_MAXN):
 * the exponential, the principal logarithm and the principal square root. They serve the GL(3)
 * factor of the manifold layer (exp, log and its exact dexpinv through an 18 x 18 exponential).
 * No allocation: scratch space lives on the stack (at most a few 18 x 18 matrices).
 *
 * exp: scaling and squaring with diagonal Padé approximants of degree 3, 5, 7, 9 or 13, chosen
 *      from the 1-norm (N. J. Higham, "The scaling and squaring method for the matrix exponential
 *      revisited", SIAM J. Matrix Anal. Appl. 26 (2005) 1179-1193, Table 2.3 and Algorithm 2.3).
 *      Backward stable in exact arithmetic of the approximant; measured relative error ~1e-15
 *      on rotations, symmetric and non-normal test matrices (tests/c/test_matfun.c).
 * log: inverse scaling and squaring: k square roots until ||X - I||_1 <= 1/4, then
 *      log(I + E) = integral_0^1 E (I + s E)^{-1} ds by 10-point Gauss–Legendre quadrature (the
 *      partial-fraction form of the [10/10] Padé approximant; Higham, "Functions of Matrices",
 *      SIAM 2008, §11.4-11.5), times 2^k. Needs no eigenvalue on the closed negative real axis.
 * sqrt: product form of the Denman–Beavers iteration (Higham 2008, eq. (6.17)), quadratically
 *      convergent for matrices with no eigenvalue on the closed negative real axis. */
#ifndef LF_MATFUN_H
#define LF_MATFUN_H

#include "base/export.h"
#include "base/error.h"

LF_BEGIN_DECLS

#define LF_MATFUN_MAXN 18

/* E = exp(A). LF_EINVAL if n is out of range or A is not finite; LF_EDOMAIN if the result
 * overflows. E may alias A. */
int lf_expm(int n, const double *A, double *E, lf_error *err);

/* L = log(A), the principal logarithm (eigenvalues of L with imaginary part in (-pi, pi)).
 * LF_EDOMAIN when A has an eigenvalue on or too near the closed negative real axis (the square
 * roots do not converge) or is singular. L may alias A. */
int lf_logm(int n, const double *A, double *L, lf_error *err);

/* S = A^{1/2}, the principal square root. Same domain as lf_logm. S may alias A. */
int lf_sqrtm(int n, const double *A, double *S, lf_error *err);

LF_END_DECLS

#endif
