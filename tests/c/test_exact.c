/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of core/solve/exact.c: the closed-form free rigid body measured against GSL rk8pd references
 * (lf_reference_solve, rtol = atol = 1e-14) over t in [0, 100] (and [-100, 0]), and its invariants.
 * The attitude (lf_exact_free_body_flow, test_flow_*) is measured against three independent references:
 * GSL rk8pd on R' = R hat(w), J w' = (J w) x w in R^9 x R^3 at rtol = atol = 1e-14 (gsl_odeiv2, here), a
 * Taylor-series integrator of the same equations in long double (64-bit mantissa, here), and 50-60 digit
 * values from a Taylor-series integrator in mpmath (above test_flow_near_separatrix).
 * Each test prints the worst difference it measured, then asserts it against the bound. */
#include <float.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"
#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <time.h>

#include "solve/exact.h"
#include "lieflow.h"

#define NT 400          /* sample times t_k = T k / NT */
#define TOL_REF 1e-11   /* agreement with the reference, max-norm over the samples, |w0| ~ 1 */
#define TOL_INV 1e-14   /* relative drift of 2E and |Pi| along the formula */

static double maxabs3(const double a[3], const double b[3])
{
    double m = 0;
    for (int i = 0; i < 3; i++) {
        double d = fabs(a[i] - b[i]);
        if (!(d <= m)) m = d; /* NaN propagates */
    }
    return m;
}

static double energy2(const double J[3], const double w[3]) { return J[0] * w[0] * w[0] + J[1] * w[1] * w[1] + J[2] * w[2] * w[2]; }
static double casimir(const double J[3], const double w[3]) { return hypot(hypot(J[0] * w[0], J[1] * w[1]), J[2] * w[2]); }

/* max over t_k = T k / NT (k = 1..NT) of |w_exact(t_k) - w_ref(t_k)|_inf; the worst relative drift
 * of 2E and |Pi| along the formula goes to *inv (if not NULL). */
static double compare(const double J[3], const double w0[3], double T, double *inv)
{
    lf_error e;
    lf_system *sys = lf_rigid_new(1, J, NULL, &e);
    if (!sys) fail_msg("%s", e.msg);
    static double times[NT], yout[12 * NT], wout[3 * NT];
    double y0[12];
    lf_m3_identity(y0);
    memcpy(y0 + 9, w0, 3 * sizeof(double));
    for (int k = 0; k < NT; k++) times[k] = T * (k + 1) / NT;
    lf_reference_opts ro = {1e-14, 1e-14, 1e-3, 0, NULL};
    if (lf_reference_solve(sys, y0, 0, times, NT, yout, NULL, &ro, &e) != LF_OK) fail_msg("%s", e.msg);
    for (int k = 0; k < NT; k++) memcpy(wout + 3 * k, yout + 12 * k + 9, 3 * sizeof(double));
    lf_system_free(sys);
    double worst = 0, winv = 0, E0 = energy2(J, w0), M0 = casimir(J, w0);
    for (int k = 0; k < NT; k++) {
        double w[3];
        if (lf_exact_free_body(J, w0, times[k], w, &e) != LF_OK) fail_msg("%s", e.msg);
        double d = maxabs3(w, wout + 3 * k);
        if (!(d <= worst)) worst = d;
        double di = fmax(fabs(energy2(J, w) - E0) / E0, fabs(casimir(J, w) - M0) / M0);
        if (!(di <= winv)) winv = di;
    }
    if (inv && !(winv <= *inv)) *inv = winv;
    return worst;
}

static void permute(const int p[3], const double x[3], double y[3])
{
    for (int i = 0; i < 3; i++) y[i] = x[p[i]];
}

static const double SEED_J[3] = {0.9144, 1.098, 1.66}, SEED_W[3] = {0.45549, 0.82623, 0.03476};

/* [K] §2.2 (McLachlan–Zanna), forward and backward in time; t = 0 gives w0 back */
static void test_krysl_free_body(void **state)
{
    (void)state;
    double inv = 0, w[3];
    CHECK_LE(compare(SEED_J, SEED_W, 100, &inv), TOL_REF, "[K] body, t in [0, 100]");
    CHECK_LE(compare(SEED_J, SEED_W, -100, &inv), TOL_REF, "[K] body, t in [-100, 0]");
    CHECK_LE(inv, TOL_INV, "[K] body, relative drift of 2E, |Pi|");
    assert_int_equal(lf_exact_free_body(SEED_J, SEED_W, 0, w, NULL), LF_OK);
    CHECK_LE(maxabs3(w, SEED_W), 4e-16, "[K] body, |w(0) - w0|");
}

/* all 6 orderings of the moments, w0 permuted alike, both directions of time */
static void test_permutations(void **state)
{
    (void)state;
    static const int P[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
    double worst = 0, inv = 0, J[3], w0[3];
    for (int p = 0; p < 6; p++) {
        permute(P[p], SEED_J, J);
        permute(P[p], SEED_W, w0);
        double d = fmax(compare(J, w0, 100, &inv), compare(J, w0, -100, &inv));
        printf("    permutation (%d %d %d): %.2e\n", P[p][0] + 1, P[p][1] + 1, P[p][2] + 1, d);
        worst = fmax(worst, d);
        /* sign flips of w0 (the other octants) */
        for (int s = 1; s < 8; s++) {
            double ws[3] = {(s & 1) ? -w0[0] : w0[0], (s & 2) ? -w0[1] : w0[1], (s & 4) ? -w0[2] : w0[2]};
            worst = fmax(worst, compare(J, ws, 50, &inv));
        }
    }
    CHECK_LE(worst, TOL_REF, "6 permutations x 8 sign patterns of the [K] body");
    CHECK_LE(inv, TOL_INV, "permutations, relative drift of 2E, |Pi|");
}

/* both sides of the separatrix: near the middle axis and generic, several orderings of the axes.
 * Near the middle axis the rk8pd reference itself loses accuracy (the saddle amplifies its local
 * errors by ~1/|S|): data with off-axis components ~0.02-0.06 is as close as it follows to 1e-11 at
 * |t| = 100 (e.g. (0.05, 1, 0.03) is already ~2e-11 off at rtol 1e-14 while the formula agrees with
 * 32-digit values to 3e-15). Closer data is checked in test_high_precision. */
static void test_separatrix_sides(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        double J[3], w0[3];
    } C[] = {
        {"J=(1,2,3) major side, near middle axis (0.02, 1, 0.05)", {1, 2, 3}, {0.02, 1, 0.05}},
        {"J=(1,2,3) minor side, near middle axis (0.06, 1, 0.02)", {1, 2, 3}, {0.06, 1, 0.02}},
        {"J=(1,2,3) major side, generic (0.3, 0.5, 0.8)", {1, 2, 3}, {0.3, 0.5, 0.8}},
        {"J=(1,2,3) minor side, generic (0.8, 0.5, -0.3)", {1, 2, 3}, {0.8, 0.5, -0.3}},
        {"seed J, major side near middle (0.01, -0.9, 0.02)", {0.9144, 1.098, 1.66}, {0.01, -0.9, 0.02}},
        {"seed J, minor side near middle (-0.03, 0.9, 0.01)", {0.9144, 1.098, 1.66}, {-0.03, 0.9, 0.01}},
        {"J=(3,1,2) major (axis 1) side (0.06, 0.02, 1)", {3, 1, 2}, {0.06, 0.02, 1}},
        {"J=(3,1,2) minor (axis 2) side (-0.02, 0.06, 1)", {3, 1, 2}, {-0.02, 0.06, 1}},
    };
    double inv = 0;
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
        double d = fmax(compare(C[i].J, C[i].w0, 100, &inv), compare(C[i].J, C[i].w0, -100, &inv));
        CHECK_LE(d, TOL_REF, C[i].name);
    }
    CHECK_LE(inv, TOL_INV, "separatrix sides, relative drift of 2E, |Pi|");
}

/* exactly on the separatrix (S = I1 w1^2 (I1-I2) + I3 w3^2 (I3-I2) = 0 in floating point):
 * J = (1,3,6), w0 = (3a, b, a). The reference leaves the unstable manifold like e^{nu t}, so it is
 * compared on |t| <= 8 only; beyond, the formula tends to the middle axis, +-M/I2 e2. */
static void test_on_separatrix(void **state)
{
    (void)state;
    double J[3] = {1, 3, 6}, inv = 0, worst = 0;
    static const double W[4][3] = {{0.75, 0.5, 0.25}, {-0.75, 0.5, 0.25}, {0.75, -0.5, 0.25}, {0.75, 0.5, -0.25}};
    for (int i = 0; i < 4; i++) {
        worst = fmax(worst, fmax(compare(J, W[i], 8, &inv), compare(J, W[i], -8, &inv)));
        double wp[3], wm[3], M = casimir(J, W[i]);
        assert_int_equal(lf_exact_free_body(J, W[i], 200, wp, NULL), LF_OK);
        assert_int_equal(lf_exact_free_body(J, W[i], -200, wm, NULL), LF_OK);
        /* approaches the saddle from opposite sides */
        assert_true(fabs(wp[0]) < 1e-30 && fabs(wp[2]) < 1e-30 && fabs(wm[0]) < 1e-30 && fabs(wm[2]) < 1e-30);
        assert_true(fabs(fabs(wp[1]) - M / 3) < 1e-15 && fabs(wp[1] + wm[1]) < 1e-15);
    }
    /* the same with permuted axes: J = (6,1,3) */
    double Jp[3] = {6, 1, 3}, wp0[3] = {0.25, 0.75, 0.5};
    worst = fmax(worst, fmax(compare(Jp, wp0, 8, &inv), compare(Jp, wp0, -8, &inv)));
    CHECK_LE(worst, 1e-12, "on the separatrix (sech/tanh), |t| <= 8");
    CHECK_LE(inv, TOL_INV, "on the separatrix, relative drift of 2E, |Pi|");
}

