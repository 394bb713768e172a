/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — expression graphs: the DAG of a traced function, built node by node.
 *
 * A graph holds scalar nodes in creation order (an operand is always older than its user, so the
 * order is topological). Inputs and parameters are leaves numbered in the order they are made;
 * every other node is an operation on older nodes. Building is eager: every node carries its value
 * at the point the inputs were given (the trace point), and, when the graph was given tangent
 * seeds, its derivatives along up to LF_GRAPH_MAXT directions (forward mode). While a graph is built:
 *   - common subexpressions are merged (hash-consing: the same operation on the same operands is
 *     the same node; + and * are commutative),
 *   - operations on constants are folded, and x + 0, x - 0, x * 1, x / 1, -(-x), select(const, a, b),
 *     select(c, a, a), x^1, x^2 -> x*x are simplified (each exact for every x; x * 0 is not folded,
 *     since inf * 0 is NaN),
 *   - dead nodes are left behind: a program (graph_prog_internal.h) keeps only what its outputs need.
 * Derivatives are graphs too (lf_graph_vjp / lf_graph_jvp build them as nodes, so a gradient can be
 * differentiated again and compiled like any other output); lf_graph_gradient computes one
 * numerically at the trace point without adding nodes.
 *
 * Singular points. Where an operation's partial derivative is infinite or undefined (sqrt and |x|
 * at 0, division by 0, log 0, asin at +-1, ...) and the adjoint or tangent reaching it is exactly
 * 0 — a value that does not change in that direction, or the branch select() did not take — the
 * derivative propagated is 0, not NaN (0 * inf): the guarded product LF_G_MULZ; so is a product of
 * an adjoint that came through such a partial (it may be infinite) with a partial that is exactly 0
 * (the norm of a vector at 0: sqrt's infinite partial meets x.x's partial 2x = 0). The numeric sweep
 * (lf_graph_gradient) skips the same products, so both give the same derivatives. This matches
 * forward-mode autodiff's convention (a subgradient where the function has a cone, the exact
 * derivative where a composite is smooth, e.g. |x|^2 or the SO(3) logarithm at the identity).
 *
 * A graph is not thread-safe while it is built; finished programs (graph_prog_internal.h) are read-only.
 * Node ids are ints >= 0; every builder function returns -1 once the graph has failed (out of
 * memory, too many nodes, an operand that is not a node), and keeps the first error. */
#ifndef LF_GRAPH_H
#define LF_GRAPH_H

#include "base/export.h"
#include <stdint.h>

#include "base/error.h"

LF_BEGIN_DECLS

/* Operations. Unary ops use a; binary a, b; LF_G_SELECT(a, b, c) = a != 0 ? b : c. Comparisons and
 * logic give 1 or 0. Values follow C's <math.h> (codegen emits the same calls). */
typedef enum lf_gop {
    LF_G_CONST = 0, /* value in the node */
    LF_G_INPUT,     /* k = input index */
    LF_G_PARAM,     /* k = parameter index */
    LF_G_NEG, LF_G_ADD, LF_G_SUB, LF_G_MUL, LF_G_DIV,
    LF_G_SQRT, LF_G_EXP, LF_G_LOG, LF_G_SIN, LF_G_COS, LF_G_TAN,
    LF_G_ASIN, LF_G_ACOS, LF_G_ATAN, LF_G_ATAN2, /* atan2(a, b) = atan2(y, x) */
    LF_G_POW, LF_G_ABS,
    LF_G_SIGN,      /* -1, 0 or 1 (the derivative of abs; 0 at 0) */
    LF_G_LT, LF_G_LE, LF_G_EQ, LF_G_NE, LF_G_AND, LF_G_OR, LF_G_NOT,
    LF_G_SELECT,
    LF_G_STUMPFF,   /* c_k(a), the Stumpff function (stumpff.h), k in 0..LF_STUMPFF_KMAX */
    LF_G_MULZ,      /* a == 0 ? 0 : a * b: an adjoint or tangent times a partial that may be infinite */
    LF_G_NOPS
} lf_gop;

/* 1 for ops with one operand, 2 with two, 3 for select, 0 for leaves; -1 for a bad op. */
int lf_gop_arity(int op);

#define LF_GRAPH_MAXT 3            /* tangent directions carried by eager forward mode */
#define LF_GRAPH_MAX_NODES 50000000 /* a graph refuses to grow beyond (a runaway trace) */

typedef struct lf_gnode {
    int32_t op, k;   /* lf_gop; index of an input/param, Stumpff index */
    int32_t a, b, c; /* operands (-1: none) */
} lf_gnode;

