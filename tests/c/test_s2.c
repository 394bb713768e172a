/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of core/lie/s2.c. */
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
#include "lie/s2.h"

/* random tangent vector at x of length len */
static void rand_tangent(gsl_rng *r, const double x[3], double len, double v[3])
{
    double d[3];
    rand_dir(r, d);
    lf_s2_tangent(x, d, v);
    lf_v3_scale(v, 1 / lf_v3_norm(v), v);
    lf_s2_tangent(x, v, v); /* again: x.v was ~eps/|tangent part| after the first pass */
    lf_v3_scale(v, len / lf_v3_norm(v), v);
}

static void test_dist(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(1);
    /* p = e1, q = (cos a, sin a, 0): the angle of the stored q is atan2(q2, q1) exactly */
    double wnear = 0, wmid = 0, wfar = 0;
    for (int k = 0; k < 30000; k++) {
        double a;
        if (k % 3 == 0) a = pow(10, -15 + 15 * gsl_rng_uniform(r));       /* close */
        else if (k % 3 == 1) a = PI * gsl_rng_uniform(r);                   /* anywhere */
        else a = PI - pow(10, -15 + 15 * gsl_rng_uniform(r));               /* nearly antipodal */
        double p[3] = {1, 0, 0}, q[3] = {cos(a), sin(a), 0};
        double ref = atan2(q[1], q[0]), d = lf_s2_dist(p, q);
        double e = fabs(d - ref) / ref;
        if (k % 3 == 0) wnear = fmax(wnear, e);
        else if (k % 3 == 1) wmid = fmax(wmid, e);
        else wfar = fmax(wfar, e);
    }
    CHECK_LE(wnear, 1e-15, "s2 dist, angle in [1e-15, 1], max rel err");
    CHECK_LE(wmid, 1e-15, "s2 dist, angle in [0, pi], max rel err");
    CHECK_LE(wfar, 1e-15, "s2 dist, angle in [pi-1, pi-1e-15], max rel err");
    /* symmetric, zero on the diagonal, pi for antipodes; rotation-invariant for random pairs */
    double wsym = 0;
    for (int k = 0; k < 10000; k++) {
        double p[3], q[3];
        rand_dir(r, p);
        rand_dir(r, q);
        wsym = fmax(wsym, fabs(lf_s2_dist(p, q) - lf_s2_dist(q, p)));
        assert_true(lf_s2_dist(p, p) == 0);
        double mp[3];
        lf_v3_scale(p, -1, mp);
        assert_true(fabs(lf_s2_dist(p, mp) - PI) <= 4.5e-16);
        /* against acos(p.q) away from 0 and pi, where acos is well conditioned */
        double c = lf_v3_dot(p, q);
        if (fabs(c) < 0.5) wsym = fmax(wsym, fabs(lf_s2_dist(p, q) - acos(c)));
    }
    CHECK_LE(wsym, 1e-15, "dist(p,q) - dist(q,p) and vs acos(p.q), max");
    gsl_rng_free(r);
}

static void test_midpoint(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(2);
    double weq = 0, whalf = 0, wnorm = 0;
    lf_error err = {0, ""};
    for (int k = 0; k < 20000; k++) {
        double p[3], q[3], m[3];
        rand_dir(r, p);
        rand_dir(r, q);
        if (lf_v3_dot(p, q) < -0.99) continue;
        assert_int_equal(lf_s2_midpoint(p, q, m, &err), LF_OK);
        double dp = lf_s2_dist(p, m), dq = lf_s2_dist(q, m), d = lf_s2_dist(p, q);
        /* the midpoint direction is conditioned like 1/|p + q| = 1/(2 cos(d/2)) */
        double c2 = 0.5 * (lf_v3_norm(p) + lf_v3_norm(q)) * cos(0.5 * d);
        weq = fmax(weq, fabs(dp - dq) * c2);
        whalf = fmax(whalf, fabs(dp + dq - d));
        wnorm = fmax(wnorm, fabs(lf_v3_norm(m) - 1));
    }
    CHECK_LE(weq, 2e-15, "midpoint: |dist(p,m) - dist(q,m)| cos(d/2), max");
    CHECK_LE(whalf, 2e-15, "midpoint: |dist(p,m) + dist(m,q) - dist(p,q)|, max");
    CHECK_LE(wnorm, 5e-16, "midpoint: | |m| - 1 |, max");
    double p[3] = {0, 0, 1}, q[3] = {0, 0, -1}, m[3];
    assert_int_equal(lf_s2_midpoint(p, q, m, &err), LF_EDOMAIN);
    assert_int_equal(err.code, LF_EDOMAIN);
    assert_non_null(strstr(err.msg, "antipodal"));
    printf("  \"%s\"\n", err.msg);
    gsl_rng_free(r);
}

