/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the midpoint Lie family of Krysl ([K], [Kry05]; LIEMID[EA] also [BOS] App. A
 * eqs. (13)-(18) and [O] §4.1.3 eqs. (4.6a)-(4.6f)).
 *
 * Notation: the papers' I, Omega, Pi, Psi (or Theta), T are our J (diagonal), w, P = J w, Theta and the
 * body torque tau. Every method advances R by an incremental body rotation, R_{n} = R_{n-1} exp(Theta),
 * where Theta solves the midpoint condition ([K] eqs. (12)-(13))
 *     Theta = c J^{-1} exp(-Theta/2) P                                              (*)
 * for a step c (h or h/2) and a momentum P; the free flight over the step then maps P to exp(-Theta) P.
 * Because R exp(Theta) exp(-Theta) P = R P, the spatial momentum changes only by the spatial torque
 * impulses: the whole family conserves R J w exactly (to round-off) for the free body, and the
 * projection of R J w on any axis the spatial torque is orthogonal to ([K] §3.7).
 *
 * (*) is solved per body by Newton on Theta in R^3 (no torque inside), analytic Jacobian: with the
 * right-trivialized dexp of so3.h, d exp(x) = hat(dexp(x) dx) exp(x), and x = -Theta/2,
 *     d[exp(-Theta/2) P] = -1/2 (dexp(-Theta/2) dTheta) x q = 1/2 hat(q) dexp(-Theta/2) dTheta,
 *     q = exp(-Theta/2) P,  so  dF/dTheta = c/2 J^{-1} hat(q) dexp(-Theta/2) - I
 * (F = c J^{-1} q - Theta; [O] prints the same Jacobian below (4.6a) with c = h/2).
 * Predictor: exp(-Theta/2) P ~ P - Theta0 x P / 2 with Theta0 = c J^{-1} P (error O(c^3)).
 *
 *   liemid     [K] §2.1, algorithm LIEMID: torque-free only (the system must have no potential).
 *   liemid_i   [K] §3.1, LIEMID[I]: Theta = h J^{-1}(exp(-Theta/2) P_{n-1} + h/2 T_{n-1/2}),
 *              T_{n-1/2} = tau(R_{n-1} exp(Theta/2)); P_n = exp(-Theta) P_{n-1} + h exp(-Theta/2) T_{n-1/2}.
 *              Implicit in the torque: Newton on the stacked Theta (3 nb), finite-difference Jacobian.
 *   liemid_e   [K] §3.2, LIEMID[E]: Theta = h J^{-1} exp(-Theta/2)(P_{n-1} + h/2 T_{n-1}),
 *              P_n = exp(-Theta)(P_{n-1} + h T_{n-1}). First order ([K] says so; measured).
 *   liemid_e1  LIEMID[E1]: free flight (*) with c = h, then the kick P_n += h T_n (T at the new R).
 *   liemid_e2  LIEMID[E2]: kick P += h T_{n-1}, then free flight. E1 and E2 are mutually adjoint.
 *   liemid_ea  LIEMID[EA] = E1_{h/2} o E2_{h/2}: kick h/2, two free flights of h/2, kick h/2; one
 *              torque evaluation per step (FSAL). R is updated once, R_{n-1} (exp(Theta_{n-1/2})
 *              exp(Theta_n)), as [K] §3.4 recommends.
 * E and E2 use the torque at the start only: they invalidate the stepper's torque cache at the end.
 *
 * Typos / interpretations:
 *  - [BOS] (18) prints W_{k+1} = I^{-1}(exp(-Theta_k) I W_{k+1/2} + h/2 tau(Q_{k+1})). The free flight
 *    of the second half step rotates the momentum by exp(-Theta_{k+1}) ([K]'s LIEMID[EA] listing and
 *    [O] (4.6f) have Theta_{k+1}); with Theta_k (the previous step's) the map conserves no momentum
 *    (relative drift 1e-2 in 1e4 free-body steps of 0.1) and is first order (measured). We implement
 *    exp(-Theta_{k+1}).
 *  - [K] eq. (19) approximates the half-step impulse at the midpoint; the final update of LIEMID[I]
 *    uses the full-step midpoint impulse h exp(-Theta/2) T_{n-1/2}, as printed. No correction needed.
 *  - [K] abstract/§3.4 call E1, E2, EA (apparently) symplectic; [BOS] App. A finds an energy
 *    drift O(T h^2) for EA (not conjugate symplectic). Since E2 is the adjoint of E1, E1 symplectic would
 *    make EA symplectic: hence "no" for E1, E2, EA. The papers prove nothing for liemid, liemid_i:
 *    "unknown"; for liemid_e [K] reports a linearly growing energy: "no". (A finite-difference
 *    check of the canonical 2-form on T*SO(3) finds every map of this file non-symplectic, with a
 *    one-step defect O(h^3), O(h^2) for E; liemid and liemid_i included.)
 *
 * Bodies that translate: the centres of mass follow the same kicks and free flights, v += c h F/m with
 * the forces at the configuration of each torque and x += h v over the flights: LIEMID x += h v, E1
 * drift then kick (F at x_{n+1}), E2 kick then drift, EA velocity Verlet, E kick then drift. LIEMID[I]
 * refuses them: its torque is at the midpoint attitude inside Newton, and the consistent translation
 * would be the midpoint rule coupled into that Newton (not implemented). */
#include <stddef.h>

#include "base/linalg.h"
#include "method/method_internal.h"
#include "method/newton3_internal.h"
#include "lie/so3.h"

/* ---------------------------------------------------------------- the kinematic solve (*) */

typedef struct {
    double c;
    const double *J, *P;
} theta_ctx;

/* F(Theta) = c J^{-1} exp(-Theta/2) P - Theta. */
static int theta_residual(void *ctx, const double *th, double *F, double *Jac, lf_error *err)
{
    (void)err;
    const theta_ctx *k = ctx;
    double x[3], E[9], q[3];
    lf_v3_scale(th, -0.5, x);
    lf_so3_exp(x, E);
    lf_m3_apply(E, k->P, q);
    for (int i = 0; i < 3; i++) F[i] = k->c * q[i] / k->J[i] - th[i];
    if (Jac) {
        double Q[9], D[9];
        lf_so3_hat(q, Q);
        lf_so3_dexp(x, D);
        lf_m3_mul(Q, D, Jac);
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) Jac[3 * i + j] *= 0.5 * k->c / k->J[i];
            Jac[4 * i] -= 1;
        }
    }
    return LF_OK;
}

