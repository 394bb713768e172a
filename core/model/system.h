/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — systems (problems): what an integrator integrates.
 *
 * A system is an object with its own parameters and a state layout on a product manifold
 * (manifold.h). It offers one or more problem forms; every method requires one form, and a stepper
 * joins a method with a system that offers it:
 *   LF_FORM_LIE_ODE         y' = f(t, y) . y (right-trivialized) or y . f(t, y) (left), f in the
 *                           algebra; every system offers it (the generic methods use only this)
 *   LF_FORM_RIGID           n rigid bodies with diagonal inertia and a potential, state
 *                           (R_1..R_n, w_1..w_n), and for bodies that translate (x_1..x_n, v_1..v_n)
 *                           after it: the typed fast path of the rigid-body methods
 *   LF_FORM_SECOND_ORDER    a Lie ODE on G x R^d whose configuration factors move with the velocity
 *                           factors: y = (g_1..g_n, v_1..v_n), f = (v, a(t, y)) (rigid bodies in the
 *                           body frame; systems on spheres in the spatial frame)
 *   LF_FORM_FIRST_INTEGRAL  a first integral H with its trivialized differential dH (discrete
 *                           gradients)
 *   LF_FORM_CONSTRAINED     a constrained mechanical system in R^{3n} (RATTLE)
 * A system also describes what a user sees of its state: named fields (ranges of factors, e.g. R and
 * omega of rigid bodies) and observables (energy, momenta, manifold defect ...), and it measures
 * errors with the manifold's distance, field by field. */
#ifndef LF_SYSTEM_H
#define LF_SYSTEM_H

#include "base/export.h"
#include <stddef.h>

#include "base/error.h"
#include "lie/manifold.h"

LF_BEGIN_DECLS

typedef struct lf_system lf_system;

enum {
    LF_FORM_LIE_ODE = 1u << 0,
    LF_FORM_RIGID = 1u << 1,
    LF_FORM_SECOND_ORDER = 1u << 2,
    LF_FORM_FIRST_INTEGRAL = 1u << 3,
    LF_FORM_CONSTRAINED = 1u << 4,
};
/* "lie_ode", "rigid", "second_order", "first_integral", "constrained" for one form bit. */
const char *lf_form_name(unsigned form);

/* A named view of the state: the factors [first, first + count). */
typedef struct lf_field {
    const char *name;   /* "R", "omega", "y", "q" ... */
    int first, count;
    int scalar_if_one;  /* shown as one value (not an array of one) when count == 1 */
    int rm_as_vec3;     /* r3 factors shown as 3-vectors (else as arrays of numbers) */
} lf_field;

/* An observable: dim numbers computed from (t, y). */
typedef enum {
    LF_OBS_SCALAR,      /* one number */
    LF_OBS_VEC3,        /* one 3-vector */
    LF_OBS_VEC3_EACH    /* a 3-vector per item (dim = 3 count; one vector when count == 1) */
} lf_observable_kind;

typedef struct lf_observable {
    const char *name;     /* "energy", "spatial_momentum", ... */
    lf_observable_kind kind;
    int dim;
    const char *columns;  /* comma-separated column names for trajectories, taken from the first
                             entries (e.g. "pi1,pi2,pi3"); NULL: not recorded by default */
} lf_observable;

const char *lf_system_kind(const lf_system *s);       /* "rigidbody", "lie_ode", ... */
unsigned lf_system_forms(const lf_system *s);
const lf_manifold *lf_system_manifold(const lf_system *s);
int lf_system_nparam(const lf_system *s);
int lf_system_ndim(const lf_system *s);
void lf_system_free(lf_system *s);

/* The initial state the system was made with (nparam doubles), and replacing it (checked). */
const double *lf_system_initial(const lf_system *s);
int lf_system_set_initial(lf_system *s, const double *y0, lf_error *err);
/* Check a state: on the manifold within tol and whatever the system requires (finite velocities,
 * q . omega = 0 ...). The message names the field. */
int lf_system_check_state(const lf_system *s, const double *y, double tol, lf_error *err);

/* The Lie ODE: xi = f(t, y) (ndim doubles), checked finite. */
int lf_system_f(const lf_system *s, double t, const double *y, double *xi, lf_error *err);
/* Its Jacobian along the action, D[i][j] = d/de f(t, act(e e_j, y))_i at e = 0 (ndim x ndim,
 * row-major), if the system has one (lf_system_has_jacobian). */
