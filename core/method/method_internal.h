/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow (internal) — for method authors: the method record, the stepper's fields and the helpers
 * step functions use. Not installed.
 *
 * A step function advances s->y (in place) by h using s->work (work_doubles, no allocation) and the
 * helpers below; on failure it returns a status with s->err filled, and lf_stepper_step restores the
 * state and the cache from before the step. Rigid-body methods use the typed fast path: s->R, s->w
 * (views into s->y), s->nb, s->J, the torque cache (s->tau). With s->lanes > 1 (one-body rigid
 * systems only) R, w and tau are in lanes: entry k of lane j at [k lanes + j], and every lane has
 * the inertia J. */
#ifndef LF_METHOD_INTERNAL_H
#define LF_METHOD_INTERNAL_H

#include "lie/manifold.h"
#include "method/method.h"
#include "model/forcing.h"
#include "solve/newton.h"

/* What a family implements for a method: the functions the stepper calls and the family's data for
 * the method (a tableau, a splitting ...). The built-in methods' classes are lf_class_<id>, named by
 * their methods.def entries (registry.c joins each with its metadata). */
typedef struct lf_method_class {
    size_t (*work_doubles)(const lf_stepper *s);  /* workspace */
    size_t (*cache_doubles)(const lf_stepper *s); /* state carried between steps (rolled back with
                                                     the state), default: 3 nb for rigid methods */
    int (*accepts)(const lf_method *m, const lf_system *sys, lf_error *err); /* beyond the form */
    int (*step)(lf_stepper *s, double h);
    /* rigid methods with a lane kernel: the step of s->lanes > 1 one-body lanes in lockstep (the
     * state, cache and torques in lanes: lanes_internal.h), each lane bitwise as .step */
    int (*lanes_step)(lf_stepper *s, double h);
    const void *data;
    /* processed methods (compose.h): apply the processor P_h (inverse = 0) or P_h^{-1} (1) to s->y in
     * place, like a step (cache rule, time restored); NULL for every other method */
    int (*process)(lf_stepper *s, double h, int inverse);
    /* rigid methods without LF_MP_TRANSLATION: why (the refusal of a translating system says it) */
    const char *why_no_translation;
} lf_method_class;

struct lf_method {
    lf_method_info info;
    const lf_method_rigid_info *rigid; /* the rigid form's claims (NULL for methods of other forms) */
    const lf_method_class *cls;
    int allocated;                     /* made by lf_rkmk_method_new or lf_compose_method_new */
};

/* The properties of a methods.def entry (its fifth argument). */
enum {
    LF_MP_SYMMETRIC = 1 << 0,
    LF_MP_SYMPLECTIC = 1 << 1, /* proved ("no" without) */
    LF_MP_IMPLICIT = 1 << 2,
    LF_MP_ADAPTIVE = 1 << 3,
    /* the rigid form's claims (lf_method_rigid_info) */
    LF_MP_TORQUE_EXPLICIT = 1 << 4,
    LF_MP_MOMENTUM = 1 << 5,
    LF_MP_FREE_BODY_ONLY = 1 << 6,
    LF_MP_LANES = 1 << 7,
    /* RKMK options */
    LF_MP_MIDPOINT = 1 << 8,
    LF_MP_DEXPINV_1 = 1 << 9,
    LF_MP_CONTINUATION = 1 << 10,
    LF_MP_TRANSLATION = 1 << 11, /* the rigid form's claim: integrates bodies that translate */
    LF_MP_FORCING = 1 << 12,     /* the rigid form's claim: takes a forcing (forced_kick.c) */
};

