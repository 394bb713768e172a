/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The yardstick of the steppers' speed: hand-written loops of eln, vlv, lgvi, prk and split_exact for
 * one body in the stress-test potential of Bou-Rabee, Ortolan & Saccon (the schemes' equations
 * written out with no stepper, no rollback, no dispatch), in two versions:
 *   by hand    the loops as a user would write them with lieflow's helpers (lf_so3_rmul_cay, ...);
 *   inlined    everything forced inline into one function: the torque, the Cayley update, the 3x3
 *              Newton, the axisymmetric free flow (constants in registers, no call in the loop);
 * each checked to give the same iterates as lieflow's steppers, then timed side by side with them
 * (CPU time, interleaved rounds, medians). Run by `make bench`; prints steps/s and the ratios
 * lieflow / loop. Then bodies that translate (translating_bench): vlv, no_squish and split_exact on a
 * body with a mass against the same body without, and against inlined loops of the same schemes with
 * the translation (velocity Verlet on the centre of mass). */
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

/* ---------------------------------------------------------------- bodies that translate */
/* One body of mass m_r (J = Jr) in the central field of lf_potential_central (a point mass mu_r at c0_r
 * with its gravity gradient), the state y = (R 9, w 3, x 3, v 3) of lf_rigid_new_translating. The
 * loops below are written once for both problems of the comparison (see main): trans = 1, the body
 * translates (velocity Verlet on (x, v): kick h/2 by F/m, drift h, ..., kick h/2 by the new force, as
 * lf_translate_kick/drift do); trans = 0, the body is pinned at its x (the same torque at the fixed x,
 * no force, x and v untouched). Values read at run time, as for Jr. */
static double mu_r, c0_r[3], m_r, im_r;

/* potential_classes.c's central_eval for one body, inline (the same operations in the same order);
 * F NULL: the torque alone */
INL void central_inl(const double *x, const double *R, double *tau, double *F)
{
    double r[3], u[3], Ju[3];
    lf_v3_sub(x, c0_r, r);
    const double rn = lf_v3_norm(r);
    lf_m3_tapply(R, r, u);
    lf_v3_mul(Jr, u, Ju);
    const double i1 = 1 / rn, i2 = i1 * i1, i3 = i2 * i1, i5 = i3 * i2;
    const double rAr = lf_v3_dot(u, Ju), trJ = Jr[0] + Jr[1] + Jr[2];
    if (F) {
        double Ar[3];
        lf_m3_apply(R, Ju, Ar);
        const double k = 1.5 * mu_r * i5, s = mu_r * m_r * i3 + k * (trJ - 5 * rAr * i2);
        for (int i = 0; i < 3; i++) F[i] = -(s * r[i] + 2 * k * Ar[i]);
    }
    lf_v3_cross(u, Ju, tau);
    lf_v3_scale(tau, 3 * mu_r * i5, tau);
}

/* the pinned body's potential for lieflow (a rotation-only body): U(R) = the central field's at the
 * fixed x_pin, its torque computed as central_eval computes it (a callback, the path of every
 * potential: lf_potential_new) */
static double x_pin[3];
static int pinned_eval(void *ctx, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    (void)ctx, (void)err;
    double Usum = 0;
    for (int b = 0; b < nb; b++) {
        if (tau) central_inl(x_pin, R + 9 * b, tau + 3 * b, NULL);
        if (U) {
            double r[3], u[3], Ju[3];
            lf_v3_sub(x_pin, c0_r, r);
            lf_m3_tapply(R + 9 * b, r, u);
            lf_v3_mul(Jr, u, Ju);
            const double i1 = 1 / lf_v3_norm(r), i3 = i1 * i1 * i1, i5 = i3 * i1 * i1;
            Usum += -mu_r * m_r * i1 - 0.5 * mu_r * (Jr[0] + Jr[1] + Jr[2]) * i3 + 1.5 * mu_r * lf_v3_dot(u, Ju) * i5;
        }
    }
    if (U) *U = Usum;
    return LF_OK;
}