int lf_system_has_jacobian(const lf_system *s);
int lf_system_jacobian(const lf_system *s, double t, const double *y, double *D, lf_error *err);

/* Energy (the first integral when there is one), if the system has one. Every function here
 * returns LF_EINVAL (or NULL / NaN) for NULL arguments instead of crashing. */
int lf_system_has_energy(const lf_system *s);
int lf_system_energy(const lf_system *s, const double *y, double *E, lf_error *err);

/* Fields and observables. lf_system_observe fills every observable at (t, y), one after the
 * other (lf_system_observables_dim doubles). */
/* The coupling groups of the factors, for block Jacobians: when every field has the same count
 * n > 1 (R[i] and omega[i] of rigid bodies, q[i] and omega[i] of spheres), factor j of each field
 * is in group j (a body's attitude and velocity are coupled); otherwise each factor is a group.
 * group: one entry per factor. Returns the number of groups. */
int lf_system_factor_groups(const lf_system *s, int *group);
int lf_system_nfields(const lf_system *s);
const lf_field *lf_system_field(const lf_system *s, int i);
const lf_field *lf_system_find_field(const lf_system *s, const char *name);
int lf_system_nobservables(const lf_system *s);
const lf_observable *lf_system_observable(const lf_system *s, int i);
int lf_system_observables_dim(const lf_system *s);
int lf_system_observe(const lf_system *s, double t, const double *y, double *out, lf_error *err);

/* First-integral form (LF_FORM_FIRST_INTEGRAL; McLachlan, Quispel & Robidoux; Celledoni & Owren
 * [CO]): a first integral H of the Lie ODE, its trivialized differential dH(y) in the
 * algebra, <dH(y), xi> = d/de H(act(e xi, y)) at e = 0 for the manifold's inner product
 * (lf_manifold_inner), and a skew map w(y) of the algebra, <a, w(y) b> = -<b, w(y) a>, with
 * f(y) = w(y)(dH(y)) (up to the isotropy of the point). A system without its own skew map gets the
 * default w(y)(a) = (f <g, a> - g <f, a>)/<g, g>, g = dH(y), f = f(t, y), which needs dH(y) != 0. */
int lf_system_first_integral(const lf_system *s, const double *y, double *H, lf_error *err);
int lf_system_dH(const lf_system *s, const double *y, double *g, lf_error *err);
int lf_system_has_skew(const lf_system *s);
/* out = w(y)(a) (the system's skew map, or the default above; LF_EDOMAIN where dH(y) = 0). */
int lf_system_skew(const lf_system *s, double t, const double *y, const double *a, double *out, lf_error *err);

/* ---------------------------------------------------------------- forms as records
 * The lie_ode form is the system itself (lf_system_f, lf_system_jacobian, the manifold) and the
 * first-integral form its functions above; every other form is a record of what a method of that
 * form may use, given by the system kind (its functions take the system as first argument).
 * lf_system_rigid, lf_system_second_order and lf_system_constrained return a system's record, or
 * NULL if it does not offer the form. Methods see a system through these only, never through
 * what kind it is (rigid.h, spheres.h). */

/* Rigid form (LF_FORM_RIGID): nb bodies with principal inertias J and body torques tau(R) from a
 * potential; the state is (R_1..R_nb, w_1..w_nb) (rigid.h). Bodies that translate (translating = 1)
 * have masses, their centres of mass x and velocities v follow in the state, (R, w, x, v), and the
 * potential U(x, R) gives the forces F = -dU/dx (spatial) with the torques. */