struct lf_stepper {
    const lf_method *method;
    const lf_system *sys;
    const lf_manifold *M;
    int (*step)(lf_stepper *s, double h); /* method->step, or ->lanes_step with lanes */
    int np, nd;             /* parameters of a state (of one lane), algebra dimension */
    int lanes;              /* 1, or the number of lanes (y, cache and work hold every lane) */
    double t, t_comp;       /* time and its Kahan compensation */
    double *y;              /* state (np), followed in memory by the cache */
    double *cache;          /* method cache (ncache doubles) */
    size_t ncache;
    int cache_valid;        /* the cache holds data for the current state */
    int cache_set;          /* set by the step function when it left valid data for the new state */
    double *save;           /* rollback copy of y and cache */
    double *work;
    int *iwork;
    lf_stepper_opts opts;
    volatile sig_atomic_t *cancel;
    lf_error err;
    lf_stepper_stats stats;
    double h_taken;         /* the step the method actually took (adaptive methods set it) */
    /* processed methods (method->cls->process): while h_proc != 0, y holds the kernel's variable
     * z = P_{h_proc}^{-1}(state) and y_out the state P_{h_proc}(z) after the last step call (h_proc is
     * |h|: P_{|h|} serves both directions, since log K_{-h} = -log K_h for a symmetric kernel) */
    double h_proc;
    double *y_out;
    double *y_call;         /* y and the cache at the start of a call that re-processes (restored when its
                               first step fails: the state shown stays that before the call) */
    double h_next;          /* adaptive methods: the next trial step (0: not yet chosen) */
    /* reversible adaptive steps (adapt.c): the method's own step while step is lf_adapt_step, the
     * step density, G at the current state when g_valid, workspace; saved and restored with y */
    int (*base_step)(lf_stepper *s, double h);
    double rho, g, q0;      /* q0: the monitor at the initial state (0: not yet evaluated) */
    int g_valid;
    double *adapt_work;
    /* rigid fast path (systems offering the rigid form only) */
    const lf_form_rigid *rigid; /* the system's record of the form (system.h), or NULL */
    int nb;
    double *R, *w;          /* views into y: R (9 nb), w (3 nb) */
    double *tau;            /* = cache: torque at the current state, valid if cache_valid */
    const double *J;        /* inertias (3 nb) */
    /* bodies that translate (rigid->translating): the centres of mass and their velocities follow w in
     * y; the forces at the current state are cached after the method's own cache (valid with tau), the
     * forces of the last lf_stepper_torque kept in force_eval; inv_mass is 1/m for each entry of v (in
     * lanes too). All NULL (trans = 0) for bodies that only rotate. */
    int trans;
    double *x, *v; /* views into y: x (3 nb), v (3 nb) */
    double *force, *force_eval, *inv_mass;
    /* a forcing (s->rigid->forcing): forced = 1, its workspace (lf_forced_work_doubles); a forcing of t
     * and the configuration only is evaluated once per (t, R, x): fcache (in the cache, after the forces)
     * holds its value there while fq_valid (set with the torque by lf_stepper_torque_start, cleared by a
     * method when it moves R, x or t) */
    int forced;
    double *fwork, *fcache, *inv_inertia; /* inv_inertia: 1/J, then 1/m (translating), in fwork */
    int fq_valid;
    /* a Langevin thermostat (langevin.c: step is lf_langevin_step around base_step): its parameters,
     * the thermostatted steps taken (the noise's counter, rolled back with a failed step), and a flag
     * the thermostat sets when it changed the velocities (NO_SQUISH's cached momenta are then stale) */
    int thermostatted;
    lf_thermostat thermostat;
    unsigned long long noise_step;
    int momenta_changed;
    /* the work of the forcing and the heat from the thermostat since lf_stepper_set_state: the kinetic
     * energy their kicks and Ornstein–Uhlenbeck steps changed (rolled back with a failed step) */
    double work_done, heat;
    /* dense output (dense.c): on when dense_buf is set; the state before the last step (y_prev, np) and its
     * time, prev_ok while they are that step's start; the interpolant's data (f at both ends, the
     * algebra element from y_prev to y and dexpinv of f at the end), xi_ok once computed for the step */
    double *dense_buf, *y_prev, *xi0, *xi1, *delta, *d1;
    double t_prev;
    int prev_ok, xi_ok, xi0_ok; /* xi0_ok: xi0 is f at y_prev already (the last step's xi1, carried over) */
};

/* ---- rigid methods */
/* Torque at the state at the start of the step (cached), and at any R (counted, checked finite);
 * with lanes, R and tau are in lanes. Bodies that translate: the torque at R and the current centres of
 * mass s->x, the forces there with it (s->force at the start, s->force_eval of the last evaluation). */
int lf_stepper_torque_start(lf_stepper *s, const double **tau);
int lf_stepper_torque(lf_stepper *s, const double *R, double *tau);
/* The torque Jacobian K (3 nb x 3 nb, potential.h: d tau_r / d e along R_j exp(e hat e_m), column
 * 3 j + m) at R, when the potential has one and the options allow it (jacobian not "fd"); the
 * implicit methods then form Newton's Jacobian analytically (Newton counts the Jacobians it forms in
 * jac_evals; this evaluation is part of one, not counted again). */
int lf_stepper_has_torque_jacobian(const lf_stepper *s);
int lf_stepper_torque_jacobian(lf_stepper *s, const double *R, double *K);
/* A step function that computed the torque at its new state may store it for the next step (and the
 * forces of that same, last, evaluation: translating bodies). */
void lf_stepper_cache_torque(lf_stepper *s, const double *tau);
/* ---- the translation of the centres of mass (translating bodies; no-ops when s->trans is 0). A method
 * family writes its translation with these, at the places its scheme calls for (docs/methods.md): the
 * velocity Verlet of most rigid methods is kick(h/2, s->force), drift(h) before the rotation's update,
 * and kick(h/2, s->force_eval) after the torque at the new attitude. */
