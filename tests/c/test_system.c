/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What a system tells about itself (core/model/system.h, rigid.h, lie_ode.h, potential.h), on a
 * rigid system of two bodies, Lie ODEs (built-in and written here) and a system on spheres: its
 * kind, forms and their records (the second-order form's acceleration is f's velocity part, the
 * constrained form's W = M^-1, its Cartesian view round-trips and its potential is the system's),
 * sizes, fields, observables (their dimensions add up, their values are what the system computes
 * otherwise), energy and skew map, the initial state and state checks that name the field; the
 * getters of rigid bodies, Lie ODEs (built-ins and their parameters, the definition) and callback
 * potentials (their context, an analytic torque Jacobian set by the caller and used by an
 * implicit method). Every measurement is printed, then asserted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "problems.h"
#include "testutil.h"

/* ---------------------------------------------------------------- the systems */
typedef struct {
    lf_potential *pot;
    lf_system *rigid, *s2flow, *rbs2, *quat, *user, *spheres;
    lf_manifold *S2, *S3, *R2;
} fixture;

/* a Lie ODE on r2 written here: y' = (y2, -y1) (a rotation), no energy */
static int rot_f(void *ctx, double t, const double *y, double *xi, lf_error *err)
{
    (void)ctx, (void)t, (void)err;
    xi[0] = y[1];
    xi[1] = -y[0];
    return LF_OK;
}

static lf_manifold *one(lf_factor_kind k, int dim)
{
    lf_manifold *M = lf_manifold_new(1, &k, &dim, LF_RIGHT_TRIVIALIZED, NULL);
    assert_non_null(M);
    return M;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    lf_error e;
    const double J[6] = {1, 2, 3, 2, 2, 4}, D[3] = {1, 2, 3}, I[3] = {1, 2, 3}, Jm[6] = {1, 2, 3, 0.3, -0.5, 0.8};
    const double q[3] = {0, 0.6, 0.8}, qq[4] = {0.5, 0.5, 0.5, 0.5}, y2[2] = {1, 0};
    f->pot = lf_potential_stress(0.3, NULL, NULL);
    f->rigid = lf_rigid_new(2, J, f->pot, &e);
    f->S2 = one(LF_S2, 0), f->S3 = one(LF_S3, 0), f->R2 = one(LF_RM, 2);
    f->s2flow = lf_lie_ode_builtin("s2_gradient_flow", f->S2, q, D, &e);
    f->rbs2 = lf_lie_ode_builtin("rigid_body_s2", f->S2, q, I, &e);
    f->quat = lf_lie_ode_builtin("free_rigid_quat", f->S3, qq, Jm, &e);
    lf_lie_ode_def def = {.name = "rotation", .f = rot_f, .ctx = f};
    f->user = lf_lie_ode_new(f->R2, y2, &def, &e);
    const double q0[6] = {0.6, 0, 0.8, 0, 0, -1}, w0[6] = {0, 1, 0, 1, -1, 0}, up[3] = {0, 0, 1};
    f->spheres = lf_spheres_double_pendulum(2, 1, 1, 1, 9.81, up, q0, w0, &e);
    assert_true(f->rigid && f->s2flow && f->rbs2 && f->quat && f->user && f->spheres);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    lf_system *all[6] = {f->rigid, f->s2flow, f->rbs2, f->quat, f->user, f->spheres};
    for (int i = 0; i < 6; i++) lf_system_free(all[i]);
    lf_manifold_free(f->S2);
    lf_manifold_free(f->S3);
    lf_manifold_free(f->R2);
    lf_potential_free(f->pot);
    free(f);
    return 0;
}

