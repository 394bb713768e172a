/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the rigid-body system kind (rigid.h). */
#include "model/rigid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/linalg.h"
#include "lie/so3.h"
#include "model/system_internal.h"

typedef struct {
    int nb;
    double *J;
    const lf_potential *pot;
    lf_form_rigid rigid;               /* the forms' records (system.h) */
    lf_form_second_order second_order;
} rigid_ctx;

static const lf_system_class rigid_class;

static const rigid_ctx *rigid(const lf_system *s)
{
    return (s && s->cls == &rigid_class) ? lf_system_ctx(s) : NULL;
}

int lf_rigid_nbodies(const lf_system *s) { return rigid(s) ? rigid(s)->nb : 0; }
const double *lf_rigid_inertia(const lf_system *s) { return rigid(s) ? rigid(s)->J : NULL; }
const lf_potential *lf_rigid_potential(const lf_system *s) { return rigid(s) ? rigid(s)->pot : NULL; }

int lf_rigid_potential_eval(const lf_system *s, const double *R, double *U, double *tau, lf_error *err)
{
    const rigid_ctx *c = rigid(s);
    if (!c || !R) return lf_error_set(err, LF_EINVAL, "lf_rigid_potential_eval: a rigid system and rotations are required");
    return lf_potential_eval(c->pot, c->nb, R, U, tau, err);
}

static double kinetic_energy(const lf_system *s, const double *w)
{
    const rigid_ctx *c = rigid(s);
    if (!c || !w) return NAN;
    double T = 0;
    for (int i = 0; i < 3 * c->nb; i++) T += 0.5 * c->J[i] * w[i] * w[i];
    return T;
}

int lf_rigid_energy(const lf_system *s, const double *R, const double *w, double *E, lf_error *err)
{
    if (!rigid(s) || !R || !w || !E)
        return lf_error_set(err, LF_EINVAL, "lf_rigid_energy: a rigid system, R, w and an output are required");
    double U;
    int rc = lf_rigid_potential_eval(s, R, &U, NULL, err);
    if (rc != LF_OK) return rc;
    *E = kinetic_energy(s, w) + U;
    return LF_OK;
}

void lf_rigid_spatial_momentum(const lf_system *s, const double *R, const double *w, double pi[3])
{
    const rigid_ctx *c = rigid(s);
    if (!pi) return;
    pi[0] = pi[1] = pi[2] = 0;
    if (!c || !R || !w) return;
    for (int i = 0; i < c->nb; i++) {
        double Pi[3], p[3];
        lf_v3_mul(c->J + 3 * i, w + 3 * i, Pi);
        lf_m3_apply(R + 9 * i, Pi, p);
        lf_v3_add(pi, p, pi);
    }
}

/* w_i' = J_i^{-1} (J_i w_i x w_i + tau_i), written to a[3 nb]; a may hold the torques on entry
 * (tau == a is allowed). */
static int accel(const lf_system *s, double t, const double *y, double *a, lf_error *err)
{
    (void)t; /* autonomous */
    const rigid_ctx *c = lf_system_ctx(s);
    const int nb = c->nb;
    const double *w = y + 9 * nb;
    int rc = lf_potential_eval(c->pot, nb, y, NULL, a, err);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < nb; i++) {
        const double *J = c->J + 3 * i, *wi = w + 3 * i;
        double P[3], g[3];
        lf_v3_mul(J, wi, P);
        lf_v3_cross(P, wi, g);
        lf_v3_add(g, a + 3 * i, g);
        lf_v3_div(g, J, a + 3 * i);
    }
    return LF_OK;
}

/* f(y) = (w_1..w_n, w_1'..w_n'), left-trivialized on SO(3)^n x (R^3)^n. */
static int rigid_f(const lf_system *s, double t, const double *y, double *xi, lf_error *err)
{
    const int nb = ((const rigid_ctx *)lf_system_ctx(s))->nb;
    memcpy(xi, y + 9 * nb, 3 * (size_t)nb * sizeof(double));
    return accel(s, t, y, xi + 3 * nb, err);
}

