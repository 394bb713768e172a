/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the product manifold (manifold.h): one record per factor kind (factor_class: its sizes,
 * action, difference, velocity, bracket, dexp and dexpinv with their transposes, distance, defect,
 * check, identity), each kind's operations in one place, in a table indexed by the kind; the
 * product's operations run over the factors' offsets and call their kind's record (as MuJoCo's
 * mj_integratePos / mj_differentiatePos do per joint). What the kinds share (the truncated dexpinv
 * from brackets, the side of the action, the finiteness of a point) is done once, below the records. */
#include "lie/manifold.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lie/gl3.h"
#include "base/linalg.h"
#include "lie/quat.h"
#include "lie/s2.h"
#include "lie/se3.h"
#include "lie/so3.h"
#include "lie/tgl3.h"
#include "lie/ts2.h"

struct lf_manifold {
    int n, np, nd, maxd;
    lf_trivialization triv;
    lf_factor f[];
};

/* One factor kind. A function gets the factor (its sizes, offsets and side: f->right) and the
 * factor's own slices of the point(s) and algebra vectors. */
typedef struct factor_class {
    const char *name;  /* lf_factor_kind_name, lf_factor_parse; a sized kind (np = 0) is parsed as name<m> */
    const char *label; /* in messages */
    int np, nd;        /* parameters and algebra dimension; 0: the size m given to lf_manifold_new */
    int sided;         /* acted on from the right in a left-trivialized manifold (else always from the left) */
    int abelian;       /* bracket 0, dexp and dexpinv the identity */
    void (*act)(const lf_factor *f, const double *xi, double *p);
    /* i: the factor's index, for messages */
    int (*diff)(const lf_factor *f, int i, const double *a, const double *b, double *xi, lf_error *err);
    void (*velocity)(const lf_factor *f, const double *p, const double *xi, double *v);
    void (*bracket)(const lf_factor *f, const double *a, const double *b, double *out);
    /* dexp (inverse = 0) or dexpinv (1) of the left action at u, or their transposes (not abelian) */
    int (*dexp)(const double *u, const double *v, int inverse, int transpose, double *out, lf_error *err);
    double (*dist)(const lf_factor *f, const double *a, const double *b);
    double (*defect)(const double *p); /* of a finite point; NULL: 0 */
    /* a finite point with defect d; NULL: every finite point is valid */
    int (*check)(const lf_factor *f, const double *p, double d, double tol, const char *name, lf_error *err);
    void (*identity)(double *p); /* on zeros; NULL: 0 */
} factor_class;

/* ------------------------------------------------------------------------------------ shared */

static double sq_diff(int n, const double *a, const double *b)
{
    double s = 0;
    for (int k = 0; k < n; k++) s += (a[k] - b[k]) * (a[k] - b[k]);
    return s;
}

/* Euclidean in the embedding (so3, gl3, tgl3: the Frobenius norm of the difference; r<m>) */
static double embedded_dist(const lf_factor *f, const double *a, const double *b) { return sqrt(sq_diff(f->np, a, b)); }

/* 2 atan2(|a - b|, |a + b|): the great-circle angle of unit vectors of R^n (accurate everywhere) */
static double sphere_angle(int n, const double *a, const double *b)
{
    double s = 0;
    for (int k = 0; k < n; k++) s += (a[k] + b[k]) * (a[k] + b[k]);
    return 2 * atan2(sqrt(sq_diff(n, a, b)), sqrt(s));
}

static void cross_bracket(const lf_factor *f, const double *a, const double *b, double *out)
{
    (void)f;
    lf_v3_cross(a, b, out);
}

/* dexp / dexpinv of so(3) (so3, s2, s3: the action is by a rotation) and their transposes */
static int rotation_dexp(const double *u, const double *v, int inverse, int transpose, double *out, lf_error *err)
{
    (void)err;
    double D[9];
    if (inverse) lf_so3_dexpinv(u, D);
    else lf_so3_dexp(u, D);
    if (transpose) lf_m3_tapply(D, v, out);
    else lf_m3_apply(D, v, out);
    return LF_OK;
}

static void diagonal_identity(double *p) { p[0] = p[4] = p[8] = 1; }

