/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of core/lie/so3.c: every map measured against an independent reference or identity.
 * Each test prints the worst error it measured, then asserts it against the bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/linalg.h"
#include "lie/so3.h"

/* random vector with |x| = 10^U(lo, hi) */
static void rand_vec(gsl_rng *r, double lo, double hi, double x[3])
{
    rand_dir(r, x);
    lf_v3_scale(x, pow(10, lo + (hi - lo) * gsl_rng_uniform(r)), x);
}

/* Reference exp(hat(x)) in quad precision (__float128 in software, so it stays exact under
 * valgrind, which runs long double as double) or else long double: scaling and squaring of a
 * 30-term Taylor series. */
#ifdef __SIZEOF_FLOAT128__
typedef __float128 ref_t;
#else
typedef long double ref_t;
#endif
static void expm_ref(const double x[3], double R[9])
{
    ref_t X[9] = {0, -x[2], x[1], x[2], 0, -x[0], -x[1], x[0], 0}, E[9], T[9], P[9], sc = 1;
    int s = 0;
    for (double t = lf_v3_norm(x); t > 0.25; t /= 2) { s++; sc /= 2; }
    for (int i = 0; i < 9; i++) X[i] *= sc;
    for (int i = 0; i < 9; i++) E[i] = T[i] = (i % 4 == 0);
    for (int k = 1; k <= 30; k++) { /* T <- T X / k, E += T */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                P[3 * i + j] = (T[3 * i] * X[j] + T[3 * i + 1] * X[3 + j] + T[3 * i + 2] * X[6 + j]) / k;
        for (int i = 0; i < 9; i++) { T[i] = P[i]; E[i] += P[i]; }
    }
    while (s-- > 0) {
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                P[3 * i + j] = E[3 * i] * E[j] + E[3 * i + 1] * E[3 + j] + E[3 * i + 2] * E[6 + j];
        memcpy(E, P, sizeof E);
    }
    for (int i = 0; i < 9; i++) R[i] = (double)E[i];
}

/* ------------------------------------------------------------------------------------------ */

static void test_hat_vee(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(1);
    double worst = 0;
    for (int k = 0; k < 1000; k++) {
        double a[3], b[3], W[9], c1[3], c2[3], w[3];
        rand_vec(r, -3, 3, a);
        rand_vec(r, -3, 3, b);
        lf_so3_hat(a, W);
        lf_m3_apply(W, b, c1);
        lf_v3_cross(a, b, c2);
        worst = fmax(worst, maxdiff(3, c1, c2) / (lf_v3_norm(a) * lf_v3_norm(b)));
        lf_so3_vee(W, w);
        assert_memory_equal(w, a, sizeof w); /* exact */
        double Wt[9];
        lf_m3_transpose(W, Wt);
        for (int i = 0; i < 9; i++) assert_true(W[i] == -Wt[i]);
    }
    CHECK_LE(worst, 4e-16, "hat(a) b vs a x b, max rel err");
    /* vee of a general matrix = vee of its skew part */
    double M[9] = {1, 2, 3, 4, 5, 6, 7, 8, 10}, w[3];
    lf_so3_vee(M, w);
    assert_true(w[0] == 0.5 * (8 - 6) && w[1] == 0.5 * (3 - 7) && w[2] == 0.5 * (4 - 2));
    gsl_rng_free(r);
}

static void test_exp_reference(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(2);
    double worst = 0, orth = 0;
    for (int k = 0; k < 20000; k++) {
        double x[3], R[9], Rr[9];
        if (k < 10000) rand_vec(r, -300, 0, x);
        else rand_vec(r, 0, log10(PI), x); /* 1 .. pi */
        lf_so3_exp(x, R);
        expm_ref(x, Rr);
        /* off-diagonal entries are O(|x|): error relative to min(1, |x|); the diagonal ~1 */
        for (int i = 0; i < 9; i++)
            worst = fmax(worst, fabs(R[i] - Rr[i]) / (i % 4 ? fmin(1, norm_scaled(x)) : 1));
        orth = fmax(orth, lf_so3_orth_error(R));
    }
    CHECK_LE(worst, 2e-15, "exp vs quad expm, max err (off-diag / min(1,|x|))");
    CHECK_LE(orth, 4e-15, "exp ||R^T R - I||, max");
    double z[3] = {0, 0, 0}, R[9], I[9];
    lf_so3_exp(z, R);
    lf_m3_identity(I);
    assert_memory_equal(R, I, sizeof R);
    gsl_rng_free(r);
}

