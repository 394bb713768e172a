/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One property battery over every factor of the manifold layer (core/lie/manifold.h), in both
 * trivializations (in the spirit of Sophus's generic group tests): diff is the inverse of act,
 * dexp . dexpinv = I, the transposes of dexp and dexpinv are adjoint for the inner product, the
 * truncated dexpinv errs like |u|^q, the derivative of the action is the velocity of dexp (central
 * differences), act agrees with the closed-form exponential of each group (ts2, se3: the 4x4 SE(3)
 * exponential; tgl3: the 6x6 representation), the distance is a metric, points stay on the
 * manifold; then the groups' own functions (gl3.h, ts2.h, tgl3.h: exp, log, act, velocity, diff,
 * bracket, dexp against closed forms, series and matrix representations) and the product's
 * bookkeeping (copy, factor names, distance of a range of factors, the check of one factor).
 * Every measurement is printed, then asserted. */
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
    {"so3", LF_SO3, 0}, {"s2", LF_S2, 0},   {"s3", LF_S3, 0},     {"gl3", LF_GL3, 0},
    {"r4", LF_RM, 4},   {"ts2", LF_TS2, 0}, {"tgl3", LF_TGL3, 0}, {"se3", LF_SE3, 0},
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
    case LF_SE3: /* a random rotation, a normal position */
        lf_so3_random(gsl_rng_get(r), y, NULL);
        for (int k = 9; k < 12; k++) y[k] = gsl_ran_ugaussian(r);
        break;
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
    double worst_ts2 = 0, worst_tgl3 = 0, worst_se3 = 0;
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
        /* se3: act(xi, (R, p)) = E G or G E, G = [[R, p], [0, 1]] */
        for (int t = 0; t < 2; t++) {
            double g[12], gy[12], G[16], P4[16];
            lf_factor_kind k12 = LF_SE3;
            lf_so3_random(gsl_rng_get(r), g, NULL);
            for (int k = 9; k < 12; k++) g[k] = gsl_ran_ugaussian(r);
            M = lf_manifold_new(1, &k12, NULL, t ? LF_LEFT_TRIVIALIZED : LF_RIGHT_TRIVIALIZED, &e);
            memcpy(gy, g, sizeof g);
            lf_manifold_act(M, xi, gy);
            lf_se3_matrix(g, G);
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) {
                    double sum = 0;
                    for (int k = 0; k < 4; k++) sum += t ? G[4 * i + k] * E[4 * k + j] : E[4 * i + k] * G[4 * k + j];
                    P4[4 * i + j] = sum;
                }
            lf_se3_matrix(gy, G);
            worst_se3 = fmax(worst_se3, maxdiff(16, G, P4));
            lf_manifold_free(M);
        }
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
    CHECK_LE(worst_se3, 1e-14, "se3 act vs E G and G E, E the 4x4 SE(3) exponential (xi ~ 4)");
    CHECK_LE(worst[0], 2e-15, "so3 act vs R exp(x), exp(x) R");
    CHECK_LE(worst[1], 2e-15, "s2 act vs exp(x) q");
    CHECK_LE(worst[2], 2e-15, "s3 act: R(q) moves by exp(x)");
    CHECK_LE(worst[3], 4e-15, "gl3 act of hat(x) vs Rodrigues");
    gsl_rng_free(r);
}

/* ---------------------------------------------------------------- the groups' own functions */
/* C = A B (n x n, row-major) */
static void matmul(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += A[n * i + k] * B[n * k + j];
            C[n * i + j] = s;
        }
}

static void gl3_bracket(const double *A, const double *B, double *out)
{
    double P[9], Q[9];
    lf_m3_mul(A, B, P);
    lf_m3_mul(B, A, Q);
    lf_m3_sub(P, Q, out);
}

/* dexp_u(v) = sum_k ad_u^k(v)/(k+1)! by its series (up to 90 terms) with the bracket br on R^n */
static void dexp_series(int n, void (*br)(const double *, const double *, double *), const double *u, const double *v,
                        double *out)
{
    double term[18], next[18];
    memcpy(term, v, (size_t)n * sizeof(double));
    memcpy(out, v, (size_t)n * sizeof(double));
    for (int k = 1; k < 90 && vnorm(n, term) > 1e-30 * vnorm(n, out); k++) {
        br(u, term, next);
        for (int i = 0; i < n; i++) out[i] += (term[i] = next[i] / (k + 1));
    }
}

