/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The Langevin thermostat of rigid bodies (lf_stepper_opts.thermostat, langevin.c) and its generator
 * (philox.h):
 *  - Philox4x32-10 reproduces Random123's known answers;
 *  - runs are bitwise reproducible: the same seed twice, one call of 200 steps or four of 50, a
 *    checkpoint restored (state, time, noise counter; NO_SQUISH to round-off, as it restarts its
 *    quaternion from R); another seed gives another run;
 *  - equipartition: N bodies in a harmonic trap (x and attitude) with friction on v and w: the mean
 *    kinetic energies of translation and rotation and the trap's mean potential energy are 3/2 kT each,
 *    within 5 standard errors (batch means) plus the O(h^2) bias, at two time steps, for no_squish,
 *    dlm, split_exact and vlv;
 *  - rotational diffusion: free isotropic bodies (J = j I) with friction gamma_rot decorrelate their
 *    orientation as <e(0) . e(t)> = exp(-2 D_r (t - tau (1 - e^{-t/tau}))), D_r = kT/gamma_rot,
 *    tau = j/gamma_rot (the overdamped limit exp(-2 D_r t) with the inertial delay), within 4 standard
 *    errors;
 *  - bad thermostats and methods that cannot take one are refused with the reason.
 * Every measurement is printed, then asserted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

/* ---------------------------------------------------------------- the generator */
static void test_philox(void **state)
{
    (void)state;
    /* Random123's kat_vectors for philox4x32_10 */
    const uint32_t ctr[3][4] = {{0, 0, 0, 0},
                                {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                                {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}};
    const uint32_t key[3][2] = {{0, 0}, {0xffffffffu, 0xffffffffu}, {0xa4093822u, 0x299f31d0u}};
    const uint32_t out[3][4] = {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u},
                                {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu},
                                {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}};
    for (int i = 0; i < 3; i++) {
        uint32_t r[4];
        lf_philox4x32_10(ctr[i], key[i], r);
        assert_memory_equal(r, out[i], sizeof r);
    }
    printf("  Philox4x32-10: Random123's three known answers\n");
    /* the normals: mean 0, variance 1 over 10^5 counters (standard errors 0.003, 0.0045) */
    double s1 = 0, s2 = 0;
    const int n = 25000;
    for (int i = 0; i < n; i++) {
        const uint32_t c[4] = {(uint32_t)i, 0, 7, 1}, k[2] = {42, 0};
        double z[4];
        lf_philox_normal4(c, k, z);
        for (int j = 0; j < 4; j++) s1 += z[j], s2 += z[j] * z[j];
    }
    const double mean = s1 / (4 * n), var = s2 / (4 * n) - mean * mean;
    CHECK_LE(fabs(mean), 0.015, "normals: |mean| over 1e5 (5 standard errors)");
    CHECK_LE(fabs(var - 1), 0.023, "normals: |variance - 1| over 1e5 (5 standard errors)");
}

/* ---------------------------------------------------------------- a harmonic trap */
/* U = sum_b 1/2 k |x_b|^2 + kappa (3 - tr R_b): F = -k x, tau = kappa (R23 - R32, R31 - R13, R12 - R21)
 * (potential.h's convention tau . y = -d/de U(R exp(e hat y)), d/de tr(R exp(e hat y)) = tr(R hat y)) */
static const double k_trap = 1, kappa = 1;

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

typedef struct {
    lf_system *sys;
    lf_potential *pot;
    double *y0, *J, *mass;
    int nb;
} bodies;

