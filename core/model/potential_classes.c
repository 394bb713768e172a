/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the built-in potentials: one class record each (potential.h), and their registry.
 *
 * A class is its one-body kernel (U added to *U, the torque written to tau, flags where either is
 * undefined) and its record in `classes` below: name, formula, parameter schema, and the functions
 * LF_POTENTIAL_KERNELS makes from the kernel (U and torques of nb bodies; the lanes kernel, the same
 * inline code over B lanes). Adding a potential is adding a kernel and a record here (and its entry
 * in docs/api.md); the Lua constructor lf.potential.<name> is made from the record
 * (lua/lib/potential.c) and tests/c/test_potentials.c and tests/lua/potentials_spec.lua test every
 * registered class: the torque against central differences of U, the lanes against one body bit for
 * bit, the Lua constructor against the record.
 *
 * Body torques follow so3.h: tau . y = -d/de U(R exp(e hat y)); each torque below is derived in a
 * comment from its potential. Notation: tr(M hat(y)) = y . trhat(M) with
 * trhat(M) = (M23 - M32, M31 - M13, M12 - M21). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/lanes_internal.h"
#include "base/linalg.h"
#include "model/potential.h"
#include "lie/so3.h"

/* From an inline one-body kernel `int body(const double *par, const double *Rb, double *U, double
 * *tau)` (U added to *U if U, tau written if tau; nonzero flags where U or tau is undefined) and
 * `int fail(int flags, const double *Rb, lf_error *err)` (the message): NAME_eval (the class's eval)
 * and NAME_lanes (its lanes kernel: where a flag is raised the torque is infinite or NaN, which the
 * caller finds; the flags are not needed there). */
#define LF_POTENTIAL_KERNELS(NAME, body, fail)                                                                 \
    static int NAME##_eval(void *ctx, int nb, const double *R, double *U, double *tau, lf_error *err)          \
    {                                                                                                          \
        double Usum = 0;                                                                                       \
        for (int b = 0; b < nb; b++) {                                                                         \
            int flags = body(ctx, R + 9 * b, U ? &Usum : NULL, tau ? tau + 3 * b : NULL);                      \
            if (flags) return fail(flags, R + 9 * b, err);                                                     \
        }                                                                                                      \
        if (U) *U = Usum;                                                                                      \
        return LF_OK;                                                                                          \
    }                                                                                                          \
    LF_LANE_LOOPS static int NAME##_lanes(const double *par, int B, const double *restrict R,                  \
                                          double *restrict tau)                                                \
    {                                                                                                          \
        for (int j = 0; j < B; j++) {                                                                          \
            double Rb[9], t[3];                                                                                \
            lf_lane_get(9, R, B, j, Rb);                                                                       \
            body(par, Rb, NULL, t);                                                                            \
            lf_lane_put(3, t, tau, B, j);                                                                      \
        }                                                                                                      \
        double sum = 0; /* NaN or infinite iff some torque is */                                             \
        for (int i = 0; i < 3 * B; i++) sum += tau[i] * 0;                                                     \
        return !(sum == 0);                                                                                    \
    }

#define LF_INLINE static inline __attribute__((always_inline))

/* ---------------------------------------------------------------- stress test, eq. (12) of BOS */
/* par: [0] alpha, [1..9] Rm. With d(A) = ||R - A||_F:  d/de d(A)^2 = 2 tr((R - A)^T R hat y)
 * = -2 tr(A^T R hat y) (tr(R^T R hat y) = tr(hat y) = 0), so  d(d(A))/de = -y . trhat(A^T R) / d(A).
 * Flags STRESS_AT_RM / STRESS_AT_I where the value / torque is undefined. */
enum { STRESS_AT_RM = 1, STRESS_AT_I = 2 };

LF_INLINE int stress_body(const double *par, const double *Rb, double *U, double *tau)
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

static int stress_fail(int flags, const double *Rb, lf_error *err)
{
    (void)Rb;
    if (flags & STRESS_AT_RM)
        return lf_error_set(err, LF_EDOMAIN, "stress potential: R equals the attraction point Rm (dist = 0)");
    return lf_error_set(err, LF_EDOMAIN, "stress potential: torque undefined at R = I (dist(R,I) = 0)");
}

