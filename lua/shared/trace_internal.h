/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — what the tracer's files share (shared/trace.c, lib/math.c): traced values and the
 * helpers that read a C function's arguments as graph nodes and push its result. Not public. */
#ifndef LF_LTRACE_INTERNAL_H
#define LF_LTRACE_INTERNAL_H

#include "shared/trace.h"

/* A traced value: 1, 3 or 9 nodes of its trace's graph (its uservalue 1 is the trace). */
typedef struct lfb_traced {
    int kind; /* 1 scalar, 3 vec3, 9 mat3 */
    int id[9];
} lfb_traced;
/* An operand as nodes: a number, a traced value, a vec3, a mat3 or a plain table of those. */
typedef struct lfb_opnd {
    int kind;
    int id[9];
} lfb_opnd;

/* The traced value at idx, or NULL. */
lfb_traced *lfb_tr_value(lua_State *L, int idx);
/* The trace at stack index tidx (raises if it is not one) and its graph. */
lfb_trace *lfb_tr_at(lua_State *L, int tidx);
lf_graph *lfb_tr_graph(lua_State *L, int tidx);
/* The trace of the first traced argument among 1..n, pushed; its stack index, or 0 if none. */
int lfb_tr_find(lua_State *L, int n);
/* Argument i read as n nodes of the trace at tidx (an error naming fn otherwise). */
void lfb_tr_args(lua_State *L, int tidx, int i, int n, int *ids, const char *fn);
/* Operand i of an operator op (any kind), as nodes. */
void lfb_tr_opnd(lua_State *L, int tidx, int i, lfb_opnd *o, const char *op);
/* Push a result of `kind` nodes: plain values when they are finite constants, else a traced value. */
int lfb_tr_result(lua_State *L, int tidx, int kind, const int *ids);
/* a ^ b with a traced operand (the __pow of traced values). */
int lfb_tr_pow(lua_State *L);

#endif
