/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — interaction sites of rigid bodies (rigid-body molecular dynamics, issue 32): the pair
 * interactions between sites carried by the bodies, in open space or in an orthorhombic periodic box,
 * found with cell lists and Verlet neighbour lists.
 *
 * Site i of body b sits at r_i = x_b + R_b s_i (s_i its body-frame position). Every pair of sites of
 * two different bodies closer than the cutoff rc interacts (pairs within one body are left out), in
 * the box through the minimum image (the centres of mass need not be inside the box: positions are
 * wrapped inside the evaluation only). The pair styles, u(r) for r < rc and 0 beyond:
 *  - Lennard-Jones, u = 4 eps ((sigma/r)^12 - (sigma/r)^6), minus u(rc) when shifted (LAMMPS lj/cut
 *    with pair_modify shift yes);
 *  - damped shifted force Coulomb (Fennell & Gezelter, J. Chem. Phys. 124, 234104 (2006), eq. (19);
 *    LAMMPS coul/dsf), u = k qi qj [erfc(a r)/r - erfc(a rc)/rc + (erfc(a rc)/rc^2 + 2a/sqrt(pi)
 *    exp(-a^2 rc^2)/rc) (r - rc)], which goes to 0 with its force at rc; plus a constant self energy
 *    per charge (lf_sites_self). erfc(a r) and exp(-a^2 r^2) come from one exp and W. J. Cody's rational
 *    Chebyshev approximations (Math. Comp. 23 (1969)), within 3.5 eps of erfc (pair_styles_internal.h); LAMMPS
 *    uses the 1.5e-7 approximation of Abramowitz & Stegun 7.1.26: energies agree with LAMMPS's to about that
 *    relative precision (1.7e-7 on SPC/E water, bench/water.lua).
 *  - a pair function of the user's (lf_sites_pair_fn; from Lua a site_pair function compiled once per pair
 *    of site types), u(r) and du/dr for r < rc, added to the others, used as written (no shift).
 * The forces on the sites give each body its force F_b = sum f_i (spatial) and its body-frame torque
 * tau_b = sum s_i x (R_b^T f_i) (potential.h's convention: tau . y = -d/de U(R_b exp(e hat y))).
 *
 * The engine (lf_sites) is a context for a potential of positions: a model kind of core/model/ makes
 * an lf_potential of it with lf_potential_new_x and an eval_x calling lf_sites_eval. It keeps its
 * neighbour list between evaluations: with a skin > 0 the list holds the site pairs within rc + skin
 * and is rebuilt when a site has moved more than skin/2 since the last build (compared site by site,
 * at whatever configuration it is evaluated: trial states and rolled-back steps are safe); with skin
 * 0 the pairs are found by the cells at every evaluation. Work and memory are O(N) (cells of side at
 * least rc + skin; without a box over the bounding box of the sites, at most about 2 cells per site,
 * so sites far apart from the rest make the cells larger). An evaluation allocates nothing once the
 * buffers have grown (geometrically) to the system's needs. Evaluations of one engine are serialized
 * (a mutex): threads that run several systems should give each its own engine. */
#ifndef LF_SITES_H
#define LF_SITES_H

#include "base/export.h"
#include <stddef.h>

#include "base/error.h"

LF_BEGIN_DECLS

/* The constant self energy of the DSF charges added to U (U_self = -c k sum_i q_i^2):
 * LF_SITES_SELF_LAMMPS: c = e_shift/2 + a/sqrt(pi) with LAMMPS's e_shift = erfc(a rc)/rc - f_shift rc,
 *   f_shift = -(erfc(a rc)/rc^2 + 2a/sqrt(pi) exp(-a^2 rc^2)/rc) (pair_coul_dsf.cpp: what LAMMPS
 *   reports as the Coulomb energy; its e_shift is not Fennell & Gezelter's erfc(a rc)/rc);
 * LF_SITES_SELF_FG: c = erfc(a rc)/(2 rc) + a/sqrt(pi) (Fennell & Gezelter (2006), the self term of
 *   their damped shifted force sum);
 * LF_SITES_SELF_NONE: none (U is the sum over pairs). */
enum { LF_SITES_SELF_LAMMPS = 0, LF_SITES_SELF_FG = 1, LF_SITES_SELF_NONE = 2 };

/* A pair function of the user's: for two sites of types ta <= tb with charges qa, qb (in the same order; 0
 * without charges) at distance r, 0 < r < rc: *u = u(r) and *du = du/dr. A status other than LF_OK fails
 * the evaluation with the message it put in err. Called from the evaluation's thread, under the engine's
 * lock. */
typedef int (*lf_sites_pair_fn)(void *ctx, int ta, int tb, double r, double qa, double qb, double *u, double *du,
                                lf_error *err);

typedef struct lf_sites_spec {
    int nb;               /* bodies (>= 1) */
    const int *nsites;    /* sites per body (nb entries, each >= 1) */
    const double *s;      /* body-frame positions of the sites, 3 each, the bodies' sites one after another */
    const int *type;      /* site types, 0 .. ntypes - 1 (NULL: all 0) */
    const double *charge; /* site charges (NULL: no Coulomb) */
    int ntypes;           /* >= 1 */
    const double *lj_epsilon, *lj_sigma; /* ntypes x ntypes, row-major, symmetric; eps >= 0 (0: no LJ
                                          * for that pair), sigma > 0 where eps > 0; both NULL: no LJ */
    double cutoff;                       /* the pair cutoff rc > 0 */
    int lj_shift;                        /* 1: LJ shifted to 0 at rc */
    double coulomb_alpha;                /* the DSF damping a >= 0 (0: the shifted force Coulomb) */
    double coulomb_k;         /* the Coulomb constant of the units (qqrd2e: 332.06371 in LAMMPS real units), > 0 */
    int coulomb_self;         /* LF_SITES_SELF_LAMMPS (0, the default), _FG or _NONE */
    const double *box;        /* Lx, Ly, Lz of an orthorhombic periodic box, rc <= L/2 (NULL: open space) */
    double skin;              /* the Verlet skin >= 0 (0: no list kept); in a box at most min L - rc is used */
    size_t max_bytes;         /* memory limit of the neighbour search (0: 1 GB); above it an evaluation fails */
    lf_sites_pair_fn pair_fn; /* a pair function added to LJ and Coulomb (NULL: none), with its context */
    void *pair_ctx;
    int charges_only; /* 1: the charges are for pair_fn only (no Coulomb; coulomb_* unused) */
} lf_sites_spec;

typedef struct lf_sites lf_sites;

/* The engine of a spec (copied: the spec's arrays may be freed afterwards). Errors (LF_EINVAL): the
 * value and where, e.g. "sites: body 3 has 0 sites (expected 1 or more)", "sites: site 2 of body 1
 * has the type 4 (ntypes = 2)", "sites: lj_sigma[1][0] = -1 (expected > 0 where epsilon > 0)",
 * "sites: the cutoff 5 is larger than half the box length Lx = 8 (4)"; LF_ENOMEM. */
lf_sites *lf_sites_new(const lf_sites_spec *spec, lf_error *err);
/* Release the engine (NULL: nothing). */
void lf_sites_free(lf_sites *s);
/* The number of bodies and the total number of sites of the engine. */
int lf_sites_nbodies(const lf_sites *s);
int lf_sites_count(const lf_sites *s);

/* Evaluate at the centres of mass x (3 nb) and attitudes R (9 nb, row-major, body to space): the
 * potential energy *U (pairs and the self energy; if U != NULL), the forces F (3 nb, spatial) and the
 * body-frame torques tau (3 nb), each if not NULL. Errors: LF_EINVAL (nb is not the engine's, a
 * position or attitude not finite), LF_EDOMAIN (two sites of different bodies at distance 0: "sites:
 * site 1 of body 2 and site 3 of body 5 coincide (u is infinite)"; or U, F, tau not finite, naming
 * the closest pair and its distance), LF_ENOMEM (the neighbour list would need more than max_bytes, with
 * the number of pairs; or an allocation failed). After an error the next evaluation builds the list
 * anew. */
int lf_sites_eval(lf_sites *s, int nb, const double *x, const double *R, double *U, double *F, double *tau,
                  lf_error *err);

/* What the last evaluation measured, and the neighbour search's counts. */
typedef struct lf_sites_stats {
    double energy;        /* U (pair_energy + self_energy) */
    double pair_energy;   /* the sum over the pairs in range (LJ, Coulomb and pair_fn) */
    double lj_energy;     /* its LJ part */
    double user_energy;   /* its part from pair_fn */
    double self_energy;   /* the DSF self energy (a constant) */
    double virial;        /* the molecular virial W = sum over site pairs (i of body I, j of body J) of
                             * (x_I - x_J - n L) . f_ij, n L the image of the pair (the minimum image of
                             * the centres when the molecules are small), f_ij the force of j on i;
                             * W = -dU/de of U(x (1 + e)) with the attitudes fixed (and the box scaled) */
    double atomic_virial; /* sum over site pairs of d_ij . f_ij (d_ij = r_i - r_j - n L): -dU/de when the
                             * sites' positions (x and s) and the box scale by 1 + e */
    long pairs_in_range;  /* site pairs with r < rc */
    long list_pairs;      /* site pairs in the neighbour list (within rc + skin at its build) */
    long rebuilds;        /* neighbour-list builds so far */
    long evaluations;     /* evaluations so far */
    double skin;          /* the skin in use (spec's, or min L - rc when that is smaller) */
    size_t bytes;         /* memory of the neighbour search (cells, list, site buffers) */
} lf_sites_stats;
/* The statistics into *st (before the first evaluation only skin, self_energy and bytes are set). */
void lf_sites_get_stats(const lf_sites *s, lf_sites_stats *st);

/* The self energy of charges q (n of them) as the engine's spec adds it to U: -c k sum q_i^2 with c of
 * the option `self` (LF_SITES_SELF_*) at cutoff rc and damping alpha (0 for LF_SITES_SELF_NONE). */
double lf_sites_self(int self, double rc, double alpha, double k, int n, const double *q);

LF_END_DECLS

#endif
