/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the Lie-ODE system kind (lie_ode.h). */
#include "model/lie_ode.h"

#include <stdlib.h>
#include <string.h>

#include "model/system_internal.h"

typedef struct {
    lf_lie_ode_def def;
} lie_ode_ctx;

static const lf_system_class lie_ode_class, lie_ode_jac_class;

static const lf_lie_ode_def *def_of(const lf_system *s) { return &((const lie_ode_ctx *)lf_system_ctx(s))->def; }

static int ode_f(const lf_system *s, double t, const double *y, double *xi, lf_error *err)
{
    const lf_lie_ode_def *d = def_of(s);
    return d->f(d->ctx, t, y, xi, err);
}

static int ode_jacobian(const lf_system *s, double t, const double *y, double *D, lf_error *err)
{
    const lf_lie_ode_def *d = def_of(s);
    return d->jacobian(d->ctx, t, y, D, err);
}

static int ode_energy(const lf_system *s, const double *y, double *E, lf_error *err)
{
    const lf_lie_ode_def *d = def_of(s);
    if (!d->energy) return lf_error_set(err, LF_EINVAL, "lie_ode %s: no energy was given", d->name);
    return d->energy(d->ctx, y, E, err);
}

static int ode_H(const lf_system *s, const double *y, double *H, lf_error *err)
{
    const lf_lie_ode_def *d = def_of(s);
    if (!d->H) return lf_error_set(err, LF_EINVAL, "lie_ode %s: no first integral H was given", d->name);
    return d->H(d->ctx, y, H, err);
}

static int ode_dH(const lf_system *s, const double *y, double *g, lf_error *err)
{
    const lf_lie_ode_def *d = def_of(s);
    if (!d->dH) return lf_error_set(err, LF_EINVAL, "lie_ode %s: no differential dH was given", d->name);
    return d->dH(d->ctx, y, g, err);
}

static int ode_skew(const lf_system *s, const double *y, const double *a, double *out, lf_error *err)
{
    const lf_lie_ode_def *d = def_of(s);
    if (!d->skew) return lf_error_set(err, LF_EINVAL, "lie_ode %s: no skew map was given", d->name);
    return d->skew(d->ctx, y, a, out, err);
}

/* [energy] | manifold defect */
static int ode_observe(const lf_system *s, double t, const double *y, double *out, lf_error *err)
{
    (void)t;
    const lf_lie_ode_def *d = def_of(s);
    if (d->energy) {
        int rc = d->energy(d->ctx, y, out++, err);
        if (rc != LF_OK) return rc;
    }
    *out = lf_manifold_defect(lf_system_manifold(s), y);
    return LF_OK;
}

static void ode_destroy(void *p)
{
    lie_ode_ctx *c = p;
    if (c->def.destroy) c->def.destroy(c->def.ctx);
    free(c);
}

static const lf_system_class lie_ode_class = {
    .kind = "lie_ode", .forms = LF_FORM_LIE_ODE, .f = ode_f, .energy = ode_energy,
    .observe = ode_observe, .destroy = ode_destroy, .first_integral = ode_H, .dH = ode_dH, .skew = ode_skew,
};
static const lf_system_class lie_ode_jac_class = {
    .kind = "lie_ode", .forms = LF_FORM_LIE_ODE, .f = ode_f, .jacobian = ode_jacobian, .energy = ode_energy,
    .observe = ode_observe, .destroy = ode_destroy, .first_integral = ode_H, .dH = ode_dH, .skew = ode_skew,
};

const char *lf_lie_ode_name(const lf_system *s)
{
    return (s->cls == &lie_ode_class || s->cls == &lie_ode_jac_class) ? def_of(s)->name : "";
}

const lf_lie_ode_def *lf_lie_ode_definition(const lf_system *s)
{
    return s && (s->cls == &lie_ode_class || s->cls == &lie_ode_jac_class) ? def_of(s) : NULL;
}

lf_system *lf_lie_ode_new(const lf_manifold *M, const double *y0, const lf_lie_ode_def *def, lf_error *err)
{
    if (!M || !def || !def->f) {
        if (def && def->destroy) def->destroy(def->ctx);
        lf_error_set(err, LF_EINVAL, "lf_lie_ode_new: a manifold and a vector field f are required");
        return NULL;
    }
    lie_ode_ctx *c = malloc(sizeof *c);
    lf_manifold *Mc = lf_manifold_copy(M, err);
    if (!c || !Mc) {
        free(c);
        lf_manifold_free(Mc);
        if (def->destroy) def->destroy(def->ctx);
        if (!c) lf_error_set(err, LF_ENOMEM, "lie_ode: out of memory");
        return NULL;
    }
    c->def = *def;
    if (!c->def.name) c->def.name = "callback";
    if (!c->def.energy) c->def.energy = c->def.H; /* the first integral is the energy to monitor */
    lf_system *s = lf_system_create(def->jacobian ? &lie_ode_jac_class : &lie_ode_class, c, Mc, y0, err);
    if (!s) return NULL;
    s->has_energy = c->def.energy != NULL;
    if (def->H && def->dH) s->forms |= LF_FORM_FIRST_INTEGRAL;
    s->has_skew = def->skew != NULL;
    lf_system_add_field(s, "y", 0, lf_manifold_nfactors(Mc), 0, 0);
    if (c->def.energy) lf_system_add_observable(s, "energy", LF_OBS_SCALAR, 1, "energy");
    lf_system_add_observable(s, "manifold_defect", LF_OBS_SCALAR, 1, "manifold_defect");
    if (y0 && lf_system_check_state(s, y0, 1e-9, err) != LF_OK) {
        lf_system_free(s);
        return NULL;
    }
    return s;
}
