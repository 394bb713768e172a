/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of core/lie/quat.c, measured against so3.c and algebraic identities. */
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
#include "lie/quat.h"
#include "lie/so3.h"

static void rand_quat(gsl_rng *r, double q[4])
{
    double n = 0;
    for (int i = 0; i < 4; i++) { q[i] = gsl_ran_ugaussian(r); n += q[i] * q[i]; }
    for (int i = 0; i < 4; i++) q[i] /= sqrt(n);
}

static void test_mul_conj(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(1);
    double wmul = 0, wconj = 0, wact = 0, wnorm = 0;
    for (int k = 0; k < 10000; k++) {
        double p[4], q[4], pq[4], Rp[9], Rq[9], Rpq[9], RR[9];
        rand_quat(r, p);
        rand_quat(r, q);
        lf_quat_mul(p, q, pq);
        /* R(p q) = R(p) R(q) */
        lf_quat_to_matrix(p, Rp);
        lf_quat_to_matrix(q, Rq);
        lf_quat_to_matrix(pq, Rpq);
        lf_m3_mul(Rp, Rq, RR);
        wmul = fmax(wmul, maxdiff(9, Rpq, RR));
        /* |p q| = 1 */
        wnorm = fmax(wnorm, fabs(sqrt(pq[0] * pq[0] + pq[1] * pq[1] + pq[2] * pq[2] + pq[3] * pq[3]) - 1));
        /* q q* = 1 and R(q*) = R(q)^T */
        double qc[4], one[4], Rc[9], RqT[9];
        lf_quat_conj(q, qc);
        lf_quat_mul(q, qc, one);
        double e1[4] = {1, 0, 0, 0};
        wconj = fmax(wconj, maxdiff(4, one, e1));
        lf_quat_to_matrix(qc, Rc);
        lf_m3_transpose(Rq, RqT);
        wconj = fmax(wconj, maxdiff(9, Rc, RqT));
        /* the action: (0, R(q) v) = q (0, v) q* */
        double v[4] = {0}, t[4], Rv[3];
        rand_dir(r, v + 1);
        lf_quat_mul(q, v, t);
        lf_quat_mul(t, qc, t);
        lf_m3_apply(Rq, v + 1, Rv);
        wact = fmax(wact, fmax(fabs(t[0]), maxdiff(3, t + 1, Rv)));
    }
    CHECK_LE(wmul, 2e-15, "R(p q) - R(p) R(q), max");
    CHECK_LE(wnorm, 1e-15, "| |p q| - 1 |, max");
    CHECK_LE(wconj, 1e-15, "q q* - 1 and R(q*) - R(q)^T, max");
    CHECK_LE(wact, 2e-15, "q (0,v) q* - (0, R(q) v), max");
    /* non-commutative and the correct order: i j = k */
    double i[4] = {0, 1, 0, 0}, j[4] = {0, 0, 1, 0}, ij[4];
    lf_quat_mul(i, j, ij);
    assert_true(ij[0] == 0 && ij[1] == 0 && ij[2] == 0 && ij[3] == 1);
    lf_quat_mul(j, i, ij);
    assert_true(ij[3] == -1);
    gsl_rng_free(r);
}

