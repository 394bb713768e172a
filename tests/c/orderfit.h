/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Convergence orders of the high-order methods (compositions and splittings of order >= 4) over
 * their asymptotic window, shared by test_methods.c and test_compose.c. Header-only.
 *
 * Errors e_k at h_k = h0 / 2^k are taken until they fall below the floor (4 to 10x the error of
 * the rk8pd reference and the methods' own round-off: 1e-13 on the stress test; 5e-12 on the slow
 * top at T = 5, where |w| = 5 makes even two order-6 methods at h = 1/128 differ by 5e-13 and the
 * errors of the composed methods level off at 1e-12) or stop decreasing (the smallest error ends the
 * run; trailing halvings that gain less than 2x are round-off). Above the
 * floor, the asymptotic window is the longest run of halvings at the small-h end whose local slopes
 * log2(e_k / e_{k+1}) lie within 0.3 of the last one, at most 4 points: larger steps may converge
 * faster than h^p (on the slow top the splittings with the exact free flow drop from 1e-2 to 1e-10
 * in two halvings at h|w| >= 1.25) or slower (pre-asymptotic). The order is the least-squares slope
 * over the window when it has 3 or more points; with 2 points (one halving between the onset of
 * the asymptotic range and the floor: an order-6 method loses 1.8 decades per halving) it is that
 * one local slope, and `floored` says so. */
#ifndef LF_ORDERFIT_H
#define LF_ORDERFIT_H

#include <gsl/gsl_fit.h>
#include <math.h>

#include "lieflow.h"

typedef struct {
    double order;    /* fitted order over the window */
    int first, last; /* window: indices first .. last (inclusive) */
    int floored;     /* 1: only 2 points (one halving) above the floor */
    double min_slope; /* the smallest local slope among the points above the floor with errors < 1e-3 */
} orderfit;

/* n errors e[k] at h[k] (decreasing h); 0 if fewer than 2 points are above the floor. */
static inline int orderfit_window(const double *h, const double *e, int n, double floor, orderfit *f)
{
    *f = (orderfit){0}; /* defined on every return, failures included */
    int m = 0; /* points 0 .. m-1: above the floor, up to the smallest error, without trailing halvings
                  that gain less than 2x (the methods' round-off has taken over there) */
    while (m < n && e[m] >= floor && isfinite(e[m])) m++;
    int kmin = 0;
    for (int k = 1; k < m; k++)
        if (e[k] < e[kmin]) kmin = k;
    if (m > 0) m = kmin + 1;
    while (m >= 2 && e[m - 1] > 0.5 * e[m - 2]) m--;
    if (m < 2) return 0;
    const double last = log2(e[m - 2] / e[m - 1]);
    int first = m - 2;
    while (first > 0 && m - first < 4 && fabs(log2(e[first - 1] / e[first]) - last) <= 0.3) first--;
    double x[8], y[8], c0, c1, c00, c01, c11, ss;
    const int cnt = m - first;
    for (int i = 0; i < cnt; i++) {
        x[i] = log(h[first + i]);
        y[i] = log(e[first + i]);
    }
    gsl_fit_linear(x, 1, y, 1, (size_t)cnt, &c0, &c1, &c00, &c01, &c11, &ss);
    f->order = c1;
    f->first = first;
    f->last = m - 1;
    f->floored = cnt < 3;
    f->min_slope = INFINITY;
    for (int k = 0; k + 1 < m; k++)
        if (e[k] < 1e-3) f->min_slope = fmin(f->min_slope, log2(e[k] / e[k + 1]));
    return 1;
}

/* The verdict for nominal order p: a window of 3 or more points: |order - p| <= 0.15 ("fit"); one
 * halving: |slope - p| <= 0.3 ("one halving"), or a slope above p + 0.3 with every local slope
 * below errors 1e-3 at least p - 0.3 ("super-convergent down to the floor": the method converges
 * faster than h^p until round-off, as the splittings with the exact free flow do on the slow top).
 * Returns 1 if the order is confirmed; *what names the case. */
static inline int orderfit_ok(const orderfit *f, int p, const char **what)
{
    if (!f->floored) {
        *what = "fit";
        return fabs(f->order - p) <= 0.15;
    }
    if (fabs(f->order - p) <= 0.3) {
        *what = "one halving above the floor";
        return 1;
    }
    *what = "super-convergent down to the floor";
    return f->order > p && f->min_slope >= p - 0.3;
}

/* The errors of method m on a one-body rigid system (state R (9), w (3)) from y0 at time T against
 * ref, at h = h0 / 2^k for k < kmax, until they fall below the floor or stop decreasing (above).
 * Step sizes at which the method fails before its first success are left out (too large for it:
 * lgvi's Cayley equation for h|w| > 1); *h_first is the first one kept. Returns the number of points,
 * or -1 with the message in *err when the stepper cannot be made or a later step fails. */
static inline int orderfit_rigid_errors(const lf_method *m, const lf_system *sys, const double y0[12], double T,
                                        const double ref[12], double h0, int kmax, double floor, double *hs,
                                        double *eR, double *ew, double *h_first, lf_error *err)
{
    int cnt = 0;
    for (int k = 0; k < kmax; k++) {
        const double h = h0 / (1 << k);
        lf_stepper *st = lf_stepper_new(m, sys, y0, 0, NULL, err);
        if (!st) return -1;
        if (lf_stepper_step(st, h, lround(T / h)) != LF_OK) {
            if (cnt > 0) {
                *err = *lf_stepper_error(st);
                lf_stepper_free(st);
                return -1;
            }
            lf_stepper_free(st);
            continue;
        }
        if (cnt == 0) *h_first = h;
        const double *y = lf_stepper_state(st);
        double D[9], dw[3];
        lf_m3_sub(y, ref, D);
        lf_v3_sub(y + 9, ref + 9, dw);
        hs[cnt] = h;
        eR[cnt] = lf_m3_fnorm(D);
        ew[cnt] = lf_v3_norm(dw);
        cnt++;
        lf_stepper_free(st);
        const double emax = fmax(eR[cnt - 1], ew[cnt - 1]);
        if (emax < floor || (cnt > 1 && emax > 0.5 * fmax(eR[cnt - 2], ew[cnt - 2]) && emax < 1e-6)) break; /* floor */
    }
    return cnt;
}

#endif