static int unit_check(const double d, double tol, const char *name, const char *what, lf_error *err)
{
    if (d > tol)
        return lf_error_set(err, LF_EINVAL, "%s is not a unit %s: ||q| - 1| = %.3g (tolerance %g)", name, what, d, tol);
    return LF_OK;
}

/* ------------------------------------------------------------------------------------ so3 */

static void so3_act(const lf_factor *f, const double *x, double *p)
{
    if (f->right) lf_so3_rmul_exp(p, x);
    else lf_so3_lmul_exp(p, x);
}

static int so3_diff(const lf_factor *f, int i, const double *a, const double *b, double *x, lf_error *err)
{
    (void)i, (void)err;
    double D[9];
    if (f->right) lf_m3_tmul(a, b, D); /* R0^T R1 */
    else lf_m3_mult(b, a, D);          /* R1 R0^T */
    lf_so3_log(D, x);
    return LF_OK;
}

static void so3_velocity(const lf_factor *f, const double *p, const double *x, double *v)
{
    double X[9];
    lf_so3_hat(x, X);
    if (f->right) lf_m3_mul(p, X, v);
    else lf_m3_mul(X, p, v);
}

static double so3_defect(const double *p) { return lf_so3_orth_error(p); }

static int so3_check(const lf_factor *f, const double *p, double d, double tol, const char *name, lf_error *err)
{
    (void)f, (void)d;
    return lf_so3_check(p, tol, name, err);
}

/* ------------------------------------------------------------------------------------ s2 */

static void s2_act(const lf_factor *f, const double *x, double *p)
{
    (void)f;
    lf_so3_rotate(x, p);
}

static int s2_diff(const lf_factor *f, int i, const double *a, const double *b, double *x, lf_error *err)
{
    (void)f;
    double c[3];
    lf_v3_cross(a, b, c);
    double s = lf_v3_norm(c), d = lf_v3_dot(a, b);
    if (s == 0) {
        if (d < 0) return lf_error_set(err, LF_EDOMAIN, "manifold diff: factor %d (s2): antipodal points", i + 1);
        x[0] = x[1] = x[2] = 0;
    } else
        lf_v3_scale(c, atan2(s, d) / s, x);
    return LF_OK;
}

static void s2_velocity(const lf_factor *f, const double *p, const double *x, double *v)
{
    (void)f;
    lf_v3_cross(x, p, v);
}

static double s2_dist(const lf_factor *f, const double *a, const double *b)
{
    (void)f;
    return sphere_angle(3, a, b);
}

static double s2_defect(const double *p) { return fabs(lf_v3_norm(p) - 1); }

static int s2_check(const lf_factor *f, const double *p, double d, double tol, const char *name, lf_error *err)
{
    (void)f, (void)p;
    return unit_check(d, tol, name, "vector (s2)", err);
}

static void s2_identity(double *p) { p[2] = 1; }

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

static void s3_act(const lf_factor *f, const double *x, double *p)
{
    double d[4], inc[4];
    s3_increment(x, d);
    if (f->right) lf_quat_mul(p, d, inc);
    else lf_quat_mul(d, p, inc);
    for (int k = 0; k < 4; k++) p[k] += inc[k];
}

static int s3_diff(const lf_factor *f, int i, const double *a, const double *b, double *x, lf_error *err)
{
    (void)i, (void)err;
    double c[4], D[4];
    lf_quat_conj(a, c);
    if (f->right) lf_quat_mul(c, b, D); /* q0* q1 */
    else lf_quat_mul(b, c, D);          /* q1 q0* */
    lf_quat_log(D, x);
    lf_v3_scale(x, 2, x);
    return LF_OK;
}

static void s3_velocity(const lf_factor *f, const double *p, const double *x, double *v)
{
    double h[4] = {0, 0.5 * x[0], 0.5 * x[1], 0.5 * x[2]};
    if (f->right) lf_quat_mul(p, h, v);
    else lf_quat_mul(h, p, v);
}

static double s3_dist(const lf_factor *f, const double *a, const double *b)
{
    (void)f;
    return sphere_angle(4, a, b);
}

static double s3_defect(const double *p) { return fabs(sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]) - 1); }