/* two equal moments (cos/sin): oblate and prolate, each position of the symmetry axis */
static void test_axisymmetric(void **state)
{
    (void)state;
    static const double JJ[6][3] = {{2, 2, 4}, {1, 1, 0.5}, {3, 1, 3}, {0.7, 2, 0.7}, {5, 2, 2}, {0.25, 1, 1}};
    double w0[3] = {0.3, -0.7, 0.55}, inv = 0, worst = 0;
    for (int i = 0; i < 6; i++) worst = fmax(worst, fmax(compare(JJ[i], w0, 100, &inv), compare(JJ[i], w0, -100, &inv)));
    CHECK_LE(worst, TOL_REF, "axisymmetric, 3 oblate + 3 prolate bodies");
    /* nearly axisymmetric: the elliptic branch with m ~ 1e-12 joins the cos/sin one */
    double Jn[3] = {2, 2 * (1 + 1e-12), 4}, w[3], wa[3], Ja[3] = {2, 2, 4};
    double dn = compare(Jn, w0, 100, &inv);
    CHECK_LE(dn, TOL_REF, "nearly axisymmetric J = (2, 2(1+1e-12), 4) vs reference");
    double dj = 0;
    for (int k = 1; k <= 100; k++) {
        assert_int_equal(lf_exact_free_body(Jn, w0, k, w, NULL), LF_OK);
        assert_int_equal(lf_exact_free_body(Ja, w0, k, wa, NULL), LF_OK);
        dj = fmax(dj, maxabs3(w, wa));
    }
    CHECK_LE(dj, 1e-9, "nearly axisymmetric vs axisymmetric formula, t <= 100");
    CHECK_LE(inv, TOL_INV, "axisymmetric, relative drift of 2E, |Pi|");
}

/* principal-axis spins are stationary (also about the unstable middle axis); a sphere is constant */
static void test_stationary(void **state)
{
    (void)state;
    double worst = 0, w[3];
    for (int a = 0; a < 3; a++) {
        double w0[3] = {0, 0, 0};
        w0[a] = a == 1 ? -1.3 : 0.8;
        worst = fmax(worst, fmax(compare(SEED_J, w0, 100, NULL), compare(SEED_J, w0, -100, NULL)));
        assert_int_equal(lf_exact_free_body(SEED_J, w0, 37.5, w, NULL), LF_OK);
        assert_true(w[0] == w0[0] && w[1] == w0[1] && w[2] == w0[2]);
    }
    CHECK_LE(worst, TOL_REF, "principal-axis spins (major, middle, minor)");
    double Js[3] = {1.5, 1.5, 1.5}, w0[3] = {0.3, -0.2, 0.9}, z[3] = {0, 0, 0};
    assert_int_equal(lf_exact_free_body(Js, w0, -12.5, w, NULL), LF_OK);
    assert_true(w[0] == w0[0] && w[1] == w0[1] && w[2] == w0[2]);
    assert_int_equal(lf_exact_free_body(SEED_J, z, 3, w, NULL), LF_OK);
    assert_true(w[0] == 0 && w[1] == 0 && w[2] == 0);
    /* tiny off-axis components: no underflow, no NaN, stays at the saddle for t <= 100 */
    double wt[3] = {1e-170, 1, -1e-170};
    CHECK_LE(compare(SEED_J, wt, 100, NULL), 1e-15, "middle axis + 1e-170 perturbation");
}

/* random bodies and initial data (20 seeds), both directions of time */
static void test_random(void **state)
{
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    double worst = 0, inv = 0;
    for (unsigned long seed = 1; seed <= 20; seed++) {
        gsl_rng_set(r, seed);
        double J[3], w0[3];
        for (int i = 0; i < 3; i++) J[i] = 0.2 + 2.8 * gsl_rng_uniform(r);
        for (int i = 0; i < 3; i++) w0[i] = gsl_ran_ugaussian(r);
        double n = sqrt(w0[0] * w0[0] + w0[1] * w0[1] + w0[2] * w0[2]);
        for (int i = 0; i < 3; i++) w0[i] /= n; /* a random direction, |w0| = 1 */
        double d = fmax(compare(J, w0, 100, &inv), compare(J, w0, -100, &inv));
        worst = fmax(worst, d);
    }
    gsl_rng_free(r);
    CHECK_LE(worst, TOL_REF, "20 random bodies J_i in [0.2, 3], |w0| = 1, t in [-100, 100]");
    CHECK_LE(inv, TOL_INV, "random bodies, relative drift of 2E, |Pi|");
}

/* Values of w(t) to ~20 digits from mpmath's Taylor-series ODE solver (mp.dps = 32, tol = 1e-28;
 * w(-t) = -v(t) with v from -w0), independent of GSL; two cases rerun at 40 digits (tol 1e-34) agree
 * to all 21 digits printed. Generator:
 *   f = lambda t, w: [(J[1]-J[2])*w[1]*w[2]/J[0], (J[2]-J[0])*w[2]*w[0]/J[1], (J[0]-J[1])*w[0]*w[1]/J[2]]
 *   sol = mp.odefun(f, 0, [s*mpf(x) for x in w0], tol=mpf(10)**-28, degree=30); s*sol(|t|), s = sign t
 * with J, w0 the exact doubles below. */