typedef struct lf_form_rigid {
    int nb;                 /* bodies */
    const double *J;        /* principal inertias, 3 nb */
    const char *potential;  /* the potential's name; NULL: free bodies (every torque and force is 0) */
    int translating;        /* 1: the bodies translate */
    const double *mass;     /* their masses (nb), when translating */
    /* torques tau (3 nb) at rotations R (9 nb), and when translating at positions x (3 nb) with the
     * forces F (3 nb; NULL: not wanted), checked finite (potential.h); x and F are NULL otherwise */
    int (*torque)(const lf_system *s, const double *R, const double *x, double *tau, double *F, lf_error *err);
    /* the same for B copies of a one-body system, R, x, tau and F in lanes (entry k of lane j at
     * [k B + j]), bitwise equal to B calls of torque (lf_potential_torque_lanes) */
    int (*torque_lanes)(const lf_system *s, int B, const double *R, const double *x, double *tau, double *F,
                        lf_error *err);
    /* the torque Jacobian K (3 nb x 3 nb, potential.h) at R (and x, held fixed), when has_torque_jacobian(s) */
    int (*has_torque_jacobian)(const lf_system *s);
    int (*torque_jacobian)(const lf_system *s, const double *R, const double *x, double *K, lf_error *err);
    /* A forcing (forcing.h: torques and forces that are not gradients), or forcing == NULL: its name,
     * what it depends on (LF_FORCING_VELOCITY | LF_FORCING_TIME), the body torques tau (3 nb) and, when
     * translating, spatial forces F (3 nb) at (t, R, w, x, v), checked finite, and their Jacobian D in
     * (w, v) (forcing.h's layout; NULL: none, differences serve) */
    const char *forcing_name;
    unsigned forcing_depends;
    int (*forcing)(const lf_system *s, double t, const double *R, const double *w, const double *x, const double *v,
                   double *tau, double *F, lf_error *err);
    int (*forcing_jacobian)(const lf_system *s, double t, const double *R, const double *w, const double *x,
                            const double *v, double *D, lf_error *err);
    /* its diagonal when forcing_depends has LF_FORCING_DIAGONAL (n numbers), else NULL */
    int (*forcing_diagonal)(const lf_system *s, double t, const double *R, const double *w, const double *x,
                            const double *v, double *d, lf_error *err);
} lf_form_rigid;
const lf_form_rigid *lf_system_rigid(const lf_system *s);

/* Second-order form (LF_FORM_SECOND_ORDER): y = (g_1..g_n, v_1..v_n), configuration factors g_i
 * moved by the velocity factors v_i, f = (v, a(t, y)). */
typedef struct lf_form_second_order {
    int nconfig;            /* configuration factors n (the velocity factors follow them) */
    /* the acceleration a(t, y) of the velocity factors */
    int (*accel)(const lf_system *s, double t, const double *y, double *a, lf_error *err);
    /* Optional structure (accel_affine == NULL without it; systems on spheres have it, spheres.h):
     * an autonomous acceleration affine in the centripetal terms c_k = |v_k|^2 of the n velocity
     * 3-vectors, a = aV(g) + L(g) c, aV (3n) and L (3n x n, row-major; L = 0 when `decoupled`, and
     * L may then be NULL) computed from the configuration part of y. accel_work is accel with its
     * scratch from the caller. Both take affine_work(s) doubles of scratch and allocate nothing. */
    int decoupled;
    size_t (*affine_work)(const lf_system *s);
    int (*accel_work)(const lf_system *s, const double *y, double *a, double *work, lf_error *err);
    int (*accel_affine)(const lf_system *s, const double *y, double *aV, double *L, double *work, lf_error *err);
} lf_form_second_order;
const lf_form_second_order *lf_system_second_order(const lf_system *s);

/* Constrained form (LF_FORM_CONSTRAINED, RATTLE): a Cartesian view of the state as n points x_i in
 * R^3 with the holonomic constraints |x_i|^2 = 1, velocities v = x' (3n), mass matrix M (x) I_3
 * (M n x n symmetric positive definite, given by its inverse W) and a potential V(x) with its
 * Euclidean gradient. Systems on spheres offer it (spheres.h). */
typedef struct lf_form_constrained {
    int n;                /* points (constraints) */
    const double *W;      /* W = M^{-1}, n x n row-major */
    int diagonal;         /* M (and W) diagonal */
    /* V(x) and/or its gradient (3n) at x (3n); either output may be NULL */
    int (*potential)(const lf_system *s, const double *x, double *V, double *g, lf_error *err);
    /* the state y <-> (x, v) */
    void (*to_cartesian)(const lf_system *s, const double *y, double *x, double *v);
    void (*from_cartesian)(const lf_system *s, const double *x, const double *v, double *y);
} lf_form_constrained;
const lf_form_constrained *lf_system_constrained(const lf_system *s);

LF_END_DECLS

#endif
