/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — mechanical systems on products of spheres (S^2)^n, lifted to SO(3) as in Ortolan's
 * thesis (Part II, eqs. (6.5)-(6.7), §7.1): n unit vectors q_i with a symmetric positive definite
 * n x n coupling M and a potential V(q_1..q_n),
 *     L = 1/2 sum_ij M_ij qdot_i . qdot_j - V(q),     qdot_i = omega_i x q_i,  q_i . omega_i = 0.
 * The state is (q_1..q_n, omega_1..omega_n) on s2^n x (R^3)^n, right-trivialized (spatial frame):
 *     q_i' = omega_i x q_i,    omega_i' = alpha_i(q, omega),
 * the lift q_i = R_i q_i(0), R_i' = hat(omega_i) R_i of (6.6)-(6.7) acting on q directly (the s2
 * factor: the same iterates as acting on R with R(0) = I, see spheres.c and tests/c/test_spheres.c).
 * alpha is the angular acceleration of (6.5b), evaluated in the n x n constraint-force form (the
 * derivation is in spheres.c); for diagonal M it is alpha_i = -(q_i x dV/dq_i) / M_ii.
 *
 * Forms: LF_FORM_LIE_ODE (f = (omega, alpha)), LF_FORM_SECOND_ORDER (nconfig = n, accel = alpha)
 * and LF_FORM_CONSTRAINED (system.h: positions x_i = q_i in R^3, |x_i| = 1, mass M (x) I_3,
 * the gradient of V; for RATTLE).
 * Fields: q (n unit vectors), omega (n vec3), always arrays (also for n = 1).
 * Observables (trajectory columns in parentheses):
 *   energy          E = 1/2 sum_ij M_ij (omega_i x q_i).(omega_j x q_j) + V(q)   (energy)
 *   norm_error      max_i ||q_i| - 1|                                              (norm_error)
 *   qdotw           max_i |q_i . omega_i|                                          (qdotw)
 *   angular_momentum  L = sum_ij M_ij q_i x qdot_j = sum_i q_i x p_i  (thesis (7.6)) (L1, L2, L3)
 *   axial_momentum  L . k about the system's axis k (default e3; the pendulums' vertical) (Lk)
 * Off the tangent bundle (q . omega != 0, as RKMK iterates drift) alpha uses the thesis's
 * extension s_j = |omega_j|^2 of (6.5b); then q_i . omega_i is an exact first integral of the
 * lifted ODE. Constructors require q_i . omega_i = 0 (within 1e-12 max(1, |omega_i|)); states set
 * later (set_state) are only checked for unit q.
 *
 * Thread safety: a system is read-only while it is integrated; two steppers may share it.
 * Evaluating f or the acceleration needs scratch only for coupled (non-diagonal) M: n^2 + n
 * doubles on the stack for n <= LF_SPHERES_STACK_N, a heap block per evaluation beyond (documented
 * exception to "no allocation in a step"; eln_spatial and rattle take all their scratch from the
 * stepper for any n). */
#ifndef LF_SPHERES_H
#define LF_SPHERES_H

#include "base/export.h"
#include <stddef.h>

#include "model/system.h"

LF_BEGIN_DECLS

#define LF_SPHERES_STACK_N 32

/* The potential: V(q) into *V and/or its gradient dV/dq_i (3n numbers, the Euclidean gradient in
 * R^{3n}; only its components tangent to the spheres enter the motion) into g, at q (3n numbers,
 * near-unit vectors). Either V or g may be NULL. */
typedef int (*lf_spheres_potential_fn)(void *ctx, int n, const double *q, double *V, double *g, lf_error *err);

typedef struct lf_spheres_def {
    const char *name;                   /* shown by tostring ("lua", ...) */
    lf_spheres_potential_fn potential;  /* required */
    void *ctx;
    void (*destroy)(void *ctx);         /* optional: runs when the system is freed (or fails to be made) */
} lf_spheres_def;

/* n spheres with coupling M (n x n row-major, symmetric positive definite; checked), potential
 * def (NULL: V = 0), initial q0 (3n, unit within 1e-12) and omega0 (3n, q_i . omega_i = 0 within
 * 1e-12 max(1, |omega_i|); NULL: 0). NULL with err filled on bad input (the message names the
 * value). */
