/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the registry of built-in methods, generated from methods.def: a record lf_method_<id> per
 * entry (its metadata joined with the family's implementation lf_class_<id>), the registry array in
 * the order of the entries, and the lookup by name. Nothing here names a method. */
#include <string.h>

#include "method/method_internal.h"

/* ---------------------------------------------------------------- the records */
#define LF_INFO(id, title_, ref_, family_, order_, props, form_)                                                    \
    {.name = #id, .title = title_, .reference = ref_, .family = family_, .order = order_,                          \
     .symmetric = ((props) & LF_MP_SYMMETRIC) != 0, .symplectic = ((props) & LF_MP_SYMPLECTIC) ? "proved" : "no", \
     .implicit = ((props) & LF_MP_IMPLICIT) != 0, .adaptive = ((props) & LF_MP_ADAPTIVE) != 0, .form = form_}

#define LF_RECORD(id, title, ref, family, order, props, form, rigid_)                                              \
    extern const lf_method_class lf_class_##id;                                                                    \
    const lf_method lf_method_##id = {.info = LF_INFO(id, title, ref, family, order, props, form),               \
                                      .rigid = rigid_, .cls = &lf_class_##id};

/* the rigid form's claims, from the entry's properties */
#define LF_RIGID_RECORD(id, title, ref, family, order, props)                                                          \
    static const lf_method_rigid_info id##_rigid = {                                                                   \
        (LF_MP_TORQUE_EXPLICIT & (props)) != 0, (LF_MP_MOMENTUM & (props)) != 0,                                       \
        (LF_MP_FREE_BODY_ONLY & (props)) != 0,  (LF_MP_LANES & (props)) != 0,                                          \
        (LF_MP_TRANSLATION & (props)) != 0,     (LF_MP_FORCING & (props)) != 0};                                       \
    LF_RECORD(id, title, ref, family, order, props, LF_FORM_RIGID, &id##_rigid)

#define RIGID(id, title, ref, order, props) LF_RIGID_RECORD(id, title, ref, "rigid", order, props)
#define SPLIT(id, title, ref, order, props) LF_RIGID_RECORD(id, title, ref, "splitting", order, props)
#define COMPOSED(id, title, ref, order, props, base, scheme) LF_RIGID_RECORD(id, title, ref, "composition", order, props)
#define METHOD(id, title, ref, order, props, family, form) LF_RECORD(id, title, ref, family, order, props, form, NULL)
#define RKMK(id, title, ref, order, props, A, b, c) LF_RECORD(id, title, ref, "rkmk", order, props, LF_FORM_LIE_ODE, NULL)
#define CF(id, title, ref, order, props, c, stages, out)                                                           \
    LF_RECORD(id, title, ref, "commutator_free", order, props, LF_FORM_LIE_ODE, NULL)
#define DG(id, title, ref, order, props, form, variant)                                                            \
    LF_RECORD(id, title, ref, "discrete_gradient", order, props, form, NULL)
#include "method/methods.def"

/* ---------------------------------------------------------------- the registry, in the entries' order */
static const lf_method *const registry[] = {
#define METHOD_ID(id) &lf_method_##id,
#include "method/methods.def"
};

int lf_method_count(void) { return (int)(sizeof registry / sizeof registry[0]); }

const lf_method *lf_method_at(int i) { return (i >= 0 && i < lf_method_count()) ? registry[i] : NULL; }

const lf_method *lf_method_find(const char *name)
{
    if (!name) return NULL;
    for (int i = 0; i < lf_method_count(); i++)
        if (strcmp(registry[i]->info.name, name) == 0) return registry[i];
    return NULL;
}

const lf_method_info *lf_method_get_info(const lf_method *m) { return m ? &m->info : NULL; }

const lf_method_rigid_info *lf_method_get_rigid_info(const lf_method *m)
{
    static const lf_method_rigid_info none = {0, 0, 0, 0, 0, 0};
    return m ? (m->rigid ? m->rigid : &none) : NULL;
}
