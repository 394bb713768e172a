/* lieflow — the product manifold (manifold.h): every factor's operations in one place, dispatched
 * over the factors' offsets (as MuJoCo's mj_integratePos / mj_differentiatePos do per joint). */
#include "manifold.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gl3.h"
#include "linalg.h"
#include "quat.h"
#include "s2.h"
#include "so3.h"
#include "tgl3.h"
#include "ts2.h"

struct lf_manifold {
    int n, np, nd, maxd;
    lf_trivialization triv;
    lf_factor f[];
};

static const char *const kind_names[] = {"so3", "s2", "s3", "gl3", "r", "ts2", "tgl3"};

const char *lf_factor_kind_name(lf_factor_kind kind)
{
    return (unsigned)kind < sizeof kind_names / sizeof kind_names[0] ? kind_names[kind] : "?";
}

int lf_factor_parse(const char *name, lf_factor_kind *kind, int *dim)
{
    if (!name) return -1;
    for (int k = 0; k < (int)(sizeof kind_names / sizeof kind_names[0]); k++)
        if (k != LF_RM && strcmp(name, kind_names[k]) == 0) {
            *kind = (lf_factor_kind)k;
            *dim = 0;
            return 0;
        }
    if (name[0] == 'r' && name[1] >= '1' && name[1] <= '9') {
        char *end;
        long m = strtol(name + 1, &end, 10);
        if (*end == '\0' && m >= 1 && m <= 1000000) {
            *kind = LF_RM;
            *dim = (int)m;
            return 0;
        }
    }
    return -1;
}

lf_manifold *lf_manifold_new(int n, const lf_factor_kind *kinds, const int *dims, lf_trivialization triv,
                             lf_error *err)
{
    if (n < 1 || n > 1000000) {
        lf_error_set(err, LF_EINVAL, "manifold: number of factors must be in 1..1000000, got %d", n);
        return NULL;
    }
    if (triv != LF_RIGHT_TRIVIALIZED && triv != LF_LEFT_TRIVIALIZED) {
        lf_error_set(err, LF_EINVAL, "manifold: trivialization must be left or right, got %d", (int)triv);
        return NULL;
    }
    lf_manifold *M = calloc(1, sizeof *M + (size_t)n * sizeof(lf_factor));
    if (!M) {
        lf_error_set(err, LF_ENOMEM, "manifold: out of memory (%d factors)", n);
        return NULL;
    }
    M->n = n;
    M->triv = triv;
    long np = 0, nd = 0;
    for (int i = 0; i < n; i++) {
        lf_factor *f = &M->f[i];
        f->kind = kinds[i];
        switch (f->kind) {
        case LF_SO3: f->np = 9; f->nd = 3; break;
        case LF_S2: f->np = 3; f->nd = 3; break;
        case LF_S3: f->np = 4; f->nd = 3; break;
        case LF_GL3: f->np = 9; f->nd = 9; break;
        case LF_TS2: f->np = 6; f->nd = 6; break;
        case LF_TGL3: f->np = 18; f->nd = 18; break;
        case LF_RM:
            if (!dims || dims[i] < 1 || dims[i] > 1000000) {
                lf_error_set(err, LF_EINVAL, "manifold: factor %d is r<m> with m = %d, expected 1..1000000", i + 1,
                             dims ? dims[i] : 0);
                free(M);
                return NULL;
            }
            f->np = f->nd = dims[i];
            break;
        default:
            lf_error_set(err, LF_EINVAL, "manifold: factor %d has unknown kind %d", i + 1, (int)f->kind);
            free(M);
            return NULL;
        }
        /* s2 and ts2 are acted on from the left, r<m> additively; the others follow the trivialization */
        f->right = triv == LF_LEFT_TRIVIALIZED &&
                   (f->kind == LF_SO3 || f->kind == LF_S3 || f->kind == LF_GL3 || f->kind == LF_TGL3);
        f->op = (int)np;
        f->od = (int)nd;
        np += f->np;
        nd += f->nd;
        if (f->nd > M->maxd) M->maxd = f->nd;
        if (np > 100000000) {
            lf_error_set(err, LF_EINVAL, "manifold: %ld parameters is too many", np);
            free(M);
            return NULL;
        }
    }
    M->np = (int)np;
    M->nd = (int)nd;
    return M;
}

lf_manifold *lf_manifold_copy(const lf_manifold *M, lf_error *err)
{
    size_t size = sizeof *M + (size_t)M->n * sizeof(lf_factor);
    lf_manifold *C = malloc(size);
    if (!C) {
        lf_error_set(err, LF_ENOMEM, "manifold: out of memory");
        return NULL;
    }
    memcpy(C, M, size);
    return C;
}

