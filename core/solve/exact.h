/* lieflow — exact solutions: the torque-free rigid body (Euler's equations) in closed form.
 *
 * Convention (DESIGN §2): R' = R hat(w), Pi = J w, so the torque-free Euler equations read
 *     J w' = (J w) x w,   i.e.   J_i w_i' = (J_j - J_k) w_j w_k   for (i, j, k) cyclic.
 * They conserve 2E = sum J_i w_i^2 and M^2 = |Pi|^2 = sum J_i^2 w_i^2 (Landau–Lifshitz, Mechanics §37).
 *
 * lf_exact_free_body evaluates the solution through these cases (checked in this order):
 *  - w0 along a principal axis (at most one nonzero component), or all J equal: w(t) = w0.
 *  - Axisymmetric, J_a = J_b = A != J_d = C with (a, b, d) cyclic: w_d is constant and
 *        w_a = w_a0 cos(lt) - w_b0 sin(lt),   w_b = w_a0 sin(lt) + w_b0 cos(lt),   l = (C - A) w_d / A.
 *  - Triaxial, moments sorted I1 < I2 < I3 (any order of J accepted; the axes are mapped back):
 *        S = M^2 - 2E I2 = I1 w1^2 (I1 - I2) + I3 w3^2 (I3 - I2)        (the separatrix test)
 *    S > 0: the motion circulates around the major axis I3; S < 0: around the minor axis I1.
 *    Name the axes (c, s, d) = (I1, I2, I3) if S >= 0, (I3, I2, I1) if S < 0, with moments A1, A2, A3,
 *    so that A2 is the middle moment and d the axis the motion circulates around. Landau–Lifshitz §37
 *    (the Jacobi elliptic solution), written with the invariants expanded so that no difference cancels:
 *        w_c = g a1 cn(u, m),   w_s = g sigma a2 sn(u, m),   w_d = s3 a3 dn(u, m),   u = u0 + nu t,
 *        a1^2 = (2E A3 - M^2) / (A1 (A3 - A1)) = w_c^2 + w_s^2 A2 (A3 - A2) / (A1 (A3 - A1)),
 *        a2^2 = (2E A3 - M^2) / (A2 (A3 - A2)) = w_s^2 + w_c^2 A1 (A3 - A1) / (A2 (A3 - A2)),
 *        a3^2 = (M^2 - 2E A1) / (A3 (A3 - A1)) = w_d^2 + w_s^2 A2 (A2 - A1) / (A3 (A3 - A1)),
 *        nu^2 = (A3 - A2)(M^2 - 2E A1) / (A1 A2 A3) = a3^2 (A3 - A2)(A3 - A1) / (A1 A2),
 *        m = k^2 = (A2 - A1)(2E A3 - M^2) / ((A3 - A2)(M^2 - 2E A1)) = (A2 - A1) A2 a2^2 / (A3 (A3 - A1) a3^2),
 *        1 - m = S / ((A3 - A2) A3 a3^2).
 *    Signs: s3 = sign w_d(0) (dn > 0 never changes sign); g = sign w_c(0) (+1 if zero) uses the
 *    half-period shift sn(u+2K) = -sn u, cn(u+2K) = -cn u so that cn(u0) >= 0; the direction of
 *    rotation sigma = -eps s3 sign(A2 - A3), eps = Levi-Civita sign of (c, s, d), follows from
 *    d/du cn = -sn dn and the Euler equation for w_c. The phase: with sn0 = g sigma w_s(0)/a2,
 *    cn0 = |w_c(0)|/a1, dn0 = |w_d(0)|/a3 (so am(u0) is in [-pi/2, pi/2]),
 *        u0 = F(am u0 | m) = sn0 R_F(cn0^2, dn0^2, 1)        (Carlson form of the incomplete integral F).
 *    S = 0 exactly (the separatrix, m = 1): cn = dn = sech, sn = tanh, u0 = asinh(sn0 / cn0), so w
 *    tends to the middle axis as t -> +-inf.
 * sn, cn, dn come from GSL (gsl_sf_elljac_e), R_F from gsl_sf_ellint_RF_e. gsl_sf_elljac_e takes m
 * alone, which fixes 1 - m only to an absolute eps; so for k'^2 = 1 - m < 1/4 exact.c first applies
 * descending Landen transformations (DLMF 22.7.1-22.7.2) computed from k' = sqrt(S / ((A3 - A2) A3)) / a3,
 * which is accurate to rounding however close to the separatrix. Before all this, J is scaled by a
 * power of 2 (only ratios matter) and w0 by a power of 2, s, using w(t; s w0) = s w(s t; w0).
 * Accuracy (tests/c/test_exact.c): within 4e-14 |w0| of 32-digit solutions for |t| <= 100, also with
 * 1 - m = 2e-10; 2E and |Pi| conserved to ~1e-15 relative. */
#ifndef LF_EXACT_H
#define LF_EXACT_H

#include "error.h"

/* Body angular velocity w(t) of the torque-free body with principal moments J (finite, > 0, any
 * order) from w(0) = w0, for any finite t (negative too). w may alias w0. Returns LF_OK, or
 * LF_EINVAL (non-finite or non-positive J, non-finite w0 or t) / LF_EDOMAIN (|w0| t overflows, the
 * phase exceeds 1e15 rad, or J too disparate for the motion's constants to be finite). */
int lf_exact_free_body(const double J[3], const double w0[3], double t, double w[3], lf_error *err);

/* The exact flow, attitude included: from R(0) = R0 (body to space, a rotation within 1e-9; NULL
 * means I) and w(0) = w0, the attitude R(t) and w(t) with R' = R hat(w), J w' = (J w) x w.
 * The spatial momentum R J w is conserved to round-off. R may alias R0, w may alias w0.
 * Errors as lf_exact_free_body, and LF_EINVAL for an R0 that is not a rotation. */
int lf_exact_free_body_flow(const double J[3], const double R0[9], const double w0[3], double t, double R[9],
                            double w[3], lf_error *err);

/* Everything the flow needs that depends on (J, w0) only, for evaluating it at many t.
 * Caller-owned (no allocation); the fields are private to exact.c. */
typedef struct lf_exact_fb_plan {
    int kind, attitude, ew, c, s, d, pmode, have_Xc;
    double Jn[3], W[3], w0[3], q0[4], sc;
    double a1, a2, a3, nu, g, sigma, s3, kp, m, K, u0, sn0, cn0, dn0, l;
    double M, b, n, mu, om, rate, coef, sq1n, sqn, aF, X0, G0, Xc;
} lf_exact_fb_plan;

/* Prepare the flow of (J, w0) (checks as lf_exact_free_body). */
int lf_exact_fb_plan_init(lf_exact_fb_plan *plan, const double J[3], const double w0[3], lf_error *err);
/* Evaluate a prepared flow at t: as lf_exact_free_body_flow (R0 may be NULL: I; R or w may be NULL
 * when not wanted). The plan is not modified: one plan may serve several threads. */
int lf_exact_fb_plan_eval(const lf_exact_fb_plan *plan, double t, const double R0[9], double R[9], double w[3],
                          lf_error *err);

#endif
