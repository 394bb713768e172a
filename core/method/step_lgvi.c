/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — Lie group variational integrator of Lee, Leok & McClamroch (discrete Moser-Veselov /
 * RATTLE form of the rigid body with torque), as stated in our issue:
 *
 *   (a)  h hat(Pi_k) + h^2/2 hat(T_k) = F J_d - J_d F^T,    J_d = 1/2 tr(J) I - J
 *   (b)  R_{k+1} = R_k F
 *   (c)  Pi_{k+1} = F^T Pi_k + h/2 F^T T_k + h/2 T_{k+1}
 *
 * with Pi = J w the body momentum and T = tau the body torque (left trivialization, as everywhere in lieflow; this
 * sign makes the scheme consistent with J w' = J w x w + tau, checked by its measured order 2).
 * It derives from the discrete Lagrangian L_d = (1/h) tr((I - F) J_d) - h/2 (U(R_k) + U(R_{k+1})),
 * which is invariant under (R_k, R_{k+1}, h) -> (R_{k+1}, R_k, -h): symmetric, symplectic and, for the
 * free body, conserving R Pi exactly (R_{k+1} Pi_{k+1} = R_k F F^T Pi_k).
 *
 * Solving (a): write F = cay(x) = I + a X + b X^2, X = hat(x), a = 4/(4+|x|^2), b = 2/(4+|x|^2).
 * F^T = I - a X + b X^2, so F J_d - J_d F^T = a (X J_d + J_d X) + b (X^2 J_d - J_d X^2), and
 *   vee(X J_d + J_d X) = (tr(J_d) I - J_d) x = J x,
 *   X^2 J_d - J_d X^2 = x (J_d x)^T - (J_d x) x^T = hat(cross(J_d x, x)),  cross(J_d x, x) = cross(x, J x)
 * (X^2 = x x^T - |x|^2 I, hat(cross(u, v)) = v u^T - u v^T). Hence
 *   vee(F J_d - J_d F^T) = (4 J x + 2 cross(x, J x)) / (4 + |x|^2),
 * and with g = h Pi_k + h^2/2 T_k, (a) is the quadratic 3-vector equation
 *   r(x) = J x + 1/2 cross(x, J x) - (1 + |x|^2/4) g = 0,
 *   dr/dx = J + 1/2 (hat(x) J - hat(J x)) - 1/2 g x^T,
 * solved by Newton from the predictor x1 = J^{-1} g, x0 = J^{-1}((1 + |x1|^2/4) g - 1/2 cross(x1, J x1))
 * (one fixed-point sweep, error O(h^3)). The solution near 0 is the one with F near I (angle ~ h|w|).
 * Only (a) is implicit and not in the torque: T_{k+1} is explicit once R_{k+1} is known.
 *
 * Bodies that translate: the LGVI of the full body problem (Lee, Leok & McClamroch 2007, eqs.
 * (52)-(55) for two bodies), whose discrete Lagrangian adds h m/2 |(x_{k+1} - x_k)/h|^2 and takes the
 * potential U(x, R) at both ends: velocity Verlet on (x, v), v_{k+1/2} = v_k + h/2 F_k/m,
 * x_{k+1} = x_k + h v_{k+1/2}, v_{k+1} = v_{k+1/2} + h/2 F_{k+1}/m, with T_k and T_{k+1} at (x_k, R_k)
 * and (x_{k+1}, R_{k+1}). */
#include <math.h>

#include "base/linalg.h"
#include "method/method_internal.h"
#include "method/newton3_internal.h"
#include "lie/so3.h"
#include "lie/so3_kernels_internal.h"

/* r(x) = J x + 1/2 x x J x - (1 + |x|^2/4) g and A = J + 1/2 (hat(x) J - hat(J x)) - 1/2 g x^T. */
LF_ALWAYS_INLINE void lgvi_residual(const void *ctx, const double *x, double *r, double *A)
{
    const lf_body_eq *q = ctx; /* c = g, no h */
    const double *J = q->J, *g = q->c;
    double Jx[3], cr[3];
    lf_v3_mul(J, x, Jx);
    lf_v3_cross(x, Jx, cr);
    const double s = 1 + 0.25 * lf_v3_dot(x, x);
    for (int k = 0; k < 3; k++) r[k] = Jx[k] + 0.5 * cr[k] - s * g[k];
    A[0] = J[0] - 0.5 * g[0] * x[0];
    A[1] = 0.5 * x[2] * (J[2] - J[1]) - 0.5 * g[0] * x[1];
    A[2] = 0.5 * x[1] * (J[2] - J[1]) - 0.5 * g[0] * x[2];
    A[3] = 0.5 * x[2] * (J[0] - J[2]) - 0.5 * g[1] * x[0];
    A[4] = J[1] - 0.5 * g[1] * x[1];
    A[5] = 0.5 * x[0] * (J[0] - J[2]) - 0.5 * g[1] * x[2];
    A[6] = 0.5 * x[1] * (J[1] - J[0]) - 0.5 * g[2] * x[0];
    A[7] = 0.5 * x[0] * (J[1] - J[0]) - 0.5 * g[2] * x[1];
    A[8] = J[2] - 0.5 * g[2] * x[2];
}

/* (a) has no solution once h |Pi_k + h/2 T_k| is too large: for a spin about principal axis i its
 * range is J_i sin(angle), so h |w_i| > 1 admits no F (e.g. the slow top with h = 1/4). */
static const char lgvi_hint[] = "; F may not exist at this h (needs about h|w| < 1): reduce h";

static size_t lgvi_work(const lf_stepper *s_)
{
    const size_t nb = (size_t)s_->nb, B = (size_t)s_->lanes;
    return 3 * nb * B + (B > 1 ? 10 * B : 0); /* T1; with lanes also p, g, x and Newton flags */
}

/* One body's p = Pi_k + h/2 T_k, g = h p and the predictor x of (a). */
LF_ALWAYS_INLINE void lgvi_predict(const double *J, const double *w, const double *T0, double h, double *p, double *g,
                                   double *x)
{
    double Jx[3], cr[3];
    lf_v3_mul(J, w, p);
    lf_v3_axpy(p, 0.5 * h, T0, p);
    lf_v3_scale(p, h, g);
    lf_v3_div(g, J, x);
    lf_v3_mul(J, x, Jx);
    lf_v3_cross(x, Jx, cr);
    const double q = 1 + 0.25 * lf_v3_dot(x, x);
    for (int k = 0; k < 3; k++) x[k] = (q * g[k] - 0.5 * cr[k]) / J[k];
}

/* (b) R <- R cay(x) = R F, and w <- F^T (Pi_k + h/2 T_k) until T_{k+1} is known */
LF_ALWAYS_INLINE void lgvi_drift(const double *x, const double *p, double *R, double *w)
{
    double F[9];
    lf_so3_rmul_cay_kernel(R, x);
    lf_so3_cay_kernel(x, F);
    lf_m3_tapply(F, p, w);
}

/* (c), then w = J^{-1} Pi_{k+1} */
LF_ALWAYS_INLINE void lgvi_kick(const double *J, double *w, const double *T1, double h)
{
    lf_v3_axpy(w, 0.5 * h, T1, w);
    lf_v3_div(w, J, w);
}

static int lgvi_step(lf_stepper *s, double h)
{
    const int nb = s->nb;
    const double *Jall = s->J, *T0;
    double *T1 = s->work;
    int rc = lf_stepper_torque_start(s, &T0);
    if (rc == LF_OK) rc = lf_forced_explicit(s, s->t, 0.5 * h, s->w, 0); /* a forcing: its share at the start */
    if (rc != LF_OK) return rc;
    lf_translate_kick(s, 0.5 * h, s->force); /* translating bodies: the full body problem's LGVI */
    lf_translate_drift(s, h);
    lf_forced_moved(s);
    for (int i = 0; i < nb; i++) {
        const double *J = Jall + 3 * i;
        double *w = s->w + 3 * i, p[3], g[3], x[3];
        lgvi_predict(J, w, T0 + 3 * i, h, p, g, x);
        lf_body_eq eq = {J, g, h};
        rc = lf_newton3(s, lgvi_residual, &eq, x, "the Cayley parameter equation", lgvi_hint, i);
        if (rc != LF_OK) return rc;
        lgvi_drift(x, p, s->R + 9 * i, w);
    }
    rc = lf_stepper_torque(s, s->R, T1);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < nb; i++) lgvi_kick(Jall + 3 * i, s->w + 3 * i, T1 + 3 * i, h);
    lf_translate_kick(s, 0.5 * h, s->force_eval);
    if ((rc = lf_forced_implicit(s, s->t + h, 0.5 * h, s->w, 0)) != LF_OK) return rc; /* and at the end */
    lf_stepper_cache_torque(s, T1);
    return LF_OK;
}

