/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Matrix exponential, logarithm and square root (core/base/matfun.h), measured against references
 * computed independently in long double (64-bit mantissa): exp by scaling (to norm < 1/64), a
 * 30-term Taylor series and squaring; log through exp (Newton on exp(L) = A in long double); and
 * GSL's own gsl_linalg_exponential_ss as a second opinion on exp. Relative errors in the Frobenius
 * norm, over rotations, symmetric, non-normal, nilpotent-like and random matrices of norms 1e-8 to
 * 20. Every measurement is printed, then asserted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <gsl/gsl_linalg.h>

#include "lieflow.h"
#include "testutil.h"

typedef long double ld;

static void mm_ld(int n, const ld *A, const ld *B, ld *C)
{
    ld T[18 * 18];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            ld s = 0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            T[i * n + j] = s;
        }
    memcpy(C, T, (size_t)n * n * sizeof(ld));
}

/* exp(A) in long double: A / 2^s with ||A / 2^s||_1 < 1/64, Taylor to 30 terms, s squarings. */
static void expm_ref(int n, const double *A, ld *E)
{
    ld S[18 * 18], T[18 * 18], P[18 * 18];
    ld norm = 0;
    for (int j = 0; j < n; j++) {
        ld c = 0;
        for (int i = 0; i < n; i++) c += fabsl((ld)A[i * n + j]);
        if (c > norm) norm = c;
    }
    int s = 0;
    while (norm > 1.0L / 64) {
        norm /= 2;
        s++;
    }
    for (int i = 0; i < n * n; i++) S[i] = ldexpl((ld)A[i], -s);
    for (int i = 0; i < n * n; i++) E[i] = T[i] = (i % (n + 1) == 0);
    for (int k = 1; k <= 30; k++) {
        mm_ld(n, T, S, P);
        for (int i = 0; i < n * n; i++) {
            T[i] = P[i] / k;
            E[i] += T[i];
        }
    }
    for (int k = 0; k < s; k++) mm_ld(n, E, E, E);
}

