/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the stepper: one driver for every method (state, time, cache, rollback, cancellation,
 * statistics). It calls the method's step function (or, with reversible adaptive steps, the
 * controller's around it: adapt.c); what step functions call back is in stepper_helpers.c. */
#include <limits.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/lanes_internal.h"
#include "base/linalg.h"
#include "method/method_internal.h"

/* The names of the registered methods whose rigid-form claim `field` holds, comma-separated. */
static void names_with(size_t field, char *names, size_t size)
{
    names[0] = 0;
    for (int i = 0; i < lf_method_count(); i++) {
        const lf_method *c = lf_method_at(i);
        if (!c->rigid || !*(const int *)((const char *)c->rigid + field)) continue;
        size_t n = strlen(names);
        snprintf(names + n, size - n, "%s%s", n ? ", " : "", c->info.name);
    }
}

int lf_method_accepts(const lf_method *m, const lf_system *sys, lf_error *err)
{
    if (!m || !sys) return lf_error_set(err, LF_EINVAL, "a method and a system are required");
    const unsigned need = m->info.form;
    const lf_form_rigid *rigid = lf_system_rigid(sys);
    if (need == LF_FORM_SECOND_ORDER && rigid && rigid->translating)
        return lf_error_set(err, LF_EINVAL,
                            "method %s integrates systems in second-order form (form 'second_order'), "
                            "which bodies that translate (bodies with a mass) do not offer: use a "
                            "rigid-body method (vlv, no_squish, split_exact, ...)",
                            m->info.name);
    if ((lf_system_forms(sys) & need) != need)
        return lf_error_set(err, LF_EINVAL, "method %s integrates %s systems (form '%s'); a %s system does not offer that form",
                            m->info.name, need == LF_FORM_RIGID ? "rigid-body" : lf_form_name(need),
                            lf_form_name(need), lf_system_kind(sys));
    if (need == LF_FORM_RIGID && rigid->translating && !(m->rigid && m->rigid->translation)) {
        char names[400];
        names_with(offsetof(lf_method_rigid_info, translation), names, sizeof names);
        const char *why = m->cls->why_no_translation;
        return lf_error_set(err, LF_EINVAL,
                            "method %s does not integrate bodies that translate (bodies with a mass)%s%s; "
                            "methods that do: %s, and the generic Lie-group methods",
                            m->info.name, why ? ": " : "", why ? why : "", names);
    }
    if (need == LF_FORM_RIGID && rigid->forcing && !(m->rigid && m->rigid->forcing)) {
        char names[400];
        names_with(offsetof(lf_method_rigid_info, forcing), names, sizeof names);
        return lf_error_set(err, LF_EINVAL,
                            "method %s does not take a forcing (the system has the forcing %s); methods that do: "
                            "%s, and the generic Lie-group methods (through f)",
                            m->info.name, rigid->forcing_name, names);
    }
    return m->cls->accepts ? m->cls->accepts(m, sys, err) : LF_OK;
}

/* Lanes need a lane kernel and a one-body rigid system. */
static int lanes_accepted(const lf_method *m, const lf_system *sys, int lanes, lf_error *err)
{
    if (lanes < 1) return lf_error_set(err, LF_EINVAL, "lf_stepper_new_lanes: %d lanes (expected >= 1)", lanes);
    if (lanes == 1) return LF_OK;
    if (!m->cls->lanes_step) {
        char names[160];
        names_with(offsetof(lf_method_rigid_info, lanes), names, sizeof names);
        return lf_error_set(err, LF_EINVAL, "method %s has no lane kernel (methods with lanes: %s)", m->info.name,
                            names);
    }
    const lf_form_rigid *rigid = lf_system_rigid(sys);
    if (!rigid || rigid->nb != 1)
        return lf_error_set(err, LF_EINVAL, "lanes step copies of one rigid body; this system has %d bodies",
                            rigid ? rigid->nb : 0);
    if (rigid->forcing)
        return lf_error_set(err, LF_EINVAL,
                            "lanes do not take a forcing (the system has the forcing %s): step "
                            "the copies one by one (an ensemble)",
                            rigid->forcing_name);
    return LF_OK;
}

