/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — the tracer: Lua values that record what a Lua function computes into an
 * expression graph (core/graph/graph.h). Not public.
 *
 * A trace is a userdata ("lf.trace") owning a graph. Traced values ("lf.traced": a scalar, a vec3
 * or a mat3, i.e. 1, 3 or 9 graph nodes) carry their trace; arithmetic, the methods of vec3 and
 * mat3, lf.math and the maps of lf.so3 / lf.s2 / lf.quat (through the autodiff dispatch of the C
 * functions, shared/bind.h: LFB_DUAL) add nodes instead of computing numbers. Every node knows its value
 * at the point the inputs were given, so a trace is also reverse-mode automatic differentiation at
 * that point.
 *   LFB_TRACE_STRICT  a graph valid for every input (compiling a model): comparing a traced value
 *                     is an error at the user's line, naming the way out (lf.math.select, compile
 *                     = false);
 *   LFB_TRACE_POINT   a graph valid at the trace point only (differentiating at a point): a
 *                     comparison compares the values, math.floor gives a constant.
 * A trace ends (lfb_trace_end) when the traced function returns: a traced value kept beyond it (in
 * an upvalue, a global) is refused when used again. */
#ifndef LF_LTRACE_H
#define LF_LTRACE_H

#include "graph/graph.h"
#include "graph/graph_lie.h"
#include "model/model_graph.h"
#include "shared/bind.h"

#define LFB_TRACE "lf.trace"
#define LFB_TRACED "lf.traced"

enum { LFB_TRACE_STRICT = 0, LFB_TRACE_POINT = 1 };

typedef struct lfb_trace {
    lf_graph *g;
    int mode;
    int active;   /* values may be used (0 once the traced function has returned) */
    int ambient;  /* the trace of lf.autodiff.dual values (never ends) */
} lfb_trace;

/* Push a new trace; nt tangent directions (forward mode) per node. */
lfb_trace *lfb_trace_new(lua_State *L, int mode, int nt);
void lfb_trace_end(lfb_trace *t);
/* The traced value at idx (NULL if it is not one). */
int lfb_is_traced(lua_State *L, int idx);

/* A table without a metatable (read raw: no metamethod of the caller's runs), nothing pushed. */
int lfb_plain_table(lua_State *L, int idx);

/* Push traced values of trace t (the trace userdata at stack index tidx). */
void lfb_trace_push(lua_State *L, int tidx, int kind, const int *ids);
/* New input leaves (values v, n of them) pushed as a scalar (n = 1), vec3 (3) or mat3 (9). */
void lfb_trace_push_inputs(lua_State *L, int tidx, int n, const double *v);
/* New input leaves for one factor of a manifold, pushed in the shape lfb_push_factor uses. */
void lfb_trace_push_factor(lua_State *L, int tidx, const lf_factor *f, const double *p, int rm_as_vec3);
/* New parameter leaves for the parameters table at pidx (numbers, vec3, mat3 or tables of 3/9
 * numbers, keys sorted), pushed as a table of traced values; their values appended to *par
 * (*npar of them). NULL / nil params: an empty table. */
void lfb_trace_push_params(lua_State *L, int tidx, int pidx, double *par, int *npar, int maxpar);
/* Count and read the parameter values of the table at pidx in the order above (maxpar room). */
int lfb_params_read(lua_State *L, int pidx, double *par, int maxpar, const char *fn);
/* One parameter value at idx (named key in messages): its numbers into v, their count (1, 3, 9). */
int lfb_params_read_one(lua_State *L, int idx, const char *key, double *v, const char *fn);
#define LFB_MAXPAR 4096

/* Read n graph nodes of trace t from the value at idx: a number (n = 1), a traced value, a vec3 /
 * mat3 userdata, or a plain table of numbers / traced scalars (rows for 9). Returns 1, or 0 with a
 * description of what was found in msg. Reads raw: no metamethod runs. */
int lfb_trace_read(lua_State *L, int tidx, int idx, int n, int *ids, char *msg, size_t size);
/* Read an algebra element per factor of M (the shapes of lfb_read_algebra) into nodes xi. */
int lfb_trace_read_algebra(lua_State *L, int tidx, int idx, const lf_manifold *M, int *xi, const char *what,
                           lf_error *err);

/* Derivatives at a point: call the Lua function under registry reference ref with the traced
 * arguments push(L, tidx, ud) makes (new inputs; returns the number of arguments), read its result
 * with read(L, tidx, idx, ud, ids) into nout output nodes (returns LF_OK or fills err), and fill
 * value[nout] (if not NULL) and J[nout x nin] (if not NULL), nin = the inputs made, by nout reverse
 * sweeps. A Lua error is LF_ECALLBACK ("<what> raised an error: ..."). Leaves the stack as it was. */
typedef int (*lfb_trace_push_fn)(lua_State *L, int tidx, void *ud);
typedef int (*lfb_trace_read_fn)(lua_State *L, int tidx, int idx, void *ud, int *ids, lf_error *err);
int lfb_point_derivatives(lua_State *L, int ref, lfb_trace_push_fn push, lfb_trace_read_fn read, void *ud, int nout,
                          int nin, double *value, double *J, const char *what, lf_error *err);
/* A read function for one number. */
int lfb_trace_read_number(lua_State *L, int tidx, int idx, void *ud, int *ids, lf_error *err);

/* Make the Lua function at idx see lf.math as `math` (shared/trace.c: its _ENV re-joined to a proxy
 * whose math is lf.math and whose other names read and write the original environment), and
 * likewise the Lua functions it reaches through upvalues. Idempotent. */
void lfb_natural(lua_State *L, int idx);

void lfb_open_trace(lua_State *L); /* the metatables of traces and traced values, the dispatch table */


#endif
