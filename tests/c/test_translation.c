/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Bodies that translate (rigid.h: a mass each, the state (R, w, x, v)), measured for every registered
 * method that accepts them — the rigid methods that claim translation (lf_method_rigid_info) and the
 * generic ones through the lie_ode and first_integral forms — without a list kept here:
 *  - a rigid method refuses translating bodies exactly when it does not claim them (liemid_i, akw);
 *  - free bodies: x(t) = x0 + v t to round-off, and the rotation bit for bit that of the same bodies
 *    without mass (rigid methods; the generic ones to round-off);
 *  - the order on a potential that couples x and R (a central field with its gravity gradient,
 *    potential.h), fitted against rk8pd (lf_reference_solve);
 *  - symmetry: h then -h returns to round-off (symmetric methods);
 *  - two bodies of point masses (an invariant potential): the total linear momentum P = sum m v is
 *    conserved to round-off by every method whose forces come in equal and opposite pairs at each
 *    kick (the rigid ones), the total angular momentum L = sum (x x m v + R J w) by those that claim
 *    momentum conservation;
 *  - symplecticity in canonical coordinates (q, p) of T*SO(3) and (x, m v) of T*R^3 (the chart of
 *    test_symplectic.c with the translation beside it): "proved" methods at the noise of the exact
 *    flow, "no" methods clearly above it;
 *  - reversible adaptive steps (lf_stepper_opts.adapt, the torque monitor along an orbit): 300 steps
 *    h then 300 of -h return to round-off for every symmetric method, the steps varying by 3.5, the
 *    step density following Q(y)/Q(y0) to 6e-3 (h = 0.02; 0.75 when the monitor's derivative
 *    ignored the motion of the centre of mass);
 *  - no allocation in a step: test_noalloc.c covers translating bodies too.
 * Every measurement is printed, then asserted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

/* ---------------------------------------------------------------- the problems */
/* A body in the field of a point mass mu = 1 with its gravity gradient: J / (m r^2) ~ 0.1, so that
 * the torque (3 mu / r^3) u x J u couples attitude and orbit strongly. */
static const double J1[3] = {0.05, 0.08, 0.11}, m1[1] = {1};
static const double y1_0[18] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0.3, -0.2, 1.0, 1, 0, 0, 0, 1.05, 0.05};

static lf_system *central_body(lf_potential **pot)
{
    lf_error e;
    *pot = lf_potential_central(1, NULL, &e);
    lf_system *s = *pot ? lf_rigid_new_translating(1, J1, m1, *pot, &e) : NULL;
    if (!s) fail_msg("%s", e.msg);
    return s;
}

/* Two dumbbells (two point masses each) attracting each other: U depends on the relative positions and
 * attitudes only, so P and L are conserved. */
static const double J2[6] = {0.5, 0.5, 0.02, 0.6, 0.6, 0.03}, m2[2] = {1, 1.2};
static lf_system *two_dumbbells(lf_potential **pot, double *y0)
{
    const int np[2] = {2, 2};
    const double s[12] = {0, 0, 0.5, 0, 0, -0.5, 0, 0, 0.5, 0, 0, -0.5}, pm[4] = {0.5, 0.5, 0.6, 0.6};
    lf_error e;
    *pot = lf_potential_point_masses(2, np, s, pm, 1, &e);
    lf_system *sys = *pot ? lf_rigid_new_translating(2, J2, m2, *pot, &e) : NULL;
    if (!sys) fail_msg("%s", e.msg);
    const double v1[3] = {0.2, -0.3, 0.4}, v2[3] = {-0.1, 0.5, 0.2};
    memset(y0, 0, 24 * sizeof(double));
    lf_so3_exp(v1, y0);
    lf_so3_exp(v2, y0 + 9);
    /* about a circular relative orbit: |v_rel| = sqrt(G (m_1 + m_2) / d) = 1.05 at d = 2 */
    const double w[6] = {0.3, -0.4, 1.0, -0.2, 0.5, 0.8}, x[6] = {-1, 0.1, 0, 1, -0.1, 0.2},
                 v[6] = {0.02, -0.573, 0.05, -0.01, 0.477, -0.04};
    memcpy(y0 + 18, w, sizeof w);
    memcpy(y0 + 24, x, sizeof x);
    memcpy(y0 + 30, v, sizeof v);
    return sys;
}

