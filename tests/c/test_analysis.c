/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of core/analysis/analysis.c (lf_fit_linear, the GSL least-squares wrapper). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>
#include <math.h>

#include "analysis/analysis.h"
#include "base/error.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_line), cmocka_unit_test(known_values), cmocka_unit_test(two_points),
        cmocka_unit_test(bad_input), cmocka_unit_test(loglog_order),
    };
    return cmocka_run_group_tests_name("analysis", tests, NULL, NULL);
}
