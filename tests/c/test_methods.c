/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Every registered method on the rigid-body problems, measured: convergence order at T=5 on the stress
 * test and the slow top against GSL rk8pd references (the generic Lie-group methods integrate the
 * same problems as Lie-group ODEs on SO(3) x R^3: the two families checked against each other);
 * step h then -h for the symmetric ones; free-body spatial momentum for the rigid methods that claim
 * it (and its loss for the others); ||R^T R - I|| after 1e5 steps (1e4 for the generic methods and the compositions);
 * failures roll the state back. Each measurement is printed, then asserted. */
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

static const lf_method_rigid_info *rigid_info(const lf_method *m) { return lf_method_get_rigid_info(m); }

static lf_system *make_system(const problem *p)
{
    lf_error e;
    lf_system *s = lf_rigid_new(1, p->J, p->pot, &e);
    if (!s) fail_msg("%s", e.msg);
    return s;
}

static lf_stepper *make_stepper(const lf_method *m, const lf_system *s, const problem *p)
{
    lf_error e;
    double y0[12];
    pack_state(p->R0, p->w0, y0);
    lf_stepper *st = lf_stepper_new(m, s, y0, 0, NULL, &e);
    if (!st) fail_msg("%s: %s", method_info(m)->name, e.msg);
    return st;
}

/* the state's attitude and angular velocity */
static const double *st_R(const lf_stepper *st) { return lf_stepper_state(st); }
static const double *st_w(const lf_stepper *st) { return lf_stepper_state(st) + 9; }

static int is_rigid(const lf_method *m) { return method_info(m)->form == LF_FORM_RIGID; }

/* Methods for other manifolds (the retraction methods on spheres) do not take rigid bodies. */
static int takes_rigid_bodies(const lf_method *m)
{
    problem p = problem_stress();
    lf_system *s = make_system(&p);
    int ok = lf_method_accepts(m, s, NULL) == LF_OK;
    lf_system_free(s);
    problem_free(&p);
    return ok;
}

/* Global errors at T = 5 for h = h0 / 2^k, k = 0..n-1; fitted slopes in R and in w.
 * First-order methods (LIEMID[E], [E1], [E2], Lie-Euler) are fitted on h = 2^-11 .. 2^-16: their
 * attitude error has a tiny O(h) coefficient and converges like h^2 down to h ~ 2^-12 (Krysl §3.7
 * saw the same "second order rate in the attitude"), so a coarser range measures a mixture.
 * Generic methods of order >= 2 are fitted over their asymptotic window: the last 4 of 12 halvings
 * whose errors stay above 1e-12 (round-off of the reference and of the sums), so that neither the
 * pre-asymptotic large steps nor the round-off floor enter the fit. `R_only`: assert the attitude
 * order only (the w error of the generic methods on the axisymmetric slow top superconverges over a
 * wide range of h: printed, not asserted). */
static void check_order(const lf_method *m, const problem *p, double h0, int n, int R_only)
{
    const int order = method_info(m)->order, windowed = !is_rigid(m) && order >= 2;
    if (order == 1) h0 = 1.0 / 2048;
    if (windowed) n = 12;
    lf_system *sys = make_system(p);
    double T = 5, y0[12], ref[12], hs[16], eR[16], ew[16];
    const double *Rref = ref, *wref = ref + 9;
    lf_error e;
    lf_reference_opts ro = {1e-14, 1e-14, 1e-3, 0, NULL};
    pack_state(p->R0, p->w0, y0);
    if (lf_reference_solve(sys, y0, 0, &T, 1, ref, NULL, &ro, &e) != LF_OK) fail_msg("%s", e.msg);
    int last = n;
    for (int k = 0; k < n; k++) {
        hs[k] = h0 / (1 << k);
        lf_stepper *st = make_stepper(m, sys, p);
        run_steps(st, hs[k], lround(T / hs[k]));
        double D[9], dw[3];
        lf_m3_sub(st_R(st), Rref, D);
        lf_v3_sub(st_w(st), wref, dw);
        eR[k] = lf_m3_fnorm(D);
        ew[k] = lf_v3_norm(dw);
        lf_stepper_free(st);
        if (windowed && (R_only ? eR[k] : fmin(eR[k], ew[k])) < 1e-12) {
            last = k;
            break;
        }
    }
    int first = windowed ? (last >= 4 ? last - 4 : 0) : 0, cnt = last - first;
    assert_true(cnt >= 3);
    double oR = loglog_slope(hs + first, eR + first, cnt), ow = loglog_slope(hs + first, ew + first, cnt);
    printf("  %-18s %-9s order: R %.3f  w %.3f  (nominal %d; h=%g..%g; err %.2e..%.2e)\n", method_info(m)->name,
           p->name, oR, ow, order, hs[first], hs[last - 1], eR[first], eR[last - 1]);
    assert_true(fabs(oR - order) <= 0.15);
    if (!R_only) assert_true(fabs(ow - order) <= 0.15);
    lf_system_free(sys);
}

