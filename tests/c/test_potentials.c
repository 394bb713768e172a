/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One battery over every registered potential class (lf_potential_class_count/at, potential.h),
 * not over a list kept here: a new class is tested from the day its record is added.
 *
 * For each class, with its defaults (unless a parameter is required) and with random parameters
 * drawn from its schema (numbers and vectors about the defaults, rotations uniform):
 *  - the torque is -dU: tau_k = -d/de U(R exp(e hat e_k)) at e = 0 (so3.h), against fourth-order
 *    central differences of U along R exp(e hat e_k) at random rotations (FD_STEP, FD_TOL: the step
 *    and the tolerance, justified there); for a class of positions (translating bodies, eval_x) at
 *    random configurations (masses, moments, positions), and the force F_k = -dU/dx_k against the
 *    same differences along x + e e_k;
 *  - the lanes kernel (lf_potential_torque_lanes, lf_potential_eval_x_lanes) equals the one-body
 *    torque (and force) bit for bit for B = 1, 3 and 8 lanes (3 leaves a remainder after a vector
 *    loop of 2 or 4 doubles, 8 does not);
 *  - a single-body class acts on every body: nb bodies give the sum of U and each body's torque, bit
 *    for bit;
 *  - U does not depend on whether the torque is asked for; the record is found by its name, the
 *    potential names its class, keeps its parameters and describes itself as name(...).
 * Every measurement is printed, then asserted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lieflow.h"
#include "testutil.h"

enum { NSETS = 4, NROT = 40, BMAX = 8 };

/* The step and the tolerance of the differences. D = [8 (U(h) - U(-h)) - (U(2h) - U(-2h))] / 12h, with
 * U(e) = U(R exp(e hat e_k)), is the fourth-order central difference (Richardson's extrapolation
 * of two second-order ones). Its error relative to the torque is
 *  - truncation, h^4/30 |U^(5)| / |U'|: below 1e-16 for the smooth potentials (ratio O(1)); for
 *    coulomb_wall's wall term (1.1 + R33)^-10 the ratio is up to 11 12 13 14 / 0.1^4 = 2.4e8 (R33 = -1),
 *    so below 1e-9. (The second-order difference with h = 1e-5 is not enough there: h^2/6 |U'''/U'|
 *    with |U'''/U'| up to 1.3e4 gives 2e-7; measured 4.6e-7 at random rotations.)
 *  - rounding, about 1.5 eps (|U| + |dU/dR|) / h = 3e-12 (|U| + |dU/dR|) (U, and R exp(h hat e_k),
 *    each rounded): small against |tau| unless the torque nearly vanishes. The error is divided by
 *    max(|tau|, FD_FLOOR |U|): where the torque vanishes to 1e-3 |U|, the rounding of U (3e-12 |U|)
 *    is 3e-9 of the floor.
 * Measured worst (this battery): 4.6e-10 (stress, near its singularities), 3e-11 (coulomb_wall),
 * 2e-11 (field, top). FD_TOL = 1e-7 leaves a margin of 200 for a new class with steeper terms; a
 * torque off by a relative 1e-6 fails. */
#define FD_STEP 1e-4
#define FD_TOL 1e-7
#define FD_FLOOR 1e-3

/* a parameter vector: the defaults (set = 0, if the class has no required parameter) or random */
static int params_for(const lf_potential_class *c, int set, gsl_rng *r, double *par)
{
    lf_potential_class_defaults(c, par);
    int required = 0;
    for (int i = 0; i < c->nparams; i++) required |= c->params[i].required;
    if (set == 0) return !required;
    double *q = par;
    for (int i = 0; i < c->nparams; i++) {
        const lf_potential_param *d = &c->params[i];
        const int n = lf_param_size(d->type);
        if (d->type == LF_PARAM_ROTATION) lf_so3_random(gsl_rng_get(r), q, NULL);
        else
            for (int k = 0; k < n; k++) q[k] += (1 + fabs(q[k])) * gsl_ran_ugaussian(r);
        q += n;
    }
    return 1;
}

/* the potential of class c with parameter set `set`, NULL if there is none (required parameters
 * for set 0) */
static lf_potential *make(const lf_potential_class *c, int set, gsl_rng *r, double *par)
{
    if (!params_for(c, set, r, par)) return NULL;
    lf_error e;
    lf_potential *p = lf_potential_create(c, par, &e);
    if (!p) fail_msg("%s, parameter set %d: %s", c->name, set, e.msg);
    return p;
}

