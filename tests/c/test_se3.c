/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SE(3) (core/lie/se3.h) and the se3 factor of Lie-group ODEs:
 *  - exp against the 4x4 matrix exponential of hat(xi) (lf_expm, [AH]) and, for small twists, its
 *    Taylor series, for small, medium, near-pi and larger rotations; log(exp(xi)) = xi for |w| < pi,
 *    exp(log(y)) = y (angle pi included); huge twists stay finite;
 *  - Q against Barfoot's closed form ([B17] §7.1.5) and dexp against its series sum ad^k/(k+1)!;
 *    dexp and dexpinv against central differences of exp and against each other; the transposes by
 *    <a, D b> = <D^T a, b>;
 *  - the bracket against the 4x4 commutator, Ad against G exp(xi) G^-1, mul, inv, act, velocity,
 *    diff, check;
 *  - every generic method on y' = y hat(xi) and y' = hat(xi) y with a constant twist: the flow after
 *    T = 3 is y0 exp(T xi) (exp(T xi) y0) to round-off (integrating a constant body velocity on
 *    SE(n) is what Manifolds.jl issue #609 reported wrong);
 *  - a free rigid body as a Lie ODE on se3 x r6 (the body-fixed twist (w, v), body momenta
 *    (Pi, P) = (J w, m v)) against the exact free body (exact.h) and the exact translation, with the
 *    fitted order of rkmk4, and the discrete gradients on its energy.
 * Every measurement is printed, then asserted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

/* ---------------------------------------------------------------- helpers */
/* C = A B (n x n, row-major; C must not alias) */
static void matmul(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += A[n * i + k] * B[n * k + j];
            C[n * i + j] = s;
        }
}

static void matvec(int n, const double *A, const double *x, double *y)
{
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int k = 0; k < n; k++) s += A[n * i + k] * x[k];
        y[i] = s;
    }
}

static double dot(int n, const double *a, const double *b)
{
    double s = 0;
    for (int k = 0; k < n; k++) s += a[k] * b[k];
    return s;
}

static double norm(int n, const double *a) { return sqrt(dot(n, a, a)); }

/* the twist of a 4x4 matrix [[hat w, v], [0, 0]] (w from the skew part) */
static void vee4(const double X[16], double xi[6])
{
    xi[0] = 0.5 * (X[9] - X[6]);
    xi[1] = 0.5 * (X[2] - X[8]);
    xi[2] = 0.5 * (X[4] - X[1]);
    for (int i = 0; i < 3; i++) xi[3 + i] = X[4 * i + 3];
}

/* the point of a 4x4 homogeneous matrix */
static void point_of(const double G[16], double y[12])
{
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) y[3 * i + j] = G[4 * i + j];
        y[9 + i] = G[4 * i + 3];
    }
}

static void expm4(const double xi[6], double E[16])
{
    double X[16];
    lf_error e;
    lf_se3_hat(xi, X);
    if (lf_expm(4, X, E, &e) != LF_OK) fail_msg("%s", e.msg);
}

/* a twist with rotation angle `angle` and translation part of norm `vn`, random directions */
static void rand_twist(gsl_rng *r, double angle, double vn, double xi[6])
{
    rand_dir(r, xi);
    lf_v3_scale(xi, angle, xi);
    rand_dir(r, xi + 3);
    lf_v3_scale(xi + 3, vn, xi + 3);
}

static void rand_point(gsl_rng *r, double y[12])
{
    lf_so3_random(gsl_rng_get(r), y, NULL);
    for (int k = 9; k < 12; k++) y[k] = 2 * gsl_ran_ugaussian(r);
}

/* ---------------------------------------------------------------- exp, log */
static const double angles[] = {1e-200, 1e-9, 1e-5, 1e-2, 0.5, 1.5, 2.5, 3.0, PI - 1e-3, PI - 1e-6, PI - 1e-10};
#define NANGLES ((int)(sizeof angles / sizeof angles[0]))

