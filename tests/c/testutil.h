/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Helpers shared by the C unit tests: print-then-assert checks, max-norm differences, seeded
 * random numbers (GSL mt19937). Header-only; each test program includes it once. */
#ifndef LF_TESTUTIL_H
#define LF_TESTUTIL_H

#include <math.h>
#include <stdio.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/linalg.h"

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

#endif
