/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of core/graph: the builder (merging, folding, simplifications), derivatives (symbolic
 * reverse and forward mode against the numeric sweep, central differences and each other), the tape
 * (against the eager values), generated native code (against the tape, bit for bit), the Lie group
 * maps on graphs (against core/lie) and the models built from graphs (against the C built-ins).
 * Every test prints the worst error it measured, then asserts it against its bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#include "graph/graph.h"
#include "graph/graph_codegen_internal.h"
#include "graph/graph_lie.h"
#include "graph/graph_module.h"
#include "graph/graph_prog_internal.h"
#include "model/model_graph.h"
#include "model/potential.h"
#include "lie/quat.h"
#include "model/rigid.h"
#include "lie/s2.h"
#include "lie/so3.h"
#include "model/spheres.h"
#include "model/system.h"
#include "model/lie_ode.h"
#include "lie/manifold.h"

static char cache_dir[256];

static lf_jit_opts jit_opts(void)
{
    lf_jit_opts o;
    memset(&o, 0, sizeof o);
    o.cache_dir = cache_dir;
    return o;
}

static double relerr(double a, double b) { return fabs(a - b) / fmax(1, fmax(fabs(a), fabs(b))); }

/* ---------------------------------------------------------------- builder */
static void test_builder(void **state)
{
    (void)state;
    lf_graph *g = lf_graph_new(0, NULL);
    int x = lf_graph_input(g, 2, NULL), y = lf_graph_input(g, 3, NULL);
    int a = lf_g2(g, LF_G_ADD, x, y), b = lf_g2(g, LF_G_ADD, y, x);
    assert_int_equal(a, b); /* commutative, merged */
    int m1 = lf_g2(g, LF_G_MUL, x, y), m2 = lf_g2(g, LF_G_MUL, x, y);
    assert_int_equal(m1, m2);
    int c = lf_g2(g, LF_G_MUL, lf_graph_const(g, 2), lf_graph_const(g, 3)); /* folded */
    double v;
    assert_true(lf_graph_is_const(g, c, &v) && v == 6);
    assert_int_equal(lf_g2(g, LF_G_ADD, x, lf_graph_const(g, 0)), x);
    assert_int_equal(lf_g2(g, LF_G_MUL, lf_graph_const(g, 1), y), y);
    assert_int_equal(lf_g1(g, LF_G_NEG, lf_g1(g, LF_G_NEG, x)), x);
    assert_int_equal(lf_gselect(g, lf_graph_const(g, 1), x, y), x);
    assert_int_equal(lf_gselect(g, lf_graph_const(g, 0), x, y), y);
    /* x * 0 is not folded (inf * 0 is NaN) */
    int z = lf_g2(g, LF_G_MUL, x, lf_graph_const(g, 0));
    assert_false(lf_graph_is_const(g, z, NULL));
    /* x^2 is x * x */
    assert_int_equal(lf_g2(g, LF_G_POW, x, lf_graph_const(g, 2)), lf_g2(g, LF_G_MUL, x, x));
    /* eager values */
    assert_true(lf_graph_value(g, a) == 5 && lf_graph_value(g, m1) == 6);
    /* min/max follow Lua: the first of equal ones */
    assert_true(lf_graph_value(g, lf_graph_min(g, x, y)) == 2 && lf_graph_value(g, lf_graph_max(g, x, y)) == 3);
    /* a bad operand fails the graph, and it stays failed */
    assert_int_equal(lf_g2(g, LF_G_ADD, x, 1000000), -1);
    assert_int_equal(lf_graph_status(g), LF_EINVAL);
    printf("  failed graph: %s\n", lf_graph_error(g)->msg);
    assert_int_equal(lf_g2(g, LF_G_ADD, x, y), -1);
    lf_graph_free(g);
}

/* ---------------------------------------------------------------- random smooth expressions */
/* A random expression over the inputs, built from every operation in ranges where it is smooth
 * (so that central differences are a reference): nodes[] grows; returns the output. */
