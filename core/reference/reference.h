/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — high-accuracy reference solutions of any system: its Lie ODE y' = f(t, y) . y (or
 * y . f) written in the embedding of the state (matrix entries, unit vectors, quaternion
 * components, R^m: lf_manifold_velocity) and integrated with GSL's adaptive rk8pd
 * (Prince–Dormand 8(9)) at tight tolerances. The embedded solution drifts off the manifold by
 * about the tolerance; the drift at the end is reported. */
#ifndef LF_REFERENCE_H
#define LF_REFERENCE_H

#include "base/export.h"
#include <signal.h>

#include "model/system.h"

LF_BEGIN_DECLS

typedef struct lf_reference_opts {
    double rtol;                    /* relative tolerance, default 1e-13 */
    double atol;                    /* absolute tolerance, default 1e-13 */
    double h0;                      /* initial step, default 1e-3 */
    unsigned long max_steps;        /* bound on the rk8pd steps of the whole call, default 2e7 */
    volatile sig_atomic_t *cancel;  /* optional: LF_EINTR within one rk8pd step when *cancel != 0 */
} lf_reference_opts;

/* Integrate from y0 (nparam doubles) at time t0 through the monotone times[0..ntimes-1] (increasing
 * or decreasing); the state at times[k] goes to out + nparam k. defect (may be NULL): the manifold
 * defect (lf_manifold_defect) of the last state. opts may be NULL. */
int lf_reference_solve(const lf_system *sys, const double *y0, double t0, const double *times, int ntimes, double *out,
                       double *defect, const lf_reference_opts *opts, lf_error *err);

LF_END_DECLS

#endif
