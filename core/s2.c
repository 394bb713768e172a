/* lieflow — the unit sphere S^2 (conventions in s2.h). */
#include "s2.h"

#include "linalg.h"

double lf_s2_dist(const double p[3], const double q[3])
{
    /* The chord |p - q| = 2 sin(d/2) has no cancellation for close points (unlike acos(p.q));
     * clamp for antipodal points whose chord rounds above 2. */
    double d[3];
    lf_v3_sub(p, q, d);
    double h = 0.5 * lf_v3_norm(d);
    return 2 * asin(h < 1 ? h : 1);
}

int lf_s2_midpoint(const double p[3], const double q[3], double m[3], lf_error *err)
{
    double s[3];
    lf_v3_add(p, q, s);
    double n = lf_v3_norm(s);
    if (!(n >= 1e-12))
        return lf_error_set(err, LF_EDOMAIN, "s2 midpoint: antipodal points (|p + q| = %.3g < 1e-12)", n);
    lf_v3_scale(s, 1 / n, m);
    return LF_OK;
}

void lf_s2_retract(const double x[3], const double v[3], double y[3])
{
    double s[3];
    lf_v3_add(x, v, s);
    lf_v3_scale(s, 1 / lf_v3_norm(s), y);
}

int lf_s2_retract_inv(const double x[3], const double y[3], double v[3], lf_error *err)
{
    double d = lf_v3_dot(x, y);
    if (!(d > 0))
        return lf_error_set(err, LF_EDOMAIN, "s2 retract_inv: x.y = %.3g <= 0 (y outside the chart at x)", d);
    lf_v3_axpy(y, -d, x, v); /* v = (y - d x)/d */
    lf_v3_scale(v, 1 / d, v);
    return LF_OK;
}

void lf_s2_tangent(const double x[3], const double v[3], double t[3])
{
    lf_v3_axpy(v, -lf_v3_dot(x, v), x, t);
}

void lf_s2_exp(const double x[3], const double v[3], double y[3])
{
    double a = lf_v3_norm(v), z = a * a;
    double f = a < 1e-4 ? 1 - z / 6 : sin(a) / a; /* sin(a)/a */
    double r[3];
    lf_v3_scale(x, cos(a), r);
    lf_v3_axpy(r, f, v, y);
}