/* P (3) and L (3) of two bodies at y (the system's observables linear_momentum, angular_momentum) */
static void momenta(const lf_system *sys, const double *y, double *PL)
{
    double obs[64];
    lf_error e;
    if (lf_system_observe(sys, 0, y, obs, &e) != LF_OK) fail_msg("%s", e.msg);
    int off = 0;
    for (int i = 0; i < lf_system_nobservables(sys); i++) {
        const lf_observable *o = lf_system_observable(sys, i);
        if (strcmp(o->name, "linear_momentum") == 0) memcpy(PL, obs + off, 3 * sizeof(double));
        if (strcmp(o->name, "angular_momentum") == 0) memcpy(PL + 3, obs + off, 3 * sizeof(double));
        off += o->dim;
    }
}

/* a method steps translating bodies if it accepts them; a rigid one refuses them exactly when it does
 * not claim translation (the refusal then names the methods that do; a claiming one may refuse the
 * system for another reason: liemid, torque-free bodies only) */
static int steps_translating(const lf_method *m, const lf_system *sys)
{
    lf_error e;
    const int ok = lf_method_accepts(m, sys, &e) == LF_OK;
    const lf_method_info *mi = method_info(m);
    const int for_translation = !ok && strstr(e.msg, "does not integrate bodies that translate") != NULL;
    if (mi->form == LF_FORM_RIGID) {
        assert_int_equal(for_translation, !lf_method_get_rigid_info(m)->translation);
        if (for_translation) assert_non_null(strstr(e.msg, "methods that do: "));
    }
    return ok && !mi->adaptive;
}

/* ---------------------------------------------------------------- free bodies */
static void test_free_bodies(void **state)
{
    (void)state;
    const double J[6] = {1, 2, 3, 0.9144, 1.098, 1.66}, m[2] = {2, 0.5};
    double y[36] = {0}, yr[24] = {0};
    for (int b = 0; b < 2; b++) {
        const double v[3] = {0.3 * b + 0.1, -0.2, 0.7}, w[3] = {0.45549, 0.82623 - b, 0.03476 + b};
        lf_so3_exp(v, y + 9 * b);
        memcpy(y + 18 + 3 * b, w, sizeof w);
    }
    const double x[6] = {1, 2, 3, -4, 5e3, -6}, vel[6] = {0.1, -2, 3.3, 1e-3, 7, -0.25};
    memcpy(y + 24, x, sizeof x);
    memcpy(y + 30, vel, sizeof vel);
    memcpy(yr, y, sizeof yr);
    lf_error e;
    lf_system *tr = lf_rigid_new_translating(2, J, m, NULL, &e), *rot = lf_rigid_new(2, J, NULL, &e);
    const double h = 0.05;
    const long n = 200;
    int nm = 0;
    double worst_x = 0, worst_rot_generic = 0, worst_rot_rigid = 0;
    for (int k = 0; k < lf_method_count(); k++) {
        const lf_method *meth = lf_method_at(k);
        if (!steps_translating(meth, tr)) continue;
        lf_stepper *a = new_stepper(meth, tr, y, NULL), *b = new_stepper(meth, rot, yr, NULL);
        run_steps(a, h, n);
        run_steps(b, h, n);
        const double *ya = lf_stepper_state(a), *yb = lf_stepper_state(b), T = lf_stepper_time(a);
        double ex = 0;
        for (int i = 0; i < 6; i++)
            ex = fmax(ex, fabs(ya[24 + i] - (x[i] + vel[i] * T)) / (1 + fabs(x[i] + vel[i] * T)));
        const double dr = maxdiff(24, ya, yb);
        if (method_info(meth)->form == LF_FORM_RIGID) worst_rot_rigid = fmax(worst_rot_rigid, dr);
        else worst_rot_generic = fmax(worst_rot_generic, dr);
        if (ex > worst_x) printf("    %-16s |x - (x0 + v t)| / (1 + |x|) = %.2e\n", method_info(meth)->name, ex);
        worst_x = fmax(worst_x, ex);
        nm++;
        lf_stepper_free(a);
        lf_stepper_free(b);
    }
    char label[96];
    /* round-off: 200 steps of up to 11 drifts (compositions), each rounding ~eps |x| */
    snprintf(label, sizeof label, "free bodies, %d methods, T = 10: x - (x0 + v t) (relative)", nm);
    CHECK_LE(worst_x, 200 * 11 * 2.3e-16, label);
    CHECK_LE(worst_rot_rigid, 0, "rotation of translating bodies - without mass (rigid methods)");
    CHECK_LE(worst_rot_generic, 1e-13, "rotation of translating bodies - without mass (generic methods)");
    assert_true(nm >= 30);
    lf_system_free(tr);
    lf_system_free(rot);
}

