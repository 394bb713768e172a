/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of core/base/dense.c (LU, Cholesky), core/base/linalg.c (the scaled norms and determinant
 * at the edges of the exponent range), Newton and a few of the inline helpers of linalg.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <float.h>

#include "testutil.h"
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/linalg.h"
#include "base/dense.h"
#include "solve/newton.h"

/* ------------------------------------------------------------------------------------ LU */

static void test_lu_random(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(1);
    enum { N = 6 };
    double worst = 0, wres = 0;
    int nwell = 0;
    for (int k = 0; k < 5000; k++) {
        double A[N * N], LU[N * N], x[N], b[N];
        int piv[N];
        for (int i = 0; i < N * N; i++) A[i] = gsl_ran_ugaussian(r);
        for (int i = 0; i < N; i++) x[i] = gsl_ran_ugaussian(r);
        for (int i = 0; i < N; i++) {
            b[i] = 0;
            for (int j = 0; j < N; j++) b[i] += A[i * N + j] * x[j];
        }
        memcpy(LU, A, sizeof A);
        assert_int_equal(lf_lu_factor(N, LU, piv), LF_OK);
        double y[N];
        memcpy(y, b, sizeof b);
        lf_lu_solve(N, LU, piv, y);
        /* backward error |A y - b| / (|A| |y|) for every system */
        double res[N], an = maxabs(N * N, A);
        for (int i = 0; i < N; i++) {
            res[i] = -b[i];
            for (int j = 0; j < N; j++) res[i] += A[i * N + j] * y[j];
        }
        wres = fmax(wres, maxabs(N, res) / (an * maxabs(N, y)));
        /* forward error, on the systems with condition number (inf-norm, inverse from the
         * same LU) below 1e3 -- most random 6x6 are */
        double Ainv_norm = 0, A_norm = 0;
        for (int i = 0; i < N; i++) {
            double row = 0;
            for (int j = 0; j < N; j++) row += fabs(A[i * N + j]);
            A_norm = fmax(A_norm, row);
        }
        double Ainv[N * N];
        for (int j = 0; j < N; j++) {
            double e[N] = {0};
            e[j] = 1;
            lf_lu_solve(N, LU, piv, e);
            for (int i = 0; i < N; i++) Ainv[i * N + j] = e[i];
        }
        for (int i = 0; i < N; i++) {
            double row = 0;
            for (int j = 0; j < N; j++) row += fabs(Ainv[i * N + j]);
            Ainv_norm = fmax(Ainv_norm, row);
        }
        double e[N];
        for (int i = 0; i < N; i++) e[i] = y[i] - x[i];
        if (A_norm * Ainv_norm < 1e3) {
            worst = fmax(worst, maxabs(N, e) / maxabs(N, x));
            nwell++;
        }
    }
    CHECK_LE(wres, 4e-15, "LU 6x6: backward error |Ay-b|/(|A||y|), max");
    printf("  (%d of 5000 systems have cond < 1e3)\n", nwell);
    assert_true(nwell > 4000);
    CHECK_LE(worst, 1e-12, "LU 6x6: forward error |y-x|/|x|, cond < 1e3, max");
    gsl_rng_free(r);
}

static void test_lu_pivoting_and_singular(void **state)
{
    (void)state;
    /* needs a row swap: A[0][0] = 0 */
    double A[9] = {0, 1, 2, 1, 0, 3, 4, -3, 8}, b[3] = {3, 4, 9}, x[3] = {1, 1, 1};
    int piv[3];
    double LU[9];
    memcpy(LU, A, sizeof A);
    assert_int_equal(lf_lu_factor(3, LU, piv), LF_OK);
    lf_lu_solve(3, LU, piv, b);
    for (int i = 0; i < 3; i++) assert_true(fabs(b[i] - x[i]) <= 1e-15);
    /* partial pivoting picks the largest entry: the tiny pivot 1e-20 would lose everything */
    double B[4] = {1e-20, 1, 1, 1}, c[2] = {1, 2};
    int p2[2];
    assert_int_equal(lf_lu_factor(2, B, p2), LF_OK);
    lf_lu_solve(2, B, p2, c); /* exact solution ~ (1, 1) */
    CHECK_LE(fmax(fabs(c[0] - 1), fabs(c[1] - 1)), 1e-15, "LU with tiny leading entry, max err");
    /* singular: two equal rows (exact zero pivot) and the zero matrix */
    double S[9] = {1, 2, 3, 4, 5, 6, 1, 2, 3}, Z[4] = {0, 0, 0, 0};
    assert_int_equal(lf_lu_factor(3, S, piv), LF_EDOMAIN);
    assert_int_equal(lf_lu_factor(2, Z, p2), LF_EDOMAIN);
    /* 1x1 */
    double one[1] = {4}, rhs[1] = {2};
    int p1[1];
    assert_int_equal(lf_lu_factor(1, one, p1), LF_OK);
    lf_lu_solve(1, one, p1, rhs);
    assert_true(rhs[0] == 0.5);
}

