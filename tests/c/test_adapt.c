/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reversible adaptive steps (core/method/adapt.c, lf_stepper_opts.adapt), measured:
 *  - a run of steps h then as many of -h returns to the start to round-off, for every symmetric
 *    fixed-step rigid method and a generic one, with the torque monitor and a monitor of one's own,
 *    while the time steps vary along the way (they follow the monitor): 200 steps each way on the
 *    Coulomb wall and the (chaotic) stress test end 1e-14 ... 4e-12 from the start, where the same
 *    run with fixed steps ends 1e-15 ... 4e-14 off (bound 1e-11; a method that is not symmetric is
 *    1e-3 off after one step);
 *  - the step density follows Q(y)/Q(y0) with an error O(h^2) (halving h divides it by ~4);
 *  - the energy error of the Coulomb wall stays bounded (the drift statistic of lf.drift below its
 *    threshold 0.5) over T = 2e4 (about 4,800 closest approaches to the wall), while a plain
 *    controller with the same monitor, h_n = h Q(y0)/Q(y_n) (not reversible), drifts;
 *    (On the stress test, which is chaotic, the reversible adaptive steps do drift: lf.stress_test
 *    statistics 4 to 13 at T = 2000 for vlv and split_exact_s4, h = 0.125 ... 0.03125, where fixed
 *    steps stay bounded; Hairer & Söderlind's near-conservation is for integrable reversible
 *    systems. docs/methods.md, "Reversible adaptive steps".)
 *  - refusals name the method: not symmetric, adaptive already, lanes, no monitor. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "analysis/analysis.h"
#include "problems.h"
#include "testutil.h"

/* a monitor of one's own: Q = 1 + |w|^2 + |R e3 - e3|^2 (rigid state layout) */
static int my_monitor(void *ctx, const lf_system *sys, double t, const double *y, double *Q, lf_error *err)
{
    (void)ctx, (void)sys, (void)t, (void)err;
    const double *w = y + 9, d = y[8] - 1;
    *Q = 1 + lf_v3_dot(w, w) + y[2] * y[2] + y[5] * y[5] + d * d;
    return LF_OK;
}

/* n steps of h, then n of -h: the largest difference from the start (state and time) and the ratio
 * of the largest to the smallest time step on the way out */
static double there_and_back(const lf_method *m, const lf_system *sys, const double *y0, const lf_stepper_opts *o,
                             double h, int n, double *ratio)
{
    lf_error e;
    lf_stepper *st = lf_stepper_new(m, sys, y0, 0, o, &e);
    assert_non_null(st);
    double hmin = INFINITY, hmax = 0;
    for (int k = 0; k < n; k++) {
        assert_int_equal(lf_stepper_step(st, h, 1), LF_OK);
        hmin = fmin(hmin, lf_stepper_last_h(st));
        hmax = fmax(hmax, lf_stepper_last_h(st));
    }
    assert_int_equal(lf_stepper_step(st, -h, n), LF_OK);
    const double d = fmax(maxdiff(12, lf_stepper_state(st), y0), fabs(lf_stepper_time(st)));
    *ratio = hmax / hmin;
    lf_stepper_free(st);
    return d;
}

static void test_reversible(void **state)
{
    (void)state;
    problem ps[2] = {problem_coulomb_wall(), problem_stress()};
    for (int q = 0; q < 2; q++) {
        lf_error e;
        double y0[12];
        lf_system *sys = problem_system(&ps[q], y0, &e);
        printf("  %s: 200 steps of h = 0.1, then 200 of -0.1 (largest difference, largest / smallest step)\n",
               ps[q].name);
        for (int i = 0; i < lf_method_count(); i++) {
            const lf_method *m = lf_method_at(i);
            const lf_method_info *mi = lf_method_get_info(m);
            if (!mi->symmetric || mi->adaptive || lf_method_accepts(m, sys, NULL) != LF_OK) continue;
            if (mi->form != LF_FORM_RIGID && strcmp(mi->name, "rkmk_gl4_sym") != 0) continue;
            const lf_compose_scheme *sc = lf_compose_scheme_of(m);
            if (sc && sc->np > 0) continue; /* processed: refused with adaptive steps (test_compose.c) */
            double ratio, fixed = there_and_back(m, sys, y0, NULL, 0.1, 200, &ratio);
            for (int own = 0; own < 2; own++) {
                lf_stepper_opts o = {.adapt = 1, .monitor = own ? my_monitor : NULL};
                double d = there_and_back(m, sys, y0, &o, 0.1, 200, &ratio);
                char label[120];
                snprintf(label, sizeof label, "%s, %s monitor (steps vary by %.3f; fixed h: %.1e)", mi->name,
                         own ? "own" : "torque", ratio, fixed);
                CHECK_LE(d, 1e-11, label);
                assert_true(ratio > 1.01);
            }
        }
        lf_system_free(sys);
        problem_free(&ps[q]);
    }
}

