/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — methods (the registry and their metadata) and the stepper that drives a method on a
 * system.
 *
 * Every method requires one problem form (system.h); lf_stepper_new joins a method with a system
 * that offers it (and refuses other pairs with a clear error). The stepper owns a copy of the
 * state (the system's layout), the time (with compensated summation), workspace (no allocation in
 * a step), statistics and an optional cancel flag. A step that fails leaves the state as it was
 * before the step; the error names the method and the time. */
#ifndef LF_METHOD_H
#define LF_METHOD_H

#include "base/export.h"
#include <signal.h>
#include <stddef.h>

#include "base/error.h"
#include "model/system.h"

LF_BEGIN_DECLS

typedef struct lf_method lf_method;
typedef struct lf_stepper lf_stepper;

typedef struct lf_method_info {
    const char *name;        /* registry key, e.g. "vlv" */
    const char *title;       /* one line */
    const char *reference;   /* authors, paper, equations */
    const char *family;      /* "rigid", "rkmk", "commutator_free", ... */
    int order;               /* classical order */
    int symmetric;           /* 1 if a step h followed by -h returns (measured by the tests) */
    const char *symplectic;  /* "proved", "no" or "unknown" */
    int implicit;            /* 1 if a step solves a nonlinear equation */
    int adaptive;            /* 1 if the method chooses its step size (rtol, atol) */
    unsigned form;           /* the problem form it requires (LF_FORM_*) */
} lf_method_info;

/* What only a method of the rigid form (LF_FORM_RIGID) claims. */
typedef struct lf_method_rigid_info {
    int explicit_in_torque;  /* no implicit equation involves the torque */
    int momentum_conserving; /* spatial angular momentum conserved for the free body */
    int free_body_only;      /* torque-free bodies only (LIEMID) */
    int lanes;               /* steps many one-body lanes at once (lf_stepper_new_lanes) */
    int translation;         /* integrates bodies that translate (rigid.h: their centres of mass too) */
    int forcing;             /* takes a forcing (forcing.h, lf_rigid_set_forcing) */
} lf_method_rigid_info;

/* The registry of built-in methods. */
int lf_method_count(void);
const lf_method *lf_method_at(int i);
const lf_method *lf_method_find(const char *name); /* NULL if unknown (or name == NULL) */
const lf_method_info *lf_method_get_info(const lf_method *m);
/* The rigid-form claims of m; a record of zeros for a method of another form (generic methods run
 * on rigid systems too, claiming none of these); NULL for m == NULL. */
const lf_method_rigid_info *lf_method_get_rigid_info(const lf_method *m);
/* LF_OK if method m can integrate system s; else LF_EINVAL with the reason (e.g. the form it
 * requires, or LIEMID on a body with a potential). */
int lf_method_accepts(const lf_method *m, const lf_system *s, lf_error *err);

/* A Runge–Kutta–Munthe-Kaas method from a Butcher tableau (A: s x s row-major, b, c: s entries):
 * explicit when A is strictly lower triangular, else implicit (solved like rkmk_gl4). order: the
 * classical order (0: computed from the order conditions up to order 4; a declared order above
 * what the conditions give, up to 4, is an error). midpoint = 1: coordinates centred at the step's
 * midpoint, which makes a symmetric method from a symmetric implicit tableau (as rkmk_gl4_sym).
 * The method is allocated; free it with lf_method_free after every stepper using it. */
lf_method *lf_rkmk_method_new(const char *name, int s, const double *A, const double *b, const double *c, int order,
                              int midpoint, lf_error *err);
void lf_method_free(lf_method *m); /* no-op for registry methods */

typedef enum { LF_SOLVER_DEFAULT = 0, LF_SOLVER_NEWTON, LF_SOLVER_FIXED_POINT } lf_solver_kind;

/* A step-size monitor for reversible adaptive steps (lf_stepper_opts.adapt): *Q = a positive rate
 * (1/time) at the state y at time t; the steps are h Q(y0)/Q(y) to first order. A nonzero return
 * (with err filled) fails the step. */
typedef int (*lf_monitor_fn)(void *ctx, const lf_system *sys, double t, const double *y, double *Q, lf_error *err);

/* A Langevin thermostat of rigid bodies (langevin.c): friction and noise on every body's velocity v
 * (force -gamma v) and body angular velocity w (body torque -gamma_rot w_k), at the temperature kT (in
 * the model's energy units), the noise from a counter-based generator keyed by seed. */
typedef struct lf_thermostat {
    double kT, gamma, gamma_rot;
    unsigned long long seed;
} lf_thermostat;

