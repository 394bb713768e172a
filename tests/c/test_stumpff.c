/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of core/graph/stumpff.h: the Stumpff functions c_k(s) = sum_j (-s)^j/(2j+k)! against
 * __float128 references (software quad: exact under valgrind, which runs long double as double),
 * the recurrence c_k = 1/k! - s c_{k+2} and the derivative identity
 * dc_k/ds = (k c_{k+2} - c_{k+1})/2.
 * Each test prints the worst error it measured, then asserts it against the bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <quadmath.h>

#include "testutil.h"

#include "graph/stumpff.h"

#define KMAX LF_STUMPFF_KMAX

/* ------------------------------------------------------------------ quad-precision reference */

typedef __float128 quad;
#define QEPS 0x1p-112Q /* twice the unit roundoff of __float128 */

static quad q_ifact(int n)
{
    quad f = 1;
    for (int i = 2; i <= n; i++) f *= i;
    return 1 / f;
}

/* the series, summed until the terms are below 2^-130 of sum |terms|; error <= QEPS sum|terms|
 * times a small factor */
static quad q_series(int k, quad s, quad *err)
{
    quad term = q_ifact(k), sum = 0, abs = 0;
    for (int j = 0; j < 100000; j++) {
        sum += term;
        abs += fabsq(term);
        term *= -s / ((quad)(2 * j + k + 1) * (2 * j + k + 2));
        if (fabsq(term) < 0x1p-130Q * abs && (quad)(2 * j + k + 2) * (2 * j + k + 2) > s) break;
    }
    *err = 4 * QEPS * abs;
    return sum;
}

/* Closed forms and the upward recurrence, with a running bound on the absolute error.
 * t = sqrt(s) = th + tl to ~t 2^-224 (the residual s - th^2 is exact by fmaq), and the sines and
 * cosines of th + tl by the addition formulas: cos t, sin t are then off by ~QEPS + t 2^-222,
 * never by more than 2. c_2 = 2 sin^2(t/2)/s has no cancellation. */
static quad q_closed(int k, quad s, quad *err)
{
    quad th = sqrtq(s), tl = fmaq(-th, th, s) / (2 * th);
    quad et = fminq(8 * QEPS + th * 0x1p-222Q, 2), c, e;
    int m;
    if (k == 0) {
        *err = et;
        return cosq(th) * cosq(tl) - sinq(th) * sinq(tl);
    }
    if (k & 1) {
        quad St = sinq(th) * cosq(tl) + cosq(th) * sinq(tl);
        c = St * (th + tl) / s;
        e = (et + 4 * QEPS * fabsq(St)) / th;
        m = 1;
    } else {
        quad hs = sinq(th / 2) * cosq(tl / 2) + cosq(th / 2) * sinq(tl / 2);
        c = 2 * hs * hs / s;
        e = fminq(4 * fabsq(hs) * et + 8 * QEPS * hs * hs, 2) / s;
        m = 2;
    }
    for (; m < k; m += 2) { /* c_{m+2} = (1/m! - c_m)/s */
        quad f = q_ifact(m);
        c = (f - c) / s;
        e = (e + QEPS * (f + fabsq(c) * s)) / s + QEPS * fabsq(c);
    }
    *err = e;
    return c;
}

/* |c_k(s)| <= env_k(s): 1, min(1, 1/t), min(1/2, 2/s) for k = 0, 1, 2 (the envelope through their
 * oscillation); for k >= 3, c_k > 0 has no zeros and the scale is |c_k| itself (returns -1) */
static double env(int k, double s)
{
    if (k == 0) return 1;
    if (k == 1) return s <= 1 ? 1 : 1 / sqrt(s);
    if (k == 2) return s <= 4 ? 0.5 : 2 / s;
    return -1;
}

/* Reference c_k(s) with its error bound: the closed form where s is large against k^2, else the
 * series, else whichever bound is below 2^-70 of the scale. Returns 0 if neither is (k <= 2 and
 * s >~ 1e90: t = sqrt(s) itself is then not known well enough mod 2 pi). */