static int random_expr(lf_graph *g, gsl_rng *r, int *nodes, int n, int steps)
{
    for (int s = 0; s < steps; s++) {
        int a = nodes[gsl_rng_uniform_int(r, (unsigned long)n)], b = nodes[gsl_rng_uniform_int(r, (unsigned long)n)];
        int one = lf_graph_const(g, 1), x;
        int sq = lf_g2(g, LF_G_ADD, one, lf_g2(g, LF_G_MUL, a, a)); /* 1 + a^2 >= 1 */
        int u = lf_g2(g, LF_G_DIV, a, lf_g2(g, LF_G_ADD, lf_graph_const(g, 2), lf_g1(g, LF_G_ABS, a))); /* |u| < 1 */
        switch (gsl_rng_uniform_int(r, 20)) {
        case 0: x = lf_g2(g, LF_G_ADD, a, b); break;
        case 1: x = lf_g2(g, LF_G_SUB, a, b); break;
        case 2: x = lf_g2(g, LF_G_MUL, a, b); break;
        case 3: x = lf_g2(g, LF_G_DIV, a, sq); break;
        case 4: x = lf_g1(g, LF_G_SQRT, sq); break;
        case 5: x = lf_g1(g, LF_G_EXP, u); break;
        case 6: x = lf_g1(g, LF_G_LOG, sq); break;
        case 7: x = lf_g1(g, LF_G_SIN, a); break;
        case 8: x = lf_g1(g, LF_G_COS, b); break;
        case 9: x = lf_g1(g, LF_G_TAN, lf_g2(g, LF_G_MUL, lf_graph_const(g, 0.7), u)); break;
        case 10: x = lf_g1(g, LF_G_ASIN, u); break;
        case 11: x = lf_g1(g, LF_G_ACOS, u); break;
        case 12: x = lf_g1(g, LF_G_ATAN, a); break;
        case 13: x = lf_g2(g, LF_G_ATAN2, a, sq); break;
        case 14: x = lf_g2(g, LF_G_POW, sq, u); break;
        case 15: x = lf_gstumpff(g, (int)gsl_rng_uniform_int(r, 6), sq); break;
        case 16: x = lf_g1(g, LF_G_NEG, a); break;
        case 17: x = lf_gselect(g, lf_g2(g, LF_G_LT, a, b), lf_g2(g, LF_G_MUL, a, a), lf_g1(g, LF_G_SIN, b)); break;
        case 18: x = lf_graph_max(g, a, lf_g2(g, LF_G_MUL, lf_graph_const(g, 0.5), b)); break;
        default: x = lf_g1(g, LF_G_ABS, lf_g2(g, LF_G_ADD, sq, b)); break;
        }
        nodes[n++] = x;
    }
    int out = nodes[n - 1];
    for (int i = n - 4; i < n - 1; i++) out = lf_g2(g, LF_G_ADD, out, nodes[i]);
    return out;
}

#define NIN 5

/* value of the random expression (seed) at x, rebuilt: central differences need new graphs */
static double eval_at(unsigned long seed, const double *x, int steps)
{
    lf_graph *g = lf_graph_new(0, NULL);
    gsl_rng *r = new_rng(seed);
    int nodes[4096];
    for (int i = 0; i < NIN; i++) nodes[i] = lf_graph_input(g, x[i], NULL);
    int out = random_expr(g, r, nodes, NIN, steps);
    double v = lf_graph_value(g, out);
    gsl_rng_free(r);
    lf_graph_free(g);
    return v;
}

static void test_derivatives(void **state)
{
    (void)state;
    gsl_rng *xr = new_rng(7);
    double worst_fd = 0, worst_sym = 0, worst_jvp = 0, worst_hess = 0;
    for (unsigned long seed = 1; seed <= 60; seed++) {
        double x[NIN];
        for (int i = 0; i < NIN; i++) x[i] = 2 * gsl_rng_uniform(xr) - 1;
        const int steps = 40;
        lf_graph *g = lf_graph_new(0, NULL);
        gsl_rng *r = new_rng(seed);
        int nodes[4096], in[NIN];
        for (int i = 0; i < NIN; i++) in[i] = nodes[i] = lf_graph_input(g, x[i], NULL);
        int out = random_expr(g, r, nodes, NIN, steps);
        gsl_rng_free(r);
        double grad[NIN];
        assert_int_equal(lf_graph_gradient(g, out, NIN, in, grad, NULL), LF_OK);
        int sym[NIN];
        assert_int_equal(lf_graph_vjp(g, 1, &out, NULL, NIN, in, sym), LF_OK);
        for (int j = 0; j < NIN; j++) {
            double h = 1e-6 * fmax(1, fabs(x[j])), xp[NIN], xm[NIN];
            memcpy(xp, x, sizeof xp);
            memcpy(xm, x, sizeof xm);
            xp[j] += h;
            xm[j] -= h;
            double fd = (eval_at(seed, xp, steps) - eval_at(seed, xm, steps)) / (2 * h);
            double scale = fmax(1, fabs(lf_graph_value(g, out)));
            worst_fd = fmax(worst_fd, fabs(fd - grad[j]) / scale);
            worst_sym = fmax(worst_sym, relerr(lf_graph_value(g, sym[j]), grad[j]));
            /* forward mode along e_j gives the same */
            int tan[NIN], res;
            for (int k = 0; k < NIN; k++) tan[k] = k == j ? lf_graph_const(g, 1) : -1;
            assert_int_equal(lf_graph_jvp(g, NIN, in, tan, 1, &out, &res), LF_OK);
            worst_jvp = fmax(worst_jvp, relerr(lf_graph_value(g, res), grad[j]));
        }
        /* Hessian: reverse over reverse is symmetric, and its row j is the gradient of sym[j] */
        int H[NIN][NIN];
        for (int j = 0; j < NIN; j++) assert_int_equal(lf_graph_vjp(g, 1, &sym[j], NULL, NIN, in, H[j]), LF_OK);
        for (int j = 0; j < NIN; j++)
            for (int k = 0; k < j; k++)
                worst_hess = fmax(worst_hess, relerr(lf_graph_value(g, H[j][k]), lf_graph_value(g, H[k][j])));
        lf_graph_free(g);
    }
    gsl_rng_free(xr);
    CHECK_LE(worst_fd, 1e-7, "gradient vs central differences (60 random graphs)");
    CHECK_LE(worst_sym, 1e-14, "symbolic reverse mode vs numeric sweep");
    CHECK_LE(worst_jvp, 1e-14, "forward mode vs reverse mode");
    CHECK_LE(worst_hess, 1e-12, "Hessian symmetry (reverse over reverse)");
}

