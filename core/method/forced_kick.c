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
 * (differences of Q without one), or by fixed-point iteration above LF_FORCED_NEWTON_MAX unknowns; a
 * forcing affine in the velocities (LF_FORCING_AFFINE: damping) by one linear solve,
 * (I - c M^{-1} D) (u1 - u) = c M^{-1} Q(t, q, u). */
#include <math.h>
#include <string.h>

#include "base/dense.h"
#include "base/linalg.h"
#include "method/method_internal.h"

/* the dense Newton's largest dimension (32 bodies that translate); above it, fixed-point iteration */
enum { LF_FORCED_NEWTON_MAX = 192 };

static int nvel(const lf_stepper *s) { return (s->trans ? 6 : 3) * s->nb; }

/* The kinetic energy of the bodies' angular state ang (momenta or angular velocities) and of s->v: a
 * kick changes only it (R, x fixed), and the change a forcing's share makes is the work it does
 * (s->work_done; lf_stepper_get_work). */
static double kinetic(const lf_stepper *s, const double *ang, int momentum)
{
    double T = 0;
    const double *im = s->inv_inertia;
    for (int i = 0; i < 3 * s->nb; i++) T += momentum ? ang[i] * ang[i] * im[i] : s->J[i] * ang[i] * ang[i];
    for (int i = 0; s->trans && i < 3 * s->nb; i++) T += s->v[i] * s->v[i] * s->rigid->mass[i / 3];
    return 0.5 * T;
}

size_t lf_forced_work_doubles(const lf_stepper *s)
{
    if (!s->rigid || !s->rigid->forcing) return 0;
    const size_t n = (size_t)nvel(s);
    size_t solve = 0;
    if (s->rigid->forcing_depends & LF_FORCING_VELOCITY)
        solve =
            n <= LF_FORCED_NEWTON_MAX ? n * n + lf_newton_work_size((int)n) : lf_newton_fixed_point_work_size((int)n);
    return 4 * n + solve + n; /* u_a, u, Q, w of the momenta; D and the solver's; 1/J and 1/m */
}

void lf_forced_init(lf_stepper *s)
{
    const int n3 = 3 * s->nb;
    s->inv_inertia = s->fwork + lf_forced_work_doubles(s) - nvel(s);
    for (int i = 0; i < n3; i++) s->inv_inertia[i] = 1 / s->J[i];
    for (int i = 0; s->trans && i < n3; i++) s->inv_inertia[n3 + i] = s->inv_mass[i];
}

/* the angular velocities w of the bodies' angular state ang (momenta: w = Pi / J); a forcing that does
 * not depend on them gets the stepper's w unread (not converted: it saves a division per component) */
static const double *velocities(lf_stepper *s, const double *ang, int momentum, double *w)
{
    if (!momentum) return ang;
    if (!(s->rigid->forcing_depends & LF_FORCING_VELOCITY)) return s->w;
    for (int i = 0; i < 3 * s->nb; i++) w[i] = ang[i] * s->inv_inertia[i];
    return w;
}

static int explicit_kick(lf_stepper *s, double t, double c, double *ang, int momentum);

int lf_forced_explicit(lf_stepper *s, double t, double c, double *ang, int momentum)
{
    if (!s->forced) return LF_OK;
    const int rc = explicit_kick(s, t, c, ang, momentum); /* (its work added) */
    return rc == LF_OK ? lf_forced_check_work(s) : rc;
}

int lf_forced_check_work(lf_stepper *s)
{
    if (isfinite(s->work_done)) return LF_OK;
    return lf_error_set(&s->err, LF_EDOMAIN,
                        "the forcing %s made the kinetic energy overflow (its work is %g): the bodies' velocities "
                        "are beyond the range of doubles",
                        s->rigid->forcing_name, s->work_done);
}

static int explicit_kick(lf_stepper *s, double t, double c, double *ang, int momentum)
{
    const int n3 = 3 * s->nb;
    double *Q = s->fwork + 2 * (size_t)nvel(s), *w = Q + nvel(s);
    if (s->fcache) { /* a forcing of t and the configuration: once per (t, R, x) */
        Q = s->fcache;
        if (!s->fq_valid) {
            int rc = lf_stepper_forcing(s, t, s->w, s->v, Q);
            if (rc != LF_OK) return rc;
            s->fq_valid = 1;
        }
    } else {
        int rc = lf_stepper_forcing(s, t, velocities(s, ang, momentum, w), s->v, Q);
        if (rc != LF_OK) return rc;
    }
    /* the kick, and its work from the kinetic energy's differences: (a1^2 - a0^2)/2J for momenta a, J (a1^2 -
     * a0^2)/2 for angular velocities, m (v1^2 - v0^2)/2 */
    double W = 0;
    for (int i = 0; i < n3; i++) {
        const double a0 = ang[i], a1 = a0 + (momentum ? c * Q[i] : c * Q[i] * s->inv_inertia[i]);
        W += (momentum ? s->inv_inertia[i] : s->J[i]) * ((a1 - a0) * (a1 + a0));
        ang[i] = a1;
    }
    for (int i = 0; s->trans && i < n3; i++) {
        const double v0 = s->v[i], v1 = v0 + c * Q[n3 + i] * s->inv_mass[i];
        W += s->rigid->mass[i / 3] * ((v1 - v0) * (v1 + v0));
        s->v[i] = v1;
    }
    s->work_done += 0.5 * W;
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
        const double im = i < n3 ? s->inv_inertia[i] : s->inv_mass[i - n3];
        r[i] = e->sign * (u[i] - e->ua[i] - e->c * im * e->Q[i]);
    }
    if (!A) return LF_OK;
    rc = s->rigid->forcing_jacobian(s->sys, e->t, s->R, u, s->x, s->trans ? u + n3 : NULL, A, &s->err);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < n; i++) {
        const double cim = e->c * (i < n3 ? s->inv_inertia[i] : s->inv_mass[i - n3]);
        for (int j = 0; j < n; j++) A[(size_t)i * n + j] = (i == j) - cim * A[(size_t)i * n + j];
    }
    return LF_OK;
}