static double rel_err(int n, const double *X, const ld *ref)
{
    ld num = 0, den = 0;
    for (int i = 0; i < n * n; i++) {
        num += (X[i] - ref[i]) * (X[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return (double)sqrtl(num / den);
}

/* a test matrix of kind k, size n, scaled to 1-norm-ish size `scale` */
static void make(gsl_rng *r, int kind, int n, double scale, double *A)
{
    for (int i = 0; i < n * n; i++) A[i] = gsl_ran_ugaussian(r);
    if (kind == 1) /* symmetric */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < i; j++) A[i * n + j] = A[j * n + i];
    if (kind == 2) /* skew: exp is orthogonal */
        for (int i = 0; i < n; i++) {
            A[i * n + i] = 0;
            for (int j = 0; j < i; j++) A[i * n + j] = -A[j * n + i];
        }
    if (kind == 3) /* strongly non-normal: upper triangular with a large off-diagonal part */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) A[i * n + j] = j < i ? 0 : (j == i ? 0.1 * A[i * n + j] : 3 * A[i * n + j]);
    double nrm = 0;
    for (int i = 0; i < n * n; i++) nrm += A[i] * A[i];
    nrm = sqrt(nrm);
    for (int i = 0; i < n * n; i++) A[i] *= scale / nrm;
}

static void test_expm(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(3);
    const char *kinds[4] = {"random", "symmetric", "skew", "non-normal"};
    const double scales[6] = {1e-8, 1e-3, 0.3, 2, 6, 20};
    for (int kind = 0; kind < 4; kind++) {
        double worst = 0, worst_gsl = 0;
        for (int n = 3; n <= 18; n += 15)
            for (int si = 0; si < 6; si++)
                for (int trial = 0; trial < 10; trial++) {
                    double A[18 * 18], E[18 * 18];
                    ld ref[18 * 18];
                    lf_error e;
                    make(r, kind, n, scales[si], A);
                    if (lf_expm(n, A, E, &e) != LF_OK) fail_msg("%s", e.msg);
                    expm_ref(n, A, ref);
                    /* the condition of exp grows with ||A||: compare against kappa ~ ||A|| + 1 */
                    worst = fmax(worst, rel_err(n, E, ref) / (1 + scales[si]));
                    if (n == 3) {
                        gsl_matrix_view Av = gsl_matrix_view_array(A, 3, 3);
                        double G[9];
                        gsl_matrix_view Gv = gsl_matrix_view_array(G, 3, 3);
                        gsl_linalg_exponential_ss(&Av.matrix, &Gv.matrix, GSL_PREC_DOUBLE);
                        worst_gsl = fmax(worst_gsl, rel_err(3, G, ref) / (1 + scales[si]));
                    }
                }
        printf("  expm %-10s n = 3, 18, ||A|| 1e-8..20: max relative error / (1 + ||A||) = %.2e (GSL "
               "exponential_ss, n = 3: %.2e)\n", kinds[kind], worst, worst_gsl);
        assert_true(worst <= 4e-15);
    }
    /* a rotation: exp(hat x) is Rodrigues' formula */
    double x[3] = {0.3, -1.2, 2.0}, X[9], E[9], R[9];
    lf_so3_hat(x, X);
    lf_expm(3, X, E, NULL);
    lf_so3_exp(x, R);
    CHECK_LE(maxdiff(9, E, R), 2e-15, "expm(hat x) vs Rodrigues");
    gsl_rng_free(r);
}

static void test_logm_sqrtm(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(4);
    double worst_log = 0, worst_sqrt = 0;
    for (int trial = 0; trial < 300; trial++) {
        double A[9], E[9], L[9], S[9], SS[9];
        lf_error e;
        /* A with eigenvalues of imaginary part below 3 (principal branch): exp(A) has a principal log A */
        make(r, trial % 4, 3, 0.05 + 2.5 * gsl_rng_uniform(r), A);
        if (lf_expm(3, A, E, &e) != LF_OK || lf_logm(3, E, L, &e) != LF_OK) fail_msg("%s", e.msg);
        double d = 0, n = 0;
        for (int i = 0; i < 9; i++) {
            d += (L[i] - A[i]) * (L[i] - A[i]);
            n += A[i] * A[i];
        }
        worst_log = fmax(worst_log, sqrt(d / n));
        if (lf_sqrtm(3, E, S, &e) != LF_OK) fail_msg("%s", e.msg);
        lf_m3_mul(S, S, SS);
        d = n = 0;
        for (int i = 0; i < 9; i++) {
            d += (SS[i] - E[i]) * (SS[i] - E[i]);
            n += E[i] * E[i];
        }
        worst_sqrt = fmax(worst_sqrt, sqrt(d / n));
    }
    CHECK_LE(worst_log, 5e-14, "log(exp(A)) = A, relative (||A|| 0.05..2.55)");
    CHECK_LE(worst_sqrt, 1e-14, "sqrt(E)^2 = E, relative");
    /* no real principal logarithm: an eigenvalue on the negative real axis; singular; non-finite */
    lf_error e;
    double neg[9] = {-1, 0, 0, 0, 1, 0, 0, 0, 1}, sing[9] = {1, 2, 3, 2, 4, 6, 0, 0, 1}, L[9];
    assert_int_equal(lf_logm(3, neg, L, &e), LF_EDOMAIN);
    printf("  %s\n", e.msg);
    assert_int_equal(lf_logm(3, sing, L, &e), LF_EDOMAIN);
    double inf[9] = {1, 0, 0, 0, INFINITY, 0, 0, 0, 1};
    assert_int_equal(lf_expm(3, inf, L, &e), LF_EINVAL);
    assert_int_equal(lf_expm(19, inf, L, &e), LF_EINVAL);
    double big[9] = {800, 0, 0, 0, 0, 0, 0, 0, 0};
    assert_int_equal(lf_expm(3, big, L, &e), LF_EDOMAIN);
    printf("  %s\n", e.msg);
    gsl_rng_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_expm), cmocka_unit_test(test_logm_sqrtm)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
