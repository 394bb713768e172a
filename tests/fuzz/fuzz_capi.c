/* SPDX-License-Identifier: GPL-3.0-or-later */
/* libFuzzer target over lieflow's C API (make fuzz-c; issue 13, "make it stay fixed").
 *
 * The input is a little program: each operation takes a selector byte and then its numbers, each
 * number a byte choosing a hostile constant (NaN, +-inf, 0, -0, subnormals, DBL_MAX, 1e+-154,
 * 1e+-300, pi, ...) or 8 raw bytes (any double). Operations cover the maps (so3, s2, quat), the
 * 3x3 helpers (norms, det, inverse, logarithmic norm), the projection, the fits, the error messages, rigid systems
 * with every registered method (single steppers and lanes), forcings and the Langevin thermostat (op_forced),
 * the site-site potentials of rigid molecules (op_sites: md/sites.h, model/sites_potential.h),
 * the exact free body, and expression
 * graphs (random programs, malformed ones refused, derivatives, the tape against the eager values).
 *
 * Besides ASan/UBSan (the build flags), every operation checks the contract of its header:
 * finite input gives finite output or an error status; rotations are rotations; an error status
 * is one of the LF_E* codes with a NUL-terminated message; a failed step leaves the state as it
 * was. A violation calls abort() with a message, which libFuzzer reports with the input. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "graph/graph.h"
#include "graph/graph_prog_internal.h"
#include "lieflow.h"

typedef struct {
    const uint8_t *p;
    size_t n;
} input;

static int more(const input *in) { return in->n > 0; }

static uint8_t byte(input *in)
{
    if (!in->n) return 0;
    in->n--;
    return *in->p++;
}

static double number(input *in)
{
    static const double special[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.141592653589793, 1e-9, 1e-3, 10, 1e4,
                                     5e-324, -5e-324, 2.2250738585072014e-308, 1e-310, 1e-160, 1e-154,
                                     1e154, 1e160, 1e200, 1e300, DBL_MAX, -DBL_MAX, 1e-300, 0x1p500,
                                     0x1p501, 0.7227, 1.0000000001, 0.9999999999};
    uint8_t b = byte(in);
    if (b < sizeof special / sizeof special[0]) return special[b];
    if (b == 250) return NAN;
    if (b == 251) return INFINITY;
    if (b == 252) return -INFINITY;
    if (b >= 200 && in->n >= 8) {
        double x;
        memcpy(&x, in->p, 8);
        in->p += 8;
        in->n -= 8;
        return x;
    }
    return ((int)b - 128) / 16.0;
}

static void numbers(input *in, double *x, int n)
{
    for (int i = 0; i < n; i++) x[i] = number(in);
}

static int all_finite(const double *x, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

#define REQUIRE(cond, ...)                                                   \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "fuzz_capi: contract violated: %s (", #cond);  \
            fprintf(stderr, __VA_ARGS__);                                    \
            fprintf(stderr, ")\n");                                          \
            abort();                                                         \
        }                                                                    \
    } while (0)

static void check_error(int st, const lf_error *e)
{
    REQUIRE(st >= LF_OK && st <= LF_EINTR, "status %d", st);
    if (st != LF_OK) REQUIRE(memchr(e->msg, '\0', sizeof e->msg) != NULL, "message not terminated");
}

static int is_rotation(const double *R, double tol)
{
    return lf_m3_isfinite(R) && lf_so3_orth_error(R) <= tol && fabs(lf_m3_det(R) - 1) <= tol;
}

/* a rotation from fuzzed numbers (exp of a vector; I when the vector is not finite) */
static void rotation(input *in, double R[9])
{
    double x[3];
    numbers(in, x, 3);
    if (!all_finite(x, 3) || !isfinite(lf_v3_norm(x))) lf_m3_identity(R);
    else lf_so3_exp(x, R);
}

static void op_so3(input *in)
{
    double x[3], M[9], R[9], y[3];
    lf_error e;
    numbers(in, x, 3);
    /* finite, and |x| too (the angle of x = (DBL_MAX, DBL_MAX, 0) is not a double: NaN, which the
     * binding reports as "too large") */
    int fin = all_finite(x, 3) && isfinite(lf_v3_norm(x));
    switch (byte(in) % 8) {
    case 0:
        lf_so3_exp(x, R);
        if (fin) {
            REQUIRE(is_rotation(R, 1e-12), "exp(%g, %g, %g)", x[0], x[1], x[2]);
            lf_so3_log(R, y);
            double t = lf_v3_norm(y);
            REQUIRE(t <= 3.1415926535897936, "|log| = %g", t);
            lf_so3_exp(y, M);
            REQUIRE(lf_so3_dist(M, R) <= 1e-12, "exp(log(R)) - R = %g", lf_so3_dist(M, R));
        }
        break;
    case 1:
        lf_so3_cay(x, R);
        if (fin) REQUIRE(is_rotation(R, 1e-12), "cay(%g, %g, %g)", x[0], x[1], x[2]);
        if (fin) check_error(lf_so3_cayinv(R, y, &e), &e);
        break;
    case 2: lf_so3_dexp(x, M); if (fin) REQUIRE(lf_m3_isfinite(M), "dexp(%g, %g, %g)", x[0], x[1], x[2]); break;
    case 3: lf_so3_dcay(x, M); if (fin) REQUIRE(lf_m3_isfinite(M), "dcay(%g, %g, %g)", x[0], x[1], x[2]); break;
    case 4: lf_so3_dexpinv(x, M); break; /* singular at |x| = 2 pi k: may be huge, not checked */
    case 5:
        lf_so3_hat(x, M);
        lf_so3_vee(M, y);
        if (fin) REQUIRE(y[0] == x[0] && y[1] == x[1] && y[2] == x[2], "vee(hat(x)) != x");
        break;
    case 6: {
        double A[9];
        rotation(in, A);
        rotation(in, R);
        double d = lf_so3_dist(A, R), a = lf_so3_angle(A, R);
        REQUIRE(isfinite(d) && d <= 2 * sqrt(2.0) + 1e-12 && a >= 0 && a <= 3.1415926535897936, "dist %g angle %g", d, a);
        break;
    }
    default: {
        double Q[9];
        numbers(in, Q, 9);
        int st = lf_so3_project(Q, R, &e);
        check_error(st, &e);
        if (st == LF_OK) REQUIRE(is_rotation(R, 1e-12), "project gave ||R^T R - I|| = %g", lf_so3_orth_error(R));
        else REQUIRE(st == LF_EINVAL || st == LF_EDOMAIN || st == LF_ENOCONV || st == LF_ENOMEM, "project status %d", st);
        if (!all_finite(Q, 9)) REQUIRE(st == LF_EINVAL, "non-finite input accepted");
        break;
    }
    }
}