/* ---------------------------------------------------------------- kind, forms, sizes */
static void test_forms(void **state)
{
    fixture *f = *state;
    const unsigned bits[5] = {LF_FORM_LIE_ODE, LF_FORM_RIGID, LF_FORM_SECOND_ORDER, LF_FORM_FIRST_INTEGRAL,
                              LF_FORM_CONSTRAINED};
    const char *names[5] = {"lie_ode", "rigid", "second_order", "first_integral", "constrained"};
    for (int i = 0; i < 5; i++) assert_string_equal(lf_form_name(bits[i]), names[i]);
    assert_string_equal(lf_form_name(LF_FORM_RIGID | LF_FORM_LIE_ODE), "?"); /* one bit only */
    assert_string_equal(lf_system_kind(f->rigid), "rigidbody");
    assert_string_equal(lf_system_kind(f->s2flow), "lie_ode");
    assert_string_equal(lf_system_kind(f->spheres), "spheres");
    const struct {
        lf_system *s;
        int np, nd;
        unsigned forms;
    } cases[] = {{f->rigid, 24, 12, LF_FORM_LIE_ODE | LF_FORM_RIGID | LF_FORM_SECOND_ORDER | LF_FORM_FIRST_INTEGRAL},
                 {f->s2flow, 3, 3, LF_FORM_LIE_ODE},
                 {f->rbs2, 3, 3, LF_FORM_LIE_ODE | LF_FORM_FIRST_INTEGRAL},
                 {f->user, 2, 2, LF_FORM_LIE_ODE},
                 {f->spheres, 12, 12, LF_FORM_LIE_ODE | LF_FORM_SECOND_ORDER | LF_FORM_CONSTRAINED}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const lf_system *s = cases[i].s;
        printf("  %-10s np %2d, nd %2d, forms:", lf_system_kind(s), lf_system_nparam(s), lf_system_ndim(s));
        for (int b = 0; b < 5; b++)
            if (lf_system_forms(s) & bits[b]) printf(" %s", lf_form_name(bits[b]));
        printf("\n");
        assert_int_equal(lf_system_nparam(s), cases[i].np);
        assert_int_equal(lf_system_ndim(s), cases[i].nd);
        assert_int_equal(lf_system_nparam(s), lf_manifold_nparam(lf_system_manifold(s)));
        assert_int_equal(lf_system_ndim(s), lf_manifold_ndim(lf_system_manifold(s)));
        assert_int_equal(lf_system_forms(s), cases[i].forms);
        /* a record exactly when the form is offered */
        assert_int_equal(lf_system_rigid(s) != NULL, (cases[i].forms & LF_FORM_RIGID) != 0);
        assert_int_equal(lf_system_second_order(s) != NULL, (cases[i].forms & LF_FORM_SECOND_ORDER) != 0);
        assert_int_equal(lf_system_constrained(s) != NULL, (cases[i].forms & LF_FORM_CONSTRAINED) != 0);
    }
}

/* the second-order form's acceleration is the velocity part of f; the constrained form's W, Cartesian
 * view and potential */