typedef struct lf_stepper_opts {
    double newton_tol;   /* default 1e-14: stop on a relative update below it */
    int max_iter;        /* default 50 */
    int dexpinv_order;   /* generic methods: 0 = exact dexpinv (default), q > 0: q Bernoulli terms */
    int solver;          /* implicit generic methods: lf_solver_kind */
    int jacobian;        /* lf_jacobian_kind (newton.h) for the generic Newton; LF_JAC_AUTO: the
                            system's analytic Jacobian when it has one, else forward differences
                            (block-diagonal per factor beyond 64 unknowns) */
    double rtol, atol;   /* adaptive methods: default 1e-6, 1e-9 */
    double h0;           /* adaptive methods: first trial step (default: the h of the first call) */
    int quad_nodes;      /* discrete-gradient methods: Gauss–Legendre nodes of their integrals, 1..40
                            (0: the method's default, 6) */
    /* Time-reversible adaptive steps (adapt.c; after Hairer & Söderlind 2005) for a symmetric
     * fixed-step method: a step of "size" h in lf_stepper_step is a step of the fictitious time tau,
     * and the time step is h / rho, where the step density rho (1 at lf_stepper_set_state) follows
     * d ln rho/d tau = G(y) = (Q(y0)/Q(y)) d/dt ln Q(y(t)), integrated by half steps around the
     * method's step:
     *   rho* = rho e^{h/2 G(y_n)},   y_{n+1} = Phi_{h/rho*}(y_n),   rho' = rho* e^{h/2 G(y_{n+1})}.
     * The map (y, rho) -> (y', rho') is symmetric when Phi is: a step h then -h returns to the
     * start. rho = Q(y)/Q(y0) along the exact flow: h is the step at the initial state. */
    int adapt;           /* 1: on (symmetric, non-adaptive methods, one lane) */
    lf_monitor_fn monitor;  /* NULL: the default torque monitor (rigid systems only):
                               Q^2 = sum_b |w_b|^2 + |J_b^-1 tau_b| */
    void *monitor_ctx;
    /* NULL: none; else a Langevin thermostat (copied): each step is O(h/2) Phi_h O(h/2), Phi the
     * method's step, O the exact Ornstein–Uhlenbeck flow of the velocities (the rigid-body methods that
     * take a forcing, one lane, no adaptive steps, h > 0) */
    const lf_thermostat *thermostat;
} lf_stepper_opts;

typedef struct lf_stepper_stats {
    long steps;          /* accepted steps */
    long rejected;       /* rejected trial steps (adaptive methods) */
    long f_evals;        /* vector-field / torque evaluations */
    long newton_iters;
    long jac_evals;
    /* constrained methods (rattle): the largest constraint residuals after any step so far,
     * max_i ||x_i|^2 - 1| (positions) and max_i |x_i . v_i| (velocities) */
    double constraint_position, constraint_velocity;
} lf_stepper_stats;

/* A stepper for method m on system sys (borrowed: it must outlive the stepper) from state y0
 * (nparam doubles in the system's layout, copied and checked with tol 1e-9) at time t0. opts may
 * be NULL for defaults. NULL with err filled on failure. */
lf_stepper *lf_stepper_new(const lf_method *m, const lf_system *sys, const double *y0, double t0,
                           const lf_stepper_opts *opts, lf_error *err);
void lf_stepper_free(lf_stepper *s);

/* Lanes: one stepper advancing B copies of a one-body rigid system (same inertia and potential,
 * separate states) in lockstep, for ensembles of initial states on one core. The states are kept as
 * a structure of arrays (entry k of lane j at [k B + j]) so that the step's 3x3 algebra and a
 * built-in potential's torque run vectorized (AVX2 where the CPU has it); every lane's iterates are
 * bitwise those of a stepper of its own, because each lane computes the same operations in the
 * same order (an implicit equation is iterated until every lane has converged, and a lane stops
 * updating where a single stepper would stop). Methods whose lf_method_get_rigid_info says lanes
 * (eln, eln_exp, vlv, lgvi).
 * y0: B states, lane after lane (B np doubles). Stepping, advance_to, cancel and restore work as
 * for one lane and act on every lane; a step that fails in any lane is rolled back in all of them
 * and its error names the lane. Statistics count lane evaluations (f_evals grows by B per torque
 * evaluation) and every lane's Newton iterations. */
lf_stepper *lf_stepper_new_lanes(const lf_method *m, const lf_system *sys, int B, const double *y0, double t0,
                                 const lf_stepper_opts *opts, lf_error *err);
int lf_stepper_lanes(const lf_stepper *s); /* 1 for lf_stepper_new */
/* Lane j's state (np doubles, the system's layout), 0 <= j < B. lf_stepper_state returns the
 * structure of arrays. */
int lf_stepper_get_lane(const lf_stepper *s, int lane, double *y);
int lf_stepper_set_lane(lf_stepper *s, int lane, const double *y);

/* Replace the state (checked as above; with lanes, B states lane after lane). */
int lf_stepper_set_state(lf_stepper *s, const double *y, double t);
/* n >= 0 steps of size h (finite, nonzero). Adaptive methods take n accepted steps of their own
 * size, of at most |h| in the direction of h. Stops at the first failing step, whose state is
 * rolled back. Returns LF_EINTR if the cancel flag is set (checked every 256 steps). */