static int s3_check(const lf_factor *f, const double *p, double d, double tol, const char *name, lf_error *err)
{
    (void)f, (void)p;
    return unit_check(d, tol, name, "quaternion (s3)", err);
}

static void s3_identity(double *p) { p[0] = 1; }

/* ------------------------------------------------------------------------------------ gl3 */

static void gl3_act(const lf_factor *f, const double *x, double *p)
{
    double E[9];
    if (lf_gl3_exp(x, E, NULL) != LF_OK) {
        for (int k = 0; k < 9; k++) p[k] = NAN; /* overflow: the stepper rejects the step */
        return;
    }
    if (f->right) lf_m3_mul(p, E, p);
    else lf_m3_mul(E, p, p);
}

static int gl3_diff(const lf_factor *f, int i, const double *a, const double *b, double *x, lf_error *err)
{
    double Ai[9], D[9];
    if (lf_m3_inverse(a, Ai) != LF_OK)
        return lf_error_set(err, LF_EDOMAIN, "manifold diff: factor %d (gl3): singular matrix", i + 1);
    if (f->right) lf_m3_mul(Ai, b, D);
    else lf_m3_mul(b, Ai, D);
    return lf_gl3_log(D, x, err);
}

static void gl3_velocity(const lf_factor *f, const double *p, const double *x, double *v)
{
    if (f->right) lf_m3_mul(p, x, v);
    else lf_m3_mul(x, p, v);
}

static void gl3_bracket(const lf_factor *f, const double *a, const double *b, double *out)
{
    (void)f;
    double P[9], Q[9];
    lf_m3_mul(a, b, P);
    lf_m3_mul(b, a, Q);
    lf_m3_sub(P, Q, out);
}

static int gl3_dexp(const double *uin, const double *v, int inverse, int transpose, double *out, lf_error *err)
{
    double u[9];
    memcpy(u, uin, sizeof u);
    if (transpose) { /* ad_A^T = ad_{A^T} for the Frobenius product: (dexp_A)^T = dexp_{A^T} */
        double t = u[1]; u[1] = u[3]; u[3] = t;
        t = u[2]; u[2] = u[6]; u[6] = t;
        t = u[5]; u[5] = u[7]; u[7] = t;
    }
    return inverse ? lf_gl3_dexpinv(u, v, out, err) : lf_gl3_dexp(u, v, out, err);
}

static int gl3_check(const lf_factor *f, const double *p, double d, double tol, const char *name, lf_error *err)
{
    (void)f, (void)d, (void)tol;
    double det = lf_m3_det(p);
    if (!(fabs(det) > 0) || !isfinite(det))
        return lf_error_set(err, LF_EINVAL, "%s (gl3) is not invertible: det = %g", name, det);
    return LF_OK;
}

/* ------------------------------------------------------------------------------------ r<m> */

static void rm_act(const lf_factor *f, const double *x, double *p)
{
    for (int k = 0; k < f->nd; k++) p[k] += x[k];
}

static int rm_diff(const lf_factor *f, int i, const double *a, const double *b, double *x, lf_error *err)
{
    (void)i, (void)err;
    for (int k = 0; k < f->nd; k++) x[k] = b[k] - a[k];
    return LF_OK;
}

static void rm_velocity(const lf_factor *f, const double *p, const double *x, double *v)
{
    (void)p;
    memcpy(v, x, (size_t)f->nd * sizeof(double));
}

static void rm_bracket(const lf_factor *f, const double *a, const double *b, double *out)
{
    (void)a, (void)b;
    memset(out, 0, (size_t)f->nd * sizeof(double));
}

/* ------------------------------------------------------------------------------------ ts2 */

static void ts2_act(const lf_factor *f, const double *x, double *p)
{
    (void)f;
    lf_ts2_act(x, p);
}

static int ts2_diff(const lf_factor *f, int i, const double *a, const double *b, double *x, lf_error *err)
{
    (void)f;
    int rc = lf_ts2_diff(a, b, x, err);
    if (rc != LF_OK) return lf_error_set(err, rc, "manifold diff: factor %d (ts2): antipodal base points", i + 1);
    return LF_OK;
}

