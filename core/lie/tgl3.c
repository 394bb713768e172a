/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — T*GL(3) as a Lie group (tgl3.h). */
#include "lie/tgl3.h"

#include <math.h>
#include <string.h>

#include "lie/gl3.h"
#include "base/linalg.h"
#include "base/dense.h"
#include "base/matfun.h"

static void comm(const double *X, const double *Y, double *Z)
{
    double P[9], Q[9];
    lf_m3_mul(X, Y, P);
    lf_m3_mul(Y, X, Q);
    lf_m3_sub(P, Q, Z);
}

/* 6x6 block helpers (row-major 36): set / get the 3x3 block (bi, bj) */
static void set_block(double *M, int n, int bi, int bj, const double *B)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) M[(3 * bi + i) * n + 3 * bj + j] = B[3 * i + j];
}
static void get_block(const double *M, int n, int bi, int bj, double *B)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) B[3 * i + j] = M[(3 * bi + i) * n + 3 * bj + j];
}

int lf_tgl3_rep(const double y[18], double R[36])
{
    double Fi[9], FiT[9];
    if (lf_m3_inverse(y, Fi) != LF_OK) return LF_EDOMAIN;
    lf_m3_transpose(Fi, FiT);
    memset(R, 0, 36 * sizeof(double));
    set_block(R, 6, 0, 0, FiT);
    set_block(R, 6, 1, 1, FiT);
    set_block(R, 6, 0, 1, y + 9);
    return LF_OK;
}

/* rep(A, B) = [[-A^T, B], [0, -A^T]] */
static void alg_rep(const double x[18], double X[36])
{
    double mAT[9];
    lf_m3_transpose(x, mAT);
    lf_m3_scale(mAT, -1, mAT);
    memset(X, 0, 36 * sizeof(double));
    set_block(X, 6, 0, 0, mAT);
    set_block(X, 6, 1, 1, mAT);
    set_block(X, 6, 0, 1, x + 9);
}

/* the algebra element of a 6x6 matrix of the form rep(A, B): A = -(top-left)^T, B = top-right */
static void alg_unrep(const double X[36], double x[18])
{
    double T[9];
    get_block(X, 6, 0, 0, T);
    lf_m3_transpose(T, x);
    lf_m3_scale(x, -1, x);
    get_block(X, 6, 0, 1, x + 9);
}

int lf_tgl3_act(const double xi[18], double y[18], int right, lf_error *err)
{
    double X[36], E[36], eA[9], Pe[9], emAT[9], Fi[9], FiT[9], t1[9], t2[9];
    alg_rep(xi, X);
    int rc = lf_expm(6, X, E, err);
    if (rc == LF_OK) rc = lf_gl3_exp(xi, eA, err);
    if (rc != LF_OK) return rc;
    if (lf_m3_inverse(y, Fi) != LF_OK) return lf_error_set(err, LF_EDOMAIN, "tgl3 act: F is singular");
    lf_m3_transpose(Fi, FiT);
    get_block(E, 6, 0, 0, emAT);
    get_block(E, 6, 0, 1, Pe);
    if (!right) { /* (e^A F, e^{-A^T} P + Pe F^-T) */
        lf_m3_mul(emAT, y + 9, t1);
        lf_m3_mul(Pe, FiT, t2);
        lf_m3_mul(eA, y, y);
    } else { /* (F e^A, F^-T Pe + P e^{-A^T}) */
        lf_m3_mul(FiT, Pe, t1);
        lf_m3_mul(y + 9, emAT, t2);
        lf_m3_mul(y, eA, y);
    }
    lf_m3_add(t1, t2, y + 9);
    return LF_OK;
}

int lf_tgl3_velocity(const double y[18], const double xi[18], int right, double ydot[18], lf_error *err)
{
    double Fi[9], FiT[9], t1[9], t2[9];
    if (lf_m3_inverse(y, Fi) != LF_OK) return lf_error_set(err, LF_EDOMAIN, "tgl3 velocity: F is singular");
    lf_m3_transpose(Fi, FiT);
    if (!right) { /* (A F, -A^T P + B F^-T) */
        lf_m3_mul(xi, y, ydot);
        lf_m3_tmul(xi, y + 9, t1);
        lf_m3_mul(xi + 9, FiT, t2);
    } else { /* (F A, F^-T B - P A^T) */
        lf_m3_mul(y, xi, ydot);
        lf_m3_mult(y + 9, xi, t1);
        lf_m3_mul(FiT, xi + 9, t2);
    }
    lf_m3_sub(t2, t1, ydot + 9);
    return LF_OK;
}

