/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of core/graph: the builder (merging, folding, simplifications), derivatives (symbolic
 * reverse and forward mode against the numeric sweep, central differences and each other), the tape
 * (against the eager values), generated native code (against the tape, bit for bit), the graph's
 * records (arity, nodes, counts, select, failure), pair loops (lf_gmodule_eval_pairs against a loop
 * of evaluations and the formula) and compile/load times, the trivialized Jacobian and gradient, and
 * the models built from graphs (against the C built-ins, a direct pair sum and central differences;
 * the compiled model's accessors and set_params); the Lie group maps on graphs are in
 * test_graph_lie.c. Every test prints the worst error it measured, then asserts it against its bound. */
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

/* ---------------------------------------------------------------- the graph's records */
/* lf_gop_arity against the operand slots lf_graph_op fills; sizes, counts, nodes, select, failure */
static void test_records(void **state)
{
    (void)state;
    const double seed[2] = {1, 0};
    lf_graph *g = lf_graph_new(2, NULL);
    assert_int_equal(lf_graph_ntangents(g), 2);
    assert_int_equal(lf_graph_size(g), 0);
    int x = lf_graph_input(g, 0.3, seed), y = lf_graph_input(g, 0.7, NULL), p = lf_graph_param(g, 2.5);
    int z = lf_graph_input(g, -0.2, NULL);
    assert_true(lf_graph_ninputs(g) == 3 && lf_graph_nparams(g) == 1 && lf_graph_size(g) == 4);
    assert_true(lf_graph_tangent(g, x)[0] == 1 && lf_graph_tangent(g, y)[0] == 0);
    const int leaves[3] = {LF_G_CONST, LF_G_INPUT, LF_G_PARAM};
    for (int i = 0; i < 3; i++) assert_int_equal(lf_gop_arity(leaves[i]), 0);
    assert_true(lf_graph_node(g, x)->op == LF_G_INPUT && lf_graph_node(g, z)->k == 2);
    assert_true(lf_graph_node(g, p)->op == LF_G_PARAM && lf_graph_node(g, p)->k == 0);
    assert_int_equal(lf_graph_has_select(g), 0);
    int counted = 0;
    for (int op = LF_G_NEG; op < LF_G_NOPS; op++) {
        const int ar = lf_gop_arity(op), size0 = lf_graph_size(g);
        assert_true(ar >= 1 && ar <= 3);
        const int n = lf_graph_op(g, op, x, ar >= 2 ? y : -1, ar == 3 ? z : -1, op == LF_G_STUMPFF ? 2 : 0);
        const lf_gnode *nd = lf_graph_node(g, n);
        assert_non_null(nd);
        assert_true(nd->op == op && nd->a == x); /* a new node whose operands are those the arity says */
        assert_int_equal(nd->b, ar >= 2 ? y : -1);
        assert_int_equal(nd->c, ar == 3 ? z : -1);
        assert_int_equal(lf_graph_size(g), size0 + 1);
        assert_int_equal(lf_graph_op(g, op, x, ar >= 2 ? y : -1, ar == 3 ? z : -1, op == LF_G_STUMPFF ? 2 : 0), n);
        assert_int_equal(lf_graph_size(g), size0 + 1); /* the same operation again: merged */
        if (op == LF_G_STUMPFF) assert_int_equal(nd->k, 2);
        counted += ar == 3;
    }
    assert_int_equal(counted, 1); /* select is the one ternary operation */
    assert_int_equal(lf_gop_arity(LF_G_SELECT), 3);
    assert_int_equal(lf_gop_arity(LF_G_NOPS), -1);
    assert_int_equal(lf_gop_arity(-1), -1);
    assert_int_equal(lf_graph_has_select(g), 1);
    assert_null(lf_graph_node(g, -1));
    assert_null(lf_graph_node(g, lf_graph_size(g)));
    /* a select on a constant condition is folded: no select node */
    lf_graph *h = lf_graph_new(0, NULL);
    int a = lf_graph_input(h, 1, NULL), b = lf_graph_input(h, 2, NULL);
    assert_int_equal(lf_gselect(h, lf_graph_const(h, 1), a, b), a);
    assert_int_equal(lf_graph_has_select(h), 0);
    assert_int_equal(lf_graph_ntangents(h), 0);
    /* failing a graph: the first error stays, every builder then returns -1 */
    assert_int_equal(lf_graph_fail(h, LF_ECALLBACK, "trace refused: boom"), -1);
    assert_int_equal(lf_graph_status(h), LF_ECALLBACK);
    assert_string_equal(lf_graph_error(h)->msg, "trace refused: boom");
    assert_int_equal(lf_graph_fail(h, LF_EINVAL, "second"), -1);
    assert_string_equal(lf_graph_error(h)->msg, "trace refused: boom");
    assert_int_equal(lf_graph_input(h, 3, NULL), -1);
    assert_int_equal(lf_g2(h, LF_G_ADD, a, b), -1);
    assert_int_equal(lf_graph_const(h, 3), -1);
    lf_graph_free(h);
    lf_graph_free(g);
}

/* ---------------------------------------------------------------- pair loops, timings */
/* u(x_i, x_j, r) = kappa (x_i . x_j) / |r|^3 and its gradients: lf_gmodule_eval_pairs adds them into
 * the accumulators like a loop of lf_gmodule_eval, bit for bit, and agrees with the formula */
static void test_eval_pairs(void **state)
{
    (void)state;
    enum { N = 5, NP = N * (N - 1) / 2 };
    gsl_rng *r = new_rng(31);
    double x[3 * N], rr[3 * NP], kappa = 0.7;
    int pairs[2 * NP], np = 0;
    for (int i = 0; i < 3 * N; i++) x[i] = gsl_ran_ugaussian(r);
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++, np++) {
            pairs[2 * np] = i, pairs[2 * np + 1] = j;
            for (int c = 0; c < 3; c++) rr[3 * np + c] = 1 + gsl_rng_uniform(r);
        }
    lf_graph *g = lf_graph_new(0, NULL);
    int in[9], out[7];
    graph_inputs(g, 9, x, in); /* x_i, x_j, r: values at the trace point only */
    const int r2 = lf_gv3_dot(g, in + 6, in + 6), r3 = lf_g2(g, LF_G_MUL, r2, lf_g1(g, LF_G_SQRT, r2));
    out[0] = lf_g2(g, LF_G_DIV, lf_g2(g, LF_G_MUL, lf_graph_param(g, kappa), lf_gv3_dot(g, in, in + 3)), r3);
    assert_int_equal(lf_graph_vjp(g, 1, out, NULL, 6, in, out + 1), LF_OK);
    lf_glayout layout = {3, {3, 3, 3}, 0, 0, NULL};
    lf_gfunc_spec spec[2] = {{7, out}, {6, out + 1}};
    lf_jit_opts o = jit_opts();
    double ref[1 + 3 * N];
    for (int i = 0; i <= 3 * N; i++) ref[i] = 1; /* the accumulators start at 1: eval_pairs adds */
    for (int p = 0; p < NP; p++) {               /* the formula */
        const double *xi = x + 3 * pairs[2 * p], *xj = x + 3 * pairs[2 * p + 1], *rp = rr + 3 * p;
        const double k3 = kappa / pow(lf_v3_dot(rp, rp), 1.5);
        ref[0] += k3 * lf_v3_dot(xi, xj);
        lf_v3_axpy(ref + 1 + 3 * pairs[2 * p], k3, xj, ref + 1 + 3 * pairs[2 * p]);
        lf_v3_axpy(ref + 1 + 3 * pairs[2 * p + 1], k3, xi, ref + 1 + 3 * pairs[2 * p + 1]);
    }
    double worst = 0;
    for (int backend = LF_BACKEND_NATIVE; backend <= LF_BACKEND_TAPE; backend++) {
        lf_gmodule *m = lf_gmodule_new(g, &layout, 2, spec, backend, &o, NULL);
        assert_non_null(m);
        double accu = 1, acc[3 * N], loopu = 1, loop[3 * N], acc2[3 * N], val[7];
        for (int i = 0; i < 3 * N; i++) acc[i] = loop[i] = acc2[i] = 1;
        lf_gmodule_eval_pairs(m, 0, NP, pairs, 3, x, rr, 0, NULL, &kappa, 1, 3, acc, &accu);
        lf_gmodule_eval_pairs(m, 1, NP, pairs, 3, x, rr, 0, NULL, &kappa, 0, 3, acc2, NULL); /* without u */
        for (int p = 0; p < NP; p++) {
            const double *segs[3] = {x + 3 * pairs[2 * p], x + 3 * pairs[2 * p + 1], rr + 3 * p};
            lf_gmodule_eval(m, 0, segs, &kappa, val, NULL);
            loopu += val[0];
            for (int c = 0; c < 3; c++)
                loop[3 * pairs[2 * p] + c] += val[1 + c], loop[3 * pairs[2 * p + 1] + c] += val[4 + c];
        }
        printf("  %s: pair loop U = %.17g (loop of evaluations %.17g, formula %.17g)\n",
               backend == LF_BACKEND_NATIVE ? "native" : "tape", accu, loopu, ref[0]);
        assert_true(accu == loopu);
        assert_memory_equal(acc, loop, sizeof acc);
        assert_memory_equal(acc2, loop, sizeof acc2);
        worst = fmax(worst, fabs(accu - ref[0]) / fabs(ref[0]));
        worst = fmax(worst, maxdiff(3 * N, acc, ref + 1) / maxabs(3 * N, ref + 1));
        lf_gmodule_free(m);
    }
    CHECK_LE(worst, 1e-15, "pair loop vs the formula, relative (native and tape)");
    /* timings: compiled once, then loaded from the cache; the tape neither */
    lf_gmodule *first = lf_gmodule_new(g, &layout, 1, spec, LF_BACKEND_NATIVE, &o, NULL);
    lf_gmodule *again = lf_gmodule_new(g, &layout, 1, spec, LF_BACKEND_NATIVE, &o, NULL);
    lf_gmodule *tape = lf_gmodule_new(g, &layout, 1, spec, LF_BACKEND_TAPE, &o, NULL);
    printf("  %s: compile %.3f s, load %.2e s; %s: compile %g s, load %.2e s\n", lf_gmodule_report(first),
           lf_gmodule_compile_seconds(first), lf_gmodule_load_seconds(first), lf_gmodule_report(again),
           lf_gmodule_compile_seconds(again), lf_gmodule_load_seconds(again));
    assert_true(lf_gmodule_compile_seconds(first) > 0 && lf_gmodule_load_seconds(first) > 0);
    assert_non_null(strstr(lf_gmodule_report(again), "cached"));
    assert_true(lf_gmodule_compile_seconds(again) == 0 && lf_gmodule_load_seconds(again) > 0);
    assert_true(lf_gmodule_compile_seconds(tape) == 0 && lf_gmodule_load_seconds(tape) == 0);
    lf_gmodule_free(first);
    lf_gmodule_free(again);
    lf_gmodule_free(tape);
    lf_graph_free(g);
    gsl_rng_free(r);
}

