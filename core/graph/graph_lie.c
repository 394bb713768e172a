/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — vectors, matrices and Lie group maps on expression graphs (formulas in graph_lie.h;
 * sums in the order of linalg.h and so3.c, so that compiled and C results agree to rounding). */
#include "graph/graph_lie.h"

#include <math.h>

#define ADD(a, b) lf_g2(g, LF_G_ADD, a, b)
#define SUB(a, b) lf_g2(g, LF_G_SUB, a, b)
#define MUL(a, b) lf_g2(g, LF_G_MUL, a, b)
#define DIV(a, b) lf_g2(g, LF_G_DIV, a, b)
#define NEG(a) lf_g1(g, LF_G_NEG, a)
#define LT(a, b) lf_g2(g, LF_G_LT, a, b)
#define SEL(c, a, b) lf_gselect(g, c, a, b)
#define K(v) lf_graph_const(g, v)

/* ---------------------------------------------------------------- vectors */
static void gv3_add(lf_graph *g, const int *a, const int *b, int *r) { for (int i = 0; i < 3; i++) r[i] = ADD(a[i], b[i]); }
static void gv3_sub(lf_graph *g, const int *a, const int *b, int *r) { for (int i = 0; i < 3; i++) r[i] = SUB(a[i], b[i]); }
static void gv3_scale(lf_graph *g, int s, const int *a, int *r) { for (int i = 0; i < 3; i++) r[i] = MUL(s, a[i]); }
int lf_gv3_dot(lf_graph *g, const int *a, const int *b) { return ADD(ADD(MUL(a[0], b[0]), MUL(a[1], b[1])), MUL(a[2], b[2])); }

void lf_gv3_cross(lf_graph *g, const int *a, const int *b, int *r)
{
    r[0] = SUB(MUL(a[1], b[2]), MUL(a[2], b[1]));
    r[1] = SUB(MUL(a[2], b[0]), MUL(a[0], b[2]));
    r[2] = SUB(MUL(a[0], b[1]), MUL(a[1], b[0]));
}

int lf_gv3_norm(lf_graph *g, const int *a) { return lf_g1(g, LF_G_SQRT, lf_gv3_dot(g, a, a)); }

void lf_gv3_normalized(lf_graph *g, const int *a, int *r)
{
    int n = lf_gv3_norm(g, a);
    for (int i = 0; i < 3; i++) r[i] = DIV(a[i], n);
}

/* ---------------------------------------------------------------- matrices */
void lf_gm3_sub(lf_graph *g, const int *A, const int *B, int *R) { for (int i = 0; i < 9; i++) R[i] = SUB(A[i], B[i]); }
void lf_gm3_mul(lf_graph *g, const int *A, const int *B, int *R)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            R[3 * i + j] = ADD(ADD(MUL(A[3 * i], B[j]), MUL(A[3 * i + 1], B[3 + j])), MUL(A[3 * i + 2], B[6 + j]));
}

void lf_gm3_apply(lf_graph *g, const int *A, const int *x, int *r) { for (int i = 0; i < 3; i++) r[i] = lf_gv3_dot(g, A + 3 * i, x); }

void lf_gm3_tapply(lf_graph *g, const int *A, const int *x, int *r)
{
    for (int j = 0; j < 3; j++) r[j] = ADD(ADD(MUL(A[j], x[0]), MUL(A[3 + j], x[1])), MUL(A[6 + j], x[2]));
}

void lf_gm3_transpose(const int *A, int *R)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) R[3 * j + i] = A[3 * i + j];
}

int lf_gm3_det(lf_graph *g, const int *A)
{
    int c0 = SUB(MUL(A[4], A[8]), MUL(A[5], A[7]));
    int c1 = SUB(MUL(A[3], A[8]), MUL(A[5], A[6]));
    int c2 = SUB(MUL(A[3], A[7]), MUL(A[4], A[6]));
    return ADD(SUB(MUL(A[0], c0), MUL(A[1], c1)), MUL(A[2], c2));
}

int lf_gm3_trace(lf_graph *g, const int *A) { return ADD(ADD(A[0], A[4]), A[8]); }

int lf_gm3_fnorm(lf_graph *g, const int *A)
{
    int s = MUL(A[0], A[0]);
    for (int i = 1; i < 9; i++) s = ADD(s, MUL(A[i], A[i]));
    return lf_g1(g, LF_G_SQRT, s);
}

