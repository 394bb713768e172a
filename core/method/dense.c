/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — dense output on the manifold for every method (method.h: lf_stepper_set_dense,
 * lf_stepper_dense).
 *
 * Between the two ends (t0, y0), (t1, y1) of the last step, h = t1 - t0, the state at t = t0 + s h is
 * y(s) = act(theta(s), y0) with theta the cubic Hermite interpolant of
 *   theta(0) = 0,       theta'(0) = h xi0,                     xi0 = f(t0, y0),
 *   theta(1) = delta,   theta'(1) = h dexpinv_delta(xi1),      xi1 = f(t1, y1), act(delta, y0) = y1
 * (y' = xi . y, the system's Lie-group ODE form; the manifold's dexpinv takes the side of each factor's
 * action, manifold.h). d/ds act(theta, y0) = dexp_theta(theta') . y, so the curve has the step's values and
 * the ODE's velocities at both ends: a Hermite interpolant, whose error is O(h^4) when the ends are exact
 * (order 3; the method's own error at the ends comes on top). theta(s) = h H10(s) xi0 + H01(s) delta +
 * h H11(s) d1 with H10 = s^3 - 2 s^2 + s, H01 = 3 s^2 - 2 s^3, H11 = s^3 - s^2 (Hairer, Norsett & Wanner,
 * Solving ODEs I, II.6, for the classical case; the Lie-algebra form as in the continuous extensions of
 * RKMK methods, Engo 2000, "On the construction of geometric integrators in the RKMK class"). The action
 * keeps y on the manifold to round-off. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "method/method_internal.h"

int lf_stepper_set_dense(lf_stepper *s, int on)
{
    if (!s) return LF_EINVAL;
    if (!on) {
        free(s->dense_buf);
        s->dense_buf = s->y_prev = NULL;
        s->prev_ok = s->xi_ok = s->xi0_ok = 0;
        return LF_OK;
    }
    if (s->lanes > 1)
        return lf_error_set(&s->err, LF_EINVAL, "%s: dense output is not available with lanes (step one lane)",
                            s->method->info.name);
    if (s->method->cls->process)
        return lf_error_set(&s->err, LF_EINVAL,
                            "%s: dense output is not available for processed methods (their steps show a "
                            "post-processed state): use the kernel's method",
                            s->method->info.name);
    if (s->dense_buf) return LF_OK;
    const size_t np = (size_t)s->np, nd = (size_t)s->nd;
    s->dense_buf = malloc((np + 4 * nd) * sizeof(double));
    if (!s->dense_buf) return lf_error_set(&s->err, LF_ENOMEM, "dense output: out of memory");
    s->y_prev = s->dense_buf;
    s->xi0 = s->y_prev + np;
    s->xi1 = s->xi0 + nd;
    s->delta = s->xi1 + nd;
    s->d1 = s->delta + nd;
    s->prev_ok = s->xi_ok = s->xi0_ok = 0;
    return LF_OK;
}

/* f at both ends, delta and d1 of the last step */
static int prepare(lf_stepper *s)
{
    int rc = s->xi0_ok ? LF_OK : lf_stepper_f(s, s->t_prev, s->y_prev, s->xi0);
    if (rc == LF_OK) rc = lf_stepper_f(s, s->t, s->y, s->xi1);
    if (rc == LF_OK) rc = lf_manifold_diff(s->M, s->y_prev, s->y, s->delta, &s->err);
    if (rc == LF_OK) rc = lf_manifold_dexpinv(s->M, s->delta, s->xi1, 0, s->d1, &s->err);
    s->xi_ok = rc == LF_OK;
    return rc;
}

int lf_stepper_dense(lf_stepper *s, double t, double *y)
{
    if (!s || !y) return LF_EINVAL;
    if (!s->dense_buf)
        return lf_error_set(&s->err, LF_EINVAL, "dense output is off (lf_stepper_set_dense; Lua: option dense = true)");
    if (!s->prev_ok)
        return lf_error_set(&s->err, LF_EINVAL, "dense output: no step since the state was set (t = %.17g)", s->t);
    const double t0 = s->t_prev, t1 = s->t, h = t1 - t0, slack = 4e-16 * (fabs(t0) + fabs(t1));
    if (!(t >= fmin(t0, t1) - slack && t <= fmax(t0, t1) + slack))
        return lf_error_set(&s->err, LF_EDOMAIN, "dense output at t = %.17g: outside the last step [%.17g, %.17g]", t,
                            fmin(t0, t1), fmax(t0, t1));
    if (!s->xi_ok) {
        const int rc = prepare(s);
        if (rc != LF_OK) return rc;
    }
    const double a = fmin(fmax((t - t0) / h, 0), 1), a2 = a * a, a3 = a2 * a;
    const double H10 = h * (a3 - 2 * a2 + a), H01 = 3 * a2 - 2 * a3, H11 = h * (a3 - a2);
    const int nd = s->nd;
    double theta[nd];
    for (int i = 0; i < nd; i++) theta[i] = H10 * s->xi0[i] + H01 * s->delta[i] + H11 * s->d1[i];
    memcpy(y, s->y_prev, (size_t)s->np * sizeof *y);
    if (a == 1) memcpy(y, s->y, (size_t)s->np * sizeof *y); /* the step's end itself, bit for bit */
    else if (a != 0) lf_manifold_act(s->M, theta, y);
    return LF_OK;
}