/* Rigid methods of order >= 4 (compositions, splittings; orderfit.h): halvings from h0 = 1 (stress)
 * or 1/2 (slow top) until the error falls below the floor, the order fitted over the asymptotic
 * window and asserted by orderfit_ok (within 0.15 of nominal over 3 or more points; with one halving
 * above the floor within 0.3, or faster down to the floor). A step size at which the method fails
 * (lgvi's Cayley equation for h|w| > 1) is left out. */
static void check_order_high(const lf_method *m, const problem *p, double h0, double floor)
{
    const int order = method_info(m)->order, n = 14;
    lf_system *sys = make_system(p);
    double T = 5, y0[12], ref[12], hs[16], eR[16], ew[16];
    lf_error e;
    lf_reference_opts ro = {1e-14, 1e-14, 1e-3, 0, NULL};
    pack_state(p->R0, p->w0, y0);
    if (lf_reference_solve(sys, y0, 0, &T, 1, ref, NULL, &ro, &e) != LF_OK) fail_msg("%s", e.msg);
    double h_first = h0;
    const int cnt = orderfit_rigid_errors(m, sys, y0, T, ref, h0, n, floor, hs, eR, ew, &h_first, &e);
    if (cnt < 0) fail_msg("%s: %s", method_info(m)->name, e.msg);
    orderfit fR, fw;
    assert_true(orderfit_window(hs, eR, cnt, floor, &fR));
    assert_true(orderfit_window(hs, ew, cnt, floor, &fw));
    const char *wR, *ww;
    const int okR = orderfit_ok(&fR, order, &wR), okw = orderfit_ok(&fw, order, &ww);
    printf("  %-18s %-9s order: R %.3f  w %.3f  (nominal %d; windows h=%g..%g (%s) / %g..%g (%s); err R %.2e..%.2e; "
           "floor %.0e, from h=%g)\n",
           method_info(m)->name, p->name, fR.order, fw.order, order, hs[fR.first], hs[fR.last], wR, hs[fw.first],
           hs[fw.last], ww, eR[fR.first], eR[fR.last], floor, h_first);
    assert_true(okR);
    assert_true(okw);
    lf_system_free(sys);
}

static void test_order_stress(void **state)
{
    const lf_method *m = *state;
    if (!takes_rigid_bodies(m)) skip();
    if (method_info(m)->adaptive) skip(); /* measured against its tolerance in test_generic.c */
    problem p = rigid_info(m)->free_body_only ? problem_free_body() : problem_stress();
    if (is_rigid(m) && method_info(m)->order >= 4) check_order_high(m, &p, 1, 1e-13);
    else check_order(m, &p, 0.25, 6, 0);
    problem_free(&p);
}

static void test_order_top(void **state)
{
    const lf_method *m = *state;
    if (!takes_rigid_bodies(m)) skip();
    /* the discrete-gradient family: measured on the stress test here and on its own problems in
     * test_dg.c; on the top its windowed fit would take 12 halvings down to h = 2^-16 (seconds) */
    if (strcmp(method_info(m)->family, "discrete_gradient") == 0) skip();
    if (method_info(m)->adaptive) skip();
    problem p = rigid_info(m)->free_body_only ? problem_free_body() : problem_slow_top();
    /* h*|w| < 0.16: the asymptotic range of the top (errors are O(1) above) */
    if (is_rigid(m) && method_info(m)->order >= 4) check_order_high(m, &p, 0.5, 5e-12);
    else check_order(m, &p, 1.0 / 32, 6, !is_rigid(m));
    problem_free(&p);
}

/* Symmetric methods: one step with h then one with -h returns to the start within 1e-12; the
 * others do not, by more than 1e-13 (so the metadata flag is measured, not assumed; the RKMK Gauss
 * methods miss by O(h^5), O(h^7): test_generic.c measures that rate). */
