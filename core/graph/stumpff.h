/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — Stumpff functions c_k(s), k = 0..24, to a few ulp for every s >= 0.
 *
 * Self-contained (only <math.h>, plain C11): the same text is pasted verbatim into generated C
 * sources (core/graph/graph_codegen.c). Every function is static inline (and marked unused for
 * clang), so a file that uses only some of them gets no warnings; no state, const tables only.
 *
 * Definition (Stumpff, "Himmelsmechanik", 1959):
 *     c_k(s) = sum_{j>=0} (-s)^j / (2j+k)!,      s >= 0, t = sqrt(s),
 *     c_0 = cos t,  c_1 = sin t / t,  c_2 = (1 - cos t)/t^2,  c_3 = (t - sin t)/t^3, ...
 * Recurrence:  c_k(s) = 1/k! - s c_{k+2}(s).
 * Derivative:  d/ds c_k(s) = (k c_{k+2}(s) - c_{k+1}(s)) / 2, so every derivative of c_k is again
 *              a polynomial in the c_j: the expression-graph compiler writes the SO(3), S^2 and
 *              quaternion maps as smooth functions of s = |x|^2 with them, e.g. Rodrigues'
 *              formula exp(hat x) = I + c_1(|x|^2) hat x + c_2(|x|^2) hat x^2, and the dexp
 *              coefficient (t - sin t)/t^3 = c_3(|x|^2).
 *
 * Domain: k in 0..LF_STUMPFF_KMAX, s finite and >= 0 (-0 counts as 0). Anything else (s < 0, NaN,
 * +inf, k out of range) returns NaN. c_k(0) = 1/k! exactly (rounded to double).
 *
 * Algorithm, with t = sqrt(s) and S_k the switch points (S_0..S_4 = 0.75, 2, 2, 6, 9.5; for k >= 5
 * the table in lf_stumpff, from 0.47 k^2 at k = 6 down to 0.27 k^2 at k = 24, c_k(S_k) k! ~ 0.8):
 *  - s <= S_k: the series, by Horner in s, with the coefficients 1/(k+2j)! rounded to double, the
 *    rounding error of the leading one (1/k! = hi + lo) added back, and enough terms (10..18) that
 *    the truncation is < 2^-60 relative at S_k. Up to S_k the series is well conditioned:
 *    sum |terms| / |c_k| <= ~2 (c_k k! >= ~0.75).
 *  - s > S_k, k <= 2: closed forms in sin t and cos t. The rounding of sqrt(s) alone would cost
 *    ~t/2 ulp (cos sqrt(s) has condition number t tan(t)/2 in s), so t is carried as th + tl,
 *    tl = (s - th^2)/(2 th) with the residual exact by fma, and cos t = cos th - sin th tl,
 *    sin t = sin th + cos th tl (the second-order terms, tl^2 <= t^2 2^-106, are negligible while
 *    t < 2^26). Then
 *      c_0 = cos t;  c_1 = sin t / t = sin t t / s;
 *      c_2 = (1 - cos t)/s where cos t <= 1/2; nearer t = 2 pi n (the double zeros of c_2)
 *            c_2 = u^2 c_2(u^2)/s with u = t - 2 pi n in double-double and c_2(u^2) by the series
 *            (u^2 < 1.1): relative accuracy up to the zeros, instead of the squared error of a
 *            sine in 2 sin^2(t/2)/s.
 *    For t >= 2^26 the next term of the square root is kept (t = th + tl + tl2 to ~t 2^-157) and
 *    sin, cos of th + tl + tl2 come from the addition formulas: c_0 keeps an absolute error of
 *    ~1 ulp up to s = 2^200 and its relative accuracy (away from zeros) up to s = 2^100. Beyond
 *    s ~ 2^206 nothing computed in doubles can be right: the value depends on bits of sqrt(s) below
 *    the last of th + tl + tl2 (c_0 is then some value in [-1, 1]; |c_1| <= 1/t and
 *    0 <= c_2 <= 2/s are tiny and still accurate in the absolute sense).
 *  - s > S_k, k >= 3: the upward recurrence c_{m+2} = (1/m! - c_m)/s from c_1 (k odd) or c_2
 *    (k even), in double-double (1/m! = hi + lo, exact remainder of the division by fma).
 *    Upward, an error in c_m is damped by ~m^2/s per step while m^2 < s and amplified only in the
 *    last steps (m^2 > s), where the series starts to lose too; in double-double neither the
 *    cancellation in 1/m! - c_m nor those steps cost anything, and S_k is the measured crossover
 *    of the two errors (both < 1 ulp there). The oscillating part of c_k, k >= 3, is a factor
 *    >= t below its size ~1/((k-2)! s), so these stay accurate up to s = DBL_MAX (subnormal
 *    results rounded correctly to the last subnormal ulp).
 *
 * Measured (against __float128 references; tests/c/test_stumpff.c redoes it on ~3500 points per
 * k, exploratory scans used 10^6 per range: s logarithmic from 1e-300 to 1e300, dense in [0, 200],
 * around every switch point). Relative error, k = 0 / 1 / 2, away from zeros (|c_k| >= 1/8 of
 * its envelope 1, min(1, 1/t), min(1/2, 2/s)): <= 1.0 / 2.1 / 2.7 ulp for s < 2^52 (and there up
 * to the zeros), <= 1.8 / 2.9 / 2.7 ulp for s < 2^100. k = 3, 4: <= 1.4 ulp, k >= 5: <= 1.05 ulp,
 * for every s. Absolute error <= 1 ulp of 1/k! (k <= 2: <= 1.5 ulp up to s = 2^200).
 * Cost (x86-64, glibc): above S_k c_0..c_2 take one sqrt, one sin and one cos (merged into sincos
 * by the compiler, and shared by c_1 and c_2 of the same s), 2-3 fma and 2-3 divisions; c_1 + c_2
 * ~18 ns against ~15 ns for so3.c's sin/sin form, and ~6 ns by the series below S_k; the dd
 * recurrence costs ~2 divisions per step.
 *
 * Not to be compiled with -ffast-math (-fassociative-math removes the double-double error terms).
 */
