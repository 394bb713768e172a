/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The yardstick of the steppers' speed: hand-written loops of eln, vlv, lgvi, prk and split_exact for
 * one body in the stress-test potential of Bou-Rabee, Ortolan & Saccon (the schemes' equations
 * written out with no stepper, no rollback, no dispatch), in two versions:
 *   by hand    the loops as a user would write them with lieflow's helpers (lf_so3_rmul_cay, ...);
 *   inlined    everything forced inline into one function: the torque, the Cayley update, the 3x3
 *              Newton, the axisymmetric free flow (constants in registers, no call in the loop);
 * each checked to give the same iterates as lieflow's steppers, then timed side by side with them
 * (CPU time, interleaved rounds, medians). Run by `make bench`; prints steps/s and the ratios
 * lieflow / loop. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lieflow.h"
#include "lie/so3_kernels_internal.h"

#define INL static inline __attribute__((always_inline))

static const double J[3] = {2, 2, 4}, alpha = 0.3;
static double Rm[9];

/* tau = -dU for U = (|R - I| - 1)^2 - alpha / |R - Rm| (Frobenius), left trivialization */
static void stress_torque(const double *R, double *tau)
{
    double d1 = 0, d2 = 0;
    for (int i = 0; i < 9; i++) {
        double a = R[i] - (i % 4 == 0), b = R[i] - Rm[i];
        d1 += a * a;
        d2 += b * b;
    }
    d1 = sqrt(d1);
    d2 = sqrt(d2);
    double M[9];
    lf_m3_tmul(Rm, R, M);
    const double c1 = 2 * (d1 - 1) / d1, c2 = alpha / (d2 * d2 * d2);
    tau[0] = c1 * (R[5] - R[7]) + c2 * (M[5] - M[7]);
    tau[1] = c1 * (R[6] - R[2]) + c2 * (M[6] - M[2]);
    tau[2] = c1 * (R[1] - R[3]) + c2 * (M[1] - M[3]);
}

/* solve A x = b (3x3, Cramer) */
static void solve3(const double *A, const double *b, double *x)
{
    double c0 = A[4] * A[8] - A[5] * A[7], c1 = A[5] * A[6] - A[3] * A[8], c2 = A[3] * A[7] - A[4] * A[6];
    double det = A[0] * c0 + A[1] * c1 + A[2] * c2;
    x[0] = (b[0] * c0 + A[1] * (A[5] * b[2] - b[1] * A[8]) + A[2] * (b[1] * A[7] - A[4] * b[2])) / det;
    x[1] = (A[0] * (b[1] * A[8] - A[5] * b[2]) + b[0] * c1 + A[2] * (A[3] * b[2] - b[1] * A[6])) / det;
    x[2] = (A[0] * (A[4] * b[2] - b[1] * A[7]) + A[1] * (b[1] * A[6] - A[3] * b[2]) + b[0] * c2) / det;
}

static double maxabs3(const double *v) { return fmax(fabs(v[0]), fmax(fabs(v[1]), fabs(v[2]))); }

/* Newton on the gyroscopic equation J W - h/2 (J W x W) = c (eln's (6), prk's (4.8a)) */
static void gyro_newton(double h, const double *c, double *W)
{
    for (int it = 0; it < 50; it++) {
        double JW[3], cr[3], r[3], A[9], dx[3] = {0, 0, 0};
        lf_v3_mul(J, W, JW);
        lf_v3_cross(JW, W, cr);
        for (int k = 0; k < 3; k++) r[k] = JW[k] - 0.5 * h * cr[k] - c[k];
        if (maxabs3(r) == 0) return;
        A[0] = J[0];                       A[1] = 0.5 * h * W[2] * (J[2] - J[1]); A[2] = 0.5 * h * W[1] * (J[2] - J[1]);
        A[3] = 0.5 * h * W[2] * (J[0] - J[2]); A[4] = J[1];                       A[5] = 0.5 * h * W[0] * (J[0] - J[2]);
        A[6] = 0.5 * h * W[1] * (J[1] - J[0]); A[7] = 0.5 * h * W[0] * (J[1] - J[0]); A[8] = J[2];
        solve3(A, r, dx);
        lf_v3_sub(W, dx, W);
        if (maxabs3(dx) <= 1e-14 * (1 + maxabs3(W))) return;
    }
}