/* v <- v + c F/m, x <- x + c v (lf_translate_kick, lf_translate_drift) */
INL void kick_inl(double *v, double c, const double *F)
{
    for (int i = 0; i < 3; i++) v[i] += c * F[i] * im_r;
}
INL void drift_inl(double *x, double c, const double *v)
{
    for (int i = 0; i < 3; i++) x[i] += c * v[i];
}

/* vlv (vlv_inl) with the translation */
INL void vlv_x_body(double *y, double h, long n, const int trans)
{
    double *R = y, *W = y + 9, *x = y + 12, *v = y + 15, tau[3], F[3];
    central_inl(x, R, tau, trans ? F : NULL);
    const double hh = 0.5 * h, h2 = 0.25 * h * h, f = 2 * h2;
    for (long k = 0; k < n; k++) {
        double JW[3], c[3], a[3], xi[3];
        if (trans) {
            kick_inl(v, hh, F);
            drift_inl(x, h, v);
        }
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
        lf_v3_scale(W, h, xi);
        lf_so3_rmul_cay_kernel(R, xi);
        central_inl(x, R, tau, trans ? F : NULL);
        double cr[3];
        lf_v3_mul(Jr, W, JW);
        lf_v3_cross(JW, W, cr);
        const double q = h2 * lf_v3_dot(W, JW);
        for (int i = 0; i < 3; i++) a[i] = hh * (cr[i] + tau[i]) + q * W[i];
        lf_v3_div(a, Jr, a);
        lf_v3_add(W, a, W);
        if (trans) kick_inl(v, hh, F);
    }
}
static void vlv_x_inl(double *y, double h, long n) { vlv_x_body(y, h, n, 1); }
static void vlv_pin_inl(double *y, double h, long n) { vlv_x_body(y, h, n, 0); }

/* NO_SQUISH (step_splitting.c) in (q, p): P_k q = q e_k, the kick p += 2 c S(q) (0, tau), the free
 * rotor R3(h/2) R2(h/2) R1(h) R2(h/2) R3(h/2) with each axis a constant, R = R(q) as lf_quat_to_matrix
 * (normalizing (q, p) when |q|^2 is 1e-12 away from 1, as the library does); (q, p) carried from
 * step to step as the library's cache carries them, w = Pi(q, p)/J at the end */