/* ---------------------------------------------------------------- order, symmetry */
static void test_order_and_symmetry(void **state)
{
    (void)state;
    lf_potential *pot;
    lf_system *sys = central_body(&pot);
    const double T = 1;
    double yref[18];
    lf_error e;
    lf_reference_opts ro = {1e-14, 1e-14, 1e-3, 0, NULL};
    if (lf_reference_solve(sys, y1_0, 0, &T, 1, yref, NULL, &ro, &e) != LF_OK) fail_msg("%s", e.msg);
    int nm = 0, bad = 0;
    for (int k = 0; k < lf_method_count(); k++) {
        const lf_method *meth = lf_method_at(k);
        const lf_method_info *mi = method_info(meth);
        if (!steps_translating(meth, sys)) continue;
        /* steps for an error well above round-off and in the asymptotic range: coarser for high orders */
        const int N0 = mi->order >= 8 ? 4 : mi->order >= 6 ? 8 : mi->order >= 3 ? 16 : 32;
        double hs[3], errs[3];
        for (int i = 0; i < 3; i++) {
            const long N = (long)N0 << i;
            hs[i] = T / (double)N;
            lf_stepper *st = new_stepper(meth, sys, y1_0, NULL);
            run_steps(st, hs[i], N);
            errs[i] = lf_manifold_dist(lf_system_manifold(sys), lf_stepper_state(st), yref);
            lf_stepper_free(st);
        }
        const double slope = loglog_slope(hs, errs, 3);
        double back = NAN;
        if (mi->symmetric) back = back_and_forth(meth, sys, y1_0, 0.1);
        printf("  %-16s order %d: errors %.2e %.2e %.2e, slope %.2f%s", mi->name, mi->order, errs[0], errs[1], errs[2],
               slope, mi->symmetric ? "" : "\n");
        if (mi->symmetric) printf(", h then -h: %.1e\n", back);
        if (!(slope > mi->order - 0.3) || (mi->symmetric && !(back <= 2e-15 * 8))) {
            printf("    FAIL: expected slope > %.1f%s\n", mi->order - 0.3,
                   mi->symmetric ? " and h, -h back to 1.6e-14" : "");
            bad++;
        }
        nm++;
    }
    printf("  %d methods on the central field with gravity gradient, T = 1\n", nm);
    assert_int_equal(bad, 0);
    assert_true(nm >= 30);
    lf_system_free(sys);
    lf_potential_free(pot);
}

/* ---------------------------------------------------------------- P and L */
static void test_momenta(void **state)
{
    (void)state;
    lf_potential *pot;
    double y0[36], PL0[6];
    lf_system *sys = two_dumbbells(&pot, y0);
    momenta(sys, y0, PL0);
    const double sP = lf_v3_norm(PL0) + 1, sL = lf_v3_norm(PL0 + 3) + 1;
    double worstP = 0, worstL = 0;
    int nm = 0;
    for (int k = 0; k < lf_method_count(); k++) {
        const lf_method *meth = lf_method_at(k);
        const lf_method_info *mi = method_info(meth);
        if (mi->form != LF_FORM_RIGID || !steps_translating(meth, sys)) continue;
        lf_stepper *st = new_stepper(meth, sys, y0, NULL);
        run_steps(st, 0.02, 500);
        double PL[6];
        momenta(sys, lf_stepper_state(st), PL);
        const double dP = maxdiff(3, PL, PL0) / sP, dL = maxdiff(3, PL + 3, PL0 + 3) / sL;
        const int claims = lf_method_get_rigid_info(meth)->momentum_conserving;
        printf("  %-16s |P - P0| %.1e   |L - L0| %.1e%s\n", mi->name, dP, dL, claims ? "" : "  (no momentum claim)");
        worstP = fmax(worstP, dP);
        if (claims) worstL = fmax(worstL, dL);
        lf_stepper_free(st);
        nm++;
    }
    char label[96];
    snprintf(label, sizeof label, "two dumbbells, %d rigid methods, 500 steps: |P - P0| / (1 + |P0|)", nm);
    CHECK_LE(worstP, 1e-14, label);
    CHECK_LE(worstL, 1e-13, "the same, |L - L0| / (1 + |L0|), methods claiming momentum");
    lf_system_free(sys);
    lf_potential_free(pot);
}

