/* lieflow — the integrator registry and the stepper that drives a method on a rigid-body system.
 *
 * Each method is a const lf_method in the table of method.c. A method's step function advances
 * s->R, s->w (in place) by h, using s->work (method_work doubles, no allocation), the cached
 * torque at the start of the step via lf_stepper_torque_start(), and lf_stepper_torque() for any
 * other attitude. On failure it returns a status with s->err filled; lf_stepper_step then restores
 * the state from before the step. */
#ifndef LF_METHOD_H
#define LF_METHOD_H

#include <signal.h>
#include <stddef.h>

#include "error.h"
#include "linalg.h"
#include "system.h"

typedef struct lf_stepper lf_stepper;

typedef struct lf_method {
    const char *name;       /* registry key, e.g. "vlv" */
    const char *title;      /* one line, e.g. "variational Lie-Verlet" */
    const char *reference;  /* seed and equations, e.g. "seed 000 eqs. (8)-(10)" */
    int order;              /* classical order */
    int symmetric;          /* 1 if the method is symmetric (step h then -h returns) */
    const char *symplectic; /* "proved", "no" or "unknown" */
    int explicit_in_torque; /* 1 if no implicit equation involves the torque */
    int momentum_conserving;/* 1 if spatial angular momentum is conserved for the free body */
    int free_body_only;     /* 1 if the method integrates torque-free bodies only (LIEMID) */
    size_t (*work_doubles)(int nb);       /* workspace size for nb bodies */
    int (*step)(lf_stepper *s, double h); /* one step */
} lf_method;

typedef struct lf_stepper_opts {
    double newton_tol; /* default 1e-14 (relative update) */
    int max_iter;      /* default 50 */
} lf_stepper_opts;

struct lf_stepper {
    const lf_method *method;
    const lf_system *sys;
    int nb;
    double t;
    double t_comp;          /* Kahan compensation of t (t is a sum of many steps) */
    double *R, *w;          /* current state: 9*nb, 3*nb */
    double *tau;            /* torque at the current state, 3*nb, valid if tau_valid */
    int tau_valid;
    int tau_cached;         /* set by lf_stepper_cache_torque during the current step */
    double *work;           /* method workspace */
    int *iwork;             /* integer workspace (Newton pivots), 12*nb + 16 ints */
    double *save;           /* rollback copy of R, w, tau */
    lf_stepper_opts opts;
    volatile sig_atomic_t *cancel; /* optional: when *cancel becomes nonzero, lf_stepper_step stops
                                      (LF_EINTR) within 256 steps, at a step boundary */
    lf_error err;
    long nsteps;            /* statistics */
    long torque_evals;
    long newton_iters;
};

/* The registry. */
int lf_method_count(void);
const lf_method *lf_method_at(int i);
const lf_method *lf_method_find(const char *name);

/* Create a stepper for method m on sys at state (R, w, t) (copied; checked with tol 1e-9).
 * opts may be NULL for defaults. Returns NULL with err filled on failure. */
lf_stepper *lf_stepper_new(const lf_method *m, const lf_system *sys, const double *R, const double *w,
                           double t, const lf_stepper_opts *opts, lf_error *err);
void lf_stepper_free(lf_stepper *s);
/* Replace the state (checked like lf_stepper_new); invalidates the torque cache. */
int lf_stepper_set_state(lf_stepper *s, const double *R, const double *w, double t);
/* n steps of size h (h finite and nonzero). Stops at the first failing step, whose state is
 * rolled back; the error names the method and the time. Returns LF_EINTR if *s->cancel is set. */
int lf_stepper_step(lf_stepper *s, double h, long n);

/* For step functions: torque at the state at the start of the step (cached), and torque at any R
 * (counted; the result is checked finite). */
int lf_stepper_torque_start(lf_stepper *s, const double **tau);
int lf_stepper_torque(lf_stepper *s, const double *R, double *tau);
/* A step function that computed the torque at its new state may store it for the next step. */
void lf_stepper_cache_torque(lf_stepper *s, const double *tau);

/* Newton on R^n for step functions with the stepper's tolerance and iteration cap; the error
 * message names the method. work: lf_newton_work_size(n) doubles. */
int lf_stepper_newton(lf_stepper *s, lf_residual_fn F, void *ctx, int n, double *x, int analytic_jac,
                      double *work);

#endif