static void test_m3_helpers(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(2);
    double worst = 0;
    for (int k = 0; k < 1000; k++) {
        double A[9], Ai[9] = {0}, P[9], I[9], b[3], x[3] = {0}, Ax[3];
        for (int i = 0; i < 9; i++) A[i] = gsl_ran_ugaussian(r);
        if (fabs(lf_m3_det(A)) < 0.1) continue;
        assert_int_equal(lf_m3_inverse(A, Ai), LF_OK);
        lf_m3_mul(A, Ai, P);
        lf_m3_identity(I);
        lf_m3_sub(P, I, P);
        worst = fmax(worst, maxabs(9, P));
        for (int i = 0; i < 3; i++) b[i] = gsl_ran_ugaussian(r);
        assert_int_equal(lf_m3_solve(A, b, x), LF_OK);
        lf_m3_apply(A, x, Ax);
        lf_v3_sub(Ax, b, Ax);
        worst = fmax(worst, maxabs(3, Ax));
    }
    CHECK_LE(worst, 1e-12, "m3 inverse/solve residual (|det| >= 0.1), max");
    double S[9] = {1, 2, 3, 2, 4, 6, 0, 1, 1}, Si[9];
    assert_int_equal(lf_m3_inverse(S, Si), LF_EDOMAIN);
    gsl_rng_free(r);
}

/* ------------------------------------------------------------------------------ Cholesky */

static void test_cholesky(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(3);
    double w_fact = 0, w_res = 0, w_fwd = 0;
    for (int k = 0; k < 2000; k++) {
        const int n = 1 + k % 8;
        double B[64], A[64], L[64], x[8], b[8], y[8];
        for (int i = 0; i < n * n; i++) B[i] = gsl_ran_ugaussian(r);
        for (int i = 0; i < n; i++) /* A = B B^T + n I: symmetric positive definite, condition ~ 10 */
            for (int j = 0; j < n; j++) {
                double sum = i == j ? n : 0;
                for (int m = 0; m < n; m++) sum += B[i * n + m] * B[j * n + m];
                A[i * n + j] = sum;
            }
        memcpy(L, A, sizeof A);
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) L[i * n + j] = NAN; /* the upper triangle is not read */
        double piv = -1;
        assert_int_equal(lf_cholesky_factor(n, L, &piv), 0);
        assert_true(piv == -1); /* untouched on success */
        /* L L^T = A (lower triangle of L only) */
        for (int i = 0; i < n; i++)
            for (int j = 0; j <= i; j++) {
                double sum = 0;
                for (int m = 0; m <= j; m++) sum += L[i * n + m] * L[j * n + m];
                w_fact = fmax(w_fact, fabs(sum - A[i * n + j]) / maxabs(n * n, A));
            }
        for (int i = 0; i < n; i++) x[i] = gsl_ran_ugaussian(r);
        for (int i = 0; i < n; i++) {
            b[i] = 0;
            for (int j = 0; j < n; j++) b[i] += A[i * n + j] * x[j];
        }
        memcpy(y, b, sizeof b);
        lf_cholesky_solve(n, L, y);
        double res[8];
        for (int i = 0; i < n; i++) {
            res[i] = -b[i];
            for (int j = 0; j < n; j++) res[i] += A[i * n + j] * y[j];
        }
        w_res = fmax(w_res, maxabs(n, res) / (maxabs(n * n, A) * maxabs(n, y)));
        for (int i = 0; i < n; i++) res[i] = y[i] - x[i];
        w_fwd = fmax(w_fwd, maxabs(n, res) / maxabs(n, x));
    }
    gsl_rng_free(r);
    CHECK_LE(w_fact, 2e-15, "Cholesky n = 1..8: |L L^T - A| / |A|, max");
    CHECK_LE(w_res, 2e-15, "Cholesky solve: backward error |Ay - b| / (|A||y|), max");
    CHECK_LE(w_fwd, 1e-13, "Cholesky solve: forward error |y - x| / |x| (condition ~ 10), max");
    /* not positive definite: k + 1 and the failing pivot */
    double piv;
    double D[9] = {1, 0, 0, 0, -2, 0, 0, 0, 3}, Ind[4] = {1, 2, 2, 1}, Sing[4] = {1, 1, 1, 1}, Nan[4] = {NAN, 0, 0, 1};
    assert_int_equal(lf_cholesky_factor(3, D, &piv), 2);
    assert_true(piv == -2);
    assert_int_equal(lf_cholesky_factor(2, Ind, &piv), 2); /* 1 - 2^2 */
    assert_true(piv == -3);
    assert_int_equal(lf_cholesky_factor(2, Sing, &piv), 2); /* positive semidefinite */
    assert_true(piv == 0);
    assert_int_equal(lf_cholesky_factor(2, Nan, NULL), 1);
    /* a subnormal pivot whose division overflows: refused, the pivot d^2 reported */
    double T[4] = {1e-310, 0, 1e200, 1};
    assert_int_equal(lf_cholesky_factor(2, T, &piv), 1);
    printf("  Cholesky of [[1e-310, .], [1e200, 1]]: pivot 1 refused, value %g\n", piv);
    assert_true(piv > 0 && fabs(piv - 1e-310) <= 1e-3 * 1e-310);
    /* 1 x 1 */
    double one[1] = {4}, rhs[1] = {2};
    assert_int_equal(lf_cholesky_factor(1, one, NULL), 0);
    lf_cholesky_solve(1, one, rhs);
    assert_true(one[0] == 2 && rhs[0] == 0.5);
}