static void mm6(const double *A, const double *B, double *C)
{
    double t[36];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            double s = 0;
            for (int k = 0; k < 6; k++) s += A[6 * i + k] * B[6 * k + j];
            t[6 * i + j] = s;
        }
    memcpy(C, t, sizeof t);
}

int lf_tgl3_diff(const double y0[18], const double y1[18], int right, double xi[18], lf_error *err)
{
    /* g = y1 y0^-1 = (G, (P1 - G^-T P0) F0^T), G = F1 F0^-1   (left action)
     * g = y0^-1 y1 = (G, F0^T (P1 - P0 G^-T)), G = F0^-1 F1   (right action)
     * and exp(A, B) = g: A = log G, and Pe = e^{-X} dexp_X(B) = Pg (X = A^T, gl3's dexp) gives
     * B = dexpinv_X(G^T Pg). */
    double F0i[9], G[9], Gi[9], GiT[9], T[9], Pg[9], X[9], V[9];
    if (lf_m3_inverse(y0, F0i) != LF_OK) return lf_error_set(err, LF_EDOMAIN, "tgl3 diff: F is singular");
    if (right) lf_m3_mul(F0i, y1, G);
    else lf_m3_mul(y1, F0i, G);
    if (lf_m3_inverse(G, Gi) != LF_OK) return lf_error_set(err, LF_EDOMAIN, "tgl3 diff: F is singular");
    lf_m3_transpose(Gi, GiT);
    if (right) {
        lf_m3_mul(y0 + 9, GiT, T);
        lf_m3_sub(y1 + 9, T, T);
        lf_m3_tmul(y0, T, Pg);
    } else {
        lf_m3_mul(GiT, y0 + 9, T);
        lf_m3_sub(y1 + 9, T, T);
        lf_m3_mult(T, y0, Pg);
    }
    int rc = lf_gl3_log(G, xi, err);
    if (rc != LF_OK) return rc;
    lf_m3_transpose(xi, X);
    lf_m3_tmul(G, Pg, V);
    return lf_gl3_dexpinv(X, V, xi + 9, err);
}

void lf_tgl3_bracket(const double x[18], const double y[18], double out[18])
{
    double a[9], t1[9], t2[9], A1T[9], A2T[9];
    comm(x, y, a);
    lf_m3_transpose(x, A1T);
    lf_m3_transpose(y, A2T);
    comm(A1T, y + 9, t1);
    comm(A2T, x + 9, t2);
    memcpy(out, a, sizeof a);
    lf_m3_sub(t2, t1, out + 9);
}

/* ad_x^T z = ([A^T, C] + B D^T - D^T B, -[A, D]) */
static void ad_transpose(const double x[18], const double z[18], double out[18])
{
    double AT[9], a[9], t1[9], t2[9], b[9];
    lf_m3_transpose(x, AT);
    comm(AT, z, a);
    lf_m3_mult(x + 9, z + 9, t1);
    lf_m3_tmul(z + 9, x + 9, t2);
    for (int i = 0; i < 9; i++) a[i] += t1[i] - t2[i];
    comm(x, z + 9, b);
    memcpy(out, a, sizeof a);
    for (int i = 0; i < 9; i++) out[9 + i] = -b[i];
}

/* B_k / k!, k = 0..29 (B_1 = -1/2) */
static const double bernoulli[30] = {
    1, -0.5, 0.083333333333333329, 0, -0.0013888888888888889, 0, 3.3068783068783071e-05, 0,
    -8.2671957671957675e-07, 0, 2.08767569878681e-08, 0, -5.2841901386874932e-10, 0, 1.3382536530684679e-11, 0,
    -3.3896802963225827e-13, 0, 8.5860620562778452e-15, 0, -2.1748686985580619e-16, 0, 5.5090028283602295e-18, 0,
    -1.3954464685812522e-19, 0, 3.5347070396294673e-21, 0, -8.9535174270375463e-23, 0};

