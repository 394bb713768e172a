/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Potentials of the positions of translating bodies (potential.h, model_graph.h, rigid.h): the
 * potentials U(x, R) with forces F = -dU/dx and torques, made from graphs, pair kernels, callbacks and
 * the built-ins, and what the rigid systems of translating bodies give of them:
 *  - lf_potential_graph_x: the central field with its gravity gradient written on a graph (inputs x,
 *    then R) for two bodies equals lf_potential_central at random configurations (U, F, tau, native
 *    and tape), each output asked alone equals the three asked together, set_params changes mu; its
 *    torque Jacobian (lf_potential_jacobian_x) against central differences of the built-in torque
 *    along R_j exp(e hat e_m) with the positions fixed;
 *  - lf_potential_pairs_x: a kernel of two dumbbells' point-mass gravity over the pairs of three
 *    bodies equals lf_potential_point_masses (U, F, tau, K); Newton's third law (sum F = 0) and the
 *    balance of moments (sum x x F + R tau = 0) of an invariant potential; F and tau against central
 *    differences of U; the cutoff (a pair beyond it contributes nothing to U, F, tau or K, a pair at
 *    exactly the cutoff neither, and a body moved across it adds exactly its pair's u); a position
 *    that is not finite refused by every potential of positions (pairs, central, gravity); an inner
 *    potential (of positions, or of R alone) adds; tln with the compiled K = tln with differences;
 *  - lf_potential_new_x with a callback (springs, a field and a coupling of attitudes), its context
 *    found by its own eval function only, destroy(ctx) called once on free; lf_potential_set_jacobian_x
 *    with an analytic torque Jacobian, returned by lf_potential_jacobian_x (checked against
 *    differences, refused when not finite), and tln stepping the translating bodies with it calls it,
 *    gives the iterates of the same method with the Jacobian by differences (LF_JAC_FD) and needs no
 *    more Newton iterations;
 *  - lf_potential_gravity: F = m g, no torque; a body thrown with vlv follows x0 + v0 t + g t^2/2 to
 *    round-off (velocity Verlet is exact for a constant force), its rotation bit for bit that of a
 *    free body, its energy error that of the free body's rotation;
 *  - lf_rigid_masses (a copy; NULL for bodies that only rotate), lf_rigid_potential_eval_x =
 *    lf_potential_eval_x bit for bit, and its refusals.
 * Every measurement is printed, then asserted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

enum { NBMAX = 3 };

static const char *backend_name(int b) { return b == LF_BACKEND_NATIVE ? "native" : "tape"; }

/* lf_potential_eval_x, failing the test on an error */
static void eval_x(const lf_potential *p, const lf_bodies_config *c, double *U, double *F, double *tau)
{
    lf_error e;
    if (lf_potential_eval_x(p, c, U, F, tau, &e) != LF_OK) fail_msg("%s", e.msg);
}

static double U_at(const lf_potential *p, const lf_bodies_config *c)
{
    double U;
    eval_x(p, c, &U, NULL, NULL);
    return U;
}

/* random positions (about the points x0, each moved by up to `spread` in each coordinate) and
 * rotations */
static void rand_config(gsl_rng *r, int nb, const double *x0, double spread, double *x, double *R)
{
    for (int i = 0; i < 3 * nb; i++) x[i] = x0[i] + spread * (2 * gsl_rng_uniform(r) - 1);
    for (int b = 0; b < nb; b++) lf_so3_random(gsl_rng_get(r), R + 9 * b, NULL);
}

/* K (3 nb x 3 nb) by central differences of p's torques along R_j exp(e hat e_m), positions fixed */
static void jacobian_fd(const lf_potential *p, const lf_bodies_config *c, double eps, double *K)
{
    const int nb = c->nb, n = 3 * nb;
    double R[9 * NBMAX], tp[3 * NBMAX], tn[3 * NBMAX];
    lf_bodies_config d = *c;
    d.R = R;
    for (int j = 0; j < nb; j++)
        for (int m = 0; m < 3; m++) {
            double v[3] = {0, 0, 0};
            memcpy(R, c->R, 9 * (size_t)nb * sizeof(double));
            v[m] = eps;
            lf_so3_rmul_exp(R + 9 * j, v);
            eval_x(p, &d, NULL, NULL, tp);
            memcpy(R, c->R, 9 * (size_t)nb * sizeof(double));
            v[m] = -eps;
            lf_so3_rmul_exp(R + 9 * j, v);
            eval_x(p, &d, NULL, NULL, tn);
            for (int r = 0; r < n; r++) K[r * n + 3 * j + m] = (tp[r] - tn[r]) / (2 * eps);
        }
}

/* F = -dU/dx and tau = -d/de U(R_j exp(e hat e_m)) by central differences of U */
static void gradient_fd(const lf_potential *p, const lf_bodies_config *c, double eps, double *F, double *tau)
{
    const int nb = c->nb;
    double x[3 * NBMAX], R[9 * NBMAX];
    lf_bodies_config d = *c;
    d.x = x;
    d.R = R;
    memcpy(R, c->R, 9 * (size_t)nb * sizeof(double));
    for (int i = 0; i < 3 * nb; i++) {
        memcpy(x, c->x, 3 * (size_t)nb * sizeof(double));
        x[i] = c->x[i] + eps;
        const double Up = U_at(p, &d);
        x[i] = c->x[i] - eps;
        F[i] = -(Up - U_at(p, &d)) / (2 * eps);
    }
    memcpy(x, c->x, 3 * (size_t)nb * sizeof(double));
    for (int j = 0; j < nb; j++)
        for (int m = 0; m < 3; m++) {
            double v[3] = {0, 0, 0};
            memcpy(R, c->R, 9 * (size_t)nb * sizeof(double));
            v[m] = eps;
            lf_so3_rmul_exp(R + 9 * j, v);
            const double Up = U_at(p, &d);
            memcpy(R, c->R, 9 * (size_t)nb * sizeof(double));
            v[m] = -eps;
            lf_so3_rmul_exp(R + 9 * j, v);
            tau[3 * j + m] = -(Up - U_at(p, &d)) / (2 * eps);
        }
}

/* tln from y0, n steps of h, with the potential's torque Jacobian (the default) and with LF_JAC_FD: the
 * largest difference of the states after each step, relative to 1 + |y|; the distance travelled from y0
 * in *moved; both steppers' statistics in st, and calls[k] counted by *counter during stepper k's steps
 * (counter may be NULL) */
static double tln_vs_fd(const lf_system *sys, const double *y0, double h, int n, const long *counter, long calls[2],
                        lf_stepper_stats st[2], double *moved)
{
    const lf_method *tln = lf_method_find("tln");
    assert_non_null(tln);
    const int np = lf_system_nparam(sys);
    lf_stepper_opts fd;
    memset(&fd, 0, sizeof fd);
    fd.jacobian = LF_JAC_FD;
    lf_stepper *s[2] = {new_stepper(tln, sys, y0, NULL), new_stepper(tln, sys, y0, &fd)};
    double w = 0;
    calls[0] = calls[1] = 0;
    for (int k = 0; k < n; k++) {
        for (int i = 0; i < 2; i++) {
            const long c0 = counter ? *counter : 0;
            run_steps(s[i], h, 1);
            calls[i] += counter ? *counter - c0 : 0;
        }
        const double *ya = lf_stepper_state(s[0]);
        w = fmax(w, maxdiff(np, ya, lf_stepper_state(s[1])) / (1 + maxabs(np, ya)));
    }
    *moved = maxdiff(np, lf_stepper_state(s[0]), y0);
    for (int i = 0; i < 2; i++) {
        lf_stepper_get_stats(s[i], &st[i]);
        lf_stepper_free(s[i]);
    }
    return w;
}

/* ---------------------------------------------------------------- 1. a graph of positions */
/* A point mass mu (parameter node) at c with the gravity gradient, potential.h's formula on a graph:
 * with r = x - c, q = R^T r,  U = sum_b -mu m / |r| - mu tr J / (2 |r|^3) + 3/2 mu q.Jq / |r|^5. */
static const double mu_c = 1.3, c_c[3] = {0.1, -0.2, 0.3};
static const double mass2[2] = {1, 0.7}, J2[6] = {0.05, 0.08, 0.11, 0.2, 0.1, 0.25};

static int central_graph(lf_graph *g, int nb, const int *in, int mu, const double *mass, const double *J,
                         const double *c)
{
    int U = lf_graph_const(g, 0);
    for (int b = 0; b < nb; b++) {
        const int *x = in + 3 * b, *R = in + 3 * nb + 9 * b;
        int r[3], q[3], Jq[3];
        for (int i = 0; i < 3; i++) r[i] = lf_g2(g, LF_G_SUB, x[i], lf_graph_const(g, c[i]));
        lf_gm3_tapply(g, R, r, q);
        for (int i = 0; i < 3; i++) Jq[i] = lf_g2(g, LF_G_MUL, lf_graph_const(g, J[3 * b + i]), q[i]);
        const int r2 = lf_gv3_dot(g, r, r), rn = lf_g1(g, LF_G_SQRT, r2), r3 = lf_g2(g, LF_G_MUL, r2, rn);
        const int r5 = lf_g2(g, LF_G_MUL, r2, r3), qJq = lf_gv3_dot(g, q, Jq);
        const double trJ = J[3 * b] + J[3 * b + 1] + J[3 * b + 2];
        const int newton =
            lf_g1(g, LF_G_NEG, lf_g2(g, LF_G_DIV, lf_g2(g, LF_G_MUL, mu, lf_graph_const(g, mass[b])), rn));
        const int gg = lf_g2(g, LF_G_SUB, lf_g2(g, LF_G_DIV, lf_g2(g, LF_G_MUL, lf_graph_const(g, 1.5), qJq), r5),
                             lf_g2(g, LF_G_DIV, lf_graph_const(g, 0.5 * trJ), r3));
        U = lf_g2(g, LF_G_ADD, U, lf_g2(g, LF_G_ADD, newton, lf_g2(g, LF_G_MUL, mu, gg)));
    }
    return U;
}

static void test_graph_x_central(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(11);
    lf_error e;
    lf_potential *ref = lf_potential_central(mu_c, c_c, &e);
    if (!ref) fail_msg("%s", e.msg);
    const double xc[6] = {1.5, 0.5, -1, -1, 1.8, 0.7};
    lf_jit_opts o = jit_opts();
    double wU = 0, wF = 0, wT = 0, wK = 0, wsep = 0, wpar = 0, offdiag = 0;
    for (int backend = LF_BACKEND_NATIVE; backend <= LF_BACKEND_TAPE; backend++) {
        double x0[6], R0[18];
        int in[24];
        rand_config(r, 2, xc, 0.5, x0, R0);
        lf_graph *g = lf_graph_new(0, NULL);
        graph_inputs(g, 6, x0, in);
        graph_inputs(g, 18, R0, in + 6);
        const int U = central_graph(g, 2, in, lf_graph_param(g, mu_c), mass2, J2, c_c);
        lf_model_graph_opts mo = {backend, &o, 1};
        const double par = mu_c;
        lf_potential *p = lf_potential_graph_x(g, U, 2, &par, &mo, &e);
        if (!p) fail_msg("%s", e.msg);
        lf_graph_free(g);
        lf_compiled *cc = lf_potential_compiled(p);
        assert_non_null(cc);
        printf("  %s: %s\n", backend_name(backend), lf_compiled_report(cc));
        assert_int_equal(lf_gmodule_backend(lf_compiled_module(cc)), backend);
        assert_true(lf_potential_of_positions(p));
        assert_true(lf_potential_has_jacobian(p));
        for (int it = 0; it < 50; it++) {
            double x[6], R[18], U1, U2, F1[6], F2[6], t1[6], t2[6], Ua, Fa[6], ta[6], K[36], Kfd[36];
            rand_config(r, 2, xc, 0.5, x, R);
            const lf_bodies_config cf = {2, mass2, J2, x, R};
            eval_x(ref, &cf, &U1, F1, t1);
            eval_x(p, &cf, &U2, F2, t2);
            wU = fmax(wU, fabs(U1 - U2) / fabs(U1));
            wF = fmax(wF, maxdiff(6, F1, F2) / maxabs(6, F1));
            wT = fmax(wT, maxdiff(6, t1, t2) / maxabs(6, t1));
            /* each output alone (other functions of the module) = the three together */
            eval_x(p, &cf, &Ua, NULL, NULL);
            eval_x(p, &cf, NULL, Fa, NULL);
            eval_x(p, &cf, NULL, NULL, ta);
            wsep = fmax(wsep, fmax(fabs(Ua - U2) / fabs(U2),
                                   fmax(maxdiff(6, Fa, F2) / maxabs(6, F2), maxdiff(6, ta, t2) / maxabs(6, t2))));
            if (lf_potential_jacobian_x(p, &cf, K, &e) != LF_OK) fail_msg("%s", e.msg);
            jacobian_fd(ref, &cf, 1e-5, Kfd);
            wK = fmax(wK, maxdiff(36, K, Kfd) / maxabs(36, Kfd));
            for (int i = 0; i < 3; i++) /* the bodies do not interact: the blocks K_12, K_21 vanish */
                for (int j = 0; j < 3; j++)
                    offdiag = fmax(offdiag, fmax(fabs(K[6 * i + 3 + j]), fabs(K[6 * (3 + i) + j])));
        }
        /* set_params: mu -> 2.1 is the built-in of mu = 2.1 */
        const double mu2 = 2.1;
        lf_potential *ref2 = lf_potential_central(mu2, c_c, &e);
        const lf_bodies_config cf0 = {2, mass2, J2, x0, R0};
        const double Ubefore = U_at(p, &cf0);
        assert_int_equal(lf_compiled_set_params(cc, 1, &mu2, &e), LF_OK);
        const double Uafter = U_at(p, &cf0), Uref2 = U_at(ref2, &cf0);
        printf("  U(x0, R0) = %.15g at mu = 1.3, %.15g after set_params(2.1) (built-in: %.15g)\n", Ubefore, Uafter,
               Uref2);
        assert_true(Uafter != Ubefore);
        wpar = fmax(wpar, fabs(Uafter - Uref2) / fabs(Uref2));
        lf_potential_free(ref2);
        lf_potential_free(p);
    }
    /* refused: a graph without 12 nb inputs */
    lf_graph *g = lf_graph_new(0, NULL);
    int in[9];
    const double R0[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    graph_inputs(g, 9, R0, in);
    lf_model_graph_opts mo = {LF_BACKEND_TAPE, NULL, 1};
    assert_null(lf_potential_graph_x(g, in[0], 1, NULL, &mo, &e));
    printf("  refused: %s\n", e.msg);
    assert_non_null(strstr(e.msg, "12 nb"));
    lf_graph_free(g);
    lf_potential_free(ref);
    gsl_rng_free(r);
    CHECK_LE(wU, 1e-14, "central field on a graph vs built-in: U, relative");
    CHECK_LE(wF, 1e-14, "central field on a graph vs built-in: forces, relative");
    CHECK_LE(wT, 1e-13, "central field on a graph vs built-in: torques, relative");
    CHECK_LE(wsep, 1e-15, "U, F, tau asked alone vs together, relative");
    CHECK_LE(wK, 1e-8, "torque Jacobian vs central differences of the built-in torque");
    CHECK_LE(offdiag, 0, "torque Jacobian of two independent bodies: |K_12|, |K_21|");
    CHECK_LE(wpar, 1e-14, "U after set_params(mu) vs the built-in of that mu");
}

/* ---------------------------------------------------------------- 2. pair kernels of moving centres */
/* A dumbbell, the same for every body: two points of masses db_m at body positions db_s. The kernel of
 * two bodies with r = x_j - x_i:  u = -G sum_k,l m_k m_l / |r + R_j s_l - R_i s_k|. */
static const double db_s[6] = {0.1, 0, 0.5, 0, -0.2, -0.4}, db_m[2] = {0.3, 0.7}, G_c = 1.1;
static const double mass3[3] = {1, 1.2, 0.8}, J3[9] = {0.5, 0.4, 0.1, 0.3, 0.5, 0.2, 0.2, 0.2, 0.3};
static const int pairs3[6] = {0, 1, 1, 2, 0, 2};

static int dumbbell_kernel(lf_graph *g, const int *in, int G)
{
    const int *Ri = in, *Rj = in + 9, *r = in + 18;
    int sum = lf_graph_const(g, 0);
    for (int k = 0; k < 2; k++)
        for (int l = 0; l < 2; l++) {
            int sk[3], sl[3], a[3], b[3], d[3];
            for (int i = 0; i < 3; i++)
                sk[i] = lf_graph_const(g, db_s[3 * k + i]), sl[i] = lf_graph_const(g, db_s[3 * l + i]);
            lf_gm3_apply(g, Ri, sk, a);
            lf_gm3_apply(g, Rj, sl, b);
            for (int i = 0; i < 3; i++) d[i] = lf_g2(g, LF_G_SUB, lf_g2(g, LF_G_ADD, r[i], b[i]), a[i]);
            sum = lf_g2(g, LF_G_ADD, sum, lf_g2(g, LF_G_DIV, lf_graph_const(g, db_m[k] * db_m[l]), lf_gv3_norm(g, d)));
        }
    return lf_g1(g, LF_G_NEG, lf_g2(g, LF_G_MUL, G, sum));
}

static double dumbbell_u(const double *Ri, const double *Rj, const double *r)
{
    double u = 0;
    for (int k = 0; k < 2; k++)
        for (int l = 0; l < 2; l++) {
            double a[3], b[3], d[3];
            lf_m3_apply(Ri, db_s + 3 * k, a);
            lf_m3_apply(Rj, db_s + 3 * l, b);
            for (int i = 0; i < 3; i++) d[i] = r[i] + b[i] - a[i];
            u += db_m[k] * db_m[l] / lf_v3_norm(d);
        }
    return -G_c * u;
}

/* u of bodies i, j at x, R */
static double pair_u(const double *x, const double *R, int i, int j)
{
    double r[3];
    lf_v3_sub(x + 3 * j, x + 3 * i, r);
    return dumbbell_u(R + 9 * i, R + 9 * j, r);
}

/* the point masses of nb dumbbells (lf_potential_point_masses) */
static lf_potential *dumbbells(int nb)
{
    int np[NBMAX];
    double s[6 * NBMAX], pm[2 * NBMAX];
    for (int b = 0; b < nb; b++) {
        np[b] = 2;
        memcpy(s + 6 * b, db_s, sizeof db_s);
        memcpy(pm + 2 * b, db_m, sizeof db_m);
    }
    lf_error e;
    lf_potential *p = lf_potential_point_masses(nb, np, s, pm, G_c, &e);
    if (!p) fail_msg("%s", e.msg);
    return p;
}

/* F, tau of 3 bodies from the point masses of the listed pairs of bodies alone (each pair a 2-body
 * potential), the others' entries 0 */
static void pairs_reference(const double *x, const double *R, int npairs, const int *pairs, double *U, double *F,
                            double *tau)
{
    lf_potential *two = dumbbells(2);
    *U = 0;
    memset(F, 0, 9 * sizeof(double));
    memset(tau, 0, 9 * sizeof(double));
    for (int p = 0; p < npairs; p++) {
        const int b[2] = {pairs[2 * p], pairs[2 * p + 1]};
        double xs[6], Rs[18], m[2], J[6], Up, Fp[6], tp[6];
        for (int k = 0; k < 2; k++) {
            memcpy(xs + 3 * k, x + 3 * b[k], 3 * sizeof(double));
            memcpy(Rs + 9 * k, R + 9 * b[k], 9 * sizeof(double));
            memcpy(J + 3 * k, J3 + 3 * b[k], 3 * sizeof(double));
            m[k] = mass3[b[k]];
        }
        const lf_bodies_config c = {2, m, J, xs, Rs};
        eval_x(two, &c, &Up, Fp, tp);
        *U += Up;
        for (int k = 0; k < 2; k++) {
            lf_v3_add(F + 3 * b[k], Fp + 3 * k, F + 3 * b[k]);
            lf_v3_add(tau + 3 * b[k], tp + 3 * k, tau + 3 * b[k]);
        }
    }
    lf_potential_free(two);
}

/* the cutoff (3): which pairs count, at configurations along the x axis */
static void check_cutoff(const lf_potential *pc, const double *R, double *wcut, double *body2)
{
    const double cut = 3;
    double x[9] = {0, 0, 0, 1.5, 0.2, 0, 8, 0, 0}, U, F[9], tau[9], Ur, Fr[9], tr[9], K[81];
    const lf_bodies_config c = {3, mass3, J3, x, R};
    lf_error e;
    /* A: body 3 far from both: only the pair (1, 2) */
    eval_x(pc, &c, &U, F, tau);
    pairs_reference(x, R, 1, pairs3, &Ur, Fr, tr);
    *wcut = fmax(*wcut, fmax(fabs(U - Ur) / fabs(Ur),
                             fmax(maxdiff(9, F, Fr) / maxabs(9, Fr), maxdiff(9, tau, tr) / maxabs(9, tr))));
    *body2 = fmax(*body2, fmax(maxabs(3, F + 6), maxabs(3, tau + 6)));
    if (lf_potential_jacobian_x(pc, &c, K, &e) != LF_OK) fail_msg("%s", e.msg);
    for (int i = 0; i < 9; i++)
        *body2 = fmax(*body2, fmax(maxabs(3, K + 9 * i + 6), i >= 6 ? maxabs(9, K + 9 * i) : 0));
    const double Ufar = U;
    /* B: body 3 within the cutoff of body 2 (2.5), beyond that of body 1 (4.005): pairs (1, 2), (2, 3) */
    x[6] = 4;
    x[7] = 0.2;
    eval_x(pc, &c, &U, F, tau);
    const int chain[4] = {0, 1, 1, 2};
    pairs_reference(x, R, 2, chain, &Ur, Fr, tr);
    *wcut = fmax(*wcut, fmax(fabs(U - Ur) / fabs(Ur),
                             fmax(maxdiff(9, F, Fr) / maxabs(9, Fr), maxdiff(9, tau, tr) / maxabs(9, tr))));
    /* across: |x_3 - x_2| = 3 (1 -+ 1e-12) and exactly 3 (not < cutoff: not counted) */
    x[6] = 1.5 + cut * (1 - 1e-12);
    const double Uin = U_at(pc, &c), uin = pair_u(x, R, 1, 2);
    x[6] = 1.5 + cut * (1 + 1e-12);
    const double Uout = U_at(pc, &c);
    x[6] = 4.5;
    const double Uat = U_at(pc, &c);
    printf("    U: %.15g (body 3 far), %.15g (3 (1 - 1e-12) from body 2), %.15g (3 (1 + 1e-12)), %.15g (3)\n", Ufar,
           Uin, Uout, Uat);
    *wcut = fmax(*wcut, fabs((Uin - Uout) - uin) / fabs(Uin));
    assert_true(Uout == Ufar && Uat == Ufar);
}

/* refused: no positive cutoff, a pair of one body */
static void check_pairs_refusals(void)
{
    lf_error e;
    lf_graph *g = lf_graph_new(0, NULL);
    int in[21];
    double ker[21] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0};
    graph_inputs(g, 21, ker, in);
    const int u = dumbbell_kernel(g, in, lf_graph_const(g, G_c)), self[2] = {1, 1};
    assert_null(lf_potential_pairs_x(g, u, 3, 3, pairs3, 0, NULL, NULL, NULL, &e));
    printf("  refused: %s\n", e.msg);
    assert_non_null(strstr(e.msg, "a positive cutoff")); /* says which requirement, and the value */
    assert_non_null(strstr(e.msg, "cutoff 0"));
    assert_null(lf_potential_pairs_x(g, u, 3, 3, pairs3, NAN, NULL, NULL, NULL, &e));
    /* a NaN position is an error of every potential of positions (it would drop out of the cutoff
     * test, and out of central's "at the attracting point" test, unseen) */
    lf_potential *pp = lf_potential_pairs_x(g, u, 3, 3, pairs3, INFINITY, NULL, NULL, NULL, &e);
    const double g0[3] = {0, 0, -1};
    lf_potential *pots[3] = {pp, lf_potential_central(1, NULL, &e), lf_potential_gravity(g0, &e)};
    const double m[3] = {1, 1, 1}, J[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, x[9] = {0, 0, 1, NAN, 0, 0, 2, 0, 0};
    double R[27], U, F[9];
    for (int b = 0; b < 3; b++) lf_so3_exp((const double[3]){0.1 * b, 0, 0}, R + 9 * b);
    const lf_bodies_config cf = {3, m, J, x, R};
    for (int k = 0; k < 3; k++) {
        assert_non_null(pots[k]);
        assert_int_equal(lf_potential_eval_x(pots[k], &cf, k == 2 ? NULL : &U, F, NULL, &e), LF_EDOMAIN);
        assert_non_null(strstr(e.msg, "the position of body 2 is not finite"));
        lf_potential_free(pots[k]);
    }
    printf("  refused: %s\n", e.msg);
    assert_null(lf_potential_pairs_x(g, u, 3, 1, self, INFINITY, NULL, NULL, NULL, &e));
    printf("  refused: %s\n", e.msg);
    lf_graph_free(g);
}

static void test_pairs_x(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(22);
    lf_error e;
    lf_potential *pm = dumbbells(3), *central = lf_potential_central(mu_c, c_c, &e);
    const double B[3] = {0.2, -0.1, 0.4}, mv[3] = {0, 0.3, 1};
    lf_potential *field = lf_potential_field(B, mv, &e);
    assert_true(pm && central && field);
    const double xc[9] = {0, 0, 0, 2, 0, 0, 0, 2.2, 0.5};
    lf_jit_opts o = jit_opts();
    double wU = 0, wF = 0, wT = 0, wK = 0, third = 0, moment = 0, fdF = 0, fdT = 0, winner = 0, wcut = 0, body2 = 0,
           tln = 0, iters = 0;
    for (int backend = LF_BACKEND_NATIVE; backend <= LF_BACKEND_TAPE; backend++) {
        double ker[21], x0[9], R0[27];
        int in[21];
        rand_config(r, 3, xc, 0.3, x0, R0);
        memcpy(ker, R0, 18 * sizeof(double));
        lf_v3_sub(x0 + 3, x0, ker + 18);
        lf_graph *g = lf_graph_new(0, NULL);
        graph_inputs(g, 21, ker, in);
        const int u = dumbbell_kernel(g, in, lf_graph_param(g, G_c));
        lf_model_graph_opts mo = {backend, &o, 1};
        const double par = G_c;
        lf_potential *pall = lf_potential_pairs_x(g, u, 3, 3, pairs3, INFINITY, NULL, &par, &mo, &e);
        lf_potential *pc = pall ? lf_potential_pairs_x(g, u, 3, 3, pairs3, 3, NULL, &par, &mo, &e) : NULL;
        lf_potential *pin = pc ? lf_potential_pairs_x(g, u, 3, 3, pairs3, INFINITY, central, &par, &mo, &e) : NULL;
        lf_potential *pinR = pin ? lf_potential_pairs_x(g, u, 3, 3, pairs3, INFINITY, field, &par, &mo, &e) : NULL;
        if (!pinR) fail_msg("%s", e.msg);
        lf_graph_free(g);
        printf("  %s: %s\n", backend_name(backend), lf_compiled_report(lf_potential_compiled(pall)));
        assert_int_equal(lf_gmodule_backend(lf_compiled_module(lf_potential_compiled(pall))), backend);
        assert_true(lf_potential_of_positions(pall) && lf_potential_has_jacobian(pall) &&
                    lf_potential_has_jacobian(pc));
        /* an inner potential without a Jacobian: none for the sum */
        assert_false(lf_potential_has_jacobian(pin));
        for (int it = 0; it < 20; it++) {
            double x[9], R[27], U1, U2, F1[9], F2[9], t1[9], t2[9], K[81], Kfd[81], Ffd[9], tfd[9];
            rand_config(r, 3, xc, 0.3, x, R);
            const lf_bodies_config c = {3, mass3, J3, x, R};
            eval_x(pm, &c, &U1, F1, t1);
            eval_x(pall, &c, &U2, F2, t2);
            wU = fmax(wU, fabs(U1 - U2) / fabs(U1));
            wF = fmax(wF, maxdiff(9, F1, F2) / maxabs(9, F1));
            wT = fmax(wT, maxdiff(9, t1, t2) / maxabs(9, t1));
            /* Newton's third law; the moments about the origin balance (U is invariant under rotations) */
            double sF[3] = {0, 0, 0}, sM[3] = {0, 0, 0}, scaleM = 0;
            for (int b = 0; b < 3; b++) {
                double xF[3], Rt[3];
                lf_v3_add(sF, F2 + 3 * b, sF);
                lf_v3_cross(x + 3 * b, F2 + 3 * b, xF);
                lf_m3_apply(R + 9 * b, t2 + 3 * b, Rt);
                lf_v3_add(sM, xF, sM);
                lf_v3_add(sM, Rt, sM);
                scaleM = fmax(scaleM, fmax(maxabs(3, xF), maxabs(3, Rt)));
            }
            third = fmax(third, maxabs(3, sF) / maxabs(9, F2));
            moment = fmax(moment, maxabs(3, sM) / scaleM);
            gradient_fd(pall, &c, 1e-5, Ffd, tfd);
            fdF = fmax(fdF, maxdiff(9, F2, Ffd) / maxabs(9, F2));
            fdT = fmax(fdT, maxdiff(9, t2, tfd) / maxabs(9, t2));
            if (lf_potential_jacobian_x(pall, &c, K, &e) != LF_OK) fail_msg("%s", e.msg);
            jacobian_fd(pm, &c, 1e-5, Kfd);
            wK = fmax(wK, maxdiff(81, K, Kfd) / maxabs(81, Kfd));
            /* inner potentials add: of positions (F and tau), of R alone (tau; F unchanged) */
            double Ui, Fi[9], ti[9], Uc, Fc[9], tc[9], Uf, tf[9];
            eval_x(pin, &c, &Ui, Fi, ti);
            eval_x(central, &c, &Uc, Fc, tc);
            for (int i = 0; i < 9; i++) Fc[i] += F2[i], tc[i] += t2[i];
            winner = fmax(winner, fmax(fabs(Ui - (U2 + Uc)) / fabs(Ui),
                                       fmax(maxdiff(9, Fi, Fc) / maxabs(9, Fi), maxdiff(9, ti, tc) / maxabs(9, ti))));
            eval_x(pinR, &c, &Ui, Fi, ti);
            if (lf_potential_eval(field, 3, R, &Uf, tf, &e) != LF_OK) fail_msg("%s", e.msg);
            for (int i = 0; i < 9; i++) tf[i] += t2[i];
            winner = fmax(winner, fmax(fabs(Ui - (U2 + Uf)) / fabs(Ui),
                                       fmax(maxdiff(9, Fi, F2) / maxabs(9, Fi), maxdiff(9, ti, tf) / maxabs(9, ti))));
        }
        check_cutoff(pc, R0, &wcut, &body2);
        /* tln with the compiled K vs K by differences (LF_JAC_FD): the same iterates */
        lf_system *sys = lf_rigid_new_translating(3, J3, mass3, pall, &e);
        if (!sys) fail_msg("%s", e.msg);
        double y0[54], moved;
        long calls[2];
        lf_stepper_stats st[2];
        memcpy(y0, R0, sizeof R0);
        for (int i = 0; i < 9; i++) y0[27 + i] = 0.5 * gsl_ran_ugaussian(r), y0[45 + i] = 0.3 * gsl_ran_ugaussian(r);
        memcpy(y0 + 36, x0, sizeof x0);
        tln = fmax(tln, tln_vs_fd(sys, y0, 0.02, 50, NULL, calls, st, &moved));
        printf("    tln, 50 steps of 0.02: %ld Newton iterations with the compiled K, %ld with LF_JAC_FD\n",
               st[0].newton_iters, st[1].newton_iters);
        iters = fmax(iters, (double)st[0].newton_iters / (double)st[1].newton_iters);
        lf_system_free(sys);
        lf_potential_free(pall);
        lf_potential_free(pc);
        lf_potential_free(pin);
        lf_potential_free(pinR);
    }
    check_pairs_refusals();
    lf_potential_free(pm);
    lf_potential_free(central);
    lf_potential_free(field);
    gsl_rng_free(r);
    CHECK_LE(wU, 1e-14, "dumbbell pair kernel of moving centres vs point masses: U, relative");
    CHECK_LE(wF, 1e-14, "... forces, relative");
    CHECK_LE(wT, 1e-13, "... torques, relative");
    CHECK_LE(wK, 1e-8, "... torque Jacobian vs central differences of the point masses' torque");
    CHECK_LE(third, 1e-15, "Newton's third law: |sum F| / max |F|");
    CHECK_LE(moment, 1e-14, "moments: |sum x x F + R tau| / max term");
    CHECK_LE(fdF, 1e-8, "forces vs -dU/dx (central differences)");
    CHECK_LE(fdT, 1e-8, "torques vs -dU/de along R exp(e hat e_m) (central differences)");
    CHECK_LE(winner, 1e-15, "with an inner potential (central, field): U, F, tau add");
    CHECK_LE(wcut, 1e-14, "cutoff: U, F, tau of the pairs within it; U jump across it = u");
    CHECK_LE(body2, 0, "cutoff: force, torque and K entries of a body beyond it");
    CHECK_LE(tln, 1e-13, "tln, 50 steps: compiled K vs LF_JAC_FD, max |y_a - y_b| / (1 + |y|)");
    CHECK_LE(iters, 1.05, "tln: Newton iterations with the compiled K / with LF_JAC_FD");
}

/* ---------------------------------------------------------------- 3. a callback potential */
/* U = sum_b [k/2 m_b |x_b|^2 - (B + c x_b) . (R_b d)] - kappa sum_{a<b} (R_a d) . (R_b d): springs to the
 * origin, a field on the body vector d growing with x, a coupling of attitudes. With w_b = B + c x_b:
 *   F_b = -k m_b x_b + c R_b d,
 *   tau_b = d x R_b^T w_b + kappa sum_{a != b} d x R_b^T R_a d   (tau . y = -d/de U(R_b exp(e hat y))),
 *   K_bb = sum of (beta d^T - (d . beta) I) over beta = R_b^T w_b and kappa R_b^T R_a d,
 *   K_ba = -kappa hat(d) R_b^T R_a hat(d)   (a != b). */
typedef struct {
    double k, c, kappa, B[3], d[3];
    int nan_jacobian;
    long evals, jacs, destroyed;
} spring_ctx;

static int spring_eval(void *ctx, const lf_bodies_config *cf, double *U, double *F, double *tau, lf_error *err)
{
    (void)err;
    spring_ctx *s = ctx;
    s->evals++;
    double Us = 0, a[3 * NBMAX];
    for (int b = 0; b < cf->nb; b++) lf_m3_apply(cf->R + 9 * b, s->d, a + 3 * b);
    for (int b = 0; b < cf->nb; b++) {
        const double *x = cf->x + 3 * b, *R = cf->R + 9 * b;
        double w[3], beta[3];
        lf_v3_axpy(s->B, s->c, x, w);
        Us += 0.5 * s->k * cf->mass[b] * lf_v3_dot(x, x) - lf_v3_dot(w, a + 3 * b);
        for (int q = b + 1; q < cf->nb; q++) Us -= s->kappa * lf_v3_dot(a + 3 * b, a + 3 * q);
        if (F)
            for (int i = 0; i < 3; i++) F[3 * b + i] = -s->k * cf->mass[b] * x[i] + s->c * a[3 * b + i];
        if (tau) {
            lf_m3_tapply(R, w, beta);
            for (int q = 0; q < cf->nb; q++) {
                double t[3];
                if (q == b) continue;
                lf_m3_tapply(R, a + 3 * q, t);
                lf_v3_axpy(beta, s->kappa, t, beta);
            }
            lf_v3_cross(s->d, beta, tau + 3 * b);
        }
    }
    if (U) *U = Us;
    return LF_OK;
}

static int spring_jacobian(void *ctx, const lf_bodies_config *cf, double *K, lf_error *err)
{
    (void)err;
    spring_ctx *s = ctx;
    s->jacs++;
    const int nb = cf->nb, n = 3 * nb;
    double a[3 * NBMAX], D[9];
    lf_so3_hat(s->d, D);
    for (int b = 0; b < nb; b++) lf_m3_apply(cf->R + 9 * b, s->d, a + 3 * b);
    for (int b = 0; b < nb; b++) {
        const double *R = cf->R + 9 * b;
        double w[3], beta[3];
        lf_v3_axpy(s->B, s->c, cf->x + 3 * b, w);
        lf_m3_tapply(R, w, beta);
        for (int q = 0; q < nb; q++) {
            double t[3], M[9], DM[9], blk[9];
            if (q == b) continue;
            lf_m3_tapply(R, a + 3 * q, t);
            lf_v3_axpy(beta, s->kappa, t, beta);
            lf_m3_tmul(R, cf->R + 9 * q, M); /* K_bq = -kappa hat(d) R_b^T R_q hat(d) */
            lf_m3_mul(D, M, DM);
            lf_m3_mul(DM, D, blk);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) K[(3 * b + i) * n + 3 * q + j] = -s->kappa * blk[3 * i + j];
        }
        const double db = lf_v3_dot(s->d, beta);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) K[(3 * b + i) * n + 3 * b + j] = beta[i] * s->d[j] - (i == j ? db : 0);
    }
    if (s->nan_jacobian) K[n + 1] = NAN;
    return LF_OK;
}

