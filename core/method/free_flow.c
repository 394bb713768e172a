/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the exact torque-free flow of one body on (R, Pi) over a sub-step tau, as the splitting
 * methods use it (split_exact, its compositions; splitting_internal.h), and split_exact's step.
 *
 * Axisymmetric bodies (J_a = J_b = A, J_d = C exactly, (a, b, d) cyclic): T = |Pi|^2/(2A) +
 * (1/C - 1/A) Pi_d^2/2, two commuting parts (|Pi|^2 is a Casimir), so
 *     R <- R exp(tau hat(Pi)/A) exp(theta e_d^),   Pi <- exp(-theta e_d^) Pi,   theta = tau Pi_d (A - C)/(A C),
 * applied as one rotation R <- R + R (R(q) - I), q = q_x q_theta (Hamilton product): two sincos and
 * one increment, about 6x cheaper than the general evaluation.
 * Triaxial bodies: the closed form of exact.h (Jacobi elliptic functions and the third-kind integral).
 *
 * What depends on the body only (its symmetry axis d, or none, and (A - C)/(A C)) is found once, at
 * the stepper's first step, and kept in its workspace (lf_split_consts); the rotation is written
 * once per axis (axisym_flow, forced inline with d a constant), so the products of q_x q_theta that
 * vanish (e = s2 e_d) are not computed. The operations that remain are those of the general form, in
 * the same order: the iterates are bitwise those of the general form (and of the previous release). */
#include <math.h>

#include "solve/exact.h"
#include "base/linalg.h"
#include "method/splitting_internal.h"

#define LF_INLINE static inline __attribute__((always_inline))

/* R <- R exp(hat x) exp(theta e_d^), Pi <- exp(-theta e_d^) Pi, as one rotation (see the header) */
LF_INLINE void axisym_flow(double *R, double *Pi, const double *x, const int d, double theta)
{
    const double t2 = lf_v3_dot(x, x);
    double c1, s1; /* cos(t/2) and sin(t/2)/t, t = |x| (series below t = 1e-4: error < 1e-25) */
    if (t2 < 1e-8) {
        c1 = 1 - t2 / 8 * (1 - t2 / 48);
        s1 = 0.5 * (1 - t2 / 24 * (1 - t2 / 80));
    } else {
        const double t = sqrt(t2);
        c1 = cos(0.5 * t);
        s1 = sin(0.5 * t) / t;
    }
    const double c2 = cos(0.5 * theta), s2 = sin(0.5 * theta);
    /* q = (c1, s1 x) (c2, s2 e_d) = (w, qv): qv = c2 v + c1 s2 e_d + v x s2 e_d, v = s1 x */
    const double v[3] = {s1 * x[0], s1 * x[1], s1 * x[2]};
    const int i = (d + 1) % 3, j = (d + 2) % 3;
    double qv[3];
    qv[d] = c2 * v[d] + c1 * s2;
    qv[i] = c2 * v[i] + v[j] * s2; /* (v x e_d)_i = v_j for (i, j, d) cyclic */
    qv[j] = c2 * v[j] - v[i] * s2;
    const double w = c1 * c2 - v[d] * s2;
    const double qx = qv[0], qy = qv[1], qz = qv[2];
    const double M[9] = {-2 * (qy * qy + qz * qz), 2 * (qx * qy - w * qz),     2 * (qx * qz + w * qy),
                         2 * (qx * qy + w * qz),     -2 * (qx * qx + qz * qz), 2 * (qy * qz - w * qx),
                         2 * (qx * qz - w * qy),     2 * (qy * qz + w * qx),     -2 * (qx * qx + qy * qy)};
    for (int r = 0; r < 3; r++) {
        double *row = R + 3 * r, inc[3];
        for (int k = 0; k < 3; k++) inc[k] = row[0] * M[k] + row[1] * M[3 + k] + row[2] * M[6 + k];
        for (int k = 0; k < 3; k++) row[k] += inc[k];
    }
    const double sn = 2 * s2 * c2, cm1 = -2 * s2 * s2, a = Pi[i], b = Pi[j];
    Pi[i] = a + (cm1 * a + sn * b);
    Pi[j] = b + (cm1 * b - sn * a);
}

/* the axisymmetric flow about axis d (A = J_{d+1}, k = (A - C)/(A C), C = J_d) */
LF_INLINE void axisym_about(const double *J, double *R, double *Pi, const int d, double k, double tau)
{
    const double A = J[(d + 1) % 3];
    const double x[3] = {tau * Pi[0] / A, tau * Pi[1] / A, tau * Pi[2] / A};
    axisym_flow(R, Pi, x, d, tau * Pi[d] * k);
}

/* The body constants in the workspace after lf_split_run's 14 nb doubles: per body its axis code
 * (d = 0, 1, 2, or 3: triaxial) and k = (A - C)/(A C), then a flag (0 in the zeroed workspace of a
 * new stepper: not yet found). The inertias of a stepper's system do not change. */
