/* lieflow — GL(3): exp, log and the exact dexp / dexpinv (gl3.h). */
#include "gl3.h"

#include <string.h>

#include "linalg.h"
#include "matfun.h"

int lf_gl3_exp(const double A[9], double Y[9], lf_error *err) { return lf_expm(3, A, Y, err); }

int lf_gl3_log(const double Y[9], double A[9], lf_error *err) { return lf_logm(3, Y, A, err); }

int lf_gl3_dexp_matrix(const double A[9], double D[81], lf_error *err)
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

int lf_gl3_dexp(const double A[9], const double V[9], double out[9], lf_error *err)
{
    double D[81], r[9];
    int rc = lf_gl3_dexp_matrix(A, D, err);
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
    double D[81];
    int piv[9];
    int rc = lf_gl3_dexp_matrix(A, D, err);
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
