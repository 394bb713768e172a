/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Regression tests of issue 13 in the C core (core/base, core/lie, core/analysis): no overflow,
 * underflow or NaN on finite input, a correct result or a clear error, and error messages that end
 * cleanly. Each case names the input that went wrong before the fix and what it gave. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <gsl/gsl_fit.h>
#include <math.h>

#include "analysis/analysis.h"
#include "lieflow.h"
#include "testutil.h"

static int is_rotation(const double R[9], double tol)
{
    return lf_m3_isfinite(R) && lf_so3_orth_error(R) <= tol && fabs(lf_m3_det(R) - 1) <= tol;
}

/* ---------------------------------------------------------------- norms, det, inverse */
static void test_norms(void **state)
{
    (void)state;
    double a[3] = {1e200, 0, 0}, b[3] = {3e-200, 4e-200, 0}, c[3] = {5e-324, 0, 0}, d[3] = {NAN, 1, 1};
    double e[3] = {1e308, 1e308, 0};
    /* before: inf, 0, 0 (|v|^2 over- and underflowed) */
    assert_true(lf_v3_norm(a) == 1e200);
    assert_true(fabs(lf_v3_norm(b) - 5e-200) <= 1e-15 * 5e-200);
    assert_true(lf_v3_norm(c) == 5e-324);
    assert_true(isnan(lf_v3_norm(d)));
    assert_true(fabs(lf_v3_norm(e) - 1e308 * sqrt(2.0)) <= 1e-15 * 1e308 * sqrt(2.0));
    double M[9] = {1e200, 0, 0, 0, 1e200, 0, 0, 0, 1e200};
    assert_true(fabs(lf_m3_fnorm(M) - sqrt(3.0) * 1e200) <= 1e-15 * sqrt(3.0) * 1e200);
    /* in the common range the norm is sqrt(v.v) bit for bit (the accuracy tests depend on it) */
    gsl_rng *r = new_rng(3);
    int same = 1;
    for (int k = 0; k < 100000; k++) {
        double v[3];
        for (int i = 0; i < 3; i++) v[i] = gsl_ran_ugaussian(r) * pow(10, 100 * gsl_rng_uniform(r) - 50);
        same &= lf_v3_norm(v) == sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    }
    assert_true(same);
    gsl_rng_free(r);
}

static void test_det(void **state)
{
    (void)state;
    double A[9] = {1e200, 0, 0, 0, 1e200, 0, 0, 0, 1e-300};
    assert_true(fabs(lf_m3_det(A) - 1e100) <= 1e-15 * 1e100);
    /* 1e300 * (1e-160 * 1e-160): the plain product went through a subnormal: 9.99988671826831e-21 */
    double B[9] = {1e300, 0, 0, 0, 1e-160, 0, 0, 0, 1e-160};
    printf("  det diag(1e300, 1e-160, 1e-160) = %.17g\n", lf_m3_det(B));
    assert_true(fabs(lf_m3_det(B) - 1e-20) <= 2e-16 * 1e-20);
    double C[9] = {1e110, 0, 0, 0, 1e110, 0, 0, 0, 1e110}; /* really overflows */
    assert_true(isinf(lf_m3_det(C)));
    double Z[9] = {1, 2, 3, 2, 4, 6, 0, 0, 1e-310};
    assert_true(lf_m3_det(Z) == 0);
}