LF_POTENTIAL_KERNELS(stress, stress_body, stress_fail)

/* ---------------------------------------------------------------- uniform field on a body vector */
/* U = -B . R m (B spatial, m body);  dU.y = -(R^T B) . (y x m) = -y . (m x R^T B), so tau = m x R^T B. */
LF_INLINE void field_kernel(const double *B, const double *m, const double *Rb, double *U, double *tau)
{
    double Bb[3];
    lf_m3_tapply(Rb, B, Bb); /* R^T B */
    if (U) *U -= lf_v3_dot(Bb, m);
    if (tau) lf_v3_cross(m, Bb, tau);
}

static int never_fails(int flags, const double *Rb, lf_error *err)
{
    (void)flags, (void)Rb, (void)err;
    return LF_OK;
}

/* par: [0..2] B, [3..5] m */
LF_INLINE int field_body(const double *par, const double *Rb, double *U, double *tau)
{
    field_kernel(par, par + 3, Rb, U, tau);
    return 0;
}

LF_POTENTIAL_KERNELS(field, field_body, never_fails)

/* the field's message for a non-finite field B or body vector m (also the top's) */
static int field_refuse(const char *name, const double B[3], const double m[3], lf_error *err)
{
    for (int k = 0; k < 3; k++)
        if (!isfinite(B[k]) || !isfinite(m[k]))
            return lf_error_set(err, LF_EINVAL,
                                "%s potential: the field (%g, %g, %g) and body vector (%g, %g, %g) must be finite", name,
                                B[0], B[1], B[2], m[0], m[1], m[2]);
    return LF_OK;
}

static int field_check(const double *par, lf_error *err) { return field_refuse("field", par, par + 3, err); }

/* ---------------------------------------------------------------- Lagrangian top, Krysl §3.3 */
/* U = mgl e3 . (R chi): the field potential with B = -mgl e3, m = chi. par: [0] mgl, [1..3] chi. */
LF_INLINE int top_body(const double *par, const double *Rb, double *U, double *tau)
{
    const double B[3] = {0, 0, -par[0]};
    field_kernel(B, par + 1, Rb, U, tau);
    return 0;
}

LF_POTENTIAL_KERNELS(top, top_body, never_fails)

static int top_check(const double *par, lf_error *err)
{
    if (!isfinite(par[0])) return lf_error_set(err, LF_EINVAL, "top potential: mgl = %g must be finite", par[0]);
    const double B[3] = {0, 0, -par[0]};
    return field_refuse("top", B, par + 1, err);
}

static double top_mgl(const double *mgl) { return mgl[0] * mgl[1] * mgl[2]; }

/* ---------------------------------------------------------------- Coulomb wall, Krysl §3.7 */
/* U = g(c), c = R33, g(c) = 1/(1.1+c) - 0.001/(1.1+c)^10, g'(c) = -(1.1+c)^-2 + 0.01 (1.1+c)^-11.
 * dU.y = g'(c) (R^T e3) . (y x e3) = g'(c) y . (e3 x R^T e3), R^T e3 = (R31, R32, R33):
 * tau = -g'(c) (-R32, R31, 0); the spatial torque R tau = g'(c) e3 x R e3 = g'(c) (-R23, R13, 0),
 * which is the torque printed by Krysl. No parameters. */
LF_INLINE int coulomb_wall_body(const double *par, const double *Rb, double *U, double *tau)
{
    (void)par;
    const double s = 1.1 + Rb[8], s2 = s * s, s10 = s2 * s2 * s2 * s2 * s2;
    if (U) *U += 1 / s - 0.001 / s10;
    if (tau) {
        const double gp = -1 / s2 + 0.01 / (s10 * s);
        tau[0] = gp * Rb[7];
        tau[1] = -gp * Rb[6];
        tau[2] = 0;
    }
    return !(s > 0);
}

static int coulomb_wall_fail(int flags, const double *Rb, lf_error *err)
{
    (void)flags;
    return lf_error_set(err, LF_EDOMAIN, "coulomb_wall potential: 1.1 + R33 = %g is not positive", 1.1 + Rb[8]);
}

