/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Forcings (forcing.h: torques and forces that are not gradients, lf_rigid_set_forcing), measured for
 * every registered method that accepts a forced system — the rigid methods that claim a forcing
 * (lf_method_rigid_info.forcing) and the generic ones through f(t, y) — without a list kept here:
 *  - a rigid method refuses a forced system exactly when it does not claim forcing, naming the forcing
 *    and the methods that take one; lanes, reversible adaptive steps and processed methods refuse it;
 *  - a forcing of zero (damping of 0, a torque of 0) runs bit for bit as no forcing (rigid methods),
 *    free and under a potential, rotating and translating;
 *  - the order unchanged: a heavy top and a body in a central field, both damped and driven by a
 *    tabulated torque of t, fitted against rk8pd (lf_reference_solve);
 *  - symmetry: h then -h returns to round-off (symmetric methods, the damping and the drive too);
 *  - the discrete momentum balance of the discrete Lagrange–d'Alembert principle: a free body driven
 *    by a constant spatial torque tau_s has pi_n - pi_0 = n h tau_s to round-off for every method that
 *    conserves the free body's spatial momentum;
 *  - a damped free body (torques -gamma J_k w_k, force -c v) decays at the exact rate: |Pi(t)| =
 *    |Pi_0| e^{-gamma t}, |v(t)| = |v_0| e^{-c t/m}, with the method's order;
 *  - the energy balance E_n - E_0 = W_n (the work of the forcing, by the trapezoidal rule on the
 *    states) holds with the method's order (not to round-off: no method here conserves energy).
 * Every measurement is printed, then asserted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

/* ---------------------------------------------------------------- the problems */
/* A heavy top (rotation only) and a body in a central field with its gravity gradient (translating),
 * damped (angular a, linear c) and driven by a torque of t tabulated in space. */
static const double Jt[3] = {1, 2, 3}, Jc[3] = {0.05, 0.08, 0.11}, mc[1] = {1};
static const double chi[3] = {0, 0, 1};
static const double top_y0[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0.4, -0.6, 1.2};
static const double orbit_y0[18] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0.3, -0.2, 1.0, 1, 0, 0, 0, 1.05, 0.05};

typedef struct {
    lf_system *sys;
    lf_potential *pot;
    lf_forcing *parts[2], *forcing;
    const double *y0;
    const char *name;
} problem;

static lf_forcing *drive(void)
{
    const double t[4] = {0, 0.3, 0.7, 1.2}, tau[12] = {0, 0, 0, 0.2, -0.1, 0.3, -0.3, 0.2, 0.1, 0.1, 0.1, -0.2};
    lf_error e;
    lf_forcing *f = lf_forcing_torque_table(4, t, tau, 1, &e);
    if (!f) fail_msg("%s", e.msg);
    return f;
}

/* damped = 0: driven only (a forcing of t and the configuration: explicit kicks) */
static problem make_problem(int translating, int damped)
{
    problem p = {0};
    lf_error e;
    const double a[3] = {0.1, 0.3, 0.2};
    p.pot = translating ? lf_potential_central(1, NULL, &e) : lf_potential_top(1, chi, &e);
    p.parts[0] = lf_forcing_damping(0.2, a, &e);
    p.parts[1] = drive();
    p.forcing = p.parts[0] ? lf_forcing_sum(damped ? 2 : 1, (const lf_forcing *const *)p.parts + !damped, &e) : NULL;
    p.sys =
        p.pot ? (translating ? lf_rigid_new_translating(1, Jc, mc, p.pot, &e) : lf_rigid_new(1, Jt, p.pot, &e)) : NULL;
    if (!p.sys || !p.forcing || lf_rigid_set_forcing(p.sys, p.forcing, &e) != LF_OK) fail_msg("%s", e.msg);
    p.y0 = translating ? orbit_y0 : top_y0;
    p.name = translating
                 ? (damped ? "central field, translating, damped and driven" : "central field, translating, driven")
                 : (damped ? "heavy top, damped and driven" : "heavy top, driven");
    return p;
}

static void free_problem(problem *p)
{
    lf_system_free(p->sys);
    lf_forcing_free(p->forcing);
    lf_forcing_free(p->parts[0]);
    lf_forcing_free(p->parts[1]);
    lf_potential_free(p->pot);
}

/* a method steps a forced system if it accepts it; a rigid one refuses it exactly when it does not
 * claim forcing (or does not claim translation, for translating bodies), and names the forcing */