static void test_log_exp_small(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(3);
    double worst = 0;
    for (int k = 0; k < 30000; k++) {
        double v[3], R[9], w[3];
        rand_vec(r, -300, 0, v);
        lf_so3_exp(v, R);
        lf_so3_log(R, w);
        worst = fmax(worst, maxdiff(3, w, v) / norm_scaled(v));
    }
    CHECK_LE(worst, 1e-13, "log(exp(v)), |v| in [1e-300,1], max rel err");
    /* the named tiny angles, with every axis sign */
    static const double tiny[] = {1e-8, 1e-12, 1e-300, 1e-307, 5e-324};
    double wt = 0;
    for (size_t i = 0; i < sizeof tiny / sizeof *tiny; i++)
        for (int k = 0; k < 50; k++) {
            double v[3], R[9], w[3];
            rand_dir(r, v);
            lf_v3_scale(v, tiny[i], v);
            lf_so3_exp(v, R);
            lf_so3_log(R, w);
            if (tiny[i] >= 1e-300) wt = fmax(wt, maxdiff(3, w, v) / norm_scaled(v));
            else assert_true(maxdiff(3, w, v) <= 1e-16 * tiny[i] + 5e-324); /* subnormal: absolute */
        }
    CHECK_LE(wt, 1e-15, "log(exp(v)), |v| = 1e-8,1e-12,1e-300,1e-307, max rel err");
    double I[9], w[3];
    lf_m3_identity(I);
    lf_so3_log(I, w);
    assert_true(w[0] == 0 && w[1] == 0 && w[2] == 0);
    gsl_rng_free(r);
}

static void test_log_exp_large(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(4);
    double worst = 0, wpi = 0;
    for (int k = 0; k < 30000; k++) {
        double v[3], R[9], w[3];
        rand_dir(r, v);
        /* |v| uniform in [1, pi - 1e-9], plus |v| = pi - 1e-9 exactly */
        double t = k % 10 == 0 ? PI - 1e-9 : 1 + (PI - 1e-9 - 1) * gsl_rng_uniform(r);
        lf_v3_scale(v, t, v);
        lf_so3_exp(v, R);
        lf_so3_log(R, w);
        double e = maxdiff(3, w, v);
        worst = fmax(worst, e);
        if (k % 10 == 0) wpi = fmax(wpi, e);
    }
    CHECK_LE(worst, 1e-12, "log(exp(v)), |v| in [1, pi-1e-9], max abs err");
    CHECK_LE(wpi, 1e-12, "log(exp(v)), |v| = pi-1e-9, max abs err");
    /* exp(log R) = R for Haar-random rotations */
    double we = 0;
    for (unsigned long s = 1; s <= 20000; s++) {
        double R[9], w[3], R2[9];
        assert_int_equal(lf_so3_random(s, R, NULL), LF_OK);
        lf_so3_log(R, w);
        lf_so3_exp(w, R2);
        we = fmax(we, maxdiff(9, R, R2));
        assert_true(lf_v3_norm(w) <= PI);
    }
    CHECK_LE(we, 2e-15, "exp(log(R)), R Haar-random, max abs err");
    gsl_rng_free(r);
}

static void test_log_at_pi(void **state)
{
    (void)state;
    /* diagonal rotations by pi: the axis is exact and the first component positive */
    for (int a = 0; a < 3; a++) {
        double R[9] = {-1, 0, 0, 0, -1, 0, 0, 0, -1}, w[3], R2[9];
        R[4 * a] = 1;
        lf_so3_log(R, w);
        for (int i = 0; i < 3; i++) assert_true(w[i] == (i == a ? PI : 0));
        lf_so3_exp(w, R2);
        assert_true(maxdiff(9, R, R2) <= 1e-15);
    }
    /* random axes: R = 2 n n^T - I (exactly symmetric: angle exactly pi) */
    gsl_rng *r = new_rng(5);
    double we = 0, wang = 0, wax = 0;
    for (int k = 0; k < 10000; k++) {
        double n[3], R[9], w[3], R2[9];
        rand_dir(r, n);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) R[3 * i + j] = 2 * n[i] * n[j] - (i == j);
        lf_so3_log(R, w);
        lf_so3_exp(w, R2);
        we = fmax(we, maxdiff(9, R, R2));
        wang = fmax(wang, fabs(lf_v3_norm(w) - PI));
        /* sign convention: first nonzero component positive, so w = +-pi n with that sign */
        double sg = n[0] > 0 ? 1 : -1, m[3];
        lf_v3_scale(n, sg * PI, m);
        assert_true(w[0] > 0);
        wax = fmax(wax, maxdiff(3, w, m));
    }
    CHECK_LE(we, 2e-15, "exp(log(R)) at angle pi, random axes, max abs err");
    CHECK_LE(wang, 4e-15, "| |log R| - pi | at angle pi, max");
    CHECK_LE(wax, 2e-15, "log R - pi n at angle pi, max abs err");
    /* R = exp(pi n) from the library (not exactly symmetric) */
    double we2 = 0;
    for (int k = 0; k < 10000; k++) {
        double n[3], R[9], w[3], R2[9];
        rand_dir(r, n);
        lf_v3_scale(n, PI, n);
        lf_so3_exp(n, R);
        lf_so3_log(R, w);
        lf_so3_exp(w, R2);
        we2 = fmax(we2, maxdiff(9, R, R2));
    }
    CHECK_LE(we2, 2e-15, "exp(log(exp(pi n))), max abs err");
    gsl_rng_free(r);
}