/* GL(3): exp against Rodrigues (skew A), det e^A = e^tr A and e^A e^-A = I; log o exp = id; dexp against
 * its series (both of lf_gl3_dexp's paths: series for 2 |A| <= 1, Van Loan beyond) and central
 * differences; dexpinv o dexp = id (out aliasing V); no principal logarithm: an error. */
static void test_gl3(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(31);
    double w_rod = 0, w_det = 0, w_inv = 0, w_log = 0, w_ser = 0, w_fd = 0, w_dinv = 0;
    for (int it = 0; it < 400; it++) {
        double x[3], A[9], Y[9], Z[9], E[9], V[9], D[9], S[9], P[9], Ap[9], Am[9], Yp[9], Ym[9];
        lf_error e;
        rand_dir(r, x);
        lf_v3_scale(x, 3 * gsl_rng_uniform(r), x);
        lf_so3_hat(x, A);
        assert_int_equal(lf_gl3_exp(A, Y, &e), LF_OK);
        lf_so3_exp(x, E);
        w_rod = fmax(w_rod, maxdiff(9, Y, E));
        const double s = (it % 2 ? 0.05 : 0.5) + gsl_rng_uniform(r) * (it % 2 ? 0.1 : 0.3); /* 2|A| < 1 or > 1 */
        for (int i = 0; i < 9; i++) A[i] = s * gsl_ran_ugaussian(r), V[i] = gsl_ran_ugaussian(r);
        assert_int_equal(lf_gl3_exp(A, Y, &e), LF_OK);
        w_det = fmax(w_det, fabs(lf_m3_det(Y) / exp(lf_m3_trace(A)) - 1));
        for (int i = 0; i < 9; i++) P[i] = -A[i];
        assert_int_equal(lf_gl3_exp(P, Z, &e), LF_OK);
        matmul(3, Y, Z, P);
        P[0] -= 1, P[4] -= 1, P[8] -= 1;
        w_inv = fmax(w_inv, maxabs(9, P));
        assert_int_equal(lf_gl3_log(Y, Z, &e), LF_OK);
        w_log = fmax(w_log, maxdiff(9, Z, A) / lf_m3_fnorm(A));
        assert_int_equal(lf_gl3_dexp(A, V, D, &e), LF_OK);
        dexp_series(9, gl3_bracket, A, V, S);
        w_ser = fmax(w_ser, maxdiff(9, D, S) / maxabs(9, S));
        const double h = 1e-5; /* (e^{A + hV} - e^{A - hV})/(2h) e^{-A} = dexp_A(V) */
        for (int i = 0; i < 9; i++) Ap[i] = A[i] + h * V[i], Am[i] = A[i] - h * V[i];
        lf_gl3_exp(Ap, Yp, &e);
        lf_gl3_exp(Am, Ym, &e);
        for (int i = 0; i < 9; i++) Yp[i] = (Yp[i] - Ym[i]) / (2 * h);
        for (int i = 0; i < 9; i++) P[i] = -A[i];
        lf_gl3_exp(P, Z, &e);
        matmul(3, Yp, Z, E);
        w_fd = fmax(w_fd, maxdiff(9, E, D) / maxabs(9, D));
        memcpy(P, D, sizeof P);
        assert_int_equal(lf_gl3_dexpinv(A, P, P, &e), LF_OK); /* out aliases V */
        w_dinv = fmax(w_dinv, maxdiff(9, P, V) / maxabs(9, V));
    }
    gsl_rng_free(r);
    CHECK_LE(w_rod, 2e-15, "gl3 exp(hat x) vs Rodrigues (|x| < 3)");
    CHECK_LE(w_det, 1e-14, "|det exp(A) / exp(tr A) - 1| (|A|_F 0.15 .. 2.4)");
    CHECK_LE(w_inv, 1e-14, "|exp(A) exp(-A) - I|");
    CHECK_LE(w_log, 1e-14, "|log(exp(A)) - A| / |A|");
    CHECK_LE(w_ser, 1e-14, "gl3 dexp vs its series sum ad^k/(k+1)!, relative (both paths)");
    CHECK_LE(w_fd, 1e-8, "gl3 dexp vs central differences of exp");
    CHECK_LE(w_dinv, 1e-14, "gl3 dexpinv(dexp(V)) = V, relative (out aliasing V)");
    double Neg[9] = {-2, 0, 0, 0, -0.5, 0, 0, 0, 1}, L[9];
    lf_error e;
    assert_int_equal(lf_gl3_log(Neg, L, &e), LF_EDOMAIN); /* negative real eigenvalues */
    printf("  log(diag(-2, -0.5, 1)): %s\n", e.msg);
}

