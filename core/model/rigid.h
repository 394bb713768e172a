/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — rigid bodies: n >= 1 bodies with principal inertias and a potential.
 *
 * State y = (R_1..R_n, w_1..w_n): R_i (double[9] at y + 9i) and body angular velocity w_i
 * (double[3] at y + 9n + 3i), on the manifold SO(3)^n x (R^3)^n, left-trivialized:
 *   R_i' = R_i hat(w_i),  J_i w_i' = J_i w_i x w_i + tau_i(R),  tau_i = -dU/dR_i   (potential.h)
 * (Bou-Rabee, Ortolan & Saccon §1). Energy E = sum_i 1/2 w_i^T J_i w_i + U(R_1..R_n).
 * Forms: LF_FORM_RIGID (the rigid-body methods), LF_FORM_SECOND_ORDER and LF_FORM_LIE_ODE with
 * f(y) = (w_1..w_n, w_1'..w_n'), so every generic method runs on every rigid system.
 * Fields R and omega; observables energy, spatial_momentum (sum R_i J_i w_i), momentum (J_i w_i),
 * casimir (|J_1 w_1|) and orthogonality (max ||R_i^T R_i - I||_F).
 *
 * Bodies that translate (a mass each): the state goes on with the centres of mass x_i (at y + 12n + 3i)
 * and their velocities v_i (at y + 15n + 3i), on SO(3)^n x (R^3)^n x (R^3)^n x (R^3)^n:
 *   x_i' = v_i,  m_i v_i' = F_i(x, R),  F_i = -dU/dx_i,  with tau_i(x, R) in the equations above,
 * E = sum_i (1/2 m_i |v_i|^2 + 1/2 w_i^T J_i w_i) + U(x, R) (the centre-of-mass coordinates of
 * LAMMPS' fix rigid, NO_SQUISH and the full-body LGVI of Lee, Leok & McClamroch). Forms: LF_FORM_RIGID
 * (translating = 1), LF_FORM_LIE_ODE and LF_FORM_FIRST_INTEGRAL (not LF_FORM_SECOND_ORDER). Fields
 * R, omega, x, v; observables as above and linear_momentum (P = sum m_i v_i), angular_momentum (L = sum
 * x_i x m_i v_i + R_i J_i w_i, about the origin), kinetic_translation and kinetic_rotation. */
#ifndef LF_RIGID_H
#define LF_RIGID_H

#include "base/export.h"
#include "model/forcing.h"
#include "model/potential.h"
#include "model/system.h"

LF_BEGIN_DECLS

/* nb bodies with inertias J[3 nb] (copied; finite and > 0) and a potential (borrowed: it must
 * outlive the system; NULL: free bodies). The initial state is (I, 0) for every body. A potential of
 * positions (lf_potential_of_positions) is refused: those bodies must translate. */
lf_system *lf_rigid_new(int nb, const double *J, const lf_potential *pot, lf_error *err);
/* The same for bodies that translate, with masses[nb] (copied; finite and > 0): the initial state is
 * (I, 0, 0, 0) for every body. mass NULL: lf_rigid_new. */
lf_system *lf_rigid_new_translating(int nb, const double *J, const double *mass, const lf_potential *pot,
                                    lf_error *err);

/* Attach a forcing (borrowed: it must outlive the system; NULL: none) to a rigid system, before
 * steppers are made for it: it enters the Lie ODE f(t, y) of the generic methods, and the rigid
 * methods that take a forcing (lf_method_rigid_info.forcing) integrate it; the others refuse the
 * system. The energy stays the energy of the conservative part (a forcing does work on it). */
int lf_rigid_set_forcing(lf_system *s, const lf_forcing *f, lf_error *err);
const lf_forcing *lf_rigid_forcing(const lf_system *s);

/* For a rigid system (0 / NULL otherwise): number of bodies, inertias (3 nb), masses (nb; NULL when
 * the bodies only rotate), potential. */
int lf_rigid_nbodies(const lf_system *s);
const double *lf_rigid_inertia(const lf_system *s);
const double *lf_rigid_masses(const lf_system *s);
const lf_potential *lf_rigid_potential(const lf_system *s);

/* Potential energy and/or torques at rotations R[9 nb] (NULL to skip), checked finite; bodies that
 * translate: lf_rigid_potential_eval_x at positions x[3 nb], with the forces F[3 nb] (F = 0 for bodies
 * that only rotate). */
int lf_rigid_potential_eval(const lf_system *s, const double *R, double *U, double *tau, lf_error *err);
int lf_rigid_potential_eval_x(const lf_system *s, const double *x, const double *R, double *U, double *F, double *tau,
                              lf_error *err);
/* Total energy sum_i 1/2 w_i^T J_i w_i + U(R) (bodies that only rotate: otherwise lf_system_energy),
 * total spatial angular momentum sum_i R_i J_i w_i. */
int lf_rigid_energy(const lf_system *s, const double *R, const double *w, double *E, lf_error *err);
void lf_rigid_spatial_momentum(const lf_system *s, const double *R, const double *w, double pi[3]);

LF_END_DECLS

#endif