/* ----------------------------------------------------------- norms and det without overflow */

/* The scaled paths scale by powers of two only: on input scaled by 2^k they give the plain formula's
 * value scaled by 2^k, bit for bit, wherever the plain formula would over- or underflow. */
static void test_scaled(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(4);
    long same = 0, cases = 0;
    for (int it = 0; it < 3000; it++) {
        double a[9], s[9], D[9];
        for (int i = 0; i < 9; i++) a[i] = gsl_ran_ugaussian(r);
        const int k = (int)gsl_rng_uniform_int(r, 2000) - 1000; /* 2^-1000 .. 2^999: the squares leave the range */
        for (int i = 0; i < 9; i++) s[i] = ldexp(a[i], k);
        same += lf_v3_norm_scaled(s) == ldexp(sqrt(lf_v3_dot(a, a)), k);
        double f = 0;
        for (int i = 0; i < 9; i++) f += a[i] * a[i];
        same += lf_m3_fnorm_scaled(s) == ldexp(sqrt(f), k);
        /* det: rows scaled by 2^k0, 2^k1, 2^k2 (the product 2^(k0+k1+k2) within the range) */
        int ks[3] = {k, (int)gsl_rng_uniform_int(r, 600) - 300, 0};
        ks[2] = -ks[0] / 2 - ks[1] / 2;
        for (int i = 0; i < 9; i++) D[i] = ldexp(a[i], ks[i / 3]);
        same += lf_m3_det_scaled(D) == ldexp(lf_m3_det_raw(a), ks[0] + ks[1] + ks[2]);
        same += lf_m3_det_scaled(a) == lf_m3_det_raw(a); /* the common range: the plain formula's bits */
        cases += 4;
    }
    gsl_rng_free(r);
    printf("  scaled norm, Frobenius norm, det on input scaled by 2^-1000 .. 2^999: %ld of %ld bitwise as the "
           "plain formula scaled\n",
           same, cases);
    assert_int_equal(same, cases);
    /* near overflow and underflow, against long double (15-bit exponent) */
    const double big[3] = {1e308, -1e308, 1e308}, tiny[3] = {3e-310, 4e-310, 0}, sub[3] = {0x1p-1074, 0, 0};
    const double nb = lf_v3_norm_scaled(big), nt = lf_v3_norm_scaled(tiny);
    printf("  |(1e308, -1e308, 1e308)| = %.17g, |(3e-310, 4e-310, 0)| = %.17g\n", nb, nt);
    assert_true(fabs(nb - (double)(sqrtl(3.0L) * 1e308L)) <= 2.3e-16 * nb);
    assert_true(fabs(nt - 5e-310) <= 1e-5 * 5e-310); /* subnormal input: its own few digits */
    assert_true(lf_v3_norm_scaled(sub) == 0x1p-1074);
    double M[9] = {5e307, 5e307, 5e307, 5e307, 5e307, 5e307, 5e307, 5e307, 1e307}; /* ||M|| = 1.4e308 */
    assert_true(fabs(lf_m3_fnorm_scaled(M) - (double)(sqrtl(201.0L) * 1e307L)) <= 2.3e-16 * lf_m3_fnorm_scaled(M));
    const double huge[3] = {DBL_MAX, DBL_MAX, 0}, nanv[3] = {1, NAN, 1e300}, infv[3] = {1, INFINITY, 0},
                 z[3] = {0, 0, 0};
    assert_true(isinf(lf_v3_norm_scaled(huge))); /* |v| > DBL_MAX */
    assert_true(isnan(lf_v3_norm_scaled(nanv)) && isinf(lf_v3_norm_scaled(infv)) && lf_v3_norm_scaled(z) == 0);
    /* det: 1e300 * 1e-160 * 1e-160 and an overflow only where |det| > DBL_MAX */
    double P[9] = {0, 1e300, 0, 0, 0, 1e-160, 1e-160, 0, 0}, Q[9] = {1e200, 0, 0, 0, 1e200, 0, 0, 0, 1e-92};
    assert_true(fabs(lf_m3_det_scaled(P) - 1e-20) <= 2.3e-16 * 1e-20);
    assert_true(isfinite(lf_m3_det_scaled(Q)) && fabs(lf_m3_det_scaled(Q) - 1e308) <= 4.5e-16 * 1e308);
    Q[8] = 1e-91;
    assert_true(isinf(lf_m3_det_scaled(Q)));
    double Zr[9] = {1e300, 2, 3, 0, 0, 0, 1, 1e-300, 1}, Nn[9] = {1, 0, 0, 0, NAN, 0, 0, 0, 1e300};
    assert_true(lf_m3_det_scaled(Zr) == 0 && isnan(lf_m3_det_scaled(Nn)));
}