void lf_gm3_inv(lf_graph *g, const int *A, int *R)
{
    int d = lf_gm3_det(g, A);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) { /* (A^-1)_ij = cofactor_ji / det */
            int r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
            int cof = SUB(MUL(A[3 * r0 + c0], A[3 * r1 + c1]), MUL(A[3 * r0 + c1], A[3 * r1 + c0]));
            R[3 * i + j] = DIV(cof, d);
        }
}

void lf_gm3_identity(lf_graph *g, int *R) { for (int i = 0; i < 9; i++) R[i] = K(i % 4 == 0); }

void lf_gm3_trhat(lf_graph *g, const int *M, int *r)
{
    r[0] = SUB(M[5], M[7]);
    r[1] = SUB(M[6], M[2]);
    r[2] = SUB(M[1], M[3]);
}

/* ---------------------------------------------------------------- SO(3) */
void lf_gso3_hat(lf_graph *g, const int *w, int *W)
{
    int z = K(0);
    W[0] = z;         W[1] = NEG(w[2]); W[2] = w[1];
    W[3] = w[2];      W[4] = z;         W[5] = NEG(w[0]);
    W[6] = NEG(w[1]); W[7] = w[0];      W[8] = z;
}

void lf_gso3_vee(lf_graph *g, const int *W, int *w)
{
    int h = K(0.5);
    w[0] = MUL(h, SUB(W[7], W[5]));
    w[1] = MUL(h, SUB(W[2], W[6]));
    w[2] = MUL(h, SUB(W[3], W[1]));
}

/* M = a I + b hat(x) + c hat(x)^2 (lf_so3_quadratic: hat(x)^2 = x x^T - |x|^2 I); a = -1: 1 */
static void quadratic(lf_graph *g, const int *x, int a, int b, int c, int *M)
{
    int q[3] = {MUL(x[0], x[0]), MUL(x[1], x[1]), MUL(x[2], x[2])};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) M[3 * i + j] = MUL(MUL(c, x[i]), x[j]);
    M[0] = SUB(a, MUL(c, ADD(q[1], q[2])));
    M[4] = SUB(a, MUL(c, ADD(q[0], q[2])));
    M[8] = SUB(a, MUL(c, ADD(q[0], q[1])));
    M[1] = SUB(M[1], MUL(b, x[2])); M[2] = ADD(M[2], MUL(b, x[1]));
    M[3] = ADD(M[3], MUL(b, x[2])); M[5] = SUB(M[5], MUL(b, x[0]));
    M[6] = SUB(M[6], MUL(b, x[1])); M[7] = ADD(M[7], MUL(b, x[0]));
}

void lf_gso3_exp(lf_graph *g, const int *x, int *R)
{
    int s = lf_gv3_dot(g, x, x);
    quadratic(g, x, K(1), lf_gstumpff(g, 1, s), lf_gstumpff(g, 2, s), R);
}

void lf_gso3_dexp(lf_graph *g, const int *x, int *D)
{
    int s = lf_gv3_dot(g, x, x);
    quadratic(g, x, K(1), lf_gstumpff(g, 2, s), lf_gstumpff(g, 3, s), D);
}

void lf_gso3_dexpinv(lf_graph *g, const int *x, int *D)
{
    int s = lf_gv3_dot(g, x, x);
    int c = DIV(SUB(lf_gstumpff(g, 3, s), MUL(K(2), lf_gstumpff(g, 4, s))), MUL(K(2), lf_gstumpff(g, 2, s)));
    quadratic(g, x, K(1), K(-0.5), c, D);
}

void lf_gso3_cay(lf_graph *g, const int *x, int *R)
{
    int q = DIV(K(1), ADD(K(4), lf_gv3_dot(g, x, x)));
    quadratic(g, x, K(1), MUL(K(4), q), MUL(K(2), q), R);
}

void lf_gso3_dcay(lf_graph *g, const int *x, int *D)
{
    int q = DIV(K(4), ADD(K(4), lf_gv3_dot(g, x, x)));
    quadratic(g, x, q, MUL(K(0.5), q), K(0), D);
}

void lf_gso3_dcayinv(lf_graph *g, const int *x, int *D)
{
    quadratic(g, x, ADD(K(1), MUL(K(0.25), lf_gv3_dot(g, x, x))), K(-0.5), K(0.25), D);
}

