/* lieflow — high-accuracy reference solutions of rigid-body systems.
 * The equations of motion in the embedding R^{9n} x R^{3n}: R_i' = R_i hat(w_i),
 * J_i w_i' = J_i w_i x w_i + tau_i(R), integrated with GSL's adaptive rk8pd (Prince–Dormand 8(9))
 * at tight tolerances. */
#ifndef LF_REFERENCE_H
#define LF_REFERENCE_H

#include "system.h"

typedef struct lf_reference_opts {
    double rtol;   /* relative tolerance, default 1e-13 */
    double atol;   /* absolute tolerance, default 1e-13 */
    double h0;     /* initial step, default 1e-3 */
} lf_reference_opts;

/* Integrate from (R0, w0) at time t0 through the increasing (or decreasing) times[0..ntimes-1];
 * the state at times[k] goes to Rout + 9*nb*k, wout + 3*nb*k. opts may be NULL. */
int lf_reference_solve(const lf_system *sys, const double *R0, const double *w0, double t0, const double *times,
                       int ntimes, double *Rout, double *wout, const lf_reference_opts *opts, lf_error *err);

#endif
