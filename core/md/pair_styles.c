/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the coefficients of the built-in pair styles (pair_styles_internal.h) and the DSF self
 * energy (lf_sites_self, sites.h). Fennell & Gezelter, J. Chem. Phys. 124, 234104 (2006), eq. (19):
 * u(r) = qi qj [erfc(a r)/r - erfc(a rc)/rc + (erfc(a rc)/rc^2 + 2a/sqrt(pi) exp(-a^2 rc^2)/rc)(r - rc)];
 * LAMMPS pair_coul_dsf.cpp computes the same u with f_shift = -(erfc(a rc)/rc^2 + 2a/sqrt(pi) exp(-a^2
 * rc^2)/rc) and e_shift = erfc(a rc)/rc - f_shift rc, and uses that e_shift in its self energy
 * -(e_shift/2 + a/sqrt(pi)) k q^2, which is not the paper's -(erfc(a rc)/(2 rc) + a/sqrt(pi)) k q^2:
 * both are offered (LF_SITES_SELF_LAMMPS, _FG). */
#include <math.h>
#include <stdlib.h>

#include "md/pair_styles_internal.h"

#define SQRT_PI 1.77245385090551602729

void lf_md_pairs_free(lf_md_pairs *p)
{
    if (!p) return;
    free(p->lj12);
    free(p->lj6);
    free(p->ljshift);
    p->lj12 = p->lj6 = p->ljshift = NULL;
}

static int check_lj(const lf_sites_spec *spec, lf_error *err)
{
    const int nt = spec->ntypes;
    const double *eps = spec->lj_epsilon, *sig = spec->lj_sigma;
    for (int a = 0; a < nt; a++)
        for (int b = 0; b < nt; b++) {
            const int i = a * nt + b, t = b * nt + a;
            if (!isfinite(eps[i]) || eps[i] < 0)
                return lf_error_set(err, LF_EINVAL, "sites: lj_epsilon[%d][%d] = %g (expected a finite number >= 0)", a,
                                    b, eps[i]);
            if (!isfinite(sig[i]) || sig[i] < 0 || (eps[i] > 0 && !(sig[i] > 0)))
                return lf_error_set(err, LF_EINVAL, "sites: lj_sigma[%d][%d] = %g (expected > 0 where epsilon > 0)", a,
                                    b, sig[i]);
            if (eps[i] != eps[t] || sig[i] != sig[t])
                return lf_error_set(err, LF_EINVAL,
                                    "sites: the LJ coefficients are not symmetric: [%d][%d] = (%g, %g), [%d][%d] = "
                                    "(%g, %g) (epsilon, sigma)",
                                    a, b, eps[i], sig[i], b, a, eps[t], sig[t]);
        }
    return LF_OK;
}

static int check_coulomb(const lf_sites_spec *spec, lf_error *err)
{
    if (!isfinite(spec->coulomb_alpha) || spec->coulomb_alpha < 0)
        return lf_error_set(err, LF_EINVAL, "sites: coulomb_alpha = %g (expected a finite number >= 0)",
                            spec->coulomb_alpha);
    if (!isfinite(spec->coulomb_k) || !(spec->coulomb_k > 0))
        return lf_error_set(err, LF_EINVAL, "sites: coulomb_k = %g (expected a finite number > 0)", spec->coulomb_k);
    if (spec->coulomb_self < LF_SITES_SELF_LAMMPS || spec->coulomb_self > LF_SITES_SELF_NONE)
        return lf_error_set(err, LF_EINVAL, "sites: coulomb_self = %d (expected LF_SITES_SELF_LAMMPS, _FG or _NONE)",
                            spec->coulomb_self);
    return LF_OK;
}

int lf_md_pairs_init(lf_md_pairs *p, const lf_sites_spec *spec, lf_error *err)
{
    const int nt = spec->ntypes;
    *p = (lf_md_pairs){0};
    if (nt < 1 || nt > 4096) return lf_error_set(err, LF_EINVAL, "sites: ntypes = %d (expected 1 .. 4096)", nt);
    if (!spec->lj_epsilon != !spec->lj_sigma)
        return lf_error_set(err, LF_EINVAL, "sites: lj_epsilon and lj_sigma must be given together (or neither)");
    int st = spec->lj_epsilon ? check_lj(spec, err) : LF_OK;
    if (spec->charges_only && (!spec->charge || !spec->pair_fn))
        return lf_error_set(err, LF_EINVAL,
                            "sites: charges_only needs the charges and a pair_fn (else they do nothing)");
    if (st == LF_OK && spec->charge && !spec->charges_only) st = check_coulomb(spec, err);
    if (st != LF_OK) return st;
    const size_t n = (size_t)nt * (size_t)nt;
    p->lj12 = calloc(n, sizeof *p->lj12);
    p->lj6 = calloc(n, sizeof *p->lj6);
    p->ljshift = calloc(n, sizeof *p->ljshift);
    if (!p->lj12 || !p->lj6 || !p->ljshift) {
        lf_md_pairs_free(p);
        return lf_error_set(err, LF_ENOMEM, "sites: out of memory (%d types)", nt);
    }
    p->ntypes = nt;
    p->rc = spec->cutoff;
    p->rc2 = spec->cutoff * spec->cutoff;
    p->lj = spec->lj_epsilon != NULL;
    for (size_t i = 0; p->lj && i < n; i++) {
        const double e = spec->lj_epsilon[i], s6 = pow(spec->lj_sigma[i], 6);
        p->lj12[i] = 4 * e * s6 * s6;
        p->lj6[i] = 4 * e * s6;
        if (spec->lj_shift) {
            const double ir6 = 1 / (p->rc2 * p->rc2 * p->rc2);
            p->ljshift[i] = ir6 * (p->lj12[i] * ir6 - p->lj6[i]);
        }
    }
    p->coulomb = spec->charge != NULL && !spec->charges_only;
    if (p->coulomb) {
        const double a = spec->coulomb_alpha, rc = p->rc;
        p->k = spec->coulomb_k;
        p->alpha = a;
        p->a2 = a * a;
        p->c_exp = 2 * a / SQRT_PI;
        double e;
        p->e_cut = lf_md_erfc_exp(a * rc, &e) / rc; /* the kernel's erfc: u(rc) = 0 to round-off */
        p->f_shift = -(p->e_cut / rc + p->c_exp * e / rc);
        p->erfc4 = a * rc <= 4;
    }
    return LF_OK;
}

double lf_sites_self(int self, double rc, double alpha, double k, int n, const double *q)
{
    if (self == LF_SITES_SELF_NONE || !q || n <= 0) return 0;
    double e;
    const double e_cut = lf_md_erfc_exp(alpha * rc, &e) / rc;
    double c = e_cut / 2 + alpha / SQRT_PI; /* Fennell & Gezelter */
    if (self == LF_SITES_SELF_LAMMPS) {
        const double f_shift = -(e_cut / rc + 2 * alpha / SQRT_PI * e / rc);
        c = (e_cut - f_shift * rc) / 2 + alpha / SQRT_PI;
    }
    double q2 = 0;
    for (int i = 0; i < n; i++) q2 += q[i] * q[i];
    return -c * k * q2;
}