enum { SEED003, NEAR_MAJOR, NEAR_MINOR, NEARER_MAJOR, NEARER_MINOR, NEAREST_MAJOR, NEAREST_MINOR, RANDOM10, NHP };
static const struct {
    const char *name;
    double J[3], w0[3];
} HPC[NHP] = {
    {"[K] body", {0.9144, 1.098, 1.66}, {0.45549, 0.82623, 0.03476}},
    {"J=(1,2,3), w0=(0.02, 1, 0.05)     major side", {1, 2, 3}, {0.02, 1, 0.05}},
    {"J=(1,2,3), w0=(0.05, 1, 0.02)     minor side", {1, 2, 3}, {0.05, 1, 0.02}},
    {"J=(1,2,3), w0=(0.002, 1, 0.005)   major side", {1, 2, 3}, {0.002, 1, 0.005}},
    {"J=(1,2,3), w0=(0.005, 1, 0.002)   minor side", {1, 2, 3}, {0.005, 1, 0.002}},
    {"J=(1,2,3), w0=(1e-5, 1, 2e-5)     major side, 1-m = 3e-10", {1, 2, 3}, {1e-5, 1, 2e-5}},
    {"J=(1,2,3), w0=(2e-5, 1, 1e-5)     minor side, 1-m = 2e-10", {1, 2, 3}, {2e-5, 1, 1e-5}},
    {"fast body J=(2.36,1.04,0.258), |w0| = 1.22",
     {2.3596978007815776, 1.0365312437526881, 0.25810545049607753},
     {1, 0.69663841938922677, -0.0025094628127758796}},
};
static const struct {
    int c;
    double t, w[3];
} HP[] = {
    {SEED003, 12.5, {0.756614452958792532195, -0.528575387506156534293, -0.258632735236395685108}},
    {SEED003, 25.0, {0.83276270383826756504, -0.38167235964788457025, 0.297776034077908139258}},
    {SEED003, 50.0, {0.547760483622965501868, -0.761826466566054820095, -0.133666701978534818521}},
    {SEED003, 75.0, {0.64733553517471209741, 0.67000032950633104255, -0.198196304110813732242}},
    {SEED003, 100.0, {0.723500222936093272708, 0.577532521893248317796, 0.240978777638199646224}},
    {SEED003, -12.5, {0.616305429881108338868, -0.701585797996288276393, 0.179514807057542739238}},
    {SEED003, -25.0, {0.906672920557937179888, -0.0602656420886373421317, -0.334374016937598647282}},
    {SEED003, -50.0, {0.46934187907427838243, -0.817619808540341154143, 0.0592756513594100169647}},
    {SEED003, -75.0, {0.788696043775796051601, 0.473938664651875800701, 0.275340436565019852643}},
    {SEED003, -100.0, {0.587140121760992205386, 0.728698579912905908609, -0.160963791625584992985}},
    {NEAR_MAJOR, 12.5, {-0.0667886829695884769125, -0.997967570528816232919, 0.062077178234872002132}},
    {NEAR_MAJOR, 25.0, {0.129762943994929033167, 0.991746730957944177073, 0.0893279008937131012998}},
    {NEAR_MAJOR, 50.0, {0.3649461709343874604, 0.931243411960765953426, 0.216245005861153667189}},
    {NEAR_MAJOR, 75.0, {0.811435427414997732506, 0.584784188513882398288, 0.471001575674703397819}},
    {NEAR_MAJOR, 100.0, {0.951435101744970133166, -0.308498374659475849045, 0.55146131711797086247}},
    {NEAR_MAJOR, -12.5, {0.0218941342038240749589, -0.999960322656586680209, 0.0502638143947679988669}},
    {NEAR_MAJOR, -25.0, {-0.0691453413172371146601, 0.997807056386214770276, 0.0629313865144074163165}},
    {NEAR_MAJOR, -50.0, {-0.228366696182389858847, 0.973780597503739568674, 0.140536291784079692391}},
    {NEAR_MAJOR, -75.0, {-0.578763270069698309034, 0.815740814976319213911, 0.337671893402343326334}},
    {NEAR_MAJOR, -100.0, {-0.988562940653682473061, 0.152129262031155152768, 0.572816633730159799508}},
    {NEAR_MINOR, 12.5, {0.368286571047143461812, -0.931055853097083188883, -0.211608914756808429195}},
    {NEAR_MINOR, 25.0, {0.872741591072188488081, -0.490736299057635359871, 0.503447410291354752228}},
    {NEAR_MINOR, 50.0, {0.0369236092280268607849, -1.00056816213668120589, -0.0045953932883570158632}},
    {NEAR_MINOR, 75.0, {0.996435766227419537607, -0.0980600009319565625131, -0.574915714465237845714}},
    {NEAR_MINOR, 100.0, {0.0392127493905680154927, 1.00048106443112280825, -0.00890018192262555276722}},
    {NEAR_MINOR, -12.5, {0.073652920055683927162, -0.998536552844847554412, 0.037079880585608540318}},
    {NEAR_MINOR, -25.0, {0.566753980215755609216, 0.825402887025238663097, -0.326552739023066584087}},
    {NEAR_MINOR, -50.0, {0.0838205915230769228356, -0.99773448794592716804, -0.0436878761339211616105}},
    {NEAR_MINOR, -75.0, {0.321331879695653801834, -0.948285728613089416792, 0.184349466059024363904}},
    {NEAR_MINOR, -100.0, {0.151997636632431191435, 0.989644743561120225392, 0.0852511613642195262617}},
    {NEARER_MAJOR, 12.5, {-0.738190144447817930878, -0.674595664557748027363, 0.42622204282114516262}},
    {NEARER_MAJOR, 25.0, {0.0267762657368432931644, -0.999643452233440056505, 0.0162066694790555091847}},
    {NEARER_MAJOR, 50.0, {-0.222992159813642456766, 0.974822289784987908984, 0.128836463961557428127}},
    {NEARER_MAJOR, 75.0, {0.997403472697939779048, -0.0720438245104332157231, 0.575871712377536941712}},
    {NEARER_MAJOR, 100.0, {-0.256557150191194322617, -0.966531131772677542113, 0.148203206571503304808}},
    {NEARER_MAJOR, -12.5, {0.511968165267162543599, -0.859006750702795897721, 0.295624988934192694644}},
    {NEARER_MAJOR, -25.0, {-0.0434764610285018301579, -0.99905645352824640146, 0.0255682267900535645674}},
    {NEARER_MAJOR, -50.0, {0.350105837439408287275, 0.936712283783473514455, 0.202192233125763580106}},
    {NEARER_MAJOR, -75.0, {-0.925636059480153729033, 0.378420249709305735848, 0.534438370194963544014}},
    {NEARER_MAJOR, -100.0, {0.161876174773974686592, -0.986813104919338614944, 0.0935857823237668202708}},
    {NEARER_MINOR, 12.5, {0.821431515683419382899, 0.570329084864203937071, -0.474249138097252164673}},
    {NEARER_MINOR, 25.0, {0.00396457451426908667934, -1.00000464106369066793, -0.000951814246442368963412}},
    {NEARER_MINOR, 50.0, {0.00360738823092198923235, 1.000005993357115538, 0.0000664576270879386964394}},
    {NEARER_MINOR, 75.0, {0.00386733931971267299992, -1.00000502183068371045, 0.000807529857816555669814}},
    {NEARER_MINOR, 100.0, {0.00478889625000737727572, 1.00000103323581954451, -0.00181966364046900345222}},
    {NEARER_MINOR, -12.5, {0.619284703502682341113, -0.785182434856762968143, 0.357538130363930637502}},
    {NEARER_MINOR, -25.0, {0.0068907820283420089236, -0.999988758498333259534, -0.00339032333571697406676}},
    {NEARER_MINOR, -50.0, {0.00996031915329605471616, 0.999962895332804078022, 0.00536059566452324511906}},
    {NEARER_MINOR, -75.0, {0.0147334948475561620363, -0.999903957452703072372, -0.00824774454872288047433}},
    {NEARER_MINOR, -100.0, {0.0220260527890845372624, 0.999769900026267274739, 0.012545211589387917034}},
    {NEAREST_MAJOR, 12.5, {-0.0167821679480539378226, 0.99985916955287423672, 0.00968920810380788064361}},
    {NEAREST_MAJOR, 25.0, {-0.173627974328774411669, -0.984811315242918222782, 0.100244159546435332647}},
    {NEAREST_MAJOR, 50.0, {0.00291667583543357938933, -0.999995746541989546393, 0.00168405244663006940452}},
    {NEAREST_MAJOR, 75.0, {0.000738647395093971671674, 0.999999727249975664157, 0.000426887953401947494435}},
    {NEAREST_MAJOR, 100.0, {-0.61697548225146801985, 0.786982372356947058974, 0.356210961275960517277}},
    {NEAREST_MAJOR, -12.5, {0.0303986315256339622276, 0.999537854861619902323, 0.0175506685402699783114}},
    {NEAREST_MAJOR, -25.0, {0.0963481958311934078601, -0.995347690638841038961, 0.0556266600948561797237}},
    {NEAREST_MAJOR, -50.0, {-0.00528410300899867104917, -0.999986039080241505344, 0.00305083838803417059747}},
    {NEAREST_MAJOR, -75.0, {-0.00040725101102928179567, 0.99999991712330357354, 0.000235904914449566736844}},
    {NEAREST_MAJOR, -100.0, {0.899187392079655269424, 0.437563748526986988615, 0.519146083222250553191}},
    {NEAREST_MINOR, 12.5, {0.00182505436497004264757, 0.999998334786895984556, -0.00105367981143802339807}},
    {NEAREST_MINOR, 25.0, {0.976787771233323752821, -0.214209361067708668116, -0.563948682633140541894}},
    {NEAREST_MINOR, 50.0, {0.0000297009922862360832571, -0.999999999758925528577, 0.000016146712181195023946}},
    {NEAREST_MINOR, 75.0, {0.0746532042810302400487, 0.99720955645770601903, 0.0431010472008327262484}},
    {NEAREST_MINOR, 100.0, {0.000620603542050659821007, 0.999999807625603293133, -0.000358259103818184031687}},
    {NEAREST_MINOR, -12.5, {0.0254154538894814959636, 0.999676975379343044664, 0.014673618008843400687}},
    {NEAREST_MINOR, -25.0, {0.115131762499045456864, -0.99335022910545673776, 0.0664713538203653804662}},
    {NEAREST_MINOR, -50.0, {0.000401667476140035069109, -0.999999919531616068067, -0.000231830945150919287656}},
    {NEAREST_MINOR, -75.0, {0.00536731353449407189867, 0.999985596068974603884, -0.00309881453556911269013}},
    {NEAREST_MINOR, -100.0, {0.00864317344711654102313, 0.999962647278768638091, 0.00499013517642359498579}},
    {RANDOM10, 12.5, {1.0020342501112680026, -0.678434904816942876785, -0.251586762144943036916}},
    {RANDOM10, 25.0, {1.00779525130067294613, 0.623786485026742425184, 0.493183625143944450994}},
    {RANDOM10, 50.0, {1.0251062670398654214, 0.415711129194617012228, 0.888883749024685948989}},
    {RANDOM10, 75.0, {1.03774112302187647674, 0.112352437533418803667, 1.09322942722974836478}},
    {RANDOM10, 100.0, {1.03500907474476179367, -0.217779672849525270656, 1.05221134855053276751}},
    {RANDOM10, -12.5, {1.00211410754460420972, -0.677709560002645403685, 0.256482060644331072222}},
    {RANDOM10, -25.0, {1.00793836570563997641, 0.622363660421676101505, -0.497707878249131841501}},
    {RANDOM10, -50.0, {1.02527733546608347908, 0.413110075138009693738, -0.891944580606886474245}},
    {RANDOM10, -75.0, {1.03779726781973692116, 0.109118521356075174244, -1.09405735237910976377}},
    {RANDOM10, -100.0, {1.03490216672725278895, -0.220880226964289201694, -1.05057595167573106959}},
};

/* the formula against the 32-digit values: near the separatrix too (1 - m down to 2e-10, where the
 * Landen steps in exact.c matter: calling gsl_sf_elljac_e with m alone was 8e-8 off there) */
static void test_high_precision(void **state)
{
    (void)state;
    double worst[NHP] = {0};
    for (size_t i = 0; i < sizeof HP / sizeof HP[0]; i++) {
        double w[3];
        assert_int_equal(lf_exact_free_body(HPC[HP[i].c].J, HPC[HP[i].c].w0, HP[i].t, w, NULL), LF_OK);
        worst[HP[i].c] = fmax(worst[HP[i].c], maxabs3(w, HP[i].w));
    }
    for (int c = 0; c < NHP; c++) {
        char label[128];
        snprintf(label, sizeof label, "vs 32 digits, |t| <= 100: %s", HPC[c].name);
        CHECK_LE(worst[c], 1e-13, label);
    }
}

/* w0 a hair off the middle axis (seed J, w0 = (e, 1, -e)): the off-axis components, growing like
 * e^{nu |t|}, to relative accuracy against 32-digit values (mpmath as above), also for e = 1e-170 where
 * 1 - m ~ 1e-340 underflows (exact.c works with k' = sqrt(1 - m) instead) */
static void test_near_saddle_relative(void **state)
{
    (void)state;
    static const struct {
        double e, t, w[3];
    } C[] = {
        {1e-30, 100, {3.53261571809428314706e-19, 1.0, -1.4985755489419295406e-19}},
        {1e-30, -100, {-1.42818706175239517153e-19, 1.0, -6.05853107399958434941e-20}},
        {1e-170, 100, {3.53261571809428279384e-159, 1.0, -1.49857554894192939075e-159}},
        {1e-170, -100, {-1.42818706175239502872e-159, 1.0, -6.05853107399958374362e-160}},
    };
    double worst = 0;
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
        double w0[3] = {C[i].e, 1, -C[i].e}, w[3];
        assert_int_equal(lf_exact_free_body(SEED_J, w0, C[i].t, w, NULL), LF_OK);
        assert_true(fabs(w[1] - 1) <= 2.3e-16);
        worst = fmax(worst, fmax(fabs(w[0] / C[i].w[0] - 1), fabs(w[2] / C[i].w[2] - 1)));
    }
    CHECK_LE(worst, 1e-12, "w0 = (e, 1, -e), e = 1e-30, 1e-170: relative error of w1, w3");
}

