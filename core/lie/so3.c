/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — SO(3) maps (conventions in so3.h). */
#include "lie/so3.h"

#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/gsl_guard_internal.h"
#include "base/linalg.h"
#include "lie/quat.h"
#include "lie/so3_kernels_internal.h"

/* ---------------------------------------------------------------- coefficient functions
 * Near t = 0 the closed forms of C and D below cancel catastrophically (relative error
 * ~6u/t^2 and ~12u/t^2, u = 2^-53). Below the thresholds we sum their Taylor series by
 * Horner in z = t^2, with enough terms that the truncation is < 2^-60 relative at the
 * threshold; the thresholds are where the closed forms are back to ~2-3 u (measured
 * against 40-digit arithmetic). */

static double horner(const double *c, int n, double z)
{
    double s = c[n - 1];
    for (int i = n - 2; i >= 0; i--) s = s * z + c[i];
    return s;
}

/* A(t) = sin t / t and B(t) = (1 - cos t)/t^2 = (1/2) (sin(t/2)/(t/2))^2: no cancellation in
 * either form; the series only avoids 0/0. */
static void coef_ab(double t, double *A, double *B)
{
    if (t < 1e-4) {
        double z = t * t; /* next terms are t^4/120, t^4/720 < 1e-18 */
        *A = 1 - z / 6;
        *B = 0.5 - z / 24;
    } else {
        double s = sin(0.5 * t) / (0.5 * t);
        *A = sin(t) / t;
        *B = 0.5 * s * s;
    }
}

/* C(t) = (t - sin t)/t^3 = sum_k (-1)^k t^2k/(2k+3)! */
static double coef_c(double t)
{
    static const double c[10] = {
        0.16666666666666666, -0.008333333333333333, 0.0001984126984126984,
        -2.7557319223985893e-06, 2.505210838544172e-08, -1.6059043836821613e-10,
        7.647163731819816e-13, -2.8114572543455206e-15, 8.22063524662433e-18,
        -1.9572941063391263e-20};
    if (t < 1.5) return horner(c, 10, t * t);
    return (t - sin(t)) / (t * t * t);
}

/* D(t) = (1 - (t/2) cot(t/2))/t^2 = sum_{n>=1} |B_2n|/(2n)! t^(2n-2)  (Bernoulli numbers B_2n;
 * radius of convergence 2 pi). */
static double coef_d(double t)
{
    static const double c[18] = {
        0.08333333333333333, 0.001388888888888889, 3.306878306878307e-05,
        8.267195767195768e-07, 2.08767569878681e-08, 5.284190138687493e-10,
        1.3382536530684679e-11, 3.3896802963225827e-13, 8.586062056277845e-15,
        2.174868698558062e-16, 5.5090028283602295e-18, 1.3954464685812522e-19,
        3.534707039629467e-21, 8.953517427037546e-23, 2.267952452337683e-24,
        5.744790668872202e-26, 1.455172475614865e-27, 3.6859949406653103e-29};
    if (t < 2.0) return horner(c, 18, t * t);
    double h = 0.5 * t;
    return (1 - h / tan(h)) / (t * t);
}

/* For |x| > 2^500 the coefficient forms below over- or underflow (t^2, t^3): the maps are then
 * evaluated on the unit axis n = x/t with the coefficients multiplied by t and t^2 in closed form.
 * (Rotation angles that large are meaningless physically, but the result is still the exact
 * rotation of the double x, as sin and cos of any double are.) */
#define HUGE_ANGLE 0x1p+500

static void unit_axis(const double x[3], double t, double n[3])
{
    for (int i = 0; i < 3; i++) n[i] = x[i] / t;
}

/* ---------------------------------------------------------------- hat / vee */

void lf_so3_hat(const double w[3], double W[9])
{
    W[0] = 0;     W[1] = -w[2]; W[2] = w[1];
    W[3] = w[2];  W[4] = 0;     W[5] = -w[0];
    W[6] = -w[1]; W[7] = w[0];  W[8] = 0;
}

