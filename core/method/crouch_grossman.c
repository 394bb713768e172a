/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the Crouch–Grossman family: Crouch–Grossman methods and their generalization, the
 * commutator-free methods, on any system (cg3, cf4: tables in methods.def), and the Crouch–Grossman-
 * type splittings of rigid bodies of Ortolan's thesis (mcg, new3).
 *
 * ---- Commutator-free Lie group methods (Celledoni, Marthinsen & Owren 2003), Crouch–Grossman
 * methods (Crouch & Grossman 1993) among them, from the CF entries of methods.def.
 *
 * Stage i: Y_i = exp(h S_{i,J}) ... exp(h S_{i,1}) y0 with S = sum_j alpha_j K_j, K_j = f(t + c_j h, Y_j),
 * each exponential acting through the manifold's action (on the left for right-trivialized systems;
 * on the right, in the same order, for left-trivialized ones: y0 exp(h S_1) exp(h S_2) ..., which is
 * the method applied to z = y^{-1}). No dexpinv, no commutators: only exponentials of linear
 * combinations of the stage values.
 *
 * ---- Crouch–Grossman-type splitting methods from Ortolan's thesis ([O] §4.1.5–4.1.6):
 *
 * MCG  modified Crouch–Grossman (Nukala–Shelton [NJ07]), [O] eqs. (4.9a)-(4.9c).
 *   Splitting of (2.14) into  A: R' = R hat(w);  B: (J w)' = J w x w;  C: (J w)' = tau(R).
 *   A and C are solved exactly, B by the implicit Crouch–Grossman step Y1 = exp(h A(Y1)) Y0 with
 *   Y = J w, A(Y) = -hat(w); its adjoint is the explicit step Y1 = exp(h A(Y0)) Y0. The symmetric
 *   composition C(h/2) o B*(h/2) o A(h) o B(h/2) o C(h/2) (B first) is
 *     mu          = J w_k + h/2 tau(R_k)
 *     J w_{k+1/2} = exp(-h/2 w_{k+1/2}) mu                           (4.9a)  implicit in w only
 *     R_{k+1}     = R_k exp(h w_{k+1/2})                              (4.9b)
 *     J w_{k+1}   = exp(-h/2 w_{k+1/2}) J w_{k+1/2} + h/2 tau(R_{k+1})
 *                 = exp(-h w_{k+1/2}) mu + h/2 tau(R_{k+1})           (4.9c), corrected
 *   TYPO in the thesis: (4.9c) is printed as
 *     "w_{k+1} = J^{-1}[exp(-h w_{k+1/2}) (J w_{k+1/2} + h/2 tau(R_k)) + h/2 tau(R_{k+1})]",
 *   i.e. with J w_{k+1/2} where the composition gives J w_k. The printed form rotates J w_k by
 *   exp(-3h/2 w_{k+1/2}) in total for the free body: inconsistent (first-order error in Euler's
 *   equation) and not momentum conserving. We implement exp(-h w_{k+1/2}) (J w_k + h/2 tau(R_k)),
 *   which with (4.9b) conserves the spatial momentum R J w exactly for the free body (as [NJ07] claims).
 *   Newton for (4.9a) (same as the thesis' (4.6a) step), per body, unknown w = w_{k+1/2}:
 *     F(w) = exp(-h/2 w) mu - J w,   dF/dw = h/2 hat(exp(-h/2 w) mu) dexp(-h/2 w) - J,
 *   with the right-trivialized dexp of so3.h (thesis (2.7)): d exp(x) = hat(dexp(x) dx) exp(x).
 *   (The thesis' Df for (4.6a) prints exp(+Theta/2) in its first line; the second line has the
 *   correct exp(-Theta/2).)
 *   Symmetric, second order, explicit in the torque, one torque evaluation per step (FSAL).
 *
 * NEW3 Koziara–Bićanić [KB10], [O] eqs. (4.10a)-(4.10c):
 *     R_{k+1/2} = R_k exp(h/2 w_k)                                              (4.10a)
 *     exp(h/2 w_{k+1}) J w_{k+1} = exp(-h/2 w_k) J w_k + h tau(R_{k+1/2})        (4.10b) implicit in w
 *     R_{k+1}   = R_{k+1/2} exp(h/2 w_{k+1})                                    (4.10c)
 *   printed correctly. Newton on F(w) = exp(h/2 w) J w - rhs,
 *     dF/dw = exp(h/2 w) J - h/2 hat(exp(h/2 w) J w) dexp(h/2 w)   (thesis, with opposite sign of F).
 *   Spatial momentum: R_{k+1} J w_{k+1} = R_k J w_k + h R_{k+1/2} tau(R_{k+1/2}), so it is exactly
 *   conserved for the free body. The method is symmetric (h then -h returns, the half-step attitude is
 *   shared), explicit in the torque, with one torque evaluation per step at the midpoint attitude
 *   (so no FSAL cache).
 *
 * MCG and NEW3 are conjugate (the same map seen at staggered times, like leapfrog and Verlet): the
 * MCG sequence (R_k, w_{k+1/2}) obeys R_{k+1} = R_k exp(h w_{k+1/2}), exp(h/2 w_{k+3/2}) J w_{k+3/2} =
 * exp(-h/2 w_{k+1/2}) J w_{k+1/2} + h tau(R_{k+1}), which is the NEW3 recursion for (R_{k+1/2}, w_k).
 * Hence their nearly equal errors and energy drifts.
 * Both drift in energy in the thesis' stress test (§4.2, positive slope): not symplectic.
 *
 * Bodies that translate: MCG takes its torques at R_k and R_{k+1}, and the centres of mass follow
 * velocity Verlet with the forces at (x_k, R_k) and (x_{k+1}, R_{k+1}); NEW3 takes its one torque at
 * R_{k+1/2}, and they follow position Verlet, x_{k+1/2} = x_k + h/2 v_k, v_{k+1} = v_k + h F(x_{k+1/2},
 * R_{k+1/2})/m, x_{k+1} = x_{k+1/2} + h/2 v_{k+1} (the same staggering as the attitudes). */
#include <stddef.h>
#include <string.h>

#include "base/linalg.h"
#include "method/method_internal.h"
#include "lie/so3.h"

/* ---------------------------------------------------------------- commutator-free methods */
#define MAXS 4
#define MAXE 4

typedef struct {
    int nexp;
    double a[MAXE * MAXS]; /* row e: the coefficients of exponential e, stride = stages */
} cf_product;

typedef struct {
    int s;
    double c[MAXS];
    cf_product stage[MAXS];
    cf_product out;
} cf_tableau;


/* y0 (np) | Y (np) | K (s nd) | S (nd) */
static size_t cf_work(const lf_stepper *st)
{
    const cf_tableau *T = st->method->cls->data;
    return 2 * (size_t)st->np + ((size_t)T->s + 1) * st->nd;
}

static size_t cf_cache(const lf_stepper *st)
{
    (void)st;
    return 0;
}

/* y <- exp(h S_J) ... exp(h S_1) y (through the action), for the exponentials of product p. */
static void apply_product(lf_stepper *st, const cf_product *p, int s, const double *K, double h, double *S, double *y)
{
    const int nd = st->nd;
    for (int e = 0; e < p->nexp; e++) {
        for (int k = 0; k < nd; k++) {
            double a = 0;
            for (int j = 0; j < s; j++) a += p->a[e * s + j] * K[j * nd + k];
            S[k] = h * a;
        }
        lf_manifold_act(st->M, S, y);
    }
}

static int cf_step(lf_stepper *st, double h)
{
    const cf_tableau *T = st->method->cls->data;
    const int np = st->np, nd = st->nd, s = T->s;
    double *y0 = st->work, *Y = y0 + np, *K = Y + np, *S = K + (size_t)s * nd;
    memcpy(y0, st->y, (size_t)np * sizeof(double));
    for (int i = 0; i < s; i++) {
        memcpy(Y, y0, (size_t)np * sizeof(double));
        apply_product(st, &T->stage[i], s, K, h, S, Y);
        int rc = lf_stepper_f(st, st->t + T->c[i] * h, Y, K + (size_t)i * nd);
        if (rc != LF_OK) return rc;
    }
    apply_product(st, &T->out, s, K, h, S, st->y);
    return LF_OK;
}

/* the methods.def entries (CF): the tableau (s = the number of nodes c) and the class lf_class_<id> */
#define CF_STAGE(n, ...) {n, {__VA_ARGS__}}
#define CF_OUT(n, ...) {n, {__VA_ARGS__}}
#define CF(id, title, ref, order, props, c_, stages, out_)                                                        \
    static const double id##_c[] = {c_};                                                                       \
    const lf_method_class lf_class_##id = {                                                                    \
        .work_doubles = cf_work, .cache_doubles = cf_cache, .step = cf_step,                                   \
        .data = &(const cf_tableau){(int)(sizeof id##_c / sizeof(double)), {c_}, {stages}, out_}};
#include "method/methods.def"
#undef CF_STAGE
#undef CF_OUT

/* ---------------------------------------------------------------- MCG, (4.9) */

typedef struct {
    double J[3], mu[3], h;
} cg_ctx;

/* F(w) = exp(-h/2 w) mu - J w. */
static int mcg_residual(void *ctx, const double *w, double *F, double *Jac, lf_error *err)
{
    (void)err;
    const cg_ctx *c = ctx;
    double x[3], E[9], v[3];
    lf_v3_scale(w, -0.5 * c->h, x);
    lf_so3_exp(x, E);
    lf_m3_apply(E, c->mu, v);
    for (int i = 0; i < 3; i++) F[i] = v[i] - c->J[i] * w[i];
    if (Jac) {
        double V[9], D[9];
        lf_so3_hat(v, V);
        lf_so3_dexp(x, D);
        lf_m3_mul(V, D, Jac);
        for (int i = 0; i < 9; i++) Jac[i] *= 0.5 * c->h;
        for (int i = 0; i < 3; i++) Jac[4 * i] -= c->J[i];
    }
    return LF_OK;
}

static size_t mcg_work(const lf_stepper *s_)
{
    const int nb = s_->nb;
    return lf_newton_work_size(3) + 6 * (size_t)nb;
}

static int mcg_step(lf_stepper *s, double h)
{
    const int nb = s->nb;
    const double *Jall = s->J;
    double *nwork = s->work, *tau1 = nwork + lf_newton_work_size(3), *m = tau1 + 3 * nb;
    const double *tau0;
    int rc = lf_stepper_torque_start(s, &tau0);
    if (rc != LF_OK) return rc;
    lf_translate_kick(s, 0.5 * h, s->force); /* translating bodies: velocity Verlet on (x, v) */
    lf_translate_drift(s, h);

    for (int b = 0; b < nb; b++) {
        double *R = s->R + 9 * b, *w = s->w + 3 * b;
        cg_ctx c = {.h = h};
        double Jw[3], g[3], x[3], E[9];
        lf_v3_copy(Jall + 3 * b, c.J);
        lf_v3_mul(c.J, w, Jw);
        lf_v3_axpy(Jw, 0.5 * h, tau0 + 3 * b, c.mu);   /* mu = J w_k + h/2 tau_k */
        lf_v3_cross(w, Jw, g);                          /* predictor: J w = mu - h/2 w_k x J w_k */
        lf_v3_axpy(c.mu, -0.5 * h, g, x);
        lf_v3_div(x, c.J, x);
        rc = lf_stepper_newton(s, mcg_residual, &c, 3, x, 1, nwork); /* (4.9a) */
        if (rc != LF_OK) return rc;
        lf_v3_scale(x, h, x);
        lf_so3_exp(x, E);
        lf_so3_rmul_exp(R, x);                          /* (4.9b) R <- R exp(h w_{k+1/2}) */
        lf_m3_tapply(E, c.mu, m + 3 * b);               /* exp(-h w_{k+1/2}) mu, (4.9c) corrected */
    }
    rc = lf_stepper_torque(s, s->R, tau1);
    if (rc != LF_OK) return rc;
    for (int b = 0; b < nb; b++) {                      /* (4.9c) */
        double Jw[3];
        lf_v3_axpy(m + 3 * b, 0.5 * h, tau1 + 3 * b, Jw);
        lf_v3_div(Jw, Jall + 3 * b, s->w + 3 * b);
    }
    lf_translate_kick(s, 0.5 * h, s->force_eval);
    lf_stepper_cache_torque(s, tau1);
    return LF_OK;
}

const lf_method_class lf_class_mcg = {.work_doubles = mcg_work, .step = mcg_step};

/* ---------------------------------------------------------------- NEW3, (4.10) */

/* ctx->mu holds the right-hand side of (4.10b); F(w) = exp(h/2 w) J w - rhs. */
static int new3_residual(void *ctx, const double *w, double *F, double *Jac, lf_error *err)
{
    (void)err;
    const cg_ctx *c = ctx;
    double x[3], E[9], Jw[3], v[3];
    lf_v3_scale(w, 0.5 * c->h, x);
    lf_so3_exp(x, E);
    lf_v3_mul(c->J, w, Jw);
    lf_m3_apply(E, Jw, v);
    lf_v3_sub(v, c->mu, F);
    if (Jac) {
        double V[9], D[9];
        lf_so3_hat(v, V);
        lf_so3_dexp(x, D);
        lf_m3_mul(V, D, Jac);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) Jac[3 * i + j] = E[3 * i + j] * c->J[j] - 0.5 * c->h * Jac[3 * i + j];
    }
    return LF_OK;
}

static size_t new3_work(const lf_stepper *s_)
{
    const int nb = s_->nb;
    return lf_newton_work_size(3) + 15 * (size_t)nb;
}

static int new3_step(lf_stepper *s, double h)
{
    const int nb = s->nb;
    const double *Jall = s->J;
    double *nwork = s->work, *tau = nwork + lf_newton_work_size(3), *rhs = tau + 3 * nb, *Eall = rhs + 3 * nb;

    for (int b = 0; b < nb; b++) {
        double *R = s->R + 9 * b, *E = Eall + 9 * b, x[3], Jw[3];
        lf_v3_scale(s->w + 3 * b, 0.5 * h, x);
        lf_so3_exp(x, E);                               /* E = exp(h/2 w_k) */
        lf_so3_rmul_exp(R, x);                          /* (4.10a): R now holds R_{k+1/2} */
        lf_v3_mul(Jall + 3 * b, s->w + 3 * b, Jw);
        lf_m3_tapply(E, Jw, rhs + 3 * b);               /* exp(-h/2 w_k) J w_k */
    }
    lf_translate_drift(s, 0.5 * h); /* translating bodies: position Verlet, the force at x_{k+1/2} */
    int rc = lf_stepper_torque(s, s->R, tau);
    if (rc != LF_OK) return rc;
    lf_translate_kick(s, h, s->force_eval);
    lf_translate_drift(s, 0.5 * h);
    for (int b = 0; b < nb; b++) {
        double *R = s->R + 9 * b, *w = s->w + 3 * b;
        cg_ctx c = {.h = h};
        double x[3];
        lf_v3_copy(Jall + 3 * b, c.J);
        lf_v3_axpy(rhs + 3 * b, h, tau + 3 * b, c.mu);  /* rhs of (4.10b) */
        lf_m3_tapply(Eall + 9 * b, c.mu, x);            /* predictor J w = exp(-h/2 w_k) rhs, error O(h^2) */
        lf_v3_div(x, c.J, x);
        rc = lf_stepper_newton(s, new3_residual, &c, 3, x, 1, nwork); /* (4.10b) */
        if (rc != LF_OK) return rc;
        lf_v3_copy(x, w);
        lf_v3_scale(x, 0.5 * h, x);
        lf_so3_rmul_exp(R, x);                          /* (4.10c) */
    }
    return LF_OK;
}

const lf_method_class lf_class_new3 = {.work_doubles = new3_work, .step = new3_step};
