/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — forcings (forcing.h): the object, the built-ins (damping, constant and tabulated torques)
 * and sums. */
#include "model/forcing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/linalg.h"

struct lf_forcing {
    const char *name;
    unsigned depends;
    lf_forcing_fn fn;
    lf_forcing_jacobian_fn jacobian;
    lf_forcing_jacobian_fn diagonal; /* built-ins with LF_FORCING_DIAGONAL */
    void *ctx;
    void (*destroy)(void *ctx);
};

lf_forcing *lf_forcing_new(const char *name, unsigned depends, lf_forcing_fn fn, lf_forcing_jacobian_fn jacobian,
                           void *ctx, void (*destroy)(void *ctx), lf_error *err)
{
    if (!fn) {
        if (destroy) destroy(ctx);
        lf_error_set(err, LF_EINVAL, "lf_forcing_new: an evaluation function is required");
        return NULL;
    }
    if ((depends & ~(unsigned)(LF_FORCING_VELOCITY | LF_FORCING_TIME | LF_FORCING_AFFINE)) ||
        ((depends & LF_FORCING_AFFINE) && !jacobian)) { /* DIAGONAL: the built-ins' own */
        if (destroy) destroy(ctx);
        lf_error_set(err, LF_EINVAL, "lf_forcing_new: depends = %u has unknown flags (or AFFINE without a Jacobian)",
                     depends);
        return NULL;
    }
    lf_forcing *f = calloc(1, sizeof *f);
    if (!f) {
        if (destroy) destroy(ctx);
        lf_error_set(err, LF_ENOMEM, "forcing %s: out of memory", name ? name : "callback");
        return NULL;
    }
    *f = (lf_forcing){name ? name : "callback", depends, fn, jacobian, NULL, ctx, destroy};
    return f;
}

/* a built-in whose Jacobian is diagonal: its diagonal function, and the flag */
static lf_forcing *with_diagonal(lf_forcing *f, lf_forcing_jacobian_fn diagonal)
{
    if (f && (f->depends & LF_FORCING_VELOCITY)) {
        f->diagonal = diagonal;
        f->depends |= LF_FORCING_DIAGONAL;
    }
    return f;
}

int lf_forcing_diagonal(const lf_forcing *f, const lf_bodies_motion *m, double *d, lf_error *err)
{
    if (!f || !m || !d)
        return lf_error_set(err, LF_EINVAL, "lf_forcing_diagonal: a forcing, a motion and an output are required");
    if (!f->diagonal) return lf_error_set(err, LF_EINVAL, "forcing %s has no diagonal Jacobian", f->name);
    return f->diagonal(f->ctx, m, d, err);
}

void lf_forcing_free(lf_forcing *f)
{
    if (!f) return;
    if (f->destroy) f->destroy(f->ctx);
    free(f);
}

const char *lf_forcing_name(const lf_forcing *f) { return f ? f->name : NULL; }
unsigned lf_forcing_depends(const lf_forcing *f) { return f ? f->depends : 0; }
int lf_forcing_has_jacobian(const lf_forcing *f) { return f && f->jacobian; }

static int dim(const lf_bodies_motion *m) { return (m->v ? 6 : 3) * m->c.nb; }

int lf_forcing_eval(const lf_forcing *f, const lf_bodies_motion *m, double *tau, double *F, lf_error *err)
{
    if (!f || !m || !tau || (m->v && !F))
        return lf_error_set(err, LF_EINVAL, "lf_forcing_eval: a forcing, a motion and outputs are required");
    int rc = f->fn(f->ctx, m, tau, F, err);
    if (rc != LF_OK) return rc;
    const int nb = m->c.nb;
    if (lf_all_finite(tau, 3 * (size_t)nb) && (!m->v || lf_all_finite(F, 3 * (size_t)nb))) return LF_OK;
    for (int i = 0; i < 3 * nb; i++) {
        if (!isfinite(tau[i]))
            return lf_error_set(err, LF_EDOMAIN, "forcing %s: the torque on body %d is not finite at t=%.17g (%g)",
                                f->name, i / 3 + 1, m->t, tau[i]);
        if (m->v && !isfinite(F[i]))
            return lf_error_set(err, LF_EDOMAIN, "forcing %s: the force on body %d is not finite at t=%.17g (%g)",
                                f->name, i / 3 + 1, m->t, F[i]);
    }
    return LF_OK;
}