static void op_s2_quat(input *in)
{
    double p[3], v[3], y[3], q[4], r[4], R[9];
    lf_error e;
    numbers(in, v, 3);
    double n0[3];
    numbers(in, n0, 3);
    /* a unit vector (scaled first: n0 / |n0| is not unit when |n0| is subnormal) */
    double mx = fmax(fmax(fabs(n0[0]), fabs(n0[1])), fabs(n0[2]));
    if (!(mx > 0) || !isfinite(mx) || !all_finite(n0, 3)) lf_v3_set(p, 1, 0, 0);
    else {
        for (int i = 0; i < 3; i++) n0[i] /= mx;
        double nn = lf_v3_norm(n0);
        for (int i = 0; i < 3; i++) p[i] = n0[i] / nn;
    }
    int fin = all_finite(v, 3) && isfinite(lf_v3_norm(v)); /* (an angle beyond DBL_MAX: NaN) */
    switch (byte(in) % 6) {
    case 0: {
        int st = lf_s2_retract(p, v, y, &e);
        check_error(st, &e);
        if (st == LF_OK) REQUIRE(lf_v3_isfinite(y) && fabs(lf_v3_norm(y) - 1) <= 1e-12, "retract |y| = %g", lf_v3_norm(y));
        else REQUIRE(!fin || st == LF_EDOMAIN, "retract status %d", st);
        break;
    }
    case 1: { /* exp needs a tangent vector */
        double vt[3];
        lf_s2_tangent(p, v, vt);
        lf_s2_exp(p, vt, y);
        /* (vt is tangent to working precision unless v was normal to the sphere to rounding) */
        if (fin && lf_v3_isfinite(vt) && fabs(lf_v3_dot(p, vt)) <= 1e-12 * lf_v3_norm(vt))
            REQUIRE(lf_v3_isfinite(y) && fabs(lf_v3_norm(y) - 1) <= 1e-12, "s2 exp |y| = %g, p = (%g, %g, %g), |vt| = %g, p.vt = %g", lf_v3_norm(y), p[0], p[1], p[2], lf_v3_norm(vt), lf_v3_dot(p, vt));
        break;
    }
    case 2: {
        double d = lf_s2_dist(p, p);
        REQUIRE(d == 0 || d < 1e-15, "dist(p, p) = %g", d);
        break;
    }
    case 3:
        lf_quat_exp(v, q);
        if (fin) REQUIRE(all_finite(q, 4) && fabs(q[0] * q[0] + lf_v3_dot(q + 1, q + 1) - 1) <= 1e-12, "quat exp");
        break;
    case 4:
        numbers(in, q, 4);
        if (all_finite(q, 4) && (q[0] != 0 || q[1] != 0 || q[2] != 0 || q[3] != 0)) {
            lf_quat_to_matrix(q, R);
            REQUIRE(is_rotation(R, 1e-12), "quat to_matrix(%g, %g, %g, %g)", q[0], q[1], q[2], q[3]);
            lf_quat_from_matrix(R, r);
            REQUIRE(all_finite(r, 4), "from_matrix");
        }
        break;
    default:
        numbers(in, q, 4);
        lf_quat_mul(q, q, r); /* overflow is allowed here (the binding scales and checks) */
        break;
    }
}

static void op_linalg(input *in)
{
    double A[9], Ai[9], rc;
    numbers(in, A, 9);
    int fin = all_finite(A, 9);
    long double s = 0, m = 0;
    for (int i = 0; i < 9; i++) m = fmaxl(m, fabsl((long double)A[i]));
    if (fin && m > 0)
        for (int i = 0; i < 9; i++) s += ((long double)A[i] / m) * ((long double)A[i] / m);
    double fn = lf_m3_fnorm(A);
    if (fin) {
        long double ref = m * sqrtl(s);
        /* relative, plus the spacing of the subnormal numbers near 0 */
        if (ref <= DBL_MAX) REQUIRE(fabsl(fn - ref) <= 1e-15L * ref + 0x1p-1074L, "fnorm %g vs %Lg", fn, ref);
        else REQUIRE(isinf(fn) || fn == DBL_MAX, "fnorm %g of a matrix whose norm overflows", fn); /* (at the edge) */
        double v[3] = {A[0], A[1], A[2]};
        double vn = lf_v3_norm(v);
        REQUIRE(isfinite(vn) || fabsl(hypotl(hypotl(v[0], v[1]), v[2])) > DBL_MAX, "v3 norm %g", vn);
        double d = lf_m3_det(A);
        REQUIRE(!isnan(d), "det NaN for finite input");
        int st = lf_m3_inverse_scaled(A, Ai, &rc);
        REQUIRE(st == LF_OK || st == LF_EDOMAIN, "inverse status %d", st);
        if (st == LF_OK) {
            REQUIRE(lf_m3_isfinite(Ai) && rc >= 1e-15, "inverse not finite or rcond %g", rc);
            /* the residual of A Ai - I, relative to the condition number */
            double P[9];
            lf_m3_mul(A, Ai, P);
            P[0] -= 1; P[4] -= 1; P[8] -= 1;
            double res = 0;
            for (int i = 0; i < 9; i++) res = fmax(res, fabs(P[i]));
            REQUIRE(res <= 1e-13 / rc, "A inv(A) - I = %g (rcond %g), A = %a %a %a %a %a %a %a %a %a", res, rc, A[0], A[1], A[2], A[3], A[4], A[5], A[6], A[7], A[8]);
        }
        /* the logarithmic norm (no input consumed: the corpus keeps its meaning): finite or an error;
         * in the Euclidean norm |mu_2(A)| <= ||A||_2 <= ||A||_F; with a diagonal metric (entries
         * up to 1 + DBL_MAX) only finite or an error */
        double mu;
        lf_error e;
        int sl = lf_lognorm(3, A, NULL, &mu, &e);
        check_error(sl, &e);
        if (sl == LF_OK)
            REQUIRE(isfinite(mu) && (!isfinite(fn) || fabs(mu) <= fn * (1 + 1e-12) + 0x1p-1074),
                    "lognorm %a of a matrix with ||A||_F = %a: A = %a %a %a %a %a %a %a %a %a", mu, fn, A[0], A[1], A[2], A[3], A[4], A[5], A[6], A[7], A[8]);
        const double G[9] = {1 + fabs(A[0]), 0, 0, 0, 1 + fabs(A[4]), 0, 0, 0, 1 + fabs(A[8])};
        sl = lf_lognorm(3, A, G, &mu, &e);
        check_error(sl, &e);
        if (sl == LF_OK) REQUIRE(isfinite(mu), "lognorm in a diagonal metric: %g", mu);
    }
}