/* Central difference of e -> F(x + e d) F(x)^T at e = 0, returned as a vector (vee). */
static void fd_right(void (*F)(const double *, double *), const double x[3], const double d[3],
                     double h, double out[3])
{
    double xp[3], xm[3], Rp[9], Rm[9], R0[9], A[9], B[9];
    lf_v3_axpy(x, h, d, xp);
    lf_v3_axpy(x, -h, d, xm);
    F(xp, Rp);
    F(xm, Rm);
    F(x, R0);
    lf_m3_mult(Rp, R0, A);
    lf_m3_mult(Rm, R0, B);
    lf_m3_sub(A, B, A);
    lf_m3_scale(A, 0.5 / h, A);
    /* A should be skew: check, then take vee */
    double At[9];
    lf_m3_transpose(A, At);
    lf_m3_add(A, At, At);
    assert_true(lf_m3_fnorm(At) <= 1e-9);
    lf_so3_vee(A, out);
}

static void test_dexp_dcay_fd(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(6);
    double wexp = 0, wcay = 0, wexpi = 0, wcayi = 0, left_exp = 1e300, left_cay = 1e300;
    for (int k = 0; k < 2000; k++) {
        double x[3], d[3], fd[3], D[9], Dd[3], Di[9], y[3];
        rand_vec(r, k < 200 ? -12 : -1, log10(3.0), x);
        rand_dir(r, d);
        /* exp */
        fd_right(lf_so3_exp, x, d, 1e-5, fd);
        lf_so3_dexp(x, D);
        lf_m3_apply(D, d, Dd);
        wexp = fmax(wexp, maxdiff(3, fd, Dd));
        lf_so3_dexpinv(x, Di);
        lf_m3_apply(Di, fd, y);
        wexpi = fmax(wexpi, maxdiff(3, y, d));
        /* the left-trivialized derivative would be dexp(-x): the test must tell them apart */
        if (lf_v3_norm(x) > 0.5) {
            double mx[3], Dl[9], Dld[3];
            lf_v3_scale(x, -1, mx);
            lf_so3_dexp(mx, Dl);
            lf_m3_apply(Dl, d, Dld);
            left_exp = fmin(left_exp, maxdiff(3, fd, Dld) / lf_v3_norm(x));
        }
        /* cay */
        fd_right(lf_so3_cay, x, d, 1e-5, fd);
        lf_so3_dcay(x, D);
        lf_m3_apply(D, d, Dd);
        wcay = fmax(wcay, maxdiff(3, fd, Dd));
        lf_so3_dcayinv(x, Di);
        lf_m3_apply(Di, fd, y);
        wcayi = fmax(wcayi, maxdiff(3, y, d));
        if (lf_v3_norm(x) > 0.5) {
            double mx[3], Dl[9], Dld[3];
            lf_v3_scale(x, -1, mx);
            lf_so3_dcay(mx, Dl);
            lf_m3_apply(Dl, d, Dld);
            left_cay = fmin(left_cay, maxdiff(3, fd, Dld) / lf_v3_norm(x));
        }
    }
    CHECK_LE(wexp, 1e-9, "dexp(x) d vs central FD of exp(x+ed)exp(x)^T, max");
    CHECK_LE(wexpi, 1e-9, "dexpinv(x) FD - d, max");
    CHECK_LE(wcay, 1e-9, "dcay(x) d vs central FD of cay(x+ed)cay(x)^T, max");
    CHECK_LE(wcayi, 1e-9, "dcayinv(x) FD - d, max");
    /* sanity of the test itself: the wrong (left) convention is far off */
    printf("  (left-trivialized variants differ by >= %.2f |x| and %.2f |x|)\n", left_exp, left_cay);
    assert_true(left_exp > 1e-3 && left_cay > 1e-3);
    gsl_rng_free(r);
}