static int steps_forced(const lf_method *m, const lf_system *sys)
{
    lf_error e;
    const int ok = lf_method_accepts(m, sys, &e) == LF_OK;
    const lf_method_info *mi = method_info(m);
    const lf_method_rigid_info *ri = lf_method_get_rigid_info(m);
    if (mi->form == LF_FORM_RIGID && !(lf_system_rigid(sys)->translating && !ri->translation)) {
        const int for_forcing = !ok && strstr(e.msg, "does not take a forcing") != NULL;
        if (for_forcing != !ri->forcing && !(ri->forcing && !ok && strstr(e.msg, "Runge-Kutta-Nystrom")))
            fail_msg("%s: claims forcing %d, refusal '%s'", mi->name, ri->forcing, ok ? "" : e.msg);
        if (!ok) assert_non_null(strstr(e.msg, lf_system_rigid(sys)->forcing_name)); /* names the forcing */
    }
    return ok && !mi->adaptive;
}

/* ---------------------------------------------------------------- the built-ins */
static void test_builtins(void **state)
{
    (void)state;
    lf_error e;
    const double a[3] = {0.1, 0.3, 0.2}, c = 0.7;
    lf_forcing *d = lf_forcing_damping(c, a, &e), *tab = drive();
    assert_string_equal(lf_forcing_name(d), "damping");
    assert_string_equal(lf_forcing_name(tab), "spatial_torque");
    assert_int_equal(lf_forcing_depends(d), LF_FORCING_VELOCITY | LF_FORCING_AFFINE | LF_FORCING_DIAGONAL);
    assert_int_equal(lf_forcing_depends(tab), LF_FORCING_TIME);
    assert_true(lf_forcing_has_jacobian(d) && !lf_forcing_has_jacobian(tab));
    /* two translating bodies: the damping's values and its Jacobian against differences */
    double R[18], x[6] = {1, 2, 3, -1, 0, 2}, w[6] = {0.3, -0.5, 0.8, 1, 2, -1}, v[6] = {0.1, 0.2, -0.3, 2, -1, 0.5};
    const double J[6] = {1, 2, 3, 1, 1, 2}, mass[2] = {1, 2};
    gsl_rng *r = new_rng(5);
    rand_rot(r, 0.8, R);
    rand_rot(r, 2.1, R + 9);
    gsl_rng_free(r);
    lf_bodies_motion m = {{2, mass, J, x, R}, w, v, 0.5};
    double tau[6], F[6], D[144], tp[6], Fp[6], fd = 0, val = 0;
    assert_int_equal(lf_forcing_eval(d, &m, tau, F, &e), LF_OK);
    assert_int_equal(lf_forcing_jacobian(d, &m, D, &e), LF_OK);
    for (int i = 0; i < 6; i++) val = fmax(val, fmax(fabs(tau[i] + a[i % 3] * w[i]), fabs(F[i] + c * v[i])));
    for (int j = 0; j < 12; j++) {
        double wp[6], vp[6];
        memcpy(wp, w, sizeof wp);
        memcpy(vp, v, sizeof vp);
        (j < 6 ? wp : vp)[j % 6] += 1e-6;
        lf_bodies_motion mp = {m.c, wp, vp, m.t};
        lf_forcing_eval(d, &mp, tp, Fp, &e);
        for (int i = 0; i < 12; i++) {
            const double dq = ((i < 6 ? tp[i] : Fp[i - 6]) - (i < 6 ? tau[i] : F[i - 6])) / 1e-6;
            fd = fmax(fd, fabs(dq - D[12 * i + j]));
        }
    }
    CHECK_LE(val, 0.0, "damping: tau = -a w, F = -c v");
    CHECK_LE(fd, 1e-9, "damping: Jacobian in (w, v) against differences");
    double dg[12], offdiag = 0;
    assert_int_equal(lf_forcing_diagonal(d, &m, dg, &e), LF_OK);
    for (int i = 0; i < 12; i++)
        for (int j = 0; j < 12; j++) offdiag = fmax(offdiag, fabs(D[12 * i + j] - (i == j ? dg[i] : 0)));
    CHECK_LE(offdiag, 0, "damping: the Jacobian is its diagonal (lf_forcing_diagonal)");
    assert_int_equal(lf_forcing_diagonal(tab, &m, dg, &e), LF_EINVAL);
    /* the table: linear between its times, constant outside, in space (tau_body = R^T tau_s) */
    const double times[5] = {-1, 0.5, 1.0, 2.0, 0.3};
    const double expect[15] = {0, 0, 0, -0.05, 0.05, 0.2, -0.06, 0.14, -0.08, 0.1, 0.1, -0.2, 0.2, -0.1, 0.3};
    double worst = 0;
    for (int k = 0; k < 5; k++) {
        m.t = times[k];
        lf_forcing_eval(tab, &m, tau, F, &e);
        double ts[3];
        lf_m3_apply(R, tau, ts);
        worst = fmax(worst, fmax(maxdiff(3, ts, expect + 3 * k), maxabs(6, F)));
    }
    CHECK_LE(worst, 1e-15, "torque table: values at t = -1, 0.5, 1, 2, 0.3 (space frame)");
    lf_system *sys = lf_rigid_new(1, Jt, NULL, &e);
    assert_null(lf_rigid_forcing(sys));
    lf_rigid_set_forcing(sys, d, &e);
    assert_ptr_equal(lf_rigid_forcing(sys), d);
    assert_int_equal(lf_system_forms(sys) & LF_FORM_FIRST_INTEGRAL, 0); /* no first integral when forced */
    lf_rigid_set_forcing(sys, NULL, &e);
    assert_int_not_equal(lf_system_forms(sys) & LF_FORM_FIRST_INTEGRAL, 0);
    lf_system_free(sys);
    lf_forcing_free(d);
    lf_forcing_free(tab);
}