INL void pmul_inl(const int k, const double *q, double *r)
{
    switch (k) {
    case 0:
        r[0] = -q[1];
        r[1] = q[0];
        r[2] = q[3];
        r[3] = -q[2];
        break;
    case 1:
        r[0] = -q[2];
        r[1] = -q[3];
        r[2] = q[0];
        r[3] = q[1];
        break;
    default:
        r[0] = -q[3];
        r[1] = q[2];
        r[2] = -q[1];
        r[3] = q[0];
        break;
    }
}
INL void add_conj_inl(double *p, const double *q, const double *t, double a)
{
    for (int k = 0; k < 3; k++) {
        double r[4];
        pmul_inl(k, q, r);
        for (int l = 0; l < 4; l++) p[l] += 2 * a * t[k] * r[l];
    }
}
INL void ns_rotate_inl(double *q, double *p, const int k, double Jk, double tau)
{
    double Pq[4], Pp[4];
    pmul_inl(k, q, Pq);
    pmul_inl(k, p, Pp);
    const double zeta = (p[0] * Pq[0] + p[1] * Pq[1] + p[2] * Pq[2] + p[3] * Pq[3]) / (4 * Jk);
    const double a = sin(0.5 * zeta * tau), b = cos(0.5 * zeta * tau), s = 2 * a * b, cm1 = -2 * a * a;
    for (int l = 0; l < 4; l++) {
        q[l] += cm1 * q[l] + s * Pq[l];
        p[l] += cm1 * p[l] + s * Pp[l];
    }
}
INL void quat_to_R_inl(double *q, double *p, double *R)
{
    double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if (fabs(n2 - 1) > 1e-12) {
        const double nq = sqrt(n2);
        for (int k = 0; k < 4; k++) {
            q[k] /= nq;
            p[k] /= nq;
        }
        n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    }
    const double w = q[0], a = q[1], b = q[2], c = q[3], s = 2 / n2;
    R[0] = 1 - s * (b * b + c * c), R[1] = s * (a * b - w * c), R[2] = s * (a * c + w * b);
    R[3] = s * (a * b + w * c), R[4] = 1 - s * (a * a + c * c), R[5] = s * (b * c - w * a);
    R[6] = s * (a * c - w * b), R[7] = s * (b * c + w * a), R[8] = 1 - s * (a * a + b * b);
}
INL void no_squish_x_body(double *y, double h, long n, const int trans)
{
    double *R = y, *W = y + 9, *x = y + 12, *v = y + 15, tau[3], F[3], Pi[3], q[4], p[4] = {0, 0, 0, 0};
    const double hh = 0.5 * h;
    lf_v3_mul(Jr, W, Pi);
    lf_quat_from_matrix(R, q);
    add_conj_inl(p, q, Pi, 1);
    central_inl(x, R, tau, trans ? F : NULL);
    for (long k = 0; k < n; k++) {
        add_conj_inl(p, q, tau, hh);
        if (trans) kick_inl(v, hh, F);
        ns_rotate_inl(q, p, 2, Jr[2], hh);
        ns_rotate_inl(q, p, 1, Jr[1], hh);
        if (trans) drift_inl(x, h, v);
        ns_rotate_inl(q, p, 0, Jr[0], h);
        ns_rotate_inl(q, p, 1, Jr[1], hh);
        ns_rotate_inl(q, p, 2, Jr[2], hh);
        quat_to_R_inl(q, p, R);
        central_inl(x, R, tau, trans ? F : NULL);
        add_conj_inl(p, q, tau, hh);
        if (trans) kick_inl(v, hh, F);
    }
    const double qq = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    for (int k = 0; k < 3; k++) {
        double r[4];
        pmul_inl(k, q, r);
        Pi[k] = (p[0] * r[0] + p[1] * r[1] + p[2] * r[2] + p[3] * r[3]) / (2 * qq);
    }
    lf_v3_div(Pi, Jr, W);
}
static void no_squish_x_inl(double *y, double h, long n) { no_squish_x_body(y, h, n, 1); }
static void no_squish_pin_inl(double *y, double h, long n) { no_squish_x_body(y, h, n, 0); }

/* split_exact (split_exact_inl) with the translation */
INL void split_exact_x_body(double *y, double h, long n, const int trans)
{
    double *R = y, *w = y + 9, *x = y + 12, *v = y + 15, tau[3], F[3], Pi[3];
    const double A = Jr[0], C = Jr[2], k = (A - C) / (A * C), hh = 0.5 * h;
    central_inl(x, R, tau, trans ? F : NULL);
    lf_v3_mul(Jr, w, Pi);
    for (long s = 0; s < n; s++) {
        if (trans) {
            kick_inl(v, hh, F);
            drift_inl(x, h, v);
        }
        lf_v3_axpy(Pi, hh, tau, Pi);
        const double xi[3] = {h * Pi[0] / A, h * Pi[1] / A, h * Pi[2] / A}, theta = h * Pi[2] * k;
        const double t2 = lf_v3_dot(xi, xi);
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
        const double vq[3] = {s1 * xi[0], s1 * xi[1], s1 * xi[2]};
        const double q0 = c1 * c2 - vq[2] * s2;
        const double qx = c2 * vq[0] + vq[1] * s2, qy = c2 * vq[1] - vq[0] * s2, qz = c2 * vq[2] + c1 * s2;
        const double M[9] = {-2 * (qy * qy + qz * qz), 2 * (qx * qy - q0 * qz),  2 * (qx * qz + q0 * qy),
                             2 * (qx * qy + q0 * qz),  -2 * (qx * qx + qz * qz), 2 * (qy * qz - q0 * qx),
                             2 * (qx * qz - q0 * qy),  2 * (qy * qz + q0 * qx),  -2 * (qx * qx + qy * qy)};
        for (int r = 0; r < 3; r++) {
            double *row = R + 3 * r, inc[3];
            for (int j = 0; j < 3; j++) inc[j] = row[0] * M[j] + row[1] * M[3 + j] + row[2] * M[6 + j];
            for (int j = 0; j < 3; j++) row[j] += inc[j];
        }
        const double sn = 2 * s2 * c2, cm1 = -2 * s2 * s2, a = Pi[0], b = Pi[1];
        Pi[0] = a + (cm1 * a + sn * b);
        Pi[1] = b + (cm1 * b - sn * a);
        central_inl(x, R, tau, trans ? F : NULL);
        lf_v3_axpy(Pi, hh, tau, Pi);
        if (trans) kick_inl(v, hh, F);
    }
    lf_v3_div(Pi, Jr, w);
}
static void split_exact_x_inl(double *y, double h, long n) { split_exact_x_body(y, h, n, 1); }
static void split_exact_pin_inl(double *y, double h, long n) { split_exact_x_body(y, h, n, 0); }

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

