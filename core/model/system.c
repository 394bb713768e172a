/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the generic system object: construction, schema, and dispatch to the kind's class. */
#include "model/system_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *lf_form_name(unsigned form)
{
    switch (form) {
    case LF_FORM_LIE_ODE: return "lie_ode";
    case LF_FORM_RIGID: return "rigid";
    case LF_FORM_SECOND_ORDER: return "second_order";
    case LF_FORM_FIRST_INTEGRAL: return "first_integral";
    case LF_FORM_CONSTRAINED: return "constrained";
    default: return "?";
    }
}

lf_system *lf_system_create(const lf_system_class *cls, void *ctx, lf_manifold *M, const double *y0, lf_error *err)
{
    lf_system *s = calloc(1, sizeof *s);
    double *y = M ? malloc((size_t)lf_manifold_nparam(M) * sizeof(double)) : NULL;
    if (!s || !y) {
        free(s);
        free(y);
        if (cls->destroy && ctx) cls->destroy(ctx);
        lf_manifold_free(M);
        lf_error_set(err, LF_ENOMEM, "%s: out of memory", cls->kind);
        return NULL;
    }
    s->cls = cls;
    s->ctx = ctx;
    s->forms = cls->forms;
    s->has_energy = cls->energy != NULL;
    s->M = M;
    s->y0 = y;
    if (y0) memcpy(y, y0, (size_t)lf_manifold_nparam(M) * sizeof(double));
    else lf_manifold_identity(M, y);
    return s;
}

void lf_system_free(lf_system *s)
{
    if (!s) return;
    if (s->cls->destroy && s->ctx) s->cls->destroy(s->ctx);
    lf_manifold_free(s->M);
    free(s->y0);
    free(s);
}

void lf_system_add_field(lf_system *s, const char *name, int first, int count, int scalar_if_one, int rm_as_vec3)
{
    if (s->nfields >= (int)(sizeof s->fields / sizeof s->fields[0])) return;
    s->fields[s->nfields++] = (lf_field){name, first, count, scalar_if_one, rm_as_vec3};
}

void lf_system_add_observable(lf_system *s, const char *name, lf_observable_kind kind, int dim, const char *columns)
{
    if (s->nobs >= (int)(sizeof s->obs / sizeof s->obs[0])) return;
    s->obs[s->nobs++] = (lf_observable){name, kind, dim, columns};
    s->obs_dim += dim;
}

const char *lf_system_kind(const lf_system *s) { return s->cls->kind; }
unsigned lf_system_forms(const lf_system *s)
{
    const unsigned records = LF_FORM_RIGID | LF_FORM_SECOND_ORDER | LF_FORM_CONSTRAINED;
    return (s->forms & ~records) | (s->rigid ? LF_FORM_RIGID : 0) | (s->second_order ? LF_FORM_SECOND_ORDER : 0) |
           (s->constrained ? LF_FORM_CONSTRAINED : 0);
}
const lf_manifold *lf_system_manifold(const lf_system *s) { return s->M; }
int lf_system_nparam(const lf_system *s) { return lf_manifold_nparam(s->M); }
int lf_system_ndim(const lf_system *s) { return lf_manifold_ndim(s->M); }
const double *lf_system_initial(const lf_system *s) { return s->y0; }

int lf_system_check_state(const lf_system *s, const double *y, double tol, lf_error *err)
{
    if (!s || !y) return lf_error_set(err, LF_EINVAL, "lf_system_check_state: a system and a state are required");
    /* field by field, so that messages name the field ("R[2] is not a rotation ...") */
    for (int i = 0; i < s->nfields; i++) {
        const lf_field *f = &s->fields[i];
        for (int k = 0; k < f->count; k++) {
            char what[64];
            if (f->count == 1 && f->scalar_if_one) snprintf(what, sizeof what, "%s", f->name);
            else snprintf(what, sizeof what, "%s[%d]", f->name, k + 1);
            int rc = lf_manifold_check_factor(s->M, f->first + k, y, tol, what, err);
            if (rc != LF_OK) return rc;
        }
    }
    int rc = lf_manifold_check(s->M, y, tol, "state", err); /* factors outside every field */
    if (rc != LF_OK) return rc;
    return s->cls->check_state ? s->cls->check_state(s, y, tol, err) : LF_OK;
}