/* nb bodies (J = (1, 2, 3), m = 1.5) in the trap, at the origin and at rest, or free isotropic ones */
static bodies make_bodies(int nb, int trapped, double j_iso)
{
    bodies B = {.nb = nb};
    lf_error e;
    B.J = malloc(3 * (size_t)nb * sizeof(double));
    B.mass = malloc((size_t)nb * sizeof(double));
    B.y0 = calloc(18 * (size_t)nb, sizeof(double));
    for (int b = 0; b < nb; b++) {
        for (int k = 0; k < 3; k++) B.J[3 * b + k] = trapped ? k + 1 : j_iso;
        B.mass[b] = 1.5;
        B.y0[9 * b] = B.y0[9 * b + 4] = B.y0[9 * b + 8] = 1;
    }
    B.pot = trapped ? lf_potential_new_x("trap", trap, NULL, NULL, &e) : NULL;
    B.sys = trapped ? lf_rigid_new_translating(nb, B.J, B.mass, B.pot, &e) : lf_rigid_new(nb, B.J, NULL, &e);
    if (!B.sys) fail_msg("%s", e.msg);
    return B;
}

static void free_bodies(bodies *B)
{
    lf_system_free(B->sys);
    lf_potential_free(B->pot);
    free(B->y0), free(B->J), free(B->mass);
}

static lf_stepper *thermostatted(const char *method, const lf_system *sys, const double *y0, const lf_thermostat *th)
{
    lf_stepper_opts o = {.thermostat = th};
    return new_stepper(lf_method_find(method), sys, y0, &o);
}

/* ---------------------------------------------------------------- reproducibility, refusals */
static void test_reproducible(void **state)
{
    (void)state;
    bodies B = make_bodies(3, 1, 0);
    const lf_thermostat th = {0.7, 1, 0.5, 12345}, other = {0.7, 1, 0.5, 12346};
    const int np = lf_system_nparam(B.sys);
    for (int m = 0; m < 4; m++) {
        const char *name = (const char *[]){"no_squish", "dlm", "split_exact_s4", "vlv"}[m];
        lf_stepper *a = thermostatted(name, B.sys, B.y0, &th), *b = thermostatted(name, B.sys, B.y0, &th),
                   *c = thermostatted(name, B.sys, B.y0, &other);
        run_steps(a, 0.05, 200);
        for (int i = 0; i < 4; i++) run_steps(b, 0.05, 50);
        run_steps(c, 0.05, 200);
        assert_memory_equal(lf_stepper_state(a), lf_stepper_state(b), (size_t)np * sizeof(double));
        assert_true(maxdiff(np, lf_stepper_state(a), lf_stepper_state(c)) > 1e-3);
        assert_true(lf_stepper_noise_step(a) == 200);
        assert_true(lf_stepper_thermostat(a)->seed == 12345 && lf_stepper_thermostat(a)->kT == 0.7);
        /* a checkpoint after 120 steps, resumed in a new stepper */
        lf_stepper *d = thermostatted(name, B.sys, B.y0, &th);
        run_steps(d, 0.05, 120);
        double *y = malloc((size_t)np * sizeof(double));
        memcpy(y, lf_stepper_state(d), (size_t)np * sizeof(double));
        lf_stepper *r = thermostatted(name, B.sys, B.y0, &th);
        assert_int_equal(lf_stepper_restore(r, y, lf_stepper_time(d), lf_stepper_time_compensation(d), 0), LF_OK);
        assert_int_equal(lf_stepper_set_noise_step(r, lf_stepper_noise_step(d)), LF_OK);
        double work, heat, work_a, heat_a, heat_r;
        lf_stepper_get_work(d, &work, &heat);
        assert_int_equal(lf_stepper_set_work(r, work, heat), LF_OK);
        assert_int_not_equal(lf_stepper_set_work(r, NAN, heat), LF_OK);
        run_steps(r, 0.05, 80);
        lf_stepper_get_work(a, &work_a, &heat_a);
        lf_stepper_get_work(r, NULL, &heat_r);
        assert_true(work_a == 0 && fabs(heat_r - heat_a) <= 1e-12 * fabs(heat_a));
        /* NO_SQUISH restarts its quaternion from R after a restore (step_splitting.c): round-off there */
        const double dr = maxdiff(np, lf_stepper_state(a), lf_stepper_state(r));
        if (m == 0) assert_true(dr < 1e-12);
        else assert_true(dr == 0);
        printf("  %-15s 200 steps = 4 x 50 bit for bit; = checkpoint at 120 + 80 to %.1e; another seed differs\n", name,
               dr);
        free(y);
        lf_stepper_free(a), lf_stepper_free(b), lf_stepper_free(c), lf_stepper_free(d), lf_stepper_free(r);
    }
    /* refusals */
    lf_error e;
    const lf_thermostat bad[3] = {{-1, 1, 1, 0}, {1, -1, 1, 0}, {1, 1, NAN, 0}};
    for (int i = 0; i < 3; i++) {
        lf_stepper_opts o = {.thermostat = &bad[i]};
        assert_null(lf_stepper_new(lf_method_find("vlv"), B.sys, B.y0, 0, &o, &e));
        printf("  %s\n", e.msg);
    }
    lf_stepper_opts o = {.thermostat = &th};
    const char *refused[3] = {"eln", "rkmk4", "dlm_p6"};
    for (int i = 0; i < 3; i++) {
        assert_null(lf_stepper_new(lf_method_find(refused[i]), B.sys, B.y0, 0, &o, &e));
        printf("  %s\n", e.msg);
    }
    lf_stepper *plain = new_stepper(lf_method_find("vlv"), B.sys, B.y0, NULL);
    assert_null(lf_stepper_thermostat(plain));
    assert_int_not_equal(lf_stepper_set_noise_step(plain, 3), LF_OK);
    lf_stepper_free(plain);
    lf_stepper *st = thermostatted("vlv", B.sys, B.y0, &th);
    assert_int_not_equal(lf_stepper_step(st, -0.1, 1), LF_OK);
    printf("  %s\n", lf_stepper_error(st)->msg);
    lf_stepper_free(st);
    free_bodies(&B);
}