void lf_gso3_cayinv(lf_graph *g, const int *R, int *x)
{
    int d = ADD(K(1), lf_gm3_trace(g, R)), s[3];
    lf_gso3_vee(g, R, s);
    int f = SEL(LT(K(1e-12), d), DIV(K(4), d), K(NAN)); /* 1 + tr R <= 1e-12: no inverse (cayinv) */
    gv3_scale(g, f, s, x);
}

/* log: the angle t = atan2(|w|, c) and the two branches of lf_so3_log */
void lf_gso3_log(lf_graph *g, const int *R, int *x)
{
    int w[3];
    lf_gso3_vee(g, R, w);
    int c = MUL(K(0.5), SUB(lf_gm3_trace(g, R), K(1)));
    int ww = lf_gv3_dot(g, w, w), t = lf_g2(g, LF_G_ATAN2, lf_g1(g, LF_G_SQRT, ww), c);
    /* t < pi/2 (c > 0): x = w t/|w| = w / (c1(t^2) rho) */
    int rho = lf_g1(g, LF_G_SQRT, ADD(ww, MUL(c, c)));
    int f = DIV(K(1), MUL(lf_gstumpff(g, 1, MUL(t, t)), rho));
    /* t >= pi/2: column k (largest diagonal) of the symmetric part minus c I, normalized, signed */
    int k1 = LT(R[0], R[4]), best = SEL(k1, R[4], R[0]);
    int k2 = LT(best, R[8]);
    int n[3];
    for (int i = 0; i < 3; i++) {
        int col[3];
        for (int k = 0; k < 3; k++) {
            col[k] = MUL(K(0.5), ADD(R[3 * i + k], R[3 * k + i])); /* S_ik */
            if (k == i) col[k] = SUB(col[k], c);
        }
        /* n_i = column k's entry i, k = argmax: select on k2, then k1 */
        n[i] = SEL(k2, col[2], SEL(k1, col[1], col[0]));
    }
    int nn[3];
    lf_gv3_normalized(g, n, nn);
    /* sign from w; at exactly pi (w . n = 0) the first nonzero component positive */
    int d = lf_gv3_dot(g, w, nn);
    int z = K(0);
    int first = SEL(lf_g2(g, LF_G_NE, nn[0], z), nn[0], SEL(lf_g2(g, LF_G_NE, nn[1], z), nn[1], nn[2]));
    int dd = SEL(lf_g2(g, LF_G_EQ, d, z), first, d);
    int st = SEL(LT(dd, z), NEG(t), t);
    int small = LT(z, c);
    for (int i = 0; i < 3; i++) x[i] = SEL(small, MUL(w[i], f), MUL(nn[i], st));
}

int lf_gso3_dist(lf_graph *g, const int *R1, const int *R2)
{
    int D[9];
    lf_gm3_sub(g, R1, R2, D);
    return lf_gm3_fnorm(g, D);
}

int lf_gso3_angle(lf_graph *g, const int *R1, const int *R2)
{
    int T[9], M[9], w[3];
    lf_gm3_transpose(R1, T);
    lf_gm3_mul(g, T, R2, M);
    lf_gso3_vee(g, M, w);
    int c = MUL(K(0.5), SUB(lf_gm3_trace(g, M), K(1)));
    return lf_g2(g, LF_G_ATAN2, lf_gv3_norm(g, w), c);
}

int lf_gso3_orth_error(lf_graph *g, const int *A)
{
    int T[9], M[9], I[9], D[9];
    lf_gm3_transpose(A, T);
    lf_gm3_mul(g, T, A, M);
    lf_gm3_identity(g, I);
    lf_gm3_sub(g, M, I, D);
    return lf_gm3_fnorm(g, D);
}

/* ---------------------------------------------------------------- S^2 */
int lf_gs2_dist(lf_graph *g, const int *p, const int *q)
{
    int a[3], b[3];
    gv3_sub(g, p, q, a);
    gv3_add(g, p, q, b);
    return MUL(K(2), lf_g2(g, LF_G_ATAN2, lf_gv3_norm(g, a), lf_gv3_norm(g, b)));
}