LF_POTENTIAL_KERNELS(coulomb_wall, coulomb_wall_body, coulomb_wall_fail)

/* ---------------------------------------------------------------- of positions (translating bodies) */
/* Uniform gravity, par: g. U = -sum_i m_i g . x_i, F_i = -dU/dx_i = m_i g; no torque. */
static int gravity_eval(void *ctx, const lf_bodies_config *c, double *U, double *F, double *tau, lf_error *err)
{
    (void)err;
    const double *g = ctx;
    double Usum = 0;
    for (int b = 0; b < c->nb; b++) {
        Usum -= c->mass[b] * lf_v3_dot(g, c->x + 3 * b);
        if (F) lf_v3_scale(g, c->mass[b], F + 3 * b);
        if (tau) lf_v3_set(tau + 3 * b, 0, 0, 0);
    }
    if (U) *U = Usum;
    return LF_OK;
}

/* A point mass mu at c, to second order in the body's size (MacCullagh), par: mu, c. With r = x - c,
 * r = |r|, A = R diag(J) R^T (the spatial inertia) and u = R^T r / r:
 *   U = -mu m / r - mu/(2 r^3) (tr J - 3 u.Ju) = -mu m / r - mu tr J / (2 r^3) + 3 mu r.Ar / (2 r^5),
 *   dU/dx = mu m r / r^3 + 3 mu / (2 r^5) (tr J r + 2 A r - 5 (r.Ar / r^2) r),   F = -dU/dx;
 * along R exp(e hat y), u -> exp(-e hat y) u, d(u.Ju)/de = -2 y . (u x Ju), so
 *   tau = (3 mu / r^3) u x J u   (the gravity-gradient torque). */
static int central_eval(void *ctx, const lf_bodies_config *c, double *U, double *F, double *tau, lf_error *err)
{
    const double mu = ((const double *)ctx)[0], *c0 = (const double *)ctx + 1;
    double Usum = 0;
    for (int b = 0; b < c->nb; b++) {
        const double *J = c->J + 3 * b, *R = c->R + 9 * b, *x = c->x + 3 * b, m = c->mass[b];
        const double rx = x[0] - c0[0], ry = x[1] - c0[1], rz = x[2] - c0[2];
        const double rr = rx * rx + ry * ry + rz * rz;
        /* in scalars (r, u = R^T r, J u, A r = R J u): GCC's SLP vectorizer sent the arrays of the
         * vector helpers through the stack here (29 ns per call against 17); |r| as lf_v3_norm */
        const double rn = LF_LIKELY(rr >= 0x1p-968 && rr <= 0x1.fffffffffffffp+1023)
                              ? sqrt(rr)
                              : lf_v3_norm_scaled((const double[3]){rx, ry, rz});
        if (!(rn > 0))
            return lf_error_set(err, LF_EDOMAIN, "central potential: body %d is at the attracting point (%g, %g, %g)",
                                b + 1, c0[0], c0[1], c0[2]);
        const double ux = R[0] * rx + R[3] * ry + R[6] * rz, uy = R[1] * rx + R[4] * ry + R[7] * rz,
                     uz = R[2] * rx + R[5] * ry + R[8] * rz;
        const double jx = J[0] * ux, jy = J[1] * uy, jz = J[2] * uz;
        /* one division: the powers of 1/r */
        const double i1 = 1 / rn, i2 = i1 * i1, i3 = i2 * i1, i5 = i3 * i2;
        const double rAr = ux * jx + uy * jy + uz * jz, trJ = J[0] + J[1] + J[2];
        if (U) Usum += -mu * m * i1 - 0.5 * mu * trJ * i3 + 1.5 * mu * rAr * i5;
        if (F) {
            const double ax = R[0] * jx + R[1] * jy + R[2] * jz, ay = R[3] * jx + R[4] * jy + R[5] * jz,
                         az = R[6] * jx + R[7] * jy + R[8] * jz;
            const double k = 1.5 * mu * i5, s = mu * m * i3 + k * (trJ - 5 * rAr * i2);
            F[3 * b] = -(s * rx + 2 * k * ax);
            F[3 * b + 1] = -(s * ry + 2 * k * ay);
            F[3 * b + 2] = -(s * rz + 2 * k * az);
        }
        if (tau) {
            const double f = 3 * mu * i5;
            tau[3 * b] = f * (uy * jz - uz * jy);
            tau[3 * b + 1] = f * (uz * jx - ux * jz);
            tau[3 * b + 2] = f * (ux * jy - uy * jx);
        }
    }
    if (U) *U = Usum;
    return LF_OK;
}

