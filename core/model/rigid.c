/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the rigid-body system kind (rigid.h): bodies that rotate, and bodies that also translate. */
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
    double *mass; /* translating bodies: nb masses; NULL: bodies that only rotate */
    const lf_potential *pot;
    const lf_forcing *forcing; /* NULL: none (lf_rigid_set_forcing) */
    lf_form_rigid rigid;       /* the forms' records (system.h) */
    lf_form_second_order second_order;
} rigid_ctx;

static const lf_system_class rigid_class;

static const rigid_ctx *rigid(const lf_system *s)
{
    return (s && s->cls == &rigid_class) ? lf_system_ctx(s) : NULL;
}

/* The forcing's torques tau and forces F (translating bodies) at (t, R, w, x, v). */
static int forcing_at(const rigid_ctx *c, double t, const double *R, const double *w, const double *x, const double *v,
                      double *tau, double *F, lf_error *err)
{
    const lf_bodies_motion m = {{c->nb, c->mass, c->J, c->mass ? x : NULL, R}, w, c->mass ? v : NULL, t};
    return lf_forcing_eval(c->forcing, &m, tau, F, err);
}

int lf_rigid_nbodies(const lf_system *s) { return rigid(s) ? rigid(s)->nb : 0; }
const double *lf_rigid_inertia(const lf_system *s) { return rigid(s) ? rigid(s)->J : NULL; }
const double *lf_rigid_masses(const lf_system *s) { return rigid(s) ? rigid(s)->mass : NULL; }
const lf_potential *lf_rigid_potential(const lf_system *s) { return rigid(s) ? rigid(s)->pot : NULL; }

/* U, forces (translating bodies, F != NULL) and torques at the state's configuration: R, and x */
static int eval_at(const rigid_ctx *c, const double *R, const double *x, double *U, double *F, double *tau,
                   lf_error *err)
{
    if (!c->mass) return lf_potential_eval(c->pot, c->nb, R, U, tau, err);
    const lf_bodies_config cf = {c->nb, c->mass, c->J, x, R};
    return lf_potential_eval_x(c->pot, &cf, U, F, tau, err);
}

int lf_rigid_potential_eval(const lf_system *s, const double *R, double *U, double *tau, lf_error *err)
{
    const rigid_ctx *c = rigid(s);
    if (!c || !R) return lf_error_set(err, LF_EINVAL, "lf_rigid_potential_eval: a rigid system and rotations are required");
    if (c->mass)
        return lf_error_set(err, LF_EINVAL,
                            "lf_rigid_potential_eval: the bodies translate: use lf_rigid_potential_eval_x");
    return lf_potential_eval(c->pot, c->nb, R, U, tau, err);
}

int lf_rigid_potential_eval_x(const lf_system *s, const double *x, const double *R, double *U, double *F, double *tau,
                              lf_error *err)
{
    const rigid_ctx *c = rigid(s);
    if (!c || !R || (c->mass && !x))
        return lf_error_set(err, LF_EINVAL,
                            "lf_rigid_potential_eval_x: a rigid system, positions and rotations are "
                            "required");
    if (F && !c->mass) memset(F, 0, 3 * (size_t)c->nb * sizeof(double));
    return eval_at(c, R, x, U, F, tau, err);
}

/* sum_i 1/2 w_i^T J_i w_i, and with translation sum_i 1/2 m_i |v_i|^2 */
static double rotational_energy(const rigid_ctx *c, const double *w)
{
    double T = 0;
    for (int i = 0; i < 3 * c->nb; i++) T += 0.5 * c->J[i] * w[i] * w[i];
    return T;
}

static double translational_energy(const rigid_ctx *c, const double *v)
{
    double T = 0;
    for (int i = 0; c->mass && i < c->nb; i++) T += 0.5 * c->mass[i] * lf_v3_dot(v + 3 * i, v + 3 * i);
    return T;
}

/* the energy of a whole state y = (R, w[, x, v]) */
static int state_energy(const rigid_ctx *c, const double *y, double *E, lf_error *err)
{
    const int nb = c->nb;
    double U;
    int rc = eval_at(c, y, y + 12 * nb, &U, NULL, NULL, err);
    if (rc != LF_OK) return rc;
    *E = rotational_energy(c, y + 9 * nb) + U;
    if (c->mass) *E += translational_energy(c, y + 15 * nb);
    return LF_OK;
}