static int q_ref(int k, quad s, quad *val, quad *err)
{
    double sd = (double)s, e = env(k, sd);
    int closed_first = s > 1 && (k <= 2 || s > (quad)k * k / 4);
    for (int pass = 0; pass < 2; pass++) {
        int closed = pass == 0 ? closed_first : !closed_first;
        if (closed && !(s > 0)) continue;
        if (!closed && s > 1e6Q) continue;
        *val = closed ? q_closed(k, s, err) : q_series(k, s, err);
        if (*err <= 0x1p-70Q * (e > 0 ? e : fabsq(*val))) return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ helpers */

/* ulp of x: the spacing of doubles at |x| (2^-1074 for subnormals and 0) */
static double ulp_of(double x)
{
    x = fabs(x);
    if (x < 0x1p-1022) return 0x1p-1074;
    int e;
    frexp(x, &e);
    return ldexp(1, e - 53);
}

/* the switch points series / closed form or recurrence of stumpff.h */
static const double split[KMAX + 1] = {0.75, 2,  2,  6,  9.5, 10,  17,  17,  24,  28,  32,  37, 43,
                                       50,   57, 65, 73, 82,  91,  100, 111, 122, 133, 145, 157};

/* the sample points: logarithmic over [1e-300, 1e300], dense in [0, 200], and windows around
 * the switch points (series/closed form; for k <= 2 also t = 2^26 and t = 2^52 of the trig part);
 * deterministic jitter so that no point is special */
static int samples(int k, gsl_rng *r, double *s, int cap)
{
    int n = 0;
    for (int i = 0; i < 1200 && n < cap; i++)
        s[n++] = pow(10, -300 + 0.5 * (i + gsl_rng_uniform(r)));
    for (int i = 0; i < 2000 && n < cap; i++) s[n++] = 0.1 * (i + gsl_rng_uniform(r));
    for (int i = 0; i < 200 && n < cap; i++) s[n++] = split[k] * (0.97 + 0.06 * gsl_rng_uniform(r));
    if (k <= 2) {
        for (int i = 0; i < 100 && n < cap; i++) s[n++] = 0x1p52 * (0.5 + 1.5 * gsl_rng_uniform(r));
        for (int i = 0; i < 100 && n < cap; i++)
            s[n++] = 0x1p104 * (0.5 + 1.5 * gsl_rng_uniform(r));
        for (int i = 0; i < 200 && n < cap; i++) s[n++] = pow(2, 104 + 96 * gsl_rng_uniform(r));
    }
    return n;
}

/* ------------------------------------------------------------------ tests */

/* 1. every k against the quad reference, over every sample */
static void test_accuracy(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(1);
    static double s[4000];
    double rel012 = 0, rel34 = 0, rel5 = 0, absw = 0, xcheck = 0;
    long nref = 0, nskip = 0, nx = 0, nhuge = 0;
    int envelope_ok = 1;
    printf("  %3s %10s %12s %10s %12s\n", "k", "rel [ulp]", "at s", "abs [ulp]", "at s");
    for (int k = 0; k <= KMAX; k++) {
        int n = samples(k, r, s, 4000);
        double rel = 0, rels = 0, ab = 0, abs_s = 0;
        for (int i = 0; i < n; i++) {
            double v = lf_stumpff(k, s[i]), e = env(k, s[i]);
            if (k <= 2 && s[i] >= 0x1p200) { /* beyond the accurate domain: in the envelope */
                nhuge++;
                if (!(fabs(v) <= e * (1 + 0x1p-40)) || (k == 2 && v < 0)) envelope_ok = 0;
                continue;
            }
            quad ref, err;
            if (!q_ref(k, s[i], &ref, &err)) {
                nskip++;
                continue;
            }
            nref++;
            double rd = (double)ref, d = (double)fabsq((quad)v - ref);
            double a = d / ulp_of(1 / (double)(1 / q_ifact(k)));
            if (!(a <= ab)) ab = a, abs_s = s[i];
            /* relative: everywhere for k >= 3; for k <= 2 away from zeros and while t < 2^50 */
            if (e < 0 || (fabs(rd) >= e / 8 && s[i] < 0x1p100)) {
                double re = d / ulp_of(rd);
                if (!(re <= rel)) rel = re, rels = s[i];
            }
            /* cross-check the two references where both are good (every 8th point) */
            if (i % 8 == 0 && s[i] > 1 && s[i] < 1e6) {
                quad es, ec, vs = q_series(k, s[i], &es), vc = q_closed(k, s[i], &ec);
                quad sc = e > 0 ? e : fabsq(vs);
                if (es <= 0x1p-70Q * sc && ec <= 0x1p-70Q * sc) {
                    nx++;
                    xcheck = fmax(xcheck, (double)(fabsq(vs - vc) / (es + ec)));
                }
            }
        }
        printf("  %3d %10.2f %12.4g %10.2f %12.4g\n", k, rel, rels, ab, abs_s);
        if (k <= 2) rel012 = fmax(rel012, rel);
        else if (k <= 4) rel34 = fmax(rel34, rel);
        else rel5 = fmax(rel5, rel);
        absw = fmax(absw, ab);
    }
    printf("  %ld points against the reference, %ld not verifiable, %ld with k <= 2 beyond "
           "s = 2^200 (only |c_k| <= envelope checked)\n", nref, nskip, nhuge);
    CHECK_LE(rel012, 4, "k = 0..2: rel err [ulp], |c| >= env/8, s < 2^100");
    CHECK_LE(rel34, 2, "k = 3, 4: rel err [ulp], s in [0, 1e300]");
    CHECK_LE(rel5, 2, "k = 5..24: rel err [ulp], s in [0, 1e300]");
    CHECK_LE(absw, 2, "abs err [ulp of 1/k!] (k <= 2: s < 2^200)");
    printf("  reference cross-checked (series vs closed/recurrence) at %ld points\n", nx);
    assert_true(nx > 1000);
    CHECK_LE(xcheck, 1, "|series - closed| / (sum of their error bounds), max");
    assert_true(nskip < nref / 20);
    assert_true(envelope_ok); /* k <= 2, s >= 2^200: |c_0| <= 1, |c_1| <= 1/t, 0 <= c_2 <= 2/s */
    gsl_rng_free(r);
}

/* 2. c_k = 1/k! - s c_{k+2} with the computed values; dc_k/ds = (k c_{k+2} - c_{k+1})/2 against
 * central differences (Richardson, fourth order) of the quad reference */
static void test_identities(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(2);
    double rec = 0, deriv = 0, dref = 0;
    for (int k = 0; k + 2 <= KMAX; k++)
        for (int i = 0; i < 600; i++) {
            double s = i < 300 ? pow(10, -6 + 12 * gsl_rng_uniform(r)) : 200 * gsl_rng_uniform(r);
            double c0 = lf_stumpff(k, s), c1 = lf_stumpff(k + 1, s), c2 = lf_stumpff(k + 2, s);
            /* recurrence, in quad from the doubles; scale: the terms' magnitudes */
            quad res = (quad)c0 - (q_ifact(k) - (quad)s * c2);
            double sc = fabs(c0) + fabs(s * c2);
            rec = fmax(rec, (double)fabsq(res) / (0x1p-53 * sc));
            if (i % 6 || s < 1e-3) continue; /* derivatives on every 6th point */
            /* step h ~ 2^-18 s / (1 + t): the fifth derivative scales as (t/s)^4 */
            quad h = (quad)s * 0x1p-18Q / (1 + sqrtq(s)), f[4], e;
            const int off[4] = {-2, -1, 1, 2};
            int ok = 1;
            for (int j = 0; j < 4; j++) ok &= q_ref(k, (quad)s + off[j] * h, &f[j], &e);
            assert_true(ok);
            quad fd = (8 * (f[2] - f[1]) - (f[3] - f[0])) / (12 * h);
            quad r1, r2;
            ok = q_ref(k + 1, s, &r1, &e) && q_ref(k + 2, s, &r2, &e);
            assert_true(ok);
            quad id = (k * r2 - r1) / 2;
            double scale = (k * fabs(c2) + fabs(c1)) / 2;
            dref = fmax(dref, (double)(fabsq(fd - id) / scale));
            deriv = fmax(deriv, (double)(fabsq(fd - ((quad)k * c2 - c1) / 2) / (0x1p-53 * scale)));
        }
    CHECK_LE(rec, 3, "c_k - (1/k! - s c_{k+2}) [u (|c_k| + s|c_{k+2}|)], k <= 22");
    CHECK_LE(dref, 1e-20, "quad: central diff of c_k vs (k c_{k+2} - c_{k+1})/2, rel");
    CHECK_LE(deriv, 3, "central diff vs (k c_{k+2} - c_{k+1})/2 in double [u scale]");
    gsl_rng_free(r);
}

/* 3. special inputs */
static void test_special(void **state)
{
    (void)state;
    for (int k = 0; k <= KMAX; k++) {
        double f = (double)q_ifact(k);
        assert_true(lf_stumpff(k, 0) == f); /* 1/k! rounded, exactly */
        assert_true(lf_stumpff(k, -0.0) == f);
        assert_true(fabs(lf_stumpff(k, 1e-320) - f) <= ulp_of(f));
        assert_true(fabs(lf_stumpff(k, 5e-324) - f) <= ulp_of(f));
        assert_true(fabs(lf_stumpff(k, 0x1p-1022) - f) <= ulp_of(f));
        const double bad[] = {-1, -1e-300, -5e-324, -INFINITY, INFINITY, NAN, -NAN};
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
            assert_true(isnan(lf_stumpff(k, bad[i])));
        /* huge s: finite; for k >= 3 accurate (~1/((k-2)! s), subnormal for large k at 1e300) */
        const double huge[] = {1e300, 0x1.fffffffffffffp1023};
        for (size_t i = 0; i < 2; i++) {
            double v = lf_stumpff(k, huge[i]);
            assert_true(isfinite(v));
            if (k >= 3) {
                quad ref, err;
                assert_true(q_ref(k, huge[i], &ref, &err));
                assert_true(fabsq((quad)v - ref) <= ulp_of((double)ref));
            } else {
                assert_true(fabs(v) <= env(k, huge[i]) * (1 + 0x1p-40));
            }
        }
    }
    const int badk[] = {-1, 25, -1000, 1000, INT32_MIN, INT32_MAX};
    for (size_t i = 0; i < sizeof badk / sizeof *badk; i++) {
        assert_true(isnan(lf_stumpff(badk[i], 1.0)));
        assert_true(isnan(lf_stumpff(badk[i], 0.0)));
    }
    printf("  c_3(1e300) = %.17g (= (1 - sin t/t)/s), c_24(1e300) = %.17g (subnormal, 1/(22! s))\n",
           lf_stumpff(3, 1e300), lf_stumpff(24, 1e300));
}

/* 4. the specialized k <= 4 are lf_stumpff(k, .) bit for bit */
static void test_specialized(void **state)
{
    (void)state;
    double (*const fk[5])(double) = {lf_stumpff0, lf_stumpff1, lf_stumpff2, lf_stumpff3,
                                     lf_stumpff4};
    gsl_rng *r = new_rng(4);
    static double s[4000];
    long n_all = 0;
    for (int k = 0; k <= 4; k++) {
        int n = samples(k, r, s, 4000);
        s[n++] = 0, s[n++] = -0.0, s[n++] = -1, s[n++] = NAN, s[n++] = INFINITY, s[n++] = 1e-320;
        for (int i = 0; i < n; i++) {
            double a = fk[k](s[i]), b = lf_stumpff(k, s[i]);
            assert_memory_equal(&a, &b, sizeof a);
        }
        n_all += n;
    }
    printf("  lf_stumpff0..4 == lf_stumpff(k, .) bitwise at %ld points\n", n_all);
    gsl_rng_free(r);
}

/* 5. timing, for information: Rodrigues' coefficients c_1, c_2 vs so3.c's coef_ab (copied) */
static void coef_ab(double t, double *A, double *B)
{
    if (t < 1e-4) {
        double z = t * t;
        *A = 1 - z / 6;
        *B = 0.5 - z / 24;
    } else {
        double s = sin(0.5 * t) / (0.5 * t);
        *A = sin(t) / t;
        *B = 0.5 * s * s;
    }
}

static void test_timing(void **state)
{
    (void)state;
    enum { N = 2048, REPS = 20 };
    static double s[N];
    gsl_rng *r = new_rng(5);
    const double range[3][2] = {{0, 2}, {2, 10}, {0, PI * PI}};
    const char *name[3] = {"s in [0, 2] (series)", "s in [2, 10] (sin/cos)", "t in [0, pi]"};
    volatile double sink = 0;
    for (int q = 0; q < 3; q++) {
        for (int i = 0; i < N; i++) {
            double u = gsl_rng_uniform(r);
            s[i] = q == 2 ? range[q][1] * u * u : range[q][0] + (range[q][1] - range[q][0]) * u;
        }
        double acc = 0, t0 = now();
        for (int k = 0; k < REPS; k++)
            for (int i = 0; i < N; i++) {
                double A, B;
                coef_ab(sqrt(s[i]), &A, &B);
                acc += A + B;
            }
        double t1 = now();
        for (int k = 0; k < REPS; k++)
            for (int i = 0; i < N; i++) acc += lf_stumpff1(s[i]) + lf_stumpff2(s[i]);
        double t2 = now();
        for (int k = 0; k < REPS; k++)
            for (int i = 0; i < N; i++) acc += lf_stumpff(12, s[i]);
        double t3 = now();
        sink += acc;
        printf("  %-24s coef_ab(sqrt s) %5.1f ns, c_1 + c_2 %5.1f ns, c_12 %5.1f ns per call\n",
               name[q], 1e9 * (t1 - t0) / (N * REPS), 1e9 * (t2 - t1) / (N * REPS),
               1e9 * (t3 - t2) / (N * REPS));
    }
    (void)sink;
    gsl_rng_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accuracy),    cmocka_unit_test(test_identities),
        cmocka_unit_test(test_special),     cmocka_unit_test(test_specialized),
        cmocka_unit_test(test_timing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
