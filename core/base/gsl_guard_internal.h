/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — calling GSL without its default error handler, which abort()s the process.
 *
 * lieflow installs, once per process (the first time a guard is entered), a GSL error handler that
 * chains to the one that was installed before it. Inside a guard (lf_gsl_guard_begin ... end, on
 * the calling thread) a GSL error is recorded in the guard and the call returns its status, which
 * the caller turns into an lf_error. Outside every guard the previous handler runs (GSL's default,
 * which aborts, when the host installed none): a host's own handler keeps working for its own GSL
 * calls. The nesting depth and the recorded error are thread-local, so guards on different threads
 * do not interfere. */
#ifndef LF_GSL_GUARD_H
#define LF_GSL_GUARD_H

typedef struct lf_gsl_guard {
    int gsl_errno;      /* first GSL error inside the guard (0: none) */
    char reason[128];   /* its message, "file:line: reason" */
    struct lf_gsl_guard *outer;
} lf_gsl_guard;

/* Enter a guard (g is caller-owned, e.g. on the stack); every begin needs its end. */
void lf_gsl_guard_begin(lf_gsl_guard *g);
/* Leave it; returns g->gsl_errno. */
int lf_gsl_guard_end(lf_gsl_guard *g);

#endif