static double rho_of(const double u[18]) { return 2 * (lf_m3_fnorm(u) + lf_m3_fnorm(u + 9)); }

/* out = sum_k c_k op^k(v), op = ad_u or its transpose, while rho^k bound_k >= 1e-18 */
static void series(const double u[18], const double v[18], int inverse, int transpose, double rho, double out[18])
{
    double term[18], acc[18], tmp[18];
    memcpy(term, v, sizeof term);
    memcpy(acc, v, sizeof acc);
    double c = 1, p = 1;
    for (int k = 1; k < 30; k++) {
        p *= rho;
        double ck, bound;
        if (inverse) {
            ck = bernoulli[k];
            bound = 2 * pow(2 * M_PI, -k); /* |B_k/k!| <= 2 (2 pi)^-k (even k) */
        } else {
            c /= (k + 1);
            ck = bound = c;
        }
        if (p * bound < 1e-18 && k > 1) break;
        if (transpose) ad_transpose(u, term, tmp);
        else lf_tgl3_bracket(u, term, tmp);
        memcpy(term, tmp, sizeof term);
        if (ck != 0)
            for (int i = 0; i < 18; i++) acc[i] += ck * term[i];
    }
    memcpy(out, acc, sizeof acc);
}

/* dexp_u(v) by Van Loan's block exponential in the 6x6 representation */
static int dexp_vanloan(const double u[18], const double v[18], double out[18], lf_error *err)
{
    double X[36], V[36], Z[144], E[144], T[36], Em[36], mX[36], R[36];
    alg_rep(u, X);
    alg_rep(v, V);
    memset(Z, 0, sizeof Z);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            Z[12 * i + j] = X[6 * i + j];
            Z[12 * (6 + i) + 6 + j] = X[6 * i + j];
            Z[12 * i + 6 + j] = V[6 * i + j];
        }
    int rc = lf_expm(12, Z, E, err);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) T[6 * i + j] = E[12 * i + 6 + j];
    for (int k = 0; k < 36; k++) mX[k] = -X[k];
    rc = lf_expm(6, mX, Em, err);
    if (rc != LF_OK) return rc;
    mm6(T, Em, R);
    alg_unrep(R, out);
    return LF_OK;
}

int lf_tgl3_dexp(const double u[18], const double v[18], int inverse, int transpose, double out[18], lf_error *err)
{
    const double rho = rho_of(u);
    if (rho <= 1) {
        series(u, v, inverse, transpose, rho, out);
        return LF_OK;
    }
    if (!inverse && !transpose) return dexp_vanloan(u, v, out, err);
    /* the 18 x 18 matrix of dexp_u, column by column */
    double D[324], e[18], col[18], x[18];
    int piv[18];
    for (int j = 0; j < 18; j++) {
        memset(e, 0, sizeof e);
        e[j] = 1;
        int rc = dexp_vanloan(u, e, col, err);
        if (rc != LF_OK) return rc;
        for (int i = 0; i < 18; i++) D[18 * i + j] = col[i];
    }
    if (!inverse) { /* D^T v */
        for (int j = 0; j < 18; j++) {
            double s = 0;
            for (int i = 0; i < 18; i++) s += D[18 * i + j] * v[i];
            x[j] = s;
        }
        memcpy(out, x, sizeof x);
        return LF_OK;
    }
    if (transpose) { /* solve D^T x = v */
        double Dt[324];
        for (int i = 0; i < 18; i++)
            for (int j = 0; j < 18; j++) Dt[18 * i + j] = D[18 * j + i];
        memcpy(D, Dt, sizeof D);
    }
    if (lf_lu_factor(18, D, piv) != LF_OK)
        return lf_error_set(err, LF_EDOMAIN, "tgl3 dexpinv: dexp is singular at this algebra element");
    memcpy(x, v, sizeof x);
    lf_lu_solve(18, D, piv, x);
    memcpy(out, x, sizeof x);
    return LF_OK;
}
