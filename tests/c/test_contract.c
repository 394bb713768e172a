/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Contractivity of Lie group integrators (Tumiotto, Cokaj, Celledoni, Owren, Arnold) on the S^2 and
 * TS^2 gradient flows with D = diag(2, 2, 1): the closed forms of both flows against rk8pd; implicit
 * Lie–Euler (with continuation in h) against the bisected root of its latitude equation for h up
 * to 100, and its velocity part on TS^2 against the closed form derived for it; the Sasaki
 * distance (exact cases, symmetry, the bound, the triangle inequality, shorter than perturbed
 * curves); the logarithmic norm against the eigenvalue formula of their Def. 2 and against the limit
 * definition. Every measurement is printed, then asserted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_linalg.h>

#include "lieflow.h"
#include "testutil.h"

static const double D3[3] = {2, 2, 1}; /* k = d - d3 = 1 */

static void latlon(double phi, double th, double q[3])
{
    q[0] = cos(phi) * cos(th), q[1] = cos(phi) * sin(th), q[2] = sin(phi);
}

static lf_system *flow(const char *name, lf_factor_kind k, const double *y0)
{
    lf_error e;
    lf_manifold *M = lf_manifold_new(1, &k, NULL, LF_RIGHT_TRIVIALIZED, &e);
    lf_system *s = lf_lie_ode_builtin(name, M, y0, D3, &e);
    if (!s) fail_msg("%s", e.msg);
    lf_manifold_free(M);
    return s;
}

/* q(t) = e^{-Dt} q0 / |e^{-Dt} q0|; on TS^2 also w(t) = e^{-t} (alpha N x q(t) + beta N), N the
 * normal of the meridian plane, alpha = w0 . (N x q0), beta = w0 . N */
static void closed_form(const double *y0, double t, double *y)
{
    double p[3];
    for (int i = 0; i < 3; i++) p[i] = exp(-D3[i] * t) * y0[i];
    lf_v3_scale(p, 1 / lf_v3_norm(p), y);
    double e3[3] = {0, 0, 1}, N[3], T0[3], T[3];
    lf_v3_cross(e3, y0, N);
    lf_v3_scale(N, 1 / lf_v3_norm(N), N);
    lf_v3_cross(N, y0, T0);
    lf_v3_cross(N, y, T);
    double al = lf_v3_dot(y0 + 3, T0), be = lf_v3_dot(y0 + 3, N);
    for (int i = 0; i < 3; i++) y[3 + i] = exp(-t) * (al * T[i] + be * N[i]);
}

static void test_closed_forms(void **state)
{
    (void)state;
    double y0[6], w[3] = {0.3, -0.2, 0.5};
    latlon(-0.9, 0.4, y0);
    lf_s2_tangent(y0, w, y0 + 3);
    lf_system *s2 = flow("s2_gradient_flow", LF_S2, y0), *ts = flow("ts2_gradient_flow", LF_TS2, y0);
    double times[20], out2[60], out6[120], worst2 = 0, worst6 = 0;
    for (int k = 0; k < 20; k++) times[k] = 0.5 * (k + 1);
    lf_reference_opts ro = {1e-14, 1e-14, 1e-3, 0, NULL};
    lf_error e;
    if (lf_reference_solve(s2, y0, 0, times, 20, out2, NULL, &ro, &e) != LF_OK ||
        lf_reference_solve(ts, y0, 0, times, 20, out6, NULL, &ro, &e) != LF_OK)
        fail_msg("%s", e.msg);
    for (int k = 0; k < 20; k++) {
        double y[6];
        closed_form(y0, times[k], y);
        worst2 = fmax(worst2, maxdiff(3, out2 + 3 * k, y));
        worst6 = fmax(worst6, maxdiff(6, out6 + 6 * k, y));
    }
    CHECK_LE(worst2, 1e-12, "S2 flow: rk8pd vs e^{-Dt} q0/|e^{-Dt} q0|, t <= 10");
    CHECK_LE(worst6, 1e-12, "TS2 flow (eq. (3)): rk8pd vs the closed form, t <= 10");
    lf_system_free(s2);
    lf_system_free(ts);
}