static void op_fit(input *in)
{
    double x[32], y[32], s, c, se, rs;
    int n = 2 + byte(in) % 30;
    for (int i = 0; i < n; i++) {
        x[i] = number(in);
        y[i] = number(in);
    }
    int st = lf_fit_linear(x, y, (size_t)n, &s, &c, &se, &rs);
    REQUIRE(st == LF_OK || st == LF_EINVAL || st == LF_EDOMAIN || st == LF_ENOMEM, "fit status %d", st);
    if (st == LF_OK) REQUIRE(isfinite(s) && isfinite(c) && isfinite(rs) && (n == 2 || isfinite(se)), "fit not finite");
    if (!all_finite(x, n) || !all_finite(y, n)) REQUIRE(st == LF_EINVAL, "fit of non-finite data");
}

static void op_error(input *in)
{
    char text[700];
    size_t n = 0;
    while (more(in) && n < sizeof text - 1) {
        char ch = (char)byte(in);
        if (ch == 0) break;
        text[n++] = ch;
    }
    text[n] = '\0';
    lf_error e;
    lf_error_set(&e, LF_ECALLBACK, "callback failed: %s", text);
    size_t len = strlen(e.msg);
    REQUIRE(len < sizeof e.msg, "message length %zu", len);
    if (n + 17 >= sizeof e.msg) REQUIRE(len >= 3 && strcmp(e.msg + len - 3, "...") == 0, "long message not ended by ...");
}

/* a harmonic trap of bodies that translate: U = sum_b 1/2 |x_b|^2 + (3 - tr R_b) (tests/c/test_langevin.c) */
static int fuzz_trap(void *ctx, const lf_bodies_config *c, double *U, double *F, double *tau, lf_error *err)
{
    (void)ctx, (void)err;
    double u = 0;
    for (int b = 0; b < c->nb; b++) {
        const double *x = c->x + 3 * b, *R = c->R + 9 * b;
        u += 0.5 * lf_v3_dot(x, x) + (3 - R[0] - R[4] - R[8]);
        if (F) lf_v3_scale(x, -1, F + 3 * b);
        if (tau) lf_v3_set(tau + 3 * b, R[5] - R[7], R[6] - R[2], R[1] - R[3]);
    }
    if (U) *U = u;
    return LF_OK;
}

/* rigid systems and steppers (core/model, core/method) */
static void op_stepper(input *in)
{
    double J[3], y0[12], h, a;
    lf_error e;
    numbers(in, J, 3);
    rotation(in, y0);          /* the packed rigid state (R, w) of rigid.h */
    numbers(in, y0 + 9, 3);
    h = number(in);
    a = number(in);
    lf_potential *pot = NULL;
    double Rm[9];
    rotation(in, Rm);
    switch (byte(in) % 4) {
    case 0: break; /* the free body */
    case 1: pot = lf_potential_stress(a, Rm, &e); break;
    case 2: pot = lf_potential_top(a, J, &e); break;
    default: pot = lf_potential_coulomb_wall(&e); break;
    }
    lf_system *sys = lf_rigid_new(1, J, pot, &e);
    if (!sys) {
        lf_potential_free(pot);
        return;
    }
    const lf_method *m = lf_method_at(byte(in) % lf_method_count());
    const char *name = lf_method_get_info(m)->name;
    /* lanes: two copies of the state when the method has them */
    int B = lf_method_get_rigid_info(m)->lanes && (byte(in) & 1) ? 2 : 1;
    double yB[24];
    for (int j = 0; j < B; j++) memcpy(yB + 12 * j, y0, sizeof y0);
    lf_stepper *st = B > 1 ? lf_stepper_new_lanes(m, sys, B, yB, 0, NULL, &e) : lf_stepper_new(m, sys, y0, 0, NULL, &e);
    if (st) {
        const int np = 12 * B;
        for (int k = 0; k < 4 && more(in); k++) {
            double ysave[24], t0 = lf_stepper_time(st);
            memcpy(ysave, lf_stepper_state(st), np * sizeof(double));
            long n = 1 + byte(in) % 4;
            int rc = lf_stepper_step(st, h, n);
            check_error(rc, lf_stepper_error(st));
            const double *y = lf_stepper_state(st);
            if (rc == LF_OK) {
                int finite = isfinite(lf_stepper_time(st));
                for (int i = 0; i < np; i++) finite = finite && isfinite(y[i]);
                REQUIRE(finite, "%s: non-finite state", name);
            } else if (n == 1 && (getenv("FUZZ_CAPI_ALL") ||
                                  !strstr(lf_stepper_error(st)->msg, "the state shown is the kernel's"))) {
                /* a failed step is rolled back. Known (reported): a processed method (dlm_p6) whose kernel step
                 * worked and whose post-processing failed (stepper.c proc_output) returns an error with the time
                 * advanced and the kernel's state shown ("post-processing at t=8.5 failed (the state shown is
                 * the kernel's, unprocessed)"): not counted unless FUZZ_CAPI_ALL=1 */
                REQUIRE(lf_stepper_time(st) == t0 && memcmp(ysave, y, np * sizeof(double)) == 0,
                        "%s: a failed step changed the state (%s)", name, lf_stepper_error(st)->msg);
            }
        }
        lf_stepper_free(st);
    }
    lf_system_free(sys);
    lf_potential_free(pot);
}

