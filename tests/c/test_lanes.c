/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Lanes (lf_stepper_new_lanes): B copies of a one-body rigid system stepped in lockstep with the
 * state as a structure of arrays. Measured here:
 *  - every lane's state is bitwise the state of a stepper of its own, for every method with a lane
 *    kernel, every built-in potential and a callback potential, B not a multiple of the vector
 *    width, through advance_to (steps of h and a short last step);
 *  - Newton statistics are the sums over the separate steppers;
 *  - a step failing in one lane is rolled back in every lane and names the lane (lgvi where F does
 *    not exist, a potential that becomes non-finite in one lane);
 *  - lanes are refused with a clear message for methods without a lane kernel and for systems of
 *    more than one body; lanes are read and written one at a time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "problems.h"
#include "testutil.h"

enum { B = 7, NP = 12 };

static const char *const lane_methods[] = {"eln", "eln_exp", "vlv", "lgvi"};

/* A callback potential: U = -k . (R e3) (a field potential written by hand), NaN when R33 < cut. */
typedef struct {
    double cut;
} cb_ctx;

static int cb_eval(void *ctx, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    (void)err;
    const cb_ctx *c = ctx;
    double u = 0;
    for (int b = 0; b < nb; b++) {
        const double *Rb = R + 9 * b;
        const double RTk[3] = {Rb[6], Rb[7], Rb[8]}, e3[3] = {0, 0, 1}; /* R^T (0,0,1) */
        u -= Rb[8];
        if (tau) lf_v3_cross(e3, RTk, tau + 3 * b);
        if (Rb[8] < c->cut && tau) tau[3 * b] = NAN;
    }
    if (U) *U = u;
    return LF_OK;
}

static void random_states(unsigned long seed, double wscale, double y0[B][NP])
{
    gsl_rng *r = new_rng(seed);
    for (int j = 0; j < B; j++) {
        double v[3], R[9], w[3];
        rand_dir(r, v);
        lf_v3_scale(v, 0.3 + 2 * gsl_rng_uniform(r), v);
        lf_so3_exp(v, R);
        rand_dir(r, w);
        lf_v3_scale(w, wscale * (0.2 + gsl_rng_uniform(r)), w);
        pack_state(R, w, y0[j]);
    }
    gsl_rng_free(r);
}

/* Steps lanes and separate steppers to T; asserts bitwise equality and equal Newton counts. */
static void compare(const char *mname, lf_system *sys, double y0[B][NP], double T, double h, const char *label)
{
    const lf_method *m = lf_method_find(mname);
    assert_non_null(m);
    assert_true(lf_method_get_rigid_info(m)->lanes);
    lf_error e;
    lf_stepper *L = lf_stepper_new_lanes(m, sys, B, &y0[0][0], 0, NULL, &e);
    if (!L) fail_msg("%s", e.msg);
    assert_int_equal(lf_stepper_lanes(L), B);
    int rc = lf_stepper_advance_to(L, T, h);
    if (rc != LF_OK) fail_msg("%s", lf_stepper_error(L)->msg);
    lf_stepper_stats sl, ss = {0};
    lf_stepper_get_stats(L, &sl);
    int equal = 0;
    for (int j = 0; j < B; j++) {
        lf_stepper *S = lf_stepper_new(m, sys, y0[j], 0, NULL, &e);
        assert_non_null(S);
        assert_int_equal(lf_stepper_advance_to(S, T, h), LF_OK);
        double yl[NP];
        assert_int_equal(lf_stepper_get_lane(L, j, yl), LF_OK);
        equal += memcmp(yl, lf_stepper_state(S), sizeof yl) == 0;
        lf_stepper_stats st;
        lf_stepper_get_stats(S, &st);
        ss.newton_iters += st.newton_iters;
        ss.f_evals += st.f_evals;
        lf_stepper_free(S);
    }
    printf("  %-8s %-14s %d/%d lanes bitwise equal; newton iterations %ld (separate: %ld), torques %ld (%ld)\n",
           mname, label, equal, B, sl.newton_iters, ss.newton_iters, sl.f_evals, ss.f_evals);
    assert_int_equal(equal, B);
    assert_int_equal(sl.newton_iters, ss.newton_iters);
    assert_int_equal(sl.f_evals, ss.f_evals);
    assert_true(lf_stepper_time(L) == T);
    lf_stepper_free(L);
}

static void test_lanes_are_bitwise_separate_steppers(void **state)
{
    (void)state;
    double y0[B][NP];
    random_states(11, 1.0, y0);
    problem probs[4] = {problem_stress(), problem_slow_top(), problem_coulomb_wall(), problem_free_body()};
    cb_ctx cb = {-2};
    lf_potential *cbp = lf_potential_new("by hand", cb_eval, &cb, NULL, NULL);
    for (size_t k = 0; k < sizeof lane_methods / sizeof *lane_methods; k++) {
        for (int p = 0; p < 5; p++) {
            lf_error e;
            const double J[3] = {2, 3, 4.5};
            lf_system *sys = p < 4 ? lf_rigid_new(1, probs[p].J, probs[p].pot, &e) : lf_rigid_new(1, J, cbp, &e);
            assert_non_null(sys);
            compare(lane_methods[k], sys, y0, 2.05, 0.01, p < 4 ? probs[p].name : "callback");
            lf_system_free(sys);
        }
    }
    lf_potential_free(cbp);
    for (int p = 0; p < 4; p++) problem_free(&probs[p]);
}

/* One lane where lgvi's F does not exist (h |w| > 1): the step fails, names lane 4, and every lane
 * keeps the state from before the step. */