static void test_form_records(void **state)
{
    fixture *f = *state;
    lf_error e;
    double worst = 0;
    lf_system *so[2] = {f->rigid, f->spheres};
    double yr[24] = {0};
    lf_so3_random(5, yr, NULL); /* away from R = I, where the stress potential's torque is singular */
    lf_so3_random(6, yr + 9, NULL);
    for (int k = 18; k < 24; k++) yr[k] = 0.1 * k - 2;
    for (int i = 0; i < 2; i++) {
        const lf_form_second_order *r = lf_system_second_order(so[i]);
        const int nd = lf_system_ndim(so[i]), nc = r->nconfig;
        double xi[24], a[24];
        const double *y = i ? lf_system_initial(so[i]) : yr;
        assert_int_equal(r->nconfig, 2); /* two bodies, two spheres */
        assert_int_equal(lf_system_f(so[i], 0.5, y, xi, &e), LF_OK);
        assert_int_equal(r->accel(so[i], 0.5, y, a, &e), LF_OK);
        const int nv = nd - lf_manifold_factor(lf_system_manifold(so[i]), nc)->od; /* velocity entries */
        worst = fmax(worst, maxdiff(nv, a, xi + nd - nv) / maxabs(nv, a));
    }
    CHECK_LE(worst, 1e-15, "second-order accel vs the velocity part of f (rigid, spheres)");
    assert_non_null(lf_system_second_order(f->spheres)->accel_affine);
    assert_null(lf_system_second_order(f->rigid)->accel_affine);
    /* constrained: the double pendulum's M = [[3, 1], [1, 1]], W = M^-1 */
    const lf_form_constrained *c = lf_system_constrained(f->spheres);
    const double M[4] = {3, 1, 1, 1}, I2[4] = {1, 0, 0, 1};
    double MW[4];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) MW[2 * i + j] = M[2 * i] * c->W[j] + M[2 * i + 1] * c->W[2 + j];
    printf("  double pendulum: W = [[%.17g, %.17g], [%.17g, %.17g]], diagonal %d\n", c->W[0], c->W[1], c->W[2], c->W[3],
           c->diagonal);
    assert_true(c->n == 2 && !c->diagonal);
    CHECK_LE(maxdiff(4, MW, I2), 1e-15, "constrained form: |M W - I| (W = M^-1)");
    const double *y = lf_system_initial(f->spheres);
    double x[6], v[6], y2[12], V1, V2, g1[6], g2[6];
    c->to_cartesian(f->spheres, y, x, v);
    for (int i = 0; i < 2; i++) { /* x_i = q_i, v_i = omega_i x q_i */
        double qd[3];
        lf_v3_cross(y + 6 + 3 * i, y + 3 * i, qd);
        assert_true(maxdiff(3, x + 3 * i, y + 3 * i) == 0 && maxdiff(3, v + 3 * i, qd) <= 2.3e-16);
    }
    c->from_cartesian(f->spheres, x, v, y2);
    CHECK_LE(maxdiff(12, y2, y), 4.5e-16, "constrained form: from_cartesian(to_cartesian(y)) vs y");
    assert_int_equal(c->potential(f->spheres, x, &V1, g1, &e), LF_OK);
    assert_int_equal(lf_spheres_potential(f->spheres, x, &V2, g2, &e), LF_OK);
    assert_true(V1 == V2 && maxdiff(6, g1, g2) == 0);
}