/* ---------------------------------------------------------------- forcings from graphs */
/* A graph of one translating body's forcing: the damping (-a_k w_k, -c v) plus, with extra, a torque
 * sin(t) w_1^2 e_1 (of t, not affine). Inputs t, R (9), w (3), x (3), v (3). */
static lf_forcing *graph_forcing(int extra, const double *a, double c, lf_model_graph_opts *mo, lf_error *e)
{
    lf_graph *g = lf_graph_new(0, NULL);
    double vals[19] = {0};
    int in[19], tau[3], F[3];
    graph_inputs(g, 19, vals, in);
    const int *w = in + 10, *v = in + 16;
    for (int k = 0; k < 3; k++) {
        tau[k] = lf_g2(g, LF_G_MUL, lf_graph_const(g, -a[k]), w[k]);
        F[k] = lf_g2(g, LF_G_MUL, lf_graph_const(g, -c), v[k]);
    }
    if (extra) {
        const int q = lf_g2(g, LF_G_MUL, lf_g1(g, LF_G_SIN, in[0]), lf_g2(g, LF_G_MUL, w[0], w[0]));
        tau[0] = lf_g2(g, LF_G_ADD, tau[0], q);
    }
    lf_forcing *f = lf_forcing_graph(g, extra ? "graph drag" : "graph damping", tau, F, 1, NULL, mo, NULL, e);
    lf_graph_free(g);
    return f;
}

static void test_graph_forcing(void **state)
{
    (void)state;
    lf_error e;
    const double a[3] = {0.1, 0.3, 0.2}, c = 0.7;
    lf_model_graph_opts mo = {LF_BACKEND_TAPE, NULL, 1};
    lf_forcing *gd = graph_forcing(0, a, c, &mo, &e), *gx = graph_forcing(1, a, c, &mo, &e),
               *bd = lf_forcing_damping(c, a, &e);
    assert_non_null(gd);
    assert_non_null(gx);
    printf("  flags: graph damping %u (velocity | affine = %u), with sin(t) w1^2 %u (velocity | time = %u)\n",
           lf_forcing_depends(gd), LF_FORCING_VELOCITY | LF_FORCING_AFFINE, lf_forcing_depends(gx),
           LF_FORCING_VELOCITY | LF_FORCING_TIME);
    assert_int_equal(lf_forcing_depends(gd), LF_FORCING_VELOCITY | LF_FORCING_AFFINE);
    assert_int_equal(lf_forcing_depends(gx), LF_FORCING_VELOCITY | LF_FORCING_TIME);
    double R[9], x[3] = {1, 2, 3}, w[3] = {0.3, -0.5, 0.8}, v[3] = {0.1, 0.2, -0.3}, D1[36], D2[36], D3[36];
    const double J[3] = {1, 2, 3}, mass = 2;
    gsl_rng *r = new_rng(8);
    rand_rot(r, 1.1, R);
    gsl_rng_free(r);
    lf_bodies_motion m = {{1, &mass, J, x, R}, w, v, 0.7};
    double t1[3], F1[3], t2[3], F2[3], t3[3], F3[3];
    lf_forcing_eval(gd, &m, t1, F1, &e);
    lf_forcing_eval(bd, &m, t2, F2, &e);
    lf_forcing_eval(gx, &m, t3, F3, &e);
    lf_forcing_jacobian(gd, &m, D1, &e);
    lf_forcing_jacobian(bd, &m, D2, &e);
    lf_forcing_jacobian(gx, &m, D3, &e);
    double extra = t3[0] - t1[0], dj = D3[0] - D1[0];
    CHECK_LE(fmax(maxdiff(3, t1, t2), maxdiff(3, F1, F2)), 1e-16, "graph damping = built-in damping: values");
    CHECK_LE(maxdiff(36, D1, D2), 1e-16, "graph damping = built-in damping: Jacobians");
    CHECK_LE(fabs(extra - sin(0.7) * w[0] * w[0]) + fabs(dj - 2 * sin(0.7) * w[0]), 1e-15,
             "sin(t) w1^2: value and d/dw1 by forward mode");
    /* a system with the graph damping runs as with the built-in (vlv, split_exact) */
    lf_system *s1 = lf_rigid_new_translating(1, Jc, mc, NULL, &e), *s2 = lf_rigid_new_translating(1, Jc, mc, NULL, &e);
    lf_rigid_set_forcing(s1, gd, &e);
    lf_rigid_set_forcing(s2, bd, &e);
    double worst = 0;
    for (int k = 0; k < 2; k++) {
        const lf_method *meth = lf_method_find(k ? "split_exact" : "vlv");
        lf_stepper *a1 = new_stepper(meth, s1, orbit_y0, NULL), *a2 = new_stepper(meth, s2, orbit_y0, NULL);
        run_steps(a1, 0.01, 200);
        run_steps(a2, 0.01, 200);
        worst = fmax(worst, maxdiff(18, lf_stepper_state(a1), lf_stepper_state(a2)));
        lf_stepper_free(a1), lf_stepper_free(a2);
    }
    /* (the graph's forcing is affine, not diagonal: the dense solve against the closed form) */
    CHECK_LE(worst, 1e-13, "runs with the graph damping vs the built-in, 200 steps (vlv, split_exact)");
    lf_system_free(s1), lf_system_free(s2);
    lf_forcing_free(gd), lf_forcing_free(gx), lf_forcing_free(bd);
}