/* a random point (q, w) of TS^2 and a random algebra element of size s */
static void ts2_point(gsl_rng *r, double *y)
{
    double w[3];
    rand_dir(r, y);
    for (int k = 0; k < 3; k++) w[k] = gsl_ran_ugaussian(r);
    lf_s2_tangent(y, w, y + 3);
}

/* TS^2 = SE(3) / SO(2): act against exp(a, b) = (exp(hat a), D(a) b) acting by (Q q, Q w + v x Q q);
 * velocity against its formula and the derivative of act; diff inverts act along the smallest
 * rotation; bracket against the 4x4 matrices' commutator; dexp against its series, dexpinv o dexp =
 * id, the transposes adjoint; dist = sqrt(angle^2 + |w0 - w1|^2). */
static void test_ts2(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(32);
    double w_act = 0, w_vel = 0, w_fd = 0, w_diff = 0, w_axis = 0, w_br = 0, w_dexp = 0, w_inv = 0, w_tr = 0,
           w_dist = 0;
    for (int it = 0; it < 300; it++) {
        double y[6], y1[6], z[6], xi[6], v[6], w[6], Q[9], Dm[9], c[3], ref[6], out[6], t[6];
        ts2_point(r, y);
        ts2_point(r, z);
        for (int k = 0; k < 6; k++)
            xi[k] = 0.7 * gsl_ran_ugaussian(r), v[k] = gsl_ran_ugaussian(r), w[k] = gsl_ran_ugaussian(r);
        /* act */
        lf_so3_exp(xi, Q);
        lf_so3_dexp(xi, Dm);
        double b[3];
        lf_m3_apply(Dm, xi + 3, b);
        lf_m3_apply(Q, y, ref);
        lf_m3_apply(Q, y + 3, ref + 3);
        lf_v3_cross(b, ref, c);
        lf_v3_add(ref + 3, c, ref + 3);
        memcpy(y1, y, sizeof y1);
        lf_ts2_act(xi, y1);
        w_act = fmax(w_act, maxdiff(6, y1, ref));
        /* velocity: (a x q, a x w + b x q), and d/dt act(t xi) at 0 */
        lf_ts2_velocity(y, xi, out);
        lf_v3_cross(xi, y, ref);
        lf_v3_cross(xi, y + 3, ref + 3);
        lf_v3_cross(xi + 3, y, c);
        lf_v3_add(ref + 3, c, ref + 3);
        w_vel = fmax(w_vel, maxdiff(6, out, ref));
        const double h = 1e-6;
        double yp[6], ym[6], xp[6], xm[6];
        for (int k = 0; k < 6; k++) xp[k] = h * xi[k], xm[k] = -h * xi[k];
        memcpy(yp, y, sizeof yp);
        memcpy(ym, y, sizeof ym);
        lf_ts2_act(xp, yp);
        lf_ts2_act(xm, ym);
        for (int k = 0; k < 6; k++) t[k] = (yp[k] - ym[k]) / (2 * h);
        w_fd = fmax(w_fd, maxdiff(6, t, out) / fmax(1, vnorm(6, out)));
        /* diff: act(diff(y, z), y) = z, a about q x z_q with |a| the angle */
        lf_error e;
        assert_int_equal(lf_ts2_diff(y, z, t, &e), LF_OK);
        memcpy(y1, y, sizeof y1);
        lf_ts2_act(t, y1);
        w_diff = fmax(w_diff, maxdiff(6, y1, z) / fmax(1, vnorm(6, z)));
        lf_v3_cross(y, z, c);
        double ax[3];
        lf_v3_cross(t, c, ax);
        w_axis = fmax(w_axis, lf_v3_norm(ax) / lf_v3_norm(c) + fabs(lf_v3_norm(t) - lf_s2_dist(y, z)));
        /* bracket: [[hat a, b], [0, 0]] commutator */
        double X1[16] = {0}, X2[16] = {0}, P1[16], P2[16], H[9];
        lf_so3_hat(v, H);
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) X1[4 * i + j] = H[3 * i + j];
            X1[4 * i + 3] = v[3 + i];
        }
        lf_so3_hat(w, H);
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) X2[4 * i + j] = H[3 * i + j];
            X2[4 * i + 3] = w[3 + i];
        }
        matmul(4, X1, X2, P1);
        matmul(4, X2, X1, P2);
        for (int k = 0; k < 16; k++) P1[k] -= P2[k];
        const double com[6] = {P1[9], P1[2], P1[4], P1[3], P1[7], P1[11]}; /* vee of the block, the column */
        lf_ts2_bracket(v, w, out);
        w_br = fmax(w_br, maxdiff(6, out, com) / (vnorm(6, v) * vnorm(6, w)));
        /* dexp and its inverse, transposes */
        dexp_series(6, lf_ts2_bracket, xi, v, ref);
        lf_ts2_dexp(xi, v, 0, 0, out);
        w_dexp = fmax(w_dexp, maxdiff(6, out, ref) / vnorm(6, ref));
        lf_ts2_dexp(xi, out, 1, 0, t);
        w_inv = fmax(w_inv, maxdiff(6, t, v) / vnorm(6, v));
        for (int inv = 0; inv < 2; inv++) {
            double a[6], bt[6], lhs = 0, rhs = 0;
            lf_ts2_dexp(xi, v, inv, 0, a);
            lf_ts2_dexp(xi, w, inv, 1, bt);
            for (int k = 0; k < 6; k++) lhs += a[k] * w[k], rhs += v[k] * bt[k];
            w_tr = fmax(w_tr, fabs(lhs - rhs) / (vnorm(6, a) * vnorm(6, w)));
        }
        double dw[3];
        lf_v3_sub(y + 3, z + 3, dw);
        const double ang = lf_s2_dist(y, z);
        w_dist = fmax(w_dist, fabs(lf_ts2_dist(y, z) - sqrt(ang * ang + lf_v3_dot(dw, dw))));
    }
    gsl_rng_free(r);
    CHECK_LE(w_act, 2e-15, "ts2 act vs (Q q, Q w + v x Q q), Q = exp(a), v = D(a) b");
    CHECK_LE(w_vel, 0, "ts2 velocity vs (a x q, a x w + b x q)");
    CHECK_LE(w_fd, 1e-9, "ts2 velocity vs d/dt act(t xi) (central differences)");
    CHECK_LE(w_diff, 1e-14, "ts2 act(diff(y, z), y) = z");
    CHECK_LE(w_axis, 1e-14, "ts2 diff: a about q x z, |a| = angle(q, z)");
    CHECK_LE(w_br, 1e-15, "ts2 bracket vs the 4x4 commutator, / |x||y|");
    CHECK_LE(w_dexp, 1e-14, "ts2 dexp vs its series sum ad^k/(k+1)!, relative");
    CHECK_LE(w_inv, 1e-14, "ts2 dexpinv(dexp(v)) = v, relative");
    CHECK_LE(w_tr, 1e-15, "ts2 <dexp v, w> = <v, dexp^T w> (and dexpinv), relative");
    CHECK_LE(w_dist, 4e-16, "ts2 dist vs sqrt(angle^2 + |w0 - w1|^2)");
    double a[6] = {0, 0, 1, 1, 0, 0}, b[6] = {0, 0, -1, 0, 1, 0}, xi[6];
    lf_error e;
    assert_int_equal(lf_ts2_diff(a, b, xi, &e), LF_EDOMAIN);
    printf("  ts2 diff of antipodal points: %s\n", e.msg);
}

