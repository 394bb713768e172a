/* lieflow — built-in potentials in C. A single-body potential acts on every body of the system
 * (U is the sum over the bodies). Body torques follow DESIGN §2: tau . y = -d/de U(R exp(e hat y)).
 * Each torque below is derived in a comment from its potential; tests/c/test_potential.c checks it
 * against a central finite difference of U, and the Lua specs against autodiff. */
#include <math.h>

#include "linalg.h"
#include "system.h"

/* tr(M hat(y)) = y . trhat(M) with trhat(M) = (M23 - M32, M31 - M13, M12 - M21). */
static void trhat(const double *M, double *v)
{
    v[0] = M[5] - M[7];
    v[1] = M[6] - M[2];
    v[2] = M[1] - M[3];
}

/* ---------------------------------------------------------------- stress test, seed 000 eq. (12) */
/* par: [0] alpha, [1..9] Rm. With d(A) = ||R - A||_F:  d/de d(A)^2 = 2 tr((R - A)^T R hat y)
 * = -2 tr(A^T R hat y) (tr(R^T R hat y) = tr(hat y) = 0), so  d(d(A))/de = -y . trhat(A^T R) / d(A). */
static int stress_eval(const lf_potential *p, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    const double alpha = p->par[0], *Rm = p->par + 1;
    double Usum = 0;
    for (int b = 0; b < nb; b++) {
        const double *Rb = R + 9 * b;
        double D1[9], D2[9], I[9];
        lf_m3_identity(I);
        lf_m3_sub(Rb, I, D1);
        lf_m3_sub(Rb, Rm, D2);
        double d1 = lf_m3_fnorm(D1), d2 = lf_m3_fnorm(D2);
        if (!(d2 > 0))
            return lf_error_set(err, LF_EDOMAIN, "stress potential: R equals the attraction point Rm (dist = 0)");
        Usum += (d1 - 1) * (d1 - 1) - alpha / d2;
        if (tau) {
            /* dU = 2 (d1 - 1) dd1 + alpha/d2^2 dd2, dd(A) = -y.trhat(A^T R)/d(A); tau = -dU. */
            double v1[3], v2[3], M[9];
            trhat(Rb, v1); /* A = I */
            lf_m3_tmul(Rm, Rb, M);
            trhat(M, v2);
            if (!(d1 > 0))
                return lf_error_set(err, LF_EDOMAIN, "stress potential: torque undefined at R = I (dist(R,I) = 0)");
            double c1 = 2 * (d1 - 1) / d1, c2 = alpha / (d2 * d2 * d2);
            for (int k = 0; k < 3; k++) tau[3 * b + k] = c1 * v1[k] + c2 * v2[k];
        }
    }
    if (U) *U = Usum;
    return LF_OK;
}

void lf_potential_stress(lf_potential *p, double alpha, const double Rm[9])
{
    *p = (lf_potential){.name = "stress", .eval = stress_eval};
    p->par[0] = alpha;
    for (int i = 0; i < 9; i++) p->par[1 + i] = Rm[i];
}

/* ---------------------------------------------------------------- uniform field on a body vector */
/* par: [0..2] B (spatial), [3..5] m (body).  U = -B . R m;  dU.y = -(R^T B) . (y x m)
 * = -y . (m x R^T B), so tau = m x R^T B. */
static int field_eval(const lf_potential *p, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    (void)err; /* cannot fail */
    const double *B = p->par, *m = p->par + 3;
    double Usum = 0;
    for (int b = 0; b < nb; b++) {
        double Bb[3];
        lf_m3_tapply(R + 9 * b, B, Bb); /* R^T B */
        Usum -= lf_v3_dot(Bb, m);
        if (tau) lf_v3_cross(m, Bb, tau + 3 * b);
    }
    if (U) *U = Usum;
    return LF_OK;
}

void lf_potential_field(lf_potential *p, const double B[3], const double m[3])
{
    *p = (lf_potential){.name = "field", .eval = field_eval};
    for (int k = 0; k < 3; k++) {
        p->par[k] = B[k];
        p->par[3 + k] = m[k];
    }
}

void lf_potential_top(lf_potential *p, double mgl, const double chi[3])
{
    const double B[3] = {0, 0, -mgl};
    lf_potential_field(p, B, chi);
    p->name = "top";
}

/* ---------------------------------------------------------------- Coulomb wall, seed 003 §3.7 */
/* U = g(c), c = R33, g(c) = 1/(1.1+c) - 0.001/(1.1+c)^10, g'(c) = -(1.1+c)^-2 + 0.01 (1.1+c)^-11.
 * dU.y = g'(c) (R^T e3) . (y x e3) = g'(c) y . (e3 x R^T e3), R^T e3 = (R31, R32, R33):
 * tau = -g'(c) (-R32, R31, 0); the spatial torque R tau = g'(c) e3 x R e3 = g'(c) (-R23, R13, 0),
 * which is the torque printed in the seed. */
static int coulomb_wall_eval(const lf_potential *p, int nb, const double *R, double *U, double *tau,
                             lf_error *err)
{
    (void)p; /* no parameters */
    double Usum = 0;
    for (int b = 0; b < nb; b++) {
        const double *Rb = R + 9 * b;
        double s = 1.1 + Rb[8];
        if (!(s > 0))
            return lf_error_set(err, LF_EDOMAIN, "coulomb_wall potential: 1.1 + R33 = %g is not positive", s);
        double s2 = s * s, s10 = s2 * s2 * s2 * s2 * s2;
        Usum += 1 / s - 0.001 / s10;
        if (tau) {
            double gp = -1 / s2 + 0.01 / (s10 * s);
            tau[3 * b + 0] = gp * Rb[7];
            tau[3 * b + 1] = -gp * Rb[6];
            tau[3 * b + 2] = 0;
        }
    }
    if (U) *U = Usum;
    return LF_OK;
}

void lf_potential_coulomb_wall(lf_potential *p) { *p = (lf_potential){.name = "coulomb_wall", .eval = coulomb_wall_eval}; }

void lf_potential_free_body(lf_potential *p) { *p = (lf_potential){.name = "free", .eval = NULL}; }