/* Forcings (forcing.h) and the Langevin thermostat (lf_stepper_opts.thermostat): one or two bodies,
 * with masses or not, in a potential or free; a forcing made of the built-ins (damping, constant and
 * tabulated torques with fuzzed, often invalid, parameters), a callback (constant, time-dependent,
 * linear in the velocities with or without its Jacobian, failing, or non-finite), or a sum of them
 * (parts that failed to be made are NULL: refused); attached by lf_rigid_set_forcing; a stepper of any
 * registered method with a fuzzed thermostat (negative, NaN, infinite kT and frictions are refused;
 * methods that take neither a forcing nor a thermostat refuse them), stepped with a fuzzed h. Contracts:
 * refusals are LF_E* with a message; a step that works gives a finite state and advances the noise
 * counter by its steps; a failed single step leaves the time, the state and the noise counter as
 * they were; nothing leaks (ASan); the work and heat (lf_stepper_get_work) are finite after steps that
 * worked (a forced kick or an Ornstein–Uhlenbeck step that overflows the kinetic energy fails the step). */
typedef struct {
    int mode; /* 0 constant, 1 scaled by t, 2 -c (w, v) (affine), 3 fails, 4 quadratic in w */
    double val[12], c;
} forcing_cb;

/* (F only when m->v != NULL: bodies that translate, forcing.h) */
static int forcing_fn(void *ctx, const lf_bodies_motion *m, double *tau, double *F, lf_error *err)
{
    const forcing_cb *f = ctx;
    const int nb = m->c.nb;
    if (f->mode == 3) return lf_error_set(err, LF_ECALLBACK, "fuzz forcing: failed at t = %g", m->t);
    for (int i = 0; i < 3 * nb; i++) {
        const double a = f->val[i % 6], b = f->val[6 + i % 6];
        switch (f->mode) {
        case 0:
            tau[i] = a;
            if (m->v) F[i] = b;
            break;
        case 1:
            tau[i] = a * m->t;
            if (m->v) F[i] = b * sin(m->t);
            break;
        case 2:
            tau[i] = -f->c * m->w[i];
            if (m->v) F[i] = -f->c * m->v[i];
            break;
        default:
            tau[i] = -f->c * fabs(m->w[i]) * m->w[i];
            if (m->v) F[i] = a;
            break;
        }
    }
    return LF_OK;
}

static int forcing_jac(void *ctx, const lf_bodies_motion *m, double *D, lf_error *err)
{
    const forcing_cb *f = ctx;
    (void)err;
    const int n = (m->v ? 6 : 3) * m->c.nb;
    for (int i = 0; i < n * n; i++) D[i] = 0;
    for (int i = 0; i < n; i++) {
        const double *u = i < 3 * m->c.nb ? m->w + i : m->v + (i - 3 * m->c.nb);
        D[i * n + i] = f->mode == 2 ? -f->c : -2 * f->c * fabs(*u);
    }
    return LF_OK;
}

/* a refusal: an error status with a message */
static void refused(const lf_error *e, const char *what)
{
    REQUIRE(e->code > LF_OK && e->code <= LF_EINTR && memchr(e->msg, '\0', sizeof e->msg) && e->msg[0],
            "%s refused with status %d and no message", what, e->code);
}

/* one forcing of the kinds above (NULL when refused; the refusal's status checked) */
static lf_forcing *make_forcing(input *in)
{
    lf_error e;
    lf_forcing *f = NULL;
    const uint8_t kind = byte(in) % 4;
    if (kind == 0) {
        double c = number(in), a[3];
        numbers(in, a, 3);
        const int angular = byte(in) & 1;
        f = lf_forcing_damping(c, angular ? a : NULL, &e);
        if (f) {
            REQUIRE(isfinite(c) && c >= 0, "damping: linear = %g accepted", c);
            if (angular)
                for (int k = 0; k < 3; k++) REQUIRE(isfinite(a[k]) && a[k] >= 0, "damping: angular %g accepted", a[k]);
        }
    } else if (kind == 1) {
        double tau[3];
        numbers(in, tau, 3);
        f = lf_forcing_torque(tau, byte(in) & 1, &e);
    } else if (kind == 2) {
        const int n = (int)(byte(in) % 8) - 1; /* -1 .. 6: 0 and -1 refused */
        double t[6], tau[18];
        for (int i = 0; i < 6; i++) t[i] = i > 0 && (byte(in) & 3) ? t[i - 1] + 0.25 * i : number(in);
        numbers(in, tau, 18);
        f = lf_forcing_torque_table(n, t, tau, byte(in) & 1, &e);
        if (f) {
            REQUIRE(n >= 1 && all_finite(tau, 3 * n), "torque_table of %d entries accepted", n);
            for (int i = 1; i < n; i++) REQUIRE(t[i] > t[i - 1] && isfinite(t[i]), "torque_table: time %d accepted", i);
        }
    } else {
        forcing_cb *cb = calloc(1, sizeof *cb);
        REQUIRE(cb != NULL, "out of memory");
        cb->mode = byte(in) % 5;
        numbers(in, cb->val, 12);
        cb->c = number(in);
        unsigned dep = byte(in) % 16; /* DIAGONAL (8) and AFFINE without a Jacobian are refused */
        const int jac = (cb->mode == 2 || cb->mode == 4) && (byte(in) & 1);
        f = lf_forcing_new("fuzz", dep, forcing_fn, jac ? forcing_jac : NULL, cb, free, &e);
    }
    if (!f) refused(&e, "a forcing");
    return f;
}

