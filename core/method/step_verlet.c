/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — variational Lie-Verlet integrator (Bou-Rabee & Marsden, Hamilton-Pontryagin, Cayley map).
 *
 *   vlv   [BOS] eqs. (8)-(10) = thesis ([O]) eqs. (4.11a)-(4.11c)
 *
 *   (8)  W_{k+1/2} = W_k + h/2 J^{-1} [J W_{k+1/2} x W_{k+1/2} - h/2 (W_{k+1/2}^T J W_{k+1/2}) W_{k+1/2} + tau(Q_k)]
 *   (9)  Q_{k+1}   = Q_k cay(h W_{k+1/2})
 *   (10) W_{k+1}   = W_{k+1/2} + h/2 J^{-1} [J W_{k+1/2} x W_{k+1/2} + h/2 (W_{k+1/2}^T J W_{k+1/2}) W_{k+1/2} + tau(Q_{k+1})]
 *
 * With x = h W_{k+1/2} and the right-trivialized dcayinv(x) = I - x^/2 + x x^T/4 (so3.h), (8) reads
 * dcayinv(x)^T J W_{k+1/2} = J W_k + h/2 tau(Q_k) and (10) reads J W_{k+1} = dcayinv(x) J W_{k+1/2}
 * + h/2 tau(Q_{k+1}): the left/right-trivialized Cayley momenta of the Hamilton-Pontryagin scheme,
 * which is why the method conserves the spatial momentum of the free body (measured to round-off).
 * Only (8) is implicit, in W_{k+1/2} and not in the torque. We solve it times J,
 *   g(W) = J W - h/2 (J W x W) + h^2/4 (W^T J W) W - (J W_k + h/2 tau(Q_k)) = 0,
 * by Newton with the analytic Jacobian
 *   J + h/2 D(W) + h^2/4 [(W^T J W) I + 2 W (J W)^T],   D(W) = d(W x J W)/dW = hat(W) J - hat(J W),
 * from the explicit predictor W_k + h/2 J^{-1}(J W_k x W_k + tau(Q_k)) (error O(h^2)).
 *
 * Typos found in the thesis' Newton function for (4.11a) (§4.1.7) and how they were resolved:
 *  - it prints f(w) = -w + w_{k+1/2} + h/2 [(J w) x w - h/2 (w^T J w) w + tau(R)]: the constant term must
 *    be w_k (not w_{k+1/2}, which is the unknown), the bracket lacks its factor J^{-1}, and tau(R) is
 *    tau(R_k). Its Jacobian J_f = -I + h/2 J^{-1}[(J w)^ - w^ J - h xi w^T J - h/2 (w^T J w) I] has a
 *    garbled "xi" that must be w (d/dw (w^T J w) w = (w^T J w) I + 2 w w^T J); with that reading it is
 *    -J^{-1} times our Jacobian above.
 *  - [BOS] eq. (7): |x| must be |x|^2 in the Cayley map (lf_so3_cay has the correct form).
 *
 * Bodies that translate: the discrete Lagrangian gains h m/2 |(x_{k+1} - x_k)/h|^2 and the potential
 * becomes the trapezoidal -h/2 (U(x_k, Q_k) + U(x_{k+1}, Q_{k+1})); its discrete Euler-Lagrange
 * equations in x are velocity Verlet, v_{k+1/2} = v_k + h/2 F_k/m, x_{k+1} = x_k + h v_{k+1/2},
 * v_{k+1} = v_{k+1/2} + h/2 F_{k+1}/m, with the torques of (8) and (10) at (x_k, Q_k) and
 * (x_{k+1}, Q_{k+1}): the method stays variational (symplectic, and conserving the total linear and
 * angular momenta of an invariant potential). */
#include <math.h>

#include "base/linalg.h"
#include "method/method_internal.h"
#include "method/newton3_internal.h"
#include "lie/so3.h"
#include "lie/so3_kernels_internal.h"

/* g(W) of eq. (8) times J (see above) for the right-hand side c = J W_k + h/2 tau(Q_k), and its
 * Jacobian A = J + h/2 (hat(W) J - hat(J W)) + h^2/4 [(W.JW) I + 2 W (JW)^T]. */
LF_ALWAYS_INLINE void vlv_residual(const void *ctx, const double *W, double *r, double *A)
{
    const lf_body_eq *q = ctx;
    const double *J = q->J, h = q->h, hh = 0.5 * h, h2 = 0.25 * h * h;
    double JW[3], cr[3];
    lf_v3_mul(J, W, JW);
    lf_v3_cross(JW, W, cr);
    const double e = h2 * lf_v3_dot(W, JW), f = 2 * h2;
    for (int k = 0; k < 3; k++) r[k] = JW[k] - hh * cr[k] + e * W[k] - q->c[k];
    A[0] = J[0] + e + f * W[0] * JW[0];
    A[1] = hh * W[2] * (J[2] - J[1]) + f * W[0] * JW[1];
    A[2] = hh * W[1] * (J[2] - J[1]) + f * W[0] * JW[2];
    A[3] = hh * W[2] * (J[0] - J[2]) + f * W[1] * JW[0];
    A[4] = J[1] + e + f * W[1] * JW[1];
    A[5] = hh * W[0] * (J[0] - J[2]) + f * W[1] * JW[2];
    A[6] = hh * W[1] * (J[1] - J[0]) + f * W[2] * JW[0];
    A[7] = hh * W[0] * (J[1] - J[0]) + f * W[2] * JW[1];
    A[8] = J[2] + e + f * W[2] * JW[2];
}

