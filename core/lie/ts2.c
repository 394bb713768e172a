/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — TS^2 under SE(3) and its Sasaki distance (ts2.h). */
#include "lie/ts2.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <string.h>

#include "base/gsl_guard_internal.h"
#include "base/linalg.h"
#include "lie/se3.h"
#include "lie/so3.h"

void lf_ts2_act(const double xi[6], double y[6])
{
    double D[9], v[3], c[3];
    lf_so3_dexp(xi, D);
    lf_m3_apply(D, xi + 3, v); /* the translation part of exp(a, b) */
    lf_so3_rotate(xi, y);      /* q <- Q q */
    lf_so3_rotate(xi, y + 3);  /* w <- Q w */
    lf_v3_cross(v, y, c);      /* + v x Q q */
    lf_v3_add(y + 3, c, y + 3);
}

void lf_ts2_velocity(const double y[6], const double xi[6], double ydot[6])
{
    double c[3];
    lf_v3_cross(xi, y, ydot);
    lf_v3_cross(xi, y + 3, ydot + 3);
    lf_v3_cross(xi + 3, y, c);
    lf_v3_add(ydot + 3, c, ydot + 3);
}

int lf_ts2_diff(const double y0[6], const double y1[6], double xi[6], lf_error *err)
{
    double c[3];
    lf_v3_cross(y0, y1, c);
    double s = lf_v3_norm(c), d = lf_v3_dot(y0, y1);
    if (s == 0) {
        if (d < 0) return lf_error_set(err, LF_EDOMAIN, "ts2 diff: antipodal points q0 = -q1");
        xi[0] = xi[1] = xi[2] = 0;
    } else
        lf_v3_scale(c, atan2(s, d) / s, xi);
    double Qw[3], u[3], v[3], Di[9];
    lf_v3_copy(y0 + 3, Qw);
    lf_so3_rotate(xi, Qw);
    lf_v3_sub(y1 + 3, Qw, u);
    lf_v3_cross(y1, u, v); /* v x q1 = u for u tangent at q1 */
    lf_so3_dexpinv(xi, Di);
    lf_m3_apply(Di, v, xi + 3);
    return LF_OK;
}

void lf_ts2_bracket(const double x[6], const double y[6], double out[6]) { lf_se3_bracket(x, y, out); }

/* se(3)'s dexp: TS^2 moves under SE(3), and its algebra is se(3) with the same bracket (se3.h has
 * the block form [[D, 0], [D'(a)[b], D]] and its inverse) */
void lf_ts2_dexp(const double u[6], const double v[6], int inverse, int transpose, double out[6])
{
    lf_se3_dexp(u, v, inverse, transpose, out);
}

static double sphere_angle(const double a[3], const double b[3])
{
    double d[3], s[3];
    lf_v3_sub(a, b, d);
    lf_v3_add(a, b, s);
    return 2 * atan2(lf_v3_norm(d), lf_v3_norm(s));
}

double lf_ts2_dist(const double y0[6], const double y1[6])
{
    double a = sphere_angle(y0, y1), d[3];
    lf_v3_sub(y0 + 3, y1 + 3, d);
    return sqrt(a * a + lf_v3_dot(d, d));
}

/* ------------------------------------------------------------------------------------ Sasaki */

static int check_point(const double y[6], const char *what, lf_error *err)
{
    for (int k = 0; k < 6; k++)
        if (!isfinite(y[k])) return lf_error_set(err, LF_EINVAL, "%s is not finite", what);
    double dq = fabs(lf_v3_norm(y) - 1), dw = fabs(lf_v3_dot(y, y + 3));
    if (dq > 1e-9 || dw > 1e-9 * fmax(1, lf_v3_norm(y + 3)))
        return lf_error_set(err, LF_EINVAL, "%s is not on TS^2: ||q| - 1| = %.3g, |q . w| = %.3g (tolerance 1e-9)", what,
                            dq, dw);
    return LF_OK;
}