static void test_inverse(void **state)
{
    (void)state;
    double A[9] = {1e200, 0, 0, 0, 1e200, 0, 0, 0, 1e200}, Ai[9], rc;
    /* before (mat3:inv): NaN entries (det overflowed, inf/inf) */
    assert_int_equal(lf_m3_inverse_scaled(A, Ai, &rc), LF_OK);
    assert_true(Ai[0] == 1e-200 && Ai[4] == 1e-200 && Ai[1] == 0);
    /* before: "singular" (|det| = 1e-330 <= 1e-300) though perfectly conditioned */
    double B[9] = {1e-110, 0, 0, 0, 1e-110, 0, 0, 0, 1e-110};
    assert_int_equal(lf_m3_inverse_scaled(B, Ai, &rc), LF_OK);
    assert_true(fabs(Ai[0] - 1e110) <= 1e-15 * 1e110);
    double S[9] = {1, 2, 3, 2, 4, 6, 1, 0, 1};
    assert_int_equal(lf_m3_inverse_scaled(S, Ai, &rc), LF_EDOMAIN);
    assert_true(rc < 1e-15);
    double T[9] = {1e-310, 0, 0, 0, 1e-310, 0, 0, 0, 1e-310}; /* the inverse overflows */
    assert_int_equal(lf_m3_inverse_scaled(T, Ai, &rc), LF_EDOMAIN);
    assert_true(rc >= 1e-15);
    /* backward stable: ||A Ai - I|| ~ u cond(A), also for nearly singular A (the adjugate
     * inverse, and a condition estimate from it, lose u cond^2 there; found by make fuzz-c) */
    gsl_rng *r = new_rng(5);
    double worst = 0;
    for (int k = 0; k < 20000; k++) {
        double M[9], Q[9], P[9];
        double eps = pow(10, -14 * gsl_rng_uniform(r));
        for (int i = 0; i < 9; i++) M[i] = 1 + (k % 2 ? eps * gsl_ran_ugaussian(r) : gsl_ran_ugaussian(r));
        if (lf_m3_inverse_scaled(M, Q, &rc) != LF_OK) continue;
        lf_m3_mul(M, Q, P);
        P[0] -= 1; P[4] -= 1; P[8] -= 1;
        worst = fmax(worst, lf_m3_fnorm(P) * rc);
    }
    CHECK_LE(worst, 1e-14, "||A inv(A) - I|| * rcond, random and nearly rank-1 A, max");
    double N[9] = {-0x1.dcdcdececececp+221, -0x1.dcdcd3233cdcdp+221, -0x1.dcdcdcdcdcdcdp+221,
                   -0x1.dcdcdcd0004cdp+221, -0x1.dcdcdcdcdcdcdp+221, -0x1.dcdcdcdcdcdcdp+221,
                   -0x1.dcdcdcdcdcdcdp+221, -0x1.dcdcdcdcdcdcdp+221, -0x1.dcdcdcdcdcdcdp+221};
    if (lf_m3_inverse_scaled(N, Ai, &rc) == LF_OK) { /* before: residual 0.23 at "rcond" 2.4e-10 */
        double P[9];
        lf_m3_mul(N, Ai, P);
        P[0] -= 1; P[4] -= 1; P[8] -= 1;
        assert_true(lf_m3_fnorm(P) * rc <= 1e-14);
    }
    gsl_rng_free(r);
}

