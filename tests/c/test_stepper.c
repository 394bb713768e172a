/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The stepper core (core/method/stepper.c, stepper_helpers.c; method.h, method_internal.h), apart
 * from any one method. Measured and asserted:
 *  - a step advances t by h exactly, and many steps sum with Kahan's compensation: t is the exact
 *    sum t0 + n h rounded (within an ulp) and t - t_comp equals it as a double-double (measured 0,
 *    bound 1e-25 relative) over 1e6 steps, where plain summation is 1.3e-6 off;
 *  - a failing step (a vector field that becomes NaN or fails with its own message, a state that
 *    overflows, a Newton iteration on NaN, a torque that becomes NaN) leaves the state, the time,
 *    its compensation, the method's cache, the adaptive step and the step density bit for bit as
 *    they were, and its error names the method, the time and the cause;
 *  - the cancel flag stops a step loop at the next multiple of 256 steps (raised by the vector
 *    field, or by another thread during a step of LONG_MAX steps), and steps go on once cleared;
 *  - statistics count every step and vector-field evaluation and round-trip through set_stats;
 *  - restore (with the compensation, the adaptive step, and set_rho for reversible adaptive steps)
 *    resumes a run bit for bit; advance stops after max_steps steps and advance_to lands on T;
 *  - the getters return what was set; a single stepper is one lane, lanes are a structure of arrays;
 *  - bad arguments are refused with a status (h = 0, h = inf, n < 0, NULL, a time that overflows). */
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "method/method_internal.h"
#include "problems.h"
#include "testutil.h"

/* ---------------------------------------------------------------- a Lie ODE on R^1 */
/* y' = scale (cos t - y/10), and what goes wrong on purpose */
typedef struct {
    double t_bad;                 /* f is NaN from this time on (INFINITY: never) */
    int fail_code;                /* nonzero: f fails with this status and a message instead */
    double scale;                 /* 1e308: the state overflows */
    volatile sig_atomic_t *raise; /* set to 1 by the first call at t >= t_raise */
    double t_raise;
    long calls;
} line_ctx;

static int line_f(void *ctx, double t, const double *y, double *xi, lf_error *err)
{
    line_ctx *c = ctx;
    c->calls++;
    if (c->raise && t >= c->t_raise) *c->raise = 1;
    if (t >= c->t_bad) {
        if (c->fail_code) return lf_error_set(err, c->fail_code, "line: no field at t=%g", t);
        xi[0] = NAN;
        return LF_OK;
    }
    xi[0] = c->scale * (cos(t) - 0.1 * y[0]);
    return LF_OK;
}

static line_ctx line_ctx_default(void) { return (line_ctx){INFINITY, 0, 1, NULL, 0, 0}; }

/* the system (y0 = 0.5) on r1 */
static lf_system *line_system(line_ctx *c)
{
    lf_factor_kind k = LF_RM;
    int dim = 1;
    lf_error e;
    lf_manifold *M = lf_manifold_new(1, &k, &dim, LF_RIGHT_TRIVIALIZED, &e);
    if (!M) fail_msg("%s", e.msg);
    lf_lie_ode_def def = {.name = "line", .f = line_f, .ctx = c};
    const double y0 = 0.5;
    lf_system *s = lf_lie_ode_new(M, &y0, &def, &e);
    lf_manifold_free(M);
    if (!s) fail_msg("%s", e.msg);
    return s;
}

/* the exact t0 + n h as hi + lo (TwoProduct by fma, TwoSum) */
static void exact_sum(double t0, long n, double h, double *hi, double *lo)
{
    const double p = (double)n * h, e = fma((double)n, h, -p);
    const double s = t0 + p, bb = s - t0, e2 = (t0 - (s - bb)) + (p - bb);
    *hi = s + (e + e2);
    *lo = (e + e2) - (*hi - s);
}