/* v <- v + c F / m (F: 3 nb forces, in lanes with lanes) */
static inline void lf_translate_kick(lf_stepper *s, double c, const double *F)
{
    if (!s->trans) return;
    const int n = s->nb * s->lanes;
    double *restrict v = s->v;
    const double *restrict im = s->inv_mass;
    for (int b = 0; b < n; b++, v += 3, F += 3, im += 3) {
        v[0] += c * F[0] * im[0];
        v[1] += c * F[1] * im[1];
        v[2] += c * F[2] * im[2];
    }
}
/* x <- x + c v */
static inline void lf_translate_drift(lf_stepper *s, double c)
{
    if (!s->trans) return;
    const int n = s->nb * s->lanes;
    double *restrict x = s->x;
    const double *restrict v = s->v;
    for (int b = 0; b < n; b++, x += 3, v += 3) {
        x[0] += c * v[0];
        x[1] += c * v[1];
        x[2] += c * v[2];
    }
}

/* ---- the forcing (forced_kick.c; no-ops when s->forced is 0). ang is the bodies' angular state, as
 * momenta Pi (momentum = 1) or angular velocities w; the velocities of translating bodies are s->v; the
 * configuration s->R, s->x. E(c): ang, v += c M^{-1} Q(t, q, u) at the velocities u before the kick;
 * I(c): the same with Q at the velocities after it (implicit; E for a forcing of the configuration and
 * time only). A splitting's kick over c is E(c/2), the potential's kick, I(c/2) (a forcing of the
 * configuration and time only: the potential's kick and E(c)); the variational methods take E(h/2) at
 * a step's start and I(h/2) at its end (docs/methods.md, "Forcing"). A method that moves R, x or the time
 * within a step sets s->fq_valid = 0 (lf_forced_moved). */
size_t lf_forced_work_doubles(const lf_stepper *s);
void lf_forced_init(lf_stepper *s); /* once fwork is set */
int lf_stepper_forcing(lf_stepper *s, double t, const double *w, const double *v, double *Q);
int lf_forced_explicit(lf_stepper *s, double t, double c, double *ang, int momentum);
int lf_forced_implicit(lf_stepper *s, double t, double c, double *ang, int momentum);
/* A splitting's kick over c at time t on the momenta Pi with the potential's torques tau and forces F
 * (translating bodies): E(c/2), Pi += c tau, v += c F/m, I(c/2) (a forcing of the configuration and
 * time only: E(c) after the potential's kick). */
int lf_forced_trapezoid(lf_stepper *s, double t, double c, double *Pi, const double *tau, const double *F);
/* LF_OK, or an error when the work is not finite (a forcing made the kinetic energy overflow) */
int lf_forced_check_work(lf_stepper *s);
static inline void lf_forced_moved(lf_stepper *s) { s->fq_valid = 0; }
static inline int lf_forced_velocity(const lf_stepper *s)
{
    return s->forced && (s->rigid->forcing_depends & LF_FORCING_VELOCITY);
}

/* ---- the Langevin thermostat (langevin.c) */
int lf_langevin_accepts(const lf_stepper *s, const lf_thermostat *th, lf_error *err);
int lf_langevin_step(lf_stepper *s, double h);

/* ---- reversible adaptive steps (adapt.c: below the stepper, which calls these) */
/* Checks that s can step adaptively (symmetric, fixed-step, one lane, a monitor for its system). */
int lf_adapt_accepts(const lf_stepper *s, lf_error *err);
size_t lf_adapt_work_doubles(const lf_stepper *s);
/* The step of the fictitious time h (s->step when adapting): sets s->h_taken to the time step. */
int lf_adapt_step(lf_stepper *s, double h);
/* The next fictitious step of an advance with rest = T - t to go: h, or (*last = 1) the one whose
 * time step ends at T. */
int lf_adapt_next_step(lf_stepper *s, double rest, double h, double *x, int *last);

/* ---- generic methods */
/* xi = f(t, y) of the system (counted, checked finite). */
int lf_stepper_f(lf_stepper *s, double t, const double *y, double *xi);
/* Newton (or fixed point) on R^n with the stepper's tolerance, iteration cap and statistics; the
 * caller picks the Jacobian and mode in o (tol and max_iter are filled in from the stepper).
 * work: lf_newton_work_size(n) doubles; s->iwork has room for n ints (iwork_ints). */
int lf_stepper_solve(lf_stepper *s, lf_residual_fn F, void *ctx, int n, double *x, lf_newton_opts o, double *work);
/* The rigid methods' form of it: analytic Jacobian (1) or forward differences (0). */
int lf_stepper_newton(lf_stepper *s, lf_residual_fn F, void *ctx, int n, double *x, int analytic_jac,
                      double *work);
/* Integer workspace the stepper allocates: enough for a Newton of dimension 12 nb + 16 (rigid) or
 * 8 nd + 16 (generic; implicit methods with more stages ask via work_doubles' companion). */
size_t lf_stepper_iwork_ints(const lf_stepper *s);

#endif