typedef void (*yloop_fn)(double *, double, long);

/* max difference between n steps of the stepper and of a loop on states of np doubles (the loop gets
 * 18: R, w, x, v) */
static double same_iterates_y(const lf_method *m, const lf_system *sys, const double *y0, int np, yloop_fn loop,
                              double h, long n)
{
    lf_error e;
    double y[18];
    memcpy(y, y0, sizeof y);
    loop(y, h, n);
    lf_stepper *st = lf_stepper_new(m, sys, y0, 0, NULL, &e);
    lf_stepper_step(st, h, n);
    double d = 0;
    for (int i = 0; i < np; i++) d = fmax(d, fabs(lf_stepper_state(st)[i] - y[i]));
    lf_stepper_free(st);
    return d;
}

/* CPU time of N steps of a new stepper; *newton: its Newton iterations per step */
static double time_stepper(const lf_method *m, const lf_system *sys, const double *y0, double h, long N, double *newton)
{
    lf_error e;
    lf_stepper_stats stats;
    lf_stepper *st = lf_stepper_new(m, sys, y0, 0, NULL, &e);
    const double t0 = cpu();
    lf_stepper_step(st, h, N);
    const double t = cpu() - t0;
    lf_stepper_get_stats(st, &stats);
    if (newton) *newton = (double)stats.newton_iters / N;
    lf_stepper_free(st);
    return t;
}

static double time_yloop(yloop_fn loop, const double *y0, double h, long N)
{
    double y[18];
    memcpy(y, y0, sizeof y);
    const double t0 = cpu();
    loop(y, h, N);
    return cpu() - t0;
}

static double median7(double *t)
{
    qsort(t, 7, sizeof(double), cmp);
    return t[3];
}

/* ns per evaluation of a potential (median of 7 rounds of n calls); F == NULL: the torque alone. c NULL:
 * lf_potential_eval (rotation only), else lf_potential_eval_x at c. */
static double time_potential(const lf_potential *p, const lf_bodies_config *c, const double *R, int forces, long n)
{
    double t[7], tau[3], F[3], sink = 0;
    lf_error e;
    for (int r = 0; r < 7; r++) {
        const double t0 = cpu();
        for (long k = 0; k < n; k++) {
            if (c) lf_potential_eval_x(p, c, NULL, forces ? F : NULL, tau, &e);
            else lf_potential_eval(p, 1, R, NULL, tau, &e);
            sink += tau[0];
        }
        t[r] = cpu() - t0;
    }
    if (sink == 0.125) printf(" "); /* keep the calls */
    return 1e9 * median7(t) / n;
}