/* ---------------------------------------------------------------- time */
static void test_time_is_compensated(void **state)
{
    (void)state;
    line_ctx c = line_ctx_default();
    lf_system *sys = line_system(&c);
    const double y0 = 0.5;
    lf_stepper *st = new_stepper(lf_method_find("lie_euler"), sys, &y0, NULL);
    /* one step: t0 + h exactly, the state of Lie-Euler on R^1 (y + h f(t0, y)) */
    assert_int_equal(lf_stepper_set_state(st, &y0, 0.75), LF_OK);
    assert_int_equal(lf_stepper_step(st, 0.25, 1), LF_OK);
    assert_true(lf_stepper_time(st) == 1.0 && lf_stepper_last_h(st) == 0.25);
    assert_true(lf_stepper_time_compensation(st) == 0);
    assert_true(lf_stepper_state(st)[0] == y0 + 0.25 * (cos(0.75) - 0.1 * y0));
    /* n steps of h from t0: t - t_comp is the exact sum t0 + n h (TwoProduct + TwoSum) */
    const struct {
        double t0, h;
        long n;
    } runs[] = {{0, 0.1, 1000000}, {1.0 / 3, 1e-3 / 7, 1000000}, {1e4, -1e-3 / 3, 300000}};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        const double t0 = runs[r].t0, h = runs[r].h;
        const long n = runs[r].n;
        assert_int_equal(lf_stepper_set_state(st, &y0, t0), LF_OK);
        assert_true(lf_stepper_time_compensation(st) == 0); /* set_state starts a new sum */
        assert_int_equal(lf_stepper_step(st, h, n), LF_OK);
        double hi, lo, plain = t0;
        exact_sum(t0, n, h, &hi, &lo);
        for (long k = 0; k < n; k++) plain += h;
        const double t = lf_stepper_time(st), tc = lf_stepper_time_compensation(st);
        const double kahan = fabs((t - hi) - tc - lo), rounded = fabs((t - hi) - lo);
        printf("  %ld steps of h = %.17g from %g: |t - t_comp - (t0 + n h)| = %.1e, |t - (t0 + n h)| = %.1e "
               "(ulp %.1e; plain sum %.1e off)\n",
               n, h, t0, kahan, rounded, nextafter(fabs(hi), INFINITY) - fabs(hi), fabs((plain - hi) - lo));
        CHECK_LE(kahan / fabs(hi), 1e-25, "|t - t_comp - (t0 + n h)| / |t0 + n h|");
        CHECK_LE(rounded, nextafter(fabs(hi), INFINITY) - fabs(hi), "|t - (t0 + n h)| (bound: one ulp)");
        assert_true(fabs((plain - hi) - lo) > 1e3 * rounded); /* what the compensation is for */
    }
    lf_stepper_free(st);
    lf_system_free(sys);
}

/* ---------------------------------------------------------------- rollback */
/* everything a failing step must leave as it was (method_internal.h) */
typedef struct {
    double y[32], cache[64], t, t_comp, h_next, rho, q0, g, h_proc;
    int cache_valid, g_valid;
    long steps;
} snapshot;

static snapshot snap(const lf_stepper *s)
{
    snapshot x;
    memset(&x, 0, sizeof x); /* the padding too: snapshots are compared with memcmp */
    assert_true((size_t)s->np * s->lanes <= 32 && s->ncache <= 64);
    memcpy(x.y, s->y, (size_t)s->np * s->lanes * sizeof(double));
    memcpy(x.cache, s->cache, s->ncache * sizeof(double));
    x.t = s->t, x.t_comp = s->t_comp, x.h_next = s->h_next, x.rho = s->rho, x.q0 = s->q0, x.g = s->g;
    x.h_proc = s->h_proc;
    x.cache_valid = s->cache_valid, x.g_valid = s->g_valid;
    x.steps = s->stats.steps;
    return x;
}

/* Steps of h one at a time until one fails (within 2000): that step leaves the snapshot as it was.
 * Returns its status; *before receives the snapshot. */
static int fail_and_compare(lf_stepper *st, double h, snapshot *before)
{
    for (int k = 0; k < 2000; k++) {
        *before = snap(st);
        int rc = lf_stepper_step(st, h, 1);
        if (rc == LF_OK) continue;
        snapshot after = snap(st);
        printf("  %s (step %d): %s\n", method_info(lf_stepper_method(st))->name, k + 1, lf_stepper_error(st)->msg);
        assert_int_equal(lf_stepper_error(st)->code, rc);
        assert_memory_equal(before, &after, sizeof after);
        assert_memory_equal(lf_stepper_state(st), before->y, (size_t)st->np * sizeof(double));
        return rc;
    }
    fail_msg("no step failed");
    return LF_OK;
}

static void expect_words(const lf_stepper *st, const char *const *words)
{
    for (; *words; words++)
        if (!strstr(lf_stepper_error(st)->msg, *words))
            fail_msg("\"%s\" not in \"%s\"", *words, lf_stepper_error(st)->msg);
}