/* (a - b)/2 without overflow: halving is exact, so both forms round the same way unless a - b
 * overflows (then the halves are subtracted) or is subnormal (then the difference is kept). */
static double halfdiff(double a, double b)
{
    double d = a - b;
    return isfinite(d) || !isfinite(a) || !isfinite(b) ? 0.5 * d : 0.5 * a - 0.5 * b;
}

void lf_so3_vee(const double W[9], double w[3])
{
    w[0] = halfdiff(W[7], W[5]);
    w[1] = halfdiff(W[2], W[6]);
    w[2] = halfdiff(W[3], W[1]);
}

/* ---------------------------------------------------------------- exp / log */

void lf_so3_exp(const double x[3], double R[9])
{
    double A, B, t = lf_v3_norm(x), n[3];
    if (t > HUGE_ANGLE) { /* A t = sin t, B t^2 = 1 - cos t */
        double h = sin(0.5 * t);
        unit_axis(x, t, n);
        lf_so3_quadratic(n, 1.0, sin(t), 2 * h * h, R);
        return;
    }
    coef_ab(t, &A, &B); /* |x|^2 may underflow: then t = 0 and the series is exact */
    lf_so3_quadratic(x, 1.0, A, B, R);
}

/* Rotation angle t in [0, pi] of R, and s = vee of the skew part = sin(t) n, c = cos t.
 * atan2(|s|, c) is accurate to ~1 ulp of pi for every angle (neither argument cancels badly). */
static double angle_of(const double R[9], double s[3], double *c)
{
    lf_so3_vee(R, s);
    *c = 0.5 * (lf_m3_trace(R) - 1);
    return atan2(lf_v3_norm(s), *c);
}

void lf_so3_log(const double R[9], double x[3])
{
    double s[3], c;
    double t = angle_of(R, s, &c);
    if (c > 0) {
        /* t < pi/2: x = s t/sin t. For small u = |s|/c = tan t, t/|s| = (atan(u)/u)/c by its
         * series, which stays exact when |s|^2 underflows (|x| ~ 1e-300 gives |s| = 0). */
        double sn = lf_v3_norm(s), u = sn / c, z = u * u;
        lf_v3_scale(s, u < 1e-4 ? (1 - z / 3 + z * z / 5) / c : t / sn, x);
        return;
    }
    /* t >= pi/2: the axis from the symmetric part S = (R + R^T)/2 = c I + (1 - c) n n^T.
     * Column k of S - c I is (1 - c) n_k n; the one with the largest diagonal has
     * |n_k| >= 1/sqrt(3), so normalizing it gives +-n with relative error ~ u. */
    int k = 0;
    for (int i = 1; i < 3; i++)
        if (R[4 * i] > R[4 * k]) k = i;
    double n[3];
    for (int i = 0; i < 3; i++) n[i] = 0.5 * (R[3 * i + k] + R[3 * k + i]);
    n[k] -= c;
    lf_v3_scale(n, 1 / lf_v3_norm(n), n);
    /* Sign from the skew part s = sin(t) n (sin t >= 0). At exactly pi (s . n = 0) both signs
     * give R; take the first nonzero component positive. */
    double d = lf_v3_dot(s, n);
    if (d == 0) {
        for (int i = 0; i < 3; i++)
            if (n[i] != 0) { d = n[i]; break; }
    }
    lf_v3_scale(n, d < 0 ? -t : t, x);
}

/* ---------------------------------------------------------------- Cayley */

void lf_so3_cay(const double x[3], double R[9])
{
    double d = lf_v3_dot(x, x), n[3];
    if (!(d <= 0x1p+1000)) { /* |x| > 2^500 (or |x|^2 overflowed): 4t/(4 + t^2), 2t^2/(4 + t^2) */
        double t = lf_v3_norm(x);
        unit_axis(x, t, n);
        lf_so3_quadratic(n, 1.0, 4 / (t + 4 / t), 2 / (1 + 4 / t / t), R);
        return;
    }
    lf_so3_cay_kernel(x, R);
}

