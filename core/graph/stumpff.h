/* PLACEHOLDER (being replaced by the real implementation): Stumpff functions c_k(s). */
#ifndef LF_STUMPFF_H
#define LF_STUMPFF_H
#include <math.h>
#define LF_STUMPFF_KMAX 24
static inline double lf_stumpff(int k, double s)
{
    if (!(s >= 0) || k < 0 || k > LF_STUMPFF_KMAX || isinf(s)) return NAN;
    double f = 1;
    for (int i = 2; i <= k; i++) f *= i;
    double term = 1 / f, sum = 0;
    for (int j = 0; j < 60; j++) {
        sum += term;
        term *= -s / ((2 * j + k + 1.0) * (2 * j + k + 2.0));
    }
    return sum;
}
static inline double lf_stumpff0(double s) { return lf_stumpff(0, s); }
static inline double lf_stumpff1(double s) { return lf_stumpff(1, s); }
static inline double lf_stumpff2(double s) { return lf_stumpff(2, s); }
static inline double lf_stumpff3(double s) { return lf_stumpff(3, s); }
static inline double lf_stumpff4(double s) { return lf_stumpff(4, s); }
#endif
