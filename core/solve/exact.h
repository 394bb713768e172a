/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — exact solutions: the torque-free rigid body (Euler's equations) in closed form.
 *
 * Convention: R' = R hat(w), Pi = J w, so the torque-free Euler equations read
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
 *    Evaluation at t (exact.c): when nu t reduced modulo 2K lies within K/2 of a maximum of dn, sn, cn, dn
 *    at u0 + nu t come from the data (sn0, cn0, dn0) and those at nu t by the addition theorem (DLMF
 *    22.8.1-22.8.2), so that a short step changes w0 by a relatively accurate amount; otherwise at u
 *    reduced to [-K, K], K = pi / (2 AGM(1, k')) (DLMF 19.8.5).
 * sn, cn, dn come from GSL (gsl_sf_elljac_e), R_F from gsl_sf_ellint_RF_e. gsl_sf_elljac_e takes m
 * alone, which fixes 1 - m only to an absolute eps; so for k'^2 = 1 - m < 1/4 exact.c first applies
 * descending Landen transformations (DLMF 22.7.1-22.7.2) computed from k' = sqrt(S / ((A3 - A2) A3)) / a3,
 * which is accurate to rounding however close to the separatrix. Before all this, J is scaled by a
 * power of 2 (only ratios matter; centred so that both extreme moments stay representable) and w0 by a
 * power of 2, s, using w(t; s w0) = s w(s t; w0), R(t; s w0) = R(s t; w0).
 *
 * The attitude (lf_exact_free_body_flow). The spatial momentum pi = R Pi is constant. Following
 * Celledoni, Fasso, Safstrom and Zanna, "The exact computation of the free rigid body motion and its use
 * in splitting methods", SIAM J. Sci. Comput. 30 (2008) (their factorization of the attitude into a
 * rotation that aligns the momentum with a fixed axis and a rotation about that axis; the axis and
 * the evaluation below are ours), write, with mhat = Pi/M and the fixed body vector e = s3 e_d,
 *    (1) R(t) = R0 Q(0)^T E(psi(t)) Q(t),   Q(t) = the smallest rotation with Q mhat(t) = e,
 *        E(psi) = exp(psi hat(e)),  psi(0) = 0;
 *    quaternion of Q: (1 + mhat.e, mhat x e) / sqrt(2 (1 + mhat.e)). Then R Pi = |Pi| R0 Q(0)^T e = R0 Pi0:
 *    (1) conserves pi for any psi, and mhat.e = A3 |w_d| / M > 0 (dn > 0) keeps Q away from its only
 *    singularity mhat = -e in every regime (no Euler-angle singularity).
 *    (2) R' = R hat(w) fixes psi: R^T R' = psi' hat(Q^T e) + Q^T Q' = psi' hat(mhat) + hat(v), and for the
 *        smallest rotation v.mhat = -(mhat x e).mhat' / (1 + mhat.e); with mhat' = mhat x w,
 *        psi' = w.mhat - v.mhat = (w.mhat + w.e) / (1 + mhat.e) = (2E + M |w_d|) / (M + A3 |w_d|).
 *    Axisymmetric bodies: |w_d| is constant, so psi = psi' t. Principal-axis spin, sphere: R = R0 exp(t hat(w0)).
 *    (3) Triaxial: |w_d| = a3 dn u, b = A3 a3; with C = (2E A3 - M^2)/A3 = A1 (A3 - A1) a1^2 / A3,
 *        psi' = M/A3 + C / (M + b dn u),  and  M^2 - b^2 dn^2 = A1^2 a1^2 (1 - n sn^2 u), so
 *        psi(t) = (M/A3) t + (C'/nu) (M Jpi - b Jd),   C' = (A3 - A1)/(A1 A3),
 *        Jpi = int_u0^u du / (1 - n sn^2) = Pi(n; am u | m) - Pi(n; am u0 | m),
 *        Jd  = int_u0^u dn du / (1 - n sn^2) = int dphi / (1 - n sin^2 phi)   (elementary),
 *    with the characteristic n = -A3 (A2 - A1) / (A1 (A3 - A2)) < 0 (a property of the body alone).
 *    (4) Jd: int_0^phi = atan2(sqrt(1 - n) sin phi, cos phi) / sqrt(1 - n) on |phi| <= pi/2, + pi/sqrt(1-n)
 *        per half period.
 *    (5) Pi(n; phi | m), |phi| <= pi/2 (s = sin, c = cos, Delta^2 = c^2 + k'^2 s^2), + 2 Pi(n | m) per half
 *        period (am(u + 2jK) = am u + j pi), as F + X with F(phi) = u known:
 *        -n <= 1:  X = (n/3) s^3 R_J(c^2, Delta^2, 1, 1 - n s^2)               (DLMF 19.25.14);
 *        -n > 1:   Pi = atan2(omega s, c Delta)/omega + (mu/3) s^3 R_J(c^2, Delta^2, 1, 1 + mu s^2),
 *                  mu = -m/n, omega^2 = (1 - n)(1 + mu)    (DLMF 19.7.9 with 19.25.14; the R_C there is
 *                  elementary, DLMF 19.2.17, because its arguments differ by (omega s)^2 exactly). Both
 *                  terms have the sign of s: no cancellation however large -n (needles, J2 ~ J3);
 *        k' < 1e-20 (and on the separatrix): Pi = (F + sqrt(-n) atan(sqrt(-n) s)) / (1 - n), the m = 1
 *                  integral, off by O(k'^2 K) < 1e-38.
 *    R_J from GSL (gsl_sf_ellint_RJ_e); the complete values only when u leaves its half period.
 * Every GSL call runs inside lf_gsl_guard (core/base/gsl_guard_internal.h): a GSL error becomes an
 * lf_error naming the call and its arguments, never an abort.
 *
 * Accuracy (tests/c/test_exact.c, each number printed there; eps = 2.2e-16):
 *  - w: within 3e-14 |w0| of 32-digit solutions for |t| <= 100, also with 1 - m = 2e-10; 2E and |Pi|
 *    conserved to ~1e-15 relative.
 *  - R and w against a long-double Taylor solution, |t| <= 100, every regime (both sides of the
 *    separatrix, on it, axisymmetric, nearly axisymmetric, principal-axis spins, sphere, rest, all
 *    orderings of J): <= 3e-14; against rk8pd at 1e-14, |t| <= 10: <= 5e-14 (rk8pd's own error);
 *    near and at the separatrix (1 - m = 5e-12, 5e-13, 1e-49) against 50-digit values: <= 3e-14.
 *  - Long times: the phase and psi carry the rounding of the frequencies, so errors grow like
 *    eps |psi|: 1000 periods (psi ~ 7e3 rad): 1e-12 in R, 4e-13 in w.
 *  - Bodies circulating around their minor axis: psi = (M/A3) t + correction cancels up to a factor
 *    I_max/I_min; for a needle with I_max/I_min = 100: 1.3e-13 in R at |t| = 20.
 *  - ||R^T R - I|| and |R J w - R0 J w0| / |R0 J w0|: round-off (3e-15, 1e-15 over 2000 random flows).
 *  - Phases beyond 1e15 rad (where eps |phase| > 0.1) are refused with LF_EDOMAIN; so are moments so
 *    disparate that nu or n overflow (J = (1, 1e-300, 1e300) for t != 0). t = 0 returns (R0, w0) exactly. */
#ifndef LF_EXACT_H
#define LF_EXACT_H

#include "base/export.h"
#include "base/error.h"

LF_BEGIN_DECLS

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
    int kind, attitude, ew, c, s, d, pmode, have_Xc, have_u0;
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

LF_END_DECLS

#endif
