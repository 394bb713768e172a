/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — the libraries of the binding, one opener each (not public).
 *
 * Each library sets its functions in the module table at the top of the stack and calls nothing of
 * another library: what libraries share is the object layer (lbind.h: values, states, callbacks,
 * systems, potentials, methods, holds, kinds), the tracer (ltrace.h) and compiled models
 * (lmodel.h). luaopen_lieflow_core (lcore.c) opens them from one table, after the object layer;
 * tests/structure_check.sh checks that no file calls another library and that lua/ has no cycle. */
#ifndef LF_LOPEN_H
#define LF_LOPEN_H

#include <lua.h>

void lfb_open_maps(lua_State *L);        /* so3, s2, quat (lmaps.c) */
void lfb_open_rigid(lua_State *L);       /* rigidbody, bodies (lrigid.c) */
void lfb_open_potentials(lua_State *L);  /* potential.stress, .top, ... (lpotential.c) */
void lfb_open_lie_ode(lua_State *L);     /* lie_ode (llieode.c) */
void lfb_open_spheres(lua_State *L);     /* spheres.new, .pendulum, ... (lspheres.c) */
void lfb_open_methods(lua_State *L);     /* methods, rkmk, compose, compose_schemes (lmethod.c) */
void lfb_open_integrators(lua_State *L); /* integrator, reference (lintegrator.c) */
void lfb_open_workprec(lua_State *L);    /* timed_run, baseline (lworkprec.c) */
void lfb_open_analysis(lua_State *L);    /* fit_linear, exact, lognorm, ts2_* (lanalysis.c) */
void lfb_open_os(lua_State *L);          /* isatty, wall_time, mkdir_p, atomic_open, spawn (los.c) */
void lfb_open_proc(lua_State *L);        /* proc: fork, sockets, poll, waitpid (lproc.c, lf.ensemble) */
void lfb_open_math(lua_State *L);        /* math, the traced maps (lmath.c) */
void lfb_open_compile(lua_State *L);     /* compile, time_potential (lcompile.c) */
void lfb_open_autodiff(lua_State *L);    /* trace_gradient, dual, ... (lautodiff.c) */
void lfb_open_hdf5(lua_State *L);        /* hdf5, h5_create, h5_read (lhdf5.c; without HDF5: errors) */

#endif