static void test_exp(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(1);
    double w_expm = 0, w_series = 0, w_orth = 0, w_big = 0;
    for (int a = 0; a < NANGLES + 2; a++)
        for (int trial = 0; trial < 50; trial++) {
            const double angle = a < NANGLES ? angles[a] : a == NANGLES ? 4.5 : 10.0;
            double xi[6], y[12], G[16], E[16];
            rand_twist(r, angle, 0.2 + 2 * gsl_rng_uniform(r), xi);
            lf_se3_exp(xi, y);
            lf_se3_matrix(y, G);
            expm4(xi, E);
            const double d = maxdiff(16, G, E) / fmax(1, maxabs(16, E));
            if (a < NANGLES) w_expm = fmax(w_expm, d);
            else w_big = fmax(w_big, d);
            w_orth = fmax(w_orth, lf_so3_orth_error(y));
            if (angle <= 1e-2) { /* the Taylor series of the 4x4 exponential, 30 terms */
                double X[16], T[16], S[16] = {0}, N[16];
                lf_se3_hat(xi, X);
                memset(T, 0, sizeof T);
                for (int k = 0; k < 4; k++) T[5 * k] = 1;
                for (int k = 1; k <= 30; k++) {
                    for (int i = 0; i < 16; i++) S[i] += T[i];
                    matmul(4, T, X, N);
                    for (int i = 0; i < 16; i++) T[i] = N[i] / k;
                }
                w_series = fmax(w_series, maxdiff(16, G, S) / fmax(1, maxabs(16, S)));
            }
        }
    CHECK_LE(w_expm, 1e-14, "exp vs lf_expm of the 4x4 hat, |w| <= pi (relative, max entry)");
    CHECK_LE(w_big, 1e-14, "exp vs lf_expm of the 4x4 hat, |w| = 4.5, 10");
    CHECK_LE(w_series, 1e-15, "exp vs the 4x4 Taylor series, |w| <= 1e-2 (relative)");
    CHECK_LE(w_orth, 4e-15, "||R^T R - I|| of exp");
    gsl_rng_free(r);
}

static void test_log(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(2);
    double w_log = 0, w_pi = 0, w_round = 0;
    for (int a = 0; a < NANGLES; a++)
        for (int trial = 0; trial < 50; trial++) {
            double xi[6], y[12], x2[6], d[6];
            rand_twist(r, angles[a], 0.2 + 2 * gsl_rng_uniform(r), xi);
            lf_se3_exp(xi, y);
            lf_se3_log(y, x2);
            for (int k = 0; k < 6; k++) d[k] = x2[k] - xi[k];
            const double rel = norm(6, d) / norm(6, xi);
            if (angles[a] < 3) w_log = fmax(w_log, rel);
            else w_pi = fmax(w_pi, rel);
        }
    for (int trial = 0; trial < 200; trial++) { /* exp(log(y)) = y, random points and angle exactly pi */
        double y[12], xi[6], z[12];
        rand_point(r, y);
        if (trial < 6) { /* R = diag(1, -1, -1) and its relatives: angle pi about a coordinate axis */
            memset(y, 0, 9 * sizeof(double));
            for (int k = 0; k < 3; k++) y[4 * k] = k == trial % 3 ? 1 : -1;
        }
        lf_se3_log(y, xi);
        assert_true(lf_v3_norm(xi) <= PI * (1 + 1e-15));
        lf_se3_exp(xi, z);
        w_round = fmax(w_round, maxdiff(12, y, z) / fmax(1, maxabs(12, y)));
    }
    CHECK_LE(w_log, 2e-15, "log(exp(xi)) = xi, |w| < 3 (relative)");
    CHECK_LE(w_pi, 4e-15, "log(exp(xi)) = xi, 3 <= |w| < pi (to pi - 1e-10)");
    CHECK_LE(w_round, 2e-15, "exp(log(y)) = y (angle pi included)");
    gsl_rng_free(r);
}

/* ---------------------------------------------------------------- dexp */
/* Barfoot's Q ([B17] §7.1.5, phi = w, rho = v): 1/2 P + a (WP + PW + WPW) + b (WWP + PWW - 3 WPW)
 * + c (WPWW + WWPW), a = (t - sin t)/t^3, b = (t^2 + 2 cos t - 2)/(2 t^4), c = (2t - 3 sin t + t cos t)/(2 t^5) */
static void barfoot_Q(const double xi[6], double Q[9])
{
    double t = lf_v3_norm(xi), W[9], P[9], WP[9], PW[9], WPW[9], WWP[9], PWW[9], WPWW[9], WWPW[9];
    double a = (t - sin(t)) / (t * t * t), b = (t * t + 2 * cos(t) - 2) / (2 * t * t * t * t),
           c = (2 * t - 3 * sin(t) + t * cos(t)) / (2 * t * t * t * t * t);
    lf_so3_hat(xi, W);
    lf_so3_hat(xi + 3, P);
    lf_m3_mul(W, P, WP);
    lf_m3_mul(P, W, PW);
    lf_m3_mul(WP, W, WPW);
    lf_m3_mul(W, WP, WWP);
    lf_m3_mul(PW, W, PWW);
    lf_m3_mul(WPW, W, WPWW);
    lf_m3_mul(W, WPW, WWPW);
    for (int i = 0; i < 9; i++)
        Q[i] = 0.5 * P[i] + a * (WP[i] + PW[i] + WPW[i]) + b * (WWP[i] + PWW[i] - 3 * WPW[i]) + c * (WPWW[i] + WWPW[i]);
}