/* explicit Lie–Newmark with the Cayley map, BOS eqs. (4)-(6) */
static void eln_loop(double *R, double *w, double h, long n)
{
    double tau[3], JW[3], a[3], x[3], c[3];
    stress_torque(R, tau);
    for (long k = 0; k < n; k++) {
        lf_v3_mul(J, w, JW);
        lf_v3_cross(JW, w, a);
        lf_v3_add(a, tau, a);
        lf_v3_div(a, J, a);
        lf_v3_axpy(w, 0.5 * h, a, w);
        lf_v3_scale(w, h, x);
        lf_so3_rmul_cay(R, x);
        stress_torque(R, tau);
        lf_v3_mul(J, w, JW);
        lf_v3_axpy(JW, 0.5 * h, tau, c);
        lf_v3_cross(JW, w, a);
        lf_v3_add(a, tau, a);
        lf_v3_div(a, J, a);
        lf_v3_axpy(w, 0.5 * h, a, w);
        gyro_newton(h, c, w);
    }
}

/* variational Lie–Verlet, BOS eqs. (8)-(10) */
static void vlv_loop(double *R, double *W, double h, long n)
{
    double tau[3];
    stress_torque(R, tau);
    const double hh = 0.5 * h, h2 = 0.25 * h * h, f = 2 * h2;
    for (long k = 0; k < n; k++) {
        double JW[3], c[3], a[3], x[3];
        lf_v3_mul(J, W, JW);
        lf_v3_axpy(JW, hh, tau, c);
        lf_v3_cross(JW, W, a);
        lf_v3_add(a, tau, a);
        lf_v3_div(a, J, a);
        lf_v3_axpy(W, hh, a, W);
        for (int it = 0; it < 50; it++) { /* (8) times J */
            double cr[3], r[3], A[9], dx[3] = {0, 0, 0};
            lf_v3_mul(J, W, JW);
            lf_v3_cross(JW, W, cr);
            const double e = h2 * lf_v3_dot(W, JW);
            for (int q = 0; q < 3; q++) r[q] = JW[q] - hh * cr[q] + e * W[q] - c[q];
            if (maxabs3(r) == 0) break;
            A[0] = J[0] + e + f * W[0] * JW[0];
            A[1] = hh * W[2] * (J[2] - J[1]) + f * W[0] * JW[1];
            A[2] = hh * W[1] * (J[2] - J[1]) + f * W[0] * JW[2];
            A[3] = hh * W[2] * (J[0] - J[2]) + f * W[1] * JW[0];
            A[4] = J[1] + e + f * W[1] * JW[1];
            A[5] = hh * W[0] * (J[0] - J[2]) + f * W[1] * JW[2];
            A[6] = hh * W[1] * (J[1] - J[0]) + f * W[2] * JW[0];
            A[7] = hh * W[0] * (J[1] - J[0]) + f * W[2] * JW[1];
            A[8] = J[2] + e + f * W[2] * JW[2];
            solve3(A, r, dx);
            lf_v3_sub(W, dx, W);
            if (maxabs3(dx) <= 1e-14 * (1 + maxabs3(W))) break;
        }
        lf_v3_scale(W, h, x);
        lf_so3_rmul_cay(R, x); /* (9) */
        stress_torque(R, tau);
        double cr[3];
        lf_v3_mul(J, W, JW);
        lf_v3_cross(JW, W, cr);
        const double q = h2 * lf_v3_dot(W, JW);
        for (int i = 0; i < 3; i++) a[i] = hh * (cr[i] + tau[i]) + q * W[i];
        lf_v3_div(a, J, a);
        lf_v3_add(W, a, W); /* (10) */
    }
}