/* ---------------------------------------------------------------- trivialized derivatives */
/* D = J V and g = V^T ge with V the velocities of the action (lf_manifold_velocity of the unit
 * algebra vectors), on s2 x so3 x r2 x s3, with exactly the documented work (np nd + np + nd
 * doubles, a guard zone behind); g_k = d/de ge . act(e e_k, y) by central differences. */
static void test_trivialize(void **state)
{
    (void)state;
    const lf_factor_kind kinds[4] = {LF_S2, LF_SO3, LF_RM, LF_S3};
    const int dims[4] = {0, 0, 2, 0};
    lf_manifold *M = lf_manifold_new(4, kinds, dims, LF_RIGHT_TRIVIALIZED, NULL);
    assert_non_null(M);
    enum { NP = 18, ND = 11, NW = NP * ND + NP + ND };
    assert_true(lf_manifold_nparam(M) == NP && lf_manifold_ndim(M) == ND);
    gsl_rng *r = new_rng(32);
    double y[NP], J[ND * NP], ge[NP], V[NP * ND], D[ND * ND], g[ND], work[NW + 16];
    rand_dir(r, y);
    lf_so3_random(gsl_rng_get(r), y + 3, NULL);
    y[12] = 0.3, y[13] = -1.2;
    const double q[4] = {0.5, -0.5, 0.5, 0.5};
    memcpy(y + 14, q, sizeof q);
    for (int i = 0; i < ND * NP; i++) J[i] = gsl_ran_ugaussian(r);
    for (int i = 0; i < NP; i++) ge[i] = gsl_ran_ugaussian(r);
    for (int j = 0; j < ND; j++) {
        double e[ND] = {0}, col[NP];
        e[j] = 1;
        lf_manifold_velocity(M, y, e, col);
        for (int p = 0; p < NP; p++) V[p * ND + j] = col[p];
    }
    for (int i = 0; i < NW + 16; i++) work[i] = -3.5;
    lf_lie_trivialize_jacobian(M, y, J, D, work);
    lf_lie_trivialize_gradient(M, y, ge, g, work);
    int guard = 1;
    for (int i = NW; i < NW + 16; i++) guard &= work[i] == -3.5;
    assert_true(guard);
    double wD = 0, wg = 0, wfd = 0;
    for (int i = 0; i < ND; i++)
        for (int j = 0; j < ND; j++) {
            double s = 0;
            for (int p = 0; p < NP; p++) s += J[i * NP + p] * V[p * ND + j];
            wD = fmax(wD, fabs(D[i * ND + j] - s) / fmax(1, fabs(s)));
        }
    for (int j = 0; j < ND; j++) {
        double s = 0, e[ND] = {0}, yp[NP], ym[NP], fp = 0, fm = 0;
        for (int p = 0; p < NP; p++) s += ge[p] * V[p * ND + j];
        wg = fmax(wg, fabs(g[j] - s) / fmax(1, fabs(s)));
        const double h = 1e-5;
        memcpy(yp, y, sizeof y);
        memcpy(ym, y, sizeof y);
        e[j] = h;
        lf_manifold_act(M, e, yp);
        e[j] = -h;
        lf_manifold_act(M, e, ym);
        for (int p = 0; p < NP; p++) fp += ge[p] * yp[p], fm += ge[p] * ym[p];
        wfd = fmax(wfd, fabs((fp - fm) / (2 * h) - g[j]));
    }
    CHECK_LE(wD, 1e-15, "trivialized Jacobian vs J V (s2 x so3 x r2 x s3)");
    CHECK_LE(wg, 1e-15, "trivialized gradient vs V^T ge");
    CHECK_LE(wfd, 1e-9, "trivialized gradient vs d/de ge . act(e e_k, y), central differences");
    lf_manifold_free(M);
    gsl_rng_free(r);
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
    double worst_U = 0, worst_tau = 0, worst_K = 0, worst_par = 0;
    for (int backend = LF_BACKEND_NATIVE; backend <= LF_BACKEND_TAPE; backend++) {
        lf_graph *g = lf_graph_new(0, NULL);
        int R[9];
        graph_inputs(g, 9, R0, R);
        int U = stress_graph(g, R, alpha, Rm);
        lf_model_graph_opts mo = {backend, &o, 1};
        lf_error e;
        lf_potential *p = lf_potential_graph(g, U, NULL, 1, &alpha, &mo, &e);
        assert_non_null(p);
        lf_compiled *c = lf_potential_compiled(p);
        printf("  %s\n", lf_compiled_report(c));
        assert_int_equal(lf_gmodule_backend(lf_compiled_module(c)), backend);
        assert_string_equal(lf_compiled_report(c), lf_gmodule_report(lf_compiled_module(c)));
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
        /* set_params: alpha -> 0.55 is the built-in of alpha = 0.55 (U at a fixed R changes) */
        const double alpha2 = 0.55;
        lf_potential *ref2 = lf_potential_stress(alpha2, Rm, NULL);
        double U0, U1, U2;
        lf_potential_eval(p, 1, R0, &U0, NULL, NULL);
        assert_int_equal(lf_compiled_set_params(c, 1, &alpha2, NULL), LF_OK);
        lf_potential_eval(p, 1, R0, &U1, NULL, NULL);
        lf_potential_eval(ref2, 1, R0, &U2, NULL, NULL);
        printf("  U(R0): %.15g at alpha = 0.3, %.15g after set_params(0.55) (built-in: %.15g)\n", U0, U1, U2);
        assert_true(U1 != U0);
        worst_par = fmax(worst_par, relerr(U1, U2));
        lf_potential_free(ref2);
        lf_potential_free(p);
    }
    assert_null(lf_potential_compiled(ref));
    lf_potential_free(ref);
    gsl_rng_free(r);
    CHECK_LE(worst_U, 1e-14, "stress potential on a graph vs built-in: U");
    CHECK_LE(worst_tau, 1e-13, "stress potential on a graph vs built-in: torque");
    CHECK_LE(worst_K, 1e-7, "torque Jacobian vs central differences of the built-in torque");
    CHECK_LE(worst_par, 1e-14, "U after set_params(alpha) vs the built-in of that alpha");
}