/* Bodies that translate against bodies that only rotate, and against inlined loops with the translation.
 *
 * What is fair to compare: a translating body pays (i) the translation's own work in the stepper (a
 * state of 18 doubles instead of 12 copied for the rollback and checked finite, two kicks and a drift
 * of (x, v), the forces zeroed, checked and cached beside the torque) and (ii) its potential's forces,
 * which a body that only rotates does not have. The target ("a translating body costs at most 1.15x
 * the rotation-only body per step") is for (i): the same potential, the same torque cost, on both
 * sides. Two pairs:
 *   stress   the target's pair: the stress-test potential (of R alone: F = 0) on the body with a mass
 *            and on the same body without. The potential is the same code on both sides, so the
 *            ratio is (i) alone; the rotation is bitwise the same (checked) and x = x0 + v t.
 *   central  (i) and (ii): the central field (lf_potential_central, mu = 1 at the origin: the force
 *            and the gravity-gradient torque at x, coupling orbit and attitude) on the body with a
 *            mass, against the body pinned at its initial x0 (a body without mass whose potential is
 *            the same field at the fixed x0: the same torque formula, evaluated through the same
 *            callback path as a built-in; no force). The difference over the stress pair's is the
 *            cost of the forces; the potentials are also timed alone (the last line).
 * The inlined loops of both central problems (the same function, trans = 1 / 0) give the scheme's own
 * cost of the translation, and the library's translating steppers are timed against the translating
 * loop (target: lieflow >= 0.85 of its steps/s; bitwise the same iterates). */
