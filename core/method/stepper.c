/* lieflow — the stepper: one core for every method (state, time, cache, rollback, cancellation,
 * statistics). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linalg.h"
#include "method_internal.h"

size_t lf_stepper_iwork_ints(const lf_stepper *s) { return 16 + 12 * (size_t)s->nb + 24 * (size_t)s->nd; }

int lf_method_accepts(const lf_method *m, const lf_system *sys, lf_error *err)
{
    if (!m || !sys) return lf_error_set(err, LF_EINVAL, "a method and a system are required");
    const unsigned need = m->info.form;
    if ((lf_system_forms(sys) & need) != need)
        return lf_error_set(err, LF_EINVAL, "method %s integrates %s systems (form '%s'); a %s system does not offer that form",
                            m->info.name, need == LF_FORM_RIGID ? "rigid-body" : lf_form_name(need),
                            lf_form_name(need), lf_system_kind(sys));
    return m->accepts ? m->accepts(m, sys, err) : LF_OK;
}

lf_stepper *lf_stepper_new(const lf_method *m, const lf_system *sys, const double *y0, double t0,
                           const lf_stepper_opts *opts, lf_error *err)
{
    if (!m || !sys || !y0) {
        lf_error_set(err, LF_EINVAL, "lf_stepper_new: a method, a system and an initial state are required");
        return NULL;
    }
    if (lf_method_accepts(m, sys, err) != LF_OK) return NULL;
    if (opts && (!(opts->newton_tol >= 0) || opts->max_iter < 0 || opts->dexpinv_order < 0 || !(opts->rtol >= 0) ||
                 !(opts->atol >= 0) || !(opts->h0 >= 0) || opts->solver < 0 || opts->solver > LF_SOLVER_FIXED_POINT ||
                 opts->jacobian < 0 || opts->jacobian > LF_JAC_BLOCK_FD || opts->quad_nodes < 0 ||
                 opts->quad_nodes > 40)) {
        lf_error_set(err, LF_EINVAL, "lf_stepper_new: invalid options (negative tolerance, iteration count, order "
                                     "or step, unknown solver/jacobian, or quadrature nodes outside 0..40)");
        return NULL;
    }
    lf_stepper *s = calloc(1, sizeof *s);
    if (!s) {
        lf_error_set(err, LF_ENOMEM, "lf_stepper_new: out of memory");
        return NULL;
    }
    s->method = m;
    s->sys = sys;
    s->M = lf_system_manifold(sys);
    s->np = lf_manifold_nparam(s->M);
    s->nd = lf_manifold_ndim(s->M);
    s->nb = lf_rigid_nbodies(sys);
    s->J = lf_rigid_inertia(sys);
    s->opts.newton_tol = (opts && opts->newton_tol > 0) ? opts->newton_tol : 1e-14;
    s->opts.max_iter = (opts && opts->max_iter > 0) ? opts->max_iter : 50;
    s->opts.dexpinv_order = opts ? opts->dexpinv_order : 0;
    s->opts.solver = opts ? opts->solver : LF_SOLVER_DEFAULT;
    s->opts.jacobian = opts ? opts->jacobian : LF_JAC_AUTO;
    s->opts.rtol = (opts && opts->rtol > 0) ? opts->rtol : 1e-6;
    s->opts.atol = (opts && opts->atol > 0) ? opts->atol : 1e-9;
    s->opts.h0 = opts ? opts->h0 : 0;
    s->opts.quad_nodes = opts ? opts->quad_nodes : 0;
    s->h_next = s->opts.h0;
    s->ncache = m->cache_doubles ? m->cache_doubles(s) : 3 * (size_t)s->nb;
    size_t nst = (size_t)s->np + s->ncache, nwork = m->work_doubles ? m->work_doubles(s) : 0;
    double *mem = calloc(2 * nst + nwork + 1, sizeof(double));
    int *imem = calloc(lf_stepper_iwork_ints(s), sizeof(int));
    if (!mem || !imem) {
        free(mem);
        free(imem);
        free(s);
        lf_error_set(err, LF_ENOMEM, "lf_stepper_new: out of memory (%zu doubles)", 2 * nst + nwork);
        return NULL;
    }
    s->y = mem;
    s->cache = mem + s->np;
    s->save = mem + nst;
    s->work = mem + 2 * nst;
    s->iwork = imem;
    if (s->nb) {
        s->R = s->y;
        s->w = s->y + 9 * s->nb;
        s->tau = s->cache;
    }
    if (lf_stepper_set_state(s, y0, t0) != LF_OK) {
        if (err) *err = s->err;
        lf_stepper_free(s);
        return NULL;
    }
    return s;
}

void lf_stepper_free(lf_stepper *s)
{
    if (!s) return;
    free(s->y); /* one block: y, cache, save, work */
    free(s->iwork);
    free(s);
}

