/* lieflow — rigid-body models: n >= 1 bodies with principal inertias and a potential.
 *
 * State of body i: R_i (double[9] at R + 9i) and body angular velocity w_i (double[3] at w + 3i),
 * R_i' = R_i hat(w_i),  J_i w_i' = J_i w_i x w_i + tau_i(R),  tau_i = -dU/dR_i in the left
 * trivialization: tau_i . y = -d/de U(.., R_i exp(e hat(y)), ..) at e = 0 (DESIGN §2, seed 000 §1).
 * Energy E = sum_i 1/2 w_i^T J_i w_i + U(R_1..R_n). */
#ifndef LF_SYSTEM_H
#define LF_SYSTEM_H

#include <stddef.h>

#include "error.h"

typedef struct lf_potential lf_potential;

/* Evaluate the potential of nb bodies at rotations R[9*nb]: *U (if U != NULL) and the body torques
 * tau[3*nb] (if tau != NULL). Returns LF_OK or an error status with a message in err. */
typedef int (*lf_potential_eval_fn)(const lf_potential *p, int nb, const double *R, double *U,
                                    double *tau, lf_error *err);

struct lf_potential {
    const char *name;          /* "free", "stress", "field", "coulomb_wall", "lua", ... */
    lf_potential_eval_fn eval; /* NULL means free body (U = 0, tau = 0) */
    void *ctx;                 /* callback context (the Lua binding keeps its state here) */
    double par[24];            /* parameters of the built-ins (see potential.c) */
};

typedef struct lf_system {
    int nb;            /* number of bodies */
    double *J;         /* 3*nb principal moments of inertia, all > 0 */
    lf_potential pot;
} lf_system;

/* Allocate a system of nb bodies with inertias J[3*nb] (copied) and a potential (copied).
 * Checks: nb >= 1, every moment finite and > 0. Returns NULL with err filled on failure. */
lf_system *lf_system_new(int nb, const double *J, const lf_potential *pot, lf_error *err);
void lf_system_free(lf_system *sys);

/* Potential energy and/or torques (NULL to skip). Also checks that results are finite. */
int lf_system_potential(const lf_system *sys, const double *R, double *U, double *tau, lf_error *err);
/* Total energy E = T + U. */
int lf_system_energy(const lf_system *sys, const double *R, const double *w, double *E, lf_error *err);
/* Kinetic energy sum 1/2 w^T J w. */
double lf_system_kinetic(const lf_system *sys, const double *w);
/* Total spatial angular momentum sum_i R_i J_i w_i (double[3]). */
void lf_system_spatial_momentum(const lf_system *sys, const double *R, const double *w, double pi[3]);
/* Check a state: rotations within tol of SO(3) (||R^T R - I||, |det R - 1|) and finite w. */
int lf_system_check_state(const lf_system *sys, const double *R, const double *w, double tol, lf_error *err);

/* Built-in potentials (potential.c). Each fills *p; none allocates. */
void lf_potential_free_body(lf_potential *p);
/* Seed 000 eq. (12): U = (dist(R, I) - 1)^2 - alpha / dist(R, Rm), dist(A,B) = ||A - B||_F. */
void lf_potential_stress(lf_potential *p, double alpha, const double Rm[9]);
/* Uniform field acting on a body-fixed vector: U = -B . (R m)   (B spatial, m body). */
void lf_potential_field(lf_potential *p, const double B[3], const double m[3]);
/* Lagrangian top (seed 003 §3.3): U = mgl e3 . (R chi); torque -mgl R^T e3 x chi... = field with
 * B = -mgl e3, m = chi. Seed 003 uses mgl = 20, chi = e3: spatial torque -20 R(:,3) x e3. */
void lf_potential_top(lf_potential *p, double mgl, const double chi[3]);
/* Seed 003 §3.7, Coulomb potential with a soft wall: with c = R_33 = e3 . R e3,
 * U = 1/(1.1 + c) - 0.001/(1.1 + c)^10, whose spatial torque is the printed
 * (-(1.1+c)^-2 + 0.01 (1.1+c)^-11) [-R23; R13; 0]. */
void lf_potential_coulomb_wall(lf_potential *p);

#endif
