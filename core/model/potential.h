/* lieflow — potentials of rigid bodies: U(R_1..R_n) and the body torques tau_i = -dU/dR_i in the
 * left trivialization, tau_i . y = -d/de U(.., R_i exp(e hat(y)), ..) at e = 0 (conventions in so3.h).
 *
 * A potential is an object with its own parameters (allocated by its constructor, released by
 * lf_potential_free). Built-ins are implemented in C (potential.c); a host (the Lua binding) makes
 * its own with lf_potential_new and an evaluation callback. A single-body built-in acts on every
 * body of a system (U is the sum over the bodies). */
#ifndef LF_POTENTIAL_H
#define LF_POTENTIAL_H

#include <stddef.h>

#include "error.h"

typedef struct lf_potential lf_potential;

/* Evaluate at rotations R[9 nb]: *U (if U != NULL) and torques tau[3 nb] (if tau != NULL). */
typedef int (*lf_potential_eval_fn)(void *ctx, int nb, const double *R, double *U, double *tau, lf_error *err);

/* A potential from a callback; destroy(ctx) (may be NULL) runs in lf_potential_free. */
lf_potential *lf_potential_new(const char *name, lf_potential_eval_fn eval, void *ctx, void (*destroy)(void *ctx),
                               lf_error *err);
/* The stress-test potential of Bou-Rabee, Ortolan & Saccon, eq. (12):
 * U = (dist(R, I) - 1)^2 - alpha / dist(R, Rm), dist(A, B) = ||A - B||_F. */
lf_potential *lf_potential_stress(double alpha, const double Rm[9], lf_error *err);
/* Uniform field acting on a body-fixed vector: U = -B . (R m)   (B spatial, m body). */
lf_potential *lf_potential_field(const double B[3], const double m[3], lf_error *err);
/* Lagrangian top (Krysl §3.3): U = mgl e3 . (R chi) (the field potential with B = -mgl e3, m = chi). */
lf_potential *lf_potential_top(double mgl, const double chi[3], lf_error *err);
/* Krysl §3.7, Coulomb potential with a soft wall: with c = R_33 = e3 . R e3,
 * U = 1/(1.1 + c) - 0.001/(1.1 + c)^10 (its spatial torque is the printed
 * (-(1.1+c)^-2 + 0.01 (1.1+c)^-11) [-R23; R13; 0]). */
lf_potential *lf_potential_coulomb_wall(lf_error *err);
void lf_potential_free(lf_potential *p);

/* The torque Jacobian K (3 nb x 3 nb, row-major) at R: K[r][3 j + m] = d tau_r / de at e = 0 of
 * the rotations with R_j replaced by R_j exp(e hat(e_m)) (the left trivialization). A potential
 * may supply it (compiled potentials do: potential_graph.h); the implicit rigid-body methods
 * (tln, ...) then use it for Newton instead of differences of the torque. */
typedef int (*lf_potential_jacobian_fn)(void *ctx, int nb, const double *R, double *K, lf_error *err);
void lf_potential_set_jacobian(lf_potential *p, lf_potential_jacobian_fn jac);
int lf_potential_has_jacobian(const lf_potential *p);
/* K at R (checked finite); LF_EINVAL if the potential has none. */
int lf_potential_jacobian(const lf_potential *p, int nb, const double *R, double *K, lf_error *err);
/* The context of a potential made by lf_potential_new with this eval function (NULL otherwise):
 * how a kind of callback potential recognizes its own. */
void *lf_potential_context(const lf_potential *p, lf_potential_eval_fn eval);

/* "stress", "field", "top", "coulomb_wall" or the name given to lf_potential_new. */
const char *lf_potential_name(const lf_potential *p);
/* The name and parameters, e.g. "stress(alpha = 0.3, Rm = [...])", into buf (snprintf semantics). */
int lf_potential_describe(const lf_potential *p, char *buf, size_t size);
/* Evaluate (p == NULL: the free body, U = 0, tau = 0); results are checked finite. */
int lf_potential_eval(const lf_potential *p, int nb, const double *R, double *U, double *tau, lf_error *err);
/* The torques of B separate one-body configurations stored in lanes (structure of arrays: entry k
 * of rotation j at R[k B + j], component k of its torque at tau[k B + j]), bitwise equal to B calls
 * lf_potential_eval(p, 1, R_j, NULL, tau_j, err); the built-ins run vectorized, a callback is called
 * once per lane. Results are checked finite; an error names the first failing lane. */
int lf_potential_torque_lanes(const lf_potential *p, int B, const double *R, double *tau, lf_error *err);

#endif