/* The rotation axis * angle taking q0 to q1 along the great circle (0 if q0 = q1). */
static int arc(const double q0[3], const double q1[3], double x[3], lf_error *err)
{
    double c[3];
    lf_v3_cross(q0, q1, c);
    double s = lf_v3_norm(c), d = lf_v3_dot(q0, q1);
    if (s == 0) {
        if (d < 0) return lf_error_set(err, LF_EDOMAIN, "Sasaki distance: antipodal base points q0 = -q1");
        x[0] = x[1] = x[2] = 0;
        return LF_OK;
    }
    lf_v3_scale(c, atan2(s, d) / s, x);
    return LF_OK;
}

int lf_ts2_sasaki_bound(const double y0[6], const double y1[6], double *d, lf_error *err)
{
    int rc = check_point(y0, "Sasaki distance: point 1", err);
    if (rc == LF_OK) rc = check_point(y1, "Sasaki distance: point 2", err);
    double x[3];
    if (rc == LF_OK) rc = arc(y0, y1, x, err);
    if (rc != LF_OK) return rc;
    double Pw[3], r[3];
    lf_v3_copy(y0 + 3, Pw);
    lf_so3_rotate(x, Pw); /* parallel transport along a great circle: the rotation about its normal */
    lf_v3_sub(Pw, y1 + 3, r);
    double th = lf_v3_norm(x);
    *d = sqrt(th * th + lf_v3_dot(r, r));
    return LF_OK;
}

static int geodesic_rhs(double t, const double z[], double dz[], void *p)
{
    (void)t; (void)p;
    const double *x = z, *v = z + 3, *u = z + 6, *U = z + 9;
    double vv = lf_v3_dot(v, v), uv = lf_v3_dot(u, v), Uv = lf_v3_dot(U, v);
    for (int i = 0; i < 3; i++) {
        dz[i] = v[i];
        dz[3 + i] = -vv * x[i] + uv * U[i] - Uv * u[i];
        dz[6 + i] = U[i] - uv * x[i];
        dz[9 + i] = -Uv * x[i];
    }
    return GSL_SUCCESS;
}

/* r (6) = (x(1) - q1, u(1) - w1) for unknowns p = (v0, U0) in the frame (e1, e2) at q0 */
static int shoot(gsl_odeiv2_driver *drv, const double y0[6], const double y1[6], const double e[6], const double p[4],
                 double r[6])
{
    double z[12], t = 0;
    for (int i = 0; i < 3; i++) {
        z[i] = y0[i];
        z[3 + i] = p[0] * e[i] + p[1] * e[3 + i];
        z[6 + i] = y0[3 + i];
        z[9 + i] = p[2] * e[i] + p[3] * e[3 + i];
    }
    gsl_odeiv2_driver_reset(drv);
    int s = gsl_odeiv2_driver_apply(drv, &t, 1.0, z);
    if (s != GSL_SUCCESS) return LF_ENOCONV;
    for (int i = 0; i < 3; i++) {
        r[i] = z[i] - y1[i];
        r[3 + i] = z[6 + i] - y1[3 + i];
    }
    return LF_OK;
}

