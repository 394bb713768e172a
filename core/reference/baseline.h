/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — what users run otherwise: non-geometric solvers of rigid-body systems, for comparison
 * (examples/work_precision.lua). They integrate the equations of rigid.h in coordinates of an
 * embedding, as a user of a general ODE library would:
 *   LF_BASELINE_RK8PD     GSL's adaptive Prince–Dormand 8(9) (gsl_odeiv2_step_rk8pd with
 *                         gsl_odeiv2_control_y_new(tol, tol)) on y = (R as 9 numbers, w):
 *                         R' = R hat(w), w' = J^-1 (J w x w + tau(R))
 *   LF_BASELINE_RK4       the classical fixed-step Runge–Kutta 4 (a plain C loop) on the same y
 *   LF_BASELINE_QUAT_RK4  classical RK4 on (q, w): q' = q (0, w)/2 (Hamilton product), w' as above with
 *                         R = R(q) (lf_quat_to_matrix)
 * renormalize = 1 projects after every step: R <- R (3 I - R^T R)/2 (one Newton step towards the
 * polar factor: the orthogonality error e becomes O(e^2)) for the embedded solvers, q <- q/|q| for
 * the quaternion one. Without it the embedded R drifts off SO(3) by the solver's error. Bodies that
 * translate add x' = v, v' = F(x, R)/m to each system of equations. */
#ifndef LF_BASELINE_H
#define LF_BASELINE_H

#include "base/export.h"
#include "model/system.h"

LF_BEGIN_DECLS

typedef enum { LF_BASELINE_RK8PD, LF_BASELINE_RK4, LF_BASELINE_QUAT_RK4 } lf_baseline_kind;

typedef struct lf_baseline_opts {
    int kind;          /* lf_baseline_kind */
    int renormalize;   /* 1: project R (or normalize q) after every step */
    double h;          /* RK4: the step; T/h is rounded to the nearest integer number of steps
                          (|T/h - n| <= 1e-9 n required). RK8PD: the first trial step (0: 1e-2) */
    double tol;        /* RK8PD: rtol = atol = tol */
    int energy_every;  /* > 0: max |E - E(0)| over every energy_every-th step (and the last) */
    unsigned long max_steps; /* RK8PD bound on the steps (0: 1e8) */
} lf_baseline_opts;

typedef struct lf_baseline_result {
    long steps;               /* accepted steps */
    long f_evals;             /* right-hand side evaluations */
    double max_energy_error;  /* with energy_every > 0 */
    double seconds;           /* wall time of the integration (CLOCK_MONOTONIC), checks included */
    double cpu_seconds;       /* CPU time of the calling thread over the same span (CLOCK_THREAD_CPUTIME_ID):
                                 the wall time on an idle core, robust on a shared machine */
} lf_baseline_result;

/* Integrate the rigid system sys (any number of bodies) from y0 (its layout: R_1..R_n, w_1..w_n, and
 * x_1..x_n, v_1..v_n for bodies that translate) at t = 0 to T > 0; the state at T goes to yT (same
 * layout; R as integrated, not projected).
 * LF_EINVAL for a system that is not rigid or bad options, LF_ENOCONV if rk8pd fails. */
int lf_baseline_run(const lf_system *sys, const double *y0, double T, const lf_baseline_opts *o, double *yT,
                    lf_baseline_result *res, lf_error *err);

LF_END_DECLS

#endif