int lf_system_set_initial(lf_system *s, const double *y0, lf_error *err)
{
    if (!s || !y0) return lf_error_set(err, LF_EINVAL, "lf_system_set_initial: a system and a state are required");
    int rc = lf_system_check_state(s, y0, 1e-9, err);
    if (rc != LF_OK) return rc;
    memcpy(s->y0, y0, (size_t)lf_manifold_nparam(s->M) * sizeof(double));
    return LF_OK;
}

int lf_system_f(const lf_system *s, double t, const double *y, double *xi, lf_error *err)
{
    if (!s || !y || !xi) return lf_error_set(err, LF_EINVAL, "lf_system_f: a system, a state and an output are required");
    int rc = s->cls->f(s, t, y, xi, err);
    if (rc != LF_OK) return rc;
    const int nd = lf_manifold_ndim(s->M);
    for (int i = 0; i < nd; i++)
        if (!isfinite(xi[i]))
            return lf_error_set(err, LF_EDOMAIN, "%s: the vector field is not finite at t=%.17g (component %d = %g)",
                                s->cls->kind, t, i + 1, xi[i]);
    return LF_OK;
}

int lf_system_has_jacobian(const lf_system *s) { return s->cls->jacobian != NULL; }

int lf_system_jacobian(const lf_system *s, double t, const double *y, double *D, lf_error *err)
{
    if (!s->cls->jacobian) return lf_error_set(err, LF_EINVAL, "%s: this system has no analytic Jacobian", s->cls->kind);
    return s->cls->jacobian(s, t, y, D, err);
}

int lf_system_has_energy(const lf_system *s) { return s ? s->has_energy : 0; }

int lf_system_energy(const lf_system *s, const double *y, double *E, lf_error *err)
{
    if (!s || !y || !E) return lf_error_set(err, LF_EINVAL, "lf_system_energy: a system, a state and an output are required");
    if (!s->has_energy) return lf_error_set(err, LF_EINVAL, "%s: this system has no energy", s->cls->kind);
    int rc = s->cls->energy(s, y, E, err);
    if (rc == LF_OK && !isfinite(*E)) return lf_error_set(err, LF_EDOMAIN, "%s: the energy is not finite (%g)", s->cls->kind, *E);
    return rc;
}

int lf_system_nfields(const lf_system *s) { return s->nfields; }

int lf_system_factor_groups(const lf_system *s, int *group)
{
    const int nf = lf_manifold_nfactors(lf_system_manifold(s));
    int n = s->nfields > 0 ? s->fields[0].count : 0, covered = 0;
    for (int i = 0; i < s->nfields; i++) {
        if (s->fields[i].count != n) n = 0;
        covered += s->fields[i].count;
    }
    if (n > 1 && covered == nf) {
        for (int i = 0; i < s->nfields; i++)
            for (int j = 0; j < n; j++) group[s->fields[i].first + j] = j;
        return n;
    }
    for (int f = 0; f < nf; f++) group[f] = f;
    return nf;
}
const lf_field *lf_system_field(const lf_system *s, int i) { return (i >= 0 && i < s->nfields) ? &s->fields[i] : NULL; }

const lf_field *lf_system_find_field(const lf_system *s, const char *name)
{
    for (int i = 0; i < s->nfields; i++)
        if (strcmp(s->fields[i].name, name) == 0) return &s->fields[i];
    return NULL;
}

int lf_system_nobservables(const lf_system *s) { return s->nobs; }
const lf_observable *lf_system_observable(const lf_system *s, int i) { return (i >= 0 && i < s->nobs) ? &s->obs[i] : NULL; }
int lf_system_observables_dim(const lf_system *s) { return s->obs_dim; }

int lf_system_observe(const lf_system *s, double t, const double *y, double *out, lf_error *err)
{
    if (!s || !y || !out) return lf_error_set(err, LF_EINVAL, "lf_system_observe: a system, a state and an output are required");
    if (!s->cls->observe) return LF_OK;
    int rc = s->cls->observe(s, t, y, out, err);
    /* a finite state whose observable overflows (an energy, x x m v of a body far away): an error
     * naming it, not an inf in a trajectory */
    for (int i = 0, off = 0; rc == LF_OK && i < s->nobs; off += s->obs[i++].dim)
        for (int k = 0; k < s->obs[i].dim; k++)
            if (!isfinite(out[off + k]))
                return lf_error_set(err, LF_EDOMAIN,
                                    "observable %s is not finite at t=%.17g (%g): the state is beyond "
                                    "the range of doubles for it",
                                    s->obs[i].name, t, out[off + k]);
    return rc;
}