static void spring_destroy(void *ctx) { ((spring_ctx *)ctx)->destroyed++; }

static int other_eval_x(void *ctx, const lf_bodies_config *cf, double *U, double *F, double *tau, lf_error *err)
{
    (void)ctx, (void)cf, (void)F, (void)tau, (void)err;
    if (U) *U = 0;
    return LF_OK;
}

static int other_eval(void *ctx, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    (void)ctx, (void)nb, (void)R, (void)tau, (void)err;
    if (U) *U = 0;
    return LF_OK;
}

static void test_callback_x(void **state)
{
    (void)state;
    spring_ctx ctx = {.k = 1, .c = 0.3, .kappa = 0.5, .B = {0, 0.2, 1}, .d = {0.3, 0.1, 1}};
    lf_error e;
    lf_potential *p = lf_potential_new_x("springs", spring_eval, &ctx, spring_destroy, &e);
    if (!p) fail_msg("%s", e.msg);
    assert_string_equal(lf_potential_name(p), "springs");
    assert_true(lf_potential_of_positions(p));
    /* the context: for its own eval function only */
    lf_potential *central = lf_potential_central(1, NULL, &e);
    assert_ptr_equal(lf_potential_context_x(p, spring_eval), &ctx);
    assert_null(lf_potential_context_x(p, other_eval_x));
    assert_null(lf_potential_context(p, other_eval));
    assert_null(lf_potential_context_x(central, spring_eval));
    assert_null(lf_potential_context_x(NULL, spring_eval));
    assert_null(lf_potential_new_x("none", NULL, &ctx, spring_destroy, &e));
    printf("  refused: %s\n", e.msg);
    /* no Jacobian yet */
    const double mass[2] = {1, 1.5}, J[6] = {1, 2, 3, 2, 1.5, 1};
    double x[6] = {0.5, -0.3, 0.2, -0.4, 0.6, 0.1}, R[18], K[36], K2[36], Kfd[36], F[6], tau[6], Ffd[6], tfd[6];
    lf_so3_random(5, R, NULL);
    lf_so3_random(6, R + 9, NULL);
    const lf_bodies_config cf = {2, mass, J, x, R};
    assert_false(lf_potential_has_jacobian(p));
    assert_int_equal(lf_potential_jacobian_x(p, &cf, K, &e), LF_EINVAL);
    printf("  without a Jacobian: %s\n", e.msg);
    /* the callback against differences of its U (so that the comparison below means something) */
    eval_x(p, &cf, NULL, F, tau);
    gradient_fd(p, &cf, 1e-5, Ffd, tfd);
    const double fdF = maxdiff(6, F, Ffd) / maxabs(6, F), fdT = maxdiff(6, tau, tfd) / maxabs(6, tau);
    /* with one: returned as the callback fills it, checked against differences, refused when not finite */
    lf_potential_set_jacobian_x(p, spring_jacobian);
    assert_true(lf_potential_has_jacobian(p));
    if (lf_potential_jacobian_x(p, &cf, K, &e) != LF_OK) fail_msg("%s", e.msg);
    spring_jacobian(&ctx, &cf, K2, NULL);
    assert_memory_equal(K, K2, sizeof K);
    jacobian_fd(p, &cf, 1e-5, Kfd);
    const double wK = maxdiff(36, K, Kfd) / maxabs(36, Kfd);
    assert_int_equal(lf_potential_jacobian_x(p, NULL, K, &e), LF_EINVAL);
    ctx.nan_jacobian = 1;
    assert_int_equal(lf_potential_jacobian_x(p, &cf, K, &e), LF_EDOMAIN);
    printf("  a NaN entry: %s\n", e.msg);
    ctx.nan_jacobian = 0;
    lf_potential_set_jacobian_x(p, NULL);
    assert_false(lf_potential_has_jacobian(p));
    lf_potential_set_jacobian_x(p, spring_jacobian);
    /* tln with the analytic K (the default) vs K by differences (LF_JAC_FD): the same iterates */
    lf_system *sys = lf_rigid_new_translating(2, J, mass, p, &e);
    if (!sys) fail_msg("%s", e.msg);
    double y0[36] = {0};
    memcpy(y0, R, sizeof R);
    const double w0[6] = {0.4, -0.7, 1.1, 0.9, 0.2, -0.5}, v0[6] = {0.3, 0.5, -0.2, -0.6, 0.1, 0.4};
    memcpy(y0 + 18, w0, sizeof w0);
    memcpy(y0 + 24, x, sizeof x);
    memcpy(y0 + 30, v0, sizeof v0);
    const long jacs0 = ctx.jacs;
    long calls[2];
    lf_stepper_stats st[2];
    double moved;
    const double wstep = tln_vs_fd(sys, y0, 0.05, 200, &ctx.jacs, calls, st, &moved);
    printf("  tln, 200 steps of 0.05: %ld analytic Jacobians (%ld Newton iterations), LF_JAC_FD %ld (%ld)\n", calls[0],
           st[0].newton_iters, calls[1], st[1].newton_iters);
    assert_true(calls[0] > 0 && calls[1] == 0 && ctx.jacs - jacs0 == calls[0]);
    printf("  the bodies moved: max |y(10) - y0| = %.2f\n", moved);
    assert_true(moved > 0.5);
    lf_system_free(sys);
    /* destroy(ctx) once, on free */
    assert_int_equal(ctx.destroyed, 0);
    lf_potential_free(p);
    assert_int_equal(ctx.destroyed, 1);
    lf_potential_free(central);
    CHECK_LE(fdF, 1e-9, "callback potential: forces vs -dU/dx (central differences)");
    CHECK_LE(fdT, 1e-9, "callback potential: torques vs -dU/de (central differences)");
    CHECK_LE(wK, 1e-9, "analytic torque Jacobian vs central differences of the torque");
    CHECK_LE(wstep, 1e-13, "tln, analytic K vs LF_JAC_FD: max |y_a - y_b| / (1 + |y|) over 200 steps");
    /* Newton with the exact K converges as fast as with differences (a K of the wrong sign or scale, or
     * K = 0: 1.7 times as many iterations, measured) */
    CHECK_LE((double)st[0].newton_iters / (double)st[1].newton_iters, 1.05,
             "tln: Newton iterations with the analytic K / with LF_JAC_FD");
}