/* ---------------------------------------------------------------- fields and observables */
static void test_fields_and_observables(void **state)
{
    fixture *f = *state;
    lf_error e;
    /* fields: R and omega of two bodies, y of a Lie ODE, q and omega of spheres */
    assert_int_equal(lf_system_nfields(f->rigid), 2);
    const lf_field *R = lf_system_field(f->rigid, 0), *w = lf_system_find_field(f->rigid, "omega");
    assert_true(strcmp(R->name, "R") == 0 && R->first == 0 && R->count == 2);
    assert_true(w == lf_system_field(f->rigid, 1) && w->first == 2 && w->count == 2);
    assert_null(lf_system_find_field(f->rigid, "q"));
    assert_null(lf_system_field(f->rigid, 2));
    assert_null(lf_system_field(f->rigid, -1));
    assert_int_equal(lf_system_nfields(f->user), 1);
    assert_true(strcmp(lf_system_field(f->user, 0)->name, "y") == 0 && lf_system_field(f->user, 0)->count == 1);
    assert_true(lf_system_find_field(f->spheres, "q")->count == 2 &&
                lf_system_find_field(f->spheres, "omega")->first == 2);
    /* observables: their dimensions add up to observables_dim, observe fills exactly that many */
    lf_system *all[3] = {f->rigid, f->s2flow, f->spheres};
    for (int k = 0; k < 3; k++) {
        const int n = lf_system_nobservables(all[k]), dim = lf_system_observables_dim(all[k]);
        int sum = 0;
        printf("  %-10s %d observables (%d numbers):", lf_system_kind(all[k]), n, dim);
        for (int i = 0; i < n; i++) {
            printf(" %s", lf_system_observable(all[k], i)->name);
            sum += lf_system_observable(all[k], i)->dim;
        }
        printf("\n");
        assert_int_equal(sum, dim);
        assert_null(lf_system_observable(all[k], n));
        double out[64];
        for (int i = 0; i < 64; i++) out[i] = -123;
        assert_int_equal(lf_system_observe(all[k], 0, lf_system_initial(all[k]), out, &e), LF_OK);
        assert_true(out[dim] == -123 && out[dim - 1] != -123);
    }
    /* their values: the rigid system's energy and spatial momentum, the Lie ODE's manifold defect */
    const double *y = lf_system_initial(f->rigid);
    double y1[24], out[64], E, pi[3], wv[6] = {0.3, -0.2, 0.5, 1, 0, -0.4};
    memcpy(y1, y, sizeof y1);
    memcpy(y1 + 18, wv, sizeof wv);
    assert_int_equal(lf_system_observe(f->rigid, 0, y1, out, &e), LF_OK);
    assert_int_equal(lf_system_energy(f->rigid, y1, &E, &e), LF_OK);
    lf_rigid_spatial_momentum(f->rigid, y1, y1 + 18, pi);
    assert_string_equal(lf_system_observable(f->rigid, 0)->name, "energy");
    assert_string_equal(lf_system_observable(f->rigid, 1)->name, "spatial_momentum");
    assert_true(out[0] == E && maxdiff(3, out + 1, pi) == 0);
    const double qoff[3] = {0, 0.6, 0.8000001};
    int off = 0, i = 0;
    for (; strcmp(lf_system_observable(f->s2flow, i)->name, "manifold_defect") != 0; i++)
        off += lf_system_observable(f->s2flow, i)->dim;
    assert_int_equal(lf_system_observe(f->s2flow, 0, qoff, out, &e), LF_OK);
    printf("  manifold_defect observable %.3e, lf_manifold_defect %.3e\n", out[off],
           lf_manifold_defect(lf_system_manifold(f->s2flow), qoff));
    assert_true(out[off] == lf_manifold_defect(lf_system_manifold(f->s2flow), qoff));
}

/* ---------------------------------------------------------------- energy, skew map, states */
static void test_energy_skew_and_states(void **state)
{
    fixture *f = *state;
    lf_error e;
    assert_true(lf_system_has_energy(f->rigid) && lf_system_has_energy(f->s2flow) && lf_system_has_energy(f->quat));
    assert_true(lf_system_has_energy(f->spheres));
    assert_false(lf_system_has_energy(f->user));
    double E;
    assert_int_equal(lf_system_energy(f->user, lf_system_initial(f->user), &E, &e), LF_EINVAL);
    printf("  no energy: %s\n", e.msg);
    /* rigid_body_s2 has its own skew map w(m)(a) = m x a; free_rigid_quat and rigid bodies the default */
    assert_true(lf_system_has_skew(f->rbs2));
    assert_false(lf_system_has_skew(f->quat) || lf_system_has_skew(f->rigid));
    const double m[3] = {0, 0.6, 0.8}, a[3] = {0.3, -1, 2};
    double out[3], mxa[3];
    assert_int_equal(lf_system_skew(f->rbs2, 0, m, a, out, &e), LF_OK);
    lf_v3_cross(m, a, mxa);
    assert_true(maxdiff(3, out, mxa) <= 2.3e-16);
    /* the initial state: replaced (checked), kept when refused */
    const double q1[3] = {0.6, 0.8, 0}, bad[3] = {0.6, 0.8, 0.01};
    assert_int_equal(lf_system_set_initial(f->s2flow, q1, &e), LF_OK);
    assert_memory_equal(lf_system_initial(f->s2flow), q1, sizeof q1);
    assert_int_equal(lf_system_set_initial(f->s2flow, bad, &e), LF_EINVAL);
    printf("  %s\n", e.msg);
    assert_memory_equal(lf_system_initial(f->s2flow), q1, sizeof q1);
    /* check_state: within tol or not, the message names the field */
    double y[24];
    memcpy(y, lf_system_initial(f->rigid), sizeof y);
    assert_int_equal(lf_system_check_state(f->rigid, y, 1e-9, &e), LF_OK);
    y[9 + 4] *= 1 + 1e-7; /* R[2] off SO(3) by ~2e-7 */
    assert_int_equal(lf_system_check_state(f->rigid, y, 1e-6, &e), LF_OK);
    assert_int_equal(lf_system_check_state(f->rigid, y, 1e-9, &e), LF_EINVAL);
    printf("  %s\n", e.msg);
    assert_non_null(strstr(e.msg, "R[2]"));
    memcpy(y, lf_system_initial(f->rigid), sizeof y);
    y[22] = NAN;
    assert_int_equal(lf_system_check_state(f->rigid, y, 1e-9, &e), LF_EINVAL);
    assert_non_null(strstr(e.msg, "omega[2]"));
    double ys[12];
    memcpy(ys, lf_system_initial(f->spheres), sizeof ys);
    ys[5] = -1.001;
    assert_int_equal(lf_system_check_state(f->spheres, ys, 1e-9, &e), LF_EINVAL);
    assert_non_null(strstr(e.msg, "q[2]"));
    assert_int_equal(lf_system_check_state(f->spheres, NULL, 1e-9, &e), LF_EINVAL);
}