/* Where a partial derivative is infinite and the adjoint is 0, the derivative is 0, not NaN. */
static void test_singular(void **state)
{
    (void)state;
    lf_graph *g = lf_graph_new(1, NULL);
    const double one = 1;
    int x = lf_graph_input(g, 0, &one);
    /* sqrt(x^2 + 0)^2 at 0: d/dx = 0 (a smooth composite through sqrt at 0) */
    int s = lf_g1(g, LF_G_SQRT, lf_g2(g, LF_G_MUL, x, x));
    int f = lf_g2(g, LF_G_MUL, s, s), d;
    double gr;
    lf_graph_gradient(g, f, 1, &x, &gr, NULL);
    lf_graph_vjp(g, 1, &f, NULL, 1, &x, &d);
    printf("  d/dx sqrt(x^2)^2 at 0: numeric %g, symbolic %g, forward %g\n", gr, lf_graph_value(g, d), lf_graph_tangent(g, f)[0]);
    assert_true(gr == 0 && lf_graph_value(g, d) == 0);
    /* select(x > 0, 1/x, x): at 0 the branch not taken is infinite; the derivative is 1 */
    int sel = lf_gselect(g, lf_g2(g, LF_G_LT, lf_graph_const(g, 0), x), lf_g2(g, LF_G_DIV, lf_graph_const(g, 1), x), x);
    lf_graph_gradient(g, sel, 1, &x, &gr, NULL);
    lf_graph_vjp(g, 1, &sel, NULL, 1, &x, &d);
    printf("  d/dx select(x > 0, 1/x, x) at 0: numeric %g, symbolic %g, forward %g\n", gr, lf_graph_value(g, d),
           lf_graph_tangent(g, sel)[0]);
    assert_true(gr == 1 && lf_graph_value(g, d) == 1 && lf_graph_tangent(g, sel)[0] == 1);
    lf_graph_free(g);
}

/* ---------------------------------------------------------------- programs, tape, native */
static void test_tape_and_native(void **state)
{
    (void)state;
    double worst_tape = 0, worst_native = 0;
    int slots = 0, nodes = 0;
    lf_jit_opts o = jit_opts();
    for (unsigned long seed = 1; seed <= 20; seed++) {
        lf_graph *g = lf_graph_new(0, NULL);
        gsl_rng *r = new_rng(seed);
        int n[4096], in[NIN];
        double x[NIN], p = 0.25 * (double)seed;
        for (int i = 0; i < NIN; i++) in[i] = n[i] = lf_graph_input(g, sin((double)(i + seed)), NULL);
        for (int i = 0; i < NIN; i++) x[i] = lf_graph_value(g, in[i]);
        n[NIN] = lf_g2(g, LF_G_MUL, lf_graph_param(g, p), in[0]);
        int out[3];
        out[0] = random_expr(g, r, n, NIN + 1, 60);
        out[1] = n[NIN + 10];
        lf_graph_vjp(g, 1, out, NULL, 1, in, out + 2);
        gsl_rng_free(r);
        double eager[3] = {lf_graph_value(g, out[0]), lf_graph_value(g, out[1]), lf_graph_value(g, out[2])};
        /* inputs in two segments */
        lf_glayout layout = {2, {2, NIN - 2}, 0, 0, NULL};
        const double *segs[2] = {x, x + 2};
        lf_gfunc_spec spec = {3, out};
        lf_gmodule *tape = lf_gmodule_new(g, &layout, 1, &spec, LF_BACKEND_TAPE, NULL, NULL);
        lf_gmodule *nat = lf_gmodule_new(g, &layout, 1, &spec, LF_BACKEND_NATIVE, &o, NULL);
        assert_non_null(tape);
        assert_non_null(nat);
        if (seed == 1) printf("  %s | %s\n", lf_gmodule_report(tape), lf_gmodule_report(nat));
        assert_int_equal(lf_gmodule_backend(nat), LF_BACKEND_NATIVE);
        double yt[3], yn[3];
        lf_gmodule_eval(tape, 0, segs, &p, yt, NULL);
        lf_gmodule_eval(nat, 0, segs, &p, yn, NULL);
        for (int i = 0; i < 3; i++) {
            worst_tape = fmax(worst_tape, relerr(yt[i], eager[i]));
            if (memcmp(&yt[i], &yn[i], sizeof(double)) != 0) worst_native = fmax(worst_native, relerr(yt[i], yn[i]) + 1e-300);
        }
        slots += (int)lf_gmodule_work_size(tape);
        nodes += lf_gmodule_ops(tape);
        lf_gmodule_free(tape);
        lf_gmodule_free(nat);
        lf_graph_free(g);
    }
    printf("  slots / operations of the tapes: %d / %d (slot reuse)\n", slots, nodes);
    CHECK_LE(worst_tape, 0, "tape vs eager values (bitwise)");
    CHECK_LE(worst_native, 0, "native vs tape (bitwise)");
    assert_true(slots < nodes);
}

