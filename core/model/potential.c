/* lieflow — potentials: the object, and the built-ins in C. Body torques follow so3.h:
 * tau . y = -d/de U(R exp(e hat y)). Each torque below is derived in a comment from its potential;
 * the tests check them against central differences of U (C) and against autodiff (Lua). */
#include "potential.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lanes_internal.h"
#include "linalg.h"
#include "so3.h"

enum { P_CALLBACK, P_STRESS, P_FIELD, P_TOP, P_COULOMB_WALL };

struct lf_potential {
    int kind;
    const char *name;
    lf_potential_eval_fn eval;
    void *ctx;
    void (*destroy)(void *ctx);
    double par[12]; /* the built-ins' parameters (see each) */
    lf_potential_jacobian_fn jacobian; /* optional */
};

static lf_potential *alloc_pot(int kind, const char *name, lf_potential_eval_fn eval, lf_error *err)
{
    lf_potential *p = calloc(1, sizeof *p);
    if (!p) {
        lf_error_set(err, LF_ENOMEM, "potential %s: out of memory", name);
        return NULL;
    }
    p->kind = kind;
    p->name = name;
    p->eval = eval;
    p->ctx = p->par;
    return p;
}

static int all_finite(int n, const double *v)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

lf_potential *lf_potential_new(const char *name, lf_potential_eval_fn eval, void *ctx, void (*destroy)(void *ctx),
                               lf_error *err)
{
    if (!eval) {
        lf_error_set(err, LF_EINVAL, "lf_potential_new: an evaluation function is required");
        return NULL;
    }
    lf_potential *p = alloc_pot(P_CALLBACK, name ? name : "callback", eval, err);
    if (!p) return NULL;
    p->ctx = ctx;
    p->destroy = destroy;
    return p;
}

void lf_potential_free(lf_potential *p)
{
    if (!p) return;
    if (p->destroy) p->destroy(p->ctx);
    free(p);
}

const char *lf_potential_name(const lf_potential *p) { return p ? p->name : "free"; }

void lf_potential_set_jacobian(lf_potential *p, lf_potential_jacobian_fn jac)
{
    if (p) p->jacobian = jac;
}

int lf_potential_has_jacobian(const lf_potential *p) { return p && p->jacobian; }

void *lf_potential_context(const lf_potential *p, lf_potential_eval_fn eval)
{
    return p && p->kind == P_CALLBACK && p->eval == eval ? p->ctx : NULL;
}

int lf_potential_jacobian(const lf_potential *p, int nb, const double *R, double *K, lf_error *err)
{
    if (!p || !p->jacobian) return lf_error_set(err, LF_EINVAL, "potential %s has no torque Jacobian", lf_potential_name(p));
    int rc = p->jacobian(p->ctx, nb, R, K, err);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < 9 * nb * nb; i++)
        if (!isfinite(K[i]))
            return lf_error_set(err, LF_EDOMAIN, "torque Jacobian of potential %s is not finite (%g)", p->name, K[i]);
    return LF_OK;
}

int lf_potential_eval(const lf_potential *p, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    if (!p) {
        if (U) *U = 0;
        if (tau) memset(tau, 0, 3 * (size_t)nb * sizeof(double));
        return LF_OK;
    }
    int rc = p->eval(p->ctx, nb, R, U, tau, err);
    if (rc != LF_OK) return rc;
    if (U && !isfinite(*U)) return lf_error_set(err, LF_EDOMAIN, "potential %s is not finite (U=%g)", p->name, *U);
    if (tau)
        for (int i = 0; i < 3 * nb; i++)
            if (!isfinite(tau[i]))
                return lf_error_set(err, LF_EDOMAIN, "torque of potential %s on body %d is not finite (%g)", p->name,
                                    i / 3 + 1, tau[i]);
    return LF_OK;
}

/* Notation: tr(M hat(y)) = y . trhat(M) with trhat(M) = (M23 - M32, M31 - M13, M12 - M21). */

