/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The generic Lie-group methods on every compatible problem (method x problem), measured:
 *  - fitted orders against closed forms / rk8pd references on S^2 (the gradient flow of Tumiotto et
 *    al., closed form q(t) = e^{-Dt} q0 / |e^{-Dt} q0|), GL(3) (Y' = A(t) Y, both trivializations)
 *    and S^3 (the free rigid body's attitude as a unit quaternion, both trivializations); the rigid
 *    problems are in test_methods.c;
 *  - a truncated dexpinv of q Bernoulli terms caps the order (at q, or q + 1 when the next
 *    Bernoulli number vanishes);
 *  - unit vectors and quaternions stay on the sphere after 1e4 steps;
 *  - the midpoint-centred Gauss methods are symmetric; the plain RKMK Gauss methods miss by O(h^5),
 *    O(h^7) per step h, -h (Zanna, Engø & Munthe-Kaas 2001);
 *  - rkmk_dp45 meets its tolerance and takes longer steps where the motion is slow; rkmk_dp853 has order 8
 *    (its steps held at h by a loose tolerance), meets its tolerance, its steps growing like tol^(-1/8),
 *    and takes fewer steps than rkmk_dp45 at every tolerance;
 *  - lie_euler equals a Lie–Euler step written out by hand on the rigid body;
 *  - Newton with analytic, finite-difference and block-diagonal Jacobians and the fixed-point
 *    iteration agree; a user tableau runs like the built-in one.
 * Every measurement is printed, then asserted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "problems.h"
#include "testutil.h"

/* ---------------------------------------------------------------- the problems */
typedef struct {
    const char *name;
    lf_system *sys;
    double y0[16];
    double T;
    int np;
    int closed_form; /* 1: S^2 flow (exact solution), else rk8pd */
    double D[3];
    double h0; /* largest step of the order study */
} gproblem;

static lf_manifold *one_factor(lf_factor_kind k, lf_trivialization triv)
{
    lf_error e;
    lf_manifold *M = lf_manifold_new(1, &k, NULL, triv, &e);
    if (!M) fail_msg("%s", e.msg);
    return M;
}

static gproblem make_s2(void)
{
    gproblem p = {.name = "S2 gradient flow", .T = 2, .np = 3, .closed_form = 1, .D = {1, 1, 3}, .h0 = 0.25};
    double q[3] = {0.3, -0.5, 0.6};
    lf_v3_scale(q, 1 / lf_v3_norm(q), p.y0);
    lf_manifold *M = one_factor(LF_S2, LF_RIGHT_TRIVIALIZED);
    lf_error e;
    p.sys = lf_lie_ode_builtin("s2_gradient_flow", M, p.y0, p.D, &e);
    lf_manifold_free(M);
    if (!p.sys) fail_msg("%s", e.msg);
    return p;
}

static gproblem make_gl3(lf_trivialization triv)
{
    gproblem p = {
        .name = triv == LF_LEFT_TRIVIALIZED ? "GL3 Y' = Y A(t)" : "GL3 Y' = A(t) Y", .T = 2, .np = 9, .h0 = 0.25};
    const double params[18] = {0.1, -0.8, 0.3,  0.9, -0.2, 0.5, -0.4, 0.6,  0.05,
                               0.3, 0.2,  -0.1, 0.0, 0.4,  0.2, 0.5,  -0.3, -0.2};
    lf_m3_identity(p.y0);
    lf_manifold *M = one_factor(LF_GL3, triv);
    lf_error e;
    p.sys = lf_lie_ode_builtin("gl3_linear", M, p.y0, params, &e);
    lf_manifold_free(M);
    if (!p.sys) fail_msg("%s", e.msg);
    return p;
}

static gproblem make_s3(lf_trivialization triv)
{
    gproblem p = {.name = triv == LF_LEFT_TRIVIALIZED ? "S3 free body (left)" : "S3 free body (right)",
                  .T = 2,
                  .np = 4,
                  .h0 = 0.25};
    const double params[6] = {0.9144, 1.098, 1.66, 0.4, 0.9, -0.3}; /* J, m0 */
    double q[4] = {0.9, 0.1, -0.3, 0.2}, n = sqrt(0.81 + 0.01 + 0.09 + 0.04);
    for (int k = 0; k < 4; k++) p.y0[k] = q[k] / n;
    lf_manifold *M = one_factor(LF_S3, triv);
    lf_error e;
    p.sys = lf_lie_ode_builtin("free_rigid_quat", M, p.y0, params, &e);
    lf_manifold_free(M);
    if (!p.sys) fail_msg("%s", e.msg);
    return p;
}

/* the solution at T: closed form for the S^2 flow, else rk8pd at 1e-14 */
static void solution(const gproblem *p, double *y)
{
    if (p->closed_form) {
        for (int k = 0; k < 3; k++) y[k] = exp(-p->D[k] * p->T) * p->y0[k];
        lf_v3_scale(y, 1 / lf_v3_norm(y), y);
        return;
    }
    lf_error e;
    lf_reference_opts ro = {1e-14, 1e-14, 1e-3, 0, NULL};
    if (lf_reference_solve(p->sys, p->y0, 0, &p->T, 1, y, NULL, &ro, &e) != LF_OK) fail_msg("%s", e.msg);
}

static lf_stepper *stepper(const lf_method *m, const gproblem *p, const lf_stepper_opts *o)
{
    return new_stepper(m, p->sys, p->y0, o);
}

static double err_at_T(const lf_method *m, const gproblem *p, double h, const double *ref, const lf_stepper_opts *o)
{
    lf_stepper *st = stepper(m, p, o);
    if (lf_stepper_step(st, h, lround(p->T / h)) != LF_OK) fail_msg("%s", lf_stepper_error(st)->msg);
    double d = lf_manifold_dist(lf_system_manifold(p->sys), lf_stepper_state(st), ref);
    lf_stepper_free(st);
    return d;
}

/* The fitted order over the asymptotic window: up to 9 halvings from h0 (order 1: 6 halvings from
 * 2^-6), stopping below 1e-12, fitted on the last 4. */
static double measured_order(const lf_method *m, const gproblem *p, const lf_stepper_opts *o, double *hlo, double *ehi)
{
    double ref[16], hs[16], es[16];
    solution(p, ref);
    int n = 0;
    const int first_order = method_info(m)->order == 1;
    double h0 = first_order ? 1.0 / 64 : method_info(m)->order >= 6 ? 4 * p->h0 : p->h0;
    for (int k = 0; k < (first_order ? 6 : 9); k++) {
        hs[n] = h0 / (1 << k);
        es[n] = err_at_T(m, p, hs[n], ref, o);
        if (es[n] < 1e-12) break;
        n++;
    }
    int first = n >= 4 ? n - 4 : 0;
    if (n - first < 3) fail_msg("%s on %s: too few points above round-off", method_info(m)->name, p->name);
    *hlo = hs[n - 1];
    *ehi = es[first];
    return loglog_slope(hs + first, es + first, n - first);
}

static int generic(const lf_method *m) { return method_info(m)->form == LF_FORM_LIE_ODE && !method_info(m)->adaptive; }

/* ---------------------------------------------------------------- orders */
static void test_orders(void **state)
{
    (void)state;
    gproblem ps[5] = {make_s2(), make_gl3(LF_RIGHT_TRIVIALIZED), make_gl3(LF_LEFT_TRIVIALIZED),
                      make_s3(LF_RIGHT_TRIVIALIZED), make_s3(LF_LEFT_TRIVIALIZED)};
    for (int k = 0; k < 5; k++)
        for (int i = 0; i < lf_method_count(); i++) {
            const lf_method *m = lf_method_at(i);
            if (!generic(m)) continue;
            double hlo, ehi, o = measured_order(m, &ps[k], NULL, &hlo, &ehi);
            printf("  %-18s %-20s order %.3f (nominal %d; down to h=%g from err %.2e)\n", method_info(m)->name,
                   ps[k].name, o, method_info(m)->order, hlo, ehi);
            assert_true(fabs(o - method_info(m)->order) <= 0.15);
        }
    for (int k = 0; k < 5; k++) lf_system_free(ps[k].sys);
}

/* A truncated dexpinv of q terms (k < q) caps the order below the tableau's. Ortolan's thesis
 * §7.1.2 (after Munthe-Kaas) states order at least q; measured, it is one more: with u(t) ~ t k(0)
 * the first neglected term B_j/j! ad_u^j(k) (j = q, or q + 1 when B_q = 0 for odd q >= 3) is
 * O(t^{j+1}), not O(t^j), because [u, k] = O(t^2): the local error is O(h^{j+2}) and the order
 * min(p, j + 1). rkmk4 and rkmk_gl6 on the nonlinear S^3 problem, in both trivializations. */
static void test_truncated_dexpinv(void **state)
{
    (void)state;
    gproblem ps[2] = {make_s3(LF_LEFT_TRIVIALIZED), make_s3(LF_RIGHT_TRIVIALIZED)};
    const struct {
        const char *method;
        int q, expect;
    } cases[] = {{"rkmk4", 1, 2}, {"rkmk4", 2, 3}, {"rkmk4", 3, 4}, {"rkmk_gl6", 2, 3}, {"rkmk_gl6", 4, 5}};
    for (int k = 0; k < 2; k++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            lf_stepper_opts o = {.dexpinv_order = cases[c].q};
            const lf_method *m = lf_method_find(cases[c].method);
            double hlo, ehi, ord = measured_order(m, &ps[k], &o, &hlo, &ehi);
            printf("  %-10s dexpinv with %d term(s) on %-20s: order %.3f (expected %d)\n", cases[c].method, cases[c].q,
                   ps[k].name, ord, cases[c].expect);
            assert_true(fabs(ord - cases[c].expect) <= 0.2);
        }
    for (int k = 0; k < 2; k++) lf_system_free(ps[k].sys);
}

/* ---------------------------------------------------------------- on the manifold */
static void test_stays_on_manifold(void **state)
{
    (void)state;
    gproblem ps[3] = {make_s2(), make_s3(LF_RIGHT_TRIVIALIZED), make_s3(LF_LEFT_TRIVIALIZED)};
    for (int i = 0; i < lf_method_count(); i++) {
        const lf_method *m = lf_method_at(i);
        if (method_info(m)->form != LF_FORM_LIE_ODE) continue;
        double worst = 0;
        for (int k = 0; k < 3; k++) {
            lf_stepper *st = stepper(m, &ps[k], NULL);
            if (lf_stepper_step(st, 0.05, 10000) != LF_OK) fail_msg("%s", lf_stepper_error(st)->msg);
            worst = fmax(worst, lf_manifold_defect(lf_system_manifold(ps[k].sys), lf_stepper_state(st)));
            lf_stepper_free(st);
        }
        printf("  %-18s max ||q| - 1| after 1e4 steps (S2, S3 right, S3 left): %.2e\n", method_info(m)->name, worst);
        assert_true(worst <= 1e-13);
    }
    for (int k = 0; k < 3; k++) lf_system_free(ps[k].sys);
}

/* ---------------------------------------------------------------- symmetry */
static void test_symmetry(void **state)
{
    (void)state;
    gproblem ps[3] = {make_gl3(LF_RIGHT_TRIVIALIZED), make_s3(LF_LEFT_TRIVIALIZED), make_s2()};
    for (int i = 0; i < lf_method_count(); i++) {
        const lf_method *m = lf_method_at(i);
        if (!generic(m)) continue;
        double worst = 0;
        for (int k = 0; k < 3; k++) worst = fmax(worst, back_and_forth(m, ps[k].sys, ps[k].y0, 0.25));
        printf("  %-18s step h then -h on GL3, S3, S2: max deviation %.2e (symmetric: %s)\n", method_info(m)->name,
               worst, method_info(m)->symmetric ? "yes" : "no");
        if (method_info(m)->symmetric) assert_true(worst <= 1e-12);
        else assert_true(worst > 1e-13);
    }
    /* the plain RKMK Gauss methods: the defect of h, -h is a method's (it falls with h at least like
     * h^{p+1}: measured h^6 for rkmk_gl4, h^8 for rkmk_gl6 on S^3), not round-off */
    const char *names[2] = {"rkmk_gl4", "rkmk_gl6"};
    for (int j = 0; j < 2; j++) {
        double hs[4], ds[4];
        for (int k = 0; k < 4; k++) {
            hs[k] = 0.5 / (1 << k);
            ds[k] = back_and_forth(lf_method_find(names[j]), ps[1].sys, ps[1].y0, hs[k]);
        }
        double sl = loglog_slope(hs, ds, 4);
        printf("  %-18s h, -h defect on S3 falls like h^%.2f (at least h^%d expected)\n", names[j], sl, j ? 7 : 5);
        assert_true(sl >= (j ? 7 : 5) - 0.3);
    }
    for (int k = 0; k < 3; k++) lf_system_free(ps[k].sys);
}

/* ---------------------------------------------------------------- rkmk_dp853 */
static void test_dp853(void **state)
{
    (void)state;
    const lf_method *m8 = lf_method_find("rkmk_dp853"), *m5 = lf_method_find("rkmk_dp45");
    assert_non_null(m8);
    problem pr = problem_stress();
    double y0[12], ref[12], T = 2.4;
    lf_error e;
    lf_system *sys = problem_system(&pr, y0, &e);
    lf_reference_opts ro = {1e-14, 1e-14, 1e-3, 0, NULL};
    if (lf_reference_solve(sys, y0, 0, &T, 1, ref, NULL, &ro, &e) != LF_OK) fail_msg("%s", e.msg);
    /* the order: a tolerance no step fails, so that every step is h (2.7e-15 at h = 0.025: round-off) */
    double hs[4] = {0.4, 0.3, 0.2, 0.15}, err[4];
    for (int k = 0; k < 4; k++) {
        lf_stepper_opts o = {.rtol = 1e10, .atol = 1e10};
        lf_stepper *st = lf_stepper_new(m8, sys, y0, 0, &o, &e);
        if (!st || lf_stepper_step(st, hs[k], lround(T / hs[k])) != LF_OK) /* steps of at most h: h */
            fail_msg("%s", st ? lf_stepper_error(st)->msg : e.msg);
        assert_true(fabs(lf_stepper_time(st) - T) < 1e-14);
        err[k] = lf_manifold_dist(lf_system_manifold(sys), lf_stepper_state(st), ref);
        lf_stepper_free(st);
    }
    const double slope = loglog_slope(hs, err, 4);
    printf("  rkmk_dp853, steps held at h = 0.4, 0.3, 0.2, 0.15 (stress test, T = 2.4): error %.2e %.2e %.2e %.2e, "
           "slope %.2f\n",
           err[0], err[1], err[2], err[3], slope);
    assert_true(slope > 7.5 && slope < 8.8);
    /* the tolerances, against rkmk_dp45 */
    T = 20;
    if (lf_reference_solve(sys, y0, 0, &T, 1, ref, NULL, &ro, &e) != LF_OK) fail_msg("%s", e.msg);
    double tols[3] = {1e-6, 1e-9, 1e-12}, errs[3];
    long steps[3];
    for (int k = 0; k < 3; k++) {
        lf_stepper_opts o = {.rtol = tols[k], .atol = tols[k]};
        long n[2];
        for (int w = 0; w < 2; w++) {
            lf_stepper *st = lf_stepper_new(w ? m5 : m8, sys, y0, 0, &o, &e);
            if (!st || lf_stepper_advance_to(st, T, 0.1) != LF_OK)
                fail_msg("%s", st ? lf_stepper_error(st)->msg : e.msg);
            lf_stepper_stats stats;
            lf_stepper_get_stats(st, &stats);
            n[w] = stats.steps;
            if (!w) errs[k] = lf_manifold_dist(lf_system_manifold(sys), lf_stepper_state(st), ref);
            lf_stepper_free(st);
        }
        steps[k] = n[0];
        printf("  rkmk_dp853 stress test T=20, tol %.0e: global error %.2e (%.2f x tol), %ld steps (rkmk_dp45: %ld)\n",
               tols[k], errs[k], errs[k] / tols[k], n[0], n[1]);
        assert_true(errs[k] <= 100 * tols[k] && n[0] < n[1]);
    }
    const double q = log(errs[0] / errs[2]) / log(tols[0] / tols[2]),
                 p = log((double)steps[2] / steps[0]) / log(tols[0] / tols[2]);
    printf("  error ~ tol^%.2f; steps grow like tol^-%.3f (1/8 expected)\n", q, p);
    assert_true(q > 0.7 && q < 1.3 && p > 0.09 && p < 0.18);
    lf_system_free(sys);
}

/* ---------------------------------------------------------------- adaptive */
static void test_adaptive(void **state)
{
    (void)state;
    const lf_method *m = lf_method_find("rkmk_dp45");
    problem pr = problem_stress();
    double y0[12], ref[12], T = 20;
    lf_error e;
    lf_system *sys = problem_system(&pr, y0, &e);
    lf_reference_opts ro = {1e-14, 1e-14, 1e-3, 0, NULL};
    if (lf_reference_solve(sys, y0, 0, &T, 1, ref, NULL, &ro, &e) != LF_OK) fail_msg("%s", e.msg);
    double tols[3] = {1e-6, 1e-8, 1e-10}, errs[3];
    long steps[3];
    for (int k = 0; k < 3; k++) {
        lf_stepper_opts o = {.rtol = tols[k], .atol = tols[k]};
        lf_stepper *st = lf_stepper_new(m, sys, y0, 0, &o, &e);
        if (!st || lf_stepper_advance_to(st, T, 0.1) != LF_OK) fail_msg("%s", st ? lf_stepper_error(st)->msg : e.msg);
        errs[k] = lf_manifold_dist(lf_system_manifold(sys), lf_stepper_state(st), ref);
        lf_stepper_stats stats;
        lf_stepper_get_stats(st, &stats);
        steps[k] = stats.steps;
        printf("  rkmk_dp45 stress test T=20, tol %.0e: global error %.2e (%.1f x tol), %ld steps, %ld rejected\n",
               tols[k], errs[k], errs[k] / tols[k], stats.steps, stats.rejected);
        assert_true(fabs(lf_stepper_time(st) - T) == 0);
        assert_true(errs[k] <= 100 * tols[k]);
        lf_stepper_free(st);
    }
    double q = log(errs[0] / errs[2]) / log(tols[0] / tols[2]);
    printf("  error ~ tol^%.2f; steps grow like tol^-%.3f (1/5 expected for a 5th-order pair)\n", q,
           log((double)steps[2] / steps[0]) / log(tols[0] / tols[2]));
    assert_true(q > 0.7 && q < 1.3);
    /* larger steps where the motion is slow: the free body J = (1, 2, 3) started next to its
     * unstable middle axis creeps away from it and flips quickly, again and again; mean step where
     * |w'| is in the slowest quarter against the fastest quarter */
    const double Jf[3] = {1, 2, 3};
    double yf[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0.01, 1, 0.01};
    lf_system *fb = lf_rigid_new(1, Jf, NULL, &e);
    lf_stepper_opts o = {.rtol = 1e-8, .atol = 1e-8};
    lf_stepper *st = lf_stepper_new(m, fb, yf, 0, &o, &e);
    enum { N = 1000 };
    static double hk[N], speed[N];
    for (int k = 0; k < N; k++) {
        double t0 = lf_stepper_time(st), xi[6];
        lf_system_f(fb, t0, lf_stepper_state(st), xi, &e);
        speed[k] = lf_v3_norm(xi + 3);
        if (lf_stepper_step(st, INFINITY, 1) != LF_OK) fail_msg("%s", lf_stepper_error(st)->msg);
        hk[k] = lf_stepper_time(st) - t0;
    }
    double s_sorted[N];
    memcpy(s_sorted, speed, sizeof s_sorted);
    for (int i = 1; i < N; i++) /* insertion sort: N is small */
        for (int j = i; j > 0 && s_sorted[j - 1] > s_sorted[j]; j--) {
            double t = s_sorted[j];
            s_sorted[j] = s_sorted[j - 1];
            s_sorted[j - 1] = t;
        }
    double lo = s_sorted[N / 4], hi = s_sorted[3 * N / 4], hslow = 0, hfast = 0;
    int nslow = 0, nfast = 0;
    for (int k = 0; k < N; k++) {
        if (speed[k] <= lo) hslow += hk[k], nslow++;
        if (speed[k] >= hi) hfast += hk[k], nfast++;
    }
    hslow /= nslow;
    hfast /= nfast;
    printf("  free body near the separatrix, %d steps to t=%.1f: mean step where |w'| is in the slowest quarter "
           "%.4f, in the fastest %.4f (ratio %.2f)\n",
           N, lf_stepper_time(st), hslow, hfast, hslow / hfast);
    assert_true(hslow > 2 * hfast);
    lf_system_free(fb);
    lf_stepper_free(st);
    lf_system_free(sys);
    problem_free(&pr);
}

/* ---------------------------------------------------------------- cross-checks */
/* lie_euler on the rigid body is R <- R exp(h w), w <- w + h J^{-1}(J w x w + tau(R)). */
static void test_lie_euler_by_hand(void **state)
{
    (void)state;
    problem pr = problem_stress();
    double y[12], x[3], tau[3], Jw[3], g[3];
    lf_error e;
    lf_system *sys = problem_system(&pr, y, &e);
    lf_stepper *st = lf_stepper_new(lf_method_find("lie_euler"), sys, y, 0, NULL, &e);
    const double h = 0.1;
    double worst = 0;
    for (int k = 0; k < 100; k++) {
        memcpy(y, lf_stepper_state(st), sizeof y);
        double *R = y, *w = y + 9;
        lf_rigid_potential_eval(sys, R, NULL, tau, &e);
        lf_v3_mul(pr.J, w, Jw);
        lf_v3_cross(Jw, w, g);
        lf_v3_add(g, tau, g);
        lf_v3_div(g, pr.J, g);
        lf_v3_scale(w, h, x);
        lf_so3_rmul_exp(R, x);
        lf_v3_axpy(w, h, g, w);
        lf_stepper_step(st, h, 1);
        worst = fmax(worst, maxdiff(12, y, lf_stepper_state(st)));
    }
    CHECK_LE(worst, 0, "lie_euler vs the step written out (100 steps, max difference)");
    lf_stepper_free(st);
    lf_system_free(sys);
    problem_free(&pr);
}

/* The implicit methods' solvers agree: analytic, finite-difference and block-diagonal Jacobians,
 * and the fixed-point iteration, on the S^2 flow (analytic Jacobian) and the stress test. */
static void test_solvers_agree(void **state)
{
    (void)state;
    gproblem s2 = make_s2();
    problem pr = problem_stress();
    double ys[12];
    lf_error e;
    lf_system *rigid = problem_system(&pr, ys, &e);
    const char *names[] = {"rkmk_gl4", "rkmk_gl6_sym", "lie_euler_implicit"};
    for (int i = 0; i < 3; i++) {
        const lf_method *m = lf_method_find(names[i]);
        for (int which = 0; which < 2; which++) {
            const lf_system *sys = which ? rigid : s2.sys;
            const double *y0 = which ? ys : s2.y0;
            const int np = which ? 12 : 3;
            double out[4][12];
            const lf_stepper_opts os[4] = {{.solver = LF_SOLVER_NEWTON, .jacobian = LF_JAC_FD},
                                           {.solver = LF_SOLVER_NEWTON, .jacobian = LF_JAC_BLOCK_FD},
                                           {.solver = LF_SOLVER_FIXED_POINT},
                                           {.solver = LF_SOLVER_NEWTON, .jacobian = LF_JAC_ANALYTIC}};
            const int nv = which ? 3 : 4; /* the rigid system has no analytic Jacobian */
            long iters[4];
            for (int v = 0; v < nv; v++) {
                lf_stepper *st = lf_stepper_new(m, sys, y0, 0, &os[v], &e);
                if (!st || lf_stepper_step(st, 0.1, 20) != LF_OK)
                    fail_msg("%s", st ? lf_stepper_error(st)->msg : e.msg);
                memcpy(out[v], lf_stepper_state(st), (size_t)np * sizeof(double));
                lf_stepper_stats stats;
                lf_stepper_get_stats(st, &stats);
                iters[v] = stats.newton_iters;
                lf_stepper_free(st);
            }
            double d = 0;
            for (int v = 1; v < nv; v++) d = fmax(d, maxdiff(np, out[0], out[v]));
            printf("  %-18s %-8s FD / block FD / fixed point%s: max difference %.2e (iterations %ld / %ld / %ld%s)\n",
                   names[i], which ? "rigid" : "S2", which ? "" : " / analytic", d, iters[0], iters[1], iters[2],
                   which ? "" : "");
            assert_true(d <= 1e-12);
        }
    }
    /* asking for an analytic Jacobian the system does not have is an error */
    lf_stepper_opts o = {.jacobian = LF_JAC_ANALYTIC};
    lf_stepper *st = lf_stepper_new(lf_method_find("rkmk_gl4"), rigid, ys, 0, &o, &e);
    assert_int_not_equal(lf_stepper_step(st, 0.1, 1), LF_OK);
    printf("  %s\n", lf_stepper_error(st)->msg);
    assert_non_null(strstr(lf_stepper_error(st)->msg, "analytic Jacobian"));
    lf_stepper_free(st);
    lf_system_free(rigid);
    lf_system_free(s2.sys);
    problem_free(&pr);
}

/* A user tableau: the classical RK4 tableau reproduces rkmk4 exactly; its order is found from the
 * order conditions; a wrong declared order and an inconsistent tableau are refused; the symmetric
 * Gauss tableau with midpoint coordinates is rkmk_gl4_sym. */
static void test_user_tableau(void **state)
{
    (void)state;
    lf_error e;
    const double A[16] = {0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 1, 0},
                 b[4] = {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6}, c[4] = {0, 0.5, 0.5, 1};
    lf_method *m = lf_rkmk_method_new("my_rk4", 4, A, b, c, 0, 0, &e);
    assert_non_null(m);
    printf("  user RK4: order %d from the order conditions, implicit %d\n", method_info(m)->order,
           method_info(m)->implicit);
    assert_int_equal(method_info(m)->order, 4);
    gproblem p = make_s3(LF_RIGHT_TRIVIALIZED);
    lf_stepper *a = stepper(m, &p, NULL), *bst = stepper(lf_method_find("rkmk4"), &p, NULL);
    lf_stepper_step(a, 0.1, 100);
    lf_stepper_step(bst, 0.1, 100);
    CHECK_LE(maxdiff(4, lf_stepper_state(a), lf_stepper_state(bst)), 0, "user RK4 vs rkmk4 after 100 steps");
    lf_stepper_free(a);
    lf_stepper_free(bst);
    lf_method_free(m);
    const double b_bad[4] = {0.2, 0.3, 0.3, 0.1};
    assert_null(lf_rkmk_method_new("inconsistent", 4, A, b_bad, c, 0, 0, &e));
    printf("  %s\n", e.msg);
    const double Ah[4] = {0, 0, 1, 0}, bh[2] = {0.5, 0.5}, ch[2] = {0, 1};
    assert_null(lf_rkmk_method_new("heun3", 2, Ah, bh, ch, 3, 0, &e));
    printf("  %s\n", e.msg);
    assert_non_null(strstr(e.msg, "up to order 2"));
    const double s3 = sqrt(3.0) / 6;
    const double Ag[4] = {0.25, 0.25 - s3, 0.25 + s3, 0.25}, bg[2] = {0.5, 0.5}, cg[2] = {0.5 - s3, 0.5 + s3};
    m = lf_rkmk_method_new("my_gl4s", 2, Ag, bg, cg, 0, 1, &e);
    assert_non_null(m);
    printf("  user Gauss-Legendre 2 with midpoint coordinates: order %d, symmetric %d\n", method_info(m)->order,
           method_info(m)->symmetric);
    assert_true(method_info(m)->symmetric && method_info(m)->implicit && method_info(m)->order == 4);
    double d = back_and_forth(m, p.sys, p.y0, 0.25);
    CHECK_LE(d, 1e-14, "user symmetric Gauss: step h then -h");
    lf_method_free(m);
    assert_null(lf_rkmk_method_new("expl_sym", 4, A, b, c, 0, 1, &e)); /* explicit: no symmetric variant */
    lf_system_free(p.sys);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_orders),
        cmocka_unit_test(test_truncated_dexpinv),
        cmocka_unit_test(test_stays_on_manifold),
        cmocka_unit_test(test_symmetry),
        cmocka_unit_test(test_adaptive),
        cmocka_unit_test(test_dp853),
        cmocka_unit_test(test_lie_euler_by_hand),
        cmocka_unit_test(test_solvers_agree),
        cmocka_unit_test(test_user_tableau),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
