/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — non-geometric comparison solvers for rigid bodies (baseline.h). */
#include "reference/baseline.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/gsl_guard_internal.h"
#include "base/linalg.h"
#include "lie/quat.h"
#include "model/rigid.h"

typedef struct {
    const lf_system *sys;
    int nb, quat;
    const double *J;
    const double *mass; /* translating bodies: the solver's y goes on with (x, v); NULL otherwise */
    double *R, *tau;    /* scratch: 9 nb, 3 nb */
    double *F, *ys;     /* scratch: 3 nb forces, 18 nb a state of the system's layout (energy) */
    long f_evals;
    lf_error *err;
    int status;
} bl_ctx;

static double now(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* dy/dt of the embedded (R, w) or quaternion (q, w) equations, with (x' = v, v' = F/m) after them
 * for translating bodies */
static int rhs(bl_ctx *c, const double *y, double *dy)
{
    const int nb = c->nb, nq = c->quat ? 4 : 9;
    const double *w = y + nq * nb, *x = w + 3 * nb;
    const double *R = y;
    c->f_evals++;
    if (c->quat) {
        for (int b = 0; b < nb; b++) lf_quat_to_matrix(y + 4 * b, c->R + 9 * b);
        R = c->R;
    }
    int rc = lf_rigid_potential_eval_x(c->sys, c->mass ? x : NULL, R, NULL, c->mass ? c->F : NULL, c->tau, c->err);
    if (rc != LF_OK) return c->status = rc;
    for (int i = 0; c->mass && i < 3 * nb; i++) {
        dy[(nq + 3) * nb + i] = x[3 * nb + i];            /* x' = v */
        dy[(nq + 6) * nb + i] = c->F[i] / c->mass[i / 3]; /* v' = F / m */
    }
    for (int b = 0; b < nb; b++) {
        const double *wb = w + 3 * b, *J = c->J + 3 * b;
        if (c->quat) { /* q' = q (0, w) / 2 */
            const double *q = y + 4 * b;
            double *dq = dy + 4 * b;
            dq[0] = 0.5 * (-q[1] * wb[0] - q[2] * wb[1] - q[3] * wb[2]);
            dq[1] = 0.5 * (q[0] * wb[0] + q[2] * wb[2] - q[3] * wb[1]);
            dq[2] = 0.5 * (q[0] * wb[1] + q[3] * wb[0] - q[1] * wb[2]);
            dq[3] = 0.5 * (q[0] * wb[2] + q[1] * wb[1] - q[2] * wb[0]);
        } else { /* rows of R hat(w) are rows of R crossed with w */
            for (int i = 0; i < 3; i++) lf_v3_cross(y + 9 * b + 3 * i, wb, dy + 9 * b + 3 * i);
        }
        double Jw[3], g[3];
        lf_v3_mul(J, wb, Jw);
        lf_v3_cross(Jw, wb, g);
        lf_v3_add(g, c->tau + 3 * b, g);
        lf_v3_div(g, J, dy + nq * nb + 3 * b);
    }
    return LF_OK;
}

static int gsl_rhs(double t, const double y[], double dydt[], void *params)
{
    (void)t;
    return rhs(params, y, dydt) == LF_OK ? GSL_SUCCESS : GSL_EBADFUNC;
}

static void renormalize(const bl_ctx *c, double *y)
{
    for (int b = 0; b < c->nb; b++) {
        if (c->quat) {
            double *q = y + 4 * b, n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
            for (int k = 0; k < 4; k++) q[k] /= n;
        } else { /* R <- R (3 I - R^T R) / 2 */
            double *R = y + 9 * b, S[9];
            lf_m3_tmul(R, R, S);
            for (int k = 0; k < 9; k++) S[k] = -0.5 * S[k];
            S[0] += 1.5;
            S[4] += 1.5;
            S[8] += 1.5;
            lf_m3_mul(R, S, R);
        }
    }
}

/* the solver's y in the system's layout (R, w[, x, v]) */
static void to_state(const bl_ctx *c, const double *y, double *ys)
{
    const int nb = c->nb, nq = c->quat ? 4 : 9;
    for (int b = 0; b < nb; b++) {
        if (c->quat) lf_quat_to_matrix(y + 4 * b, ys + 9 * b);
        else memcpy(ys + 9 * b, y + 9 * b, 9 * sizeof(double));
    }
    memcpy(ys + 9 * nb, y + nq * nb, (c->mass ? 9 : 3) * (size_t)nb * sizeof(double)); /* w[, x, v] */
}

static int energy_of(bl_ctx *c, const double *y, double *E)
{
    to_state(c, y, c->ys);
    return lf_system_energy(c->sys, c->ys, E, c->err);
}

int lf_baseline_run(const lf_system *sys, const double *y0, double T, const lf_baseline_opts *o, double *yT,
                    lf_baseline_result *res, lf_error *err)
{
    const int nb = lf_rigid_nbodies(sys);
    if (!nb || !y0 || !o || !yT || !res)
        return lf_error_set(err, LF_EINVAL, "baseline: a rigid-body system, an initial state, options and output are required");
    if (!(T > 0) || !isfinite(T)) return lf_error_set(err, LF_EINVAL, "baseline: final time T=%g must be finite and > 0", T);
    if (o->kind < LF_BASELINE_RK8PD || o->kind > LF_BASELINE_QUAT_RK4)
        return lf_error_set(err, LF_EINVAL, "baseline: unknown solver kind %d", o->kind);
    if (o->energy_every < 0) return lf_error_set(err, LF_EINVAL, "baseline: energy_every=%d must be >= 0", o->energy_every);
    long nsteps = 0;
    if (o->kind == LF_BASELINE_RK8PD) {
        if (!(o->tol > 0) || !isfinite(o->tol))
            return lf_error_set(err, LF_EINVAL, "baseline rk8pd: tolerance tol=%g must be finite and > 0", o->tol);
    } else {
        if (!(o->h > 0) || !isfinite(o->h)) return lf_error_set(err, LF_EINVAL, "baseline rk4: step h=%g must be > 0", o->h);
        double q = T / o->h;
        nsteps = lround(q);
        if (nsteps < 1 || fabs(q - (double)nsteps) > 1e-9 * (double)nsteps)
            return lf_error_set(err, LF_EINVAL, "baseline rk4: T/h = %.17g is not a whole number of steps", q);
    }
    int rc = lf_system_check_state(sys, y0, 1e-9, err);
    if (rc != LF_OK) return rc;
    const double *mass = lf_rigid_masses(sys);
    const int quat = o->kind == LF_BASELINE_QUAT_RK4, nq = quat ? 4 : 9, n = (nq + (mass ? 9 : 3)) * nb;
    double *mem = malloc((size_t)(7 * n + 33 * nb) * sizeof(double));
    if (!mem) return lf_error_set(err, LF_ENOMEM, "baseline: out of memory");
    gsl_odeiv2_step *gs = NULL;
    gsl_odeiv2_control *gc = NULL;
    gsl_odeiv2_evolve *ge = NULL;
    double *y = mem, *k1 = y + n, *k2 = k1 + n, *k3 = k2 + n, *k4 = k3 + n, *yt = k4 + n, *yq = yt + n;
    bl_ctx c = {.sys = sys,
                .nb = nb,
                .quat = quat,
                .J = lf_rigid_inertia(sys),
                .mass = mass,
                .R = yq + n,
                .tau = yq + n + 9 * nb,
                .F = yq + n + 12 * nb,
                .ys = yq + n + 15 * nb,
                .err = err,
                .status = LF_OK};
    /* the starting state in the solver's variables */
    for (int b = 0; b < nb; b++) {
        if (quat) lf_quat_from_matrix(y0 + 9 * b, y + 4 * b);
        else memcpy(y + 9 * b, y0 + 9 * b, 9 * sizeof(double));
    }
    memcpy(y + nq * nb, y0 + 9 * nb, (mass ? 9 : 3) * (size_t)nb * sizeof(double)); /* w[, x, v] */
    double E0 = 0, E, maxerr = 0;
    if (o->energy_every > 0 && (rc = energy_of(&c, y, &E0)) != LF_OK) goto gsl_done;
    if (o->kind == LF_BASELINE_RK8PD) {
        gs = gsl_odeiv2_step_alloc(gsl_odeiv2_step_rk8pd, (size_t)n);
        gc = gsl_odeiv2_control_y_new(o->tol, o->tol);
        ge = gsl_odeiv2_evolve_alloc((size_t)n);
        if (!gs || !gc || !ge) {
            rc = lf_error_set(err, LF_ENOMEM, "baseline rk8pd: out of memory");
            goto gsl_done;
        }
    }
    const double t_start = now(CLOCK_MONOTONIC), c_start = now(CLOCK_THREAD_CPUTIME_ID);
    if (o->kind == LF_BASELINE_RK8PD) {
        gsl_odeiv2_system ode = {gsl_rhs, NULL, (size_t)n, &c};
        const unsigned long nmax = o->max_steps ? o->max_steps : 100000000UL;
        double t = 0, h = o->h > 0 ? o->h : 1e-2;
        lf_gsl_guard guard;
        lf_gsl_guard_begin(&guard);
        while (t < T && rc == LF_OK) {
            if ((unsigned long)nsteps >= nmax) {
                rc = lf_error_set(err, LF_ENOCONV, "baseline rk8pd: more than %lu steps (t=%g)", nmax, t);
                break;
            }
            int s = gsl_odeiv2_evolve_apply(ge, gc, gs, &ode, &t, T, &h, y);
            if (s != GSL_SUCCESS) {
                rc = c.status != LF_OK ? c.status
                                       : lf_error_set(err, LF_ENOCONV, "baseline rk8pd failed at t=%.17g (%s)", t,
                                                      guard.gsl_errno ? guard.reason : gsl_strerror(s));
                break;
            }
            nsteps++;
            if (o->renormalize) renormalize(&c, y);
            if (o->energy_every > 0 && (nsteps % o->energy_every == 0 || t >= T)) {
                if ((rc = energy_of(&c, y, &E)) != LF_OK) break;
                maxerr = fmax(maxerr, fabs(E - E0));
            }
        }
        lf_gsl_guard_end(&guard);
    } else {
        const double h = T / (double)nsteps;
        for (long k = 0; k < nsteps && rc == LF_OK; k++) {
            if ((rc = rhs(&c, y, k1)) != LF_OK) break;
            for (int i = 0; i < n; i++) yt[i] = y[i] + 0.5 * h * k1[i];
            if ((rc = rhs(&c, yt, k2)) != LF_OK) break;
            for (int i = 0; i < n; i++) yt[i] = y[i] + 0.5 * h * k2[i];
            if ((rc = rhs(&c, yt, k3)) != LF_OK) break;
            for (int i = 0; i < n; i++) yt[i] = y[i] + h * k3[i];
            if ((rc = rhs(&c, yt, k4)) != LF_OK) break;
            for (int i = 0; i < n; i++) y[i] += h / 6 * (k1[i] + 2 * (k2[i] + k3[i]) + k4[i]);
            if (o->renormalize) renormalize(&c, y);
            if (o->energy_every > 0 && ((k + 1) % o->energy_every == 0 || k + 1 == nsteps)) {
                if ((rc = energy_of(&c, y, &E)) != LF_OK) break;
                maxerr = fmax(maxerr, fabs(E - E0));
            }
            for (int i = 0; i < n && rc == LF_OK; i++)
                if (!isfinite(y[i])) rc = lf_error_set(err, LF_EDOMAIN, "baseline rk4: the state became non-finite at step %ld", k + 1);
        }
    }
    res->cpu_seconds = now(CLOCK_THREAD_CPUTIME_ID) - c_start;
    res->seconds = now(CLOCK_MONOTONIC) - t_start;
    res->steps = nsteps;
    res->f_evals = c.f_evals;
    res->max_energy_error = maxerr;
    if (rc == LF_OK) to_state(&c, y, yT);
gsl_done:
    if (ge) gsl_odeiv2_evolve_free(ge);
    if (gc) gsl_odeiv2_control_free(gc);
    if (gs) gsl_odeiv2_step_free(gs);
    free(mem);
    return rc;
}
