/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One property battery over every factor of the manifold layer (core/lie/manifold.h), in both
 * trivializations (in the spirit of Sophus's generic group tests): diff is the inverse of act,
 * dexp . dexpinv = I, the transposes of dexp and dexpinv are adjoint for the inner product, the
 * truncated dexpinv errs like |u|^q, the derivative of the action is the velocity of dexp (central
 * differences), act agrees with the closed-form exponential of each group (ts2: the 4x4 SE(3)
 * exponential; tgl3: the 6x6 representation), the distance is a metric, points stay on the
 * manifold. Every measurement is printed, then asserted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <gsl/gsl_fit.h>

#include "lieflow.h"
#include "testutil.h"

#define NP_MAX 64

typedef struct {
    const char *name;
    lf_factor_kind kind;
    int dim;
} factor_case;

static const factor_case cases[] = {
    {"so3", LF_SO3, 0}, {"s2", LF_S2, 0}, {"s3", LF_S3, 0}, {"gl3", LF_GL3, 0}, {"r4", LF_RM, 4},
    {"ts2", LF_TS2, 0}, {"tgl3", LF_TGL3, 0},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static lf_manifold *make(const factor_case *c, lf_trivialization triv)
{
    lf_error e;
    lf_manifold *M = lf_manifold_new(1, &c->kind, &c->dim, triv, &e);
    if (!M) fail_msg("%s", e.msg);
    return M;
}

/* a random point: random rotation / unit vector / unit quaternion / matrix near I with det > 0 */
static void random_point(gsl_rng *r, const lf_manifold *M, double *y)
{
    const lf_factor *f = lf_manifold_factor(M, 0);
    switch (f->kind) {
    case LF_SO3: lf_so3_random(gsl_rng_get(r), y, NULL); break;
    case LF_S2: rand_dir(r, y); break;
    case LF_S3: {
        double n = 0;
        for (int k = 0; k < 4; k++) {
            y[k] = gsl_ran_ugaussian(r);
            n += y[k] * y[k];
        }
        for (int k = 0; k < 4; k++) y[k] /= sqrt(n);
        break;
    }
    case LF_GL3:
        for (int k = 0; k < 9; k++) y[k] = (k % 4 == 0) + 0.4 * gsl_ran_ugaussian(r);
        if (lf_m3_det(y) < 0)
            for (int k = 0; k < 3; k++) y[k] = -y[k];
        break;
    case LF_RM:
        for (int k = 0; k < f->nd; k++) y[k] = gsl_ran_ugaussian(r);
        break;
    case LF_TS2: { /* q random, omega tangent at q */
        double w[3];
        rand_dir(r, y);
        for (int k = 0; k < 3; k++) w[k] = gsl_ran_ugaussian(r);
        lf_s2_tangent(y, w, y + 3);
        break;
    }
    case LF_TGL3: { /* F = Q1 diag(d) Q2 with d in [0.5, 2] (condition <= 4: diff loses ~cond(F) eps), P normal */
        double Q1[9], Q2[9], D[9] = {0};
        lf_so3_random(gsl_rng_get(r), Q1, NULL);
        lf_so3_random(gsl_rng_get(r), Q2, NULL);
        for (int k = 0; k < 3; k++) D[4 * k] = 0.5 + 1.5 * gsl_rng_uniform(r);
        lf_m3_mul(Q1, D, y);
        lf_m3_mul(y, Q2, y);
        for (int k = 9; k < 18; k++) y[k] = gsl_ran_ugaussian(r);
        break;
    }
    }
}

/* a random algebra element of norm `size` (s2: tangent at q, so that diff recovers it) */
static void random_xi(gsl_rng *r, const lf_manifold *M, const double *y, double size, double *xi)
{
    const lf_factor *f = lf_manifold_factor(M, 0);
    double n = 0;
    for (int k = 0; k < f->nd; k++) xi[k] = gsl_ran_ugaussian(r);
    if (f->kind == LF_S2) lf_s2_tangent(y, xi, xi);
    if (f->kind == LF_TS2) { /* a tangent at q0; b with D(a) b tangent at q1 = exp(a) q0 (what diff returns) */
        double q1[3], v[3], Di[9];
        lf_s2_tangent(y, xi, xi);
        double s = size / lf_v3_norm(xi);
        if (s * lf_v3_norm(xi) > 3) s = 3 / lf_v3_norm(xi); /* angle below pi */
        lf_v3_scale(xi, s, xi);
        lf_v3_copy(y, q1);
        lf_so3_rotate(xi, q1);
        lf_s2_tangent(q1, xi + 3, v);
        lf_v3_scale(v, size / lf_v3_norm(v), v);
        lf_so3_dexpinv(xi, Di);
        lf_m3_apply(Di, v, xi + 3);
        return;
    }
    for (int k = 0; k < f->nd; k++) n += xi[k] * xi[k];
    for (int k = 0; k < f->nd; k++) xi[k] *= size / sqrt(n);
}

static double vdiff(int n, const double *a, const double *b)
{
    double s = 0;
    for (int k = 0; k < n; k++) s += (a[k] - b[k]) * (a[k] - b[k]);
    return sqrt(s);
}

static double vnorm(int n, const double *a)
{
    double s = 0;
    for (int k = 0; k < n; k++) s += a[k] * a[k];
    return sqrt(s);
}

static void battery(const factor_case *c, lf_trivialization triv)
{
    lf_manifold *M = make(c, triv);
    const int np = lf_manifold_nparam(M), nd = lf_manifold_ndim(M);
    const char *tn = triv == LF_LEFT_TRIVIALIZED ? "left" : "right";
    gsl_rng *r = new_rng(11 + (unsigned long)c->kind * 7 + (unsigned long)triv);
    gsl_rng *r2 = new_rng(1011 + (unsigned long)c->kind * 7 + (unsigned long)triv);
    double worst_log = 0, worst_exp = 0, worst_dexp = 0, worst_vel = 0, worst_fd = 0, worst_on = 0, worst_tr = 0;
    for (int trial = 0; trial < 200; trial++) {
        double y[NP_MAX], y1[NP_MAX], xi[NP_MAX], x2[NP_MAX], v[NP_MAX], a[NP_MAX], b[NP_MAX];
        lf_error e;
        random_point(r, M, y);
        double size = 0.05 + 2.5 * gsl_rng_uniform(r);
        random_xi(r, M, y, size, xi);
        /* log o exp = id: diff(y, act(xi, y)) = xi */
        memcpy(y1, y, sizeof(double) * np);
        lf_manifold_act(M, xi, y1);
        if (lf_manifold_diff(M, y, y1, x2, &e) != LF_OK) fail_msg("%s", e.msg);
        worst_log = fmax(worst_log, vdiff(nd, x2, xi) / vnorm(nd, xi));
        worst_on = fmax(worst_on, lf_manifold_defect(M, y1));
        /* exp o log = id: act(diff(y, z), y) = z for another random point z near y */
        double z[NP_MAX], w[NP_MAX];
        random_xi(r, M, y, 1.0, v);
        memcpy(z, y, sizeof(double) * np);
        lf_manifold_act(M, v, z);
        if (lf_manifold_diff(M, y, z, x2, &e) != LF_OK) fail_msg("%s", e.msg);
        memcpy(w, y, sizeof(double) * np);
        lf_manifold_act(M, x2, w);
        worst_exp = fmax(worst_exp, vdiff(np, w, z) / fmax(1, vnorm(np, z)));
        /* dexp . dexpinv = I */
        random_xi(r, M, y, 1.0, v);
        if (lf_manifold_dexpinv(M, xi, v, 0, a, &e) != LF_OK || lf_manifold_dexp(M, xi, a, b, &e) != LF_OK)
            fail_msg("%s", e.msg);
        worst_dexp = fmax(worst_dexp, vdiff(nd, b, v));
        /* transposes: <dexp_u v, w> = <v, dexp_u^T w>, the same for dexpinv */
        {
            double w2[NP_MAX], t1[NP_MAX], t2[NP_MAX];
            random_xi(r2, M, y, 1.0, w2); /* its own stream: the other samples stay those of before */
            for (int inv = 0; inv < 2; inv++) {
                int rc = inv ? lf_manifold_dexpinv(M, xi, v, 0, t1, &e) : lf_manifold_dexp(M, xi, v, t1, &e);
                if (rc != LF_OK || lf_manifold_dexp_transpose(M, xi, w2, inv, t2, &e) != LF_OK) fail_msg("%s", e.msg);
                double lhs = lf_manifold_inner(M, t1, w2), rhs = lf_manifold_inner(M, v, t2);
                worst_tr = fmax(worst_tr, fabs(lhs - rhs) / (vnorm(nd, t1) * vnorm(nd, w2)));
            }
        }
        /* derivative of the action: d/dt act(xi + t v, y) at t = 0 equals velocity(dexp(xi) v) at act(xi, y) */
        const double hfd = 1e-5;
        double yp[NP_MAX], ym[NP_MAX], xp[NP_MAX], fd[NP_MAX], vel[NP_MAX];
        for (int k = 0; k < nd; k++) xp[k] = xi[k] + hfd * v[k];
        memcpy(yp, y, sizeof(double) * np);
        lf_manifold_act(M, xp, yp);
        for (int k = 0; k < nd; k++) xp[k] = xi[k] - hfd * v[k];
        memcpy(ym, y, sizeof(double) * np);
        lf_manifold_act(M, xp, ym);
        for (int k = 0; k < np; k++) fd[k] = (yp[k] - ym[k]) / (2 * hfd);
        if (lf_manifold_dexp(M, xi, v, b, &e) != LF_OK) fail_msg("%s", e.msg);
        lf_manifold_velocity(M, y1, b, vel);
        worst_fd = fmax(worst_fd, vdiff(np, fd, vel) / fmax(1, vnorm(np, vel)));
        /* velocity is the derivative of act at 0 */
        for (int k = 0; k < nd; k++) xp[k] = hfd * v[k];
        memcpy(yp, y, sizeof(double) * np);
        lf_manifold_act(M, xp, yp);
        for (int k = 0; k < nd; k++) xp[k] = -hfd * v[k];
        memcpy(ym, y, sizeof(double) * np);
        lf_manifold_act(M, xp, ym);
        for (int k = 0; k < np; k++) fd[k] = (yp[k] - ym[k]) / (2 * hfd);
        lf_manifold_velocity(M, y, v, vel);
        worst_vel = fmax(worst_vel, vdiff(np, fd, vel) / fmax(1, vnorm(np, vel)));
    }
    printf("%s (%s-trivialized):\n", c->name, tn);
    CHECK_LE(worst_log, 1e-13, "log o exp: |diff(y, act(xi, y)) - xi| / |xi|");
    CHECK_LE(worst_exp, 1e-13, "exp o log: |act(diff(y, z), y) - z|");
    CHECK_LE(worst_dexp, 1e-13, "|dexp(dexpinv(v)) - v|");
    CHECK_LE(worst_tr, 1e-14, "<dexp v, w> = <v, dexp^T w> (and dexpinv), relative");
    CHECK_LE(worst_fd, 1e-8, "d/dt act(xi + t v) = velocity(dexp(xi) v) (central FD)");
    CHECK_LE(worst_vel, 1e-8, "d/dt act(t v) = velocity(v) (central FD)");
    CHECK_LE(worst_on, 1e-15 * 8, "act keeps the point on the manifold");

    /* truncated dexpinv of order q errs like |u|^q: fitted slope within 0.2 of q */
    if (c->kind != LF_RM)
        for (int q = 1; q <= 6; q++) {
            double lx[6], ly[6], y0[NP_MAX], u[NP_MAX], v[NP_MAX], ex[NP_MAX], tr[NP_MAX];
            lf_error e;
            random_point(r, M, y0);
            random_xi(r, M, y0, 1.0, u);
            random_xi(r, M, y0, 1.0, v);
            for (int k = 0; k < 6; k++) {
                double s = 1.2 / (1 << k), us[NP_MAX]; /* large enough to stay above round-off for q = 6 */
                for (int j = 0; j < nd; j++) us[j] = s * u[j];
                if (lf_manifold_dexpinv(M, us, v, 0, ex, &e) != LF_OK || lf_manifold_dexpinv(M, us, v, q, tr, &e) != LF_OK)
                    fail_msg("%s", e.msg);
                lx[k] = log(s);
                ly[k] = log(vdiff(nd, ex, tr));
            }
            double c0, c1, c00, c01, c11, ss;
            /* odd Bernoulli numbers beyond B_1 vanish: order q = 3, 5 gain one more power */
            int expect = (q >= 3 && q % 2 == 1) ? q + 1 : q;
            gsl_fit_linear(lx, 1, ly, 1, 6, &c0, &c1, &c00, &c01, &c11, &ss);
            printf("  truncated dexpinv, %d terms: error slope %.3f (expected %d)\n", q, c1, expect);
            assert_true(fabs(c1 - expect) < 0.2);
        }

    /* distance: a metric on samples */
    double worst_tri = -1, worst_sym = 0, self = 0;
    for (int trial = 0; trial < 200; trial++) {
        double p[NP_MAX], q[NP_MAX], s[NP_MAX];
        random_point(r, M, p);
        random_point(r, M, q);
        random_point(r, M, s);
        double dpq = lf_manifold_dist(M, p, q), dqp = lf_manifold_dist(M, q, p);
        double dps = lf_manifold_dist(M, p, s), dsq = lf_manifold_dist(M, s, q);
        worst_tri = fmax(worst_tri, dpq - (dps + dsq));
        worst_sym = fmax(worst_sym, fabs(dpq - dqp));
        self = fmax(self, lf_manifold_dist(M, p, p));
        assert_true(dpq >= 0);
    }
    CHECK_LE(self, 0, "d(p, p)");
    CHECK_LE(worst_sym, 1e-15, "|d(p, q) - d(q, p)|");
    CHECK_LE(worst_tri, 1e-15, "max d(p, q) - d(p, s) - d(s, q) (triangle inequality)");
    gsl_rng_free(r);
    gsl_rng_free(r2);
    lf_manifold_free(M);
}

static void test_battery(void **state)
{
    (void)state;
    for (int i = 0; i < NCASES; i++) {
        battery(&cases[i], LF_RIGHT_TRIVIALIZED);
        battery(&cases[i], LF_LEFT_TRIVIALIZED);
    }
}

/* act agrees with each group's own exponential: so3 Rodrigues, s2 = rotation of q, s3 quaternion
 * product with quat_exp(xi/2), gl3 expm, on both sides. */
static void test_act_matches_group_exp(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(5);
    double worst[4] = {0, 0, 0, 0};
    for (int trial = 0; trial < 100; trial++)
        for (int t = 0; t < 2; t++) {
            lf_trivialization triv = t ? LF_LEFT_TRIVIALIZED : LF_RIGHT_TRIVIALIZED;
            double x[9], E[9], R[9], Ry[9], ref[9];
            rand_dir(r, x);
            lf_v3_scale(x, 3 * gsl_rng_uniform(r), x);
            /* so3 */
            lf_manifold *M = make(&cases[0], triv);
            lf_so3_random(gsl_rng_get(r), R, NULL);
            memcpy(Ry, R, sizeof R);
            lf_manifold_act(M, x, Ry);
            lf_so3_exp(x, E);
            if (t) lf_m3_mul(R, E, ref);
            else lf_m3_mul(E, R, ref);
            worst[0] = fmax(worst[0], maxdiff(9, Ry, ref));
            lf_manifold_free(M);
            /* s2 */
            M = make(&cases[1], triv);
            double q[3], qy[3], qr[3];
            rand_dir(r, q);
            memcpy(qy, q, sizeof q);
            lf_manifold_act(M, x, qy);
            lf_m3_apply(E, q, qr);
            worst[1] = fmax(worst[1], maxdiff(3, qy, qr));
            lf_manifold_free(M);
            /* s3: R(act(x, q)) = exp(x) R(q) (left) or R(q) exp(x) (right) */
            M = make(&cases[2], triv);
            double Q[4] = {gsl_ran_ugaussian(r), gsl_ran_ugaussian(r), gsl_ran_ugaussian(r), gsl_ran_ugaussian(r)};
            double nq = sqrt(Q[0] * Q[0] + Q[1] * Q[1] + Q[2] * Q[2] + Q[3] * Q[3]);
            for (int k = 0; k < 4; k++) Q[k] /= nq;
            double RQ[9], Qy[4], RQy[9];
            lf_quat_to_matrix(Q, RQ);
            memcpy(Qy, Q, sizeof Q);
            lf_manifold_act(M, x, Qy);
            lf_quat_to_matrix(Qy, RQy);
            if (t) lf_m3_mul(RQ, E, ref);
            else lf_m3_mul(E, RQ, ref);
            worst[2] = fmax(worst[2], maxdiff(9, RQy, ref));
            lf_manifold_free(M);
            /* gl3: the exponential of hat(x) is Rodrigues' rotation */
            M = make(&cases[3], triv);
            double X[9], Y[9] = {1, 0.2, 0, -0.1, 1.5, 0.3, 0, 0.4, 0.8}, Yy[9];
            lf_so3_hat(x, X);
            memcpy(Yy, Y, sizeof Y);
            lf_manifold_act(M, X, Yy);
            if (t) lf_m3_mul(Y, E, ref);
            else lf_m3_mul(E, Y, ref);
            worst[3] = fmax(worst[3], maxdiff(9, Yy, ref));
            lf_manifold_free(M);
        }
    /* ts2: exp(a, b) is the 4x4 exponential of [[hat a, b], [0, 0]] = [[Q, v], [0, 1]] acting by
     * (q, w) <- (Q q, Q w + v x Q q); tgl3: rep(exp(xi) y) = expm(rep(xi)) rep(y) (left action) and
     * rep(y exp(xi)) = rep(y) expm(rep(xi)) (right), rep the 6x6 representation of tgl3.h */
    double worst_ts2 = 0, worst_tgl3 = 0;
    for (int trial = 0; trial < 100; trial++) {
        lf_error e;
        double xi[18], Z[16] = {0}, E[16], q[6], qy[6], ref[6], Q[9], v[3], c[3];
        for (int k = 0; k < 6; k++) xi[k] = 1.5 * gsl_ran_ugaussian(r);
        double A[9];
        lf_so3_hat(xi, A);
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) Z[4 * i + j] = A[3 * i + j];
            Z[4 * i + 3] = xi[3 + i];
        }
        if (lf_expm(4, Z, E, &e) != LF_OK) fail_msg("%s", e.msg);
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) Q[3 * i + j] = E[4 * i + j];
            v[i] = E[4 * i + 3];
        }
        rand_dir(r, q);
        double w[3] = {gsl_ran_ugaussian(r), gsl_ran_ugaussian(r), gsl_ran_ugaussian(r)};
        lf_s2_tangent(q, w, q + 3);
        lf_factor_kind k6 = LF_TS2;
        lf_manifold *M = lf_manifold_new(1, &k6, NULL, LF_RIGHT_TRIVIALIZED, &e);
        memcpy(qy, q, sizeof q);
        lf_manifold_act(M, xi, qy);
        lf_m3_apply(Q, q, ref);
        lf_m3_apply(Q, q + 3, ref + 3);
        lf_v3_cross(v, ref, c);
        lf_v3_add(ref + 3, c, ref + 3);
        worst_ts2 = fmax(worst_ts2, maxdiff(6, qy, ref));
        lf_manifold_free(M);
        /* tgl3 */
        for (int t = 0; t < 2; t++) {
            double y[18], yy[18], X[36] = {0}, EX[36], R[36], Ry[36], P6[36];
            for (int k = 0; k < 18; k++) xi[k] = 0.5 * gsl_ran_ugaussian(r);
            double Q1[9];
            lf_so3_random(gsl_rng_get(r), Q1, NULL);
            for (int k = 0; k < 9; k++) y[k] = Q1[k] * (1 + 0.3 * (k % 3));
            for (int k = 9; k < 18; k++) y[k] = gsl_ran_ugaussian(r);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) {
                    X[6 * i + j] = X[6 * (i + 3) + j + 3] = -xi[3 * j + i];
                    X[6 * i + j + 3] = xi[9 + 3 * i + j];
                }
            if (lf_expm(6, X, EX, &e) != LF_OK || lf_tgl3_rep(y, R) != LF_OK) fail_msg("expm / rep");
            lf_factor_kind k18 = LF_TGL3;
            M = lf_manifold_new(1, &k18, NULL, t ? LF_LEFT_TRIVIALIZED : LF_RIGHT_TRIVIALIZED, &e);
            memcpy(yy, y, sizeof y);
            lf_manifold_act(M, xi, yy);
            if (lf_tgl3_rep(yy, Ry) != LF_OK) fail_msg("rep");
            for (int i = 0; i < 6; i++)
                for (int j = 0; j < 6; j++) {
                    double sum = 0;
                    for (int k = 0; k < 6; k++) sum += t ? R[6 * i + k] * EX[6 * k + j] : EX[6 * i + k] * R[6 * k + j];
                    P6[6 * i + j] = sum;
                }
            worst_tgl3 = fmax(worst_tgl3, maxdiff(36, Ry, P6));
            lf_manifold_free(M);
        }
    }
    CHECK_LE(worst_ts2, 1e-14, "ts2 act vs the 4x4 SE(3) exponential (xi ~ 4)");
    CHECK_LE(worst_tgl3, 1e-14, "tgl3 act vs the 6x6 representation's exponential");
    CHECK_LE(worst[0], 2e-15, "so3 act vs R exp(x), exp(x) R");
    CHECK_LE(worst[1], 2e-15, "s2 act vs exp(x) q");
    CHECK_LE(worst[2], 2e-15, "s3 act: R(q) moves by exp(x)");
    CHECK_LE(worst[3], 4e-15, "gl3 act of hat(x) vs Rodrigues");
    gsl_rng_free(r);
}