/* Regression: system.h promises that the energy functions return LF_EINVAL (or NULL / NaN) for NULL
 * arguments instead of crashing; lf_system_has_energy(NULL) dereferenced NULL. */
static void test_has_energy_null(void **state)
{
    (void)state;
    assert_int_equal(lf_system_has_energy(NULL), 0);
}

/* ---------------------------------------------------------------- rigid bodies, Lie ODEs */
static void test_rigid_and_lie_ode_getters(void **state)
{
    fixture *f = *state;
    assert_int_equal(lf_rigid_nbodies(f->rigid), 2);
    assert_ptr_equal(lf_rigid_potential(f->rigid), f->pot);
    assert_true(lf_rigid_inertia(f->rigid)[4] == 2 && lf_rigid_inertia(f->rigid)[5] == 4);
    const double J[3] = {1, 1, 2};
    lf_system *free_body = lf_rigid_new(1, J, NULL, NULL);
    assert_true(lf_rigid_nbodies(free_body) == 1 && lf_rigid_potential(free_body) == NULL);
    lf_system_free(free_body);
    assert_true(lf_rigid_nbodies(f->spheres) == 0 && lf_rigid_potential(f->spheres) == NULL);
    assert_null(lf_rigid_inertia(f->user));
    /* the built-ins: NULL-terminated names, each with its parameters; made from them, named so */
    const char *const *names = lf_lie_ode_builtin_names();
    const char *documented[] = {"s2_gradient_flow", "gl3_linear",       "free_rigid_quat",
                                "rigid_body_s2",    "pseudo_rigid_svk", "ts2_gradient_flow"};
    int n = 0;
    for (; names[n]; n++) {
        int np = -1, total = 0;
        const lf_lie_ode_param *p = lf_lie_ode_builtin_params(names[n], &np);
        assert_non_null(p);
        printf("  %-18s", names[n]);
        for (int i = 0; i < np; i++) printf(" %s (%d)", p[i].name, p[i].size), total += p[i].size;
        printf("\n");
        assert_true(np >= 1 && total >= 3);
    }
    assert_int_equal(n, 6);
    for (int i = 0; i < 6; i++) {
        int found = 0;
        for (int k = 0; k < n; k++) found |= strcmp(names[k], documented[i]) == 0;
        assert_true(found);
    }
    int np = 0;
    const lf_lie_ode_param *gl = lf_lie_ode_builtin_params("gl3_linear", &np);
    assert_true(np == 2 && strcmp(gl[0].name, "A0") == 0 && gl[1].size == 9);
    assert_null(lf_lie_ode_builtin_params("no_such_flow", &np));
    assert_string_equal(lf_lie_ode_name(f->s2flow), "s2_gradient_flow");
    assert_string_equal(lf_lie_ode_name(f->user), "rotation");
    assert_string_equal(lf_lie_ode_name(f->rigid), "");
    const lf_lie_ode_def *d = lf_lie_ode_definition(f->user);
    assert_non_null(d);
    assert_true(d->f == rot_f && d->ctx == f && d->energy == NULL);
    assert_non_null(lf_lie_ode_definition(f->rbs2)->skew);
    assert_null(lf_lie_ode_definition(f->rigid));
    assert_null(lf_lie_ode_definition(NULL));
}