/* A program of thousands of operations is emitted in chunks (graph_codegen.c: values used by a
 * later chunk go through an array): the same bits as the tape, values live across many chunks
 * included (intermediate outputs and the reverse sweep's uses of early values). */
static void test_chunked_native(void **state)
{
    (void)state;
    lf_graph *g = lf_graph_new(0, NULL);
    gsl_rng *r = new_rng(77);
    static int n[NIN + 700];
    int in[NIN], out[9 + NIN];
    double x[NIN];
    for (int i = 0; i < NIN; i++) in[i] = n[i] = lf_graph_input(g, sin((double)(i + 1)), NULL);
    for (int i = 0; i < NIN; i++) x[i] = lf_graph_value(g, in[i]);
    random_expr(g, r, n, NIN, 700);
    out[0] = n[0];
    for (int i = 1; i < NIN + 700; i++) out[0] = lf_g2(g, LF_G_ADD, out[0], n[i]); /* every node lives */
    for (int k = 0; k < 8; k++) out[1 + k] = n[NIN + 80 * k + 7];
    lf_graph_vjp(g, 1, out, NULL, NIN, in, out + 9);
    gsl_rng_free(r);
    lf_glayout layout = {1, {NIN}, 0, 0, NULL};
    const double *segs[1] = {x};
    lf_gfunc_spec spec = {9 + NIN, out};
    lf_jit_opts o = jit_opts();
    lf_gmodule *tape = lf_gmodule_new(g, &layout, 1, &spec, LF_BACKEND_TAPE, NULL, NULL);
    lf_gmodule *nat = lf_gmodule_new(g, &layout, 1, &spec, LF_BACKEND_NATIVE, &o, NULL);
    assert_non_null(tape);
    assert_non_null(nat);
    printf("  %s\n", lf_gmodule_report(nat));
    assert_int_equal(lf_gmodule_backend(nat), LF_BACKEND_NATIVE);
    assert_true(lf_gmodule_ops(nat) > 4000);
    assert_non_null(strstr(lf_gmodule_source(nat), "lf_c_f0_9("));
    double yt[9 + NIN], yn[9 + NIN];
    lf_gmodule_eval(tape, 0, segs, NULL, yt, NULL);
    lf_gmodule_eval(nat, 0, segs, NULL, yn, NULL);
    int differ = 0;
    for (int i = 0; i < 9 + NIN; i++) differ += memcmp(&yt[i], &yn[i], sizeof(double)) != 0;
    CHECK_LE(differ, 0, "chunked native vs tape: outputs that differ in a bit");
    lf_gmodule_free(tape);
    lf_gmodule_free(nat);
    lf_graph_free(g);
}

/* Compositions a C compiler may rewrite algebraically (cos(atan x) as 1/sqrt(x^2 + 1) under
 * -fno-math-errno, exp(log x), sqrt(x*x), ...): the native code must still give the tape's bits. */
