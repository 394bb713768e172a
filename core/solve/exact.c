/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the torque-free rigid body in closed form: body angular velocity (Jacobi elliptic
 * functions) and attitude (elliptic integral of the third kind), from GSL.
 * Formulas, derivation and sign conventions: core/solve/exact.h. */
#include "solve/exact.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_ellint.h>
#include <gsl/gsl_sf_elljac.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gsl_guard_internal.h"
#include "base/linalg.h"
#include "lie/so3.h"

#define PI_D 3.14159265358979323846
#define KP_TINY 1e-20     /* k' below this: separatrix forms of the third-kind integral (error O(k'^2 K)) */
#define PHASE_MAX 1e15    /* |phase| beyond this: eps |phase| > 0.1 rad, no digit of the result is right */

enum { KIND_SPIN, KIND_AXISYM, KIND_TRIAXIAL };
enum { PI_DIRECT, PI_TRANSFORMED, PI_SEPARATRIX };

static double clamp(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }

/* Exponent e with max|x_i| = f 2^e, f in [0.5, 1) (0 if all are zero): scaling by 2^-e is exact. */
static int scale_exponent(const double x[3])
{
    double m = fmax(fabs(x[0]), fmax(fabs(x[1]), fabs(x[2])));
    int e = 0;
    if (m > 0) frexp(m, &e);
    return e;
}

/* sqrt(a^2 + b^2): plain when the squares can neither overflow nor underflow (glibc's hypot is slow) */
static double hyp(double a, double b)
{
    double m = fmax(fabs(a), fabs(b));
    if (m < 1e150 && m > 1e-150) return sqrt(a * a + b * b);
    return hypot(a, b);
}

/* |x| without overflow or underflow of the squares */
static double norm3(const double x[3])
{
    double m = fmax(fabs(x[0]), fmax(fabs(x[1]), fabs(x[2])));
    if (m < 1e150 && m > 1e-150) return sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    int e = scale_exponent(x);
    double a = ldexp(x[0], -e), b = ldexp(x[1], -e), c = ldexp(x[2], -e);
    return ldexp(sqrt(a * a + b * b + c * c), e);
}

/* ---------------------------------------------------------------- GSL calls, each inside a guard */

static int gsl_fail(lf_error *err, int st, const lf_gsl_guard *g, const char *call)
{
    int code = st == GSL_EDOM ? LF_EDOMAIN : LF_ENOCONV;
    return lf_error_set(err, code, "exact.free_body: %s failed: %s", call, g->reason[0] ? g->reason : gsl_strerror(st));
}

static int rf(double x, double y, double z, double *v, lf_error *err)
{
    gsl_sf_result r;
    lf_gsl_guard g;
    lf_gsl_guard_begin(&g);
    int st = gsl_sf_ellint_RF_e(x, y, z, GSL_PREC_DOUBLE, &r);
    int ge = lf_gsl_guard_end(&g);
    if (st || ge) {
        char call[160];
        snprintf(call, sizeof call, "gsl_sf_ellint_RF(%.17g, %.17g, %.17g)", x, y, z);
        return gsl_fail(err, st ? st : ge, &g, call);
    }
    *v = r.val;
    return LF_OK;
}

static int rj(double x, double y, double z, double p, double *v, lf_error *err)
{
    gsl_sf_result r;
    lf_gsl_guard g;
    lf_gsl_guard_begin(&g);
    int st = gsl_sf_ellint_RJ_e(x, y, z, p, GSL_PREC_DOUBLE, &r);
    int ge = lf_gsl_guard_end(&g);
    if (st || ge) {
        char call[200];
        snprintf(call, sizeof call, "gsl_sf_ellint_RJ(%.17g, %.17g, %.17g, %.17g)", x, y, z, p);
        return gsl_fail(err, st ? st : ge, &g, call);
    }
    *v = r.val;
    return LF_OK;
}

/* sn, cn, dn(u | m) with k' = sqrt(1 - m) given accurately (m + k'^2 = 1).
 * gsl_sf_elljac_e takes m alone, so near m = 1 it sees 1 - m only to an absolute eps; near the
 * separatrix that shifts the period (K ~ log(4/k')) and, over many periods, the phase (8e-8 at
 * 1 - m = 2e-10, t = 100). For k'^2 < 1/4 one descending Landen (Gauss) transformation, DLMF 22.7.1-22.7.2,
 * with k1 = (1 - k')/(1 + k'), k1' = 2 sqrt(k')/(1 + k'), w = u/(1 + k1):
 *     sn(u|k) = (1 + k1) sn(w|k1) / (1 + k1 sn^2(w|k1)),   cn(u|k) = cn(w|k1) dn(w|k1) / (1 + k1 sn^2(w|k1)),
 * repeated until k1'^2 >= 1/4 (k' -> ~2 sqrt(k'): 9 steps from k' = 1e-300); then GSL. The identities
 * sn^2 + cn^2 = 1 and dn^2 = k'^2 + m cn^2 (no cancellation) give dn and keep the invariants of the
 * body at rounding level. */