/* The explicit predictor of (*): exp(-Theta/2) P ~ P - Theta0 x P / 2, Theta0 = c J^{-1} P (error O(c^3)). */
static void theta_predict(double c, const double *J, const double *P, double *th)
{
    double t0[3], g[3];
    for (int i = 0; i < 3; i++) t0[i] = c * P[i] / J[i];
    lf_v3_cross(t0, P, g);
    for (int i = 0; i < 3; i++) th[i] = c * (P[i] - 0.5 * g[i]) / J[i];
}

/* Solve (*) for Theta (explicit predictor, then Newton). work: lf_newton_work_size(3). */
static int solve_theta(lf_stepper *s, double c, const double *J, const double *P, double *th, double *work)
{
    theta_predict(c, J, P, th);
    theta_ctx k = {c, J, P};
    return lf_stepper_newton(s, theta_residual, &k, 3, th, 1, work);
}

/* Free flight of one body over c ([K] LIEMID): R <- R exp(Theta), P <- exp(-Theta) P. */
static int free_flight(lf_stepper *s, double c, const double *J, double *R, double *P, double *work)
{
    double th[3], E[9];
    int rc = solve_theta(s, c, J, P, th, work);
    if (rc != LF_OK) return rc;
    lf_so3_exp(th, E);
    lf_so3_rmul_exp(R, th);
    lf_m3_tapply(E, P, P); /* exp(-Theta) = exp(Theta)^T */
    return LF_OK;
}