/* the 6x6 series sum_k ad_xi^k/(k+1)! (ad = [[hat w, 0], [hat v, hat w]]), 80 terms */
static void dexp_series(const double xi[6], double S[36])
{
    double ad[36] = {0}, W[9], P[9], T[36] = {0}, N[36];
    lf_so3_hat(xi, W);
    lf_so3_hat(xi + 3, P);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            ad[6 * i + j] = ad[6 * (i + 3) + j + 3] = W[3 * i + j];
            ad[6 * (i + 3) + j] = P[3 * i + j];
        }
    for (int k = 0; k < 6; k++) T[7 * k] = 1;
    memset(S, 0, 36 * sizeof(double));
    for (int k = 0; k < 80; k++) { /* T = ad^k/(k+1)! */
        for (int i = 0; i < 36; i++) S[i] += T[i];
        matmul(6, T, ad, N);
        for (int i = 0; i < 36; i++) T[i] = N[i] / (k + 2);
    }
}

/* vee(d/ds exp(x + s y) exp(x)^-1 at s = 0), fourth-order central differences of the 4x4 exp */
static void fd_dexp(const double x[6], const double y[6], double out[6])
{
    const double h = 1e-3;
    double E[4][16], F[16], G[16], Gi[12], Ei[16], z[6];
    const double s[4] = {h, -h, 2 * h, -2 * h};
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < 6; i++) z[i] = x[i] + s[k] * y[i];
        expm4(z, E[k]);
    }
    for (int i = 0; i < 16; i++) F[i] = (8 * (E[0][i] - E[1][i]) - (E[2][i] - E[3][i])) / (12 * h);
    double y0[12];
    lf_se3_exp(x, y0);
    lf_se3_inv(y0, Gi);
    lf_se3_matrix(Gi, Ei);
    matmul(4, F, Ei, G);
    vee4(G, out);
}