/* -------------------------------------------------------------------------------- Newton */

/* F(x, y) = (x^2 + y^2 - 4, exp(x) + y - 1): roots near (-1.8163, 0.8374) and (1.0042, -1.7296) */
static int circle_exp(void *ctx, const double *x, double *F, double *J, lf_error *err)
{
    (void)err;
    int *calls = ctx;
    if (calls) (*calls)++;
    F[0] = x[0] * x[0] + x[1] * x[1] - 4;
    F[1] = exp(x[0]) + x[1] - 1;
    if (J) {
        J[0] = 2 * x[0]; J[1] = 2 * x[1];
        J[2] = exp(x[0]); J[3] = 1;
    }
    return LF_OK;
}

/* 6-dimensional: F_i = x_i^3 + sum_j A_ij x_j - b_i, A diagonally dominant */
typedef struct { double A[36], b[6]; } cubic_ctx;
static int cubic(void *ctx, const double *x, double *F, double *J, lf_error *err)
{
    (void)err;
    const cubic_ctx *c = ctx;
    for (int i = 0; i < 6; i++) {
        F[i] = x[i] * x[i] * x[i] - c->b[i];
        for (int j = 0; j < 6; j++) F[i] += c->A[6 * i + j] * x[j];
        if (J)
            for (int j = 0; j < 6; j++) J[6 * i + j] = c->A[6 * i + j] + (i == j ? 3 * x[i] * x[i] : 0);
    }
    return LF_OK;
}

static int no_root(void *ctx, const double *x, double *F, double *J, lf_error *err)
{
    (void)ctx, (void)err;
    F[0] = x[0] * x[0] + 1;
    if (J) J[0] = 2 * x[0];
    return LF_OK;
}

static int linear(void *ctx, const double *x, double *F, double *J, lf_error *err)
{
    (void)ctx, (void)err;
    F[0] = x[0] - 2;
    if (J) J[0] = 1;
    return LF_OK;
}

static int failing(void *ctx, const double *x, double *F, double *J, lf_error *err)
{
    (void)ctx, (void)F, (void)J;
    return lf_error_set(err, LF_ECALLBACK, "potential callback failed at x=%g", x[0]);
}

static int flat(void *ctx, const double *x, double *F, double *J, lf_error *err)
{
    (void)ctx, (void)err;
    F[0] = x[0] * x[0] - 1; /* J = 0 at x = 0 */
    if (J) J[0] = 2 * x[0];
    return LF_OK;
}