static int translating_bench(long N, double h, const lf_potential *stress, const double *y0rot)
{
    lf_error e;
    const double mass = 3;
    mu_r = 1;
    lf_potential *central = lf_potential_central(mu_r, NULL, &e);
    lf_potential *pinned = lf_potential_new("pinned_central", pinned_eval, NULL, NULL, &e);
    lf_system *sys_ts = lf_rigid_new_translating(1, J, &mass, stress, &e);
    lf_system *sys_c = lf_rigid_new_translating(1, J, &mass, central, &e);
    lf_system *sys_p = lf_rigid_new(1, J, pinned, &e);
    lf_system *sys_r = lf_rigid_new(1, J, stress, &e);
    if (!central || !pinned || !sys_ts || !sys_c || !sys_p || !sys_r) {
        printf("translating bodies: %s\n", e.msg);
        return 0;
    }
    m_r = lf_rigid_masses(sys_c)[0]; /* run-time values, as Jr */
    im_r = 1 / m_r;
    memcpy(c0_r, lf_potential_params(central) + 1, sizeof c0_r);
    /* a near-circular orbit of radius 3 (period 33, 260 steps) */
    double y0[18];
    memcpy(y0, y0rot, 12 * sizeof(double));
    const double x0[3] = {3, 0, 0}, v0[3] = {0, 0.55, 0.05};
    memcpy(y0 + 12, x0, sizeof x0);
    memcpy(y0 + 15, v0, sizeof v0);
    memcpy(x_pin, x0, sizeof x0);
    static const struct {
        const char *name;
        yloop_fn x, pin;
    } cases[] = {{"vlv", vlv_x_inl, vlv_pin_inl},
                 {"no_squish", no_squish_x_inl, no_squish_pin_inl},
                 {"split_exact", split_exact_x_inl, split_exact_pin_inl}};
    enum { NC = sizeof cases / sizeof cases[0] };
    double med[NC][6], newton[NC][2], dx[NC], dp[NC], drot[NC], dfree[NC];
    int ok = 1;
    for (int c = 0; c < NC; c++) {
        const lf_method *m = lf_method_find(cases[c].name);
        dx[c] = same_iterates_y(m, sys_c, y0, 18, cases[c].x, h, 1000);
        dp[c] = same_iterates_y(m, sys_p, y0, 12, cases[c].pin, h, 1000);
        { /* stress with a mass: the rotation bit for bit that without, x = x0 + v t */
            lf_stepper *a = lf_stepper_new(m, sys_ts, y0, 0, NULL, &e), *b = lf_stepper_new(m, sys_r, y0, 0, NULL, &e);
            lf_stepper_step(a, h, 1000);
            lf_stepper_step(b, h, 1000);
            drot[c] = dfree[c] = 0;
            for (int i = 0; i < 12; i++) drot[c] = fmax(drot[c], fabs(lf_stepper_state(a)[i] - lf_stepper_state(b)[i]));
            for (int i = 0; i < 3; i++) /* relative to |x| (about 69) */
                dfree[c] = fmax(dfree[c], fabs(lf_stepper_state(a)[12 + i] - (x0[i] + 1000 * h * v0[i])));
            dfree[c] /= lf_v3_norm(lf_stepper_state(a) + 12);
            lf_stepper_free(a);
            lf_stepper_free(b);
        }
        ok &= dx[c] <= 1e-12 && dp[c] <= 1e-12 && drot[c] == 0 && dfree[c] <= 1e-13;
        double t[6][7];
        for (int r = 0; r < 7; r++) {
            t[0][r] = time_stepper(m, sys_r, y0, h, N, NULL);
            t[1][r] = time_stepper(m, sys_ts, y0, h, N, NULL);
            t[2][r] = time_stepper(m, sys_p, y0, h, N, &newton[c][0]);
            t[3][r] = time_stepper(m, sys_c, y0, h, N, &newton[c][1]);
            t[4][r] = time_yloop(cases[c].pin, y0, h, N);
            t[5][r] = time_yloop(cases[c].x, y0, h, N);
        }
        for (int k = 0; k < 6; k++) med[c][k] = median7(t[k]);
    }
    printf(
        "\nbodies that translate (one body, m = %g, J = (2, 2, 4), h = %g, %ld steps per round, CPU time, median of 7 "
        "interleaved rounds)\n",
        mass, h, N);
    printf("translating against rotation-only, lieflow (target: the stress pair's time ratio <= 1.15; central: "
           "forces included)\n");
    printf("%-12s %12s %12s %7s %8s   %12s %12s %7s %8s   %s\n", "method", "stress st/s", "+mass st/s", "ratio",
           "+ns/step", "pinned st/s", "central st/s", "ratio", "+ns/step", "inlined central/pinned");
    for (int c = 0; c < NC; c++) {
        const double *q = med[c];
        printf("%-12s %12.0f %12.0f %7.2f %8.1f   %12.0f %12.0f %7.2f %8.1f   %.2f%s\n", cases[c].name, N / q[0],
               N / q[1], q[1] / q[0], 1e9 * (q[1] - q[0]) / N, N / q[2], N / q[3], q[3] / q[2], 1e9 * (q[3] - q[2]) / N,
               q[5] / q[4], q[1] / q[0] <= 1.15 ? "" : "  (stress above 1.15)");
    }
    printf("translating steppers against inlined loops with the translation (target: lieflow/inlined >= 0.85)\n");
    printf("%-12s %13s %13s %9s   %13s %13s %9s   %s\n", "method", "central st/s", "inlined st/s", "/inlined",
           "pinned st/s", "inlined st/s", "/inlined", "same iterates (1000 steps): central, pinned; stress: R w, x");
    for (int c = 0; c < NC; c++) {
        const double *q = med[c];
        printf("%-12s %13.0f %13.0f %9.2f   %13.0f %13.0f %9.2f   %.1e, %.1e; %.1e, %.1e%s%s\n", cases[c].name,
               N / q[3], N / q[5], q[5] / q[3], N / q[2], N / q[4], q[4] / q[2], dx[c], dp[c], drot[c], dfree[c],
               q[5] / q[3] >= 0.85 ? "" : "  (below 0.85)",
               dx[c] <= 1e-12 && dp[c] <= 1e-12 && drot[c] == 0 && dfree[c] <= 1e-13 ? "" : "  (DIFFERENT)");
    }
    printf("Newton iterations per step (vlv): pinned %.2f, central %.2f\n", newton[0][0], newton[0][1]);
    /* the potentials alone, at the initial configuration */
    const lf_bodies_config cf = {1, &mass, J, x0, y0};
    const long ne = N * 5;
    printf("potential evaluations, ns each: stress %.1f, stress with a mass (F = 0) %.1f; pinned central (torque) "
           "%.1f, central torque only %.1f, central torque and force %.1f\n",
           time_potential(stress, NULL, y0, 0, ne), time_potential(stress, &cf, y0, 1, ne),
           time_potential(pinned, NULL, y0, 0, ne), time_potential(central, &cf, y0, 0, ne),
           time_potential(central, &cf, y0, 1, ne));
    lf_system_free(sys_ts);
    lf_system_free(sys_c);
    lf_system_free(sys_p);
    lf_system_free(sys_r);
    lf_potential_free(central);
    lf_potential_free(pinned);
    return ok;
}

