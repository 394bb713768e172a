/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — public C API: geometric numerical integration on Lie groups.
 * Conventions: see core/lie/so3.h. Link with -llieflow -lgsl -lgslcblas -lm (pkg-config lieflow). */
#ifndef LIEFLOW_H
#define LIEFLOW_H

#include "export.h"
#include "lieflow_version.h" /* LIEFLOW_VERSION, _MAJOR, _MINOR, _PATCH: generated from VERSION */
#include "error.h"
#include "linalg.h"
#include "matfun.h"
#include "quadrature.h"
#include "so3.h"
#include "s2.h"
#include "quat.h"
#include "gl3.h"
#include "ts2.h"
#include "tgl3.h"
#include "manifold.h"
#include "system.h"
#include "potential.h"
#include "rigid.h"
#include "lie_ode.h"
#include "spheres.h"
#include "method.h"
#include "ensemble.h"
#include "compose.h"
#include "newton.h"
#include "reference.h"
#include "analysis.h"
#include "lognorm.h"
#include "exact.h"
#include "baseline.h"
/* expression graphs: build, differentiate, compile (native through the code cache, or the tape) */
#include "graph.h"
#include "graph_lie.h"
#include "graph_prog.h"
#include "graph_codegen.h"
#include "graph_module.h"
#include "jit.h"
#include "model_graph.h"

LF_BEGIN_DECLS

/* The version of the library the program runs with ("MAJOR.MINOR.PATCH"); LIEFLOW_VERSION is that of the
 * headers it was compiled with. */
const char *lf_version(void);

LF_END_DECLS

#endif