static void op_forced(input *in)
{
    enum { NB = 2 };
    lf_error e;
    const int nb = 1 + byte(in) % NB, trans = byte(in) & 1;
    double J[3 * NB], mass[NB], y0[18 * NB] = {0};
    numbers(in, J, 3 * nb);
    numbers(in, mass, nb);
    const int np = (trans ? 18 : 12) * nb;
    for (int b = 0; b < nb; b++) rotation(in, y0 + 9 * b);
    numbers(in, y0 + 9 * nb, np - 9 * nb);
    lf_potential *pot = NULL;
    double Rm[9];
    switch (byte(in) % 3) {
    case 0: break;
    case 1:
        rotation(in, Rm);
        pot = lf_potential_stress(number(in), Rm, &e);
        break;
    default:
        pot = trans ? lf_potential_new_x("fuzz trap", fuzz_trap, NULL, NULL, &e) : lf_potential_coulomb_wall(&e);
        break;
    }
    lf_system *sys = trans ? lf_rigid_new_translating(nb, J, mass, pot, &e) : lf_rigid_new(nb, J, pot, &e);
    if (!sys) {
        refused(&e, "a rigid system");
        lf_potential_free(pot);
        return;
    }
    /* the forcing: none, one, or a sum of up to 3 (NULL parts included) */
    lf_forcing *parts[3] = {NULL, NULL, NULL}, *f = NULL;
    const int nf = byte(in) % 5; /* 0: none; 4: a sum of 0 parts (refused) */
    if (nf == 1) f = parts[0] = make_forcing(in);
    else if (nf > 1) {
        const int n = nf == 4 ? 0 : nf;
        for (int i = 0; i < n; i++) parts[i] = make_forcing(in);
        f = lf_forcing_sum(n, (const lf_forcing *const *)parts, &e);
        for (int i = 0; f && i < n; i++) REQUIRE(parts[i] != NULL, "a sum with a missing part %d accepted", i + 1);
        if (!f) refused(&e, "a sum");
    }
    if (f) {
        int rc = lf_rigid_set_forcing(sys, f, &e);
        check_error(rc, &e);
        REQUIRE(rc != LF_OK || lf_rigid_forcing(sys) == f, "lf_rigid_forcing is not the forcing set");
    }
    /* the thermostat */
    lf_thermostat th = {number(in), number(in), number(in), 0};
    for (int i = 0; i < 8; i++) th.seed = th.seed << 8 | byte(in);
    const int thermo = byte(in) % 4 != 0;
    lf_stepper_opts o = {.thermostat = thermo ? &th : NULL};
    const lf_method *m = lf_method_at(byte(in) % lf_method_count());
    const char *name = lf_method_get_info(m)->name;
    const double h = number(in);
    lf_stepper *st = lf_stepper_new(m, sys, y0, number(in), &o, &e);
    if (!st) refused(&e, name);
    else {
        if (thermo) {
            REQUIRE(isfinite(th.kT) && th.kT >= 0 && isfinite(th.gamma) && th.gamma >= 0 && isfinite(th.gamma_rot) &&
                        th.gamma_rot >= 0,
                    "%s: thermostat kT %g, gamma %g, gamma_rot %g accepted", name, th.kT, th.gamma, th.gamma_rot);
            REQUIRE(lf_stepper_thermostat(st) && lf_stepper_thermostat(st)->seed == th.seed, "%s: thermostat not kept",
                    name);
        } else REQUIRE(lf_stepper_thermostat(st) == NULL, "%s: a thermostat without one", name);
        for (int k = 0; k < 4 && more(in); k++) {
            double ysave[18 * NB], t0 = lf_stepper_time(st);
            const unsigned long long ns = lf_stepper_noise_step(st);
            memcpy(ysave, lf_stepper_state(st), np * sizeof(double));
            const long n = 1 + byte(in) % 4;
            const int rc = lf_stepper_step(st, h, n);
            check_error(rc, lf_stepper_error(st));
            const double *y = lf_stepper_state(st);
            if (rc == LF_OK) {
                REQUIRE(all_finite(y, np) && isfinite(lf_stepper_time(st)), "%s: non-finite state", name);
                REQUIRE(lf_stepper_noise_step(st) == (thermo ? ns + (unsigned long long)n : 0),
                        "%s: noise counter %llu after %ld steps from %llu", name, lf_stepper_noise_step(st), n, ns);
                if (thermo) REQUIRE(h > 0, "%s: a thermostatted step with h = %g", name, h);
                double work, heat; /* the energy balance of the forcing and the thermostat (method.h) */
                lf_stepper_get_work(st, &work, &heat);
                REQUIRE(isfinite(work) && isfinite(heat), "%s: work %g, heat %g after steps that worked", name, work,
                        heat);
            } else if (n == 1) {
                REQUIRE(lf_stepper_time(st) == t0 && memcmp(ysave, y, np * sizeof(double)) == 0 &&
                            lf_stepper_noise_step(st) == ns,
                        "%s: a failed step changed the state or the noise counter (%s)", name,
                        lf_stepper_error(st)->msg);
            }
        }
        lf_stepper_free(st);
    }
    lf_system_free(sys);
    if (nf > 1) lf_forcing_free(f);
    for (int i = 0; i < 3; i++) lf_forcing_free(parts[i]);
    lf_potential_free(pot);
}

static void op_exact(input *in)
{
    double J[3], w0[3], w[3];
    lf_error e;
    numbers(in, J, 3);
    numbers(in, w0, 3);
    double t = number(in);
    if (getenv("FUZZ_CAPI_TRACE")) /* the arguments, as a Lua call (the reproducer of a crash) */
        fprintf(stderr, "lf.exact.free_body({%a, %a, %a}, {%a, %a, %a}, %a)\n", J[0], J[1], J[2], w0[0], w0[1], w0[2], t);
    int st = lf_exact_free_body(J, w0, t, w, &e);
    check_error(st, &e);
    if (st == LF_OK)
        REQUIRE(lf_v3_isfinite(w), "exact free body gave w = (%g, %g, %g) for J = (%a, %a, %a), w0 = (%a, %a, %a), t = %a", w[0],
                w[1], w[2], J[0], J[1], J[2], w0[0], w0[1], w0[2], t);
}

/* Expression graphs (core/graph): a random program of operations on inputs, constants and
 * parameters — op codes, operand ids and Stumpff indices may be invalid and must be refused by a
 * sticky error with a message —, then its reverse-mode derivatives as nodes and numerically, and its
 * tape: the tape's values must be the eager values bit for bit (NaN where they are NaN). */
static int same_bits(double a, double b) { return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0; }

