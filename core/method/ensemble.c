/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — ensembles on a pool of POSIX threads (ensemble.h). */
#include "method/ensemble.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    lf_ensemble_member *m;
    int n;
    atomic_int next;
    volatile sig_atomic_t *cancel;
} pool;

static void run_member(lf_ensemble_member *m, volatile sig_atomic_t *cancel)
{
    if (!m->sys || !m->method || !m->y) {
        m->status = lf_error_set(&m->err, LF_EINVAL, "ensemble member: a system, a method and an output are required");
        return;
    }
    const double *y0 = m->y0 ? m->y0 : lf_system_initial(m->sys);
    lf_stepper *st = lf_stepper_new(m->method, m->sys, y0, m->t0, m->opts, &m->err);
    if (!st) {
        m->status = m->err.code ? m->err.code : LF_EINVAL;
        return;
    }
    lf_stepper_set_cancel(st, cancel);
    m->status = lf_stepper_advance_to(st, m->T, m->h);
    if (m->status != LF_OK) m->err = *lf_stepper_error(st);
    memcpy(m->y, lf_stepper_state(st), (size_t)lf_system_nparam(m->sys) * sizeof(double));
    lf_stepper_get_stats(st, &m->stats);
    lf_stepper_free(st);
}

static void *worker(void *arg)
{
    pool *p = arg;
    for (;;) {
        int i = atomic_fetch_add(&p->next, 1);
        if (i >= p->n) break;
        lf_ensemble_member *m = &p->m[i];
        if (p->cancel && *p->cancel) {
            m->status = lf_error_set(&m->err, LF_EINTR, "ensemble member %d: interrupted before it started", i + 1);
            continue;
        }
        run_member(m, p->cancel);
    }
    return NULL;
}

int lf_ensemble_run(lf_ensemble_member *members, int n, int nthreads, volatile sig_atomic_t *cancel, lf_error *err)
{
    if (n < 0 || (n > 0 && !members)) return lf_error_set(err, LF_EINVAL, "lf_ensemble_run: %d members", n);
    if (nthreads < 0) return lf_error_set(err, LF_EINVAL, "lf_ensemble_run: %d threads", nthreads);
    if (nthreads == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = c > 0 ? (int)c : 1;
    }
    if (nthreads > n) nthreads = n > 0 ? n : 1;
    for (int i = 0; i < n; i++) {
        members[i].status = LF_OK;
        memset(&members[i].err, 0, sizeof members[i].err);
        memset(&members[i].stats, 0, sizeof members[i].stats);
    }
    pool p = {members, n, 0, cancel};
    atomic_init(&p.next, 0);
    pthread_t *th = nthreads > 1 ? malloc((size_t)(nthreads - 1) * sizeof *th) : NULL;
    int started = 0;
    for (int k = 0; k < nthreads - 1 && th; k++)
        if (pthread_create(&th[k], NULL, worker, &p) == 0) started++;
    worker(&p); /* the calling thread works too */
    for (int k = 0; k < started; k++) pthread_join(th[k], NULL);
    free(th);
    for (int i = 0; i < n; i++)
        if (members[i].status != LF_OK) {
            lf_error_set(err, members[i].status, "ensemble member %d failed: %s", i + 1, members[i].err.msg);
            return members[i].status;
        }
    return LF_OK;
}
