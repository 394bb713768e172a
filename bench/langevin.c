/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The weak order of the Langevin thermostat (lf_stepper_opts.thermostat, core/method/langevin.c),
 * measured: N independent bodies that translate in a harmonic trap,
 *   U = sum_b 1/2 k |x_b|^2 + kappa (3 - tr R_b)     (tests/c/test_langevin.c's trap),
 * with m = 1, k = 1 (omega = 1), J = (1, 2, 3), kappa = 1/2, kT = 0.7, gamma = gamma_rot = 1, a fixed
 * seed, stepped by the thermostatted splittings no_squish, dlm, split_exact and vlv at large steps
 * (omega h = 0.4 .. 1.2, where the bias stands well above the statistical error). After a burn-in, the
 * averages over every step and every body of
 *   <U_trap>  = <1/2 k |x|^2> / (3/2 kT)        exact: 1
 *   <K_trans> = <1/2 m |v|^2> / (3/2 kT)        exact: 1
 *   <K_rot>   = <1/2 w^T J w> / (3/2 kT)        exact: 1
 * are printed as biases (average - 1) with standard errors from 20 batch means (each h with a seed of
 * its own), the configurational bias over (omega h)^2 (its leading coefficient: 1/4), then the order:
 * the slope of log |bias| against log h, weighted by the errors, with its standard error.
 *
 * The statement checked: a thermostatted step O(h/2) Phi_h O(h/2) (exact Ornstein-Uhlenbeck half steps
 * around the method's step) has weak order 2. For the translation in the trap, Phi_h is velocity Verlet
 * in every one of these methods, and the scheme is OBABO, whose invariant measure for a harmonic
 * oscillator is known exactly: Verlet keeps the modified energy p^2/2m + 1/2 k (1 - (omega h)^2/4) x^2,
 * the O steps keep the Maxwell distribution of p, so <1/2 k x^2> = (kT/2) / (1 - (omega h)^2/4) and
 * <1/2 m v^2> = kT/2 exactly: the configurational bias is (omega h)^2/4 / (1 - (omega h)^2/4), printed
 * beside the measured one (slope 2 as h -> 0; about 2.2 over this range), the kinetic bias zero.
 * Prints steps/s (body steps per second of CPU time). Run by `make bench` (about 30 s). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lieflow.h"

enum { NB = 1000, NBATCH = 20, NH = 5 };
static const double k_trap = 1, kappa = 0.5, mass = 1, kT = 0.7, T_burn = 30, T_avg = 1200;
static const double omega_h[NH] = {0.4, 0.6, 0.8, 1.0, 1.2};

/* U = sum_b 1/2 k |x_b|^2 + kappa (3 - tr R_b): F = -k x, tau = kappa (R23 - R32, R31 - R13, R12 - R21) */
static int trap(void *ctx, const lf_bodies_config *c, double *U, double *F, double *tau, lf_error *err)
{
    (void)ctx, (void)err;
    double u = 0;
    for (int b = 0; b < c->nb; b++) {
        const double *x = c->x + 3 * b, *R = c->R + 9 * b;
        u += 0.5 * k_trap * lf_v3_dot(x, x) + kappa * (3 - R[0] - R[4] - R[8]);
        if (F) lf_v3_scale(x, -k_trap, F + 3 * b);
        if (tau) lf_v3_set(tau + 3 * b, kappa * (R[5] - R[7]), kappa * (R[6] - R[2]), kappa * (R[1] - R[3]));
    }
    if (U) *U = u;
    return LF_OK;
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what, const lf_error *e)
{
    fprintf(stderr, "bench_langevin: %s: %s\n", what, e->msg);
    exit(1);
}

/* mean and standard error of the NBATCH batch means of x[0..n-1] */
static void batch_stats(const double *x, long n, double *mean, double *se)
{
    const long len = n / NBATCH;
    double m = 0, v = 0;
    for (int i = 0; i < NBATCH; i++) {
        double b = 0;
        for (long j = 0; j < len; j++) b += x[i * len + j];
        b /= (double)len;
        m += b, v += b * b;
    }
    m /= NBATCH;
    *mean = m;
    *se = sqrt(fmax(v / NBATCH - m * m, 0) / (NBATCH - 1));
}

/* the slope of log|y| against log h weighted by the relative errors se/|y|, with its standard error;
 * points whose bias is within 2 standard errors of 0 are left out (their log is noise) */
static int order_fit(const double *h, const double *y, const double *se, double *slope, double *slope_se)
{
    double sw = 0, sx = 0, sy = 0;
    int n = 0;
    for (int i = 0; i < NH; i++) {
        if (!(fabs(y[i]) > 2 * se[i])) continue;
        const double s = se[i] / fabs(y[i]), w = 1 / (s * s);
        sw += w, sx += w * log(h[i]), sy += w * log(fabs(y[i]));
        n++;
    }
    if (n < 2) return 0;
    const double xm = sx / sw, ym = sy / sw;
    double sxx = 0, sxy = 0;
    for (int i = 0; i < NH; i++) {
        if (!(fabs(y[i]) > 2 * se[i])) continue;
        const double s = se[i] / fabs(y[i]), w = 1 / (s * s), dx = log(h[i]) - xm;
        sxx += w * dx * dx, sxy += w * dx * (log(fabs(y[i])) - ym);
    }
    *slope = sxy / sxx;
    *slope_se = 1 / sqrt(sxx);
    return n;
}

int main(void)
{
    lf_error e;
    double J[3 * NB], m[NB], *y0 = calloc(18 * NB, sizeof(double));
    if (!y0) return 1;
    for (int b = 0; b < NB; b++) {
        for (int k = 0; k < 3; k++) J[3 * b + k] = k + 1;
        m[b] = mass;
        y0[9 * b] = y0[9 * b + 4] = y0[9 * b + 8] = 1;
    }
    lf_potential *pot = lf_potential_new_x("trap", trap, NULL, NULL, &e);
    if (!pot) die("potential", &e);
    lf_system *sys = lf_rigid_new_translating(NB, J, m, pot, &e);
    if (!sys) die("system", &e);
    lf_thermostat th = {kT, 1.0, 1.0, 20261129};
    const lf_stepper_opts opts = {.thermostat = &th};
    const double omega = sqrt(k_trap / mass);
    const char *methods[4] = {"no_squish", "dlm", "split_exact", "vlv"};
    printf("Langevin thermostat, weak order: %d bodies in a harmonic trap (m = 1, k = 1, omega = 1, J = (1, 2, 3), "
           "kappa = %g),\n  kT = %g, gamma = gamma_rot = 1, seed %llu + i at the i-th h; averages over t in [%g, %g] "
           "at every step, "
           "+- one standard error (%d batch means)\n",
           NB, kappa, kT, th.seed, T_burn, T_burn + T_avg, NBATCH);
    printf("  bias = average / (3/2 kT) - 1; OBABO exact for the trap: <U_trap> bias (wh)^2/4 / (1 - (wh)^2/4), "
           "<K_trans> bias 0;\n  the methods differ in the rotation only: their translations are the same velocity "
           "Verlet with the same noise\n");
    for (int mi = 0; mi < 4; mi++) {
        double hs[NH], bu[NH], su[NH], bt[NH], st[NH], br[NH], sr[NH], exact[NH], exact_se[NH];
        long body_steps = 0;
        double cpu = 0;
        printf(
            "\n  %-11s  omega h   <U_trap> bias         (exact)    bias/(wh)^2  <K_trans> bias        <K_rot> bias\n",
            methods[mi]);
        for (int hi = 0; hi < NH; hi++) {
            const double h = omega_h[hi] / omega;
            const long burn = (long)ceil(T_burn / h), n = NBATCH * (long)ceil(T_avg / h / NBATCH);
            th.seed = 20261129 + (unsigned)hi; /* independent noise at each h: independent errors */
            lf_stepper *s = lf_stepper_new(lf_method_find(methods[mi]), sys, y0, 0, &opts, &e);
            if (!s) die(methods[mi], &e);
            double *u = malloc(3 * (size_t)n * sizeof(double)), *kt = u + n, *kr = kt + n;
            if (!u) return 1;
            const double t0 = cpu_seconds();
            if (lf_stepper_step(s, h, burn) != LF_OK) die(methods[mi], lf_stepper_error(s));
            for (long i = 0; i < n; i++) {
                if (lf_stepper_step(s, h, 1) != LF_OK) die(methods[mi], lf_stepper_error(s));
                const double *y = lf_stepper_state(s), *w = y + 9 * NB, *x = y + 12 * NB, *v = y + 15 * NB;
                double a = 0, b = 0, c = 0;
                for (int j = 0; j < 3 * NB; j++) {
                    a += x[j] * x[j];
                    b += v[j] * v[j];
                    c += J[j] * w[j] * w[j];
                }
                const double norm = 1.5 * kT * NB;
                u[i] = 0.5 * k_trap * a / norm - 1, kt[i] = 0.5 * mass * b / norm - 1, kr[i] = 0.5 * c / norm - 1;
            }
            cpu += cpu_seconds() - t0;
            body_steps += (burn + n) * NB;
            batch_stats(u, n, &bu[hi], &su[hi]);
            batch_stats(kt, n, &bt[hi], &st[hi]);
            batch_stats(kr, n, &br[hi], &sr[hi]);
            const double q = 0.25 * omega_h[hi] * omega_h[hi];
            hs[hi] = h, exact[hi] = q / (1 - q);
            printf("  %-11s  %6.2f   %+.5f +- %.5f   (%+.5f)   %.4f   %+.5f +- %.5f   %+.5f +- %.5f\n", "", omega_h[hi],
                   bu[hi], su[hi], exact[hi], bu[hi] / (omega_h[hi] * omega_h[hi]), bt[hi], st[hi], br[hi], sr[hi]);
            free(u);
            lf_stepper_free(s);
        }
        double p, pse, pe, pese;
        if (order_fit(hs, bu, su, &p, &pse)) {
            /* the exact bias, fitted with the same weights (relative errors) */
            for (int hi = 0; hi < NH; hi++) exact_se[hi] = su[hi] / fabs(bu[hi]) * exact[hi];
            order_fit(hs, exact, exact_se, &pe, &pese);
            printf("  %-11s  order of <U_trap>'s bias: slope %.3f +- %.3f (exact OBABO over the same h: %.3f)\n",
                   methods[mi], p, pse, pe);
        }
        if (order_fit(hs, bt, st, &p, &pse))
            printf("  %-11s  order of <K_trans>'s bias: slope %.3f +- %.3f\n", methods[mi], p, pse);
        else printf("  %-11s  <K_trans>'s bias: within 2 standard errors of 0 at every h (no slope)\n", methods[mi]);
        if (order_fit(hs, br, sr, &p, &pse))
            printf("  %-11s  order of <K_rot>'s bias: slope %.3f +- %.3f\n", methods[mi], p, pse);
        else printf("  %-11s  <K_rot>'s bias: within 2 standard errors of 0 at every h (no slope)\n", methods[mi]);
        printf("  %-11s  %.3g body steps/s (%.3g steps/s of the %d bodies), %.1f s\n", methods[mi], body_steps / cpu,
               body_steps / cpu / NB, NB, cpu);
    }
    lf_system_free(sys);
    lf_potential_free(pot);
    free(y0);
    return 0;
}
