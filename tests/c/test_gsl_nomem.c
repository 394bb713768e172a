/* SPDX-License-Identifier: GPL-3.0-or-later */
/* GSL errors never abort the process (issue 13 item 2): with every allocation failing, the GSL
 * calls of core/lie/so3.c (the SVD of lf_so3_project, the generator of lf_so3_random) and
 * core/analysis/analysis.c report an lf error instead of GSL's default handler abort()ing.
 * GSL is linked statically here and malloc/calloc are wrapped (-Wl,--wrap, see the Makefile), so
 * GSL's own allocations fail too. Before the guard, this program died with SIGABRT
 * ("gsl: init_source.c: ERROR: failed to allocate space for rng state"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/analysis.h"
#include "lieflow.h"

static int fail_allocations;
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__wrap_malloc(size_t n) { return fail_allocations ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { return fail_allocations ? NULL : __real_calloc(n, m); }

static void test_no_abort_without_memory(void **state)
{
    (void)state;
    lf_error err = {0, ""};
    double R[9], M[9] = {1, 0.1, 0, 0, 1, 0.2, 0.3, 0, 1};
    double x[3] = {1, 2, 3}, y[3] = {2, 4, 7}, s;

    fail_allocations = 1;
    int st_random = lf_so3_random(7, R, &err);
    fail_allocations = 0;
    printf("  lf_so3_random without memory: %s (\"%s\")\n", lf_status_name(st_random), err.msg);
    assert_int_equal(st_random, LF_ENOMEM);

    fail_allocations = 1;
    int st_project = lf_so3_project(M, R, &err);
    fail_allocations = 0;
    printf("  lf_so3_project without memory: %s (\"%s\")\n", lf_status_name(st_project), err.msg);
    /* the Golub-Reinsch SVD allocates and fails; the polar Newton candidate does not allocate and
     * may still deliver the (certified) answer */
    assert_true(st_project == LF_OK || st_project == LF_ENOMEM);
    if (st_project == LF_OK) assert_true(lf_so3_orth_error(R) <= 1e-14);

    fail_allocations = 1;
    int st_fit = lf_fit_linear(x, y, 3, &s, NULL, NULL, NULL);
    fail_allocations = 0;
    assert_int_equal(st_fit, LF_ENOMEM);

    /* and with memory everything works again */
    assert_int_equal(lf_so3_random(7, R, &err), LF_OK);
    assert_int_equal(lf_so3_project(M, R, &err), LF_OK);
    assert_int_equal(lf_fit_linear(x, y, 3, &s, NULL, NULL, NULL), LF_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_abort_without_memory)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
