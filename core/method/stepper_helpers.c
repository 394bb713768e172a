/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — what a step function calls (method_internal.h): the system's torque, forcing and vector
 * field (counted, cached), the torque Jacobian, and Newton with the stepper's options and statistics. */
#include <string.h>

#include "method/method_internal.h"

/* Newton's ints for n = s nd unknowns (lf_newton_iwork_size: 5 n + 2), the block Jacobian's block and
 * color of each unknown (2 n) and the factor groups (2 factors <= 2 nd), for up to 8 stages */
size_t lf_stepper_iwork_ints(const lf_stepper *s)
{
    const size_t n = 8 * (size_t)(s->nd > 0 ? s->nd : 1);
    return 16 + 12 * (size_t)s->nb + lf_newton_iwork_size((int)n) + 2 * n + 2 * (size_t)s->nd;
}

int lf_stepper_torque(lf_stepper *s, const double *R, double *tau)
{
    s->stats.f_evals += s->lanes;
    if (s->lanes > 1) return s->rigid->torque_lanes(s->sys, s->lanes, R, s->x, tau, s->force_eval, &s->err);
    return s->rigid->torque(s->sys, R, s->x, tau, s->force_eval, &s->err);
}

int lf_stepper_forcing(lf_stepper *s, double t, const double *w, const double *v, double *Q)
{
    s->stats.f_evals++;
    return s->rigid->forcing(s->sys, t, s->R, w, s->x, v, Q, s->trans ? Q + 3 * s->nb : NULL, &s->err);
}

int lf_stepper_has_torque_jacobian(const lf_stepper *s)
{
    return s->nb > 0 && s->lanes == 1 && s->opts.jacobian != LF_JAC_FD && s->opts.jacobian != LF_JAC_BLOCK_FD &&
           s->rigid->has_torque_jacobian(s->sys);
}

int lf_stepper_torque_jacobian(lf_stepper *s, const double *R, double *K)
{
    return s->rigid->torque_jacobian(s->sys, R, s->x, K, &s->err);
}

int lf_stepper_torque_start(lf_stepper *s, const double **tau)
{
    if (!s->cache_valid) {
        int rc = lf_stepper_torque(s, s->R, s->tau);
        if (rc != LF_OK) return rc;
        if (s->trans) memcpy(s->force, s->force_eval, 3 * (size_t)s->nb * s->lanes * sizeof(double));
        if (s->fcache && (rc = lf_stepper_forcing(s, s->t, s->w, s->v, s->fcache)) != LF_OK) return rc;
        s->cache_valid = 1;
    }
    s->fq_valid = 1; /* the forcing's value at the state (a forcing of t and the configuration) */
    *tau = s->tau;
    return LF_OK;
}

void lf_stepper_cache_torque(lf_stepper *s, const double *tau)
{
    if (tau != s->tau) memcpy(s->tau, tau, 3 * (size_t)s->nb * s->lanes * sizeof(double));
    if (s->trans) memcpy(s->force, s->force_eval, 3 * (size_t)s->nb * s->lanes * sizeof(double));
    s->cache_valid = s->cache_set = 1;
}

int lf_stepper_f(lf_stepper *s, double t, const double *y, double *xi)
{
    s->stats.f_evals++;
    return lf_system_f(s->sys, t, y, xi, &s->err);
}

int lf_stepper_solve(lf_stepper *s, lf_residual_fn F, void *ctx, int n, double *x, lf_newton_opts o, double *work)
{
    o.tol = s->opts.newton_tol;
    o.max_iter = s->opts.max_iter;
    lf_newton_info info = {0, 0, 0, 0, 0};
    int rc = lf_newton(F, ctx, n, x, &o, work, s->iwork, &info, &s->err);
    s->stats.newton_iters += info.iters;
    s->stats.jac_evals += info.jac_evals;
    return rc;
}

int lf_stepper_newton(lf_stepper *s, lf_residual_fn F, void *ctx, int n, double *x, int analytic_jac, double *work)
{
    lf_newton_opts o = {.jacobian = analytic_jac ? LF_JAC_ANALYTIC : LF_JAC_FD};
    return lf_stepper_solve(s, F, ctx, n, x, o, work);
}