/* the root of phi1 - phi0 = (h/2) sin 2 phi1 in [-pi/2, phi0] for phi0 <= -pi/4 (unique there:
 * g' = 1 - h cos 2 phi1 >= 1), by bisection */
static double backward_euler_latitude(double phi0, double h)
{
    double lo = -M_PI / 2, hi = phi0;
    for (int i = 0; i < 200; i++) {
        double m = 0.5 * (lo + hi), g = m - phi0 - 0.5 * h * sin(2 * m);
        if (g > 0) hi = m;
        else lo = m;
    }
    return 0.5 * (lo + hi);
}

static void test_implicit_lie_euler(void **state)
{
    (void)state;
    const double lats[3] = {-46, -60, -85}, hs[7] = {0.01, 0.1, 1, 3, 10, 30, 100};
    double worst = 0, worst_w = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 7; j++) {
            const double phi0 = lats[i] * M_PI / 180, th0 = 0.3, h = hs[j];
            double y0[6], w[3] = {0.2, 0.1, -0.3};
            latlon(phi0, th0, y0);
            lf_s2_tangent(y0, w, y0 + 3);
            lf_system *sys = flow("ts2_gradient_flow", LF_TS2, y0);
            lf_error e;
            lf_stepper *st = lf_stepper_new(lf_method_find("lie_euler_implicit"), sys, y0, 0, NULL, &e);
            if (!st || lf_stepper_step(st, h, 1) != LF_OK) fail_msg("%s", st ? lf_stepper_error(st)->msg : e.msg);
            const double *y = lf_stepper_state(st);
            const double phi1 = asin(y[2]), th1 = atan2(y[1], y[0]), ref = backward_euler_latitude(phi0, h);
            worst = fmax(worst, fmax(fabs(phi1 - ref), fabs(th1 - th0)));
            /* w1 in the frame (N x q1, N): (alpha0/(1 + h), beta0/(1 + h sin(d)/d)), d = |phi1 - phi0|
             * (the rotation Q = exp(a) transports w parallel along the meridian; D(a) shrinks the N
             * part of the shear by sin(d)/d) */
            double e3[3] = {0, 0, 1}, N[3], T0[3], T1[3];
            lf_v3_cross(e3, y0, N);
            lf_v3_scale(N, 1 / lf_v3_norm(N), N);
            lf_v3_cross(N, y0, T0);
            lf_v3_cross(N, y, T1);
            const double d = fabs(phi1 - phi0), sd = d > 0 ? sin(d) / d : 1;
            const double al = lf_v3_dot(y0 + 3, T0) / (1 + h), be = lf_v3_dot(y0 + 3, N) / (1 + h * sd);
            double wref[3];
            for (int k = 0; k < 3; k++) wref[k] = al * T1[k] + be * N[k];
            worst_w = fmax(worst_w, maxdiff(3, y + 3, wref));
            lf_stepper_free(st);
            lf_system_free(sys);
        }
    CHECK_LE(worst, 1e-12, "implicit Lie-Euler latitude vs bisection, h = 0.01 .. 100, in the cap");
    CHECK_LE(worst_w, 1e-13, "its TS2 velocity vs (alpha/(1+h), beta/(1+h sin d/d))");
    /* explicit Lie-Euler is explicit Euler on the latitude: phi1 = phi0 + (h/2) sin 2 phi0 along the
     * meridian (past the pole for large h): q1 = cos(dphi) q0 + sin(dphi) e_phi(q0) */
    double y0[3], worst_e = 0;
    latlon(-0.8, 0.1, y0);
    lf_system *s2 = flow("s2_gradient_flow", LF_S2, y0);
    for (int j = 0; j < 7; j++) {
        lf_error e;
        lf_stepper *st = lf_stepper_new(lf_method_find("lie_euler"), s2, y0, 0, NULL, &e);
        lf_stepper_step(st, hs[j], 1);
        const double dphi = 0.5 * hs[j] * sin(-1.6);
        double ephi[3] = {-sin(-0.8) * cos(0.1), -sin(-0.8) * sin(0.1), cos(-0.8)}, ref[3];
        for (int k = 0; k < 3; k++) ref[k] = cos(dphi) * y0[k] + sin(dphi) * ephi[k];
        worst_e = fmax(worst_e, maxdiff(3, lf_stepper_state(st), ref));
        lf_stepper_free(st);
    }
    CHECK_LE(worst_e, 1e-13, "explicit Lie-Euler = explicit Euler on the latitude, h = 0.01 .. 100");
    lf_system_free(s2);
}