int lf_so3_cayinv(const double R[9], double x[3], lf_error *err)
{
    double d = 1 + lf_m3_trace(R);
    if (!(d > 1e-12))
        return lf_error_set(err, LF_EDOMAIN,
                            "cayinv: 1 + tr R = %.3g <= 1e-12 (rotation angle near pi)", d);
    /* (R - R^T) = 2 hat(vee(R)), so x = 2 vee((R - R^T)/(1 + tr R)) = 4 vee(R)/(1 + tr R). */
    double s[3];
    lf_so3_vee(R, s);
    lf_v3_scale(s, 4 / d, x);
    return LF_OK;
}

/* ---------------------------------------------------------------- differentials */

void lf_so3_dexp(const double x[3], double D[9])
{
    double t = lf_v3_norm(x), A, B, n[3];
    if (t > HUGE_ANGLE) { /* B t = (1 - cos t)/t, C t^2 = (t - sin t)/t */
        double h = sin(0.5 * t);
        unit_axis(x, t, n);
        lf_so3_quadratic(n, 1.0, 2 * h * h / t, 1 - sin(t) / t, D);
        return;
    }
    coef_ab(t, &A, &B);
    lf_so3_quadratic(x, 1.0, B, coef_c(t), D);
}

void lf_so3_dexpinv(const double x[3], double D[9])
{
    double t = lf_v3_norm(x), n[3];
    if (t > HUGE_ANGLE) { /* -t/2, D t^2 = 1 - (t/2) cot(t/2) */
        double h = 0.5 * t;
        unit_axis(x, t, n);
        lf_so3_quadratic(n, 1.0, -h, 1 - h / tan(h), D);
        return;
    }
    lf_so3_quadratic(x, 1.0, -0.5, coef_d(t), D);
}

void lf_so3_dcay(const double x[3], double D[9])
{
    double d = lf_v3_dot(x, x), n[3];
    if (!(d <= 0x1p+1000)) { /* q = 4/(4 + t^2), q t/2 = 2/(t + 4/t) */
        double t = lf_v3_norm(x);
        unit_axis(x, t, n);
        lf_so3_quadratic(n, 4 / t / (t + 4 / t), 2 / (t + 4 / t), 0.0, D);
        return;
    }
    double q = 4 / (4 + d);
    lf_so3_quadratic(x, q, 0.5 * q, 0.0, D);
}

void lf_so3_dcayinv(const double x[3], double D[9])
{
    /* I - hat(x)/2 + x x^T/4 = (1 + |x|^2/4) I - hat(x)/2 + hat(x)^2/4 (overflows only where the
     * entries themselves do, |x| > ~1e154) */
    lf_so3_quadratic(x, 1 + 0.25 * lf_v3_dot(x, x), -0.5, 0.25, D);
}

void lf_so3_Ad(const double R[9], double A[9]) { lf_m3_copy(R, A); }

/* ---------------------------------------------------------------- distances */

double lf_so3_dist(const double R1[9], const double R2[9])
{
    double D[9];
    lf_m3_sub(R1, R2, D);
    return lf_m3_fnorm(D);
}

double lf_so3_angle(const double R1[9], const double R2[9])
{
    double M[9], s[3], c;
    lf_m3_tmul(R1, R2, M);
    return angle_of(M, s, &c);
}

/* ---------------------------------------------------------------- projection, random, checks */

