/* lieflow — Lie-group ODEs y' = f(t, y) . y (right-trivialized) or y . f(t, y) (left) on a product
 * manifold (manifold.h), with f from a callback (a C function, or a Lua function through the
 * binding) or a built-in of lie_ode_builtins.c.
 * Field y (every factor); observables energy (when an energy/first integral is given) and
 * manifold_defect (lf_manifold_defect of the state). */
#ifndef LF_LIE_ODE_H
#define LF_LIE_ODE_H

#include "system.h"

typedef int (*lf_lie_ode_fn)(void *ctx, double t, const double *y, double *xi, lf_error *err);
typedef int (*lf_lie_ode_jacobian_fn)(void *ctx, double t, const double *y, double *D, lf_error *err);
typedef int (*lf_lie_ode_energy_fn)(void *ctx, const double *y, double *E, lf_error *err);

typedef struct lf_lie_ode_def {
    const char *name;                 /* shown by tostring ("lua", "s2_gradient_flow", ...) */
    lf_lie_ode_fn f;                  /* required */
    lf_lie_ode_jacobian_fn jacobian;  /* optional, see lf_system_jacobian */
    lf_lie_ode_energy_fn energy;      /* optional: an energy to monitor (a first integral or not) */
    void *ctx;
    void (*destroy)(void *ctx);       /* optional: runs when the system is freed (or fails to be made) */
} lf_lie_ode_def;

/* A Lie ODE on a copy of M from y0 (checked: on the manifold within 1e-9). */
lf_system *lf_lie_ode_new(const lf_manifold *M, const double *y0, const lf_lie_ode_def *def, lf_error *err);
/* The name given in the definition ("" for another kind of system). */
const char *lf_lie_ode_name(const lf_system *s);

/* Built-in vector fields in C, by name with numeric parameters (lie_ode_builtins.c):
 *   "s2_gradient_flow"  factors {s2}: q' = -D q + (q^T D q) q, the gradient flow of
 *                       E(q) = 1/2 q^T D q on S^2 (Tumiotto et al. eq. (2)); params D (3, the
 *                       diagonal); xi = D q x q; analytic Jacobian; energy E.
 *   "gl3_linear"        factors {gl3}, right-trivialized: Y' = A(t) Y, A(t) = A0 + sin(t) A1;
 *                       params A0 (9), A1 (9); analytic Jacobian (0: f does not depend on Y).
 *   "free_rigid_quat"   factors {s3}, right-trivialized: the free rigid body's attitude as a unit
 *                       quaternion with fixed spatial momentum m0: xi = R(q) J^{-1} R(q)^T m0,
 *                       energy H = 1/2 m0^T R J^{-1} R^T m0; params J (3), m0 (3).
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

#endif
