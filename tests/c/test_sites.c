/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Interaction sites of rigid bodies (core/md/sites.h: lf_sites), Lennard-Jones and damped shifted force
 * Coulomb between sites of bodies of 3 to 5 sites, in open space and in periodic boxes, with and without
 * a Verlet skin:
 *  - U, F, tau and the pairs in range against a direct O(N^2) sum written here (minimum image by
 *    rounding, Fennell & Gezelter's formula as printed, LAMMPS's self energy), for boxes of 1 to 5 cells
 *    across with centres of mass outside the box, and in open space (also with a body 1e4 away from the
 *    rest: coarser cells); skins 0, 0.1 and 0.7 (to 1e-12 relative);
 *  - F and tau against central differences of U (LJ alone, DSF alone, both; box and open space);
 *  - the molecular and atomic virials against -dU/de under a uniform scaling of the centres (and of the
 *    sites) with the box;
 *  - Newton's third law: sum F = 0, and without a box sum x x F + R tau = 0, to round-off;
 *  - the list kept or rebuilt as promised (a site moved less or more than skin/2, by translation or
 *    rotation), results equal to a fresh engine's at configurations visited in any order;
 *  - split_exact over 1000 steps of 64 molecules with skin 0, 0.5 and 3: the same trajectory to 1e-12,
 *    different rebuild counts (the energy continuous across rebuilds);
 *  - the DSF energy and force, and the shifted LJ energy, going to 0 at rc; lf_sites_self;
 *  - the kernel's erfc (Cody's rational functions with one exp, pair_styles_internal.h) against libm's erfc
 *    on [0, 6] and on the range of the pair loop (a rc of the tests), and exp(-x^2) against exp of long
 *    double; the kernel with a rc > 4 (Cody's third interval) against the direct sum;
 *  - O(N): pairs listed and memory per site flat from 648 to 8232 sites of water-like molecules (the
 *    evaluation time per site printed);
 *  - the errors: cutoff above half the box, coincident sites, bad spec values, the memory limit.
 * The engine runs as the potential of rigid bodies lf_potential_sites makes (model/sites_potential.h).
 * Every measurement is printed, then asserted. */
#include <float.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

#include "md/pair_styles_internal.h"

enum { LJ = 1, COUL = 2 };

static const double eps2[4] = {1.0, 0.7, 0.7, 0.5}, sig2[4] = {1.0, 0.9, 0.9, 0.8};
static const double ALPHA = 0.25, KC = 1.7;

/* a test system: bodies of 3 to 5 sites (or of a template), two types, charges, and a configuration */
typedef struct {
    int nb, ns, periodic;
    int nsites[4096], type[16384];
    double s[3 * 16384], q[16384], box[3];
    double x[3 * 4096], R[9 * 4096];
    lf_sites_spec spec;
} msys;

static lf_sites *new_engine(const lf_sites_spec *spec)
{
    lf_error e;
    lf_sites *s = lf_sites_new(spec, &e);
    if (!s) fail_msg("%s", e.msg);
    return s;
}

static void eval(lf_sites *s, const msys *m, const double *x, const double *R, double *U, double *F, double *tau)
{
    lf_error e;
    if (lf_sites_eval(s, m->nb, x, R, U, F, tau, &e) != LF_OK) fail_msg("%s", e.msg);
}

static double U_of(lf_sites *s, const msys *m, const double *x, const double *R)
{
    double U;
    eval(s, m, x, R, &U, NULL, NULL);
    return U;
}

/* nb random bodies of 3 to 5 sites within 0.5 of their centre, centres on an m^3 lattice of spacing a
 * (jittered by 0.1), in a box of side m a (periodic) or in open space, shifted by whole boxes */
static void make_sys(msys *m, gsl_rng *r, int side, double a, int periodic, int style, double rc, double skin)
{
    memset(m, 0, sizeof *m);
    m->nb = side * side * side;
    m->periodic = periodic;
    for (int b = 0; b < m->nb; b++) {
        m->nsites[b] = 3 + (int)gsl_rng_uniform_int(r, 3);
        double c[3] = {0, 0, 0};
        const int i0 = m->ns;
        for (int k = 0; k < m->nsites[b]; k++, m->ns++) {
            double u[3];
            rand_dir(r, u);
            for (int d = 0; d < 3; d++) m->s[3 * m->ns + d] = (0.2 + 0.3 * gsl_rng_uniform(r)) * u[d];
            for (int d = 0; d < 3; d++) c[d] += m->s[3 * m->ns + d] / m->nsites[b];
            m->type[m->ns] = (int)gsl_rng_uniform_int(r, 2);
            m->q[m->ns] = gsl_rng_uniform(r) - 0.5;
        }
        for (int i = i0; i < m->ns; i++)
            for (int d = 0; d < 3; d++) m->s[3 * i + d] -= c[d];
        const int id[3] = {b % side, b / side % side, b / (side * side)};
        for (int d = 0; d < 3; d++) {
            m->x[3 * b + d] = (id[d] + 0.5) * a + 0.1 * (2 * gsl_rng_uniform(r) - 1);
            if (periodic) m->x[3 * b + d] += side * a * ((int)gsl_rng_uniform_int(r, 5) - 2);
        }
        lf_so3_random(gsl_rng_get(r), m->R + 9 * b, NULL);
    }
    for (int d = 0; d < 3; d++) m->box[d] = side * a;
    m->spec = (lf_sites_spec){.nb = m->nb,
                              .nsites = m->nsites,
                              .s = m->s,
                              .type = m->type,
                              .ntypes = 2,
                              .cutoff = rc,
                              .lj_shift = 1,
                              .coulomb_alpha = ALPHA,
                              .coulomb_k = KC,
                              .box = periodic ? m->box : NULL,
                              .skin = skin};
    if (style & LJ) {
        m->spec.lj_epsilon = eps2;
        m->spec.lj_sigma = sig2;
    }
    if (style & COUL) m->spec.charge = m->q;
}

/* ---------------------------------------------------------------- the direct sum */
/* U (with the self energy), F, tau and the pairs in range by a loop over all pairs of sites, the
 * minimum image by rounding; the formulas as the papers print them */
static double direct(const msys *m, const double *x, const double *R, double *F, double *tau, long *count)
{
    const lf_sites_spec *sp = &m->spec;
    const double rc = sp->cutoff, a = sp->coulomb_alpha, k = sp->coulomb_k, sqpi = sqrt(PI);
    static double r[3 * 16384];
    static int body[16384];
    for (int b = 0, i = 0; b < m->nb; b++)
        for (int j = 0; j < m->nsites[b]; j++, i++) {
            lf_m3_apply(R + 9 * b, m->s + 3 * i, r + 3 * i);
            lf_v3_add(r + 3 * i, x + 3 * b, r + 3 * i);
            body[i] = b;
        }
    memset(F, 0, 3 * (size_t)m->nb * sizeof *F);
    memset(tau, 0, 3 * (size_t)m->nb * sizeof *tau);
    double U = 0;
    *count = 0;
    for (int i = 0; i < m->ns; i++)
        for (int j = i + 1; j < m->ns; j++) {
            if (body[i] == body[j]) continue;
            double d[3];
            lf_v3_sub(r + 3 * i, r + 3 * j, d);
            for (int c = 0; m->periodic && c < 3; c++) d[c] -= m->box[c] * nearbyint(d[c] / m->box[c]);
            const double rr = lf_v3_norm(d);
            if (!(rr < rc)) continue;
            (*count)++;
            double dudr = 0;
            if (sp->lj_epsilon) {
                const int t = m->type[i] * 2 + m->type[j];
                const double e = sp->lj_epsilon[t], sg = sp->lj_sigma[t];
                const double s6 = pow(sg / rr, 6), s6c = pow(sg / rc, 6);
                U += 4 * e * (s6 * s6 - s6) - (sp->lj_shift ? 4 * e * (s6c * s6c - s6c) : 0);
                dudr += 4 * e * (-12 * s6 * s6 + 6 * s6) / rr;
            }
            if (sp->charge) {
                const double qq = k * sp->charge[i] * sp->charge[j];
                const double gc = erfc(a * rc) / (rc * rc) + 2 * a / sqpi * exp(-a * a * rc * rc) / rc;
                U += qq * (erfc(a * rr) / rr - erfc(a * rc) / rc + gc * (rr - rc));
                dudr += qq * (-erfc(a * rr) / (rr * rr) - 2 * a / sqpi * exp(-a * a * rr * rr) / rr + gc);
            }
            double f[3], fb[3], t[3];
            lf_v3_scale(d, -dudr / rr, f); /* on i */
            lf_v3_add(F + 3 * body[i], f, F + 3 * body[i]);
            lf_v3_sub(F + 3 * body[j], f, F + 3 * body[j]);
            lf_m3_tapply(R + 9 * body[i], f, fb);
            lf_v3_cross(m->s + 3 * i, fb, t);
            lf_v3_add(tau + 3 * body[i], t, tau + 3 * body[i]);
            lf_m3_tapply(R + 9 * body[j], f, fb);
            lf_v3_cross(m->s + 3 * j, fb, t);
            lf_v3_sub(tau + 3 * body[j], t, tau + 3 * body[j]);
        }
    if (sp->charge) { /* LAMMPS's self energy: its e_shift = erfc(a rc)/rc - f_shift rc */
        double q2 = 0;
        for (int i = 0; i < m->ns; i++) q2 += sp->charge[i] * sp->charge[i];
        const double e_shift = 2 * erfc(a * rc) / rc + 2 * a / sqpi * exp(-a * a * rc * rc);
        U -= (e_shift / 2 + a / sqpi) * k * q2;
    }
    return U;
}

static const char *style_name(int style) { return style == LJ ? "LJ" : style == COUL ? "DSF" : "LJ+DSF"; }

/* ---------------------------------------------------------------- 1. against the direct sum */
static void compare_direct(msys *m, double skin, double *wU, double *wF, long *pairs)
{
    static double F[3 * 4096], tau[3 * 4096], Fd[3 * 4096], td[3 * 4096];
    m->spec.skin = skin;
    lf_sites *s = new_engine(&m->spec);
    double U;
    long count;
    eval(s, m, m->x, m->R, &U, F, tau);
    const double Ud = direct(m, m->x, m->R, Fd, td, &count);
    lf_sites_stats st;
    lf_sites_get_stats(s, &st);
    if (st.pairs_in_range != count) fail_msg("pairs in range: %ld, direct %ld", st.pairs_in_range, count);
    assert_true(fabs(st.energy - U) == 0);
    *wU = fmax(*wU, fabs(U - Ud) / fabs(Ud));
    const double sF = maxabs(3 * m->nb, Fd), st_ = maxabs(3 * m->nb, td);
    *wF = fmax(*wF, fmax(maxdiff(3 * m->nb, F, Fd) / sF, maxdiff(3 * m->nb, tau, td) / st_));
    *pairs += count;
    lf_sites_free(s);
}

static void test_direct(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(1);
    static msys m;
    /* boxes of side 6.3, 9.6, 16 with rc 3: 1 or 2, 3, 5 cells across (rc + skin 3.1 .. 3.7) */
    const int sides[3] = {3, 4, 8};
    const double spacing[3] = {2.1, 2.4, 2.0};
    for (int style = LJ; style <= (LJ | COUL); style++) {
        double wU = 0, wF = 0;
        long pairs = 0;
        for (int g = 0; g < 3; g++)
            for (int periodic = 0; periodic <= 1; periodic++) {
                make_sys(&m, r, sides[g], spacing[g], periodic, style, 3.0, 0);
                compare_direct(&m, 0, &wU, &wF, &pairs);
                compare_direct(&m, 0.1, &wU, &wF, &pairs);
                compare_direct(&m, 0.7, &wU, &wF, &pairs);
                if (!periodic) { /* a body far from the rest: coarser cells over the bounding box */
                    m.x[0] += 1e4;
                    compare_direct(&m, 0.3, &wU, &wF, &pairs);
                }
            }
        if (style & COUL) { /* a rc = 4.5: the kernel's erfc with Cody's third interval */
            make_sys(&m, r, 4, 2.4, 1, style, 3.0, 0);
            m.spec.coulomb_alpha = 1.5;
            compare_direct(&m, 0.3, &wU, &wF, &pairs);
        }
        printf("  %s: %ld pairs in range over %d evaluations, each count = the direct count\n", style_name(style),
               pairs, style & COUL ? 22 : 21);
        char label[80];
        snprintf(label, sizeof label, "%s: |U - U_direct| / |U|", style_name(style));
        CHECK_LE(wU, 1e-12, label);
        snprintf(label, sizeof label, "%s: F, tau - direct (rel. to max)", style_name(style));
        CHECK_LE(wF, 1e-12, label);
    }
    gsl_rng_free(r);
}

/* ---------------------------------------------------------------- 2. central differences */
static void gradient_fd(lf_sites *s, const msys *m, double h, double *F, double *tau)
{
    static double x[3 * 64], R[9 * 64];
    memcpy(x, m->x, 3 * (size_t)m->nb * sizeof(double));
    memcpy(R, m->R, 9 * (size_t)m->nb * sizeof(double));
    for (int i = 0; i < 3 * m->nb; i++) {
        x[i] = m->x[i] + h;
        const double Up = U_of(s, m, x, R);
        x[i] = m->x[i] - h;
        F[i] = -(Up - U_of(s, m, x, R)) / (2 * h);
        x[i] = m->x[i];
    }
    for (int b = 0; b < m->nb; b++)
        for (int k = 0; k < 3; k++) {
            double v[3] = {0, 0, 0};
            v[k] = h;
            lf_so3_rmul_exp(R + 9 * b, v);
            const double Up = U_of(s, m, x, R);
            memcpy(R + 9 * b, m->R + 9 * b, 9 * sizeof(double));
            v[k] = -h;
            lf_so3_rmul_exp(R + 9 * b, v);
            tau[3 * b + k] = -(Up - U_of(s, m, x, R)) / (2 * h);
            memcpy(R + 9 * b, m->R + 9 * b, 9 * sizeof(double));
        }
}

static void test_fd(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(2);
    static msys m;
    static double F[3 * 64], tau[3 * 64], Ff[3 * 64], tf[3 * 64];
    for (int style = LJ; style <= (LJ | COUL); style++)
        for (int periodic = 0; periodic <= 1; periodic++) {
            make_sys(&m, r, 3, 2.2, periodic, style, 3.0, 0.4);
            m.spec.lj_shift = periodic; /* both: U need not vanish at rc for the differences */
            lf_sites *s = new_engine(&m.spec);
            eval(s, &m, m.x, m.R, NULL, F, tau);
            gradient_fd(s, &m, 1e-6, Ff, tf);
            const double eF = maxdiff(3 * m.nb, F, Ff) / maxabs(3 * m.nb, F);
            const double eT = maxdiff(3 * m.nb, tau, tf) / maxabs(3 * m.nb, tau);
            char label[80];
            snprintf(label, sizeof label, "%s, %s: F - differences (rel.)", style_name(style),
                     periodic ? "box" : "open");
            CHECK_LE(eF, 1e-6, label);
            snprintf(label, sizeof label, "%s, %s: tau - differences (rel.)", style_name(style),
                     periodic ? "box" : "open");
            CHECK_LE(eT, 1e-6, label);
            lf_sites_free(s);
        }
    gsl_rng_free(r);
}

/* ---------------------------------------------------------------- 3. virials */
/* U with the centres scaled by f, the box by f and (atomic) the body-frame sites by f */
static double U_scaled(msys *m, double f, int atomic)
{
    static msys c;
    c = *m;
    for (int i = 0; i < 3 * m->ns && atomic; i++) c.s[i] = m->s[i] * f;
    for (int i = 0; i < 3 * m->nb; i++) c.x[i] = m->x[i] * f;
    for (int d = 0; d < 3; d++) c.box[d] = m->box[d] * f;
    c.spec.s = c.s;
    c.spec.nsites = c.nsites;
    c.spec.type = c.type;
    if (c.spec.charge) c.spec.charge = c.q;
    if (c.spec.box) c.spec.box = c.box;
    lf_sites *s = new_engine(&c.spec);
    const double U = U_of(s, &c, c.x, c.R);
    lf_sites_free(s);
    return U;
}

static void test_virial(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(3);
    static msys m;
    double wm = 0, wa = 0;
    for (int style = LJ; style <= (LJ | COUL); style++)
        for (int periodic = 0; periodic <= 1; periodic++) {
            make_sys(&m, r, 4, 2.2, periodic, style, 3.0, 0.5);
            lf_sites *s = new_engine(&m.spec);
            eval(s, &m, m.x, m.R, NULL, NULL, NULL);
            lf_sites_stats st;
            lf_sites_get_stats(s, &st);
            const double h = 1e-6;
            const double Wm = -(U_scaled(&m, 1 + h, 0) - U_scaled(&m, 1 - h, 0)) / (2 * h);
            const double Wa = -(U_scaled(&m, 1 + h, 1) - U_scaled(&m, 1 - h, 1)) / (2 * h);
            printf("  %-6s %-4s W = %12.6f (differences %12.6f), atomic %12.6f (%12.6f)\n", style_name(style),
                   periodic ? "box" : "open", st.virial, Wm, st.atomic_virial, Wa);
            wm = fmax(wm, fabs(st.virial - Wm) / (1 + fabs(Wm)));
            wa = fmax(wa, fabs(st.atomic_virial - Wa) / (1 + fabs(Wa)));
            lf_sites_free(s);
        }
    CHECK_LE(wm, 1e-7, "molecular virial - (-dU/de), x and box scaled");
    CHECK_LE(wa, 1e-7, "atomic virial - (-dU/de), x, s and box scaled");
    gsl_rng_free(r);
}

/* ---------------------------------------------------------------- 4. Newton's third law */
static void test_newton(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(4);
    static msys m;
    static double F[3 * 4096], tau[3 * 4096];
    double wF = 0, wL = 0;
    for (int periodic = 0; periodic <= 1; periodic++) {
        make_sys(&m, r, 6, 2.1, periodic, LJ | COUL, 3.0, 0.5);
        lf_sites *s = new_engine(&m.spec);
        eval(s, &m, m.x, m.R, NULL, F, tau);
        double sum[3] = {0, 0, 0}, mom[3] = {0, 0, 0}, scaleF = 0, scaleL = 0;
        for (int b = 0; b < m.nb; b++) {
            double t[3], xf[3];
            lf_v3_add(sum, F + 3 * b, sum);
            scaleF += lf_v3_norm(F + 3 * b);
            lf_m3_apply(m.R + 9 * b, tau + 3 * b, t);
            lf_v3_cross(m.x + 3 * b, F + 3 * b, xf);
            lf_v3_add(mom, t, mom);
            lf_v3_add(mom, xf, mom);
            scaleL += lf_v3_norm(t) + lf_v3_norm(xf);
        }
        wF = fmax(wF, lf_v3_norm(sum) / scaleF);
        if (!periodic) wL = lf_v3_norm(mom) / scaleL;
        lf_sites_free(s);
    }
    CHECK_LE(wF, 1e-14, "|sum F| / sum |F| (box and open, 216 bodies)");
    CHECK_LE(wL, 1e-14, "|sum x x F + R tau| / sum |.| (open space)");
    gsl_rng_free(r);
}

/* ---------------------------------------------------------------- 5. the list kept and rebuilt */
static void test_rebuilds(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(5);
    static msys m;
    static double x[3 * 4096], R[9 * 4096], F[3 * 4096], tau[3 * 4096], F0[3 * 4096], t0[3 * 4096];
    make_sys(&m, r, 5, 2.2, 1, LJ | COUL, 3.0, 1.0);
    lf_sites *s = new_engine(&m.spec);
    lf_sites_stats st;
    for (int k = 0; k < 5; k++) eval(s, &m, m.x, m.R, NULL, NULL, NULL);
    lf_sites_get_stats(s, &st);
    printf("  5 evaluations at one configuration: %ld rebuild(s)\n", st.rebuilds);
    assert_int_equal(st.rebuilds, 1);
    /* a body moved by 0.45, then 0.55 (skin/2 = 0.5), then turned so that a site moves 0.6 */
    memcpy(x, m.x, 3 * (size_t)m.nb * sizeof(double));
    memcpy(R, m.R, 9 * (size_t)m.nb * sizeof(double));
    x[3 * 7] += 0.45;
    eval(s, &m, x, R, NULL, NULL, NULL);
    lf_sites_get_stats(s, &st);
    const long after_small = st.rebuilds;
    x[3 * 7] += 0.10;
    eval(s, &m, x, R, NULL, NULL, NULL);
    lf_sites_get_stats(s, &st);
    const long after_large = st.rebuilds;
    memcpy(x, m.x, 3 * (size_t)m.nb * sizeof(double));
    eval(s, &m, x, R, NULL, NULL, NULL); /* back: rebuilt (moved 0.55 from the last build) */
    lf_sites_get_stats(s, &st);
    const long back = st.rebuilds;
    /* body 0 turned about its body axis e3 so that its sites move by up to 0.45, then 0.55 */
    double rho = 0;
    for (int i = 0; i < m.nsites[0]; i++) rho = fmax(rho, hypot(m.s[3 * i], m.s[3 * i + 1]));
    long turned[2];
    for (int k = 0; k < 2; k++) {
        const double v[3] = {0, 0, 2 * asin((k ? 0.55 : 0.45) / (2 * rho))};
        memcpy(R, m.R, 9 * sizeof(double));
        lf_so3_rmul_exp(R, v);
        eval(s, &m, x, R, NULL, NULL, NULL);
        lf_sites_get_stats(s, &st);
        turned[k] = st.rebuilds;
    }
    printf("  rebuilds: a body moved 0.45: %ld, 0.55: %ld, back: %ld; a body turned, its sites moving 0.45: %ld, "
           "0.55: %ld\n",
           after_small, after_large, back, turned[0], turned[1]);
    assert_int_equal(after_small, 1);
    assert_int_equal(after_large, 2);
    assert_int_equal(back, 3);
    assert_int_equal(turned[0], 3);
    assert_int_equal(turned[1], 4);
    /* any order: results at configurations moved by less than skin/2 (no rebuild) and visited in turn
     * equal a fresh engine's (skin 0) */
    m.spec.skin = 0;
    lf_sites *fresh = new_engine(&m.spec);
    double w = 0;
    for (int trial = 0; trial < 6; trial++) {
        memcpy(x, m.x, 3 * (size_t)m.nb * sizeof(double));
        memcpy(R, m.R, 9 * (size_t)m.nb * sizeof(double));
        const double amp = trial % 2 ? 0.2 : 3.0; /* 3: far (a rebuild); 0.2: within the skin */
        for (int i = 0; i < 3 * m.nb; i++) x[i] += amp * (2 * gsl_rng_uniform(r) - 1) / sqrt(3.0);
        double U, U0;
        eval(s, &m, x, R, &U, F, tau);
        eval(fresh, &m, x, R, &U0, F0, t0);
        w = fmax(w, fabs(U - U0) / fabs(U0));
        w = fmax(w, maxdiff(3 * m.nb, F, F0) / maxabs(3 * m.nb, F0));
        w = fmax(w, maxdiff(3 * m.nb, tau, t0) / maxabs(3 * m.nb, t0));
    }
    CHECK_LE(w, 1e-12, "U, F, tau after moves in any order - a fresh engine's");
    lf_sites_free(fresh);
    lf_sites_free(s);
    gsl_rng_free(r);
}

/* ---------------------------------------------------------------- 6. a trajectory with split_exact */
/* the library's potential of the sites (model/sites_potential.h) */
static lf_potential *sites_potential(const lf_sites_spec *spec)
{
    lf_error e;
    lf_potential *p = lf_potential_sites(spec, &e);
    if (!p) fail_msg("%s", e.msg);
    return p;
}

/* 1000 steps of split_exact from y0: the final state into y, the rebuilds into *rebuilds */
static void trajectory(msys *m, double skin, const double *y0, double *y, long *rebuilds, double *E)
{
    lf_error e;
    m->spec.skin = skin;
    lf_potential *p = sites_potential(&m->spec);
    double J[3 * 64], mass[64];
    for (int b = 0; b < m->nb; b++) {
        lf_v3_set(J + 3 * b, 0.5, 0.7, 1.0);
        mass[b] = 3;
    }
    lf_system *sys = lf_rigid_new_translating(m->nb, J, mass, p, &e);
    if (!sys) fail_msg("%s", e.msg);
    const int n = lf_system_nparam(sys);
    lf_stepper *st = new_stepper(lf_method_find("split_exact"), sys, y0, NULL);
    if (lf_system_energy(sys, y0, &E[0], &e) != LF_OK) fail_msg("%s", e.msg);
    run_steps(st, 0.002, 1000);
    memcpy(y, lf_stepper_state(st), (size_t)n * sizeof(double));
    if (lf_system_energy(sys, y, &E[1], &e) != LF_OK) fail_msg("%s", e.msg);
    lf_sites_stats stats;
    lf_error es;
    assert_int_equal(lf_potential_sites_stats(p, &stats, &es), LF_OK);
    *rebuilds = stats.rebuilds;
    lf_stepper_free(st);
    lf_system_free(sys);
    lf_potential_free(p);
}

static void test_trajectory(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(6);
    static msys m;
    make_sys(&m, r, 4, 2.75, 1, LJ | COUL, 3.0, 0);
    const int nb = m.nb, n = 18 * nb;
    static double y0[18 * 64], y[3][18 * 64];
    memcpy(y0, m.R, 9 * (size_t)nb * sizeof(double));
    for (int i = 0; i < 3 * nb; i++) {
        y0[9 * nb + i] = gsl_ran_gaussian(r, 1.0);  /* w */
        y0[12 * nb + i] = m.x[i];                   /* x */
        y0[15 * nb + i] = gsl_ran_gaussian(r, 0.8); /* v */
    }
    const double skins[3] = {0, 0.5, 3};
    long rb[3];
    double E[3][2];
    for (int k = 0; k < 3; k++) trajectory(&m, skins[k], y0, y[k], &rb[k], E[k]);
    const double moved = maxdiff(3 * nb, y0 + 12 * nb, y[0] + 12 * nb);
    printf("  64 molecules, 1000 steps of h = 0.002: centres moved up to %.2f; rebuilds with skin 0, 0.5, 3: %ld, "
           "%ld, %ld; energy %.6f -> %.6f\n",
           moved, rb[0], rb[1], rb[2], E[0][0], E[0][1]);
    const double d1 = maxdiff(n, y[1], y[0]) / (1 + maxabs(n, y[0]));
    const double d2 = maxdiff(n, y[2], y[0]) / (1 + maxabs(n, y[0]));
    CHECK_LE(d1, 1e-12, "state with skin 0.5 - with skin 0 (rel.)");
    CHECK_LE(d2, 1e-12, "state with skin 3 - with skin 0 (rel.)");
    CHECK_LE(fabs(E[1][1] - E[0][1]) / fabs(E[0][1]), 1e-12, "energy at the end, skin 0.5 - skin 0 (rel.)");
    assert_true(rb[0] >= 1000); /* skin 0: a build at every evaluation */
    assert_true(rb[1] > rb[2] && rb[2] >= 1);
    assert_true(moved > 1.0);
    gsl_rng_free(r);
}

/* ---------------------------------------------------------------- 7. at the cutoff; self energies */
static void test_cutoff(void **state)
{
    (void)state;
    static msys m;
    memset(&m, 0, sizeof m);
    m.nb = 2;
    m.ns = 2;
    m.nsites[0] = m.nsites[1] = 1;
    m.q[0] = 0.8;
    m.q[1] = -0.6;
    lf_so3_exp((double[3]){0, 0, 0}, m.R);
    lf_so3_exp((double[3]){0, 0, 0}, m.R + 9);
    const double rc = 2.5, qq = KC * 0.8 * -0.6;
    for (int style = LJ; style <= COUL; style++) {
        m.spec = (lf_sites_spec){.nb = 2,
                                 .nsites = m.nsites,
                                 .s = m.s,
                                 .ntypes = 1,
                                 .cutoff = rc,
                                 .lj_shift = 1,
                                 .coulomb_alpha = 0.3,
                                 .coulomb_k = KC,
                                 .coulomb_self = LF_SITES_SELF_NONE};
        if (style == LJ) {
            m.spec.lj_epsilon = eps2;
            m.spec.lj_sigma = sig2;
        } else m.spec.charge = m.q;
        lf_sites *s = new_engine(&m.spec);
        double wu = 0, wf = 0, F[6], tau[6], U;
        for (int k = 2; k <= 8; k += 2) {
            const double h = pow(10, -k);
            m.x[3] = rc - h;
            eval(s, &m, m.x, m.R, &U, F, tau);
            printf("  %-3s r = rc - 1e-%d: U = %10.3e, F = %10.3e\n", style_name(style), k, U, F[0]);
            wu = fmax(wu, fabs(U) / (fabs(qq) + 1) / (style == LJ ? h : h * h));
            wf = fmax(wf, fabs(F[0]) / (fabs(qq) + 1) / (style == LJ ? 1 : h));
        }
        m.x[3] = rc * (1 + 1e-15);
        eval(s, &m, m.x, m.R, &U, F, tau);
        assert_true(U == 0 && F[0] == 0);
        char label[80];
        snprintf(label, sizeof label, "%s: |U(rc - h)| / %s (h = 1e-2 .. 1e-8)", style_name(style),
                 style == LJ ? "h" : "h^2");
        CHECK_LE(wu, 10, label);
        if (style == COUL) CHECK_LE(wf, 10, "DSF: |F(rc - h)| / h");
        lf_sites_free(s);
    }
    /* the self energies by their formulas */
    const double q[3] = {0.8, -0.4, -0.4}, a = 0.2, r = 9, k = 332.06371, sp = sqrt(PI);
    const double fg = -(erfc(a * r) / (2 * r) + a / sp) * k * 0.96;
    const double lmp = -(erfc(a * r) / r + a / sp * exp(-a * a * r * r) + a / sp) * k * 0.96;
    const double g_fg = lf_sites_self(LF_SITES_SELF_FG, r, a, k, 3, q);
    const double g_lmp = lf_sites_self(LF_SITES_SELF_LAMMPS, r, a, k, 3, q);
    printf("  self energy of (0.8, -0.4, -0.4), a = 0.2, rc = 9, k = 332.06371: FG %.10f, LAMMPS %.10f\n", g_fg, g_lmp);
    CHECK_LE(fabs(g_fg - fg) / fabs(fg), 1e-15, "lf_sites_self FG - formula (rel.)");
    CHECK_LE(fabs(g_lmp - lmp) / fabs(lmp), 1e-15, "lf_sites_self LAMMPS - formula (rel.)");
    assert_true(lf_sites_self(LF_SITES_SELF_NONE, r, a, k, 3, q) == 0);
    /* a system without pairs in range: U is the self energy */
    m.spec = (lf_sites_spec){.nb = 2,
                             .nsites = m.nsites,
                             .s = m.s,
                             .ntypes = 1,
                             .cutoff = rc,
                             .charge = m.q,
                             .coulomb_alpha = a,
                             .coulomb_k = k};
    m.x[3] = 2 * rc;
    lf_sites *s = new_engine(&m.spec);
    double U;
    eval(s, &m, m.x, m.R, &U, NULL, NULL);
    const double want = lf_sites_self(LF_SITES_SELF_LAMMPS, rc, a, k, 2, m.q);
    lf_sites_stats st;
    lf_sites_get_stats(s, &st);
    printf("  two charges apart: U = %.12f, self energy %.12f, %ld pairs\n", U, want, st.pairs_in_range);
    assert_true(U == want && st.self_energy == want && st.pairs_in_range == 0);
    assert_int_equal(lf_sites_nbodies(s), 2);
    assert_int_equal(lf_sites_count(s), 2);
    lf_sites_free(s);
}

/* ---------------------------------------------------------------- 7b. the kernel's erfc */
/* the largest differences of lf_md_erfc_exp at n points of [x0, x1] (evenly spaced, and as many random ones): d[0],
 * d[1] absolute and relative from libm's erfc, d[2] relative from erfcl's (long double), d[3] of its exp(-x^2)
 * relative from expl's; *xw where d[1] is largest */
static void erfc_diff(double x0, double x1, int n, gsl_rng *r, double *d, double *xw)
{
    for (int i = 0; i <= 2 * n; i++) {
        const double x = i <= n ? x0 + (x1 - x0) * i / n : x0 + (x1 - x0) * gsl_rng_uniform(r);
        double e;
        const double f = lf_md_erfc_exp(x, &e), g = erfc(x);
        const long double xl = x, el = expl(-xl * xl), gl = erfcl(xl);
        const double da = fabs(f - g), dr = g > 0 ? da / g : 0;
        if (dr > d[1]) *xw = x;
        d[0] = fmax(d[0], da);
        d[1] = fmax(d[1], dr);
        d[2] = fmax(d[2], (double)(fabsl(f - gl) / gl));
        d[3] = fmax(d[3], (double)(fabsl(e - el) / el));
    }
}

static void test_erfc(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(10);
    double d[4] = {0, 0, 0, 0}, xw = 0;
    erfc_diff(0, 6, 600000, r, d, &xw);
    printf("  erfc on [0, 6], 1.2e6 points: from libm's erfc %.3g absolute, %.3g relative (%.2f eps, at x = %.6f); "
           "from erfcl %.2f eps; exp(-x^2) from expl's %.2f eps\n",
           d[0], d[1], d[1] / DBL_EPSILON, xw, d[2] / DBL_EPSILON, d[3] / DBL_EPSILON);
    CHECK_LE(d[0], 4.5e-16, "erfc on [0, 6] - libm's erfc (absolute)");
    CHECK_LE(d[1], 5 * DBL_EPSILON, "erfc on [0, 6] - libm's erfc (relative)");
    CHECK_LE(d[2], 4 * DBL_EPSILON, "erfc on [0, 6] - erfcl (relative)");
    CHECK_LE(d[3], 2 * DBL_EPSILON, "exp(-x^2) on [0, 6] - expl's (relative)");
    /* the pair loop's ranges of x = a r, r < rc, with a margin of 10%: a rc = 0.75 (a = 0.25, rc = 3 and a = 0.3,
     * rc = 2.5), 1.6 and 2 (a = 0.2, rc = 8 and 10: water here and in bench/water.lua), 4.5 (a = 1.5, rc = 3) */
    const double top[4] = {0.75, 1.6, 2.0, 4.5};
    for (int k = 0; k < 4; k++) {
        memset(d, 0, sizeof d);
        erfc_diff(0, top[k] * 1.1, 100000, r, d, &xw);
        char label[80];
        printf("  erfc on [0, %.3g]: from libm's %.3g absolute, %.2f eps relative; from erfcl %.2f eps\n", top[k] * 1.1,
               d[0], d[1] / DBL_EPSILON, d[2] / DBL_EPSILON);
        snprintf(label, sizeof label, "erfc on [0, %.3g] - libm's erfc (relative)", top[k] * 1.1);
        CHECK_LE(d[1], 5 * DBL_EPSILON, label);
    }
    /* the kernel on a pair: u and fpair against the formula with libm's erfc and exp, over r in (0, rc) */
    for (int k = 0; k < 2; k++) {
        const lf_sites_spec sp = {.cutoff = 10,
                                  .charge = (double[1]){1},
                                  .ntypes = 1,
                                  .coulomb_alpha = k ? 0.5 : 0.2,
                                  .coulomb_k = 332.06371};
        lf_md_pairs P;
        lf_error e;
        assert_int_equal(lf_md_pairs_init(&P, &sp, &e), LF_OK);
        assert_true(P.erfc4 == (k == 0)); /* a rc = 2 and 5 */
        const double al = sp.coulomb_alpha, c = 2 * al / sqrt(PI), rc = sp.cutoff;
        const double fs = erfc(al * rc) / (rc * rc) + c * exp(-al * al * rc * rc) / rc;
        double wu = 0, wf = 0;
        for (int i = 1; i < 10000; i++) {
            const double rr = rc * i / 10000, qq = -0.36, kq = qq * sp.coulomb_k;
            double u = 0;
            const double fp = lf_md_dsf(&P, qq, rr, 1 / (rr * rr), &u);
            const double ur = kq * (erfc(al * rr) / rr - erfc(al * rc) / rc + fs * (rr - rc));
            const double fr = kq * (erfc(al * rr) / (rr * rr) + c * exp(-al * al * rr * rr) / rr - fs) / rr;
            wu = fmax(wu, fabs(u - ur) / (fabs(kq) / rr));
            wf = fmax(wf, fabs(fp - fr) / (fabs(kq) / (rr * rr * rr)));
        }
        char label[80];
        snprintf(label, sizeof label, "DSF u (a rc = %g) - with libm's erfc, per k qq/r", al * rc);
        CHECK_LE(wu, 1e-15, label);
        snprintf(label, sizeof label, "DSF fpair (a rc = %g) - with libm's erfc, per k qq/r^3", al * rc);
        CHECK_LE(wf, 1e-15, label);
        lf_md_pairs_free(&P);
    }
    gsl_rng_free(r);
}

/* ---------------------------------------------------------------- 8. time per site */
/* rigid SPC/E-like waters (O-H 1 A, HOH 109.47 deg; O -0.8476, H 0.4238; LJ on O-O) on a cubic lattice of
 * spacing 3.1 A (about 1 g/cm^3), random attitudes; rc 8 A, skin 2 A */
static void water_lattice(msys *m, gsl_rng *r, int side)
{
    static const double eps_w[4] = {0.1553, 0, 0, 0}, sig_w[4] = {3.166, 1, 1, 1};
    const double th = 109.47 / 2 * PI / 180, tmpl[9] = {0, 0, 0, sin(th), 0, cos(th), -sin(th), 0, cos(th)};
    memset(m, 0, sizeof *m);
    m->nb = side * side * side;
    m->periodic = 1;
    for (int b = 0; b < m->nb; b++) {
        m->nsites[b] = 3;
        for (int k = 0; k < 3; k++, m->ns++) {
            for (int d = 0; d < 3; d++) m->s[3 * m->ns + d] = tmpl[3 * k + d] - (d == 2 ? 2 * cos(th) / 18 : 0);
            m->type[m->ns] = k == 0 ? 0 : 1;
            m->q[m->ns] = k == 0 ? -0.8476 : 0.4238;
        }
        const int id[3] = {b % side, b / side % side, b / (side * side)};
        for (int d = 0; d < 3; d++) m->x[3 * b + d] = (id[d] + 0.5) * 3.1 + 0.2 * (gsl_rng_uniform(r) - 0.5);
        lf_so3_random(gsl_rng_get(r), m->R + 9 * b, NULL);
    }
    for (int d = 0; d < 3; d++) m->box[d] = side * 3.1;
    m->spec = (lf_sites_spec){.nb = m->nb,
                              .nsites = m->nsites,
                              .s = m->s,
                              .type = m->type,
                              .charge = m->q,
                              .ntypes = 2,
                              .lj_epsilon = eps_w,
                              .lj_sigma = sig_w,
                              .cutoff = 8,
                              .coulomb_alpha = 0.2,
                              .coulomb_k = 332.06371,
                              .box = m->box,
                              .skin = 2};
}

/* seconds per evaluation (repeated for 0.2 s at least) */
static double time_eval(lf_sites *s, const msys *m)
{
    static double F[3 * 4096], tau[3 * 4096];
    double U;
    eval(s, m, m->x, m->R, &U, F, tau); /* the first build */
    long n = 0;
    const double t0 = now();
    double t;
    do {
        eval(s, m, m->x, m->R, &U, F, tau);
        n++;
    } while ((t = now() - t0) < 0.05);
    return t / (double)n;
}

static void test_scaling(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(8);
    static msys m;
    const int sides[5] = {6, 8, 10, 12, 14};
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {0, 0}, work_lo = INFINITY, work_hi = 0, mem_lo = INFINITY, mem_hi = 0;
    for (int g = 0; g < 5; g++) {
        water_lattice(&m, r, sides[g]);
        double per[2];
        long pairs = 0, list = 0;
        size_t bytes = 0;
        for (int k = 0; k < 2; k++) {
            m.spec.skin = k == 0 ? 2 : 0;
            lf_sites *s = new_engine(&m.spec);
            per[k] = time_eval(s, &m) / m.ns;
            lf_sites_stats st;
            lf_sites_get_stats(s, &st);
            pairs = st.pairs_in_range;
            if (k == 0) {
                list = st.list_pairs;
                bytes = st.bytes;
            }
            lo[k] = fmin(lo[k], per[k]);
            hi[k] = fmax(hi[k], per[k]);
            lf_sites_free(s);
        }
        printf("  %5d sites (box %.1f A): %7.1f ns/site with skin 2 (%ld pairs listed, %ld in range, %.0f bytes/site), "
               "%7.1f ns/site with skin 0\n",
               m.ns, m.box[0], 1e9 * per[0], list, pairs, (double)bytes / m.ns, 1e9 * per[1]);
        work_lo = fmin(work_lo, (double)list / m.ns), work_hi = fmax(work_hi, (double)list / m.ns);
        mem_lo = fmin(mem_lo, (double)bytes / m.ns), mem_hi = fmax(mem_hi, (double)bytes / m.ns);
    }
    /* O(N): the work (pairs listed) and the memory per site flat; the times are printed, not asserted
     * (speed is measured in make bench, not by timed tests) */
    printf("  time per site, largest / smallest: %.2f (skin 2), %.2f (skin 0)\n", hi[0] / lo[0], hi[1] / lo[1]);
    CHECK_LE(work_hi / work_lo, 1.2, "pairs listed per site, largest / smallest (648 .. 8232 sites)");
    CHECK_LE(mem_hi / mem_lo, 2.0, "list memory per site, largest / smallest (geometric growth: <= 2)");
    gsl_rng_free(r);
}

/* ---------------------------------------------------------------- 9. errors */
static void expect_new_error(const lf_sites_spec *spec, int code, const char *a, const char *b)
{
    lf_error e;
    memset(&e, 0, sizeof e);
    lf_sites *s = lf_sites_new(spec, &e);
    printf("  refused: %s\n", e.msg);
    assert_null(s);
    assert_int_equal(e.code, code);
    if (a && !strstr(e.msg, a)) fail_msg("'%s' does not name '%s'", e.msg, a);
    if (b && !strstr(e.msg, b)) fail_msg("'%s' does not name '%s'", e.msg, b);
}

static void test_errors(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(9);
    static msys m;
    make_sys(&m, r, 3, 2.0, 1, LJ | COUL, 2.5, 0.5);
    lf_sites_spec sp = m.spec;
    sp.cutoff = 3.5; /* box 6 */
    expect_new_error(&sp, LF_EINVAL, "cutoff 3.5", "= 6");
    sp = m.spec;
    const double bad_sig[4] = {1, -0.9, -0.9, 0.8};
    sp.lj_sigma = bad_sig;
    expect_new_error(&sp, LF_EINVAL, "lj_sigma[0][1] = -0.9", NULL);
    const double asym[4] = {1, 0.7, 0.6, 0.5};
    sp = m.spec;
    sp.lj_epsilon = asym;
    expect_new_error(&sp, LF_EINVAL, "not symmetric", NULL);
    sp = m.spec;
    sp.ntypes = 1; /* types 0 and 1 */
    expect_new_error(&sp, LF_EINVAL, "has the type 1", "ntypes = 1");
    sp = m.spec;
    sp.ntypes = 0;
    expect_new_error(&sp, LF_EINVAL, "ntypes = 0", NULL);
    m.nsites[4] = 0;
    expect_new_error(&m.spec, LF_EINVAL, "body 5 has 0 sites", NULL);
    m.nsites[4] = 3;
    sp = m.spec;
    sp.nb = 0;
    expect_new_error(&sp, LF_EINVAL, "0 bodies", NULL);
    sp = m.spec;
    sp.skin = -1;
    expect_new_error(&sp, LF_EINVAL, "skin = -1", NULL);
    sp = m.spec;
    sp.cutoff = NAN;
    expect_new_error(&sp, LF_EINVAL, "cutoff = nan", NULL);
    const double badbox[3] = {6, INFINITY, 6};
    sp = m.spec;
    sp.box = badbox;
    expect_new_error(&sp, LF_EINVAL, "Ly = inf", NULL);
    sp = m.spec;
    sp.coulomb_k = 0;
    expect_new_error(&sp, LF_EINVAL, "coulomb_k = 0", NULL);
    sp = m.spec;
    sp.coulomb_alpha = -1;
    expect_new_error(&sp, LF_EINVAL, "coulomb_alpha = -1", NULL);
    sp = m.spec;
    sp.coulomb_self = 7;
    expect_new_error(&sp, LF_EINVAL, "coulomb_self = 7", NULL);
    sp = m.spec;
    sp.lj_sigma = NULL;
    expect_new_error(&sp, LF_EINVAL, "together", NULL);
    m.q[5] = NAN;
    expect_new_error(&m.spec, LF_EINVAL, "charge nan", NULL);
    m.q[5] = 1e200; /* finite, but its self energy -k q^2 (...) overflows (a fuzz finding: U was -inf) */
    expect_new_error(&m.spec, LF_EINVAL, "self energy", "not finite");
    m.q[5] = 0.1;
    sp = m.spec;
    sp.max_bytes = 1000;
    expect_new_error(&sp, LF_ENOMEM, "max_bytes = 1000", NULL);
    assert_null(lf_sites_new(NULL, NULL));
    lf_sites_free(NULL);

    /* coincident sites: site 2 of body 2 on site 1 of body 1 (an image of it; exact in binary) */
    lf_sites *s = new_engine(&m.spec);
    lf_error e;
    double x[3 * 27], R[9 * 27], U;
    memcpy(x, m.x, sizeof x);
    memcpy(R, m.R, sizeof R);
    double s1[3], s2[3];
    const int j2 = m.nsites[0] + 1;
    memcpy(s1, m.s, sizeof s1);
    memcpy(s2, m.s + 3 * j2, sizeof s2);
    lf_v3_set(m.s, 0, 0, 0);
    lf_v3_set(m.s + 3 * j2, 0, 0, 0);
    for (int b = 0; b < 2; b++) lf_so3_exp((double[3]){0, 0, 0}, R + 9 * b);
    lf_v3_set(x, 1, 2, 3);
    lf_v3_set(x + 3, 1 + 2 * m.box[0], 2 - m.box[1], 3);
    lf_sites *s0 = new_engine(&m.spec);
    int st = lf_sites_eval(s0, m.nb, x, R, &U, NULL, NULL, &e);
    printf("  refused: %s\n", e.msg);
    assert_int_equal(st, LF_EDOMAIN);
    assert_non_null(strstr(e.msg, "site 1 of body 1"));
    assert_non_null(strstr(e.msg, "site 2 of body 2"));
    eval(s0, &m, m.x, m.R, &U, NULL, NULL); /* and the engine works on */
    /* 1e-60 apart: u overflows */
    lf_v3_set(x, 0, 0, 0);
    lf_v3_set(x + 3, 1e-60, 0, 0);
    st = lf_sites_eval(s0, m.nb, x, R, &U, NULL, NULL, &e);
    printf("  refused: %s\n", e.msg);
    assert_int_equal(st, LF_EDOMAIN);
    assert_non_null(strstr(e.msg, "not finite"));
    lf_sites_free(s0);
    memcpy(m.s, s1, sizeof s1);
    memcpy(m.s + 3 * j2, s2, sizeof s2);
    eval(s, &m, m.x, m.R, &U, NULL, NULL); /* and the engine works on */
    x[4] = NAN;
    assert_int_equal(lf_sites_eval(s, m.nb, x, R, &U, NULL, NULL, &e), LF_EINVAL);
    printf("  refused: %s\n", e.msg);
    assert_int_equal(lf_sites_eval(s, m.nb - 1, m.x, m.R, &U, NULL, NULL, &e), LF_EINVAL);
    printf("  refused: %s\n", e.msg);
    lf_sites_free(s);

    /* open space, sites spread over a subnormal span (a fuzz finding: nc / span overflowed, the cell index
     * was NaN and the sort wrote out of bounds): one cell across, the pairs all found */
    {
        const int nsub[2] = {1, 1};
        const double ssub[6] = {0, 0, 0, 0, 0, 0}, qsub[2] = {0.5, -0.5};
        const lf_sites_spec sub = {.nb = 2,
                                   .nsites = nsub,
                                   .s = ssub,
                                   .charge = qsub,
                                   .ntypes = 1,
                                   .cutoff = 1,
                                   .skin = 0.25,
                                   .coulomb_alpha = 0.2,
                                   .coulomb_k = 1};
        lf_sites *t = new_engine(&sub);
        const double xs[6] = {0, 0, 0, 1e-300, 0, 0};
        double Rs[18];
        for (int b = 0; b < 2; b++) lf_so3_exp((double[3]){0, 0, 0}, Rs + 9 * b);
        st = lf_sites_eval(t, 2, xs, Rs, &U, NULL, NULL, &e); /* 1e-300 apart: u overflows, refused */
        assert_int_equal(st, LF_EDOMAIN);
        const double xt[6] = {0, 0, 0, 0.5, 5e-324, 0};
        assert_int_equal(lf_sites_eval(t, 2, xt, Rs, &U, NULL, NULL, &e), LF_OK);
        lf_sites_stats stt;
        lf_sites_get_stats(t, &stt);
        assert_int_equal(stt.pairs_in_range, 1);
        lf_sites_free(t);
    }

    /* a neighbour list above the limit: 125 bodies in a box of 10 with rc 5 and skin 5 */
    make_sys(&m, r, 5, 2.0, 1, LJ, 5.0, 5.0);
    m.spec.max_bytes = 150000;
    s = new_engine(&m.spec);
    st = lf_sites_eval(s, m.nb, m.x, m.R, &U, NULL, NULL, &e);
    printf("  refused: %s\n", e.msg);
    assert_int_equal(st, LF_ENOMEM);
    assert_non_null(strstr(e.msg, "max_bytes = 150000"));
    lf_sites_free(s);
    gsl_rng_free(r);
}

/* A pair function of the user's: Lennard-Jones (unshifted) between the types and, when qk != 0, a plain
 * Coulomb k qa qb / r (its call count in the context) */
typedef struct {
    double qk;
    long calls;
    double fail_r; /* r below it: LF_EDOMAIN */
} user_lj;

static int user_lj_pair(void *ctx, int ta, int tb, double r, double qa, double qb, double *u, double *du, lf_error *err)
{
    user_lj *c = ctx;
    c->calls++;
    if (ta > tb) return lf_error_set(err, LF_EINVAL, "called with ta %d > tb %d", ta, tb);
    if (r < c->fail_r) return lf_error_set(err, LF_EDOMAIN, "user pair: r = %g below %g", r, c->fail_r);
    const double e = eps2[2 * ta + tb], sr6 = pow(sig2[2 * ta + tb] / r, 6);
    *u = 4 * e * (sr6 * sr6 - sr6) + c->qk * qa * qb / r;
    *du = -4 * e * (12 * sr6 * sr6 - 6 * sr6) / r - c->qk * qa * qb / (r * r);
    return LF_OK;
}

/* a user's pair function against the built-in styles: LJ written as a pair function equals the built-in
 * (unshifted) to round-off, added to the built-in LJ it doubles the energy; charges for the pair function
 * only (charges_only: no DSF); its failure stops the evaluation with its message */
static void test_user_pair(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(21);
    static msys m;
    make_sys(&m, r, 4, 2.0, 1, LJ, 2.5, 0.5);
    m.spec.lj_shift = 0;
    lf_sites *ref = new_engine(&m.spec);
    user_lj c = {0};
    lf_sites_spec sp = m.spec;
    sp.lj_epsilon = sp.lj_sigma = NULL;
    sp.pair_fn = user_lj_pair;
    sp.pair_ctx = &c;
    lf_sites *usr = new_engine(&sp);
    sp.lj_epsilon = eps2, sp.lj_sigma = sig2;
    lf_sites *both = new_engine(&sp);
    double U0, U1, U2, F0[3 * 64], F1[3 * 64], T0[3 * 64], T1[3 * 64];
    eval(ref, &m, m.x, m.R, &U0, F0, T0);
    eval(usr, &m, m.x, m.R, &U1, F1, T1);
    eval(both, &m, m.x, m.R, &U2, NULL, NULL);
    lf_sites_stats st;
    lf_sites_get_stats(usr, &st);
    double dF = 0, Fmax = 0;
    for (int i = 0; i < 3 * m.nb; i++) {
        dF = fmax(dF, fmax(fabs(F1[i] - F0[i]), fabs(T1[i] - T0[i])));
        Fmax = fmax(Fmax, fmax(fabs(F0[i]), fabs(T0[i])));
    }
    printf("  user LJ against the built-in: U %.17g, %.1e relative; forces and torques %.1e relative; %ld calls for "
           "%ld pairs in range\n",
           U0, fabs(U1 - U0) / fabs(U0), dF / Fmax, c.calls, st.pairs_in_range);
    assert_true(fabs(U1 - U0) <= 1e-13 * fabs(U0) && dF <= 1e-13 * Fmax);
    assert_true(st.pairs_in_range > 100 && c.calls == 2 * st.pairs_in_range); /* (both engines called it) */
    assert_true(fabs(st.user_energy - U0) <= 1e-13 * fabs(U0) && st.lj_energy == 0);
    assert_true(fabs(U2 - 2 * U0) <= 1e-13 * fabs(U0));
    lf_sites_free(both);

    /* charges for the pair function only: plain Coulomb through the pair function, no DSF (no self energy) */
    c.qk = 1.3;
    sp = m.spec;
    sp.lj_epsilon = sp.lj_sigma = NULL;
    sp.pair_fn = user_lj_pair;
    sp.pair_ctx = &c;
    sp.charge = m.q;
    sp.charges_only = 1;
    lf_sites *q = new_engine(&sp);
    double Uq;
    eval(q, &m, m.x, m.R, &Uq, NULL, NULL);
    lf_sites_get_stats(q, &st);
    assert_true(st.self_energy == 0 && Uq != U1 && st.user_energy == Uq);
    /* a failure of the pair function: its status and message, and the engine works on */
    c.fail_r = 1e9;
    lf_error e;
    assert_int_equal(lf_sites_eval(q, m.nb, m.x, m.R, &Uq, NULL, NULL, &e), LF_EDOMAIN);
    printf("  refused: %s\n", e.msg);
    assert_non_null(strstr(e.msg, "user pair: r = "));
    c.fail_r = 0;
    eval(q, &m, m.x, m.R, &Uq, NULL, NULL);
    lf_sites_free(q);
    /* charges_only without a pair function, or without charges: refused */
    sp.pair_fn = NULL;
    expect_new_error(&sp, LF_EINVAL, "charges_only", NULL);
    lf_sites_free(ref);
    lf_sites_free(usr);
    gsl_rng_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_direct), cmocka_unit_test(test_fd),        cmocka_unit_test(test_virial),
        cmocka_unit_test(test_newton), cmocka_unit_test(test_rebuilds),  cmocka_unit_test(test_trajectory),
        cmocka_unit_test(test_cutoff), cmocka_unit_test(test_erfc),      cmocka_unit_test(test_scaling),
        cmocka_unit_test(test_errors), cmocka_unit_test(test_user_pair),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