static void test_failing_step_on_a_lie_ode(void **state)
{
    (void)state;
    const struct {
        const char *method;
        double t_bad, scale, h;
        int fail_code, expect;
        const char *words[5];
    } cases[] = {
        /* NaN from t = 0.52: rkmk4's midpoint stage at 0.55 of the step from 0.5 */
        {"rkmk4", 0.52, 1, 0.1, 0, LF_EDOMAIN, {"rkmk4", "t=0.5 ", "not finite", NULL}},
        {"rkmk4", 0.52, 1, 0.1, LF_ECALLBACK, LF_ECALLBACK, {"rkmk4", "line: no field at t=0.55", NULL}},
        {"rkmk_gl4", 0.52, 1, 0.1, 0, LF_EDOMAIN, {"rkmk_gl4", "t=0.5 ", NULL}},
        {"rkmk_dp45", 0.52, 1, 0.1, 0, LF_EDOMAIN, {"rkmk_dp45", "not finite", NULL}},
        {"lie_euler", INFINITY, 1e308, 10, 0, LF_EDOMAIN, {"lie_euler", "t=0 ", "the state (y", "non-finite", NULL}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        line_ctx c = line_ctx_default();
        c.t_bad = cases[i].t_bad, c.scale = cases[i].scale, c.fail_code = cases[i].fail_code;
        lf_system *sys = line_system(&c);
        lf_stepper *st = new_stepper(lf_method_find(cases[i].method), sys, lf_system_initial(sys), NULL);
        snapshot before;
        assert_int_equal(fail_and_compare(st, cases[i].h, &before), cases[i].expect);
        expect_words(st, cases[i].words);
        if (strcmp(cases[i].method, "rkmk_dp45") == 0) assert_true(before.h_next > 0 && before.cache_valid);
        /* a failing call of many steps stops at the failing one */
        assert_int_equal(lf_stepper_step(st, cases[i].h, 10), cases[i].expect);
        assert_true(lf_stepper_time(st) == before.t);
        lf_stepper_free(st);
        lf_system_free(sys);
    }
}

/* tau NaN once R33 < 0.9999 (the body turns away from I); before, 0.01 times the first row of R (a nonzero cache) */
static int bad_torque_eval(void *ctx, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    (void)ctx, (void)err;
    if (U) *U = 0;
    if (tau)
        for (int i = 0; i < 3 * nb; i++) tau[i] = R[8] < 0.9999 ? NAN : 0.01 * R[i];
    return LF_OK;
}

/* a rigid method's torque cache (valid before the failing step), and the step density of reversible
 * adaptive steps, are rolled back too */
static void test_failing_step_keeps_the_cache(void **state)
{
    (void)state;
    problem p = problem_free_body();
    p.pot = lf_potential_new("bad", bad_torque_eval, NULL, NULL, NULL);
    const double w[3] = {1, 0.5, 0};
    memcpy(p.w0, w, sizeof w);
    double y0[12];
    lf_error e;
    lf_system *sys = problem_system(&p, y0, &e);
    const char *methods[] = {"vlv", "eln", "lgvi", "dlm"};
    for (int i = 0; i < 4; i++)
        for (int adapt = 0; adapt < 2; adapt++) {
            if (adapt && i >= 2) continue;
            lf_stepper_opts o = {.adapt = adapt};
            lf_stepper *st = new_stepper(lf_method_find(methods[i]), sys, y0, &o);
            snapshot before;
            fail_and_compare(st, 0.01, &before);
            const char *words[] = {methods[i], "t=", NULL};
            expect_words(st, words);
            if (!adapt && i < 2) assert_true(before.cache_valid); /* the torque at the state was cached */
            if (adapt) assert_true(before.rho != 1 && before.g_valid);
            lf_stepper_free(st);
        }
    lf_system_free(sys);
    problem_free(&p);
}

/* ---------------------------------------------------------------- cancel */
static void *raise_later(void *flag)
{
    usleep(20000);
    *(volatile sig_atomic_t *)flag = 1;
    return NULL;
}

static void test_cancel(void **state)
{
    (void)state;
    static volatile sig_atomic_t flag;
    line_ctx c = line_ctx_default();
    lf_system *sys = line_system(&c);
    const lf_method *m = lf_method_find("lie_euler");
    lf_stepper *st = new_stepper(m, sys, lf_system_initial(sys), NULL),
               *ref = new_stepper(m, sys, lf_system_initial(sys), NULL);
    lf_stepper_set_cancel(st, &flag);
    /* raised before: no step */
    flag = 1;
    assert_int_equal(lf_stepper_step(st, 0.1, 1000), LF_EINTR);
    assert_int_equal(lf_stepper_error(st)->code, LF_EINTR);
    printf("  %s\n", lf_stepper_error(st)->msg);
    assert_non_null(strstr(lf_stepper_error(st)->msg, "interrupted at t=0"));
    assert_int_equal(lf_stepper_advance_to(st, 5, 0.1), LF_EINTR);
    assert_true(lf_stepper_time(st) == 0);
    /* raised by the vector field in step 1001 (t = 100): the loop stops at step 1024 (checked every 256) */
    flag = 0;
    c.raise = &flag, c.t_raise = 99.95;
    assert_int_equal(lf_stepper_step(st, 0.1, 100000), LF_EINTR);
    lf_stepper_stats s;
    lf_stepper_get_stats(st, &s);
    assert_int_equal(lf_stepper_step(ref, 0.1, 1024), LF_OK);
    printf("  raised in step 1001: stopped after %ld steps at t = %.17g\n", s.steps, lf_stepper_time(st));
    assert_int_equal(s.steps, 1024);
    assert_true(lf_stepper_time(st) == lf_stepper_time(ref));
    assert_memory_equal(lf_stepper_state(st), lf_stepper_state(ref), sizeof(double));
    /* cleared (or detached): steps go on */
    c.raise = NULL, flag = 0;
    assert_int_equal(lf_stepper_step(st, 0.1, 300), LF_OK);
    flag = 1;
    lf_stepper_set_cancel(st, NULL);
    assert_int_equal(lf_stepper_step(st, 0.1, 300), LF_OK);
    /* another thread raises it 20 ms into a step call of LONG_MAX steps */
    flag = 0;
    lf_stepper_set_cancel(st, &flag);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, raise_later, (void *)&flag), 0);
    const long steps0 = s.steps + 600;
    const double t0 = now();
    int rc = lf_stepper_step(st, 1e-9, LONG_MAX);
    const double dt = now() - t0;
    pthread_join(th, NULL);
    lf_stepper_get_stats(st, &s);
    printf("  a call of LONG_MAX steps cancelled by a thread after %.3f s, %ld steps\n", dt, s.steps - steps0);
    assert_int_equal(rc, LF_EINTR);
    assert_true(s.steps >= steps0 && (s.steps - steps0) % 256 == 0); /* 0 if the thread ran first */
    lf_stepper_free(st);
    lf_stepper_free(ref);
    lf_system_free(sys);
}

