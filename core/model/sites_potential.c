/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the potential of bodies made of interaction sites (sites_potential.h): the site–site
 * engine of core/md/ (Lennard-Jones, damped shifted force Coulomb, periodic box, neighbour lists) as a
 * potential of the positions and attitudes of rigid bodies that translate. */
#include "model/sites_potential.h"

static int sites_eval_x(void *ctx, const lf_bodies_config *c, double *U, double *F, double *tau, lf_error *err)
{
    return lf_sites_eval(ctx, c->nb, c->x, c->R, U, F, tau, err);
}

static void sites_destroy(void *ctx) { lf_sites_free(ctx); }

lf_potential *lf_potential_sites(const lf_sites_spec *spec, lf_error *err)
{
    lf_sites *s = lf_sites_new(spec, err);
    if (!s) return NULL;
    lf_potential *p = lf_potential_new_x("sites", sites_eval_x, s, sites_destroy, err);
    if (!p) lf_sites_free(s);
    return p;
}

int lf_potential_sites_stats(const lf_potential *p, lf_sites_stats *st, lf_error *err)
{
    const lf_sites *s = lf_potential_context_x(p, sites_eval_x);
    if (!s || !st)
        return lf_error_set(err, LF_EINVAL,
                            "lf_potential_sites_stats: a site potential (lf_potential_sites) is required");
    lf_sites_get_stats(s, st);
    return LF_OK;
}