static int elljac_rec(double u, double m, double kp, int depth, double *sn, double *cn, double *dn)
{
    if (kp * kp >= 0.25 || depth >= 16) return gsl_sf_elljac_e(u, m, sn, cn, dn);
    double k1 = (1 - kp) / (1 + kp), kp1 = 2 * sqrt(kp) / (1 + kp);
    double s1, c1, d1;
    int st = elljac_rec(u / (1 + k1), k1 * k1, kp1, depth + 1, &s1, &c1, &d1);
    double den = 1 + k1 * s1 * s1, s = (1 + k1) * s1 / den, c = c1 * d1 / den, h = hyp(s, c);
    *sn = s / h;
    *cn = c / h;
    *dn = hyp(kp, sqrt(m) * (*cn));
    return st;
}

static int elljac(double u, double m, double kp, double *sn, double *cn, double *dn, lf_error *err)
{
    lf_gsl_guard g;
    lf_gsl_guard_begin(&g);
    int st = elljac_rec(u, m, kp, 0, sn, cn, dn);
    int ge = lf_gsl_guard_end(&g);
    if (st || ge) {
        char call[160];
        snprintf(call, sizeof call, "gsl_sf_elljac(u=%.17g, m=%.17g)", u, m);
        return gsl_fail(err, st ? st : ge, &g, call);
    }
    return LF_OK;
}

/* Arithmetic-geometric mean of 1 and k' (0 < k' <= 1): K(m) = pi / (2 AGM(1, k')), DLMF 19.8.5;
 * accurate for every k' (no 1 - m is formed). */
static double agm1(double kp)
{
    double a = 1, g = kp;
    /* quadratic convergence: once |a - g| <= 1e-8 a, the mean (a + g)/2 is the limit to (1e-8)^2 / 8 */
    for (int i = 0; i < 64 && fabs(a - g) > 1e-8 * a; i++) {
        double an = 0.5 * (a + g);
        g = sqrt(a * g);
        a = an;
    }
    return 0.5 * (a + g);
}

/* ---------------------------------------------------------------- quaternions (scalar first) */

static void qmul(const double p[4], const double q[4], double r[4])
{
    double w = p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3];
    double x = p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2];
    double y = p[0] * q[2] - p[1] * q[3] + p[2] * q[0] + p[3] * q[1];
    double z = p[0] * q[3] + p[1] * q[2] - p[2] * q[1] + p[3] * q[0];
    r[0] = w, r[1] = x, r[2] = y, r[3] = z;
}

/* rotation matrix of q / |q| (x -> q x q^*) */
static void qmatrix(const double q[4], double R[9])
{
    double n = 1 / sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    double w = q[0] * n, x = q[1] * n, y = q[2] * n, z = q[3] * n;
    R[0] = 1 - 2 * (y * y + z * z), R[1] = 2 * (x * y - w * z), R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z), R[4] = 1 - 2 * (x * x + z * z), R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y), R[7] = 2 * (y * z + w * x), R[8] = 1 - 2 * (x * x + y * y);
}

/* Quaternion of the smallest rotation Q with Q mhat = e, e = sd e_d (sd = +-1), mhat = Pi / |Pi|:
 * q = (1 + mhat.e, mhat x e) / sqrt(2 (1 + mhat.e)); mhat.e = |mhat_d| >= 0 keeps it well conditioned. */
static void qalign(const double J[3], const double w[3], int d, double sd, double q[4])
{
    double P[3] = {J[0] * w[0], J[1] * w[1], J[2] * w[2]}, M = norm3(P);
    int a = (d + 1) % 3, b = (d + 2) % 3;
    double ma = P[a] / M, mb = P[b] / M, md = P[d] / M;
    double c = 1 + fabs(md), h = 1 / sqrt(2 * c);
    /* mhat x e_d = mhat_b e_a - mhat_a e_b */
    q[0] = c * h;
    q[1 + a] = sd * mb * h;
    q[1 + b] = -sd * ma * h;
    q[1 + d] = 0;
}

/* ---------------------------------------------------------------- the plan */

/* Axisymmetric body J_a = J_b = A, J_d = C, (a, b, d) cyclic: A w_a' = (A - C) w_b w_d and
 * A w_b' = (C - A) w_d w_a, so (w_a + i w_b)' = i l (w_a + i w_b) with l = (C - A) w_d / A. */