/* ---------------------------------------------------------------- Sasaki */
static void random_ts2(gsl_rng *r, double *y, double lat_lo, double lat_hi, double wmax)
{
    double w[3];
    latlon(lat_lo + (lat_hi - lat_lo) * gsl_rng_uniform(r), 2 * PI * gsl_rng_uniform(r), y);
    for (int k = 0; k < 3; k++) w[k] = wmax * (2 * gsl_rng_uniform(r) - 1);
    lf_s2_tangent(y, w, y + 3);
}

/* Sasaki length of the curve (x(t), u(t)) sampled at n + 1 points: |x'|^2 + |u' + (x'.u) x|^2,
 * central differences, trapezoid */
static double curve_length(int n, double (*x)[3], double (*u)[3])
{
    double L = 0;
    for (int i = 0; i < n; i++) {
        double dx[3], du[3], xm[3], um[3], v[3];
        for (int k = 0; k < 3; k++) {
            dx[k] = (x[i + 1][k] - x[i][k]) * n;
            du[k] = (u[i + 1][k] - u[i][k]) * n;
            xm[k] = 0.5 * (x[i + 1][k] + x[i][k]);
            um[k] = 0.5 * (u[i + 1][k] + u[i][k]);
        }
        double s = lf_v3_dot(dx, um);
        for (int k = 0; k < 3; k++) v[k] = du[k] + s * xm[k];
        L += sqrt(lf_v3_dot(dx, dx) + lf_v3_dot(v, v)) / n;
    }
    return L;
}

