/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — explicit splitting methods for rigid bodies: H = U(R) + T(Pi), T = sum_k Pi_k^2 / (2 J_k).
 * Each part has an exact flow (the sub-step is tau):
 *   kick       R fixed, Pi <- Pi + tau tau_body(R)            (the torque of U, potential.h)
 *   R_k        the flow of T_k = Pi_k^2/(2 J_k): the rotation about body axis k by theta = tau Pi_k/J_k,
 *              R <- R exp(theta e_k^), Pi <- exp(-theta e_k^) Pi   (Pi' = Pi x w, w = theta/tau e_k)
 *   free flow  the exact torque-free motion (exact.h, Celledoni, Fasso, Safstrom & Zanna 2008)
 *
 *   dlm          Dullweber, Leimkuhler & McLachlan, "Symplectic splitting methods for rigid body
 *                molecular dynamics", J. Chem. Phys. 107 (1997) 5840: kick(h/2) R1(h/2) R2(h/2) R3(h)
 *                R2(h/2) R1(h/2) kick(h/2), on (R, Pi).
 *   no_squish    Miller, Eleftheriou, Pattnaik, Ndirango, Newns & Heyes, "Symplectic quaternion scheme
 *                for biophysical molecular dynamics", J. Chem. Phys. 116 (2002) 8649: the same kind of
 *                splitting in quaternion variables q and the conjugate momentum p = 2 S(q) (0, Pi)
 *                (S(q) v = q v, Hamilton product), free rotor split as R3(h/2) R2(h/2) R1(h) R2(h/2)
 *                R3(h/2) (the order of the paper and of its implementations), each an exact rotation
 *                in the plane of (q, P_k q):  zeta = p . P_k q / (4 J_k),
 *                    q <- cos(zeta tau) q + sin(zeta tau) P_k q,   p <- cos(zeta tau) p + sin(zeta tau) P_k p,
 *                P_k q = q e_k (right multiplication by the unit quaternion e_k: a body-frame rotation).
 *                The kick is p <- p + 2 tau S(q) (0, tau_body). Since p . P_k q = 2 Pi_k, the rotation
 *                angle 2 zeta tau equals dlm's tau Pi_k / J_k: NO_SQUISH is DLM's splitting written for
 *                the quaternion (the axes in the opposite order); tests/lua/compose_spec.lua checks
 *                both against Lua implementations of the formulas above.
 *   split_exact  kick(h/2), exact free flow(h), kick(h/2): the Strang splitting of Celledoni, Fasso,
 *                Safstrom & Zanna, SIAM J. Sci. Comput. 30 (2008) 2084 (there with the flow of their
 *                quaternion formulation; here lf_exact_free_body_flow). Exact for the free body.
 *                The free flow and split_exact's step are in free_flow.c (lf_free_flow: the closed
 *                form of axisymmetric bodies, about 6x cheaper than the general evaluation, and the
 *                triaxial one; the bodies' symmetry axes found once per stepper).
 * Every part is a Hamiltonian flow, so every composition of them is symplectic on T*SO(3) and
 * conserves the spatial momentum R Pi of a free body (each rotation R exp(theta e^) with
 * Pi exp(-theta e^) keeps R Pi); the palindromic sequences are symmetric. All three are measured
 * in tests/c (test_methods, test_symplectic): order 2, symmetric, defect at noise level.
 *
 * Round-off: the axis rotations update R as R + R (E - I) with E - I built from sin(theta/2)
 * (cos theta - 1 = -2 sin^2(theta/2)), as lf_so3_rmul_exp does; so do NO_SQUISH's rotations of
 * (q, p). NO_SQUISH integrates (q, p): it keeps them in the stepper's cache (rolled back with the
 * state; computed from (R, w) after set_state) and sets R = R(q/|q|), w = Pi(q, p)/J after each
 * step, so its R is orthogonal to round-off whatever the run length. */
#include <math.h>
#include <string.h>

#include "solve/exact.h"
#include "base/linalg.h"
#include "lie/quat.h"
#include "lie/so3.h"
#include "method/splitting_internal.h"

/* ---------------------------------------------------------------- the parts */
/* the other two axes (i, j) of axis k, cyclic: exp(theta e_k^) e_i = c e_i + s e_j */
static const int axis_i[3] = {1, 2, 0}, axis_j[3] = {2, 0, 1};