/* scalings: w(t; c w0) = c w(c t; w0) and J -> c J changes nothing */
static void test_scaling(void **state)
{
    (void)state;
    double worst = 0, a[3], b[3], Jc[3], wc[3];
    const double cs[] = {1e-150, 3e-7, 0.37, 7.0, 1e120};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        double c = cs[i];
        for (int k = 0; k < 3; k++) wc[k] = SEED_W[k] * c, Jc[k] = SEED_J[k] * c;
        for (int s = 1; s <= 10; s++) {
            double t = 7.3 * s;
            assert_int_equal(lf_exact_free_body(SEED_J, wc, t / c, a, NULL), LF_OK);
            assert_int_equal(lf_exact_free_body(SEED_J, SEED_W, t, b, NULL), LF_OK);
            for (int k = 0; k < 3; k++) worst = fmax(worst, fabs(a[k] / c - b[k]));
            assert_int_equal(lf_exact_free_body(Jc, SEED_W, t, a, NULL), LF_OK);
            worst = fmax(worst, maxabs3(a, b));
        }
    }
    CHECK_LE(worst, 1e-12, "scaling of w0 (1e-150 .. 1e120) and of J");
}

/* bad input is an error with a message naming the value */
static void test_errors(void **state)
{
    (void)state;
    lf_error e;
    double w[3], J[3] = {1, 2, 3};
    J[1] = 0;
    assert_int_equal(lf_exact_free_body(J, SEED_W, 1, w, &e), LF_EINVAL);
    assert_non_null(strstr(e.msg, "J[2]"));
    J[1] = -2;
    assert_int_equal(lf_exact_free_body(J, SEED_W, 1, w, &e), LF_EINVAL);
    J[1] = NAN;
    assert_int_equal(lf_exact_free_body(J, SEED_W, 1, w, &e), LF_EINVAL);
    J[1] = 2;
    assert_int_equal(lf_exact_free_body(J, SEED_W, NAN, w, &e), LF_EINVAL);
    assert_non_null(strstr(e.msg, "not finite"));
    assert_int_equal(lf_exact_free_body(J, SEED_W, INFINITY, w, &e), LF_EINVAL);
    double wb[3] = {1, INFINITY, 0};
    assert_int_equal(lf_exact_free_body(J, wb, 1, w, &e), LF_EINVAL);
    assert_non_null(strstr(e.msg, "omega0[2]"));
    double wh[3] = {1e300, 1, 1};
    assert_int_equal(lf_exact_free_body(J, wh, 1e300, w, &e), LF_EDOMAIN);
    assert_int_equal(lf_exact_free_body(J, SEED_W, 1, w, NULL), LF_OK);
    /* aliasing: w == w0 */
    double ww[3] = {SEED_W[0], SEED_W[1], SEED_W[2]}, ref[3];
    assert_int_equal(lf_exact_free_body(SEED_J, SEED_W, 5, ref, NULL), LF_OK);
    assert_int_equal(lf_exact_free_body(SEED_J, ww, 5, ww, NULL), LF_OK);
    assert_true(maxabs3(ww, ref) == 0);
}

/* ================================================================ the flow, attitude included */

static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

/* R' = R hat(w) (row i of R' = r_i x w), J w' = (J w) x w */
static int emb_rhs(double t, const double y[], double f[], void *par)
{
    (void)t;
    const double *J = par, *w = y + 9;
    for (int i = 0; i < 3; i++) {
        const double *r = y + 3 * i;
        f[3 * i] = r[1] * w[2] - r[2] * w[1];
        f[3 * i + 1] = r[2] * w[0] - r[0] * w[2];
        f[3 * i + 2] = r[0] * w[1] - r[1] * w[0];
    }
    double P[3] = {J[0] * w[0], J[1] * w[1], J[2] * w[2]};
    f[9] = (P[1] * w[2] - P[2] * w[1]) / J[0];
    f[10] = (P[2] * w[0] - P[0] * w[2]) / J[1];
    f[11] = (P[0] * w[1] - P[1] * w[0]) / J[2];
    return GSL_SUCCESS;
}

/* GSL rk8pd (gsl_odeiv2 driver) from (R0, w0) at t = 0 through the monotone times[0..n-1] */
static void rk8pd_solve(const double J[3], const double R0[9], const double w0[3], const double *times, int n,
                        double *Rout, double *wout, double tol)
{
    double Jc[3] = {J[0], J[1], J[2]}, y[12], t = 0;
    gsl_odeiv2_system sys = {emb_rhs, NULL, 12, Jc};
    gsl_odeiv2_driver *d = gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, times[n - 1] < 0 ? -1e-3 : 1e-3,
                                                         tol, tol);
    memcpy(y, R0, 9 * sizeof(double));
    memcpy(y + 9, w0, 3 * sizeof(double));
    for (int k = 0; k < n; k++) {
        assert_int_equal(gsl_odeiv2_driver_apply(d, &t, times[k], y), GSL_SUCCESS);
        memcpy(Rout + 9 * k, y, 9 * sizeof(double));
        memcpy(wout + 3 * k, y + 9, 3 * sizeof(double));
    }
    gsl_odeiv2_driver_free(d);
}

/* Taylor series of order TN in long double (x87: 64-bit mantissa, eps 5.4e-20) of the same equations,
 * the coefficients by Cauchy products (the right-hand side is quadratic), steps chosen so that the
 * last two terms are below 1e-21 relative; rounding error ~1e-19 per step. */
#define TN 28
static void taylor_solve(const double J[3], const double R0[9], const double w0[3], const double *times, int n,
                         double *Rout, double *wout)
{
    long double y[12], c[TN + 1][12], t = 0;
    long double k1 = ((long double)J[1] - J[2]) / J[0], k2 = ((long double)J[2] - J[0]) / J[1],
                k3 = ((long double)J[0] - J[1]) / J[2];
    for (int i = 0; i < 9; i++) y[i] = R0[i];
    for (int i = 0; i < 3; i++) y[9 + i] = w0[i];
    for (int k = 0; k < n; k++) {
        long double T = times[k];
        int dir = T >= t ? 1 : -1;
        while ((T - t) * dir > 0) {
            for (int i = 0; i < 12; i++) c[0][i] = y[i];
            for (int q = 0; q < TN; q++) {
                long double f[12] = {0};
                for (int l = 0; l <= q; l++) {
                    const long double *a = c[l], *b = c[q - l], *wb = b + 9;
                    for (int i = 0; i < 3; i++) {
                        const long double *r = a + 3 * i;
                        f[3 * i] += r[1] * wb[2] - r[2] * wb[1];
                        f[3 * i + 1] += r[2] * wb[0] - r[0] * wb[2];
                        f[3 * i + 2] += r[0] * wb[1] - r[1] * wb[0];
                    }
                    f[9] += a[10] * b[11];
                    f[10] += a[11] * b[9];
                    f[11] += a[9] * b[10];
                }
                f[9] *= k1, f[10] *= k2, f[11] *= k3;
                for (int i = 0; i < 12; i++) c[q + 1][i] = f[i] / (q + 1);
            }
            long double m1 = 0, m2 = 0, scale = 0;
            for (int i = 0; i < 12; i++) {
                m1 = fmaxl(m1, fabsl(c[TN][i]));
                m2 = fmaxl(m2, fabsl(c[TN - 1][i]));
                scale = fmaxl(scale, fabsl(y[i]));
            }
            long double h = 0.5L * fminl(m1 > 0 ? powl(1e-21L * scale / m1, 1.0L / TN) : 1e3L,
                                         m2 > 0 ? powl(1e-21L * scale / m2, 1.0L / (TN - 1)) : 1e3L);
            int last = h >= (T - t) * dir;
            long double hs = last ? T - t : h * dir;
            for (int i = 0; i < 12; i++) {
                long double sum = c[TN][i];
                for (int q = TN - 1; q >= 0; q--) sum = sum * hs + c[q][i];
                y[i] = sum;
            }
            t = last ? T : t + hs;
        }
        for (int i = 0; i < 9; i++) Rout[9 * k + i] = (double)y[i];
        for (int i = 0; i < 3; i++) wout[3 * k + i] = (double)y[9 + i];
    }
}

enum { REF_RK8PD, REF_TAYLOR };
#define NF 100 /* sample times per comparison */

/* max over t_k = T k / NF of |R - R_ref|_max (into *eR) and |w - w_ref|_max / |w0|_max (into *ew), R0 = I */
static void flow_compare(const double J[3], const double w0[3], double T, int ref, double *eR, double *ew)
{
    static double times[NF], Rr[9 * NF], wr[3 * NF];
    for (int k = 0; k < NF; k++) times[k] = T * (k + 1) / NF;
    if (ref == REF_RK8PD) rk8pd_solve(J, I3, w0, times, NF, Rr, wr, 1e-14);
    else taylor_solve(J, I3, w0, times, NF, Rr, wr);
    double sw = fmax(fabs(w0[0]), fmax(fabs(w0[1]), fabs(w0[2])));
    if (sw == 0) sw = 1;
    for (int k = 0; k < NF; k++) {
        double R[9], w[3];
        lf_error e;
        if (lf_exact_free_body_flow(J, NULL, w0, times[k], R, w, &e) != LF_OK) fail_msg("%s", e.msg);
        double dR = maxdiff(9, R, Rr + 9 * k), dw = maxdiff(3, w, wr + 3 * k) / sw;
        if (!(dR <= *eR)) *eR = dR;
        if (!(dw <= *ew)) *ew = dw;
    }
}