/* records the points where it is evaluated: F(x) = x - 3 (n = 1) */
typedef struct { int n; double xs[64]; } recorder;
static int record(void *ctx, const double *x, double *F, double *J, lf_error *err)
{
    (void)err;
    recorder *r = ctx;
    if (r->n < 64) r->xs[r->n++] = x[0];
    F[0] = (x[0] - 3) * (1 + 0.1 * x[0] * x[0]);
    if (J) J[0] = 1;
    return LF_OK;
}

static void test_newton_fd_step(void **state)
{
    (void)state;
    /* forward differences with step sqrt(eps) max(1, |x_j|): the second evaluation is at x + h */
    static const double x0s[] = {1000, -0.25, 7e-9, -4e6};
    double worst = 0;
    for (size_t i = 0; i < sizeof x0s / sizeof *x0s; i++) {
        recorder rec = {0, {0}};
        double work[8], x[1] = {x0s[i]};
        int iwork[1];
        lf_newton_opts o = {.max_iter = 1, .jacobian = LF_JAC_FD};
        lf_newton(record, &rec, 1, x, &o, work, iwork, NULL, NULL);
        assert_true(rec.n >= 2 && rec.xs[0] == x0s[i]);
        double h = rec.xs[1] - rec.xs[0], want = sqrt(2.220446049250313e-16) * fmax(1, fabs(x0s[i]));
        worst = fmax(worst, fabs(h / want - 1));
    }
    CHECK_LE(worst, 1e-6, "FD step / (sqrt(eps) max(1,|x|)) - 1, max");
}

static void test_newton_2d(void **state)
{
    (void)state;
    double work[64], res[2];
    int iwork[2];
    lf_error err = {0, ""};
    double sol[2][2];
    int iters[2];
    for (int analytic = 1; analytic >= 0; analytic--) {
        lf_newton_opts o = {.jacobian = analytic ? LF_JAC_ANALYTIC : LF_JAC_FD};
        lf_newton_info info;
        int calls = 0;
        double x[2] = {1, -1.5};
        int st = lf_newton(circle_exp, &calls, 2, x, &o, work, iwork, &info, &err);
        assert_int_equal(st, LF_OK);
        circle_exp(NULL, x, res, NULL, NULL);
        printf("  newton 2d (%s Jacobian): %d iterations, %d calls, |F(x)| = %.2e, last update %.2e\n",
               analytic ? "analytic" : "FD", info.iters, calls, maxabs(2, res), info.update);
        CHECK_LE(maxabs(2, res), 1e-14, analytic ? "newton 2d analytic: |F(x)| at the solution"
                                                 : "newton 2d FD: |F(x)| at the solution");
        assert_true(info.iters <= 8);
        /* analytic: one call per iteration, none extra after the converged update */
        if (analytic && info.residual != 0) assert_int_equal(calls, info.iters);
        /* stopped on the update test, or on an exactly zero residual */
        assert_true(info.update <= 1e-14 * (1 + maxabs(2, x)) || info.residual == 0);
        memcpy(sol[analytic], x, sizeof x);
        iters[analytic] = info.iters;
    }
    /* a good FD Jacobian keeps Newton's quadratic convergence: no more iterations */
    assert_true(iters[0] <= iters[1] + 1);
    CHECK_LE(fmax(fabs(sol[0][0] - sol[1][0]), fabs(sol[0][1] - sol[1][1])), 1e-15,
             "newton 2d: analytic vs FD solution");
}

