/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — Lie-group ODEs y' = f(t, y) . y (right-trivialized) or y . f(t, y) (left) on a product
 * manifold (manifold.h), with f from a callback (a C function, or a Lua function through the
 * binding) or a built-in of lie_ode_builtins.c.
 * Field y (every factor); observables energy (when an energy/first integral is given) and
 * manifold_defect (lf_manifold_defect of the state). */
#ifndef LF_LIE_ODE_H
#define LF_LIE_ODE_H

#include "base/export.h"
#include "model/system.h"

LF_BEGIN_DECLS

typedef int (*lf_lie_ode_fn)(void *ctx, double t, const double *y, double *xi, lf_error *err);
typedef int (*lf_lie_ode_jacobian_fn)(void *ctx, double t, const double *y, double *D, lf_error *err);
typedef int (*lf_lie_ode_energy_fn)(void *ctx, const double *y, double *E, lf_error *err);
/* the trivialized differential g = dH(y) (ndim doubles), see lf_system_dH */
typedef int (*lf_lie_ode_dH_fn)(void *ctx, const double *y, double *g, lf_error *err);
/* out = w(y)(a), a skew map of the algebra with f(y) = w(y)(dH(y)), see lf_system_skew */
typedef int (*lf_lie_ode_skew_fn)(void *ctx, const double *y, const double *a, double *out, lf_error *err);

typedef struct lf_lie_ode_def {
    const char *name;                 /* shown by tostring ("lua", "s2_gradient_flow", ...) */
    lf_lie_ode_fn f;                  /* required */
    lf_lie_ode_jacobian_fn jacobian;  /* optional, see lf_system_jacobian */
    lf_lie_ode_energy_fn energy;      /* optional: an energy to monitor (a first integral or not) */
    void *ctx;
    void (*destroy)(void *ctx);       /* optional: runs when the system is freed (or fails to be made) */
    /* optional, the first-integral form (offered when H and dH are both given): a first integral
     * H (also the monitored energy when `energy` is NULL), its trivialized differential dH and a
     * skew map (NULL: the default of lf_system_skew) */
    lf_lie_ode_energy_fn H;
    lf_lie_ode_dH_fn dH;
    lf_lie_ode_skew_fn skew;
} lf_lie_ode_def;

/* A Lie ODE on a copy of M from y0 (checked: on the manifold within 1e-9). */
lf_system *lf_lie_ode_new(const lf_manifold *M, const double *y0, const lf_lie_ode_def *def, lf_error *err);
/* The name given in the definition ("" for another kind of system). */
const char *lf_lie_ode_name(const lf_system *s);
/* The definition a Lie ODE was made from (NULL for another kind of system). */
const lf_lie_ode_def *lf_lie_ode_definition(const lf_system *s);

/* Built-in vector fields in C, by name with numeric parameters (lie_ode_builtins.c):
 *   "s2_gradient_flow"  factors {s2}: q' = -D q + (q^T D q) q, the gradient flow of
 *                       E(q) = 1/2 q^T D q on S^2 (Tumiotto et al. eq. (2)); params D (3, the
 *                       diagonal); xi = D q x q; analytic Jacobian; energy E.
 *   "gl3_linear"        factors {gl3}, right-trivialized: Y' = A(t) Y, A(t) = A0 + sin(t) A1;
 *                       params A0 (9), A1 (9); analytic Jacobian (0: f does not depend on Y).
 *   "free_rigid_quat"   factors {s3}, right-trivialized: the free rigid body's attitude as a unit
 *                       quaternion with fixed spatial momentum m0: xi = R(q) J^{-1} R(q)^T m0,
 *                       energy H = 1/2 m0^T R J^{-1} R^T m0; params J (3), m0 (3). First integral H,
 *                       dH = w_s x m0 (right-trivialized, w_s = xi) or W x M (left, body W, M),
 *                       default skew map (Celledoni & Owren §5.1).
 *   "rigid_body_s2"     factors {s2}: the free rigid body's body angular momentum m on the unit
 *                       sphere, m' = m x I^{-1} m, acted on by SO(3): xi = -I^{-1} m; params I (3).
 *                       First integral H = 1/2 m . I^{-1} m, dH = m x I^{-1} m, skew map
 *                       w(m)(a) = m x a (the Lie–Poisson structure: w(m)(dH) = xi + (m.I^-1 m) m,
 *                       the same vector field on S^2); analytic Jacobian.
 *   "pseudo_rigid_svk"  factors {tgl3}, right-trivialized: a St Venant–Kirchhoff pseudo-rigid body
 *                       on T*GL(3) (Celledoni & Owren §5.2): H = 1/2 tr(P J^-1 P^T)
 *                       + W(F^T F), W(C) = lambda/2 (tr E)^2 + mu tr(E^2), E = (C - I)/2,
 *                       S = lambda tr(E) I + 2 mu E; F' = P J^-1, P' = -F S, so
 *                       xi = (P J^-1 F^-1, -F S F^T + F^-T J^-1 P^T P F^T),
 *                       dH = (F S F^T - P J^-1 P^T, P J^-1 F^-1), skew map (the canonical Poisson
 *                       tensor in these coordinates) w(a, b) = (b, -a + b^T m - m b^T), m = P F^T;
 *                       params J (3, the diagonal of the inertia tensor), lambda, mu.
 *   "ts2_gradient_flow" factors {ts2}: the gradient flow of E(q, w) = 1/2 q^T D q + 1/2 |w|^2 for
 *                       the Sasaki metric on TS^2 (Tumiotto, Cokaj, Celledoni, Owren, Arnold eq. (3),
 *                       with the factor w the print lost: G = dE/dq - (q . dE/dw) w = D q):
 *                       q' = -D q + (q^T D q) q, w' = -w - (q' . w) q; acted on by SE(3) with
 *                       xi = (D q x q, w x q); params D (3); analytic Jacobian; energy E.
 * lf_lie_ode_builtin_params lists a built-in's parameter names and sizes (NULL: unknown name). */
typedef struct lf_lie_ode_param {
    const char *name;
    int size;
} lf_lie_ode_param;
const lf_lie_ode_param *lf_lie_ode_builtin_params(const char *name, int *nparams);
/* Make a built-in: params holds the parameters one after the other, in the listed order. */
lf_system *lf_lie_ode_builtin(const char *name, const lf_manifold *M, const double *y0, const double *params,
                              lf_error *err);
/* The names of the built-ins, NULL-terminated. */
const char *const *lf_lie_ode_builtin_names(void);
/* The definition a built-in is made from (its ctx allocated: pass def to lf_lie_ode_new, which owns
 * it from then on, or call def->destroy(def->ctx)); a caller may change it first, e.g. set
 * def->skew = NULL for the default skew map. */
int lf_lie_ode_builtin_def(const char *name, const lf_manifold *M, const double *params, lf_lie_ode_def *def,
                           lf_error *err);

LF_END_DECLS

#endif