void lf_manifold_free(lf_manifold *M) { free(M); }

int lf_manifold_nfactors(const lf_manifold *M) { return M->n; }
int lf_manifold_nparam(const lf_manifold *M) { return M->np; }
int lf_manifold_ndim(const lf_manifold *M) { return M->nd; }
int lf_manifold_max_factor_dim(const lf_manifold *M) { return M->maxd; }
lf_trivialization lf_manifold_trivialization(const lf_manifold *M) { return M->triv; }
const lf_factor *lf_manifold_factor(const lf_manifold *M, int i) { return (i >= 0 && i < M->n) ? &M->f[i] : NULL; }

/* ------------------------------------------------------------------------------------ s3 */

/* e - 1 for e = quat_exp(xi/2) = (cos(t/2), sin(t/2) xi/t), t = |xi|: the small increment
 * (cos(t/2) - 1, ...) = (-2 sin^2(t/4), sin(t/2)/t xi), without cancellation. */
static void s3_increment(const double xi[3], double d[4])
{
    double t = lf_v3_norm(xi), s;
    if (t < 1e-4) {
        double t2 = t * t;
        s = 0.5 * (1 - t2 / 24 * (1 - t2 / 80)); /* sin(t/2)/t */
    } else
        s = sin(0.5 * t) / t;
    double q = sin(0.25 * t);
    d[0] = -2 * q * q;
    d[1] = s * xi[0];
    d[2] = s * xi[1];
    d[3] = s * xi[2];
}

/* ------------------------------------------------------------------------------------ operations */

void lf_manifold_act(const lf_manifold *M, const double *xi, double *y)
{
    for (int i = 0; i < M->n; i++) {
        const lf_factor *f = &M->f[i];
        const double *x = xi + f->od;
        double *p = y + f->op;
        switch (f->kind) {
        case LF_SO3:
            if (f->right) lf_so3_rmul_exp(p, x);
            else lf_so3_lmul_exp(p, x);
            break;
        case LF_S2: lf_so3_rotate(x, p); break;
        case LF_S3: {
            double d[4], inc[4];
            s3_increment(x, d);
            if (f->right) lf_quat_mul(p, d, inc);
            else lf_quat_mul(d, p, inc);
            for (int k = 0; k < 4; k++) p[k] += inc[k];
            break;
        }
        case LF_GL3: {
            double E[9];
            if (lf_gl3_exp(x, E, NULL) != LF_OK) {
                for (int k = 0; k < 9; k++) p[k] = NAN; /* overflow: the stepper rejects the step */
                break;
            }
            if (f->right) lf_m3_mul(p, E, p);
            else lf_m3_mul(E, p, p);
            break;
        }
        case LF_RM:
            for (int k = 0; k < f->nd; k++) p[k] += x[k];
            break;
        case LF_TS2: lf_ts2_act(x, p); break;
        case LF_TGL3:
            if (lf_tgl3_act(x, p, f->right, NULL) != LF_OK)
                for (int k = 0; k < 18; k++) p[k] = NAN; /* singular F or overflow: the stepper rejects the step */
            break;
        }
    }
}

int lf_manifold_diff(const lf_manifold *M, const double *y0, const double *y1, double *xi, lf_error *err)
{
    for (int i = 0; i < M->n; i++) {
        const lf_factor *f = &M->f[i];
        const double *a = y0 + f->op, *b = y1 + f->op;
        double *x = xi + f->od;
        switch (f->kind) {
        case LF_SO3: {
            double D[9];
            if (f->right) lf_m3_tmul(a, b, D); /* R0^T R1 */
            else lf_m3_mult(b, a, D);          /* R1 R0^T */
            lf_so3_log(D, x);
            break;
        }
        case LF_S2: {
            double c[3];
            lf_v3_cross(a, b, c);
            double s = lf_v3_norm(c), d = lf_v3_dot(a, b);
            if (s == 0) {
                if (d < 0)
                    return lf_error_set(err, LF_EDOMAIN, "manifold diff: factor %d (s2): antipodal points", i + 1);
                x[0] = x[1] = x[2] = 0;
            } else
                lf_v3_scale(c, atan2(s, d) / s, x);
            break;
        }
        case LF_S3: {
            double c[4], D[4];
            lf_quat_conj(a, c);
            if (f->right) lf_quat_mul(c, b, D); /* q0* q1 */
            else lf_quat_mul(b, c, D);          /* q1 q0* */
            lf_quat_log(D, x);
            lf_v3_scale(x, 2, x);
            break;
        }
        case LF_GL3: {
            double Ai[9], D[9];
            if (lf_m3_inverse(a, Ai) != LF_OK)
                return lf_error_set(err, LF_EDOMAIN, "manifold diff: factor %d (gl3): singular matrix", i + 1);
            if (f->right) lf_m3_mul(Ai, b, D);
            else lf_m3_mul(b, Ai, D);
            int rc = lf_gl3_log(D, x, err);
            if (rc != LF_OK) return rc;
            break;
        }
        case LF_RM:
            for (int k = 0; k < f->nd; k++) x[k] = b[k] - a[k];
            break;
        case LF_TS2: {
            int rc = lf_ts2_diff(a, b, x, err);
            if (rc != LF_OK) return lf_error_set(err, rc, "manifold diff: factor %d (ts2): antipodal base points", i + 1);
            break;
        }
        case LF_TGL3: {
            int rc = lf_tgl3_diff(a, b, f->right, x, err);
            if (rc != LF_OK) return rc;
            break;
        }
        }
    }
    return LF_OK;
}