static void test_dexp(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(3);
    double w_barfoot = 0, w_series = 0, w_fd = 0, w_fdinv = 0, w_inv = 0, w_apply = 0, w_tr = 0, w_alias = 0;
    for (int a = 0; a < NANGLES + 1; a++)
        for (int trial = 0; trial < 30; trial++) {
            const double angle = a < NANGLES ? angles[a] : 4.5;
            double x[6], y[6], Q[9], Qb[9], D[36], Di[36], S[36], P[36], out[6], fd[6], t1[6], t2[6];
            rand_twist(r, angle, 0.2 + 2 * gsl_rng_uniform(r), x);
            for (int k = 0; k < 6; k++) y[k] = gsl_ran_ugaussian(r);
            lf_se3_Q(x, Q);
            if (angle >= 0.5) { /* Barfoot's form cancels below (its coefficients b and c lose ~u/t^4) */
                barfoot_Q(x, Qb);
                w_barfoot = fmax(w_barfoot, maxdiff(9, Q, Qb) / maxabs(9, Q));
            }
            lf_se3_dexp_matrix(x, 0, D);
            lf_se3_dexp_matrix(x, 1, Di);
            dexp_series(x, S);
            w_series = fmax(w_series, maxdiff(36, D, S) / maxabs(36, S));
            matmul(6, D, Di, P); /* = I */
            for (int k = 0; k < 6; k++) P[7 * k] -= 1;
            w_inv = fmax(w_inv, maxabs(36, P));
            /* against central differences of exp */
            fd_dexp(x, y, fd);
            lf_se3_dexp(x, y, 0, 0, out);
            for (int k = 0; k < 6; k++) out[k] -= fd[k];
            w_fd = fmax(w_fd, norm(6, out) / norm(6, fd));
            lf_se3_dexp(x, fd, 1, 0, out); /* dexpinv(FD) = y */
            for (int k = 0; k < 6; k++) out[k] -= y[k];
            w_fdinv = fmax(w_fdinv, norm(6, out) / norm(6, y));
            /* the vector forms against the matrices, and the transposes */
            for (int inv = 0; inv < 2; inv++) {
                double b[6], Mb[6], c[6];
                const double *M = inv ? Di : D;
                for (int k = 0; k < 6; k++) c[k] = gsl_ran_ugaussian(r);
                lf_se3_dexp(x, y, inv, 0, b);
                matvec(6, M, y, Mb);
                w_apply = fmax(w_apply, maxdiff(6, b, Mb) / maxabs(6, Mb));
                lf_se3_dexp(x, c, inv, 1, t1); /* <c, M y> = <M^T c, y> */
                w_tr = fmax(w_tr, fabs(dot(6, c, b) - dot(6, t1, y)) / (norm(6, c) * norm(6, b)));
                for (int tr = 0; tr < 2; tr++) { /* out may alias v */
                    memcpy(t2, c, sizeof t2);
                    lf_se3_dexp(x, t2, inv, tr, t2);
                    lf_se3_dexp(x, c, inv, tr, t1);
                    w_alias = fmax(w_alias, maxdiff(6, t1, t2));
                }
            }
        }
    CHECK_LE(w_barfoot, 4e-15, "Q vs Barfoot's closed form, |w| >= 0.5 (relative)");
    CHECK_LE(w_series, 4e-15, "dexp vs sum ad^k/(k+1)! (relative)");
    CHECK_LE(w_fd, 1e-10, "dexp vs central differences of exp (relative)");
    CHECK_LE(w_fdinv, 1e-10, "dexpinv(central differences) = y (relative)");
    CHECK_LE(w_inv, 1e-13, "dexp dexpinv = I (6x6)");
    CHECK_LE(w_apply, 2e-15, "dexp(u, v) = (6x6 matrix) v, and dexpinv (relative)");
    CHECK_LE(w_tr, 2e-15, "<a, D b> = <D^T a, b> (dexp and dexpinv, relative)");
    CHECK_LE(w_alias, 0, "out aliasing v");
    /* huge twists: still rigid motions with finite positions, finite dexp and dexpinv (on both sides of
     * 2^100, where Q moves to the unit axis, and of so3's 2^500) */
    const double huge[] = {1e20, 1e30, 0x1p+100, 2e30, 1e60, 1e100, 1e154, 1e200, 3e300};
    for (int k = 0; k < (int)(sizeof huge / sizeof huge[0]); k++) {
        double xi[6] = {huge[k], -huge[k] / 3, huge[k] * 2 / 3, 1, 2, 3}, y[12], D[36], Di[36], P[36];
        lf_error e;
        lf_se3_exp(xi, y);
        assert_int_equal(lf_se3_check(y, 1e-12, "exp(huge)", &e), LF_OK);
        lf_se3_dexp_matrix(xi, 0, D);
        lf_se3_dexp_matrix(xi, 1, Di);
        matmul(6, D, Di, P);
        for (int i = 0; i < 36; i++) assert_true(isfinite(D[i]) && isfinite(Di[i]));
        for (int i = 0; i < 6; i++) P[7 * i] -= 1;
        /* |dexp dexpinv - I| relative to |dexp| |dexpinv| (dexpinv grows like |w|; cot(|w|/2) is at random) */
        const double rel = maxabs(36, P) / (maxabs(36, D) * maxabs(36, Di));
        printf("  |w| = %8.2g: p = (%.3g, %.3g, %.3g), ||R^T R - I|| = %.2g, |dexp dexpinv - I| / |dexp||dexpinv| = "
               "%.2g\n",
               lf_v3_norm(xi), y[9], y[10], y[11], lf_so3_orth_error(y), rel);
        assert_true(rel < 1e-14);
    }
    /* Q at large |w| (w on the x axis, so that |w| is exact: beyond |w| ~ 1/u the phase of sin |w| is that
     * of the rounded norm) against 400-digit values of Barfoot's form (which cancels in double there), v =
     * (1, 2, 3); 3e30 is past 2^100, where Q is evaluated on the unit axis */
    static const struct {
        double t, Q[9];
    } qref[] = {
        {1e6,
         {0.0, 2.000000510243387e-06, 3.0000011764762516e-06, 2.000000889730622e-06, 9.367524775266469e-07,
          3.499935654191654e-07, 3.0000009234847618e-06, -3.499935654191654e-07, 9.367524775266469e-07}},
        {3e30,
         {0.0, 6.6666666666666675e-31, 1e-30, 6.6666666666666675e-31, -3.291888895771555e-31, -5.240024895046266e-32,
          1e-30, 5.240024895046266e-32, -3.291888895771555e-31}},
        {1e200,
         {0.0, 2e-200, 3e-200, 2e-200, 7.650518214752429e-201, 6.4396871853950575e-201, 3e-200,
          -6.4396871853950575e-201, 7.650518214752429e-201}},
    };
    double w_qref = 0;
    for (int k = 0; k < 3; k++) {
        double xi[6] = {qref[k].t, 0, 0, 1, 2, 3}, Q[9];
        lf_se3_Q(xi, Q);
        w_qref = fmax(w_qref, maxdiff(9, Q, qref[k].Q) / maxabs(9, qref[k].Q));
    }
    CHECK_LE(w_qref, 4e-16, "Q at |w| = 1e6, 3e30, 1e200 vs 400-digit values (relative)");
    gsl_rng_free(r);
}