int lf_rigid_energy(const lf_system *s, const double *R, const double *w, double *E, lf_error *err)
{
    const rigid_ctx *c = rigid(s);
    if (!c || !R || !w || !E)
        return lf_error_set(err, LF_EINVAL, "lf_rigid_energy: a rigid system, R, w and an output are required");
    if (c->mass)
        return lf_error_set(err, LF_EINVAL,
                            "lf_rigid_energy: the bodies translate (the state has x and v too): use "
                            "lf_system_energy");
    double U;
    int rc = lf_potential_eval(c->pot, c->nb, R, &U, NULL, err);
    if (rc != LF_OK) return rc;
    *E = rotational_energy(c, w) + U;
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

/* w_i' = J_i^{-1} (J_i w_i x w_i + tau_i), in place over the torques in a[3 nb] */
static void euler_accel(const rigid_ctx *c, const double *w, double *a)
{
    for (int i = 0; i < c->nb; i++) {
        const double *J = c->J + 3 * i, *wi = w + 3 * i;
        double P[3], g[3];
        lf_v3_mul(J, wi, P);
        lf_v3_cross(P, wi, g);
        lf_v3_add(g, a + 3 * i, g);
        lf_v3_div(g, J, a + 3 * i);
    }
}

/* tau += the forcing's torques, F += its forces (F NULL: bodies that only rotate) at (t, y) */
static int add_forcing(const rigid_ctx *c, double t, const double *y, double *tau, double *F, lf_error *err)
{
    const int nb = c->nb;
    double small[6 * 16], *q = nb <= 16 ? small : malloc(6 * (size_t)nb * sizeof *q);
    if (!q) return lf_error_set(err, LF_ENOMEM, "forcing: out of memory (%d bodies)", nb);
    int rc = forcing_at(c, t, y, y + 9 * nb, y + 12 * nb, y + 15 * nb, q, q + 3 * nb, err);
    for (int i = 0; rc == LF_OK && i < 3 * nb; i++) {
        tau[i] += q[i];
        if (F) F[i] += q[3 * nb + i];
    }
    if (q != small) free(q);
    return rc;
}

/* The second-order form's acceleration (bodies that only rotate): w' written to a[3 nb]. */
static int accel(const lf_system *s, double t, const double *y, double *a, lf_error *err)
{
    const rigid_ctx *c = lf_system_ctx(s);
    int rc = lf_potential_eval(c->pot, c->nb, y, NULL, a, err);
    if (rc == LF_OK && c->forcing) rc = add_forcing(c, t, y, a, NULL, err);
    if (rc == LF_OK) euler_accel(c, y + 9 * c->nb, a);
    return rc;
}

/* f(y) = (w_1..w_n, w_1'..w_n'), left-trivialized on SO(3)^n x (R^3)^n; translating bodies add
 * (v_1..v_n, F_1/m_1..F_n/m_n) on (R^3)^n x (R^3)^n (the actions of r3 factors are additive). */
static int rigid_f(const lf_system *s, double t, const double *y, double *xi, lf_error *err)
{
    const rigid_ctx *c = lf_system_ctx(s);
    const int nb = c->nb;
    memcpy(xi, y + 9 * nb, 3 * (size_t)nb * sizeof(double));
    const double *x = y + 12 * nb, *v = y + 15 * nb;
    double *F = xi + 9 * nb;
    int rc = eval_at(c, y, x, NULL, c->mass ? F : NULL, xi + 3 * nb, err);
    if (rc != LF_OK) return rc;
    if (c->forcing && (rc = add_forcing(c, t, y, xi + 3 * nb, c->mass ? F : NULL, err)) != LF_OK) return rc;
    euler_accel(c, y + 9 * nb, xi + 3 * nb);
    if (c->mass) {
        memcpy(xi + 6 * nb, v, 3 * (size_t)nb * sizeof(double));
        for (int i = 0; i < 3 * nb; i++) F[i] /= c->mass[i / 3];
    }
    return LF_OK;
}

static int rigid_energy(const lf_system *s, const double *y, double *E, lf_error *err)
{
    return state_energy(lf_system_ctx(s), y, E, err);
}

/* The first-integral form: H = the energy, and its trivialized differential for the body-frame action
 * (R, w) <- (R exp(hat xi), w + eta): d/de U(R exp(e hat xi)) = -tau . xi and d/de 1/2 (w + e eta)^T J
 * (w + e eta) = J w . eta, so dH = (-tau_1..-tau_n, J_1 w_1..J_n w_n); translating bodies add
 * (-F_1..-F_n, m_1 v_1..m_n v_n) for (x, v) <- (x + a, v + b). <dH, f> = 0. No skew map of its own:
 * the discrete-gradient methods use the default one. */
static int rigid_dH(const lf_system *s, const double *y, double *g, lf_error *err)
{
    const rigid_ctx *c = lf_system_ctx(s);
    const int nb = c->nb;
    int rc = eval_at(c, y, y + 12 * nb, NULL, c->mass ? g + 6 * nb : NULL, g, err);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < 3 * nb; i++) {
        g[i] = -g[i];
        g[3 * nb + i] = c->J[i] * y[9 * nb + i];
    }
    for (int i = 0; c->mass && i < 3 * nb; i++) {
        g[6 * nb + i] = -g[6 * nb + i];
        g[9 * nb + i] = c->mass[i / 3] * y[15 * nb + i];
    }
    return LF_OK;
}