#ifndef LF_STUMPFF_H
#define LF_STUMPFF_H

#include <math.h>

#define LF_STUMPFF_KMAX 24

/* static inline alone does not silence clang about an unused function in the main file (the
 * generated sources are one) */
#if defined(__GNUC__) || defined(__clang__)
#define LF_STUMPFF_UNUSED_ __attribute__((unused))
#else
#define LF_STUMPFF_UNUSED_
#endif

/* 1/n! rounded to double, n = 0..58 (the largest index any series below needs) */
static inline LF_STUMPFF_UNUSED_ const double *lf_stumpff_ifact_(void)
{
    static const double f[59] = {
        1, 1, 0.5,
        0.16666666666666666, 0.041666666666666664, 0.0083333333333333332,
        0.0013888888888888889, 0.00019841269841269841, 2.4801587301587302e-05,
        2.7557319223985893e-06, 2.7557319223985888e-07, 2.505210838544172e-08,
        2.08767569878681e-09, 1.6059043836821613e-10, 1.1470745597729725e-11,
        7.6471637318198164e-13, 4.7794773323873853e-14, 2.8114572543455206e-15,
        1.5619206968586225e-16, 8.2206352466243295e-18, 4.1103176233121648e-19,
        1.9572941063391263e-20, 8.8967913924505741e-22, 3.8681701706306841e-23,
        1.6117375710961184e-24, 6.4469502843844736e-26, 2.4795962632247976e-27,
        9.183689863795546e-29, 3.2798892370698378e-30, 1.1309962886447716e-31,
        3.7699876288159054e-33, 1.2161250415535179e-34, 3.8003907548547434e-36,
        1.1516335620771951e-37, 3.3871575355211618e-39, 9.6775929586318907e-41,
        2.6882202662866363e-42, 7.2654601791530714e-44, 1.911963205040282e-45,
        4.9024697565135435e-47, 1.2256174391283858e-48, 2.9893108271424046e-50,
        7.117406731291439e-52, 1.6552108677421951e-53, 3.7618428812322616e-55,
        8.3596508471828045e-57, 1.817315401561479e-58, 3.866628513960594e-60,
        8.0554760707512364e-62, 1.6439747083165791e-63, 3.287949416633158e-65,
        6.4469596404571724e-67, 1.2397999308571486e-68, 2.3392451525606576e-70,
        4.3319354677049218e-72, 7.8762463049180392e-74, 1.4064725544496498e-75,
        2.4674957095607893e-77, 4.2543029475186022e-79};
    return f;
}