/* A random configuration of one body: mass in [0.5, 2], moments in [1, 3], |x| in [2, 5] (away from
 * the attracting point of the central field, c about the origin), R uniform. */
typedef struct {
    double m, J[3], x[3], R[9];
} body_config;

static void random_config(gsl_rng *r, body_config *b)
{
    b->m = 0.5 + 1.5 * gsl_rng_uniform(r);
    for (int k = 0; k < 3; k++) b->J[k] = 1 + 2 * gsl_rng_uniform(r);
    double d[3], n;
    do {
        for (int k = 0; k < 3; k++) d[k] = gsl_ran_ugaussian(r);
        n = lf_v3_norm(d);
    } while (!(n > 0.1));
    lf_v3_scale(d, (2 + 3 * gsl_rng_uniform(r)) / n, b->x);
    lf_so3_random(gsl_rng_get(r), b->R, NULL);
}

/* U, F, tau of one body at b (any class: a class of R alone has F = 0) */
static double eval_b(const lf_potential *p, const body_config *b, double *F, double *tau)
{
    double U;
    lf_error e;
    const lf_bodies_config c = {1, &b->m, b->J, b->x, b->R};
    if (lf_potential_eval_x(p, &c, &U, F, tau, &e) != LF_OK) fail_msg("%s: %s", lf_potential_name(p), e.msg);
    return U;
}

/* U along R exp(e hat e_k) (k < 3) or x + e e_{k-3} (k >= 3) */
static double U_along(const lf_potential *p, const body_config *b, int k, double e)
{
    body_config q = *b;
    if (k < 3) {
        double x[3] = {0}, E[9];
        x[k] = e;
        lf_so3_exp(x, E);
        lf_m3_mul(b->R, E, q.R);
    } else q.x[k - 3] += e;
    return eval_b(p, &q, NULL, NULL);
}

/* the fourth-order central difference of U along direction k */
static double fd(const lf_potential *p, const body_config *b, int k)
{
    const double h = FD_STEP;
    return (8 * (U_along(p, b, k, h) - U_along(p, b, k, -h)) - (U_along(p, b, k, 2 * h) - U_along(p, b, k, -2 * h))) /
           (12 * h);
}

/* max_k |tau_k + D_k| / max(|tau|, FD_FLOOR |U|) at b; *ferr: the same for the force (0 for a class of R) */
static double fd_error(const lf_potential *p, const body_config *b, double *ferr)
{
    double F[3], tau[3];
    const double U = eval_b(p, b, F, tau);
    const double tscale = fmax(maxabs(3, tau), FD_FLOOR * fabs(U)), fscale = fmax(maxabs(3, F), FD_FLOOR * fabs(U));
    double worst = 0;
    *ferr = 0;
    for (int k = 0; k < 3; k++) {
        worst = fmax(worst, fabs(tau[k] + fd(p, b, k)) / tscale);
        if (lf_potential_of_positions(p)) *ferr = fmax(*ferr, fabs(F[k] + fd(p, b, 3 + k)) / fscale);
    }
    return worst;
}

static void test_torque_is_minus_dU(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(2024);
    assert_true(lf_potential_class_count() >= 4);
    for (int i = 0; i < lf_potential_class_count(); i++) {
        const lf_potential_class *c = lf_potential_class_at(i);
        double worst = 0, fworst = 0;
        int n = 0;
        for (int set = 0; set < NSETS; set++) {
            double par[LF_POTENTIAL_MAXPAR];
            lf_potential *p = make(c, set, r, par);
            if (!p) continue;
            for (int s = 0; s < NROT; s++, n++) {
                body_config b;
                double ferr;
                random_config(r, &b);
                worst = fmax(worst, fd_error(p, &b, &ferr));
                fworst = fmax(fworst, ferr);
            }
            lf_potential_free(p);
        }
        char label[96];
        snprintf(label, sizeof label, "%s: torque vs -dU, central differences (%d points)", c->name, n);
        assert_true(n >= NROT * (NSETS - 1));
        CHECK_LE(worst, FD_TOL, label);
        if (c->eval_x) {
            snprintf(label, sizeof label, "%s: force vs -dU/dx, central differences (%d points)", c->name, n);
            CHECK_LE(fworst, FD_TOL, label);
        }
    }
    gsl_rng_free(r);
}