/* Translating bodies: total linear momentum P = sum m v and angular momentum about the origin
 * L = sum (x x m v + R J w). */
static void momenta(const lf_system *s, const double *y, double *P, double *L)
{
    const rigid_ctx *c = lf_system_ctx(s);
    const int nb = c->nb;
    const double *x = y + 12 * nb, *v = y + 15 * nb;
    lf_rigid_spatial_momentum(s, y, y + 9 * nb, L);
    lf_v3_set(P, 0, 0, 0);
    for (int i = 0; i < nb; i++) {
        double p[3], l[3];
        lf_v3_scale(v + 3 * i, c->mass[i], p);
        lf_v3_add(P, p, P);
        lf_v3_cross(x + 3 * i, p, l);
        lf_v3_add(L, l, L);
    }
}

/* energy | spatial momentum (3) | momentum (3 nb) | casimir | orthogonality; translating bodies add
 * linear momentum (3) | angular momentum (3) | kinetic energy of translation | of rotation (x and v
 * are fields: lf.run's record = {"x", "v"} makes them columns) */
static int rigid_observe(const lf_system *s, double t, const double *y, double *out, lf_error *err)
{
    (void)t;
    const rigid_ctx *c = lf_system_ctx(s);
    const int nb = c->nb;
    const double *R = y, *w = y + 9 * nb;
    int rc = state_energy(c, y, out, err);
    if (rc != LF_OK) return rc;
    lf_rigid_spatial_momentum(s, R, w, out + 1);
    double *P = out + 4, worst = 0;
    for (int i = 0; i < 3 * nb; i++) P[i] = c->J[i] * w[i];
    out[4 + 3 * nb] = lf_v3_norm(P);
    for (int i = 0; i < nb; i++) worst = fmax(worst, lf_so3_orth_error(R + 9 * i));
    out[5 + 3 * nb] = worst;
    if (c->mass) {
        double *o = out + 6 + 3 * nb;
        momenta(s, y, o, o + 3);
        o[6] = translational_energy(c, y + 15 * nb);
        o[7] = rotational_energy(c, w);
    }
    return LF_OK;
}

static void rigid_destroy(void *p)
{
    rigid_ctx *c = p;
    free(c->J);
    free(c->mass);
    free(c);
}

/* Beyond the manifold: every body's kinetic energies 1/2 w.Jw and 1/2 m |v|^2 must be finite (a finite
 * w of 1e308 would make the energy, the momentum and every step overflow), and for bodies that
 * translate the total angular momentum about the origin (x of 1e308 makes x x m v overflow). */
static int rigid_check_state(const lf_system *s, const double *y, double tol, lf_error *err)
{
    (void)tol;
    const rigid_ctx *c = lf_system_ctx(s);
    const int nb = c->nb;
    const double *w = y + 9 * nb;
    for (int i = 0; i < nb; i++) {
        const double *J = c->J + 3 * i, *wi = w + 3 * i;
        const double T = 0.5 * (J[0] * wi[0] * wi[0] + J[1] * wi[1] * wi[1] + J[2] * wi[2] * wi[2]);
        if (!isfinite(T))
            return lf_error_set(err, LF_EINVAL, "omega of body %d = (%g, %g, %g): its kinetic energy 1/2 w.Jw overflows",
                                i + 1, wi[0], wi[1], wi[2]);
        if (!c->mass) continue;
        const double *vi = y + 15 * nb + 3 * i;
        if (!isfinite(0.5 * c->mass[i] * lf_v3_dot(vi, vi)))
            return lf_error_set(err, LF_EINVAL, "v of body %d = (%g, %g, %g): its kinetic energy 1/2 m |v|^2 overflows",
                                i + 1, vi[0], vi[1], vi[2]);
    }
    double P[3], L[3];
    if (c->mass && (momenta(s, y, P, L), !lf_v3_isfinite(L)))
        return lf_error_set(err, LF_EINVAL,
                            "the total angular momentum x x m v + R J w overflows (L = (%g, %g, %g)): "
                            "the bodies are too far from the origin for their speeds",
                            L[0], L[1], L[2]);
    return LF_OK;
}