static size_t vlv_work(const lf_stepper *s_)
{
    const size_t nb = (size_t)s_->nb, B = (size_t)s_->lanes;
    return 3 * nb * B + (B > 1 ? 4 * B : 0); /* tau1; with lanes also c and Newton flags */
}

/* (9): R <- R cay(h W_{k+1/2}) */
LF_ALWAYS_INLINE void vlv_drift(const double *W, double *R, double h)
{
    double x[3];
    lf_v3_scale(W, h, x);
    lf_so3_rmul_cay_kernel(R, x);
}

/* (10), explicit: W <- W_{k+1/2} + h/2 J^{-1} [J W x W + h/2 (W^T J W) W + tau(Q_{k+1})] */
LF_ALWAYS_INLINE void vlv_kick(const double *J, double *W, const double *tau1, double h)
{
    double JW[3], cr[3], a[3];
    lf_v3_mul(J, W, JW);
    lf_v3_cross(JW, W, cr);
    const double q = 0.25 * h * h * lf_v3_dot(W, JW);
    for (int k = 0; k < 3; k++) a[k] = 0.5 * h * (cr[k] + tau1[k]) + q * W[k];
    lf_v3_div(a, J, a);
    lf_v3_add(W, a, W);
}

static int vlv_step(lf_stepper *s, double h)
{
    const int nb = s->nb;
    const double *Jall = s->J, *tau0;
    double *tau1 = s->work;
    int rc = lf_stepper_torque_start(s, &tau0);
    if (rc == LF_OK) rc = lf_forced_explicit(s, s->t, 0.5 * h, s->w, 0); /* a forcing: its share at the start */
    if (rc != LF_OK) return rc;
    lf_translate_kick(s, 0.5 * h, s->force); /* translating bodies: velocity Verlet on (x, v) */
    lf_translate_drift(s, h);
    lf_forced_moved(s);
    for (int i = 0; i < nb; i++) {
        const double *J = Jall + 3 * i;
        double *W = s->w + 3 * i, c[3];
        lf_half_kick(J, W, tau0 + 3 * i, h, c); /* (8) before Newton: c = J W_k + h/2 tau(Q_k), predictor */
        lf_body_eq q = {J, c, h};
        rc = lf_newton3(s, vlv_residual, &q, W, "eq. (8)", "", i);
        if (rc != LF_OK) return rc;
        vlv_drift(W, s->R + 9 * i, h);
    }
    rc = lf_stepper_torque(s, s->R, tau1);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < nb; i++) vlv_kick(Jall + 3 * i, s->w + 3 * i, tau1 + 3 * i, h);
    lf_translate_kick(s, 0.5 * h, s->force_eval);
    if ((rc = lf_forced_implicit(s, s->t + h, 0.5 * h, s->w, 0)) != LF_OK) return rc; /* and at the end */
    lf_stepper_cache_torque(s, tau1);
    return LF_OK;
}

/* Lanes (method.h): the same step on every lane, each phase a vectorized loop over the lanes. */
LF_LANE_LOOPS static int vlv_lanes_step(lf_stepper *s, double h)
{
    const int B = s->lanes;
    const double *J = s->J, *tau0;
    double *restrict tau1 = s->work, *restrict C = tau1 + 3 * B, *restrict flag = C + 3 * B;
    double *restrict Ws = s->w, *restrict Rs = s->R;
    int rc = lf_stepper_torque_start(s, &tau0);
    if (rc != LF_OK) return rc;
    lf_translate_kick(s, 0.5 * h, s->force);
    lf_translate_drift(s, h);
    lf_lanes_predict(B, lf_half_kick, J, Ws, tau0, h, C);
    rc = lf_newton3_lanes(s, vlv_residual, J, C, h, Ws, flag, "eq. (8)", "");
    if (rc != LF_OK) return rc;
    LF_LANES_INDEPENDENT
    for (int j = 0; j < B; j++) {
        double W[3], R[9];
        lf_lane_get(3, Ws, B, j, W);
        lf_lane_get(9, Rs, B, j, R);
        vlv_drift(W, R, h);
        lf_lane_put(9, R, Rs, B, j);
    }
    rc = lf_stepper_torque(s, Rs, tau1);
    if (rc != LF_OK) return rc;
    lf_lanes_kick(B, vlv_kick, J, Ws, tau1, h);
    lf_translate_kick(s, 0.5 * h, s->force_eval);
    lf_stepper_cache_torque(s, tau1);
    return LF_OK;
}

const lf_method_class lf_class_vlv = {.work_doubles = vlv_work, .lanes_step = vlv_lanes_step, .step = vlv_step};
