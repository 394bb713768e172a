/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — rigid bodies made of interaction sites: their site–site potential (md/sites.h: Lennard-Jones
 * and damped shifted force Coulomb between the sites of different bodies, in an optional periodic
 * orthorhombic box, with cell and Verlet neighbour lists) as a potential of the positions and attitudes
 * of bodies that translate (potential.h: the bodies' forces and body-frame torques from the forces on
 * their sites, r = x + R s). */
#ifndef LF_SITES_POTENTIAL_H
#define LF_SITES_POTENTIAL_H

#include "base/export.h"
#include "md/sites.h"
#include "model/potential.h"

LF_BEGIN_DECLS

/* The potential of spec (copied: md/sites.h), named "sites"; NULL with err on a bad spec. */
lf_potential *lf_potential_sites(const lf_sites_spec *spec, lf_error *err);
/* The statistics of its last evaluation (pair energy, virials, pairs in range, list rebuilds). */
int lf_potential_sites_stats(const lf_potential *p, lf_sites_stats *st, lf_error *err);

LF_END_DECLS

#endif