typedef struct lf_graph lf_graph;

/* How an evaluation reads a graph's inputs: in segments, so that callers pass pointers into their
 * own state instead of copying. Inputs 0, 1, ... are laid out one segment after the other (segment
 * s holds seglen[s] inputs), and an evaluation receives an array of segment pointers. */
#define LF_GPROG_MAXSEG 8

typedef struct lf_glayout {
    int nseg;
    int seglen[LF_GPROG_MAXSEG];
    /* optional: nodes computed elsewhere (hoisted out of a loop, e.g. what a pair kernel computes
     * from its fixed r_ij and the parameters alone), read as inputs from segment subseg, sub[k] at
     * offset k; nsub = 0: none */
    int nsub, subseg;
    const int *sub;
} lf_glayout;

/* An empty graph; with nt > 0 (<= LF_GRAPH_MAXT) every node also carries nt tangents. */
lf_graph *lf_graph_new(int nt, lf_error *err);
void lf_graph_free(lf_graph *g);

/* A new input / parameter leaf with its value at the trace point (and its tangent seed: nt numbers,
 * NULL for 0). Inputs and parameters are numbered 0, 1, ... in creation order. */
int lf_graph_input(lf_graph *g, double value, const double *tangent);
int lf_graph_param(lf_graph *g, double value);
int lf_graph_ninputs(const lf_graph *g);
int lf_graph_nparams(const lf_graph *g);
/* The node of input i (-1 if there is none). */
int lf_graph_input_node(const lf_graph *g, int i);

int lf_graph_const(lf_graph *g, double v);
/* op on a (, b (, c)); k for LF_G_STUMPFF. Leaves are refused (use the functions above). */
int lf_graph_op(lf_graph *g, int op, int a, int b, int c, int k);
static inline int lf_g1(lf_graph *g, int op, int a) { return lf_graph_op(g, op, a, -1, -1, 0); }
static inline int lf_g2(lf_graph *g, int op, int a, int b) { return lf_graph_op(g, op, a, b, -1, 0); }
static inline int lf_gselect(lf_graph *g, int cond, int a, int b) { return lf_graph_op(g, LF_G_SELECT, cond, a, b, 0); }
static inline int lf_gstumpff(lf_graph *g, int k, int s) { return lf_graph_op(g, LF_G_STUMPFF, s, -1, -1, k); }
/* Lua's math.min(a, b) / math.max(a, b): the first argument unless the second is strictly
 * smaller / larger (select on a comparison). */
int lf_graph_min(lf_graph *g, int a, int b);
int lf_graph_max(lf_graph *g, int a, int b);

/* Number of nodes; node i; its value at the trace point; its tangents (nt numbers, NULL if the
 * graph carries none). */
int lf_graph_size(const lf_graph *g);
int lf_graph_ntangents(const lf_graph *g);
const lf_gnode *lf_graph_node(const lf_graph *g, int i);
double lf_graph_value(const lf_graph *g, int i);
const double *lf_graph_tangent(const lf_graph *g, int i);
/* 1 if node i is a constant (its value in *v if v != NULL). */
int lf_graph_is_const(const lf_graph *g, int i, double *v);
/* 1 if the graph has a select node (derivatives then guard every product, see above). */
int lf_graph_has_select(const lf_graph *g);

/* The first error (LF_OK while the graph is sound); its message. */
int lf_graph_status(const lf_graph *g);
const lf_error *lf_graph_error(const lf_graph *g);
/* Mark the graph failed with a message (callers building on top of it: a trace refused). */
int lf_graph_fail(lf_graph *g, int code, const char *msg);

/* ---- derivatives */
/* Reverse mode, as nodes: res[j] = sum_i seed[i] d out[i] / d wrt[j] for nodes wrt (inputs,
 * parameters or any nodes: the derivative through everything that depends on them). seed NULL:
 * all ones. res[j] is the constant 0 where nothing depends on wrt[j]. Returns LF_OK or the graph's
 * error. */
int lf_graph_vjp(lf_graph *g, int nout, const int *out, const int *seed, int nwrt, const int *wrt, int *res);
/* Forward mode, as nodes: res[i] = sum_j d out[i] / d in[j] tan[j] (tan[j] nodes; -1 for 0). */
int lf_graph_jvp(lf_graph *g, int nin, const int *in, const int *tan, int nout, const int *out, int *res);
/* Reverse mode at the trace point (numbers, no nodes added): grad[j] = d out / d wrt[j]. */
int lf_graph_gradient(const lf_graph *g, int out, int nwrt, const int *wrt, double *grad, lf_error *err);

LF_END_DECLS

#endif