static void test_symmetry(void **state)
{
    const lf_method *m = *state;
    if (!takes_rigid_bodies(m)) skip();
    if (method_info(m)->adaptive) skip(); /* chooses its own steps: not symmetric */
    problem p = rigid_info(m)->free_body_only ? problem_free_body() : problem_stress();
    lf_system *sys = make_system(&p);
    double worst = 0;
    for (int k = 0; k < 3; k++) {
        double h = 0.25 / (1 << k);
        lf_stepper *st = make_stepper(m, sys, &p);
        run_steps(st, h, 1);
        run_steps(st, -h, 1);
        double D[9], dw[3];
        lf_m3_sub(st_R(st), p.R0, D);
        lf_v3_sub(st_w(st), p.w0, dw);
        double d = fmax(lf_m3_fnorm(D), lf_v3_norm(dw));
        if (d > worst) worst = d;
        lf_stepper_free(st);
    }
    printf("  %-18s step h then -h: max deviation %.2e (symmetric: %s)\n", method_info(m)->name, worst,
           method_info(m)->symmetric ? "yes" : "no");
    if (method_info(m)->symmetric) assert_true(worst <= 1e-12);
    else assert_true(worst > 1e-13); /* at least 1000 rounding errors: a method's defect */
    lf_system_free(sys);
    problem_free(&p);
}

/* Free body, 1e4 steps of h = 0.1: relative change of the spatial angular momentum sum R J w. */
static void test_momentum(void **state)
{
    const lf_method *m = *state;
    if (!is_rigid(m)) skip(); /* the generic methods make no claim; their errors are O(h^p) */
    problem p = problem_free_body();
    lf_system *sys = make_system(&p);
    lf_stepper *st = make_stepper(m, sys, &p);
    double pi0[3], pi[3], d[3], worst = 0;
    lf_rigid_spatial_momentum(sys, p.R0, p.w0, pi0);
    for (int k = 0; k < 100; k++) {
        run_steps(st, 0.1, 100);
        lf_rigid_spatial_momentum(sys, st_R(st), st_w(st), pi);
        lf_v3_sub(pi, pi0, d);
        worst = fmax(worst, lf_v3_norm(d) / lf_v3_norm(pi0));
    }
    printf("  %-18s free body, 1e4 steps: max relative momentum error %.2e (claims conservation: %s)\n",
           method_info(m)->name, worst, rigid_info(m)->momentum_conserving ? "yes" : "no");
    if (rigid_info(m)->momentum_conserving) assert_true(worst <= 1e-13);
    else assert_true(worst > 1e-10);
    lf_stepper_free(st);
    lf_system_free(sys);
}

/* ||R^T R - I|| <= 1e-13 after 1e5 steps (1e4 for compositions; no re-orthogonalization anywhere). */
static void test_orthogonality(void **state)
{
    const lf_method *m = *state;
    if (!takes_rigid_bodies(m)) skip();
    problem p = rigid_info(m)->free_body_only ? problem_free_body() : problem_stress();
    lf_system *sys = make_system(&p);
    lf_stepper *st = make_stepper(m, sys, &p);
    /* compositions take 5 to 11 steps of their base per step (dlm_s6: 45 axis rotations): 1e4 steps are
     * 5e4 to 1.1e5 base steps, as many roundings as 1e5 steps of the others */
    const long n = lf_compose_scheme_of(m) ? 10000 : is_rigid(m) ? 100000 : 10000;
    run_steps(st, 0.125, n);
    double d = lf_so3_orth_error(st_R(st));
    printf("  %-18s ||R^T R - I|| after %ld steps: %.2e, |det R - 1| = %.2e\n", method_info(m)->name, n, d,
           fabs(lf_m3_det(st_R(st)) - 1));
    assert_true(d <= 1e-13);
    lf_stepper_free(st);
    lf_system_free(sys);
    problem_free(&p);
}

/* A failing step (here: a potential whose torque becomes non-finite) leaves the state unchanged and
 * names the method and the time. */
static int bad_eval(void *ctx, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    (void)ctx;
    (void)err;
    if (U) *U = 0;
    if (tau)
        for (int i = 0; i < 3 * nb; i++) tau[i] = R[8] < 0.9999 ? NAN : 0; /* fails once R moves away from I */
    return LF_OK;
}

static void test_failure_rolls_back(void **state)
{
    const lf_method *m = *state;
    if (!takes_rigid_bodies(m)) skip();
    if (rigid_info(m)->free_body_only) skip();
    problem p = problem_free_body();
    p.pot = lf_potential_new("bad", bad_eval, NULL, NULL, NULL);
    double w[3] = {1, 0.5, 0};
    memcpy(p.w0, w, sizeof w);
    lf_system *sys = make_system(&p);
    lf_stepper *st = make_stepper(m, sys, &p);
    double R[9], wb[3];
    int rc = LF_OK;
    for (int k = 0; k < 100 && rc == LF_OK; k++) {
        memcpy(R, st_R(st), sizeof R);
        memcpy(wb, st_w(st), sizeof wb);
        rc = lf_stepper_step(st, 0.1, 1);
    }
    assert_int_not_equal(rc, LF_OK);
    assert_memory_equal(R, st_R(st), sizeof R);
    assert_memory_equal(wb, st_w(st), sizeof wb);
    assert_non_null(strstr(lf_stepper_error(st)->msg, method_info(m)->name));
    assert_non_null(strstr(lf_stepper_error(st)->msg, "t="));
    lf_stepper_free(st);
    lf_system_free(sys);
    problem_free(&p);
}

