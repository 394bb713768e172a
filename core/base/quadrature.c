/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — Gauss–Legendre nodes and weights (quadrature.h). */
#include "base/quadrature.h"

#include <math.h>

/* P_n(x) and P_{n-1}(x) by the three-term recurrence */
static void legendre(int n, double x, double *pn, double *pn1)
{
    double p0 = 1, p1 = x;
    for (int k = 2; k <= n; k++) {
        double p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
        p0 = p1;
        p1 = p2;
    }
    *pn = n == 0 ? 1 : p1;
    *pn1 = n <= 1 ? 1 : p0;
}

void lf_gauss_legendre(int n, double *s, double *w)
{
    for (int i = 0; i < (n + 1) / 2; i++) {
        double x = cos(M_PI * (i + 0.75) / (n + 0.5)), p, q, dp;
        for (int it = 0; it < 100; it++) {
            legendre(n, x, &p, &q);
            dp = n * (x * p - q) / (x * x - 1);
            double d = p / dp;
            x -= d;
            if (fabs(d) < 1e-17) break;
        }
        legendre(n, x, &p, &q);
        dp = n * (x * p - q) / (x * x - 1);
        const double wt = 1 / ((1 - x * x) * dp * dp); /* 2/((1 - x^2) P_n'(x)^2) on [-1, 1], halved */
        s[i] = 0.5 * (1 - x);
        s[n - 1 - i] = 0.5 * (1 + x);
        w[i] = w[n - 1 - i] = wt;
    }
    if (n % 2 == 1) s[n / 2] = 0.5;
}