/* ---------------------------------------------------------------- a pair potential */
/* u(R_i, R_j, r) = kappa / |r|^3 [a_i . a_j - 3 (a_i . r)(a_j . r) / |r|^2], a = R e3: a dipole kernel (kappa / |r|^3
 * and r / |r| are hoisted out of the pair loop) */
static int dipole_kernel(lf_graph *g, const int *Ri, const int *Rj, const int *r, int kappa)
{
    const int ai[3] = {Ri[2], Ri[5], Ri[8]}, aj[3] = {Rj[2], Rj[5], Rj[8]};
    const int r2 = lf_gv3_dot(g, r, r), r3 = lf_g2(g, LF_G_MUL, r2, lf_g1(g, LF_G_SQRT, r2));
    const int c = lf_g2(
        g, LF_G_DIV,
        lf_g2(g, LF_G_MUL, lf_g2(g, LF_G_MUL, lf_graph_const(g, 3), lf_gv3_dot(g, ai, r)), lf_gv3_dot(g, aj, r)), r2);
    return lf_g2(g, LF_G_MUL, lf_g2(g, LF_G_DIV, kappa, r3), lf_g2(g, LF_G_SUB, lf_gv3_dot(g, ai, aj), c));
}

static double dipole_u(const double *Ri, const double *Rj, const double *r, double kappa)
{
    const double ai[3] = {Ri[2], Ri[5], Ri[8]}, aj[3] = {Rj[2], Rj[5], Rj[8]}, r2 = lf_v3_dot(r, r);
    return kappa / (r2 * sqrt(r2)) * (lf_v3_dot(ai, aj) - 3 * lf_v3_dot(ai, r) * lf_v3_dot(aj, r) / r2);
}

