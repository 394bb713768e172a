/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The chained GSL error handler (core/base/gsl_guard_internal.h): inside a guard a GSL error is recorded and
 * returned, not abort()ed; outside every guard the handler the host installed before lieflow runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_ellint.h>

#include "base/gsl_guard_internal.h"

static int host_calls;
static void host_handler(const char *reason, const char *file, int line, int gsl_errno)
{
    (void)reason; (void)file; (void)line; (void)gsl_errno;
    host_calls++;
}

static void test_guard_records_and_chains(void **state)
{
    (void)state;
    gsl_set_error_handler(host_handler); /* the host's handler, set before lieflow's first use */
    gsl_sf_result r;

    lf_gsl_guard g;
    lf_gsl_guard_begin(&g);
    int st = gsl_sf_ellint_Kcomp_e(2.0, GSL_PREC_DOUBLE, &r); /* |k| > 1: domain error */
    int rec = lf_gsl_guard_end(&g);
    printf("  inside the guard: status %d, recorded %d (%s), host handler calls %d\n", st, rec, g.reason, host_calls);
    assert_int_equal(st, GSL_EDOM);
    assert_int_equal(rec, GSL_EDOM);
    assert_non_null(strstr(g.reason, "ellint"));
    assert_int_equal(host_calls, 0);

    /* nested: the inner error reaches the outer guard too */
    lf_gsl_guard outer, inner;
    lf_gsl_guard_begin(&outer);
    lf_gsl_guard_begin(&inner);
    gsl_sf_ellint_Kcomp_e(3.0, GSL_PREC_DOUBLE, &r);
    assert_int_equal(lf_gsl_guard_end(&inner), GSL_EDOM);
    assert_int_equal(lf_gsl_guard_end(&outer), GSL_EDOM);
    assert_int_equal(host_calls, 0);

    /* outside every guard the host's handler runs */
    gsl_sf_ellint_Kcomp_e(2.0, GSL_PREC_DOUBLE, &r);
    printf("  outside: host handler calls %d\n", host_calls);
    assert_int_equal(host_calls, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_guard_records_and_chains)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