/* ---------------------------------------------------------------- the group's other maps */
static void test_group(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(4);
    double w_br = 0, w_ad = 0, w_mul = 0, w_inv = 0, w_act = 0, w_vel = 0, w_diff = 0;
    for (int trial = 0; trial < 200; trial++) {
        double x[6], z[6], X[16], Z[16], XZ[16], ZX[16], C[16], b[6], c[6];
        rand_twist(r, 3 * gsl_rng_uniform(r), 2 * gsl_rng_uniform(r), x);
        rand_twist(r, 3 * gsl_rng_uniform(r), 2 * gsl_rng_uniform(r), z);
        lf_se3_hat(x, X);
        lf_se3_hat(z, Z);
        matmul(4, X, Z, XZ);
        matmul(4, Z, X, ZX);
        for (int i = 0; i < 16; i++) C[i] = XZ[i] - ZX[i];
        vee4(C, c);
        lf_se3_bracket(x, z, b);
        w_br = fmax(w_br, maxdiff(6, b, c) / (norm(6, x) * norm(6, z)));
        /* Ad: exp(Ad_y x) = y exp(x) y^-1 */
        double y[12], y2[12], yi[12], E[12], A[36], Ax[6], lhs[12], rhs[12], G[16], G2[16], GG[16], P[12];
        rand_point(r, y);
        rand_point(r, y2);
        lf_se3_Ad(y, A);
        matvec(6, A, x, Ax);
        lf_se3_exp(Ax, lhs);
        lf_se3_exp(x, E);
        lf_se3_inv(y, yi);
        lf_se3_mul(y, E, rhs);
        lf_se3_mul(rhs, yi, rhs);
        w_ad = fmax(w_ad, maxdiff(12, lhs, rhs) / fmax(1, maxabs(12, lhs)));
        /* mul = the 4x4 product; y y^-1 = identity */
        lf_se3_matrix(y, G);
        lf_se3_matrix(y2, G2);
        matmul(4, G, G2, GG);
        point_of(GG, P);
        lf_se3_mul(y, y2, lhs);
        w_mul = fmax(w_mul, maxdiff(12, lhs, P) / maxabs(12, P));
        lf_se3_mul(y, yi, lhs);
        memset(P, 0, sizeof P);
        P[0] = P[4] = P[8] = 1;
        w_inv = fmax(w_inv, maxdiff(12, lhs, P) / fmax(1, lf_v3_norm(y + 9)));
        /* act on both sides vs the product with exp; velocity as the derivative of act at 0; diff */
        for (int right = 0; right < 2; right++) {
            double ya[12], yp[12], ym[12], fd[12], v[12], xs[6], xd[6];
            memcpy(ya, y, sizeof ya);
            lf_se3_act(x, ya, right);
            if (right) lf_se3_mul(y, E, P);
            else lf_se3_mul(E, y, P);
            w_act = fmax(w_act, maxdiff(12, ya, P) / maxabs(12, P));
            lf_se3_diff(y, ya, right, xd);
            for (int k = 0; k < 6; k++) xd[k] -= x[k];
            w_diff = fmax(w_diff, norm(6, xd) / norm(6, x));
            const double h = 1e-5;
            for (int k = 0; k < 6; k++) xs[k] = h * z[k];
            memcpy(yp, y, sizeof yp);
            lf_se3_act(xs, yp, right);
            for (int k = 0; k < 6; k++) xs[k] = -h * z[k];
            memcpy(ym, y, sizeof ym);
            lf_se3_act(xs, ym, right);
            for (int k = 0; k < 12; k++) fd[k] = (yp[k] - ym[k]) / (2 * h);
            lf_se3_velocity(y, z, right, v);
            w_vel = fmax(w_vel, maxdiff(12, fd, v) / fmax(1, maxabs(12, v)));
        }
    }
    CHECK_LE(w_br, 1e-15, "bracket vs the 4x4 commutator, / |x||y|");
    CHECK_LE(w_ad, 1e-14, "exp(Ad_y x) = y exp(x) y^-1");
    CHECK_LE(w_mul, 1e-15, "mul vs the 4x4 product (relative)");
    CHECK_LE(w_inv, 2e-15, "y y^-1 = identity (/ max(1, |p|))");
    CHECK_LE(w_act, 2e-15, "act = exp(x) y and y exp(x) (relative)");
    CHECK_LE(w_diff, 2e-14, "diff(y, act(x, y)) = x, both sides (relative)");
    CHECK_LE(w_vel, 1e-9, "velocity = d/ds act(s x, y) (central differences)");
    gsl_rng_free(r);
}