lf_stepper *lf_stepper_new(const lf_method *m, const lf_system *sys, const double *y0, double t0,
                           const lf_stepper_opts *opts, lf_error *err)
{
    return lf_stepper_new_lanes(m, sys, 1, y0, t0, opts, err);
}

/* s->opts from opts (NULL: the defaults) */
static void set_options(lf_stepper *s, const lf_stepper_opts *opts)
{
    s->opts.newton_tol = (opts && opts->newton_tol > 0) ? opts->newton_tol : 1e-14;
    s->opts.max_iter = (opts && opts->max_iter > 0) ? opts->max_iter : 50;
    s->opts.dexpinv_order = opts ? opts->dexpinv_order : 0;
    s->opts.solver = opts ? opts->solver : LF_SOLVER_DEFAULT;
    s->opts.jacobian = opts ? opts->jacobian : LF_JAC_AUTO;
    s->opts.rtol = (opts && opts->rtol > 0) ? opts->rtol : 1e-6;
    s->opts.atol = (opts && opts->atol > 0) ? opts->atol : 1e-9;
    s->opts.h0 = opts ? opts->h0 : 0;
    s->opts.quad_nodes = opts ? opts->quad_nodes : 0;
    s->opts.adapt = opts ? opts->adapt : 0;
    s->opts.monitor = opts ? opts->monitor : NULL;
    s->opts.monitor_ctx = opts ? opts->monitor_ctx : NULL;
}