lf_system *lf_spheres_new(int n, const double *M, const lf_spheres_def *def, const double *q0, const double *omega0,
                          lf_error *err);

/* Built-ins (potentials in C):
 * The spherical pendulum (thesis §7.2.1): M = m l^2, V = m g l up . q (up: unit vector against
 * gravity; the thesis's k = e3).
 * The double spherical pendulum (thesis §7.2.2): M = [[(m1+m2) l1^2, m2 l1 l2], [m2 l1 l2, m2 l2^2]],
 * V = (m1+m2) g l1 up . q1 + m2 g l2 up . q2 (the thesis prints V = -(...) k . q: its k points
 * down, i.e. up = -e3 reproduces it).
 * The rows x cols array of magnetic needles (thesis §7.2.3, Lee-Leok-McClamroch): pivots on the
 * grid r_i = spacing ((i-1) mod cols, floor((i-1)/cols), 0) (row-major, x fastest), each a needle
 * of mass m and length l pinned at its middle (M = diag(m l^2/12)) carrying the moment `moment`,
 *     V = sum_{i<j} kappa / |r_ij|^3 [q_i . q_j - 3 (q_i . e_ij)(q_j . e_ij)],
 * kappa = (mu0/4pi) moment^2 = 1e-7 moment^2 (SI), e_ij = r_ij/|r_ij|; pair sum O(n^2) with the
 * pair geometry tabulated by grid offset (no allocation at evaluation).
 * q0, omega0 as for lf_spheres_new. The axis of axial_momentum is `up` for the pendulums, e3 for
 * the needles. */
lf_system *lf_spheres_pendulum(double m, double l, double g, const double up[3], const double *q0,
                               const double *omega0, lf_error *err);
lf_system *lf_spheres_double_pendulum(double m1, double m2, double l1, double l2, double g, const double up[3],
                                      const double *q0, const double *omega0, lf_error *err);
lf_system *lf_spheres_dipoles(int rows, int cols, double spacing, double m, double l, double moment, const double *q0,
                              const double *omega0, lf_error *err);

/* The definition of the potential (NULL for a built-in potential or another kind of system). */
const lf_spheres_def *lf_spheres_definition(const lf_system *s);
/* Number of spheres n (0 for a system of another kind). */
int lf_spheres_n(const lf_system *s);
/* The coupling M (n x n, row-major); 1 if M is diagonal. */
const double *lf_spheres_mass(const lf_system *s);
int lf_spheres_diagonal(const lf_system *s);
/* The potential's name ("pendulum", "double_pendulum", "dipoles", "free", or the def's name). */
const char *lf_spheres_potential_name(const lf_system *s);
/* Set the axis k of the observable axial_momentum (normalized; nonzero and finite). Call before
 * the system is shared. */
int lf_spheres_set_axis(lf_system *s, const double k[3], lf_error *err);
const double *lf_spheres_axis(const lf_system *s);

/* V and/or the gradient (3n) at q, as the system's potential computes them. */
int lf_spheres_potential(const lf_system *s, const double *q, double *V, double *g, lf_error *err);

/* The angular acceleration alpha (3n) at (q, omega) (004 (6.5b), constraint-force form);
 * work: lf_spheres_work_size(n) doubles. */
size_t lf_spheres_work_size(int n);
int lf_spheres_alpha(const lf_system *s, const double *q, const double *omega, double *alpha, double *work,
                     lf_error *err);
/* alpha is affine in the centripetal terms s_k = |omega_k|^2: alpha = alphaV + L s, with
 * alphaV = alpha at s = 0 (3n) and L (3n x n, row-major: L[(3i + c) n + k] = d alpha_i,c / d s_k,
 * q_i . L_ik = 0); L = 0 for diagonal M. work: lf_spheres_work_size(n) doubles. */
int lf_spheres_alpha_affine(const lf_system *s, const double *q, double *alphaV, double *L, double *work, lf_error *err);

/* omega_i = q_i x qdot_i (the angular velocity of a tangent velocity qdot_i, App. A.1). */
void lf_spheres_omega_from_qdot(int n, const double *q, const double *qdot, double *omega);

LF_END_DECLS

#endif