/* ---------------------------------------------------------------- statistics */
static void test_stats(void **state)
{
    (void)state;
    line_ctx c = line_ctx_default();
    lf_system *sys = line_system(&c);
    lf_stepper *st = new_stepper(lf_method_find("rkmk_gl4"), sys, lf_system_initial(sys), NULL);
    assert_int_equal(lf_stepper_step(st, 0.1, 10), LF_OK);
    lf_stepper_stats s;
    lf_stepper_get_stats(st, &s);
    printf("  rkmk_gl4, 10 steps: %ld f evaluations (the field counted %ld), %ld Newton iterations, %ld Jacobians\n",
           s.f_evals, c.calls, s.newton_iters, s.jac_evals);
    assert_int_equal(s.steps, 10);
    assert_int_equal(s.f_evals, c.calls);
    assert_true(s.newton_iters >= 10 && s.rejected == 0);
    /* set, read back, count on from the set values */
    const lf_stepper_stats set = {1000, 7, 123456, 42, 3, 1e-9, 2e-9};
    assert_int_equal(lf_stepper_set_stats(st, &set), LF_OK);
    lf_stepper_get_stats(st, &s);
    assert_memory_equal(&s, &set, sizeof s);
    const long calls0 = c.calls;
    assert_int_equal(lf_stepper_step(st, 0.1, 5), LF_OK);
    lf_stepper_get_stats(st, &s);
    assert_int_equal(s.steps, 1005);
    assert_int_equal(s.f_evals, 123456 + (c.calls - calls0));
    assert_true(s.newton_iters > 42 && s.jac_evals >= 3 && s.rejected == 7);
    /* refused: negative counts, NULL; the statistics stay */
    lf_stepper_stats bad = set;
    bad.f_evals = -1;
    lf_stepper_stats kept = s;
    assert_int_equal(lf_stepper_set_stats(st, &bad), LF_EINVAL);
    assert_non_null(strstr(lf_stepper_error(st)->msg, "set_stats"));
    assert_int_equal(lf_stepper_set_stats(st, NULL), LF_EINVAL);
    assert_int_equal(lf_stepper_set_stats(NULL, &set), LF_EINVAL);
    lf_stepper_get_stats(st, &s);
    assert_memory_equal(&s, &kept, sizeof s);
    lf_stepper_free(st);
    lf_system_free(sys);
}

