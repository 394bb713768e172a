/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow (internal) — C code generation from programs (graph_prog_internal.h).
 *
 * One C function per program, with the program's own layout of inputs:
 *     void NAME(const double *const *in, const double *par, double *out)
 * computing the same numbers as lf_gprog_eval (the same operations in the same order, constants
 * printed exactly as hexadecimal floating-point literals, the Stumpff functions from the same
 * source, core/graph/stumpff.h, compiled into the file). The text carries no user text: every
 * identifier is generated (names are checked to be C identifiers of the form lf_[a-z0-9_]+), so
 * that nothing a user wrote can reach the compiler. */
#ifndef LF_GRAPH_CODEGEN_INTERNAL_H
#define LF_GRAPH_CODEGEN_INTERNAL_H

#include "graph/graph_prog_internal.h"

/* The C source of n functions names[i] computing progs[i], and for each its pair loop lf_p_<name
 * without the prefix lf_> (lf_gmodule_eval_pairs); malloc'd, NUL-terminated (free it). */
char *lf_gcodegen(int n, const lf_gprog *const *progs, const char *const *names, lf_error *err);

#endif