/* R <- R exp(theta e_k^), Pi <- exp(-theta e_k^) Pi (Pi may be NULL) */
static void rotate_axis(double *R, double *Pi, int k, double theta)
{
    const double a = sin(0.5 * theta), b = cos(0.5 * theta), s = 2 * a * b, cm1 = -2 * a * a;
    const int i = axis_i[k], j = axis_j[k];
    for (int r = 0; r < 3; r++) {
        const double x = R[3 * r + i], y = R[3 * r + j];
        R[3 * r + i] = x + (cm1 * x + s * y);
        R[3 * r + j] = y + (cm1 * y - s * x);
    }
    if (Pi) {
        const double x = Pi[i], y = Pi[j];
        Pi[i] = x + (cm1 * x + s * y);
        Pi[j] = y + (cm1 * y - s * x);
    }
}

/* P_k q = q e_k (Hamilton product with the unit quaternion e_1 = i, e_2 = j, e_3 = k), k = 0, 1, 2 */
static void pmul(int k, const double *q, double *r)
{
    switch (k) {
    case 0: r[0] = -q[1]; r[1] = q[0]; r[2] = q[3]; r[3] = -q[2]; break;
    case 1: r[0] = -q[2]; r[1] = -q[3]; r[2] = q[0]; r[3] = q[1]; break;
    default: r[0] = -q[3]; r[1] = q[2]; r[2] = -q[1]; r[3] = q[0]; break;
    }
}

/* p <- p + 2 a S(q) (0, v) = p + 2 a sum_k v_k P_k q */
static void add_conj(double *p, const double *q, const double *v, double a)
{
    for (int k = 0; k < 3; k++) {
        double r[4];
        pmul(k, q, r);
        for (int l = 0; l < 4; l++) p[l] += 2 * a * v[k] * r[l];
    }
}

/* NO_SQUISH free rotation about body axis k for a sub-step tau (Miller et al. 2002) */
static void ns_rotate(double *q, double *p, int k, double Jk, double tau)
{
    double Pq[4], Pp[4];
    pmul(k, q, Pq);
    pmul(k, p, Pp);
    const double zeta = (p[0] * Pq[0] + p[1] * Pq[1] + p[2] * Pq[2] + p[3] * Pq[3]) / (4 * Jk);
    /* as an increment: cos - 1 = -2 sin^2(phi/2), so the rounding is O(eps phi), not O(eps) */
    const double a = sin(0.5 * zeta * tau), b = cos(0.5 * zeta * tau), s = 2 * a * b, cm1 = -2 * a * a;
    for (int l = 0; l < 4; l++) {
        q[l] += cm1 * q[l] + s * Pq[l];
        p[l] += cm1 * p[l] + s * Pp[l];
    }
}

/* Pi_k = p . P_k q / (2 |q|^2), the body momentum of NO_SQUISH's (q, p) */
static void quat_momentum(const double *q, const double *p, double *Pi)
{
    const double qq = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    for (int k = 0; k < 3; k++) {
        double r[4];
        pmul(k, q, r);
        Pi[k] = (p[0] * r[0] + p[1] * r[1] + p[2] * r[2] + p[3] * r[3]) / (2 * qq);
    }
}

/* ---------------------------------------------------------------- the runner */
/* R_b = R(q_b) (lf_quat_to_matrix normalizes). The rotations keep |q| = 1 to a random walk of
 * O(eps phi) roundings; (q, p) is rescaled (p = 2 S(q)(0, Pi) scales with q) only once |q|^2 is
 * 1e-12 away from 1: rescaling every step adds roundings that measurably accumulate (on the slow
 * top, T = 5, h = 2^-14: 8.1e-11 instead of 1.3e-12) */
static void quat_to_R(double *q, double *p, double *R, int nb)
{
    for (int b = 0; b < nb; b++) {
        double *qb = q + 4 * b, *pb = p + 4 * b;
        const double n2 = qb[0] * qb[0] + qb[1] * qb[1] + qb[2] * qb[2] + qb[3] * qb[3];
        if (fabs(n2 - 1) > 1e-12) {
            const double n = sqrt(n2);
            for (int k = 0; k < 4; k++) {
                qb[k] /= n;
                pb[k] /= n;
            }
        }
        lf_quat_to_matrix(qb, R + 9 * b);
    }
}