/* ---------------------------------------------------------------- symplecticity */
/* canonical coordinates z = (q, p, x, m v) of one translating body: R = C exp(hat q), p = dexp(-q)^T J w
 * (test_symplectic.c derives the rotational part) */
#define EPS 1e-3
#define THRESH 1e-10
static void to_chart(const double *C, const double *y, double *z)
{
    double M[9], Pi[3], D[9], mq[3];
    lf_m3_tmul(C, y, M);
    lf_so3_log(M, z);
    lf_v3_mul(J1, y + 9, Pi);
    lf_v3_scale(z, -1, mq);
    lf_so3_dexp(mq, D);
    lf_m3_tapply(D, Pi, z + 3);
    lf_v3_copy(y + 12, z + 6);
    lf_v3_scale(y + 15, m1[0], z + 9);
}

static void from_chart(const double *C, const double *z, double *y)
{
    double E[9], Pi[3], D[9], mq[3];
    lf_so3_exp(z, E);
    lf_m3_mul(C, E, y);
    lf_v3_scale(z, -1, mq);
    lf_so3_dexpinv(mq, D);
    lf_m3_tapply(D, z + 3, Pi);
    lf_v3_div(Pi, J1, y + 9);
    lf_v3_copy(z + 6, y + 12);
    lf_v3_scale(z + 9, 1 / m1[0], y + 15);
}

/* one step of st (or of the exact flow: st NULL) from y */
static void step_y(const lf_system *sys, lf_stepper *st, double h, const double *y, double *y1)
{
    if (st) {
        if (lf_stepper_set_state(st, y, 0) != LF_OK || lf_stepper_step(st, h, 1) != LF_OK)
            fail_msg("%s", lf_stepper_error(st)->msg);
        memcpy(y1, lf_stepper_state(st), 18 * sizeof(double));
    } else {
        lf_error e;
        lf_reference_opts ro = {1e-14, 1e-14, 1e-3, 0, NULL};
        if (lf_reference_solve(sys, y, 0, &h, 1, y1, NULL, &ro, &e) != LF_OK) fail_msg("%s", e.msg);
    }
}

/* the one-step map in the charts around C0 and C1 */
static void chart_step(const lf_system *sys, lf_stepper *st, double h, const double *C0, const double *C1,
                       const double *z, double *z1)
{
    double y[18], y1[18];
    from_chart(C0, z, y);
    step_y(sys, st, h, y, y1);
    to_chart(C1, y1, z1);
}