static void test_sasaki(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(3);
    lf_error e;
    double worst_same = 0, worst_horiz = 0, worst_sym = 0, worst_tri = -1, worst_bound = -1, worst_pert = -1;
    for (int trial = 0; trial < 30; trial++) {
        double a[6], b[6], c[6], d, d2, bd;
        random_ts2(r, a, -1.4, -0.2, 0.6);
        /* the same base point: the fibre is flat and totally geodesic, d = |w0 - w1| */
        memcpy(b, a, 3 * sizeof(double));
        double w[3] = {gsl_ran_ugaussian(r), gsl_ran_ugaussian(r), gsl_ran_ugaussian(r)};
        lf_s2_tangent(b, w, b + 3);
        lf_ts2_sasaki_dist(a, b, &d, NULL, &e);
        double dw[3];
        lf_v3_sub(a + 3, b + 3, dw);
        worst_same = fmax(worst_same, fabs(d - lf_v3_norm(dw)));
        /* the horizontal lift of a geodesic: w1 = the parallel transport of w0, d = the angle */
        random_ts2(r, b, -1.4, -0.2, 0);
        double ax[3];
        lf_v3_cross(a, b, ax);
        double ang = atan2(lf_v3_norm(ax), lf_v3_dot(a, b));
        lf_v3_scale(ax, ang / lf_v3_norm(ax), ax);
        lf_v3_copy(a + 3, b + 3);
        lf_so3_rotate(ax, b + 3);
        lf_ts2_sasaki_dist(a, b, &d, NULL, &e);
        worst_horiz = fmax(worst_horiz, fabs(d - ang));
        /* general: symmetric, below the bound, triangle inequality */
        random_ts2(r, b, -1.4, -0.2, 0.6);
        random_ts2(r, c, -1.4, -0.2, 0.6);
        double dab, dba, dac, dcb;
        if (lf_ts2_sasaki_dist(a, b, &dab, NULL, &e) != LF_OK || lf_ts2_sasaki_dist(b, a, &dba, NULL, &e) != LF_OK ||
            lf_ts2_sasaki_dist(a, c, &dac, NULL, &e) != LF_OK || lf_ts2_sasaki_dist(c, b, &dcb, NULL, &e) != LF_OK)
            fail_msg("%s", e.msg);
        lf_ts2_sasaki_bound(a, b, &bd, &e);
        worst_sym = fmax(worst_sym, fabs(dab - dba));
        worst_tri = fmax(worst_tri, dab - dac - dcb);
        worst_bound = fmax(worst_bound, dab - bd);
        (void)d2;
        /* the bound's curve perturbed (in q off the great circle, in w by a bump): never shorter */
        if (trial < 10) {
            enum { NS = 400 };
            static double x[NS + 1][3], u[NS + 1][3];
            double axb[3], n[3];
            lf_v3_cross(a, b, axb);
            double an = atan2(lf_v3_norm(axb), lf_v3_dot(a, b));
            lf_v3_scale(axb, 1 / lf_v3_norm(axb), n);
            for (int sgn = -1; sgn <= 1; sgn += 2)
                for (int mode = 0; mode < 2; mode++) {
                    for (int i = 0; i <= NS; i++) {
                        double t = (double)i / NS, rot[3], q[3], Pw0[3], Pw1[3], bump = 0.05 * sgn * sin(PI * t);
                        lf_v3_scale(n, an * t, rot);
                        lf_v3_copy(a, q);
                        lf_so3_rotate(rot, q);
                        if (mode == 0) { /* tilt q out of the plane */
                            for (int k = 0; k < 3; k++) q[k] += bump * n[k];
                            lf_v3_scale(q, 1 / lf_v3_norm(q), q);
                        }
                        lf_v3_copy(a + 3, Pw0);
                        lf_so3_rotate(rot, Pw0);
                        double back[3] = {-n[0] * an * (1 - t), -n[1] * an * (1 - t), -n[2] * an * (1 - t)};
                        lf_v3_copy(b + 3, Pw1);
                        lf_so3_rotate(back, Pw1);
                        double wt[3];
                        for (int k = 0; k < 3; k++) wt[k] = (1 - t) * Pw0[k] + t * Pw1[k] + (mode == 1 ? bump * n[k] : 0);
                        lf_v3_copy(q, x[i]);
                        lf_s2_tangent(q, wt, u[i]);
                    }
                    worst_pert = fmax(worst_pert, dab - curve_length(NS, x, u));
                }
        }
    }
    CHECK_LE(worst_same, 1e-13, "Sasaki, q0 = q1: |d - |w0 - w1||");
    CHECK_LE(worst_horiz, 1e-11, "Sasaki, w1 = parallel transport of w0: |d - angle|");
    CHECK_LE(worst_sym, 1e-11, "Sasaki: |d(a, b) - d(b, a)|");
    CHECK_LE(worst_tri, 1e-11, "Sasaki: max d(a, b) - d(a, c) - d(c, b)");
    CHECK_LE(worst_bound, 1e-12, "Sasaki: max d - (the bound)");
    CHECK_LE(worst_pert, 0, "Sasaki: max d - (length of perturbed admissible curves)");
    gsl_rng_free(r);
    /* points off TS^2 and antipodal base points are errors */
    double a[6] = {0, 0, 1, 0.1, 0, 0.2}, b[6] = {0, 0, -1, 0, 0, 0}, d;
    assert_int_equal(lf_ts2_sasaki_dist(a, b, &d, NULL, &e), LF_EINVAL);
    printf("  %s\n", e.msg);
    a[5] = 0;
    assert_int_equal(lf_ts2_sasaki_dist(a, b, &d, NULL, &e), LF_EDOMAIN);
    printf("  %s\n", e.msg);
}

/* ---------------------------------------------------------------- logarithmic norm */
/* largest real part of the eigenvalues of (G A G^-1 + A^T)/2 (their Def. 2, signed), and the
 * largest |imaginary part| (0: the matrix is similar to a symmetric one) */
