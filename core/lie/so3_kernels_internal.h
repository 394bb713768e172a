/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow (internal) — the SO(3) kernels of the step functions as static inline code, so that the
 * lane loops of batched steppers (lanes_internal.h) inline and vectorize the same arithmetic the
 * one-body path runs (so3.c and so3_update.c call these too: one copy of each formula). */
#ifndef LF_SO3_KERNELS_INTERNAL_H
#define LF_SO3_KERNELS_INTERNAL_H

#include "base/linalg.h"

/* M = a I + b hat(x) + c hat(x)^2, using hat(x)^2 = x x^T - |x|^2 I; the diagonal is taken
 * as a - c (x_j^2 + x_k^2) so that a rotation about e_i keeps M_ii = a exactly. */
static inline void lf_so3_quadratic(const double x[3], double a, double b, double c, double M[9])
{
    double q[3] = {x[0] * x[0], x[1] * x[1], x[2] * x[2]};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) M[3 * i + j] = c * x[i] * x[j];
    M[0] = a - c * (q[1] + q[2]);
    M[4] = a - c * (q[0] + q[2]);
    M[8] = a - c * (q[0] + q[1]);
    M[1] -= b * x[2]; M[2] += b * x[1];
    M[3] += b * x[2]; M[5] -= b * x[0];
    M[6] -= b * x[1]; M[7] += b * x[0];
}

/* cay(x) = I + 4/(4 + |x|^2) (hat x + hat(x)^2 / 2) (so3.h) */
static inline void lf_so3_cay_kernel(const double x[3], double R[9])
{
    double q = 1 / (4 + lf_v3_dot(x, x));
    lf_so3_quadratic(x, 1.0, 4 * q, 2 * q, R);
}

/* R <- R (I + a hat x + b hat(x)^2) row by row: row r gains a (r x x) + b ((r x x) x x) (so3_update.c) */
static inline void lf_so3_rmul_increment(double R[9], const double x[3], double a, double b)
{
    for (int i = 0; i < 3; i++) {
        double *r = R + 3 * i, u[3], v[3];
        lf_v3_cross(r, x, u);
        lf_v3_cross(u, x, v);
        for (int k = 0; k < 3; k++) r[k] += a * u[k] + b * v[k];
    }
}

/* R <- R cay(x) */
static inline void lf_so3_rmul_cay_kernel(double R[9], const double x[3])
{
    double a = 4 / (4 + lf_v3_dot(x, x));
    lf_so3_rmul_increment(R, x, a, 0.5 * a);
}

#endif