/* the 6x6 matrix of the algebra element (A, B): [[-A^T, B], [0, -A^T]] (tgl3.h) */
static void tgl3_alg(const double *xi, double *X)
{
    memset(X, 0, 36 * sizeof(double));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            X[6 * i + j] = X[6 * (i + 3) + j + 3] = -xi[3 * j + i];
            X[6 * i + j + 3] = xi[9 + 3 * i + j];
        }
}

/* a point (F, P): F = Q diag(0.7 .. 1.5), P normal */
static void tgl3_point(gsl_rng *r, double *y)
{
    double Q[9];
    lf_so3_random(gsl_rng_get(r), Q, NULL);
    for (int k = 0; k < 9; k++) y[k] = Q[k] * (0.7 + 0.4 * (k % 3));
    for (int k = 9; k < 18; k++) y[k] = gsl_ran_ugaussian(r);
}

/* T*GL(3): act against the 6x6 representation's exponential on both sides; velocity against its
 * formulas (F' = A F, P' = -A^T P + B F^-T; F' = F A, P' = F^-T B - P A^T); diff inverts act;
 * bracket against the 6x6 commutator; dexp against its series (both paths: the series for
 * 2(|A| + |B|) <= 1, Van Loan beyond), dexpinv o dexp = id, the transposes adjoint; a singular F:
 * LF_EDOMAIN, y unchanged. */
