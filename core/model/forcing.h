/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — forcings of rigid bodies: torques and forces that are not gradients of a potential
 * (damping, control, drive), Q(t, R, w, x, v) = (tau_1..tau_n, F_1..F_n), the torques tau_i in the
 * body frame like every torque in lieflow, the forces F_i in space (bodies that translate only).
 *
 * A forcing is an object like a potential (potential.h): a callback of the host's (the Lua binding's
 * traced and compiled forcings) or a built-in, attached to a rigid system by lf_rigid_set_forcing.
 * It says what it depends on (the velocities, the time): a forcing of the velocities makes the kicks
 * of the methods implicit in them (docs/methods.md, "Forcing"), and its Jacobian in the velocities,
 * when it has one, serves their Newton iterations. The methods integrate it by the discrete
 * Lagrange–d'Alembert principle (Marsden & West 2001, §3.2). */
#ifndef LF_FORCING_H
#define LF_FORCING_H

#include "base/export.h"

#include "base/error.h"
#include "model/potential.h"

LF_BEGIN_DECLS

typedef struct lf_forcing lf_forcing;

/* The bodies' motion at one instant: their configuration (potential.h; x and mass NULL for bodies
 * that only rotate), body angular velocities w (3 nb) and velocities v (3 nb, or NULL), the time. */
typedef struct lf_bodies_motion {
    lf_bodies_config c;
    const double *w, *v;
    double t;
} lf_bodies_motion;

/* What a forcing depends on, beyond the configuration; LF_FORCING_AFFINE (with LF_FORCING_VELOCITY
 * and a Jacobian): affine in the velocities, so that an implicit kick is one linear solve;
 * LF_FORCING_DIAGONAL (set by the built-ins, with AFFINE): each component of (tau, F) depends on the
 * same component of (w, v) only, the Jacobian is diagonal (lf_forcing_diagonal) and an implicit kick
 * is solved in closed form. */
enum {
    LF_FORCING_VELOCITY = 1u << 0,
    LF_FORCING_TIME = 1u << 1,
    LF_FORCING_AFFINE = 1u << 2,
    LF_FORCING_DIAGONAL = 1u << 3
};

/* Write the body torques tau (3 nb) and, when m->v != NULL, the spatial forces F (3 nb) at m. */
typedef int (*lf_forcing_fn)(void *ctx, const lf_bodies_motion *m, double *tau, double *F, lf_error *err);
/* The Jacobian of (tau, F) in (w, v) at m: n x n row-major, n = 3 nb (bodies that only rotate) or 6 nb,
 * rows and columns ordered (tau_1..tau_nb, F_1..F_nb) and (w_1..w_nb, v_1..v_nb). */
typedef int (*lf_forcing_jacobian_fn)(void *ctx, const lf_bodies_motion *m, double *D, lf_error *err);

/* A forcing from a callback (depends: LF_FORCING_VELOCITY | LF_FORCING_TIME as it applies; jacobian
 * may be NULL: differences of fn then serve). destroy(ctx) (may be NULL) runs in lf_forcing_free. */
lf_forcing *lf_forcing_new(const char *name, unsigned depends, lf_forcing_fn fn, lf_forcing_jacobian_fn jacobian,
                           void *ctx, void (*destroy)(void *ctx), lf_error *err);
/* Built-ins, acting on every body alike. Linear damping: the force -c v and the body torque -a_k w_k
 * (c >= 0, a_k >= 0; angular NULL: no torque). */
lf_forcing *lf_forcing_damping(double c, const double angular[3], lf_error *err);
/* A constant torque: in the body frame (spatial = 0) or in space (spatial = 1: tau_body = R^T tau). */
lf_forcing *lf_forcing_torque(const double tau[3], int spatial, lf_error *err);
/* A torque given at n >= 1 times t[0] < ... < t[n-1] (tau: 3 n), linear in between and constant
 * outside, in the body frame or in space. */
lf_forcing *lf_forcing_torque_table(int n, const double *t, const double *tau, int spatial, lf_error *err);
/* A held input: body torques and spatial forces of nb bodies that the host sets between steps (a
 * controller's output under a zero-order hold), 0 at first, of nothing else (its kicks are explicit).
 * After lf_forcing_held_set, tell each stepper using it (lf_stepper_forcing_changed). */
lf_forcing *lf_forcing_held(int nb, lf_error *err);
/* Set the held torques tau (3 nb) and forces F (3 nb; NULL: 0), checked finite; LF_EINVAL if f is not
 * held. lf_forcing_held_values: tau then F (6 nb), or NULL if f is not held. */
int lf_forcing_held_set(lf_forcing *f, const double *tau, const double *F, lf_error *err);
const double *lf_forcing_held_values(const lf_forcing *f);
/* The sum of n forcings (borrowed: they must outlive it), named by their names joined by " + ". */
lf_forcing *lf_forcing_sum(int n, const lf_forcing *const *parts, lf_error *err);
void lf_forcing_free(lf_forcing *f);

const char *lf_forcing_name(const lf_forcing *f);
unsigned lf_forcing_depends(const lf_forcing *f);
int lf_forcing_has_jacobian(const lf_forcing *f);
/* tau (3 nb) and F (3 nb, when m->v != NULL) at m, checked finite (the message names the forcing, the
 * body and the time). */
int lf_forcing_eval(const lf_forcing *f, const lf_bodies_motion *m, double *tau, double *F, lf_error *err);
/* D (lf_forcing_jacobian_fn) at m, checked finite; LF_EINVAL when f has no Jacobian. */
int lf_forcing_jacobian(const lf_forcing *f, const lf_bodies_motion *m, double *D, lf_error *err);
/* The diagonal of the Jacobian (n numbers, lf_forcing_jacobian_fn's order) of a forcing with
 * LF_FORCING_DIAGONAL; LF_EINVAL for any other. */
int lf_forcing_diagonal(const lf_forcing *f, const lf_bodies_motion *m, double *d, lf_error *err);

LF_END_DECLS

#endif