static void test_matrix_roundtrip(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(2);
    double wq = 0, wR = 0, worth = 0, wscale = 0;
    for (int k = 0; k < 20000; k++) {
        double q[4], R[9], q2[4], R2[9];
        rand_quat(r, q);
        if (k % 4 == 1) q[0] = 0;           /* angle exactly pi */
        if (k % 4 == 2) q[0] *= 1e-9;       /* near pi */
        if (k % 4 == 3) { q[1] *= 1e-9; q[2] *= 1e-9; q[3] *= 1e-9; } /* near identity */
        lf_quat_to_matrix(q, R);
        worth = fmax(worth, fmax(lf_so3_orth_error(R), fabs(lf_m3_det(R) - 1)));
        /* non-unit input is normalized */
        double q3[4] = {3 * q[0], 3 * q[1], 3 * q[2], 3 * q[3]}, R3[9];
        lf_quat_to_matrix(q3, R3);
        wscale = fmax(wscale, maxdiff(9, R, R3));
        lf_quat_from_matrix(R, q2);
        assert_true(q2[0] >= 0);
        /* compare with the normalized q, sign fixed to w >= 0 (first nonzero component > 0 at w = 0) */
        double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]), s = 1;
        for (int i = 0; i < 4; i++)
            if (q[i] != 0) { s = q[i] > 0 ? 1 : -1; break; }
        if (q[0] == 0) assert_true(q2[1] > 0 || (q2[1] == 0 && q2[2] > 0) || (q2[1] == 0 && q2[2] == 0 && q2[3] > 0));
        for (int i = 0; i < 4; i++) q[i] *= s / n;
        wq = fmax(wq, maxdiff(4, q, q2));
        lf_quat_to_matrix(q2, R2);
        wR = fmax(wR, maxdiff(9, R, R2));
    }
    CHECK_LE(worth, 4e-15, "quat_to_matrix: ||R^T R - I||, |det - 1|, max");
    CHECK_LE(wscale, 2e-15, "R(3q) - R(q), max");
    CHECK_LE(wq, 2e-15, "from_matrix(to_matrix(q)) - q (incl. angle pi), max");
    CHECK_LE(wR, 2e-15, "to_matrix(from_matrix(R)) - R, max");
    /* Haar rotations and the three diagonal rotations by pi */
    double wH = 0;
    for (unsigned long s = 1; s <= 5000; s++) {
        double R[9], q[4], R2[9];
        assert_int_equal(lf_so3_random(s, R, NULL), LF_OK);
        lf_quat_from_matrix(R, q);
        lf_quat_to_matrix(q, R2);
        wH = fmax(wH, maxdiff(9, R, R2));
    }
    CHECK_LE(wH, 2e-15, "to_matrix(from_matrix(R)), R Haar, max");
    for (int a = 0; a < 3; a++) {
        double R[9] = {-1, 0, 0, 0, -1, 0, 0, 0, -1}, q[4];
        R[4 * a] = 1;
        lf_quat_from_matrix(R, q);
        for (int i = 0; i < 4; i++) assert_true(q[i] == (i == a + 1 ? 1 : 0));
    }
    double I[9], q[4];
    lf_m3_identity(I);
    lf_quat_from_matrix(I, q);
    assert_true(q[0] == 1 && q[1] == 0 && q[2] == 0 && q[3] == 0);
    gsl_rng_free(r);
}

static void test_exp_log(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(3);
    double wsmall = 0, wlarge = 0, wso3 = 0, wql = 0;
    for (int k = 0; k < 30000; k++) {
        double v[3], q[4], w[3];
        rand_dir(r, v);
        double t = k % 2 ? pow(10, -300 + 300 * gsl_rng_uniform(r)) : 1 + (PI - 1e-9 - 1) * gsl_rng_uniform(r);
        if (k % 20 == 0) t = PI - 1e-9;
        lf_v3_scale(v, t, v);
        lf_quat_exp(v, q);
        lf_quat_log(q, w);
        if (k % 2) wsmall = fmax(wsmall, maxdiff(3, w, v) / norm_scaled(v));
        else wlarge = fmax(wlarge, maxdiff(3, w, v));
        /* R(quat_exp(v)) = so3_exp(2 v) */
        double R[9], R2[9], v2[3];
        lf_quat_to_matrix(q, R);
        lf_v3_scale(v, 2, v2);
        lf_so3_exp(v2, R2);
        wso3 = fmax(wso3, maxdiff(9, R, R2));
        /* exp(log q) = q for random unit q (w of either sign) */
        double p[4], u[3], p2[4];
        rand_quat(r, p);
        lf_quat_log(p, u);
        assert_true(lf_v3_norm(u) <= PI);
        lf_quat_exp(u, p2);
        wql = fmax(wql, maxdiff(4, p, p2));
    }
    CHECK_LE(wsmall, 1e-15, "quat log(exp(v)), |v| in [1e-300,1], max rel err");
    CHECK_LE(wlarge, 1e-12, "quat log(exp(v)), |v| in [1, pi-1e-9], max abs err");
    CHECK_LE(wso3, 4e-15, "R(quat_exp(v)) - so3_exp(2v), max");
    CHECK_LE(wql, 1e-15, "quat exp(log(q)), random unit q, max");
    /* exact points */
    double z[3] = {0, 0, 0}, q[4], w[3];
    lf_quat_exp(z, q);
    assert_true(q[0] == 1 && q[1] == 0 && q[2] == 0 && q[3] == 0);
    double one[4] = {1, 0, 0, 0}, m1[4] = {-1, 0, 0, 0};
    lf_quat_log(one, w);
    assert_true(w[0] == 0 && w[1] == 0 && w[2] == 0);
    lf_quat_log(m1, w);
    assert_true(fabs(lf_v3_norm(w) - PI) <= 4e-16);
    double tiny[4] = {-1, 1e-300, 0, 0};
    lf_quat_log(tiny, w); /* direction kept even though |u|^2 underflows */
    assert_true(w[0] > 0 && fabs(w[0] - PI) <= 4e-16);
    gsl_rng_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mul_conj),
        cmocka_unit_test(test_matrix_roundtrip),
        cmocka_unit_test(test_exp_log),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