/* ---------------------------------------------------------------- stress test, eq. (12) of BOS */
/* par: [0] alpha, [1..9] Rm. With d(A) = ||R - A||_F:  d/de d(A)^2 = 2 tr((R - A)^T R hat y)
 * = -2 tr(A^T R hat y) (tr(R^T R hat y) = tr(hat y) = 0), so  d(d(A))/de = -y . trhat(A^T R) / d(A).
 * One body: adds U to *U (if U), writes tau (if tau). Computes in every case (lane loops) and
 * returns STRESS_AT_RM / STRESS_AT_I flags where the value / torque is undefined. */
enum { STRESS_AT_RM = 1, STRESS_AT_I = 2, WALL_BEYOND = 4 };

static inline __attribute__((always_inline)) int stress_body(const double *par, const double *Rb, double *U,
                                                             double *tau)
{
    const double alpha = par[0], *Rm = par + 1;
    double s1 = 0, s2 = 0; /* d(I)^2, d(Rm)^2 in one pass */
    for (int i = 0; i < 9; i++) {
        const double a = Rb[i] - (i % 4 == 0), c = Rb[i] - Rm[i];
        s1 += a * a;
        s2 += c * c;
    }
    const double d1 = sqrt(s1), d2 = sqrt(s2);
    int flags = !(d2 > 0) ? STRESS_AT_RM : 0;
    if (U) *U += (d1 - 1) * (d1 - 1) - alpha / d2;
    if (tau) {
        /* dU = 2 (d1 - 1) dd1 + alpha/d2^2 dd2, dd(A) = -y.trhat(A^T R)/d(A); tau = -dU.
         * trhat(Rm^T R) needs the six off-diagonal entries M_ij = sum_k Rm_ki R_kj only. */
        flags |= !(d1 > 0) ? STRESS_AT_I : 0;
#define M_(i, j) (Rm[i] * Rb[j] + Rm[3 + i] * Rb[3 + j] + Rm[6 + i] * Rb[6 + j])
        const double v2x = M_(1, 2) - M_(2, 1), v2y = M_(2, 0) - M_(0, 2), v2z = M_(0, 1) - M_(1, 0);
#undef M_
        const double c1 = 2 * (d1 - 1) / d1, c2 = alpha / (d2 * d2 * d2);
        tau[0] = c1 * (Rb[5] - Rb[7]) + c2 * v2x;
        tau[1] = c1 * (Rb[6] - Rb[2]) + c2 * v2y;
        tau[2] = c1 * (Rb[1] - Rb[3]) + c2 * v2z;
    }
    return flags;
}

static int stress_error(int flags, lf_error *err)
{
    if (flags & STRESS_AT_RM)
        return lf_error_set(err, LF_EDOMAIN, "stress potential: R equals the attraction point Rm (dist = 0)");
    return lf_error_set(err, LF_EDOMAIN, "stress potential: torque undefined at R = I (dist(R,I) = 0)");
}

static int stress_eval(void *ctx, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    double Usum = 0;
    for (int b = 0; b < nb; b++) {
        int flags = stress_body(ctx, R + 9 * b, U ? &Usum : NULL, tau ? tau + 3 * b : NULL);
        if (flags) return stress_error(flags, err);
    }
    if (U) *U = Usum;
    return LF_OK;
}

lf_potential *lf_potential_stress(double alpha, const double Rm[9], lf_error *err)
{
    if (!isfinite(alpha)) {
        lf_error_set(err, LF_EINVAL, "stress potential: alpha = %g must be finite", alpha);
        return NULL;
    }
    if (lf_so3_check(Rm, 1e-9, "stress potential: Rm", err) != LF_OK) return NULL;
    lf_potential *p = alloc_pot(P_STRESS, "stress", stress_eval, err);
    if (!p) return NULL;
    p->par[0] = alpha;
    memcpy(p->par + 1, Rm, 9 * sizeof(double));
    return p;
}