static void test_native_compositions(void **state)
{
    (void)state;
    static const int chains[][2] = {{LF_G_ATAN, LF_G_COS}, {LF_G_ATAN, LF_G_SIN}, {LF_G_ATAN, LF_G_TAN},
                                    {LF_G_LOG, LF_G_EXP},  {LF_G_EXP, LF_G_LOG},  {LF_G_SIN, LF_G_ASIN},
                                    {LF_G_COS, LF_G_ACOS}, {LF_G_TAN, LF_G_ATAN}, {LF_G_ABS, LF_G_SQRT}};
    const int nc = (int)(sizeof chains / sizeof *chains);
    lf_graph *g = lf_graph_new(0, NULL);
    int x = lf_graph_input(g, 0.5, NULL), out[2 * 16];
    for (int c = 0; c < nc; c++) {
        int xc = lf_g2(g, LF_G_MUL, x, lf_graph_const(g, 1 + c)); /* its own inner node: a single use */
        out[2 * c] = lf_g1(g, chains[c][1], lf_g1(g, chains[c][0], xc));
        out[2 * c + 1] = lf_g1(g, LF_G_SQRT, lf_g2(g, LF_G_MUL, out[2 * c], out[2 * c]));
    }
    lf_glayout layout = {1, {1}, 0, 0, NULL};
    lf_gfunc_spec spec = {2 * nc, out};
    lf_jit_opts o = jit_opts();
    lf_gmodule *tape = lf_gmodule_new(g, &layout, 1, &spec, LF_BACKEND_TAPE, NULL, NULL);
    lf_gmodule *nat = lf_gmodule_new(g, &layout, 1, &spec, LF_BACKEND_NATIVE, &o, NULL);
    assert_non_null(tape);
    assert_non_null(nat);
    assert_int_equal(lf_gmodule_backend(nat), LF_BACKEND_NATIVE);
    gsl_rng *r = new_rng(9);
    int differ = 0;
    for (int k = 0; k < 400; k++) {
        double v = (gsl_rng_uniform(r) - 0.5) * (k % 2 ? 40 : 0.18), yt[2 * 16], yn[2 * 16];
        const double *seg[1] = {&v};
        lf_gmodule_eval(tape, 0, seg, NULL, yt, NULL);
        lf_gmodule_eval(nat, 0, seg, NULL, yn, NULL);
        for (int i = 0; i < 2 * nc; i++) differ += memcmp(&yt[i], &yn[i], sizeof(double)) != 0;
    }
    gsl_rng_free(r);
    CHECK_LE(differ, 0, "native vs tape on compositions a compiler could rewrite: outputs differing in a bit");
    lf_gmodule_free(tape);
    lf_gmodule_free(nat);
    lf_graph_free(g);
}

static void test_codegen_text(void **state)
{
    (void)state;
    lf_graph *g = lf_graph_new(0, NULL);
    int x = lf_graph_input(g, 1, NULL);
    int y = lf_g2(g, LF_G_ADD, lf_g2(g, LF_G_MUL, x, lf_graph_const(g, 0.1)), lf_gstumpff(g, 2, x));
    lf_glayout layout = {1, {1}, 0, 0, NULL};
    lf_gprog *p = lf_gprog_new(g, &layout, 1, &y, NULL);
    const char *bad[] = {"f; system(\"x\")"}, *good[] = {"lf_f0"};
    lf_error e;
    assert_null(lf_gcodegen(1, (const lf_gprog *const *)&p, bad, &e));
    printf("  refused name: %s\n", e.msg);
    char *src = lf_gcodegen(1, (const lf_gprog *const *)&p, good, &e);
    assert_non_null(src);
    /* exact constants as hexadecimal floats; the Stumpff source included */
    assert_non_null(strstr(src, "0x1.999999999999ap-4"));
    assert_non_null(strstr(src, "lf_stumpff2("));
    assert_non_null(strstr(src, "static"));
    free(src);
    lf_gprog_free(p);
    lf_graph_free(g);
}

/* ---------------------------------------------------------------- Lie group maps */
static void inputs(lf_graph *g, int n, const double *v, int *ids)
{
    for (int i = 0; i < n; i++) ids[i] = lf_graph_input(g, v[i], NULL);
}

