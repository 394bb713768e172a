/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the slow paths of the 3-vector / 3x3 helpers in linalg.h that must not overflow or
 * underflow for any finite input: norms, determinant, inverse (scaling by powers of two, exact). */
#include "base/linalg.h"
#include "base/dense.h"

/* ---------------------------------------------------------------- scaled (overflow-free) variants */

/* Largest |a_i|; NaN if some a_i is NaN (fmax would ignore it). */
static double maxabs_nan(int n, const double *a)
{
    double m = 0;
    for (int i = 0; i < n; i++) {
        double x = fabs(a[i]);
        if (isnan(x)) return x;
        if (x > m) m = x;
    }
    return m;
}

/* sqrt(sum a_i^2) with a scaled by 2^-e, e the exponent of max |a_i| (exact), then scaled back:
 * the same roundings as the plain formula on a machine with an unbounded exponent. */
static double norm_scaled(int n, const double *a)
{
    double m = maxabs_nan(n, a);
    if (m == 0 || !isfinite(m)) return m;
    int e;
    frexp(m, &e);
    double s = 0;
    for (int i = 0; i < n; i++) {
        double x = ldexp(a[i], -e);
        s += x * x;
    }
    return ldexp(sqrt(s), e);
}

double lf_v3_norm_scaled(const double *a) { return norm_scaled(3, a); }
double lf_m3_fnorm_scaled(const double *A) { return norm_scaled(9, A); }

double lf_m3_det_scaled(const double *A)
{
    double S[9];
    int etot = 0;
    for (int r = 0; r < 3; r++) {
        double m = maxabs_nan(3, A + 3 * r);
        if (isnan(m)) return m;
        if (m == 0) return 0; /* a zero row */
        int e = 0;
        if (isfinite(m)) frexp(m, &e);
        for (int c = 0; c < 3; c++) S[3 * r + c] = ldexp(A[3 * r + c], -e);
        etot += e;
    }
    return ldexp(lf_m3_det_raw(S), etot);
}

int lf_m3_inverse_scaled(const double *A, double *Ai, double *rcond)
{
    double m = maxabs_nan(9, A);
    if (!isfinite(m)) {
        if (rcond) *rcond = NAN;
        return LF_EDOMAIN;
    }
    if (m == 0) {
        if (rcond) *rcond = 0;
        return LF_EDOMAIN;
    }
    int e;
    frexp(m, &e);
    /* LU with partial pivoting (backward stable: the residual of A Ai - I stays near u cond(A);
     * the adjugate formula, kept in lf_m3_inverse for the Newton steps, loses u cond^2 on nearly
     * singular matrices, and its condition estimate with it) */
    double S[9], LU[9], T[9];
    int piv[3];
    for (int i = 0; i < 9; i++) S[i] = ldexp(A[i], -e);
    memcpy(LU, S, sizeof LU);
    if (lf_lu_factor(3, LU, piv) != LF_OK) {
        if (rcond) *rcond = 0;
        return LF_EDOMAIN;
    }
    for (int j = 0; j < 3; j++) {
        double b[3] = {j == 0, j == 1, j == 2};
        lf_lu_solve(3, LU, piv, b);
        T[j] = b[0]; T[3 + j] = b[1]; T[6 + j] = b[2];
    }
    double ti = lf_m3_fnorm(T), rc = 1 / (lf_m3_fnorm(S) * ti);
    if (rcond) *rcond = isfinite(ti) ? rc : 0;
    if (!isfinite(ti) || !(rc >= 1e-15)) return LF_EDOMAIN;
    for (int i = 0; i < 9; i++) {
        T[i] = ldexp(T[i], -e);
        if (!isfinite(T[i])) return LF_EDOMAIN; /* the inverse itself overflows */
    }
    memcpy(Ai, T, sizeof T);
    return LF_OK;
}
