/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — time-reversible adaptive steps for symmetric methods (lf_stepper_opts.adapt).
 *
 * After Hairer & Söderlind, "Explicit, time reversible, adaptive step size control", SIAM J. Sci.
 * Comput. 26 (2005) 1838: the time step is h/rho with a step density rho integrated along with the
 * solution in a fictitious time tau (dt/dtau = 1/rho), so that rho(t) = Q(y(t))/Q(y0) on the exact
 * flow for a monitor Q (a rate, 1/time): the steps follow Q, and h is the step at the initial state.
 * Hairer & Söderlind integrate d rho/d tau = G(y) = d/dt ln Q; we integrate its logarithm,
 *     d ln rho / d tau = G(y) = (Q(y0)/Q(y)) d/dt ln Q(y(t)),
 * (on the exact flow ln rho - ln Q(y) is constant, as theirs), by the symmetric composition
 *     rho* = rho e^{h/2 G(y_n)},   y_{n+1} = Phi_{h/rho*}(y_n),   rho' = rho* e^{h/2 G(y_{n+1})},
 * explicit, symmetric whenever the method Phi is (Phi_{-t} o Phi_t = id: from (y_{n+1}, rho') the
 * step -h recovers rho*, then y_n = Phi_{-h/rho*}(y_{n+1}), then rho), and rho > 0 at any h. The
 * additive form rho* = rho + h/2 G(y_n) (the paper's, staggered) failed where Q drops by a large
 * factor within a step: on the stress test with vlv, h = 0.125, rho became negative at t = 1453.
 * G depends on y alone, so any monitor keeps the step symmetric; how well rho tracks Q depends on
 * G's accuracy only.
 *
 * Monitors. The default, for rigid bodies: Q^2 = sum_b (|w_b|^2 + |J_b^-1 tau_b|): the inverse time
 * to turn a body by a radian at its speed, or from rest under its torque (angular acceleration
 * J^-1 tau). Its rate of change needs d tau/dt = the torque's derivative along R_b exp(t hat(w_b)),
 * taken as a central difference (two torque evaluations per step, at R_b exp(+-delta hat w_b),
 * delta |w|max = 1e-3; bodies that translate move their centres of mass along the flow too,
 * x_b +- delta v_b, as the torque depends on them); the torque at the state itself is the method's
 * cached one when it has it. The monitor measures the rotation only: translation has no time scale
 * of its own (|v|/|x| needs an origin and a length), so a problem whose steps should follow an orbit
 * gives a monitor of its own.
 * G need not be accurate, but it must be a smooth function of the state, and odd under time
 * reversal, G(R, -w) = -G(R, w), as d/dt ln Q is:
 *  - a smaller delta amplifies the roundings of the state into G and the steps, which then do not
 *    retrace themselves to round-off (delta |w| = 1e-7: 3e-10 after 50 steps there and back);
 *  - a forward difference is not odd (its O(delta) error is even in w): the step is still
 *    symmetric, but no longer reversible in the sense of Hairer & Söderlind's analysis, and the
 *    Coulomb wall's energy drifted (dlm, h = 0.2, T = 2e4: drift statistic 3.0; 0.2 with the central
 *    difference; tests/c/test_adapt.c).
 * A monitor given by the user (lf_monitor_fn; any system): G by a central difference of ln Q along
 * the flow, ln Q(exp(+-delta f(y)) y), delta max|f| = 1e-3 (two monitor and one f evaluation). */
#include <math.h>
#include <string.h>

#include "base/linalg.h"
#include "method/method_internal.h"
#include "lie/so3.h"

int lf_adapt_accepts(const lf_stepper *s, lf_error *err)
{
    const lf_method_info *mi = &s->method->info;
    if (mi->adaptive)
        return lf_error_set(err, LF_EINVAL, "adapt: %s chooses its own step sizes (an embedded error estimate); "
                                            "reversible adaptive steps are for fixed-step symmetric methods", mi->name);
    if (!mi->symmetric)
        return lf_error_set(err, LF_EINVAL, "adapt: %s is not symmetric (a step h then -h does not return), so its "
                                            "adaptive steps would not be reversible; use a symmetric method (vlv, dlm, "
                                            "split_exact, their compositions, rkmk_gl4_sym, ...)", mi->name);
    if (s->method->cls->process)
        return lf_error_set(err, LF_EINVAL, "adapt: %s is a processed method, whose kernel runs in variables that "
                                            "depend on the step size (a change of step costs two processor maps); "
                                            "reversible adaptive steps need a method without processing", mi->name);
    if (s->lanes > 1)
        return lf_error_set(err, LF_EINVAL, "adapt: each state takes its own steps; not with lanes (%d lanes)",
                            s->lanes);
    if (!s->opts.monitor && s->nb == 0)
        return lf_error_set(err, LF_EINVAL, "adapt: the default monitor (torque) is for rigid bodies; a %s system "
                                            "needs a monitor of its own", lf_system_kind(s->sys));
    return LF_OK;
}

size_t lf_adapt_work_doubles(const lf_stepper *s) { return 21 * (size_t)s->nb + (size_t)s->np + (size_t)s->nd; }

/* G (the header's, log-rate scaled by Q(y0)/Q(y)) from Q and dQ/dt at y; sets Q(y0) at the first call
 * after set_state, which is at the initial state */
static double log_rate(lf_stepper *s, double Q, double dQ)
{
    if (s->q0 == 0) s->q0 = Q;
    return Q > 0 ? s->q0 * dQ / (Q * Q) : 0;
}

/* G of the torque monitor at y (time unused: the torque is autonomous). tau_known: the method's
 * cache holds the torque at y. */
static int torque_rate(lf_stepper *s, const double *y, int tau_known, double *G)
{
    const int nb = s->nb;
    const double *R = y, *w = y + 9 * nb;
    double *tau = s->adapt_work, *Rp = tau + 3 * nb, *taup = Rp + 9 * nb, *taum = taup + 3 * nb, *xp = taum + 3 * nb;
    double *const x = s->x; /* NULL unless the bodies translate */
    const double *t0 = tau;
    int rc;
    if (tau_known && s->method->info.form == LF_FORM_RIGID) t0 = s->tau;
    else if ((rc = lf_stepper_torque(s, R, tau)) != LF_OK) return rc;
    double wmax = 0;
    for (int i = 0; i < 3 * nb; i++) wmax = fmax(wmax, fabs(w[i]));
    const double delta = wmax > 0 ? 1e-3 / wmax : 0;
    for (int sign = 1; delta > 0 && sign >= -1; sign -= 2) {
        memcpy(Rp, R, 9 * (size_t)nb * sizeof(double));
        for (int b = 0; b < nb; b++) {
            double e[3];
            lf_v3_scale(w + 3 * b, sign * delta, e);
            lf_so3_rmul_exp(Rp + 9 * b, e);
        }
        if (x) { /* the torque at the centres of mass moved along the flow: x +- delta v */
            for (int i = 0; i < 3 * nb; i++) xp[i] = x[i] + sign * delta * s->v[i];
            s->x = xp;
        }
        rc = lf_stepper_torque(s, Rp, sign > 0 ? taup : taum);
        s->x = x;
        if (rc != LF_OK) return rc;
    }
    double q2 = 0, dq2 = 0;
    for (int b = 0; b < nb; b++) {
        const double *J = s->J + 3 * b, *wb = w + 3 * b, *tb = t0 + 3 * b;
        double Jw[3], wdot[3], a[3], adot[3] = {0, 0, 0};
        lf_v3_mul(J, wb, Jw);
        lf_v3_cross(Jw, wb, wdot);
        lf_v3_add(wdot, tb, wdot);
        lf_v3_div(wdot, J, wdot);
        lf_v3_div(tb, J, a);
        if (delta > 0)
            for (int k = 0; k < 3; k++) adot[k] = (taup[3 * b + k] - taum[3 * b + k]) / (2 * delta * J[k]);
        const double an = lf_v3_norm(a);
        q2 += lf_v3_dot(wb, wb) + an;
        dq2 += 2 * lf_v3_dot(wb, wdot) + (an > 0 ? lf_v3_dot(a, adot) / an : 0);
    }
    const double Q = sqrt(q2);
    *G = log_rate(s, Q, Q > 0 ? dq2 / (2 * Q) : 0);
    return LF_OK;
}

static int monitor_value(lf_stepper *s, double t, const double *y, double *Q)
{
    int rc = s->opts.monitor(s->opts.monitor_ctx, s->sys, t, y, Q, &s->err);
    if (rc != LF_OK) return rc;
    if (!(*Q > 0) || !isfinite(*Q))
        return lf_error_set(&s->err, LF_EDOMAIN, "adapt: the monitor returned %g at t=%.17g (it must be a positive "
                                                 "finite rate)", *Q, t);
    return LF_OK;
}

/* G of a user monitor at (t, y): d/dt ln Q along exp(t f(y)) y, central difference */
static int monitor_rate(lf_stepper *s, double t, const double *y, double *G)
{
    const int np = s->np, nd = s->nd;
    double *xi = s->adapt_work, *yp = xi + nd, Qp, Qm;
    int rc = lf_stepper_f(s, t, y, xi);
    if (rc != LF_OK) return rc;
    double xm = 0;
    for (int i = 0; i < nd; i++) xm = fmax(xm, fabs(xi[i]));
    if (isnan(xm)) return lf_error_set(&s->err, LF_EDOMAIN, "adapt: the vector field is not finite at t=%.17g", t);
    if (xm == 0) { /* at rest: Q is constant along the (trivial) flow */
        if ((rc = monitor_value(s, t, y, &Qp)) != LF_OK) return rc;
        *G = log_rate(s, Qp, 0);
        return LF_OK;
    }
    const double delta = 1e-3 / xm;
    for (int sign = 1; sign >= -1; sign -= 2) {
        for (int i = 0; i < nd; i++) xi[i] *= sign == 1 ? delta : -1;
        memcpy(yp, y, (size_t)np * sizeof(double));
        lf_manifold_act(s->M, xi, yp);
        rc = monitor_value(s, t + sign * delta, yp, sign == 1 ? &Qp : &Qm);
        if (rc != LF_OK) return rc;
    }
    const double Q = sqrt(Qp * Qm); /* Q(y) to O(delta^2), even under time reversal */
    *G = log_rate(s, Q, Q * (log(Qp) - log(Qm)) / (2 * delta));
    return LF_OK;
}

static int rate(lf_stepper *s, double t, const double *y, int tau_known, double *G)
{
    return s->opts.monitor ? monitor_rate(s, t, y, G) : torque_rate(s, y, tau_known, G);
}

static int density_error(lf_stepper *s, double rho, double h)
{
    return lf_error_set(&s->err, LF_EDOMAIN, "adapt: the step density became %g at t=%.17g (h=%g)", rho, s->t, h);
}

/* G at the current state (cached between steps) */
static int start_rate(lf_stepper *s)
{
    if (s->g_valid) return LF_OK;
    int rc = rate(s, s->t, s->y, s->cache_valid, &s->g);
    if (rc == LF_OK) s->g_valid = 1;
    return rc;
}

int lf_adapt_step(lf_stepper *s, double h)
{
    int rc;
    if ((rc = start_rate(s)) != LF_OK) return rc;
    const double rho_half = s->rho * exp(0.5 * h * s->g), dt = h / rho_half;
    if (!(rho_half > 0) || !isfinite(dt)) return density_error(s, rho_half, h);
    if ((rc = s->base_step(s, dt)) != LF_OK) return rc;
    s->h_taken = dt;
    for (int i = 0; i < s->np; i++)
        if (!isfinite(s->y[i])) return LF_OK; /* the stepper reports it and rolls back */
    double g1;
    if ((rc = rate(s, s->t + dt, s->y, s->cache_set, &g1)) != LF_OK) return rc;
    const double rho1 = rho_half * exp(0.5 * h * g1);
    if (!(rho1 > 0) || !isfinite(rho1)) return density_error(s, rho1, h);
    s->rho = rho1;
    s->g = g1;
    return LF_OK;
}

/* The fictitious step x with x / (rho e^{x G/2}) = rest (the last step of an advance): Newton on
 * x e^{-x G/2} = rest rho from x = rest rho; the function increases while x G/2 < 1. */
static double last_step(double rest, double rho, double G, double h)
{
    double x = rest * rho;
    for (int it = 0; it < 30; it++) {
        const double e = exp(-0.5 * x * G), f = x * e - rest * rho, df = e * (1 - 0.5 * x * G);
        if (!(df > 0)) break;
        const double dx = f / df;
        x -= dx;
        if (fabs(dx) <= 1e-15 * fabs(x)) break;
    }
    return x / h > 0 && fabs(x) <= fabs(h) * (1 + 1e-9) ? x : rest * rho;
}

int lf_adapt_next_step(lf_stepper *s, double rest, double h, double *x, int *last)
{
    int rc;
    if ((rc = start_rate(s)) != LF_OK) return rc;
    const double rho_half = s->rho * exp(0.5 * h * s->g);
    *last = !(h / rho_half / rest < 1 - 1e-12);
    *x = *last ? last_step(rest, s->rho, s->g, h) : h;
    return LF_OK;
}
