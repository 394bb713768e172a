/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — compiled functions: several outputs sets of one expression graph, evaluated natively
 * (generated C compiled and loaded through the code cache, native/jit_internal.h) or by the tape interpreter.
 *
 * A module is made from a graph, the layout of its inputs (lf_glayout, graph.h) and a list of functions,
 * each a set of output nodes (a model needs its value, its gradient, both, a Jacobian: one module,
 * one compiled file). The backend is chosen once:
 *   LF_BACKEND_AUTO: generated C, unless the functions are too large to compile quickly (more than
 *     LF_GMODULE_NATIVE_MAX operations in all) or the compiler or the cache refuses; then the tape,
 *     and the report says why;
 *   LF_BACKEND_NATIVE: generated C, or NULL with the reason ("no native code: ...");
 *   LF_BACKEND_TAPE: the tape interpreter.
 * Either way the numbers are the same to rounding: both run the operations of the same programs
 * (tests/c/test_graph.c). A module is read-only once made; evaluations may run in parallel. */
#ifndef LF_GRAPH_MODULE_H
#define LF_GRAPH_MODULE_H

#include "base/export.h"
#include <stddef.h>

#include "base/error.h"
#include "graph/graph.h"
#include "native/jit.h"

LF_BEGIN_DECLS

typedef enum { LF_BACKEND_AUTO = 0, LF_BACKEND_NATIVE = 1, LF_BACKEND_TAPE = 2 } lf_backend;

/* The operations beyond which AUTO/NATIVE use the tape: a first compile costs about 0.1 ms per
 * operation with gcc (large functions are emitted in chunks, so that this stays linear: 0.4 s for
 * 2,700 operations, 3 s for 27,000), so that the largest native module takes ~7 s once; cached
 * loads take microseconds at any size. */
#define LF_GMODULE_NATIVE_MAX 60000

typedef struct lf_gfunc_spec {
    int nout;
    const int *out;
} lf_gfunc_spec;

typedef struct lf_gmodule lf_gmodule;

/* A module computing nf functions of graph g (function k: the nodes f[k].out) with its inputs read
 * in the given layout, by the backend asked for (lf_backend; jit: the native backend's options, NULL
 * for the defaults). NULL with err filled when the graph failed, an output or the layout is bad, or
 * NATIVE was asked for and no native code could be made. lf_gmodule_free(NULL) is a no-op. */
lf_gmodule *lf_gmodule_new(const lf_graph *g, const lf_glayout *layout, int nf, const lf_gfunc_spec *f, int backend,
                           const lf_jit_opts *jit, lf_error *err);
void lf_gmodule_free(lf_gmodule *m);

/* Function f at inputs in[s] and parameters par into out (its nout numbers). work: NULL (a buffer
 * of the calling thread, grown once) or lf_gmodule_work_size(m) doubles. */
void lf_gmodule_eval(const lf_gmodule *m, int f, const double *const *in, const double *par, double *out,
                     double *work);
size_t lf_gmodule_work_size(const lf_gmodule *m);
/* Function f of a pair kernel over np pairs (i, j) = (pairs[2p], pairs[2p+1]): inputs in the
 * segments x + m i, x + m j, r + 3 p, sub + nsub p; its outputs [u if with_u] [k numbers for i]
 * [k numbers for j] added to *accu and acc[k i ..], acc[k j ..]. Native code runs the loop with
 * the kernel inlined. */
void lf_gmodule_eval_pairs(const lf_gmodule *m, int f, int np, const int *pairs, int mstate, const double *x,
                           const double *r, int nsub, const double *sub, const double *par, int with_u, int k,
                           double *acc, double *accu);
/* LF_BACKEND_NATIVE or LF_BACKEND_TAPE: what runs. */
int lf_gmodule_backend(const lf_gmodule *m);
/* What runs and why: "native (cached, 183 operations)", "native (compiled in 0.09 s, ...)",
 * "tape (412 operations)", "tape: no C compiler (LIEFLOW_CC=/x: not found)". */
const char *lf_gmodule_report(const lf_gmodule *m);
/* Operations of the largest function. */
int lf_gmodule_ops(const lf_gmodule *m);
/* The generated C source (made on first call for a tape module; NULL if that fails). */
const char *lf_gmodule_source(lf_gmodule *m);
/* Seconds spent compiling (0 when loaded from the cache) and loading. */
double lf_gmodule_compile_seconds(const lf_gmodule *m);
double lf_gmodule_load_seconds(const lf_gmodule *m);

LF_END_DECLS

#endif