enum { NB = 3, NPAIR = 3 };
static const int pair_list[2 * NPAIR] = {0, 1, 1, 2, 0, 2};

/* the same potential as one graph of the 27 rotations' entries */
static lf_potential *dipoles_full(const double *R0, const double *rr, double kappa, int backend, lf_jit_opts *o)
{
    lf_graph *g = lf_graph_new(0, NULL);
    int R[9 * NB], r[3 * NPAIR];
    graph_inputs(g, 9 * NB, R0, R);
    const int k = lf_graph_param(g, kappa);
    int U = lf_graph_const(g, 0);
    for (int p = 0; p < NPAIR; p++) {
        for (int c = 0; c < 3; c++) r[3 * p + c] = lf_graph_const(g, rr[3 * p + c]);
        U = lf_g2(g, LF_G_ADD, U,
                  dipole_kernel(g, R + 9 * pair_list[2 * p], R + 9 * pair_list[2 * p + 1], r + 3 * p, k));
    }
    lf_model_graph_opts mo = {backend, o, 1};
    lf_potential *pot = lf_potential_graph(g, U, NULL, NB, &kappa, &mo, NULL);
    lf_graph_free(g);
    return pot;
}

/* lf_potential_pairs: U against the direct sum, torques and Jacobian against the potential of one
 * graph, torques against central differences of U; with an inner potential U adds; the compiled
 * model's accessors; set_params changes kappa (and the hoisted kappa / |r|^3 with it) */