static void op_graph(input *in)
{
    lf_error e;
    const int nt = byte(in) % 4;
    lf_graph *g = lf_graph_new(nt, &e);
    REQUIRE(g != NULL, "lf_graph_new(%d): %s", nt, e.msg);
    enum { MAXN = 64 };
    int ids[MAXN + 8], n = 0, nin = 1 + byte(in) % 4;
    double x[4], par[2] = {number(in), number(in)};
    for (int i = 0; i < nin; i++) {
        double t[3];
        x[i] = number(in);
        numbers(in, t, 3);
        ids[n++] = lf_graph_input(g, x[i], t);
    }
    ids[n++] = lf_graph_param(g, par[0]);
    ids[n++] = lf_graph_const(g, number(in));
    const int steps = byte(in) % MAXN;
    for (int s = 0; s < steps && n < MAXN + 8 && lf_graph_status(g) == LF_OK; s++) {
        const uint8_t sel = byte(in);
        /* mostly valid: an op of the list, operands among the nodes made; sometimes anything */
        const int wild = sel >= 240;
        const int op = wild ? (int)byte(in) - 8 : LF_G_NEG + sel % (LF_G_NOPS - LF_G_NEG);
        int opd[3];
        for (int i = 0; i < 3; i++) opd[i] = wild ? (int)byte(in) - 4 : ids[byte(in) % n];
        const int k = wild ? (int)byte(in) - 4 : byte(in) % 25;
        const int id = lf_graph_op(g, op, opd[0], opd[1], opd[2], k);
        if (id >= 0) ids[n++] = id;
        else REQUIRE(lf_graph_status(g) != LF_OK, "op %d refused without an error", op);
    }
    if (lf_graph_status(g) != LF_OK) {
        const lf_error *ge = lf_graph_error(g);
        REQUIRE(memchr(ge->msg, '\0', sizeof ge->msg) != NULL && ge->msg[0], "graph error without a message");
        REQUIRE(lf_graph_op(g, LF_G_ADD, ids[0], ids[0], -1, 0) < 0, "a failed graph grew");
        lf_graph_free(g);
        return;
    }
    /* the output, its derivatives as nodes (VJP) and numerically */
    int out[1 + 4], wrt[4];
    out[0] = ids[n - 1];
    for (int i = 0; i < nin; i++) wrt[i] = lf_graph_input_node(g, i);
    const int vjp = lf_graph_vjp(g, 1, out, NULL, nin, wrt, out + 1);
    double grad[4];
    check_error(lf_graph_gradient(g, out[0], nin, wrt, grad, &e), &e);
    if (vjp != LF_OK || lf_graph_status(g) != LF_OK) {
        REQUIRE(lf_graph_status(g) != LF_OK, "vjp failed (%d) on a good graph", vjp);
        lf_graph_free(g);
        return;
    }
    lf_glayout layout = {1, {nin}, 0, 0, NULL};
    lf_gprog *prog = lf_gprog_new(g, &layout, 1 + nin, out, &e);
    REQUIRE(prog != NULL, "lf_gprog_new: %s", e.msg);
    double *work = malloc((size_t)lf_gprog_nslots(prog) * sizeof *work), y[5];
    REQUIRE(work != NULL, "out of memory");
    const double *seg[1] = {x};
    lf_gprog_eval(prog, seg, par, y, work);
    for (int i = 0; i < 1 + nin; i++)
        REQUIRE(same_bits(y[i], lf_graph_value(g, out[i])), "tape %a vs eager %a (output %d of %d steps)", y[i],
                lf_graph_value(g, out[i]), i, steps);
    free(work);
    lf_gprog_free(prog);
    lf_graph_free(g);
}

/* Sites of rigid bodies (md/sites.h, model/sites_potential.h; issue 32): a spec from the input (1-6
 * bodies of 1-5 sites, positions, types, charges, an LJ table, cutoff, box, skin, the Coulomb
 * constants, max_bytes small sometimes), each part sane or any number (and counts, types and ntypes
 * out of range when `wild`). Contracts: lf_sites_new refuses an invalid spec with an LF_E* status
 * and a message, and accepts only what sites.h allows; lf_sites_eval at random configurations gives
 * a finite U, F and tau with LF_OK (never NaN), the total force is zero (Newton's third law) and the
 * statistics agree with U, or it fails with LF_EINVAL, LF_EDOMAIN or LF_ENOMEM and a message; the
 * engine's potential in a rigid system of bodies that translate, stepped by split_exact or
 * no_squish, keeps the stepper contracts (finite states; a failed single step changes nothing).
 * (Fixed findings it once made: a DSF self energy that overflowed was accepted and lf_sites_eval returned
 * U = -inf; an engine whose list had always been empty did arithmetic on NULL gather buffers; a subnormal
 * grid extent gave a NaN cell index and a write out of bounds.) */
enum { SITES_MB = 6, SITES_MS = 5 };

static int sane_spec(const lf_sites_spec *sp, int ns)
{
    if (sp->nb < 1 || sp->ntypes < 1 || sp->ntypes > 4096 || !isfinite(sp->cutoff) || !(sp->cutoff > 0) ||
        !isfinite(sp->skin) || sp->skin < 0)
        return 0;
    for (int b = 0; b < sp->nb; b++)
        if (sp->nsites[b] < 1) return 0;
    for (int d = 0; sp->box && d < 3; d++)
        if (!isfinite(sp->box[d]) || !(sp->box[d] > 0) || sp->cutoff > sp->box[d] / 2) return 0;
    for (int i = 0; i < ns; i++) {
        if (!all_finite(sp->s + 3 * i, 3) || (sp->type && (sp->type[i] < 0 || sp->type[i] >= sp->ntypes))) return 0;
        if (sp->charge && !isfinite(sp->charge[i])) return 0;
    }
    if (!sp->lj_epsilon != !sp->lj_sigma) return 0;
    for (int a = 0; sp->lj_epsilon && a < sp->ntypes * sp->ntypes; a++) {
        const int t = a % sp->ntypes * sp->ntypes + a / sp->ntypes;
        const double ep = sp->lj_epsilon[a], sg = sp->lj_sigma[a];
        if (!isfinite(ep) || ep < 0 || !isfinite(sg) || sg < 0 || (ep > 0 && !(sg > 0)) || ep != sp->lj_epsilon[t] ||
            sg != sp->lj_sigma[t])
            return 0;
    }
    if (sp->charge && (!isfinite(sp->coulomb_alpha) || sp->coulomb_alpha < 0 || !isfinite(sp->coulomb_k) ||
                       !(sp->coulomb_k > 0) || sp->coulomb_self < 0 || sp->coulomb_self > 2))
        return 0;
    return 1;
}