/* the regimes of issue 10 item 2, each with a time span */
static const struct {
    const char *name;
    double J[3], w0[3], T;
} REG[] = {
    {"[K] body (McLachlan-Zanna)", {0.9144, 1.098, 1.66}, {0.45549, 0.82623, 0.03476}, 100},
    {"J=(1,2,3) major side, generic", {1, 2, 3}, {0.3, 0.5, 0.8}, 100},
    {"J=(1,2,3) minor side, generic", {1, 2, 3}, {0.8, 0.5, -0.3}, 100},
    {"J=(1,2,3) major side near middle axis", {1, 2, 3}, {0.02, 1, 0.05}, 50},
    {"J=(1,2,3) minor side near middle axis", {1, 2, 3}, {0.06, 1, 0.02}, 50},
    {"J=(3,1,2) (other ordering), major side", {3, 1, 2}, {0.06, 0.02, 1}, 100},
    {"J=(2,3,1) (other ordering), minor side", {2, 3, 1}, {0.5, -0.3, 0.8}, 100},
    {"on the separatrix J=(1,3,6), w0=(3a,b,a)", {1, 3, 6}, {0.75, 0.5, 0.25}, 8},
    {"on the separatrix, permuted J=(6,1,3)", {6, 1, 3}, {0.25, 0.75, 0.5}, 8},
    {"axisymmetric oblate J=(2,2,4)", {2, 2, 4}, {0.3, -0.7, 0.55}, 100},
    {"axisymmetric prolate J=(0.7,2,0.7)", {0.7, 2, 0.7}, {0.3, -0.7, 0.55}, 100},
    {"axisymmetric J=(5,2,2), w0 _|_ axis", {5, 2, 2}, {0, 0.6, -0.8}, 100},
    {"nearly axisymmetric J=(2,2(1+1e-12),4)", {2, 2 * (1 + 1e-12), 4}, {0.3, -0.7, 0.55}, 100},
    {"principal-axis spin, major", {0.9144, 1.098, 1.66}, {0, 0, 0.8}, 100},
    {"principal-axis spin, middle (unstable)", {0.9144, 1.098, 1.66}, {0, -1.3, 0}, 100},
    {"principal-axis spin, minor", {0.9144, 1.098, 1.66}, {0.8, 0, 0}, 100},
    {"near major-axis spin w0=(1e-9,1e-9,1)", {1, 2, 3}, {1e-9, 1e-9, 1}, 100},
    {"spherical body J=(1.5,1.5,1.5)", {1.5, 1.5, 1.5}, {0.3, -0.2, 0.9}, 100},
    {"at rest w0 = 0", {1, 2, 3}, {0, 0, 0}, 100},
    {"|w0| = 1e-150 (seed body)", {0.9144, 1.098, 1.66}, {0.45549e-150, 0.82623e-150, 0.03476e-150}, 1e152},
};
#define NREG (sizeof REG / sizeof REG[0])

/* every regime against GSL rk8pd at rtol = atol = 1e-14, |t| <= 10 (beyond, rk8pd's own error grows
 * past 1e-13: 1e-12 at t = 100 on the principal-axis spin, whose exact attitude is R0 exp(t hat(w0))) */
static void test_flow_rk8pd(void **state)
{
    (void)state;
    double eR = 0, ew = 0;
    for (size_t i = 0; i < NREG; i++) {
        double r = 0, w = 0, T = REG[i].T > 1e3 ? 1e151 : 10;
        flow_compare(REG[i].J, REG[i].w0, T, REF_RK8PD, &r, &w);
        flow_compare(REG[i].J, REG[i].w0, -T, REF_RK8PD, &r, &w);
        printf("    %-45s |t| <= %-6g |R - R_rk8pd| %.1e  |w - w_rk8pd|/|w0| %.1e\n", REG[i].name, T, r, w);
        eR = fmax(eR, r), ew = fmax(ew, w);
    }
    CHECK_LE(eR, 1e-13, "all regimes vs rk8pd, |t| <= 10: max |R - R_ref|");
    CHECK_LE(ew, 1e-13, "all regimes vs rk8pd, |t| <= 10: max |w - w_ref| / |w0|");
}

/* every regime against the long-double Taylor integrator over |t| <= 100 (both directions) */
static void test_flow_taylor(void **state)
{
    (void)state;
    if (LDBL_MANT_DIG < 64) skip();
    double eR = 0, ew = 0;
    for (size_t i = 0; i < NREG; i++) {
        double r = 0, w = 0;
        flow_compare(REG[i].J, REG[i].w0, REG[i].T, REF_TAYLOR, &r, &w);
        flow_compare(REG[i].J, REG[i].w0, -REG[i].T, REF_TAYLOR, &r, &w);
        printf("    %-45s |t| <= %-6g |R - R_tay| %.1e  |w - w_tay|/|w0| %.1e\n", REG[i].name, REG[i].T, r, w);
        eR = fmax(eR, r), ew = fmax(ew, w);
    }
    /* all 6 orderings of J (w0 permuted alike) x 8 sign patterns of w0, seed body, t in [0, 50] */
    static const int P[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
    double pr = 0, pw = 0;
    for (int p = 0; p < 6; p++)
        for (int sgn = 0; sgn < 8; sgn++) {
            double J[3], w0[3];
            permute(P[p], SEED_J, J);
            permute(P[p], SEED_W, w0);
            for (int k = 0; k < 3; k++)
                if (sgn & (1 << k)) w0[k] = -w0[k];
            flow_compare(J, w0, sgn & 1 ? -50 : 50, REF_TAYLOR, &pr, &pw);
        }
    printf("    6 orderings of J x 8 sign patterns of w0 (seed body), |t| <= 50: |R| %.1e |w| %.1e\n", pr, pw);
    CHECK_LE(fmax(eR, pr), 5e-14, "all regimes vs long-double Taylor, |t| <= 100: max |R - R_ref|");
    CHECK_LE(fmax(ew, pw), 5e-14, "all regimes vs long-double Taylor, |t| <= 100: max |w - w_ref|/|w0|");
}

/* Elongated bodies (needles): the rotation angle psi about the momentum is assembled as
 * (M/A3) t + correction (exact.h), and for a body circulating around its minor axis the two terms
 * cancel up to a factor I_max/I_min: the error grows like eps (I_max/I_min) |psi|. */
static void test_flow_elongated(void **state)
{
    (void)state;
    if (LDBL_MANT_DIG < 64) skip();
    static const struct {
        const char *name;
        double J[3], w0[3], T;
    } C[] = {
        {"needle J=(0.01,0.95,1) around the major axis", {0.01, 0.95, 1}, {0.1, 0.3, 1}, 100},
        {"needle J=(0.01,0.95,1) around the minor axis", {0.01, 0.95, 1}, {1, 0.3, 0.01}, 20},
        {"nearly axisymmetric needle J=(0.05,1,1.001)", {0.05, 1, 1.001}, {0.1, 0.3, 1}, 50},
    };
    double eR = 0, ew = 0;
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
        double r = 0, w = 0;
        flow_compare(C[i].J, C[i].w0, C[i].T, REF_TAYLOR, &r, &w);
        flow_compare(C[i].J, C[i].w0, -C[i].T, REF_TAYLOR, &r, &w);
        printf("    %-45s |t| <= %-4g |R - R_tay| %.1e  |w - w_tay|/|w0| %.1e\n", C[i].name, C[i].T, r, w);
        eR = fmax(eR, r), ew = fmax(ew, w);
    }
    CHECK_LE(eR, 1e-12, "needles (I_max/I_min = 100) vs long-double Taylor: max |R - R_ref|");
    CHECK_LE(ew, 1e-13, "needles vs long-double Taylor: max |w - w_ref|/|w0|");
}

/* 1000 periods of the w motion (J = (1,2,3), w0 = (0.3,0.5,0.8): period 7.7, t = 7706) against the
 * long-double Taylor integrator. The phase nu t and the rotation angle psi carry the rounding of the
 * frequencies (relative eps), so the error grows like eps |psi|: the attainable accuracy in double. */
static void test_flow_long_time(void **state)
{
    (void)state;
    if (LDBL_MANT_DIG < 64) skip();
    static const double J[3] = {1, 2, 3}, w0[3] = {0.3, 0.5, 0.8};
    lf_exact_fb_plan p;
    assert_int_equal(lf_exact_fb_plan_init(&p, J, w0, NULL), LF_OK);
    /* period of w: 4K/nu (the plan's scaled units: w0 scaled by 2^-ew, t by 2^ew) */
    double per = 4 * p.K / p.nu * ldexp(1.0, -p.ew), T = 1000 * per;
    enum { NL = 8 };
    double times[NL], Rr[9 * NL], wr[3 * NL], eR = 0, ew = 0, psimax = 0;
    for (int k = 0; k < NL; k++) times[k] = T * (k + 1) / NL;
    taylor_solve(J, I3, w0, times, NL, Rr, wr);
    for (int k = 0; k < NL; k++) {
        double R[9], w[3];
        assert_int_equal(lf_exact_free_body_flow(J, NULL, w0, times[k], R, w, NULL), LF_OK);
        eR = fmax(eR, maxdiff(9, R, Rr + 9 * k));
        ew = fmax(ew, maxdiff(3, w, wr + 3 * k));
    }
    psimax = p.rate * T; /* the leading part (M/A3) t of psi */
    printf("    period %.4f, T = 1000 periods = %.1f, (M/A3) T = %.0f rad, eps (M/A3) T = %.1e\n", per, T, psimax,
           DBL_EPSILON * psimax);
    CHECK_LE(eR, 1e-11, "1000 periods vs long-double Taylor: max |R - R_ref|");
    CHECK_LE(ew, 1e-11, "1000 periods vs long-double Taylor: max |w - w_ref|");
    /* and backwards over 200 periods */
    double tb[2] = {-100 * per, -200 * per}, Rb[18], wb[6], eb = 0;
    taylor_solve(J, I3, w0, tb, 2, Rb, wb);
    for (int k = 0; k < 2; k++) {
        double R[9], w[3];
        assert_int_equal(lf_exact_free_body_flow(J, NULL, w0, tb[k], R, w, NULL), LF_OK);
        eb = fmax(eb, fmax(maxdiff(9, R, Rb + 9 * k), maxdiff(3, w, wb + 3 * k)));
    }
    CHECK_LE(eb, 3e-12, "-100 and -200 periods: max |R - R_ref|, |w - w_ref|");
}