/* ---------------------------------------------------------------- uniform field on a body vector */
/* par: [0..2] B (spatial), [3..5] m (body).  U = -B . R m;  dU.y = -(R^T B) . (y x m)
 * = -y . (m x R^T B), so tau = m x R^T B. */
static inline __attribute__((always_inline)) void field_body(const double *par, const double *Rb, double *U,
                                                              double *tau)
{
    const double *B = par, *m = B + 3;
    double Bb[3];
    lf_m3_tapply(Rb, B, Bb); /* R^T B */
    if (U) *U -= lf_v3_dot(Bb, m);
    if (tau) lf_v3_cross(m, Bb, tau);
}

static int field_eval(void *ctx, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    (void)err; /* cannot fail */
    double Usum = 0;
    for (int b = 0; b < nb; b++) field_body(ctx, R + 9 * b, U ? &Usum : NULL, tau ? tau + 3 * b : NULL);
    if (U) *U = Usum;
    return LF_OK;
}

static lf_potential *field_like(int kind, const char *name, const double B[3], const double m[3], lf_error *err)
{
    if (!all_finite(3, B) || !all_finite(3, m)) {
        lf_error_set(err, LF_EINVAL, "%s potential: the field (%g, %g, %g) and body vector (%g, %g, %g) must be finite",
                     name, B[0], B[1], B[2], m[0], m[1], m[2]);
        return NULL;
    }
    lf_potential *p = alloc_pot(kind, name, field_eval, err);
    if (!p) return NULL;
    memcpy(p->par, B, 3 * sizeof(double));
    memcpy(p->par + 3, m, 3 * sizeof(double));
    return p;
}

lf_potential *lf_potential_field(const double B[3], const double m[3], lf_error *err)
{
    return field_like(P_FIELD, "field", B, m, err);
}

lf_potential *lf_potential_top(double mgl, const double chi[3], lf_error *err)
{
    if (!isfinite(mgl)) {
        lf_error_set(err, LF_EINVAL, "top potential: mgl = %g must be finite", mgl);
        return NULL;
    }
    const double B[3] = {0, 0, -mgl};
    lf_potential *p = field_like(P_TOP, "top", B, chi, err);
    if (p) p->par[6] = mgl;
    return p;
}

/* ---------------------------------------------------------------- Coulomb wall, Krysl §3.7 */
/* U = g(c), c = R33, g(c) = 1/(1.1+c) - 0.001/(1.1+c)^10, g'(c) = -(1.1+c)^-2 + 0.01 (1.1+c)^-11.
 * dU.y = g'(c) (R^T e3) . (y x e3) = g'(c) y . (e3 x R^T e3), R^T e3 = (R31, R32, R33):
 * tau = -g'(c) (-R32, R31, 0); the spatial torque R tau = g'(c) e3 x R e3 = g'(c) (-R23, R13, 0),
 * which is the torque printed by Krysl. */
static inline __attribute__((always_inline)) int coulomb_wall_body(const double *Rb, double *U, double *tau)
{
    const double s = 1.1 + Rb[8], s2 = s * s, s10 = s2 * s2 * s2 * s2 * s2;
    if (U) *U += 1 / s - 0.001 / s10;
    if (tau) {
        const double gp = -1 / s2 + 0.01 / (s10 * s);
        tau[0] = gp * Rb[7];
        tau[1] = -gp * Rb[6];
        tau[2] = 0;
    }
    return !(s > 0) ? WALL_BEYOND : 0;
}

static int coulomb_wall_eval(void *ctx, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    (void)ctx; /* no parameters */
    double Usum = 0;
    for (int b = 0; b < nb; b++)
        if (coulomb_wall_body(R + 9 * b, U ? &Usum : NULL, tau ? tau + 3 * b : NULL))
            return lf_error_set(err, LF_EDOMAIN, "coulomb_wall potential: 1.1 + R33 = %g is not positive",
                                1.1 + R[9 * b + 8]);
    if (U) *U = Usum;
    return LF_OK;
}