/* the lanes kernel against one body at a time, bit for bit (torques, and forces for a class of
 * positions: one body's mass and moments, each lane its own x and R); the number of differing entries */
static int lanes_mismatch(const lf_potential *p, int B, gsl_rng *r)
{
    double R[9 * BMAX], x[3 * BMAX], tau[3 * BMAX], F[3 * BMAX];
    body_config b[BMAX];
    for (int j = 0; j < B; j++) {
        random_config(r, &b[j]);
        b[j].m = b[0].m;
        memcpy(b[j].J, b[0].J, sizeof b[j].J);
        for (int k = 0; k < 9; k++) R[k * B + j] = b[j].R[k];
        for (int k = 0; k < 3; k++) x[k * B + j] = b[j].x[k];
    }
    lf_error e;
    const int rc = lf_potential_of_positions(p) ? lf_potential_eval_x_lanes(p, B, b[0].m, b[0].J, x, R, tau, F, &e)
                                                : lf_potential_torque_lanes(p, B, R, tau, &e);
    if (rc != LF_OK) fail_msg("%s lanes: %s", lf_potential_name(p), e.msg);
    int bad = 0;
    for (int j = 0; j < B; j++) {
        double t[3], f[3];
        eval_b(p, &b[j], f, t);
        for (int k = 0; k < 3; k++) bad += memcmp(&t[k], &tau[k * B + j], sizeof(double)) != 0;
        for (int k = 0; lf_potential_of_positions(p) && k < 3; k++)
            bad += memcmp(&f[k], &F[k * B + j], sizeof(double)) != 0;
    }
    return bad;
}

static void test_lanes_bitwise(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(7);
    const int Bs[] = {1, 3, 8};
    for (int i = 0; i < lf_potential_class_count(); i++) {
        const lf_potential_class *c = lf_potential_class_at(i);
        int bad = 0, n = 0;
        for (int set = 0; set < NSETS; set++) {
            double par[LF_POTENTIAL_MAXPAR];
            lf_potential *p = make(c, set, r, par);
            if (!p) continue;
            for (int b = 0; b < 3; b++)
                for (int rep = 0; rep < 10; rep++, n += 3 * Bs[b]) bad += lanes_mismatch(p, Bs[b], r);
            lf_potential_free(p);
        }
        char label[120];
        snprintf(label, sizeof label, "%s: lanes%s != one body (of %d torque entries)", c->name,
                 c->torque_lanes ? "" : " (no kernel: lane by lane)", n);
        CHECK_LE(bad, 0, label);
    }
    gsl_rng_free(r);
}

/* nb bodies: the sum of U (in body order, as one body at a time) and each body's torque */
static void test_every_body(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(11);
    enum { NB = 5 };
    for (int i = 0; i < lf_potential_class_count(); i++) {
        const lf_potential_class *c = lf_potential_class_at(i);
        int bad = 0;
        for (int set = 0; set < NSETS; set++) {
            double par[LF_POTENTIAL_MAXPAR], R[9 * NB], x[3 * NB], m[NB], J[3 * NB], U, tau[3 * NB], F[3 * NB],
                Usum = 0;
            body_config bc[NB];
            lf_potential *p = make(c, set, r, par);
            if (!p) continue;
            for (int b = 0; b < NB; b++) {
                random_config(r, &bc[b]);
                m[b] = bc[b].m;
                memcpy(J + 3 * b, bc[b].J, sizeof bc[b].J);
                memcpy(x + 3 * b, bc[b].x, sizeof bc[b].x);
                memcpy(R + 9 * b, bc[b].R, sizeof bc[b].R);
            }
            lf_error e;
            const lf_bodies_config all = {NB, m, J, x, R};
            assert_int_equal(lf_potential_eval_x(p, &all, &U, F, tau, &e), LF_OK);
            for (int b = 0; b < NB; b++) {
                double tb[3], fb[3];
                const double Ub = eval_b(p, &bc[b], fb, tb), Ub2 = eval_b(p, &bc[b], NULL, NULL);
                Usum += Ub;
                bad += memcmp(tb, tau + 3 * b, sizeof tb) != 0;
                bad += memcmp(fb, F + 3 * b, sizeof fb) != 0;
                bad += memcmp(&Ub, &Ub2, sizeof Ub) != 0; /* U without the torque */
            }
            bad += memcmp(&U, &Usum, sizeof U) != 0;
            lf_potential_free(p);
        }
        char label[96];
        snprintf(label, sizeof label, "%s: %d bodies != one at a time (entries)", c->name, NB);
        CHECK_LE(bad, 0, label);
    }
    gsl_rng_free(r);
}