int lf_forcing_jacobian(const lf_forcing *f, const lf_bodies_motion *m, double *D, lf_error *err)
{
    if (!f || !m || !D)
        return lf_error_set(err, LF_EINVAL, "lf_forcing_jacobian: a forcing, a motion and an output are required");
    if (!f->jacobian) return lf_error_set(err, LF_EINVAL, "forcing %s has no Jacobian in the velocities", f->name);
    int rc = f->jacobian(f->ctx, m, D, err);
    const int n = dim(m);
    for (int i = 0; rc == LF_OK && i < n * n; i++)
        if (!isfinite(D[i]))
            return lf_error_set(err, LF_EDOMAIN, "forcing %s: its Jacobian is not finite at t=%.17g", f->name, m->t);
    return rc;
}

/* ---------------------------------------------------------------- damping: F = -c v, tau_k = -a_k w_k */
typedef struct {
    double c, a[3];
} damping;

static int damping_eval(void *ctx, const lf_bodies_motion *m, double *tau, double *F, lf_error *err)
{
    (void)err;
    const damping *d = ctx;
    for (int i = 0; i < 3 * m->c.nb; i++) {
        tau[i] = -d->a[i % 3] * m->w[i];
        if (m->v) F[i] = -d->c * m->v[i];
    }
    return LF_OK;
}

static int damping_diagonal(void *ctx, const lf_bodies_motion *m, double *D, lf_error *err)
{
    (void)err;
    const damping *d = ctx;
    const int n = dim(m), n3 = 3 * m->c.nb;
    for (int i = 0; i < n; i++) D[i] = i < n3 ? -d->a[i % 3] : -d->c;
    return LF_OK;
}

static int damping_jacobian(void *ctx, const lf_bodies_motion *m, double *D, lf_error *err)
{
    (void)err;
    const damping *d = ctx;
    const int n = dim(m), n3 = 3 * m->c.nb;
    memset(D, 0, (size_t)n * n * sizeof *D);
    for (int i = 0; i < n; i++) D[(size_t)i * n + i] = i < n3 ? -d->a[i % 3] : -d->c;
    return LF_OK;
}

lf_forcing *lf_forcing_damping(double c, const double angular[3], lf_error *err)
{
    const double a[3] = {angular ? angular[0] : 0, angular ? angular[1] : 0, angular ? angular[2] : 0};
    if (!isfinite(c) || c < 0)
        return lf_error_set(err, LF_EINVAL, "damping: linear = %g, expected a finite number >= 0", c), NULL;
    for (int k = 0; k < 3; k++)
        if (!isfinite(a[k]) || a[k] < 0)
            return lf_error_set(err, LF_EINVAL, "damping: angular[%d] = %g, expected a finite number >= 0", k + 1,
                                a[k]),
                   NULL;
    damping *d = malloc(sizeof *d);
    if (!d) return lf_error_set(err, LF_ENOMEM, "damping: out of memory"), NULL;
    *d = (damping){c, {a[0], a[1], a[2]}};
    /* a damping of 0 depends on nothing (its kicks are explicit, and merge in compositions) */
    const unsigned depends = (c > 0 || a[0] > 0 || a[1] > 0 || a[2] > 0) ? LF_FORCING_VELOCITY | LF_FORCING_AFFINE : 0;
    return with_diagonal(lf_forcing_new("damping", depends, damping_eval, damping_jacobian, d, free, err),
                         damping_diagonal);
}

