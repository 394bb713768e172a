/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — partitioned Runge–Kutta–Munthe-Kaas method PRK (Nukala–Shelton [NJ07] as given in
 * Ortolan's thesis, [O] §4.1.4, eqs. (4.8a)-(4.8c)).
 *
 * Family: partitioned RKMK, 2-stage Lobatto IIIA for the attitude (in the Lie algebra) and 2-stage
 * Lobatto IIIB for the angular velocity. With IIIB (A = [1/2 0; 1/2 0]) both omega stages are equal
 * (= omega_{k+1/2}) and the IIIA stage values are Theta_1 = 0, Theta_2 = h/2 (dexpinv_{-Theta_1} w_1 +
 * dexpinv_{-Theta_2} w_2); since Theta_2 is parallel to w_{k+1/2}, dexpinv acts as the identity and
 * Theta_2 = h w_{k+1/2} exactly. The thesis then uses the Cayley map as the coordinate map (as for ELN,
 * TLN), without any dcayinv correction, which gives (4.8):
 *   J w_{k+1/2} = J w_k + h/2 (tau(R_k) - w_{k+1/2} x J w_{k+1/2})            (4.8a)  implicit in w only
 *   R_{k+1}     = R_k cay(h w_{k+1/2})                                        (4.8b)
 *   J w_{k+1}   = J w_{k+1/2} + h/2 (tau(R_{k+1}) - w_{k+1/2} x J w_{k+1/2})   (4.8c)  explicit
 * (The thesis prints the Butcher tableaus as missing text after "are, respectively, given by"; the
 * method above is what the Lobatto IIIA–IIIB pair gives and is exactly the printed (4.8).)
 * Note: (4.8a)/(4.8c) give J w_{k+1} = cay(-h w_{k+1/2}) (J w_k + h/2 tau_k) + h/2 tau_{k+1}, because
 * (I - h/2 hat w)(I + h/2 hat w)^{-1} = cay(-h w); with (4.8b) the spatial momentum R J w changes by
 * h/2 (R_k tau_k + R_{k+1} tau_{k+1}) only, so it is exactly conserved for the free body. A dcayinv-
 * corrected RKMK (Theta_2 = c w, c = h (1 + c^2 |w|^2 / 8)) would lose this; we follow the thesis.
 * The method is symmetric (step h then -h returns), explicit in the torque, one torque evaluation
 * per step (FSAL). The thesis' stress test (§4.2) shows a negative energy drift: not symplectic
 * (the corresponding PRK on vector spaces is symplectic [Jay96], the Lie group version is not).
 *
 * Newton for (4.8a), per body, unknown w = w_{k+1/2} (momentum form of the thesis' ELN residual):
 *   F(w) = J w + h/2 w x J w - (J w_k + h/2 tau_k),   dF/dw = J + h/2 (hat(w) J - hat(J w)),
 * the gyroscopic equation eln solves too (lf_gyro_residual), by the inline 3x3 Newton. */
#include <stddef.h>

#include "base/linalg.h"
#include "method/method_internal.h"
#include "method/newton3_internal.h"
#include "lie/so3.h"
#include "lie/so3_kernels_internal.h"

/* (4.8a) times nothing: J w + h/2 w x J w = mu is the gyroscopic equation lf_gyro_residual of
 * newton3_internal.h (J w - h/2 (J w x w) - mu), solved by the inline 3x3 Newton. */

static size_t prk_work(const lf_stepper *s_) { return 3 * (size_t)s_->nb; }

static int prk_step(lf_stepper *s, double h)
{
    const int nb = s->nb;
    const double *Jall = s->J;
    double *tau1 = s->work;
    const double *tau0;
    int rc = lf_stepper_torque_start(s, &tau0);
    if (rc != LF_OK) return rc;
    lf_translate_kick(s, 0.5 * h, s->force); /* translating bodies: Lobatto IIIA-IIIB on (x, v) is velocity Verlet */
    lf_translate_drift(s, h);

    for (int b = 0; b < nb; b++) {
        double *R = s->R + 9 * b, *w = s->w + 3 * b;
        const double *J = Jall + 3 * b;
        double Jw[3], g[3], x[3], mu[3];
        lf_v3_mul(J, w, Jw);
        lf_v3_axpy(Jw, 0.5 * h, tau0 + 3 * b, mu);               /* mu = J w_k + h/2 tau_k */
        lf_v3_cross(w, Jw, g);                                    /* predictor: explicit (4.8a) */
        lf_v3_axpy(mu, -0.5 * h, g, x);
        lf_v3_div(x, J, x);
        lf_body_eq q = {J, mu, h};
        rc = lf_newton3(s, lf_gyro_residual, &q, x, "eq. (4.8a)", "", b);
        if (rc != LF_OK) return rc;
        lf_v3_copy(x, w);                                          /* w now holds w_{k+1/2} */
        lf_v3_scale(x, h, x);
        lf_so3_rmul_cay_kernel(R, x);                              /* (4.8b) */
    }
    rc = lf_stepper_torque(s, s->R, tau1);
    if (rc != LF_OK) return rc;
    for (int b = 0; b < nb; b++) {                                 /* (4.8c) */
        const double *J = Jall + 3 * b;
        double *w = s->w + 3 * b, Jw[3], g[3];
        lf_v3_mul(J, w, Jw);
        lf_v3_cross(w, Jw, g);
        lf_v3_sub(tau1 + 3 * b, g, g);
        lf_v3_axpy(Jw, 0.5 * h, g, Jw);
        lf_v3_div(Jw, J, w);
    }
    lf_translate_kick(s, 0.5 * h, s->force_eval);
    lf_stepper_cache_torque(s, tau1);
    return LF_OK;
}

const lf_method_class lf_class_prk = {.work_doubles = prk_work, .step = prk_step};
