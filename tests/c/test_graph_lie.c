/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The maps of core/graph/graph_lie.h on graphs of inputs against their numeric counterparts in C
 * (linalg.h, so3.h, s2.h, quat.h) at random points, every map of the header: vectors (dot, cross,
 * norm, normalized), 3x3 matrices (sub, mul, apply, tapply, transpose, det, trace, fnorm, inv,
 * identity, trhat), SO(3) (hat, vee, exp, log, cay, cayinv, dexp, dexpinv, dcay, dcayinv, dist,
 * angle, orth_error), S^2 (dist, midpoint, retract, retract_inv, tangent, exp) and quaternions
 * (mul, conj, to_matrix, from_matrix, exp, log); where a C map reports a domain error the graph's
 * value is not finite; the derivative of so3.log against central differences. The errors are
 * measured against the C value (lf_graph_value reads a node's eager value): absolute for values of
 * size up to 1, relative beyond; maps that cancel (dot, cross, det, mul, orth_error) are measured
 * against the size of their operands. Every test prints the worst error, then asserts its bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

#include "graph/graph.h"
#include "graph/graph_lie.h"

/* max_i |value(ids[i]) - ref[i]| / max(1, |ref[i]|) */
static double value_err(int n, const lf_graph *g, const int *ids, const double *ref)
{
    double m = 0;
    for (int i = 0; i < n; i++) {
        const double d = fabs(lf_graph_value(g, ids[i]) - ref[i]) / fmax(1, fabs(ref[i]));
        if (isnan(d)) return INFINITY;
        m = fmax(m, d);
    }
    return m;
}

/* every value finite (0) or not (1) */
static int all_nonfinite(int n, const lf_graph *g, const int *ids)
{
    for (int i = 0; i < n; i++)
        if (isfinite(lf_graph_value(g, ids[i]))) return 0;
    return 1;
}

static void gauss(gsl_rng *r, int n, double scale, double *v)
{
    for (int i = 0; i < n; i++) v[i] = scale * gsl_ran_ugaussian(r);
}

/* ---------------------------------------------------------------- vectors */
static void test_vectors(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(21);
    double w_dot = 0, w_cross = 0, w_norm = 0, w_unit = 0;
    for (int it = 0; it < 500; it++) {
        double a[3], b[3], c[3], u[3];
        const double sa = pow(10, 6 * gsl_rng_uniform(r) - 3), sb = pow(10, 6 * gsl_rng_uniform(r) - 3);
        gauss(r, 3, sa, a);
        gauss(r, 3, sb, b);
        lf_graph *g = lf_graph_new(0, NULL);
        int ai[3], bi[3], out[3];
        graph_inputs(g, 3, a, ai);
        graph_inputs(g, 3, b, bi);
        const double ab = lf_v3_norm(a) * lf_v3_norm(b);
        w_dot = fmax(w_dot, fabs(lf_graph_value(g, lf_gv3_dot(g, ai, bi)) - lf_v3_dot(a, b)) / ab);
        lf_v3_cross(a, b, c);
        lf_gv3_cross(g, ai, bi, out);
        for (int i = 0; i < 3; i++) w_cross = fmax(w_cross, fabs(lf_graph_value(g, out[i]) - c[i]) / ab);
        w_norm = fmax(w_norm, fabs(lf_graph_value(g, lf_gv3_norm(g, ai)) - lf_v3_norm(a)) / lf_v3_norm(a));
        for (int i = 0; i < 3; i++) u[i] = a[i] / lf_v3_norm(a);
        lf_gv3_normalized(g, ai, out);
        w_unit = fmax(w_unit, value_err(3, g, out, u));
        assert_int_equal(lf_graph_status(g), LF_OK);
        lf_graph_free(g);
    }
    gsl_rng_free(r);
    CHECK_LE(w_dot, 1e-15, "v3.dot vs lf_v3_dot, / |a||b| (|a|, |b| 1e-3 .. 1e3)");
    CHECK_LE(w_cross, 1e-15, "v3.cross vs lf_v3_cross, / |a||b|");
    CHECK_LE(w_norm, 1e-15, "v3.norm vs lf_v3_norm, relative");
    CHECK_LE(w_unit, 1e-15, "v3.normalized vs a / lf_v3_norm(a)");
}

/* ---------------------------------------------------------------- matrices */
static void test_matrices(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(22);
    double w_sub = 0, w_mul = 0, w_apply = 0, w_det = 0, w_tr = 0, w_fnorm = 0, w_inv = 0, w_trhat = 0;
    for (int it = 0; it < 500; it++) {
        double A[9], B[9], x[3], y[3], M[9], v[3], T[9];
        gauss(r, 9, 1, A);
        gauss(r, 9, 1, B);
        gauss(r, 3, 1, x);
        gauss(r, 3, 1, y);
        for (int i = 0; i < 9; i += 4) A[i] += 3; /* inverse: condition below ~10 */
        lf_graph *g = lf_graph_new(0, NULL);
        int Ai[9], Bi[9], xi[3], yi[3], out[9], At[9];
        graph_inputs(g, 9, A, Ai);
        graph_inputs(g, 9, B, Bi);
        graph_inputs(g, 3, x, xi);
        graph_inputs(g, 3, y, yi);
        const double nA = lf_m3_fnorm(A), nB = lf_m3_fnorm(B), nx = lf_v3_norm(x);
        lf_m3_sub(A, B, M);
        lf_gm3_sub(g, Ai, Bi, out);
        w_sub = fmax(w_sub, value_err(9, g, out, M));
        lf_m3_mul(A, B, M);
        lf_gm3_mul(g, Ai, Bi, out);
        w_mul = fmax(w_mul, value_err(9, g, out, M) / (nA * nB));
        lf_m3_apply(A, x, v);
        lf_gm3_apply(g, Ai, xi, out);
        w_apply = fmax(w_apply, value_err(3, g, out, v) / (nA * nx));
        lf_m3_tapply(A, x, v);
        lf_gm3_tapply(g, Ai, xi, out);
        w_apply = fmax(w_apply, value_err(3, g, out, v) / (nA * nx));
        lf_gm3_transpose(Ai, At); /* a permutation of the nodes, no new node */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) assert_int_equal(At[3 * j + i], Ai[3 * i + j]);
        lf_m3_transpose(A, T);
        assert_true(value_err(9, g, At, T) == 0);
        w_det = fmax(w_det, fabs(lf_graph_value(g, lf_gm3_det(g, Ai)) - lf_m3_det(A)) / (nA * nA * nA));
        w_tr = fmax(w_tr, fabs(lf_graph_value(g, lf_gm3_trace(g, Ai)) - lf_m3_trace(A)) / nA);
        w_fnorm = fmax(w_fnorm, fabs(lf_graph_value(g, lf_gm3_fnorm(g, Ai)) - nA) / nA);
        assert_int_equal(lf_m3_inverse(A, M), LF_OK);
        lf_gm3_inv(g, Ai, out);
        w_inv = fmax(w_inv, value_err(9, g, out, M) / lf_m3_fnorm(M));
        /* trhat: y . trhat(A) = tr(A hat y) */
        double Y[9];
        lf_so3_hat(y, Y);
        lf_m3_mul(A, Y, M);
        lf_gm3_trhat(g, Ai, out);
        w_trhat =
            fmax(w_trhat, fabs(lf_graph_value(g, lf_gv3_dot(g, yi, out)) - lf_m3_trace(M)) / (nA * lf_v3_norm(y)));
        assert_int_equal(lf_graph_status(g), LF_OK);
        lf_graph_free(g);
    }
    gsl_rng_free(r);
    CHECK_LE(w_sub, 0, "m3.sub vs lf_m3_sub");
    CHECK_LE(w_mul, 1e-15, "m3.mul vs lf_m3_mul, / |A||B|");
    CHECK_LE(w_apply, 1e-15, "m3.apply, m3.tapply vs lf_m3_apply, lf_m3_tapply, / |A||x|");
    CHECK_LE(w_det, 1e-15, "m3.det vs lf_m3_det, / |A|^3");
    CHECK_LE(w_tr, 1e-15, "m3.trace vs lf_m3_trace, / |A|");
    CHECK_LE(w_fnorm, 1e-15, "m3.fnorm vs lf_m3_fnorm, relative");
    CHECK_LE(w_inv, 1e-14, "m3.inv vs lf_m3_inverse, / |A^-1| (condition < ~10)");
    CHECK_LE(w_trhat, 1e-15, "y . m3.trhat(A) vs tr(A hat y), / |A||y|");
    /* the identity: constant nodes; a singular matrix: no finite inverse (lf_m3_inverse: LF_EDOMAIN) */
    lf_graph *g = lf_graph_new(0, NULL);
    int I[9], Si[9], out[9];
    double Id[9], v, S[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, Sinv[9];
    lf_gm3_identity(g, I);
    lf_m3_identity(Id);
    for (int i = 0; i < 9; i++) assert_true(lf_graph_is_const(g, I[i], &v) && v == Id[i]);
    graph_inputs(g, 9, S, Si);
    lf_gm3_inv(g, Si, out);
    printf("  m3.inv of a singular matrix: entry (1,1) = %g; lf_m3_inverse: %d\n", lf_graph_value(g, out[0]),
           lf_m3_inverse(S, Sinv));
    assert_true(all_nonfinite(9, g, out));
    assert_int_equal(lf_m3_inverse(S, Sinv), LF_EDOMAIN);
    lf_graph_free(g);
}

/* ---------------------------------------------------------------- SO(3): the maps test_lie_maps does not cover */
static void test_so3_more(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(23);
    double w_hat = 0, w_vee = 0, w_cayinv = 0, w_dcayinv = 0, w_orth = 0;
    for (int it = 0; it < 500; it++) {
        double w[3], W[9], R[9], x[3], D[9], A[9], N[9];
        gauss(r, 3, 2, w);
        gauss(r, 9, 1, W);
        rand_rot(r, 3 * gsl_rng_uniform(r), R); /* angle < 3: 1 + tr R > 0.02 */
        lf_graph *g = lf_graph_new(0, NULL);
        int wi[3], Wi[9], Ri[9], Ai[9], out[9];
        graph_inputs(g, 3, w, wi);
        graph_inputs(g, 9, W, Wi);
        graph_inputs(g, 9, R, Ri);
        lf_so3_hat(w, D);
        lf_gso3_hat(g, wi, out);
        w_hat = fmax(w_hat, value_err(9, g, out, D));
        lf_so3_vee(W, x);
        lf_gso3_vee(g, Wi, out);
        w_vee = fmax(w_vee, value_err(3, g, out, x));
        assert_int_equal(lf_so3_cayinv(R, x, NULL), LF_OK);
        lf_gso3_cayinv(g, Ri, out);
        w_cayinv = fmax(w_cayinv, value_err(3, g, out, x));
        lf_so3_dcayinv(w, D);
        lf_gso3_dcayinv(g, wi, out);
        w_dcayinv = fmax(w_dcayinv, value_err(9, g, out, D));
        /* orth_error of R + e N, e = 1e-8 .. 1 (A^T A - I cancels: absolute error) */
        gauss(r, 9, pow(10, -8 * gsl_rng_uniform(r)), N);
        lf_m3_add(R, N, A);
        graph_inputs(g, 9, A, Ai);
        w_orth = fmax(w_orth, fabs(lf_graph_value(g, lf_gso3_orth_error(g, Ai)) - lf_so3_orth_error(A)));
        assert_int_equal(lf_graph_status(g), LF_OK);
        lf_graph_free(g);
    }
    gsl_rng_free(r);
    CHECK_LE(w_hat, 0, "so3.hat vs lf_so3_hat");
    CHECK_LE(w_vee, 1e-15, "so3.vee vs lf_so3_vee (any 3x3 matrix)");
    CHECK_LE(w_cayinv, 1e-15, "so3.cayinv vs lf_so3_cayinv (angles < 3, |x| < 29)");
    CHECK_LE(w_dcayinv, 1e-15, "so3.dcayinv vs lf_so3_dcayinv (|x| ~ 2)");
    CHECK_LE(w_orth, 2e-15, "so3.orth_error vs lf_so3_orth_error, absolute (R + 1e-8 .. 1 noise)");
    /* a rotation by pi: lf_so3_cayinv refuses it, the graph's value is not finite */
    double P[9] = {1, 0, 0, 0, -1, 0, 0, 0, -1}, x[3];
    lf_error e;
    assert_int_equal(lf_so3_cayinv(P, x, &e), LF_EDOMAIN);
    lf_graph *g = lf_graph_new(0, NULL);
    int Pi[9], out[3];
    graph_inputs(g, 9, P, Pi);
    lf_gso3_cayinv(g, Pi, out);
    printf("  so3.cayinv at a rotation by pi: (%g, %g, %g); C: %s\n", lf_graph_value(g, out[0]),
           lf_graph_value(g, out[1]), lf_graph_value(g, out[2]), e.msg);
    assert_true(all_nonfinite(3, g, out));
    lf_graph_free(g);
}

/* ---------------------------------------------------------------- S^2 and quaternions */
static void test_s2_quat_more(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(24);
    double w_ret = 0, w_inv = 0, w_mul = 0, w_conj = 0;
    for (int it = 0; it < 500; it++) {
        double x[3], v[3], y[3], t[3], p[4], q[4], pq[4];
        rand_dir(r, x);
        gauss(r, 3, pow(10, 3 * gsl_rng_uniform(r) - 2), v); /* 0.01 .. 10, not tangent */
        /* y at an angle below 80 degrees from x: in the chart of retract_inv */
        rand_dir(r, t);
        lf_s2_tangent(x, t, t);
        lf_v3_scale(t, 1.4 * gsl_rng_uniform(r) / lf_v3_norm(t), t);
        lf_s2_exp(x, t, y);
        gauss(r, 4, 1, p);
        gauss(r, 4, 1, q);
        lf_graph *g = lf_graph_new(0, NULL);
        int xi[3], vi[3], yi[3], pi_[4], qi[4], out[4];
        graph_inputs(g, 3, x, xi);
        graph_inputs(g, 3, v, vi);
        graph_inputs(g, 3, y, yi);
        graph_inputs(g, 4, p, pi_);
        graph_inputs(g, 4, q, qi);
        double ref[4];
        assert_int_equal(lf_s2_retract(x, v, ref, NULL), LF_OK);
        lf_gs2_retract(g, xi, vi, out);
        w_ret = fmax(w_ret, value_err(3, g, out, ref));
        assert_int_equal(lf_s2_retract_inv(x, y, ref, NULL), LF_OK);
        lf_gs2_retract_inv(g, xi, yi, out);
        w_inv = fmax(w_inv, value_err(3, g, out, ref));
        lf_quat_mul(p, q, pq);
        lf_gquat_mul(g, pi_, qi, out);
        w_mul = fmax(w_mul, value_err(4, g, out, pq));
        lf_quat_conj(p, ref);
        lf_gquat_conj(g, pi_, out);
        w_conj = fmax(w_conj, value_err(4, g, out, ref));
        assert_int_equal(lf_graph_status(g), LF_OK);
        lf_graph_free(g);
    }
    gsl_rng_free(r);
    CHECK_LE(w_ret, 1e-15, "s2.retract vs lf_s2_retract (|v| 0.01 .. 10)");
    CHECK_LE(w_inv, 1e-15, "s2.retract_inv vs lf_s2_retract_inv (angles < 80 degrees)");
    CHECK_LE(w_mul, 1e-15, "quat.mul vs lf_quat_mul (|p|, |q| ~ 2)");
    CHECK_LE(w_conj, 0, "quat.conj vs lf_quat_conj");
    /* outside the chart, antipodal points: C errors, non-finite values on the graph */
    const double e1[3] = {1, 0, 0}, e2[3] = {0, 1, 0}, m1[3] = {-1, 0, 0}, far[3] = {-0.6, 0.8, 0};
    const double *ys[3] = {e2, far, m1};
    double out3[3];
    lf_error e;
    lf_graph *g = lf_graph_new(0, NULL);
    int xi[3], yi[3], out[3];
    graph_inputs(g, 3, e1, xi);
    for (int k = 0; k < 3; k++) {
        graph_inputs(g, 3, ys[k], yi);
        assert_int_equal(lf_s2_retract_inv(e1, ys[k], out3, &e), LF_EDOMAIN);
        lf_gs2_retract_inv(g, xi, yi, out);
        assert_true(all_nonfinite(3, g, out));
    }
    printf("  s2.retract_inv outside the chart: %g; C: %s\n", lf_graph_value(g, out[0]), e.msg);
    assert_int_not_equal(lf_s2_midpoint(e1, m1, out3, &e), LF_OK);
    lf_gs2_midpoint(g, xi, yi, out); /* yi: -e1 */
    printf("  s2.midpoint of antipodal points: %g; C: %s\n", lf_graph_value(g, out[0]), e.msg);
    assert_true(all_nonfinite(3, g, out));
    lf_graph_free(g);
}

/* ---------------------------------------------------------------- exp, log, cay, differentials, S^2, quaternions */
static void test_lie_maps(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(11);
    double w_exp = 0, w_log = 0, w_cay = 0, w_dexp = 0, w_dexpinv = 0, w_dcay = 0, w_dist = 0, w_quat = 0, w_s2 = 0;
    const double scales[] = {1e-9, 1e-4, 0.1, 1, 2, 3, 3.14159};
    for (int it = 0; it < 700; it++) {
        double t = scales[it % 7], x[3], R[9], M[9], v[3];
        rand_dir(r, x);
        lf_v3_scale(x, t, x);
        lf_graph *g = lf_graph_new(0, NULL);
        int xi[3], Ri[9], out[9];
        graph_inputs(g, 3, x, xi);
        lf_so3_exp(x, M);
        lf_gso3_exp(g, xi, out);
        w_exp = fmax(w_exp, value_err(9, g, out, M));
        lf_so3_cay(x, M);
        lf_gso3_cay(g, xi, out);
        w_cay = fmax(w_cay, value_err(9, g, out, M));
        lf_so3_dexp(x, M);
        lf_gso3_dexp(g, xi, out);
        w_dexp = fmax(w_dexp, value_err(9, g, out, M));
        if (t < 3) {
            lf_so3_dexpinv(x, M);
            lf_gso3_dexpinv(g, xi, out);
            w_dexpinv = fmax(w_dexpinv, value_err(9, g, out, M));
        }
        lf_so3_dcay(x, M);
        lf_gso3_dcay(g, xi, out);
        w_dcay = fmax(w_dcay, value_err(9, g, out, M));
        rand_rot(r, t, R);
        graph_inputs(g, 9, R, Ri);
        lf_so3_log(R, v);
        lf_gso3_log(g, Ri, out);
        w_log = fmax(w_log, value_err(3, g, out, v));
        double R2[9];
        rand_rot(r, 1, R2);
        int R2i[9];
        graph_inputs(g, 9, R2, R2i);
        w_dist = fmax(w_dist, fabs(lf_graph_value(g, lf_gso3_dist(g, Ri, R2i)) - lf_so3_dist(R, R2)));
        w_dist = fmax(w_dist, fabs(lf_graph_value(g, lf_gso3_angle(g, Ri, R2i)) - lf_so3_angle(R, R2)));
        double q[4], qq[4], Rq[9];
        lf_quat_from_matrix(R, q);
        lf_gquat_from_matrix(g, Ri, out);
        w_quat = fmax(w_quat, value_err(4, g, out, q));
        int qi[4];
        graph_inputs(g, 4, q, qi);
        lf_quat_to_matrix(q, Rq);
        lf_gquat_to_matrix(g, qi, out);
        w_quat = fmax(w_quat, value_err(9, g, out, Rq));
        lf_quat_log(q, v);
        lf_gquat_log(g, qi, out);
        w_quat = fmax(w_quat, value_err(3, g, out, v));
        lf_quat_exp(x, qq);
        lf_gquat_exp(g, xi, out);
        w_quat = fmax(w_quat, value_err(4, g, out, qq));
        double p[3], s[3], y[3];
        rand_dir(r, p);
        rand_dir(r, s);
        int pi_[3], si[3];
        graph_inputs(g, 3, p, pi_);
        graph_inputs(g, 3, s, si);
        w_s2 = fmax(w_s2, fabs(lf_graph_value(g, lf_gs2_dist(g, pi_, si)) - lf_s2_dist(p, s)));
        lf_s2_exp(p, x, y);
        lf_gs2_exp(g, pi_, xi, out);
        w_s2 = fmax(w_s2, value_err(3, g, out, y));
        lf_s2_tangent(p, s, y);
        lf_gs2_tangent(g, pi_, si, out);
        w_s2 = fmax(w_s2, value_err(3, g, out, y));
        if (lf_s2_midpoint(p, s, y, NULL) == LF_OK) {
            lf_gs2_midpoint(g, pi_, si, out);
            w_s2 = fmax(w_s2, value_err(3, g, out, y));
        }
        assert_int_equal(lf_graph_status(g), LF_OK);
        lf_graph_free(g);
    }
    gsl_rng_free(r);
    CHECK_LE(w_exp, 1e-15, "so3.exp on graphs vs lf_so3_exp");
    CHECK_LE(w_log, 2e-15, "so3.log on graphs vs lf_so3_log (angles 1e-9 .. pi)");
    CHECK_LE(w_cay, 4e-16, "so3.cay");
    CHECK_LE(w_dexp, 4e-16, "so3.dexp");
    CHECK_LE(w_dexpinv, 2e-15, "so3.dexpinv (|x| < 3)");
    CHECK_LE(w_dcay, 4e-16, "so3.dcay");
    CHECK_LE(w_dist, 1e-15, "so3.dist, so3.angle");
    CHECK_LE(w_quat, 1e-15, "quat.from_matrix, to_matrix, log, exp");
    CHECK_LE(w_s2, 1e-15, "s2.dist, exp, tangent, midpoint");
}

/* d/dx of so3.log along random directions vs central differences of lf_so3_log, including the
 * identity (where the graph goes through atan2(|w|, c) and the guarded products) */
static void test_log_derivative(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(5);
    double worst = 0;
    const double angles[] = {0, 1e-6, 0.3, 1.2, 2.0, 3.0};
    for (int it = 0; it < 60; it++) {
        double R[9], y[3];
        rand_rot(r, angles[it % 6], R);
        rand_dir(r, y);
        lf_graph *g = lf_graph_new(0, NULL);
        int Ri[9], x[3], T[9];
        graph_inputs(g, 9, R, Ri);
        lf_gso3_log(g, Ri, x);
        /* tangent R hat(y) */
        double Y[9], RY[9];
        lf_so3_hat(y, Y);
        lf_m3_mul(R, Y, RY);
        for (int i = 0; i < 9; i++) T[i] = lf_graph_const(g, RY[i]);
        int d[3];
        lf_graph_jvp(g, 9, Ri, T, 3, x, d);
        const double h = 1e-6;
        double ep[3], em[3], Rp[9], Rm[9], xp[3], xm[3];
        lf_v3_scale(y, h, ep);
        lf_v3_scale(y, -h, em);
        lf_m3_copy(R, Rp);
        lf_so3_rmul_exp(Rp, ep);
        lf_m3_copy(R, Rm);
        lf_so3_rmul_exp(Rm, em);
        lf_so3_log(Rp, xp);
        lf_so3_log(Rm, xm);
        for (int i = 0; i < 3; i++) {
            double fd = (xp[i] - xm[i]) / (2 * h);
            assert_false(isnan(lf_graph_value(g, d[i])));
            worst = fmax(worst, fabs(fd - lf_graph_value(g, d[i])));
        }
        lf_graph_free(g);
    }
    gsl_rng_free(r);
    CHECK_LE(worst, 1e-8, "d so3.log along R hat(y) vs central differences (angles 0 .. 3)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),  cmocka_unit_test(test_matrices),     cmocka_unit_test(test_lie_maps),
        cmocka_unit_test(test_so3_more), cmocka_unit_test(test_s2_quat_more), cmocka_unit_test(test_log_derivative),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