/* ---------------------------------------------------------------- held inputs */
/* A held torque A for 10 steps, then B (lf_stepper_forcing_changed) equals constant torques A, then B
 * in a stepper restarted from the state after 10 steps: bit for bit (vlv, split_exact, no_squish). */
static void test_held(void **state)
{
    (void)state;
    lf_error e;
    const double A[3] = {0.1, -0.2, 0.05}, B[3] = {-0.3, 0.1, 0.2};
    lf_forcing *held = lf_forcing_held(1, &e), *fa = lf_forcing_torque(A, 0, &e), *fb = lf_forcing_torque(B, 0, &e);
    lf_potential *top = lf_potential_top(1, chi, &e);
    lf_system *sh = lf_rigid_new(1, Jt, top, &e), *sa = lf_rigid_new(1, Jt, top, &e),
              *sb = lf_rigid_new(1, Jt, top, &e);
    lf_rigid_set_forcing(sh, held, &e);
    lf_rigid_set_forcing(sa, fa, &e);
    lf_rigid_set_forcing(sb, fb, &e);
    assert_int_equal(lf_forcing_depends(held), 0);
    assert_int_equal(lf_forcing_held_set(fa, A, NULL, &e), LF_EINVAL); /* not a held input */
    const double bad[3] = {0, NAN, 0};
    assert_int_equal(lf_forcing_held_set(held, bad, NULL, &e), LF_EDOMAIN);
    printf("  %s\n", e.msg);
    const char *names[3] = {"vlv", "split_exact", "no_squish"};
    for (int k = 0; k < 3; k++) {
        const lf_method *m = lf_method_find(names[k]);
        lf_forcing_held_set(held, A, NULL, &e);
        lf_stepper *h1 = new_stepper(m, sh, top_y0, NULL), *a = new_stepper(m, sa, top_y0, NULL);
        run_steps(h1, 0.01, 10);
        run_steps(a, 0.01, 10);
        assert_int_equal(lf_forcing_held_set(held, B, NULL, &e), LF_OK);
        assert_true(lf_forcing_held_values(held)[2] == B[2] && lf_forcing_held_values(held)[5] == 0);
        lf_stepper_forcing_changed(h1);
        lf_stepper *b = new_stepper(m, sb, lf_stepper_state(a), NULL);
        lf_stepper_set_state(b, lf_stepper_state(a), lf_stepper_time(a));
        run_steps(h1, 0.01, 10);
        run_steps(b, 0.01, 10);
        const double d = maxdiff(12, lf_stepper_state(h1), lf_stepper_state(b));
        printf("  %-12s held A, B (changed after 10 steps) vs constant A, then B: %.1e\n", names[k], d);
        assert_true(d == 0 || k == 2); /* no_squish restarts its quaternion from R in the new stepper */
        assert_true(d < 1e-14);
        lf_stepper_free(h1), lf_stepper_free(a), lf_stepper_free(b);
    }
    lf_system_free(sh), lf_system_free(sa), lf_system_free(sb);
    lf_forcing_free(held), lf_forcing_free(fa), lf_forcing_free(fb);
    lf_potential_free(top);
}

