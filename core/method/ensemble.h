/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — ensembles in C: many independent runs (members) on a pool of threads, for embedding
 * applications (the Lua module's lf.ensemble uses worker processes instead, because a Lua state
 * is single-threaded). Each member is a system, a method, an initial state and a step; members
 * are independent, so the results are the same for any number of threads. Systems may be shared
 * between members if their callbacks are thread-safe (every built-in C system and potential is;
 * Lua callbacks are not). */
#ifndef LF_ENSEMBLE_H
#define LF_ENSEMBLE_H

#include "base/export.h"
#include <signal.h>

#include "method/method.h"

LF_BEGIN_DECLS

typedef struct lf_ensemble_member {
    /* in */
    const lf_system *sys;
    const lf_method *method;
    const double *y0;          /* nparam doubles (NULL: the system's initial state) */
    double t0, T, h;           /* from t0 to T with steps of h (lf_stepper_advance_to) */
    const lf_stepper_opts *opts; /* may be NULL */
    /* out */
    double *y;                 /* caller-owned, nparam doubles: the state at T */
    lf_stepper_stats stats;
    int status;                /* LF_OK, or the member's error (err) */
    lf_error err;
} lf_ensemble_member;

/* Run the n members on nthreads threads (0: one per online CPU; 1: in the calling thread). Returns
 * LF_OK when every member succeeded; otherwise the status of the first failing member (each member
 * keeps its own status and message; the others still run). cancel (may be NULL): when *cancel
 * becomes nonzero the members not yet finished stop with LF_EINTR. */
int lf_ensemble_run(lf_ensemble_member *members, int n, int nthreads, volatile sig_atomic_t *cancel, lf_error *err);

LF_END_DECLS

#endif