static void test_failing_lane_rolls_back_all(void **state)
{
    (void)state;
    double y0[B][NP];
    random_states(5, 0.5, y0);
    y0[3][11] = 40; /* w_z = 40 with h = 0.1 */
    problem top = problem_slow_top();
    lf_error e;
    lf_system *sys = lf_rigid_new(1, top.J, top.pot, &e);
    lf_stepper *L = lf_stepper_new_lanes(lf_method_find("lgvi"), sys, B, &y0[0][0], 0, NULL, &e);
    assert_non_null(L);
    double before[B * NP];
    memcpy(before, lf_stepper_state(L), sizeof before);
    int rc = lf_stepper_step(L, 0.1, 1);
    printf("  lgvi: %s\n", lf_stepper_error(L)->msg);
    assert_int_not_equal(rc, LF_OK);
    assert_non_null(strstr(lf_stepper_error(L)->msg, "lane 4"));
    assert_memory_equal(before, lf_stepper_state(L), sizeof before);
    assert_true(lf_stepper_time(L) == 0);
    lf_stepper_free(L);

    /* a callback torque that turns NaN in lane 2 only (R33 < 0.5 there) */
    cb_ctx cb = {0.5};
    lf_potential *cbp = lf_potential_new("nan below", cb_eval, &cb, NULL, NULL);
    const double J[3] = {2, 3, 4.5};
    lf_system *sys2 = lf_rigid_new(1, J, cbp, &e);
    for (int j = 0; j < B; j++) { /* every lane upright, lane 2 tilted past R33 = 0.5 */
        double v[3] = {j == 1 ? 1.2 : 0.1, 0, 0}, R[9], w[3] = {0, 0, 1};
        lf_so3_exp(v, R);
        pack_state(R, w, y0[j]);
    }
    L = lf_stepper_new_lanes(lf_method_find("vlv"), sys2, B, &y0[0][0], 0, NULL, &e);
    assert_non_null(L);
    rc = lf_stepper_step(L, 0.01, 1);
    printf("  vlv: %s\n", lf_stepper_error(L)->msg);
    assert_int_not_equal(rc, LF_OK);
    assert_non_null(strstr(lf_stepper_error(L)->msg, "lane 2"));
    double y1[NP];
    assert_int_equal(lf_stepper_get_lane(L, 1, y1), LF_OK);
    assert_memory_equal(y1, y0[1], sizeof y1);
    lf_stepper_free(L);
    lf_system_free(sys2);
    lf_potential_free(cbp);
    lf_system_free(sys);
    problem_free(&top);
}

static void test_lanes_refused_and_lane_access(void **state)
{
    (void)state;
    problem st = problem_stress();
    double y0[B][NP];
    random_states(3, 1.0, y0);
    lf_error e = {0};
    lf_system *sys = lf_rigid_new(1, st.J, st.pot, &e);
    assert_null(lf_stepper_new_lanes(lf_method_find("rkmk4"), sys, B, &y0[0][0], 0, NULL, &e));
    printf("  %s\n", e.msg);
    assert_non_null(strstr(e.msg, "rkmk4 has no lane kernel"));
    assert_non_null(strstr(e.msg, "vlv"));
    assert_null(lf_stepper_new_lanes(lf_method_find("vlv"), sys, 0, &y0[0][0], 0, NULL, &e));
    assert_non_null(strstr(e.msg, "0 lanes"));
    const double J2[6] = {2, 2, 4, 1, 2, 2.5};
    lf_system *two = lf_rigid_new(2, J2, st.pot, &e);
    assert_null(lf_stepper_new_lanes(lf_method_find("vlv"), two, 3, &y0[0][0], 0, NULL, &e));
    printf("  %s\n", e.msg);
    assert_non_null(strstr(e.msg, "2 bodies"));
    /* a lane that is not a state */
    y0[5][0] += 0.5;
    assert_null(lf_stepper_new_lanes(lf_method_find("vlv"), sys, B, &y0[0][0], 0, NULL, &e));
    printf("  %s\n", e.msg);
    assert_non_null(strstr(e.msg, "lane 6"));
    y0[5][0] -= 0.5;
    /* every registry method with info.lanes accepts lanes, the others refuse */
    for (int i = 0; i < lf_method_count(); i++) {
        const lf_method *m = lf_method_at(i);
        if (lf_method_accepts(m, sys, NULL) != LF_OK) continue;
        lf_stepper *L = lf_stepper_new_lanes(m, sys, 2, &y0[0][0], 0, NULL, NULL);
        assert_int_equal(L != NULL, lf_method_get_rigid_info(m)->lanes);
        lf_stepper_free(L);
    }
    /* get / set one lane */
    lf_stepper *L = lf_stepper_new_lanes(lf_method_find("eln"), sys, B, &y0[0][0], 0, NULL, &e);
    double y[NP];
    assert_int_equal(lf_stepper_get_lane(L, 6, y), LF_OK);
    assert_memory_equal(y, y0[6], sizeof y);
    assert_int_equal(lf_stepper_get_lane(L, 7, y), LF_EINVAL);
    assert_non_null(strstr(lf_stepper_error(L)->msg, "lane 7 of 7"));
    assert_int_equal(lf_stepper_set_lane(L, 2, y0[6]), LF_OK);
    assert_int_equal(lf_stepper_get_lane(L, 2, y), LF_OK);
    assert_memory_equal(y, y0[6], sizeof y);
    y[3] = 7;
    assert_int_equal(lf_stepper_set_lane(L, 2, y), LF_EINVAL);
    assert_int_equal(lf_stepper_set_lane(L, -1, y0[0]), LF_EINVAL);
    lf_stepper_free(L);
    lf_system_free(two);
    lf_system_free(sys);
    problem_free(&st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lanes_are_bitwise_separate_steppers),
        cmocka_unit_test(test_failing_lane_rolls_back_all),
        cmocka_unit_test(test_lanes_refused_and_lane_access),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