static void axisym_w(const lf_exact_fb_plan *p, double tn, double out[3])
{
    int d = p->d, a = (d + 1) % 3, b = (d + 2) % 3;
    double th = p->l * tn, c = cos(th), s = sin(th);
    out[a] = p->W[a] * c - p->W[b] * s;
    out[b] = p->W[a] * s + p->W[b] * c;
    out[d] = p->W[d];
}

/* X(phi) for phi = am(r), |phi| <= pi/2 (sin phi = s, cos phi = c >= 0, Delta = sqrt(1 - m s^2) = dl):
 * Pi(n; phi | m) = aF F(phi | m) + X(phi), F(phi | m) = r (exact.h, step 5). */
static int xfun(const lf_exact_fb_plan *p, double s, double c, double dl, double *X, lf_error *err)
{
    double v = 0, v2 = 0;
    int rcode;
    switch (p->pmode) {
    case PI_DIRECT: /* X = (n/3) s^3 R_J(c^2, Delta^2, 1, 1 - n s^2), DLMF 19.25.14 */
        if (s == 0) return *X = 0, LF_OK;
        if ((rcode = rj(c * c, dl * dl, 1, 1 - p->n * s * s, &v, err)) != LF_OK) return rcode;
        *X = p->n / 3 * s * s * s * v;
        return LF_OK;
    case PI_TRANSFORMED:
        /* X = s R_C(c^2 Delta^2, (1 - n s^2)(1 + mu s^2)) + (mu/3) s^3 R_J(c^2, Delta^2, 1, 1 + mu s^2) (DLMF 19.7.9
         * with 19.25.14); the two R_C arguments differ by s^2 (1 - n)(1 + mu) = (omega s)^2 exactly (mu n = -m), so
         * s R_C = atan2(omega s, c Delta) / omega (DLMF 19.2.17), continuous through phi = +-pi/2 */
        v2 = 0;
        if (p->mu * s * s > 1e-30 && (rcode = rj(c * c, dl * dl, 1, 1 + p->mu * s * s, &v2, err)) != LF_OK) return rcode;
        *X = atan2(p->om * s, c * dl) / p->om + p->mu / 3 * s * s * s * v2;
        return LF_OK;
    default: /* separatrix form: X = sqrt(-n) atan(sqrt(-n) s) / (1 - n) */
        *X = p->sqn * atan(p->sqn * s) / (1 - p->n);
        return LF_OK;
    }
}

/* X at phi = pi/2 (complete) */
static int xcomplete(const lf_exact_fb_plan *p, double *Xc, lf_error *err)
{
    double v = 0;
    int rcode;
    switch (p->pmode) {
    case PI_DIRECT:
        if ((rcode = rj(0, p->kp * p->kp, 1, 1 - p->n, &v, err)) != LF_OK) return rcode;
        *Xc = p->n / 3 * v;
        return LF_OK;
    case PI_TRANSFORMED:
        v = 0;
        if (p->mu > 1e-30 && (rcode = rj(0, p->kp * p->kp, 1, 1 + p->mu, &v, err)) != LF_OK) return rcode;
        *Xc = PI_D / (2 * p->om) + p->mu / 3 * v;
        return LF_OK;
    default:
        *Xc = p->sqn * atan(p->sqn) / (1 - p->n);
        return LF_OK;
    }
}

static int bad_constant(lf_error *err, const double J[3], const char *what, double v)
{
    return lf_error_set(err, LF_EDOMAIN,
                        "exact.free_body: J = (%.17g, %.17g, %.17g) too disparate for this motion (%s = %g is out of the range of doubles)",
                        J[0], J[1], J[2], what, v);
}

/* The phase u0 = F(am u0 | m) = sn0 R_F(cn0^2, dn0^2, 1), |am u0| <= pi/2 (Carlson form of the incomplete
 * integral F); on the separatrix u0 = asinh(sn0 / cn0). Needed only for evaluations far from t = 0. */
static int phase0(const lf_exact_fb_plan *p, double *u0, lf_error *err)
{
    double sn0 = p->sn0, cn0 = p->cn0, dn0 = p->dn0, v = 0;
    if (p->kp == 0) {
        *u0 = asinh(sn0 / cn0);
        return LF_OK;
    }
    if (cn0 + dn0 < 1e-100) { /* at the middle axis: R_F(x, y, 1) = log(4 / (sqrt x + sqrt y)) + O(x + y) (DLMF 19.27.3) */
        *u0 = sn0 * log(4 / (cn0 + dn0));
        return LF_OK;
    }
    int rcode = rf(cn0 * cn0, dn0 * dn0, 1, &v, err);
    if (rcode != LF_OK) return rcode;
    *u0 = sn0 * v;
    return LF_OK;
}

