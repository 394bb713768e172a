/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — public C API: geometric numerical integration on Lie groups.
 * Conventions: see core/lie/so3.h. Link with -llieflow -lgsl -lgslcblas -lm (pkg-config lieflow). */
#ifndef LIEFLOW_H
#define LIEFLOW_H

/* base: errors, 3 x 3 and dense linear algebra, matrix functions, quadrature, the version */
#include "base/export.h"
#include "base/version.h" /* LIEFLOW_VERSION, _MAJOR, _MINOR, _PATCH and lf_version() */
#include "base/error.h"
#include "base/linalg.h"
#include "base/dense.h"
#include "base/matfun.h"
#include "base/quadrature.h"
#include "base/philox.h"
/* lie: the groups and manifolds, their maps; products of factors */
#include "lie/so3.h"
#include "lie/s2.h"
#include "lie/quat.h"
#include "lie/gl3.h"
#include "lie/ts2.h"
#include "lie/tgl3.h"
#include "lie/se3.h"
#include "lie/manifold.h"
/* solve: Newton, the exact free rigid body; analysis: fits, logarithmic norms */
#include "solve/newton.h"
#include "solve/exact.h"
#include "analysis/analysis.h"
#include "analysis/lognorm.h"
/* expression graphs: build, differentiate, compile (native code through the code cache, or the tape) */
#include "native/jit.h"
#include "graph/graph.h"
#include "graph/graph_lie.h"
#include "graph/graph_module.h"
/* md: interaction sites of rigid bodies, periodic boxes, neighbour lists (molecular dynamics) */
#include "md/sites.h"
/* model: systems and their forms, potentials, rigid bodies, Lie-group ODEs, spheres, compiled models */
#include "model/system.h"
#include "model/potential.h"
#include "model/forcing.h"
#include "model/sites_potential.h"
#include "model/rigid.h"
#include "model/lie_ode.h"
#include "model/spheres.h"
#include "model/model_graph.h"
/* method: the registry, the stepper, compositions, ensembles */
#include "method/method.h"
#include "method/compose.h"
#include "method/ensemble.h"
/* reference: the reference solution (GSL rk8pd) and the baselines of the work-precision comparison */
#include "reference/reference.h"
#include "reference/baseline.h"

#endif