void lf_manifold_velocity(const lf_manifold *M, const double *y, const double *xi, double *ydot)
{
    for (int i = 0; i < M->n; i++) {
        const lf_factor *f = &M->f[i];
        const double *p = y + f->op, *x = xi + f->od;
        double *v = ydot + f->op;
        switch (f->kind) {
        case LF_SO3: {
            double X[9];
            lf_so3_hat(x, X);
            if (f->right) lf_m3_mul(p, X, v);
            else lf_m3_mul(X, p, v);
            break;
        }
        case LF_S2: lf_v3_cross(x, p, v); break;
        case LF_S3: {
            double h[4] = {0, 0.5 * x[0], 0.5 * x[1], 0.5 * x[2]};
            if (f->right) lf_quat_mul(p, h, v);
            else lf_quat_mul(h, p, v);
            break;
        }
        case LF_GL3:
            if (f->right) lf_m3_mul(p, x, v);
            else lf_m3_mul(x, p, v);
            break;
        case LF_RM: memcpy(v, x, (size_t)f->nd * sizeof(double)); break;
        case LF_TS2: lf_ts2_velocity(p, x, v); break;
        case LF_TGL3:
            if (lf_tgl3_velocity(p, x, f->right, v, NULL) != LF_OK)
                for (int k = 0; k < 18; k++) v[k] = NAN;
            break;
        }
    }
}

static void factor_bracket(const lf_factor *f, const double *a, const double *b, double *out)
{
    switch (f->kind) {
    case LF_SO3:
    case LF_S2:
    case LF_S3: lf_v3_cross(a, b, out); break;
    case LF_GL3: {
        double P[9], Q[9];
        lf_m3_mul(a, b, P);
        lf_m3_mul(b, a, Q);
        lf_m3_sub(P, Q, out);
        break;
    }
    case LF_RM: memset(out, 0, (size_t)f->nd * sizeof(double)); break;
    case LF_TS2: lf_ts2_bracket(a, b, out); break;
    case LF_TGL3: lf_tgl3_bracket(a, b, out); break;
    }
}

void lf_manifold_bracket(const lf_manifold *M, const double *a, const double *b, double *out)
{
    for (int i = 0; i < M->n; i++) {
        const lf_factor *f = &M->f[i];
        factor_bracket(f, a + f->od, b + f->od, out + f->od);
    }
}

double lf_manifold_inner(const lf_manifold *M, const double *a, const double *b)
{
    double s = 0;
    for (int k = 0; k < M->nd; k++) s += a[k] * b[k];
    return s;
}

/* B_k / k! for k = 0..15 (Bernoulli numbers, B_1 = -1/2). */
static const double bernoulli_over_factorial[16] = {
    1.0, -0.5, 1.0 / 12, 0, -1.0 / 720, 0, 1.0 / 30240, 0, -1.0 / 1209600, 0, 1.0 / 47900160, 0,
    -691.0 / 1307674368000.0, 0, 1.0 / 74724249600.0, 0};

/* out = sum_{k < order} B_k/k! ad_u^k(v) for one factor (the truncated dexpinv at u). */
static void truncated_dexpinv(const lf_factor *f, const double *u, const double *v, int order, double *out)
{
    double term[LF_FACTOR_MAXD], acc[LF_FACTOR_MAXD], tmp[LF_FACTOR_MAXD];
    const int d = f->nd;
    if (f->kind == LF_RM) {
        memmove(out, v, (size_t)d * sizeof(double));
        return;
    }
    memcpy(term, v, (size_t)d * sizeof(double));
    memcpy(acc, v, (size_t)d * sizeof(double));
    if (order > 16) order = 16;
    for (int k = 1; k < order; k++) {
        factor_bracket(f, u, term, tmp);
        memcpy(term, tmp, (size_t)d * sizeof(double));
        const double c = bernoulli_over_factorial[k];
        if (c != 0)
            for (int j = 0; j < d; j++) acc[j] += c * term[j];
    }
    memcpy(out, acc, (size_t)d * sizeof(double));
}