int lf_ts2_sasaki_dist(const double y0[6], const double y1[6], double *d, lf_ts2_sasaki_info *info, lf_error *err)
{
    int rc = check_point(y0, "Sasaki distance: point 1", err);
    if (rc == LF_OK) rc = check_point(y1, "Sasaki distance: point 2", err);
    double x[3];
    if (rc == LF_OK) rc = arc(y0, y1, x, err);
    if (rc != LF_OK) return rc;
    if (info) *info = (lf_ts2_sasaki_info){0, 0};
    /* orthonormal frame at q0 */
    double e[6], a[3] = {1, 0, 0};
    if (fabs(y0[0]) > 0.6) a[0] = 0, a[1] = 1;
    lf_v3_cross(y0, a, e);
    lf_v3_scale(e, 1 / lf_v3_norm(e), e);
    lf_v3_cross(y0, e, e + 3);
    /* the start: the bound's curve. v0 = the arc's initial velocity x x q0, U0 = P^-1 w1 - w0 */
    double v0[3], Pw[3], U0[3], mx[3] = {-x[0], -x[1], -x[2]};
    lf_v3_cross(x, y0, v0);
    lf_v3_copy(y1 + 3, Pw);
    lf_so3_rotate(mx, Pw);
    lf_v3_sub(Pw, y0 + 3, U0);
    double p[4] = {lf_v3_dot(v0, e), lf_v3_dot(v0, e + 3), lf_v3_dot(U0, e), lf_v3_dot(U0, e + 3)};
    if (lf_v3_norm(x) == 0 && lf_v3_dot(U0, U0) == 0) { /* the same point */
        *d = 0;
        return LF_OK;
    }

    gsl_odeiv2_system sys = {geodesic_rhs, NULL, 12, NULL};
    lf_gsl_guard guard;
    lf_gsl_guard_begin(&guard);
    gsl_odeiv2_driver *drv = gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, 1e-2, 1e-13, 1e-13);
    gsl_matrix *J = gsl_matrix_alloc(6, 4);
    gsl_vector *tau = gsl_vector_alloc(4), *rv = gsl_vector_alloc(6), *dx = gsl_vector_alloc(4),
               *res = gsl_vector_alloc(6);
    rc = LF_OK;
    double r[6], rp[6], rn = INFINITY;
    int it;
    if (!drv || !J || !tau || !rv || !dx || !res) {
        rc = lf_error_set(err, LF_ENOMEM, "Sasaki distance: out of memory");
        goto done;
    }
    const double scale = fmax(1, sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]));
    for (it = 0; it < 40; it++) {
        if (shoot(drv, y0, y1, e, p, r) != LF_OK) {
            rc = lf_error_set(err, LF_ENOCONV, "Sasaki distance: the geodesic integration failed");
            goto done;
        }
        rn = 0;
        for (int i = 0; i < 6; i++) rn = fmax(rn, fabs(r[i]));
        if (rn <= 1e-13 * scale) break;
        for (int j = 0; j < 4; j++) {
            double pj = p[j], hj = 1e-7 * fmax(1e-3 * scale, fabs(pj));
            p[j] = pj + hj;
            int s = shoot(drv, y0, y1, e, p, rp);
            p[j] = pj;
            if (s != LF_OK) {
                rc = lf_error_set(err, LF_ENOCONV, "Sasaki distance: the geodesic integration failed");
                goto done;
            }
            for (int i = 0; i < 6; i++) gsl_matrix_set(J, (size_t)i, (size_t)j, (rp[i] - r[i]) / hj);
        }
        for (int i = 0; i < 6; i++) gsl_vector_set(rv, (size_t)i, -r[i]);
        if (gsl_linalg_QR_decomp(J, tau) != GSL_SUCCESS || gsl_linalg_QR_lssolve(J, tau, rv, dx, res) != GSL_SUCCESS) {
            rc = lf_error_set(err, LF_ENOCONV, "Sasaki distance: singular shooting Jacobian (far or conjugate points)");
            goto done;
        }
        double step = 0;
        for (int j = 0; j < 4; j++) {
            p[j] += gsl_vector_get(dx, (size_t)j);
            step = fmax(step, fabs(gsl_vector_get(dx, (size_t)j)));
        }
        if (!(step < 10 * scale)) {
            rc = lf_error_set(err, LF_ENOCONV, "Sasaki distance: the shooting diverged (far points: use the bound)");
            goto done;
        }
    }
    if (!(rn <= 1e-11 * scale))
        rc = lf_error_set(err, LF_ENOCONV, "Sasaki distance: shooting did not converge in %d iterations "
                                           "(|residual| = %.3g)", it, rn);
    else
        *d = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]);
    if (info) *info = (lf_ts2_sasaki_info){it, rn};
done:
    if (rc == LF_OK && guard.gsl_errno) rc = lf_error_set(err, LF_ENOCONV, "Sasaki distance: %s", guard.reason);
    lf_gsl_guard_end(&guard);
    if (drv) gsl_odeiv2_driver_free(drv);
    if (J) gsl_matrix_free(J);
    if (tau) gsl_vector_free(tau);
    if (rv) gsl_vector_free(rv);
    if (dx) gsl_vector_free(dx);
    if (res) gsl_vector_free(res);
    return rc;
}