static double maxrel(int n, const lf_graph *g, const int *ids, const double *ref)
{
    double m = 0;
    for (int i = 0; i < n; i++) m = fmax(m, fabs(lf_graph_value(g, ids[i]) - ref[i]));
    return m;
}

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
        inputs(g, 3, x, xi);
        lf_so3_exp(x, M);
        lf_gso3_exp(g, xi, out);
        w_exp = fmax(w_exp, maxrel(9, g, out, M));
        lf_so3_cay(x, M);
        lf_gso3_cay(g, xi, out);
        w_cay = fmax(w_cay, maxrel(9, g, out, M));
        lf_so3_dexp(x, M);
        lf_gso3_dexp(g, xi, out);
        w_dexp = fmax(w_dexp, maxrel(9, g, out, M));
        if (t < 3) {
            lf_so3_dexpinv(x, M);
            lf_gso3_dexpinv(g, xi, out);
            w_dexpinv = fmax(w_dexpinv, maxrel(9, g, out, M));
        }
        lf_so3_dcay(x, M);
        lf_gso3_dcay(g, xi, out);
        w_dcay = fmax(w_dcay, maxrel(9, g, out, M));
        rand_rot(r, t, R);
        inputs(g, 9, R, Ri);
        lf_so3_log(R, v);
        lf_gso3_log(g, Ri, out);
        w_log = fmax(w_log, maxrel(3, g, out, v));
        double R2[9];
        rand_rot(r, 1, R2);
        int R2i[9];
        inputs(g, 9, R2, R2i);
        w_dist = fmax(w_dist, fabs(lf_graph_value(g, lf_gso3_dist(g, Ri, R2i)) - lf_so3_dist(R, R2)));
        w_dist = fmax(w_dist, fabs(lf_graph_value(g, lf_gso3_angle(g, Ri, R2i)) - lf_so3_angle(R, R2)));
        double q[4], qq[4], Rq[9];
        lf_quat_from_matrix(R, q);
        lf_gquat_from_matrix(g, Ri, out);
        w_quat = fmax(w_quat, maxrel(4, g, out, q));
        int qi[4];
        inputs(g, 4, q, qi);
        lf_quat_to_matrix(q, Rq);
        lf_gquat_to_matrix(g, qi, out);
        w_quat = fmax(w_quat, maxrel(9, g, out, Rq));
        lf_quat_log(q, v);
        lf_gquat_log(g, qi, out);
        w_quat = fmax(w_quat, maxrel(3, g, out, v));
        lf_quat_exp(x, qq);
        lf_gquat_exp(g, xi, out);
        w_quat = fmax(w_quat, maxrel(4, g, out, qq));
        double p[3], s[3], y[3];
        rand_dir(r, p);
        rand_dir(r, s);
        int pi_[3], si[3];
        inputs(g, 3, p, pi_);
        inputs(g, 3, s, si);
        w_s2 = fmax(w_s2, fabs(lf_graph_value(g, lf_gs2_dist(g, pi_, si)) - lf_s2_dist(p, s)));
        lf_s2_exp(p, x, y);
        lf_gs2_exp(g, pi_, xi, out);
        w_s2 = fmax(w_s2, maxrel(3, g, out, y));
        lf_s2_tangent(p, s, y);
        lf_gs2_tangent(g, pi_, si, out);
        w_s2 = fmax(w_s2, maxrel(3, g, out, y));
        if (lf_s2_midpoint(p, s, y, NULL) == LF_OK) {
            lf_gs2_midpoint(g, pi_, si, out);
            w_s2 = fmax(w_s2, maxrel(3, g, out, y));
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
        inputs(g, 9, R, Ri);
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

/* ---------------------------------------------------------------- models */
/* The stress potential of Bou-Rabee, Ortolan & Saccon built on a graph, against the built-in */
static int stress_graph(lf_graph *g, const int *R, double alpha, const double *Rm)
{
    int I[9], Rmi[9], D1[9], D2[9];
    lf_gm3_identity(g, I);
    for (int i = 0; i < 9; i++) Rmi[i] = lf_graph_const(g, Rm[i]);
    lf_gm3_sub(g, R, I, D1);
    lf_gm3_sub(g, R, Rmi, D2);
    int d1 = lf_gm3_fnorm(g, D1), d2 = lf_gm3_fnorm(g, D2), one = lf_graph_const(g, 1);
    int a = lf_g2(g, LF_G_SUB, d1, one);
    return lf_g2(g, LF_G_SUB, lf_g2(g, LF_G_MUL, a, a), lf_g2(g, LF_G_DIV, lf_graph_param(g, alpha), d2));
}

static void test_potential_graph(void **state)
{
    (void)state;
    double Rm[9], R0[9];
    gsl_rng *r = new_rng(3);
    rand_rot(r, 1.0, Rm);
    rand_rot(r, 0.7, R0);
    const double alpha = 0.3;
    lf_potential *ref = lf_potential_stress(alpha, Rm, NULL);
    lf_jit_opts o = jit_opts();
    double worst_U = 0, worst_tau = 0, worst_K = 0;
    for (int backend = LF_BACKEND_NATIVE; backend <= LF_BACKEND_TAPE; backend++) {
        lf_graph *g = lf_graph_new(0, NULL);
        int R[9];
        inputs(g, 9, R0, R);
        int U = stress_graph(g, R, alpha, Rm);
        lf_model_graph_opts mo = {backend, &o, 1};
        lf_error e;
        lf_potential *p = lf_potential_graph(g, U, NULL, 1, &alpha, &mo, &e);
        assert_non_null(p);
        printf("  %s\n", lf_compiled_report(lf_potential_compiled(p)));
        lf_graph_free(g);
        for (int it = 0; it < 50; it++) {
            double Rt[9], U1, U2, t1[3], t2[3], K[9], Kfd[9];
            rand_rot(r, 3.0 * gsl_rng_uniform(r), Rt);
            assert_int_equal(lf_potential_eval(ref, 1, Rt, &U1, t1, NULL), LF_OK);
            assert_int_equal(lf_potential_eval(p, 1, Rt, &U2, t2, NULL), LF_OK);
            worst_U = fmax(worst_U, relerr(U1, U2));
            for (int k = 0; k < 3; k++) worst_tau = fmax(worst_tau, relerr(t1[k], t2[k]));
            /* K by central differences of the built-in torque along R exp(e hat e_m) */
            assert_int_equal(lf_potential_jacobian(p, 1, Rt, K, NULL), LF_OK);
            for (int m = 0; m < 3; m++) {
                double e3[3] = {0, 0, 0}, Rp[9], Rn[9], tp[3], tn[3];
                e3[m] = 1e-6;
                lf_m3_copy(Rt, Rp);
                lf_so3_rmul_exp(Rp, e3);
                e3[m] = -1e-6;
                lf_m3_copy(Rt, Rn);
                lf_so3_rmul_exp(Rn, e3);
                lf_potential_eval(ref, 1, Rp, NULL, tp, NULL);
                lf_potential_eval(ref, 1, Rn, NULL, tn, NULL);
                for (int k = 0; k < 3; k++) Kfd[3 * k + m] = (tp[k] - tn[k]) / 2e-6;
            }
            for (int i = 0; i < 9; i++) worst_K = fmax(worst_K, relerr(K[i], Kfd[i]));
        }
        lf_potential_free(p);
    }
    lf_potential_free(ref);
    gsl_rng_free(r);
    CHECK_LE(worst_U, 1e-14, "stress potential on a graph vs built-in: U");
    CHECK_LE(worst_tau, 1e-13, "stress potential on a graph vs built-in: torque");
    CHECK_LE(worst_K, 1e-7, "torque Jacobian vs central differences of the built-in torque");
}

static void rmtree(const char *dir)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* The free rigid body's momentum on S^2 (rigid_body_s2) from a graph: f, its derived Jacobian, H and
 * its derived dH against the built-in in C. */
static void test_lie_ode_graph(void **state)
{
    (void)state;
    const double I[3] = {1, 2, 3};
    lf_factor_kind kind = LF_S2;
    lf_manifold *M = lf_manifold_new(1, &kind, NULL, LF_RIGHT_TRIVIALIZED, NULL);
    double y0[3] = {0.6, 0, 0.8};
    lf_system *ref = lf_lie_ode_builtin("rigid_body_s2", M, y0, I, NULL);
    assert_non_null(ref);
    lf_jit_opts o = jit_opts();
    gsl_rng *r = new_rng(11);
    double worst = 0;
    for (int backend = LF_BACKEND_NATIVE; backend <= LF_BACKEND_TAPE; backend++) {
        lf_graph *g = lf_graph_new(0, NULL);
        lf_graph_input(g, 0, NULL); /* t */
        int m[3], xi[3], H = lf_graph_const(g, 0);
        inputs(g, 3, y0, m);
        for (int k = 0; k < 3; k++) {
            int w = lf_g2(g, LF_G_DIV, m[k], lf_graph_param(g, I[k])); /* I^-1 m, I as parameters */
            xi[k] = lf_g1(g, LF_G_NEG, w);                            /* m' = xi x m = m x I^-1 m */
            H = lf_g2(g, LF_G_ADD, H, lf_g2(g, LF_G_MUL, lf_graph_const(g, 0.5), lf_g2(g, LF_G_MUL, m[k], w)));
        }
        lf_lie_ode_graph nodes = {xi, -1, H, NULL, NULL, NULL, NULL};
        lf_model_graph_opts mo = {backend, &o, 1};
        lf_lie_ode_def def;
        lf_error e;
        assert_int_equal(lf_lie_ode_graph_def(g, M, &nodes, I, &mo, &def, &e), LF_OK);
        printf("  %s\n", lf_compiled_report(lf_lie_ode_def_compiled(&def)));
        lf_graph_free(g);
        lf_system *sys = lf_lie_ode_new(M, y0, &def, &e);
        assert_non_null(sys);
        assert_true(lf_system_has_jacobian(sys));
        for (int it = 0; it < 20; it++) {
            double y[3], a[3], b[3], Da[9], Db[9], Ha, Hb, ga[3], gb[3];
            rand_dir(r, y);
            assert_int_equal(lf_system_f(ref, 0.3, y, a, NULL), LF_OK);
            assert_int_equal(lf_system_f(sys, 0.3, y, b, NULL), LF_OK);
            assert_int_equal(lf_system_jacobian(ref, 0.3, y, Da, NULL), LF_OK);
            assert_int_equal(lf_system_jacobian(sys, 0.3, y, Db, NULL), LF_OK);
            assert_int_equal(lf_system_first_integral(ref, y, &Ha, NULL), LF_OK);
            assert_int_equal(lf_system_first_integral(sys, y, &Hb, NULL), LF_OK);
            assert_int_equal(lf_system_dH(ref, y, ga, NULL), LF_OK);
            assert_int_equal(lf_system_dH(sys, y, gb, NULL), LF_OK);
            worst = fmax(worst, relerr(Ha, Hb));
            for (int k = 0; k < 3; k++) worst = fmax(worst, fmax(relerr(a[k], b[k]), relerr(ga[k], gb[k])));
            for (int k = 0; k < 9; k++) worst = fmax(worst, relerr(Da[k], Db[k]));
        }
        lf_system_free(sys);
    }
    gsl_rng_free(r);
    lf_system_free(ref);
    lf_manifold_free(M);
    CHECK_LE(worst, 1e-14, "rigid_body_s2 from a graph vs built-in: f, Jacobian, H, dH");
}

/* The 2 x 2 magnetic needles as a pair kernel on a graph against lf_spheres_dipoles: V and gradient. */
static void test_spheres_graph(void **state)
{
    (void)state;
    const double spacing = 0.024, mass = 0.05, l = 0.02, moment = 0.1, kappa = 1e-7 * moment * moment;
    double q0[12], Mm[16] = {0}, pos[12], rr[18];
    int pairs[12], np = 0;
    gsl_rng *r = new_rng(12);
    for (int i = 0; i < 4; i++) {
        rand_dir(r, q0 + 3 * i);
        pos[3 * i] = spacing * (i % 2), pos[3 * i + 1] = spacing * (i / 2), pos[3 * i + 2] = 0;
        Mm[5 * i] = mass * l * l / 12;
    }
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++, np++) {
            pairs[2 * np] = i, pairs[2 * np + 1] = j;
            for (int k = 0; k < 3; k++) rr[3 * np + k] = pos[3 * j + k] - pos[3 * i + k];
        }
    lf_system *ref = lf_spheres_dipoles(2, 2, spacing, mass, l, moment, q0, NULL, NULL);
    assert_non_null(ref);
    lf_jit_opts o = jit_opts();
    double worst = 0;
    for (int backend = LF_BACKEND_NATIVE; backend <= LF_BACKEND_TAPE; backend++) {
        lf_graph *g = lf_graph_new(0, NULL);
        int qi[3], qj[3], d[3];
        inputs(g, 3, q0, qi);
        inputs(g, 3, q0 + 3, qj);
        inputs(g, 3, rr, d);
        int r2 = lf_gv3_dot(g, d, d), r3 = lf_g2(g, LF_G_MUL, r2, lf_g1(g, LF_G_SQRT, r2));
        int a = lf_gv3_dot(g, qi, d), b = lf_gv3_dot(g, qj, d);
        int cross = lf_g2(g, LF_G_DIV, lf_g2(g, LF_G_MUL, lf_graph_const(g, 3), lf_g2(g, LF_G_MUL, a, b)), r2);
        int u = lf_g2(g, LF_G_DIV, lf_g2(g, LF_G_MUL, lf_graph_param(g, kappa), lf_g2(g, LF_G_SUB, lf_gv3_dot(g, qi, qj), cross)), r3);
        lf_model_graph_opts mo = {backend, &o, 0};
        lf_spheres_def def;
        lf_error e;
        assert_int_equal(lf_spheres_graph_def(g, u, NULL, 4, np, pairs, rr, NULL, &kappa, &mo, &def, &e), LF_OK);
        printf("  %s\n", lf_compiled_report(lf_spheres_def_compiled(&def)));
        lf_graph_free(g);
        lf_system *sys = lf_spheres_new(4, Mm, &def, q0, NULL, &e);
        assert_non_null(sys);
        for (int it = 0; it < 20; it++) {
            double q[12], Va, Vb, ga[12], gb[12], scale = 0;
            for (int i = 0; i < 4; i++) rand_dir(r, q + 3 * i);
            assert_int_equal(lf_spheres_potential(ref, q, &Va, ga, NULL), LF_OK);
            assert_int_equal(lf_spheres_potential(sys, q, &Vb, gb, NULL), LF_OK);
            for (int k = 0; k < 12; k++) scale = fmax(scale, fabs(ga[k]));
            worst = fmax(worst, fabs(Va - Vb) / fmax(fabs(Va), 1e-300));
            for (int k = 0; k < 12; k++) worst = fmax(worst, fabs(ga[k] - gb[k]) / scale);
        }
        lf_system_free(sys);
    }
    gsl_rng_free(r);
    lf_system_free(ref);
    CHECK_LE(worst, 1e-13, "2 x 2 dipoles as a pair kernel on a graph vs built-in: V, gradient");
}

int main(void)
{
    snprintf(cache_dir, sizeof cache_dir, "/tmp/lieflow-test-graph-XXXXXX");
    if (!mkdtemp(cache_dir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builder),          cmocka_unit_test(test_derivatives),
        cmocka_unit_test(test_singular),         cmocka_unit_test(test_tape_and_native), cmocka_unit_test(test_chunked_native), cmocka_unit_test(test_native_compositions),
        cmocka_unit_test(test_codegen_text),     cmocka_unit_test(test_lie_maps),
        cmocka_unit_test(test_log_derivative),   cmocka_unit_test(test_potential_graph),
        cmocka_unit_test(test_lie_ode_graph),       cmocka_unit_test(test_spheres_graph),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rmtree(cache_dir);
    return rc;
}