static void test_pair_potential(void **state)
{
    (void)state;
    gsl_rng *r = new_rng(33);
    double R[9 * NB], rr[3 * NPAIR], kappa = 1.5, ker[21];
    for (int b = 0; b < NB; b++) lf_so3_random(gsl_rng_get(r), R + 9 * b, NULL);
    for (int i = 0; i < 3 * NPAIR; i++) rr[i] = 1 + gsl_ran_ugaussian(r);
    lf_jit_opts o = jit_opts();
    const double B[3] = {0.1, -0.2, 0.3}, mv[3] = {0, 0, 1};
    lf_potential *field = lf_potential_field(B, mv, NULL);
    double w_U = 0, w_tau = 0, w_K = 0, w_fd = 0, w_par = 0;
    for (int backend = LF_BACKEND_NATIVE; backend <= LF_BACKEND_TAPE; backend++) {
        lf_graph *g = lf_graph_new(0, NULL);
        int in[21];
        memcpy(ker, R, 18 * sizeof(double));
        memcpy(ker + 18, rr, 3 * sizeof(double));
        graph_inputs(g, 21, ker, in);
        const int u = dipole_kernel(g, in, in + 9, in + 18, lf_graph_param(g, kappa));
        lf_model_graph_opts mo = {backend, &o, 1};
        lf_error e;
        lf_potential *p = lf_potential_pairs(g, u, NB, NPAIR, pair_list, rr, NULL, &kappa, &mo, &e);
        lf_potential *pi = lf_potential_pairs(g, u, NB, NPAIR, pair_list, rr, field, &kappa, &mo, &e);
        lf_potential *full = dipoles_full(R, rr, kappa, backend, &o);
        assert_true(p && pi && full);
        lf_graph_free(g);
        lf_compiled *c = lf_potential_compiled(p);
        assert_non_null(c);
        assert_int_equal(lf_gmodule_backend(lf_compiled_module(c)), backend);
        assert_string_equal(lf_compiled_report(c), lf_gmodule_report(lf_compiled_module(c)));
        printf("  pairs: %s\n", lf_compiled_report(c));
        assert_true(lf_potential_has_jacobian(p) && lf_potential_has_jacobian(full));
        for (int it = 0; it < 20; it++) {
            double Rt[9 * NB], U1, U2, U3, Uf, t1[3 * NB], t2[3 * NB], K1[81], K2[81], direct = 0;
            for (int b = 0; b < NB; b++) lf_so3_random(gsl_rng_get(r), Rt + 9 * b, NULL);
            for (int q = 0; q < NPAIR; q++)
                direct += dipole_u(Rt + 9 * pair_list[2 * q], Rt + 9 * pair_list[2 * q + 1], rr + 3 * q, kappa);
            assert_int_equal(lf_potential_eval(p, NB, Rt, &U1, t1, NULL), LF_OK);
            assert_int_equal(lf_potential_eval(full, NB, Rt, &U2, t2, NULL), LF_OK);
            assert_int_equal(lf_potential_eval(pi, NB, Rt, &U3, NULL, NULL), LF_OK);
            assert_int_equal(lf_potential_eval(field, NB, Rt, &Uf, NULL, NULL), LF_OK);
            w_U = fmax(w_U, fmax(fabs(U1 - direct), fabs(U3 - (U1 + Uf))) / fabs(direct));
            w_tau = fmax(w_tau, maxdiff(3 * NB, t1, t2) / maxabs(3 * NB, t2));
            assert_int_equal(lf_potential_jacobian(p, NB, Rt, K1, NULL), LF_OK);
            assert_int_equal(lf_potential_jacobian(full, NB, Rt, K2, NULL), LF_OK);
            w_K = fmax(w_K, maxdiff(81, K1, K2) / maxabs(81, K2));
            for (int b = 0; b < NB; b++) /* tau . e_m = -d/de U(R_b exp(e hat e_m)) */
                for (int m = 0; m < 3; m++) {
                    double Rp[9 * NB], Rm[9 * NB], x[3] = {0, 0, 0}, Up, Um;
                    memcpy(Rp, Rt, sizeof Rp);
                    memcpy(Rm, Rt, sizeof Rm);
                    x[m] = 1e-6;
                    lf_so3_rmul_exp(Rp + 9 * b, x);
                    x[m] = -1e-6;
                    lf_so3_rmul_exp(Rm + 9 * b, x);
                    lf_potential_eval(p, NB, Rp, &Up, NULL, NULL);
                    lf_potential_eval(p, NB, Rm, &Um, NULL, NULL);
                    w_fd = fmax(w_fd, fabs(-(Up - Um) / 2e-6 - t1[3 * b + m]) / maxabs(3 * NB, t1));
                }
        }
        /* set_params: kappa -> 2.5 kappa scales the pair sum (hoisted kappa / |r|^3 recomputed) */
        double U0, U1, k2 = 2.5 * kappa;
        lf_error e2;
        lf_potential_eval(p, NB, R, &U0, NULL, NULL);
        assert_int_equal(lf_compiled_set_params(c, 1, &k2, &e2), LF_OK);
        lf_potential_eval(p, NB, R, &U1, NULL, NULL);
        w_par = fmax(w_par, fabs(U1 - 2.5 * U0) / fabs(U1));
        assert_int_equal(lf_compiled_set_params(c, 2, &k2, &e2), LF_EINVAL);
        printf("  %s\n", e2.msg);
        const double nan_ = NAN;
        assert_int_equal(lf_compiled_set_params(c, 1, &nan_, &e2), LF_EINVAL);
        lf_potential_free(p);
        lf_potential_free(pi);
        lf_potential_free(full);
    }
    CHECK_LE(w_U, 1e-14, "pair potential U vs the direct sum (and + inner), relative");
    CHECK_LE(w_tau, 1e-14, "pair potential torques vs one graph's, relative");
    CHECK_LE(w_K, 1e-13, "pair potential torque Jacobian vs one graph's, relative");
    CHECK_LE(w_fd, 1e-8, "pair potential torques vs -dU/de (central differences)");
    CHECK_LE(w_par, 1e-15, "U after set_params(2.5 kappa) vs 2.5 U");
    /* built-in and NULL models */
    assert_null(lf_potential_compiled(field));
    assert_null(lf_compiled_report(NULL));
    assert_null(lf_compiled_module(NULL));
    assert_int_equal(lf_compiled_set_params(NULL, 1, &kappa, NULL), LF_EINVAL);
    lf_error e;
    lf_graph *g = lf_graph_new(0, NULL);
    int in[21];
    graph_inputs(g, 21, ker, in);
    const int bad_pairs[2] = {1, 1};
    assert_null(lf_potential_pairs(g, in[0], NB, 1, bad_pairs, rr, NULL, NULL, NULL, &e));
    printf("  %s\n", e.msg);
    lf_graph_free(g);
    lf_potential_free(field);
    gsl_rng_free(r);
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
    const double I2[3] = {1.5, 2.5, 0.8};
    lf_system *ref2 = lf_lie_ode_builtin("rigid_body_s2", M, y0, I2, NULL);
    double worst = 0, worst_par = 0;
    for (int backend = LF_BACKEND_NATIVE; backend <= LF_BACKEND_TAPE; backend++) {
        lf_graph *g = lf_graph_new(0, NULL);
        lf_graph_input(g, 0, NULL); /* t */
        int m[3], xi[3], H = lf_graph_const(g, 0);
        graph_inputs(g, 3, y0, m);
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
        lf_compiled *c = lf_lie_ode_def_compiled(&def);
        printf("  %s\n", lf_compiled_report(c));
        assert_int_equal(lf_gmodule_backend(lf_compiled_module(c)), backend);
        lf_graph_free(g);
        lf_system *sys = lf_lie_ode_new(M, y0, &def, &e);
        assert_non_null(sys);
        assert_ptr_equal(lf_system_compiled(sys), c); /* the system runs the definition's model */
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
        /* set_params: the inertias I -> I2 give the built-in of I2 */
        assert_int_equal(lf_compiled_set_params(lf_system_compiled(sys), 3, I2, NULL), LF_OK);
        for (int it = 0; it < 5; it++) {
            double y[3], a[3], b[3];
            rand_dir(r, y);
            assert_int_equal(lf_system_f(ref2, 0.3, y, a, NULL), LF_OK);
            assert_int_equal(lf_system_f(sys, 0.3, y, b, NULL), LF_OK);
            for (int k = 0; k < 3; k++) worst_par = fmax(worst_par, relerr(a[k], b[k]));
        }
        lf_system_free(sys);
    }
    assert_null(lf_system_compiled(ref));
    lf_system_free(ref2);
    gsl_rng_free(r);
    lf_system_free(ref);
    lf_manifold_free(M);
    CHECK_LE(worst, 1e-14, "rigid_body_s2 from a graph vs built-in: f, Jacobian, H, dH");
    CHECK_LE(worst_par, 1e-15, "f after set_params(I2) vs the built-in of I2");
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
        graph_inputs(g, 3, q0, qi);
        graph_inputs(g, 3, q0 + 3, qj);
        graph_inputs(g, 3, rr, d);
        int r2 = lf_gv3_dot(g, d, d), r3 = lf_g2(g, LF_G_MUL, r2, lf_g1(g, LF_G_SQRT, r2));
        int a = lf_gv3_dot(g, qi, d), b = lf_gv3_dot(g, qj, d);
        int cross = lf_g2(g, LF_G_DIV, lf_g2(g, LF_G_MUL, lf_graph_const(g, 3), lf_g2(g, LF_G_MUL, a, b)), r2);
        int u = lf_g2(g, LF_G_DIV, lf_g2(g, LF_G_MUL, lf_graph_param(g, kappa), lf_g2(g, LF_G_SUB, lf_gv3_dot(g, qi, qj), cross)), r3);
        lf_model_graph_opts mo = {backend, &o, 0};
        lf_spheres_def def;
        lf_error e;
        assert_int_equal(lf_spheres_graph_def(g, u, NULL, 4, np, pairs, rr, NULL, &kappa, &mo, &def, &e), LF_OK);
        lf_compiled *c = lf_spheres_def_compiled(&def);
        printf("  %s\n", lf_compiled_report(c));
        assert_int_equal(lf_gmodule_backend(lf_compiled_module(c)), backend);
        lf_graph_free(g);
        lf_system *sys = lf_spheres_new(4, Mm, &def, q0, NULL, &e);
        assert_non_null(sys);
        assert_ptr_equal(lf_system_compiled(sys), c);
        for (int it = 0; it < 20; it++) {
            double q[12], Va, Vb, ga[12], gb[12], scale = 0;
            for (int i = 0; i < 4; i++) rand_dir(r, q + 3 * i);
            assert_int_equal(lf_spheres_potential(ref, q, &Va, ga, NULL), LF_OK);
            assert_int_equal(lf_spheres_potential(sys, q, &Vb, gb, NULL), LF_OK);
            for (int k = 0; k < 12; k++) scale = fmax(scale, fabs(ga[k]));
            worst = fmax(worst, fabs(Va - Vb) / fmax(fabs(Va), 1e-300));
            for (int k = 0; k < 12; k++) worst = fmax(worst, fabs(ga[k] - gb[k]) / scale);
        }
        /* set_params: 3 kappa triples V */
        const double k3 = 3 * kappa;
        double Va, Vb;
        assert_int_equal(lf_compiled_set_params(c, 1, &k3, NULL), LF_OK);
        assert_int_equal(lf_spheres_potential(ref, q0, &Va, NULL, NULL), LF_OK);
        assert_int_equal(lf_spheres_potential(sys, q0, &Vb, NULL, NULL), LF_OK);
        worst = fmax(worst, fabs(3 * Va - Vb) / fabs(Vb));
        lf_system_free(sys);
    }
    gsl_rng_free(r);
    assert_null(lf_system_compiled(ref)); /* a built-in */
    lf_system_free(ref);
    CHECK_LE(worst, 1e-13,
             "2 x 2 dipoles as a pair kernel on a graph vs built-in: V, gradient (and 3 V after set_params(3 kappa))");
}

int main(void)
{
    if (!test_cache_make("graph")) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builder),        cmocka_unit_test(test_derivatives),
        cmocka_unit_test(test_singular),       cmocka_unit_test(test_tape_and_native),
        cmocka_unit_test(test_chunked_native), cmocka_unit_test(test_native_compositions),
        cmocka_unit_test(test_codegen_text),   cmocka_unit_test(test_potential_graph),
        cmocka_unit_test(test_lie_ode_graph),  cmocka_unit_test(test_spheres_graph),
        cmocka_unit_test(test_records),        cmocka_unit_test(test_eval_pairs),
        cmocka_unit_test(test_trivialize),     cmocka_unit_test(test_pair_potential),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    test_cache_remove();
    return rc;
}
