/* Test problems of the seeds, shared by the C tests and the benchmark. */
#ifndef LF_TEST_PROBLEMS_H
#define LF_TEST_PROBLEMS_H

#include <math.h>

#include "lieflow.h"

typedef struct {
    const char *name;
    double J[3], R0[9], w0[3];
    lf_potential pot;
} problem;

/* Seed 000 §3: J = diag(2,2,4), alpha = 0.3, v_m = (2.5,0,2.5)/sqrt2, R0 = exp(0,0.7227,0), w0 = (0,0,0.625). */
static inline problem problem_stress(void)
{
    problem p = {.name = "stress", .J = {2, 2, 4}, .w0 = {0, 0, 0.625}};
    double vm[3] = {2.5 / sqrt(2.0), 0, 2.5 / sqrt(2.0)}, v0[3] = {0, 0.7227, 0}, Rm[9];
    lf_so3_exp(vm, Rm);
    lf_so3_exp(v0, p.R0);
    lf_potential_stress(&p.pot, 0.3, Rm);
    return p;
}

/* Seed 003 §3.3 slow top: J = (5,5,1), spatial torque -20 R(:,3) x e3, R0 = exp(0.05,0,0), w0 = (0,0,5). */
static inline problem problem_slow_top(void)
{
    problem p = {.name = "slow top", .J = {5, 5, 1}, .w0 = {0, 0, 5}};
    double v0[3] = {0.05, 0, 0}, chi[3] = {0, 0, 1};
    lf_so3_exp(v0, p.R0);
    lf_potential_top(&p.pot, 20, chi);
    return p;
}

/* Seed 003 §2.2 free body (McLachlan–Zanna): J = (0.9144, 1.098, 1.66), w0 = (0.45549, 0.82623, 0.03476). */
static inline problem problem_free_body(void)
{
    problem p = {.name = "free body", .J = {0.9144, 1.098, 1.66}, .w0 = {0.45549, 0.82623, 0.03476}};
    lf_m3_identity(p.R0);
    lf_potential_free_body(&p.pot);
    return p;
}

/* Seed 003 §3.7 Coulomb potential with soft wall: J = (2,3,4.5), R0 = I, spatial momentum (2,2,2). */
static inline problem problem_coulomb_wall(void)
{
    problem p = {.name = "coulomb wall", .J = {2, 3, 4.5}, .w0 = {1, 2.0 / 3.0, 2.0 / 4.5}};
    lf_m3_identity(p.R0);
    lf_potential_coulomb_wall(&p.pot);
    return p;
}

#endif