static void def2_eigen(int n, const double *A, const double *G, double *lmax, double *imax)
{
    gsl_matrix *Gm = gsl_matrix_alloc((size_t)n, (size_t)n), *Gi = gsl_matrix_alloc((size_t)n, (size_t)n),
               *B = gsl_matrix_alloc((size_t)n, (size_t)n);
    gsl_permutation *p = gsl_permutation_alloc((size_t)n);
    int sg;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) gsl_matrix_set(Gm, (size_t)i, (size_t)j, G[i * n + j]);
    gsl_linalg_LU_decomp(Gm, p, &sg);
    gsl_linalg_LU_invert(Gm, p, Gi);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0; /* (G A G^-1)_ij */
            for (int k = 0; k < n; k++)
                for (int l = 0; l < n; l++) s += G[i * n + k] * A[k * n + l] * gsl_matrix_get(Gi, (size_t)l, (size_t)j);
            gsl_matrix_set(B, (size_t)i, (size_t)j, 0.5 * (s + A[j * n + i]));
        }
    gsl_vector_complex *ev = gsl_vector_complex_alloc((size_t)n);
    gsl_eigen_nonsymm_workspace *w = gsl_eigen_nonsymm_alloc((size_t)n);
    gsl_eigen_nonsymm(B, ev, w);
    *lmax = -INFINITY;
    *imax = 0;
    for (int i = 0; i < n; i++) {
        gsl_complex z = gsl_vector_complex_get(ev, (size_t)i);
        *lmax = fmax(*lmax, GSL_REAL(z));
        *imax = fmax(*imax, fabs(GSL_IMAG(z)));
    }
    gsl_eigen_nonsymm_free(w);
    gsl_vector_complex_free(ev);
    gsl_permutation_free(p);
    gsl_matrix_free(Gm);
    gsl_matrix_free(Gi);
    gsl_matrix_free(B);
}

/* (||I + D A||_G - 1)/D with ||M||_G = sigma_max(L^T M L^-T), G = L L^T (Def. 2 before the limit) */
static double def2_limit(int n, const double *A, const double *G, double Dl)
{
    gsl_matrix *L = gsl_matrix_alloc((size_t)n, (size_t)n), *M = gsl_matrix_alloc((size_t)n, (size_t)n),
               *V = gsl_matrix_alloc((size_t)n, (size_t)n);
    gsl_vector *S = gsl_vector_alloc((size_t)n), *wk = gsl_vector_alloc((size_t)n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            gsl_matrix_set(L, (size_t)i, (size_t)j, G[i * n + j]);
            gsl_matrix_set(M, (size_t)i, (size_t)j, (i == j) + Dl * A[i * n + j]);
        }
    gsl_linalg_cholesky_decomp1(L);
    gsl_blas_dtrmm(CblasLeft, CblasLower, CblasTrans, CblasNonUnit, 1.0, L, M);
    gsl_blas_dtrsm(CblasRight, CblasLower, CblasTrans, CblasNonUnit, 1.0, L, M);
    gsl_linalg_SV_decomp(M, V, S, wk);
    double r = (gsl_vector_get(S, 0) - 1) / Dl;
    gsl_matrix_free(L);
    gsl_matrix_free(M);
    gsl_matrix_free(V);
    gsl_vector_free(S);
    gsl_vector_free(wk);
    return r;
}

