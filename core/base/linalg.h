/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — small dense linear algebra.
 * 3-vectors are double[3]; 3x3 matrices are double[9], row-major (M[3*i+j] = row i, column j).
 * The 3-vector / 3x3 helpers are static inline; linalg.c holds their slow paths (scaled to avoid
 * overflow and underflow). The n x n factorizations are in dense.h. */
#ifndef LF_LINALG_H
#define LF_LINALG_H

#include "base/export.h"
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/error.h"

LF_BEGIN_DECLS

static inline void lf_v3_set(double *r, double x, double y, double z) { r[0] = x; r[1] = y; r[2] = z; }
static inline void lf_v3_copy(const double *a, double *r) { r[0] = a[0]; r[1] = a[1]; r[2] = a[2]; }
static inline double lf_v3_dot(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
/* Euclidean norm without spurious overflow or underflow. In the common range (|a|^2 between 2^-968
 * and DBL_MAX) it is sqrt(a.a), bit for bit; outside it the slow path scales a by a power of two
 * first (as hypot does), so vec3{1e200, 0, 0} has norm 1e200, not inf. NaN if a has a NaN. */
#if defined(__GNUC__)
#define LF_COLD __attribute__((cold))
#define LF_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define LF_COLD
#define LF_LIKELY(x) (x)
#endif
LF_COLD double lf_v3_norm_scaled(const double *a);
static inline double lf_v3_norm(const double *a)
{
    double s = lf_v3_dot(a, a);
    if (LF_LIKELY(s >= 0x1p-968 && s <= 0x1.fffffffffffffp+1023)) return sqrt(s);
    return lf_v3_norm_scaled(a);
}
static inline void lf_v3_add(const double *a, const double *b, double *r) { r[0] = a[0] + b[0]; r[1] = a[1] + b[1]; r[2] = a[2] + b[2]; }
static inline void lf_v3_sub(const double *a, const double *b, double *r) { r[0] = a[0] - b[0]; r[1] = a[1] - b[1]; r[2] = a[2] - b[2]; }
static inline void lf_v3_scale(const double *a, double s, double *r) { r[0] = s * a[0]; r[1] = s * a[1]; r[2] = s * a[2]; }
/* r = a + s b */
static inline void lf_v3_axpy(const double *a, double s, const double *b, double *r) { r[0] = a[0] + s * b[0]; r[1] = a[1] + s * b[1]; r[2] = a[2] + s * b[2]; }
/* r = a x b (r may alias a or b) */
static inline void lf_v3_cross(const double *a, const double *b, double *r)
{
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    r[0] = x; r[1] = y; r[2] = z;
}
/* Componentwise product / quotient (diagonal inertia times vector). */
static inline void lf_v3_mul(const double *d, const double *a, double *r) { r[0] = d[0] * a[0]; r[1] = d[1] * a[1]; r[2] = d[2] * a[2]; }
static inline void lf_v3_div(const double *a, const double *d, double *r) { r[0] = a[0] / d[0]; r[1] = a[1] / d[1]; r[2] = a[2] / d[2]; }
static inline int lf_v3_isfinite(const double *a) { return isfinite(a[0]) && isfinite(a[1]) && isfinite(a[2]); }

static inline void lf_m3_copy(const double *A, double *R) { memcpy(R, A, 9 * sizeof(double)); }
static inline void lf_m3_identity(double *R)
{
    R[0] = 1; R[1] = 0; R[2] = 0; R[3] = 0; R[4] = 1; R[5] = 0; R[6] = 0; R[7] = 0; R[8] = 1;
}
static inline void lf_m3_transpose(const double *A, double *R)
{
    double t[9] = {A[0], A[3], A[6], A[1], A[4], A[7], A[2], A[5], A[8]};
    memcpy(R, t, sizeof t);
}
/* C = A B (C may alias A or B) */
static inline void lf_m3_mul(const double *A, const double *B, double *C)
{
    double t[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            t[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
    memcpy(C, t, sizeof t);
}
/* C = A^T B */
static inline void lf_m3_tmul(const double *A, const double *B, double *C)
{
    double t[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            t[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
    memcpy(C, t, sizeof t);
}
/* C = A B^T */
static inline void lf_m3_mult(const double *A, const double *B, double *C)
{
    double t[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            t[3 * i + j] = A[3 * i] * B[3 * j] + A[3 * i + 1] * B[3 * j + 1] + A[3 * i + 2] * B[3 * j + 2];
    memcpy(C, t, sizeof t);
}
/* r = A v (r may alias v) */
static inline void lf_m3_apply(const double *A, const double *v, double *r)
{
    double x = A[0] * v[0] + A[1] * v[1] + A[2] * v[2];
    double y = A[3] * v[0] + A[4] * v[1] + A[5] * v[2];
    double z = A[6] * v[0] + A[7] * v[1] + A[8] * v[2];
    r[0] = x; r[1] = y; r[2] = z;
}
/* r = A^T v (r may alias v) */
static inline void lf_m3_tapply(const double *A, const double *v, double *r)
{
    double x = A[0] * v[0] + A[3] * v[1] + A[6] * v[2];
    double y = A[1] * v[0] + A[4] * v[1] + A[7] * v[2];
    double z = A[2] * v[0] + A[5] * v[1] + A[8] * v[2];
    r[0] = x; r[1] = y; r[2] = z;
}
static inline void lf_m3_add(const double *A, const double *B, double *C) { for (int i = 0; i < 9; i++) C[i] = A[i] + B[i]; }
static inline void lf_m3_sub(const double *A, const double *B, double *C) { for (int i = 0; i < 9; i++) C[i] = A[i] - B[i]; }
static inline void lf_m3_scale(const double *A, double s, double *C) { for (int i = 0; i < 9; i++) C[i] = s * A[i]; }
static inline double lf_m3_trace(const double *A) { return A[0] + A[4] + A[8]; }
static inline double lf_m3_det_raw(const double *A)
{
    return A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) + A[2] * (A[3] * A[7] - A[4] * A[6]);
}
/* Determinant by cofactors of the first row. Without spurious overflow or underflow: when the
 * plain formula leaves the safe range, each row is scaled by a power of two (exact) and the
 * exponents are added back, so the result is inf only when |det A| > DBL_MAX. */
LF_COLD double lf_m3_det_scaled(const double *A);
static inline double lf_m3_det(const double *A)
{
    /* every product of three entries is 0 or in [2^-900, 2^900]: nothing over- or underflows */
    for (int i = 0; i < 9; i++) {
        double a = fabs(A[i]);
        if (a > 0x1p+300 || (a < 0x1p-300 && a != 0)) return lf_m3_det_scaled(A);
    }
    return lf_m3_det_raw(A);
}
/* Frobenius norm (scaled like lf_v3_norm outside the safe range of the sum of squares) */
LF_COLD double lf_m3_fnorm_scaled(const double *A);
static inline double lf_m3_fnorm(const double *A)
{
    double s = 0;
    for (int i = 0; i < 9; i++) s += A[i] * A[i];
    if (LF_LIKELY(s >= 0x1p-968 && s <= 0x1.fffffffffffffp+1023)) return sqrt(s);
    return lf_m3_fnorm_scaled(A);
}
/* Inverse for arbitrary finite A, without spurious overflow or underflow: A is scaled by a power
 * of two so that its largest entry is in [0.5, 1), inverted by LU with partial pivoting (backward
 * stable), and scaled back. *rcond (if not NULL) receives 1/(||As||_F ||As^-1||_F) of the scaled
 * matrix, an estimate of the reciprocal condition number. Returns LF_EDOMAIN when A is singular to
 * working precision (an exactly zero pivot, or rcond < 1e-15) or when the inverse overflows (then
 * *rcond >= 1e-15); Ai is then untouched. (linalg_scaled.c) */
int lf_m3_inverse_scaled(const double *A, double *Ai, double *rcond);
static inline int lf_m3_isfinite(const double *A)
{
    for (int i = 0; i < 9; i++)
        if (!isfinite(A[i])) return 0;
    return 1;
}
/* 1 if the n numbers are all finite: no exponent field all ones, tested without a branch per entry
 * (an OR the compiler vectorizes; the fast path of the checks that then name the bad entry) */
static inline int lf_all_finite(const double *y, size_t n)
{
    const uint64_t e = 0x7ff0000000000000u;
    uint64_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t b;
        memcpy(&b, y + i, sizeof b);
        bad |= (b & e) == e;
    }
    return !bad;
}
/* Inverse by the adjugate; returns LF_EDOMAIN when |det| <= 1e-300. (The plain determinant: this
 * is the Newton steps' hot path; lf_m3_inverse_scaled is the careful one.) */
static inline int lf_m3_inverse(const double *A, double *Ai)
{
    double d = lf_m3_det_raw(A);
    if (!(fabs(d) > 1e-300)) return LF_EDOMAIN;
    double t[9] = {
        (A[4] * A[8] - A[5] * A[7]) / d, (A[2] * A[7] - A[1] * A[8]) / d, (A[1] * A[5] - A[2] * A[4]) / d,
        (A[5] * A[6] - A[3] * A[8]) / d, (A[0] * A[8] - A[2] * A[6]) / d, (A[2] * A[3] - A[0] * A[5]) / d,
        (A[3] * A[7] - A[4] * A[6]) / d, (A[1] * A[6] - A[0] * A[7]) / d, (A[0] * A[4] - A[1] * A[3]) / d};
    memcpy(Ai, t, sizeof t);
    return LF_OK;
}
/* x = A^{-1} b for 3x3 A by Cramer's rule (x may alias b), returning det A; computed whatever det A
 * is (branch-free, for lane loops): the caller tests it. */
static inline double lf_m3_cramer(const double *A, const double *b, double *x)
{
    const double c0 = A[4] * A[8] - A[5] * A[7], c1 = A[5] * A[6] - A[3] * A[8], c2 = A[3] * A[7] - A[4] * A[6];
    const double d = A[0] * c0 + A[1] * c1 + A[2] * c2;
    const double b0 = b[0], b1 = b[1], b2 = b[2];
    const double x0 = (b0 * c0 + A[1] * (A[5] * b2 - b1 * A[8]) + A[2] * (b1 * A[7] - A[4] * b2)) / d;
    const double x1 = (A[0] * (b1 * A[8] - A[5] * b2) + b0 * c1 + A[2] * (A[3] * b2 - b1 * A[6])) / d;
    const double x2 = (A[0] * (A[4] * b2 - b1 * A[7]) + A[1] * (b1 * A[6] - A[3] * b2) + b0 * c2) / d;
    x[0] = x0;
    x[1] = x1;
    x[2] = x2;
    return d;
}
/* The determinant below which lf_m3_solve calls a 3x3 matrix singular. */
static inline int lf_m3_singular(double det) { return !(fabs(det) > 1e-300); }
/* Solve A x = b for 3x3 A by Cramer's rule (x may alias b); LF_EDOMAIN when |det A| <= 1e-300
 * (x untouched). */
static inline int lf_m3_solve(const double *A, const double *b, double *x)
{
    double y[3];
    if (lf_m3_singular(lf_m3_cramer(A, b, y))) return LF_EDOMAIN;
    lf_v3_copy(y, x);
    return LF_OK;
}

LF_END_DECLS

#endif