/* max |M^T Omega M - Omega| of the one-step map at y (12 x 12, Omega = [0 I; -I 0] on each pair) */
static double defect(const lf_system *sys, lf_stepper *st, const double *y, double h)
{
    static const double q0[3] = {0.3, -0.2, 0.4}, q1[3] = {-0.25, 0.35, 0.1};
    double C0[9], C1[9], E[9], m[3], z[12], y1[18], M[12][12];
    lf_v3_scale(q0, -1, m);
    lf_so3_exp(m, E);
    lf_m3_mul(y, E, C0); /* both ends at generic chart points (test_symplectic.c) */
    to_chart(C0, y, z);
    step_y(sys, st, h, y, y1);
    lf_v3_scale(q1, -1, m);
    lf_so3_exp(m, E);
    lf_m3_mul(y1, E, C1);
    for (int j = 0; j < 12; j++) {
        double zz[12], f[4][12];
        static const double off[4] = {1, -1, 2, -2};
        for (int k = 0; k < 4; k++) {
            memcpy(zz, z, sizeof zz);
            zz[j] += off[k] * EPS;
            chart_step(sys, st, h, C0, C1, zz, f[k]);
        }
        for (int i = 0; i < 12; i++) M[i][j] = (8 * (f[0][i] - f[1][i]) - (f[2][i] - f[3][i])) / (12 * EPS);
    }
    /* (q, p) at 0..5, (x, m v) at 6..11: canonical pairs (i, i + 3) for i in 0..2 and 6..8 */
    double d = 0;
    for (int i = 0; i < 12; i++)
        for (int j = 0; j < 12; j++) {
            double s = 0;
            for (int base = 0; base < 12; base += 6)
                for (int k = base; k < base + 3; k++) s += M[k][i] * M[k + 3][j] - M[k + 3][i] * M[k][j];
            const double om = (j == i + 3 && i % 6 < 3) ? 1 : (i == j + 3 && j % 6 < 3) ? -1 : 0;
            d = fmax(d, fabs(s - om));
        }
    return d;
}

static void test_symplectic(void **state)
{
    (void)state;
    lf_potential *pot;
    lf_system *sys = central_body(&pot);
    const double hs[2] = {0.1, 0.05};
    double dexact = fmax(defect(sys, NULL, y1_0, hs[0]), defect(sys, NULL, y1_0, hs[1]));
    CHECK_LE(dexact, THRESH, "exact flow (rk8pd), h = 0.1, 0.05: defect (calibration)");
    int bad = 0;
    for (int k = 0; k < lf_method_count(); k++) {
        const lf_method *meth = lf_method_at(k);
        const lf_method_info *mi = method_info(meth);
        if (mi->form != LF_FORM_RIGID || !steps_translating(meth, sys)) continue;
        lf_stepper *st = new_stepper(meth, sys, y1_0, NULL);
        const double d0 = defect(sys, st, y1_0, hs[0]), d1 = defect(sys, st, y1_0, hs[1]);
        lf_stepper_free(st);
        const int proved = strcmp(mi->symplectic, "proved") == 0,
                  ok = proved ? fmax(d0, d1) < THRESH : d0 > 100 * THRESH && d1 < d0;
        printf("  %-16s %-7s defect h=0.1 %.2e, h=0.05 %.2e%s\n", mi->name, mi->symplectic, d0, d1, ok ? "" : "  FAIL");
        bad += !ok;
    }
    assert_int_equal(bad, 0);
    lf_system_free(sys);
    lf_potential_free(pot);
}

/* ---------------------------------------------------------------- lanes */
/* B lanes of one translating body (the central field) against B separate steppers, bit for bit */
static void test_lanes(void **state)
{
    (void)state;
    enum { B = 5 };
    lf_potential *pot;
    lf_system *sys = central_body(&pot);
    double y0[B][18];
    for (int j = 0; j < B; j++) {
        memcpy(y0[j], y1_0, sizeof y0[j]);
        y0[j][9] += 0.1 * j;
        y0[j][12] += 0.05 * j;
        y0[j][16] -= 0.02 * j;
    }
    int methods = 0;
    for (int k = 0; k < lf_method_count(); k++) {
        const lf_method *m = lf_method_at(k);
        if (!lf_method_get_rigid_info(m)->lanes || !steps_translating(m, sys)) continue;
        lf_error e;
        lf_stepper *L = lf_stepper_new_lanes(m, sys, B, &y0[0][0], 0, NULL, &e);
        if (!L) fail_msg("%s", e.msg);
        run_steps(L, 0.01, 200);
        int equal = 0;
        for (int j = 0; j < B; j++) {
            lf_stepper *S = new_stepper(m, sys, y0[j], NULL);
            run_steps(S, 0.01, 200);
            double yl[18];
            assert_int_equal(lf_stepper_get_lane(L, j, yl), LF_OK);
            equal += memcmp(yl, lf_stepper_state(S), sizeof yl) == 0;
            lf_stepper_free(S);
        }
        printf("  %-8s %d/%d lanes of a translating body bitwise equal to separate steppers\n", method_info(m)->name,
               equal, B);
        assert_int_equal(equal, B);
        lf_stepper_free(L);
        methods++;
    }
    assert_int_equal(methods, 4);
    lf_system_free(sys);
    lf_potential_free(pot);
}