/* Lee–Leok–McClamroch LGVI, Cayley solve */
static void lgvi_loop(double *R, double *w, double h, long n)
{
    double T[3];
    stress_torque(R, T);
    for (long k = 0; k < n; k++) {
        double p[3], g[3], x[3], Jx[3], cr[3], F[9];
        lf_v3_mul(J, w, p);
        lf_v3_axpy(p, 0.5 * h, T, p);
        lf_v3_scale(p, h, g);
        lf_v3_div(g, J, x);
        lf_v3_mul(J, x, Jx);
        lf_v3_cross(x, Jx, cr);
        double q = 1 + 0.25 * lf_v3_dot(x, x);
        for (int i = 0; i < 3; i++) x[i] = (q * g[i] - 0.5 * cr[i]) / J[i];
        for (int it = 0; it < 50; it++) {
            double r[3], A[9], dx[3] = {0, 0, 0};
            lf_v3_mul(J, x, Jx);
            lf_v3_cross(x, Jx, cr);
            const double s = 1 + 0.25 * lf_v3_dot(x, x);
            for (int i = 0; i < 3; i++) r[i] = Jx[i] + 0.5 * cr[i] - s * g[i];
            if (maxabs3(r) == 0) break;
            A[0] = J[0] - 0.5 * g[0] * x[0];
            A[1] = 0.5 * x[2] * (J[2] - J[1]) - 0.5 * g[0] * x[1];
            A[2] = 0.5 * x[1] * (J[2] - J[1]) - 0.5 * g[0] * x[2];
            A[3] = 0.5 * x[2] * (J[0] - J[2]) - 0.5 * g[1] * x[0];
            A[4] = J[1] - 0.5 * g[1] * x[1];
            A[5] = 0.5 * x[0] * (J[0] - J[2]) - 0.5 * g[1] * x[2];
            A[6] = 0.5 * x[1] * (J[1] - J[0]) - 0.5 * g[2] * x[0];
            A[7] = 0.5 * x[0] * (J[1] - J[0]) - 0.5 * g[2] * x[1];
            A[8] = J[2] - 0.5 * g[2] * x[2];
            solve3(A, r, dx);
            lf_v3_sub(x, dx, x);
            if (maxabs3(dx) <= 1e-14 * (1 + maxabs3(x))) break;
        }
        lf_so3_rmul_cay(R, x);
        lf_so3_cay(x, F);
        lf_m3_tapply(F, p, w);
        stress_torque(R, T);
        lf_v3_axpy(w, 0.5 * h, T, w);
        lf_v3_div(w, J, w);
    }
}

/* partitioned RKMK Lobatto IIIA-IIIB with Cayley, Ortolan's thesis (4.8) */
static void prk_loop(double *R, double *w, double h, long n)
{
    double tau[3];
    stress_torque(R, tau);
    for (long k = 0; k < n; k++) {
        double Jw[3], g[3], x[3], mu[3];
        lf_v3_mul(J, w, Jw);
        lf_v3_axpy(Jw, 0.5 * h, tau, mu);
        lf_v3_cross(w, Jw, g);
        lf_v3_axpy(mu, -0.5 * h, g, x);
        lf_v3_div(x, J, x);
        gyro_newton(h, mu, x);
        lf_v3_copy(x, w);
        lf_v3_scale(x, h, x);
        lf_so3_rmul_cay(R, x);
        stress_torque(R, tau);
        lf_v3_mul(J, w, Jw);
        lf_v3_cross(w, Jw, g);
        lf_v3_sub(tau, g, g);
        lf_v3_axpy(Jw, 0.5 * h, g, Jw);
        lf_v3_div(Jw, J, w);
    }
}

/* ---------------------------------------------------------------- fully inlined loops */
/* the inertias as the library sees them: values known at run time only (a compile-time J = (2, 2, 4)
 * would turn every division by J into an exact multiplication, which no stepper for any body can do) */