/* Triaxial body (all moments distinct); W normalized (max |W_i| in [0.5, 1)), at least two W_i nonzero. */
static int triaxial_init(lf_exact_fb_plan *p, const double J[3], const double *Jorig, int attitude, int complete,
                         lf_error *err)
{
    const double *W = p->W;
    /* sort the axes by moment: J[i1] < J[i2] < J[i3] */
    int i1 = 0, i2 = 1, i3 = 2, tmp;
    if (J[i1] > J[i2]) tmp = i1, i1 = i2, i2 = tmp;
    if (J[i2] > J[i3]) tmp = i2, i2 = i3, i3 = tmp;
    if (J[i1] > J[i2]) tmp = i1, i1 = i2, i2 = tmp;

    /* S = M^2 - 2E I2 = I1 w1^2 (I1 - I2) + I3 w3^2 (I3 - I2), the only difference that may cancel:
     * in extended precision, and in units of q^2 (q = 2^qe ~ max(|w1|, |w3|) > 0, as w0 is not
     * along the middle axis alone) so that tiny w1, w3 do not underflow. */
    int qe = 0;
    frexp(fmax(fabs(W[i1]), fabs(W[i3])), &qe);
    double q = ldexp(1.0, qe), x1 = ldexp(W[i1], -qe), x3 = ldexp(W[i3], -qe);
    long double I1 = J[i1], I2 = J[i2], I3 = J[i3];
    long double Sq = I1 * x1 * x1 * (I1 - I2) + I3 * x3 * x3 * (I3 - I2);

    /* (c, s, d): cn, sn and dn axis; the motion circulates around d */
    int c = i1, s = i2, d = i3;
    if (Sq < 0) c = i3, d = i1;
    p->c = c, p->s = s, p->d = d;
    double A1 = J[c], A2 = J[s], A3 = J[d], Wc = W[c], Ws = W[s], Wd = W[d];
    /* r12 = (A2/A1)(A3 - A2)/(A3 - A1) > 0 on either side, r23 = (A2/A3)(A2 - A1)/(A3 - A1): products that
     * underflow in double for moments 1e220 apart (as ra = a2/a3 below may overflow), so in extended
     * precision, whose range holds every product of four doubles */
    long double r12 = ((long double)A2 / A1) * (((long double)A3 - A2) / ((long double)A3 - A1));
    long double r23 = ((long double)A2 / A3) * (((long double)A2 - A1) / ((long double)A3 - A1));
    double a1 = hyp(Wc, (double)(Ws * sqrtl(r12)));
    double a2 = hyp(Ws, (double)(Wc / sqrtl(r12)));
    double a3 = hyp(Wd, (double)(Ws * sqrtl(r23)));
    double nu = a3 * sqrt(fabs(A3 - A2) / A1) * sqrt(fabs(A3 - A1) / A2);
    if (!isfinite(a1)) return bad_constant(err, Jorig, "a1", a1);
    if (!isfinite(a2)) return bad_constant(err, Jorig, "a2", a2);
    if (!isfinite(nu)) return bad_constant(err, Jorig, "nu", nu);
    p->a1 = a1, p->a2 = a2, p->a3 = a3, p->nu = nu;

    /* signs: s3 = sign w_d (constant), g = sign w_c(0) (half-period shift), sigma = direction */
    int eps = ((s - c + 3) % 3 == 1) ? 1 : -1; /* Levi-Civita sign of (c, s, d) */
    double s3 = Wd < 0 ? -1 : 1, g = Wc < 0 ? -1 : 1;
    double sigma = eps * s3 * (A2 < A3 ? 1 : -1);
    double cn0 = clamp(fabs(Wc) / a1, 0, 1), sn0 = clamp(g * sigma * Ws / a2, -1, 1), dn0 = clamp(fabs(Wd) / a3, 0, 1);
    p->s3 = s3, p->g = g, p->sigma = sigma;
    p->sn0 = sn0, p->cn0 = cn0, p->dn0 = dn0;

    if (Sq == 0) { /* on the separatrix: m = 1, cn = dn = sech, sn = tanh */
        p->kp = 0, p->m = 1, p->K = INFINITY;
    } else {
        /* k' = sqrt(1 - m) accurately from S (m itself would cancel near the separatrix; k' rather than
         * 1 - m, which underflows when w_c, w_d ~ 1e-160), m from its product formula */
        long double ra = (long double)a2 / a3;
        double kp = clamp((double)(sqrtl(Sq / (((long double)A3 - A2) * A3)) / ((long double)a3 / q)), 0, 1);
        double m = kp < 0.7 ? 1 - kp * kp : (double)(r23 * ra * ra);
        p->m = clamp(m, 0, 1), p->kp = kp;
        p->K = PI_D / (2 * agm1(kp));
    }
    p->have_u0 = 0;
    if (complete) { /* the full plan: the phase u0 now (otherwise when an evaluation needs it) */
        int rcode = phase0(p, &p->u0, err);
        if (rcode != LF_OK) return rcode;
        p->have_u0 = 1;
    }
    if (!attitude) return LF_OK;

    /* attitude (exact.h): psi' = M/A3 + C/(M + b dn u), integrated as
     * psi = (M/A3) t + (C'/nu) (M Jpi - b Jd), C' = (A3 - A1)/(A1 A3), n = -A3 (A2 - A1)/(A1 (A3 - A2)) */
    double b = A3 * a3, M = hyp(A1 * a1, b);
    double n = -(A3 / A1) * ((A2 - A1) / (A3 - A2));
    if (!isfinite(n) || !(1 - n < 1e300)) return bad_constant(err, Jorig, "n", n);
    p->M = M, p->b = b, p->n = n;
    p->rate = M / A3;
    p->coef = ((A3 - A1) / A1) / A3 / nu;
    p->sq1n = sqrt(1 - n), p->sqn = sqrt(-n);
    p->mu = 0;
    if (p->kp < KP_TINY) {
        p->pmode = PI_SEPARATRIX, p->aF = 1 / (1 - n);
    } else if (-n <= 1) {
        p->pmode = PI_DIRECT, p->aF = 1;
    } else {
        p->pmode = PI_TRANSFORMED, p->aF = 0, p->mu = p->m / -n;
        p->om = sqrt((1 - n) * (1 + p->mu));
    }
    if (!isfinite(p->coef * M) || !isfinite(p->rate)) return bad_constant(err, Jorig, "C'/nu", p->coef);
    /* values at u0 (|am u0| <= pi/2, j = 0) */
    double dl0 = p->kp == 0 ? cn0 : sqrt(cn0 * cn0 + p->kp * p->kp * sn0 * sn0);
    if (p->pmode == PI_TRANSFORMED || p->pmode == PI_DIRECT) {
        int rcode = xfun(p, sn0, cn0, dl0, &p->X0, err);
        if (rcode != LF_OK) return rcode;
    } else {
        p->X0 = p->sqn * atan(p->sqn * sn0) / (1 - n);
    }
    p->G0 = atan2(p->sq1n * sn0, cn0);
    p->have_Xc = 0;
    if (complete && p->kp > 0) {
        int rcode = xcomplete(p, &p->Xc, err);
        if (rcode != LF_OK) return rcode;
        p->have_Xc = 1;
    }
    return LF_OK;
}

