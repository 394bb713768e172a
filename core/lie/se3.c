/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — SE(3) maps (conventions, formulas and sources in se3.h). */
#include "lie/se3.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/linalg.h"
#include "lie/so3.h"

/* ---------------------------------------------------------------- coefficients of Q
 * Q = b hat(v) + c (A hat(v) + hat(v) A) + (a . v) (d1 A + d2 A^2), A = hat(a) (se3.h). With a = w:
 * (b, c, d1, d2) = (B, C, g1, g2); above AXIS_ANGLE (where t^5 and hat(w)^2 would soon overflow),
 * a = w/t (the unit axis) and (b, c, d1, d2) = (B, C t, g1 t^2, g2 t^3), whose closed forms neither
 * overflow nor underflow. The
 * closed forms of C, g1, g2 cancel near t = 0 (relative errors ~6u/t^2, ~24u/t^2, ~60u/t^2,
 * u = 2^-53): below the thresholds their Taylor series in z = t^2 are summed by Horner, with enough
 * terms that the truncation is < 2^-60 relative at the threshold; the thresholds are where the closed
 * forms are back to ~3-4 u (measured against 50-digit arithmetic). */
#define AXIS_ANGLE 0x1p+100

static double horner(const double *c, int n, double z)
{
    double s = c[n - 1];
    for (int i = n - 2; i >= 0; i--) s = s * z + c[i];
    return s;
}

/* C(t) = (t - sin t)/t^3 = sum_k (-1)^k z^k/(2k+3)! (so3.c's series) */
static double coef_c(double t)
{
    static const double c[10] = {0.16666666666666666,     -0.008333333333333333,   0.0001984126984126984,
                                 -2.7557319223985893e-06, 2.505210838544172e-08,   -1.6059043836821613e-10,
                                 7.647163731819816e-13,   -2.8114572543455206e-15, 8.22063524662433e-18,
                                 -1.9572941063391263e-20};
    if (t < 1.5) return horner(c, 10, t * t);
    return (t - sin(t)) / (t * t * t);
}

/* g1(t) = B'(t)/t = (t sin t - 2 (1 - cos t))/t^4 = sum_k (-1)^(k+1) 2 (k+1) z^k/(2k+4)! */
static double coef_g1(double t, double s, double omc)
{
    static const double c[14] = {-0.08333333333333333,   0.005555555555555556,  -0.00014880952380952382,
                                 2.204585537918871e-06,  -2.08767569878681e-08, 1.376489471727567e-10,
                                 -6.691268265342339e-13, 2.499073114973796e-15, -7.398571721961897e-18,
                                 1.7793582784901146e-20, -3.54582265641146e-23, 5.951031031739514e-26,
                                 -8.527712016381578e-29, 1.0555965360684537e-31};
    if (t < 3) return horner(c, 14, t * t);
    double t2 = t * t;
    return (t * s - 2 * omc) / (t2 * t2);
}

/* g2(t) = C'(t)/t = (t (1 - cos t) - 3 (t - sin t))/t^5 = sum_k (-1)^(k+1) 2 (k+1) z^k/(2k+5)! */
static double coef_g2(double t, double s, double omc)
{
    static const double c[15] = {-0.016666666666666666,   0.0007936507936507937,   -1.6534391534391536e-05,
                                 2.0041686708353376e-07,  -1.6059043836821615e-09, 9.17659647818378e-12,
                                 -3.936040156083729e-14,  1.3153016394598927e-16,  -3.523129391410427e-19,
                                 7.736340341261368e-22,   -1.4183290625645841e-24, 2.204085567310931e-27,
                                 -2.9405903504764064e-30, 3.4051501163498504e-33,  -3.4549006862315854e-36};
    if (t < 4) return horner(c, 15, t * t);
    double t2 = t * t;
    return (t * omc - 3 * (t - s)) / (t2 * t2 * t);
}