static void test_check(void **state)
{
    (void)state;
    lf_error e;
    double y[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 2, 3}, y2[12];
    assert_int_equal(lf_se3_check(y, 1e-9, "y0", &e), LF_OK);
    memcpy(y2, y, sizeof y);
    y2[8] = -1; /* a reflection */
    assert_int_equal(lf_se3_check(y2, 1e-9, "y0", &e), LF_EINVAL);
    printf("  %s\n", e.msg);
    assert_non_null(strstr(e.msg, "y0 (se3): R is not a rotation"));
    memcpy(y2, y, sizeof y);
    y2[1] = 1e-3;
    assert_int_equal(lf_se3_check(y2, 1e-9, "y0", &e), LF_EINVAL);
    printf("  %s\n", e.msg);
    memcpy(y2, y, sizeof y);
    y2[10] = NAN;
    assert_int_equal(lf_se3_check(y2, 1e-9, "y0", &e), LF_EINVAL);
    printf("  %s\n", e.msg);
    assert_non_null(strstr(e.msg, "position p is not finite"));
    /* the factor: parsed, named, sized; its distance a metric of the embedding */
    lf_factor_kind k;
    int d;
    assert_int_equal(lf_factor_parse("se3", &k, &d), 0);
    assert_int_equal(k, LF_SE3);
    assert_string_equal(lf_factor_kind_name(LF_SE3), "se3");
    lf_manifold *M = lf_manifold_new(1, &k, NULL, LF_LEFT_TRIVIALIZED, &e);
    assert_non_null(M);
    assert_true(lf_manifold_nparam(M) == 12 && lf_manifold_ndim(M) == 6 && lf_manifold_factor(M, 0)->right == 1);
    double id[12], z[12] = {0, -1, 0, 1, 0, 0, 0, 0, 1, 4, 5, 6};
    lf_manifold_identity(M, id);
    assert_int_equal(lf_manifold_check(M, id, 1e-12, "y", &e), LF_OK);
    assert_true(id[0] == 1 && id[4] == 1 && id[8] == 1 && maxabs(3, id + 9) == 0);
    const double dz = lf_se3_dist(id, z);
    printf("  dist(identity, (Rz(pi/2), (4, 5, 6))) = %.17g (expected sqrt(4 + 77))\n", dz);
    assert_true(fabs(dz - 9) <= 1e-15 && lf_manifold_dist(M, id, z) == dz);
    y2[10] = 2;
    y2[0] = 2;
    assert_int_equal(lf_manifold_check(M, y2, 1e-9, "y", &e), LF_EINVAL);
    printf("  %s (defect %.3g)\n", e.msg, lf_manifold_defect(M, y2));
    lf_manifold_free(M);
}

/* ---------------------------------------------------------------- Lie ODEs on se3 */
/* y' = y hat(xi) (left-trivialized) or hat(xi) y, xi constant */
static int constant_twist(void *ctx, double t, const double *y, double *xi, lf_error *err)
{
    (void)t, (void)y, (void)err;
    memcpy(xi, ctx, 6 * sizeof(double));
    return LF_OK;
}