static double Jr[3];
/* the library's stress kernel (potential_classes.c), inline */
INL void torque_inl(const double *R, double *tau)
{
    double s1 = 0, s2 = 0;
    for (int i = 0; i < 9; i++) {
        const double a = R[i] - (i % 4 == 0), c = R[i] - Rm[i];
        s1 += a * a;
        s2 += c * c;
    }
    const double d1 = sqrt(s1), d2 = sqrt(s2);
#define M_(i, j) (Rm[i] * R[j] + Rm[3 + i] * R[3 + j] + Rm[6 + i] * R[6 + j])
    const double vx = M_(1, 2) - M_(2, 1), vy = M_(2, 0) - M_(0, 2), vz = M_(0, 1) - M_(1, 0);
#undef M_
    const double c1 = 2 * (d1 - 1) / d1, c2 = alpha / (d2 * d2 * d2);
    tau[0] = c1 * (R[5] - R[7]) + c2 * vx;
    tau[1] = c1 * (R[6] - R[2]) + c2 * vy;
    tau[2] = c1 * (R[1] - R[3]) + c2 * vz;
}

INL void gyro_newton_inl(double h, const double *c, double *W)
{
    for (int it = 0; it < 50; it++) {
        double JW[3], cr[3], r[3], A[9], dx[3] = {0, 0, 0};
        lf_v3_mul(Jr, W, JW);
        lf_v3_cross(JW, W, cr);
        for (int k = 0; k < 3; k++) r[k] = JW[k] - 0.5 * h * cr[k] - c[k];
        if (maxabs3(r) == 0) return;
        A[0] = Jr[0];                       A[1] = 0.5 * h * W[2] * (Jr[2] - Jr[1]); A[2] = 0.5 * h * W[1] * (Jr[2] - Jr[1]);
        A[3] = 0.5 * h * W[2] * (Jr[0] - Jr[2]); A[4] = Jr[1];                       A[5] = 0.5 * h * W[0] * (Jr[0] - Jr[2]);
        A[6] = 0.5 * h * W[1] * (Jr[1] - Jr[0]); A[7] = 0.5 * h * W[0] * (Jr[1] - Jr[0]); A[8] = Jr[2];
        lf_m3_solve(A, r, dx);
        lf_v3_sub(W, dx, W);
        if (maxabs3(dx) <= 1e-14 * (1 + maxabs3(W))) return;
    }
}

static void eln_inl(double *R, double *w, double h, long n)
{
    double tau[3], JW[3], a[3], x[3], c[3];
    torque_inl(R, tau);
    for (long k = 0; k < n; k++) {
        lf_v3_mul(Jr, w, JW);
        lf_v3_axpy(JW, 0.5 * h, tau, c);
        lf_v3_cross(JW, w, a);
        lf_v3_add(a, tau, a);
        lf_v3_div(a, Jr, a);
        lf_v3_axpy(w, 0.5 * h, a, w);
        lf_v3_scale(w, h, x);
        lf_so3_rmul_cay_kernel(R, x);
        torque_inl(R, tau);
        lf_v3_mul(Jr, w, JW);
        lf_v3_axpy(JW, 0.5 * h, tau, c);
        lf_v3_cross(JW, w, a);
        lf_v3_add(a, tau, a);
        lf_v3_div(a, Jr, a);
        lf_v3_axpy(w, 0.5 * h, a, w);
        gyro_newton_inl(h, c, w);
    }
}