static int rigid_energy(const lf_system *s, const double *y, double *E, lf_error *err)
{
    return lf_rigid_energy(s, y, y + 9 * rigid(s)->nb, E, err);
}

/* The first-integral form: H = the energy, and its trivialized differential for the body-frame action
 * (R, w) <- (R exp(hat xi), w + eta): d/de U(R exp(e hat xi)) = -tau . xi and d/de 1/2 (w + e eta)^T J
 * (w + e eta) = J w . eta, so dH = (-tau_1..-tau_n, J_1 w_1..J_n w_n); <dH, f> = 0. No skew map of
 * its own: the discrete-gradient methods use the default one. */
static int rigid_dH(const lf_system *s, const double *y, double *g, lf_error *err)
{
    const rigid_ctx *c = lf_system_ctx(s);
    const int nb = c->nb;
    int rc = lf_potential_eval(c->pot, nb, y, NULL, g, err);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < 3 * nb; i++) {
        g[i] = -g[i];
        g[3 * nb + i] = c->J[i] * y[9 * nb + i];
    }
    return LF_OK;
}

/* energy | spatial momentum (3) | momentum (3 nb) | casimir | orthogonality */
static int rigid_observe(const lf_system *s, double t, const double *y, double *out, lf_error *err)
{
    (void)t;
    const rigid_ctx *c = lf_system_ctx(s);
    const int nb = c->nb;
    const double *R = y, *w = y + 9 * nb;
    int rc = lf_rigid_energy(s, R, w, out, err);
    if (rc != LF_OK) return rc;
    lf_rigid_spatial_momentum(s, R, w, out + 1);
    double *P = out + 4, worst = 0;
    for (int i = 0; i < 3 * nb; i++) P[i] = c->J[i] * w[i];
    out[4 + 3 * nb] = lf_v3_norm(P);
    for (int i = 0; i < nb; i++) worst = fmax(worst, lf_so3_orth_error(R + 9 * i));
    out[5 + 3 * nb] = worst;
    return LF_OK;
}

static void rigid_destroy(void *p)
{
    rigid_ctx *c = p;
    free(c->J);
    free(c);
}

/* Beyond the manifold: every body's kinetic energy 1/2 w.Jw must be finite (a finite w of 1e308
 * would make the energy, the momentum and every step overflow). */
static int rigid_check_state(const lf_system *s, const double *y, double tol, lf_error *err)
{
    (void)tol;
    const rigid_ctx *c = lf_system_ctx(s);
    const double *w = y + 9 * c->nb;
    for (int i = 0; i < c->nb; i++) {
        const double *J = c->J + 3 * i, *wi = w + 3 * i;
        const double T = 0.5 * (J[0] * wi[0] * wi[0] + J[1] * wi[1] * wi[1] + J[2] * wi[2] * wi[2]);
        if (!isfinite(T))
            return lf_error_set(err, LF_EINVAL, "omega of body %d = (%g, %g, %g): its kinetic energy 1/2 w.Jw overflows",
                                i + 1, wi[0], wi[1], wi[2]);
    }
    return LF_OK;
}

/* ---- the rigid form's record (system.h) */
static int form_torque(const lf_system *s, const double *R, double *tau, lf_error *err)
{
    const rigid_ctx *c = lf_system_ctx(s);
    return lf_potential_eval(c->pot, c->nb, R, NULL, tau, err);
}

static int form_torque_lanes(const lf_system *s, int B, const double *R, double *tau, lf_error *err)
{
    return lf_potential_torque_lanes(((const rigid_ctx *)lf_system_ctx(s))->pot, B, R, tau, err);
}

static int form_has_torque_jacobian(const lf_system *s)
{
    return lf_potential_has_jacobian(((const rigid_ctx *)lf_system_ctx(s))->pot);
}