/* The nearest rotation R to M maximizes f(R) = tr(R^T M). With M = U S V^T (s1 >= s2 >= s3 >= 0)
 * it is U diag(1, 1, d) V^T, d = sign det(U V^T); it is unique iff s2 + d s3 > 0 (rank >= 2, and
 * no tie s2 = s3 when a reflection has to be undone).
 *
 * How well a computed candidate R is determined is checked after the fact, whatever SVD produced
 * it: at the answer H = R^T M is symmetric; its skew part a = vee(H) is the gradient of f, and
 * G = tr(S) I - S (S the symmetric part of H) is the Hessian (times 2) on the tangent space, so
 * R is within an angle 2|a|/lambda_min(G) of the maximizer (a Newton step; the step is inside the
 * region of quadratic convergence when 2|a| s1/lambda_min(G)^2 is small). |a| gets the rounding
 * error of forming H added, bounded componentwise by 4u (|R|^T |M|)_ij, and lambda_min(G) is
 * bounded from below componentwise too (Gershgorin on G scaled to unit diagonal) or normwise
 * (s2 + d s3 - 8u s1). Componentwise matters for graded matrices: diag(1, 1, 1e104), whose answer
 * I is exact, passes; the same matrix in a rotated frame, whose answer double precision cannot
 * resolve, does not.
 *
 * Candidates, in this order: one-sided Jacobi SVD of M (no allocation; relative accuracy for
 * graded M = B D with B well conditioned), Golub-Reinsch SVD (normwise accurate), Jacobi of M^T
 * (graded rows), and Newton's polar iteration (below). The first candidate that passes is
 * returned. GSL errors (Golub-Reinsch does not always converge on subnormal entries) only drop
 * that candidate. */
#define PROJECT_TOL 1e-9
#define UNIT_ROUNDOFF 0x1p-53

typedef struct {
    double R[9];
    double sv[3];   /* singular values of the scaled M, decreasing */
    double bound;   /* error bound of R (angle), +inf when it does not pass */
    int reflect;
    int singular;   /* s2 + d s3 is 0 within rounding: not unique */
    int gsl_errno;  /* GSL error of the SVD (0: none) */
    char reason[128];
} project_candidate;

/* The a posteriori bound of the candidate c->R (see above); mu = s2 + d s3 from the SVD, or 0
 * when unknown (then only the componentwise lower bound of lambda_min(G) counts). */
static void certify(const double Ms[9], double mu, project_candidate *c)
{
    const double *sv = c->sv;
    double H[9], A[9], Ma[9], Ra[9], a[3], Gm[9], noise[9];
    lf_m3_tmul(c->R, Ms, H);
    lf_so3_vee(H, a);
    for (int i = 0; i < 9; i++) {
        Ma[i] = fabs(Ms[i]);
        Ra[i] = fabs(c->R[i]);
    }
    lf_m3_tmul(Ra, Ma, A);
    for (int i = 0; i < 9; i++) noise[i] = 8 * UNIT_ROUNDOFF * A[i];
    double na = 0.5 * fmax(fmax(fmax(A[1], A[2]), fmax(A[3], A[5])), fmax(A[6], A[7])) * 8 * UNIT_ROUNDOFF;
    /* G = tr(S) I - S; its diagonal as sums of the other two (no cancellation against the trace:
     * G_33 = S_11 + S_22 = 2e-104 next to S_33 = 1 for diag(1e-104, 1e-104, 1)) */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) Gm[3 * i + j] = -0.5 * (H[3 * i + j] + H[3 * j + i]);
    Gm[0] = H[4] + H[8];
    Gm[4] = H[0] + H[8];
    Gm[8] = H[0] + H[4];
    double gnoise[3] = {noise[4] + noise[8], noise[0] + noise[8], noise[0] + noise[4]};
    double gmin = INFINITY, r = 0;
    int pos = 1;
    for (int i = 0; i < 3; i++) {
        double d = Gm[4 * i] - gnoise[i];
        if (!(d > 0)) pos = 0;
        gmin = fmin(gmin, d);
    }
    if (pos)
        for (int i = 0; i < 3; i++) {
            double ri = 0;
            for (int j = 0; j < 3; j++)
                if (j != i)
                    ri += (fabs(Gm[3 * i + j]) + noise[3 * i + j] + noise[3 * j + i]) /
                          sqrt((Gm[4 * i] - gnoise[i]) * (Gm[4 * j] - gnoise[j]));
            r = fmax(r, ri);
        }
    double mu_g = pos && r < 1 ? (1 - r) * gmin : 0;
    double mu_n = mu - 8 * UNIT_ROUNDOFF * sv[0];
    double mu_lo = fmax(mu_g, mu_n);
    double res = lf_v3_norm(a) + na;
    if (!(mu_lo > 0)) return;
    double bound = 2 * res / mu_lo;
    /* Normwise, the step must also lie in the region of quadratic convergence. Componentwise
     * (Gershgorin: G positive definite at R itself), a point with a tiny gradient and a
     * negative definite Hessian of f is next to the one local maximum f has on SO(3). */
    if (mu_g < mu_n && !(2 * res * sv[0] / (mu_lo * mu_lo) <= 0.1)) return;
    double oe = lf_so3_orth_error(c->R), d = lf_m3_det(c->R);
    if (!(oe <= 1e-12) || !(fabs(d - 1) <= 1e-12)) return; /* never a non-rotation */
    c->bound = bound;
}