/* bad input: unknown factor names, r0, non-unit points, singular gl3 */
static void test_checks(void **state)
{
    (void)state;
    lf_factor_kind k;
    int d;
    assert_int_equal(lf_factor_parse("so3", &k, &d), 0);
    assert_int_equal(k, LF_SO3);
    assert_int_equal(lf_factor_parse("r12", &k, &d), 0);
    assert_int_equal(d, 12);
    assert_int_equal(lf_factor_parse("r0", &k, &d), -1);
    assert_int_equal(lf_factor_parse("so4", &k, &d), -1);
    assert_int_equal(lf_factor_parse("r3x", &k, &d), -1);
    assert_int_equal(lf_factor_parse("ts2", &k, &d), 0);
    assert_int_equal(k, LF_TS2);
    assert_int_equal(lf_factor_parse("tgl3", &k, &d), 0);
    assert_int_equal(k, LF_TGL3);
    {
        lf_error e2;
        lf_factor_kind kk[2] = {LF_TS2, LF_TGL3};
        lf_manifold *M2 = lf_manifold_new(2, kk, NULL, LF_RIGHT_TRIVIALIZED, &e2);
        assert_int_equal(lf_manifold_nparam(M2), 24);
        assert_int_equal(lf_manifold_ndim(M2), 24);
        double y2[24];
        lf_manifold_identity(M2, y2);
        assert_int_equal(lf_manifold_check(M2, y2, 1e-9, "y", &e2), LF_OK);
        y2[3] = 0.1; /* omega not tangent at q = e3 */
        y2[5] = 0.2;
        assert_int_equal(lf_manifold_check(M2, y2, 1e-9, "y", &e2), LF_EINVAL);
        printf("  %s\n", e2.msg);
        assert_non_null(strstr(e2.msg, "TS^2"));
        y2[5] = 0;
        y2[6 + 4] = 0; /* F singular */
        assert_int_equal(lf_manifold_check(M2, y2, 1e-9, "y", &e2), LF_EINVAL);
        printf("  %s\n", e2.msg);
        assert_non_null(strstr(e2.msg, "det F"));
        lf_manifold_free(M2);
    }
    lf_error e;
    lf_factor_kind kinds[3] = {LF_S2, LF_GL3, LF_S3};
    lf_manifold *M = lf_manifold_new(3, kinds, NULL, LF_RIGHT_TRIVIALIZED, &e);
    assert_non_null(M);
    assert_int_equal(lf_manifold_nparam(M), 16);
    assert_int_equal(lf_manifold_ndim(M), 15);
    double y[16] = {0, 0, 1.001, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0};
    assert_int_equal(lf_manifold_check(M, y, 1e-9, "y", &e), LF_EINVAL);
    printf("  %s\n", e.msg);
    assert_non_null(strstr(e.msg, "y[1]"));
    y[2] = 1;
    y[11] = 0; /* singular gl3 */
    assert_int_equal(lf_manifold_check(M, y, 1e-9, "y", &e), LF_EINVAL);
    printf("  %s\n", e.msg);
    assert_non_null(strstr(e.msg, "det"));
    lf_manifold_free(M);
    lf_factor_kind rm = LF_RM;
    int zero = 0;
    assert_null(lf_manifold_new(1, &rm, &zero, LF_RIGHT_TRIVIALIZED, &e));
    printf("  %s\n", e.msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_battery),
        cmocka_unit_test(test_act_matches_group_exp),
        cmocka_unit_test(test_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