static int check_inputs(const double J[3], const double w0[3], lf_error *err)
{
    for (int i = 0; i < 3; i++)
        if (!(isfinite(J[i]) && J[i] > 0))
            return lf_error_set(err, LF_EINVAL, "exact.free_body: moment of inertia J[%d] = %.17g must be finite and > 0",
                                i + 1, J[i]);
    for (int i = 0; i < 3; i++)
        if (!isfinite(w0[i]))
            return lf_error_set(err, LF_EINVAL, "exact.free_body: omega0[%d] = %.17g is not finite", i + 1, w0[i]);
    return LF_OK;
}

static int plan_init(lf_exact_fb_plan *p, const double J[3], const double w0[3], int attitude, int complete,
                     lf_error *err)
{
    int rcode = check_inputs(J, w0, err);
    if (rcode != LF_OK) return rcode;
    memset(p, 0, sizeof *p);
    p->attitude = attitude;
    /* exact power-of-2 scalings: only the ratios of J matter (J is centred on 1 so that the smallest and the
     * largest moment both stay representable); w(t; 2^e W) = 2^e w(2^e t; W), R(t; 2^e W) = R(2^e t; W) */
    double jmin = fmin(J[0], fmin(J[1], J[2])), jmax = fmax(J[0], fmax(J[1], J[2]));
    int e1, e2;
    frexp(jmin, &e1);
    frexp(jmax, &e2);
    int ej = (e1 + e2) / 2;
    p->ew = scale_exponent(w0);
    p->sc = abs(p->ew) <= 1000 ? ldexp(1.0, p->ew) : 0; /* 2^ew: scaling by a product is exact */
    double isj = abs(ej) <= 1000 ? ldexp(1.0, -ej) : 0, isw = p->sc ? 1 / p->sc : 0;
    for (int i = 0; i < 3; i++) {
        p->Jn[i] = isj ? J[i] * isj : ldexp(J[i], -ej);
        p->W[i] = isw ? w0[i] * isw : ldexp(w0[i], -p->ew);
        p->w0[i] = w0[i];
    }
    const double *Jn = p->Jn, *W = p->W;

    int nonzero = (W[0] != 0) + (W[1] != 0) + (W[2] != 0);
    int eq01 = Jn[0] == Jn[1], eq12 = Jn[1] == Jn[2], eq02 = Jn[0] == Jn[2];
    if (nonzero <= 1 || (eq01 && eq12)) { /* principal-axis spin (or rest), or a spherical body: w constant */
        p->kind = KIND_SPIN;
        p->rate = norm3(W); /* R(t) = R0 exp(t hat(w0)) */
        return LF_OK;
    }
    if (eq01 || eq12 || eq02) {
        int d = eq01 ? 2 : (eq12 ? 0 : 1), a = (d + 1) % 3;
        p->kind = KIND_AXISYM;
        p->d = d;
        p->l = (Jn[d] - Jn[a]) * W[d] / Jn[a];
        p->s3 = W[d] < 0 ? -1 : 1;
        if (attitude) { /* psi' = (2E + M |w_d|) / (M + C |w_d|), constant (exact.h) */
            double P[3] = {Jn[0] * W[0], Jn[1] * W[1], Jn[2] * W[2]}, M = norm3(P), x = fabs(W[d]);
            double E2 = Jn[0] * W[0] * W[0] + Jn[1] * W[1] * W[1] + Jn[2] * W[2] * W[2];
            p->rate = (E2 + M * x) / (M + Jn[d] * x);
            if (!isfinite(p->rate) || !isfinite(p->l)) return bad_constant(err, J, "psi'", p->rate);
            qalign(Jn, W, d, p->s3, p->q0);
        }
        return LF_OK;
    }
    p->kind = KIND_TRIAXIAL;
    rcode = triaxial_init(p, Jn, J, attitude, complete, err);
    if (rcode != LF_OK) return rcode;
    if (attitude) qalign(Jn, W, p->d, p->s3, p->q0);
    return LF_OK;
}