/* Candidate 3: the orthogonal polar factor by Newton's iteration X <- (g X + X^-T/g)/2 with the
 * Frobenius scaling g = sqrt(|X^-1|/|X|) (Higham), inverses by the adjugate. It needs no SVD and
 * keeps the grading of a matrix like one huge entry next to O(1) ones, where the SVDs lose the
 * small singular values. For det M < 0 it runs on -M, whose polar factor Q is a rotation; M =
 * (-Q) P, and the nearest rotation is Q (2 v v^T - I) with v the eigenvector of the smallest
 * eigenvalue of P = -Q^T M (inverse iteration, also by the adjugate). */
static int inv_adjugate(const double X[9], double Y[9]) /* Y = X^-1 */
{
    double d = lf_m3_det(X);
    if (!(d != 0) || !isfinite(d)) return 0;
    Y[0] = (X[4] * X[8] - X[5] * X[7]) / d; Y[1] = (X[2] * X[7] - X[1] * X[8]) / d; Y[2] = (X[1] * X[5] - X[2] * X[4]) / d;
    Y[3] = (X[5] * X[6] - X[3] * X[8]) / d; Y[4] = (X[0] * X[8] - X[2] * X[6]) / d; Y[5] = (X[2] * X[3] - X[0] * X[5]) / d;
    Y[6] = (X[3] * X[7] - X[4] * X[6]) / d; Y[7] = (X[1] * X[6] - X[0] * X[7]) / d; Y[8] = (X[0] * X[4] - X[1] * X[3]) / d;
    return lf_m3_isfinite(Y);
}