typedef struct {
    lf_stepper *s;
    int quat;
    double *Pi, *q, *p, *tbuf, *Pi0;
    const double *fc;   /* the free flow's body constants */
    const double *tau;  /* torque at the current R, valid if tau_ok */
    const double *F;    /* translating bodies: the forces of the same evaluation */
    int tau_ok;
    int R_fresh;        /* quaternion variables: R = R(q) is up to date */
    int kind;           /* the pending (not yet applied) part, -1: none */
    int drift;          /* the part that moves the centres of mass (lf_split_method.drift) */
    double sub;         /* its accumulated sub-step */
    double t;           /* the time: it runs with the drift (a forcing's kicks are at it) */
} runner;

/* the runner's 14 nb doubles, the free flow's body constants (lf_split_consts), Pi0 (a forcing) */
size_t lf_split_work(const lf_stepper *s) { return 19 * (size_t)s->nb + 1; }

/* The forcing's share of a kick, E(c) (implicit = 0) or I(c), on Pi; NO_SQUISH's conjugate momentum
 * follows the change of Pi (p = 2 S(q)(0, Pi) is linear in Pi), which is 0 for a forcing of 0. */
static int forcing_share(runner *u, double c, int implicit)
{
    lf_stepper *s = u->s;
    const int nb = s->nb;
    double *Pi = u->Pi;
    for (int b = 0; u->quat && b < nb; b++) quat_momentum(u->q + 4 * b, u->p + 4 * b, Pi + 3 * b);
    if (u->quat) memcpy(u->Pi0, Pi, 3 * (size_t)nb * sizeof *Pi);
    int rc = implicit ? lf_forced_implicit(s, u->t, c, Pi, 1) : lf_forced_explicit(s, u->t, c, Pi, 1);
    for (int b = 0; rc == LF_OK && u->quat && b < nb; b++) {
        double d[3];
        lf_v3_sub(Pi + 3 * b, u->Pi0 + 3 * b, d);
        add_conj(u->p + 4 * b, u->q + 4 * b, d, 1);
    }
    return rc;
}

/* the potential's kick over c: Pi (or NO_SQUISH's p) and v */
static void potential_kick(runner *u, double c)
{
    lf_stepper *s = u->s;
    for (int b = 0; b < s->nb; b++) {
        if (u->quat) add_conj(u->p + 4 * b, u->q + 4 * b, u->tau + 3 * b, c);
        else lf_v3_axpy(u->Pi + 3 * b, c, u->tau + 3 * b, u->Pi + 3 * b);
    }
    lf_translate_kick(s, c, u->F);
}

/* A kick over c with a forcing (forced_kick.c): E(c/2), the potential's kick, I(c/2) for a forcing of
 * the velocities (the trapezoidal rule: symmetric, as E(-c) inverts I(c)), else the potential's kick and
 * E(c). */
static int forced_kick(runner *u, double c)
{
    if (!u->quat) return lf_forced_trapezoid(u->s, u->t, c, u->Pi, u->tau, u->F);
    const int vel = lf_forced_velocity(u->s);
    int rc = vel ? forcing_share(u, 0.5 * c, 0) : LF_OK;
    if (rc != LF_OK) return rc;
    potential_kick(u, c);
    return vel ? forcing_share(u, 0.5 * c, 1) : forcing_share(u, c, 0);
}

static int apply(runner *u)
{
    lf_stepper *s = u->s;
    const int nb = s->nb, kind = u->kind;
    const double tau = u->sub;
    if (kind < 0) return LF_OK;
    if (kind == LF_SPLIT_KICK) {
        if (!u->tau_ok) {
            if (u->quat && !u->R_fresh) {
                quat_to_R(u->q, u->p, s->R, nb);
                u->R_fresh = 1;
            }
            int rc = lf_stepper_torque(s, s->R, u->tbuf);
            if (rc != LF_OK) return rc;
            u->tau = u->tbuf;
            u->F = s->force_eval;
            u->tau_ok = 1;
        }
        if (s->forced) return forced_kick(u, tau);
        potential_kick(u, tau);
        return LF_OK;
    }
    u->tau_ok = 0;
    u->R_fresh = 0;
    lf_forced_moved(s);
    if (kind == u->drift) {
        lf_translate_drift(s, tau);
        u->t += tau;
    }
    for (int b = 0; b < nb; b++) {
        const double *J = s->J + 3 * b;
        if (kind == LF_SPLIT_FLOW) {
            int rc = lf_free_flow(s, u->fc, b, u->Pi + 3 * b, tau);
            if (rc != LF_OK) return rc;
        } else {
            const int k = kind - LF_SPLIT_R1;
            if (u->quat) ns_rotate(u->q + 4 * b, u->p + 4 * b, k, J[k], tau);
            else rotate_axis(s->R + 9 * b, u->Pi + 3 * b, k, tau * u->Pi[3 * b + k] / J[k]);
        }
    }
    return LF_OK;
}

