/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow (internal) — the value and the partial derivatives of every graph operation, in one
 * place: the eager values of the builder, the tape interpreter and the numeric sweeps use these
 * functions, and the code generator (graph_codegen.c) emits the same expressions, so that every
 * backend computes the same numbers. */
#ifndef LF_GRAPH_OPS_INTERNAL_H
#define LF_GRAPH_OPS_INTERNAL_H

#include <math.h>

#include "graph/graph.h"
#include "graph/stumpff.h"

static inline double lf_gop_sign(double a) { return (double)((a > 0) - (a < 0)); }

/* The value of op on a, b, c (k: the Stumpff index). */
static inline double lf_gop_value(int op, int k, double a, double b, double c)
{
    switch (op) {
    case LF_G_NEG: return -a;
    case LF_G_ADD: return a + b;
    case LF_G_SUB: return a - b;
    case LF_G_MUL: return a * b;
    case LF_G_DIV: return a / b;
    case LF_G_SQRT: return sqrt(a);
    case LF_G_EXP: return exp(a);
    case LF_G_LOG: return log(a);
    case LF_G_SIN: return sin(a);
    case LF_G_COS: return cos(a);
    case LF_G_TAN: return tan(a);
    case LF_G_ASIN: return asin(a);
    case LF_G_ACOS: return acos(a);
    case LF_G_ATAN: return atan(a);
    case LF_G_ATAN2: return atan2(a, b);
    case LF_G_POW: return pow(a, b);
    case LF_G_ABS: return fabs(a);
    case LF_G_SIGN: return lf_gop_sign(a);
    case LF_G_LT: return a < b ? 1.0 : 0.0;
    case LF_G_LE: return a <= b ? 1.0 : 0.0;
    case LF_G_EQ: return a == b ? 1.0 : 0.0;
    case LF_G_NE: return a != b ? 1.0 : 0.0;
    case LF_G_AND: return a != 0 && b != 0 ? 1.0 : 0.0;
    case LF_G_OR: return a != 0 || b != 0 ? 1.0 : 0.0;
    case LF_G_NOT: return a == 0 ? 1.0 : 0.0;
    case LF_G_SELECT: return a != 0 ? b : c;
    case LF_G_STUMPFF: return lf_stumpff(k, a);
    case LF_G_MULZ: return a == 0 ? 0.0 : a * b;
    default: return NAN;
    }
}

/* The partial derivatives d[0..2] of op's value y with respect to a, b, c at (a, b, c); ops whose
 * result does not vary continuously with an operand (comparisons, sign, the condition of select)
 * have 0 there. Returns the number of operands. */
static inline int lf_gop_partials(int op, int k, double a, double b, double c, double y, double d[3])
{
    d[0] = d[1] = d[2] = 0;
    switch (op) {
    case LF_G_NEG: d[0] = -1; return 1;
    case LF_G_ADD: d[0] = 1; d[1] = 1; return 2;
    case LF_G_SUB: d[0] = 1; d[1] = -1; return 2;
    case LF_G_MUL: d[0] = b; d[1] = a; return 2;
    case LF_G_DIV: d[0] = 1 / b; d[1] = -y / b; return 2;
    case LF_G_SQRT: d[0] = 0.5 / y; return 1;
    case LF_G_EXP: d[0] = y; return 1;
    case LF_G_LOG: d[0] = 1 / a; return 1;
    case LF_G_SIN: d[0] = cos(a); return 1;
    case LF_G_COS: d[0] = -sin(a); return 1;
    case LF_G_TAN: d[0] = 1 + y * y; return 1;
    case LF_G_ASIN: d[0] = 1 / sqrt(1 - a * a); return 1;
    case LF_G_ACOS: d[0] = -1 / sqrt(1 - a * a); return 1;
    case LF_G_ATAN: d[0] = 1 / (1 + a * a); return 1;
    case LF_G_ATAN2: {
        double r = a * a + b * b;
        d[0] = b / r;
        d[1] = -a / r;
        return 2;
    }
    case LF_G_POW: /* 0 where a factor is 0 (b = 0; y = 0: 0^b with b > 0), not 0 * inf */
        d[0] = b == 0 ? 0 : b * pow(a, b - 1);
        d[1] = y == 0 ? 0 : y * log(a);
        return 2;
    case LF_G_ABS: d[0] = lf_gop_sign(a); return 1;
    case LF_G_SIGN: case LF_G_NOT: return 1;
    case LF_G_LT: case LF_G_LE: case LF_G_EQ: case LF_G_NE: case LF_G_AND: case LF_G_OR: return 2;
    case LF_G_SELECT:
        if (a != 0) d[1] = 1;
        else d[2] = 1;
        return 3;
    case LF_G_STUMPFF: d[0] = 0.5 * (k * lf_stumpff(k + 2, a) - lf_stumpff(k + 1, a)); return 1;
    case LF_G_MULZ: d[0] = b; d[1] = a; return 2;
    default: (void)c; return 0;
    }
}

#endif