int lf_stepper_set_state(lf_stepper *s, const double *y, double t)
{
    if (!y) return lf_error_set(&s->err, LF_EINVAL, "set_state: the state is required");
    if (!isfinite(t)) return lf_error_set(&s->err, LF_EINVAL, "time t=%g is not finite", t);
    int rc = lf_system_check_state(s->sys, y, 1e-9, &s->err);
    if (rc != LF_OK) return rc;
    memmove(s->y, y, (size_t)s->np * sizeof(double));
    s->t = t;
    s->t_comp = 0;
    s->cache_valid = 0;
    return LF_OK;
}

/* The name of the field holding parameter k of the state, for messages. */
static void describe_param(const lf_stepper *s, int k, char *buf, size_t n)
{
    for (int i = 0; i < lf_system_nfields(s->sys); i++) {
        const lf_field *f = lf_system_field(s->sys, i);
        for (int j = 0; j < f->count; j++) {
            const lf_factor *fac = lf_manifold_factor(s->M, f->first + j);
            if (k >= fac->op && k < fac->op + fac->np) {
                if (f->count == 1 && f->scalar_if_one) snprintf(buf, n, "%s", f->name);
                else snprintf(buf, n, "%s[%d]", f->name, j + 1);
                return;
            }
        }
    }
    snprintf(buf, n, "entry %d", k + 1);
}

int lf_stepper_step(lf_stepper *s, double h, long n)
{
    if (!s) return LF_EINVAL;
    if (!isfinite(h) && !(s->method->info.adaptive && isinf(h)))
        return lf_error_set(&s->err, LF_EINVAL, "%s: step size h=%g must be finite and nonzero", s->method->info.name, h);
    if (h == 0) return lf_error_set(&s->err, LF_EINVAL, "%s: step size h=%g must be finite and nonzero", s->method->info.name, h);
    if (n < 0) return lf_error_set(&s->err, LF_EINVAL, "%s: number of steps n=%ld must be >= 0", s->method->info.name, n);
    const size_t nst = (size_t)s->np + s->ncache;
    for (long k = 0; k < n; k++) {
        if ((k & 255) == 0 && s->cancel && *s->cancel)
            return lf_error_set(&s->err, LF_EINTR, "%s: interrupted at t=%.17g", s->method->info.name, s->t);
        const int valid = s->cache_valid;
        const double h_next = s->h_next;
        memcpy(s->save, s->y, nst * sizeof(double));
        s->cache_set = 0;
        s->h_taken = h;
        int rc = s->method->step(s, h);
        for (int i = 0; rc == LF_OK && i < s->np; i++)
            if (!isfinite(s->y[i])) {
                if (s->nb) {
                    int body = i < 9 * s->nb ? i / 9 : (i - 9 * s->nb) / 3;
                    rc = lf_error_set(&s->err, LF_EDOMAIN, "the state of body %d became non-finite", body + 1);
                } else {
                    char what[64];
                    describe_param(s, i, what, sizeof what);
                    rc = lf_error_set(&s->err, LF_EDOMAIN, "the state (%s) became non-finite", what);
                }
            }
        if (rc != LF_OK) {
            memcpy(s->y, s->save, nst * sizeof(double));
            s->cache_valid = valid;
            s->h_next = h_next;
            char msg[sizeof s->err.msg];
            memcpy(msg, s->err.msg, sizeof msg);
            if (rc == LF_EINTR) return lf_error_set(&s->err, rc, "%s", msg);
            return lf_error_set(&s->err, rc, "%s: step from t=%.17g with h=%g failed: %s", s->method->info.name, s->t,
                                s->h_taken, msg);
        }
        s->cache_valid = s->cache_set; /* a step that did not cache the new data leaves none */
        const double hk = s->h_taken;
        double y = hk - s->t_comp, t = s->t + y; /* Kahan summation: t stays exact to round-off */
        s->t_comp = (t - s->t) - y;
        s->t = t;
        s->stats.steps++;
    }
    return LF_OK;
}

