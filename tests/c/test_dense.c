/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Dense output (method.h: lf_stepper_set_dense, lf_stepper_dense; core/method/dense.c), measured:
 *  - the interpolant's order on three forms of state: a heavy top (the rigid form, SO(3) x R^3), a body
 *    that translates in a central field (SO(3) x R^3 x R^3 x R^3), a double spherical pendulum (S^2 x S^2
 *    with their velocities): one step of a method of order 6 from the reference's state, the interpolant
 *    at s = 0.3, 0.5, 0.8 of the step against rk8pd (lf_reference_solve); the local error falls as h^4
 *    (order 3), the ends' own error being O(h^7);
 *  - every registered method that steps one of these systems (and is not processed): the interpolant on
 *    the manifold to round-off, equal to the state at the step's end bit for bit and to the state before
 *    it at its start, and at mid-step no further from the reference than twice the step's ends are plus
 *    twice the interpolant's own error there (measured with the order-6 method on the same steps);
 *  - the errors: off, no step yet, t outside the last step, lanes and processed methods refused by name.
 * Every measurement is printed, then asserted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

typedef struct {
    const char *name;
    lf_system *sys;
    lf_potential *pot;
    double y0[24];
    int np;
} problem;

static void top_problem(problem *p)
{
    lf_error e;
    const double J[3] = {1, 1, 0.4}, chi[3] = {0, 0, 1};
    p->name = "heavy top (SO(3) x R^3)";
    p->pot = lf_potential_top(2, chi, &e);
    p->sys = lf_rigid_new(1, J, p->pot, &e);
    const double w[3] = {0.3, -0.4, 3};
    lf_so3_exp((const double[3]){0.6, 0.1, 0}, p->y0);
    memcpy(p->y0 + 9, w, sizeof w);
    p->np = 12;
}

static void central_problem(problem *p)
{
    lf_error e;
    const double J[3] = {0.05, 0.08, 0.11}, m = 1;
    p->name = "body in a central field (SO(3) x R^9)";
    p->pot = lf_potential_central(1, NULL, &e);
    p->sys = lf_rigid_new_translating(1, J, &m, p->pot, &e);
    const double y[18] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0.3, -0.2, 1.0, 1, 0, 0, 0, 1.05, 0.05};
    memcpy(p->y0, y, sizeof y);
    p->np = 18;
}

static void pendulum_problem(problem *p)
{
    lf_error e;
    const double up[3] = {0, 0, 1}, q0[6] = {0.6, 0, -0.8, 0, 0.6, -0.8}, w0[6] = {0, 1.2, 0, -0.7, 0.4, 0.3};
    p->name = "double spherical pendulum (S^2 x S^2)";
    p->pot = NULL;
    p->sys = lf_spheres_double_pendulum(1, 1, 1, 1, 9.81, up, q0, w0, &e);
    if (!p->sys) fail_msg("%s", e.msg);
    p->np = lf_manifold_nparam(lf_system_manifold(p->sys));
    memcpy(p->y0, lf_system_initial(p->sys), (size_t)p->np * sizeof(double));
}

static void free_problem(problem *p)
{
    lf_system_free(p->sys);
    lf_potential_free(p->pot);
}

/* the reference at t (rk8pd from y0 at 0) */
static void reference(const problem *p, double t, double *y)
{
    lf_error e;
    lf_reference_opts o = {0};
    o.rtol = 1e-14, o.atol = 1e-15;
    if (lf_reference_solve(p->sys, p->y0, 0, &t, 1, y, NULL, &o, &e) != LF_OK) fail_msg("%s", e.msg);
}

/* one step of h with method m from y0, the interpolant at s h (s in S) against the reference: the
 * largest difference */
static double local_error(const problem *p, const lf_method *m, double h)
{
    lf_stepper *st = new_stepper(m, p->sys, p->y0, NULL);
    assert_int_equal(lf_stepper_set_dense(st, 1), LF_OK);
    run_steps(st, h, 1);
    static const double S[3] = {0.3, 0.5, 0.8};
    double worst = 0, y[24], r[24];
    for (int k = 0; k < 3; k++) {
        assert_int_equal(lf_stepper_dense(st, S[k] * h, y), LF_OK);
        reference(p, S[k] * h, r);
        worst = fmax(worst, maxdiff(p->np, y, r));
    }
    lf_stepper_free(st);
    return worst;
}

