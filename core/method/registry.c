/* lieflow — the registry of built-in methods: every method, in the order lf.methods() lists them. */
#include <string.h>

#include "method_internal.h"

/* Each method is defined in its family's file. */
extern const lf_method lf_method_eln, lf_method_eln_exp, lf_method_tln, lf_method_vlv, lf_method_lgvi,
    lf_method_liemid, lf_method_liemid_i, lf_method_liemid_e, lf_method_liemid_e1, lf_method_liemid_e2,
    lf_method_liemid_ea, lf_method_akw, lf_method_prk, lf_method_mcg, lf_method_new3;
extern const lf_method lf_method_lie_euler, lf_method_lie_euler_implicit, lf_method_rkmk_heun, lf_method_rkmk4,
    lf_method_rkmk_gl4, lf_method_rkmk_gl6, lf_method_rkmk_gl4_sym, lf_method_rkmk_gl6_sym, lf_method_rkmk_dp45, lf_method_cg3,
    lf_method_cf4;
extern const lf_method lf_method_eln_spatial, lf_method_rattle;
extern const lf_method lf_method_ep2_avf, lf_method_ep2_gonzalez, lf_method_ep4, lf_method_ep4_start, lf_method_ep2_s2,
    lf_method_ep2_s2_avf, lf_method_lie_midpoint;
/* beyond the papers: splitting methods (step_splitting.c) and compositions (compose.c) */
extern const lf_method lf_method_no_squish, lf_method_dlm, lf_method_split_exact, lf_method_split_exact_s4,
    lf_method_split_exact_s6, lf_method_dlm_s4, lf_method_dlm_s6;

static const lf_method *const registry[] = {
    /* rigid bodies (form rigid) */
    &lf_method_eln, &lf_method_eln_exp, &lf_method_tln, &lf_method_vlv, &lf_method_liemid, &lf_method_liemid_i,
    &lf_method_liemid_e, &lf_method_liemid_e1, &lf_method_liemid_e2, &lf_method_liemid_ea, &lf_method_prk,
    &lf_method_mcg, &lf_method_new3, &lf_method_akw, &lf_method_lgvi,
    /* rigid bodies beyond the papers: splittings and compositions */
    &lf_method_no_squish, &lf_method_dlm, &lf_method_split_exact, &lf_method_split_exact_s4, &lf_method_split_exact_s6,
    &lf_method_dlm_s4, &lf_method_dlm_s6,
    /* generic Lie-group methods (form lie_ode) */
    &lf_method_lie_euler, &lf_method_lie_euler_implicit, &lf_method_rkmk_heun, &lf_method_rkmk4, &lf_method_rkmk_gl4,
    &lf_method_rkmk_gl6, &lf_method_rkmk_gl4_sym, &lf_method_rkmk_gl6_sym, &lf_method_cg3, &lf_method_cf4,
    &lf_method_rkmk_dp45, &lf_method_lie_midpoint,
    /* discrete-gradient (energy-preserving) methods (form first_integral) */
    &lf_method_ep2_avf, &lf_method_ep2_gonzalez, &lf_method_ep4, &lf_method_ep4_start, &lf_method_ep2_s2,
    &lf_method_ep2_s2_avf,
    /* systems on spheres (Ortolan's thesis §7.1): forms second_order and constrained */
    &lf_method_eln_spatial, &lf_method_rattle,
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