/* ---------------------------------------------------------------- equipartition */
/* mean and standard error of the batch means of x[0..n-1] in nbatch batches */
static void batch_stats(const double *x, int n, int nbatch, double *mean, double *se)
{
    double m = 0, v = 0;
    const int len = n / nbatch;
    for (int i = 0; i < nbatch; i++) {
        double b = 0;
        for (int j = 0; j < len; j++) b += x[i * len + j];
        b /= len;
        m += b;
        v += b * b;
    }
    m /= nbatch;
    *mean = m;
    *se = sqrt(fmax(v / nbatch - m * m, 0) / (nbatch - 1));
}

static void test_equipartition(void **state)
{
    (void)state;
    const int nb = 100, burn = 400, nsamp = 200, every = 10;
    const double kT = 0.7;
    bodies B = make_bodies(nb, 1, 0);
    const lf_thermostat th = {kT, 1.0, 1.0, 2026};
    const char *methods[4] = {"no_squish", "dlm", "split_exact", "vlv"};
    double worst = 0;
    for (int m = 0; m < 4; m++)
        for (int hi = 0; hi < 2; hi++) {
            const double h = hi ? 0.1 : 0.05;
            lf_stepper *st = thermostatted(methods[m], B.sys, B.y0, &th);
            run_steps(st, h, burn);
            double *kt = malloc(3 * (size_t)nsamp * sizeof(double)), *kr = kt + nsamp, *ux = kr + nsamp;
            for (int s = 0; s < nsamp; s++) {
                run_steps(st, h, every);
                const double *y = lf_stepper_state(st), *w = y + 9 * nb, *x = y + 12 * nb, *v = y + 15 * nb;
                double a = 0, b = 0, c = 0;
                for (int i = 0; i < 3 * nb; i++) {
                    a += 0.5 * B.mass[i / 3] * v[i] * v[i];
                    b += 0.5 * B.J[i] * w[i] * w[i];
                    c += 0.5 * k_trap * x[i] * x[i];
                }
                kt[s] = a / nb / (1.5 * kT), kr[s] = b / nb / (1.5 * kT), ux[s] = c / nb / (1.5 * kT);
            }
            double mt, st_, mr, sr, mu, su;
            batch_stats(kt, nsamp, 10, &mt, &st_);
            batch_stats(kr, nsamp, 10, &mr, &sr);
            batch_stats(ux, nsamp, 10, &mu, &su);
            printf("  %-12s h = %.2f: <K_trans>, <K_rot>, <U_trap> / (3/2 kT) = %.4f +- %.4f, %.4f +- %.4f, %.4f +- "
                   "%.4f\n",
                   methods[m], h, mt, st_, mr, sr, mu, su);
            /* the O(h^2) bias of the splitting: (w h)^2 / 4 = 0.0025 at h = 0.1 for the trap's w = 0.8 */
            const double dev = fmax(fabs(mt - 1) / (5 * st_ + 0.005),
                                    fmax(fabs(mr - 1) / (5 * sr + 0.005), fabs(mu - 1) / (5 * su + 0.005)));
            worst = fmax(worst, dev);
            free(kt);
            lf_stepper_free(st);
        }
    CHECK_LE(worst, 1, "worst |mean/(3/2 kT) - 1| / (5 standard errors + 0.005)");
    free_bodies(&B);
}