int lf_stepper_advance_to(lf_stepper *s, double T, double h)
{
    if (!s) return LF_EINVAL;
    const char *name = s->method->info.name;
    if (!isfinite(T)) return lf_error_set(&s->err, LF_EINVAL, "%s: advance_to: target time %g is not finite", name, T);
    if (!isfinite(h) || h == 0)
        return lf_error_set(&s->err, LF_EINVAL, "%s: advance_to: step size h=%g must be finite and nonzero", name, h);
    if ((T - s->t) * h < 0)
        return lf_error_set(&s->err, LF_EINVAL, "%s: advance_to(%g): target lies behind t=%g for step size h=%g", name,
                            T, s->t, h);
    if (s->method->info.adaptive) {
        if (s->h_next == 0) s->h_next = fabs(h);
        for (long k = 0; s->t != T; k++) {
            double rest = T - s->t;
            if (fabs(rest) <= 4e-16 * fabs(T)) break; /* within rounding of T */
            if (k > 100000000L)
                return lf_error_set(&s->err, LF_ENOCONV, "%s: advance_to(%g): more than 1e8 steps", name, T);
            int rc = lf_stepper_step(s, rest, 1);
            if (rc != LF_OK) return rc;
        }
    } else {
        double nf = floor((T - s->t) / h * (1 + 1e-12));
        if (!(nf < 0x1p62))
            return lf_error_set(&s->err, LF_EINVAL, "%s: advance_to(%g): %g steps of h=%g from t=%g are too many", name,
                                T, nf, h, s->t);
        int rc = lf_stepper_step(s, h, (long)nf);
        if (rc != LF_OK) return rc;
        double rest = T - s->t;
        if (fabs(rest) > 1e-12 * fabs(h) * (1 + nf)) {
            rc = lf_stepper_step(s, rest, 1);
            if (rc != LF_OK) return rc;
        }
    }
    s->t = T;
    s->t_comp = 0;
    return LF_OK;
}

const double *lf_stepper_state(const lf_stepper *s) { return s->y; }
double lf_stepper_time(const lf_stepper *s) { return s->t; }
const lf_method *lf_stepper_method(const lf_stepper *s) { return s->method; }
const lf_system *lf_stepper_system(const lf_stepper *s) { return s->sys; }
const lf_error *lf_stepper_error(const lf_stepper *s) { return &s->err; }
void lf_stepper_get_stats(const lf_stepper *s, lf_stepper_stats *stats) { *stats = s->stats; }
double lf_stepper_next_h(const lf_stepper *s) { return s->h_next; }
void lf_stepper_set_cancel(lf_stepper *s, volatile sig_atomic_t *flag) { s->cancel = flag; }

/* ------------------------------------------------------------------------------------ helpers */

int lf_stepper_torque(lf_stepper *s, const double *R, double *tau)
{
    s->stats.f_evals++;
    return lf_rigid_potential_eval(s->sys, R, NULL, tau, &s->err);
}

int lf_stepper_torque_start(lf_stepper *s, const double **tau)
{
    if (!s->cache_valid) {
        int rc = lf_stepper_torque(s, s->R, s->tau);
        if (rc != LF_OK) return rc;
        s->cache_valid = 1;
    }
    *tau = s->tau;
    return LF_OK;
}

void lf_stepper_cache_torque(lf_stepper *s, const double *tau)
{
    if (tau != s->tau) memcpy(s->tau, tau, 3 * (size_t)s->nb * sizeof(double));
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