/* ---------------------------------------------------------------- callback potentials */
/* U = -B . (R m) on one body: tau = m x (R^T B); along R exp(e hat e_k), d tau / de = m x (b x e_k), b = R^T B */
typedef struct {
    double B[3], m[3];
    int jac_calls;
} field_ctx;

static int field_eval(void *ctx, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    (void)err, (void)nb;
    const field_ctx *c = ctx;
    double Rm[3], b[3];
    lf_m3_apply(R, c->m, Rm);
    lf_m3_tapply(R, c->B, b);
    if (U) *U = -lf_v3_dot(c->B, Rm);
    if (tau) lf_v3_cross(c->m, b, tau);
    return LF_OK;
}

static int field_jac(void *ctx, int nb, const double *R, double *K, lf_error *err)
{
    (void)err, (void)nb;
    field_ctx *c = ctx;
    double b[3];
    lf_m3_tapply(R, c->B, b);
    c->jac_calls++;
    for (int k = 0; k < 3; k++) {
        double e[3] = {0, 0, 0}, bxe[3], col[3];
        e[k] = 1;
        lf_v3_cross(b, e, bxe);
        lf_v3_cross(c->m, bxe, col);
        for (int r = 0; r < 3; r++) K[3 * r + k] = col[r];
    }
    return LF_OK;
}

static int zero_eval(void *ctx, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    (void)ctx, (void)R, (void)err;
    if (U) *U = 0;
    if (tau) memset(tau, 0, 3 * (size_t)nb * sizeof(double));
    return LF_OK;
}

static int nan_jac(void *ctx, int nb, const double *R, double *K, lf_error *err)
{
    (void)ctx, (void)nb, (void)R, (void)err;
    for (int i = 0; i < 9; i++) K[i] = i == 4 ? NAN : 0;
    return LF_OK;
}

