/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — reference solutions with GSL's rk8pd in the embedding (reference.h). */
#include "reference/reference.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/gsl_guard_internal.h"
#include "lie/manifold.h"

typedef struct {
    const lf_system *sys;
    double *xi; /* nd scratch */
    lf_error *err;
    int status;
} ref_ctx;

static int rhs(double t, const double y[], double dydt[], void *params)
{
    ref_ctx *c = params;
    int rc = lf_system_f(c->sys, t, y, c->xi, c->err);
    if (rc != LF_OK) {
        c->status = rc;
        return GSL_EBADFUNC;
    }
    lf_manifold_velocity(lf_system_manifold(c->sys), y, c->xi, dydt);
    return GSL_SUCCESS;
}

int lf_reference_solve(const lf_system *sys, const double *y0, double t0, const double *times, int ntimes, double *out,
                       double *defect, const lf_reference_opts *opts, lf_error *err)
{
    if (!sys || !y0 || (ntimes > 0 && (!times || !out)) || ntimes < 0)
        return lf_error_set(err, LF_EINVAL, "reference: a system, an initial state and output space are required");
    /* a reference is accurate or it is not one: above 1e-2 rk8pd's R leaves SO(3) (at rtol = 1 by 2e7,
     * at 3 every entry NaN), with no error */
    const double tols[2] = {opts ? opts->rtol : 0, opts ? opts->atol : 0};
    for (int k = 0; k < 2; k++)
        if (tols[k] != 0 && !(tols[k] > 0 && tols[k] <= 1e-2))
            return lf_error_set(err, LF_EINVAL,
                                "reference: %s = %g, expected a tolerance in (0, 1e-2] (0: the default 1e-13)",
                                k ? "atol" : "rtol", tols[k]);
    const double rtol = tols[0] > 0 ? tols[0] : 1e-13, atol = tols[1] > 0 ? tols[1] : 1e-13;
    const double h0 = opts && opts->h0 > 0 ? opts->h0 : 1e-3;
    /* a bound on the work, so that an absurd T is an error and not a hang (rk8pd takes steps of
     * about 1e-2 of a period at tol 1e-13: 2e7 steps cover ~1e5 periods) */
    const unsigned long nmax = opts && opts->max_steps > 0 ? opts->max_steps : 20000000UL;
    volatile sig_atomic_t *cancel = opts ? opts->cancel : NULL;
    if (!isfinite(t0)) return lf_error_set(err, LF_EINVAL, "reference: t0 = %g is not finite", t0);
    int rc = lf_system_check_state(sys, y0, 1e-9, err);
    if (rc != LF_OK) return rc;
    for (int k = 0; k < ntimes; k++)
        if (!isfinite(times[k])) return lf_error_set(err, LF_EINVAL, "reference: time %d is not finite", k + 1);

    const lf_manifold *M = lf_system_manifold(sys);
    const size_t np = (size_t)lf_manifold_nparam(M), nd = (size_t)lf_manifold_ndim(M);
    double *y = malloc((np + nd) * sizeof(double));
    gsl_odeiv2_step *step = gsl_odeiv2_step_alloc(gsl_odeiv2_step_rk8pd, np);
    gsl_odeiv2_control *control = gsl_odeiv2_control_y_new(atol, rtol);
    gsl_odeiv2_evolve *evolve = gsl_odeiv2_evolve_alloc(np);
    if (!y || !step || !control || !evolve) {
        rc = lf_error_set(err, LF_ENOMEM, "reference: out of memory");
        goto done;
    }
    memcpy(y, y0, np * sizeof(double));
    ref_ctx c = {sys, y + np, err, LF_OK};
    gsl_odeiv2_system ode = {rhs, NULL, np, &c};
    const double dir = (ntimes > 0 && times[ntimes - 1] < t0) ? -1 : 1;
    double t = t0, h = dir * h0;
    unsigned long nsteps = 0;
    lf_gsl_guard guard; /* GSL failures become statuses, not abort() */
    lf_gsl_guard_begin(&guard);
    rc = LF_OK;
    for (int k = 0; k < ntimes && rc == LF_OK; k++) {
        if ((times[k] - t) * dir < 0) {
            rc = lf_error_set(err, LF_EINVAL, "reference: times must be monotone from t0=%g (got %g after %g)", t0,
                              times[k], t);
            break;
        }
        while (t != times[k]) {
            if (cancel && *cancel) {
                rc = lf_error_set(err, LF_EINTR, "reference: interrupted at t=%.17g", t);
                break;
            }
            if (nsteps >= nmax) {
                rc = lf_error_set(err, LF_ENOCONV,
                                  "reference: more than %lu rk8pd steps needed to reach t=%g (stopped at t=%.17g)",
                                  nmax, times[k], t);
                break;
            }
            int s = gsl_odeiv2_evolve_apply(evolve, control, step, &ode, &t, times[k], &h, y);
            nsteps++;
            if (s != GSL_SUCCESS) {
                rc = c.status != LF_OK ? c.status
                                       : lf_error_set(err, LF_ENOCONV, "reference: rk8pd failed at t=%.17g (%s)", t,
                                                      guard.gsl_errno ? guard.reason : gsl_strerror(s));
                break;
            }
        }
        if (rc == LF_OK) memcpy(out + np * k, y, np * sizeof(double));
    }
    lf_gsl_guard_end(&guard);
    if (rc == LF_OK && defect) *defect = ntimes > 0 ? lf_manifold_defect(M, out + np * (ntimes - 1)) : 0;
done:
    if (evolve) gsl_odeiv2_evolve_free(evolve);
    if (control) gsl_odeiv2_control_free(control);
    if (step) gsl_odeiv2_step_free(step);
    free(y);
    return rc;
}
