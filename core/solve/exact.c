/* lieflow — the torque-free rigid body in closed form (Jacobi elliptic functions from GSL).
 * Formulas and sign conventions: core/solve/exact.h (Landau–Lifshitz, Mechanics §37). */
#include "exact.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_ellint.h>
#include <gsl/gsl_sf_elljac.h>
#include <math.h>

static double clamp(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }

/* Exponent e with max|x_i| = f 2^e, f in [0.5, 1) (0 if all are zero): scaling by 2^-e is exact. */
static int scale_exponent(const double x[3])
{
    double m = fmax(fabs(x[0]), fmax(fabs(x[1]), fabs(x[2])));
    int e = 0;
    if (m > 0) frexp(m, &e);
    return e;
}

/* Axisymmetric body J_a = J_b = A, J_d = C, (a, b, d) cyclic: A w_a' = (A - C) w_b w_d and
 * A w_b' = (C - A) w_d w_a, so (w_a + i w_b)' = i l (w_a + i w_b) with l = (C - A) w_d / A. */
static void axisymmetric(const double J[3], const double W[3], double t, int d, double out[3])
{
    int a = (d + 1) % 3, b = (d + 2) % 3;
    double l = (J[d] - J[a]) * W[d] / J[a];
    double th = l * t, c = cos(th), s = sin(th);
    out[a] = W[a] * c - W[b] * s;
    out[b] = W[a] * s + W[b] * c;
    out[d] = W[d];
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
static int elljac(double u, double m, double kp, int depth, double *sn, double *cn, double *dn)
{
    if (kp * kp >= 0.25 || depth >= 16) return gsl_sf_elljac_e(u, m, sn, cn, dn);
    double k1 = (1 - kp) / (1 + kp), kp1 = 2 * sqrt(kp) / (1 + kp);
    double s1, c1, d1;
    int st = elljac(u / (1 + k1), k1 * k1, kp1, depth + 1, &s1, &c1, &d1);
    double den = 1 + k1 * s1 * s1, s = (1 + k1) * s1 / den, c = c1 * d1 / den, h = hypot(s, c);
    *sn = s / h;
    *cn = c / h;
    *dn = hypot(kp, sqrt(m) * (*cn));
    return st;
}

/* Triaxial body (all moments distinct); W normalized (max |W_i| in [0.5, 1)), at least two W_i nonzero.
 * Formulas of core/solve/exact.h. */
static int triaxial(const double J[3], const double W[3], double t, double out[3], lf_error *err)
{
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
    double A1 = J[c], A2 = J[s], A3 = J[d], Wc = W[c], Ws = W[s], Wd = W[d];
    double r12 = A2 * (A3 - A2) / (A1 * (A3 - A1)); /* > 0 on either side */
    double a1 = hypot(Wc, Ws * sqrt(r12));
    double a2 = hypot(Ws, Wc / sqrt(r12));
    double a3 = hypot(Wd, Ws * sqrt(A2 * (A2 - A1) / (A3 * (A3 - A1))));
    double nu = a3 * sqrt((A3 - A2) * (A3 - A1) / (A1 * A2));

    /* signs: s3 = sign w_d (constant), g = sign w_c(0) (half-period shift), sigma = direction */
    int eps = ((s - c + 3) % 3 == 1) ? 1 : -1; /* Levi-Civita sign of (c, s, d) */
    double s3 = Wd < 0 ? -1 : 1, g = Wc < 0 ? -1 : 1;
    double sigma = eps * s3 * (A2 < A3 ? 1 : -1);
    double cn0 = clamp(fabs(Wc) / a1, 0, 1), sn0 = clamp(g * sigma * Ws / a2, -1, 1), dn0 = clamp(fabs(Wd) / a3, 0, 1);
    double u, sn, cn, dn;

    if (Sq == 0) { /* on the separatrix: m = 1, cn = dn = sech, sn = tanh */
        u = asinh(sn0 / cn0) + nu * t;
        sn = tanh(u);
        cn = dn = 1 / cosh(u);
    } else {
        /* k' = sqrt(1 - m) accurately from S (m itself would cancel near the separatrix; k' rather than
         * 1 - m, which underflows when w_c, w_d ~ 1e-160), m from its product formula */
        double ra = a2 / a3;
        double kp = clamp(sqrt((double)(Sq / (((long double)A3 - A2) * A3))) / (a3 / q), 0, 1);
        double m = kp < 0.7 ? 1 - kp * kp : (A2 - A1) * A2 * ra * ra / (A3 * (A3 - A1));
        m = clamp(m, 0, 1);
        /* the phase: u0 = F(am u0 | m) = sn0 R_F(cn0^2, dn0^2, 1), |am u0| <= pi/2 */
        double u0;
        if (cn0 + dn0 < 1e-100) { /* at the middle axis: R_F(x, y, 1) = log(4 / (sqrt x + sqrt y)) + O(x + y) (DLMF 19.27.3) */
            u0 = sn0 * log(4 / (cn0 + dn0));
        } else {
            gsl_sf_result rf;
            int st = gsl_sf_ellint_RF_e(cn0 * cn0, dn0 * dn0, 1, GSL_PREC_DOUBLE, &rf);
            if (st != GSL_SUCCESS)
                return lf_error_set(err, LF_ENOCONV, "exact.free_body: gsl_sf_ellint_RF(%.17g, %.17g, 1) failed (%s)",
                                    cn0 * cn0, dn0 * dn0, gsl_strerror(st));
            u0 = sn0 * rf.val;
        }
        u = u0 + nu * t;
        int st = elljac(u, m, kp, 0, &sn, &cn, &dn);
        if (st != GSL_SUCCESS)
            return lf_error_set(err, LF_ENOCONV, "exact.free_body: gsl_sf_elljac(u=%.17g, m=%.17g) failed (%s)", u, m,
                                gsl_strerror(st));
    }
    out[c] = g * a1 * cn;
    out[s] = g * sigma * a2 * sn;
    out[d] = s3 * a3 * dn;
    return LF_OK;
}

int lf_exact_free_body(const double J[3], const double w0[3], double t, double w[3], lf_error *err)
{
    for (int i = 0; i < 3; i++)
        if (!(isfinite(J[i]) && J[i] > 0))
            return lf_error_set(err, LF_EINVAL, "exact.free_body: moment of inertia J[%d] = %.17g must be finite and > 0",
                                i + 1, J[i]);
    for (int i = 0; i < 3; i++)
        if (!isfinite(w0[i]))
            return lf_error_set(err, LF_EINVAL, "exact.free_body: omega0[%d] = %.17g is not finite", i + 1, w0[i]);
    if (!isfinite(t)) return lf_error_set(err, LF_EINVAL, "exact.free_body: time t = %.17g is not finite", t);

    /* exact power-of-2 scalings: only the ratios of J matter; w(t; 2^e W) = 2^e w(2^e t; W) */
    int ej = scale_exponent(J), ew = scale_exponent(w0);
    double Jn[3], W[3], out[3];
    for (int i = 0; i < 3; i++) Jn[i] = ldexp(J[i], -ej), W[i] = ldexp(w0[i], -ew);
    double tn = ldexp(t, ew);
    if (!isfinite(tn))
        return lf_error_set(err, LF_EDOMAIN, "exact.free_body: t = %.17g too large for |omega0| = %.17g (t |omega0| overflows)",
                            t, fmax(fabs(w0[0]), fmax(fabs(w0[1]), fabs(w0[2]))));

    int nonzero = (W[0] != 0) + (W[1] != 0) + (W[2] != 0);
    int eq01 = Jn[0] == Jn[1], eq12 = Jn[1] == Jn[2], eq02 = Jn[0] == Jn[2];
    if (nonzero <= 1 || (eq01 && eq12)) { /* principal-axis spin (or rest), or a spherical body: constant */
        for (int i = 0; i < 3; i++) out[i] = W[i];
    } else if (eq01 || eq12 || eq02) {
        int d = eq01 ? 2 : (eq12 ? 0 : 1);
        axisymmetric(Jn, W, tn, d, out);
    } else {
        int rc = triaxial(Jn, W, tn, out, err);
        if (rc != LF_OK) return rc;
    }
    for (int i = 0; i < 3; i++) w[i] = ldexp(out[i], ew);
    return LF_OK;
}