static void vlv_inl(double *R, double *W, double h, long n)
{
    double tau[3];
    torque_inl(R, tau);
    const double hh = 0.5 * h, h2 = 0.25 * h * h, f = 2 * h2;
    for (long k = 0; k < n; k++) {
        double JW[3], c[3], a[3], x[3];
        lf_v3_mul(Jr, W, JW);
        lf_v3_axpy(JW, hh, tau, c);
        lf_v3_cross(JW, W, a);
        lf_v3_add(a, tau, a);
        lf_v3_div(a, Jr, a);
        lf_v3_axpy(W, hh, a, W);
        for (int it = 0; it < 50; it++) {
            double cr[3], r[3], A[9], dx[3] = {0, 0, 0};
            lf_v3_mul(Jr, W, JW);
            lf_v3_cross(JW, W, cr);
            const double e = h2 * lf_v3_dot(W, JW);
            for (int q = 0; q < 3; q++) r[q] = JW[q] - hh * cr[q] + e * W[q] - c[q];
            if (maxabs3(r) == 0) break;
            A[0] = Jr[0] + e + f * W[0] * JW[0];
            A[1] = hh * W[2] * (Jr[2] - Jr[1]) + f * W[0] * JW[1];
            A[2] = hh * W[1] * (Jr[2] - Jr[1]) + f * W[0] * JW[2];
            A[3] = hh * W[2] * (Jr[0] - Jr[2]) + f * W[1] * JW[0];
            A[4] = Jr[1] + e + f * W[1] * JW[1];
            A[5] = hh * W[0] * (Jr[0] - Jr[2]) + f * W[1] * JW[2];
            A[6] = hh * W[1] * (Jr[1] - Jr[0]) + f * W[2] * JW[0];
            A[7] = hh * W[0] * (Jr[1] - Jr[0]) + f * W[2] * JW[1];
            A[8] = Jr[2] + e + f * W[2] * JW[2];
            lf_m3_solve(A, r, dx);
            lf_v3_sub(W, dx, W);
            if (maxabs3(dx) <= 1e-14 * (1 + maxabs3(W))) break;
        }
        lf_v3_scale(W, h, x);
        lf_so3_rmul_cay_kernel(R, x);
        torque_inl(R, tau);
        double cr[3];
        lf_v3_mul(Jr, W, JW);
        lf_v3_cross(JW, W, cr);
        const double q = h2 * lf_v3_dot(W, JW);
        for (int i = 0; i < 3; i++) a[i] = hh * (cr[i] + tau[i]) + q * W[i];
        lf_v3_div(a, Jr, a);
        lf_v3_add(W, a, W);
    }
}

static void lgvi_inl(double *R, double *w, double h, long n)
{
    double T[3];
    torque_inl(R, T);
    for (long k = 0; k < n; k++) {
        double p[3], g[3], x[3], Jx[3], cr[3], F[9];
        lf_v3_mul(Jr, w, p);
        lf_v3_axpy(p, 0.5 * h, T, p);
        lf_v3_scale(p, h, g);
        lf_v3_div(g, Jr, x);
        lf_v3_mul(Jr, x, Jx);
        lf_v3_cross(x, Jx, cr);
        double q = 1 + 0.25 * lf_v3_dot(x, x);
        for (int i = 0; i < 3; i++) x[i] = (q * g[i] - 0.5 * cr[i]) / Jr[i];
        for (int it = 0; it < 50; it++) {
            double r[3], A[9], dx[3] = {0, 0, 0};
            lf_v3_mul(Jr, x, Jx);
            lf_v3_cross(x, Jx, cr);
            const double s = 1 + 0.25 * lf_v3_dot(x, x);
            for (int i = 0; i < 3; i++) r[i] = Jx[i] + 0.5 * cr[i] - s * g[i];
            if (maxabs3(r) == 0) break;
            A[0] = Jr[0] - 0.5 * g[0] * x[0];
            A[1] = 0.5 * x[2] * (Jr[2] - Jr[1]) - 0.5 * g[0] * x[1];
            A[2] = 0.5 * x[1] * (Jr[2] - Jr[1]) - 0.5 * g[0] * x[2];
            A[3] = 0.5 * x[2] * (Jr[0] - Jr[2]) - 0.5 * g[1] * x[0];
            A[4] = Jr[1] - 0.5 * g[1] * x[1];
            A[5] = 0.5 * x[0] * (Jr[0] - Jr[2]) - 0.5 * g[1] * x[2];
            A[6] = 0.5 * x[1] * (Jr[1] - Jr[0]) - 0.5 * g[2] * x[0];
            A[7] = 0.5 * x[0] * (Jr[1] - Jr[0]) - 0.5 * g[2] * x[1];
            A[8] = Jr[2] - 0.5 * g[2] * x[2];
            lf_m3_solve(A, r, dx);
            lf_v3_sub(x, dx, x);
            if (maxabs3(dx) <= 1e-14 * (1 + maxabs3(x))) break;
        }
        lf_so3_rmul_cay_kernel(R, x);
        lf_so3_cay_kernel(x, F);
        lf_m3_tapply(F, p, w);
        torque_inl(R, T);
        lf_v3_axpy(w, 0.5 * h, T, w);
        lf_v3_div(w, Jr, w);
    }
}