static void test_order(void **state)
{
    (void)state;
    void (*make[3])(problem *) = {top_problem, central_problem, pendulum_problem};
    const char *method[3] = {"dlm_s6", "dlm_s6", "rkmk_gl6"};
    for (int c = 0; c < 3; c++) {
        problem p;
        make[c](&p);
        const lf_method *m = lf_method_find(method[c]);
        double h[4] = {0.2, 0.1, 0.05, 0.025}, err[4];
        if (c == 2) /* (the pendulum is faster: its asymptotic range starts lower) */
            for (int k = 0; k < 4; k++) h[k] /= 4;
        for (int k = 0; k < 4; k++) err[k] = local_error(&p, m, h[k]);
        const double slope = loglog_slope(h, err, 4);
        printf("  %-40s %-9s local error of the interpolant %.2e ... %.2e: slope %.2f (order %.2f)\n", p.name,
               method[c], err[0], err[3], slope, slope - 1);
        assert_true(slope > 3.7 && slope < 4.5);
        free_problem(&p);
    }
}

/* the interpolant's own error at the middle of step 6 of h = 0.02 (the order-6 method's ends are exact to
 * ~1e-12 there) */
static double own_error(void (*make)(problem *), const char *method)
{
    problem p;
    make(&p);
    lf_stepper *st = new_stepper(lf_method_find(method), p.sys, p.y0, NULL);
    lf_stepper_set_dense(st, 1);
    run_steps(st, 0.02, 6);
    double y[24], r[24];
    assert_int_equal(lf_stepper_dense(st, 0.11, y), LF_OK);
    reference(&p, 0.11, r);
    const double e = maxdiff(p.np, y, r);
    lf_stepper_free(st);
    free_problem(&p);
    return e;
}

/* every method that steps one of the problems: manifold, ends bit for bit, mid-step error */
static void test_every_method(void **state)
{
    (void)state;
    int checked = 0;
    void (*make[3])(problem *) = {top_problem, central_problem, pendulum_problem};
    const double own[3] = {own_error(top_problem, "dlm_s6"), own_error(central_problem, "dlm_s6"),
                           own_error(pendulum_problem, "rkmk_gl6")};
    printf("  the interpolant's own error at the middle of step 6 (h = 0.02): %.2e, %.2e, %.2e\n", own[0], own[1],
           own[2]);
    for (int i = 0; i < lf_method_count(); i++) {
        const lf_method *m = lf_method_at(i);
        const lf_method_info *info = method_info(m);
        for (int c = 0; c < 3; c++) {
            problem p;
            make[c](&p);
            lf_error e;
            lf_stepper *st = lf_stepper_new(m, p.sys, p.y0, 0, NULL, &e);
            if (!st) {
                free_problem(&p);
                continue;
            }
            if (lf_stepper_set_dense(st, 1) != LF_OK) { /* processed methods: refused by name */
                assert_non_null(strstr(lf_stepper_error(st)->msg, "processed"));
                lf_stepper_free(st);
                free_problem(&p);
                continue;
            }
            const double h = 0.02;
            int ok = lf_stepper_step(st, h, 5) == LF_OK; /* (adaptive methods: steps of at most h) */
            if (!ok) fail_msg("%s on %s: %s", info->name, p.name, lf_stepper_error(st)->msg);
            double y1[24], y0[24], ym[24], r0[24], r1[24], rm[24], t1 = lf_stepper_time(st);
            memcpy(y1, lf_stepper_state(st), (size_t)p.np * sizeof(double));
            lf_stepper_step(st, h, 1);
            const double t2 = lf_stepper_time(st), tm = 0.5 * (t1 + t2);
            assert_int_equal(lf_stepper_dense(st, t1, y0), LF_OK);
            assert_memory_equal(y0, y1, (size_t)p.np * sizeof(double)); /* the step's start */
            assert_int_equal(lf_stepper_dense(st, t2, y0), LF_OK);
            assert_memory_equal(y0, lf_stepper_state(st), (size_t)p.np * sizeof(double)); /* its end */
            assert_int_equal(lf_stepper_dense(st, tm, ym), LF_OK);
            const double defect = lf_manifold_defect(lf_system_manifold(p.sys), ym);
            reference(&p, tm, rm);
            reference(&p, t1, r0);
            reference(&p, t2, r1);
            const double em = maxdiff(p.np, ym, rm), e0 = maxdiff(p.np, y1, r0);
            const double e1 = fmax(e0, maxdiff(p.np, lf_stepper_state(st), r1));
            const double bound = 2 * e1 + 2 * own[c];
            if (checked % 8 == 0 || em > bound)
                printf("  %-18s %-40s defect %.1e, error at mid-step %.2e, at the ends %.2e\n", info->name, p.name,
                       defect, em, e1);
            assert_true(defect < 1e-13);
            assert_true(em <= bound); /* the ends' error, and the interpolant's own */
            checked++;
            lf_stepper_free(st);
            free_problem(&p);
        }
    }
    printf("  %d (method, problem) pairs checked\n", checked);
    assert_true(checked > 60);
}