/* ---------------------------------------------------------------- 4. uniform gravity */
static void test_gravity(void **state)
{
    (void)state;
    const double g[3] = {0.3, -9.81, 0.1}, mass[2] = {2, 0.25}, J[6] = {1, 2, 3, 0.5, 0.6, 0.7};
    lf_error e;
    lf_potential *p = lf_potential_gravity(g, &e);
    if (!p) fail_msg("%s", e.msg);
    assert_true(lf_potential_of_positions(p));
    assert_string_equal(lf_potential_name(p), "gravity");
    /* F = m g bit for bit, no torque, U = -sum m g . x */
    double x[6] = {1, 2, 3, -40, 5e3, 0.6}, R[18], U, F[6], tau[6];
    lf_so3_random(1, R, NULL);
    lf_so3_random(2, R + 9, NULL);
    const lf_bodies_config cf = {2, mass, J, x, R};
    eval_x(p, &cf, &U, F, tau);
    double dF = 0;
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 3; i++) dF = fmax(dF, fabs(F[3 * b + i] - mass[b] * g[i]));
    const double Uref = -(mass[0] * lf_v3_dot(g, x) + mass[1] * lf_v3_dot(g, x + 3));
    /* refusals: no g, a g not finite; bodies that only rotate; lf_potential_eval */
    const double gnan[3] = {0, NAN, 0};
    assert_null(lf_potential_gravity(NULL, &e));
    printf("  refused: %s\n", e.msg);
    assert_null(lf_potential_gravity(gnan, &e));
    printf("  refused: %s\n", e.msg);
    assert_null(lf_rigid_new(2, J, p, &e));
    printf("  refused: %s\n", e.msg);
    assert_int_equal(lf_potential_eval(p, 2, R, &U, tau, &e), LF_EINVAL);
    /* a body thrown: x(t) = x0 + v0 t + g t^2 / 2 with vlv, its rotation that of a free body */
    lf_system *sys = lf_rigid_new_translating(1, J, mass, p, &e),
              *free_ = lf_rigid_new_translating(1, J, mass, NULL, &e);
    assert_true(sys && free_);
    double y0[18] = {0};
    memcpy(y0, R, 9 * sizeof(double));
    const double w0[3] = {0.5, -1.2, 2}, x0[3] = {1, 2, 3}, v0[3] = {4, 15, -1};
    memcpy(y0 + 9, w0, sizeof w0);
    memcpy(y0 + 12, x0, sizeof x0);
    memcpy(y0 + 15, v0, sizeof v0);
    const lf_method *vlv = lf_method_find("vlv");
    assert_non_null(vlv);
    lf_stepper *st = new_stepper(vlv, sys, y0, NULL), *sf = new_stepper(vlv, free_, y0, NULL);
    const double h = 0.01;
    const long n = 1000;
    double wx = 0, wv = 0, wrot = 0, wE = 0, E0, Ef0;
    if (lf_system_energy(sys, y0, &E0, &e) != LF_OK || lf_system_energy(free_, y0, &Ef0, &e) != LF_OK)
        fail_msg("%s", e.msg);
    for (long k = 1; k <= n; k++) {
        run_steps(st, h, 1);
        run_steps(sf, h, 1);
        const double *y = lf_stepper_state(st), t = (double)k * h;
        for (int i = 0; i < 3; i++) {
            const double xe = x0[i] + v0[i] * t + 0.5 * g[i] * t * t, ve = v0[i] + g[i] * t;
            wx = fmax(wx, fabs(y[12 + i] - xe) / (1 + fabs(xe)));
            wv = fmax(wv, fabs(y[15 + i] - ve) / (1 + fabs(ve)));
        }
        wrot = fmax(wrot, maxdiff(12, y, lf_stepper_state(sf)));
        /* the energy error is the free rotation's: 1/2 m |v|^2 - m g . x is kept exactly */
        double E, Ef;
        if (lf_system_energy(sys, y, &E, &e) != LF_OK ||
            lf_system_energy(free_, lf_stepper_state(sf), &Ef, &e) != LF_OK)
            fail_msg("%s", e.msg);
        wE = fmax(wE, fabs((E - E0) - (Ef - Ef0)) /
                          fmax(0.5 * mass[0] * lf_v3_dot(y + 15, y + 15), mass[0] * fabs(lf_v3_dot(g, y + 12))));
    }
    printf("  T = 10: x = (%.6f, %.6f, %.6f)\n", lf_stepper_state(st)[12], lf_stepper_state(st)[13],
           lf_stepper_state(st)[14]);
    lf_stepper_free(st);
    lf_stepper_free(sf);
    lf_system_free(sys);
    lf_system_free(free_);
    lf_potential_free(p);
    CHECK_LE(dF, 0, "gravity: |F - m g|");
    CHECK_LE(maxabs(6, tau), 0, "gravity: |tau|");
    CHECK_LE(fabs(U - Uref) / fabs(Uref), 1e-15, "gravity: U vs -sum m g . x, relative");
    /* round-off: 1000 steps, each rounding x and v by a few eps */
    CHECK_LE(wx, n * 4 * 2.3e-16, "vlv, 1000 steps: |x - (x0 + v0 t + g t^2/2)| / (1 + |x|)");
    CHECK_LE(wv, n * 4 * 2.3e-16, "vlv, 1000 steps: |v - (v0 + g t)| / (1 + |v|)");
    CHECK_LE(wrot, 0, "vlv in gravity: R, w - those of the free body");
    CHECK_LE(wE, n * 4 * 2.3e-16, "vlv: (E - E0) - (that of the free body), relative to 1/2 m |v|^2, m |g . x|");
}