static void test_records(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(3);
    for (int i = 0; i < lf_potential_class_count(); i++) {
        const lf_potential_class *c = lf_potential_class_at(i);
        assert_ptr_equal(lf_potential_class_find(c->name), c);
        for (int j = 0; j < i; j++) assert_string_not_equal(lf_potential_class_at(j)->name, c->name);
        assert_true((c->eval != NULL) != (c->eval_x != NULL)); /* of R, or of positions */
        assert_non_null(c->formula);
        assert_true(c->nparams >= 0 && c->nparams <= LF_POTENTIAL_MAXPARAMS);
        assert_true(lf_potential_class_npar(c) <= LF_POTENTIAL_MAXPAR);
        assert_true(c->nalt == 0 || (c->from_alt && c->alt_for >= 0 && c->alt_for < c->nparams &&
                                     c->params[c->alt_for].type == LF_PARAM_NUMBER));
        for (int k = 0; k < c->nparams; k++) assert_non_null(c->params[k].doc);
        double par[LF_POTENTIAL_MAXPAR];
        lf_potential *p = make(c, 1, r, par);
        assert_ptr_equal(lf_potential_class_of(p), c);
        assert_string_equal(lf_potential_name(p), c->name);
        assert_memory_equal(lf_potential_params(p), par, (size_t)lf_potential_class_npar(c) * sizeof(double));
        char buf[512], head[64];
        lf_potential_describe(p, buf, sizeof buf);
        snprintf(head, sizeof head, "%s(", c->name);
        printf("  %s: %s\n", c->name, buf);
        assert_true(strncmp(buf, head, strlen(head)) == 0 && buf[strlen(buf) - 1] == ')');
        /* a non-finite parameter is refused with a message naming the class */
        if (c->nparams > 0) {
            lf_error e;
            par[0] = NAN;
            assert_null(lf_potential_create(c, par, &e));
            assert_true(strncmp(e.msg, c->name, strlen(c->name)) == 0);
        }
        lf_potential_free(p);
    }
    assert_null(lf_potential_class_find("no such potential"));
    assert_null(lf_potential_class_find(NULL));
    assert_null(lf_potential_class_at(lf_potential_class_count()));
    gsl_rng_free(r);
}

/* The built-ins' typed constructors make the same potential as their records. */
static void test_typed_constructors(void **state)
{
    (void)state;
    double Rm[9], chi[3] = {0.1, -0.2, 1}, B[3] = {0.4, -1.3, 2.2}, m[3] = {-0.6, 0.25, 0.9};
    lf_so3_random(5, Rm, NULL);
    lf_potential *typed[] = {lf_potential_stress(-0.7, Rm, NULL), lf_potential_top(3.5, chi, NULL),
                             lf_potential_field(B, m, NULL), lf_potential_coulomb_wall(NULL)};
    for (int i = 0; i < 4; i++) {
        const lf_potential_class *c = lf_potential_class_of(typed[i]);
        assert_non_null(c);
        lf_potential *p = lf_potential_create(c, lf_potential_params(typed[i]), NULL);
        for (int s = 0; s < 10; s++) {
            double R[9], U1, U2, t1[3], t2[3];
            lf_so3_random(100 + (unsigned long)s, R, NULL);
            assert_int_equal(lf_potential_eval(typed[i], 1, R, &U1, t1, NULL), LF_OK);
            assert_int_equal(lf_potential_eval(p, 1, R, &U2, t2, NULL), LF_OK);
            assert_memory_equal(&U1, &U2, sizeof U1);
            assert_memory_equal(t1, t2, sizeof t1);
        }
        lf_potential_free(p);
        lf_potential_free(typed[i]);
    }
    /* the parameters as given */
    lf_potential *top = lf_potential_top(3.5, chi, NULL);
    const double want[4] = {3.5, 0.1, -0.2, 1};
    assert_memory_equal(lf_potential_params(top), want, sizeof want);
    lf_potential_free(top);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_records),
        cmocka_unit_test(test_torque_is_minus_dU),
        cmocka_unit_test(test_lanes_bitwise),
        cmocka_unit_test(test_every_body),
        cmocka_unit_test(test_typed_constructors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
