/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — attitude updates R <- R exp(hat x), exp(hat x) R, R cay(x) and v <- exp(hat x) v that keep R orthogonal to
 * round-off over long runs. Instead of the matrix product R F (F = exp or cay, entries of size 1,
 * several roundings per entry), each row r of R is advanced by the small increment of F - I:
 *     F - I = a hat(x) + b hat(x)^2,  row r of R (F - I) = a (r x x) + b ((r x x) x x),
 * with exp: a = sin t/t, b = (1 - cos t)/t^2 (t = |x|, series for small t) and
 * cay: a = 4/(4 + t^2), b = a/2 (so3.h). The increment is O(t), so its own rounding is O(t eps)
 * and the only O(eps) error left is the final addition. */
#include <math.h>

#include "base/linalg.h"
#include "lie/so3.h"
#include "lie/so3_kernels_internal.h"

/* Rodrigues' coefficients: exp(hat x) = I + a hat(x) + b hat(x)^2, a = sin t/t, b = (1 - cos t)/t^2
 * (t = |x|; Taylor series below t = 1e-3). */
static void exp_coeffs(const double x[3], double *a, double *b)
{
    double t2 = lf_v3_dot(x, x);
    if (t2 < 1e-6) { /* Taylor series to t^6: error below 1e-19 relative */
        *a = 1 - t2 / 6 * (1 - t2 / 20 * (1 - t2 / 42));
        *b = 0.5 * (1 - t2 / 12 * (1 - t2 / 30 * (1 - t2 / 56)));
    } else {
        double t = sqrt(t2), s = sin(0.5 * t);
        *a = sin(t) / t;
        *b = 2 * s * s / t2; /* (1 - cos t)/t^2 without cancellation */
    }
}

void lf_so3_rmul_exp(double R[9], const double x[3])
{
    double a, b;
    exp_coeffs(x, &a, &b);
    lf_so3_rmul_increment(R, x, a, b);
}

/* v <- v + a (x x v) + b x x (x x v) = exp(hat x) v (a, b of exp_coeffs) */
static void rotate_increment(const double x[3], double a, double b, double *v)
{
    double u[3], w[3];
    lf_v3_cross(x, v, u);
    lf_v3_cross(x, u, w);
    for (int k = 0; k < 3; k++) v[k] += a * u[k] + b * w[k];
}

void lf_so3_lmul_exp(double R[9], const double x[3])
{
    double a, b;
    exp_coeffs(x, &a, &b);
    for (int j = 0; j < 3; j++) { /* column j of exp(x) R = exp(x) (column j of R) */
        double c[3] = {R[j], R[3 + j], R[6 + j]};
        rotate_increment(x, a, b, c);
        R[j] = c[0];
        R[3 + j] = c[1];
        R[6 + j] = c[2];
    }
}

void lf_so3_rotate(const double x[3], double v[3])
{
    double a, b;
    exp_coeffs(x, &a, &b);
    rotate_increment(x, a, b, v);
}

void lf_so3_rmul_cay(double R[9], const double x[3]) { lf_so3_rmul_cay_kernel(R, x); }