static int form_torque_jacobian(const lf_system *s, const double *R, double *K, lf_error *err)
{
    const rigid_ctx *c = lf_system_ctx(s);
    return lf_potential_jacobian(c->pot, c->nb, R, K, err);
}

static const lf_system_class rigid_class = {
    .kind = "rigidbody",
    .check_state = rigid_check_state,
    .forms = LF_FORM_LIE_ODE | LF_FORM_FIRST_INTEGRAL, /* and rigid, second_order: the records */
    .f = rigid_f,
    .energy = rigid_energy,
    .observe = rigid_observe,
    .destroy = rigid_destroy,
    .first_integral = rigid_energy,
    .dH = rigid_dH,
};

lf_system *lf_rigid_new(int nb, const double *J, const lf_potential *pot, lf_error *err)
{
    if (nb < 1 || nb > 10000000) {
        lf_error_set(err, LF_EINVAL, "number of bodies must be in 1..10000000, got %d", nb);
        return NULL;
    }
    if (!J) {
        lf_error_set(err, LF_EINVAL, "lf_rigid_new: the inertias J are required");
        return NULL;
    }
    for (int i = 0; i < 3 * nb; i++)
        if (!isfinite(J[i]) || !(J[i] > 0)) {
            lf_error_set(err, LF_EINVAL, "inertia of body %d: moment %d = %g, expected a finite positive number",
                         i / 3 + 1, i % 3 + 1, J[i]);
            return NULL;
        }
    rigid_ctx *c = calloc(1, sizeof *c);
    double *Jc = malloc(3 * (size_t)nb * sizeof(double));
    lf_factor_kind *kinds = malloc(2 * (size_t)nb * sizeof *kinds);
    int *dims = malloc(2 * (size_t)nb * sizeof *dims);
    if (!c || !Jc || !kinds || !dims) {
        free(c); free(Jc); free(kinds); free(dims);
        lf_error_set(err, LF_ENOMEM, "rigid bodies: out of memory (%d bodies)", nb);
        return NULL;
    }
    memcpy(Jc, J, 3 * (size_t)nb * sizeof(double));
    *c = (rigid_ctx){.nb = nb, .J = Jc, .pot = pot};
    c->rigid = (lf_form_rigid){nb, Jc, pot ? lf_potential_name(pot) : NULL, form_torque, form_torque_lanes,
                               form_has_torque_jacobian, form_torque_jacobian};
    c->second_order = (lf_form_second_order){.nconfig = nb, .accel = accel};
    for (int i = 0; i < nb; i++) {
        kinds[i] = LF_SO3;
        kinds[nb + i] = LF_RM;
        dims[i] = 0;
        dims[nb + i] = 3;
    }
    lf_manifold *M = lf_manifold_new(2 * nb, kinds, dims, LF_LEFT_TRIVIALIZED, err);
    free(kinds);
    free(dims);
    if (!M) {
        rigid_destroy(c);
        return NULL;
    }
    lf_system *s = lf_system_create(&rigid_class, c, M, NULL, err);
    if (!s) return NULL;
    s->rigid = &c->rigid; /* c is the system's ctx from here */
    s->second_order = &c->second_order;
    lf_system_add_field(s, "R", 0, nb, 1, 0);
    lf_system_add_field(s, "omega", nb, nb, 1, 1);
    lf_system_add_observable(s, "energy", LF_OBS_SCALAR, 1, "energy");
    lf_system_add_observable(s, "spatial_momentum", LF_OBS_VEC3, 3, "pi1,pi2,pi3");
    lf_system_add_observable(s, "momentum", LF_OBS_VEC3_EACH, 3 * nb, "Pi1,Pi2,Pi3");
    lf_system_add_observable(s, "casimir", LF_OBS_SCALAR, 1, "casimir");
    lf_system_add_observable(s, "orthogonality", LF_OBS_SCALAR, 1, "orthogonality");
    return s;
}