/* ---------------------------------------------------------------- refusals */
static void test_refusals(void **state)
{
    (void)state;
    problem p = make_problem(0, 1);
    lf_error e;
    assert_int_not_equal(lf_method_accepts(lf_method_find("eln"), p.sys, &e), LF_OK);
    printf("  eln: %s\n", e.msg);
    assert_non_null(strstr(e.msg, "vlv"));
    assert_non_null(strstr(e.msg, "damping + spatial_torque")); /* the sum's name */
    assert_int_not_equal(lf_method_accepts(lf_method_find("dlm_p6"), p.sys, &e), LF_OK);
    printf("  dlm_p6: %s\n", e.msg);
    lf_method *proc = lf_compose_method_new(lf_method_find("dlm"), "processed6", &e);
    assert_non_null(proc);
    assert_int_not_equal(lf_method_accepts(proc, p.sys, &e), LF_OK);
    printf("  dlm processed6: %s\n", e.msg);
    assert_non_null(strstr(e.msg, "processed"));
    lf_method_free(proc);
    double y2[24];
    memcpy(y2, p.y0, sizeof top_y0);
    memcpy(y2 + 12, p.y0, sizeof top_y0);
    assert_null(lf_stepper_new_lanes(lf_method_find("vlv"), p.sys, 2, y2, 0, NULL, &e));
    printf("  lanes: %s\n", e.msg);
    assert_non_null(strstr(e.msg, "forcing"));
    lf_stepper_opts o = {.adapt = 1};
    assert_null(lf_stepper_new(lf_method_find("vlv"), p.sys, p.y0, 0, &o, &e));
    printf("  adaptive: %s\n", e.msg);
    assert_non_null(strstr(e.msg, "forcing"));
    /* bad forcings */
    const double bad[3] = {0, NAN, 0}, t2[2] = {1, 1}, tau2[6] = {0};
    assert_null(lf_forcing_damping(-1, NULL, &e));
    printf("  %s\n", e.msg);
    assert_null(lf_forcing_damping(0, bad, &e));
    printf("  %s\n", e.msg);
    assert_null(lf_forcing_torque(bad, 0, &e));
    printf("  %s\n", e.msg);
    assert_null(lf_forcing_torque_table(2, t2, tau2, 0, &e));
    printf("  %s\n", e.msg);
    free_problem(&p);
}

/* ---------------------------------------------------------------- zero forcing: bit for bit */
/* a forcing of the velocities that is 0 (its kicks implicit) */
static int zero_of_velocities(void *ctx, const lf_bodies_motion *m, double *tau, double *F, lf_error *err)
{
    (void)ctx, (void)err;
    memset(tau, 0, 3 * (size_t)m->c.nb * sizeof *tau);
    if (m->v) memset(F, 0, 3 * (size_t)m->c.nb * sizeof *F);
    return LF_OK;
}

static void test_zero_forcing(void **state)
{
    (void)state;
    lf_error e;
    const double zero[3] = {0, 0, 0};
    lf_forcing *zeros[3] = {lf_forcing_damping(0, zero, &e), lf_forcing_torque(zero, 1, &e),
                            lf_forcing_new("zero", LF_FORCING_VELOCITY, zero_of_velocities, NULL, NULL, NULL, &e)};
    const char *names[3] = {"damping 0", "torque 0", "zero of the velocities"};
    lf_potential *top = lf_potential_top(1, chi, &e);
    int nm = 0;
    double worst_composed = 0;
    for (int translating = 0; translating < 2; translating++)
        for (int withpot = 0; withpot < 2; withpot++)
            for (int which = 0; which < 3; which++) {
                const lf_potential *pot = withpot ? top : NULL;
                lf_system *plain =
                    translating ? lf_rigid_new_translating(1, Jc, mc, pot, &e) : lf_rigid_new(1, Jt, pot, &e);
                lf_system *forced =
                    translating ? lf_rigid_new_translating(1, Jc, mc, pot, &e) : lf_rigid_new(1, Jt, pot, &e);
                lf_rigid_set_forcing(forced, zeros[which], &e);
                const double *y0 = translating ? orbit_y0 : top_y0;
                for (int k = 0; k < lf_method_count(); k++) {
                    const lf_method *m = lf_method_at(k);
                    const lf_method_rigid_info *ri = lf_method_get_rigid_info(m);
                    if (method_info(m)->form != LF_FORM_RIGID || !ri->forcing || !steps_forced(m, forced)) continue;
                    lf_stepper *a = new_stepper(m, plain, y0, NULL), *b = new_stepper(m, forced, y0, NULL);
                    run_steps(a, 0.01, 100);
                    run_steps(b, 0.01, 100);
                    const int n = lf_system_nparam(plain);
                    const double d = maxdiff(n, lf_stepper_state(a), lf_stepper_state(b));
                    /* compositions do not merge implicit kicks (step_splitting.c): round-off then */
                    const int composed = which == 2 && strcmp(method_info(m)->family, "composition") == 0;
                    if (composed) worst_composed = fmax(worst_composed, d);
                    else if (d != 0)
                        fail_msg("%s (%s, %s, %s): differs by %.1e", method_info(m)->name,
                                 translating ? "translating" : "rotating", withpot ? "top" : "free", names[which], d);
                    lf_stepper_free(a);
                    lf_stepper_free(b);
                    nm++;
                }
                lf_system_free(plain);
                lf_system_free(forced);
            }
    printf("  %d runs (methods x rotating/translating x free/top x three forcings of 0): bit for bit\n", nm);
    CHECK_LE(worst_composed, 1e-13, "compositions with implicit kicks of 0, 100 steps");
    assert_true(nm >= 12 * 7);
    for (int i = 0; i < 3; i++) lf_forcing_free(zeros[i]);
    lf_potential_free(top);
}

