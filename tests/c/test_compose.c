/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The methods beyond the seeds, measured (core/method/step_splitting.c, compose.c):
 *  - the splittings on two independent bodies equal each body stepped alone, bitwise;
 *  - split_exact is exact for the free body: one step of any h (positive, negative, long) equals
 *    lf_exact_free_body_flow, for triaxial, oblate, prolate, J_1 = J_3 and spherical bodies (the
 *    axisymmetric closed form of step_splitting.c against exact.c's evaluation), and so do its
 *    registered compositions (their free flows compose to the flow over h);
 *  - a composite step equals its base stepped by hand with the sub-steps c_i h through the public
 *    stepper (bitwise for rigid bases: the cache rule between stages is the stepper's own; within
 *    1e-14 for a time-dependent generic base, whose time runs through the stages; within 1e-14 for
 *    the splittings, whose adjacent kicks and flows the composite merges);
 *  - every scheme reaches its order on the stress test and the slow top (orderfit.h windows), with
 *    symplectic bases (vlv, dlm, no_squish, split_exact) and a generic symmetric base of order 4
 *    (rkmk_gl4_sym: order max(4, scheme order));
 *  - refusals name the method and the scheme; registered compositions have the metadata that
 *    lf_compose_method_new derives. Every measurement is printed, then asserted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "orderfit.h"
#include "problems.h"
#include "testutil.h"

static lf_method *compose(const char *base, const char *scheme)
{
    lf_error e;
    lf_method *m = lf_compose_method_new(lf_method_find(base), scheme, &e);
    if (!m) fail_msg("%s", e.msg);
    return m;
}

/* ---------------------------------------------------------------- split_exact is exact */
static void test_split_exact_free_flow(void **state)
{
    (void)state;
    static const double Js[5][3] = {{0.9144, 1.098, 1.66}, {2, 2, 4}, {5, 5, 1}, {2, 3, 2}, {3, 3, 3}};
    static const char *const names[5] = {"triaxial", "oblate 2,2,4", "prolate 5,5,1", "J1 = J3", "sphere"};
    static const double hs[5] = {0.1, 1, 7.3, -2.5, 40};
    const char *methods[3] = {"split_exact", "split_exact_s4", "split_exact_s6"};
    double worst[3] = {0, 0, 0};
    for (int j = 0; j < 5; j++) {
        lf_error e;
        lf_system *sys = lf_rigid_new(1, Js[j], NULL, &e);
        double v[3] = {0.3, -0.7, 0.4}, w0[3] = {0.45549, -0.82623, 0.53476}, y0[12], R[9], w[3];
        lf_so3_exp(v, y0);
        memcpy(y0 + 9, w0, sizeof w0);
        for (int k = 0; k < 5; k++) {
            if (lf_exact_free_body_flow(Js[j], y0, w0, hs[k], R, w, &e) != LF_OK) fail_msg("%s", e.msg);
            for (int i = 0; i < 3; i++) {
                lf_stepper *st = new_stepper(lf_method_find(methods[i]), sys, y0, NULL);
                if (lf_stepper_step(st, hs[k], 1) != LF_OK) fail_msg("%s", lf_stepper_error(st)->msg);
                const double d = fmax(maxdiff(9, lf_stepper_state(st), R), maxdiff(3, lf_stepper_state(st) + 9, w));
                worst[i] = fmax(worst[i], d);
                if (d > 5e-14) printf("    %s %s h=%g: %.2e\n", methods[i], names[j], hs[k], d);
                lf_stepper_free(st);
            }
        }
        lf_system_free(sys);
    }
    for (int i = 0; i < 3; i++) {
        char label[96];
        snprintf(label, sizeof label, "%s one step vs exact flow, 5 bodies x 5 h (max)", methods[i]);
        CHECK_LE(worst[i], 5e-14, label);
    }
}

/* Two independent bodies (a single-body potential acts on each): a splitting step of the pair equals the
 * steps of each body alone, bitwise (the per-body indexing of the runner, its q, p cache and torques). */
static void test_two_bodies(void **state)
{
    (void)state;
    problem p = problem_stress();
    lf_error e;
    const double J2[6] = {2, 2, 4, 0.9144, 1.098, 1.66};
    lf_system *pair = lf_rigid_new(2, J2, p.pot, &e), *one = lf_rigid_new(1, J2, p.pot, &e),
              *two = lf_rigid_new(1, J2 + 3, p.pot, &e);
    double v[3] = {0.2, -0.4, 0.3}, R2[9], y[24], y1[12], y2[12];
    lf_so3_exp(v, R2);
    pack_state(p.R0, p.w0, y1);
    const double w2[3] = {0.3, 0.5, -0.2};
    pack_state(R2, w2, y2);
    memcpy(y, p.R0, 9 * sizeof(double));
    memcpy(y + 9, R2, 9 * sizeof(double));
    memcpy(y + 18, p.w0, 3 * sizeof(double));
    memcpy(y + 21, w2, 3 * sizeof(double));
    static const char *const names[5] = {"dlm", "no_squish", "split_exact", "split_exact_s6", "dlm_s4"};
    for (int k = 0; k < 5; k++) {
        const lf_method *m = lf_method_find(names[k]);
        lf_stepper *a = new_stepper(m, pair, y, NULL), *b = new_stepper(m, one, y1, NULL),
                   *c = new_stepper(m, two, y2, NULL);
        assert_int_equal(lf_stepper_step(a, 0.2, 50), LF_OK);
        assert_int_equal(lf_stepper_step(b, 0.2, 50), LF_OK);
        assert_int_equal(lf_stepper_step(c, 0.2, 50), LF_OK);
        const double *ya = lf_stepper_state(a), *yb = lf_stepper_state(b), *yc = lf_stepper_state(c);
        double d = fmax(fmax(maxdiff(9, ya, yb), maxdiff(9, ya + 9, yc)), fmax(maxdiff(3, ya + 18, yb + 9), maxdiff(3, ya + 21, yc + 9)));
        char label[96];
        snprintf(label, sizeof label, "%s: two bodies - each alone, 50 steps", names[k]);
        CHECK_LE(d, 0, label);
        lf_stepper_free(a);
        lf_stepper_free(b);
        lf_stepper_free(c);
    }
    lf_system_free(pair);
    lf_system_free(one);
    lf_system_free(two);
    problem_free(&p);
}

/* ---------------------------------------------------------------- composite = base stepped by hand */
static double by_hand_diff(const lf_method *comp, const lf_method *base, const lf_system *sys, const double *y0,
                           double h, int nsteps, int np)
{
    const lf_compose_scheme *sc = lf_compose_scheme_of(comp);
    lf_stepper *a = new_stepper(comp, sys, y0, NULL), *b = new_stepper(base, sys, y0, NULL);
    for (int n = 0; n < nsteps; n++) {
        if (lf_stepper_step(a, h, 1) != LF_OK) fail_msg("%s", lf_stepper_error(a)->msg);
        for (int i = 0; i < sc->n; i++)
            if (lf_stepper_step(b, sc->c[i] * h, 1) != LF_OK) fail_msg("%s", lf_stepper_error(b)->msg);
    }
    double d = maxdiff(np, lf_stepper_state(a), lf_stepper_state(b));
    lf_stepper_stats sa, sb;
    lf_stepper_get_stats(a, &sa);
    lf_stepper_get_stats(b, &sb);
    if (sa.steps != nsteps) d = INFINITY;
    lf_stepper_free(a);
    lf_stepper_free(b);
    return d;
}

static void test_composite_equals_by_hand(void **state)
{
    (void)state;
    problem p = problem_stress();
    double y0[12];
    lf_error e;
    lf_system *sys = problem_system(&p, y0, &e);
    static const char *const sym[4] = {"triple_jump4", "suzuki4", "kahan_li6", "kahan_li8"};
    for (int k = 0; k < 4; k++) { /* vlv and lgvi: bitwise, torque cache passed between stages */
        for (int b = 0; b < 2; b++) {
            const char *base = b ? "lgvi" : "vlv";
            lf_method *m = compose(base, sym[k]);
            char label[96];
            snprintf(label, sizeof label, "%s_%s - %s by hand, 20 steps h = 0.1", base, sym[k], base);
            CHECK_LE(by_hand_diff(m, lf_method_find(base), sys, y0, 0.1, 20, 12), 0, label);
            lf_method_free(m);
        }
    }
    /* the splittings: the composite merges adjacent kicks and flows of the stages */
    for (int k = 0; k < 4; k++) {
        lf_method *m = compose("split_exact", sym[k]);
        char label[96];
        snprintf(label, sizeof label, "split_exact_%s - split_exact by hand, 20 steps", sym[k]);
        CHECK_LE(by_hand_diff(m, lf_method_find("split_exact"), sys, y0, 0.1, 20, 12), 1e-14, label);
        lf_method_free(m);
        m = compose("no_squish", sym[k]);
        snprintf(label, sizeof label, "no_squish_%s - no_squish by hand, 20 steps", sym[k]);
        CHECK_LE(by_hand_diff(m, lf_method_find("no_squish"), sys, y0, 0.1, 20, 12), 1e-14, label);
        lf_method_free(m);
    }
    lf_system_free(sys);
    problem_free(&p);
    /* a generic base on a time-dependent ODE, Y' = (A0 + sin t A1) Y: the stages see their own times */
    lf_factor_kind kind = LF_GL3;
    lf_manifold *M = lf_manifold_new(1, &kind, NULL, LF_RIGHT_TRIVIALIZED, &e);
    const double params[18] = {0.1, -0.8, 0.3, 0.9, -0.2, 0.5, -0.4, 0.6, 0.05,
                               0.3, 0.2, -0.1, 0.0, 0.4, 0.2, 0.5, -0.3, -0.2};
    double Y0[9];
    lf_m3_identity(Y0);
    lf_system *gl = lf_lie_ode_builtin("gl3_linear", M, Y0, params, &e);
    lf_manifold_free(M);
    if (!gl) fail_msg("%s", e.msg);
    lf_method *m = compose("rkmk_gl4_sym", "kahan_li6");
    CHECK_LE(by_hand_diff(m, lf_method_find("rkmk_gl4_sym"), gl, Y0, 0.2, 10, 9), 1e-14,
             "rkmk_gl4_sym_kahan_li6 - by hand on Y' = A(t) Y, 10 steps");
    lf_method_free(m);
    lf_system_free(gl);
}

/* ---------------------------------------------------------------- processed schemes */
/* Run base b by hand through stages c[0..n-1] (sub-steps c_i h, in order), reversed and negated when
 * inverse (a processor's inverse). */
static void stages(lf_stepper *b, const double *c, int n, double h, int inverse)
{
    for (int i = 0; i < n; i++) {
        const double ci = inverse ? -c[n - 1 - i] : c[i];
        if (lf_stepper_step(b, ci * h, 1) != LF_OK) fail_msg("%s", lf_stepper_error(b)->msg);
    }
}

/* The processed composite over (h1, n1 steps) then (h2, n2 steps) against the base by hand:
 * P_h1^-1, n1 kernels, P_h1, P_h2^-1, n2 kernels (the kernel's state compared here), P_h2. */
static double processed_by_hand(const lf_method *comp, const lf_method *base, const lf_system *sys, const double *y0,
                                double h1, int n1, double h2, int n2, int np)
{
    const lf_compose_scheme *sc = lf_compose_scheme_of(comp);
    lf_stepper *a = new_stepper(comp, sys, y0, NULL), *b = new_stepper(base, sys, y0, NULL);
    if (lf_stepper_step(a, h1, n1) != LF_OK || lf_stepper_step(a, h2, n2) != LF_OK)
        fail_msg("%s", lf_stepper_error(a)->msg);
    const double hs[2] = {h1, h2};
    const int ns[2] = {n1, n2};
    double d = 0, hp;
    for (int r = 0; r < 2; r++) {
        stages(b, sc->p, sc->np, fabs(hs[r]), 1);
        for (int k = 0; k < ns[r]; k++) stages(b, sc->c, sc->n, hs[r], 0);
        if (r == 1) d = maxdiff(np, lf_stepper_kernel_state(a, &hp), lf_stepper_state(b));
        stages(b, sc->p, sc->np, fabs(hs[r]), 0);
    }
    d = fmax(d, maxdiff(np, lf_stepper_state(a), lf_stepper_state(b)));
    if (hp != fabs(h2)) d = INFINITY;
    lf_stepper_free(a);
    lf_stepper_free(b);
    return d;
}

static void test_processed(void **state)
{
    (void)state;
    problem p = problem_stress();
    double y0[12];
    lf_error e;
    lf_system *sys = problem_system(&p, y0, &e);
    static const char *const bases[4] = {"vlv", "lgvi", "split_exact", "dlm"};
    int found = 0;
    for (int i = 0; i < lf_compose_scheme_count(); i++) {
        const lf_compose_scheme *sc = lf_compose_scheme_at(i);
        if (sc->np == 0) continue;
        found++;
        for (int k = 0; k < 4; k++) {
            if (sc->form == LF_COMPOSE_RKN && strcmp(bases[k], "split_exact") != 0) continue; /* split_exact only */
            lf_method *m = compose(bases[k], sc->name);
            const lf_method *base = lf_method_find(bases[k]);
            char label[128];
            /* vlv and lgvi bitwise (the torque cache passes between stages as by hand); the splittings
             * merge adjacent kicks within a run. (An RKN scheme's kicks and flows are not steps of a
             * method: its order below measures it.) */
            const double tol = k < 2 ? 0 : 1e-14;
            snprintf(label, sizeof label, "%s - by hand: P^-1 K^20 P, then h = -0.07 x 7 (processed again)", lf_method_get_info(m)->name);
            if (sc->form != LF_COMPOSE_RKN) CHECK_LE(processed_by_hand(m, base, sys, y0, 0.1, 20, -0.07, 7, 12), tol, label);
            /* there and back: h = 0.1 x 30, then -0.1 x 30 (P_|h| for both directions) */
            lf_stepper *a = new_stepper(m, sys, y0, NULL);
            assert_int_equal(lf_stepper_step(a, 0.1, 30), LF_OK);
            assert_int_equal(lf_stepper_step(a, -0.1, 30), LF_OK);
            snprintf(label, sizeof label, "%s: 30 steps of 0.1 and back", lf_method_get_info(m)->name);
            CHECK_LE(maxdiff(12, lf_stepper_state(a), y0), 1e-13, label);
            /* the kernel's state set back resumes bit for bit */
            double z[12], hp, t = lf_stepper_time(a);
            memcpy(z, lf_stepper_kernel_state(a, &hp), sizeof z);
            assert_true(hp == 0.1);
            lf_stepper *c = new_stepper(m, sys, lf_stepper_state(a), NULL);
            assert_int_equal(lf_stepper_restore(c, lf_stepper_state(a), t, lf_stepper_time_compensation(a), 0), LF_OK);
            assert_int_equal(lf_stepper_set_kernel_state(c, z, hp), LF_OK);
            assert_int_equal(lf_stepper_step(a, 0.1, 9), LF_OK);
            assert_int_equal(lf_stepper_step(c, 0.1, 9), LF_OK);
            snprintf(label, sizeof label, "%s: resumed from the kernel's state", lf_method_get_info(m)->name);
            CHECK_LE(maxdiff(12, lf_stepper_state(a), lf_stepper_state(c)), 0, label);
            lf_stepper_free(a);
            lf_stepper_free(c);
            /* a failing first step (pre-processing for a new h) leaves the state shown bit for bit, and the
             * run goes on as if it had not been tried */
            lf_stepper *f = new_stepper(m, sys, y0, NULL), *g = new_stepper(m, sys, y0, NULL);
            assert_int_equal(lf_stepper_step(f, 0.1, 5), LF_OK);
            double shown[12];
            memcpy(shown, lf_stepper_state(f), sizeof shown);
            assert_int_not_equal(lf_stepper_step(f, 1e300, 1), LF_OK);
            snprintf(label, sizeof label, "%s: state after a failed step of 1e300", lf_method_get_info(m)->name);
            CHECK_LE(maxdiff(12, lf_stepper_state(f), shown), 0, label);
            assert_int_equal(lf_stepper_step(f, 0.1, 3), LF_OK);
            assert_int_equal(lf_stepper_step(g, 0.1, 5), LF_OK);
            assert_int_equal(lf_stepper_step(g, 0.1, 3), LF_OK);
            snprintf(label, sizeof label, "%s: then 3 steps = 8 steps without the failure", lf_method_get_info(m)->name);
            CHECK_LE(maxdiff(12, lf_stepper_state(f), lf_stepper_state(g)), 0, label);
            lf_stepper_free(f);
            lf_stepper_free(g);
            /* refused: reversible adaptive steps */
            lf_stepper_opts o = {0};
            o.adapt = 1;
            lf_error ea = {0};
            assert_null(lf_stepper_new(m, sys, y0, 0, &o, &ea));
            printf("  adapt refused: %s\n", ea.msg);
            assert_non_null(strstr(ea.msg, "processed"));
            lf_method_free(m);
        }
    }
    printf("  %d processed schemes\n", found);
    assert_true(found >= 3);
    /* a method without processing: kernel state = state, h_proc 0; setting h_proc > 0 refused */
    lf_stepper *v = new_stepper(lf_method_find("vlv"), sys, y0, NULL);
    double hp = 1;
    assert_ptr_equal(lf_stepper_kernel_state(v, &hp), lf_stepper_state(v));
    assert_true(hp == 0);
    assert_int_equal(lf_stepper_set_kernel_state(v, y0, 0.1), LF_EINVAL);
    printf("  %s\n", lf_stepper_error(v)->msg);
    lf_stepper_free(v);
    lf_system_free(sys);
    problem_free(&p);
}

/* ---------------------------------------------------------------- orders */
typedef struct {
    const char *base, *scheme;
    int order;
} combo;

static void order_of_T(const lf_method *m, const problem *p, double T, double h0, double floor, int order)
{
    lf_error e;
    double y0[12], ref[12], hs[16], eR[16], ew[16];
    lf_system *sys = problem_system(p, y0, &e);
    lf_reference_opts ro = {1e-14, 1e-14, 1e-3, 0, NULL};
    if (lf_reference_solve(sys, y0, 0, &T, 1, ref, NULL, &ro, &e) != LF_OK) fail_msg("%s", e.msg);
    double h_first;
    const int cnt = orderfit_rigid_errors(m, sys, y0, T, ref, h0, 15, floor, hs, eR, ew, &h_first, &e);
    if (cnt < 0) fail_msg("%s: %s", lf_method_get_info(m)->name, e.msg);
    orderfit fR, fw;
    assert_true(orderfit_window(hs, eR, cnt, floor, &fR));
    assert_true(orderfit_window(hs, ew, cnt, floor, &fw));
    const char *wR, *ww;
    const int okR = orderfit_ok(&fR, order, &wR), okw = orderfit_ok(&fw, order, &ww);
    printf("  %-28s %-9s T=%-3g R %.3f (h=%g..%g, %s)  w %.3f (h=%g..%g, %s)  nominal %d\n", lf_method_get_info(m)->name,
           p->name, T, fR.order, hs[fR.first], hs[fR.last], wR, fw.order, hs[fw.first], hs[fw.last], ww, order);
    assert_true(okR);
    assert_true(okw);
    lf_system_free(sys);
}

static void order_of(const lf_method *m, const problem *p, double h0, double floor, int order)
{
    order_of_T(m, p, 5, h0, floor, order);
}

static void test_orders(void **state)
{
    (void)state;
    static const combo combos[] = {
        {"vlv", "triple_jump4", 4},        {"vlv", "suzuki4", 4},        {"vlv", "kahan_li6", 6},
        {"vlv", "kahan_li8", 8},           {"dlm", "kahan_li8", 8},      {"dlm", "blanes_moan4", 4},
        {"no_squish", "blanes_moan4", 4},  {"no_squish", "kahan_li6", 6}, {"split_exact", "blanes_moan4", 4},
        {"split_exact", "rkn4", 4},        {"split_exact", "rkn6", 6},   {"split_exact", "kahan_li8", 8},
        {"rkmk_gl4_sym", "triple_jump4", 4}, {"rkmk_gl4_sym", "kahan_li6", 6},
        {"dlm", "blanes_moan6", 6},        {"no_squish", "blanes_moan6", 6}, {"split_exact", "rkn6a", 6},
        /* processed: the effective order of P K P^-1 (the kernel alone has order 2) */
        {"vlv", "processed6", 6},          {"split_exact", "processed6", 6}, {"dlm", "processed6", 6},
        {"vlv", "processed8", 8},          {"split_exact", "processed8", 8}, {"dlm", "processed8", 8},
    };
    for (size_t i = 0; i < sizeof combos / sizeof combos[0]; i++) {
        lf_method *m = compose(combos[i].base, combos[i].scheme);
        assert_int_equal(lf_method_get_info(m)->order, combos[i].order);
        problem ps = problem_stress(), pt = problem_slow_top();
        order_of(m, &ps, 1, 1e-13, combos[i].order);
        order_of(m, &pt, 0.5, 5e-12, combos[i].order);
        problem_free(&ps);
        problem_free(&pt);
        lf_method_free(m);
    }
    /* the processed RKN splitting: its order-6 error term is small (optimized), so at T = 5 the errors
     * reach the floor while the next terms dominate (slopes 7.3, 6.8, 6.5 on the stress test); over
     * T = 50 the asymptotic order shows one halving above a floor of 1e-11 (R 5.95, w 5.74) */
    lf_method *p6 = compose("split_exact", "rkn6p");
    problem p50 = problem_stress();
    order_of_T(p6, &p50, 50, 1, 1e-11, 6);
    problem_free(&p50);
    lf_method_free(p6);
    /* McLachlan's order 8 on the stress test (on the slow top vlv + mclachlan8 fits 7.75 over its last
     * three halvings before the floor, outside the +-0.15 of a fit) */
    lf_method *m = compose("vlv", "mclachlan8");
    problem ps = problem_stress();
    order_of(m, &ps, 1, 1e-13, 8);
    problem_free(&ps);
    lf_method_free(m);
}

/* ---------------------------------------------------------------- refusals and metadata */
static void refused(const char *base, const char *scheme, const char *const *words)
{
    lf_error e = {0};
    assert_null(lf_compose_method_new(lf_method_find(base), scheme, &e));
    printf("  %s + %s: %s\n", base, scheme, e.msg);
    assert_int_equal(e.code, LF_EINVAL);
    for (int i = 0; words[i]; i++) assert_non_null(strstr(e.msg, words[i]));
}

static void test_refusals(void **state)
{
    (void)state;
    refused("liemid_e", "suzuki4", (const char *const[]){"liemid_e", "not symmetric", NULL});
    refused("rkmk_dp45", "kahan_li6", (const char *const[]){"rkmk_dp45", "adaptive", NULL});
    refused("vlv", "blanes_moan4", (const char *const[]){"vlv", "blanes_moan4", "adjoint", NULL});
    refused("dlm", "rkn6", (const char *const[]){"dlm", "rkn6", "split_exact", NULL});
    refused("vlv", "yoshida6", (const char *const[]){"yoshida6", "triple_jump4", "kahan_li8", NULL});
    lf_error e = {0};
    assert_null(lf_compose_method_new(NULL, "suzuki4", &e));
    assert_int_equal(e.code, LF_EINVAL);
}

static void test_registered_metadata(void **state)
{
    (void)state;
    int n = 0;
    for (int i = 0; i < lf_method_count(); i++) {
        const lf_method *m = lf_method_at(i);
        const lf_compose_scheme *sc = lf_compose_scheme_of(m);
        if (!sc) continue;
        n++;
        lf_error e;
        lf_method *u = lf_compose_method_new(lf_compose_base(m), sc->name, &e);
        if (!u) fail_msg("%s", e.msg);
        const lf_method_info *a = lf_method_get_info(m), *b = lf_method_get_info(u);
        const lf_method_rigid_info *ra = lf_method_get_rigid_info(m), *rb = lf_method_get_rigid_info(u);
        printf("  %-16s = %-30s order %d, symplectic %s, implicit %d, momentum %d\n", a->name, b->name, a->order,
               a->symplectic, a->implicit, ra->momentum_conserving);
        assert_int_equal(a->order, b->order);
        assert_int_equal(a->symmetric, b->symmetric);
        assert_string_equal(a->symplectic, b->symplectic);
        assert_int_equal(a->implicit, b->implicit);
        assert_int_equal(a->form, b->form);
        assert_int_equal(ra->explicit_in_torque, rb->explicit_in_torque);
        assert_int_equal(ra->momentum_conserving, rb->momentum_conserving);
        assert_int_equal(ra->free_body_only, rb->free_body_only);
        assert_int_equal(a->adaptive, b->adaptive);
        assert_string_equal(a->family, "composition");
        lf_method_free(u);
    }
    assert_true(n >= 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_exact_free_flow), cmocka_unit_test(test_two_bodies),
        cmocka_unit_test(test_composite_equals_by_hand),
        cmocka_unit_test(test_refusals),              cmocka_unit_test(test_registered_metadata),
        cmocka_unit_test(test_processed),             cmocka_unit_test(test_orders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