/* rho against Q(y)/Q(y0) after T = 5 (monitor my_monitor): the error is O(h^2) */
static double density_error(const lf_system *sys, const double *y0, double h)
{
    lf_error e;
    lf_stepper_opts o = {.adapt = 1, .monitor = my_monitor};
    lf_stepper *st = lf_stepper_new(lf_method_find("split_exact"), sys, y0, 0, &o, &e);
    assert_int_equal(lf_stepper_advance_to(st, 5, h), LF_OK);
    double Q0, Q;
    my_monitor(NULL, sys, 0, y0, &Q0, &e);
    my_monitor(NULL, sys, 5, lf_stepper_state(st), &Q, &e);
    const double d = fabs(lf_stepper_rho(st) - Q / Q0);
    lf_stepper_free(st);
    return d;
}

static void test_density_follows_monitor(void **state)
{
    (void)state;
    problem p = problem_stress();
    lf_error e;
    double y0[12];
    lf_system *sys = problem_system(&p, y0, &e);
    const double d1 = density_error(sys, y0, 0.02), d2 = density_error(sys, y0, 0.01);
    printf("  |rho - Q/Q0| at T = 5: %.3e (h = 0.02), %.3e (h = 0.01), ratio %.2f\n", d1, d2, d1 / d2);
    CHECK_LE(d1, 1e-4, "|rho - Q/Q0| at T = 5, h = 0.02");
    assert_true(d1 / d2 > 3 && d1 / d2 < 4.5); /* O(h^2) (the monitor's G, a difference, adds an O(1e-6) floor) */
    lf_system_free(sys);
    problem_free(&p);
}

/* the drift statistic of lf.drift: |slope| span / (std of the residuals) of a line fitted to the
 * energy error sampled every 10 time units... here every `every` steps */
static double drift_statistic(const double *t, const double *dE, size_t n)
{
    double slope, rs;
    assert_int_equal(lf_fit_linear(t, dE, n, &slope, NULL, NULL, &rs), LF_OK);
    return fabs(slope) * (t[n - 1] - t[0]) / rs;
}

/* Q of the torque monitor (adapt.c) at y, for the plain controller */
static double torque_Q(const lf_system *sys, const double *J, const double *y)
{
    double tau[3], a[3];
    lf_error e;
    lf_system_rigid(sys)->torque(sys, y, NULL, tau, NULL, &e);
    lf_v3_div(tau, J, a);
    return sqrt(lf_v3_dot(y + 9, y + 9) + lf_v3_norm(a));
}

static void test_energy_bounded(void **state)
{
    (void)state;
    problem p = problem_coulomb_wall();
    lf_error e;
    double y0[12], E0, E;
    lf_system *sys = problem_system(&p, y0, &e);
    lf_system_energy(sys, y0, &E0, &e);
    const double T = 2e4, h = 0.2;
    enum { MAXS = 40000 };
    double *t = malloc(MAXS * sizeof(double)), *dE = malloc(MAXS * sizeof(double));
    for (int plain = 0; plain < 2; plain++) {
        lf_stepper_opts o = {.adapt = !plain};
        lf_stepper *st = lf_stepper_new(lf_method_find("dlm"), sys, y0, 0, &o, &e);
        const double Q0 = torque_Q(sys, p.J, y0);
        size_t n = 0;
        long steps = 0;
        while (lf_stepper_time(st) < T && n < MAXS) {
            for (int k = 0; k < 10; k++, steps++)
                assert_int_equal(lf_stepper_step(st, plain ? h * Q0 / torque_Q(sys, p.J, lf_stepper_state(st)) : h, 1),
                                 LF_OK);
            lf_system_energy(sys, lf_stepper_state(st), &E, &e);
            t[n] = lf_stepper_time(st), dE[n++] = E - E0;
        }
        const double stat = drift_statistic(t, dE, n);
        printf("  dlm, h = %g, %s controller, %ld steps to T = %g: drift statistic %.3f\n", h,
               plain ? "plain (not reversible)" : "reversible", steps, T, stat);
        if (plain) assert_true(stat > 0.5);
        else CHECK_LE(stat, 0.5, "drift statistic, reversible adaptive dlm (threshold of lf.drift)");
        lf_stepper_free(st);
    }
    free(t);
    free(dE);
    lf_system_free(sys);
    problem_free(&p);
}

static void test_refusals(void **state)
{
    (void)state;
    problem p = problem_stress();
    lf_error e;
    double y0[24];
    lf_system *sys = problem_system(&p, y0, &e);
    memcpy(y0 + 12, y0, 12 * sizeof(double));
    lf_stepper_opts o = {.adapt = 1};
    const char *names[] = {"liemid_e", "rkmk_dp45"}, *what[] = {"is not symmetric", "chooses its own step sizes"};
    for (int i = 0; i < 2; i++) {
        assert_null(lf_stepper_new(lf_method_find(names[i]), sys, y0, 0, &o, &e));
        printf("  %s: %s\n", names[i], e.msg);
        assert_non_null(strstr(e.msg, names[i]));
        assert_non_null(strstr(e.msg, what[i]));
    }
    assert_null(lf_stepper_new_lanes(lf_method_find("vlv"), sys, 2, y0, 0, &o, &e));
    assert_non_null(strstr(e.msg, "lanes"));
    o.adapt = 2;
    assert_null(lf_stepper_new(lf_method_find("vlv"), sys, y0, 0, &o, &e));
    lf_system_free(sys);
    problem_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_reversible), cmocka_unit_test(test_density_follows_monitor),
                                       cmocka_unit_test(test_energy_bounded), cmocka_unit_test(test_refusals)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