static void test_callback_potential(void **state)
{
    (void)state;
    field_ctx c = {{0.3, -0.4, 1.2}, {0.1, 0.2, 0.9}, 0};
    lf_potential *p = lf_potential_new("my_field", field_eval, &c, NULL, NULL);
    assert_ptr_equal(lf_potential_context(p, field_eval), &c);
    assert_null(lf_potential_context(p, zero_eval)); /* another kind of callback potential */
    lf_potential *stress = lf_potential_stress(0.3, NULL, NULL);
    assert_null(lf_potential_context(stress, field_eval));
    /* no Jacobian until the caller sets one */
    double R[9], K[9], Kfd[9];
    lf_error e;
    lf_so3_random(3, R, NULL);
    assert_false(lf_potential_has_jacobian(p));
    assert_int_equal(lf_potential_jacobian(p, 1, R, K, &e), LF_EINVAL);
    lf_potential_set_jacobian(p, field_jac);
    assert_true(lf_potential_has_jacobian(p));
    assert_int_equal(lf_potential_jacobian(p, 1, R, K, &e), LF_OK);
    for (int k = 0; k < 3; k++) { /* central differences of the torque along R exp(e hat e_k) */
        double x[3] = {0, 0, 0}, Rp[9], Rm[9], tp[3], tm[3];
        x[k] = 1e-6;
        lf_m3_copy(R, Rp);
        lf_so3_rmul_exp(Rp, x);
        x[k] = -1e-6;
        lf_m3_copy(R, Rm);
        lf_so3_rmul_exp(Rm, x);
        lf_potential_eval(p, 1, Rp, NULL, tp, NULL);
        lf_potential_eval(p, 1, Rm, NULL, tm, NULL);
        for (int r = 0; r < 3; r++) Kfd[3 * r + k] = (tp[r] - tm[r]) / 2e-6;
    }
    CHECK_LE(maxdiff(9, K, Kfd), 1e-9, "the Jacobian set by the caller vs central differences of its torque");
    /* an implicit rigid method uses it for Newton (counted), and agrees with differences of the torque */
    const double J[3] = {1, 2, 3};
    double y0[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0.4, -0.3, 0.8};
    lf_system *sys = lf_rigid_new(1, J, p, &e);
    lf_stepper_opts fd = {.jacobian = LF_JAC_FD};
    lf_stepper *a = new_stepper(lf_method_find("tln"), sys, y0, NULL),
               *b = new_stepper(lf_method_find("tln"), sys, y0, &fd);
    assert_int_equal(lf_stepper_step(a, 0.05, 50), LF_OK);
    assert_int_equal(lf_stepper_step(b, 0.05, 50), LF_OK);
    lf_stepper_stats sa, sb;
    lf_stepper_get_stats(a, &sa);
    lf_stepper_get_stats(b, &sb);
    printf("  tln, 50 steps: %d calls of the analytic Jacobian, jac_evals %ld (%ld Newton iterations); with "
           "differences: jac_evals %ld (%ld iterations)\n",
           c.jac_calls - 1, sa.jac_evals, sa.newton_iters, sb.jac_evals, sb.newton_iters);
    assert_true(c.jac_calls > 1 && sa.jac_evals >= c.jac_calls - 1);
    CHECK_LE(maxdiff(12, lf_stepper_state(a), lf_stepper_state(b)), 1e-12,
             "tln with the analytic vs a difference Jacobian");
    /* the Jacobian is checked finite */
    lf_potential_set_jacobian(p, nan_jac);
    assert_int_not_equal(lf_potential_jacobian(p, 1, R, K, &e), LF_OK);
    printf("  %s\n", e.msg);
    lf_stepper_free(a);
    lf_stepper_free(b);
    lf_system_free(sys);
    lf_potential_free(p);
    lf_potential_free(stress);
}

/* Regression: with an analytic torque Jacobian, every Jacobian Newton forms was counted twice in
 * lf_stepper_stats.jac_evals (by lf_stepper_torque_jacobian and by Newton): tln, 50 steps, 150
 * Jacobians gave jac_evals = 300. Now the count equals the torque Jacobians evaluated. */
static void test_jac_evals_counted_once(void **state)
{
    (void)state;
    field_ctx c = {{0.3, -0.4, 1.2}, {0.1, 0.2, 0.9}, 0};
    lf_potential *p = lf_potential_new("my_field", field_eval, &c, NULL, NULL);
    lf_potential_set_jacobian(p, field_jac);
    const double J[3] = {1, 2, 3};
    double y0[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0.4, -0.3, 0.8};
    lf_system *sys = lf_rigid_new(1, J, p, NULL);
    lf_stepper *a = new_stepper(lf_method_find("tln"), sys, y0, NULL);
    assert_int_equal(lf_stepper_step(a, 0.05, 50), LF_OK);
    lf_stepper_stats sa;
    lf_stepper_get_stats(a, &sa);
    lf_stepper_free(a);
    lf_system_free(sys);
    lf_potential_free(p);
    assert_int_equal(sa.jac_evals, c.jac_calls);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_form_records),
        cmocka_unit_test(test_fields_and_observables),
        cmocka_unit_test(test_energy_skew_and_states),
        cmocka_unit_test(test_has_energy_null),
        cmocka_unit_test(test_rigid_and_lie_ode_getters),
        cmocka_unit_test(test_callback_potential),
        cmocka_unit_test(test_jac_evals_counted_once),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