static void polar_newton(const double Ms[9], project_candidate *c)
{
    double X[9], Y[9], Yt[9];
    c->bound = INFINITY;
    c->singular = 0;
    c->gsl_errno = 0;
    double det = lf_m3_det(Ms);
    c->reflect = det < 0;
    lf_v3_set(c->sv, lf_m3_fnorm(Ms), 0, 0);
    if (!(det != 0) || !isfinite(det)) return;
    lf_m3_scale(Ms, c->reflect ? -1 : 1, X);
    int scaled = 1, converged = 0;
    for (int it = 0; it < 100 && !converged; it++) {
        if (!inv_adjugate(X, Y)) return;
        lf_m3_transpose(Y, Yt);
        double g = scaled ? sqrt(lf_m3_fnorm(Y) / lf_m3_fnorm(X)) : 1, diff = 0, nx = 0;
        if (!(g > 0) || !isfinite(g)) return;
        for (int i = 0; i < 9; i++) {
            double x = 0.5 * (g * X[i] + Yt[i] / g);
            diff = fmax(diff, fabs(x - X[i]));
            nx = fmax(nx, fabs(x));
            X[i] = x;
        }
        if (diff <= 1e-2 * nx) scaled = 0; /* near the end: unscaled, quadratic convergence */
        converged = diff <= 4 * UNIT_ROUNDOFF * nx;
    }
    if (!converged) return;
    if (c->reflect) {
        double P[9], Pi[9], v[3] = {1, 1, 1}, w[3];
        double Mn[9];
        lf_m3_scale(Ms, -1, Mn);
        lf_m3_tmul(X, Mn, P);
        if (!inv_adjugate(P, Pi)) return;
        /* start from the unit vector of the largest diagonal entry of P^-1 */
        int k = 0;
        for (int i = 1; i < 3; i++)
            if (fabs(Pi[4 * i]) > fabs(Pi[4 * k])) k = i;
        lf_v3_set(v, 0, 0, 0);
        v[k] = 1;
        for (int it = 0; it < 200; it++) {
            lf_m3_apply(Pi, v, w);
            double n = lf_v3_norm(w);
            if (!(n > 0) || !isfinite(n)) return;
            for (int i = 0; i < 3; i++) w[i] /= n;
            double dv = fmax(fmax(fabs(w[0] - v[0]), fabs(w[1] - v[1])), fabs(w[2] - v[2]));
            lf_v3_copy(w, v);
            if (dv <= 4 * UNIT_ROUNDOFF) break;
        }
        double F[9]; /* 2 v v^T - I */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) F[3 * i + j] = 2 * v[i] * v[j] - (i == j);
        lf_m3_mul(X, F, X);
    }
    lf_m3_copy(X, c->R);
    certify(Ms, 0, c);
}