/* ---------------------------------------------------------------- maps on huge and tiny input */
static void test_maps_extreme(void **state)
{
    (void)state;
    double W[9] = {0, -1e308, 0, 1e308, 0, 0, 0, 0, 0}, w[3];
    lf_so3_vee(W, w); /* before: inf (W21 - W12 overflowed) */
    assert_true(w[2] == 1e308 && w[0] == 0 && w[1] == 0);
    double Ws[9] = {0, 0, 0, 0, 0, -5e-324, 0, 5e-324, 0};
    lf_so3_vee(Ws, w); /* subnormal: (a - b)/2 kept exact */
    assert_true(w[0] == 5e-324);

    /* huge rotation vectors: exact rotations about the right axis (before: errors "too large", or
     * I for cay, whose coefficient 1/(4 + |x|^2) underflowed; dexp was I + 0) */
    double x[3] = {1e200, 1e200, 0}, n[3] = {M_SQRT1_2, M_SQRT1_2, 0}, R[9], Rn[3];
    lf_so3_exp(x, R);
    lf_m3_apply(R, n, Rn);
    assert_true(is_rotation(R, 1e-14) && maxdiff(3, Rn, n) <= 1e-15);
    assert_true(fabs((lf_m3_trace(R) - 1) / 2 - cos(lf_v3_norm(x))) <= 1e-15);
    lf_so3_cay(x, R); /* -> rotation by pi about n */
    assert_true(is_rotation(R, 1e-14) && fabs(lf_m3_trace(R) + 1) <= 1e-15);
    double D[9];
    lf_so3_dexp(x, D); /* ~ n n^T */
    assert_true(fabs(D[0] - 0.5) < 1e-15 && fabs(D[1] - 0.5) < 1e-15 && fabs(D[8]) < 1e-15);
    lf_so3_dcay(x, D); /* 4/(4 + t^2) (I + hat(x)/2): entries 2/t ~ 1.4e-200 off the diagonal */
    assert_true(fabs(D[2] - 2 * n[1] / lf_v3_norm(x)) <= 1e-15 * fabs(D[2]));

    double q[4] = {1e300, 1e300, 0, 0}, q1[4] = {1, 1, 0, 0}, Q[9], Q1[9];
    lf_quat_to_matrix(q, Q); /* before: I (2/|q|^2 underflowed to 0) */
    lf_quat_to_matrix(q1, Q1);
    assert_true(maxdiff(9, Q, Q1) <= 2e-16);
    double qs[4] = {1e-300, 0, 0, 1e-300};
    double q1s[4] = {1, 0, 0, 1};
    lf_quat_to_matrix(qs, Q); /* before: NaN (2/0) */
    lf_quat_to_matrix(q1s, Q1);
    assert_true(maxdiff(9, Q, Q1) <= 2e-16);
    double v[3] = {1e200, 0, 0};
    lf_quat_exp(v, q); /* before: NaN (|v| = inf) */
    assert_true(fabs(q[0] * q[0] + q[1] * q[1] - 1) <= 1e-15 && q[0] == cos(1e200));

    lf_error err;
    double p[3] = {1, 0, 0}, mp[3] = {-1, 0, 0}, big[3] = {0, 1e200, 0}, y[3];
    assert_int_equal(lf_s2_retract(p, mp, y, &err), LF_EDOMAIN); /* before: NaN */
    printf("  s2 retract(e1, -e1): \"%s\"\n", err.msg);
    assert_int_equal(lf_s2_retract(p, big, y, &err), LF_OK); /* before: the zero vector */
    assert_true(y[0] == 1e-200 && y[1] == 1 && y[2] == 0);
    double sub[3] = {-1, 1e-310, 0};
    assert_int_equal(lf_s2_retract(p, sub, y, &err), LF_OK); /* 1/|x+v| overflowed */
    assert_true(y[0] == 0 && y[1] == 1);
}