int lf_exact_fb_plan_init(lf_exact_fb_plan *plan, const double J[3], const double w0[3], lf_error *err)
{
    return plan_init(plan, J, w0, 1, 1, err);
}

static int phase_error(lf_error *err, double t, const char *what, double v)
{
    return lf_error_set(err, LF_EDOMAIN,
                        "exact.free_body: t = %.17g too long: the %s reaches %.3g rad, beyond %.0e rad double precision "
                        "keeps no correct digit",
                        t, what, v, PHASE_MAX);
}

/* w (scaled) and, if D != NULL, the relative attitude D = R0^T R(t) at scaled time tn */
static int plan_eval(const lf_exact_fb_plan *p, double t, double tn, double out[3], double D[9], lf_error *err)
{
    if (p->kind == KIND_SPIN) {
        for (int i = 0; i < 3; i++) out[i] = p->W[i];
        if (D) {
            double th = p->rate * tn;
            if (!(fabs(th) <= PHASE_MAX)) return phase_error(err, t, "rotation angle |omega0| t", th);
            double q[4] = {1, 0, 0, 0};
            if (p->rate > 0) {
                double h = 0.5 * th, sh = sin(h) / p->rate;
                q[0] = cos(h), q[1] = sh * p->W[0], q[2] = sh * p->W[1], q[3] = sh * p->W[2];
            }
            qmatrix(q, D);
        }
        return LF_OK;
    }
    double psi = 0;
    if (p->kind == KIND_AXISYM) {
        double th = p->l * tn;
        if (!(fabs(th) <= PHASE_MAX)) return phase_error(err, t, "precession angle", th);
        axisym_w(p, tn, out);
        if (D) psi = p->rate * tn;
    } else {
        /* u = u0 + du. When du, reduced to |r| <= K (du = r + 2 i K), lies within K/2 of a maximum of dn, the
         * Jacobi functions at u come from those at u0 (sn0, cn0, dn0: from w0 itself, to relative rounding)
         * and at du by the addition theorem (DLMF 22.8.1-22.8.2),
         *     sn u = (sn0 cn dn(du) + sn(du) cn0 dn0) / D,   cn u = (cn0 cn(du) - sn0 dn0 sn(du) dn(du)) / D,
         * with D = 1 - m sn0^2 sn^2(du) > 0 (so D = |(D sn u, D cn u)|), and dn u = sqrt(k'^2 + m cn^2 u):
         * a short step changes w0 by a relatively accurate amount (u0 itself is known only to eps |u0|, which
         * would cost eps a1 absolutely: 1e58 for J = (1, 1e-150, 1e150)). Otherwise (r near the saddle, where
         * cn(r), dn(r) are tiny and known only to eps |du| / (K - |r|) relatively, which the addition would carry
         * into the result) directly at u reduced to |u - 2 j K| <= K. */
        double du = p->nu * tn, i = 0, j = 0, sn, cn, dn, sd, cd, dd;
        if (!(fabs(du) + (p->kp > 0 ? p->K : 0) <= PHASE_MAX)) return phase_error(err, t, "phase nu t", du);
        int add = 1;
        if (p->kp == 0) { /* separatrix: sn = tanh, cn = dn = sech, no period */
            sd = tanh(du);
            cd = dd = 1 / cosh(du);
        } else {
            i = nearbyint(du / (2 * p->K));
            double r = fma(-2 * p->K, i, du);
            add = fabs(r) <= 0.5 * p->K;
            if (!add) { /* directly at u = u0 + du, reduced: i = j, the half-period of u (|am u - j pi| <= pi/2) */
                double u0 = p->u0;
                int rcode = p->have_u0 ? LF_OK : phase0(p, &u0, err);
                if (rcode != LF_OK) return rcode;
                double u = u0 + du;
                i = j = nearbyint(u / (2 * p->K));
                r = fma(-2 * p->K, j, u);
            } else {
                j = i;
            }
            /* sn(r + 2 i K) = (-1)^i sn(r), cn(r + 2 i K) = (-1)^i cn(r), dn(r + 2 i K) = dn(r) */
            int rcode = elljac(r, p->m, p->kp, &sd, &cd, &dd, err);
            if (rcode != LF_OK) return rcode;
            if (fmod(i, 2) != 0) sd = -sd, cd = -cd;
        }
        if (add) {
            double ns = p->sn0 * cd * dd + sd * p->cn0 * p->dn0, nc = p->cn0 * cd - p->sn0 * p->dn0 * sd * dd;
            double h = hyp(ns, nc);
            sn = ns / h, cn = nc / h, dn = hyp(p->kp, sqrt(p->m) * cn);
            /* the half-period of u = u0 + r + 2 i K (|u0| <= K, |r| <= K/2) without u0: j = i + j', where
             * j' in {-1, 0, 1} is that of u0 + r, read off the signs of cn and sn there (cn >= 0: j' = 0) */
            if (p->kp > 0) {
                double sgn = fmod(i, 2) != 0 ? -1 : 1, c1 = sgn * cn, s1 = sgn * sn;
                j += c1 >= 0 ? 0 : (s1 > 0 ? 1 : -1);
            }
        } else {
            sn = sd, cn = cd, dn = dd;
        }
        out[p->c] = p->g * p->a1 * cn;
        out[p->s] = p->g * p->sigma * p->a2 * sn;
        out[p->d] = p->s3 * p->a3 * dn;
        if (D) {
            /* phi = am u = j pi + phi_r, |phi_r| <= pi/2: sin phi_r = (-1)^j sn u, cos phi_r = |cn u| (rounding
             * may put u a hair past the end of half-period j; phi_r = +-pi/2 there, where X and G are continuous) */
            double sr = fmod(j, 2) != 0 ? -sn : sn, cr = fabs(cn), X, Xc = 0;
            int rcode = xfun(p, sr, cr, dn, &X, err);
            if (rcode != LF_OK) return rcode;
            if (j != 0) {
                if (p->have_Xc) Xc = p->Xc;
                else if ((rcode = xcomplete(p, &Xc, err)) != LF_OK) return rcode;
            }
            double Jpi = p->aF * du + (2 * j * Xc + (X - p->X0));
            double G = j * PI_D + atan2(p->sq1n * sr, cr);
            double Jd = (G - p->G0) / p->sq1n;
            psi = p->rate * tn + p->coef * (p->M * Jpi - p->b * Jd);
        }
    }
    if (D) {
        if (!(fabs(psi) <= PHASE_MAX)) return phase_error(err, t, "rotation angle psi about the momentum", psi);
        /* D = Q(0)^T E(psi) Q(t), E = rotation by psi about e = s3 e_d */
        double q[4], e[4] = {cos(0.5 * psi), 0, 0, 0}, q0c[4] = {p->q0[0], -p->q0[1], -p->q0[2], -p->q0[3]}, r1[4], r2[4];
        e[1 + p->d] = p->s3 * sin(0.5 * psi);
        qalign(p->Jn, out, p->d, p->s3, q);
        qmul(q0c, e, r1);
        qmul(r1, q, r2);
        qmatrix(r2, D);
    }
    return LF_OK;
}

