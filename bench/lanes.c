/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Lanes against one body at a time: body-steps per second of eln, vlv and lgvi when B bodies (a
 * Monte Carlo over initial attitudes in the stress-test potential of Bou-Rabee, Ortolan & Saccon)
 * are stepped by one lane stepper (lf_stepper_new_lanes) or by B separate steppers one after the
 * other, on one core. Both give the same bits (checked here before timing). Also the cost per
 * body-step in microseconds, beside the figure LAMMPS reports for fix rigid/nve (NO_SQUISH) in its
 * rigid example, about 0.31 us per body-step including force summation.
 * Then the C ensemble API (lf_ensemble_run): the same members on 1, 2, ... threads, wall time,
 * speed-up over one thread (bitwise the same results, checked).
 * Run by `make bench`; CPU time (wall time for threads), median of 5 interleaved rounds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lieflow.h"

enum { NP = 12, BMAX = 256 };

static double cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* B initial states: attitudes exp(v) with v spread over a ball, w0 = (0, 0, 0.625) */
static void states(int B, double *y)
{
    for (int j = 0; j < B; j++) {
        double v[3] = {0.3 * sin(1.7 * j + 0.2), 0.7227 + 0.2 * cos(2.3 * j), 0.25 * sin(0.9 * j + 1)};
        lf_so3_exp(v, y + NP * j);
        y[NP * j + 9] = 0, y[NP * j + 10] = 0, y[NP * j + 11] = 0.625;
    }
}

int main(int argc, char **argv)
{
    const long steps = argc > 1 ? atol(argv[1]) : 2000000; /* body-steps per round */
    const double h = 0.125, J[3] = {2, 2, 4};
    double vm[3] = {2.5 / sqrt(2.0), 0, 2.5 / sqrt(2.0)}, Rm[9];
    lf_so3_exp(vm, Rm);
    lf_error e;
    lf_potential *pot = lf_potential_stress(0.3, Rm, &e);
    lf_system *sys = lf_rigid_new(1, J, pot, &e);
    static double y0[BMAX * NP], y[NP];
    const int Bs[] = {4, 16, 64, 256};
    const char *methods[] = {"eln", "vlv", "lgvi"};
    printf("lanes: B bodies in one lane stepper against B steppers one after the other (stress test, h = %g, "
           "%ld body-steps per round, CPU time, median of 5 interleaved rounds)\n", h, steps);
    printf("%-6s %5s %16s %16s %8s %12s   %s\n", "method", "B", "lanes body-st/s", "one by one", "ratio",
           "us/body-step", "same bits");
    int ok = 1;
    for (size_t k = 0; k < sizeof methods / sizeof *methods; k++) {
        const lf_method *m = lf_method_find(methods[k]);
        for (size_t b = 0; b < sizeof Bs / sizeof *Bs; b++) {
            const int B = Bs[b];
            const long n = steps / B;
            states(B, y0);
            /* the same bits: 200 steps each way */
            lf_stepper *L = lf_stepper_new_lanes(m, sys, B, y0, 0, NULL, &e);
            if (!L) {
                fprintf(stderr, "%s\n", e.msg);
                return 1;
            }
            lf_stepper_step(L, h, 200);
            int same = 1;
            for (int j = 0; j < B; j++) {
                lf_stepper *S = lf_stepper_new(m, sys, y0 + NP * j, 0, NULL, &e);
                lf_stepper_step(S, h, 200);
                lf_stepper_get_lane(L, j, y);
                same &= memcmp(y, lf_stepper_state(S), sizeof y) == 0;
                lf_stepper_free(S);
            }
            lf_stepper_free(L);
            ok &= same;
            double tl[5], ts[5];
            for (int r = 0; r < 5; r++) {
                L = lf_stepper_new_lanes(m, sys, B, y0, 0, NULL, &e);
                double t0 = cpu();
                lf_stepper_step(L, h, n);
                tl[r] = cpu() - t0;
                lf_stepper_free(L);
                t0 = cpu();
                for (int j = 0; j < B; j++) {
                    lf_stepper *S = lf_stepper_new(m, sys, y0 + NP * j, 0, NULL, &e);
                    lf_stepper_step(S, h, n);
                    lf_stepper_free(S);
                }
                ts[r] = cpu() - t0;
            }
            qsort(tl, 5, sizeof(double), cmp);
            qsort(ts, 5, sizeof(double), cmp);
            const double bs = (double)B * n;
            printf("%-6s %5d %16.0f %16.0f %8.2f %12.3f   %s\n", methods[k], B, bs / tl[2], bs / ts[2], ts[2] / tl[2],
                   1e6 * tl[2] / bs, same ? "yes" : "NO");
        }
    }
    printf("LAMMPS fix rigid/nve (NO_SQUISH), rigid example: about 0.31 us per body-step including force summation\n");

    /* lf_ensemble_run on threads: 64 members of vlv, wall time */
    {
        enum { NM = 64 };
        static double out[5][NM][NP];
        lf_ensemble_member mem[NM];
        states(NM, y0);
        const long n = steps / NM;
        const int threads[] = {1, 2, 4};
        double tw[3][5];
        for (int r = 0; r < 5; r++)
            for (int k = 0; k < 3; k++) {
                for (int j = 0; j < NM; j++)
                    mem[j] = (lf_ensemble_member){.sys = sys, .method = lf_method_find("vlv"), .y0 = y0 + NP * j,
                                                  .t0 = 0, .T = n * h, .h = h, .y = out[k][j]};
                const double t0 = wall();
                if (lf_ensemble_run(mem, NM, threads[k], NULL, &e) != LF_OK) {
                    fprintf(stderr, "%s\n", e.msg);
                    return 1;
                }
                tw[k][r] = wall() - t0;
            }
        int same = memcmp(out[0], out[1], sizeof out[0]) == 0 && memcmp(out[0], out[2], sizeof out[0]) == 0;
        ok &= same;
        printf("lf_ensemble_run: %d vlv members of %ld steps, wall time (median of 5), %ld online CPUs\n", NM, n,
               sysconf(_SC_NPROCESSORS_ONLN));
        printf("%8s %16s %9s %11s   %s\n", "threads", "body-steps/s", "speed-up", "efficiency", "same bits");
        for (int k = 0; k < 3; k++) qsort(tw[k], 5, sizeof(double), cmp);
        for (int k = 0; k < 3; k++)
            printf("%8d %16.0f %9.2f %10.0f%%   %s\n", threads[k], NM * n / tw[k][2], tw[0][2] / tw[k][2],
                   100 * tw[0][2] / tw[k][2] / threads[k], same ? "yes" : "NO");
    }
    lf_system_free(sys);
    lf_potential_free(pot);
    return ok ? 0 : 1;
}