/* ---------------------------------------------------------------- reversible adaptive steps */
/* Q of the torque monitor (adapt.c) of one body at y */
static double torque_Q(const lf_system *sys, const double *J, const double *y)
{
    double tau[3], F[3], a[3];
    lf_error e;
    lf_system_rigid(sys)->torque(sys, y, y + 12, tau, F, &e);
    lf_v3_div(tau, J, a);
    return sqrt(lf_v3_dot(y + 9, y + 9) + lf_v3_norm(a));
}

/* A body ten times smaller than central_body's (J / (m r^2) ~ 0.01: the gravity gradient's 1/r^3
 * attraction then stays a small correction) on an eccentric orbit, x0 = (1, 0, 0), v0 = (0, 0.85,
 * 0.05): r from 0.57 to 1. The gravity-gradient torque grows as 1/r^3 towards the pericentre, so the
 * torque monitor shortens the steps there; the monitor's derivative moves x along v (adapt.c). */
static void test_adaptive(void **state)
{
    (void)state;
    const double J[3] = {0.005, 0.008, 0.011};
    lf_error e;
    lf_potential *pot = lf_potential_central(1, NULL, &e);
    lf_system *sys = pot ? lf_rigid_new_translating(1, J, m1, pot, &e) : NULL;
    if (!sys) fail_msg("%s", e.msg);
    double y0[18];
    memcpy(y0, y1_0, sizeof y0);
    y0[16] = 0.85;
    y0[17] = 0.05;
    int methods = 0;
    for (int k = 0; k < lf_method_count(); k++) {
        const lf_method *m = lf_method_at(k);
        const lf_method_info *mi = method_info(m);
        const lf_compose_scheme *sc = lf_compose_scheme_of(m);
        if (mi->form != LF_FORM_RIGID || !mi->symmetric || (sc && sc->np > 0) || !steps_translating(m, sys)) continue;
        lf_stepper_opts o = {.adapt = 1};
        lf_stepper *st = lf_stepper_new(m, sys, y0, 0, &o, &e);
        if (!st) fail_msg("%s: %s", mi->name, e.msg);
        double hmin = 1e300, hmax = 0, track = 0;
        for (int n = 0; n < 300; n++) {
            run_steps(st, 0.02, 1);
            hmin = fmin(hmin, fabs(lf_stepper_last_h(st)));
            hmax = fmax(hmax, fabs(lf_stepper_last_h(st)));
            const double Qratio = torque_Q(sys, J, lf_stepper_state(st)) / torque_Q(sys, J, y0);
            track = fmax(track, fabs(lf_stepper_rho(st) / Qratio - 1));
        }
        run_steps(st, -0.02, 300);
        const double d = maxdiff(18, lf_stepper_state(st), y0);
        lf_stepper *fx = new_stepper(m, sys, y0, NULL);
        run_steps(fx, 0.02, 300);
        run_steps(fx, -0.02, 300);
        const double dfix = maxdiff(18, lf_stepper_state(fx), y0);
        lf_stepper_free(fx);
        char label[160];
        snprintf(label, sizeof label,
                 "%-14s there and back (steps vary by %.2f, rho / (Q/Q0) - 1 <= %.1e; fixed h: %.1e)", mi->name,
                 hmax / hmin, track, dfix);
        CHECK_LE(d, 1e-12, label);
        assert_true(hmax / hmin > 3);
        assert_true(track < 1e-2);
        lf_stepper_free(st);
        methods++;
    }
    printf("  %d symmetric methods with reversible adaptive steps on translating bodies\n", methods);
    assert_true(methods >= 10);
    lf_system_free(sys);
    lf_potential_free(pot);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_free_bodies), cmocka_unit_test(test_order_and_symmetry),
        cmocka_unit_test(test_momenta),     cmocka_unit_test(test_symplectic),
        cmocka_unit_test(test_lanes),       cmocka_unit_test(test_adaptive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