/* queue a part: merged with the pending one if it is the same part, else the pending one is applied
 * (a kick with a forcing of the velocities is not an exact flow, so two of them are not one) */
static int push(runner *u, int kind, double sub)
{
    if (kind == u->kind && !(kind == LF_SPLIT_KICK && lf_forced_velocity(u->s))) {
        u->sub += sub;
        return LF_OK;
    }
    int rc = apply(u);
    u->kind = kind;
    u->sub = sub;
    return rc;
}

int lf_split_run(lf_stepper *s, const lf_split_method *b, const double *c, int nc, int pairs, double h)
{
    const int nb = s->nb;
    runner u = {.s = s, .quat = b->quaternion, .drift = b->drift, .tau_ok = 1, .R_fresh = 1, .kind = -1, .t = s->t};
    u.tbuf = s->work;
    u.Pi = u.tbuf + 3 * nb;
    u.q = u.Pi + 3 * nb;
    u.p = u.q + 4 * nb;
    u.fc = lf_split_consts(s);
    u.Pi0 = s->work + 16 * (size_t)nb + 1;
    /* NO_SQUISH keeps its variables (q, p) in the cache (after the torque) while it is valid: they
     * are its state, (R, w) is computed from them after each step, and the conversion (R, w) -> (q, p)
     * happens after set_state only (each conversion costs O(eps) roundings that, repeated every step,
     * add up: on the slow top, T = 5, h = 2^-14, no_squish_s4 ended 4.8e-11 off with a conversion and
     * a normalization per step, and ends 1.3e-12 off now; dlm_s4 2.8e-12) */
    const int q_cached = u.quat && s->cache_valid && s->ncache >= 11 * (size_t)nb;
    int rc = lf_stepper_torque_start(s, &u.tau);
    if (rc != LF_OK) return rc;
    u.F = s->force;
    for (int i = 0; i < nb; i++) {
        lf_v3_mul(s->J + 3 * i, s->w + 3 * i, u.Pi + 3 * i);
        if (u.quat) {
            double *q = u.q + 4 * i, *p = u.p + 4 * i;
            if (q_cached) {
                memcpy(q, s->cache + 3 * nb + 4 * i, 4 * sizeof(double));
                memcpy(p, s->cache + 7 * nb + 4 * i, 4 * sizeof(double));
                if (s->momenta_changed) { /* a thermostat changed w: p = 2 S(q) (0, Pi) anew */
                    p[0] = p[1] = p[2] = p[3] = 0;
                    add_conj(p, q, u.Pi + 3 * i, 1);
                }
            } else {
                lf_quat_from_matrix(s->R + 9 * i, q);
                p[0] = p[1] = p[2] = p[3] = 0;
                add_conj(p, q, u.Pi + 3 * i, 1); /* p = 2 S(q) (0, Pi) */
            }
        }
    }
    s->momenta_changed = 0;
    for (int i = 0; i < nc && rc == LF_OK; i++) {
        const double hi = c[i] * h;
        if (!pairs)
            for (int k = 0; k < b->n && rc == LF_OK; k++) rc = push(&u, b->step[k].kind, b->step[k].c * hi);
        else if (pairs == 3) /* kick, flow, kick, ... */
            rc = push(&u, i % 2 == 0 ? LF_SPLIT_KICK : LF_SPLIT_FLOW, hi);
        else if ((i % 2 == 0) == (pairs == 1)) /* Phi */
            for (int k = 0; k < b->nhalf && rc == LF_OK; k++) rc = push(&u, b->half[k].kind, b->half[k].c * hi);
        else /* Phi*: the parts of Phi in reverse order */
            for (int k = b->nhalf - 1; k >= 0 && rc == LF_OK; k--) rc = push(&u, b->half[k].kind, b->half[k].c * hi);
    }
    if (rc == LF_OK) rc = apply(&u);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < nb; i++) {
        double *Pi = u.Pi + 3 * i;
        if (u.quat) quat_momentum(u.q + 4 * i, u.p + 4 * i, Pi);
        lf_v3_div(Pi, s->J + 3 * i, s->w + 3 * i);
    }
    if (u.quat && !u.R_fresh) quat_to_R(u.q, u.p, s->R, nb);
    if (u.tau_ok) { /* the last part was a kick: tau(R_new) is known (and q, for NO_SQUISH) */
        lf_stepper_cache_torque(s, u.tau);
        if (u.quat) memcpy(s->cache + 3 * nb, u.q, 8 * (size_t)nb * sizeof(double)); /* q, then p */
    }
    return LF_OK;
}