static double orth_err(const double R[9])
{
    double E = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s = R[i] * R[j] + R[3 + i] * R[3 + j] + R[6 + i] * R[6 + j] - (i == j);
            E += s * s;
        }
    return sqrt(E);
}

static double det3(const double R[9])
{
    return R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) + R[2] * (R[3] * R[7] - R[4] * R[6]);
}

/* R orthogonal, det R = 1, the spatial momentum R J w and 2E, |Pi| conserved: random bodies (J_i in
 * [0.05, 3]), random directions |w0| = 1 and random R0, t up to 1e4 */
static void test_flow_invariants(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(7);
    double orth = 0, orth0 = 0, det = 0, pim = 0, inv = 0;
    for (int k = 0; k < 2000; k++) {
        double J[3], w0[3], R0[9], R[9], w[3];
        for (int i = 0; i < 3; i++) J[i] = 0.05 + 2.95 * gsl_rng_uniform(r);
        if (k % 10 == 0) J[1] = J[0];
        rand_dir(r, w0);
        lf_so3_random(1000 + k, R0, NULL);
        double t = (gsl_rng_uniform(r) - 0.5) * 2 * pow(10, 4 * gsl_rng_uniform(r));
        assert_int_equal(lf_exact_free_body_flow(J, R0, w0, t, R, w, NULL), LF_OK);
        double P0[3] = {J[0] * w0[0], J[1] * w0[1], J[2] * w0[2]}, P[3] = {J[0] * w[0], J[1] * w[1], J[2] * w[2]}, p0[3],
               p[3];
        lf_m3_apply(R0, P0, p0);
        lf_m3_apply(R, P, p);
        orth = fmax(orth, orth_err(R));
        orth0 = fmax(orth0, orth_err(R0));
        det = fmax(det, fabs(det3(R) - 1));
        pim = fmax(pim, maxdiff(3, p, p0) / lf_v3_norm(p0));
        inv = fmax(inv, fmax(fabs(energy2(J, w) - energy2(J, w0)) / energy2(J, w0),
                             fabs(casimir(J, w) - casimir(J, w0)) / casimir(J, w0)));
    }
    gsl_rng_free(r);
    printf("  (the R0 from lf_so3_random: max ||R0^T R0 - I||_F = %.2e; R = R0 D adds its rounding)\n", orth0);
    CHECK_LE(orth, 5e-15, "2000 random flows: max ||R^T R - I||_F");
    CHECK_LE(det, 4e-15, "2000 random flows: max |det R - 1|");
    CHECK_LE(pim, 2e-15, "2000 random flows: max |R J w - R0 J w0| / |R0 J w0|");
    CHECK_LE(inv, 2e-15, "2000 random flows: relative drift of 2E and |Pi|");
}

/* the flow is a flow: R(t1 + t2) = R(t2; R(t1), w(t1)); the plan, the one-shot call and the w-only
 * call agree exactly; R0 enters as R(t; R0) = R0 R(t; I); R may alias R0 and w alias w0 */
static void test_flow_consistency(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(11);
    double comp = 0;
    int exact_ok = 1;
    for (int k = 0; k < 300; k++) {
        double J[3], w0[3], R0[9], R1[9], w1[3], R2[9], w2[3], R[9], w[3];
        for (int i = 0; i < 3; i++) J[i] = 0.2 + 2.8 * gsl_rng_uniform(r);
        if (k % 7 == 0) J[2] = J[1];
        rand_dir(r, w0);
        if (k % 5 == 0) w0[0] *= 1e-4; /* some near the middle / a principal axis */
        lf_so3_random(2000 + k, R0, NULL);
        double t1 = 40 * (gsl_rng_uniform(r) - 0.5), t2 = 40 * (gsl_rng_uniform(r) - 0.5);
        assert_int_equal(lf_exact_free_body_flow(J, R0, w0, t1, R1, w1, NULL), LF_OK);
        assert_int_equal(lf_exact_free_body_flow(J, R1, w1, t2, R2, w2, NULL), LF_OK);
        assert_int_equal(lf_exact_free_body_flow(J, R0, w0, t1 + t2, R, w, NULL), LF_OK);
        comp = fmax(comp, fmax(maxdiff(9, R, R2), maxdiff(3, w, w2)));
        /* plan == one-shot, w-only == flow's w, R0 R(t; I) == R(t; R0), aliasing */
        lf_exact_fb_plan p;
        double Rp[9], wp[3], wo[3], RI[9], RR[9], Ra[9], wa[3];
        assert_int_equal(lf_exact_fb_plan_init(&p, J, w0, NULL), LF_OK);
        assert_int_equal(lf_exact_fb_plan_eval(&p, t1, R0, Rp, wp, NULL), LF_OK);
        assert_int_equal(lf_exact_free_body(J, w0, t1, wo, NULL), LF_OK);
        assert_int_equal(lf_exact_fb_plan_eval(&p, t1, NULL, RI, NULL, NULL), LF_OK);
        lf_m3_mul(R0, RI, RR);
        memcpy(Ra, R0, sizeof Ra);
        memcpy(wa, w0, sizeof wa);
        assert_int_equal(lf_exact_free_body_flow(J, Ra, wa, t1, Ra, wa, NULL), LF_OK);
        exact_ok &= maxdiff(9, Rp, R1) == 0 && maxdiff(3, wp, w1) == 0 && maxdiff(3, wo, w1) == 0 &&
                    maxdiff(9, RR, R1) == 0 && maxdiff(9, Ra, R1) == 0 && maxdiff(3, wa, w1) == 0;
    }
    gsl_rng_free(r);
    CHECK_LE(comp, 5e-14, "300 random: R(t1+t2) vs R(t2; R(t1)), |t1|, |t2| <= 20");
    printf("  plan = one-shot = w-only = R0 R(t; I) = aliased call, bit for bit: %s\n", exact_ok ? "yes" : "NO");
    assert_true(exact_ok);
    /* t = 0 gives the initial state exactly */
    double R[9], w[3], R0[9];
    lf_so3_random(5, R0, NULL);
    assert_int_equal(lf_exact_free_body_flow(SEED_J, R0, SEED_W, 0, R, w, NULL), LF_OK);
    assert_true(maxdiff(9, R, R0) == 0 && maxdiff(3, w, SEED_W) == 0);
    assert_int_equal(lf_exact_free_body_flow(SEED_J, NULL, SEED_W, 0, R, w, NULL), LF_OK);
    assert_true(maxdiff(9, R, I3) == 0);
}

/* issue 13: extreme moments gave a GSL abort or NaN; now a correct finite result or a clear error.
 * Exact answers checked: w(0) = w0; the Euler equation at short times (J2 w2' = (J3 - J1) w3 w1). */
static void test_flow_extreme(void **state)
{
    (void)state;
    lf_error e;
    double R[9], w[3];
    double Ja[3] = {1, 1e-300, 1e300}, Jb[3] = {1, 1e-150, 1e150}, w0[3] = {0, 1, 1};
    assert_int_equal(lf_exact_free_body(Ja, w0, 0, w, &e), LF_OK);
    assert_true(maxdiff(3, w, w0) == 0);
    assert_int_equal(lf_exact_free_body_flow(Ja, NULL, w0, 0, R, w, &e), LF_OK);
    assert_true(maxdiff(3, w, w0) == 0 && maxdiff(9, R, I3) == 0);
    int rc = lf_exact_free_body_flow(Ja, NULL, w0, 1, R, w, &e);
    printf("  J = (1, 1e-300, 1e300), t = 1: %s\n", e.msg);
    assert_int_equal(rc, LF_EDOMAIN);
    assert_non_null(strstr(e.msg, "1e-300"));
    assert_int_equal(lf_exact_free_body(Jb, w0, 0, w, &e), LF_OK);
    assert_true(maxdiff(3, w, w0) == 0);
    rc = lf_exact_free_body(Jb, w0, 1, w, &e);
    printf("  J = (1, 1e-150, 1e150), t = 1: %s\n", e.msg);
    assert_int_equal(rc, LF_EDOMAIN);
    assert_non_null(strstr(e.msg, "t = 1 "));
    /* J = (1, 1e-150, 1e150), w0 = (0.3, 1, 1), t = 1e-240: nu t ~ 1e-15, so over t
     * w2 gains (J3 - J1)/J2 w3 w1 t = 3e299 * 1e-240 = 3e59, w1 and w3 stay (to 1e-15 relative) */
    double wc[3] = {0.3, 1, 1}, t = 1e-240;
    assert_int_equal(lf_exact_free_body_flow(Jb, NULL, wc, t, R, w, &e), LF_OK);
    double w2 = 1 + (1e150 - 1) / 1e-150 * 1 * 0.3 * t;
    double d = fmax(fmax(fabs(w[0] - 0.3) / 0.3, fabs(w[1] - w2) / w2), fabs(w[2] - 1));
    CHECK_LE(d, 1e-13, "J = (1, 1e-150, 1e150), t = 1e-240: relative error vs Euler's equation");
    CHECK_LE(orth_err(R), 1e-15, "J = (1, 1e-150, 1e150): ||R^T R - I||");
    /* fuzz: moments 10^[-150, 150], w0 components 10^[-300, 300] or 0, t 10^[-20, 20]:
     * every call returns either a finite rotation and w, or an error (never NaN/inf, never an abort) */
    gsl_rng *r = new_rng(13);
    int ok = 0, errs = 0, bad = 0;
    double pim = 0;
    for (int k = 0; k < 20000; k++) {
        double J[3], v[3];
        int wide = k % 4 == 0;
        for (int i = 0; i < 3; i++) J[i] = pow(10, (gsl_rng_uniform(r) - 0.5) * (wide ? 300 : 6));
        if (k % 9 == 0) J[1] = J[0];
        if (k % 13 == 0) J[2] = nextafter(J[1], 2 * J[1]);
        for (int i = 0; i < 3; i++)
            v[i] = gsl_rng_uniform(r) < 0.2 ? 0 : (gsl_rng_uniform(r) - 0.5) * pow(10, (gsl_rng_uniform(r) - 0.5) * (wide ? 600 : 6));
        double tt = (gsl_rng_uniform(r) - 0.5) * pow(10, (gsl_rng_uniform(r) - 0.5) * 40);
        if (lf_exact_free_body_flow(J, NULL, v, tt, R, w, &e) != LF_OK) {
            errs++;
            assert_true(strncmp(e.msg, "exact.free_body: ", 17) == 0);
            continue;
        }
        int fin = lf_v3_isfinite(w);
        for (int i = 0; i < 9; i++) fin &= isfinite(R[i]);
        if (!fin) {
            bad++;
            continue;
        }
        ok++;
        double P0[3] = {J[0] * v[0], J[1] * v[1], J[2] * v[2]}, P[3] = {J[0] * w[0], J[1] * w[1], J[2] * w[2]}, p[3];
        lf_m3_apply(R, P, p);
        double s = fmax(fabs(P0[0]), fmax(fabs(P0[1]), fabs(P0[2])));
        if (s > 1e-290 && s < 1e290 && lf_v3_isfinite(p)) pim = fmax(pim, maxdiff(3, p, P0) / s);
    }
    gsl_rng_free(r);
    printf("  fuzz: %d finite results, %d errors, %d non-finite results\n", ok, errs, bad);
    assert_int_equal(bad, 0);
    assert_true(ok > 5000);
    CHECK_LE(pim, 1e-14, "fuzz: max |R J w - J w0| / |J w0| (finite results)");
}