static void test_newton_6d(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(3);
    enum { N = 6 };
    double worst = 0;
    /* the workspace documented by lf_newton_work_size is enough: guard the next entries */
    size_t ws = lf_newton_work_size(N);
    double work[200];
    int iwork[N + 4];
    assert_true(ws + 8 <= sizeof work / sizeof *work);
    for (int trial = 0; trial < 200; trial++) {
        cubic_ctx c;
        double xs[N], x[N];
        for (int i = 0; i < 36; i++) c.A[i] = 0.3 * gsl_ran_ugaussian(r);
        for (int i = 0; i < N; i++) c.A[7 * i] += 4;
        for (int i = 0; i < N; i++) xs[i] = gsl_ran_ugaussian(r);
        for (int i = 0; i < N; i++) {
            c.b[i] = xs[i] * xs[i] * xs[i];
            for (int j = 0; j < N; j++) c.b[i] += c.A[6 * i + j] * xs[j];
        }
        for (size_t i = ws; i < ws + 8; i++) work[i] = 12345.0;
        for (int i = N; i < N + 4; i++) iwork[i] = 777;
        for (int analytic = 0; analytic <= 1; analytic++) {
            lf_newton_opts o = {.tol = 1e-14, .max_iter = 30, .jacobian = analytic ? LF_JAC_ANALYTIC : LF_JAC_FD};
            lf_newton_info info;
            lf_error err = {0, ""};
            for (int i = 0; i < N; i++) x[i] = 0;
            assert_int_equal(lf_newton(cubic, &c, N, x, &o, work, iwork, &info, &err), LF_OK);
            double e[N];
            for (int i = 0; i < N; i++) e[i] = x[i] - xs[i];
            worst = fmax(worst, maxabs(N, e) / (1 + maxabs(N, xs)));
        }
        for (size_t i = ws; i < ws + 8; i++) assert_true(work[i] == 12345.0);
        for (int i = N; i < N + 4; i++) assert_int_equal(iwork[i], 777);
    }
    CHECK_LE(worst, 1e-13, "newton 6d (analytic and FD): |x - x*|/(1+|x*|), max");
    gsl_rng_free(r);
}

static void test_newton_failures(void **state)
{
    (void)state;
    double work[16];
    int iwork[1];
    lf_error err = {0, ""};
    lf_newton_info info;
    /* no real root: LF_ENOCONV with iterations and residual in the message */
    lf_newton_opts o = {.max_iter = 5, .jacobian = LF_JAC_ANALYTIC};
    double x[1] = {0.5};
    assert_int_equal(lf_newton(no_root, NULL, 1, x, &o, work, iwork, &info, &err), LF_ENOCONV);
    assert_int_equal(err.code, LF_ENOCONV);
    assert_int_equal(info.iters, 5);
    char expect[128];
    snprintf(expect, sizeof expect, "newton did not converge in 5 iterations (|residual|=%.3g)", info.residual);
    assert_string_equal(err.msg, expect);
    assert_true(info.residual >= 1);
    printf("  \"%s\"\n", err.msg);
    /* default max_iter is 50, FD Jacobian */
    lf_newton_opts o2 = {.jacobian = LF_JAC_FD};
    x[0] = 0.5;
    assert_int_equal(lf_newton(no_root, NULL, 1, x, &o2, work, iwork, &info, &err), LF_ENOCONV);
    assert_non_null(strstr(err.msg, "newton did not converge in 50 iterations (|residual|="));
    /* exact root at the start: accepted with 0 iterations */
    x[0] = 2;
    assert_int_equal(lf_newton(linear, NULL, 1, x, &o, work, iwork, &info, &err), LF_OK);
    assert_int_equal(info.iters, 0);
    assert_true(x[0] == 2 && info.residual == 0);
    /* linear problem: one step, then the update test stops it */
    x[0] = -7;
    assert_int_equal(lf_newton(linear, NULL, 1, x, &o, work, iwork, &info, &err), LF_OK);
    assert_true(x[0] == 2 && info.iters <= 2);
    /* the residual's own error aborts Newton and is passed through */
    assert_int_equal(lf_newton(failing, NULL, 1, x, &o, work, iwork, &info, &err), LF_ECALLBACK);
    assert_non_null(strstr(err.msg, "potential callback failed"));
    /* singular Jacobian */
    x[0] = 0;
    assert_int_equal(lf_newton(flat, NULL, 1, x, &o, work, iwork, &info, &err), LF_EDOMAIN);
    assert_non_null(strstr(err.msg, "singular"));
    printf("  \"%s\"\n", err.msg);
    /* a NULL error record and NULL info are allowed */
    x[0] = 0.5;
    assert_int_equal(lf_newton(no_root, NULL, 1, x, &o, work, iwork, NULL, NULL), LF_ENOCONV);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lu_random),       cmocka_unit_test(test_lu_pivoting_and_singular),
        cmocka_unit_test(test_m3_helpers),      cmocka_unit_test(test_cholesky),
        cmocka_unit_test(test_scaled),          cmocka_unit_test(test_newton_fd_step),
        cmocka_unit_test(test_newton_2d),       cmocka_unit_test(test_newton_6d),
        cmocka_unit_test(test_newton_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
