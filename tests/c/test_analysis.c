/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of core/analysis/analysis.c (lf_fit_linear, the GSL least-squares wrapper), and of the
 * non-geometric baselines of core/reference/baseline.c (lf_baseline_run), whose orders it fits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "analysis/analysis.h"
#include "base/error.h"
#include "lieflow.h"

/* An exact line is recovered to round-off, with zero residual and slope error. */
static void exact_line(void **state)
{
    (void)state;
    double x[20], y[20];
    for (int i = 0; i < 20; i++) {
        x[i] = 0.5 * i - 3;
        y[i] = -1.25 * x[i] + 7.5;
    }
    double s, c, se, rs;
    assert_int_equal(lf_fit_linear(x, y, 20, &s, &c, &se, &rs), LF_OK);
    assert_true(fabs(s + 1.25) < 1e-14);
    assert_true(fabs(c - 7.5) < 1e-14);
    assert_true(se < 1e-14 && rs < 1e-14);
}

/* Hand-computed example: x = 1..5, y = (2, 4.1, 5.9, 8.2, 9.8):
 * mean x = 3, mean y = 6, Sxx = 10, Sxy = 19.7 -> slope 1.97, intercept 0.09;
 * residuals (-0.06, 0.07, -0.10, 0.23, -0.14): sum r^2 = 0.091, s^2 = 0.091/3,
 * slope stderr = sqrt(s^2/Sxx) = sqrt(0.0030333...), resid std = sqrt(0.030333...). */
static void known_values(void **state)
{
    (void)state;
    const double x[] = {1, 2, 3, 4, 5}, y[] = {2, 4.1, 5.9, 8.2, 9.8};
    double s, c, se, rs;
    assert_int_equal(lf_fit_linear(x, y, 5, &s, &c, &se, &rs), LF_OK);
    assert_true(fabs(s - 1.97) < 1e-14);
    assert_true(fabs(c - 0.09) < 1e-13);
    assert_true(fabs(se - sqrt(0.091 / 3 / 10)) < 1e-14);
    assert_true(fabs(rs - sqrt(0.091 / 3)) < 1e-14);
    /* every output is optional */
    assert_int_equal(lf_fit_linear(x, y, 5, NULL, NULL, NULL, NULL), LF_OK);
    assert_int_equal(lf_fit_linear(x, y, 5, &s, NULL, NULL, NULL), LF_OK);
    assert_true(fabs(s - 1.97) < 1e-14);
}

/* Two points: the line through them, stderr undefined (NAN), residual 0. */
static void two_points(void **state)
{
    (void)state;
    const double x[] = {1, 3}, y[] = {1, 5};
    double s, c, se, rs;
    assert_int_equal(lf_fit_linear(x, y, 2, &s, &c, &se, &rs), LF_OK);
    assert_true(fabs(s - 2) < 1e-15 && fabs(c + 1) < 1e-15);
    assert_true(isnan(se));
    assert_true(rs == 0);
}

/* Bad input is rejected and leaves the outputs untouched. */
static void bad_input(void **state)
{
    (void)state;
    double x[] = {1, 2, 3}, y[] = {1, 2, 3}, same[] = {2, 2, 2};
    double s = 42;
    assert_int_equal(lf_fit_linear(x, y, 1, &s, NULL, NULL, NULL), LF_EINVAL);
    assert_int_equal(lf_fit_linear(x, y, 0, &s, NULL, NULL, NULL), LF_EINVAL);
    assert_int_equal(lf_fit_linear(NULL, y, 3, &s, NULL, NULL, NULL), LF_EINVAL);
    assert_int_equal(lf_fit_linear(x, NULL, 3, &s, NULL, NULL, NULL), LF_EINVAL);
    assert_int_equal(lf_fit_linear(same, y, 3, &s, NULL, NULL, NULL), LF_EDOMAIN);
    y[1] = NAN;
    assert_int_equal(lf_fit_linear(x, y, 3, &s, NULL, NULL, NULL), LF_EINVAL);
    y[1] = 2;
    x[2] = INFINITY;
    assert_int_equal(lf_fit_linear(x, y, 3, &s, NULL, NULL, NULL), LF_EINVAL);
    assert_true(s == 42);
}

/* A log-log fit of err = C h^p recovers the order p (the use in lf.order). */
static void loglog_order(void **state)
{
    (void)state;
    double lx[4], ly[4];
    for (int i = 0; i < 4; i++) {
        double h = 0.1 / (1 << i);
        lx[i] = log(h);
        ly[i] = log(3.7 * h * h * (1 + 0.01 * h));
    }
    double s;
    assert_int_equal(lf_fit_linear(lx, ly, 4, &s, NULL, NULL, NULL), LF_OK);
    printf("  fitted order %.6f (expected 2 + O(h))\n", s);
    assert_true(fabs(s - 2) < 1e-3);
}