/* Moments 1e220 apart (found by the C API fuzzer): the constants (A2/A3)(A2 - A1)/(A3 - A1) and
 * (A2/A1)(A3 - A2)/(A3 - A1) underflowed in double, which gave NaN (w only) or a silently wrong
 * attitude. w0 almost along the middle axis: over t = 1.375 the body still spins about e1, so
 * w = w0 and R = exp(t hat(w0)) to rounding; and a sweep of the w-only call over such moments. */
static void test_disparate_moments(void **state)
{
    (void)state;
    lf_error e;
    double J[3] = {2.375, 0.25, 1.3e220}, R[9], w[3], Rx[9], t = 1.375;
    double w0s[3][3] = {{-2.4375, 1.3e-181, 1.6e-311}, {-2.4375, 1e-181, 0}, {-2.4375, 1e-181, 1e-300}};
    double worst = 0;
    for (int k = 0; k < 3; k++) {
        const double *w0 = w0s[k];
        assert_int_equal(lf_exact_free_body_flow(J, NULL, w0, t, R, w, &e), LF_OK);
        double th[3] = {w0[0] * t, 0, 0};
        lf_so3_exp(th, Rx);
        worst = fmax(worst, fmax(maxdiff(9, R, Rx), fabs(w[0] - w0[0]) / fabs(w0[0])));
        assert_true(fabs(w[1]) < 1e-60 && fabs(w[2]) < 1e-60);
        double wv[3];
        assert_int_equal(lf_exact_free_body(J, w0, t, wv, &e), LF_OK);
        assert_true(maxdiff(3, wv, w) == 0);
    }
    CHECK_LE(worst, 1e-14, "J = (2.375, 0.25, 1.3e220), w0 ~ -2.4375 e1: |R - exp(t hat w0)|, |w1 - w01|/|w01|");
    /* |w0| = DBL_MAX about an axisymmetric body (found by libFuzzer): w(t) rotates (w2, w3), whose
     * components then exceed DBL_MAX: an error, not inf */
    double Jm[3] = {2.125, DBL_MAX, DBL_MAX}, wm[3] = {DBL_MAX, DBL_MAX, DBL_MAX};
    assert_int_equal(lf_exact_free_body(Jm, wm, 1e-300, w, &e), LF_EDOMAIN);
    printf("  %s\n", e.msg);
    assert_non_null(strstr(e.msg, "overflows"));
    assert_int_equal(lf_exact_free_body_flow(Jm, NULL, wm, 1e-300, R, w, &e), LF_EDOMAIN);
    /* w only, moments 10^[-220, 220]: a finite w conserving |J w| and 2E, or an error */
    gsl_rng *r = new_rng(17);
    int ok = 0, errs = 0, bad = 0;
    double cas = 0;
    for (int k = 0; k < 20000; k++) {
        double Jk[3], v[3];
        for (int i = 0; i < 3; i++) Jk[i] = pow(10, (gsl_rng_uniform(r) - 0.5) * 440);
        for (int i = 0; i < 3; i++) v[i] = gsl_rng_uniform(r) < 0.2 ? 0 : (gsl_rng_uniform(r) - 0.5) * pow(10, (gsl_rng_uniform(r) - 0.5) * 40);
        double tt = (gsl_rng_uniform(r) - 0.5) * pow(10, (gsl_rng_uniform(r) - 0.5) * 10);
        if (lf_exact_free_body(Jk, v, tt, w, &e) != LF_OK) {
            errs++;
            assert_true(strncmp(e.msg, "exact.free_body: ", 17) == 0);
            continue;
        }
        if (!lf_v3_isfinite(w)) {
            bad++;
            continue;
        }
        ok++;
        double P0[3] = {Jk[0] * v[0], Jk[1] * v[1], Jk[2] * v[2]}, P[3] = {Jk[0] * w[0], Jk[1] * w[1], Jk[2] * w[2]};
        double n0 = lf_v3_norm(P0);
        if (n0 > 1e-290 && n0 < 1e290) cas = fmax(cas, fabs(lf_v3_norm(P) - n0) / n0);
    }
    gsl_rng_free(r);
    printf("  sweep: %d finite results, %d errors, %d non-finite results\n", ok, errs, bad);
    assert_int_equal(bad, 0);
    assert_true(ok > 2000); /* most draws are refused: the phase nu t of moments 1e200 apart exceeds 1e15 rad */
    CHECK_LE(cas, 1e-13, "sweep: relative change of |J w| (finite results)");
}