static void test_tgl3(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(33);
    double w_act = 0, w_vel = 0, w_diff = 0, w_br = 0, w_dexp = 0, w_inv = 0, w_tr = 0;
    for (int it = 0; it < 200; it++) {
        const int right = it % 2;
        const double size = it % 4 < 2 ? 0.02 : 0.3; /* 2(|A| + |B|) below 1 / above */
        double y[18], y1[18], xi[18], v[18], w[18], X[36], EX[36], Ry[36], R1[36], P6[36], out[18], ref[18], t[18];
        lf_error e;
        tgl3_point(r, y);
        for (int k = 0; k < 18; k++) /* y1 = exp(u) y (or y exp(u)), |u| ~ 1: in reach of the principal log */
            xi[k] = 0.25 * gsl_ran_ugaussian(r);
        memcpy(y1, y, sizeof y1);
        assert_int_equal(lf_tgl3_act(xi, y1, right, &e), LF_OK);
        for (int k = 0; k < 18; k++)
            xi[k] = size * gsl_ran_ugaussian(r), v[k] = gsl_ran_ugaussian(r), w[k] = gsl_ran_ugaussian(r);
        /* act */
        tgl3_alg(xi, X);
        assert_int_equal(lf_expm(6, X, EX, &e), LF_OK);
        assert_int_equal(lf_tgl3_rep(y, Ry), LF_OK);
        memcpy(t, y, sizeof t);
        assert_int_equal(lf_tgl3_act(xi, t, right, &e), LF_OK);
        assert_int_equal(lf_tgl3_rep(t, R1), LF_OK);
        if (right) matmul(6, Ry, EX, P6);
        else matmul(6, EX, Ry, P6);
        w_act = fmax(w_act, maxdiff(36, R1, P6));
        /* velocity */
        double Fi[9] = {0}, FiT[9], AT[9], M1[9], M2[9];
        assert_int_equal(lf_m3_inverse(y, Fi), LF_OK);
        lf_m3_transpose(Fi, FiT);
        lf_m3_transpose(xi, AT);
        assert_int_equal(lf_tgl3_velocity(y, xi, right, out, &e), LF_OK);
        if (right) {
            lf_m3_mul(y, xi, ref);
            lf_m3_mul(FiT, xi + 9, M1);
            lf_m3_mul(y + 9, AT, M2);
        } else {
            lf_m3_mul(xi, y, ref);
            lf_m3_mul(AT, y + 9, M1);
            for (int k = 0; k < 9; k++) M1[k] = -M1[k];
            lf_m3_mul(xi + 9, FiT, M2);
            for (int k = 0; k < 9; k++) M2[k] = -M2[k];
        }
        lf_m3_sub(M1, M2, ref + 9);
        w_vel = fmax(w_vel, maxdiff(18, out, ref) / vnorm(18, ref));
        /* diff */
        assert_int_equal(lf_tgl3_diff(y, y1, right, t, &e), LF_OK);
        memcpy(out, y, sizeof out);
        assert_int_equal(lf_tgl3_act(t, out, right, &e), LF_OK);
        w_diff = fmax(w_diff, maxdiff(18, out, y1) / vnorm(18, y1));
        /* bracket: the 6x6 matrix of [v, w] is the commutator of theirs */
        double V6[36], W6[36], C6[36], B6[36];
        tgl3_alg(v, V6);
        tgl3_alg(w, W6);
        matmul(6, V6, W6, C6);
        matmul(6, W6, V6, P6);
        for (int k = 0; k < 36; k++) C6[k] -= P6[k];
        lf_tgl3_bracket(v, w, out);
        tgl3_alg(out, B6);
        w_br = fmax(w_br, maxdiff(36, B6, C6) / (vnorm(18, v) * vnorm(18, w)));
        /* dexp */
        dexp_series(18, lf_tgl3_bracket, xi, v, ref);
        assert_int_equal(lf_tgl3_dexp(xi, v, 0, 0, out, &e), LF_OK);
        w_dexp = fmax(w_dexp, maxdiff(18, out, ref) / vnorm(18, ref));
        assert_int_equal(lf_tgl3_dexp(xi, out, 1, 0, out, &e), LF_OK); /* out aliases v */
        w_inv = fmax(w_inv, maxdiff(18, out, v) / vnorm(18, v));
        for (int inv = 0; inv < 2; inv++) {
            double a[18], bt[18], lhs = 0, rhs = 0;
            assert_int_equal(lf_tgl3_dexp(xi, v, inv, 0, a, &e), LF_OK);
            assert_int_equal(lf_tgl3_dexp(xi, w, inv, 1, bt, &e), LF_OK);
            for (int k = 0; k < 18; k++) lhs += a[k] * w[k], rhs += v[k] * bt[k];
            w_tr = fmax(w_tr, fabs(lhs - rhs) / (vnorm(18, a) * vnorm(18, w)));
        }
    }
    gsl_rng_free(r);
    CHECK_LE(w_act, 1e-14, "tgl3 act vs the 6x6 exponential, both sides");
    CHECK_LE(w_vel, 1e-15, "tgl3 velocity vs its formulas, relative, both sides");
    CHECK_LE(w_diff, 1e-14, "tgl3 act(diff(y0, y1), y0) = y1, relative (y1 = exp(u) y0, |u| ~ 1)");
    CHECK_LE(w_br, 1e-15, "tgl3 bracket vs the 6x6 commutator, / |x||y|");
    CHECK_LE(w_dexp, 1e-14, "tgl3 dexp vs its series, relative (both paths)");
    CHECK_LE(w_inv, 1e-14, "tgl3 dexpinv(dexp(v)) = v, relative (out aliasing v)");
    CHECK_LE(w_tr, 1e-14, "tgl3 <dexp v, w> = <v, dexp^T w> (and dexpinv), relative");
    double y[18] = {1, 2, 3, 2, 4, 6, 0, 0, 1}, y0[18], xi[18] = {0.1}, ydot[18];
    lf_error e;
    memcpy(y0, y, sizeof y);
    assert_int_equal(lf_tgl3_act(xi, y, 0, &e), LF_EDOMAIN);
    printf("  tgl3 act at a singular F: %s\n", e.msg);
    assert_memory_equal(y, y0, sizeof y);
    assert_int_equal(lf_tgl3_velocity(y, xi, 1, ydot, &e), LF_EDOMAIN);
}