static void test_errors(void **state)
{
    (void)state;
    problem p;
    top_problem(&p);
    double y[12];
    lf_stepper *st = new_stepper(lf_method_find("vlv"), p.sys, p.y0, NULL);
    assert_int_equal(lf_stepper_dense(st, 0, y), LF_EINVAL);
    printf("  refused: %s\n", lf_stepper_error(st)->msg);
    assert_non_null(strstr(lf_stepper_error(st)->msg, "off"));
    lf_stepper_set_dense(st, 1);
    assert_int_equal(lf_stepper_dense(st, 0, y), LF_EINVAL);
    printf("  refused: %s\n", lf_stepper_error(st)->msg);
    run_steps(st, 0.1, 2);
    assert_int_equal(lf_stepper_dense(st, 0.05, y), LF_EDOMAIN); /* in the first step, not the last */
    printf("  refused: %s\n", lf_stepper_error(st)->msg);
    assert_int_equal(lf_stepper_dense(st, 0.15, y), LF_OK);
    assert_int_equal(lf_stepper_set_state(st, p.y0, 0), LF_OK); /* a new state: no step to interpolate */
    assert_int_equal(lf_stepper_dense(st, 0, y), LF_EINVAL);
    run_steps(st, -0.1, 1); /* backwards */
    assert_int_equal(lf_stepper_dense(st, -0.05, y), LF_OK);
    lf_stepper_set_dense(st, 0);
    assert_int_equal(lf_stepper_dense(st, -0.05, y), LF_EINVAL);
    lf_stepper_free(st);
    lf_stepper *pr = new_stepper(lf_method_find("dlm_p6"), p.sys, p.y0, NULL);
    assert_int_equal(lf_stepper_set_dense(pr, 1), LF_EINVAL);
    printf("  refused: %s\n", lf_stepper_error(pr)->msg);
    lf_stepper_free(pr);
    double y2[24];
    memcpy(y2, p.y0, 12 * sizeof(double));
    memcpy(y2 + 12, p.y0, 12 * sizeof(double));
    lf_error e;
    lf_stepper *ln = lf_stepper_new_lanes(lf_method_find("vlv"), p.sys, 2, y2, 0, NULL, &e);
    if (ln) {
        assert_int_equal(lf_stepper_set_dense(ln, 1), LF_EINVAL);
        printf("  refused: %s\n", lf_stepper_error(ln)->msg);
        lf_stepper_free(ln);
    }
    assert_int_equal(lf_stepper_set_dense(NULL, 1), LF_EINVAL);
    assert_int_equal(lf_stepper_dense(NULL, 0, y), LF_EINVAL);
    free_problem(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_every_method),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