static void test_dexp_dexpinv_identity(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(7);
    double we = 0, wc = 0, I[9];
    lf_m3_identity(I);
    for (int k = 0; k < 40000; k++) {
        double x[3], A[9], B[9], P[9], Q[9];
        /* exp: |x| in [1e-300, 6] (dexpinv is singular at 2 pi); cay: any size */
        rand_vec(r, -300, log10(6.0), x);
        lf_so3_dexp(x, A);
        lf_so3_dexpinv(x, B);
        lf_m3_mul(A, B, P);
        lf_m3_mul(B, A, Q);
        we = fmax(we, fmax(maxdiff(9, P, I), maxdiff(9, Q, I)));
        rand_vec(r, -300, 3, x);
        lf_so3_dcay(x, A);
        lf_so3_dcayinv(x, B);
        lf_m3_mul(A, B, P);
        lf_m3_mul(B, A, Q);
        wc = fmax(wc, fmax(maxdiff(9, P, I), maxdiff(9, Q, I)));
    }
    CHECK_LE(we, 1e-13, "dexp(x) dexpinv(x) - I, |x| <= 6, max");
    CHECK_LE(wc, 1e-13, "dcay(x) dcayinv(x) - I, |x| <= 1e3, max");
    /* across the series/closed-form switch points (1.5 for (t-sin t)/t^3, 2 for the cot term)
     * the product stays at round-off */
    double ws = 0;
    static const double ts[] = {1.5, 2.0};
    for (int i = 0; i < 2; i++)
        for (int s = -1; s <= 1; s += 2) {
            double x[3], A[9], B[9], P[9];
            rand_dir(r, x);
            lf_v3_scale(x, ts[i] * (1 + s * 1e-15), x);
            lf_so3_dexp(x, A);
            lf_so3_dexpinv(x, B);
            lf_m3_mul(A, B, P);
            ws = fmax(ws, maxdiff(9, P, I));
        }
    CHECK_LE(ws, 1e-15, "dexp dexpinv - I at the series thresholds, max");
    gsl_rng_free(r);
}

/* Reference dexp(x) = sum_k hat(x)^k/(k+1)! (right-trivialized) in quad precision, and
 * dexpinv(x) as its inverse (adjugate), both rounded to double. */
static void dexp_ref(const double x[3], double D[9], double Di[9])
{
    ref_t X[9] = {0, -x[2], x[1], x[2], 0, -x[0], -x[1], x[0], 0}, S[9], T[9], P[9];
    for (int i = 0; i < 9; i++) S[i] = T[i] = (i % 4 == 0);
    for (int k = 1; k <= 60; k++) { /* T <- T X/(k+1): T = X^k/(k+1)! */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                P[3 * i + j] = (T[3 * i] * X[j] + T[3 * i + 1] * X[3 + j] + T[3 * i + 2] * X[6 + j]) / (k + 1);
        for (int i = 0; i < 9; i++) { T[i] = P[i]; S[i] += P[i]; }
    }
    ref_t det = S[0] * (S[4] * S[8] - S[5] * S[7]) - S[1] * (S[3] * S[8] - S[5] * S[6]) +
                S[2] * (S[3] * S[7] - S[4] * S[6]);
    ref_t A[9] = {S[4] * S[8] - S[5] * S[7], S[2] * S[7] - S[1] * S[8], S[1] * S[5] - S[2] * S[4],
                  S[5] * S[6] - S[3] * S[8], S[0] * S[8] - S[2] * S[6], S[2] * S[3] - S[0] * S[5],
                  S[3] * S[7] - S[4] * S[6], S[1] * S[6] - S[0] * S[7], S[0] * S[4] - S[1] * S[3]};
    for (int i = 0; i < 9; i++) { D[i] = (double)S[i]; Di[i] = (double)(A[i] / det); }
}

