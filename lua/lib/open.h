/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — the libraries of the binding, one opener each (not public).
 *
 * Each library sets its functions in the module table at the top of the stack and calls nothing of
 * another library: what libraries share is the object layer (shared/bind.h: values, states, callbacks,
 * systems, potentials, methods, holds, kinds), the tracer (shared/trace.h) and compiled models
 * (shared/model.h). luaopen_lieflow_core (module/core.c) opens them from one table, after the object layer;
 * tests/structure_check.sh checks that no file calls another library and that lua/ has no cycle. */
#ifndef LF_LOPEN_H
#define LF_LOPEN_H

#include <lua.h>

void lfb_open_maps(lua_State *L);        /* so3, s2, quat (lib/maps.c) */
void lfb_open_rigid(lua_State *L);       /* rigidbody, bodies (lib/rigid.c) */
void lfb_open_potentials(lua_State *L);  /* potential.stress, .top, ... (lib/potential.c) */
void lfb_open_forcing(lua_State *L);     /* forcing.damping, .torque, .torque_table (lib/forcing.c) */
void lfb_open_lie_ode(lua_State *L);     /* lie_ode (lib/lie_ode.c) */
void lfb_open_spheres(lua_State *L);     /* spheres.new, .pendulum, ... (lib/spheres.c) */
void lfb_open_methods(lua_State *L);     /* methods, rkmk, compose, compose_schemes (lib/method.c) */
void lfb_open_integrators(lua_State *L); /* integrator, reference (lib/integrator.c) */
void lfb_open_workprec(lua_State *L);    /* timed_run, baseline (lib/workprec.c) */
void lfb_open_analysis(lua_State *L);    /* fit_linear, exact, lognorm, ts2_* (lib/analysis.c) */
void lfb_open_os(lua_State *L);          /* isatty, wall_time, mkdir_p, atomic_open, spawn (lib/os.c) */
void lfb_open_proc(lua_State *L);        /* proc: fork, sockets, poll, waitpid (lib/proc.c, lf.ensemble) */
void lfb_open_math(lua_State *L);        /* math, the traced maps (lib/math.c) */
void lfb_open_compile(lua_State *L);     /* compile, time_potential (lib/compile.c) */
void lfb_open_autodiff(lua_State *L);    /* trace_gradient, dual, ... (lib/autodiff.c) */
void lfb_open_hdf5(lua_State *L);        /* hdf5, h5_create, h5_read (lib/hdf5.c; without HDF5: errors) */

#endif