/* ---------------------------------------------------------------- order, symmetry */
static void order_on(problem *p)
{
    const double T = 1.2;
    const int np = lf_system_nparam(p->sys);
    double yref[18];
    lf_error e;
    lf_reference_opts ro = {1e-14, 1e-14, 1e-3, 0, NULL};
    if (lf_reference_solve(p->sys, p->y0, 0, &T, 1, yref, NULL, &ro, &e) != LF_OK) fail_msg("%s", e.msg);
    int nm = 0, nrigid = 0, bad = 0;
    for (int k = 0; k < lf_method_count(); k++) {
        const lf_method *meth = lf_method_at(k);
        const lf_method_info *mi = method_info(meth);
        if (!steps_forced(meth, p->sys)) continue;
        /* the drive has kinks at the table's times: steps that hit them keep the order (T / N) */
        const int N0 = mi->order >= 6 ? 12 : mi->order >= 3 ? 24 : 48;
        double hs[3], errs[3];
        for (int i = 0; i < 3; i++) {
            const long N = (long)N0 << i;
            hs[i] = T / (double)N;
            lf_stepper *st = new_stepper(meth, p->sys, p->y0, NULL);
            run_steps(st, hs[i], N);
            errs[i] = lf_manifold_dist(lf_system_manifold(p->sys), lf_stepper_state(st), yref);
            lf_stepper_free(st);
        }
        const double slope = loglog_slope(hs, errs, 3);
        double back = NAN;
        if (mi->symmetric) back = back_and_forth(meth, p->sys, p->y0, 0.1);
        printf("  %-16s order %d: errors %.2e %.2e %.2e, slope %.2f", mi->name, mi->order, errs[0], errs[1], errs[2],
               slope);
        if (mi->symmetric) printf(", h then -h: %.1e", back);
        printf("\n");
        /* high orders reach round-off before the asymptotic range: a slope or an error at round-off */
        const int ok_order = slope > mi->order - 0.3 || errs[2] < 1e-12;
        if (!ok_order || (mi->symmetric && !(back <= 1.6e-14))) {
            printf("    FAIL: expected slope > %.1f%s\n", mi->order - 0.3,
                   mi->symmetric ? " and h, -h back to 1.6e-14" : "");
            bad++;
        }
        nm++;
        nrigid += mi->form == LF_FORM_RIGID;
    }
    printf("  %s: %d methods (%d rigid), T = %g\n", p->name, nm, nrigid, T);
    assert_int_equal(bad, 0);
    /* a forcing of the velocities: not the Runge-Kutta-Nystrom compositions split_exact_s4, _s6 */
    assert_true(nrigid >= (lf_system_rigid(p->sys)->forcing_depends & LF_FORCING_VELOCITY ? 7 : 9) && nm >= 18);
    (void)np;
}

static void test_order_and_symmetry(void **state)
{
    (void)state;
    for (int translating = 0; translating < 2; translating++)
        for (int damped = 0; damped < 2; damped++) {
            problem p = make_problem(translating, damped);
            order_on(&p);
            free_problem(&p);
        }
}