static void ts2_velocity(const lf_factor *f, const double *p, const double *x, double *v)
{
    (void)f;
    lf_ts2_velocity(p, x, v);
}

static void ts2_bracket(const lf_factor *f, const double *a, const double *b, double *out)
{
    (void)f;
    lf_ts2_bracket(a, b, out);
}

static int ts2_dexp(const double *u, const double *v, int inverse, int transpose, double *out, lf_error *err)
{
    (void)err;
    lf_ts2_dexp(u, v, inverse, transpose, out);
    return LF_OK;
}

static double ts2_dist(const lf_factor *f, const double *a, const double *b)
{
    (void)f;
    return lf_ts2_dist(a, b);
}

static double ts2_defect(const double *p)
{
    return fmax(fabs(lf_v3_norm(p) - 1), fabs(lf_v3_dot(p, p + 3)) / fmax(1, lf_v3_norm(p + 3)));
}

static int ts2_check(const lf_factor *f, const double *p, double d, double tol, const char *name, lf_error *err)
{
    (void)f;
    if (d > tol)
        return lf_error_set(err, LF_EINVAL, "%s is not in TS^2 (ts2): ||q| - 1| = %.3g, |q . omega| = %.3g "
                                            "(tolerance %g)", name, fabs(lf_v3_norm(p) - 1),
                            fabs(lf_v3_dot(p, p + 3)), tol);
    return LF_OK;
}

/* ------------------------------------------------------------------------------------ tgl3 */

static void tgl3_act(const lf_factor *f, const double *x, double *p)
{
    if (lf_tgl3_act(x, p, f->right, NULL) != LF_OK)
        for (int k = 0; k < 18; k++) p[k] = NAN; /* singular F or overflow: the stepper rejects the step */
}

static int tgl3_diff(const lf_factor *f, int i, const double *a, const double *b, double *x, lf_error *err)
{
    (void)i;
    return lf_tgl3_diff(a, b, f->right, x, err);
}

static void tgl3_velocity(const lf_factor *f, const double *p, const double *x, double *v)
{
    if (lf_tgl3_velocity(p, x, f->right, v, NULL) != LF_OK)
        for (int k = 0; k < 18; k++) v[k] = NAN;
}

static void tgl3_bracket(const lf_factor *f, const double *a, const double *b, double *out)
{
    (void)f;
    lf_tgl3_bracket(a, b, out);
}

static int tgl3_check(const lf_factor *f, const double *p, double d, double tol, const char *name, lf_error *err)
{
    (void)f, (void)d, (void)tol;
    double det = lf_m3_det(p);
    if (!(fabs(det) > 0) || !isfinite(det))
        return lf_error_set(err, LF_EINVAL, "%s (tgl3) has a singular F: det F = %g", name, det);
    return LF_OK;
}

/* ------------------------------------------------------------------------------------ se3 */

static void se3_act(const lf_factor *f, const double *x, double *p) { lf_se3_act(x, p, f->right); }

static int se3_diff(const lf_factor *f, int i, const double *a, const double *b, double *x, lf_error *err)
{
    (void)i, (void)err;
    lf_se3_diff(a, b, f->right, x);
    return LF_OK;
}

static void se3_velocity(const lf_factor *f, const double *p, const double *x, double *v)
{
    lf_se3_velocity(p, x, f->right, v);
}

static void se3_bracket(const lf_factor *f, const double *a, const double *b, double *out)
{
    (void)f;
    lf_se3_bracket(a, b, out);
}

static int se3_dexp(const double *u, const double *v, int inverse, int transpose, double *out, lf_error *err)
{
    (void)err;
    lf_se3_dexp(u, v, inverse, transpose, out);
    return LF_OK;
}

static double se3_dist(const lf_factor *f, const double *a, const double *b)
{
    (void)f;
    return lf_se3_dist(a, b);
}

static int se3_check(const lf_factor *f, const double *p, double d, double tol, const char *name, lf_error *err)
{
    (void)f, (void)d;
    return lf_se3_check(p, tol, name, err);
}

/* ------------------------------------------------------------------------------------ the kinds */