/* ---- the rigid form's record (system.h) */
static int form_torque(const lf_system *s, const double *R, const double *x, double *tau, double *F, lf_error *err)
{
    return eval_at(lf_system_ctx(s), R, x, NULL, F, tau, err);
}

static int form_torque_lanes(const lf_system *s, int B, const double *R, const double *x, double *tau, double *F,
                             lf_error *err)
{
    const rigid_ctx *c = lf_system_ctx(s);
    if (!c->mass) return lf_potential_torque_lanes(c->pot, B, R, tau, err);
    return lf_potential_eval_x_lanes(c->pot, B, c->mass[0], c->J, x, R, tau, F, err);
}

static int form_forcing(const lf_system *s, double t, const double *R, const double *w, const double *x,
                        const double *v, double *tau, double *F, lf_error *err)
{
    return forcing_at(lf_system_ctx(s), t, R, w, x, v, tau, F, err);
}

static int form_forcing_jacobian(const lf_system *s, double t, const double *R, const double *w, const double *x,
                                 const double *v, double *D, lf_error *err)
{
    const rigid_ctx *c = lf_system_ctx(s);
    const lf_bodies_motion m = {{c->nb, c->mass, c->J, c->mass ? x : NULL, R}, w, c->mass ? v : NULL, t};
    return lf_forcing_jacobian(c->forcing, &m, D, err);
}

static int form_forcing_diagonal(const lf_system *s, double t, const double *R, const double *w, const double *x,
                                 const double *v, double *d, lf_error *err)
{
    const rigid_ctx *c = lf_system_ctx(s);
    const lf_bodies_motion m = {{c->nb, c->mass, c->J, c->mass ? x : NULL, R}, w, c->mass ? v : NULL, t};
    return lf_forcing_diagonal(c->forcing, &m, d, err);
}

int lf_rigid_set_forcing(lf_system *s, const lf_forcing *f, lf_error *err)
{
    rigid_ctx *c = (rigid_ctx *)rigid(s);
    if (!c) return lf_error_set(err, LF_EINVAL, "lf_rigid_set_forcing: a rigid system is required");
    c->forcing = f;
    /* a forced system has no first integral (the discrete-gradient methods refuse it) */
    if (f) s->forms &= ~LF_FORM_FIRST_INTEGRAL;
    else s->forms |= LF_FORM_FIRST_INTEGRAL;
    c->rigid.forcing_name = f ? lf_forcing_name(f) : NULL;
    c->rigid.forcing_depends = f ? lf_forcing_depends(f) : 0;
    c->rigid.forcing = f ? form_forcing : NULL;
    c->rigid.forcing_jacobian = f && lf_forcing_has_jacobian(f) ? form_forcing_jacobian : NULL;
    c->rigid.forcing_diagonal = f && (lf_forcing_depends(f) & LF_FORCING_DIAGONAL) ? form_forcing_diagonal : NULL;
    return LF_OK;
}

const lf_forcing *lf_rigid_forcing(const lf_system *s) { return rigid(s) ? rigid(s)->forcing : NULL; }

static int form_has_torque_jacobian(const lf_system *s)
{
    return lf_potential_has_jacobian(((const rigid_ctx *)lf_system_ctx(s))->pot);
}

