/* lieflow — Lie group variational integrator of Lee, Leok & McClamroch (discrete Moser-Veselov /
 * RATTLE form of the rigid body with torque), as stated in our issue:
 *
 *   (a)  h hat(Pi_k) + h^2/2 hat(T_k) = F J_d - J_d F^T,    J_d = 1/2 tr(J) I - J
 *   (b)  R_{k+1} = R_k F
 *   (c)  Pi_{k+1} = F^T Pi_k + h/2 F^T T_k + h/2 T_{k+1}
 *
 * with Pi = J w the body momentum and T = tau the body torque (left trivialization, DESIGN §2; this
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
 * Only (a) is implicit and not in the torque: T_{k+1} is explicit once R_{k+1} is known. */
#include <math.h>

#include "linalg.h"
#include "method_internal.h"
#include "newton3_internal.h"
#include "so3.h"

typedef struct {
    const double *J, *g;
} lgvi_eq;

/* r(x) = J x + 1/2 x x J x - (1 + |x|^2/4) g and A = J + 1/2 (hat(x) J - hat(J x)) - 1/2 g x^T. */
LF_ALWAYS_INLINE void lgvi_residual(const void *ctx, const double *x, double *r, double *A)
{
    const lgvi_eq *q = ctx;
    const double *J = q->J, *g = q->g;
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
    const int nb = s_->nb;
    return 3 * (size_t)nb;
}

static int lgvi_step(lf_stepper *s, double h)
{
    const int nb = s->nb;
    const double *Jall = s->J, *T0;
    double *T1 = s->work;
    int rc = lf_stepper_torque_start(s, &T0);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < nb; i++) {
        const double *J = Jall + 3 * i;
        double *w = s->w + 3 * i, *R = s->R + 9 * i, p[3], g[3], x[3], Jx[3], cr[3], F[9];
        /* p = Pi_k + h/2 T_k,  g = h p */
        lf_v3_mul(J, w, p);
        lf_v3_axpy(p, 0.5 * h, T0 + 3 * i, p);
        lf_v3_scale(p, h, g);
        /* predictor */
        lf_v3_div(g, J, x);
        lf_v3_mul(J, x, Jx);
        lf_v3_cross(x, Jx, cr);
        const double q = 1 + 0.25 * lf_v3_dot(x, x);
        for (int k = 0; k < 3; k++) x[k] = (q * g[k] - 0.5 * cr[k]) / J[k];
        lgvi_eq eq = {J, g};
        rc = lf_newton3(s, lgvi_residual, &eq, x, "the Cayley parameter equation", lgvi_hint, i);
        if (rc != LF_OK) return rc;
        lf_so3_rmul_cay(R, x); /* (b) */
        lf_so3_cay(x, F);
        lf_m3_tapply(F, p, w); /* w holds F^T (Pi_k + h/2 T_k) until T_{k+1} is known */
    }
    rc = lf_stepper_torque(s, s->R, T1);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < nb; i++) { /* (c), then w = J^{-1} Pi_{k+1} */
        double *w = s->w + 3 * i;
        lf_v3_axpy(w, 0.5 * h, T1 + 3 * i, w);
        lf_v3_div(w, Jall + 3 * i, w);
    }
    lf_stepper_cache_torque(s, T1);
    return LF_OK;
}

const lf_method lf_method_lgvi = {
    .info = {
        .name = "lgvi",
        .title = "Lie group variational integrator (Lee-Leok-McClamroch, Cayley solve)",
        .reference = "Lee, Leok & McClamroch (2005/2007) as given in the lgvi issue",
        .order = 2,
        .symmetric = 1,
        .symplectic = "proved",
        .explicit_in_torque = 1,
        .momentum_conserving = 1,
        .family = "rigid",
        .form = LF_FORM_RIGID,
        .implicit = 1,
    },
    .work_doubles = lgvi_work,
    .step = lgvi_step,
};
