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
    int erfc4;                    /* a rc <= 4: the pairs in range need lf_md_erfc_exp4 alone */
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

/* erfc(x) for 0 <= x <= 4 and *e = exp(-x^2), with one exp.
 * erfc: W. J. Cody, "Rational Chebyshev approximations for the error function", Math. Comp. 23, 631-637
 * (1969), with the coefficients of his CALERF (Netlib specfun, 18 digits): for x <= 0.46875, erfc = 1 - x A(x^2)/B(x^2)
 * (A, B of degree 4), for 0.46875 < x <= 4, erfc = exp(-x^2) C(x)/D(x) (degree 8); both are computed, one is chosen
 * and divided once. The rational functions' own relative errors are below 1e-18 (Cody's tables).
 * exp(-x^2): the square taken exactly, x = xh + xl by Veltkamp's split (xh of 26 bits: xh^2 is exact) and
 * exp(-x^2) = exp(-xh^2) exp(-dl), dl = xl (x + xh) = x^2 - xh^2, |dl| < 2^-25 x^2, exp(-dl) = 1 - dl (1 - dl/2) to
 * 1e-18; exp(-x * x) would carry the rounding of x^2, up to x^2 2^-53 relative (1e-15 at x = 3).
 * In double precision (tests/c/test_sites.c, against libm's erfc and expl): erfc within 3.5 eps (8e-16) relative
 * of the true value on [0, 6] (libm's: 3 eps), exp(-x^2) within 1.5 eps. LAMMPS's coul/dsf uses Abramowitz &
 * Stegun 7.1.26 instead (1.5e-7). */
static inline double lf_md_erfc_exp4(double x, double *e)
{
    const double w = x * x, w2 = w * w;
    /* A, B in Horner's form (w <= 0.22); C, D in Estrin's (2.7 eps for C/D against 3.7 in Horner's, and more
     * instructions at once) */
    const double a =
        (((1.85777706184603153e-1 * w + 3.16112374387056560) * w + 1.13864154151050156e2) * w + 3.77485237685302021e2) *
            w +
        3.20937758913846947e3;
    const double b = (((w + 2.36012909523441209e1) * w + 2.44024637934444173e2) * w + 1.28261652607737228e3) * w +
                     2.84423683343917062e3;
    const double c = (1.23033935479799725e3 + 2.05107837782607147e3 * x) +
                     (1.71204761263407058e3 + 8.81952221241769090e2 * x) * w +
                     w2 * ((2.98635138197400131e2 + 6.61191906371416295e1 * x) +
                           (8.88314979438837594 + 5.64188496988670089e-1 * x) * w + 2.15311535474403846e-8 * w2);
    const double d = (1.23033935480374942e3 + 3.43936767414372164e3 * x) +
                     (4.36261909014324716e3 + 3.29079923573345963e3 * x) * w +
                     w2 * ((1.62138957456669019e3 + 5.37181101862009858e2 * x) +
                           (1.17693950891312499e2 + 1.57449261107098347e1 * x) * w + w2);
    const double ch = 134217729.0 * x, xh = ch - (ch - x), dl = (x - xh) * (x + xh), e0 = exp(-xh * xh);
    const double g = dl * (1 - 0.5 * dl); /* 1 - exp(-dl) */
    *e = e0 * (1 - g);
    /* erfc = 1 - t, t = x A/B = erf(x) < 0.5, for x <= 0.46875; t = exp(-xh^2) (C - C g)/D above. GCC makes a
     * branch of the choice (taken where a r < 0.46875: 0.5% of the pairs in range of water at a = 0.2); a choice by
     * arithmetic, branch-free, measured 1.6 times slower per call */
    const int small = x <= 0.46875;
    const double t = (small ? x * a : e0 * (c - c * g)) / (small ? b : d);
    return small ? 1 - t : t;
}

/* erfc(x) for x > 4 given e = exp(-x^2): Cody's third interval, erfc = e/x (1/sqrt(pi) - z P(z)/Q(z)), z = 1/x^2
 * (P, Q of degree 5), here with P and Q multiplied by x^10 (one division). */
static inline double lf_md_erfc_large(double x, double e)
{
    const double w = x * x;
    const double p = ((((6.58749161529837803e-4 * w + 1.60837851487422766e-2) * w + 1.25781726111229246e-1) * w +
                       3.60344899949804439e-1) *
                          w +
                      3.05326634961232344e-1) *
                         w +
                     1.63153871373020978e-2;
    const double q = ((((2.33520497626869185e-3 * w + 6.05183413124413191e-2) * w + 5.27905102951428412e-1) * w +
                       1.87295284992346047) *
                          w +
                      2.56852019228982242) *
                         w +
                     1;
    return e * (5.6418958354775628695e-1 * w * q - p) / (x * w * q);
}

/* erfc(x) for x >= 0 (Cody's three intervals) and *e = exp(-x^2), one exp */
static inline double lf_md_erfc_exp(double x, double *e)
{
    const double r = lf_md_erfc_exp4(x, e);
    return x > 4 ? lf_md_erfc_large(x, *e) : r;
}

/* DSF Coulomb of charges' product qq at distance r: u += k qq (erfc(a r)/r - e_cut - f_shift (r - rc))
 * (f_shift < 0: the term + (erfc(a rc)/rc^2 + ...)(r - rc) of Fennell & Gezelter), and
 * fpair = k qq (erfc(a r)/r^2 + 2a/sqrt(pi) exp(-a^2 r^2)/r + f_shift) / r; erfc(a r) and exp(-a^2 r^2) of
 * lf_md_erfc_exp4 (one exp; when a rc > 4, !p->erfc4, Cody's third interval where a r > 4) */
static inline double lf_md_dsf(const lf_md_pairs *p, double qq, double r, double ir2, double *u)
{
    const double kq = p->k * qq, x = p->alpha * r, ir = r * ir2;
    double e, ec = lf_md_erfc_exp4(x, &e);
    if (!p->erfc4 && x > 4) ec = lf_md_erfc_large(x, e); /* the test of erfc4: the same for every pair */
    *u += kq * (ec * ir - p->e_cut - p->f_shift * (r - p->rc));
    return kq * (ec * ir2 + p->c_exp * e * ir + p->f_shift) * ir;
}

#endif