/* I(c) of a forcing affine in the velocities: u1 = u_a + d, (I - c M^{-1} D) d = c M^{-1} Q(u_a); the
 * momenta change by J d_w (exactly 0 for a forcing of 0) */
static int affine_kick(lf_stepper *s, double t, double c, double *ang, int momentum)
{
    const int n = nvel(s), n3 = 3 * s->nb;
    double *ua = s->fwork, *d = ua + n, *Q = d + n, *A = Q + 2 * (size_t)n;
    memcpy(ua, velocities(s, ang, momentum, ua), (size_t)n3 * sizeof *ua);
    if (s->trans) memcpy(ua + n3, s->v, (size_t)n3 * sizeof *ua);
    int rc = lf_stepper_forcing(s, t, ua, s->trans ? ua + n3 : NULL, Q);
    if (rc == LF_OK) rc = s->rigid->forcing_jacobian(s->sys, t, s->R, ua, s->x, s->trans ? ua + n3 : NULL, A, &s->err);
    if (rc != LF_OK) return rc;
    s->stats.jac_evals++;
    for (int i = 0; i < n; i++) {
        const double cim = c * (i < n3 ? s->inv_inertia[i] : s->inv_mass[i - n3]);
        d[i] = cim * Q[i];
        for (int j = 0; j < n; j++) A[(size_t)i * n + j] = (i == j) - cim * A[(size_t)i * n + j];
    }
    if (lf_lu_factor(n, A, s->iwork) != 0)
        return lf_error_set(&s->err, LF_EDOMAIN, "the implicit kick of the forcing %s is singular (c = %g)",
                            s->rigid->forcing_name, c);
    lf_lu_solve(n, A, s->iwork, d);
    for (int i = 0; i < n3; i++) ang[i] = momentum ? ang[i] + s->J[i] * d[i] : ang[i] + d[i];
    for (int i = 0; s->trans && i < n3; i++) s->v[i] += d[n3 + i];
    return LF_OK;
}

/* Q and the diagonal d of its Jacobian at the velocities w, v (a forcing with LF_FORCING_DIAGONAL) */
static int eval_diagonal(lf_stepper *s, double t, const double *w, const double *v, double *Q, double *d)
{
    int rc = lf_stepper_forcing(s, t, w, v, Q);
    if (rc == LF_OK) rc = s->rigid->forcing_diagonal(s->sys, t, s->R, w, s->x, v, d, &s->err);
    return rc;
}

/* 1/J or 1/m of velocity component i */
static double inv_inertia(const lf_stepper *s, int i) { return s->inv_inertia[i]; }

/* I(c) of a forcing with a diagonal Jacobian, in closed form: d_i = c Q_i / (M_i - c D_ii) */
static int diagonal_kick(lf_stepper *s, double t, double c, double *ang, int momentum)
{
    const int n = nvel(s), n3 = 3 * s->nb;
    double *ua = s->fwork, *D = ua + n, *Q = D + n;
    memcpy(ua, velocities(s, ang, momentum, ua), (size_t)n3 * sizeof *ua);
    if (s->trans) memcpy(ua + n3, s->v, (size_t)n3 * sizeof *ua);
    int rc = eval_diagonal(s, t, ua, s->trans ? ua + n3 : NULL, Q, D);
    if (rc != LF_OK) return rc;
    double W = 0; /* the work from the kinetic energy's differences, as in explicit_kick */
    for (int i = 0; i < n; i++) {
        const double cim = c * inv_inertia(s, i), d = cim * Q[i] / (1 - cim * D[i]);
        if (i < n3) {
            const double a0 = ang[i], a1 = a0 + (momentum ? s->J[i] * d : d);
            W += (momentum ? s->inv_inertia[i] : s->J[i]) * ((a1 - a0) * (a1 + a0));
            ang[i] = a1;
        } else {
            const double v0 = s->v[i - n3], v1 = v0 + d;
            W += s->rigid->mass[(i - n3) / 3] * ((v1 - v0) * (v1 + v0));
            s->v[i - n3] = v1;
        }
    }
    s->work_done += 0.5 * W;
    return LF_OK;
}