void lf_gs2_midpoint(lf_graph *g, const int *p, const int *q, int *m)
{
    int s[3];
    gv3_add(g, p, q, s);
    int n = lf_gv3_norm(g, s);
    int ok = lf_g2(g, LF_G_LE, K(1e-12), n); /* antipodal points: no midpoint (NaN) */
    for (int i = 0; i < 3; i++) m[i] = SEL(ok, DIV(s[i], n), K(NAN));
}

void lf_gs2_retract(lf_graph *g, const int *x, const int *v, int *y)
{
    int s[3];
    gv3_add(g, x, v, s);
    lf_gv3_normalized(g, s, y);
}

void lf_gs2_retract_inv(lf_graph *g, const int *x, const int *y, int *v)
{
    int d = lf_gv3_dot(g, x, y);
    int ok = LT(K(0), d); /* outside the chart: NaN */
    for (int i = 0; i < 3; i++) v[i] = SEL(ok, DIV(SUB(y[i], MUL(d, x[i])), d), K(NAN));
}

void lf_gs2_tangent(lf_graph *g, const int *x, const int *v, int *t)
{
    int r[3], a = lf_gv3_dot(g, x, v);
    for (int i = 0; i < 3; i++) r[i] = SUB(v[i], MUL(a, x[i]));
    int b = lf_gv3_dot(g, x, r);
    for (int i = 0; i < 3; i++) t[i] = SUB(r[i], MUL(b, x[i]));
}

void lf_gs2_exp(lf_graph *g, const int *x, const int *v, int *y)
{
    int s = lf_gv3_dot(g, v, v), c0 = lf_gstumpff(g, 0, s), c1 = lf_gstumpff(g, 1, s);
    for (int i = 0; i < 3; i++) y[i] = ADD(MUL(c0, x[i]), MUL(c1, v[i]));
}

/* ---------------------------------------------------------------- quaternions */
void lf_gquat_mul(lf_graph *g, const int *p, const int *q, int *r)
{
    r[0] = SUB(SUB(SUB(MUL(p[0], q[0]), MUL(p[1], q[1])), MUL(p[2], q[2])), MUL(p[3], q[3]));
    r[1] = SUB(ADD(ADD(MUL(p[0], q[1]), MUL(p[1], q[0])), MUL(p[2], q[3])), MUL(p[3], q[2]));
    r[2] = SUB(ADD(ADD(MUL(p[0], q[2]), MUL(p[2], q[0])), MUL(p[3], q[1])), MUL(p[1], q[3]));
    r[3] = SUB(ADD(ADD(MUL(p[0], q[3]), MUL(p[3], q[0])), MUL(p[1], q[2])), MUL(p[2], q[1]));
}

void lf_gquat_conj(lf_graph *g, const int *q, int *r)
{
    r[0] = q[0];
    for (int i = 1; i < 4; i++) r[i] = NEG(q[i]);
}

void lf_gquat_to_matrix(lf_graph *g, const int *q, int *R)
{
    int w = q[0], x = q[1], y = q[2], z = q[3];
    int n2 = ADD(ADD(ADD(MUL(w, w), MUL(x, x)), MUL(y, y)), MUL(z, z));
    int s = DIV(K(2), n2), one = K(1);
    R[0] = SUB(one, MUL(s, ADD(MUL(y, y), MUL(z, z))));
    R[1] = MUL(s, SUB(MUL(x, y), MUL(w, z)));
    R[2] = MUL(s, ADD(MUL(x, z), MUL(w, y)));
    R[3] = MUL(s, ADD(MUL(x, y), MUL(w, z)));
    R[4] = SUB(one, MUL(s, ADD(MUL(x, x), MUL(z, z))));
    R[5] = MUL(s, SUB(MUL(y, z), MUL(w, x)));
    R[6] = MUL(s, SUB(MUL(x, z), MUL(w, y)));
    R[7] = MUL(s, ADD(MUL(y, z), MUL(w, x)));
    R[8] = SUB(one, MUL(s, ADD(MUL(x, x), MUL(y, y))));
}

