/* lieflow — SO(3) maps (conventions in so3.h). */
#include "so3.h"

#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "linalg.h"
#include "quat.h"
#include "so3_kernels_internal.h"

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

/* ---------------------------------------------------------------- hat / vee */

void lf_so3_hat(const double w[3], double W[9])
{
    W[0] = 0;     W[1] = -w[2]; W[2] = w[1];
    W[3] = w[2];  W[4] = 0;     W[5] = -w[0];
    W[6] = -w[1]; W[7] = w[0];  W[8] = 0;
}

void lf_so3_vee(const double W[9], double w[3])
{
    w[0] = 0.5 * (W[7] - W[5]);
    w[1] = 0.5 * (W[2] - W[6]);
    w[2] = 0.5 * (W[3] - W[1]);
}

/* ---------------------------------------------------------------- exp / log */

void lf_so3_exp(const double x[3], double R[9])
{
    double A, B;
    coef_ab(lf_v3_norm(x), &A, &B); /* |x|^2 may underflow: then t = 0 and the series is exact */
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

void lf_so3_cay(const double x[3], double R[9]) { lf_so3_cay_kernel(x, R); }

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
    double t = lf_v3_norm(x), A, B;
    coef_ab(t, &A, &B);
    lf_so3_quadratic(x, 1.0, B, coef_c(t), D);
}

void lf_so3_dexpinv(const double x[3], double D[9])
{
    lf_so3_quadratic(x, 1.0, -0.5, coef_d(lf_v3_norm(x)), D);
}

void lf_so3_dcay(const double x[3], double D[9])
{
    double q = 4 / (4 + lf_v3_dot(x, x));
    lf_so3_quadratic(x, q, 0.5 * q, 0.0, D);
}

void lf_so3_dcayinv(const double x[3], double D[9])
{
    /* I - hat(x)/2 + x x^T/4 = (1 + |x|^2/4) I - hat(x)/2 + hat(x)^2/4 */
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

int lf_so3_project(const double M[9], double R[9], lf_error *err)
{
    if (!lf_m3_isfinite(M))
        return lf_error_set(err, LF_EINVAL, "so3 project: matrix has a non-finite entry");
    /* Golub-Reinsch SVD on stack views. (GSL 2.7 still allocates three small temporaries inside
     * gsl_linalg_bidiag_decomp; the allocation-free gsl_linalg_SV_decomp_jacobi is not usable
     * here: it leaves zero columns in U for a rank-deficient M.) */
    double u[9], v[9], sv[3], work[3];
    lf_m3_copy(M, u);
    gsl_matrix_view U = gsl_matrix_view_array(u, 3, 3); /* overwritten with U */
    gsl_matrix_view V = gsl_matrix_view_array(v, 3, 3);
    gsl_vector_view S = gsl_vector_view_array(sv, 3);
    gsl_vector_view W = gsl_vector_view_array(work, 3);
    int st = gsl_linalg_SV_decomp(&U.matrix, &V.matrix, &S.vector, &W.vector);
    if (st)
        return lf_error_set(err, LF_EINVAL, "so3 project: SVD failed (%s)", gsl_strerror(st));
    /* M = U S V^T. A reflection (det(U V^T) < 0) is fixed by flipping the direction of the
     * smallest singular value: R = U diag(1, 1, -1) V^T in that ordering. */
    /* GSL sorts sv descending. The nearest rotation is unique unless rank M < 2, or a reflection
     * has to be undone and the two smallest singular values tie (then any axis in their plane works). */
    int reflect = lf_m3_det(u) * lf_m3_det(v) < 0;
    if (!(sv[1] > 1e-14 * sv[0]) || (reflect && sv[1] - sv[2] <= 1e-14 * sv[0]))
        return lf_error_set(err, LF_EDOMAIN,
                            "so3 project: the nearest rotation is not unique (singular values %.3g, %.3g, %.3g%s)",
                            sv[0], sv[1], sv[2], reflect ? ", det < 0" : "");
    if (reflect) {
        int k = 0;
        for (int i = 1; i < 3; i++)
            if (sv[i] < sv[k]) k = i;
        for (int i = 0; i < 3; i++) u[3 * i + k] = -u[3 * i + k];
    }
    lf_m3_mult(u, v, R);
    return LF_OK;
}

void lf_so3_random(unsigned long seed, double R[9])
{
    /* A normalized vector of 4 independent normal deviates is uniform on S^3, and the
     * corresponding rotation is Haar-distributed. Note: GSL's mt19937 maps seed 0 to its
     * default seed 4357. */
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, seed);
    double q[4], n2;
    do {
        n2 = 0;
        for (int i = 0; i < 4; i++) {
            q[i] = gsl_ran_ugaussian(rng);
            n2 += q[i] * q[i];
        }
    } while (!(n2 > 1e-20));
    gsl_rng_free(rng);
    lf_quat_to_matrix(q, R); /* normalizes q */
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