/* One candidate from the SVD of Ms (method 0: Golub-Reinsch, 1: Jacobi, 2: Jacobi of Ms^T). */
static void project_try(const double Ms[9], int method, project_candidate *c)
{
    double u[9], v[9], sv[3], work[3];
    c->bound = INFINITY;
    c->singular = 0;
    c->gsl_errno = 0;
    if (method == 2) lf_m3_transpose(Ms, u);
    else lf_m3_copy(Ms, u);
    gsl_matrix_view U = gsl_matrix_view_array(u, 3, 3); /* overwritten with U */
    gsl_matrix_view V = gsl_matrix_view_array(v, 3, 3);
    gsl_vector_view S = gsl_vector_view_array(sv, 3);
    gsl_vector_view W = gsl_vector_view_array(work, 3);
    /* GSL errors (no convergence, no memory) are recorded by the guard, never abort()ed.
     * (GSL 2.7 allocates three small temporaries inside gsl_linalg_bidiag_decomp.) */
    if (method == 3) {
        polar_newton(Ms, c);
        return;
    }
    if (method == 0) {
        /* GSL 2.7's gsl_linalg_bidiag_decomp does not check its small allocations: when they
         * fail, the error handler returns and GSL dereferences NULL. Do not call it when a
         * small allocation fails here. (The Jacobi SVD does not allocate.) */
        void *probe = malloc(4096);
        if (!probe) {
            c->gsl_errno = GSL_ENOMEM;
            snprintf(c->reason, sizeof c->reason, "no memory for the Golub-Reinsch SVD");
            return;
        }
        free(probe);
    }
    lf_gsl_guard g;
    lf_gsl_guard_begin(&g);
    int st = method == 0 ? gsl_linalg_SV_decomp(&U.matrix, &V.matrix, &S.vector, &W.vector)
                         : gsl_linalg_SV_decomp_jacobi(&U.matrix, &V.matrix, &S.vector);
    int gerr = lf_gsl_guard_end(&g);
    if (st || gerr) {
        c->gsl_errno = gerr ? gerr : st;
        snprintf(c->reason, sizeof c->reason, "%s", gerr ? g.reason : gsl_strerror(st));
        return;
    }
    if (method == 2) { /* Ms^T = U S V^T, so Ms = V S U^T */
        double t[9];
        lf_m3_copy(u, t);
        lf_m3_copy(v, u);
        lf_m3_copy(t, v);
    }
    /* sort decreasingly (Jacobi), permuting the columns of U and V alike */
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2 - i; j++)
            if (sv[j] < sv[j + 1]) {
                double t = sv[j]; sv[j] = sv[j + 1]; sv[j + 1] = t;
                for (int r = 0; r < 3; r++) {
                    t = u[3 * r + j]; u[3 * r + j] = u[3 * r + j + 1]; u[3 * r + j + 1] = t;
                    t = v[3 * r + j]; v[3 * r + j] = v[3 * r + j + 1]; v[3 * r + j + 1] = t;
                }
            }
    if (!lf_m3_isfinite(u) || !lf_m3_isfinite(v) || !(sv[2] >= 0)) return;
    if (method != 0) { /* Jacobi leaves a zero column in U for a zero singular value: complete the basis */
        double c0[3] = {u[0], u[3], u[6]}, c1[3] = {u[1], u[4], u[7]}, c2[3];
        if (fabs(u[2] * u[2] + u[5] * u[5] + u[8] * u[8] - 1) > 1e-8) {
            lf_v3_cross(c0, c1, c2);
            u[2] = c2[0]; u[5] = c2[1]; u[8] = c2[2];
        }
        double d0[3] = {v[0], v[3], v[6]}, d1[3] = {v[1], v[4], v[7]}, d2[3];
        if (fabs(v[2] * v[2] + v[5] * v[5] + v[8] * v[8] - 1) > 1e-8) {
            lf_v3_cross(d0, d1, d2);
            v[2] = d2[0]; v[5] = d2[1]; v[8] = d2[2];
        }
    }
    lf_v3_copy(sv, c->sv);
    c->reflect = lf_m3_det(u) * lf_m3_det(v) < 0;
    double mu = c->reflect ? sv[1] - sv[2] : sv[1] + sv[2];
    /* M = U S V^T. A reflection (det(U V^T) < 0) is undone by flipping the direction of the
     * smallest singular value. */
    if (c->reflect)
        for (int i = 0; i < 3; i++) u[3 * i + 2] = -u[3 * i + 2];
    lf_m3_mult(u, v, c->R);
    /* s2 + d s3 is 0 within normwise rounding (the message then says "not unique"; the check
     * below may still certify R componentwise, as for diag(1, 1, 1e104)) */
    c->singular = !(mu > 4 * UNIT_ROUNDOFF * sv[0]);
    certify(Ms, mu, c);
}

int lf_so3_project(const double M[9], double R[9], lf_error *err)
{
    if (!lf_m3_isfinite(M))
        return lf_error_set(err, LF_EINVAL, "so3 project: matrix has a non-finite entry");
    /* Scale by a power of two so that the largest entry is in [0.5, 1): exact, and it keeps the
     * SVD clear of overflow (entries ~1e200) and of subnormal numbers (entries ~1e-310, for which
     * GSL returned non-orthogonal factors). */
    double m = 0;
    for (int i = 0; i < 9; i++) m = fmax(m, fabs(M[i]));
    if (m == 0)
        return lf_error_set(err, LF_EDOMAIN, "so3 project: the nearest rotation to the zero matrix is not unique");
    int e;
    frexp(m, &e);
    double Ms[9];
    for (int i = 0; i < 9; i++) Ms[i] = ldexp(M[i], -e);
    project_candidate c[4];
    int best = -1;
    static const int order[4] = {1, 0, 2, 3}; /* Jacobi, Golub-Reinsch, Jacobi of M^T, polar Newton */
    for (int k = 0; k < 4; k++) {
        project_try(Ms, order[k], &c[k]);
        if (c[k].bound <= PROJECT_TOL) {
            lf_m3_copy(c[k].R, R);
            return LF_OK;
        }
        if (!c[k].gsl_errno && (best < 0 || c[k].bound < c[best].bound)) best = k;
    }
    if (best < 0) {
        int ge = c[1].gsl_errno;
        return lf_error_set(err, ge == GSL_ENOMEM ? LF_ENOMEM : LF_ENOCONV, "so3 project: SVD failed (%s: %s)",
                            gsl_strerror(ge), c[1].reason);
    }
    /* the message quotes the Golub-Reinsch singular values (normwise accurate; Jacobi may round
     * tiny ones of a graded matrix to 0) */
    const project_candidate *b = c[1].gsl_errno ? &c[best] : &c[1];
    if (b->singular) {
        double s1 = b->sv[1], s2 = b->sv[2];
        int exact = b->reflect ? s1 == s2 : s1 == 0;
        return lf_error_set(err, LF_EDOMAIN, "so3 project: the nearest rotation is not unique%s (%ssingular values %.3g, %.3g, %.3g%s)",
                            exact ? "" : " within rounding error", exact ? "" : "computed ", ldexp(b->sv[0], e),
                            ldexp(s1, e), ldexp(s2, e), b->reflect ? ", det < 0" : "");
    }
    return lf_error_set(err, LF_EDOMAIN,
                        "so3 project: the nearest rotation cannot be determined to %g in double precision "
                        "(singular values %.3g, %.3g, %.3g%s; error bound %.2g)",
                        PROJECT_TOL, ldexp(b->sv[0], e), ldexp(b->sv[1], e), ldexp(b->sv[2], e),
                        b->reflect ? ", det < 0" : "", b->bound);
}

