/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the logarithmic norm of a matrix in a weighted Euclidean norm (Tumiotto, Cokaj,
 * Celledoni, Owren, Arnold, "Nonlinear stability of Lie group integrators", Def. 2; Dahlquist 1958,
 * Lozinskii 1958).
 *
 * mu[A] = lim_{D -> 0+} (||I + D A|| - 1)/D for the norm ||x||_G = sqrt(x^T G x), G symmetric
 * positive definite. With G = L L^T (Cholesky), ||x||_G = |L^T x|, so mu_G[A] = mu_2[L^T A L^-T] =
 * the largest eigenvalue of the symmetric part of M = L^T A L^-T. The matrix of their Def. 2,
 * (G A G^-1 + A^T)/2 = G [(A + G^-1 A^T G)/2] G^-1, is similar to (M + M^T)/2 (it has real
 * eigenvalues): mu_G[A] is its largest eigenvalue — signed, not the largest |lambda| their text
 * prints (which would be >= 0 for every A and could never certify contraction). */
#ifndef LF_LOGNORM_H
#define LF_LOGNORM_H

#include "base/export.h"
#include "base/error.h"

LF_BEGIN_DECLS

/* *mu = mu_G[A] for n x n A and G (row-major; G = NULL: the identity, mu = lambda_max((A+A^T)/2)).
 * LF_EINVAL if n < 1, an entry is not finite, G is not symmetric (|G - G^T| > 1e-12 |G|) or not
 * positive definite (the message says which). */
int lf_lognorm(int n, const double *A, const double *G, double *mu, lf_error *err);

LF_END_DECLS

#endif