static void test_dexp_coefficients(void **state)
{
    (void)state;
    /* For x = a (e_i + e_j) the (i,j) entry of dexp is (t - sin t)/t^3 a^2 and that of dexpinv
     * (1 - (t/2)cot(t/2))/t^2 a^2 (t = sqrt(2) a, no hat(x) term there): their relative errors
     * are those of the coefficient functions, which cancel catastrophically in closed form for
     * small t. Compared with the quad-precision series, over t in [1e-8, 4]. */
    gsl_rng *r = new_rng(12);
    double wc = 0, wd = 0, wm = 0;
    for (int k = 0; k < 10000; k++) {
        double t = pow(10, -8 + (8 + log10(4.0)) * gsl_rng_uniform(r)), a = t / sqrt(2);
        int i = k % 3, j = (k + 1 + (k / 3) % 2) % 3; /* i != j, all ordered pairs */
        double x[3] = {0, 0, 0}, D[9], Di[9], Dr[9], Dir[9];
        x[i] = a;
        x[j] = k % 5 == 0 ? -a : a;
        lf_so3_dexp(x, D);
        lf_so3_dexpinv(x, Di);
        dexp_ref(x, Dr, Dir);
        wc = fmax(wc, fabs(D[3 * i + j] - Dr[3 * i + j]) / fabs(Dr[3 * i + j]));
        wd = fmax(wd, fabs(Di[3 * i + j] - Dir[3 * i + j]) / fabs(Dir[3 * i + j]));
        wm = fmax(wm, fmax(maxdiff(9, D, Dr), maxdiff(9, Di, Dir)));
    }
    CHECK_LE(wc, 1e-15, "dexp x x^T-coefficient (t-sin t)/t^3, max rel err");
    CHECK_LE(wd, 1e-15, "dexpinv coefficient (1-(t/2)cot(t/2))/t^2, max rel err");
    CHECK_LE(wm, 2e-15, "dexp, dexpinv vs quad-precision series, max abs err");
    gsl_rng_free(r);
}

static void test_cay(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(8);
    double winv = 0, orth = 0;
    for (int k = 0; k < 20000; k++) {
        double x[3], R[9], y[3];
        rand_vec(r, -300, 3, x);
        lf_so3_cay(x, R);
        orth = fmax(orth, lf_so3_orth_error(R));
        assert_int_equal(lf_so3_cayinv(R, y, NULL), LF_OK);
        /* cay is ill-conditioned for large |x| (angle -> pi): relative error grows like |x|^2 */
        double t = lf_v3_norm(x);
        winv = fmax(winv, maxdiff(3, y, x) / norm_scaled(x) / fmax(1, t * t / 4));
    }
    CHECK_LE(orth, 4e-15, "cay ||R^T R - I||, max");
    CHECK_LE(winv, 1e-14, "cayinv(cay(x)) rel err / max(1,|x|^2/4), max");
    /* cay agrees with exp to second order: cay - exp = hat(x)^3/12 + O(|x|^4) */
    double d[3], prev = 0, worst_order = 0;
    rand_dir(r, d);
    printf("  |cay(x)-exp(x)|_F/|x|^3  (-> sqrt(2)/12 = %.4f):", sqrt(2) / 12);
    for (double s = 1e-1; s >= 1e-3; s /= 10) {
        double x[3], A[9], B[9];
        lf_v3_scale(d, s, x);
        lf_so3_cay(x, A);
        lf_so3_exp(x, B);
        lf_m3_sub(A, B, A);
        double e = lf_m3_fnorm(A) / (s * s * s);
        printf(" %.5f", e);
        if (s < 1e-1) worst_order = fmax(worst_order, fabs(e - sqrt(2) / 12));
        prev = e;
    }
    printf("\n");
    (void)prev;
    CHECK_LE(worst_order, 1e-2, "|cay-exp|/|x|^3 - sqrt(2)/12 at |x|=1e-2,1e-3");
    /* cayinv near angle pi is a domain error with a message */
    double Rpi[9] = {1, 0, 0, 0, -1, 0, 0, 0, -1}, y[3];
    lf_error err = {0, ""};
    assert_int_equal(lf_so3_cayinv(Rpi, y, &err), LF_EDOMAIN);
    assert_int_equal(err.code, LF_EDOMAIN);
    assert_non_null(strstr(err.msg, "1 + tr R"));
    printf("  cayinv at pi: \"%s\"\n", err.msg);
    gsl_rng_free(r);
}

/* The in-place updates against the explicit products: R <- exp(hat x) R (lf_so3_lmul_exp) and
 * R <- R cay(x) (lf_so3_rmul_cay), |x| from 1e-8 to 3 (cay: to 30); and over 1e5 updates
 * ||R^T R - I|| grows like a random walk of roundings, ~sqrt(1e5) u = 4e-14 (a systematic drift
 * would reach ~1e5 u = 1e-11), as for the explicit products. */
