/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the chained GSL error handler (gsl_guard_internal.h). */
#include "base/gsl_guard_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>

static gsl_error_handler_t *previous;        /* the handler before ours (NULL: GSL's default) */
static pthread_once_t installed = PTHREAD_ONCE_INIT;
static _Thread_local lf_gsl_guard *current;  /* innermost guard of this thread */

static void handler(const char *reason, const char *file, int line, int gsl_errno)
{
    lf_gsl_guard *g = current;
    if (g) {
        if (!g->gsl_errno) {
            g->gsl_errno = gsl_errno;
            snprintf(g->reason, sizeof g->reason, "%s:%d: %s", file, line, reason);
        }
        return;
    }
    if (previous) {
        previous(reason, file, line, gsl_errno);
        return;
    }
    /* what GSL's default handler does */
    fprintf(stderr, "gsl: %s:%d: ERROR: %s\nDefault GSL error handler invoked.\n", file, line, reason);
    fflush(stderr);
    abort();
}

static void install(void) { previous = gsl_set_error_handler(handler); }

void lf_gsl_guard_begin(lf_gsl_guard *g)
{
    pthread_once(&installed, install);
    g->gsl_errno = 0;
    g->reason[0] = '\0';
    g->outer = current;
    current = g;
}

int lf_gsl_guard_end(lf_gsl_guard *g)
{
    current = g->outer;
    if (g->outer && g->gsl_errno && !g->outer->gsl_errno) {
        g->outer->gsl_errno = g->gsl_errno;
        snprintf(g->outer->reason, sizeof g->outer->reason, "%s", g->reason);
    }
    return g->gsl_errno;
}
