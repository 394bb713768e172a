/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow (internal) — how a system kind is implemented: a class of operations over a private
 * context, joined with a manifold, a field/observable schema and an initial state by
 * lf_system_create. Not installed: system kinds live in core/model/. */
#ifndef LF_SYSTEM_INTERNAL_H
#define LF_SYSTEM_INTERNAL_H

#include "model/system.h"

typedef struct lf_system_class {
    const char *kind;
    unsigned forms;
    /* LF_FORM_LIE_ODE (required) and an optional Jacobian along the action */
    int (*f)(const lf_system *s, double t, const double *y, double *xi, lf_error *err);
    int (*jacobian)(const lf_system *s, double t, const double *y, double *D, lf_error *err);
    /* optional */
    int (*energy)(const lf_system *s, const double *y, double *E, lf_error *err);
    int (*observe)(const lf_system *s, double t, const double *y, double *out, lf_error *err);
    int (*check_state)(const lf_system *s, const double *y, double tol, lf_error *err); /* beyond the manifold check */
    void (*destroy)(void *ctx);
    /* LF_FORM_FIRST_INTEGRAL (set per instance): H, dH and an optional skew map */
    int (*first_integral)(const lf_system *s, const double *y, double *H, lf_error *err);
    int (*dH)(const lf_system *s, const double *y, double *g, lf_error *err);
    int (*skew)(const lf_system *s, const double *y, const double *a, double *out, lf_error *err);
} lf_system_class;

struct lf_system {
    const lf_system_class *cls;
    void *ctx;                  /* owned: cls->destroy(ctx) in lf_system_free */
    unsigned forms;             /* cls->forms, plus forms a kind adds per instance (the forms with a
                                   record below count when their record is set) */
    lf_manifold *M;             /* owned */
    double *y0;                 /* initial state, nparam doubles, owned */
    int has_energy;             /* cls->energy applies to this instance */
    int nfields, nobs, obs_dim;
    lf_field fields[4];
    lf_observable obs[16]; /* a kind adds at most 16 (rigid bodies that translate: 9) */
    /* the records of the forms the instance offers, set by the kind (owned by its ctx, or static) */
    const lf_form_rigid *rigid;
    const lf_form_second_order *second_order;
    const lf_form_constrained *constrained;
    int has_skew;               /* first-integral form: cls->skew applies to this instance */
};

/* Make a system of class cls over ctx on manifold M (both owned from now on, also on failure:
 * ctx is destroyed and M freed when NULL is returned). y0 may be NULL (identity point). */
lf_system *lf_system_create(const lf_system_class *cls, void *ctx, lf_manifold *M, const double *y0, lf_error *err);
void lf_system_add_field(lf_system *s, const char *name, int first, int count, int scalar_if_one, int rm_as_vec3);
void lf_system_add_observable(lf_system *s, const char *name, lf_observable_kind kind, int dim, const char *columns);

static inline void *lf_system_ctx(const lf_system *s) { return s->ctx; }

#endif