/* ---------------------------------------------------------------- the methods */
static const lf_split_method split_exact_split;

static int split_step(lf_stepper *s, double h)
{
    static const double one = 1;
    if (s->method->cls->data == &split_exact_split) return lf_split_strang_exact(s, h);
    return lf_split_run(s, s->method->cls->data, &one, 1, 0, h);
}

/* NO_SQUISH keeps (q, p) after the torque in its cache */
static size_t split_cache(const lf_stepper *s)
{
    const lf_split_method *b = s->method->cls->data;
    return (b->quaternion ? 11 : 3) * (size_t)s->nb;
}

int lf_split_rkn_ok(const lf_split_method *b)
{
    return b && b->nhalf == 2 && b->half[0].kind == LF_SPLIT_KICK && b->half[1].kind == LF_SPLIT_FLOW;
}

const lf_split_method *lf_split_of(const lf_method *m)
{
    return m && m->cls->step == split_step ? m->cls->data : NULL;
}

/* The sequences of the SPLIT entries of methods.def (<id>_split): one step, and the first-order
 * method Phi whose Phi*_{h/2} o Phi_{h/2} it is. */
#define K LF_SPLIT_KICK
static const lf_split_method dlm_split = {.quaternion = 0,
                                          .drift = LF_SPLIT_R3,
                                          .n = 7,
                                          .nhalf = 4,
                                          .step = {{K, 0.5},
                                                   {LF_SPLIT_R1, 0.5},
                                                   {LF_SPLIT_R2, 0.5},
                                                   {LF_SPLIT_R3, 1},
                                                   {LF_SPLIT_R2, 0.5},
                                                   {LF_SPLIT_R1, 0.5},
                                                   {K, 0.5}},
                                          .half = {{K, 1}, {LF_SPLIT_R1, 1}, {LF_SPLIT_R2, 1}, {LF_SPLIT_R3, 1}}};
static const lf_split_method no_squish_split = {.quaternion = 1,
                                                .drift = LF_SPLIT_R1,
                                                .n = 7,
                                                .nhalf = 4,
                                                .step = {{K, 0.5},
                                                         {LF_SPLIT_R3, 0.5},
                                                         {LF_SPLIT_R2, 0.5},
                                                         {LF_SPLIT_R1, 1},
                                                         {LF_SPLIT_R2, 0.5},
                                                         {LF_SPLIT_R3, 0.5},
                                                         {K, 0.5}},
                                                .half = {{K, 1}, {LF_SPLIT_R3, 1}, {LF_SPLIT_R2, 1}, {LF_SPLIT_R1, 1}}};
static const lf_split_method split_exact_split = {.quaternion = 0,
                                                  .drift = LF_SPLIT_FLOW,
                                                  .n = 3,
                                                  .nhalf = 2,
                                                  .step = {{K, 0.5}, {LF_SPLIT_FLOW, 1}, {K, 0.5}},
                                                  .half = {{K, 1}, {LF_SPLIT_FLOW, 1}}};
#undef K

#define SPLIT(id, title, ref, order, props)                                                                        \
    const lf_method_class lf_class_##id = {.work_doubles = lf_split_work, .cache_doubles = split_cache,           \
                                           .step = split_step, .data = &id##_split};
#include "method/methods.def"
