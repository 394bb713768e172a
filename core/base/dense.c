/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — n x n LU with partial pivoting and Cholesky (dense.h). */
#include <math.h>

#include "base/dense.h"
#include "base/error.h"

int lf_lu_factor(int n, double *A, int *piv)
{
    for (int k = 0; k < n; k++) {
        /* pivot: largest |A[i][k]| for i >= k; piv[k] = row swapped with row k */
        int p = k;
        for (int i = k + 1; i < n; i++)
            if (fabs(A[i * n + k]) > fabs(A[p * n + k])) p = i;
        piv[k] = p;
        if (A[p * n + k] == 0) return LF_EDOMAIN;
        if (p != k)
            for (int j = 0; j < n; j++) {
                double t = A[k * n + j];
                A[k * n + j] = A[p * n + j];
                A[p * n + j] = t;
            }
        /* eliminate below the pivot; the multipliers L[i][k] are stored in place */
        for (int i = k + 1; i < n; i++) {
            double l = A[i * n + k] /= A[k * n + k];
            for (int j = k + 1; j < n; j++) A[i * n + j] -= l * A[k * n + j];
        }
    }
    return LF_OK;
}

void lf_lu_solve(int n, const double *LU, const int *piv, double *b)
{
    for (int k = 0; k < n; k++) { /* b <- P b, then L y = b (unit diagonal) */
        double t = b[k]; b[k] = b[piv[k]]; b[piv[k]] = t;
    }
    for (int i = 1; i < n; i++)
        for (int j = 0; j < i; j++) b[i] -= LU[i * n + j] * b[j];
    for (int i = n - 1; i >= 0; i--) { /* U x = y */
        for (int j = i + 1; j < n; j++) b[i] -= LU[i * n + j] * b[j];
        b[i] /= LU[i * n + i];
    }
}

int lf_cholesky_factor(int n, double *A, double *pivot)
{
    for (int j = 0; j < n; j++) {
        double d = A[j * n + j];
        for (int k = 0; k < j; k++) d -= A[j * n + k] * A[j * n + k];
        if (!(d > 0)) {
            if (pivot) *pivot = d;
            return j + 1;
        }
        d = sqrt(d);
        A[j * n + j] = d;
        for (int i = j + 1; i < n; i++) {
            double x = A[i * n + j];
            for (int k = 0; k < j; k++) x -= A[i * n + k] * A[j * n + k];
            A[i * n + j] = x / d;
            if (!isfinite(A[i * n + j])) { /* d > 0 but so small (subnormal) that the division overflows */
                if (pivot) *pivot = d * d;
                return j + 1;
            }
        }
    }
    return 0;
}

void lf_cholesky_solve(int n, const double *L, double *b)
{
    for (int i = 0; i < n; i++) { /* L y = b */
        double x = b[i];
        for (int k = 0; k < i; k++) x -= L[i * n + k] * b[k];
        b[i] = x / L[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) { /* L^T x = y */
        double x = b[i];
        for (int k = i + 1; k < n; k++) x -= L[k * n + i] * b[k];
        b[i] = x / L[i * n + i];
    }
}