/* Lanes (method.h): the same step on every lane, each phase a vectorized loop over the lanes. */
LF_LANE_LOOPS static int lgvi_lanes_step(lf_stepper *s, double h)
{
    const int B = s->lanes;
    const double *J = s->J, *T0;
    double *restrict T1 = s->work, *restrict P = T1 + 3 * B, *restrict G = P + 3 * B, *restrict X = G + 3 * B,
                     *restrict flag = X + 3 * B;
    double *restrict Ws = s->w, *restrict Rs = s->R;
    int rc = lf_stepper_torque_start(s, &T0);
    if (rc != LF_OK) return rc;
    lf_translate_kick(s, 0.5 * h, s->force);
    lf_translate_drift(s, h);
    LF_LANES_INDEPENDENT
    for (int j = 0; j < B; j++) {
        double w[3], t[3], p[3], g[3], x[3];
        lf_lane_get(3, Ws, B, j, w);
        lf_lane_get(3, T0, B, j, t);
        lgvi_predict(J, w, t, h, p, g, x);
        lf_lane_put(3, p, P, B, j);
        lf_lane_put(3, g, G, B, j);
        lf_lane_put(3, x, X, B, j);
    }
    rc = lf_newton3_lanes(s, lgvi_residual, J, G, h, X, flag, "the Cayley parameter equation", lgvi_hint);
    if (rc != LF_OK) return rc;
    LF_LANES_INDEPENDENT
    for (int j = 0; j < B; j++) {
        double x[3], p[3], R[9], w[3];
        lf_lane_get(3, X, B, j, x);
        lf_lane_get(3, P, B, j, p);
        lf_lane_get(9, Rs, B, j, R);
        lgvi_drift(x, p, R, w);
        lf_lane_put(9, R, Rs, B, j);
        lf_lane_put(3, w, Ws, B, j);
    }
    rc = lf_stepper_torque(s, Rs, T1);
    if (rc != LF_OK) return rc;
    lf_lanes_kick(B, lgvi_kick, J, Ws, T1, h);
    lf_translate_kick(s, 0.5 * h, s->force_eval);
    lf_stepper_cache_torque(s, T1);
    return LF_OK;
}

const lf_method_class lf_class_lgvi = {.work_doubles = lgvi_work, .lanes_step = lgvi_lanes_step, .step = lgvi_step};