/* ---------------------------------------------------------------- first-integral form */
static int need_fi(const lf_system *s, lf_error *err)
{
    if (!(s->forms & LF_FORM_FIRST_INTEGRAL) || !s->cls->first_integral || !s->cls->dH)
        return lf_error_set(err, LF_EINVAL, "%s: this system has no first integral (H and dH)", s->cls->kind);
    return LF_OK;
}

int lf_system_first_integral(const lf_system *s, const double *y, double *H, lf_error *err)
{
    int rc = need_fi(s, err);
    if (rc == LF_OK) rc = s->cls->first_integral(s, y, H, err);
    if (rc == LF_OK && !isfinite(*H))
        return lf_error_set(err, LF_EDOMAIN, "%s: the first integral H is not finite (%g)", s->cls->kind, *H);
    return rc;
}

int lf_system_dH(const lf_system *s, const double *y, double *g, lf_error *err)
{
    int rc = need_fi(s, err);
    if (rc == LF_OK) rc = s->cls->dH(s, y, g, err);
    if (rc != LF_OK) return rc;
    const int nd = lf_manifold_ndim(s->M);
    for (int i = 0; i < nd; i++)
        if (!isfinite(g[i]))
            return lf_error_set(err, LF_EDOMAIN, "%s: dH is not finite (component %d = %g)", s->cls->kind, i + 1, g[i]);
    return LF_OK;
}

int lf_system_has_skew(const lf_system *s) { return s->has_skew && s->cls->skew; }

int lf_system_skew(const lf_system *s, double t, const double *y, const double *a, double *out, lf_error *err)
{
    int rc = need_fi(s, err);
    if (rc != LF_OK) return rc;
    const int nd = lf_manifold_ndim(s->M);
    if (lf_system_has_skew(s)) {
        rc = s->cls->skew(s, y, a, out, err);
        for (int i = 0; rc == LF_OK && i < nd; i++)
            if (!isfinite(out[i]))
                rc = lf_error_set(err, LF_EDOMAIN, "%s: the skew map's result is not finite (component %d = %g)",
                                  s->cls->kind, i + 1, out[i]);
        return rc;
    }
    /* the default w(y)(a) = (f <g, a> - g <f, a>)/<g, g> (McLachlan, Quispel & Robidoux) */
    double gbuf[64], fbuf[64];
    double *g = nd <= 64 ? gbuf : malloc(2 * (size_t)nd * sizeof(double)), *f = nd <= 64 ? fbuf : g + nd;
    if (!g) return lf_error_set(err, LF_ENOMEM, "skew map: out of memory");
    rc = lf_system_dH(s, y, g, err);
    if (rc == LF_OK) rc = lf_system_f(s, t, y, f, err);
    if (rc == LF_OK) {
        const lf_manifold *M = s->M;
        double gg = lf_manifold_inner(M, g, g), ga = lf_manifold_inner(M, g, a), fa = lf_manifold_inner(M, f, a);
        if (!(gg > 0))
            rc = lf_error_set(err, LF_EDOMAIN, "%s: dH(y) = 0: the default skew map (f<g,.> - g<f,.>)/<g,g> is undefined "
                                               "here (a relative equilibrium); give the system a skew map",
                              s->cls->kind);
        else
            for (int i = 0; i < nd; i++) {
                out[i] = (f[i] * ga - g[i] * fa) / gg;
                if (!isfinite(out[i]) && rc == LF_OK) /* <g,g> > 0 but so small that the division overflows */
                    rc = lf_error_set(err, LF_EDOMAIN, "%s: <dH, dH> = %.3g: the default skew map overflows (nearly "
                                                       "a relative equilibrium); give the system a skew map",
                                      s->cls->kind, gg);
            }
    }
    if (g != gbuf) free(g);
    return rc;
}

/* ---------------------------------------------------------------- the forms' records */
const lf_form_rigid *lf_system_rigid(const lf_system *s) { return s ? s->rigid : NULL; }
const lf_form_second_order *lf_system_second_order(const lf_system *s) { return s ? s->second_order : NULL; }
const lf_form_constrained *lf_system_constrained(const lf_system *s) { return s ? s->constrained : NULL; }

