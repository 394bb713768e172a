/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow (internal) — programs: the part of an expression graph some outputs need, ready to evaluate.
 *
 * A program keeps the nodes its outputs depend on (dead nodes dropped), in graph order, and gives
 * them slots of a work array, reusing a slot once its value has had its last use. It is evaluated
 * by the tape interpreter (lf_gprog_eval: a loop over flat instructions, no allocation) or turned
 * into C (graph_codegen_internal.h). Programs are read-only once made: any number of threads may evaluate
 * one at the same time, each with its own work array.
 *
 * Inputs are read in segments (lf_glayout, graph.h); parameters are one array. */
#ifndef LF_GRAPH_PROG_INTERNAL_H
#define LF_GRAPH_PROG_INTERNAL_H

#include <stddef.h>

#include "graph/graph.h"

/* One instruction: dst = op(a, b, c) on slots. */
typedef struct lf_ginstr {
    int32_t op, k;
    int32_t dst, a, b, c;
} lf_ginstr;

typedef struct lf_gprog lf_gprog;

/* The program computing out[0..nout) of g with its inputs in the given layout (which must cover
 * every input the outputs need). NULL with err filled on a failed graph, a bad layout or output. */
lf_gprog *lf_gprog_new(const lf_graph *g, const lf_glayout *layout, int nout, const int *out, lf_error *err);
void lf_gprog_free(lf_gprog *p);

/* Operations (nodes that are neither leaves nor constants), slots of the work array, outputs,
 * parameters read (the highest index + 1). */
int lf_gprog_nops(const lf_gprog *p);
int lf_gprog_nslots(const lf_gprog *p);
int lf_gprog_nout(const lf_gprog *p);

/* y[i] = output i at inputs in[s][...] and parameters par; work: lf_gprog_nslots(p) doubles. No
 * check of the results (callers check what they need finite). */
void lf_gprog_eval(const lf_gprog *p, const double *const *in, const double *par, double *y, double *work);

/* Reading a program (the code generator): its loads, constants and instructions in order.
 * A load puts input (seg, off) or parameter off (seg = -1) into slot dst. */
typedef struct lf_gload {
    int32_t seg, off, dst;
} lf_gload;
int lf_gprog_nloads(const lf_gprog *p);
const lf_gload *lf_gprog_loads(const lf_gprog *p);
int lf_gprog_nconsts(const lf_gprog *p); /* constants occupy slots 0 .. nconsts-1 */
const double *lf_gprog_consts(const lf_gprog *p);
const lf_ginstr *lf_gprog_instrs(const lf_gprog *p);
const int32_t *lf_gprog_out_slots(const lf_gprog *p);

#endif
