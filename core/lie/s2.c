/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the unit sphere S^2 (conventions in s2.h). */
#include "lie/s2.h"

#include "base/linalg.h"

/* y = s/|s| for any finite nonzero s (0 for s = 0): s is scaled by a power of two first (exact),
 * so that neither |s| overflows (|s| ~ 1e200) nor the division loses digits in subnormal numbers
 * (|s| ~ 1e-320, where |s| itself would be rounded to few bits); then s/n, not s (1/n). */
static int normalize(const double s[3], double y[3])
{
    double m = fmax(fmax(fabs(s[0]), fabs(s[1])), fabs(s[2]));
    if (!(m > 0) || !isfinite(m)) return 0;
    int e;
    frexp(m, &e);
    double t[3];
    for (int i = 0; i < 3; i++) t[i] = ldexp(s[i], -e);
    double n = lf_v3_norm(t);
    for (int i = 0; i < 3; i++) y[i] = t[i] / n;
    return 1;
}

double lf_s2_dist(const double p[3], const double q[3])
{
    /* For unit p, q: |p - q| = 2 sin(d/2) and |p + q| = 2 cos(d/2), so d = 2 asin(|p - q|/2)
     * = 2 atan2(|p - q|, |p + q|). The atan2 form keeps full accuracy at both ends (asin loses
     * half the digits near antipodal points; acos(p.q) near coincident ones). */
    double a[3], b[3];
    lf_v3_sub(p, q, a);
    lf_v3_add(p, q, b);
    return 2 * atan2(lf_v3_norm(a), lf_v3_norm(b));
}

int lf_s2_midpoint(const double p[3], const double q[3], double m[3], lf_error *err)
{
    double s[3];
    lf_v3_add(p, q, s);
    double n = lf_v3_norm(s);
    if (!(n >= 1e-12))
        return lf_error_set(err, LF_EDOMAIN, "s2 midpoint: antipodal points (|p + q| = %.3g < 1e-12)", n);
    normalize(s, m);
    return LF_OK;
}

int lf_s2_retract(const double x[3], const double v[3], double y[3], lf_error *err)
{
    double s[3];
    lf_v3_add(x, v, s);
    if (!lf_v3_isfinite(s))
        return lf_error_set(err, LF_EDOMAIN, "s2 retract: x + v overflows (|v| = %.3g)", lf_v3_norm(v));
    if (!normalize(s, y))
        return lf_error_set(err, LF_EDOMAIN, "s2 retract: x + v = 0 (v = -x): the retraction is undefined");
    return LF_OK;
}

int lf_s2_retract_inv(const double x[3], const double y[3], double v[3], lf_error *err)
{
    double d = lf_v3_dot(x, y);
    if (!(d > 0))
        return lf_error_set(err, LF_EDOMAIN, "s2 retract_inv: x.y = %.3g <= 0 (y outside the chart at x)", d);
    double w[3];
    lf_v3_axpy(y, -d, x, w); /* v = (y - d x)/d */
    for (int i = 0; i < 3; i++) w[i] /= d;
    if (!lf_v3_isfinite(w)) /* d > 0 but so small (subnormal) that the division overflows */
        return lf_error_set(err, LF_EDOMAIN, "s2 retract_inv: x.y = %.3g: y is at the edge of the chart at x "
                                              "(the tangent vector overflows)", d);
    lf_v3_copy(w, v);
    return LF_OK;
}

void lf_s2_tangent(const double x[3], const double v[3], double t[3])
{
    /* Twice (Gram-Schmidt with reorthogonalization): for v nearly normal to the sphere the first
     * pass leaves a residue of size u|v| with a normal part as large as itself; the second pass
     * makes t orthogonal to x to working precision. */
    double r[3];
    lf_v3_axpy(v, -lf_v3_dot(x, v), x, r);
    lf_v3_axpy(r, -lf_v3_dot(x, r), x, t);
}

void lf_s2_exp(const double x[3], const double v[3], double y[3])
{
    double a = lf_v3_norm(v), z = a * a;
    double f = a < 1e-4 ? 1 - z / 6 : sin(a) / a; /* sin(a)/a */
    double r[3];
    lf_v3_scale(x, cos(a), r);
    lf_v3_axpy(r, f, v, y);
}