static void test_constant_twist(void **state)
{
    (void)state;
    double xi[6] = {0.4, -0.7, 0.9, 1.2, -0.5, 0.8}, y0[12], Tx[6], E[12], ref[2][12];
    const double T = 3, h = 0.1;
    lf_so3_exp((double[3]){0.3, -0.2, 0.5}, y0);
    lf_v3_set(y0 + 9, 1, -2, 0.5);
    for (int k = 0; k < 6; k++) Tx[k] = T * xi[k];
    lf_se3_exp(Tx, E);
    lf_se3_mul(E, y0, ref[0]); /* right-trivialized: exp(T xi) y0 */
    lf_se3_mul(y0, E, ref[1]); /* left-trivialized (body-fixed twist): y0 exp(T xi) */
    double worst_named = 0, worst_all = 0;
    for (int side = 0; side < 2; side++) {
        lf_factor_kind k = LF_SE3;
        lf_error e;
        lf_manifold *M = lf_manifold_new(1, &k, NULL, side ? LF_LEFT_TRIVIALIZED : LF_RIGHT_TRIVIALIZED, &e);
        lf_lie_ode_def def = {.name = "constant twist", .f = constant_twist, .ctx = xi};
        lf_system *sys = lf_lie_ode_new(M, y0, &def, &e);
        lf_manifold_free(M);
        if (!sys) fail_msg("%s", e.msg);
        for (int i = 0; i < lf_method_count(); i++) {
            const lf_method *m = lf_method_at(i);
            const lf_method_info *info = method_info(m);
            if (info->form != LF_FORM_LIE_ODE || info->adaptive) continue;
            lf_stepper *st = new_stepper(m, sys, y0, NULL);
            run_steps(st, h, lround(T / h));
            const double d = maxdiff(12, lf_stepper_state(st), ref[side]);
            const int named = !strcmp(info->name, "rkmk4") || !strcmp(info->name, "rkmk_gl4") ||
                              !strcmp(info->name, "cf4") || !strcmp(info->name, "cg3");
            printf("  %-5s %-20s |y(3) - y0 exp(3 xi)| = %.2e\n", side ? "left" : "right", info->name, d);
            if (named) worst_named = fmax(worst_named, d);
            worst_all = fmax(worst_all, d);
            lf_stepper_free(st);
        }
        lf_system_free(sys);
    }
    CHECK_LE(worst_named, 1e-14, "rkmk4, rkmk_gl4, cf4, cg3: flow of a constant twist, T = 3");
    CHECK_LE(worst_all, 1e-13, "every generic fixed-step method (implicit: Newton to 1e-14)");
}

/* The free rigid body on se3 x r6, left-trivialized: y = (R, p; Pi, P), body momenta Pi = J w,
 * P = m v; f = ((w, v), (Pi x w + P x v, P x w)) (the Euler–Poincaré equations on se(3) for a
 * body frame at the centre of mass; P x v = 0). First integral H = Pi.J^-1 Pi/2 + |P|^2/(2m),
 * dH = (0, (w, v)) (H does not depend on (R, p)). */
typedef struct {
    double J[3], m;
} body;

static void twist_of(const body *b, const double *y, double w[3], double v[3])
{
    lf_v3_div(y + 12, b->J, w);
    lf_v3_scale(y + 15, 1 / b->m, v);
}

static int body_f(void *ctx, double t, const double *y, double *xi, lf_error *err)
{
    (void)t, (void)err;
    double c[3];
    twist_of(ctx, y, xi, xi + 3);
    lf_v3_cross(y + 12, xi, xi + 6);
    lf_v3_cross(y + 15, xi + 3, c);
    lf_v3_add(xi + 6, c, xi + 6);
    lf_v3_cross(y + 15, xi, xi + 9);
    return LF_OK;
}

static int body_H(void *ctx, const double *y, double *H, lf_error *err)
{
    (void)err;
    double w[3], v[3];
    twist_of(ctx, y, w, v);
    *H = 0.5 * (lf_v3_dot(y + 12, w) + lf_v3_dot(y + 15, v));
    return LF_OK;
}

static int body_dH(void *ctx, const double *y, double *g, lf_error *err)
{
    (void)err;
    memset(g, 0, 6 * sizeof(double));
    twist_of(ctx, y, g + 6, g + 9);
    return LF_OK;
}

typedef struct {
    lf_system *sys;
    body b;
    double y0[18], w0[3], v0[3];
} body_problem;

/* (the system keeps a pointer to p->b: p must outlive it) */
static void make_body(body_problem *p)
{
    *p = (body_problem){.b = {{0.9144, 1.098, 1.66}, 2.0}, .w0 = {0.45549, 0.82623, 0.03476}, .v0 = {0.3, -0.2, 0.5}};
    lf_so3_exp((double[3]){0.3, -0.2, 0.5}, p->y0);
    lf_v3_set(p->y0 + 9, 1, 2, 3);
    lf_v3_mul(p->b.J, p->w0, p->y0 + 12);
    lf_v3_scale(p->v0, p->b.m, p->y0 + 15);
    const lf_factor_kind kinds[2] = {LF_SE3, LF_RM};
    const int dims[2] = {0, 6};
    lf_error e;
    lf_manifold *M = lf_manifold_new(2, kinds, dims, LF_LEFT_TRIVIALIZED, &e);
    lf_lie_ode_def def = {.name = "free body on SE(3)", .f = body_f, .ctx = &p->b, .H = body_H, .dH = body_dH};
    p->sys = M ? lf_lie_ode_new(M, p->y0, &def, &e) : NULL;
    lf_manifold_free(M);
    if (!p->sys) fail_msg("%s", e.msg);
}

/* the exact state at t: R, w from exact.h; P = R^T R0 P0 (the spatial momentum R P is conserved);
 * p = p0 + int_0^t R v = p0 + t R0 v0 (R v = R P/m is constant) */