/* ---------------------------------------------------------------- restore */
/* A run of 2n steps against n steps, a restore into a new stepper and n more: the same bits. */
static void resume(const char *method, const lf_system *sys, const double *y0, const lf_stepper_opts *o, double h,
                   long n)
{
    lf_stepper *a = new_stepper(lf_method_find(method), sys, y0, o),
               *b = new_stepper(lf_method_find(method), sys, y0, o);
    const int np = lf_system_nparam(sys);
    run_steps(a, h, n);
    double y[32], t = lf_stepper_time(a), tc = lf_stepper_time_compensation(a), hn = lf_stepper_next_h(a);
    const double rho = lf_stepper_rho(a), q0 = lf_stepper_monitor0(a);
    memcpy(y, lf_stepper_state(a), (size_t)np * sizeof(double));
    run_steps(a, h, n);
    run_steps(b, 0.7 * h, 3); /* somewhere else */
    assert_int_equal(lf_stepper_restore(b, y, t, tc, hn), LF_OK);
    if (o && o->adapt) assert_int_equal(lf_stepper_set_rho(b, rho, q0), LF_OK);
    run_steps(b, h, n);
    printf("  %-10s%s: %ld steps, restored, %ld more: state %s, t %s (t_comp %.1e, next h %g)\n", method,
           o && o->adapt ? " (adapt)" : "", n, n,
           memcmp(lf_stepper_state(a), lf_stepper_state(b), np * sizeof(double)) ? "differs" : "equal",
           lf_stepper_time(a) == lf_stepper_time(b) ? "equal" : "differs", tc, hn);
    assert_memory_equal(lf_stepper_state(a), lf_stepper_state(b), (size_t)np * sizeof(double));
    assert_true(lf_stepper_time(a) == lf_stepper_time(b));
    assert_true(lf_stepper_time_compensation(a) == lf_stepper_time_compensation(b));
    assert_true(lf_stepper_next_h(a) == lf_stepper_next_h(b) && lf_stepper_rho(a) == lf_stepper_rho(b));
    assert_true(tc != 0); /* the compensation was carried, not zero by chance */
    lf_stepper_free(a);
    lf_stepper_free(b);
}

static void test_restore(void **state)
{
    (void)state;
    problem p = problem_stress();
    double y0[12];
    lf_error e;
    lf_system *sys = problem_system(&p, y0, &e);
    resume("vlv", sys, y0, NULL, 0.1, 1000);
    resume("rkmk_dp45", sys, y0, NULL, INFINITY, 300);
    lf_stepper_opts adapt = {.adapt = 1};
    resume("vlv", sys, y0, &adapt, 0.1, 300);
    /* refused: a non-finite compensation, a negative or infinite next step, a state off SO(3); nothing changes */
    lf_stepper *st = new_stepper(lf_method_find("vlv"), sys, y0, NULL);
    run_steps(st, 0.1, 7);
    const snapshot before = snap(st);
    double bad[12];
    memcpy(bad, y0, sizeof bad);
    bad[0] += 1e-3;
    assert_int_equal(lf_stepper_restore(st, y0, 1, NAN, 0), LF_EINVAL);
    assert_non_null(strstr(lf_stepper_error(st)->msg, "restore"));
    assert_int_equal(lf_stepper_restore(st, y0, 1, 0, -1), LF_EINVAL);
    assert_int_equal(lf_stepper_restore(st, y0, 1, 0, INFINITY), LF_EINVAL);
    assert_int_equal(lf_stepper_restore(st, bad, 1, 0, 0), LF_EINVAL);
    assert_int_equal(lf_stepper_restore(st, y0, NAN, 0, 0), LF_EINVAL);
    assert_int_equal(lf_stepper_restore(NULL, y0, 1, 0, 0), LF_EINVAL);
    snapshot after = snap(st);
    assert_memory_equal(&before, &after, sizeof after);
    lf_stepper_free(st);
    lf_system_free(sys);
    problem_free(&p);
}

/* ---------------------------------------------------------------- advance */
static long steps_of(const lf_stepper *st)
{
    lf_stepper_stats s;
    lf_stepper_get_stats(st, &s);
    return s.steps;
}

