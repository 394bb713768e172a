/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — GL(3): exp, log and the exact dexp / dexpinv (gl3.h). */
#include "lie/gl3.h"

#include <string.h>

#include "base/linalg.h"
#include "base/dense.h"
#include "base/matfun.h"

int lf_gl3_exp(const double A[9], double Y[9], lf_error *err) { return lf_expm(3, A, Y, err); }

int lf_gl3_log(const double Y[9], double A[9], lf_error *err) { return lf_logm(3, Y, A, err); }

/* D = the 9 x 9 matrix of dexp_A acting on row-major 3x3 matrices (right-trivialized:
 * d/dt exp(A(t)) = dexp_A(A') exp(A)). */
static int dexp_matrix(const double A[9], double D[81], lf_error *err)
{
    /* ad_A on vec(X) (row-major, p = 3i + j, q = 3k + l): (AX - XA)_ij = A_ik X_kj - X_il A_lj,
     * so ad[p][q] = A_ik delta_jl - delta_ik A_lj. B = [[ad, I], [0, 0]] (18 x 18): exp(B) has
     * top-right block sum_k ad^k/(k+1)! = phi1(ad) = dexp_A. */
    double B[18 * 18], E[18 * 18];
    memset(B, 0, sizeof B);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++)
                for (int l = 0; l < 3; l++) {
                    double v = (j == l ? A[3 * i + k] : 0) - (i == k ? A[3 * l + j] : 0);
                    B[(3 * i + j) * 18 + 3 * k + l] = v;
                }
    for (int p = 0; p < 9; p++) B[p * 18 + 9 + p] = 1;
    int rc = lf_expm(18, B, E, err);
    if (rc != LF_OK) return rc;
    for (int p = 0; p < 9; p++)
        for (int q = 0; q < 9; q++) D[9 * p + q] = E[p * 18 + 9 + q];
    return LF_OK;
}

/* B_k / k!, k = 0..29 (Bernoulli numbers, B_1 = -1/2): dexpinv_A = sum_k B_k/k! ad_A^k. */
static const double bernoulli[30] = {
    1, -0.5, 0.083333333333333329, 0, -0.0013888888888888889, 0, 3.3068783068783071e-05, 0,
    -8.2671957671957675e-07, 0, 2.08767569878681e-08, 0, -5.2841901386874932e-10, 0, 1.3382536530684679e-11, 0,
    -3.3896802963225827e-13, 0, 8.5860620562778452e-15, 0, -2.1748686985580619e-16, 0, 5.5090028283602295e-18, 0,
    -1.3954464685812522e-19, 0, 3.5347070396294673e-21, 0, -8.9535174270375463e-23, 0};

/* For ||ad_A|| <= 2 ||A||_F <= 1 the series converge fast: |B_k/k!| ~ 2 (2 pi)^-k, so 30 terms of
 * dexpinv and 20 of dexp (1/(k+1)!) are exact to rounding; beyond, the Van Loan exponential. */
static int small(const double A[9]) { return 2 * lf_m3_fnorm(A) <= 1; }

static void ad(const double A[9], const double X[9], double out[9])
{
    double P[9], Q[9];
    lf_m3_mul(A, X, P);
    lf_m3_mul(X, A, Q);
    lf_m3_sub(P, Q, out);
}

static void series(const double A[9], const double V[9], const double *c, int n, double out[9])
{
    double term[9], acc[9];
    memcpy(term, V, sizeof term);
    for (int i = 0; i < 9; i++) acc[i] = c[0] * V[i];
    for (int k = 1; k < n; k++) {
        ad(A, term, term);
        if (c[k] != 0)
            for (int i = 0; i < 9; i++) acc[i] += c[k] * term[i];
    }
    memcpy(out, acc, sizeof acc);
}

int lf_gl3_dexp(const double A[9], const double V[9], double out[9], lf_error *err)
{
    if (small(A)) {
        double c[20];
        c[0] = 1;
        for (int k = 1; k < 20; k++) c[k] = c[k - 1] / (k + 1); /* 1/(k+1)! */
        series(A, V, c, 20, out);
        return LF_OK;
    }
    double D[81], r[9];
    int rc = dexp_matrix(A, D, err);
    if (rc != LF_OK) return rc;
    for (int p = 0; p < 9; p++) {
        double s = 0;
        for (int q = 0; q < 9; q++) s += D[9 * p + q] * V[q];
        r[p] = s;
    }
    memcpy(out, r, sizeof r);
    return LF_OK;
}

int lf_gl3_dexpinv(const double A[9], const double V[9], double out[9], lf_error *err)
{
    if (small(A)) {
        series(A, V, bernoulli, 30, out);
        return LF_OK;
    }
    double D[81];
    int piv[9];
    int rc = dexp_matrix(A, D, err);
    if (rc != LF_OK) return rc;
    if (lf_lu_factor(9, D, piv) != LF_OK)
        return lf_error_set(err, LF_EDOMAIN, "gl3 dexpinv: dexp is singular at this A (an eigenvalue "
                                             "difference of A is a nonzero multiple of 2 pi i)");
    double x[9];
    memcpy(x, V, sizeof x);
    lf_lu_solve(9, D, piv, x);
    memcpy(out, x, sizeof x);
    return LF_OK;
}