/* ---------------------------------------------------------------- projection */
static void test_project_extreme(void **state)
{
    (void)state;
    lf_error err;
    double R[9], I[9];
    lf_m3_identity(I);
    /* diag(1, 1, 1e104): the answer is I; before: "not unique" */
    double D[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1e104};
    assert_int_equal(lf_so3_project(D, R, &err), LF_OK);
    assert_true(maxdiff(9, R, I) == 0);
    /* the same in a rotated frame: double precision cannot resolve the answer: an error */
    double x[3] = {0.3, 0.5, 0.7}, Qr[9], T[9], M[9];
    lf_so3_exp(x, Qr);
    lf_m3_mul(Qr, D, T);
    lf_m3_mult(T, Qr, M);
    assert_int_equal(lf_so3_project(M, R, &err), LF_EDOMAIN);
    printf("  rotated diag(1,1,1e104): \"%s\"\n", err.msg);
    /* subnormal input, integer multiples of 2^-1074: before, a non-rotation (||R^T R - I|| = 3.66);
     * now the projection of the integer matrix (projection does not see a power-of-two scale) */
    double K[9] = {0, -1, -2, -1, 4, 2, 1, -1, 0}, Ms[9], RK[9];
    for (int i = 0; i < 9; i++) Ms[i] = K[i] * 0x1p-1074;
    assert_int_equal(lf_so3_project(Ms, R, &err), LF_OK);
    assert_int_equal(lf_so3_project(K, RK, &err), LF_OK);
    assert_true(maxdiff(9, R, RK) == 0);
    /* the SVD that aborted the process (GSL "failed to converge"): now the nearest rotation, a
     * rotation about z by atan2(-1, 2.125) (the 1e104 entry pins R33 = 1; |the rest| ~ 1e-104) */
    double G[9] = {0.125, 3, 2, 2, 2, -2, 1e-15, 1, 1e104};
    assert_int_equal(lf_so3_project(G, R, &err), LF_OK);
    double t = atan2(-1, 2.125), Rz[9] = {cos(t), -sin(t), 0, sin(t), cos(t), 0, 0, 0, 1};
    printf("  project(graded, det < 0) vs the rotation about z: %.2e\n", maxdiff(9, R, Rz));
    assert_true(maxdiff(9, R, Rz) <= 1e-15);
    /* Golub-Reinsch does not converge on this one (GSL_EMAXITER, "SVD decomposition failed to
     * converge"): before, GSL's default handler abort()ed the process (exit 134); now the Jacobi
     * candidate gives the rotation (M ~ [[0,0,0],[0,0,1],[0,1.5,0]], rank 2: unique) */
    double F[9] = {0x0.000000000000ep-1022, 0x0.0000000000002p-1022, 0, 0x0.0000000000007p-1022,
                   0x0.0000000000004p-1022, 1, 0x1.87f4907fc448ap-330, 0x1.8p+0, 0x0.000000001cp-1022};
    double Fexp[9] = {-1, 0, 0, 0, 0, 1, 0, 1, 0};
    assert_int_equal(lf_so3_project(F, R, &err), LF_OK);
    assert_true(maxdiff(9, R, Fexp) <= 1e-15);
    /* hostile random input at all scales: a rotation (nearest among candidates) or an error */
    gsl_rng *r = new_rng(13);
    int ok = 0, refused = 0, refused_full = 0;
    double worst = 0, near = -1;
    for (int k = 0; k < 20000; k++) {
        double A[9], u[3], v[3], w[3], z[3];
        double s = pow(10, (double)(int)(640 * gsl_rng_uniform(r)) - 330);
        int rank = 1 + (int)(3 * gsl_rng_uniform(r));
        for (int i = 0; i < 3; i++) {
            u[i] = gsl_ran_ugaussian(r); v[i] = gsl_ran_ugaussian(r);
            w[i] = gsl_ran_ugaussian(r); z[i] = gsl_ran_ugaussian(r);
        }
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                A[3 * i + j] = s * (u[i] * v[j] + (rank > 1 ? w[i] * z[j] : 0) + (rank > 2 ? gsl_ran_ugaussian(r) : 0));
        int st = lf_so3_project(A, R, &err);
        if (!lf_m3_isfinite(A)) {
            assert_int_equal(st, LF_EINVAL);
            continue;
        }
        if (st != LF_OK && st != LF_EDOMAIN) printf("  unexpected status %d: %s\n", st, err.msg);
        assert_true(st == LF_OK || st == LF_EDOMAIN);
        if (st == LF_EDOMAIN) {
            refused++;
            if (rank > 1 && s > 1e-300) {
                refused_full++;
                if (refused_full < 5) printf("  refused rank %d, scale %g: %s\n", rank, s, err.msg);
            }
            continue;
        }
        ok++;
        worst = fmax(worst, fmax(lf_so3_orth_error(R), fabs(lf_m3_det(R) - 1)));
        /* nearest: tr(R^T A) >= tr(C^T A) for nearby candidates C = R exp(d) */
        double As[9], m = 0;
        for (int i = 0; i < 9; i++) m = fmax(m, fabs(A[i]));
        for (int i = 0; i < 9; i++) As[i] = A[i] / m;
        double H[9];
        lf_m3_tmul(R, As, H);
        for (int c = 0; c < 3; c++) {
            double d[3], E[9], C[9], HC[9];
            rand_dir(r, d);
            lf_v3_scale(d, 1e-4, d);
            lf_so3_exp(d, E);
            lf_m3_mul(R, E, C);
            lf_m3_tmul(C, As, HC);
            near = fmax(near, lf_m3_trace(HC) - lf_m3_trace(H));
        }
    }
    printf("  20000 hostile matrices: %d projected, %d refused (%d of rank >= 2 and scale > 1e-300)\n", ok, refused,
           refused_full);
    assert_true(refused_full == 0);
    CHECK_LE(worst, 1e-12, "project: ||R^T R - I||, |det R - 1| on hostile input, max");
    CHECK_LE(near, 1e-15, "tr(C^T M) - tr(R^T M) for candidates C near R, max (<= 0)");
    gsl_rng_free(r);
}