static void initial_state(const double R0[9], const double w0[3], double R[9], double w[3]);

/* plan_eval with the unscaled t, then R = R0 D and w scaled back (R0, R, w may be NULL) */
static int plan_eval_scaled(const lf_exact_fb_plan *p, double t, const double R0[9], double R[9], double w[3],
                            lf_error *err)
{
    if (t == 0) return initial_state(R0, p->w0, R, w), LF_OK;
    double tn = p->sc ? t * p->sc : ldexp(t, p->ew);
    if (!isfinite(tn))
        return lf_error_set(err, LF_EDOMAIN, "exact.free_body: t = %.17g too large for |omega0| = %.17g (t |omega0| overflows)",
                            t, fmax(fabs(p->w0[0]), fmax(fabs(p->w0[1]), fabs(p->w0[2]))));
    double out[3], D[9];
    int rcode = plan_eval(p, t, tn, out, R ? D : NULL, err);
    if (rcode != LF_OK) return rcode;
    /* never a silent NaN: constants that lost every digit in some extreme corner end here */
    if (!lf_v3_isfinite(out) || (R && !lf_m3_isfinite(D))) {
        double jmax = fmax(p->Jn[0], fmax(p->Jn[1], p->Jn[2])), jmin = fmin(p->Jn[0], fmin(p->Jn[1], p->Jn[2]));
        return lf_error_set(err, LF_EDOMAIN, "exact.free_body: moments %.3g apart (largest / smallest) with omega0 = "
                            "(%.17g, %.17g, %.17g): beyond the range of this evaluation (a non-finite result)",
                            jmax / jmin, p->w0[0], p->w0[1], p->w0[2]);
    }
    if (R) {
        if (R0) lf_m3_mul(R0, D, R);
        else memcpy(R, D, sizeof D);
    }
    if (w) {
        double ws[3];
        for (int i = 0; i < 3; i++) ws[i] = p->sc ? out[i] * p->sc : ldexp(out[i], p->ew);
        /* |omega| near DBL_MAX: a component of omega(t) may exceed it (|J omega| and E are kept, not
         * each component) */
        if (!lf_v3_isfinite(ws))
            return lf_error_set(err, LF_EDOMAIN, "exact.free_body: omega(t) = (%g, %g, %g) overflows (|omega0| = %g)", ws[0],
                                ws[1], ws[2], fmax(fabs(p->w0[0]), fmax(fabs(p->w0[1]), fabs(p->w0[2]))));
        memcpy(w, ws, sizeof ws);
    }
    return LF_OK;
}