/* The product's bookkeeping: copy, nfactors, trivialization, kind names, the distance of a range of
 * factors, the check of one factor. */
static void test_product(void **state)
{
    (void)state;
    lf_error e;
    const lf_factor_kind kinds[3] = {LF_SO3, LF_S2, LF_RM};
    const int dims[3] = {0, 0, 4};
    lf_manifold *M = lf_manifold_new(3, kinds, dims, LF_LEFT_TRIVIALIZED, &e);
    assert_non_null(M);
    assert_int_equal(lf_manifold_nfactors(M), 3);
    assert_int_equal(lf_manifold_trivialization(M), LF_LEFT_TRIVIALIZED);
    for (int k = LF_SO3; k <= LF_SE3; k++) {
        lf_factor_kind kk;
        int d;
        char name[16];
        snprintf(name, sizeof name, k == LF_RM ? "%s5" : "%s", lf_factor_kind_name((lf_factor_kind)k));
        assert_int_equal(lf_factor_parse(name, &kk, &d), 0); /* the name parses back to its kind */
        assert_int_equal(kk, k);
    }
    assert_string_equal(lf_factor_kind_name(LF_S2), "s2");
    /* a copy: the same product, usable after the original is freed */
    gsl_rng *r = new_rng(34);
    double y[16], z[16], xi[16], a[16], b[16];
    lf_so3_random(gsl_rng_get(r), y, NULL);
    lf_so3_random(gsl_rng_get(r), z, NULL);
    rand_dir(r, y + 9);
    rand_dir(r, z + 9);
    for (int k = 0; k < 4; k++) y[12 + k] = gsl_ran_ugaussian(r), z[12 + k] = gsl_ran_ugaussian(r);
    for (int k = 0; k < 10; k++) xi[k] = gsl_ran_ugaussian(r);
    memcpy(a, y, sizeof a);
    lf_manifold_act(M, xi, a);
    lf_manifold *C = lf_manifold_copy(M, &e);
    const double d_all = lf_manifold_dist(M, y, z), d0 = lf_manifold_dist_range(M, 0, 1, y, z),
                 d1 = lf_manifold_dist_range(M, 1, 1, y, z), d2 = lf_manifold_dist_range(M, 2, 1, y, z);
    lf_manifold_free(M);
    assert_non_null(C);
    assert_true(lf_manifold_nfactors(C) == 3 && lf_manifold_nparam(C) == 16 && lf_manifold_ndim(C) == 10);
    assert_int_equal(lf_manifold_trivialization(C), LF_LEFT_TRIVIALIZED);
    assert_int_equal(lf_manifold_factor(C, 2)->nd, 4);
    memcpy(b, y, sizeof b);
    lf_manifold_act(C, xi, b);
    assert_memory_equal(a, b, sizeof a);
    /* the distance of factor ranges: each factor's own, root sum of squares */
    double D[9], dw[4];
    lf_m3_sub(y, z, D);
    for (int k = 0; k < 4; k++) dw[k] = y[12 + k] - z[12 + k];
    printf("  dist of (so3, s2, r4) factors: %.6f %.6f %.6f, of all %.6f\n", d0, d1, d2, d_all);
    assert_true(d0 == lf_m3_fnorm(D) && d1 == lf_s2_dist(y + 9, z + 9) && d2 == vnorm(4, dw));
    assert_true(fabs(d_all - sqrt(d0 * d0 + d1 * d1 + d2 * d2)) <= 4e-16 * d_all);
    assert_true(lf_manifold_dist_range(C, 1, 2, y, z) == sqrt(d1 * d1 + d2 * d2));
    assert_true(lf_manifold_dist_range(C, 0, 3, y, z) == lf_manifold_dist(C, y, z));
    /* one factor's check, named as asked; the others are not looked at */
    y[9] *= 1.01;
    assert_int_equal(lf_manifold_check_factor(C, 0, y, 1e-9, "attitude", &e), LF_OK);
    assert_int_equal(lf_manifold_check_factor(C, 1, y, 1e-9, "direction", &e), LF_EINVAL);
    printf("  %s\n", e.msg);
    assert_non_null(strstr(e.msg, "direction"));
    y[12] = NAN;
    assert_int_equal(lf_manifold_check_factor(C, 2, y, 1e-9, "offset", &e), LF_EINVAL);
    assert_non_null(strstr(e.msg, "offset"));
    lf_manifold_free(C);
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
    assert_int_equal(lf_factor_parse("se3", &k, &d), 0);
    assert_int_equal(k, LF_SE3);
    assert_int_equal(lf_factor_parse("se2", &k, &d), -1);
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
        cmocka_unit_test(test_battery), cmocka_unit_test(test_act_matches_group_exp),
        cmocka_unit_test(test_checks),  cmocka_unit_test(test_gl3),
        cmocka_unit_test(test_ts2),     cmocka_unit_test(test_tgl3),
        cmocka_unit_test(test_product),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