/* The axis a (w, or w/t above HUGE_ANGLE) and the coefficients (b, c, d1, d2) of Q (above). */
static void q_coeffs(const double w[3], double a[3], double k[4])
{
    const double t = lf_v3_norm(w), h = sin(0.5 * t), omc = 2 * h * h, s = sin(t);
    if (t > AXIS_ANGLE) {
        lf_v3_scale(w, 1 / t, a);
        k[0] = omc / t / t;
        k[1] = 1 / t - s / t / t;
        k[2] = s / t - 2 * omc / t / t;
        k[3] = (omc - 3) / t + 3 * s / t / t;
        return;
    }
    lf_v3_copy(w, a);
    if (t < 1e-4) k[0] = 0.5 - t * t / 24; /* (1 - cos t)/t^2 = (1/2) (sin(t/2)/(t/2))^2; next term t^4/720 */
    else {
        double q = h / (0.5 * t);
        k[0] = 0.5 * q * q;
    }
    k[1] = coef_c(t);
    k[2] = coef_g1(t, s, omc);
    k[3] = coef_g2(t, s, omc);
}

void lf_se3_Q(const double xi[6], double Q[9])
{
    double a[3], k[4], A[9], Vh[9], AV[9], VA[9], A2[9];
    q_coeffs(xi, a, k);
    const double av = lf_v3_dot(a, xi + 3);
    lf_so3_hat(a, A);
    lf_so3_hat(xi + 3, Vh);
    lf_m3_mul(A, Vh, AV);
    lf_m3_mul(Vh, A, VA);
    lf_m3_mul(A, A, A2);
    for (int i = 0; i < 9; i++) Q[i] = k[0] * Vh[i] + k[1] * (AV[i] + VA[i]) + av * (k[2] * A[i] + k[3] * A2[i]);
}

/* ---------------------------------------------------------------- the group */

void lf_se3_hat(const double xi[6], double X[16])
{
    double W[9];
    lf_so3_hat(xi, W);
    memset(X, 0, 16 * sizeof(double));
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) X[4 * i + j] = W[3 * i + j];
        X[4 * i + 3] = xi[3 + i];
    }
}

void lf_se3_matrix(const double y[12], double G[16])
{
    memset(G, 0, 16 * sizeof(double));
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) G[4 * i + j] = y[3 * i + j];
        G[4 * i + 3] = y[9 + i];
    }
    G[15] = 1;
}

void lf_se3_exp(const double xi[6], double y[12])
{
    double V[9];
    lf_so3_exp(xi, y);
    lf_so3_dexp(xi, V);
    lf_m3_apply(V, xi + 3, y + 9);
}

void lf_se3_log(const double y[12], double xi[6])
{
    double Vi[9], w[3];
    lf_so3_log(y, w);
    lf_so3_dexpinv(w, Vi);
    lf_m3_apply(Vi, y + 9, xi + 3);
    lf_v3_copy(w, xi);
}

void lf_se3_mul(const double a[12], const double b[12], double c[12])
{
    double R[9], p[3];
    lf_m3_apply(a, b + 9, p);
    lf_v3_add(p, a + 9, p);
    lf_m3_mul(a, b, R);
    memcpy(c, R, sizeof R);
    lf_v3_copy(p, c + 9);
}

void lf_se3_inv(const double a[12], double b[12])
{
    double p[3];
    lf_m3_tapply(a, a + 9, p);
    lf_m3_transpose(a, b);
    lf_v3_scale(p, -1, b + 9);
}

void lf_se3_Ad(const double y[12], double A[36])
{
    double P[9], PR[9];
    lf_so3_hat(y + 9, P);
    lf_m3_mul(P, y, PR);
    memset(A, 0, 36 * sizeof(double));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            A[6 * i + j] = A[6 * (i + 3) + j + 3] = y[3 * i + j];
            A[6 * (i + 3) + j] = PR[3 * i + j];
        }
}

void lf_se3_act(const double xi[6], double y[12], int right)
{
    double V[9], d[3];
    lf_so3_dexp(xi, V);
    lf_m3_apply(V, xi + 3, d); /* the translation of exp(xi) */
    if (right) {               /* (R, p) exp(xi) = (R E, p + R d) */
        lf_m3_apply(y, d, d);
        lf_v3_add(y + 9, d, y + 9);
        lf_so3_rmul_exp(y, xi);
    } else { /* exp(xi) (R, p) = (E R, E p + d) */
        lf_so3_lmul_exp(y, xi);
        lf_so3_rotate(xi, y + 9);
        lf_v3_add(y + 9, d, y + 9);
    }
}