/* one kind per paragraph (clang-format would put one field per line) */
/* clang-format off */
static const factor_class kinds[] = {
    [LF_SO3] = {.name = "so3", .label = "so3", .np = 9, .nd = 3, .sided = 1, .act = so3_act, .diff = so3_diff,
                .velocity = so3_velocity, .bracket = cross_bracket, .dexp = rotation_dexp, .dist = embedded_dist,
                .defect = so3_defect, .check = so3_check, .identity = diagonal_identity},
    [LF_S2] = {.name = "s2", .label = "s2", .np = 3, .nd = 3, .act = s2_act, .diff = s2_diff, .velocity = s2_velocity,
               .bracket = cross_bracket, .dexp = rotation_dexp, .dist = s2_dist, .defect = s2_defect,
               .check = s2_check, .identity = s2_identity},
    [LF_S3] = {.name = "s3", .label = "s3", .np = 4, .nd = 3, .sided = 1, .act = s3_act, .diff = s3_diff,
               .velocity = s3_velocity, .bracket = cross_bracket, .dexp = rotation_dexp, .dist = s3_dist,
               .defect = s3_defect, .check = s3_check, .identity = s3_identity},
    [LF_GL3] = {.name = "gl3", .label = "gl3", .np = 9, .nd = 9, .sided = 1, .act = gl3_act, .diff = gl3_diff,
                .velocity = gl3_velocity, .bracket = gl3_bracket, .dexp = gl3_dexp, .dist = embedded_dist,
                .check = gl3_check, .identity = diagonal_identity},
    [LF_RM] = {.name = "r", .label = "r<m>", .abelian = 1, .act = rm_act, .diff = rm_diff, .velocity = rm_velocity,
               .bracket = rm_bracket, .dist = embedded_dist},
    [LF_TS2] = {.name = "ts2", .label = "ts2", .np = 6, .nd = 6, .act = ts2_act, .diff = ts2_diff,
                .velocity = ts2_velocity, .bracket = ts2_bracket, .dexp = ts2_dexp, .dist = ts2_dist,
                .defect = ts2_defect, .check = ts2_check, .identity = s2_identity},
    [LF_TGL3] = {.name = "tgl3", .label = "tgl3", .np = 18, .nd = 18, .sided = 1, .act = tgl3_act, .diff = tgl3_diff,
                 .velocity = tgl3_velocity, .bracket = tgl3_bracket, .dexp = lf_tgl3_dexp, .dist = embedded_dist,
                 .check = tgl3_check, .identity = diagonal_identity},
    [LF_SE3] = {.name = "se3", .label = "se3", .np = 12, .nd = 6, .sided = 1, .act = se3_act, .diff = se3_diff,
                .velocity = se3_velocity, .bracket = se3_bracket, .dexp = se3_dexp, .dist = se3_dist,
                .defect = so3_defect, .check = se3_check, .identity = diagonal_identity},
};
/* clang-format on */
#define NKINDS ((int)(sizeof kinds / sizeof kinds[0]))

static const factor_class *kind_of(const lf_factor *f) { return &kinds[f->kind]; }

const char *lf_factor_kind_name(lf_factor_kind kind)
{
    return (unsigned)kind < (unsigned)NKINDS ? kinds[kind].name : "?";
}

int lf_factor_parse(const char *name, lf_factor_kind *kind, int *dim)
{
    if (!name) return -1;
    for (int k = 0; k < NKINDS; k++) {
        const size_t n = strlen(kinds[k].name);
        if (kinds[k].np > 0 && strcmp(name, kinds[k].name) == 0) {
            *kind = (lf_factor_kind)k;
            *dim = 0;
            return 0;
        }
        if (kinds[k].np == 0 && strncmp(name, kinds[k].name, n) == 0 && name[n] >= '1' && name[n] <= '9') {
            char *end;
            long m = strtol(name + n, &end, 10);
            if (*end == '\0' && m >= 1 && m <= 1000000) {
                *kind = (lf_factor_kind)k;
                *dim = (int)m;
                return 0;
            }
        }
    }
    return -1;
}