/* ---------------------------------------------------------------- torques of time: constant or tabulated */
typedef struct {
    int n, spatial;
    double *t, *tau; /* n times, 3 n torques */
} torque_table;

/* the torque at time t: linear between the nodes, constant outside */
static void table_at(const torque_table *T, double t, double out[3])
{
    if (T->n == 1 || t <= T->t[0]) {
        memcpy(out, T->tau, 3 * sizeof(double));
        return;
    }
    if (t >= T->t[T->n - 1]) {
        memcpy(out, T->tau + 3 * (T->n - 1), 3 * sizeof(double));
        return;
    }
    int lo = 0, hi = T->n - 1; /* t[lo] <= t < t[hi] */
    while (hi - lo > 1) {
        const int mid = lo + (hi - lo) / 2;
        if (T->t[mid] <= t) lo = mid;
        else hi = mid;
    }
    const double s = (t - T->t[lo]) / (T->t[hi] - T->t[lo]);
    for (int k = 0; k < 3; k++) out[k] = T->tau[3 * lo + k] + s * (T->tau[3 * hi + k] - T->tau[3 * lo + k]);
}

static int table_eval(void *ctx, const lf_bodies_motion *m, double *tau, double *F, lf_error *err)
{
    (void)err;
    const torque_table *T = ctx;
    double q[3];
    table_at(T, m->t, q);
    for (int b = 0; b < m->c.nb; b++) {
        if (T->spatial) lf_m3_tapply(m->c.R + 9 * b, q, tau + 3 * b);
        else memcpy(tau + 3 * b, q, 3 * sizeof(double));
        if (m->v) lf_v3_set(F + 3 * b, 0, 0, 0);
    }
    return LF_OK;
}

static void table_destroy(void *ctx)
{
    torque_table *T = ctx;
    free(T->t);
    free(T);
}

lf_forcing *lf_forcing_torque_table(int n, const double *t, const double *tau, int spatial, lf_error *err)
{
    const char *name = spatial ? "spatial_torque" : "body_torque";
    if (n < 1 || n > 100000000 || !tau || (n > 1 && !t))
        return lf_error_set(err, LF_EINVAL, "%s: %d entries, expected 1..1e8 times and torques", name, n), NULL;
    for (int i = 0; i < n; i++) {
        if (n > 1 && (!isfinite(t[i]) || (i > 0 && !(t[i] > t[i - 1]))))
            return lf_error_set(err, LF_EINVAL, "%s: time %d = %g, expected finite times in increasing order", name,
                                i + 1, t[i]),
                   NULL;
        for (int k = 0; k < 3; k++)
            if (!isfinite(tau[3 * i + k]))
                return lf_error_set(err, LF_EINVAL, "%s: torque %d has component %d = %g, expected a finite number",
                                    name, i + 1, k + 1, tau[3 * i + k]),
                       NULL;
    }
    torque_table *T = calloc(1, sizeof *T);
    double *mem = malloc((size_t)4 * n * sizeof(double));
    if (!T || !mem) {
        free(T), free(mem);
        return lf_error_set(err, LF_ENOMEM, "%s: out of memory", name), NULL;
    }
    *T = (torque_table){n, spatial != 0, mem, mem + n};
    if (n > 1) memcpy(T->t, t, (size_t)n * sizeof(double));
    else T->t[0] = 0;
    memcpy(T->tau, tau, 3 * (size_t)n * sizeof(double));
    return lf_forcing_new(name, n > 1 ? LF_FORCING_TIME : 0, table_eval, NULL, T, table_destroy, err);
}

lf_forcing *lf_forcing_torque(const double tau[3], int spatial, lf_error *err)
{
    return lf_forcing_torque_table(1, NULL, tau, spatial, err);
}

/* ---------------------------------------------------------------- held inputs */
typedef struct {
    int nb;
    double v[]; /* 3 nb torques, then 3 nb forces */
} held;