/* ---------------------------------------------------------------- the discrete momentum balance */
static void test_momentum_balance(void **state)
{
    (void)state;
    lf_error e;
    const double tau_s[3] = {0.3, -0.2, 0.5}, h = 0.01;
    const long n = 1000;
    lf_forcing *f = lf_forcing_torque(tau_s, 1, &e);
    lf_system *sys = lf_rigid_new(1, Jt, NULL, &e);
    lf_rigid_set_forcing(sys, f, &e);
    int nm = 0;
    double worst = 0;
    for (int k = 0; k < lf_method_count(); k++) {
        const lf_method *m = lf_method_at(k);
        const lf_method_rigid_info *ri = lf_method_get_rigid_info(m);
        if (method_info(m)->form != LF_FORM_RIGID || !ri->forcing || !ri->momentum_conserving) continue;
        lf_stepper *st = new_stepper(m, sys, top_y0, NULL);
        run_steps(st, h, n);
        double pi0[3], pi[3], d = 0;
        lf_rigid_spatial_momentum(sys, top_y0, top_y0 + 9, pi0);
        lf_rigid_spatial_momentum(sys, lf_stepper_state(st), lf_stepper_state(st) + 9, pi);
        for (int i = 0; i < 3; i++) d = fmax(d, fabs(pi[i] - pi0[i] - (double)n * h * tau_s[i]));
        printf("  %-16s |pi_n - pi_0 - n h tau_s| = %.1e\n", method_info(m)->name, d);
        worst = fmax(worst, d);
        lf_stepper_free(st);
        nm++;
    }
    CHECK_LE(worst, 1e-12, "worst momentum balance, 1000 steps (|pi| ~ 10)");
    assert_true(nm >= 9);
    lf_system_free(sys);
    lf_forcing_free(f);
}

/* ---------------------------------------------------------------- damped free body */
static void test_damped_decay(void **state)
{
    (void)state;
    lf_error e;
    const double gamma = 0.5, c = 0.3, T = 2;
    const double a[3] = {gamma * Jc[0], gamma * Jc[1], gamma * Jc[2]};
    lf_forcing *f = lf_forcing_damping(c, a, &e);
    lf_system *sys = lf_rigid_new_translating(1, Jc, mc, NULL, &e);
    lf_rigid_set_forcing(sys, f, &e);
    double y0[18];
    memcpy(y0, orbit_y0, sizeof y0);
    y0[9] = 3, y0[10] = -1, y0[11] = 6; /* a fast tumbling spin */
    double Pi0[3], v0 = lf_v3_norm(y0 + 15);
    lf_v3_mul(Jc, y0 + 9, Pi0);
    const double Pi_exact = lf_v3_norm(Pi0) * exp(-gamma * T), v_exact = v0 * exp(-c * T / mc[0]);
    int nm = 0, bad = 0;
    for (int k = 0; k < lf_method_count(); k++) {
        const lf_method *m = lf_method_at(k);
        const lf_method_info *mi = method_info(m);
        if (!steps_forced(m, sys)) continue;
        const int N0 = mi->order >= 6 ? 16 : mi->order >= 3 ? 32 : 64;
        double hs[2], errs[2];
        for (int i = 0; i < 2; i++) {
            const long N = (long)N0 << (2 * i);
            hs[i] = T / (double)N;
            lf_stepper *st = new_stepper(m, sys, y0, NULL);
            run_steps(st, hs[i], N);
            const double *y = lf_stepper_state(st);
            double Pi[3];
            lf_v3_mul(Jc, y + 9, Pi);
            errs[i] = fmax(fabs(lf_v3_norm(Pi) / Pi_exact - 1), fabs(lf_v3_norm(y + 15) / v_exact - 1));
            lf_stepper_free(st);
        }
        const double slope = loglog_slope(hs, errs, 2);
        printf("  %-16s rate errors %.2e %.2e (h / 4), slope %.2f\n", mi->name, errs[0], errs[1], slope);
        if (!(slope > mi->order - 0.3 || errs[1] < 1e-12)) bad++;
        nm++;
    }
    printf("  %d methods\n", nm);
    assert_int_equal(bad, 0);
    assert_true(nm >= 18);
    lf_system_free(sys);
    lf_forcing_free(f);
}

/* ---------------------------------------------------------------- energy balance */
/* A drive of period 2 pi tabulated every 0.05 up to T: tau_s = 0.2 (sin t, cos 2t, 0.5 sin 3t) in space. */
static lf_forcing *periodic_drive(double T)
{
    const int n = (int)(T / 0.05) + 2;
    double *t = malloc((size_t)n * sizeof *t), *tau = malloc(3 * (size_t)n * sizeof *tau);
    for (int i = 0; i < n; i++) {
        t[i] = 0.05 * i;
        tau[3 * i] = 0.2 * sin(t[i]), tau[3 * i + 1] = 0.2 * cos(2 * t[i]), tau[3 * i + 2] = 0.1 * sin(3 * t[i]);
    }
    lf_error e;
    lf_forcing *f = lf_forcing_torque_table(n, t, tau, 1, &e);
    free(t), free(tau);
    if (!f) fail_msg("%s", e.msg);
    return f;
}

