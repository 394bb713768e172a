/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Helpers shared by the C unit tests: print-then-assert checks, max-norm differences, seeded
 * random numbers (GSL mt19937), random rotations, fitted orders, a wall clock, and steppers that
 * fail the test on error. Header-only (static inline); each test program includes it once, after
 * <cmocka.h>. */
#ifndef LF_TESTUTIL_H
#define LF_TESTUTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_fit.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "lieflow.h"

#define PI 3.14159265358979323846

/* print the measured value and assert it is within the bound (NaN fails) */
#define CHECK_LE(val, bound, label)                                                       \
    do {                                                                                  \
        double v_ = (val);                                                                \
        printf("  %-58s = %9.2e  (bound %.0e)\n", label, v_, (double)(bound));            \
        assert_true(v_ <= (bound));                                                       \
    } while (0)

/* max_i |a_i - b_i|; NaN if any difference is NaN */
static inline double maxdiff(int n, const double *a, const double *b)
{
    double m = 0;
    for (int i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]);
        if (isnan(d)) return d;
        if (d > m) m = d;
    }
    return m;
}

/* max_i |v_i| (fmax: NaN entries are skipped) */
static inline double maxabs(int n, const double *v)
{
    double m = 0;
    for (int i = 0; i < n; i++) m = fmax(m, fabs(v[i]));
    return m;
}

/* |x| without underflow or overflow: x scaled by its largest entry first (the tests' own reference,
 * independent of lf_v3_norm's scaled path) */
static inline double norm_scaled(const double x[3])
{
    double m = fmax(fabs(x[0]), fmax(fabs(x[1]), fabs(x[2])));
    if (m == 0) return 0;
    double y[3];
    lf_v3_scale(x, 1 / m, y);
    return m * lf_v3_norm(y);
}

static inline gsl_rng *new_rng(unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    return r;
}

/* uniformly distributed unit vector */
static inline void rand_dir(gsl_rng *r, double n[3])
{
    for (int i = 0; i < 3; i++) n[i] = gsl_ran_ugaussian(r);
    lf_v3_scale(n, 1 / lf_v3_norm(n), n);
}

/* a rotation by `angle` about a random axis */
static inline void rand_rot(gsl_rng *r, double angle, double R[9])
{
    double n[3];
    rand_dir(r, n);
    lf_v3_scale(n, angle, n);
    lf_so3_exp(n, R);
}

/* graph inputs (lf_graph_input) of the n values v: their nodes in ids */
static inline void graph_inputs(lf_graph *g, int n, const double *v, int *ids)
{
    for (int i = 0; i < n; i++) ids[i] = lf_graph_input(g, v[i], NULL);
}

/* The least-squares slope of log(err) against log(h) over n points (GSL): a fitted order. */
static inline double loglog_slope(const double *h, const double *err, int n)
{
    double x[16], y[16], c0, c1, c00, c01, c11, ss;
    if (n < 2 || n > 16) fail_msg("loglog_slope: %d points (2 .. 16)", n);
    for (int i = 0; i < n; i++) {
        x[i] = log(h[i]);
        y[i] = log(err[i]);
    }
    gsl_fit_linear(x, 1, y, 1, (size_t)n, &c0, &c1, &c00, &c01, &c11, &ss);
    return c1;
}

/* wall-clock seconds (CLOCK_MONOTONIC) */
static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline const lf_method_info *method_info(const lf_method *m) { return lf_method_get_info(m); }

/* A stepper for m on sys from y0 at t = 0 (options o, NULL for the defaults); fails the test with the
 * method's name and the reason if it cannot be made. */
static inline lf_stepper *new_stepper(const lf_method *m, const lf_system *sys, const double *y0,
                                      const lf_stepper_opts *o)
{
    lf_error e;
    lf_stepper *st = lf_stepper_new(m, sys, y0, 0, o, &e);
    if (!st) fail_msg("%s: %s", m ? method_info(m)->name : "(no method)", e.msg);
    return st;
}

/* n steps of h (INFINITY: an adaptive method's own); fails the test with the stepper's error */
static inline void run_steps(lf_stepper *st, double h, long n)
{
    if (lf_stepper_step(st, h, n) != LF_OK) fail_msg("%s", lf_stepper_error(st)->msg);
}

/* One step h then one step -h from y0 (default options): the largest difference from y0 (0 for a
 * symmetric method, to round-off). */
static inline double back_and_forth(const lf_method *m, const lf_system *sys, const double *y0, double h)
{
    lf_stepper *st = new_stepper(m, sys, y0, NULL);
    if (lf_stepper_step(st, h, 1) != LF_OK || lf_stepper_step(st, -h, 1) != LF_OK)
        fail_msg("%s", lf_stepper_error(st)->msg);
    double d = maxdiff(lf_system_nparam(sys), lf_stepper_state(st), y0);
    lf_stepper_free(st);
    return d;
}

/* A private code cache for a test's compiled models: test_cache_make(name) creates
 * /tmp/lieflow-test-<name>-XXXXXX (mkdtemp: a fresh directory of this user's), jit_opts() points the
 * compiler at it, test_cache_remove() deletes it with its contents. */
static inline char *test_cache_dir(void)
{
    static char dir[256];
    return dir;
}
static inline int test_cache_make(const char *name)
{
    snprintf(test_cache_dir(), 256, "/tmp/lieflow-test-%s-XXXXXX", name);
    return mkdtemp(test_cache_dir()) != NULL;
}
static inline lf_jit_opts jit_opts(void)
{
    lf_jit_opts o;
    memset(&o, 0, sizeof o);
    o.cache_dir = test_cache_dir();
    return o;
}
static inline void test_cache_remove(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", test_cache_dir());
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", test_cache_dir());
}

#endif