/* Momenta P = J w of all bodies into P[3 nb]; back to w. */
static void to_momentum(const lf_stepper *s, double *P)
{
    for (int i = 0; i < 3 * s->nb; i++) P[i] = s->J[i] * s->w[i];
}
static void from_momentum(lf_stepper *s, const double *P)
{
    for (int i = 0; i < 3 * s->nb; i++) s->w[i] = P[i] / s->J[i];
}

static size_t explicit_work(const lf_stepper *s_)
{
    const int nb = s_->nb;
    return lf_newton_work_size(3) + 3 * (size_t)nb;
}

/* ---------------------------------------------------------------- LIEMID (torque free) */

/* LIEMID integrates torque-free bodies only: refuse a system with a potential up front. */
static int liemid_accepts(const lf_method *m, const lf_system *sys, lf_error *err)
{
    (void)m;
    const lf_form_rigid *rigid = lf_system_rigid(sys);
    if (rigid && rigid->potential)
        return lf_error_set(err, LF_EINVAL,
                            "liemid is the torque-free LIEMID (Krysl §2.1) but the system has the potential "
                            "'%s'; use liemid_i, liemid_ea, liemid_e1 or liemid_e2",
                            rigid->potential);
    return LF_OK;
}

/* ---------------------------------------------------------------- kicks and free flights */
/* LIEMID, E1, E2 and EA are kicks and free flights: a kick P += before h tau(R_{n-1}), `flights`
 * free flights of h/flights per body ([K]: EA's (13)-(18), (18) corrected: exp(-Theta_{k+1})), and a
 * kick P += after h tau(R_n), whose torque is cached for the next step (FSAL). The LIEMID[EA]
 * R_{n-1} (exp(Theta_{n-1/2}) exp(Theta_n)) is its two flights: R is updated twice, as [K] §3.4
 * recommends for the product. */
typedef struct {
    double before;
    int flights;
    double after;
} liemid_split;

static int liemid_split_step(lf_stepper *s, double h)
{
    const liemid_split *v = s->method->cls->data;
    double *nwork = s->work, *P = nwork + lf_newton_work_size(3);
    int rc;
    to_momentum(s, P);
    if (v->before != 0) {
        const double *tau0;
        if ((rc = lf_stepper_torque_start(s, &tau0)) != LF_OK) return rc;
        for (int i = 0; i < 3 * s->nb; i++) P[i] += v->before * h * tau0[i];
        lf_translate_kick(s, v->before * h, s->force);
    }
    lf_translate_drift(s, h); /* translating bodies: the kicks and the free flight of the centres of mass */
    const double c = h / v->flights;
    for (int b = 0; b < s->nb; b++)
        for (int k = 0; k < v->flights; k++)
            if ((rc = free_flight(s, c, s->J + 3 * b, s->R + 9 * b, P + 3 * b, nwork)) != LF_OK) return rc;
    if (v->after != 0) { /* T_n at the new attitude; rollback restores s->tau */
        if ((rc = lf_stepper_torque(s, s->R, s->tau)) != LF_OK) return rc;
        for (int i = 0; i < 3 * s->nb; i++) P[i] += v->after * h * s->tau[i];
        lf_translate_kick(s, v->after * h, s->force_eval);
        lf_stepper_cache_torque(s, s->tau);
    }
    from_momentum(s, P);
    return LF_OK;
}

/* LIEMID: the free flight; [E1]: flight, then kick; [E2]: kick, then flight; [EA] = E1_{h/2} o E2_{h/2} */
const lf_method_class lf_class_liemid = {.work_doubles = explicit_work, .accepts = liemid_accepts, .step = liemid_split_step,
                                         .data = &(const liemid_split){0, 1, 0}};
const lf_method_class lf_class_liemid_e1 = {.work_doubles = explicit_work, .step = liemid_split_step,
                                            .data = &(const liemid_split){0, 1, 1}};
const lf_method_class lf_class_liemid_e2 = {.work_doubles = explicit_work, .step = liemid_split_step,
                                            .data = &(const liemid_split){1, 1, 0}};
const lf_method_class lf_class_liemid_ea = {.work_doubles = explicit_work, .step = liemid_split_step,
                                            .data = &(const liemid_split){0.5, 2, 0.5}};

/* ---------------------------------------------------------------- LIEMID[E] */

