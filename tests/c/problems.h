/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Test problems of the seeds, shared by the C tests and the benchmark. A problem owns its potential:
 * problem_free() releases it. States of one body are y = (R (9), w (3)) (core/model/rigid.h). */
#ifndef LF_TEST_PROBLEMS_H
#define LF_TEST_PROBLEMS_H

#include <math.h>
#include <string.h>

#include "lieflow.h"

typedef struct {
    const char *name;
    double J[3], R0[9], w0[3];
    lf_potential *pot; /* NULL: free body */
} problem;

static inline void problem_free(problem *p)
{
    lf_potential_free(p->pot);
    p->pot = NULL;
}

/* y = (R, w) of one body */
static inline void pack_state(const double *R, const double *w, double *y)
{
    memcpy(y, R, 9 * sizeof(double));
    memcpy(y + 9, w, 3 * sizeof(double));
}

/* The rigid system of a problem and its initial state y0 (12 doubles). */
static inline lf_system *problem_system(const problem *p, double *y0, lf_error *e)
{
    lf_system *s = lf_rigid_new(1, p->J, p->pot, e);
    if (y0) pack_state(p->R0, p->w0, y0);
    return s;
}

/* Bou-Rabee, Ortolan & Saccon §3: J = diag(2,2,4), alpha = 0.3, v_m = (2.5,0,2.5)/sqrt2,
 * R0 = exp(0,0.7227,0), w0 = (0,0,0.625). */
static inline problem problem_stress(void)
{
    problem p = {.name = "stress", .J = {2, 2, 4}, .w0 = {0, 0, 0.625}};
    double vm[3] = {2.5 / sqrt(2.0), 0, 2.5 / sqrt(2.0)}, v0[3] = {0, 0.7227, 0}, Rm[9];
    lf_so3_exp(vm, Rm);
    lf_so3_exp(v0, p.R0);
    p.pot = lf_potential_stress(0.3, Rm, NULL);
    return p;
}

/* Krysl §3.3 slow top: J = (5,5,1), spatial torque -20 R(:,3) x e3, R0 = exp(0.05,0,0), w0 = (0,0,5). */
static inline problem problem_slow_top(void)
{
    problem p = {.name = "slow top", .J = {5, 5, 1}, .w0 = {0, 0, 5}};
    double v0[3] = {0.05, 0, 0}, chi[3] = {0, 0, 1};
    lf_so3_exp(v0, p.R0);
    p.pot = lf_potential_top(20, chi, NULL);
    return p;
}

/* Krysl §2.2 free body (McLachlan–Zanna): J = (0.9144, 1.098, 1.66), w0 = (0.45549, 0.82623, 0.03476). */
static inline problem problem_free_body(void)
{
    problem p = {.name = "free body", .J = {0.9144, 1.098, 1.66}, .w0 = {0.45549, 0.82623, 0.03476}};
    lf_m3_identity(p.R0);
    p.pot = NULL;
    return p;
}

/* Krysl §3.7 Coulomb potential with soft wall: J = (2,3,4.5), R0 = I, spatial momentum (2,2,2). */
static inline problem problem_coulomb_wall(void)
{
    problem p = {.name = "coulomb wall", .J = {2, 3, 4.5}, .w0 = {1, 2.0 / 3.0, 2.0 / 4.5}};
    lf_m3_identity(p.R0);
    p.pot = lf_potential_coulomb_wall(NULL);
    return p;
}

#endif