/* ---------------------------------------------------------------- fits */
static void test_fit_extreme(void **state)
{
    (void)state;
    double x[3] = {1e200, 2e200, 3e200}, y[3] = {1e200, 2e200, 3.5e200}, s, c, se, rs;
    /* before: NaN for all four (the sums of squares overflowed) */
    assert_int_equal(lf_fit_linear(x, y, 3, &s, &c, &se, &rs), LF_OK);
    printf("  fit on 1e200 data: slope %.17g, intercept %.6g, se %.6g, rs %.6g\n", s, c, se, rs);
    assert_true(fabs(s - 1.25) <= 1e-15 && isfinite(c) && isfinite(se) && isfinite(rs));
    double xs[3] = {1e-200, 2e-200, 3e-200}, ys[3] = {1e-200, 2e-200, 3.5e-200};
    assert_int_equal(lf_fit_linear(xs, ys, 3, &s, &c, &se, &rs), LF_OK);
    assert_true(fabs(s - 1.25) <= 1e-15);
    double xo[2] = {0, 1e-300}, yo[2] = {0, 1e300}; /* slope 1e600 has no double */
    assert_int_equal(lf_fit_linear(xo, yo, 2, &s, &c, &se, &rs), LF_EDOMAIN);
    /* bit for bit what gsl_fit_linear gives in the common range */
    gsl_rng *r = new_rng(17);
    int same = 1;
    for (int k = 0; k < 1000; k++) {
        double X[20], Y[20], c0, c1, v00, v01, v11, ss;
        for (int i = 0; i < 20; i++) {
            X[i] = gsl_ran_ugaussian(r) * 1e3;
            Y[i] = gsl_ran_ugaussian(r) * 1e-3;
        }
        gsl_fit_linear(X, 1, Y, 1, 20, &c0, &c1, &v00, &v01, &v11, &ss);
        assert_int_equal(lf_fit_linear(X, Y, 20, &s, &c, &se, &rs), LF_OK);
        same &= s == c1 && c == c0 && se == sqrt(v11);
    }
    assert_true(same);
    gsl_rng_free(r);
}

/* ---------------------------------------------------------------- error messages */
static void test_error_messages_end_cleanly(void **state)
{
    (void)state;
    lf_error e;
    char word[800] = ""; /* longer than lf_error's 512 bytes */
    for (int i = 0; i < 80; i++) strcat(word, "abcdefgh ");
    lf_error_set(&e, LF_EINVAL, "vlv: step failed: %s", word);
    size_t n = strlen(e.msg);
    printf("  a long message ends \"...%s\" (%zu bytes)\n", e.msg + n - 20, n);
    assert_true(n < sizeof e.msg);
    assert_string_equal(e.msg + n - 3, "...");
    assert_true(e.msg[n - 4] == 'h'); /* a whole word ("abcdefgh") before the dots */
    /* a traceback loses whole lines */
    char tb[2000] = "potential raised an error: boom\nstack traceback:";
    for (int i = 0; i < 40; i++) strcat(tb, "\n\t[string \"U\"]:1: in function 'U'");
    lf_error_set(&e, LF_ECALLBACK, "%s", tb);
    n = strlen(e.msg);
    assert_string_equal(e.msg + n - 4, "\n...");
    assert_non_null(strstr(e.msg, "boom\nstack traceback:"));
    /* no word boundary at all: cut at a UTF-8 character boundary */
    char utf[1200] = "";
    for (int i = 0; i < 300; i++) strcat(utf, "\xc3\xa9"); /* e-acute, 2 bytes each */
    lf_error_set(&e, LF_EINVAL, "x%s", utf);
    n = strlen(e.msg);
    assert_string_equal(e.msg + n - 3, "...");
    assert_true(((unsigned char)e.msg[n - 4] & 0xC0) == 0x80 && (unsigned char)e.msg[n - 5] == 0xc3);
    /* short messages are untouched */
    lf_error_set(&e, LF_EINVAL, "short %d", 5);
    assert_string_equal(e.msg, "short 5");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_norms),           cmocka_unit_test(test_det),
        cmocka_unit_test(test_inverse),         cmocka_unit_test(test_maps_extreme),
        cmocka_unit_test(test_project_extreme), cmocka_unit_test(test_fit_extreme),
        cmocka_unit_test(test_error_messages_end_cleanly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
