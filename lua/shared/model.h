/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — compiled models (shared/model.c) and pair kernels (shared/pairs.c): the services that
 * turn the Lua functions a system takes into compiled potentials and vector fields (not public). */
#ifndef LF_LMODEL_H
#define LF_LMODEL_H

#include "shared/bind.h"
#include "model/model_graph.h"

/* The field `compile` of the table at t: -1 (false) or an lf_backend. */
int lfb_compile_option(lua_State *L, int t, const char *fn);
/* What runs: sys.compiled (lfb_push_compiled pushes it). A refusal of the code cache is also said on
 * stderr, once per process and reason. */
void lfb_set_compiled(lua_State *L, lfb_system *s, const char *report);
/* Trace and compile a system's Lua functions at its initial state: a rigid potential (U in
 * s->ref[LFB_REF_U], torque in LFB_REF_TAU if any), a Lie ODE (f, energy, H), a sphere potential
 * (V in LFB_REF_U; inner: an extra potential to add, owned). NULL / 0 when the functions cannot be
 * traced (compile = "auto": report = "interpreted: <why>"; an explicit backend raises); else report
 * says what runs. A rigid potential of translating bodies (x0: their initial centres of mass) is
 * U(x, R) (U(xs, Rs) for several). */
lf_potential *lfb_compile_rigid(lua_State *L, lfb_system *s, int nb, const double *R0, const double *x0, int backend,
                                const char *fn, char *report, size_t size);
int lfb_compile_lie_ode(lua_State *L, lfb_system *s, const lf_manifold *M, const double *y0, int backend,
                        const lf_lie_ode_graph *own, lf_lie_ode_def *def, const char *fn, char *report, size_t size);
int lfb_compile_spheres(lua_State *L, lfb_system *s, int n, const double *q0, int backend, lf_spheres_def *inner,
                        lf_spheres_def *def, const char *fn, char *report, size_t size);
/* Pair kernels (shared/pairs.c): fields pair, positions, cutoff of the table at t. A potential over the
 * pairs plus inner (borrowed; NULL: none), compiled or interpreted (report says which and why);
 * for spheres the definition (inner: owned, its potential may be NULL; returns 1 if compiled). */
lf_potential *lfb_pairs_rigid(lua_State *L, lfb_system *s, int t, int nb, const double *R0, const double *x0,
                              const lf_potential *inner, int backend, const char *fn, char *report, size_t size);
int lfb_pairs_spheres(lua_State *L, lfb_system *s, int t, int n, const double *q0, lf_spheres_def *inner, int backend,
                      lf_spheres_def *def, const char *fn, char *report, size_t size);

/* A compiled function (lf.compile, lib/compile.c): the userdata LFB_COMPILED over its module (value:
 * function 0; value and gradient with respect to every input: function 1), the kinds of its arguments
 * (1 number, 3 vec3, 9 mat3, -n an array of n numbers) and its parameters' values. */
#define LFB_COMPILED "lf.compiled"
typedef struct lfb_compiled {
    lf_gmodule *m; /* NULL once finalized */
    int nargs, nin, nout, npar, scalar;
    int argkind[LF_GPROG_MAXSEG];
    double par[];
} lfb_compiled;
/* The compiled function at idx, or NULL if the value is not one or has been finalized. */
lfb_compiled *lfb_testcompiled(lua_State *L, int idx);

#endif