/* dexp (inverse = 0) or dexpinv (1) of one factor's action at u applied to v, or the transpose of
 * either (transpose = 1, with respect to the dot product of the algebra coordinates); order > 0:
 * the truncated dexpinv (not with transpose). */
static int factor_dexp_any(const lf_factor *f, const double *uin, const double *v, int order, int inverse,
                           int transpose, double *out, lf_error *err)
{
    double u[LF_FACTOR_MAXD];
    const int d = f->nd;
    if (f->kind == LF_RM) {
        memmove(out, v, (size_t)d * sizeof(double));
        return LF_OK;
    }
    for (int k = 0; k < d; k++) u[k] = f->right ? -uin[k] : uin[k]; /* right action: dexp at -u */
    if (inverse && order > 0 && !transpose) {
        truncated_dexpinv(f, u, v, order, out);
        return LF_OK;
    }
    switch (f->kind) {
    case LF_GL3: {
        if (transpose) { /* ad_A^T = ad_{A^T} for the Frobenius product: (dexp_A)^T = dexp_{A^T} */
            double t = u[1]; u[1] = u[3]; u[3] = t;
            t = u[2]; u[2] = u[6]; u[6] = t;
            t = u[5]; u[5] = u[7]; u[7] = t;
        }
        return inverse ? lf_gl3_dexpinv(u, v, out, err) : lf_gl3_dexp(u, v, out, err);
    }
    case LF_TS2: lf_ts2_dexp(u, v, inverse, transpose, out); return LF_OK;
    case LF_TGL3: return lf_tgl3_dexp(u, v, inverse, transpose, out, err);
    default: {
        double D[9];
        if (inverse) lf_so3_dexpinv(u, D);
        else lf_so3_dexp(u, D);
        if (transpose) lf_m3_tapply(D, v, out);
        else lf_m3_apply(D, v, out);
        return LF_OK;
    }
    }
}

int lf_manifold_dexpinv(const lf_manifold *M, const double *u, const double *v, int order, double *out,
                        lf_error *err)
{
    for (int i = 0; i < M->n; i++) {
        const lf_factor *f = &M->f[i];
        int rc = factor_dexp_any(f, u + f->od, v + f->od, order, 1, 0, out + f->od, err);
        if (rc != LF_OK) return rc;
    }
    return LF_OK;
}

int lf_manifold_dexp(const lf_manifold *M, const double *u, const double *v, double *out, lf_error *err)
{
    for (int i = 0; i < M->n; i++) {
        const lf_factor *f = &M->f[i];
        int rc = factor_dexp_any(f, u + f->od, v + f->od, 0, 0, 0, out + f->od, err);
        if (rc != LF_OK) return rc;
    }
    return LF_OK;
}

int lf_manifold_dexp_transpose(const lf_manifold *M, const double *u, const double *v, int inverse, double *out,
                               lf_error *err)
{
    for (int i = 0; i < M->n; i++) {
        const lf_factor *f = &M->f[i];
        int rc = factor_dexp_any(f, u + f->od, v + f->od, 0, inverse != 0, 1, out + f->od, err);
        if (rc != LF_OK) return rc;
    }
    return LF_OK;
}

/* ------------------------------------------------------------------------------------ measures */

static double sq_diff(int n, const double *a, const double *b)
{
    double s = 0;
    for (int k = 0; k < n; k++) s += (a[k] - b[k]) * (a[k] - b[k]);
    return s;
}

/* 2 atan2(|a - b|, |a + b|): the great-circle angle of unit vectors of R^n (accurate everywhere) */
static double sphere_angle(int n, const double *a, const double *b)
{
    double s = 0;
    for (int k = 0; k < n; k++) s += (a[k] + b[k]) * (a[k] + b[k]);
    return 2 * atan2(sqrt(sq_diff(n, a, b)), sqrt(s));
}

static double factor_dist(const lf_factor *f, const double *a, const double *b)
{
    switch (f->kind) {
    case LF_S2: return sphere_angle(3, a, b);
    case LF_S3: return sphere_angle(4, a, b);
    case LF_TS2: return lf_ts2_dist(a, b);
    default: return sqrt(sq_diff(f->np, a, b));
    }
}

