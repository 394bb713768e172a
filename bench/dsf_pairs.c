/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the cost of the site–site pair loop (core/md/sites.c) per pair on rigid water-like molecules
 * (SPC/E geometry and charges: O-H 1 A, HOH 109.47 deg, q_O = -0.8476, q_H = 0.4238, LJ on O-O only,
 * sigma 3.166 A, eps 0.1553 kcal/mol; a cubic lattice of spacing 3.1 A, about 1 g/cm^3, random
 * attitudes), rc 8 A (or argv[1]), skin 2 A, DSF alpha 0.2 /A, k = 332.06371: ns per listed pair and per
 * pair in range of an evaluation that keeps its list (LJ alone, DSF alone, both), the median of 9
 * interleaved repeats; and ns per call of erfc(x) with exp(-x^2) (libm against pair_styles_internal.h's
 * lf_md_erfc_exp4, the kernel's) over x in [0, 2]. Not run by `make bench`: `make B=build build/bench_dsf_pairs &&
 * build/bench_dsf_pairs [rc]`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lieflow.h"
#include "md/pair_styles_internal.h"

#define NREP 9

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

typedef struct {
    int nb, ns;
    int *nsites, *type;
    double *s, *q, *x, *R, *F, *tau, box[3];
} water;

static void rotation(unsigned *seed, double *R)
{
    double q[4], n = 0;
    for (int k = 0; k < 4; k++) {
        q[k] = (double)rand_r(seed) / RAND_MAX - 0.5;
        n += q[k] * q[k];
    }
    n = sqrt(n);
    const double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
    const double M[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                         2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                         2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
    memcpy(R, M, sizeof M);
}

static void make_water(water *w, int side)
{
    const double th = 109.47 / 2 * M_PI / 180, zc = 2 * cos(th) / 18;
    const double tmpl[9] = {0, 0, -zc, sin(th), 0, cos(th) - zc, -sin(th), 0, cos(th) - zc};
    unsigned seed = 7;
    w->nb = side * side * side;
    w->ns = 3 * w->nb;
    w->nsites = malloc((size_t)w->nb * sizeof *w->nsites);
    w->type = malloc((size_t)w->ns * sizeof *w->type);
    w->s = malloc(3 * (size_t)w->ns * sizeof *w->s);
    w->q = malloc((size_t)w->ns * sizeof *w->q);
    w->x = malloc(3 * (size_t)w->nb * sizeof *w->x);
    w->R = malloc(9 * (size_t)w->nb * sizeof *w->R);
    w->F = malloc(3 * (size_t)w->nb * sizeof *w->F);
    w->tau = malloc(3 * (size_t)w->nb * sizeof *w->tau);
    for (int b = 0; b < w->nb; b++) {
        w->nsites[b] = 3;
        for (int k = 0; k < 3; k++) {
            const int i = 3 * b + k;
            memcpy(w->s + 3 * i, tmpl + 3 * k, 3 * sizeof(double));
            w->type[i] = k == 0 ? 0 : 1;
            w->q[i] = k == 0 ? -0.8476 : 0.4238;
        }
        const int id[3] = {b % side, b / side % side, b / (side * side)};
        for (int d = 0; d < 3; d++)
            w->x[3 * b + d] = (id[d] + 0.5) * 3.1 + 0.2 * ((double)rand_r(&seed) / RAND_MAX - 0.5);
        rotation(&seed, w->R + 9 * b);
    }
    for (int d = 0; d < 3; d++) w->box[d] = side * 3.1;
}

static lf_sites *engine(const water *w, double rc, int lj, int coul)
{
    static const double eps[4] = {0.1553, 0, 0, 0}, sig[4] = {3.166, 1, 1, 1};
    const lf_sites_spec spec = {.nb = w->nb,
                                .nsites = w->nsites,
                                .s = w->s,
                                .type = w->type,
                                .charge = coul ? w->q : NULL,
                                .ntypes = 2,
                                .lj_epsilon = lj ? eps : NULL,
                                .lj_sigma = lj ? sig : NULL,
                                .cutoff = rc,
                                .coulomb_alpha = 0.2,
                                .coulomb_k = 332.06371,
                                .box = w->box,
                                .skin = 2};
    lf_error err;
    lf_sites *s = lf_sites_new(&spec, &err);
    if (!s) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    return s;
}

/* seconds per evaluation (the list kept), over at least 0.1 s */
static double time_eval(lf_sites *s, water *w)
{
    lf_error err;
    double U;
    long n = 0;
    const double t0 = now();
    double t;
    do {
        if (lf_sites_eval(s, w->nb, w->x, w->R, &U, w->F, w->tau, &err) != LF_OK) {
            fprintf(stderr, "%s\n", err.msg);
            exit(1);
        }
        n++;
    } while ((t = now() - t0) < 0.1);
    return t / (double)n;
}

static void pairs(int side, double rc)
{
    water w;
    make_water(&w, side);
    static const char *name[3] = {"LJ alone", "DSF alone", "LJ + DSF"};
    lf_sites *e[3] = {engine(&w, rc, 1, 0), engine(&w, rc, 0, 1), engine(&w, rc, 1, 1)};
    double t[3][NREP];
    lf_sites_stats st;
    for (int k = 0; k < 3; k++) time_eval(e[k], &w); /* the first build */
    for (int r = 0; r < NREP; r++)
        for (int k = 0; k < 3; k++) t[k][r] = time_eval(e[k], &w);
    printf("%d waters, box %.1f A, rc %g A, skin 2 A (median of %d)\n", w.nb, w.box[0], rc, NREP);
    for (int k = 0; k < 3; k++) {
        lf_sites_get_stats(e[k], &st);
        const double m = median(t[k], NREP);
        printf("  %-10s %8.3f ms/evaluation  %6.2f ns per listed pair  %6.2f ns per pair in range  (%ld listed, "
               "%ld in range)\n",
               name[k], 1e3 * m, 1e9 * m / (double)st.list_pairs, 1e9 * m / (double)st.pairs_in_range, st.list_pairs,
               st.pairs_in_range);
        lf_sites_free(e[k]);
    }
    free(w.nsites), free(w.type), free(w.s), free(w.q), free(w.x), free(w.R), free(w.F), free(w.tau);
}

static void erfc_calls(void)
{
    enum { N = 4096 };
    static double x[N];
    for (int i = 0; i < N; i++) x[i] = 2.0 * (i * 0.6180339887 - floor(i * 0.6180339887));
    double t[2][NREP], sink = 0;
    for (int r = 0; r < NREP; r++)
        for (int k = 0; k < 2; k++) {
            long n = 0;
            const double t0 = now();
            double dt;
            do {
                for (int i = 0; i < N; i++) {
                    double e;
                    if (k == 0) sink += erfc(x[i]) + exp(-x[i] * x[i]);
                    else sink += lf_md_erfc_exp4(x[i], &e) + e;
                }
                n += N;
            } while ((dt = now() - t0) < 0.05);
            t[k][r] = dt / (double)n;
        }
    printf("erfc(x) and exp(-x^2), x in [0, 2]: libm %.2f ns, lf_md_erfc_exp4 %.2f ns per x (median of %d)%s\n",
           1e9 * median(t[0], NREP), 1e9 * median(t[1], NREP), NREP, sink == 0 ? " " : "");
}

int main(int argc, char **argv)
{
    const double rc = argc > 1 ? atof(argv[1]) : 8;
    erfc_calls();
    pairs(10, rc);
    pairs(16, rc);
    return 0;
}