/* ---------------------------------------------------------------- forcings */
/* A forced step against an unforced one on the same body and potential (the stress test): a torque of t
 * tabulated in the body frame (a forcing of t: explicit kicks), and a linear damping (a forcing of the
 * velocities: vlv's and lgvi's end kick and the splittings' second half-kick implicit, one Newton
 * iteration with its analytic Jacobian). Target: at most 1.2x the unforced step. The compiled Lua
 * forcings are timed in bench/forcing.lua. */
static void forcing_bench(long N, double h, const lf_potential *stress, const double *y0)
{
    lf_error e;
    /* a drive that ends (a torque left on would spin the body up, and its Newton iterations with it) and
     * a weak damping (the motion stays that of the unforced body over the run: the same work per step) */
    const double tt[3] = {0, 10, 20}, tau[9] = {0, 0, 0, 0.1, -0.2, 0.05, 0, 0, 0}, a[3] = {1e-7, 2e-7, 1e-7};
    lf_forcing *table = lf_forcing_torque_table(3, tt, tau, 0, &e), *damp = lf_forcing_damping(0, a, &e);
    lf_system *plain = lf_rigid_new(1, J, stress, &e), *driven = lf_rigid_new(1, J, stress, &e),
              *damped = lf_rigid_new(1, J, stress, &e);
    lf_rigid_set_forcing(driven, table, &e);
    lf_rigid_set_forcing(damped, damp, &e);
    printf("\nforced steps against unforced ones (stress test, one body, h = %g, %ld steps, CPU time, median of 7 "
           "interleaved rounds; target: ratio <= 1.2)\n",
           h, N);
    printf("%-12s %12s %12s %7s %12s %7s %s\n", "method", "plain st/s", "driven st/s", "ratio", "damped st/s", "ratio",
           "Newton its/step: plain, damped");
    const char *names[3] = {"vlv", "no_squish", "split_exact"};
    for (int c = 0; c < 3; c++) {
        const lf_method *m = lf_method_find(names[c]);
        double t[3][7], newton = 0, newton0 = 0;
        for (int r = 0; r < 7; r++) {
            t[0][r] = time_stepper(m, plain, y0, h, N, &newton0);
            t[1][r] = time_stepper(m, driven, y0, h, N, NULL);
            t[2][r] = time_stepper(m, damped, y0, h, N, &newton);
        }
        const double q0 = median7(t[0]), q1 = median7(t[1]), q2 = median7(t[2]);
        printf("%-12s %12.0f %12.0f %7.2f %12.0f %7.2f %.2f, %.2f%s\n", names[c], N / q0, N / q1, q1 / q0, N / q2,
               q2 / q0, newton0, newton, q1 / q0 <= 1.2 && q2 / q0 <= 1.2 ? "" : "  (above 1.2)");
    }
    lf_system_free(plain), lf_system_free(driven), lf_system_free(damped);
    lf_forcing_free(table), lf_forcing_free(damp);
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
    ok &= translating_bench(N, h, pot, y0);
    forcing_bench(N, h, pot, y0);
    lf_system_free(sys);
    lf_potential_free(pot);
    return ok ? 0 : 1;
}