/* 1/n! - (its double above), n = 0..24: 1/n! = hi + lo to ~2^-107 relative */
static inline LF_STUMPFF_UNUSED_ const double *lf_stumpff_ifactlo_(void)
{
    static const double lo[25] = {
        0, 0, 0,
        9.2518585385429707e-18, 2.3129646346357427e-18, 1.1564823173178714e-19,
        -5.3005439543735771e-20, 1.7209558293420705e-22, 2.1511947866775882e-23,
        -1.8583932740464721e-22, 2.3767714622250297e-23, -1.448814070935912e-24,
        -1.20734505911326e-25, 1.2585294588752098e-26, 2.0655512752830745e-28,
        7.03872877733453e-30, 4.3992054858340813e-31, 1.6508842730861433e-31,
        1.1910679660273754e-32, 2.2141894119604265e-34, 1.4412973378659527e-36,
        -1.3643503830087908e-36, -7.9114026148723762e-38, -8.8431776554823438e-40,
        -3.6846573564509766e-41};
    return lo;
}

/* sum_{j<n} (-s)^j/(k+2j)! by Horner in s; the leading coefficient 1/k! as hi + lo */
static inline LF_STUMPFF_UNUSED_ double lf_stumpff_series_(int k, int n, double s)
{
    const double *f = lf_stumpff_ifact_();
    double r = f[k + 2 * (n - 1)];
    for (int j = n - 2; j >= 1; j--) r = f[k + 2 * j] - s * r;
    return f[k] + (lf_stumpff_ifactlo_()[k] - s * r);
}

/* t = sqrt(s) = th + tl + tl2 (returns th), and a - b d ~ cos t, b + a d ~ sin t to first order
 * in d. For th < 2^26: tl = (s - th^2)/(2 th) (the residual is exact by fma), tl2 = 0
 * (< th 2^-106), a, b = sin th, cos th and d = tl (the second-order terms, tl^2 < 2^-54, are
 * negligible). Beyond,
 * tl2 = ((s - th^2 - 2 th tl) - tl^2)/(2 th) (the next term of sqrt(th^2 + r) = th + r/(2 th) -
 * r^2/(8 th^3) + ..., with the rounding of tl), so that t is known to ~th 2^-157; a and b are then
 * sin and cos of th + tl + tl2 by the addition formulas, and d = 0. */
static inline LF_STUMPFF_UNUSED_ double lf_stumpff_trig_(double s, double *tl, double *tl2,
                                                         double *d, double *a, double *b)
{
    double t = sqrt(s), r = fma(-t, t, s), l = r / (2 * t), sn = sin(t), cs = cos(t);
    *tl = l;
    if (t < 0x1p26) {
        *tl2 = 0;
        *d = l;
        *a = sn;
        *b = cs;
        return t;
    }
    double l2 = (fma(-l, 2 * t, r) - l * l) / (2 * t);
    double s1 = sin(l), c1 = cos(l), s2 = sin(l2), c2 = cos(l2);
    double sl2 = s1 * c2 + c1 * s2, cl2 = c1 * c2 - s1 * s2;  /* sin, cos of tl + tl2 */
    *tl2 = l2;
    *d = 0;
    *a = fma(sn, cl2, cs * sl2);
    *b = fma(cs, cl2, -sn * sl2);
    return t;
}

/* c_k from c_m (m < k, same parity) by c_{j+2} = (1/j! - c_j)/s in double-double */
static inline LF_STUMPFF_UNUSED_ double lf_stumpff_up_(int m, int k, double c, double s)
{
    const double *f = lf_stumpff_ifact_(), *flo = lf_stumpff_ifactlo_();
    double ch = c, cl = 0;
    for (; m < k; m += 2) {
        double a = f[m] - ch, b = a - f[m];                  /* TwoSum(f[m], -ch) */
        double e = (f[m] - (a - b)) - (ch + b);
        double dl = e + flo[m] - cl, dh = a + dl;            /* d = 1/m! - c_m = dh + dl */
        dl -= dh - a;
        ch = dh / s;                                         /* d/s = ch + cl */
        cl = (fma(-ch, s, dh) + dl) / s;
    }
    return ch + cl;
}

/* c_0(s) = cos sqrt(s) */
static inline LF_STUMPFF_UNUSED_ double lf_stumpff0(double s)
{
    if (s <= 0.75) {
        if (!(s >= 0)) return NAN;
        return lf_stumpff_series_(0, 10, s);
    }
    if (!(s < INFINITY)) return NAN;
    double tl, tl2, d, S, C;
    lf_stumpff_trig_(s, &tl, &tl2, &d, &S, &C);
    return C - S * d;
}

