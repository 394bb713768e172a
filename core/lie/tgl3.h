/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the cotangent bundle T*GL(3) as a Lie group (the phase space of a pseudo-rigid body,
 * Celledoni & Owren / Lewis and Simo): points (F, P), F invertible (deformation
 * gradient), P its momentum, two 3x3 matrices row-major (18 doubles). The cotangent-lifted group law
 *     (F1, P1)(F2, P2) = (F1 F2,  F1^-T P2 + P1 F2^-T),   identity (I, 0),  (F, P)^-1 = (F^-1, -F^T P F^T)
 * is faithfully represented by the 6x6 matrices rep(F, P) = [[F^-T, P], [0, F^-T]]. Algebra
 * gl(3) x gl(3) with (A, B) <-> [[-A^T, B], [0, -A^T]]:
 *     [(A1, B1), (A2, B2)] = ([A1, A2],  -[A1^T, B2] + [A2^T, B1]),
 *     exp(A, B) = (e^A, Pe),  Pe = int_0^1 e^{-(1-s)A^T} B e^{-s A^T} ds (top-right block of the 6x6
 *     exponential of rep(A, B)).
 * Left action (right-trivialized ODE): (F, P) <- exp(A, B)(F, P) = (e^A F, e^{-A^T} P + Pe F^-T),
 * infinitesimally F' = A F, P' = -A^T P + B F^-T. Right action: (F, P) <- (F, P) exp(A, B) =
 * (F e^A, F^-T Pe + P e^{-A^T}), F' = F A, P' = F^-T B - P A^T. det F changes by e^{tr A} > 0.
 * Inner product: Frobenius on both components (the 18 coordinates are orthonormal), under which
 *     ad_(A,B)^T (C, D) = ([A^T, C] + B D^T - D^T B,  -[A, D]).
 * dexp_x = sum ad_x^k/(k+1)! and dexpinv_x = sum B_k/k! ad_x^k by their series on vectors where
 * 2(|A|_F + |B|_F) <= 1 (a bound of |ad_x|; terms until the remainder is below 1e-17), else
 * dexp_X(V) = T e^{-X} with T the top-right block of the 12x12 exponential of [[X, V], [0, X]]
 * (X, V the 6x6 representations; Van Loan), and dexpinv by solving with the 18x18 dexp matrix. */
#ifndef LF_TGL3_H
#define LF_TGL3_H

#include "base/export.h"
#include "base/error.h"

LF_BEGIN_DECLS

/* y <- exp(xi) y (right = 0) or y exp(xi) (right = 1), in place. LF_EDOMAIN if F is singular or
 * the exponential overflows (y is then left unchanged). */
int lf_tgl3_act(const double xi[18], double y[18], int right, lf_error *err);
/* Velocity of y' = xi y (right = 0) or y xi (right = 1). LF_EDOMAIN for singular F. */
int lf_tgl3_velocity(const double y[18], const double xi[18], int right, double ydot[18], lf_error *err);
/* xi with exp(xi) y0 = y1 (or y0 exp(xi) = y1): the principal logarithm of y1 y0^-1 (y0^-1 y1) in
 * the 6x6 representation. LF_EDOMAIN where it does not exist. */
int lf_tgl3_diff(const double y0[18], const double y1[18], int right, double xi[18], lf_error *err);
/* out = [x, y] (out may alias x or y). */
void lf_tgl3_bracket(const double x[18], const double y[18], double out[18]);
/* out = dexp_u(v) or dexpinv_u(v) (inverse = 1), or their transposes (transpose = 1); out may
 * alias v. */
int lf_tgl3_dexp(const double u[18], const double v[18], int inverse, int transpose, double out[18], lf_error *err);
/* The 6x6 representation rep(F, P) = [[F^-T, P], [0, F^-T]] (row-major). LF_EDOMAIN for singular F. */
int lf_tgl3_rep(const double y[18], double R[36]);

LF_END_DECLS

#endif