static int held_eval(void *ctx, const lf_bodies_motion *m, double *tau, double *F, lf_error *err)
{
    const held *H = ctx;
    if (m->c.nb != H->nb)
        return lf_error_set(err, LF_EINVAL, "held input of %d bodies evaluated for %d", H->nb, m->c.nb);
    memcpy(tau, H->v, 3 * (size_t)H->nb * sizeof *tau);
    if (m->v) memcpy(F, H->v + 3 * H->nb, 3 * (size_t)H->nb * sizeof *F);
    return LF_OK;
}

lf_forcing *lf_forcing_held(int nb, lf_error *err)
{
    if (nb < 1 || nb > 10000000)
        return lf_error_set(err, LF_EINVAL, "held input: %d bodies, expected 1..1e7", nb), NULL;
    held *H = calloc(1, sizeof *H + 6 * (size_t)nb * sizeof(double));
    if (!H) return lf_error_set(err, LF_ENOMEM, "held input: out of memory"), NULL;
    H->nb = nb;
    return lf_forcing_new("held", 0, held_eval, NULL, H, free, err);
}

int lf_forcing_held_set(lf_forcing *f, const double *tau, const double *F, lf_error *err)
{
    if (!f || f->fn != held_eval || !tau)
        return lf_error_set(err, LF_EINVAL, "lf_forcing_held_set: a held input and torques are required");
    held *H = f->ctx;
    const int n3 = 3 * H->nb;
    for (int i = 0; i < n3; i++)
        if (!isfinite(tau[i]) || (F && !isfinite(F[i])))
            return lf_error_set(err, LF_EDOMAIN, "held input: the %s on body %d is not finite (%g)",
                                isfinite(tau[i]) ? "force" : "torque", i / 3 + 1, isfinite(tau[i]) ? F[i] : tau[i]);
    memcpy(H->v, tau, (size_t)n3 * sizeof *tau);
    if (F) memcpy(H->v + n3, F, (size_t)n3 * sizeof *F);
    else memset(H->v + n3, 0, (size_t)n3 * sizeof *F);
    return LF_OK;
}

const double *lf_forcing_held_values(const lf_forcing *f)
{
    return f && f->fn == held_eval ? ((const held *)f->ctx)->v : NULL;
}

/* ---------------------------------------------------------------- sums */
typedef struct {
    int n;
    const lf_forcing **parts;
    char name[160]; /* the parts' names joined by " + " */
} forcing_sum;

/* scratch of the sum: on the stack up to 8 bodies that translate */
enum { SUM_SMALL = 48 };

static int sum_eval(void *ctx, const lf_bodies_motion *m, double *tau, double *F, lf_error *err)
{
    const forcing_sum *S = ctx;
    const int n3 = 3 * m->c.nb;
    double small[2 * SUM_SMALL], *buf = 2 * n3 <= 2 * SUM_SMALL ? small : malloc(2 * (size_t)n3 * sizeof *buf);
    if (!buf) return lf_error_set(err, LF_ENOMEM, "forcing sum: out of memory");
    int rc = LF_OK;
    memset(tau, 0, (size_t)n3 * sizeof *tau);
    if (m->v) memset(F, 0, (size_t)n3 * sizeof *F);
    for (int p = 0; p < S->n && rc == LF_OK; p++) {
        rc = S->parts[p]->fn(S->parts[p]->ctx, m, buf, buf + n3, err);
        for (int i = 0; rc == LF_OK && i < n3; i++) {
            tau[i] += buf[i];
            if (m->v) F[i] += buf[n3 + i];
        }
    }
    if (buf != small) free(buf);
    return rc;
}