static void test_retract(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(3);
    double wv = 0, wy = 0, wn = 0;
    lf_error err = {0, ""};
    for (int k = 0; k < 20000; k++) {
        double x[3], v[3], y[3], v2[3], y2[3];
        rand_dir(r, x);
        double len = pow(10, -12 + 14 * gsl_rng_uniform(r)); /* 1e-12 .. 100 */
        rand_tangent(r, x, len, v);
        assert_int_equal(lf_s2_retract(x, v, y, &err), LF_OK);
        wn = fmax(wn, fabs(lf_v3_norm(y) - 1));
        assert_int_equal(lf_s2_retract_inv(x, y, v2, &err), LF_OK);
        /* y holds x + v only to absolute round-off, amplified by 1/(x.y)^2 ~ |v|^2 in the inverse */
        wv = fmax(wv, maxdiff(3, v, v2) / fmax(1, len * len));
        /* the other composition, for y in the chart of x */
        rand_dir(r, y);
        if (lf_v3_dot(x, y) < 0.1) continue;
        assert_int_equal(lf_s2_retract_inv(x, y, v2, &err), LF_OK);
        assert_true(fabs(lf_v3_dot(x, v2)) <= 1e-14 * fmax(1, lf_v3_norm(v2)));
        assert_int_equal(lf_s2_retract(x, v2, y2, &err), LF_OK);
        wy = fmax(wy, maxdiff(3, y, y2));
    }
    CHECK_LE(wv, 2e-15, "retract_inv(x, retract(x,v)) - v, abs / max(1,|v|^2)");
    CHECK_LE(wy, 2e-15, "retract(x, retract_inv(x,y)) - y, max");
    CHECK_LE(wn, 5e-16, "| |retract(x,v)| - 1 |, max");
    double x[3] = {1, 0, 0}, y[3] = {-0.5, sqrt(0.75), 0}, v[3];
    assert_int_equal(lf_s2_retract_inv(x, y, v, &err), LF_EDOMAIN);
    assert_int_equal(err.code, LF_EDOMAIN);
    printf("  \"%s\"\n", err.msg);
    gsl_rng_free(r);
}

static void test_tangent_exp(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(4);
    double worth = 0, widem = 0, wexp = 0, wexpn = 0, wsmall = 0;
    for (int k = 0; k < 20000; k++) {
        double x[3], v[3], t[3], t2[3];
        rand_dir(r, x);
        rand_dir(r, v);
        lf_v3_scale(v, pow(10, -5 + 10 * gsl_rng_uniform(r)), v);
        lf_s2_tangent(x, v, t);
        worth = fmax(worth, fabs(lf_v3_dot(x, t)) / lf_v3_norm(v));
        lf_s2_tangent(x, t, t2);
        widem = fmax(widem, maxdiff(3, t, t2) / lf_v3_norm(v));
        /* exp: stays on the sphere and moves by exactly |v| along the great circle */
        double len = (k % 2 ? PI * gsl_rng_uniform(r) : pow(10, -300 + 294 * gsl_rng_uniform(r)));
        double u[3], y[3];
        rand_tangent(r, x, 1.0, u);
        lf_v3_scale(u, len, u);
        lf_s2_exp(x, u, y);
        wexpn = fmax(wexpn, fabs(lf_v3_norm(y) - 1));
        if (k % 2) {
            wexp = fmax(wexp, fabs(lf_s2_dist(x, y) - len));
        } else {
            /* small steps |v| <= 1e-6: y = x + v - |v|^2/2 x + O(|v|^3) to round-off */
            double e[3];
            lf_v3_axpy(x, 1, u, e);
            lf_v3_axpy(e, -0.5 * len * len, x, e);
            wsmall = fmax(wsmall, maxdiff(3, y, e));
        }
    }
    CHECK_LE(worth, 1e-15, "x . tangent(x,v) / |v|, max");
    CHECK_LE(widem, 1e-15, "tangent(x, tangent(x,v)) - tangent(x,v), rel to |v|, max");
    CHECK_LE(wexpn, 4e-16, "| |exp_x(v)| - 1 |, max");
    CHECK_LE(wexp, 4e-15, "dist(x, exp_x(v)) - |v|, |v| <= pi, max");
    CHECK_LE(wsmall, 3e-16, "exp_x(v) - (x + v - |v|^2 x/2), |v| in [1e-300,1e-6], max");
    double x[3] = {0, 1, 0}, z[3] = {0, 0, 0}, y[3];
    lf_s2_exp(x, z, y);
    assert_memory_equal(x, y, sizeof y);
    gsl_rng_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dist),
        cmocka_unit_test(test_midpoint),
        cmocka_unit_test(test_retract),
        cmocka_unit_test(test_tangent_exp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