lf_stepper *lf_stepper_new_lanes(const lf_method *m, const lf_system *sys, int lanes, const double *y0, double t0,
                                 const lf_stepper_opts *opts, lf_error *err)
{
    if (!m || !sys || !y0) {
        lf_error_set(err, LF_EINVAL, "lf_stepper_new: a method, a system and an initial state are required");
        return NULL;
    }
    if (lf_method_accepts(m, sys, err) != LF_OK) return NULL;
    if (lanes_accepted(m, sys, lanes, err) != LF_OK) return NULL;
    if (opts && (!(opts->newton_tol >= 0) || opts->max_iter < 0 || opts->dexpinv_order < 0 || !(opts->rtol >= 0) ||
                 !(opts->atol >= 0) || !(opts->h0 >= 0) || opts->solver < 0 || opts->solver > LF_SOLVER_FIXED_POINT ||
                 opts->jacobian < 0 || opts->jacobian > LF_JAC_BLOCK_FD || opts->quad_nodes < 0 ||
                 opts->quad_nodes > 40 || opts->adapt < 0 || opts->adapt > 1)) {
        lf_error_set(err, LF_EINVAL, "lf_stepper_new: invalid options (negative tolerance, iteration count, order "
                                     "or step, unknown solver/jacobian, quadrature nodes outside 0..40, or adapt "
                                     "not 0 or 1)");
        return NULL;
    }
    lf_stepper *s = calloc(1, sizeof *s);
    if (!s) {
        lf_error_set(err, LF_ENOMEM, "lf_stepper_new: out of memory");
        return NULL;
    }
    s->method = m;
    s->sys = sys;
    s->lanes = lanes;
    s->step = lanes > 1 ? m->cls->lanes_step : m->cls->step;
    s->M = lf_system_manifold(sys);
    s->np = lf_manifold_nparam(s->M);
    s->nd = lf_manifold_ndim(s->M);
    s->rigid = lf_system_rigid(sys);
    s->nb = s->rigid ? s->rigid->nb : 0;
    s->J = s->rigid ? s->rigid->J : NULL;
    s->trans = s->rigid && s->rigid->translating;
    set_options(s, opts);
    s->h_next = s->opts.h0;
    s->forced = s->rigid && s->rigid->forcing && m->info.form == LF_FORM_RIGID;
    if (opts && opts->thermostat) {
        if (lf_langevin_accepts(s, opts->thermostat, err) != LF_OK) {
            free(s);
            return NULL;
        }
        s->thermostatted = 1;
        s->thermostat = *opts->thermostat;
    }
    s->opts.thermostat = NULL; /* copied (a caller's pointer is not kept) */
    if (s->opts.adapt && s->rigid && s->rigid->forcing) {
        lf_error_set(err, LF_EINVAL,
                     "reversible adaptive steps need a time-reversible system; the forcing %s makes "
                     "it not (use fixed steps)",
                     s->rigid->forcing_name);
        free(s);
        return NULL;
    }
    if (s->opts.adapt && lf_adapt_accepts(s, err) != LF_OK) {
        free(s);
        return NULL;
    }
    /* the method's cache, then (translating bodies) the forces at the state; 1/m and the forces of the last
     * evaluation after the rest */
    const size_t nforce = s->trans ? 3 * (size_t)s->nb * lanes : 0;
    const size_t ncache_method = m->cls->cache_doubles ? m->cls->cache_doubles(s) : 3 * (size_t)s->nb * lanes;
    /* a forcing of t and the configuration: its value at the state, cached with the torque */
    const size_t nfq =
        s->forced && !(s->rigid->forcing_depends & LF_FORCING_VELOCITY) ? (s->trans ? 6 : 3) * (size_t)s->nb : 0;
    s->ncache = ncache_method + nforce + nfq;
    size_t nst = (size_t)s->np * lanes + s->ncache, nwork = m->cls->work_doubles ? m->cls->work_doubles(s) : 0;
    const size_t nadapt = s->opts.adapt ? lf_adapt_work_doubles(s) : 0, nout = m->cls->process ? 2 * (size_t)s->np + s->ncache : 0;
    const size_t nforced = s->forced ? lf_forced_work_doubles(s) : 0;
    double *mem = calloc(2 * nst + nwork + nadapt + nout + 2 * nforce + nforced + 1, sizeof(double));
    int *imem = calloc(lf_stepper_iwork_ints(s), sizeof(int));
    if (!mem || !imem) {
        free(mem);
        free(imem);
        free(s);
        lf_error_set(err, LF_ENOMEM, "lf_stepper_new: out of memory (%zu doubles)", 2 * nst + nwork);
        return NULL;
    }
    s->y = mem;
    s->cache = mem + (size_t)s->np * lanes;
    s->save = mem + nst;
    s->work = mem + 2 * nst;
    s->adapt_work = s->work + nwork;
    s->y_out = nout ? s->adapt_work + nadapt : NULL;
    s->y_call = nout ? s->y_out + s->np : NULL;
    s->iwork = imem;
    if (s->trans) {
        const size_t nb3 = 3 * (size_t)s->nb * lanes;
        s->x = s->y + 12 * (size_t)s->nb * lanes;
        s->v = s->x + nb3;
        s->force = s->cache + ncache_method;
        s->force_eval = s->adapt_work + nadapt + nout;
        s->inv_mass = s->force_eval + nforce;
        for (size_t i = 0; i < nb3; i++) s->inv_mass[i] = 1 / s->rigid->mass[lanes > 1 ? 0 : i / 3];
    }
    s->fwork = nforced ? s->adapt_work + nadapt + nout + 2 * nforce : NULL;
    s->fcache = nfq ? s->cache + ncache_method + nforce : NULL;
    if (s->fwork) lf_forced_init(s);
    if (s->opts.adapt) {
        s->base_step = s->step;
        s->step = lf_adapt_step;
    }
    if (s->thermostatted) {
        s->base_step = s->step;
        s->step = lf_langevin_step;
    }
    if (s->nb) {
        s->R = s->y;
        s->w = s->y + 9 * s->nb * lanes;
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
    free(s->dense_buf);
    free(s->iwork);
    free(s);
}

/* Lane j's state (np doubles) into / out of the lanes of y. */
static void lane_in(lf_stepper *s, int j, const double *y)
{
    lf_lane_put(s->np, y, s->y, s->lanes, j);
}

int lf_stepper_set_state(lf_stepper *s, const double *y, double t)
{
    if (!s) return LF_EINVAL;
    if (!y) return lf_error_set(&s->err, LF_EINVAL, "set_state: the state is required");
    if (!isfinite(t)) return lf_error_set(&s->err, LF_EINVAL, "time t=%g is not finite", t);
    for (int j = 0; j < s->lanes; j++) {
        int rc = lf_system_check_state(s->sys, y + (size_t)j * s->np, 1e-9, &s->err);
        if (rc != LF_OK) {
            if (s->lanes > 1) {
                char msg[sizeof s->err.msg];
                memcpy(msg, s->err.msg, sizeof msg);
                lf_error_set(&s->err, rc, "lane %d: %s", j + 1, msg);
            }
            return rc;
        }
    }
    if (s->lanes == 1) memmove(s->y, y, (size_t)s->np * sizeof(double));
    else
        for (int j = 0; j < s->lanes; j++) lane_in(s, j, y + (size_t)j * s->np);
    s->t = t;
    s->t_comp = 0;
    s->cache_valid = 0;
    s->prev_ok = s->xi_ok = 0; /* (dense output: no step to interpolate) */
    s->rho = 1;
    s->q0 = 0;
    s->g_valid = 0;
    s->h_proc = 0; /* the state as given: a processed method pre-processes it at its first step */
    s->work_done = s->heat = 0;
    return LF_OK;
}

/* The name of the field holding parameter k of the state, for messages. */
static void describe_param(const lf_stepper *s, int k, char *buf, size_t n)
{
    if (s->lanes > 1) { /* one-body rigid lanes: entry k of lane j at k lanes + j */
        snprintf(buf, n, "lane %d, %s", k % s->lanes + 1, k / s->lanes < 9 ? "R" : "omega");
        return;
    }
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

static int step_n(lf_stepper *s, double h, long n);

/* Processed methods: make y the kernel's variable for steps of +-hp (post-process with the old h,
 * pre-process with the new one; all or nothing). */
static int proc_enter(lf_stepper *s, double hp)
{
    if (s->h_proc == hp) return LF_OK;
    const size_t nst = (size_t)s->np + s->ncache;
    const int valid = s->cache_valid;
    memcpy(s->save, s->y, nst * sizeof(double));
    int rc = LF_OK;
    if (s->h_proc != 0) {
        s->cache_set = 0;
        rc = s->method->cls->process(s, s->h_proc, 0);
        s->cache_valid = rc == LF_OK && s->cache_set;
    }
    if (rc == LF_OK) {
        s->cache_set = 0;
        rc = s->method->cls->process(s, hp, 1);
        s->cache_valid = rc == LF_OK && s->cache_set;
    }
    if (rc != LF_OK) {
        memcpy(s->y, s->save, nst * sizeof(double));
        s->cache_valid = valid;
        char msg[sizeof s->err.msg];
        memcpy(msg, s->err.msg, sizeof msg);
        return lf_error_set(&s->err, rc, "%s: pre-processing for h=%g at t=%.17g failed: %s", s->method->info.name, hp,
                            s->t, msg);
    }
    s->h_proc = hp;
    return LF_OK;
}

/* Processed methods: y_out = P_{h_proc}(y), the state the stepper shows; y and the cache unchanged. */
static int proc_output(lf_stepper *s)
{
    if (s->h_proc == 0) return LF_OK;
    const size_t nst = (size_t)s->np + s->ncache;
    const int valid = s->cache_valid;
    memcpy(s->save, s->y, nst * sizeof(double));
    s->cache_set = 0;
    int rc = s->method->cls->process(s, s->h_proc, 0);
    for (int i = 0; rc == LF_OK && i < s->np; i++)
        if (!isfinite(s->y[i])) rc = lf_error_set(&s->err, LF_EDOMAIN, "the processed state became non-finite");
    memcpy(s->y_out, s->y, (size_t)s->np * sizeof(double));
    memcpy(s->y, s->save, nst * sizeof(double));
    s->cache_valid = valid;
    if (rc != LF_OK) {
        memcpy(s->y_out, s->y, (size_t)s->np * sizeof(double));
        char msg[sizeof s->err.msg];
        memcpy(msg, s->err.msg, sizeof msg);
        return lf_error_set(&s->err, rc, "%s: post-processing at t=%.17g failed (the state shown is the kernel's, "
                                         "unprocessed): %s", s->method->info.name, s->t, msg);
    }
    return LF_OK;
}

int lf_stepper_step(lf_stepper *s, double h, long n)
{
    if (!s) return LF_EINVAL;
    if (!isfinite(h) && !(s->method->info.adaptive && isinf(h)))
        return lf_error_set(&s->err, LF_EINVAL, "%s: step size h=%g must be finite and nonzero", s->method->info.name, h);
    if (h == 0) return lf_error_set(&s->err, LF_EINVAL, "%s: step size h=%g must be finite and nonzero", s->method->info.name, h);
    if (n < 0) return lf_error_set(&s->err, LF_EINVAL, "%s: number of steps n=%ld must be >= 0", s->method->info.name, n);
    if (!s->method->cls->process) return step_n(s, h, n);
    if (n == 0) return LF_OK;
    /* a processed method: pre-process if |h| changed, step the kernel, show P(y) */
    const size_t nst = (size_t)s->np + s->ncache;
    const long steps0 = s->stats.steps;
    const double hp0 = s->h_proc;
    const int valid0 = s->cache_valid, reprocess = hp0 != fabs(h);
    if (reprocess) memcpy(s->y_call, s->y, nst * sizeof(double));
    int rc = proc_enter(s, fabs(h));
    if (rc != LF_OK) return rc;
    rc = step_n(s, h, n);
    if (rc != LF_OK) {
        lf_error failed = s->err;
        if (s->stats.steps == steps0 && reprocess) { /* back to before the call, bit for bit */
            memcpy(s->y, s->y_call, nst * sizeof(double));
            s->cache_valid = valid0;
            s->h_proc = hp0; /* y_out still holds the state shown before the call */
        } else
            proc_output(s); /* the state shown is that before the failing step */
        s->err = failed;
        return rc;
    }
    return proc_output(s);
}

/* n steps of h (checked by the caller) */
static int step_n(lf_stepper *s, double h, long n)
{
    const size_t ny = (size_t)s->np * s->lanes, nst = ny + s->ncache;
    for (long k = 0; k < n; k++) {
        if ((k & 255) == 0 && s->cancel && *s->cancel)
            return lf_error_set(&s->err, LF_EINTR, "%s: interrupted at t=%.17g", s->method->info.name, s->t);
        const int valid = s->cache_valid, g_valid = s->g_valid;
        const unsigned long long noise_step = s->noise_step;
        const double work_done = s->work_done, heat = s->heat;
        const double h_next = s->h_next, rho = s->rho, g = s->g;
        memcpy(s->save, s->y, nst * sizeof(double));
        s->cache_set = 0;
        s->h_taken = h;
        int rc = s->step(s, h);
        const int finite = rc != LF_OK || lf_all_finite(s->y, ny); /* the fast test, then the entry named */
        for (size_t i = 0; !finite && rc == LF_OK && i < ny; i++)
            if (!isfinite(s->y[i])) {
                if (s->nb && s->lanes == 1) {
                    /* R (9 per body), then w, x, v (3 per body each) */
                    const int e = (int)i, body = e < 9 * s->nb ? e / 9 : (e - 9 * s->nb) / 3 % s->nb;
                    rc = lf_error_set(&s->err, LF_EDOMAIN, "the state of body %d became non-finite", body + 1);
                } else {
                    char what[64];
                    describe_param(s, (int)i, what, sizeof what);
                    rc = lf_error_set(&s->err, LF_EDOMAIN, "the state (%s) became non-finite", what);
                }
            }
        if (rc != LF_OK) {
            memcpy(s->y, s->save, nst * sizeof(double));
            s->cache_valid = valid;
            s->h_next = h_next;
            s->rho = rho, s->g = g, s->g_valid = g_valid;
            s->noise_step = noise_step;
            s->work_done = work_done, s->heat = heat;
            char msg[sizeof s->err.msg];
            memcpy(msg, s->err.msg, sizeof msg);
            if (rc == LF_EINTR) return lf_error_set(&s->err, rc, "%s", msg);
            return lf_error_set(&s->err, rc, "%s: step from t=%.17g with h=%g failed: %s", s->method->info.name, s->t,
                                s->h_taken, msg);
        }
        const double hk = s->h_taken;
        double y = hk - s->t_comp, t = s->t + y; /* Kahan summation: t stays exact to round-off */
        if (!isfinite(t)) {
            memcpy(s->y, s->save, nst * sizeof(double));
            s->cache_valid = valid;
            s->h_next = h_next;
            s->rho = rho, s->g = g, s->g_valid = g_valid;
            s->noise_step = noise_step;
            s->work_done = work_done, s->heat = heat;
            return lf_error_set(&s->err, LF_EDOMAIN, "%s: the time overflows (t=%g + h=%g)", s->method->info.name,
                                s->t, hk);
        }
        s->cache_valid = s->cache_set; /* a step that did not cache the new data leaves none */
        if (s->dense_buf) {            /* dense output: the step's start */
            memcpy(s->y_prev, s->save, (size_t)s->np * sizeof(double));
            s->xi0_ok = s->prev_ok && s->xi_ok; /* f at the start known if the last step's end was used */
            if (s->xi0_ok) memcpy(s->xi0, s->xi1, (size_t)s->nd * sizeof(double));
            s->t_prev = s->t;
            s->prev_ok = 1;
            s->xi_ok = 0;
        }
        s->t_comp = (t - s->t) - y;
        s->t = t;
        s->stats.steps++;
    }
    return LF_OK;
}

/* lf_stepper_advance of a stepper with reversible adaptive steps: steps of the fictitious time h,
 * the last one chosen by the controller (adapt.c) to end at T */
static int advance_adaptive(lf_stepper *s, double T, double h, long max_steps)
{
    for (long k = 0; k < max_steps; k++) {
        const double rest = T - s->t;
        if (fabs(rest) <= 4e-16 * fabs(T)) break;
        double x;
        int last, rc;
        if ((rc = lf_adapt_next_step(s, rest, h, &x, &last)) != LF_OK) return rc;
        if ((rc = lf_stepper_step(s, x, 1)) != LF_OK) return rc;
        if (last) {
            s->t = T;
            s->t_comp = 0;
            break;
        }
    }
    return LF_OK;
}

int lf_stepper_advance_to(lf_stepper *s, double T, double h) { return lf_stepper_advance(s, T, h, LONG_MAX); }

int lf_stepper_advance(lf_stepper *s, double T, double h, long max_steps)
{
    if (!s) return LF_EINVAL;
    if (max_steps < 0)
        return lf_error_set(&s->err, LF_EINVAL, "%s: advance: max_steps=%ld must be >= 0", s->method->info.name,
                            max_steps);
    const char *name = s->method->info.name;
    if (!isfinite(T)) return lf_error_set(&s->err, LF_EINVAL, "%s: advance_to: target time %g is not finite", name, T);
    if (!isfinite(h) || h == 0)
        return lf_error_set(&s->err, LF_EINVAL, "%s: advance_to: step size h=%g must be finite and nonzero", name, h);
    if ((T - s->t) * h < 0)
        return lf_error_set(&s->err, LF_EINVAL, "%s: advance_to(%g): target lies behind t=%g for step size h=%g", name,
                            T, s->t, h);
    if (s->opts.adapt) return advance_adaptive(s, T, h, max_steps);
    if (s->method->info.adaptive) {
        if (s->h_next == 0) s->h_next = fabs(h);
        for (long k = 0; s->t != T; k++) {
            double rest = T - s->t;
            if (fabs(rest) <= 4e-16 * fabs(T)) break; /* within rounding of T */
            if (k >= max_steps) return LF_OK;
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
        if (nf >= (double)max_steps) return lf_stepper_step(s, h, max_steps);
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

const double *lf_stepper_state(const lf_stepper *s) { return s ? (s->h_proc != 0 ? s->y_out : s->y) : NULL; }
int lf_stepper_lanes(const lf_stepper *s) { return s ? s->lanes : 0; }

int lf_stepper_get_lane(const lf_stepper *s, int lane, double *y)
{
    if (!s || !y) return LF_EINVAL;
    if (lane < 0 || lane >= s->lanes)
        return lf_error_set((lf_error *)&s->err, LF_EINVAL, "get_lane: lane %d of %d (lanes count from 0)", lane,
                            s->lanes);
    lf_lane_get(s->np, s->y, s->lanes, lane, y);
    return LF_OK;
}

int lf_stepper_set_lane(lf_stepper *s, int lane, const double *y)
{
    if (!s) return LF_EINVAL;
    if (!y) return lf_error_set(&s->err, LF_EINVAL, "set_lane: the state is required");
    if (lane < 0 || lane >= s->lanes)
        return lf_error_set(&s->err, LF_EINVAL, "set_lane: lane %d of %d (lanes count from 0)", lane, s->lanes);
    int rc = lf_system_check_state(s->sys, y, 1e-9, &s->err);
    if (rc != LF_OK) return rc;
    lane_in(s, lane, y);
    s->cache_valid = 0;
    return LF_OK;
}
double lf_stepper_time(const lf_stepper *s) { return s ? s->t : NAN; }

unsigned long long lf_stepper_noise_step(const lf_stepper *s) { return s ? s->noise_step : 0; }

void lf_stepper_forcing_changed(lf_stepper *s)
{
    if (s) s->cache_valid = 0;
}
const lf_thermostat *lf_stepper_thermostat(const lf_stepper *s)
{
    return s && s->thermostatted ? &s->thermostat : NULL;
}

void lf_stepper_get_work(const lf_stepper *s, double *work, double *heat)
{
    if (work) *work = s ? s->work_done : NAN;
    if (heat) *heat = s ? s->heat : NAN;
}

int lf_stepper_set_work(lf_stepper *s, double work, double heat)
{
    if (!s) return LF_EINVAL;
    if (!isfinite(work) || !isfinite(heat))
        return lf_error_set(&s->err, LF_EINVAL, "set_work: work %g and heat %g must be finite", work, heat);
    s->work_done = work, s->heat = heat;
    return LF_OK;
}

int lf_stepper_set_noise_step(lf_stepper *s, unsigned long long n)
{
    if (!s) return LF_EINVAL;
    if (!s->thermostatted && n != 0)
        return lf_error_set(&s->err, LF_EINVAL, "set_noise_step: the stepper has no thermostat (its counter is 0)");
    s->noise_step = n;
    return LF_OK;
}
const lf_method *lf_stepper_method(const lf_stepper *s) { return s ? s->method : NULL; }
const lf_system *lf_stepper_system(const lf_stepper *s) { return s ? s->sys : NULL; }
const lf_error *lf_stepper_error(const lf_stepper *s) { return s ? &s->err : NULL; }
void lf_stepper_get_stats(const lf_stepper *s, lf_stepper_stats *stats)
{
    if (s && stats) *stats = s->stats;
}
int lf_stepper_set_stats(lf_stepper *s, const lf_stepper_stats *stats)
{
    if (!s || !stats) return LF_EINVAL;
    if (stats->steps < 0 || stats->rejected < 0 || stats->f_evals < 0 || stats->newton_iters < 0 || stats->jac_evals < 0)
        return lf_error_set(&s->err, LF_EINVAL, "set_stats: counts must be >= 0");
    s->stats = *stats;
    return LF_OK;
}
double lf_stepper_next_h(const lf_stepper *s) { return s ? s->h_next : NAN; }
int lf_stepper_adaptive(const lf_stepper *s) { return s ? s->opts.adapt : 0; }
double lf_stepper_rho(const lf_stepper *s) { return s ? s->rho : NAN; }
double lf_stepper_last_h(const lf_stepper *s) { return s ? s->h_taken : NAN; }
double lf_stepper_monitor0(const lf_stepper *s) { return s ? s->q0 : NAN; }
int lf_stepper_set_rho(lf_stepper *s, double rho, double q0)
{
    if (!s) return LF_EINVAL;
    if (!(rho > 0) || !isfinite(rho) || !(q0 >= 0) || !isfinite(q0))
        return lf_error_set(&s->err, LF_EINVAL, "set_rho: the step density %g must be positive and finite, the initial "
                                                "monitor %g finite and >= 0", rho, q0);
    s->rho = rho;
    s->q0 = q0;
    s->g_valid = 0;
    return LF_OK;
}
double lf_stepper_time_compensation(const lf_stepper *s) { return s ? s->t_comp : NAN; }

int lf_stepper_restore(lf_stepper *s, const double *y, double t, double t_comp, double next_h)
{
    if (!s) return LF_EINVAL;
    if (!isfinite(t_comp) || !(next_h >= 0) || !isfinite(next_h))
        return lf_error_set(&s->err, LF_EINVAL, "restore: compensation %g and next step %g must be finite (and the "
                                                "step >= 0)", t_comp, next_h);
    int rc = lf_stepper_set_state(s, y, t);
    if (rc != LF_OK) return rc;
    s->t_comp = t_comp;
    s->h_next = next_h;
    return LF_OK;
}

const double *lf_stepper_kernel_state(const lf_stepper *s, double *h_proc)
{
    if (h_proc) *h_proc = s ? s->h_proc : 0;
    return s ? s->y : NULL;
}

int lf_stepper_set_kernel_state(lf_stepper *s, const double *z, double h_proc)
{
    if (!s) return LF_EINVAL;
    if (!(h_proc >= 0) || !isfinite(h_proc))
        return lf_error_set(&s->err, LF_EINVAL, "set_kernel_state: h_proc=%g must be finite and >= 0", h_proc);
    if (h_proc > 0 && !s->method->cls->process)
        return lf_error_set(&s->err, LF_EINVAL, "set_kernel_state: %s is not a processed method (h_proc=%g given)",
                            s->method->info.name, h_proc);
    if (s->lanes > 1) return lf_error_set(&s->err, LF_EINVAL, "set_kernel_state: not with lanes");
    if (!z) return lf_error_set(&s->err, LF_EINVAL, "set_kernel_state: the state is required");
    int rc = lf_system_check_state(s->sys, z, 1e-9, &s->err);
    if (rc != LF_OK) return rc;
    memmove(s->y, z, (size_t)s->np * sizeof(double));
    s->cache_valid = 0;
    s->h_proc = h_proc;
    return proc_output(s);
}

void lf_stepper_set_cancel(lf_stepper *s, volatile sig_atomic_t *flag)
{
    if (s) s->cancel = flag;
}