/* c_1(s) = sin(t)/t, t = sqrt(s) */
static inline LF_STUMPFF_UNUSED_ double lf_stumpff1(double s)
{
    if (s <= 2) {
        if (!(s >= 0)) return NAN;
        return lf_stumpff_series_(1, 11, s);
    }
    if (!(s < INFINITY)) return NAN;
    double tl, tl2, d, S, C, t = lf_stumpff_trig_(s, &tl, &tl2, &d, &S, &C);
    /* (S + C d)(t + tl) / s to first order in d, tl */
    return fma(S, t, S * tl + C * d * t) / s;
}

/* c_2(s) = (1 - cos t)/t^2, t = sqrt(s) */
static inline LF_STUMPFF_UNUSED_ double lf_stumpff2(double s)
{
    if (s <= 2) {
        if (!(s >= 0)) return NAN;
        return lf_stumpff_series_(2, 11, s);
    }
    if (!(s < INFINITY)) return NAN;
    double tl, tl2, d, S, C, t = lf_stumpff_trig_(s, &tl, &tl2, &d, &S, &C);
    if (C - S * d <= 0.5 || !(t < 0x1p52)) return fma(S, d, 1 - C) / s;
    /* |t - 2 pi n| < pi/3: u = t - 2 pi n = uh + ul, with 2 pi = P1 + P2 (to 2^-105), n P1 =
     * ph + pl exactly, t - ph exact (Sterbenz); then 1 - cos t = u^2 c_2(u^2). */
    const double P1 = 6.2831853071795862, P2 = 2.4492935982947064e-16;
    double n = floor(t * 0.15915494309189535 + 0.5);
    double ph = n * P1, pl = fma(n, P1, -ph);
    double r = t - ph, e = ((tl - pl) + tl2) - n * P2;
    double uh = r + e, b = uh - r, ul = (r - (uh - b)) + (e - b);
    double p = uh * uh, pe = fma(uh, uh, -p) + 2 * uh * ul;  /* u^2 = p + pe */
    double c = lf_stumpff_series_(2, 11, p);
    return fma(p, c, pe * c) / s;
}

/* c_3(s) = (t - sin t)/t^3 */
static inline LF_STUMPFF_UNUSED_ double lf_stumpff3(double s)
{
    if (s <= 6) {
        if (!(s >= 0)) return NAN;
        return lf_stumpff_series_(3, 13, s);
    }
    if (!(s < INFINITY)) return NAN;
    return lf_stumpff_up_(1, 3, lf_stumpff1(s), s);
}

/* c_4(s) = (t^2/2 - 1 + cos t)/t^4 */
static inline LF_STUMPFF_UNUSED_ double lf_stumpff4(double s)
{
    if (s <= 9.5) {
        if (!(s >= 0)) return NAN;
        return lf_stumpff_series_(4, 14, s);
    }
    if (!(s < INFINITY)) return NAN;
    return lf_stumpff_up_(2, 4, lf_stumpff2(s), s);
}

/* c_k(s) for k = 0..LF_STUMPFF_KMAX; k <= 4 is exactly lf_stumpff<k>(s) */
static inline LF_STUMPFF_UNUSED_ double lf_stumpff(int k, double s)
{
    /* series for s <= split[k] with nterms[k] terms, dd recurrence above (k >= 5) */
    static const double split[LF_STUMPFF_KMAX + 1] = {
        0.75, 2, 2, 6, 9.5, 10, 17, 17, 24, 28, 32, 37, 43,
        50, 57, 65, 73, 82, 91, 100, 111, 122, 133, 145, 157};
    static const unsigned char nterms[LF_STUMPFF_KMAX + 1] = {
        10, 11, 11, 13, 14, 13, 14, 14, 15, 15, 15, 15, 16,
        16, 16, 17, 17, 17, 17, 17, 18, 18, 18, 18, 18};
    switch (k) {
    case 0: return lf_stumpff0(s);
    case 1: return lf_stumpff1(s);
    case 2: return lf_stumpff2(s);
    case 3: return lf_stumpff3(s);
    case 4: return lf_stumpff4(s);
    }
    if (k < 0 || k > LF_STUMPFF_KMAX) return NAN;
    if (s <= split[k]) {
        if (!(s >= 0)) return NAN;
        return lf_stumpff_series_(k, nterms[k], s);
    }
    if (!(s < INFINITY)) return NAN;
    if (k & 1) return lf_stumpff_up_(1, k, lf_stumpff1(s), s);
    return lf_stumpff_up_(2, k, lf_stumpff2(s), s);
}

#endif