/* ---------------------------------------------------------------- 5. the rigid system's accessors */
static void test_rigid_accessors(void **state)
{
    (void)state;
    double mass[3] = {1, 1.2, 0.8};
    lf_error e;
    lf_potential *pm = dumbbells(3), *central = lf_potential_central(mu_c, c_c, &e);
    const double B[3] = {0.2, -0.1, 0.4}, mv[3] = {0, 0.3, 1};
    lf_potential *field = lf_potential_field(B, mv, &e);
    lf_system *tr = lf_rigid_new_translating(3, J3, mass, pm, &e),
              *trc = lf_rigid_new_translating(3, J3, mass, central, &e);
    lf_system *rot = lf_rigid_new(3, J3, field, &e);
    assert_true(tr && trc && rot);
    /* the masses: a copy */
    mass[1] = 99;
    const double *m = lf_rigid_masses(tr);
    assert_non_null(m);
    assert_true(m != mass && m[0] == 1 && m[1] == 1.2 && m[2] == 0.8);
    mass[1] = 1.2;
    assert_null(lf_rigid_masses(rot));
    assert_null(lf_rigid_masses(NULL));
    /* lf_rigid_potential_eval_x = lf_potential_eval_x bit for bit */
    gsl_rng *r = new_rng(44);
    const double xc[9] = {0, 0, 0, 2, 0, 0, 0, 2.2, 0.5};
    int same = 1;
    for (int it = 0; it < 10; it++) {
        double x[9], R[27], U1, U2, F1[9], F2[9], t1[9], t2[9];
        rand_config(r, 3, xc, 0.3, x, R);
        const lf_bodies_config c = {3, mass, J3, x, R};
        for (int k = 0; k < 2; k++) {
            const lf_system *s = k ? trc : tr;
            eval_x(lf_rigid_potential(s), &c, &U1, F1, t1);
            if (lf_rigid_potential_eval_x(s, x, R, &U2, F2, t2, &e) != LF_OK) fail_msg("%s", e.msg);
            same = same && U1 == U2 && memcmp(F1, F2, sizeof F1) == 0 && memcmp(t1, t2, sizeof t1) == 0;
        }
        /* bodies that only rotate: no x needed, F = 0, U and tau those of lf_potential_eval */
        for (int i = 0; i < 9; i++) F2[i] = NAN;
        if (lf_rigid_potential_eval_x(rot, NULL, R, &U2, F2, t2, &e) != LF_OK) fail_msg("%s", e.msg);
        if (lf_potential_eval(field, 3, R, &U1, t1, &e) != LF_OK) fail_msg("%s", e.msg);
        same = same && U1 == U2 && memcmp(t1, t2, sizeof t1) == 0 && maxabs(9, F2) == 0 && !isnan(maxdiff(9, F2, F2));
    }
    printf("  lf_rigid_potential_eval_x = lf_potential_eval_x (point masses, central; and rotating bodies): %s\n",
           same ? "bit for bit" : "DIFFERENT");
    assert_true(same);
    /* refusals */
    double R[27], x[9] = {0}, U, F[9], tau[9];
    for (int b = 0; b < 3; b++) lf_so3_random(10 + b, R + 9 * b, NULL);
    assert_int_equal(lf_rigid_potential_eval_x(tr, NULL, R, &U, F, tau, &e), LF_EINVAL);
    printf("  refused: %s\n", e.msg);
    assert_int_equal(lf_rigid_potential_eval_x(tr, x, NULL, &U, F, tau, &e), LF_EINVAL);
    assert_int_equal(lf_rigid_potential_eval_x(NULL, x, R, &U, F, tau, &e), LF_EINVAL);
    x[3] = x[4] = x[5] = 0; /* the central field at its attracting point: an error, not inf */
    lf_v3_copy(c_c, x);
    assert_int_equal(lf_rigid_potential_eval_x(trc, x, R, &U, F, tau, &e), LF_EDOMAIN);
    printf("  refused: %s\n", e.msg);
    gsl_rng_free(r);
    lf_system_free(tr);
    lf_system_free(trc);
    lf_system_free(rot);
    lf_potential_free(pm);
    lf_potential_free(central);
    lf_potential_free(field);
}

int main(void)
{
    if (!test_cache_make("positions")) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_x_central), cmocka_unit_test(test_pairs_x),
        cmocka_unit_test(test_callback_x),      cmocka_unit_test(test_gravity),
        cmocka_unit_test(test_rigid_accessors),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    test_cache_remove();
    return rc;
}