double lf_manifold_dist_range(const lf_manifold *M, int first, int count, const double *y0, const double *y1)
{
    double s = 0;
    for (int i = first; i < first + count && i < M->n; i++) {
        const lf_factor *f = &M->f[i];
        double d = factor_dist(f, y0 + f->op, y1 + f->op);
        s += d * d;
    }
    return sqrt(s);
}

double lf_manifold_dist(const lf_manifold *M, const double *y0, const double *y1)
{
    return lf_manifold_dist_range(M, 0, M->n, y0, y1);
}

static double factor_defect(const lf_factor *f, const double *p)
{
    for (int k = 0; k < f->np; k++)
        if (!isfinite(p[k])) return NAN;
    switch (f->kind) {
    case LF_SO3: return lf_so3_orth_error(p);
    case LF_S2: return fabs(lf_v3_norm(p) - 1);
    case LF_S3: return fabs(sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]) - 1);
    case LF_TS2: return fmax(fabs(lf_v3_norm(p) - 1), fabs(lf_v3_dot(p, p + 3)) / fmax(1, lf_v3_norm(p + 3)));
    default: return 0;
    }
}

double lf_manifold_defect(const lf_manifold *M, const double *y)
{
    double worst = 0;
    for (int i = 0; i < M->n; i++) {
        const lf_factor *f = &M->f[i];
        double d = factor_defect(f, y + f->op);
        if (isnan(d)) return d;
        if (d > worst) worst = d;
    }
    return worst;
}

int lf_manifold_check_factor(const lf_manifold *M, int i, const double *y, double tol, const char *name,
                             lf_error *err)
{
    const lf_factor *f = &M->f[i];
    const double *p = y + f->op;
    double d = factor_defect(f, p);
    if (isnan(d))
        return lf_error_set(err, LF_EINVAL, "%s is not finite (%s factor)", name,
                            f->kind == LF_RM ? "r<m>" : lf_factor_kind_name(f->kind));
    switch (f->kind) {
    case LF_SO3: return lf_so3_check(p, tol, name, err);
    case LF_S2:
    case LF_S3:
        if (d > tol)
            return lf_error_set(err, LF_EINVAL, "%s is not a unit %s: ||q| - 1| = %.3g (tolerance %g)", name,
                                f->kind == LF_S2 ? "vector (s2)" : "quaternion (s3)", d, tol);
        return LF_OK;
    case LF_GL3: {
        double det = lf_m3_det(p);
        if (!(fabs(det) > 0) || !isfinite(det))
            return lf_error_set(err, LF_EINVAL, "%s (gl3) is not invertible: det = %g", name, det);
        return LF_OK;
    }
    case LF_RM: return LF_OK;
    case LF_TS2:
        if (d > tol)
            return lf_error_set(err, LF_EINVAL, "%s is not in TS^2 (ts2): ||q| - 1| = %.3g, |q . omega| = %.3g "
                                                "(tolerance %g)", name, fabs(lf_v3_norm(p) - 1),
                                fabs(lf_v3_dot(p, p + 3)), tol);
        return LF_OK;
    case LF_TGL3: {
        double det = lf_m3_det(p);
        if (!(fabs(det) > 0) || !isfinite(det))
            return lf_error_set(err, LF_EINVAL, "%s (tgl3) has a singular F: det F = %g", name, det);
        return LF_OK;
    }
    }
    return LF_OK;
}

int lf_manifold_check(const lf_manifold *M, const double *y, double tol, const char *what, lf_error *err)
{
    for (int i = 0; i < M->n; i++) {
        char name[96];
        if (M->n == 1) snprintf(name, sizeof name, "%s", what);
        else snprintf(name, sizeof name, "%s[%d]", what, i + 1);
        int rc = lf_manifold_check_factor(M, i, y, tol, name, err);
        if (rc != LF_OK) return rc;
    }
    return LF_OK;
}

void lf_manifold_identity(const lf_manifold *M, double *y)
{
    memset(y, 0, (size_t)M->np * sizeof(double));
    for (int i = 0; i < M->n; i++) {
        const lf_factor *f = &M->f[i];
        double *p = y + f->op;
        switch (f->kind) {
        case LF_SO3:
        case LF_GL3: p[0] = p[4] = p[8] = 1; break;
        case LF_S2: p[2] = 1; break;
        case LF_S3: p[0] = 1; break;
        case LF_TS2: p[2] = 1; break;
        case LF_TGL3: p[0] = p[4] = p[8] = 1; break;
        case LF_RM: break;
        }
    }
}