lf_potential *lf_potential_coulomb_wall(lf_error *err)
{
    return alloc_pot(P_COULOMB_WALL, "coulomb_wall", coulomb_wall_eval, err);
}

/* ---------------------------------------------------------------- lanes */
/* The built-ins' torques over B lanes, vectorized (lanes_internal.h); nonzero when a torque is not
 * finite. The body kernels' flags are not needed here: where they are raised the torque is infinite
 * or NaN (stress: a division by d = 0; coulomb_wall: 1.1 + R33 > 0 for every rotation). */
LF_LANE_LOOPS static int builtin_torque_lanes(const lf_potential *p, int B, const double *restrict R,
                                              double *restrict tau)
{
    switch (p->kind) {
    case P_STRESS:
        for (int j = 0; j < B; j++) {
            double Rb[9], t[3];
            lf_lane_get(9, R, B, j, Rb);
            stress_body(p->par, Rb, NULL, t);
            lf_lane_put(3, t, tau, B, j);
        }
        break;
    case P_FIELD:
    case P_TOP:
        for (int j = 0; j < B; j++) {
            double Rb[9], t[3];
            lf_lane_get(9, R, B, j, Rb);
            field_body(p->par, Rb, NULL, t);
            lf_lane_put(3, t, tau, B, j);
        }
        break;
    case P_COULOMB_WALL:
        for (int j = 0; j < B; j++) {
            double Rb[9], t[3];
            lf_lane_get(9, R, B, j, Rb);
            coulomb_wall_body(Rb, NULL, t);
            lf_lane_put(3, t, tau, B, j);
        }
        break;
    }
    double sum = 0; /* NaN or infinite iff some torque is */
    for (int i = 0; i < 3 * B; i++) sum += tau[i] * 0;
    return !(sum == 0);
}

int lf_potential_torque_lanes(const lf_potential *p, int B, const double *R, double *tau, lf_error *err)
{
    if (B < 1 || !R || !tau) return lf_error_set(err, LF_EINVAL, "lf_potential_torque_lanes: %d lanes", B);
    if (!p) {
        memset(tau, 0, 3 * (size_t)B * sizeof(double));
        return LF_OK;
    }
    if (p->kind != P_CALLBACK && !builtin_torque_lanes(p, B, R, tau)) return LF_OK;
    /* a callback, or a built-in that failed somewhere: lane by lane, which also finds the lane */
    for (int j = 0; j < B; j++) {
        double Rb[9], t[3];
        lf_lane_get(9, R, B, j, Rb);
        int rc = lf_potential_eval(p, 1, Rb, NULL, t, err);
        if (rc != LF_OK) {
            if (err && B > 1) {
                char msg[sizeof err->msg];
                memcpy(msg, err->msg, sizeof msg);
                lf_error_set(err, rc, "lane %d: %s", j + 1, msg);
            }
            return rc;
        }
        lf_lane_put(3, t, tau, B, j);
    }
    return LF_OK;
}

/* ---------------------------------------------------------------- description */
int lf_potential_describe(const lf_potential *p, char *buf, size_t size)
{
    if (!p) return snprintf(buf, size, "free");
    const double *q = p->par;
    switch (p->kind) {
    case P_STRESS:
        return snprintf(buf, size, "stress(alpha = %g, Rm = [%g %g %g; %g %g %g; %g %g %g])", q[0], q[1], q[2], q[3],
                        q[4], q[5], q[6], q[7], q[8], q[9]);
    case P_FIELD:
        return snprintf(buf, size, "field(B = (%g, %g, %g), m = (%g, %g, %g))", q[0], q[1], q[2], q[3], q[4], q[5]);
    case P_TOP: return snprintf(buf, size, "top(mgl = %g, chi = (%g, %g, %g))", q[6], q[3], q[4], q[5]);
    case P_COULOMB_WALL: return snprintf(buf, size, "coulomb_wall()");
    default: return snprintf(buf, size, "%s", p->name);
    }
}
