/* lieflow — the integrator registry and the stepper (state, torque cache, rollback). */
#include "method.h"

#include <stdlib.h>
#include <string.h>

#include "so3.h"

/* Every method is defined in its family's step_*.c file. */
extern const lf_method lf_method_eln, lf_method_eln_exp, lf_method_tln, lf_method_vlv, lf_method_lgvi,
    lf_method_liemid, lf_method_liemid_i, lf_method_liemid_e, lf_method_liemid_e1, lf_method_liemid_e2,
    lf_method_liemid_ea, lf_method_akw, lf_method_prk, lf_method_mcg, lf_method_new3;

static const lf_method *const registry[] = {
    &lf_method_eln,      &lf_method_eln_exp,  &lf_method_tln,       &lf_method_vlv,       &lf_method_liemid,
    &lf_method_liemid_i, &lf_method_liemid_e, &lf_method_liemid_e1, &lf_method_liemid_e2, &lf_method_liemid_ea,
    &lf_method_prk,      &lf_method_mcg,      &lf_method_new3,      &lf_method_akw,       &lf_method_lgvi,
};

int lf_method_count(void) { return (int)(sizeof registry / sizeof registry[0]); }

const lf_method *lf_method_at(int i) { return (i >= 0 && i < lf_method_count()) ? registry[i] : NULL; }

const lf_method *lf_method_find(const char *name)
{
    for (int i = 0; i < lf_method_count(); i++)
        if (strcmp(registry[i]->name, name) == 0) return registry[i];
    return NULL;
}

static size_t state_doubles(int nb) { return 9 * (size_t)nb + 3 * (size_t)nb + 3 * (size_t)nb; }

lf_stepper *lf_stepper_new(const lf_method *m, const lf_system *sys, const double *R, const double *w,
                           double t, const lf_stepper_opts *opts, lf_error *err)
{
    if (!m || !sys) {
        lf_error_set(err, LF_EINVAL, "lf_stepper_new: method and system are required");
        return NULL;
    }
    int nb = sys->nb;
    size_t nst = state_doubles(nb), nwork = m->work_doubles ? m->work_doubles(nb) : 0;
    lf_stepper *s = calloc(1, sizeof *s);
    double *mem = calloc(2 * nst + nwork + 1, sizeof(double));
    int *imem = calloc(12 * (size_t)nb + 16, sizeof(int));
    if (!s || !mem || !imem) {
        free(s); free(mem); free(imem);
        lf_error_set(err, LF_ENOMEM, "lf_stepper_new: out of memory (%d bodies)", nb);
        return NULL;
    }
    s->method = m;
    s->sys = sys;
    s->nb = nb;
    s->R = mem;
    s->w = mem + 9 * nb;
    s->tau = mem + 12 * nb;
    s->save = mem + nst;
    s->work = mem + 2 * nst;
    s->iwork = imem;
    s->opts.newton_tol = (opts && opts->newton_tol > 0) ? opts->newton_tol : 1e-14;
    s->opts.max_iter = (opts && opts->max_iter > 0) ? opts->max_iter : 50;
    if (lf_stepper_set_state(s, R, w, t) != LF_OK) {
        if (err) *err = s->err;
        lf_stepper_free(s);
        return NULL;
    }
    return s;
}

void lf_stepper_free(lf_stepper *s)
{
    if (!s) return;
    free(s->R); /* the state block owns R, w, tau, save and work */
    free(s->iwork);
    free(s);
}

int lf_stepper_set_state(lf_stepper *s, const double *R, const double *w, double t)
{
    if (!isfinite(t)) return lf_error_set(&s->err, LF_EINVAL, "time t=%g is not finite", t);
    int rc = lf_system_check_state(s->sys, R, w, 1e-9, &s->err);
    if (rc != LF_OK) return rc;
    memcpy(s->R, R, 9 * (size_t)s->nb * sizeof(double));
    memcpy(s->w, w, 3 * (size_t)s->nb * sizeof(double));
    s->t = t;
    s->t_comp = 0;
    s->tau_valid = 0;
    return LF_OK;
}

int lf_stepper_step(lf_stepper *s, double h, long n)
{
    if (!isfinite(h) || h == 0)
        return lf_error_set(&s->err, LF_EINVAL, "%s: step size h=%g must be finite and nonzero", s->method->name, h);
    size_t nst = state_doubles(s->nb);
    for (long k = 0; k < n; k++) {
        if ((k & 255) == 0 && s->cancel && *s->cancel)
            return lf_error_set(&s->err, LF_EINTR, "%s: interrupted at t=%.17g", s->method->name, s->t);
        int valid = s->tau_valid;
        memcpy(s->save, s->R, nst * sizeof(double));
        s->tau_cached = 0;
        int rc = s->method->step(s, h);
        for (int b = 0; rc == LF_OK && b < s->nb; b++)
            if (!(lf_m3_isfinite(s->R + 9 * b) && lf_v3_isfinite(s->w + 3 * b)))
                rc = lf_error_set(&s->err, LF_EDOMAIN, "the state of body %d became non-finite", b + 1);
        if (rc != LF_OK) {
            memcpy(s->R, s->save, nst * sizeof(double));
            s->tau_valid = valid;
            char msg[sizeof s->err.msg];
            memcpy(msg, s->err.msg, sizeof msg);
            return lf_error_set(&s->err, rc, "%s: step from t=%.17g with h=%g failed: %s", s->method->name, s->t, h,
                                msg);
        }
        s->tau_valid = s->tau_cached; /* a step that did not cache the new torque leaves none */
        double y = h - s->t_comp, t = s->t + y; /* Kahan summation: t stays exact to round-off */
        s->t_comp = (t - s->t) - y;
        s->t = t;
        s->nsteps++;
    }
    return LF_OK;
}

int lf_stepper_torque(lf_stepper *s, const double *R, double *tau)
{
    s->torque_evals++;
    return lf_system_potential(s->sys, R, NULL, tau, &s->err);
}

int lf_stepper_torque_start(lf_stepper *s, const double **tau)
{
    if (!s->tau_valid) {
        int rc = lf_stepper_torque(s, s->R, s->tau);
        if (rc != LF_OK) return rc;
        s->tau_valid = 1;
    }
    *tau = s->tau;
    return LF_OK;
}

void lf_stepper_cache_torque(lf_stepper *s, const double *tau)
{
    if (tau != s->tau) memcpy(s->tau, tau, 3 * (size_t)s->nb * sizeof(double));
    s->tau_valid = s->tau_cached = 1;
}

int lf_stepper_newton(lf_stepper *s, lf_residual_fn F, void *ctx, int n, double *x, int analytic_jac,
                      double *work)
{
    lf_newton_opts o = {s->opts.newton_tol, s->opts.max_iter, analytic_jac};
    lf_newton_info info = {0, 0, 0};
    int rc = lf_newton(F, ctx, n, x, &o, work, s->iwork, &info, &s->err);
    s->newton_iters += info.iters;
    return rc;
}