static int sum_jacobian(void *ctx, const lf_bodies_motion *m, double *D, lf_error *err)
{
    const forcing_sum *S = ctx;
    const size_t nn = (size_t)dim(m) * dim(m);
    double *buf = malloc(nn * sizeof *buf);
    if (!buf) return lf_error_set(err, LF_ENOMEM, "forcing sum: out of memory");
    int rc = LF_OK;
    memset(D, 0, nn * sizeof *D);
    for (int p = 0; p < S->n && rc == LF_OK; p++) {
        if (!(S->parts[p]->depends & LF_FORCING_VELOCITY)) continue;
        rc = S->parts[p]->jacobian(S->parts[p]->ctx, m, buf, err);
        for (size_t i = 0; rc == LF_OK && i < nn; i++) D[i] += buf[i];
    }
    free(buf);
    return rc;
}

static int sum_diagonal(void *ctx, const lf_bodies_motion *m, double *D, lf_error *err)
{
    const forcing_sum *S = ctx;
    const int n = dim(m);
    double small[2 * SUM_SMALL], *buf = n <= 2 * SUM_SMALL ? small : malloc((size_t)n * sizeof *buf);
    if (!buf) return lf_error_set(err, LF_ENOMEM, "forcing sum: out of memory");
    int rc = LF_OK;
    memset(D, 0, (size_t)n * sizeof *D);
    for (int p = 0; p < S->n && rc == LF_OK; p++) {
        if (!(S->parts[p]->depends & LF_FORCING_VELOCITY)) continue;
        rc = S->parts[p]->diagonal(S->parts[p]->ctx, m, buf, err);
        for (int i = 0; rc == LF_OK && i < n; i++) D[i] += buf[i];
    }
    if (buf != small) free(buf);
    return rc;
}

static void sum_destroy(void *ctx)
{
    forcing_sum *S = ctx;
    free(S->parts);
    free(S);
}

lf_forcing *lf_forcing_sum(int n, const lf_forcing *const *parts, lf_error *err)
{
    if (n < 1 || n > 64 || !parts)
        return lf_error_set(err, LF_EINVAL, "forcing sum: %d parts, expected 1..64", n), NULL;
    unsigned depends = 0;
    int jac = 1, affine = 1, diagonal = 1;
    for (int p = 0; p < n; p++) {
        if (!parts[p]) return lf_error_set(err, LF_EINVAL, "forcing sum: part %d is missing", p + 1), NULL;
        depends |= parts[p]->depends;
        if ((parts[p]->depends & LF_FORCING_VELOCITY) && !parts[p]->jacobian) jac = 0;
        if ((parts[p]->depends & LF_FORCING_VELOCITY) && !(parts[p]->depends & LF_FORCING_AFFINE)) affine = 0;
        if ((parts[p]->depends & LF_FORCING_VELOCITY) && !parts[p]->diagonal) diagonal = 0;
    }
    depends &= ~(unsigned)LF_FORCING_DIAGONAL;
    depends &= ~(unsigned)LF_FORCING_AFFINE; /* affine when every part of the velocities is */
    if (affine && jac && (depends & LF_FORCING_VELOCITY)) depends |= LF_FORCING_AFFINE;
    forcing_sum *S = malloc(sizeof *S);
    const lf_forcing **copy = malloc((size_t)n * sizeof *copy);
    if (!S || !copy) {
        free(S), free(copy);
        return lf_error_set(err, LF_ENOMEM, "forcing sum: out of memory"), NULL;
    }
    memcpy(copy, parts, (size_t)n * sizeof *copy);
    *S = (forcing_sum){n, copy, ""};
    for (int p = 0; p < n; p++) {
        const size_t used = strlen(S->name);
        snprintf(S->name + used, sizeof S->name - used, "%s%s", p ? " + " : "", parts[p]->name);
    }
    lf_forcing *f = lf_forcing_new(S->name, depends, sum_eval, jac ? sum_jacobian : NULL, S, sum_destroy, err);
    return affine && diagonal ? with_diagonal(f, sum_diagonal) : f;
}