int lf_stepper_step(lf_stepper *s, double h, long n);
/* Steps of h towards T and one shorter last step landing on T exactly (adaptive methods: their own
 * steps, the last one clipped at T; reversible adaptive steps: a last step of a shorter fictitious
 * time that lands on T). */
int lf_stepper_advance_to(lf_stepper *s, double T, double h);
/* The same, stopping after at most max_steps steps (then lf_stepper_time < T): sampling a run with
 * adaptive steps every max_steps steps. */
int lf_stepper_advance(lf_stepper *s, double T, double h, long max_steps);
/* Reversible adaptive steps (opts.adapt): the step density rho, the monitor at the initial state and
 * the time step of the last step (for any stepper: the last step taken); restoring rho and q0 after
 * lf_stepper_restore resumes a run bit for bit. */
int lf_stepper_adaptive(const lf_stepper *s);
double lf_stepper_rho(const lf_stepper *s);
double lf_stepper_monitor0(const lf_stepper *s); /* Q(y0) (0 before the first step) */
int lf_stepper_set_rho(lf_stepper *s, double rho, double q0);
double lf_stepper_last_h(const lf_stepper *s);

/* Dense output (dense.c): lf_stepper_set_dense(s, 1) keeps the state before each step (np doubles copied
 * per step; 0 turns it off); lf_stepper_dense then gives the state y (np doubles) at any t within the last
 * step: the cubic Hermite interpolant in the Lie algebra, y(t) = act(theta(s), y0), s = (t - t0)/h, with
 * theta(0) = 0, theta'(0) = h f(t0, y0), theta(1) = diff(y0, y1), theta'(1) = h dexpinv_theta(1) f(t1, y1)
 * (the system's Lie-group ODE form f): on the manifold to round-off, order 3 (local error O(h^4)) for
 * every method. Not for lanes or processed methods (LF_EINVAL, naming them). Errors of lf_stepper_dense
 * (in lf_stepper_error): off, no step since the state was set, t outside the last step. */
int lf_stepper_set_dense(lf_stepper *s, int on);
int lf_stepper_dense(lf_stepper *s, double t, double *y);

const double *lf_stepper_state(const lf_stepper *s); /* nparam doubles, valid until the next call */
double lf_stepper_time(const lf_stepper *s);
const lf_method *lf_stepper_method(const lf_stepper *s);
const lf_system *lf_stepper_system(const lf_stepper *s);
const lf_error *lf_stepper_error(const lf_stepper *s); /* the last error */
void lf_stepper_get_stats(const lf_stepper *s, lf_stepper_stats *stats);
/* Replace the statistics (a checkpoint restored: the counts go on from the saved ones). */
int lf_stepper_set_stats(lf_stepper *s, const lf_stepper_stats *stats);
/* Adaptive methods: the step size the next step will try. */
double lf_stepper_next_h(const lf_stepper *s);
/* Checkpoints: the compensation of the time's summation, and restoring a state with it and the
 * adaptive step size, which resumes a run bit for bit (lf_stepper_set_state starts a new sum). */
double lf_stepper_time_compensation(const lf_stepper *s);
int lf_stepper_restore(lf_stepper *s, const double *y, double t, double t_comp, double next_h);
/* Processed methods (compose.h: a kernel K_h run in the variable z = P_h^{-1}(y) of a processor P_h):
 * the kernel's state z and the |h| it is processed with (*h_proc = 0: none yet, z is the state as
 * set); for any other method the state and 0. Setting them back (after lf_stepper_restore) resumes a
 * processed run bit for bit; h_proc = 0 is lf_stepper_set_state. */
const double *lf_stepper_kernel_state(const lf_stepper *s, double *h_proc);
int lf_stepper_set_kernel_state(lf_stepper *s, const double *z, double h_proc);
/* A forcing of the stepper's system changed between steps (a held input set: forcing.h): the next step
 * evaluates it anew (and the torque with it). */
void lf_stepper_forcing_changed(lf_stepper *s);
/* Thermostatted steppers: the number of thermostatted steps taken (the noise's counter), and setting
 * it (a checkpoint restored: with lf_stepper_restore, the run resumes bit for bit). 0 for others. */
unsigned long long lf_stepper_noise_step(const lf_stepper *s);
const lf_thermostat *lf_stepper_thermostat(const lf_stepper *s); /* NULL: none */
/* The work the forcing did and the heat the thermostat gave since lf_stepper_set_state: the kinetic
 * energy their parts of the steps changed (the potential and free parts conserve the energy up to the
 * method's error, so E_n - E_0 - work - heat is the conservative method's energy error: bounded for
 * the symplectic ones). Setting them back resumes a checkpoint's balance. */
void lf_stepper_get_work(const lf_stepper *s, double *work, double *heat);
int lf_stepper_set_work(lf_stepper *s, double work, double heat);
int lf_stepper_set_noise_step(lf_stepper *s, unsigned long long n);
/* When *flag becomes nonzero, lf_stepper_step returns LF_EINTR at the next step boundary it checks. */
void lf_stepper_set_cancel(lf_stepper *s, volatile sig_atomic_t *flag);

LF_END_DECLS

#endif