static void test_advance(void **state)
{
    (void)state;
    problem p = problem_stress();
    double y0[12];
    lf_error e;
    lf_system *sys = problem_system(&p, y0, &e);
    /* fixed steps: at most max_steps steps, the same bits as stepping them */
    lf_stepper *st = new_stepper(lf_method_find("vlv"), sys, y0, NULL),
               *ref = new_stepper(lf_method_find("vlv"), sys, y0, NULL);
    assert_int_equal(lf_stepper_advance(st, 1, 0.01, 10), LF_OK);
    run_steps(ref, 0.01, 10);
    assert_int_equal(steps_of(st), 10);
    assert_true(lf_stepper_time(st) == lf_stepper_time(ref) && lf_stepper_time(st) < 1);
    assert_memory_equal(lf_stepper_state(st), lf_stepper_state(ref), sizeof y0);
    assert_int_equal(lf_stepper_advance(st, 1, 0.01, 0), LF_OK); /* none */
    assert_int_equal(steps_of(st), 10);
    /* to T: exactly T, no compensation left; then a last short step onto T = 1.005 */
    assert_int_equal(lf_stepper_advance(st, 1, 0.01, LONG_MAX), LF_OK);
    printf("  vlv advance to 1 by 0.01: %ld steps, t = %.17g, t_comp = %g\n", steps_of(st), lf_stepper_time(st),
           lf_stepper_time_compensation(st));
    assert_int_equal(steps_of(st), 100);
    assert_true(lf_stepper_time(st) == 1 && lf_stepper_time_compensation(st) == 0);
    assert_int_equal(lf_stepper_advance_to(st, 1.005, 0.01), LF_OK);
    assert_int_equal(steps_of(st), 101);
    assert_true(lf_stepper_time(st) == 1.005 && lf_stepper_last_h(st) == 1.005 - 1.0);
    /* refused */
    assert_int_equal(lf_stepper_advance(st, 2, 0.01, -1), LF_EINVAL);
    assert_int_equal(lf_stepper_advance_to(st, 0.5, 0.01), LF_EINVAL); /* behind */
    assert_non_null(strstr(lf_stepper_error(st)->msg, "behind"));
    assert_int_equal(lf_stepper_advance_to(st, 2, 0), LF_EINVAL);
    assert_int_equal(lf_stepper_advance_to(st, NAN, 0.01), LF_EINVAL);
    assert_int_equal(lf_stepper_advance(NULL, 2, 0.01, 1), LF_EINVAL);
    assert_true(lf_stepper_time(st) == 1.005);
    lf_stepper_free(st);
    lf_stepper_free(ref);
    /* an adaptive method: max_steps of its own steps per call, the last one clipped at T */
    st = new_stepper(lf_method_find("rkmk_dp45"), sys, y0, NULL);
    int calls = 0, exact = 1;
    while (lf_stepper_time(st) < 2) {
        const long s0 = steps_of(st);
        assert_int_equal(lf_stepper_advance(st, 2, 0.1, 3), LF_OK);
        exact &= steps_of(st) - s0 == 3 || lf_stepper_time(st) == 2;
        calls++;
        assert_true(calls < 1000);
    }
    printf("  rkmk_dp45 advance(2, 0.1, 3): %d calls, %ld steps, t = %.17g\n", calls, steps_of(st),
           lf_stepper_time(st));
    assert_true(exact && lf_stepper_time(st) == 2);
    lf_stepper_free(st);
    /* reversible adaptive steps: a last step of a shorter fictitious time lands on T */
    lf_stepper_opts o = {.adapt = 1};
    st = new_stepper(lf_method_find("vlv"), sys, y0, &o);
    assert_int_equal(lf_stepper_advance(st, 3, 0.1, 5), LF_OK);
    assert_int_equal(steps_of(st), 5);
    assert_int_equal(lf_stepper_advance_to(st, 3, 0.1), LF_OK);
    printf("  vlv (adapt) advance to 3: %ld steps, t = %.17g\n", steps_of(st), lf_stepper_time(st));
    assert_true(lf_stepper_time(st) == 3);
    lf_stepper_free(st);
    lf_system_free(sys);
    problem_free(&p);
}

/* ---------------------------------------------------------------- getters */
/* Q of the default torque monitor (adapt.c) at y: sqrt(|w|^2 + |J^-1 tau|) */
static double torque_monitor(const lf_system *sys, const double *y)
{
    double tau[3], a[3];
    lf_error e;
    assert_int_equal(lf_rigid_potential_eval(sys, y, NULL, tau, &e), LF_OK);
    lf_v3_div(tau, lf_rigid_inertia(sys), a);
    return sqrt(lf_v3_dot(y + 9, y + 9) + lf_v3_norm(a));
}