static void test_lognorm(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(17);
    double worst_eig = 0, worst_imag = 0, worst_lim = 0;
    for (int trial = 0; trial < 200; trial++) {
        const int n = 2 + trial % 5;
        double A[36], B[36], G[36], mu, lmax, imax;
        for (int i = 0; i < n * n; i++) {
            A[i] = gsl_ran_ugaussian(r);
            B[i] = gsl_ran_ugaussian(r);
        }
        for (int i = 0; i < n; i++) /* G = B B^T + I/2 */
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int k = 0; k < n; k++) s += B[i * n + k] * B[j * n + k];
                G[i * n + j] = s + 0.5 * (i == j);
            }
        lf_error e;
        if (lf_lognorm(n, A, G, &mu, &e) != LF_OK) fail_msg("%s", e.msg);
        def2_eigen(n, A, G, &lmax, &imax);
        worst_eig = fmax(worst_eig, fabs(mu - lmax) / (1 + fabs(mu)));
        worst_imag = fmax(worst_imag, imax / (1 + fabs(mu)));
        worst_lim = fmax(worst_lim, fabs(mu - def2_limit(n, A, G, 1e-7)) / (1 + fabs(mu)));
    }
    CHECK_LE(worst_eig, 1e-10, "lognorm vs max eig of (G A G^-1 + A^T)/2 (relative)");
    CHECK_LE(worst_imag, 1e-8, "(G A G^-1 + A^T)/2 has real eigenvalues (max |Im|)");
    CHECK_LE(worst_lim, 1e-5, "lognorm vs (||I + D A||_G - 1)/D, D = 1e-7 (relative)");
    gsl_rng_free(r);
    /* signed, not max |lambda|: A = diag(-1, -2) contracts, mu = -1 (max |lambda| would say 2) */
    double A2[4] = {-1, 0, 0, -2}, I2[4] = {1, 0, 0, 1}, mu;
    lf_error e;
    lf_lognorm(2, A2, I2, &mu, &e);
    printf("  lognorm(diag(-1, -2)) = %g\n", mu);
    assert_true(fabs(mu + 1) <= 1e-15);
    assert_int_equal(lf_lognorm(2, A2, NULL, &mu, &e), LF_OK);
    assert_true(fabs(mu + 1) <= 1e-15);
    double Gbad[4] = {1, 2, 2, 1}, Gns[4] = {1, 0.5, 0.2, 1};
    assert_int_equal(lf_lognorm(2, A2, Gbad, &mu, &e), LF_EINVAL);
    printf("  %s\n", e.msg);
    assert_non_null(strstr(e.msg, "positive definite"));
    assert_int_equal(lf_lognorm(2, A2, Gns, &mu, &e), LF_EINVAL);
    printf("  %s\n", e.msg);
    assert_non_null(strstr(e.msg, "symmetric"));
    /* found by the C API fuzzer: pi on the diagonal and subnormal entries gave mu = pi (1 + 1e-11)
     * (gsl_eigen_symm on subnormals); now exact to round-off */
    const double As[9] = {0x0.0c86974e718d7p-1022, 0, 0, 0x0.000000080c83fp-1022, 0, 0, 0x0.0001000000008p-1022, 0,
                          M_PI};
    assert_int_equal(lf_lognorm(3, As, NULL, &mu, &e), LF_OK);
    printf("  lognorm(diag(subnormal, 0, pi) + subnormal entries) - pi = %.3g\n", mu - M_PI);
    assert_true(fabs(mu - M_PI) <= 4e-16 * M_PI);
    /* extreme scales: mu(c A) = c mu(A), and scaling G changes nothing */
    const double A3[9] = {-1, 2, 0, 0.5, -3, 1, 0, 1, -2}, G3[9] = {2, 0.5, 0, 0.5, 1, 0, 0, 0, 3};
    double mu0, mu1, S[9];
    assert_int_equal(lf_lognorm(3, A3, G3, &mu0, &e), LF_OK);
    const double cs[] = {1e-300, 1e-200, 1e200, 1e300};
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < 9; i++) S[i] = cs[k] * A3[i];
        assert_int_equal(lf_lognorm(3, S, G3, &mu1, &e), LF_OK);
        assert_true(fabs(mu1 / (cs[k] * mu0) - 1) <= 1e-14);
        for (int i = 0; i < 9; i++) S[i] = cs[k] * G3[i];
        assert_int_equal(lf_lognorm(3, A3, S, &mu1, &e), LF_OK);
        assert_true(fabs(mu1 / mu0 - 1) <= 1e-14);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_closed_forms),
        cmocka_unit_test(test_implicit_lie_euler),
        cmocka_unit_test(test_sasaki),
        cmocka_unit_test(test_lognorm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