/* Invalid arguments: unknown method, non-positive inertia, non-rotation, non-finite state (the
 * stepper's own arguments, h = 0 ..., are in test_stepper.c). */
static void test_bad_input(void **state)
{
    (void)state;
    lf_error e;
    assert_null(lf_method_find("no_such_method"));
    double J[3] = {1, -2, 3};
    assert_null(lf_rigid_new(1, J, NULL, &e));
    assert_int_equal(e.code, LF_EINVAL);
    assert_non_null(strstr(e.msg, "-2"));
    problem p = problem_stress();
    lf_system *sys = make_system(&p);
    double y[12];
    pack_state(p.R0, p.w0, y);
    y[0] += 1e-6;
    assert_null(lf_stepper_new(lf_method_find("vlv"), sys, y, 0, NULL, &e));
    assert_non_null(strstr(e.msg, "not a rotation"));
    pack_state(p.R0, p.w0, y);
    y[10] = NAN;
    assert_null(lf_stepper_new(lf_method_find("vlv"), sys, y, 0, NULL, &e));
    printf("  %s\n", e.msg);
    assert_non_null(strstr(e.msg, "not finite"));
    assert_non_null(strstr(e.msg, "omega"));
    /* a method refuses a system that lacks its form: liemid on a body with a potential; a rigid
     * method on a generic Lie ODE */
    pack_state(p.R0, p.w0, y);
    assert_null(lf_stepper_new(lf_method_find("liemid"), sys, y, 0, NULL, &e));
    printf("  %s\n", e.msg);
    assert_non_null(strstr(e.msg, "potential"));
    lf_factor_kind k = LF_S2;
    lf_manifold *M = lf_manifold_new(1, &k, NULL, LF_RIGHT_TRIVIALIZED, &e);
    double D[3] = {1, 1, 2}, q[3] = {0, 0.6, 0.8};
    lf_system *flow = lf_lie_ode_builtin("s2_gradient_flow", M, q, D, &e);
    assert_non_null(flow);
    assert_null(lf_stepper_new(lf_method_find("vlv"), flow, q, 0, NULL, &e));
    printf("  %s\n", e.msg);
    assert_non_null(strstr(e.msg, "rigid"));
    lf_system_free(flow);
    lf_manifold_free(M);
    /* NULL and nonsense through the C API: statuses, not crashes */
    pack_state(p.R0, p.w0, y);
    assert_null(lf_method_find(NULL));
    assert_null(lf_rigid_new(1, NULL, NULL, &e));
    assert_null(lf_stepper_new(lf_method_find("vlv"), sys, NULL, 0, NULL, &e));
    assert_int_equal(lf_system_energy(sys, y, NULL, &e), LF_EINVAL);
    assert_int_equal(lf_rigid_energy(sys, NULL, y + 9, NULL, &e), LF_EINVAL);
    double ref[12], T = 1;
    assert_int_equal(lf_reference_solve(NULL, y, 0, &T, 1, ref, NULL, NULL, &e), LF_EINVAL);
    lf_system_free(sys);
    problem_free(&p);
}

int main(void)
{
    int nm = lf_method_count(), n = 0;
    struct CMUnitTest *tests = calloc((size_t)(7 * nm + 1), sizeof *tests);
    char (*names)[64] = calloc((size_t)(7 * nm + 1), 64);
    static const struct {
        const char *what;
        CMUnitTestFunction fn;
    } kinds[] = {{"order_stress", test_order_stress}, {"order_top", test_order_top},
                 {"symmetry", test_symmetry},         {"momentum", test_momentum},
                 {"orthogonality", test_orthogonality}, {"rollback", test_failure_rolls_back}};
    for (int k = 0; k < 6; k++)
        for (int i = 0; i < nm; i++) {
            const lf_method *m = lf_method_at(i);
            snprintf(names[n], 64, "%s_%s", kinds[k].what, method_info(m)->name);
            tests[n] = (struct CMUnitTest){names[n], kinds[k].fn, NULL, NULL, (void *)m};
            n++;
        }
    snprintf(names[n], 64, "bad_input");
    tests[n++] = (struct CMUnitTest){names[n - 1], test_bad_input, NULL, NULL, NULL};
    int rc = _cmocka_run_group_tests("methods", tests, (size_t)n, NULL, NULL);
    free(tests);
    free(names);
    return rc;
}
