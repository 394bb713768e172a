/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — Lie-Newmark integrators for rigid bodies (Simo & Vu-Quoc 1988).
 *
 *   eln      explicit Lie-Newmark (gamma = 1/2, beta = 0) with the Cayley map:
 *            [BOS] eqs. (4)-(6) = thesis ([O]) eqs. (4.1a)-(4.1c)
 *   eln_exp  the same with exp in place of cay in (5) ([BOS] §3 last lines, thesis §4.2)
 *   tln      trapezoidal Lie-Newmark (gamma = 1/2, beta = 1/4): thesis eqs. (4.3a)-(4.3b)
 *
 * Equations (body i; J diagonal; the Euler equation is J w' = J w x w + tau, [BOS] eq. (2)):
 *   (4)  W_{k+1/2} = W_k + h/2 J^{-1} (J W_k x W_k + tau(Q_k))
 *   (5)  Q_{k+1}   = Q_k cay(h W_{k+1/2})                       [exp(h W_{k+1/2}) for eln_exp]
 *   (6)  W_{k+1}   = W_{k+1/2} + h/2 J^{-1} (J W_{k+1} x W_{k+1} + tau(Q_{k+1}))
 * (6) is implicit in W_{k+1} only through the gyroscopic term; tau(Q_{k+1}) is explicit. We solve
 * (6) multiplied by J,  g(W) = J W - h/2 (J W x W) - (J W_{k+1/2} + h/2 tau(Q_{k+1})) = 0, by Newton
 * with the analytic Jacobian  J + h/2 D(W),  D(W) = d(W x J W)/dW = hat(W) J - hat(J W)
 * (= -J times the thesis' J_f = -I + h/2 J^{-1}[(J w)^ - w^ J], which is correct as printed).
 * Predictor: one fixed-point sweep of (6) from W_{k+1/2} (error O(h^2)): 1-3 Newton updates per step.
 *
 * TLN (4.3a)  (I + h/2 hat(w_{k+1})) J w_{k+1} - h/2 tau(R_{k+1}) = (I - h/2 hat(w_k)) J w_k + h/2 tau(R_k)
 *     (4.3b)  R_{k+1} = R_k cay(h (w_k + w_{k+1})/2)
 * i.e. the trapezoidal rule on J w' = -w x J w + tau. It is implicit in the torque; the Newton unknown
 * is the stacked w_{k+1} of all bodies (the potential may couple them). Residual
 *   F_i(w) = J_i w_i + h/2 w_i x J_i w_i - h/2 tau_i(G(w)) - b_i,   G_i(w) = R_{k,i} cay(x_i),
 *   x_i = h (w_{k,i} + w_i)/2,   b_i = J_i w_{k,i} - h/2 w_{k,i} x J_i w_{k,i} + h/2 tau_i(R_k).
 * Jacobian: block diagonal J_i + h/2 D(w_i)  minus  h/2 dtau_i/dw_j. Thesis (4.4) gives, with the
 * right-trivialized dcay, DG_j.delta = h/2 R_{k,j} hat(dcay(x_j) delta) cay(x_j) = G_j hat(h/2 cay(-x_j)
 * dcay(x_j) delta), and cay(-x) dcay(x) = dcay(-x) (the left-trivialized dcay). Hence
 *   dtau_i/dw_j = K_ij (h/2) dcay(-x_j),   K_ij[:, m] = d/de tau_i(.., G_j exp(e hat(e_m)), ..)|_{e=0},
 * where the left-trivialized torque Jacobian K is taken by forward differences (the thesis' analytic K
 * is specific to the stress potential (3.5); ours must work for any potential).
 *
 * Typos found and how they were resolved:
 *  - [BOS] eq. (7) prints cay(x) = I + 4/(4+|x|) x^ + 2/(4+|x|) x^^2; it is |x|^2 (thesis (2.8),
 *    and only then is cay(x) orthogonal). lf_so3_cay implements the correct form.
 *  - [BOS] §2 writes (Q_k, W_k) in R^3 x SO(3); it is SO(3) x R^3 (cosmetic).
 *  - thesis §4.1.2: the TLN Jacobian is printed as J_f = -J - h/2 [(J w)^ + w^ J] + (torque terms);
 *    differentiating its own f(w) = -J w - h/2 w^ J w + ... gives -J - h/2 [w^ J - (J w)^]: the sign
 *    of (J w)^ is wrong. We use the derived form (and checked it against finite differences).
 *  - thesis §4.1.2: the gradient formula (4.5) is labelled Df_i, it is the derivative of y_i.
 * Initial guesses: the thesis starts Newton at w_{k+1/2} (ELN) and w_k (TLN) and stops on |f| < 1e-12;
 * we start from explicit predictors and stop on the lieflow test |dx| <= newton_tol (1 + |x|).
 *
 * Bodies that translate: the centres of mass follow the explicit Newmark scheme (gamma = 1/2, beta = 0:
 * velocity Verlet), v_{k+1/2} = v_k + h/2 F_k/m, x_{k+1} = x_k + h v_{k+1/2}, v_{k+1} = v_{k+1/2} +
 * h/2 F_{k+1}/m, in all three methods, with the torques tau(Q_k) and tau(Q_{k+1}) at x_k and x_{k+1}.
 * For eln and eln_exp that is their own scheme on x; for tln it keeps x explicit (its own trapezoidal
 * rule, beta = 1/4, would couple x_{k+1} into the Newton iteration): x_{k+1} is known before Newton
 * solves for w_{k+1}, every torque of (4.3a) is taken at x_{k+1}, and the step stays symmetric and of
 * order 2 (tests/c/test_translation.c measures both). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "base/linalg.h"
#include "method/method_internal.h"
#include "method/newton3_internal.h"
#include "lie/so3.h"
#include "lie/so3_kernels_internal.h"

/* ------------------------------------------------------------------------------------ ELN */
/* (6) times J is the gyroscopic equation of newton3_internal.h (lf_gyro_residual). */

static size_t eln_work(const lf_stepper *s_)
{
    const size_t nb = (size_t)s_->nb, B = (size_t)s_->lanes;
    return 3 * nb * B + (B > 1 ? 4 * B : 0); /* tau1; with lanes also c and Newton flags */
}

/* One body's (4) and (5): W <- W_{k+1/2} = W_k + h/2 J^{-1} (J W_k x W_k + tau(Q_k)),
 * R <- R cay(h W_{k+1/2}) (or exp), each with one rounding per entry (so3_update.c). (6) before
 * Newton is the half kick with tau(Q_{k+1}) as predictor, c = J W_{k+1/2} + h/2 tau(Q_{k+1}). */
LF_ALWAYS_INLINE void eln_kick_drift(const double *J, double *W, double *R, const double *tau0, double h, int use_exp)
{
    double x[3];
    lf_half_kick(J, W, tau0, h, NULL);
    lf_v3_scale(W, h, x);
    if (use_exp) lf_so3_rmul_exp(R, x);
    else lf_so3_rmul_cay_kernel(R, x);
}

static int eln_common(lf_stepper *s, double h, int use_exp)
{
    const int nb = s->nb;
    const double *Jall = s->J, *tau0;
    double *tau1 = s->work;
    int rc = lf_stepper_torque_start(s, &tau0);
    if (rc != LF_OK) return rc;
    lf_translate_kick(s, 0.5 * h, s->force); /* translating bodies: the explicit Newmark (velocity Verlet) */
    lf_translate_drift(s, h);
    for (int i = 0; i < nb; i++) eln_kick_drift(Jall + 3 * i, s->w + 3 * i, s->R + 9 * i, tau0 + 3 * i, h, use_exp);
    rc = lf_stepper_torque(s, s->R, tau1);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < nb; i++) {
        const double *J = Jall + 3 * i;
        double *W = s->w + 3 * i, c[3];
        lf_half_kick(J, W, tau1 + 3 * i, h, c);
        lf_body_eq q = {J, c, h};
        rc = lf_newton3(s, lf_gyro_residual, &q, W, "eq. (6)", "", i);
        if (rc != LF_OK) return rc;
    }
    lf_translate_kick(s, 0.5 * h, s->force_eval);
    lf_stepper_cache_torque(s, tau1);
    return LF_OK;
}

/* Lanes (method.h): the same step on every lane, each phase a vectorized loop over the lanes. */
LF_ALWAYS_INLINE int eln_lanes_common(lf_stepper *s, double h, int use_exp)
{
    const int B = s->lanes;
    const double *J = s->J, *tau0;
    double *restrict tau1 = s->work, *restrict C = tau1 + 3 * B, *restrict flag = C + 3 * B;
    double *restrict Ws = s->w, *restrict Rs = s->R;
    int rc = lf_stepper_torque_start(s, &tau0);
    if (rc != LF_OK) return rc;
    lf_translate_kick(s, 0.5 * h, s->force);
    lf_translate_drift(s, h);
    LF_LANES_INDEPENDENT
    for (int j = 0; j < B; j++) {
        double W[3], R[9], t[3];
        lf_lane_get(3, Ws, B, j, W);
        lf_lane_get(9, Rs, B, j, R);
        lf_lane_get(3, tau0, B, j, t);
        eln_kick_drift(J, W, R, t, h, use_exp);
        lf_lane_put(3, W, Ws, B, j);
        lf_lane_put(9, R, Rs, B, j);
    }
    rc = lf_stepper_torque(s, Rs, tau1);
    if (rc != LF_OK) return rc;
    lf_lanes_predict(B, lf_half_kick, J, Ws, tau1, h, C);
    rc = lf_newton3_lanes(s, lf_gyro_residual, J, C, h, Ws, flag, "eq. (6)", "");
    if (rc != LF_OK) return rc;
    lf_translate_kick(s, 0.5 * h, s->force_eval);
    lf_stepper_cache_torque(s, tau1);
    return LF_OK;
}

LF_LANE_LOOPS static int eln_lanes_step(lf_stepper *s, double h) { return eln_lanes_common(s, h, 0); }
LF_LANE_LOOPS static int eln_exp_lanes_step(lf_stepper *s, double h) { return eln_lanes_common(s, h, 1); }

static int eln_step(lf_stepper *s, double h) { return eln_common(s, h, 0); }
static int eln_exp_step(lf_stepper *s, double h) { return eln_common(s, h, 1); }

const lf_method_class lf_class_eln = {.work_doubles = eln_work, .step = eln_step, .lanes_step = eln_lanes_step};

const lf_method_class lf_class_eln_exp = {.work_doubles = eln_work, .step = eln_exp_step,
                                          .lanes_step = eln_exp_lanes_step};

/* ------------------------------------------------------------------------------------ TLN */

typedef struct {
    lf_stepper *s;
    double h;
    const double *wk; /* w_k, 3nb */
    const double *b;  /* right-hand side of (4.3a), 3nb */
    double *G;        /* G(w), 9nb */
    double *Gp;       /* perturbed copy of G, 9nb */
    double *tauG;     /* tau(G(w)), 3nb */
    double *taup;     /* tau at the perturbed G, 3nb */
    double *Kc;       /* 3 columns of K for one body, 3nb x 3 */
    double *K;        /* the whole K (3nb x 3nb) from the potential, or NULL: differences */
} tln_ctx;

static int tln_residual(void *ctxp, const double *w, double *Fx, double *Jac, lf_error *err)
{
    (void)err; /* lf_stepper_torque reports into s->err, which is the err lf_newton passes */
    tln_ctx *c = ctxp;
    lf_stepper *s = c->s;
    const int nb = s->nb, n = 3 * nb;
    const double h = c->h, *Jall = s->J;
    for (int j = 0; j < nb; j++) {
        double x[3];
        lf_v3_add(c->wk + 3 * j, w + 3 * j, x);
        lf_v3_scale(x, 0.5 * h, x);
        memcpy(c->G + 9 * j, s->R + 9 * j, 9 * sizeof(double)); /* G_j = R_{k,j} cay(x_j), as (4.3b) below */
        lf_so3_rmul_cay(c->G + 9 * j, x);
    }
    int rc = lf_stepper_torque(s, c->G, c->tauG);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < nb; i++) {
        const double *J = Jall + 3 * i, *wi = w + 3 * i;
        double Jw[3], cr[3];
        lf_v3_mul(J, wi, Jw);
        lf_v3_cross(wi, Jw, cr);
        for (int k = 0; k < 3; k++) Fx[3 * i + k] = Jw[k] + 0.5 * h * cr[k] - 0.5 * h * c->tauG[3 * i + k] - c->b[3 * i + k];
    }
    if (!Jac) return LF_OK;
    memset(Jac, 0, (size_t)n * n * sizeof(double));
    for (int i = 0; i < nb; i++) { /* gyroscopic blocks J + h/2 D(w_i) */
        double D[9];
        lf_gyro_jac(Jall + 3 * i, w + 3 * i, D);
        for (int r = 0; r < 3; r++)
            for (int q = 0; q < 3; q++)
                Jac[(size_t)(3 * i + r) * n + 3 * i + q] = 0.5 * h * D[3 * r + q] + (r == q ? Jall[3 * i + r] : 0);
    }
    /* torque part: -h/2 K_ij (h/2) dcay(-x_j), K from the potential or by forward differences in the
     * left trivialization */
    const double eps = sqrt(DBL_EPSILON);
    memcpy(c->Gp, c->G, 9 * (size_t)nb * sizeof(double));
    if (c->K && (rc = lf_stepper_torque_jacobian(s, c->G, c->K)) != LF_OK) return rc;
    for (int j = 0; j < nb; j++) {
        for (int m = 0; m < 3 && c->K; m++)
            for (int r = 0; r < n; r++) c->Kc[3 * r + m] = c->K[(size_t)r * n + 3 * j + m];
        for (int m = 0; m < 3 && !c->K; m++) {
            double e[3] = {0, 0, 0}, E[9];
            e[m] = eps;
            lf_so3_exp(e, E);
            lf_m3_mul(c->G + 9 * j, E, c->Gp + 9 * j);
            rc = lf_stepper_torque(s, c->Gp, c->taup);
            if (rc != LF_OK) return rc;
            for (int r = 0; r < n; r++) c->Kc[3 * r + m] = (c->taup[r] - c->tauG[r]) / eps;
        }
        memcpy(c->Gp + 9 * j, c->G + 9 * j, 9 * sizeof(double));
        double x[3], Dc[9];
        lf_v3_add(c->wk + 3 * j, w + 3 * j, x);
        lf_v3_scale(x, -0.5 * h, x); /* -x_j */
        lf_so3_dcay(x, Dc);
        for (int r = 0; r < n; r++)
            for (int q = 0; q < 3; q++) {
                double v = c->Kc[3 * r] * Dc[q] + c->Kc[3 * r + 1] * Dc[3 + q] + c->Kc[3 * r + 2] * Dc[6 + q];
                Jac[(size_t)r * n + 3 * j + q] -= 0.25 * h * h * v;
            }
    }
    return LF_OK;
}