static int implicit_kick(lf_stepper *s, double t, double c, double *ang, int momentum);

int lf_forced_implicit(lf_stepper *s, double t, double c, double *ang, int momentum)
{
    if (!s->forced) return LF_OK;
    if (!(s->rigid->forcing_depends & LF_FORCING_VELOCITY)) return lf_forced_explicit(s, t, c, ang, momentum);
    if (s->rigid->forcing_depends & LF_FORCING_DIAGONAL) { /* (its work added) */
        const int rc = diagonal_kick(s, t, c, ang, momentum);
        return rc == LF_OK ? lf_forced_check_work(s) : rc;
    }
    const double T0 = kinetic(s, ang, momentum);
    const int rc = implicit_kick(s, t, c, ang, momentum);
    s->work_done += kinetic(s, ang, momentum) - T0;
    return rc == LF_OK ? lf_forced_check_work(s) : rc;
}

static int implicit_kick(lf_stepper *s, double t, double c, double *ang, int momentum)
{
    if ((s->rigid->forcing_depends & LF_FORCING_AFFINE) && nvel(s) <= LF_FORCED_NEWTON_MAX)
        return affine_kick(s, t, c, ang, momentum);
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

/* The trapezoidal kick of a forcing with a diagonal Jacobian from one evaluation at u0 (Q is affine:
 * Q(u1) = Q(u0) + D (u1 - u0)): Pi_k = Pi0 + c/2 Q0 + c tau, then the implicit half in closed form,
 * Pi1 - Pi_k = c/2 (Q0 + D (w_k - w0)) / (1 - c/2 D / J) (v likewise with m). One pass per component; the
 * work of the two halves from the kinetic energy's differences, (p1^2 - p0^2)/2J = (p1 - p0)(p1 + p0)/2J
 * (no sum of the whole kinetic energy before and after: cheaper, and without its cancellation). */
static void diagonal_trapezoid(lf_stepper *s, double c, double *Pi, const double *tau, const double *F,
                               const double *u0, const double *Q, const double *D)
{
    const int n3 = 3 * s->nb;
    const double h2 = 0.5 * c, *im = s->inv_inertia;
    double W = 0;
    for (int i = 0; i < n3; i++) {
        const double p0 = Pi[i], p1 = p0 + 0.5 * c * Q[i], p2 = p1 + c * tau[i];
        const double p3 = p2 + h2 * (Q[i] + D[i] * (p2 * im[i] - u0[i])) / (1 - h2 * D[i] * im[i]);
        W += im[i] * ((p1 - p0) * (p1 + p0) + (p3 - p2) * (p3 + p2));
        Pi[i] = p3;
    }
    for (int i = 0; s->trans && i < n3; i++) {
        const double mi = s->inv_mass[i], m = s->rigid->mass[i / 3], q = Q[n3 + i], d = D[n3 + i], hm = 0.5 * c * mi;
        const double v0 = s->v[i], v1 = v0 + 0.5 * c * q * mi, v2 = v1 + c * F[i] * mi;
        const double v3 = v2 + hm * (q + d * (v2 - u0[n3 + i])) / (1 - hm * d);
        W += m * ((v1 - v0) * (v1 + v0) + (v3 - v2) * (v3 + v2));
        s->v[i] = v3;
    }
    s->work_done += 0.5 * W;
}

int lf_forced_trapezoid(lf_stepper *s, double t, double c, double *Pi, const double *tau, const double *F)
{
    const int vel = lf_forced_velocity(s);
    if (vel && (s->rigid->forcing_depends & LF_FORCING_DIAGONAL)) {
        const int n = nvel(s), n3 = 3 * s->nb;
        double *u0 = s->fwork, *D = u0 + n, *Q = D + n;
        for (int i = 0; i < n3; i++) u0[i] = Pi[i] * s->inv_inertia[i];
        if (s->trans) memcpy(u0 + n3, s->v, (size_t)n3 * sizeof *u0);
        int rc = eval_diagonal(s, t, u0, s->trans ? u0 + n3 : NULL, Q, D);
        if (rc == LF_OK) diagonal_trapezoid(s, c, Pi, tau, F, u0, Q, D);
        return rc == LF_OK ? lf_forced_check_work(s) : rc;
    }
    int rc = vel ? lf_forced_explicit(s, t, 0.5 * c, Pi, 1) : LF_OK;
    if (rc != LF_OK) return rc;
    for (int b = 0; b < s->nb; b++) lf_v3_axpy(Pi + 3 * b, c, tau + 3 * b, Pi + 3 * b);
    lf_translate_kick(s, c, F);
    return vel ? lf_forced_implicit(s, t, 0.5 * c, Pi, 1) : lf_forced_explicit(s, t, c, Pi, 1);
}
