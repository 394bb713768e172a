/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — potentials of rigid bodies: U(R_1..R_n) and the body torques tau_i = -dU/dR_i in the
 * left trivialization, tau_i . y = -d/de U(.., R_i exp(e hat(y)), ..) at e = 0 (conventions in so3.h).
 *
 * A potential is an object with its own parameters (allocated by its constructor, released by
 * lf_potential_free). The built-ins are classes (lf_potential_class): one record each, with the
 * parameter schema, the check of the parameters, U and the torque of one body, the lanes kernel and
 * the description, listed by a registry (lf_potential_class_count/at/find; the records are in
 * potential_classes.c); lf_potential_create makes a potential of a class from a parameter vector. A
 * host (the Lua binding) makes its own with lf_potential_new and an evaluation callback. A
 * single-body built-in acts on every body of a system (U is the sum over the bodies). */
#ifndef LF_POTENTIAL_H
#define LF_POTENTIAL_H

#include "base/export.h"
#include <stddef.h>

#include "base/error.h"

LF_BEGIN_DECLS

typedef struct lf_potential lf_potential;

/* Evaluate at rotations R[9 nb]: *U (if U != NULL) and torques tau[3 nb] (if tau != NULL). */
typedef int (*lf_potential_eval_fn)(void *ctx, int nb, const double *R, double *U, double *tau, lf_error *err);

/* Bodies that translate: a potential may depend on their centres of mass x_i too, U(x_1..x_n, R_1..R_n),
 * with the forces F_i = -dU/dx_i (spatial) beside the torques. It is evaluated at a configuration:
 * the bodies' masses and principal moments (a uniform field weighs the masses, a central field's
 * gravity gradient needs the moments), positions and attitudes. */
typedef struct lf_bodies_config {
    int nb;
    const double *mass; /* nb */
    const double *J;    /* 3 nb principal moments */
    const double *x;    /* 3 nb centres of mass */
    const double *R;    /* 9 nb attitudes */
} lf_bodies_config;
/* U (if U != NULL), forces F[3 nb] and torques tau[3 nb] (each if not NULL) at configuration c. */
typedef int (*lf_potential_eval_x_fn)(void *ctx, const lf_bodies_config *c, double *U, double *F, double *tau,
                                      lf_error *err);

/* ---------------------------------------------------------------- classes of built-in potentials */
/* A parameter: a number, a vector, a 3x3 matrix or a rotation (row-major), `size` doubles of the
 * class's parameter vector, which holds the parameters one after the other in schema order. */
typedef enum { LF_PARAM_NUMBER, LF_PARAM_VEC3, LF_PARAM_MAT3, LF_PARAM_ROTATION } lf_param_type;

typedef struct lf_potential_param {
    const char *name;   /* as constructors name it: "alpha", "Rm" */
    lf_param_type type; /* the size follows: 1, 3, 9, 9 (lf_param_size) */
    int required;       /* 1: no default, a constructor must be given it */
    double def[9];      /* the default (a rotation: the rotation vector v of exp(hat v)) */
    const char *doc;    /* what it is, e.g. "spatial field" (messages, listings) */
} lf_potential_param;

#define LF_POTENTIAL_MAXPARAMS 4 /* parameters of a class */
#define LF_POTENTIAL_MAXALT 3    /* alternative names of one parameter */
#define LF_POTENTIAL_MAXPAR 32   /* doubles of a parameter vector */

/* A built-in potential. Every function gets the parameter vector par (checked by `check`). Values
 * of parameters are valid when finite (rotations: lf_so3_check within 1e-9) and `check` accepts them. */
typedef struct lf_potential_class {
    const char *name;    /* registry key, lf_potential_name, the Lua constructor lf.potential.<name> */
    const char *formula; /* one line: what U is */
    int nparams;
    lf_potential_param params[LF_POTENTIAL_MAXPARAMS];
    /* Optional: other parameters a constructor accepts instead of params[alt_for] (the top's m, g, l
     * for mgl), not stored: given some of them (the others at their defaults) and not params[alt_for],
     * that parameter is from_alt(their values) (numbers only). */
    int nalt, alt_for;
    lf_potential_param alt[LF_POTENTIAL_MAXALT];
    double (*from_alt)(const double *alt);
    /* Optional: refuse invalid parameters with a message "<name> potential: ..." (NULL: the generic
     * check above, which messages "<name> potential: alpha = nan must be finite"). */
    int (*check)(const double *par, lf_error *err);
    /* U and the torques of nb bodies, called with ctx = par; or, for a potential of the positions of
     * translating bodies, eval_x (exactly one of the two is set). */
    lf_potential_eval_fn eval;
    lf_potential_eval_x_fn eval_x;
    /* Optional: the torques of B one-body lanes (as lf_potential_torque_lanes), bitwise equal to
     * eval on each lane; nonzero when one is not finite (the caller then finds the lane with eval). */
    int (*torque_lanes)(const double *par, int B, const double *R, double *tau);
    /* Optional: "name(p = v, ...)" (NULL: generated from the schema, lf_potential_describe). */
    int (*describe)(const double *par, char *buf, size_t size);
} lf_potential_class;

/* The registry of built-in classes (stress, top, field, coulomb_wall; of positions: gravity, central). */
int lf_potential_class_count(void);
const lf_potential_class *lf_potential_class_at(int i);
const lf_potential_class *lf_potential_class_find(const char *name); /* NULL if unknown */
/* 1, 3, 9, 9 */
int lf_param_size(lf_param_type type);
/* The doubles of the class's parameter vector. */
int lf_potential_class_npar(const lf_potential_class *c);
/* The parameter vector of the defaults (0 for a required parameter) into par. */
void lf_potential_class_defaults(const lf_potential_class *c, double *par);
/* A potential of class c with the parameters par (lf_potential_class_npar doubles; checked). c may
 * be a record of the host's own (it must outlive the potential). */