static int liemid_e_step(lf_stepper *s, double h)
{
    double *nwork = s->work, *P = nwork + lf_newton_work_size(3);
    const double *tau0;
    int rc = lf_stepper_torque_start(s, &tau0);
    if (rc != LF_OK) return rc;
    lf_translate_kick(s, h, s->force); /* translating bodies: kick, then free flight (first order, as the rotation) */
    lf_translate_drift(s, h);
    to_momentum(s, P);
    for (int b = 0; b < s->nb; b++) {
        const double *J = s->J + 3 * b, *t = tau0 + 3 * b;
        double *Pb = P + 3 * b, Ph[3], th[3], E[9];
        lf_v3_axpy(Pb, 0.5 * h, t, Ph);                 /* I Omega_{n-1} + h/2 T_{n-1} */
        rc = solve_theta(s, h, J, Ph, th, nwork);
        if (rc != LF_OK) return rc;
        lf_so3_exp(th, E);
        lf_so3_rmul_exp(s->R + 9 * b, th);
        lf_v3_axpy(Pb, h, t, Pb);                       /* exp(-Theta)(I Omega_{n-1} + h T_{n-1}) */
        lf_m3_tapply(E, Pb, Pb);
    }
    from_momentum(s, P);
    return LF_OK;
}

const lf_method_class lf_class_liemid_e = {.work_doubles = explicit_work, .step = liemid_e_step};

/* ---------------------------------------------------------------- LIEMID[I] */

typedef struct {
    lf_stepper *s;
    double h;
    const double *P0;  /* momenta at the start, 3 nb */
    double *Rm, *taum; /* midpoint attitudes (9 nb) and their torques (3 nb) */
    double *K;         /* the torque Jacobian (3nb x 3nb) when the potential has one, else NULL */
} liemid_i_ctx;

/* Midpoint attitudes R_{n-1} exp(Theta/2) of all bodies and their torques. */
static int liemid_i_midpoint(liemid_i_ctx *k, const double *th)
{
    for (int b = 0; b < k->s->nb; b++) {
        double x[3], E[9];
        lf_v3_scale(th + 3 * b, 0.5, x);
        lf_so3_exp(x, E);
        lf_m3_mul(k->s->R + 9 * b, E, k->Rm + 9 * b);
    }
    return lf_stepper_torque(k->s, k->Rm, k->taum);
}

/* With the potential's torque Jacobian K: dF/dTheta = h J^{-1} (1/2 hat(q) dexp(-Theta/2)
 * + h/4 K dexp(-Theta/2)) - I, q = exp(-Theta/2) P_{n-1} (d/dt exp(x) = hat(dexp(x) x') exp(x), and
 * R exp(Theta/2) moves by hat(dexp(-Theta/2) Theta'/2) in the left trivialization). */
static int liemid_i_jacobian(liemid_i_ctx *k, const double *th, double *Jac)
{
    lf_stepper *s = k->s;
    const int nb = s->nb, n = 3 * nb;
    const double h = k->h;
    int rc = lf_stepper_torque_jacobian(s, k->Rm, k->K);
    if (rc != LF_OK) return rc;
    memset(Jac, 0, (size_t)n * n * sizeof *Jac);
    for (int j = 0; j < nb; j++) {
        double x[3], E[9], q[3], Q[9], D[9], QD[9];
        lf_v3_scale(th + 3 * j, -0.5, x);
        lf_so3_exp(x, E);
        lf_m3_apply(E, k->P0 + 3 * j, q);
        lf_so3_dexp(x, D);
        lf_so3_hat(q, Q);
        lf_m3_mul(Q, D, QD);
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) Jac[(size_t)(3 * j + r) * n + 3 * j + c] = 0.5 * QD[3 * r + c];
        lf_jac_add_torque(n, Jac, k->K, j, D, 0.25 * h);
    }
    for (int r = 0; r < n; r++) {
        for (int c = 0; c < n; c++) Jac[(size_t)r * n + c] *= h / s->J[r];
        Jac[(size_t)r * n + r] -= 1;
    }
    return LF_OK;
}

