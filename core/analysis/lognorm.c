/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the logarithmic norm (lognorm.h): Cholesky and the symmetric eigensolver of GSL. */
#include "analysis/lognorm.h"

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/gsl_guard_internal.h"

int lf_lognorm(int n, const double *A, const double *G, double *mu, lf_error *err)
{
    if (n < 1 || n > 4096) return lf_error_set(err, LF_EINVAL, "lognorm: the dimension must be 1..4096, got %d", n);
    double amax = 0, gmax = 0;
    for (int i = 0; i < n * n; i++) {
        if (!isfinite(A[i])) return lf_error_set(err, LF_EINVAL, "lognorm: A[%d][%d] = %g is not finite", i / n + 1, i % n + 1, A[i]);
        amax = fmax(amax, fabs(A[i]));
        if (G) {
            if (!isfinite(G[i]))
                return lf_error_set(err, LF_EINVAL, "lognorm: G[%d][%d] = %g is not finite", i / n + 1, i % n + 1, G[i]);
            gmax = fmax(gmax, fabs(G[i]));
        }
    }
    /* mu_G(c A) = c mu_G(A) for c > 0, and mu_G does not change when G is scaled: entries beyond
     * 1e150 or below 1e-150 are scaled by a power of two (exactly) so that the products below neither
     * overflow nor underflow; other matrices are used as given (bit-for-bit the unscaled results) */
    const double sa = (amax > 1e150 || (amax > 0 && amax < 1e-150)) ? ldexp(1.0, ilogb(amax)) : 1.0;
    const double sg = (gmax > 1e150 || (gmax > 0 && gmax < 1e-150)) ? ldexp(1.0, ilogb(gmax)) : 1.0;
    if (G)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < i; j++)
                if (fabs(G[i * n + j] - G[j * n + i]) > 1e-12 * gmax)
                    return lf_error_set(err, LF_EINVAL, "lognorm: the metric G is not symmetric (G[%d][%d] = %g, "
                                                        "G[%d][%d] = %g)", i + 1, j + 1, G[i * n + j], j + 1, i + 1,
                                        G[j * n + i]);
    gsl_matrix *M = gsl_matrix_alloc((size_t)n, (size_t)n), *Lm = G ? gsl_matrix_alloc((size_t)n, (size_t)n) : NULL;
    gsl_vector *ev = gsl_vector_alloc((size_t)n);
    gsl_eigen_symm_workspace *w = gsl_eigen_symm_alloc((size_t)n);
    int rc = LF_OK;
    lf_gsl_guard guard;
    lf_gsl_guard_begin(&guard);
    if (!M || (G && !Lm) || !ev || !w) {
        rc = lf_error_set(err, LF_ENOMEM, "lognorm: out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) gsl_matrix_set(M, (size_t)i, (size_t)j, A[i * n + j] / sa);
    if (G) {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) gsl_matrix_set(Lm, (size_t)i, (size_t)j, G[i * n + j] / sg);
        if (gsl_linalg_cholesky_decomp1(Lm) != GSL_SUCCESS) {
            rc = lf_error_set(err, LF_EINVAL, "lognorm: the metric G is not positive definite (Cholesky fails)");
            goto done;
        }
        /* M = L^T A L^-T: M <- L^T M (upper triangular L^T), then M <- M L^-T (solve with L^T from the right) */
        gsl_blas_dtrmm(CblasLeft, CblasLower, CblasTrans, CblasNonUnit, 1.0, Lm, M);
        gsl_blas_dtrsm(CblasRight, CblasLower, CblasTrans, CblasNonUnit, 1.0, Lm, M);
    }
    /* symmetric part */
    double mmax = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            double s = 0.5 * (gsl_matrix_get(M, (size_t)i, (size_t)j) + gsl_matrix_get(M, (size_t)j, (size_t)i));
            gsl_matrix_set(M, (size_t)i, (size_t)j, s);
            gsl_matrix_set(M, (size_t)j, (size_t)i, s);
            mmax = fmax(mmax, fabs(s));
        }
    /* Entries below 1e-30 of the largest are set to 0: by Weyl's inequality that moves every
     * eigenvalue by less than n 1e-30 max|M|, far below round-off, and it keeps subnormal numbers out of
     * gsl_eigen_symm, which loses accuracy on them (found by the C API fuzzer: diag(pi) plus subnormal
     * entries gave mu = pi (1 + 1e-11)). */
    for (int i = 0; i < n * n; i++)
        if (fabs(M->data[(size_t)(i / n) * M->tda + (size_t)(i % n)]) < 1e-30 * mmax)
            M->data[(size_t)(i / n) * M->tda + (size_t)(i % n)] = 0;
    if (gsl_eigen_symm(M, ev, w) != GSL_SUCCESS) {
        rc = lf_error_set(err, LF_ENOCONV, "lognorm: the symmetric eigensolver failed");
        goto done;
    }
    *mu = sa * gsl_vector_max(ev);
    if (!isfinite(*mu))
        rc = lf_error_set(err, LF_EDOMAIN, "lognorm: the result is not finite (%g): A (largest entry %g) is too large "
                                           "or the metric G too ill-conditioned for double precision",
                          *mu, amax);
done:
    if (rc == LF_OK && guard.gsl_errno) rc = lf_error_set(err, LF_EDOMAIN, "lognorm: %s", guard.reason);
    lf_gsl_guard_end(&guard);
    if (M) gsl_matrix_free(M);
    if (Lm) gsl_matrix_free(Lm);
    if (ev) gsl_vector_free(ev);
    if (w) gsl_eigen_symm_free(w);
    return rc;
}
