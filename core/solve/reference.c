/* lieflow — reference solutions with GSL's rk8pd in the embedding R^{9n} x R^{3n}. */
#include "reference.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gsl_guard_internal.h"
#include "linalg.h"

typedef struct {
    const lf_system *sys;
    double *tau; /* 3*nb scratch */
    lf_error *err;
    int status;
} ref_ctx;

/* y = [R_1..R_n (9 each), w_1..w_n (3 each)]:  R_i' = R_i hat(w_i),  w_i' = J_i^{-1}(J_i w_i x w_i + tau_i). */
static int rhs(double t, const double y[], double dydt[], void *params)
{
    (void)t; /* autonomous */
    ref_ctx *c = params;
    int nb = c->sys->nb;
    const double *R = y, *w = y + 9 * nb;
    double *dR = dydt, *dw = dydt + 9 * nb;
    int rc = lf_system_potential(c->sys, R, NULL, c->tau, c->err);
    if (rc != LF_OK) {
        c->status = rc;
        return GSL_EBADFUNC;
    }
    for (int i = 0; i < nb; i++) {
        const double *Ri = R + 9 * i, *wi = w + 3 * i, *Ji = c->sys->J + 3 * i;
        for (int r = 0; r < 3; r++) {
            const double *row = Ri + 3 * r; /* (R hat w)_{r,:} = row x w as a row vector: (row x w)_j */
            double out[3];
            lf_v3_cross(row, wi, out);
            memcpy(dR + 9 * i + 3 * r, out, sizeof out);
        }
        double Pi[3], g[3];
        lf_v3_mul(Ji, wi, Pi);
        lf_v3_cross(Pi, wi, g);
        lf_v3_add(g, c->tau + 3 * i, g);
        lf_v3_div(g, Ji, dw + 3 * i);
    }
    return GSL_SUCCESS;
}

int lf_reference_solve(const lf_system *sys, const double *R0, const double *w0, double t0, const double *times,
                       int ntimes, double *Rout, double *wout, const lf_reference_opts *opts, lf_error *err)
{
    int nb = sys->nb;
    size_t dim = 12 * (size_t)nb;
    double rtol = opts && opts->rtol > 0 ? opts->rtol : 1e-13;
    double atol = opts && opts->atol > 0 ? opts->atol : 1e-13;
    double h0 = opts && opts->h0 > 0 ? opts->h0 : 1e-3;
    int rc = lf_system_check_state(sys, R0, w0, 1e-9, err);
    if (rc != LF_OK) return rc;
    for (int k = 0; k < ntimes; k++)
        if (!isfinite(times[k])) return lf_error_set(err, LF_EINVAL, "reference: time %d is not finite", k + 1);

    double *y = malloc((dim + 3 * (size_t)nb) * sizeof(double));
    if (!y) return lf_error_set(err, LF_ENOMEM, "reference: out of memory");
    ref_ctx c = {sys, y + dim, err, LF_OK};
    memcpy(y, R0, 9 * (size_t)nb * sizeof(double));
    memcpy(y + 9 * nb, w0, 3 * (size_t)nb * sizeof(double));

    gsl_odeiv2_system ode = {rhs, NULL, dim, &c};
    double t = t0;
    double dir = (ntimes > 0 && times[ntimes - 1] < t0) ? -1 : 1;
    gsl_odeiv2_driver *d = gsl_odeiv2_driver_alloc_y_new(&ode, gsl_odeiv2_step_rk8pd, dir * h0, atol, rtol);
    if (!d) {
        free(y);
        return lf_error_set(err, LF_ENOMEM, "reference: out of memory");
    }
    /* a bound on the work, so that an absurd T is an error and not a hang (rk8pd takes steps of
     * about 1e-2 of a period at tol 1e-13: 2e7 steps cover ~1e5 periods) */
    const unsigned long nmax = 20000000;
    gsl_odeiv2_driver_set_nmax(d, nmax);
    lf_gsl_guard guard; /* GSL failures become statuses, not abort() */
    lf_gsl_guard_begin(&guard);
    rc = LF_OK;
    for (int k = 0; k < ntimes && rc == LF_OK; k++) {
        if ((times[k] - t) * dir < 0) {
            rc = lf_error_set(err, LF_EINVAL, "reference: times must be monotone from t0=%g (got %g after %g)", t0,
                              times[k], t);
            break;
        }
        int s = gsl_odeiv2_driver_apply(d, &t, times[k], y);
        if (s == GSL_EMAXITER)
            rc = lf_error_set(err, LF_ENOCONV, "reference: more than %lu rk8pd steps needed to reach t=%g (stopped at t=%.17g)",
                              nmax, times[k], t);
        else if (s != GSL_SUCCESS)
            rc = c.status != LF_OK ? c.status
                                   : lf_error_set(err, LF_ENOCONV, "reference: rk8pd failed at t=%.17g (%s)", t,
                                                  gsl_strerror(s));
        if (rc != LF_OK) break;
        memcpy(Rout + 9 * (size_t)nb * k, y, 9 * (size_t)nb * sizeof(double));
        memcpy(wout + 3 * (size_t)nb * k, y + 9 * nb, 3 * (size_t)nb * sizeof(double));
    }
    lf_gsl_guard_end(&guard);
    gsl_odeiv2_driver_free(d);
    free(y);
    return rc;
}
