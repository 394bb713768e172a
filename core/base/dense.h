/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — n x n dense factorizations (row-major, in place): LU with partial pivoting and
 * Cholesky. The 3 x 3 helpers are in linalg.h. */
#ifndef LF_DENSE_H
#define LF_DENSE_H

#include "base/export.h"

LF_BEGIN_DECLS

/* n x n LU factorization with partial pivoting, in place (row-major A, n*n); piv[n].
 * Returns LF_EDOMAIN if a pivot is exactly zero (singular matrix). */
int lf_lu_factor(int n, double *A, int *piv);
/* Solve with a factorization from lf_lu_factor; b is overwritten with x. */
void lf_lu_solve(int n, const double *LU, const int *piv, double *b);

/* Cholesky factorization A = L L^T of a symmetric positive definite n x n matrix, in place (L in
 * the lower triangle; the upper triangle is not read). Returns 0, or k + 1 when pivot k is not
 * positive (its value in *pivot if pivot != NULL): A is not positive definite. */
int lf_cholesky_factor(int n, double *A, double *pivot);
/* Solve L L^T x = b with a factor from lf_cholesky_factor; b is overwritten with x. */
void lf_cholesky_solve(int n, const double *L, double *b);

LF_END_DECLS

#endif
