/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the manifold layer: a product of factors on which every generic method acts.
 *
 * A point y of the product is a vector of doubles, the factors' parameters one after the other;
 * an algebra element xi is a vector of the factors' algebra coordinates one after the other
 * (offsets in lf_factor.op / .od). Factors:
 *   so3  rotation R (9 doubles, row-major), algebra R^3 (hat), [a, b] = a x b
 *   s2   unit vector q (3), acted on by SO(3): q <- exp(hat xi) q, algebra R^3 (the sphere is a
 *        homogeneous space; xi and xi + s q move q alike)
 *   s3   unit quaternion q = (w, x, y, z) (4); xi in R^3 is an angular velocity: the action is
 *        q <- quat_exp(xi/2) q, so that the rotation R(q) moves by exp(hat xi) (quat.h);
 *        [a, b] = a x b as for so3
 *   gl3  invertible 3x3 matrix Y (9), algebra gl(3) (9 entries, row-major), [A, B] = AB - BA
 *   r<m> vector of R^m (m), additive group: y <- y + xi
 *   ts2  tangent bundle TS^2: (q, omega) with |q| = 1, q . omega = 0 (6), acted on by SE(3):
 *        (a, b) in R^6 moves it by (Q, v) = exp(a, b), (q, omega) <- (Q q, Q omega + v x Q q)
 *        (ts2.h; the TS^2 gradient flow of Tumiotto, Cokaj, Celledoni, Owren, Arnold)
 *   tgl3 cotangent bundle T*GL(3) as a Lie group: (F, P) two 3x3 matrices (18), algebra
 *        gl(3) x gl(3) (18), the cotangent-lifted group law (tgl3.h; the pseudo-rigid body of
 *        Celledoni & Owren)
 *   se3  rigid motion (R, p): R row-major then the position p (12), the matrix [[R, p], [0, 1]];
 *        algebra the twists (w, v) (6), hat = [[hat w, v], [0, 0]], [a, b] the commutator (se3.h).
 *        Left-trivialized, y' = y hat(xi) is the body-fixed twist (R' = R hat w, p' = R v)
 * The action (lf_manifold_act) is on the left, y <- exp(xi) y, for a right-trivialized ODE
 * y' = xi y (the spatial form of Ortolan's thesis, §6-7), or on the right, y <- y exp(xi), for a
 * left-trivialized ODE y' = y xi (body frame). s2 and ts2 are acted on from the left whatever the
 * trivialization (q' = xi x q), r<m> is additive either way.
 *
 * Derivative of the action: if y(t) = act(u(t), y0) then y' = xi(t) . y with xi = dexp(u) u'
 * for the left action (right-trivialized dexp_u = sum ad_u^k/(k+1)!, so3.h) and xi = dexp(-u) u'
 * for the right action; lf_manifold_dexpinv inverts it, so RKMK methods need not know the side.
 * The truncated version keeps the terms k < order of dexpinv_u(v) = sum_k B_k/k! ad_u^k(v)
 * (Bernoulli numbers; Ortolan's thesis §7.1.2): exact to O(|u|^order). */
#ifndef LF_MANIFOLD_H
#define LF_MANIFOLD_H

#include "base/export.h"
#include "base/error.h"

LF_BEGIN_DECLS

typedef enum { LF_SO3 = 0, LF_S2, LF_S3, LF_GL3, LF_RM, LF_TS2, LF_TGL3, LF_SE3 } lf_factor_kind;
/* The largest algebra dimension of a factor other than r<m> (tgl3). */
#define LF_FACTOR_MAXD 18

typedef enum {
    LF_RIGHT_TRIVIALIZED = 0, /* y' = xi . y, action y <- exp(xi) y */
    LF_LEFT_TRIVIALIZED = 1   /* y' = y . xi, action y <- y exp(xi) */
} lf_trivialization;

typedef struct lf_factor {
    lf_factor_kind kind;
    int np, nd;    /* parameters (doubles of a point) and algebra dimension */
    int op, od;    /* offsets in a point and in an algebra vector */
    int right;     /* 1 if this factor is acted on from the right (y exp(xi)) */
} lf_factor;

typedef struct lf_manifold lf_manifold;

/* A product of n factors; dims[i] is m for LF_RM (ignored otherwise; dims may be NULL when no
 * factor is LF_RM). NULL with err filled on bad input. */
lf_manifold *lf_manifold_new(int n, const lf_factor_kind *kinds, const int *dims, lf_trivialization triv,
                             lf_error *err);
/* Parse "so3", "s2", "s3", "gl3", "ts2", "tgl3", "se3", "r<m>" (m >= 1): returns 0 and fills kind/dim, or -1. */
int lf_factor_parse(const char *name, lf_factor_kind *kind, int *dim);
/* "so3", ... ; for LF_RM the caller formats "r%d". */
const char *lf_factor_kind_name(lf_factor_kind kind);
lf_manifold *lf_manifold_copy(const lf_manifold *M, lf_error *err);
void lf_manifold_free(lf_manifold *M);

/* The number of factors, the doubles of a point, the algebra dimension, the trivialization, and
 * factor i (0-based; NULL outside 0 .. nfactors - 1). */
int lf_manifold_nfactors(const lf_manifold *M);
int lf_manifold_nparam(const lf_manifold *M);
int lf_manifold_ndim(const lf_manifold *M);
lf_trivialization lf_manifold_trivialization(const lf_manifold *M);
const lf_factor *lf_manifold_factor(const lf_manifold *M, int i);

/* y <- act(xi, y) in place (see above): one rounding per entry for so3/s2/s3 (increment form). */
void lf_manifold_act(const lf_manifold *M, const double *xi, double *y);
/* xi with act(xi, y0) = y1, the smallest such xi (s2: rotation about q0 x q1; s3: |xi| <= 2 pi;
 * gl3: principal logarithm; se3: |w| <= pi). LF_EDOMAIN where it does not exist (antipodal s2 points, gl3
 * without a principal logarithm). */
int lf_manifold_diff(const lf_manifold *M, const double *y0, const double *y1, double *xi, lf_error *err);
/* Embedded velocity ydot (nparam) of y' = xi . y (or y . xi) at y: R' = hat(xi) R or R hat(xi),
 * q' = xi x q, quaternion q' = (0, xi/2) q or q (0, xi/2), Y' = xi Y or Y xi, r' = xi, se3:
 * (hat(w) R, w x p + v) or (R hat(w), R v). */
void lf_manifold_velocity(const lf_manifold *M, const double *y, const double *xi, double *ydot);

/* out = dexpinv of the action at u applied to v (see above); order <= 0: exact, else truncated to
 * `order` Bernoulli terms. out may alias v but not u. */
int lf_manifold_dexpinv(const lf_manifold *M, const double *u, const double *v, int order, double *out,
                        lf_error *err);
/* out = dexp of the action at u applied to v (exact); the inverse of the above. */
int lf_manifold_dexp(const lf_manifold *M, const double *u, const double *v, double *out, lf_error *err);
/* out = (dexp_u)^T v (inverse = 0) or (dexpinv_u)^T v (inverse = 1): the transposes with respect to
 * lf_manifold_inner (the dexp* of Celledoni & Owren's order-4 method). Exact;
 * out may alias v but not u. */
int lf_manifold_dexp_transpose(const lf_manifold *M, const double *u, const double *v, int inverse, double *out,
                               lf_error *err);
/* Inner product on the algebra: sum of the factors' (dot product; Frobenius for gl3 and tgl3). */
double lf_manifold_inner(const lf_manifold *M, const double *a, const double *b);

/* Distance of two points: root sum of squares of the factors' distances (so3, gl3, tgl3: Frobenius
 * norm of the difference; se3: sqrt(||R0 - R1||_F^2 + |p0 - p1|^2); s2, s3: great-circle angle; r<m>: Euclidean; ts2: sqrt(angle(q0, q1)^2 +
 * |omega0 - omega1|^2), not the Sasaki distance, see ts2.h). */
double lf_manifold_dist(const lf_manifold *M, const double *y0, const double *y1);
/* The same for factors [first, first + count) only. */
double lf_manifold_dist_range(const lf_manifold *M, int first, int count, const double *y0, const double *y1);
/* How far y is off the manifold: max over factors of ||R^T R - I||_F (so3, se3), ||q| - 1| (s2, s3),
 * max(||q| - 1|, |q . omega| / max(1, |omega|)) (ts2); 0 for gl3, tgl3 and r<m>; NaN if y has a
 * non-finite entry. */
double lf_manifold_defect(const lf_manifold *M, const double *y);
/* LF_OK if y is finite, on the manifold within tol (and det R > 0, det Y > 0 for gl3); else
 * LF_EINVAL with a message naming `what`, the factor and the defect. */
int lf_manifold_check(const lf_manifold *M, const double *y, double tol, const char *what, lf_error *err);
/* The same for factor i alone, named `name` in messages. */
int lf_manifold_check_factor(const lf_manifold *M, int i, const double *y, double tol, const char *name,
                             lf_error *err);
/* A point to start from: identity (so3, gl3), e3 (s2), (1,0,0,0) (s3), 0 (r<m>), (e3, 0) (ts2),
 * (I, 0) (tgl3, se3). */
void lf_manifold_identity(const lf_manifold *M, double *y);

LF_END_DECLS

#endif