/* max over the run of |E_n - E_0 - W_n| (W_n: lf_stepper_get_work), sampled every `every` steps, over the
 * first `early` samples (*first) and over the rest (*all) */
static void balance(const lf_method *m, const lf_system *sys, const double *y0, double h, long n, long every,
                    long early, double *first, double *all)
{
    lf_stepper *st = new_stepper(m, sys, y0, NULL);
    double E0, E, W;
    lf_error e;
    lf_system_energy(sys, y0, &E0, &e);
    *first = *all = 0;
    for (long k = 1; k <= n / every; k++) {
        run_steps(st, h, every);
        lf_system_energy(sys, lf_stepper_state(st), &E, &e);
        lf_stepper_get_work(st, &W, NULL);
        if (k <= early) *first = fmax(*first, fabs(E - E0 - W));
        else *all = fmax(*all, fabs(E - E0 - W));
    }
    lf_stepper_free(st);
}

static void test_energy_balance(void **state)
{
    (void)state;
    for (int translating = 0; translating < 2; translating++) {
        problem p = make_problem(translating, 1);
        const double T = 1.2;
        int nm = 0, bad = 0;
        for (int k = 0; k < lf_method_count(); k++) {
            const lf_method *m = lf_method_at(k);
            const lf_method_info *mi = method_info(m);
            if (mi->form != LF_FORM_RIGID || !steps_forced(m, p.sys)) continue;
            double hs[2], errs[2], first;
            for (int i = 0; i < 2; i++) {
                const long N = (long)(mi->order >= 4 ? 12 : 48) << (2 * i);
                hs[i] = T / (double)N;
                balance(m, p.sys, p.y0, hs[i], N, N, 0, &first, &errs[i]);
            }
            const double slope = loglog_slope(hs, errs, 2);
            printf("  %-16s |E_n - E_0 - W_n| = %.2e, %.2e (h / 4): slope %.2f (order %d)\n", mi->name, errs[0],
                   errs[1], slope, mi->order);
            if (!(slope > mi->order - 0.3 || errs[1] < 1e-12)) bad++;
            nm++;
        }
        printf("  %s: %d rigid methods\n", p.name, nm);
        assert_int_equal(bad, 0);
        free_problem(&p);
    }
    /* over a long driven and damped run: the balance stays at the conservative method's energy error */
    lf_error e;
    const double a[3] = {0.02, 0.01, 0.03}, Tl = 400, h = 0.05;
    lf_forcing *parts[2] = {lf_forcing_damping(0, a, &e), periodic_drive(Tl)};
    lf_forcing *f = lf_forcing_sum(2, (const lf_forcing *const *)parts, &e);
    lf_potential *top = lf_potential_top(1, chi, &e);
    lf_system *sys = lf_rigid_new(1, Jt, top, &e);
    lf_rigid_set_forcing(sys, f, &e);
    double worst = 0;
    for (int k = 0; k < lf_method_count(); k++) {
        const lf_method *m = lf_method_at(k);
        const lf_method_rigid_info *ri = lf_method_get_rigid_info(m);
        if (method_info(m)->form != LF_FORM_RIGID || !ri->forcing || !steps_forced(m, sys)) continue;
        double first, all, W;
        balance(m, sys, top_y0, h, (long)(Tl / h), 20, 200, &first, &all);
        lf_stepper *st = new_stepper(m, sys, top_y0, NULL);
        run_steps(st, h, (long)(Tl / h));
        lf_stepper_get_work(st, &W, NULL);
        lf_stepper_free(st);
        printf(
            "  %-16s T = 400, h = 0.05: W = %.3f; max |E - E_0 - W| over t <= 200: %.2e, over 200 < t <= 400: %.2e\n",
            method_info(m)->name, W, first, all);
        worst = fmax(worst, all / first);
    }
    CHECK_LE(worst, 1.5, "no drift of the balance: max over the second half / over the first");
    lf_system_free(sys);
    lf_potential_free(top);
    lf_forcing_free(f), lf_forcing_free(parts[0]), lf_forcing_free(parts[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtins),
        cmocka_unit_test(test_graph_forcing),
        cmocka_unit_test(test_held),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_zero_forcing),
        cmocka_unit_test(test_order_and_symmetry),
        cmocka_unit_test(test_momentum_balance),
        cmocka_unit_test(test_damped_decay),
        cmocka_unit_test(test_energy_balance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