static void op_sites(input *in)
{
    enum { MB = SITES_MB, MS = SITES_MS, MT = 8 };
    lf_error e;
    const uint8_t mode = byte(in);
    const int wild = (mode & 7) == 0, sane = mode & 8; /* wild counts; sane numbers (else any double) */
    int nb = 1 + byte(in) % MB, nsites[MB], type[MB * MS], ns = 0;
    if (wild) nb = (int)(byte(in) % (MB + 2)) - 1; /* -1 .. 6 */
    double s[3 * MB * MS], q[MB * MS], eps[MT * MT], sig[MT * MT], box[3];
    for (int b = 0; b < nb; b++) {
        nsites[b] = 1 + byte(in) % MS;
        if (wild && (byte(in) & 3) == 0) nsites[b] = (int)(byte(in) % 3) - 1; /* 0 or -1 (then 1) */
        ns += nsites[b] > 0 ? nsites[b] : 0;
    }
    for (int i = 0; i < 3 * ns; i++) s[i] = sane ? ((int)byte(in) - 128) / 100.0 : number(in);
    int ntypes = 1 + byte(in) % 3;
    if (wild) ntypes = (int)(byte(in) % (MT + 2)) - 1; /* -1 .. 8 */
    for (int i = 0; i < ns; i++) {
        type[i] = ntypes > 0 ? byte(in) % ntypes : 0;
        if (wild && (byte(in) & 7) == 0) type[i] = (int)byte(in) - 2;
        q[i] = sane ? ((int)byte(in) - 128) / 128.0 : number(in);
    }
    const int nt = ntypes > 0 && ntypes <= MT ? ntypes : 1;
    for (int a = 0; a < nt; a++)
        for (int b = a; b < nt; b++) {
            const double ep = sane ? byte(in) / 128.0 : number(in), sg = sane ? 0.5 + byte(in) / 128.0 : number(in);
            eps[a * nt + b] = eps[b * nt + a] = ep;
            sig[a * nt + b] = sig[b * nt + a] = sg;
        }
    if (wild && nt > 1 && (byte(in) & 1)) eps[1] += 1; /* not symmetric */
    const uint8_t parts = byte(in);
    lf_sites_spec sp = {.nb = nb,
                        .nsites = nsites,
                        .s = s,
                        .type = parts & 1 ? type : NULL,
                        .charge = parts & 2 ? q : NULL,
                        .ntypes = ntypes,
                        .lj_epsilon = parts & 4 ? eps : NULL,
                        .lj_sigma = parts & 4 || (wild && parts & 64) ? sig : NULL,
                        .lj_shift = (parts >> 3) & 1};
    if (ntypes > MT && sp.lj_epsilon) sp.lj_epsilon = sp.lj_sigma = NULL; /* (tables of MT^2 at most) */
    sp.cutoff = sane ? 0.3 + byte(in) / 64.0 : number(in);
    const uint8_t bx = byte(in) % 3;
    if (bx) {
        for (int d = 0; d < 3; d++) box[d] = bx == 1 ? 2 * sp.cutoff + byte(in) / 16.0 : number(in);
        sp.box = box;
    }
    sp.skin = sane ? byte(in) / 64.0 : number(in);
    sp.coulomb_alpha = sane ? byte(in) / 64.0 : number(in);
    sp.coulomb_k = sane ? 1 + byte(in) / 16.0 : number(in);
    sp.coulomb_self = byte(in) % (wild ? 5 : 3) - (wild ? 1 : 0);
    if (parts & 16) sp.max_bytes = (size_t)1 << (8 + byte(in) % 20);
    for (int b = 0; b < nb; b++)
        if (nsites[b] < 1 && !wild) nsites[b] = 1;
    const int ok_spec = nb >= 1 && sane_spec(&sp, ns);

    lf_sites *S = lf_sites_new(&sp, &e);
    if (!S) {
        refused(&e, "lf_sites_new");
        return;
    }
    REQUIRE(ok_spec, "lf_sites_new accepted an invalid spec (nb %d, ntypes %d, cutoff %g, skin %g, box %s)", nb, ntypes,
            sp.cutoff, sp.skin, sp.box ? "given" : "none");
    REQUIRE(lf_sites_nbodies(S) == nb && lf_sites_count(S) == ns, "lf_sites_nbodies/count");
    /* evaluations at random configurations: bodies on a line with some spacing, or any numbers */
    double x[3 * MB], R[9 * MB], F[3 * MB], tau[3 * MB], U = 0;
    lf_sites_stats stt;
    lf_sites_get_stats(S, &stt);
    for (int k = 0; k < 4 && more(in); k++) {
        const uint8_t how = byte(in);
        const double gap = (how & 1) ? byte(in) / 32.0 : 0;
        for (int b = 0; b < nb; b++) {
            for (int d = 0; d < 3; d++) x[3 * b + d] = how & 2 ? number(in) : (d == 0 ? gap * b : 0) + byte(in) / 256.0;
            rotation(in, R + 9 * b);
        }
        const int want_f = !(how & 4), want_tau = !(how & 8), nbe = (how & 48) == 48 ? nb + 1 : nb;
        const int st = lf_sites_eval(S, nbe, x, R, &U, want_f ? F : NULL, want_tau ? tau : NULL, &e);
        check_error(st, &e);
        lf_sites_get_stats(S, &stt);
        if (st != LF_OK) {
            REQUIRE(st == LF_EINVAL || st == LF_EDOMAIN || st == LF_ENOMEM, "lf_sites_eval: status %d (%s)", st, e.msg);
            REQUIRE(e.msg[0], "lf_sites_eval failed without a message");
            REQUIRE(nbe == nb || st == LF_EINVAL, "lf_sites_eval of %d bodies for %d: status %d", nbe, nb, st);
            continue;
        }
        REQUIRE(nbe == nb, "lf_sites_eval accepted %d bodies for an engine of %d", nbe, nb);
        REQUIRE(isfinite(U) && (!want_f || all_finite(F, 3 * nb)) && (!want_tau || all_finite(tau, 3 * nb)),
                "lf_sites_eval: LF_OK with U = %g, a non-finite force or torque (self energy %g)", U, stt.self_energy);
        REQUIRE(U == stt.energy && isfinite(stt.virial) && isfinite(stt.atomic_virial) && stt.pairs_in_range >= 0 &&
                    stt.pairs_in_range <= stt.list_pairs,
                "lf_sites_get_stats: energy %g (U %g), virial %g, pairs %ld of %ld", stt.energy, U, stt.virial,
                stt.pairs_in_range, stt.list_pairs);
        if (want_f) { /* Newton's third law: the forces of the pairs cancel */
            double sum[3] = {0, 0, 0}, mag = 0;
            for (int b = 0; b < nb; b++)
                for (int d = 0; d < 3; d++) sum[d] += F[3 * b + d], mag += fabs(F[3 * b + d]);
            for (int d = 0; d < 3; d++)
                REQUIRE(fabs(sum[d]) <= 1e-10 * mag || !isfinite(mag), "total force %g of %g (component %d)", sum[d],
                        mag, d);
        }
    }
    lf_sites_free(S);

    /* the potential in a rigid system of bodies that translate, stepped */
    if (!more(in)) return;
    lf_potential *pot = lf_potential_sites(&sp, &e);
    REQUIRE(pot != NULL, "lf_potential_sites refused a spec lf_sites_new took: %s", e.msg);
    double J[3 * MB], mass[MB], y0[18 * MB] = {0};
    for (int i = 0; i < 3 * nb; i++) J[i] = 0.5 + byte(in) / 64.0;
    for (int b = 0; b < nb; b++) mass[b] = 0.5 + byte(in) / 32.0;
    lf_system *sys = lf_rigid_new_translating(nb, J, mass, pot, &e);
    REQUIRE(sys != NULL, "lf_rigid_new_translating: %s", e.msg);
    const uint8_t how = byte(in);
    const double gap = 0.5 + byte(in) / 32.0;
    for (int b = 0; b < nb; b++) {
        rotation(in, y0 + 9 * b);
        for (int d = 0; d < 3; d++) {
            y0[9 * nb + 3 * b + d] = how & 1 ? number(in) : ((int)byte(in) - 128) / 64.0;               /* omega */
            y0[12 * nb + 3 * b + d] = how & 2 ? number(in) : (d == 0 ? gap * b : 0) + byte(in) / 256.0; /* x */
            y0[15 * nb + 3 * b + d] = how & 4 ? number(in) : ((int)byte(in) - 128) / 256.0;             /* v */
        }
    }
    const char *name = how & 8 ? "split_exact" : "no_squish";
    /* the potential evaluated at y0 first (its contract) */
    const int rc0 = lf_rigid_potential_eval_x(sys, y0 + 12 * nb, y0, &U, F, tau, &e);
    check_error(rc0, &e);
    REQUIRE(rc0 != LF_OK || (isfinite(U) && all_finite(F, 3 * nb) && all_finite(tau, 3 * nb)),
            "lf_rigid_potential_eval_x (sites): LF_OK with U = %g or a non-finite force or torque", U);
    const double h = how & 16 ? number(in) : 1e-3 * (1 + byte(in) % 32);
    const int np = 18 * nb;
    lf_stepper *st = lf_stepper_new(lf_method_find(name), sys, y0, 0, NULL, &e);
    if (!st) refused(&e, name);
    else {
        for (int k = 0; k < 3 && more(in); k++) {
            double ysave[18 * MB], t0 = lf_stepper_time(st);
            memcpy(ysave, lf_stepper_state(st), np * sizeof(double));
            const long n = 1 + byte(in) % 3;
            const int rc = lf_stepper_step(st, h, n);
            check_error(rc, lf_stepper_error(st));
            const double *y = lf_stepper_state(st);
            if (rc == LF_OK)
                REQUIRE(all_finite(y, np) && isfinite(lf_stepper_time(st)), "%s (sites): non-finite state", name);
            else if (n == 1)
                REQUIRE(lf_stepper_time(st) == t0 && memcmp(ysave, y, np * sizeof(double)) == 0,
                        "%s (sites): a failed step changed the state (%s)", name, lf_stepper_error(st)->msg);
        }
        lf_stepper_free(st);
    }
    lf_system_free(sys);
    lf_potential_free(pot);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = {data, size};
    for (int k = 0; k < 16 && more(&in); k++) {
        const uint8_t op = byte(&in);
        /* forcings and thermostats: the selectors 240..247, which no entry of the corpus used at the top
         * level before (the entries keep their meaning) */
        if (op >= 240 && op < 248) {
            op_forced(&in);
            continue;
        }
        /* sites of rigid bodies (issue 32): the selectors 248..251, unused at the top level by the corpus before */
        if (op >= 248 && op < 252) {
            op_sites(&in);
            continue;
        }
        switch (op % 8) {
        case 0: op_so3(&in); break;
        case 1: op_s2_quat(&in); break;
        case 2: op_linalg(&in); break;
        case 3: op_fit(&in); break;
        case 4: op_error(&in); break;
        case 5: op_graph(&in); break;
        case 6: op_stepper(&in); break;
        default: op_exact(&in); break;
        }
    }
    return 0;
}