static int form_torque_jacobian(const lf_system *s, const double *R, const double *x, double *K, lf_error *err)
{
    const rigid_ctx *c = lf_system_ctx(s);
    if (!c->mass) return lf_potential_jacobian(c->pot, c->nb, R, K, err);
    const lf_bodies_config cf = {c->nb, c->mass, c->J, x, R};
    return lf_potential_jacobian_x(c->pot, &cf, K, err);
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

/* the checks of lf_rigid_new_translating's arguments: NULL, or the system's context */
static rigid_ctx *new_ctx(int nb, const double *J, const double *mass, const lf_potential *pot, lf_error *err)
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
    for (int i = 0; mass && i < nb; i++)
        if (!isfinite(mass[i]) || !(mass[i] > 0)) {
            lf_error_set(err, LF_EINVAL, "mass of body %d = %g, expected a finite positive number", i + 1, mass[i]);
            return NULL;
        }
    if (!mass && lf_potential_of_positions(pot)) {
        lf_error_set(err, LF_EINVAL,
                     "the potential %s depends on the bodies' positions: give the bodies a mass "
                     "(bodies without one only rotate)",
                     lf_potential_name(pot));
        return NULL;
    }
    rigid_ctx *c = calloc(1, sizeof *c);
    double *Jc = malloc(3 * (size_t)nb * sizeof(double)), *mc = mass ? malloc((size_t)nb * sizeof(double)) : NULL;
    if (!c || !Jc || (mass && !mc)) {
        free(c), free(Jc), free(mc);
        lf_error_set(err, LF_ENOMEM, "rigid bodies: out of memory (%d bodies)", nb);
        return NULL;
    }
    memcpy(Jc, J, 3 * (size_t)nb * sizeof(double));
    if (mass) memcpy(mc, mass, (size_t)nb * sizeof(double));
    *c = (rigid_ctx){.nb = nb, .J = Jc, .mass = mc, .pot = pot};
    c->rigid = (lf_form_rigid){.nb = nb,
                               .J = Jc,
                               .potential = pot ? lf_potential_name(pot) : NULL,
                               .translating = mass != NULL,
                               .mass = mc,
                               .torque = form_torque,
                               .torque_lanes = form_torque_lanes,
                               .has_torque_jacobian = form_has_torque_jacobian,
                               .torque_jacobian = form_torque_jacobian};
    c->second_order = (lf_form_second_order){.nconfig = nb, .accel = accel};
    return c;
}

/* The manifold SO(3)^nb x (R^3)^nb, and with translation x (R^3)^nb x (R^3)^nb. */
static lf_manifold *rigid_manifold(int nb, int translating, lf_error *err)
{
    const int nf = (translating ? 4 : 2) * nb;
    lf_factor_kind *kinds = malloc((size_t)nf * sizeof *kinds);
    int *dims = malloc((size_t)nf * sizeof *dims);
    if (!kinds || !dims) {
        free(kinds), free(dims);
        lf_error_set(err, LF_ENOMEM, "rigid bodies: out of memory (%d bodies)", nb);
        return NULL;
    }
    for (int i = 0; i < nf; i++) {
        kinds[i] = i < nb ? LF_SO3 : LF_RM;
        dims[i] = i < nb ? 0 : 3;
    }
    lf_manifold *M = lf_manifold_new(nf, kinds, dims, LF_LEFT_TRIVIALIZED, err);
    free(kinds);
    free(dims);
    return M;
}

lf_system *lf_rigid_new_translating(int nb, const double *J, const double *mass, const lf_potential *pot, lf_error *err)
{
    rigid_ctx *c = new_ctx(nb, J, mass, pot, err);
    if (!c) return NULL;
    lf_manifold *M = rigid_manifold(nb, mass != NULL, err);
    if (!M) {
        rigid_destroy(c);
        return NULL;
    }
    lf_system *s = lf_system_create(&rigid_class, c, M, NULL, err);
    if (!s) return NULL;
    s->rigid = &c->rigid; /* c is the system's ctx from here */
    s->second_order = mass ? NULL : &c->second_order; /* (R, w) only: the layout of that form */
    lf_system_add_field(s, "R", 0, nb, 1, 0);
    lf_system_add_field(s, "omega", nb, nb, 1, 1);
    if (mass) {
        lf_system_add_field(s, "x", 2 * nb, nb, 1, 1);
        lf_system_add_field(s, "v", 3 * nb, nb, 1, 1);
    }
    lf_system_add_observable(s, "energy", LF_OBS_SCALAR, 1, "energy");
    lf_system_add_observable(s, "spatial_momentum", LF_OBS_VEC3, 3, "pi1,pi2,pi3");
    lf_system_add_observable(s, "momentum", LF_OBS_VEC3_EACH, 3 * nb, "Pi1,Pi2,Pi3");
    lf_system_add_observable(s, "casimir", LF_OBS_SCALAR, 1, "casimir");
    lf_system_add_observable(s, "orthogonality", LF_OBS_SCALAR, 1, "orthogonality");
    if (mass) {
        lf_system_add_observable(s, "linear_momentum", LF_OBS_VEC3, 3, "P1,P2,P3");
        lf_system_add_observable(s, "angular_momentum", LF_OBS_VEC3, 3, "L1,L2,L3");
        lf_system_add_observable(s, "kinetic_translation", LF_OBS_SCALAR, 1, "kinetic_translation");
        lf_system_add_observable(s, "kinetic_rotation", LF_OBS_SCALAR, 1, "kinetic_rotation");
    }
    return s;
}

lf_system *lf_rigid_new(int nb, const double *J, const lf_potential *pot, lf_error *err)
{
    return lf_rigid_new_translating(nb, J, NULL, pot, err);
}