static void test_flow_errors(void **state)
{
    (void)state;
    lf_error e;
    double R[9], w[3], J[3] = {1, 2, 3}, Rbad[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1.001};
    assert_int_equal(lf_exact_free_body_flow(J, Rbad, SEED_W, 1, R, w, &e), LF_EINVAL);
    assert_non_null(strstr(e.msg, "R0 is not a rotation"));
    Rbad[8] = NAN;
    assert_int_equal(lf_exact_free_body_flow(J, Rbad, SEED_W, 1, R, w, &e), LF_EINVAL);
    double Rr[9] = {-1, 0, 0, 0, 1, 0, 0, 0, 1}; /* a reflection */
    assert_int_equal(lf_exact_free_body_flow(J, Rr, SEED_W, 1, R, w, &e), LF_EINVAL);
    assert_non_null(strstr(e.msg, "det"));
    assert_int_equal(lf_exact_free_body_flow(J, NULL, SEED_W, NAN, R, w, &e), LF_EINVAL);
    assert_non_null(strstr(e.msg, "not finite"));
    J[2] = -3;
    assert_int_equal(lf_exact_free_body_flow(J, NULL, SEED_W, 1, R, w, &e), LF_EINVAL);
    assert_non_null(strstr(e.msg, "J[3] = -3"));
    J[2] = 3;
    double wn[3] = {0, 0, INFINITY};
    assert_int_equal(lf_exact_free_body_flow(J, NULL, wn, 1, R, w, &e), LF_EINVAL);
    assert_non_null(strstr(e.msg, "omega0[3]"));
    assert_int_equal(lf_exact_free_body_flow(J, NULL, SEED_W, 1e17, R, w, &e), LF_EDOMAIN);
    printf("  %s\n", e.msg);
    assert_non_null(strstr(e.msg, "t = 1e+17"));
    /* a plan prepared with the attitude serves w-only evaluations too; bad t */
    lf_exact_fb_plan p;
    assert_int_equal(lf_exact_fb_plan_init(&p, J, SEED_W, &e), LF_OK);
    assert_int_equal(lf_exact_fb_plan_eval(&p, INFINITY, NULL, R, w, &e), LF_EINVAL);
    assert_int_equal(lf_exact_fb_plan_eval(&p, 2, NULL, NULL, w, &e), LF_OK);
    J[0] = 0;
    assert_int_equal(lf_exact_fb_plan_init(&p, J, SEED_W, &e), LF_EINVAL);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: robust on a loaded machine */
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* ns per call (printed, not asserted): CPU time, the best of 5 rounds of N calls each */
static void test_flow_timing(void **state)
{
    (void)state;
    enum { N = 20000 };
    double best[5] = {1e9, 1e9, 1e9, 1e9, 1e9}, sink = 0;
    for (int round = 0; round < 5; round++) {
        double R[9], w[3], t0;
        lf_exact_fb_plan p;
        memcpy(R, I3, sizeof R);
        memcpy(w, SEED_W, sizeof w);
        t0 = now_s(); /* one splitting substep: flow over h = 0.1 from the current state */
        for (int i = 0; i < N; i++) lf_exact_free_body_flow(SEED_J, R, w, 0.1, R, w, NULL);
        best[0] = fmin(best[0], (now_s() - t0) / N);
        t0 = now_s();
        for (int i = 0; i < N; i++) lf_exact_free_body(SEED_J, w, 0.1, w, NULL);
        best[1] = fmin(best[1], (now_s() - t0) / N);
        t0 = now_s();
        for (int i = 0; i < N; i++) lf_exact_fb_plan_init(&p, SEED_J, w, NULL), sink += p.u0;
        best[2] = fmin(best[2], (now_s() - t0) / N);
        t0 = now_s();
        for (int i = 0; i < N; i++) lf_exact_fb_plan_eval(&p, 0.37 * i, NULL, R, w, NULL), sink += R[0];
        best[3] = fmin(best[3], (now_s() - t0) / N);
        /* one vlv step of the same free body, for scale */
        lf_error e;
        lf_system *sys = lf_rigid_new(1, SEED_J, NULL, &e);
        double y0[12];
        memcpy(y0, I3, 9 * sizeof(double));
        memcpy(y0 + 9, SEED_W, 3 * sizeof(double));
        lf_stepper *st = lf_stepper_new(lf_method_find("vlv"), sys, y0, 0, NULL, &e);
        assert_non_null(st);
        t0 = now_s();
        assert_int_equal(lf_stepper_step(st, 0.1, N), LF_OK);
        best[4] = fmin(best[4], (now_s() - t0) / N);
        lf_stepper_free(st);
        lf_system_free(sys);
    }
    printf("  ns per call (best of 5 x %d, [K] body):\n", N);
    printf("    lf_exact_free_body_flow (R and w, h = 0.1)  %7.0f\n", best[0] * 1e9);
    printf("    lf_exact_free_body      (w only)           %7.0f\n", best[1] * 1e9);
    printf("    lf_exact_fb_plan_init                      %7.0f\n", best[2] * 1e9);
    printf("    lf_exact_fb_plan_eval   (R and w, any t)   %7.0f\n", best[3] * 1e9);
    printf("    one vlv step (lf_stepper_step, free body)  %7.0f\n", best[4] * 1e9);
    printf("    flow / vlv step = %.1f%s\n", best[0] / best[4], sink != 0 ? "" : " ");
}

/* Near and at the separatrix (J = (1,2,3), w0 near the middle axis) against 50-60 digit values from a
 * Taylor-series integrator in mpmath (order 40, step 1/4, quaternion form q' = q (0, w)/2, J w' = (J w) x w,
 * R = R(q), R0 = I; mp.dps = 50, and 60 for 1 - m = 1.1e-49, where the data's 1e-25 components must stay
 * exact to 1e-35). 1 - m = 5.4e-12 (major side), 4.9e-13 (minor side), 1.1e-49 (the separatrix form of
 * the third-kind integral, k' < 1e-20), t up to 200: one excursion away from the saddle and back. (Past a
 * second passage of the saddle, t = 300, that integration is itself off by 4.5e-12 in w: the 90-digit
 * closed form, mpmath's ellipfun and ellipf, agrees with lf_exact_free_body to 2e-15 there.) */
static const struct {
    double w0[3], t, w[3], R[9];
} HPR[] = {
    {{1e-25, 1, 2e-25}, 25.0, {-2.286280533584063368733e-19, 1.0, 1.319984681509149119121e-19},
     {0.9912028118634735980833, 1.395137770848604338239e-19, -0.132351750097773028902, -1.143141159448687909422e-19, 1.0, 1.979974114831163137148e-19, 0.132351750097773028902, -1.811259176975709811348e-19, 0.9912028118634735980833}},
    {{1e-25, 1, 2e-25}, 50.0, {-4.24258370364219872077e-13, 1.0, 2.449456843357342889485e-13},
     {0.964966028492113274069, 3.01098839491994176833e-13, -0.2623748537039287859144, -2.121291851822368967961e-13, 1.0, 3.67418526503325062357e-13, 0.2623748537039287859144, -2.988890323858148244562e-13, 0.964966028492113274069}},
    {{1e-25, 1, 2e-25}, 100.0, {-0.9526296122095372868747, 0.3041329017740543759305, 0.5500009630471851554519},
     {0.5597263027816364859943, 0.8284876318507499277712, 0.01774006326753232220072, -0.4763148061047686434373, 0.3041329017740543759305, 0.8250014445707777331779, 0.6781081561666814575042, -0.4702248631546716144409, 0.5648521103894309660989}},
    {{1e-25, 1, 2e-25}, 200.0, {-1.118010112921806672055e-25, -1.0, 2.020721538826956124712e-25},
     {-0.5127038069401056297567, 2.388986874386131597067e-25, 0.8585655515737414527073, -2.878349807712074968545e-25, -1.0, 1.063688111633246495702e-25, 0.8585655515737414527073, -1.925895046049192758264e-25, 0.5127038069401056297567}},
    {{7e-7, 1, 1.4e-6}, 25.0, {-0.9756627766414739843768, 0.2192764152314134465334, 0.5632991667338474926405},
     {0.7529955280278770893875, 0.5953703663526989188488, 0.2802353682872161013271, -0.4878325792447442873895, 0.2192778300463201220346, 0.8449476953501899654864, 0.4416074154692591366574, -0.7729497785233075693462, 0.4555562868442613456557}},
    {{7e-7, 1, 1.4e-6}, 50.0, {-3.46433879923604486731e-7, -1.000000000000184991783, 0.000001355238777627878868101},
     {0.2552597257020790418994, 0.000001571299392237347825789, 0.9668725212932832059016, -0.000002292990138670395951763, -0.9999999999948835369841, 0.000002230498207953226257121, 0.9668725212918410188839, -0.000002786385517418000212972, -0.2552597256971700409421}},
    {{7e-7, 1, 1.4e-6}, 100.0, {5.161908000548403296604e-10, 1.000000000000244999867, 0.000001340397983989946867084},
     {-0.8696849448688558857302, 0.000001342669663931632676798, -0.4936072291474795011017, -7.319273551082751920443e-7, 0.9999999999916933025873, 0.000004009697890393900808274, 0.4936072291487629549274, 0.000003848458522440226368142, -0.8696849448606489393929}},
    {{7e-7, 1, 1.4e-6}, 200.0, {-6.989217817679108987317e-7, 1.000000000000000754171, 0.00000139982042384367178749},
     {0.5127038066630903216321, -0.000001273586462761577249734, 0.858565551738220206259, 0.000001274080435434223758658, 0.9999999999989273168757, 7.225546986623883619009e-7, -0.8585655517382194733634, 7.234250274809475177164e-7, 0.512703806664163004506}},
    {{1.4e-6, 1, 7e-7}, 25.0, {0.1727211482293016937724, 0.9849707635033192153342, -0.09972060142410963154678},
     {0.9866172915723908578978, -0.1053974485929835459021, -0.1244093959492178959117, 0.08635973826213521820099, 0.9849706936036577392717, -0.1495818449853620620449, 0.1383051538362015699845, 0.1368360718963343299368, 0.9808912140754069575745}},
    {{1.4e-6, 1, 7e-7}, 50.0, {0.00001239607876758043904682, -0.9999999999241486155911, -0.000007145459369699020655153},
     {0.2552597256967140723945, -0.000009481012642155469125905, 0.9668725212494916533498, 0.000005004141428455341724843, -0.9999999999255744745037, -0.0000111269771075113896213, 0.9668725212830266684932, 0.000007678635963916623191112, -0.2552597256302719050251}},
    {{1.4e-6, 1, 7e-7}, 100.0, {0.0001174528741527973641446, 0.999999993103391152842, 0.000067810244178769073702},
     {-0.8696849418911903704826, 0.0001019809382871988727086, -0.4936072238608396366411, 0.00005881692894328653487458, 0.9999999929684558407773, 0.0001029740605137190745344, 0.4936072308914099551842, 0.00006052252882245775945368, -0.8696849417741678977715}},
    {{1.4e-6, 1, 7e-7}, 200.0, {0.01056068007822631364182, 0.999944234464225186805, 0.006097211472595379209223},
     {0.5126759307471057373742, -0.01055883407558891528715, 0.8585172689326365695859, 0.005280882660216356408562, 0.9999442420176627038173, 0.009144677908544633802211, -0.8585659568786301861329, -0.0001545272991429535315679, 0.512703104935396262475}},
};

static void test_flow_near_separatrix(void **state)
{
    (void)state;
    static const double J[3] = {1, 2, 3};
    double eR = 0, ew = 0;
    for (size_t i = 0; i < sizeof HPR / sizeof HPR[0]; i++) {
        double R[9], w[3];
        assert_int_equal(lf_exact_free_body_flow(J, NULL, HPR[i].w0, HPR[i].t, R, w, NULL), LF_OK);
        double dR = maxdiff(9, R, HPR[i].R), dw = maxdiff(3, w, HPR[i].w);
        printf("    w0 = (%g, 1, %g), t = %5g: |R - R_mp| %.1e  |w - w_mp| %.1e\n", HPR[i].w0[0], HPR[i].w0[2], HPR[i].t, dR,
               dw);
        eR = fmax(eR, dR), ew = fmax(ew, dw);
    }
    CHECK_LE(eR, 5e-14, "near/at separatrix (1-m down to 1e-49) vs mpmath: max |R - R_mp|");
    CHECK_LE(ew, 5e-14, "near/at separatrix vs mpmath: max |w - w_mp|");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_krysl_free_body),       cmocka_unit_test(test_permutations),
        cmocka_unit_test(test_separatrix_sides), cmocka_unit_test(test_on_separatrix),
        cmocka_unit_test(test_axisymmetric),  cmocka_unit_test(test_stationary),
        cmocka_unit_test(test_random),        cmocka_unit_test(test_high_precision),
        cmocka_unit_test(test_near_saddle_relative), cmocka_unit_test(test_scaling),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_flow_rk8pd),    cmocka_unit_test(test_flow_taylor),
        cmocka_unit_test(test_flow_elongated), cmocka_unit_test(test_flow_near_separatrix),
        cmocka_unit_test(test_flow_long_time), cmocka_unit_test(test_flow_invariants),
        cmocka_unit_test(test_flow_consistency), cmocka_unit_test(test_flow_extreme),
        cmocka_unit_test(test_disparate_moments),
        cmocka_unit_test(test_flow_errors),   cmocka_unit_test(test_flow_timing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