lf_potential *lf_potential_create(const lf_potential_class *c, const double *par, lf_error *err);
/* The class of a potential made by lf_potential_create and its parameter vector (NULL otherwise). */
const lf_potential_class *lf_potential_class_of(const lf_potential *p);
const double *lf_potential_params(const lf_potential *p);

/* A potential from a callback; destroy(ctx) (may be NULL) runs in lf_potential_free. lf_potential_new_x:
 * the same for a potential of positions (translating bodies). */
lf_potential *lf_potential_new(const char *name, lf_potential_eval_fn eval, void *ctx, void (*destroy)(void *ctx),
                               lf_error *err);
lf_potential *lf_potential_new_x(const char *name, lf_potential_eval_x_fn eval, void *ctx, void (*destroy)(void *ctx),
                                 lf_error *err);
/* 1 if p depends on the bodies' positions (made by lf_potential_new_x or of a class with eval_x): it
 * acts on translating bodies only. */
int lf_potential_of_positions(const lf_potential *p);
/* The built-ins by their parameters (the same as lf_potential_create of their class); a NULL Rm or
 * chi is the default (the stress test's exp(v_m), e3), B and m are required.
 * The stress-test potential of Bou-Rabee, Ortolan & Saccon, eq. (12):
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
/* Of positions. A uniform gravity field g on the centres of mass: U = -sum_i m_i g . x_i (F_i = m_i g,
 * no torque). */
lf_potential *lf_potential_gravity(const double g[3], lf_error *err);
/* A point mass mu = G M at c attracting every body, to second order in the body's size (the body's
 * mutual potential with a point mass; MacCullagh's formula): with r = x - c, |r| = r, u = R^T r / r,
 *   U = -mu m / r - mu / (2 r^3) (tr J - 3 u . J u),
 * the Newtonian potential and the gravity gradient that couples orbit and attitude (Hughes,
 * "Spacecraft Attitude Dynamics" §8.1). c NULL: the origin. */
lf_potential *lf_potential_central(double mu, const double c[3], lf_error *err);
/* Bodies made of point masses attracting each other: body b carries npoints[b] points of masses pm at
 * body-frame positions s (3 each; the points of all bodies one after the other), and
 *   U = -G sum over pairs of bodies a < b, points i of a, j of b:  m_i m_j / |x_a + R_a s_i - x_b - R_b s_j|
 * (the full body problem with bodies as sets of point masses; points of one body do not interact). */
lf_potential *lf_potential_point_masses(int nb, const int *npoints, const double *s, const double *pm, double G,
                                        lf_error *err);
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
/* The same for a potential of positions: K with respect to the attitudes at the configuration c (the
 * positions held fixed); a potential of R alone ignores c's positions. */
typedef int (*lf_potential_jacobian_x_fn)(void *ctx, const lf_bodies_config *c, double *K, lf_error *err);
void lf_potential_set_jacobian_x(lf_potential *p, lf_potential_jacobian_x_fn jac);
int lf_potential_jacobian_x(const lf_potential *p, const lf_bodies_config *c, double *K, lf_error *err);
/* The context of a potential made by lf_potential_new (lf_potential_new_x) with this eval function
 * (NULL otherwise): how a kind of callback potential recognizes its own. */
void *lf_potential_context(const lf_potential *p, lf_potential_eval_fn eval);
void *lf_potential_context_x(const lf_potential *p, lf_potential_eval_x_fn eval);

/* The class's name ("stress", ...) or the name given to lf_potential_new. */
const char *lf_potential_name(const lf_potential *p);
/* The name and parameters, e.g. "stress(alpha = 0.3, Rm = [...])", into buf (snprintf semantics):
 * the class's describe, or from its schema: numbers %g, vectors "(x, y, z)", matrices "[a b c; ...]". */
int lf_potential_describe(const lf_potential *p, char *buf, size_t size);
/* Evaluate (p == NULL: the free body, U = 0, tau = 0); results are checked finite. A potential of
 * positions is refused (LF_EINVAL): it needs lf_potential_eval_x. */
int lf_potential_eval(const lf_potential *p, int nb, const double *R, double *U, double *tau, lf_error *err);
/* Evaluate at the configuration of translating bodies: U, forces F (3 nb) and torques tau (3 nb), each
 * output optional, checked finite; a potential of R alone (or none) gives F = 0. */
int lf_potential_eval_x(const lf_potential *p, const lf_bodies_config *c, double *U, double *F, double *tau,
                        lf_error *err);
/* The torques of B separate one-body configurations stored in lanes (structure of arrays: entry k
 * of rotation j at R[k B + j], component k of its torque at tau[k B + j]), bitwise equal to B calls
 * lf_potential_eval(p, 1, R_j, NULL, tau_j, err); the built-ins run vectorized, a callback is called
 * once per lane. Results are checked finite; an error names the first failing lane. */
int lf_potential_torque_lanes(const lf_potential *p, int B, const double *R, double *tau, lf_error *err);
/* The same for B lanes of one translating body of mass m and moments J at positions x (in lanes, 3 B)
 * and attitudes R: torques and forces F (3 B, in lanes; F may be NULL). */
int lf_potential_eval_x_lanes(const lf_potential *p, int B, double m, const double *J, const double *x, const double *R,
                              double *tau, double *F, lf_error *err);

LF_END_DECLS

#endif