/* F(Theta) = h J^{-1}(exp(-Theta/2) P_{n-1} + h/2 T(R_{n-1} exp(Theta/2))) - Theta, all bodies. */
static int liemid_i_residual(void *ctx, const double *th, double *F, double *Jac, lf_error *err)
{
    (void)err;
    liemid_i_ctx *k = ctx;
    int rc = liemid_i_midpoint(k, th);
    if (rc != LF_OK) return rc;
    for (int b = 0; b < k->s->nb; b++) {
        double x[3], E[9], q[3];
        const double *J = k->s->J + 3 * b, *t = k->taum + 3 * b;
        lf_v3_scale(th + 3 * b, -0.5, x);
        lf_so3_exp(x, E);
        lf_m3_apply(E, k->P0 + 3 * b, q);
        for (int i = 0; i < 3; i++) F[3 * b + i] = k->h * (q[i] + 0.5 * k->h * t[i]) / J[i] - th[3 * b + i];
    }
    return Jac ? liemid_i_jacobian(k, th, Jac) : LF_OK;
}

static size_t liemid_i_work(const lf_stepper *s_)
{
    const int nb = s_->nb;
    const size_t n = 3 * (size_t)nb;
    return lf_newton_work_size(3 * nb) + n + n + 9 * (size_t)nb + n + (lf_stepper_has_torque_jacobian(s_) ? n * n : 0);
}

static int liemid_i_step(lf_stepper *s, double h)
{
    const int nb = s->nb;
    double *nwork = s->work, *P = nwork + lf_newton_work_size(3 * nb), *th = P + 3 * nb, *Rm = th + 3 * nb,
           *taum = Rm + 9 * nb;
    const double *tau0;
    int rc = lf_stepper_torque_start(s, &tau0);
    if (rc != LF_OK) return rc;
    to_momentum(s, P);
    /* predictor: LIEMID[E]'s Theta with the explicit formula of solve_theta (error O(h^3)) */
    for (int b = 0; b < nb; b++) {
        double Ph[3];
        lf_v3_axpy(P + 3 * b, 0.5 * h, tau0 + 3 * b, Ph);
        theta_predict(h, s->J + 3 * b, Ph, th + 3 * b);
    }
    const int analytic = lf_stepper_has_torque_jacobian(s);
    liemid_i_ctx k = {s, h, P, Rm, taum, analytic ? taum + 3 * nb : NULL};
    rc = lf_stepper_newton(s, liemid_i_residual, &k, 3 * nb, th, analytic, nwork);
    if (rc != LF_OK) return rc;
    rc = liemid_i_midpoint(&k, th); /* T_{n-1/2} at the converged Theta */
    if (rc != LF_OK) return rc;
    for (int b = 0; b < nb; b++) {
        double *Pb = P + 3 * b, x[3], Eh[9], E[9], v[3];
        lf_v3_scale(th + 3 * b, 0.5, x);
        lf_so3_exp(x, Eh);
        lf_so3_exp(th + 3 * b, E);
        lf_so3_rmul_exp(s->R + 9 * b, th + 3 * b);      /* R_n = R_{n-1} exp(Theta) */
        lf_m3_tapply(E, Pb, Pb);                        /* exp(-Theta) P_{n-1} */
        lf_m3_tapply(Eh, taum + 3 * b, v);              /* + h exp(-Theta/2) T_{n-1/2} */
        lf_v3_axpy(Pb, h, v, Pb);
    }
    from_momentum(s, P);
    /* torque at the new attitude: the next step's predictor (FSAL) */
    rc = lf_stepper_torque(s, s->R, s->tau);
    if (rc != LF_OK) return rc;
    lf_stepper_cache_torque(s, s->tau);
    return LF_OK;
}

/* As AKW: the translation would be the midpoint rule coupled into the Newton iteration (not implemented). */
const lf_method_class lf_class_liemid_i = {
    .work_doubles = liemid_i_work,
    .step = liemid_i_step,
    .why_no_translation = "its torque is taken at the midpoint attitude inside its Newton iteration, where the "
                          "translation would be the midpoint rule on (x, v) (not implemented)"};