void lf_gquat_from_matrix(lf_graph *g, const int *R, int *q)
{
    const int h = K(0.5), one = K(1), z = K(0);
    int tr = lf_gm3_trace(g, R);
    /* k = argmax of (tr, R11, R22, R33), the first of equal ones (Shepperd) */
    int c1 = LT(tr, R[0]), b1 = SEL(c1, R[0], tr);
    int c2 = LT(b1, R[4]), b2 = SEL(c2, R[4], b1);
    int c3 = LT(b2, R[8]);
    int cand[4][4];
    int r0 = lf_g1(g, LF_G_SQRT, ADD(one, tr));
    cand[0][0] = MUL(h, r0);
    cand[0][1] = DIV(MUL(h, SUB(R[7], R[5])), r0);
    cand[0][2] = DIV(MUL(h, SUB(R[2], R[6])), r0);
    cand[0][3] = DIV(MUL(h, SUB(R[3], R[1])), r0);
    int r1 = lf_g1(g, LF_G_SQRT, SUB(SUB(ADD(one, R[0]), R[4]), R[8]));
    cand[1][1] = MUL(h, r1);
    cand[1][0] = DIV(MUL(h, SUB(R[7], R[5])), r1);
    cand[1][2] = DIV(MUL(h, ADD(R[1], R[3])), r1);
    cand[1][3] = DIV(MUL(h, ADD(R[2], R[6])), r1);
    int r2 = lf_g1(g, LF_G_SQRT, SUB(ADD(SUB(one, R[0]), R[4]), R[8]));
    cand[2][2] = MUL(h, r2);
    cand[2][0] = DIV(MUL(h, SUB(R[2], R[6])), r2);
    cand[2][1] = DIV(MUL(h, ADD(R[1], R[3])), r2);
    cand[2][3] = DIV(MUL(h, ADD(R[5], R[7])), r2);
    int r3 = lf_g1(g, LF_G_SQRT, ADD(SUB(SUB(one, R[0]), R[4]), R[8]));
    cand[3][3] = MUL(h, r3);
    cand[3][0] = DIV(MUL(h, SUB(R[3], R[1])), r3);
    cand[3][1] = DIV(MUL(h, ADD(R[2], R[6])), r3);
    cand[3][2] = DIV(MUL(h, ADD(R[5], R[7])), r3);
    int p[4];
    for (int i = 0; i < 4; i++) p[i] = SEL(c3, cand[3][i], SEL(c2, cand[2][i], SEL(c1, cand[1][i], cand[0][i])));
    /* w >= 0; at w = 0 the first nonzero vector component positive; renormalized */
    int first = SEL(lf_g2(g, LF_G_NE, p[1], z), p[1], SEL(lf_g2(g, LF_G_NE, p[2], z), p[2], p[3]));
    int key = SEL(lf_g2(g, LF_G_EQ, p[0], z), first, p[0]);
    int sgn = SEL(LT(key, z), K(-1), one);
    int n = lf_g1(g, LF_G_SQRT, ADD(ADD(ADD(MUL(p[0], p[0]), MUL(p[1], p[1])), MUL(p[2], p[2])), MUL(p[3], p[3])));
    int f = DIV(sgn, n);
    for (int i = 0; i < 4; i++) q[i] = MUL(p[i], f);
}

void lf_gquat_exp(lf_graph *g, const int *v, int *q)
{
    int s = lf_gv3_dot(g, v, v), c1 = lf_gstumpff(g, 1, s);
    q[0] = lf_gstumpff(g, 0, s);
    for (int i = 0; i < 3; i++) q[i + 1] = MUL(c1, v[i]);
}

void lf_gquat_log(lf_graph *g, const int *q, int *v)
{
    /* q = |q| (cos a, sin a n), a = atan2(|u|, w) in [0, pi]: v = u a/|u| = u / (c1(a^2) |q|) for
     * w > 0 (a < pi/2); beyond, u a/|u|, and (pi, 0, 0) for q = (-|q|, 0) (rotation by 2 pi) */
    const int *u = q + 1, z = K(0);
    int uu = lf_gv3_dot(g, u, u), un = lf_g1(g, LF_G_SQRT, uu);
    int a = lf_g2(g, LF_G_ATAN2, un, q[0]);
    int qn = lf_g1(g, LF_G_SQRT, ADD(MUL(q[0], q[0]), uu));
    int f_small = DIV(K(1), MUL(lf_gstumpff(g, 1, MUL(a, a)), qn));
    int f_large = DIV(a, un);
    int pos = LT(z, q[0]), has_u = LT(z, un);
    for (int i = 0; i < 3; i++) {
        int big = SEL(has_u, MUL(u[i], f_large), i == 0 ? SEL(LT(q[0], z), K(3.14159265358979323846), z) : z);
        v[i] = SEL(pos, MUL(u[i], f_small), big);
    }
}