lf_manifold *lf_manifold_new(int n, const lf_factor_kind *kinds_in, const int *dims, lf_trivialization triv,
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
        f->kind = kinds_in[i];
        if ((unsigned)f->kind >= (unsigned)NKINDS) {
            lf_error_set(err, LF_EINVAL, "manifold: factor %d has unknown kind %d", i + 1, (int)f->kind);
            free(M);
            return NULL;
        }
        const factor_class *c = kind_of(f);
        if (c->np == 0) { /* a sized kind (r<m>) */
            if (!dims || dims[i] < 1 || dims[i] > 1000000) {
                lf_error_set(err, LF_EINVAL, "manifold: factor %d is %s with m = %d, expected 1..1000000", i + 1,
                             c->label, dims ? dims[i] : 0);
                free(M);
                return NULL;
            }
            f->np = f->nd = dims[i];
        } else {
            f->np = c->np;
            f->nd = c->nd;
        }
        /* s2 and ts2 are acted on from the left, r<m> additively; the others follow the trivialization */
        f->right = triv == LF_LEFT_TRIVIALIZED && c->sided;
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
lf_trivialization lf_manifold_trivialization(const lf_manifold *M) { return M->triv; }
const lf_factor *lf_manifold_factor(const lf_manifold *M, int i) { return (i >= 0 && i < M->n) ? &M->f[i] : NULL; }

/* ------------------------------------------------------------------------------------ operations */

void lf_manifold_act(const lf_manifold *M, const double *xi, double *y)
{
    for (int i = 0; i < M->n; i++) {
        const lf_factor *f = &M->f[i];
        kind_of(f)->act(f, xi + f->od, y + f->op);
    }
}

int lf_manifold_diff(const lf_manifold *M, const double *y0, const double *y1, double *xi, lf_error *err)
{
    for (int i = 0; i < M->n; i++) {
        const lf_factor *f = &M->f[i];
        int rc = kind_of(f)->diff(f, i, y0 + f->op, y1 + f->op, xi + f->od, err);
        if (rc != LF_OK) return rc;
    }
    return LF_OK;
}

void lf_manifold_velocity(const lf_manifold *M, const double *y, const double *xi, double *ydot)
{
    for (int i = 0; i < M->n; i++) {
        const lf_factor *f = &M->f[i];
        kind_of(f)->velocity(f, y + f->op, xi + f->od, ydot + f->op);
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
    memcpy(term, v, (size_t)d * sizeof(double));
    memcpy(acc, v, (size_t)d * sizeof(double));
    if (order > 16) order = 16;
    for (int k = 1; k < order; k++) {
        kind_of(f)->bracket(f, u, term, tmp);
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
    if (kind_of(f)->abelian) {
        memmove(out, v, (size_t)d * sizeof(double));
        return LF_OK;
    }
    for (int k = 0; k < d; k++) u[k] = f->right ? -uin[k] : uin[k]; /* right action: dexp at -u */
    if (inverse && order > 0 && !transpose) {
        truncated_dexpinv(f, u, v, order, out);
        return LF_OK;
    }
    return kind_of(f)->dexp(u, v, inverse, transpose, out, err);
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

double lf_manifold_dist_range(const lf_manifold *M, int first, int count, const double *y0, const double *y1)
{
    double s = 0;
    for (int i = first; i < first + count && i < M->n; i++) {
        const lf_factor *f = &M->f[i];
        double d = kind_of(f)->dist(f, y0 + f->op, y1 + f->op);
        s += d * d;
    }
    return sqrt(s);
}

double lf_manifold_dist(const lf_manifold *M, const double *y0, const double *y1)
{
    return lf_manifold_dist_range(M, 0, M->n, y0, y1);
}

/* NaN if the point has a non-finite entry, else its kind's defect (0 without one) */
static double factor_defect(const lf_factor *f, const double *p)
{
    for (int k = 0; k < f->np; k++)
        if (!isfinite(p[k])) return NAN;
    return kind_of(f)->defect ? kind_of(f)->defect(p) : 0;
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
    if (isnan(d)) return lf_error_set(err, LF_EINVAL, "%s is not finite (%s factor)", name, kind_of(f)->label);
    return kind_of(f)->check ? kind_of(f)->check(f, p, d, tol, name, err) : LF_OK;
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
        if (kind_of(f)->identity) kind_of(f)->identity(y + f->op);
    }
}
