/* lieflow — time-reversible adaptive steps for symmetric methods (lf_stepper_opts.adapt).
 *
 * Hairer & Söderlind, "Explicit, time reversible, adaptive step size control", SIAM J. Sci. Comput.
 * 26 (2005) 1838: the time step is h/rho with a step density rho that is integrated along with the
 * solution in the fictitious time tau (dt/dtau = 1/rho),
 *     d rho / d tau = G(y),   G(y) = d/dt ln Q(y(t)) = grad Q(y) . f(y) / Q(y),
 * so that rho(t) = Q(y(t)) / Q(y0) on the exact flow: the steps follow a monitor Q (a rate, 1/time)
 * and h is the step at the initial state. The step of the fictitious time h is the symmetric
 * composition
 *     rho* = rho + h/2 G(y_n),   y_{n+1} = Phi_{h/rho*}(y_n),   rho' = rho* + h/2 G(y_{n+1}),
 * explicit, and symmetric whenever the method Phi is (Phi_{-t} o Phi_t = id): from (y_{n+1}, rho')
 * the step -h recovers rho*, then y_n = Phi_{-h/rho*}(y_{n+1}), then rho. (The paper staggers rho
 * at half steps, rho_{n+1/2} = rho_{n-1/2} + h G(y_n); with rho_n = rho_{n-1/2} + h/2 G(y_n) the two
 * are the same iteration.) G depends on y alone, so any monitor keeps the step reversible; how well
 * rho tracks Q depends on G's accuracy only.
 *
 * Monitors. The default, for rigid bodies: Q^2 = sum_b (|w_b|^2 + |J_b^-1 tau_b|): the inverse time
 * to turn a body by a radian at its speed, or from rest under its torque (angular acceleration
 * J^-1 tau). Its rate of change needs d tau/dt = the torque's derivative along R_b exp(t hat(w_b)),
 * taken as a central difference (two torque evaluations per step, at R_b exp(+-delta hat w_b),
 * delta |w|max = 1e-3); the torque at the state itself is the method's cached one when it has it.
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

#include "linalg.h"
#include "method_internal.h"
#include "so3.h"

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
    if (s->lanes > 1)
        return lf_error_set(err, LF_EINVAL, "adapt: each state takes its own steps; not with lanes (%d lanes)",
                            s->lanes);
    if (!s->opts.monitor && s->nb == 0)
        return lf_error_set(err, LF_EINVAL, "adapt: the default monitor (torque) is for rigid bodies; a %s system "
                                            "needs a monitor of its own", lf_system_kind(s->sys));
    return LF_OK;
}

size_t lf_adapt_work_doubles(const lf_stepper *s) { return 18 * (size_t)s->nb + (size_t)s->np + (size_t)s->nd; }

/* G of the torque monitor at y (time t unused: the torque is autonomous). tau_known: the method's
 * cache holds the torque at y. */
static int torque_rate(lf_stepper *s, const double *y, int tau_known, double *G)
{
    const int nb = s->nb;
    const double *R = y, *w = y + 9 * nb;
    double *tau = s->adapt_work, *Rp = tau + 3 * nb, *taup = Rp + 9 * nb, *taum = taup + 3 * nb;
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
            double x[3];
            lf_v3_scale(w + 3 * b, sign * delta, x);
            lf_so3_rmul_exp(Rp + 9 * b, x);
        }
        if ((rc = lf_stepper_torque(s, Rp, sign > 0 ? taup : taum)) != LF_OK) return rc;
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
    *G = q2 > 0 ? dq2 / (2 * q2) : 0;
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
    if (!(xm > 0)) {
        *G = 0;
        return isnan(xm) ? lf_error_set(&s->err, LF_EDOMAIN, "adapt: the vector field is not finite at t=%.17g", t)
                         : LF_OK;
    }
    const double delta = 1e-3 / xm;
    for (int sign = 1; sign >= -1; sign -= 2) {
        for (int i = 0; i < nd; i++) xi[i] *= sign == 1 ? delta : -1;
        memcpy(yp, y, (size_t)np * sizeof(double));
        lf_manifold_act(s->M, xi, yp);
        rc = monitor_value(s, t + sign * delta, yp, sign == 1 ? &Qp : &Qm);
        if (rc != LF_OK) return rc;
    }
    *G = (log(Qp) - log(Qm)) / (2 * delta);
    return LF_OK;
}

static int rate(lf_stepper *s, double t, const double *y, int tau_known, double *G)
{
    return s->opts.monitor ? monitor_rate(s, t, y, G) : torque_rate(s, y, tau_known, G);
}

static int density_error(lf_stepper *s, double rho, double h)
{
    return lf_error_set(&s->err, LF_EDOMAIN, "adapt: the step density became %g at t=%.17g (the monitor changes "
                                             "faster than steps of h=%g can follow); take a smaller h", rho, s->t, h);
}

int lf_adapt_step(lf_stepper *s, double h)
{
    int rc;
    if (!s->g_valid) {
        if ((rc = rate(s, s->t, s->y, s->cache_valid, &s->g)) != LF_OK) return rc;
        s->g_valid = 1;
    }
    const double rho_half = s->rho + 0.5 * h * s->g, dt = h / rho_half;
    if (!(rho_half > 0) || !isfinite(dt)) return density_error(s, rho_half, h);
    if ((rc = s->base_step(s, dt)) != LF_OK) return rc;
    s->h_taken = dt;
    for (int i = 0; i < s->np; i++)
        if (!isfinite(s->y[i])) return LF_OK; /* the stepper reports it and rolls back */
    double g1;
    if ((rc = rate(s, s->t + dt, s->y, s->cache_set, &g1)) != LF_OK) return rc;
    const double rho1 = rho_half + 0.5 * h * g1;
    if (!(rho1 > 0) || !isfinite(rho1)) return density_error(s, rho1, h);
    s->rho = rho1;
    s->g = g1;
    return LF_OK;
}

int lf_adapt_advance(lf_stepper *s, double T, double h, long max_steps)
{
    for (long k = 0; k < max_steps; k++) {
        const double rest = T - s->t;
        if (fabs(rest) <= 4e-16 * fabs(T)) break;
        int rc;
        if (!s->g_valid) {
            if ((rc = rate(s, s->t, s->y, s->cache_valid, &s->g)) != LF_OK) return rc;
            s->g_valid = 1;
        }
        const double rho_half = s->rho + 0.5 * h * s->g;
        if (!(rho_half > 0)) return density_error(s, rho_half, h);
        if (h / rho_half / rest < 1 - 1e-12) {
            if ((rc = lf_stepper_step(s, h, 1)) != LF_OK) return rc;
            continue;
        }
        /* the last step: the fictitious step hl with hl / (rho + hl G/2) = rest (in (0, h]) */
        double hl = rest * s->rho / (1 - 0.5 * rest * s->g);
        if (!(hl / h > 0) || fabs(hl) > fabs(h) * (1 + 1e-9)) hl = rest * rho_half;
        if ((rc = lf_stepper_step(s, hl, 1)) != LF_OK) return rc;
        s->t = T;
        s->t_comp = 0;
        break;
    }
    return LF_OK;
}