static void prk_inl(double *R, double *w, double h, long n)
{
    double tau[3];
    torque_inl(R, tau);
    for (long k = 0; k < n; k++) {
        double Jw[3], g[3], x[3], mu[3];
        lf_v3_mul(Jr, w, Jw);
        lf_v3_axpy(Jw, 0.5 * h, tau, mu);
        lf_v3_cross(w, Jw, g);
        lf_v3_axpy(mu, -0.5 * h, g, x);
        lf_v3_div(x, Jr, x);
        gyro_newton_inl(h, mu, x);
        lf_v3_copy(x, w);
        lf_v3_scale(x, h, x);
        lf_so3_rmul_cay_kernel(R, x);
        torque_inl(R, tau);
        lf_v3_mul(Jr, w, Jw);
        lf_v3_cross(w, Jw, g);
        lf_v3_sub(tau, g, g);
        lf_v3_axpy(Jw, 0.5 * h, g, Jw);
        lf_v3_div(Jw, Jr, w);
    }
}

/* split_exact for the axisymmetric stress-test body (J1 = J2 = A, J3 = C): kick h/2, the closed-form
 * free flow R <- R exp(h hat(Pi)/A) exp(theta e3^), Pi <- exp(-theta e3^) Pi (theta = h Pi3 (A-C)/(AC),
 * one quaternion increment, as step_splitting.c's axisym_flow), kick h/2 */
static void split_exact_inl(double *R, double *w, double h, long n)
{
    const double A = Jr[0], C = Jr[2], k = (A - C) / (A * C);
    double tau[3], Pi[3];
    torque_inl(R, tau);
    lf_v3_mul(Jr, w, Pi);
    for (long s = 0; s < n; s++) {
        lf_v3_axpy(Pi, 0.5 * h, tau, Pi);
        const double x[3] = {h * Pi[0] / A, h * Pi[1] / A, h * Pi[2] / A}, theta = h * Pi[2] * k;
        const double t2 = lf_v3_dot(x, x);
        double c1, s1;
        if (t2 < 1e-8) {
            c1 = 1 - t2 / 8 * (1 - t2 / 48);
            s1 = 0.5 * (1 - t2 / 24 * (1 - t2 / 80));
        } else {
            const double t = sqrt(t2);
            c1 = cos(0.5 * t);
            s1 = sin(0.5 * t) / t;
        }
        const double c2 = cos(0.5 * theta), s2 = sin(0.5 * theta);
        double v[3] = {s1 * x[0], s1 * x[1], s1 * x[2]}, e[3] = {0, 0, s2}, cr[3];
        lf_v3_cross(v, e, cr);
        const double q0 = c1 * c2 - v[2] * s2;
        const double qx = c2 * v[0] + c1 * e[0] + cr[0], qy = c2 * v[1] + c1 * e[1] + cr[1], qz = c2 * v[2] + c1 * e[2] + cr[2];
        const double M[9] = {-2 * (qy * qy + qz * qz), 2 * (qx * qy - q0 * qz),     2 * (qx * qz + q0 * qy),
                             2 * (qx * qy + q0 * qz),     -2 * (qx * qx + qz * qz), 2 * (qy * qz - q0 * qx),
                             2 * (qx * qz - q0 * qy),     2 * (qy * qz + q0 * qx),     -2 * (qx * qx + qy * qy)};
        for (int r = 0; r < 3; r++) {
            double *row = R + 3 * r, inc[3];
            for (int j = 0; j < 3; j++) inc[j] = row[0] * M[j] + row[1] * M[3 + j] + row[2] * M[6 + j];
            for (int j = 0; j < 3; j++) row[j] += inc[j];
        }
        const double sn = 2 * s2 * c2, cm1 = -2 * s2 * s2, a = Pi[0], b = Pi[1];
        Pi[0] = a + (cm1 * a + sn * b);
        Pi[1] = b + (cm1 * b - sn * a);
        torque_inl(R, tau);
        lf_v3_axpy(Pi, 0.5 * h, tau, Pi);
    }
    lf_v3_div(Pi, Jr, w);
}

static double cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef void (*loop_fn)(double *, double *, double, long);

