/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lf_ensemble_run: members on a pool of threads give the same bits as stepping them one by one,
 * for any number of threads; a failing member is reported with its index and message while the
 * others finish; a raised cancel flag stops every member with LF_EINTR; bad arguments are errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "problems.h"
#include "testutil.h"

enum { NMEMBERS = 24, NP = 12 };

static const char *const methods[] = {"eln", "vlv", "lgvi", "rkmk4", "rkmk_gl4", "lie_euler"};

typedef struct {
    problem stress;
    lf_system *sys; /* shared by every member: built-in C systems are thread-safe */
    double y0[NP];
    lf_ensemble_member m[NMEMBERS];
    double out[NMEMBERS][NP];
} fixture;

static void fixture_init(fixture *f)
{
    lf_error e;
    f->stress = problem_stress();
    f->sys = problem_system(&f->stress, f->y0, &e);
    assert_non_null(f->sys);
    memset(f->m, 0, sizeof f->m);
    for (int i = 0; i < NMEMBERS; i++) {
        lf_ensemble_member *m = &f->m[i];
        m->sys = f->sys;
        m->method = lf_method_find(methods[i % 6]);
        assert_non_null(m->method);
        m->y0 = f->y0;
        m->t0 = 0;
        m->T = 3 + 0.25 * i;
        m->h = 0.05 / (1 + i % 4);
        m->y = f->out[i];
        m->status = -12345; /* garbage the run must overwrite */
    }
}

static void fixture_free(fixture *f)
{
    lf_system_free(f->sys);
    problem_free(&f->stress);
}

/* The reference: each member stepped by hand in this thread. */
static void serial(const fixture *f, double ref[NMEMBERS][NP])
{
    for (int i = 0; i < NMEMBERS; i++) {
        const lf_ensemble_member *m = &f->m[i];
        lf_error e;
        lf_stepper *st = lf_stepper_new(m->method, m->sys, f->y0, m->t0, NULL, &e);
        assert_non_null(st);
        assert_int_equal(lf_stepper_advance_to(st, m->T, m->h), LF_OK);
        memcpy(ref[i], lf_stepper_state(st), sizeof ref[i]);
        lf_stepper_free(st);
    }
}

static void test_threads_do_not_change_the_bits(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f);
    double ref[NMEMBERS][NP];
    serial(&f, ref);
    const int threads[] = {1, 2, 3, 4, 8, 0};
    for (size_t k = 0; k < sizeof threads / sizeof *threads; k++) {
        memset(f.out, 0, sizeof f.out);
        lf_error e = {0};
        assert_int_equal(lf_ensemble_run(f.m, NMEMBERS, threads[k], NULL, &e), LF_OK);
        for (int i = 0; i < NMEMBERS; i++) {
            assert_int_equal(f.m[i].status, LF_OK);
            assert_true(f.m[i].stats.steps > 0);
            assert_memory_equal(f.out[i], ref[i], sizeof ref[i]);
        }
        printf("%d threads (0 = one per CPU): %d members bitwise equal to serial stepping\n", threads[k], NMEMBERS);
    }
    fixture_free(&f);
}

static void test_a_failing_member_is_reported(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f);
    double bad[NP];
    memcpy(bad, f.y0, sizeof bad);
    bad[0] += 0.1; /* R no longer a rotation */
    f.m[5].y0 = bad;
    f.m[9].h = 0; /* not a step */
    lf_error e = {0};
    int rc = lf_ensemble_run(f.m, NMEMBERS, 4, NULL, &e);
    assert_int_not_equal(rc, LF_OK);
    printf("ensemble error: %s\n", e.msg);
    assert_non_null(strstr(e.msg, "member 6"));
    assert_int_not_equal(f.m[5].status, LF_OK);
    assert_int_not_equal(f.m[9].status, LF_OK);
    printf("member 6: %s\nmember 10: %s\n", f.m[5].err.msg, f.m[9].err.msg);
    assert_true(strlen(f.m[5].err.msg) > 0 && strlen(f.m[9].err.msg) > 0);
    for (int i = 0; i < NMEMBERS; i++)
        if (i != 5 && i != 9) assert_int_equal(f.m[i].status, LF_OK);
    fixture_free(&f);
}

static void test_cancel_stops_every_member(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f);
    volatile sig_atomic_t cancel = 1;
    lf_error e = {0};
    assert_int_equal(lf_ensemble_run(f.m, NMEMBERS, 3, &cancel, &e), LF_EINTR);
    for (int i = 0; i < NMEMBERS; i++) assert_int_equal(f.m[i].status, LF_EINTR);
    fixture_free(&f);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    lf_error e = {0};
    assert_int_equal(lf_ensemble_run(NULL, 3, 1, NULL, &e), LF_EINVAL);
    assert_non_null(strstr(e.msg, "3 members"));
    assert_int_equal(lf_ensemble_run(NULL, 0, 1, NULL, &e), LF_OK);
    lf_ensemble_member m = {0};
    assert_int_equal(lf_ensemble_run(&m, 1, -2, NULL, &e), LF_EINVAL);
    assert_int_equal(lf_ensemble_run(&m, 1, 1, NULL, &e), LF_EINVAL); /* no system */
    assert_non_null(strstr(m.err.msg, "system"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_do_not_change_the_bits),
        cmocka_unit_test(test_a_failing_member_is_reported),
        cmocka_unit_test(test_cancel_stops_every_member),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