void lf_se3_velocity(const double y[12], const double xi[6], int right, double ydot[12])
{
    double W[9];
    lf_so3_hat(xi, W);
    if (right) {
        lf_m3_mul(y, W, ydot);
        lf_m3_apply(y, xi + 3, ydot + 9);
    } else {
        lf_m3_mul(W, y, ydot);
        lf_v3_cross(xi, y + 9, ydot + 9);
        lf_v3_add(ydot + 9, xi + 3, ydot + 9);
    }
}

void lf_se3_diff(const double y0[12], const double y1[12], int right, double xi[6])
{
    double g[12], d[3];
    if (right) { /* y0^-1 y1 = (R0^T R1, R0^T (p1 - p0)) */
        lf_m3_tmul(y0, y1, g);
        lf_v3_sub(y1 + 9, y0 + 9, d);
        lf_m3_tapply(y0, d, g + 9);
    } else { /* y1 y0^-1 = (R1 R0^T, p1 - R1 R0^T p0) */
        lf_m3_mult(y1, y0, g);
        lf_m3_apply(g, y0 + 9, d);
        lf_v3_sub(y1 + 9, d, g + 9);
    }
    lf_se3_log(g, xi);
}

void lf_se3_bracket(const double x[6], const double y[6], double out[6])
{
    double a[3], b1[3], b2[3];
    lf_v3_cross(x, y, a);
    lf_v3_cross(x, y + 3, b1);
    lf_v3_cross(y, x + 3, b2);
    lf_v3_copy(a, out);
    lf_v3_sub(b1, b2, out + 3);
}

/* ---------------------------------------------------------------- dexp, dexpinv */

void lf_se3_dexp(const double u[6], const double v[6], int inverse, int transpose, double out[6])
{
    double D[9], Q[9], r[6], x[3];
    lf_se3_Q(u, Q);
    if (inverse) lf_so3_dexpinv(u, D);
    else lf_so3_dexp(u, D);
    if (!inverse && !transpose) { /* (D a, Q a + D b) */
        lf_m3_apply(D, v, r);
        lf_m3_apply(Q, v, x);
        lf_m3_apply(D, v + 3, r + 3);
        lf_v3_add(r + 3, x, r + 3);
    } else if (!inverse) { /* (D^T c + Q^T d, D^T d) */
        lf_m3_tapply(D, v, r);
        lf_m3_tapply(Q, v + 3, x);
        lf_v3_add(r, x, r);
        lf_m3_tapply(D, v + 3, r + 3);
    } else if (!transpose) { /* a' = Di a, b' = Di (b - Q a') */
        lf_m3_apply(D, v, r);
        lf_m3_apply(Q, r, x);
        lf_v3_sub(v + 3, x, x);
        lf_m3_apply(D, x, r + 3);
    } else { /* d' = Di^T d, c' = Di^T (c - Q^T d') */
        lf_m3_tapply(D, v + 3, r + 3);
        lf_m3_tapply(Q, r + 3, x);
        lf_v3_sub(v, x, x);
        lf_m3_tapply(D, x, r);
    }
    memcpy(out, r, sizeof r);
}

void lf_se3_dexp_matrix(const double u[6], int inverse, double M[36])
{
    double D[9], Q[9], L[9];
    lf_se3_Q(u, Q);
    if (inverse) { /* L = -Di Q Di */
        lf_so3_dexpinv(u, D);
        lf_m3_mul(D, Q, L);
        lf_m3_mul(L, D, L);
        lf_m3_scale(L, -1, L);
    } else {
        lf_so3_dexp(u, D);
        lf_m3_copy(Q, L);
    }
    memset(M, 0, 36 * sizeof(double));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            M[6 * i + j] = M[6 * (i + 3) + j + 3] = D[3 * i + j];
            M[6 * (i + 3) + j] = L[3 * i + j];
        }
}

/* ---------------------------------------------------------------- measures */

double lf_se3_dist(const double y0[12], const double y1[12])
{
    double s = 0;
    for (int k = 0; k < 12; k++) s += (y0[k] - y1[k]) * (y0[k] - y1[k]);
    return sqrt(s);
}

int lf_se3_check(const double y[12], double tol, const char *what, lf_error *err)
{
    char name[160];
    if (!what) what = "y";
    if (!(isfinite(y[9]) && isfinite(y[10]) && isfinite(y[11])))
        return lf_error_set(err, LF_EINVAL, "%s (se3) is not a rigid motion: its position p is not finite", what);
    snprintf(name, sizeof name, "%s (se3): R", what);
    return lf_so3_check(y, tol, name, err);
}