static void test_getters(void **state)
{
    (void)state;
    problem p = problem_stress();
    double y0[12];
    lf_error e;
    lf_system *sys = problem_system(&p, y0, &e);
    const lf_method *dp = lf_method_find("rkmk_dp45"), *vlv = lf_method_find("vlv");
    lf_stepper_opts o = {.h0 = 0.05};
    lf_stepper *st = new_stepper(dp, sys, y0, &o);
    assert_ptr_equal(lf_stepper_method(st), dp);
    assert_ptr_equal(lf_stepper_system(st), sys);
    assert_int_equal(lf_stepper_adaptive(st), 0); /* chooses its steps, but not reversible adaptive steps */
    /* next_h: h0 first; then the step each next step tries (and takes, unless rejected) */
    assert_true(lf_stepper_next_h(st) == 0.05);
    int taken = 0, tried = 0;
    for (int k = 0; k < 200; k++) {
        const double hn = lf_stepper_next_h(st);
        lf_stepper_stats s0, s1;
        lf_stepper_get_stats(st, &s0);
        run_steps(st, INFINITY, 1);
        lf_stepper_get_stats(st, &s1);
        if (s1.rejected > s0.rejected) continue;
        tried++;
        taken += lf_stepper_last_h(st) == hn;
    }
    printf("  rkmk_dp45: %d of %d steps without a rejection took the announced next_h\n", taken, tried);
    assert_true(tried > 100 && taken == tried);
    assert_true(lf_stepper_next_h(st) > 0 && isfinite(lf_stepper_next_h(st)));
    lf_stepper_free(st);
    /* reversible adaptive steps: monitor0 is Q(y0) once the first step ran; rho, q0 as set */
    lf_stepper_opts ad = {.adapt = 1};
    st = new_stepper(vlv, sys, y0, &ad);
    lf_stepper *st2 = new_stepper(vlv, sys, y0, &ad);
    assert_int_equal(lf_stepper_adaptive(st), 1);
    assert_true(lf_stepper_monitor0(st) == 0 && lf_stepper_rho(st) == 1);
    run_steps(st, 0.1, 1);
    const double Q0 = torque_monitor(sys, y0);
    printf("  vlv (adapt): monitor0 = %.17g, Q(y0) = %.17g, rho after a step %.17g\n", lf_stepper_monitor0(st), Q0,
           lf_stepper_rho(st));
    assert_true(fabs(lf_stepper_monitor0(st) - Q0) <= 2e-16 * Q0 && lf_stepper_rho(st) != 1);
    /* rho = 2: the same step in half the time (rho* = rho e^{h G/2}, same G) */
    assert_int_equal(lf_stepper_set_rho(st2, 2, 0), LF_OK);
    assert_true(lf_stepper_rho(st2) == 2 && lf_stepper_monitor0(st2) == 0);
    run_steps(st2, 0.1, 1);
    printf("  time steps at rho = 1 and 2: %.17g, %.17g\n", lf_stepper_last_h(st), lf_stepper_last_h(st2));
    assert_true(fabs(lf_stepper_last_h(st) / lf_stepper_last_h(st2) - 2) <= 4e-16);
    assert_int_equal(lf_stepper_set_rho(st2, 2.5, 7), LF_OK);
    assert_true(lf_stepper_rho(st2) == 2.5 && lf_stepper_monitor0(st2) == 7);
    const double bad[][2] = {{0, 1}, {-1, 1}, {NAN, 1}, {INFINITY, 1}, {1, -1}, {1, NAN}, {1, INFINITY}};
    for (int i = 0; i < 7; i++) assert_int_equal(lf_stepper_set_rho(st2, bad[i][0], bad[i][1]), LF_EINVAL);
    assert_non_null(strstr(lf_stepper_error(st2)->msg, "set_rho"));
    assert_true(lf_stepper_rho(st2) == 2.5 && lf_stepper_monitor0(st2) == 7);
    lf_stepper_free(st);
    lf_stepper_free(st2);
    /* NULL */
    assert_null(lf_stepper_method(NULL));
    assert_null(lf_stepper_system(NULL));
    assert_null(lf_stepper_error(NULL));
    assert_int_equal(lf_stepper_adaptive(NULL), 0);
    assert_true(isnan(lf_stepper_next_h(NULL)) && isnan(lf_stepper_monitor0(NULL)) && isnan(lf_stepper_rho(NULL)));
    assert_int_equal(lf_stepper_set_rho(NULL, 1, 0), LF_EINVAL);
    lf_system_free(sys);
    problem_free(&p);
}

