/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the forcing's kicks (method_internal.h): the rigid methods that take a forcing Q(t, q, u)
 * (forcing.h; q = (R, x) the configuration, u = (w, v) the velocities) apply it as kicks that hold the
 * configuration and the time fixed,
 *   explicit  E(c):  u <- u + c M^{-1} Q(t, q, u)
 *   implicit  I(c):  u1 = u + c M^{-1} Q(t, q, u1)      (E(-c) is its inverse)
 * with M = diag(J, m): the discrete Lagrange–d'Alembert principle with the virtual work of the forcing
 * taken by the trapezoidal rule over a step (Marsden & West 2001, §3.2: the discrete forces
 * f_d^- = f_d^+ = h/2 Q at the step's two ends). For a forcing of the configuration and time only, I
 * is E. A velocity-dependent I is solved by Newton with the forcing's Jacobian in the velocities
 * (differences of Q without one), or by fixed-point iteration above LF_FORCED_NEWTON_MAX unknowns. */
#include <string.h>

#include "method/method_internal.h"

/* the dense Newton's largest dimension (32 bodies that translate); above it, fixed-point iteration */
enum { LF_FORCED_NEWTON_MAX = 192 };

static int nvel(const lf_stepper *s) { return (s->trans ? 6 : 3) * s->nb; }

size_t lf_forced_work_doubles(const lf_stepper *s)
{
    if (!s->rigid || !s->rigid->forcing) return 0;
    const size_t n = (size_t)nvel(s);
    size_t solve = 0;
    if (s->rigid->forcing_depends & LF_FORCING_VELOCITY)
        solve =
            n <= LF_FORCED_NEWTON_MAX ? n * n + lf_newton_work_size((int)n) : lf_newton_fixed_point_work_size((int)n);
    return 4 * n + solve; /* u_a, u, Q, w of the momenta; D and the solver's */
}

int lf_stepper_forcing(lf_stepper *s, double t, const double *w, const double *v, double *Q)
{
    s->stats.f_evals++;
    return s->rigid->forcing(s->sys, t, s->R, w, s->x, v, Q, s->trans ? Q + 3 * s->nb : NULL, &s->err);
}

/* the angular velocities w of the bodies' angular state ang (momenta: w = Pi / J) */
static const double *velocities(lf_stepper *s, const double *ang, int momentum, double *w)
{
    if (!momentum) return ang;
    for (int i = 0; i < 3 * s->nb; i++) w[i] = ang[i] / s->J[i];
    return w;
}

int lf_forced_explicit(lf_stepper *s, double t, double c, double *ang, int momentum)
{
    if (!s->forced) return LF_OK;
    const int n3 = 3 * s->nb;
    double *Q = s->fwork + 2 * (size_t)nvel(s), *w = Q + nvel(s);
    int rc = lf_stepper_forcing(s, t, velocities(s, ang, momentum, w), s->v, Q);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < n3; i++) ang[i] += momentum ? c * Q[i] : c * Q[i] / s->J[i];
    lf_translate_kick(s, c, Q + n3);
    return LF_OK;
}

/* the residual of I: r(u) = u - u_a - c M^{-1} Q(t, q, u), and I - c M^{-1} D */
typedef struct {
    lf_stepper *s;
    double t, c;
    const double *ua;
    double *Q;
    double sign; /* -1 for the fixed-point iteration, which iterates u <- u - r(u) */
} implicit_eq;

static int implicit_residual(void *ctx, const double *u, double *r, double *A, lf_error *err)
{
    (void)err; /* the stepper's: lf_stepper_forcing fills s->err */
    implicit_eq *e = ctx;
    lf_stepper *s = e->s;
    const int n = nvel(s), n3 = 3 * s->nb;
    int rc = lf_stepper_forcing(s, e->t, u, s->trans ? u + n3 : NULL, e->Q);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < n; i++) {
        const double im = i < n3 ? 1 / s->J[i] : s->inv_mass[i - n3];
        r[i] = e->sign * (u[i] - e->ua[i] - e->c * im * e->Q[i]);
    }
    if (!A) return LF_OK;
    rc = s->rigid->forcing_jacobian(s->sys, e->t, s->R, u, s->x, s->trans ? u + n3 : NULL, A, &s->err);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < n; i++) {
        const double cim = e->c * (i < n3 ? 1 / s->J[i] : s->inv_mass[i - n3]);
        for (int j = 0; j < n; j++) A[(size_t)i * n + j] = (i == j) - cim * A[(size_t)i * n + j];
    }
    return LF_OK;
}

int lf_forced_implicit(lf_stepper *s, double t, double c, double *ang, int momentum)
{
    if (!s->forced) return LF_OK;
    if (!(s->rigid->forcing_depends & LF_FORCING_VELOCITY)) return lf_forced_explicit(s, t, c, ang, momentum);
    const int n = nvel(s), n3 = 3 * s->nb;
    double *ua = s->fwork, *u = ua + n, *Q = u + n, *work = Q + 2 * (size_t)n;
    memcpy(ua, velocities(s, ang, momentum, ua), (size_t)n3 * sizeof *ua);
    if (s->trans) memcpy(ua + n3, s->v, (size_t)n3 * sizeof *ua);
    memcpy(u, ua, (size_t)n * sizeof *u);
    implicit_eq e = {s, t, c, ua, Q, 1};
    lf_newton_opts o = {0};
    if (n > LF_FORCED_NEWTON_MAX) o.fixed_point = 1, e.sign = -1;
    else o.jacobian = s->rigid->forcing_jacobian && s->opts.jacobian != LF_JAC_FD ? LF_JAC_ANALYTIC : LF_JAC_FD;
    int rc = lf_stepper_solve(s, implicit_residual, &e, n, u, o, work);
    if (rc != LF_OK) return rc;
    /* the momenta change by J (w1 - w_a): exactly 0 when the forcing is (as the solve finds no update) */
    for (int i = 0; i < n3; i++) ang[i] = momentum ? ang[i] + s->J[i] * (u[i] - ua[i]) : u[i];
    if (s->trans) memcpy(s->v, u + n3, (size_t)n3 * sizeof *u);
    return LF_OK;
}