/* max difference between n steps of the stepper and of a loop */
static double same_iterates(const lf_method *m, const lf_system *sys, const double *y0, loop_fn loop, double h, long n)
{
    lf_error e;
    double y[12];
    memcpy(y, y0, sizeof y);
    loop(y, y + 9, h, n);
    lf_stepper *st = lf_stepper_new(m, sys, y0, 0, NULL, &e);
    lf_stepper_step(st, h, n);
    double d = 0;
    for (int i = 0; i < 12; i++) d = fmax(d, fabs(lf_stepper_state(st)[i] - y[i]));
    lf_stepper_free(st);
    return d;
}

static double time_loop(loop_fn loop, const double *y0, double h, long N)
{
    double y[12];
    memcpy(y, y0, sizeof y);
    double t0 = cpu();
    loop(y, y + 9, h, N);
    return cpu() - t0;
}

int main(int argc, char **argv)
{
    const long N = argc > 1 ? atol(argv[1]) : 400000;
    const double h = 0.125;
    double vm[3] = {2.5 / sqrt(2.0), 0, 2.5 / sqrt(2.0)}, v0[3] = {0, 0.7227, 0}, y0[12];
    lf_so3_exp(vm, Rm);
    lf_so3_exp(v0, y0);
    y0[9] = 0, y0[10] = 0, y0[11] = 0.625;
    lf_error e;
    lf_potential *pot = lf_potential_stress(alpha, Rm, &e);
    lf_system *sys = lf_rigid_new(1, J, pot, &e);
    memcpy(Jr, lf_rigid_inertia(sys), sizeof Jr); /* through a library call: not a compile-time constant */
    const struct {
        const char *name;
        loop_fn loop, inl;
    } cases[] = {{"eln", eln_loop, eln_inl}, {"vlv", vlv_loop, vlv_inl}, {"lgvi", lgvi_loop, lgvi_inl},
                 {"prk", prk_loop, prk_inl}, {"split_exact", NULL, split_exact_inl}};
    printf("steppers against loops of the same schemes (stress test, one body, h = %g, %ld steps per round, CPU time, "
           "median of 7 interleaved rounds)\n", h, N);
    printf("%-12s %13s %13s %13s %9s %9s   %s\n", "method", "lieflow st/s", "by hand st/s", "inlined st/s",
           "/by hand", "/inlined", "same iterates (1000 steps): by hand, inlined");
    int ok = 1;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const lf_method *m = lf_method_find(cases[c].name);
        const double dh = cases[c].loop ? same_iterates(m, sys, y0, cases[c].loop, h, 1000) : 0;
        const double di = same_iterates(m, sys, y0, cases[c].inl, h, 1000);
        ok &= dh <= 1e-12 && di <= 1e-12;
        double tl[7], th[7], ti[7];
        for (int r = 0; r < 7; r++) {
            lf_stepper *st = lf_stepper_new(m, sys, y0, 0, NULL, &e);
            double t0 = cpu();
            lf_stepper_step(st, h, N);
            tl[r] = cpu() - t0;
            lf_stepper_free(st);
            th[r] = cases[c].loop ? time_loop(cases[c].loop, y0, h, N) : NAN;
            ti[r] = time_loop(cases[c].inl, y0, h, N);
        }
        qsort(tl, 7, sizeof(double), cmp);
        qsort(th, 7, sizeof(double), cmp);
        qsort(ti, 7, sizeof(double), cmp);
        char by_hand[16] = "-", ratio_hand[16] = "-"; /* split_exact has no by-hand loop */
        if (cases[c].loop) {
            snprintf(by_hand, sizeof by_hand, "%.0f", N / th[3]);
            snprintf(ratio_hand, sizeof ratio_hand, "%.2f", th[3] / tl[3]);
        }
        printf("%-12s %13.0f %13s %13.0f %9s %9.2f   %.1e, %.1e%s\n", cases[c].name, N / tl[3], by_hand, N / ti[3],
               ratio_hand, ti[3] / tl[3], dh, di, dh <= 1e-12 && di <= 1e-12 ? "" : "  (DIFFERENT)");
    }
    lf_system_free(sys);
    lf_potential_free(pot);
    return ok ? 0 : 1;
}