#ifdef LF_FUZZ_REPLAY
/* Without libFuzzer (gcc, make test): run every file named on the command line once, or with
 * "--random N SEED" N pseudo-random inputs of 16..1024 bytes (xorshift64*, reproducible). */
int main(int argc, char **argv)
{
    static uint8_t buf[1 << 16];
    if (argc == 4 && strcmp(argv[1], "--random") == 0) {
        long n = atol(argv[2]);
        uint64_t x = strtoull(argv[3], NULL, 10) * 0x9E3779B97F4A7C15ull + 1;
        for (long k = 0; k < n; k++) {
            size_t len = 16;
            for (size_t i = 0; i < sizeof buf; i++) {
                x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
                uint64_t r = x * 0x2545F4914F6CDD1Dull;
                if (i == 0) len = 16 + (size_t)(r >> 40) % 1009;
                if (i >= len) break;
                buf[i] = (uint8_t)(r >> 56);
            }
            LLVMFuzzerTestOneInput(buf, len);
        }
        printf("fuzz_capi: %ld random inputs (seed %s), no contract violated\n", n, argv[3]);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            fprintf(stderr, "fuzz_capi: cannot open %s\n", argv[i]);
            return 2;
        }
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
    }
    printf("fuzz_capi: %d inputs replayed, no contract violated\n", argc - 1);
    return 0;
}
#endif