/* ---------------------------------------------------------------- the registry */
static const lf_potential_class classes[] = {
    {
        .name = "stress",
        .formula = "U = (||R - I||_F - 1)^2 - alpha / ||R - Rm||_F (Bou-Rabee, Ortolan & Saccon, eq. (12))",
        .nparams = 2,
        .params = {{"alpha", LF_PARAM_NUMBER, 0, {0.3}, "strength of the attraction to Rm"},
                   {"Rm",
                    LF_PARAM_ROTATION,
                    0,
                    {1.7677669529663687, 0, 1.7677669529663687}, /* (2.5, 0, 2.5)/sqrt 2 */
                    "attraction point"}},
        .eval = stress_eval,
        .torque_lanes = stress_lanes,
    },
    {
        .name = "top",
        .formula = "U = mgl e3 . (R chi) (Lagrangian top, Krysl §3.3)",
        .nparams = 2,
        .params = {{"mgl", LF_PARAM_NUMBER, 0, {20}, "mass x gravity x length"},
                   {"chi", LF_PARAM_VEC3, 0, {0, 0, 1}, "unit vector to the centre of mass (body)"}},
        .nalt = 3,
        .alt_for = 0,
        .alt = {{"m", LF_PARAM_NUMBER, 0, {1}, "mass"},
                {"g", LF_PARAM_NUMBER, 0, {9.81}, "gravity"},
                {"l", LF_PARAM_NUMBER, 0, {1}, "length"}},
        .from_alt = top_mgl,
        .check = top_check,
        .eval = top_eval,
        .torque_lanes = top_lanes,
    },
    {
        .name = "field",
        .formula = "U = -B . (R m) (a uniform field on a body-fixed vector)",
        .nparams = 2,
        .params = {{"B", LF_PARAM_VEC3, 1, {0}, "spatial field"}, {"m", LF_PARAM_VEC3, 1, {0}, "body vector"}},
        .check = field_check,
        .eval = field_eval,
        .torque_lanes = field_lanes,
    },
    {
        .name = "coulomb_wall",
        .formula = "U = 1/(1.1 + R33) - 0.001/(1.1 + R33)^10 (Coulomb potential with a soft wall, Krysl §3.7)",
        .eval = coulomb_wall_eval,
        .torque_lanes = coulomb_wall_lanes,
    },
    {
        .name = "gravity",
        .formula = "U = -sum_i m_i g . x_i (a uniform gravity field on the centres of mass)",
        .nparams = 1,
        .params = {{"g", LF_PARAM_VEC3, 1, {0}, "acceleration of gravity (spatial)"}},
        .eval_x = gravity_eval,
    },
    {
        .name = "central",
        .formula = "U = -mu m/r - mu/(2 r^3) (tr J - 3 u.Ju), r = x - c, u = R^T r/r (a point mass mu = GM at c with "
                   "the gravity gradient, MacCullagh)",
        .nparams = 2,
        .params = {{"mu", LF_PARAM_NUMBER, 1, {0}, "G M of the attracting point mass (< 0: repelling)"},
                   {"c", LF_PARAM_VEC3, 0, {0, 0, 0}, "its position"}},
        .eval_x = central_eval,
    },
};

int lf_potential_class_count(void) { return (int)(sizeof classes / sizeof classes[0]); }

const lf_potential_class *lf_potential_class_at(int i)
{
    return i >= 0 && i < lf_potential_class_count() ? &classes[i] : NULL;
}

const lf_potential_class *lf_potential_class_find(const char *name)
{
    for (int i = 0; name && i < lf_potential_class_count(); i++)
        if (strcmp(classes[i].name, name) == 0) return &classes[i];
    return NULL;
}