static void find_consts(lf_stepper *s, double *fc)
{
    const int nb = s->nb;
    for (int b = 0; b < nb; b++) {
        const double *J = s->J + 3 * b;
        int d = 3;
        if (J[0] == J[1]) d = 2;
        else if (J[1] == J[2]) d = 0;
        else if (J[0] == J[2]) d = 1;
        fc[2 * b] = d;
        if (d < 3) {
            const double A = J[(d + 1) % 3], C = J[d];
            fc[2 * b + 1] = (A - C) / (A * C);
        } else fc[2 * b + 1] = 0;
    }
    fc[2 * nb] = 1;
}

LF_INLINE const double *consts(lf_stepper *s)
{
    double *fc = s->work + 14 * (size_t)s->nb;
    if (fc[2 * s->nb] == 0) find_consts(s, fc);
    return fc;
}

const double *lf_split_consts(lf_stepper *s) { return consts(s); }

/* the flow of body b (constants fc) over tau on its R and Pi */
LF_INLINE int flow(lf_stepper *s, const double *fc, int b, double *Pi, double tau)
{
    const double *J = s->J + 3 * b, k = fc[2 * b + 1];
    double *R = s->R + 9 * b;
    switch ((int)fc[2 * b]) {
    case 2: axisym_about(J, R, Pi, 2, k, tau); return LF_OK;
    case 0: axisym_about(J, R, Pi, 0, k, tau); return LF_OK;
    case 1: axisym_about(J, R, Pi, 1, k, tau); return LF_OK;
    default: {
        double w[3] = {Pi[0] / J[0], Pi[1] / J[1], Pi[2] / J[2]};
        int rc = lf_exact_free_body_flow(J, R, w, tau, R, w, &s->err);
        if (rc != LF_OK) return rc;
        lf_v3_mul(J, w, Pi);
        return LF_OK;
    }
    }
}

int lf_free_flow(lf_stepper *s, const double *fc, int b, double *Pi, double tau) { return flow(s, fc, b, Pi, tau); }

/* split_exact's step written out: kick h/2, free flow h, kick h/2 with the torque cached between
 * steps (translating bodies: the kicks of v by the forces and the free flight x += h v with them); the same operations as lf_split_run on this sequence (bitwise), without the queue of parts
 * (the runner took half of a step's time, bench/steppers.c). The torque at the start (tau0, the
 * cache) is used up before the new one is evaluated, so the new one goes to the cache directly (a
 * failed step restores the cache with the state: lf_stepper_step). */
/* split_exact's step with a forcing: the kicks are lf_forced_trapezoid's at t and t + h */
static int strang_exact_forced(lf_stepper *s, double h)
{
    const int nb = s->nb;
    const double *fc = consts(s), *tau0;
    double *Pi = s->work;
    int rc = lf_stepper_torque_start(s, &tau0);
    if (rc != LF_OK) return rc;
    for (int b = 0; b < nb; b++) lf_v3_mul(s->J + 3 * b, s->w + 3 * b, Pi + 3 * b);
    if ((rc = lf_forced_trapezoid(s, s->t, 0.5 * h, Pi, tau0, s->force)) != LF_OK) return rc;
    lf_translate_drift(s, h);
    lf_forced_moved(s);
    for (int b = 0; b < nb; b++)
        if ((rc = flow(s, fc, b, Pi + 3 * b, h)) != LF_OK) return rc;
    if ((rc = lf_stepper_torque(s, s->R, s->tau)) != LF_OK) return rc;
    if ((rc = lf_forced_trapezoid(s, s->t + h, 0.5 * h, Pi, s->tau, s->force_eval)) != LF_OK) return rc;
    for (int b = 0; b < nb; b++) lf_v3_div(Pi + 3 * b, s->J + 3 * b, s->w + 3 * b);
    lf_stepper_cache_torque(s, s->tau);
    return LF_OK;
}

int lf_split_strang_exact(lf_stepper *s, double h)
{
    const int nb = s->nb;
    const double *fc = consts(s), *tau0;
    double *Pi = s->work;
    if (s->forced) return strang_exact_forced(s, h);
    int rc = lf_stepper_torque_start(s, &tau0);
    if (rc != LF_OK) return rc;
    lf_translate_kick(s, 0.5 * h, s->force); /* translating bodies: the kicks and the free flight of x */
    lf_translate_drift(s, h);
    for (int b = 0; b < nb; b++) {
        double *P = Pi + 3 * b;
        lf_v3_mul(s->J + 3 * b, s->w + 3 * b, P);
        lf_v3_axpy(P, 0.5 * h, tau0 + 3 * b, P);
        if ((rc = flow(s, fc, b, P, h)) != LF_OK) return rc;
    }
    if ((rc = lf_stepper_torque(s, s->R, s->tau)) != LF_OK) return rc;
    for (int b = 0; b < nb; b++) {
        double *P = Pi + 3 * b;
        lf_v3_axpy(P, 0.5 * h, s->tau + 3 * b, P);
        lf_v3_div(P, s->J + 3 * b, s->w + 3 * b);
    }
    lf_translate_kick(s, 0.5 * h, s->force_eval);
    lf_stepper_cache_torque(s, s->tau);
    return LF_OK;
}