/* ---------------------------------------------------------------- rotational diffusion */
static void test_rotational_diffusion(void **state)
{
    (void)state;
    const int nb = 3000;
    const double j = 0.01, gamma_rot = 1, kT = 1, h = 0.001, Dr = kT / gamma_rot, tau = j / gamma_rot;
    bodies B = make_bodies(nb, 0, j);
    gsl_rng *r = new_rng(9);
    double *y0 = calloc(12 * (size_t)nb, sizeof(double));
    for (int b = 0; b < nb; b++) {
        y0[9 * b] = y0[9 * b + 4] = y0[9 * b + 8] = 1;
        for (int k = 0; k < 3; k++) y0[9 * nb + 3 * b + k] = gsl_ran_gaussian(r, sqrt(kT / j)); /* Maxwell */
    }
    gsl_rng_free(r);
    const lf_thermostat th = {kT, 0, gamma_rot, 77};
    lf_stepper *st = thermostatted("split_exact", B.sys, y0, &th);
    const double times[2] = {0.25, 0.5};
    double worst = 0;
    for (int i = 0; i < 2; i++) {
        run_steps(st, h, (long)llround((times[i] - (i ? times[0] : 0)) / h));
        const double *y = lf_stepper_state(st);
        double s = 0, s2 = 0;
        for (int b = 0; b < nb; b++) { /* e(0) = e3, e(t) = R e3: e(0) . e(t) = R33 */
            const double c = y[9 * b + 8];
            s += c, s2 += c * c;
        }
        const double mean = s / nb, se = sqrt((s2 / nb - mean * mean) / (nb - 1));
        const double t = times[i], expect = exp(-2 * Dr * (t - tau * (1 - exp(-t / tau))));
        printf("  t = %.2f: <e(0) . e(t)> = %.4f +- %.4f, exp(-2 D_r (t - tau (1 - e^{-t/tau}))) = %.4f "
               "(overdamped exp(-2 D_r t) = %.4f)\n",
               t, mean, se, expect, exp(-2 * Dr * t));
        worst = fmax(worst, fabs(mean - expect) / se);
    }
    CHECK_LE(worst, 4, "worst |<e(0).e(t)> - expected| in standard errors");
    /* free bodies, the exact free flow: the energy changes by the heat alone */
    double E0, E, heat;
    lf_error e;
    lf_system_energy(B.sys, y0, &E0, &e);
    lf_system_energy(B.sys, lf_stepper_state(st), &E, &e);
    lf_stepper_get_work(st, NULL, &heat);
    CHECK_LE(fabs(E - E0 - heat) / fabs(E0), 1e-12, "free bodies, split_exact: |E - E_0 - heat| / E_0");
    lf_stepper_free(st);
    free(y0);
    free_bodies(&B);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_philox),
        cmocka_unit_test(test_reproducible),
        cmocka_unit_test(test_equipartition),
        cmocka_unit_test(test_rotational_diffusion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
