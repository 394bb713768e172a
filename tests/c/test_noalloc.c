/* No heap allocation inside a step: malloc/calloc/realloc are wrapped (-Wl,--wrap, see the Makefile)
 * and counted while every method takes 1000 steps with a built-in C potential. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "problems.h"

static long allocations;
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n) { allocations++; return __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { allocations++; return __real_calloc(n, m); }
void *__wrap_realloc(void *p, size_t n) { allocations++; return __real_realloc(p, n); }

static void test_steps_do_not_allocate(void **state)
{
    (void)state;
    for (int i = 0; i < lf_method_count(); i++) {
        const lf_method *m = lf_method_at(i);
        const lf_method_info *mi = lf_method_get_info(m);
        problem p = mi->free_body_only ? problem_free_body() : problem_stress();
        lf_error e;
        double y0[12];
        lf_system *sys = problem_system(&p, y0, &e);
        lf_stepper *st = lf_stepper_new(m, sys, y0, 0, NULL, &e);
        assert_non_null(st);
        long before = allocations;
        assert_int_equal(lf_stepper_step(st, 0.125, 1000), LF_OK);
        long during = allocations - before;
        printf("  %-18s allocations in 1000 steps: %ld\n", mi->name, during);
        assert_int_equal(during, 0);
        lf_stepper_free(st);
        lf_system_free(sys);
        problem_free(&p);
    }
    /* the wrapper itself works: creating a system allocates */
    long before = allocations;
    problem p = problem_stress();
    lf_system *sys = lf_rigid_new(1, p.J, p.pot, NULL);
    assert_true(allocations > before);
    lf_system_free(sys);
    problem_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_steps_do_not_allocate)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