/* ---------------------------------------------------------------- lanes */
static void test_lanes(void **state)
{
    (void)state;
    problem p = problem_stress();
    double y[3][12], out[12];
    lf_error e;
    lf_system *sys = problem_system(&p, y[0], &e);
    /* a stepper of its own is one lane: lane 0 is the state */
    lf_stepper *st = new_stepper(lf_method_find("vlv"), sys, y[0], NULL);
    assert_int_equal(lf_stepper_lanes(st), 1);
    run_steps(st, 0.1, 3);
    assert_int_equal(lf_stepper_get_lane(st, 0, out), LF_OK);
    assert_memory_equal(out, lf_stepper_state(st), sizeof out);
    assert_int_equal(lf_stepper_get_lane(st, 1, out), LF_EINVAL);
    assert_int_equal(lf_stepper_set_lane(st, 0, y[0]), LF_OK);
    assert_memory_equal(lf_stepper_state(st), y[0], sizeof out);
    /* three lanes: lf_stepper_state is the structure of arrays, entry k of lane j at [3 k + j] */
    for (int j = 1; j < 3; j++) {
        double x[3] = {0.2 * j, -0.1, 0.3}, R[9];
        lf_so3_exp(x, R);
        pack_state(R, p.w0, y[j]);
    }
    lf_stepper *L = lf_stepper_new_lanes(lf_method_find("vlv"), sys, 3, &y[0][0], 0, NULL, &e);
    assert_non_null(L);
    assert_int_equal(lf_stepper_lanes(L), 3);
    run_steps(L, 0.1, 5);
    int soa = 1;
    for (int j = 0; j < 3; j++) {
        assert_int_equal(lf_stepper_get_lane(L, j, out), LF_OK);
        for (int k = 0; k < 12; k++) soa &= out[k] == lf_stepper_state(L)[3 * k + j];
    }
    assert_true(soa);
    assert_int_equal(lf_stepper_lanes(NULL), 0);
    lf_stepper_free(L);
    lf_stepper_free(st);
    lf_system_free(sys);
    problem_free(&p);
}

/* ---------------------------------------------------------------- bad arguments */
static void test_bad_arguments(void **state)
{
    (void)state;
    problem p = problem_stress();
    double y[12];
    lf_error e;
    lf_system *sys = problem_system(&p, y, &e);
    lf_stepper *st = new_stepper(lf_method_find("vlv"), sys, y, NULL);
    assert_int_equal(lf_stepper_step(st, 0, 1), LF_EINVAL);
    assert_int_equal(lf_stepper_step(st, INFINITY, 1), LF_EINVAL); /* a fixed-step method */
    assert_int_equal(lf_stepper_step(st, NAN, 1), LF_EINVAL);
    assert_int_equal(lf_stepper_step(st, 0.1, -5), LF_EINVAL);
    assert_int_equal(lf_stepper_step(st, 0.1, 0), LF_OK);
    assert_true(lf_stepper_time(st) == 0);
    assert_int_equal(lf_stepper_step(NULL, 0.1, 1), LF_EINVAL);
    assert_int_equal(lf_stepper_set_state(NULL, y, 0), LF_EINVAL);
    assert_int_equal(lf_stepper_set_state(st, NULL, 0), LF_EINVAL);
    assert_int_equal(lf_stepper_set_state(st, y, INFINITY), LF_EINVAL);
    lf_stepper_free(st);
    /* the time overflows: an error, and the state is kept (a body at rest, no potential) */
    lf_system *rest = lf_rigid_new(1, p.J, NULL, &e);
    double y0[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    st = lf_stepper_new(lf_method_find("lie_euler"), rest, y0, 1e308, NULL, &e); /* explicit: no h^2 */
    assert_int_equal(lf_stepper_step(st, 1e308, 1), LF_EDOMAIN);
    printf("  %s\n", lf_stepper_error(st)->msg);
    assert_non_null(strstr(lf_stepper_error(st)->msg, "overflows"));
    assert_true(lf_stepper_time(st) == 1e308);
    assert_memory_equal(lf_stepper_state(st), y0, sizeof y0);
    lf_stepper_free(st);
    lf_system_free(rest);
    lf_system_free(sys);
    problem_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_is_compensated),
        cmocka_unit_test(test_failing_step_on_a_lie_ode),
        cmocka_unit_test(test_failing_step_keeps_the_cache),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_restore),
        cmocka_unit_test(test_advance),
        cmocka_unit_test(test_getters),
        cmocka_unit_test(test_lanes),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
