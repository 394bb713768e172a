/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — matrix exponential, logarithm and square root (see matfun.h for the algorithms). */
#include "base/matfun.h"

#include <math.h>
#include <string.h>

#include "base/linalg.h"
#include "base/dense.h"

#define NN (LF_MATFUN_MAXN * LF_MATFUN_MAXN)

static int bad_n(int n, const char *fn, lf_error *err)
{
    if (n >= 1 && n <= LF_MATFUN_MAXN) return 0;
    lf_error_set(err, LF_EINVAL, "%s: matrix size %d outside 1..%d", fn, n, LF_MATFUN_MAXN);
    return 1;
}

static int finite_n(int n, const double *A)
{
    for (int i = 0; i < n * n; i++)
        if (!isfinite(A[i])) return 0;
    return 1;
}

/* C = A B (C must not alias A or B) */
static void mm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}

static double norm1(int n, const double *A)
{
    double m = 0;
    for (int j = 0; j < n; j++) {
        double s = 0;
        for (int i = 0; i < n; i++) s += fabs(A[i * n + j]);
        if (s > m) m = s;
    }
    return m;
}

static void identity(int n, double *I)
{
    memset(I, 0, (size_t)n * n * sizeof(double));
    for (int i = 0; i < n; i++) I[i * n + i] = 1;
}

/* X = A^{-1} B by LU with partial pivoting (A is overwritten). LF_EDOMAIN if A is singular. */
static int solve_n(int n, double *A, const double *B, double *X)
{
    int piv[LF_MATFUN_MAXN];
    if (lf_lu_factor(n, A, piv) != LF_OK) return LF_EDOMAIN;
    double col[LF_MATFUN_MAXN];
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < n; i++) col[i] = B[i * n + j];
        lf_lu_solve(n, A, piv, col);
        for (int i = 0; i < n; i++) X[i * n + j] = col[i];
    }
    return LF_OK;
}

/* ------------------------------------------------------------------------------------ exp */

/* Higham (2005), Table 2.3: the largest 1-norm for which the degree-m Padé approximant of the
 * exponential has backward error below 2^-53, and the approximants' coefficients b_0..b_m. */
static const double theta[5] = {1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1,
                                2.097847961257068e0, 5.371920351148152e0};
static const int degree[5] = {3, 5, 7, 9, 13};
static const double b3[] = {120, 60, 12, 1};
static const double b5[] = {30240, 15120, 3360, 420, 30, 1};
static const double b7[] = {17297280, 8648640, 1995840, 277200, 25200, 1512, 56, 1};
static const double b9[] = {17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880., 3960., 90., 1.};
static const double b13[] = {64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
                             129060195264000., 10559470521600., 670442572800., 33522128640.,
                             1323241920., 40840800., 960960., 16380., 182., 1.};

/* Padé approximant r_m(A) = (V - U)^{-1} (V + U) with U odd, V even in A. */
static int pade(int n, const double *A, int m, double *R)
{
    const int nn = n * n;
    double A2[NN], P[NN], U[NN], V[NN], T[NN], I[NN];
    identity(n, I);
    mm(n, A, A, A2);
    if (m == 13) {
        double A4[NN], A6[NN];
        const double *b = b13;
        mm(n, A2, A2, A4);
        mm(n, A4, A2, A6);
        for (int i = 0; i < nn; i++) T[i] = b[13] * A6[i] + b[11] * A4[i] + b[9] * A2[i];
        mm(n, A6, T, P);
        for (int i = 0; i < nn; i++) T[i] = P[i] + b[7] * A6[i] + b[5] * A4[i] + b[3] * A2[i] + b[1] * I[i];
        mm(n, A, T, U);
        for (int i = 0; i < nn; i++) T[i] = b[12] * A6[i] + b[10] * A4[i] + b[8] * A2[i];
        mm(n, A6, T, P);
        for (int i = 0; i < nn; i++) V[i] = P[i] + b[6] * A6[i] + b[4] * A4[i] + b[2] * A2[i] + b[0] * I[i];
    } else {
        const double *b = m == 3 ? b3 : m == 5 ? b5 : m == 7 ? b7 : b9;
        /* powers A^0, A^2, ..., A^(m-1): U = A sum_{j odd} b_j A^{j-1}, V = sum_{j even} b_j A^j */
        double Pk[NN];
        memcpy(Pk, I, (size_t)nn * sizeof(double));
        for (int i = 0; i < nn; i++) {
            T[i] = b[1] * I[i];
            V[i] = b[0] * I[i];
        }
        for (int j = 2; j <= m; j += 2) {
            mm(n, Pk, A2, P);
            memcpy(Pk, P, (size_t)nn * sizeof(double));
            for (int i = 0; i < nn; i++) {
                V[i] += b[j] * Pk[i];
                T[i] += b[j + 1] * Pk[i];
            }
        }
        mm(n, A, T, U);
    }
    for (int i = 0; i < nn; i++) {
        P[i] = V[i] - U[i];
        T[i] = V[i] + U[i];
    }
    return solve_n(n, P, T, R);
}