static size_t tln_work(const lf_stepper *s_)
{
    const int nb = s_->nb;
    size_t n = 3 * (size_t)nb;
    /* wk, b, x | G, Gp | tauG, taup | Kc | K (with an analytic torque Jacobian) | newton */
    return 3 * n + 2 * 9 * (size_t)nb + 2 * n + 3 * n + (lf_stepper_has_torque_jacobian(s_) ? n * n : 0) +
           lf_newton_work_size(3 * nb);
}

static int tln_step(lf_stepper *s, double h)
{
    const int nb = s->nb, n = 3 * nb;
    const double *Jall = s->J, *tau0;
    int rc = lf_stepper_torque_start(s, &tau0);
    if (rc != LF_OK) return rc;
    lf_translate_kick(s, 0.5 * h, s->force); /* translating bodies: velocity Verlet, x_{k+1} before Newton */
    lf_translate_drift(s, h);
    double *p = s->work;
    double *wk = p, *b = p + n, *x = p + 2 * n;
    p += 3 * n;
    tln_ctx c = {.s = s, .h = h, .wk = wk, .b = b};
    c.G = p; p += 9 * nb;
    c.Gp = p; p += 9 * nb;
    c.tauG = p; p += n;
    c.taup = p; p += n;
    c.Kc = p; p += 3 * n;
    c.K = NULL;
    if (lf_stepper_has_torque_jacobian(s)) {
        c.K = p;
        p += (size_t)n * n;
    }
    double *nwork = p;

    memcpy(wk, s->w, (size_t)n * sizeof(double));
    for (int i = 0; i < nb; i++) {
        const double *J = Jall + 3 * i, *wi = wk + 3 * i, *t0 = tau0 + 3 * i;
        double Jw[3], cr[3], a[3];
        lf_v3_mul(J, wi, Jw);
        lf_v3_cross(wi, Jw, cr);
        for (int k = 0; k < 3; k++) b[3 * i + k] = Jw[k] - 0.5 * h * cr[k] + 0.5 * h * t0[k];
        /* predictor: explicit Euler  w_k + h J^{-1}(J w_k x w_k + tau_k) */
        for (int k = 0; k < 3; k++) a[k] = (-cr[k] + t0[k]) / J[k];
        lf_v3_axpy(wi, h, a, x + 3 * i);
    }
    rc = lf_stepper_newton(s, tln_residual, &c, n, x, 1, nwork);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < nb; i++) { /* (4.3b) from the converged w_{k+1} */
        double xm[3];
        lf_v3_add(wk + 3 * i, x + 3 * i, xm);
        lf_v3_scale(xm, 0.5 * h, xm);
        lf_so3_rmul_cay(s->R + 9 * i, xm);
    }
    memcpy(s->w, x, (size_t)n * sizeof(double));
    /* The cached tau(R_k) is stale now; the torque at the new R (needed by the next step anyway) is
     * evaluated afresh, not taken from Newton's last residual (which was at the previous iterate). */
    rc = lf_stepper_torque(s, s->R, c.tauG);
    if (rc != LF_OK) return rc;
    lf_translate_kick(s, 0.5 * h, s->force_eval);
    lf_stepper_cache_torque(s, c.tauG);
    return LF_OK;
}

const lf_method_class lf_class_tln = {.work_doubles = tln_work, .step = tln_step};