static void test_in_place_updates(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(12);
    double w_l = 0, w_c = 0;
    for (unsigned long k = 0; k < 5000; k++) {
        double R[9], x[3], E[9], P[9], U[9];
        assert_int_equal(lf_so3_random(7000 + k, R, NULL), LF_OK);
        rand_vec(r, -8, log10(k % 2 ? 3.0 : 30.0), x);
        if (k % 2) {
            lf_so3_exp(x, E);
            lf_m3_mul(E, R, P);
            lf_m3_copy(R, U);
            lf_so3_lmul_exp(U, x);
            w_l = fmax(w_l, maxdiff(9, U, P));
        }
        lf_so3_cay(x, E);
        lf_m3_mul(R, E, P);
        lf_m3_copy(R, U);
        lf_so3_rmul_cay(U, x);
        w_c = fmax(w_c, maxdiff(9, U, P));
    }
    CHECK_LE(w_l, 1e-15, "lmul_exp(R, x) vs exp(x) R, max entry (|x| 1e-8 .. 3)");
    CHECK_LE(w_c, 1e-15, "rmul_cay(R, x) vs R cay(x), max entry (|x| 1e-8 .. 30)");
    double A[9], B[9], C[9], x[3];
    lf_m3_identity(A);
    lf_m3_identity(B);
    lf_m3_identity(C);
    for (int k = 0; k < 100000; k++) {
        rand_vec(r, -2, 0, x);
        lf_so3_lmul_exp(A, x);
        lf_so3_rmul_cay(B, x);
        double E[9], P[9];
        lf_so3_exp(x, E);
        lf_m3_mul(E, C, P);
        lf_m3_copy(P, C);
    }
    printf("  after 1e5 updates (|x| 0.01 .. 1): ||R^T R - I|| %.1e (lmul_exp), %.1e (rmul_cay), %.1e (exp(x) R by "
           "products)\n",
           lf_so3_orth_error(A), lf_so3_orth_error(B), lf_so3_orth_error(C));
    CHECK_LE(fmax(lf_so3_orth_error(A), lf_so3_orth_error(B)), 3e-13, "||R^T R - I|| after 1e5 in-place updates");
    gsl_rng_free(r);
}

static void test_Ad(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(9);
    double worst = 0;
    for (unsigned long k = 0; k < 5000; k++) {
        double R[9], A[9], x[3], Ax[3], E1[9], E2[9];
        assert_int_equal(lf_so3_random(1000 + k, R, NULL), LF_OK);
        rand_vec(r, -3, log10(3.0), x);
        lf_so3_Ad(R, A);
        lf_m3_apply(A, x, Ax);
        lf_so3_exp(Ax, E1);
        lf_so3_exp(x, E2);
        lf_m3_mul(R, E2, E2);
        lf_m3_mult(E2, R, E2);
        worst = fmax(worst, maxdiff(9, E1, E2));
    }
    CHECK_LE(worst, 5e-15, "exp(Ad_R x) - R exp(x) R^T, max");
    gsl_rng_free(r);
}

static void test_dist_angle(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(10);
    double wtr = 0, wang = 0, wlog = 0;
    for (unsigned long k = 0; k < 5000; k++) {
        double R1[9], R2[9], M[9], x[3], n[3];
        assert_int_equal(lf_so3_random(2 * k + 1, R1, NULL), LF_OK);
        assert_int_equal(lf_so3_random(2 * k + 2, R2, NULL), LF_OK);
        /* well separated: the trace formula is accurate there */
        lf_m3_tmul(R1, R2, M);
        double tr = sqrt(2 * (3 - lf_m3_trace(M))), d = lf_so3_dist(R1, R2);
        if (tr > 0.5) wtr = fmax(wtr, fabs(d - tr) / tr);
        assert_true(fabs(lf_so3_dist(R2, R1) - d) == 0);
        /* angle = |log(R1^T R2)| */
        lf_so3_log(M, x);
        wlog = fmax(wlog, fabs(lf_so3_angle(R1, R2) - lf_v3_norm(x)));
        /* known angle: R2 = R1 exp(t n) */
        double t = PI * gsl_rng_uniform(r), E[9];
        rand_dir(r, n);
        lf_v3_scale(n, t, n);
        lf_so3_exp(n, E);
        lf_m3_mul(R1, E, R2);
        wang = fmax(wang, fabs(lf_so3_angle(R1, R2) - t));
    }
    CHECK_LE(wtr, 1e-14, "dist vs sqrt(2 tr(I-R1^T R2)), separated, max rel err");
    CHECK_LE(wlog, 1e-15, "angle - |log(R1^T R2)|, max abs err");
    CHECK_LE(wang, 1e-14, "angle(R1, R1 exp(t n)) - t, max abs err");
    /* nearby rotations: R2 = R1 exp(t n), R1 a signed permutation so the product is exact.
     * dist = ||I - exp(t n)||_F = 2 sqrt(2) sin(t/2) exactly. */
    double wnear = 0, wnear_tr = 0, wnear_ang = 0;
    double P[9] = {0, 1, 0, 0, 0, -1, -1, 0, 0};
    for (int k = 0; k < 1000; k++) {
        double t = pow(10, -15 + 14 * gsl_rng_uniform(r)), n[3], E[9], R2[9], M[9];
        rand_dir(r, n);
        lf_v3_scale(n, t, n);
        lf_so3_exp(n, E);
        lf_m3_mul(P, E, R2);
        double ref = 2 * sqrt(2) * sin(t / 2);
        wnear = fmax(wnear, fabs(lf_so3_dist(P, R2) - ref) / ref);
        wnear_ang = fmax(wnear_ang, fabs(lf_so3_angle(P, R2) - t) / t);
        lf_m3_tmul(P, R2, M);
        double tr = 2 * (3 - lf_m3_trace(M));
        wnear_tr = fmax(wnear_tr, fabs(sqrt(fmax(tr, 0)) - ref) / ref);
    }
    CHECK_LE(wnear, 1e-15, "dist for nearby rotations (t in [1e-15,0.1]), max rel err");
    CHECK_LE(wnear_ang, 1e-15, "angle for nearby rotations, max rel err");
    printf("  (the trace formula itself would have rel err up to %.2e there)\n", wnear_tr);
    gsl_rng_free(r);
}