int lf_so3_random(unsigned long seed, double R[9], lf_error *err)
{
    /* A normalized vector of 4 independent normal deviates is uniform on S^3, and the
     * corresponding rotation is Haar-distributed. Note: GSL's mt19937 maps seed 0 to its
     * default seed 4357. */
    lf_gsl_guard g;
    lf_gsl_guard_begin(&g);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    double q[4], n2;
    if (rng) {
        gsl_rng_set(rng, seed);
        do {
            n2 = 0;
            for (int i = 0; i < 4; i++) {
                q[i] = gsl_ran_ugaussian(rng);
                n2 += q[i] * q[i];
            }
        } while (!(n2 > 1e-20));
        gsl_rng_free(rng);
    }
    int gerr = lf_gsl_guard_end(&g);
    if (!rng || gerr)
        return lf_error_set(err, gerr == GSL_ENOMEM || !rng ? LF_ENOMEM : LF_EINVAL,
                            "so3 random: GSL random number generator failed (%s)", gerr ? g.reason : "no memory");
    lf_quat_to_matrix(q, R); /* normalizes q */
    return LF_OK;
}

double lf_so3_orth_error(const double R[9])
{
    double E[9];
    lf_m3_tmul(R, R, E);
    E[0] -= 1; E[4] -= 1; E[8] -= 1;
    return lf_m3_fnorm(E);
}

int lf_so3_check(const double R[9], double tol, const char *what, lf_error *err)
{
    if (!what) what = "R";
    if (!lf_m3_isfinite(R))
        return lf_error_set(err, LF_EINVAL, "%s is not a rotation: it has a non-finite entry", what);
    double e = lf_so3_orth_error(R);
    /* a rotation written out with a few digits (e.g. printed to 8) misses by about 1e-8: say how to
     * get the nearest rotation instead of only refusing it */
    if (!(e <= tol))
        return lf_error_set(err, LF_EINVAL, "%s is not a rotation: ||R^T R - I|| = %.2g > %g%s", what, e, tol,
                            e < 1e-3 ? " (close to one, as when copied with a few digits: lf.so3.project(R) in "
                                       "Lua, lf_so3_project in C, gives the nearest rotation)"
                                     : "");
    double d = lf_m3_det(R);
    if (!(fabs(d - 1) <= tol))
        return lf_error_set(err, LF_EINVAL, "%s is not a rotation: det R = %.17g (|det R - 1| > %g)",
                            what, d, tol);
    return LF_OK;
}