/* ---------------------------------------------------------------- the baselines */
/* error of the state at T against the exact free body (R and w, max norm) */
static double baseline_error(const lf_system *sys, const double *y0, const double *J, double T, lf_baseline_opts *o,
                             lf_baseline_result *res)
{
    double yT[12], R[9], w[3];
    lf_error e;
    int rc = lf_baseline_run(sys, y0, T, o, yT, res, &e);
    if (rc != LF_OK) fail_msg("%s", e.msg);
    assert_int_equal(lf_exact_free_body_flow(J, y0, y0 + 9, T, R, w, &e), LF_OK);
    double d = 0;
    for (int i = 0; i < 9; i++) d = fmax(d, fabs(yT[i] - R[i]));
    for (int i = 0; i < 3; i++) d = fmax(d, fabs(yT[9 + i] - w[i]));
    return d;
}

/* RK4 and quaternion RK4 converge with order 4 (fitted), RK8PD meets its tolerance, the counts are
 * those of the schemes, renormalizing keeps R on SO(3), bad input is refused */
static void baseline(void **state)
{
    (void)state;
    const double J[3] = {0.9144, 1.098, 1.66}, T = 5;
    double y0[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0.45549, 0.82623, 0.03476};
    lf_error e;
    lf_system *sys = lf_rigid_new(1, J, NULL, &e);
    assert_non_null(sys);
    const char *names[2] = {"RK4", "quaternion RK4"};
    for (int k = 0; k < 2; k++) {
        double lh[4], le[4], s;
        for (int i = 0; i < 4; i++) {
            lf_baseline_opts o = {k ? LF_BASELINE_QUAT_RK4 : LF_BASELINE_RK4, 0, 0.1 / (1 << i), 0, 0, 0};
            lf_baseline_result res;
            const double err = baseline_error(sys, y0, J, T, &o, &res);
            lh[i] = log(o.h), le[i] = log(err);
            assert_int_equal(res.steps, lround(T / o.h));
            assert_int_equal(res.f_evals, 4 * res.steps);
            assert_true(res.seconds >= 0 && res.cpu_seconds >= 0);
        }
        assert_int_equal(lf_fit_linear(lh, le, 4, &s, NULL, NULL, NULL), LF_OK);
        printf("  %s on the free body, h = 0.1 .. 0.0125: order %.3f, error %.2e at h = 0.0125\n", names[k], s,
               exp(le[3]));
        assert_true(fabs(s - 4) < 0.15);
    }
    lf_baseline_opts o8 = {LF_BASELINE_RK8PD, 0, 0, 1e-12, 50, 0};
    lf_baseline_result r8;
    const double e8 = baseline_error(sys, y0, J, T, &o8, &r8);
    printf("  RK8PD tol 1e-12: error %.2e, %ld steps, %ld evaluations, max energy error %.2e\n", e8, r8.steps,
           r8.f_evals, r8.max_energy_error);
    assert_true(e8 < 1e-10 && r8.steps > 0 && r8.f_evals >= 13 * r8.steps);
    assert_true(r8.max_energy_error >= 0 && r8.max_energy_error < 1e-10);
    /* renormalize: R stays on SO(3) to round-off (without: the scheme's error, h = 0.1) */
    double orth[2];
    for (int rn = 0; rn < 2; rn++) {
        lf_baseline_opts o = {LF_BASELINE_RK4, rn, 0.1, 0, 0, 0};
        double yT[12];
        lf_baseline_result res;
        assert_int_equal(lf_baseline_run(sys, y0, 50, &o, yT, &res, &e), LF_OK);
        orth[rn] = lf_so3_orth_error(yT);
    }
    printf("  RK4, h = 0.1, T = 50: ||R^T R - I|| %.2e plain, %.2e renormalized\n", orth[0], orth[1]);
    assert_true(orth[1] < 1e-14 && orth[0] > 1e3 * orth[1]);
    /* refused: not a whole number of steps, T <= 0, a system that is not rigid */
    lf_baseline_opts bad = {LF_BASELINE_RK4, 0, 0.3, 0, 0, 0};
    double yT[12];
    lf_baseline_result res;
    assert_int_equal(lf_baseline_run(sys, y0, 1, &bad, yT, &res, &e), LF_EINVAL);
    printf("  %s\n", e.msg);
    assert_non_null(strstr(e.msg, "whole number"));
    bad.h = 0.1;
    assert_int_equal(lf_baseline_run(sys, y0, -1, &bad, yT, &res, &e), LF_EINVAL);
    assert_non_null(strstr(e.msg, "T=-1"));
    assert_int_equal(lf_baseline_run(sys, y0, 1, &bad, yT, NULL, &e), LF_EINVAL); /* the result is required */
    lf_factor_kind k2 = LF_S2;
    lf_manifold *M = lf_manifold_new(1, &k2, NULL, LF_RIGHT_TRIVIALIZED, &e);
    const double D[3] = {1, 2, 3}, q[3] = {0, 0, 1};
    lf_system *flow = lf_lie_ode_builtin("s2_gradient_flow", M, q, D, &e);
    assert_int_equal(lf_baseline_run(flow, q, 1, &bad, yT, &res, &e), LF_EINVAL);
    printf("  %s\n", e.msg);
    lf_system_free(flow);
    lf_manifold_free(M);
    lf_system_free(sys);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_line), cmocka_unit_test(known_values), cmocka_unit_test(two_points),
        cmocka_unit_test(bad_input),  cmocka_unit_test(loglog_order), cmocka_unit_test(baseline),
    };
    return cmocka_run_group_tests_name("analysis", tests, NULL, NULL);
}