static void test_project(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(11);
    double orth = 0, idem = 0, near = -1e300;
    lf_error err = {0, ""};
    for (int k = 0; k < 3000; k++) {
        double M[9], R[9], R2[9];
        for (int i = 0; i < 9; i++) M[i] = gsl_ran_ugaussian(r); /* about half have det < 0 */
        assert_int_equal(lf_so3_project(M, R, &err), LF_OK);
        orth = fmax(orth, fmax(lf_so3_orth_error(R), fabs(lf_m3_det(R) - 1)));
        /* idempotent on rotations */
        assert_int_equal(lf_so3_project(R, R2, &err), LF_OK);
        idem = fmax(idem, maxdiff(9, R, R2));
        /* nearest: no perturbed candidate R exp(e d) or random rotation is closer to M */
        double dR = lf_so3_dist(M, R);
        for (int c = 0; c < 6; c++) {
            double d[3], E[9], C[9];
            rand_dir(r, d);
            lf_v3_scale(d, c < 3 ? 1e-3 : 1e-1, d);
            lf_so3_exp(d, E);
            lf_m3_mul(R, E, C);
            near = fmax(near, dR - lf_so3_dist(M, C)); /* must stay < 0 */
        }
        assert_int_equal(lf_so3_random(5000 + k, R2, NULL), LF_OK);
        near = fmax(near, dR - lf_so3_dist(M, R2));
    }
    CHECK_LE(orth, 1e-14, "project: ||R^T R - I||, |det R - 1|, max");
    CHECK_LE(idem, 1e-14, "project(R) - R for rotations, max");
    CHECK_LE(near, 0, "||M - project(M)|| - ||M - candidate||, max (must be < 0)");
    /* a slightly perturbed rotation projects back close to it */
    double R[9], M[9], P[9];
    assert_int_equal(lf_so3_random(77, R, NULL), LF_OK);
    lf_m3_copy(R, M);
    M[0] += 1e-7; M[5] -= 2e-7;
    lf_so3_project(M, P, &err);
    assert_true(maxdiff(9, P, R) < 3e-7);
    /* rank 2 has a unique nearest rotation; rank 1 and 0 do not, nor a reflection whose two
     * smallest singular values tie: those are errors, not an arbitrary answer */
    double Ms[4][9] = {{1, 0, 0, 0, 1, 0, 0, 0, 0}, {1, 2, 3, 2, 4, 6, 3, 6, 9}, {0}, {1, 0, 0, 0, 1, 0, 0, 0, -1}};
    assert_int_equal(lf_so3_project(Ms[0], P, &err), LF_OK);
    assert_int_equal(lf_so3_check(P, 1e-14, "P", &err), LF_OK);
    for (int k = 1; k < 4; k++) {
        assert_int_equal(lf_so3_project(Ms[k], P, &err), LF_EDOMAIN);
        assert_non_null(strstr(err.msg, "not unique"));
    }
    printf("  project(rank 1): \"%s\"\n", err.msg);
    double I[9];
    lf_m3_identity(I);
    lf_so3_project(Ms[0], P, &err); /* diag(1,1,0): the unique nearest rotation is I */
    assert_true(maxdiff(9, P, I) <= 1e-15);
    /* non-finite input */
    M[3] = NAN;
    assert_int_equal(lf_so3_project(M, P, &err), LF_EINVAL);
    assert_int_equal(err.code, LF_EINVAL);
    printf("  project(NaN): \"%s\"\n", err.msg);
    gsl_rng_free(r);
}

