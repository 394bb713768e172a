/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — unit quaternions [w, x, y, z] (conventions in quat.h). */
#include "lie/quat.h"

#include <math.h>

#include "base/linalg.h"

void lf_quat_mul(const double p[4], const double q[4], double r[4])
{
    /* (a, u)(b, v) = (a b - u.v, a v + b u + u x v) */
    double w = p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3];
    double x = p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2];
    double y = p[0] * q[2] + p[2] * q[0] + p[3] * q[1] - p[1] * q[3];
    double z = p[0] * q[3] + p[3] * q[0] + p[1] * q[2] - p[2] * q[1];
    r[0] = w; r[1] = x; r[2] = y; r[3] = z;
}

void lf_quat_conj(const double q[4], double r[4])
{
    r[0] = q[0]; r[1] = -q[1]; r[2] = -q[2]; r[3] = -q[3];
}

void lf_quat_to_matrix(const double q[4], double R[9])
{
    /* Euler–Rodrigues with s = 2/|q|^2, which is the same as normalizing q first. */
    double w = q[0], x = q[1], y = q[2], z = q[3];
    double n2 = w * w + x * x + y * y + z * z;
    if (!(n2 >= 0x1p-968 && n2 <= 0x1.fffffffffffffp+1023)) {
        /* |q|^2 over- or underflows: scale q by a power of two first (R does not depend on |q|) */
        double m = fmax(fmax(fabs(w), fabs(x)), fmax(fabs(y), fabs(z)));
        if (m > 0 && isfinite(m)) {
            int e;
            frexp(m, &e);
            w = ldexp(w, -e); x = ldexp(x, -e); y = ldexp(y, -e); z = ldexp(z, -e);
            n2 = w * w + x * x + y * y + z * z;
        }
    }
    double s = 2 / n2;
    R[0] = 1 - s * (y * y + z * z); R[1] = s * (x * y - w * z);     R[2] = s * (x * z + w * y);
    R[3] = s * (x * y + w * z);     R[4] = 1 - s * (x * x + z * z); R[5] = s * (y * z - w * x);
    R[6] = s * (x * z - w * y);     R[7] = s * (y * z + w * x);     R[8] = 1 - s * (x * x + y * y);
}

void lf_quat_from_matrix(const double R[9], double q[4])
{
    /* Shepperd: 4 w^2 = 1 + tr R, 4 x^2 = 1 + R11 - R22 - R33, ...; take the square root of
     * the largest (>= 1/4 of the sum, so >= 1/4 in size) and the other components from the
     * off-diagonal sums/differences divided by it. */
    double tr = R[0] + R[4] + R[8];
    double c[4] = {tr, R[0], R[4], R[8]};
    int k = 0;
    for (int i = 1; i < 4; i++)
        if (c[i] > c[k]) k = i;
    double r;
    switch (k) {
    case 0:
        r = sqrt(1 + tr); /* = 2|w| */
        q[0] = 0.5 * r;
        q[1] = 0.5 * (R[7] - R[5]) / r; q[2] = 0.5 * (R[2] - R[6]) / r; q[3] = 0.5 * (R[3] - R[1]) / r;
        break;
    case 1:
        r = sqrt(1 + R[0] - R[4] - R[8]);
        q[1] = 0.5 * r;
        q[0] = 0.5 * (R[7] - R[5]) / r; q[2] = 0.5 * (R[1] + R[3]) / r; q[3] = 0.5 * (R[2] + R[6]) / r;
        break;
    case 2:
        r = sqrt(1 - R[0] + R[4] - R[8]);
        q[2] = 0.5 * r;
        q[0] = 0.5 * (R[2] - R[6]) / r; q[1] = 0.5 * (R[1] + R[3]) / r; q[3] = 0.5 * (R[5] + R[7]) / r;
        break;
    default:
        r = sqrt(1 - R[0] - R[4] + R[8]);
        q[3] = 0.5 * r;
        q[0] = 0.5 * (R[3] - R[1]) / r; q[1] = 0.5 * (R[2] + R[6]) / r; q[2] = 0.5 * (R[5] + R[7]) / r;
        break;
    }
    /* w >= 0; at w = 0 (angle pi) the first nonzero vector component is made positive, as in
     * lf_so3_log. Renormalize to absorb a slightly non-orthogonal R. */
    double sgn = q[0] < 0 ? -1 : 1;
    if (q[0] == 0)
        for (int i = 1; i < 4; i++)
            if (q[i] != 0) { sgn = q[i] < 0 ? -1 : 1; break; }
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int i = 0; i < 4; i++) q[i] *= sgn / n;
}

void lf_quat_exp(const double v[3], double q[4])
{
    double a = lf_v3_norm(v), z = a * a;
    /* sin(a)/a; below 1e-4 the series (next term a^4/120 < 1e-18) also covers a = 0 and an
     * underflowed |v|^2 */
    double f = a < 1e-4 ? 1 - z / 6 : sin(a) / a;
    q[0] = cos(a);
    lf_v3_scale(v, f, q + 1);
}

void lf_quat_log(const double q[4], double v[3])
{
    /* q = (cos a, sin a n)|q|, a = atan2(|u|, w) in [0, pi], v = a n = u a/|u|. */
    const double *u = q + 1;
    double w = q[0], un = hypot(hypot(u[0], u[1]), u[2]); /* hypot: no underflow for tiny u */
    if (w > 0) {
        /* a/|u| = (atan(r)/r)/w with r = |u|/w = tan a; series for small r (no 0/0). */
        double r = un / w, z = r * r;
        lf_v3_scale(u, r < 1e-4 ? (1 - z / 3 + z * z / 5) / w : atan2(un, w) / un, v);
    } else if (un > 0) {
        lf_v3_scale(u, atan2(un, w) / un, v);
    } else {
        /* q = (-|q|, 0): rotation by 2 pi, any v with |v| = pi; take the x axis */
        lf_v3_set(v, w < 0 ? 3.14159265358979323846 : 0, 0, 0);
    }
}
