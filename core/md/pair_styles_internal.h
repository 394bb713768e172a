/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the built-in site–site pair styles (sites.h): Lennard-Jones with cutoff (shifted or not)
 * and the damped shifted force Coulomb (Fennell & Gezelter 2006, eq. (19); LAMMPS coul/dsf), their
 * coefficients per pair of types built once from a spec, and their kernels inline for the pair loop
 * of sites.c. A kernel adds the pair's energy to *u and returns fpair, the force on site i divided by
 * r (f_i = fpair d, d = r_i - r_j), given r^2 < rc^2, 1/r^2 and (Coulomb) r. */
#ifndef LF_MD_PAIR_STYLES_INTERNAL_H
#define LF_MD_PAIR_STYLES_INTERNAL_H

#include <math.h>

#include "base/error.h"
#include "md/sites.h"

typedef struct lf_md_pairs {
    int ntypes;
    double rc, rc2;
    int lj;                       /* LJ coefficients given */
    double *lj12, *lj6, *ljshift; /* ntypes^2: 4 eps sigma^12, 4 eps sigma^6, u_LJ(rc) when shifted, else 0 */
    int coulomb;                  /* charges given */
    double k, alpha, a2, c_exp;   /* k, a, a^2, 2a/sqrt(pi) */
    double e_cut, f_shift;        /* erfc(a rc)/rc; -(erfc(a rc)/rc^2 + 2a/sqrt(pi) exp(-a^2 rc^2)/rc) */
} lf_md_pairs;

/* The coefficients of spec's styles (checked: epsilon, sigma finite and symmetric, eps >= 0, sigma > 0
 * where eps > 0; alpha, k). LF_EINVAL with the value and its place, LF_ENOMEM. */
int lf_md_pairs_init(lf_md_pairs *p, const lf_sites_spec *spec, lf_error *err);
void lf_md_pairs_free(lf_md_pairs *p);

/* LJ of the pair of types at row tt = ti ntypes + tj: u += c12/r^12 - c6/r^6 - shift; returns fpair */
static inline double lf_md_lj(const lf_md_pairs *p, int tt, double ir2, double *u)
{
    const double ir6 = ir2 * ir2 * ir2, c12 = p->lj12[tt] * ir6, c6 = p->lj6[tt];
    *u += ir6 * (c12 - c6) - p->ljshift[tt];
    return ir6 * (12 * c12 - 6 * c6) * ir2;
}

/* DSF Coulomb of charges' product qq at distance r: u += k qq (erfc(a r)/r - e_cut - f_shift (r - rc))
 * (f_shift < 0: the term + (erfc(a rc)/rc^2 + ...)(r - rc) of Fennell & Gezelter), and
 * fpair = k qq (erfc(a r)/r^2 + 2a/sqrt(pi) exp(-a^2 r^2)/r + f_shift) / r */
static inline double lf_md_dsf(const lf_md_pairs *p, double qq, double r, double ir2, double *u)
{
    const double kq = p->k * qq, ec = erfc(p->alpha * r), ir = r * ir2;
    *u += kq * (ec * ir - p->e_cut - p->f_shift * (r - p->rc));
    return kq * (ec * ir2 + p->c_exp * exp(-p->a2 * r * r) * ir + p->f_shift) * ir;
}

#endif