int lf_exact_fb_plan_eval(const lf_exact_fb_plan *plan, double t, const double R0[9], double R[9], double w[3],
                          lf_error *err)
{
    if (!isfinite(t)) return lf_error_set(err, LF_EINVAL, "exact.free_body: time t = %.17g is not finite", t);
    if (R && !plan->attitude)
        return lf_error_set(err, LF_EINVAL, "exact.free_body: this plan was prepared without the attitude");
    if (R0) {
        int rcode = lf_so3_check(R0, 1e-9, "exact.free_body: R0", err);
        if (rcode != LF_OK) return rcode;
    }
    return plan_eval_scaled(plan, t, R0, R, w, err);
}


/* t == 0: exactly the initial state (no plan: its constants may not exist for extreme J) */
static void initial_state(const double R0[9], const double w0[3], double R[9], double w[3])
{
    if (w) memmove(w, w0, 3 * sizeof(double));
    if (R) {
        if (R0) memmove(R, R0, 9 * sizeof(double));
        else lf_m3_identity(R);
    }
}

int lf_exact_free_body(const double J[3], const double w0[3], double t, double w[3], lf_error *err)
{
    lf_exact_fb_plan p;
    int rcode = check_inputs(J, w0, err);
    if (rcode != LF_OK) return rcode;
    if (!isfinite(t)) return lf_error_set(err, LF_EINVAL, "exact.free_body: time t = %.17g is not finite", t);
    if (t == 0) return initial_state(NULL, w0, NULL, w), LF_OK;
    if ((rcode = plan_init(&p, J, w0, 0, 0, err)) != LF_OK) return rcode;
    return plan_eval_scaled(&p, t, NULL, NULL, w, err);
}

int lf_exact_free_body_flow(const double J[3], const double R0[9], const double w0[3], double t, double R[9],
                            double w[3], lf_error *err)
{
    lf_exact_fb_plan p;
    int rcode = check_inputs(J, w0, err);
    if (rcode != LF_OK) return rcode;
    if (!isfinite(t)) return lf_error_set(err, LF_EINVAL, "exact.free_body: time t = %.17g is not finite", t);
    if (R0 && (rcode = lf_so3_check(R0, 1e-9, "exact.free_body: R0", err)) != LF_OK) return rcode;
    if (t == 0) return initial_state(R0, w0, R, w), LF_OK;
    if ((rcode = plan_init(&p, J, w0, 1, 0, err)) != LF_OK) return rcode;
    return plan_eval_scaled(&p, t, R0, R, w, err);
}