static void body_exact(const body_problem *p, double t, double y[18])
{
    lf_error e;
    double w[3], RP[3];
    if (lf_exact_free_body_flow(p->b.J, p->y0, p->w0, t, y, w, &e) != LF_OK) fail_msg("%s", e.msg);
    lf_m3_apply(p->y0, p->v0, y + 9);
    for (int k = 0; k < 3; k++) y[9 + k] = p->y0[9 + k] + t * y[9 + k];
    lf_v3_mul(p->b.J, w, y + 12);
    lf_m3_apply(p->y0, p->y0 + 15, RP);
    lf_m3_tapply(y, RP, y + 15);
}

/* errors at T: rotation ||R - R_exact||_F, position |p - p_exact|, momenta */
static void body_errors(const body_problem *p, const lf_method *m, double h, double T, double err[3], double *dH)
{
    double ex[18], H0, H1;
    lf_error e;
    lf_stepper *st = new_stepper(m, p->sys, p->y0, NULL);
    run_steps(st, h, lround(T / h));
    const double *y = lf_stepper_state(st);
    body_exact(p, T, ex);
    double d[9];
    lf_m3_sub(y, ex, d);
    err[0] = lf_m3_fnorm(d);
    lf_v3_sub(y + 9, ex + 9, d);
    err[1] = lf_v3_norm(d);
    err[2] = maxdiff(6, y + 12, ex + 12);
    if (dH) {
        if (lf_system_first_integral(p->sys, p->y0, &H0, &e) != LF_OK ||
            lf_system_first_integral(p->sys, y, &H1, &e) != LF_OK)
            fail_msg("%s", e.msg);
        *dH = fabs(H1 - H0) / H0;
    }
    lf_stepper_free(st);
}

static void test_rigid_body(void **state)
{
    (void)state;
    body_problem p;
    make_body(&p);
    const double T = 10;
    double hs[5], eR[5], ep[5], em[5];
    for (int k = 0; k < 5; k++) {
        double err[3];
        hs[k] = 0.2 / (1 << k);
        body_errors(&p, lf_method_find("rkmk4"), hs[k], T, err, NULL);
        eR[k] = err[0], ep[k] = err[1], em[k] = err[2];
        printf("  rkmk4 h = %-8g |R - R_exact| = %.3e  |p - p_exact| = %.3e  |(Pi, P) - exact| = %.3e\n", hs[k], err[0],
               err[1], err[2]);
    }
    const double sR = loglog_slope(hs, eR, 5), sp = loglog_slope(hs, ep, 5), sm = loglog_slope(hs, em, 5);
    printf("  rkmk4 fitted orders at T = 10: rotation %.3f, position %.3f, momenta %.3f\n", sR, sp, sm);
    assert_true(fabs(sR - 4) < 0.15 && fabs(sp - 4) < 0.15 && fabs(sm - 4) < 0.15);
    /* the other generic methods, one step size; the discrete gradients keep H to round-off */
    const char *names[] = {"rkmk_gl4", "rkmk_gl4_sym", "cf4", "cg3", "rkmk_heun", "ep2_avf", "ep2_gonzalez", "ep4"};
    const int orders[] = {4, 4, 4, 3, 2, 2, 2, 4};
    double worst_H = 0;
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++) {
        const lf_method *m = lf_method_find(names[i]);
        if (!m) fail_msg("method %s not found", names[i]);
        const int dg = method_info(m)->form == LF_FORM_FIRST_INTEGRAL;
        double err[3], e2[3], dH = 0;
        body_errors(&p, m, 0.1, T, err, dg ? &dH : NULL);
        body_errors(&p, m, 0.05, T, e2, NULL);
        const double o = log2(fmax(err[0], err[1]) / fmax(e2[0], e2[1]));
        printf("  %-13s h = 0.1: |R - R_exact| = %.3e, |p - p_exact| = %.3e; order from h = 0.1, 0.05: %.2f%s",
               names[i], err[0], err[1], o, dg ? "" : "\n");
        if (dg) printf("; |H - H0|/H0 = %.1e\n", dH);
        assert_true(fabs(o - orders[i]) < 0.3);
        worst_H = fmax(worst_H, dH);
    }
    CHECK_LE(worst_H, 1e-14, "discrete gradients: |H(T) - H(0)| / H(0)");
    lf_system_free(p.sys);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exp),        cmocka_unit_test(test_log),   cmocka_unit_test(test_dexp),
        cmocka_unit_test(test_group),      cmocka_unit_test(test_check), cmocka_unit_test(test_constant_twist),
        cmocka_unit_test(test_rigid_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