int lf_expm(int n, const double *A, double *E, lf_error *err)
{
    if (bad_n(n, "expm", err)) return LF_EINVAL;
    if (!finite_n(n, A)) return lf_error_set(err, LF_EINVAL, "expm: the matrix has a non-finite entry");
    const int nn = n * n;
    double As[NN], R[NN], T[NN];
    const double a = norm1(n, A);
    int s = 0, m = 13;
    for (int k = 0; k < 5; k++)
        if (a <= theta[k]) {
            m = degree[k];
            break;
        }
    if (a > theta[4]) {
        int e;
        double f = frexp(a / theta[4], &e); /* a/theta = f 2^e, f in [0.5, 1) */
        s = e - (f == 0.5);
        if (s > 1100) return lf_error_set(err, LF_EDOMAIN, "expm: the matrix is too large (1-norm %g): exp overflows", a);
    }
    for (int i = 0; i < nn; i++) As[i] = ldexp(A[i], -s);
    if (pade(n, As, m, R) != LF_OK)
        return lf_error_set(err, LF_EDOMAIN, "expm: singular Padé denominator (1-norm %g)", a);
    for (int k = 0; k < s; k++) {
        mm(n, R, R, T);
        memcpy(R, T, (size_t)nn * sizeof(double));
    }
    if (!finite_n(n, R)) return lf_error_set(err, LF_EDOMAIN, "expm: the exponential overflows (1-norm %g)", a);
    memcpy(E, R, (size_t)nn * sizeof(double));
    return LF_OK;
}

/* ------------------------------------------------------------------------------------ sqrt */

int lf_sqrtm(int n, const double *A, double *S, lf_error *err)
{
    if (bad_n(n, "sqrtm", err)) return LF_EINVAL;
    if (!finite_n(n, A)) return lf_error_set(err, LF_EINVAL, "sqrtm: the matrix has a non-finite entry");
    const int nn = n * n;
    double M[NN], Y[NN], Mi[NN], T[NN], I[NN], W[NN];
    identity(n, I);
    memcpy(M, A, (size_t)nn * sizeof(double));
    memcpy(Y, A, (size_t)nn * sizeof(double));
    /* product form of Denman–Beavers: M_{k+1} = (I + (M_k + M_k^{-1})/2)/2, Y_{k+1} = Y_k (I + M_k^{-1})/2;
     * M_k -> I and Y_k -> A^{1/2} quadratically. */
    for (int it = 0; it < 100; it++) {
        memcpy(W, M, (size_t)nn * sizeof(double));
        if (solve_n(n, W, I, Mi) != LF_OK)
            return lf_error_set(err, LF_EDOMAIN, "sqrtm: singular iterate (the matrix is singular or has an "
                                                 "eigenvalue on the negative real axis)");
        for (int i = 0; i < nn; i++) W[i] = 0.5 * (I[i] + Mi[i]);
        mm(n, Y, W, T);
        memcpy(Y, T, (size_t)nn * sizeof(double));
        double d = 0;
        for (int i = 0; i < nn; i++) {
            M[i] = 0.5 * (I[i] + 0.5 * (M[i] + Mi[i]));
            d = fmax(d, fabs(M[i] - I[i]));
        }
        if (!finite_n(n, Y)) break;
        if (d <= 4e-16 * n) {
            memcpy(S, Y, (size_t)nn * sizeof(double));
            return LF_OK;
        }
    }
    return lf_error_set(err, LF_EDOMAIN, "sqrtm: no convergence (the matrix has an eigenvalue on or near the "
                                         "closed negative real axis)");
}

/* ------------------------------------------------------------------------------------ log */

/* 8-point Gauss–Legendre rule on [0, 1]: log(I + E) = sum_i w_i E (I + x_i E)^{-1}; for
 * ||E|| <= 1/4 its error is below 1e-19 (the [8/8] Padé approximant of log(1 + x)). */
static const double gl_x[8] = {0.019855071751231856, 0.10166676129318664, 0.2372337950418355, 0.4082826787521751,
                               0.5917173212478249,   0.7627662049581645,  0.8983332387068134, 0.9801449282487681};
static const double gl_w[8] = {0.05061426814518813, 0.11119051722668724, 0.15685332293894363, 0.18134189168918100,
                               0.18134189168918100, 0.15685332293894363, 0.11119051722668724, 0.05061426814518813};

int lf_logm(int n, const double *A, double *L, lf_error *err)
{
    if (bad_n(n, "logm", err)) return LF_EINVAL;
    if (!finite_n(n, A)) return lf_error_set(err, LF_EINVAL, "logm: the matrix has a non-finite entry");
    const int nn = n * n;
    double X[NN], E[NN], T[NN], Q[NN], Sum[NN];
    memcpy(X, A, (size_t)nn * sizeof(double));
    int k = 0;
    for (;;) {
        for (int i = 0; i < nn; i++) E[i] = X[i] - (i % (n + 1) == 0);
        if (norm1(n, E) <= 0.25) break;
        if (k >= 60 || lf_sqrtm(n, X, X, err) != LF_OK)
            return lf_error_set(err, LF_EDOMAIN, "logm: no principal logarithm (the matrix is singular or has an "
                                                 "eigenvalue on or near the closed negative real axis)");
        k++;
    }
    memset(Sum, 0, (size_t)nn * sizeof(double));
    for (int q = 0; q < 8; q++) {
        /* Sum += w E (I + x E)^{-1} = w ((I + x E)^{-T} E^T)^T; E and (I + xE)^{-1} commute, so
         * E (I + xE)^{-1} = (I + xE)^{-1} E */
        for (int i = 0; i < nn; i++) T[i] = gl_x[q] * E[i] + (i % (n + 1) == 0);
        if (solve_n(n, T, E, Q) != LF_OK) return lf_error_set(err, LF_EDOMAIN, "logm: singular quadrature matrix");
        for (int i = 0; i < nn; i++) Sum[i] += gl_w[q] * Q[i];
    }
    for (int i = 0; i < nn; i++) L[i] = ldexp(Sum[i], k);
    return LF_OK;
}