static void test_random(void **state)
{
    (void)state;
    double A[9], B[9];
    assert_int_equal(lf_so3_random(42, A, NULL), LF_OK);
    assert_int_equal(lf_so3_random(42, B, NULL), LF_OK);
    assert_memory_equal(A, B, sizeof A);
    assert_int_equal(lf_so3_random(43, B, NULL), LF_OK);
    assert_true(maxdiff(9, A, B) > 1e-3);
    double mean[9] = {0}, sq[9] = {0}, orth = 0;
    const int N = 20000;
    for (int k = 0; k < N; k++) {
        double R[9];
        assert_int_equal(lf_so3_random((unsigned long)k + 1, R, NULL), LF_OK);
        orth = fmax(orth, fmax(lf_so3_orth_error(R), fabs(lf_m3_det(R) - 1)));
        for (int i = 0; i < 9; i++) { mean[i] += R[i] / N; sq[i] += R[i] * R[i] / N; }
    }
    double wm = 0, wsq = 0;
    for (int i = 0; i < 9; i++) {
        wm = fmax(wm, fabs(mean[i]));
        wsq = fmax(wsq, fabs(sq[i] - 1.0 / 3)); /* Haar: E[R_ij^2] = 1/3 */
    }
    CHECK_LE(orth, 4e-15, "random: ||R^T R - I||, |det - 1|, max");
    CHECK_LE(wm, 0.02, "random: |mean of R_ij| over 20000 seeds, max");
    CHECK_LE(wsq, 0.01, "random: |mean of R_ij^2 - 1/3| over 20000 seeds, max");
}

static void test_check(void **state)
{
    (void)state;
    lf_error err = {0, ""};
    double R[9];
    assert_int_equal(lf_so3_random(5, R, NULL), LF_OK);
    assert_int_equal(lf_so3_check(R, 1e-9, "R", &err), LF_OK);
    /* R^T R - I = diag(2a + a^2, 0, 0) for R = I + a e1 e1^T */
    double a = 1.6e-5, S[9];
    lf_m3_identity(S);
    S[0] += a;
    CHECK_LE(fabs(lf_so3_orth_error(S) - (2 * a + a * a)) / (2 * a), 1e-10, "orth_error of diag(1+a,1,1) vs 2a+a^2, rel err");
    assert_int_equal(lf_so3_check(S, 1e-9, "R", &err), LF_EINVAL);
    assert_non_null(strstr(err.msg, "R is not a rotation: ||R^T R - I|| = 3.2e-05 > 1e-09 (close to one"));
    assert_non_null(strstr(err.msg, "lf_so3_project"));
    printf("  \"%s\"\n", err.msg);
    double F[9] = {1, 0, 0, 0, 1, 0, 0, 0, -1}; /* a reflection: orthogonal, det -1 */
    assert_int_equal(lf_so3_check(F, 1e-9, "attitude", &err), LF_EINVAL);
    assert_non_null(strstr(err.msg, "attitude is not a rotation"));
    assert_non_null(strstr(err.msg, "det"));
    printf("  \"%s\"\n", err.msg);
    R[4] = INFINITY;
    assert_int_equal(lf_so3_check(R, 1e-9, "R0", &err), LF_EINVAL);
    assert_non_null(strstr(err.msg, "R0 is not a rotation"));
    printf("  \"%s\"\n", err.msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hat_vee),
        cmocka_unit_test(test_exp_reference),
        cmocka_unit_test(test_log_exp_small),
        cmocka_unit_test(test_log_exp_large),
        cmocka_unit_test(test_log_at_pi),
        cmocka_unit_test(test_dexp_dcay_fd),
        cmocka_unit_test(test_dexp_dexpinv_identity),
        cmocka_unit_test(test_dexp_coefficients),
        cmocka_unit_test(test_cay),
        cmocka_unit_test(test_in_place_updates),
        cmocka_unit_test(test_Ad),
        cmocka_unit_test(test_dist_angle),
        cmocka_unit_test(test_project),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
