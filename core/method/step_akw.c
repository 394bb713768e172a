/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — AKW: the implicit midpoint rule of Austin, Krishnaprasad and Wang ("almost Lie-Poisson"
 * integrator) as summarized in [K], Appendix, algorithm AKW:
 *     J w_n = J w_{n-1} - h wbar x J wbar + h/2 (T_n + T_{n-1}),   wbar = (w_n + w_{n-1})/2,
 *     R_n   = R_{n-1} cay(h wbar),                                 T_n = tau(R_n).
 * Interpretation: the paper prints "I Omega_n = I Omega_{n-1} - Omega~ I Omega-bar + dt/2 (T_n + T_{n-1})"
 * and "R_n = R_{n-1} cay[dt Omega~]" (garbled): the gyroscopic term needs the factor dt (dimension) and is
 * the midpoint value -dt wbar x J wbar (midpoint rule of J w' = J w x w + tau), and the Cayley argument is
 * dt wbar. With these the method is symmetric (cay(-x) = cay(x)^{-1}), and for the free body it conserves
 * the spatial momentum exactly: with x = h wbar, (I + hat(x)/2) J w_n = (I - hat(x)/2) J w_{n-1}, i.e.
 * cay(x) J w_n = J w_{n-1}, so R_n J w_n = R_{n-1} J w_{n-1} (cay as in so3.h,
 * (I - hat x/2)^{-1}(I + hat x/2)). With torque, R_n J w_n - R_{n-1} J w_{n-1}
 * = R_{n-1}(I - hat(x)/2)^{-1} h/2 (T_n + T_{n-1}): projections of the momentum on axes orthogonal to the
 * spatial torque are not conserved exactly ([K] §3.7, Fig. 17).
 * Solved by Newton on the stacked midpoint velocity wbar (3 nb; the torque couples the bodies),
 *     F(wbar) = J (wbar - w_{n-1}) + h/2 wbar x J wbar - h/4 (tau(R_{n-1} cay(h wbar)) + T_{n-1}),
 * with the analytic Jacobian when the potential supplies the torque Jacobian (compiled potentials),
 * else a finite-difference one, explicit predictor wbar = w + h/2 J^{-1}(J w x w + T_{n-1}).
 * The torque at the new attitude is T_{n} of the next step: cached (FSAL). */
#include <stddef.h>
#include <string.h>

#include "base/linalg.h"
#include "method/method_internal.h"
#include "method/newton3_internal.h"
#include "lie/so3.h"

typedef struct {
    lf_stepper *s;
    double h;
    const double *tau0;
    double *R1, *tau1; /* attitudes R_{n-1} cay(h wbar) (9 nb) and their torques (3 nb) */
    double *K;         /* the torque Jacobian (3nb x 3nb) when the potential has one, else NULL */
} akw_ctx;

static int akw_end(akw_ctx *k, const double *wbar, double *R1)
{
    for (int b = 0; b < k->s->nb; b++) {
        double x[3];
        lf_v3_scale(wbar + 3 * b, k->h, x);
        if (R1 != k->s->R) lf_m3_copy(k->s->R + 9 * b, R1 + 9 * b);
        lf_so3_rmul_cay(R1 + 9 * b, x);
    }
    return LF_OK;
}

/* With the potential's torque Jacobian K: dF/dwbar = diag(J) + h/2 D(wbar) - h/4 K h dcay(-h wbar)
 * (D = d(w x J w)/dw; R_{n-1} cay(x) moves by R_{n-1} cay(x) hat(dcay(-x) x') in the left
 * trivialization). */
static int akw_jacobian(akw_ctx *k, const double *wbar, double *Jac)
{
    lf_stepper *s = k->s;
    const int nb = s->nb, n = 3 * nb;
    const double h = k->h;
    int rc = lf_stepper_torque_jacobian(s, k->R1, k->K);
    if (rc != LF_OK) return rc;
    memset(Jac, 0, (size_t)n * n * sizeof *Jac);
    for (int j = 0; j < nb; j++) {
        double x[3], Dc[9], D[9];
        lf_v3_scale(wbar + 3 * j, -h, x);
        lf_so3_dcay(x, Dc);
        lf_gyro_jac(s->J + 3 * j, wbar + 3 * j, D);
        for (int r = 0; r < 3; r++)
            for (int q = 0; q < 3; q++)
                Jac[(size_t)(3 * j + r) * n + 3 * j + q] = 0.5 * h * D[3 * r + q] + (r == q ? s->J[3 * j + r] : 0);
        lf_jac_add_torque(n, Jac, k->K, j, Dc, -0.25 * h * h);
    }
    return LF_OK;
}

static int akw_residual(void *ctx, const double *wbar, double *F, double *Jac, lf_error *err)
{
    (void)err;
    akw_ctx *k = ctx;
    akw_end(k, wbar, k->R1);
    int rc = lf_stepper_torque(k->s, k->R1, k->tau1);
    if (rc != LF_OK) return rc;
    for (int b = 0; b < k->s->nb; b++) {
        const double *J = k->s->J + 3 * b, *wb = wbar + 3 * b, *w0 = k->s->w + 3 * b;
        double Jw[3], g[3];
        lf_v3_mul(J, wb, Jw);
        lf_v3_cross(wb, Jw, g);
        for (int i = 0; i < 3; i++)
            F[3 * b + i] = J[i] * (wb[i] - w0[i]) + 0.5 * k->h * g[i]
                           - 0.25 * k->h * (k->tau1[3 * b + i] + k->tau0[3 * b + i]);
    }
    return Jac ? akw_jacobian(k, wbar, Jac) : LF_OK;
}

static size_t akw_work(const lf_stepper *s_)
{
    const int nb = s_->nb;
    const size_t n = 3 * (size_t)nb;
    return lf_newton_work_size(3 * nb) + n + 9 * (size_t)nb + n + (lf_stepper_has_torque_jacobian(s_) ? n * n : 0);
}

static int akw_step(lf_stepper *s, double h)
{
    const int nb = s->nb;
    double *nwork = s->work, *wbar = nwork + lf_newton_work_size(3 * nb), *R1 = wbar + 3 * nb, *tau1 = R1 + 9 * nb;
    const double *tau0;
    int rc = lf_stepper_torque_start(s, &tau0);
    if (rc != LF_OK) return rc;
    for (int b = 0; b < nb; b++) { /* predictor: half an explicit Euler step */
        const double *J = s->J + 3 * b, *w = s->w + 3 * b;
        double Jw[3], g[3];
        lf_v3_mul(J, w, Jw);
        lf_v3_cross(Jw, w, g);
        for (int i = 0; i < 3; i++) wbar[3 * b + i] = w[i] + 0.5 * h * (g[i] + tau0[3 * b + i]) / J[i];
    }
    const int analytic = lf_stepper_has_torque_jacobian(s);
    akw_ctx k = {s, h, tau0, R1, tau1, analytic ? tau1 + 3 * nb : NULL};
    rc = lf_stepper_newton(s, akw_residual, &k, 3 * nb, wbar, analytic, nwork);
    if (rc != LF_OK) return rc;
    akw_end(&k, wbar, s->R);                          /* R_n = R_{n-1} cay(h wbar) */
    for (int i = 0; i < 3 * nb; i++) s->w[i] = 2 * wbar[i] - s->w[i];
    rc = lf_stepper_torque(s, s->R, s->tau);          /* T_n, the next step's T_{n-1} */
    if (rc != LF_OK) return rc;
    lf_stepper_cache_torque(s, s->tau);
    return LF_OK;
}

/* A consistent translation would be the midpoint rule on (x, v) inside the Newton iteration, its forces
 * at the midpoint configuration: not implemented. */
const lf_method_class lf_class_akw = {
    .work_doubles = akw_work,
    .step = akw_step,
    .why_no_translation = "its torque is taken at the midpoint attitude inside its Newton iteration, where the "
                          "translation would be the midpoint rule on (x, v) (not implemented)"};
