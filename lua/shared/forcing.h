/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — forcings of rigid bodies (shared/forcing.c): the fields `forcing` and
 * `damping` of lf.rigidbody and lf.bodies, and the damping spec lf.forcing.damping shares (not
 * public). */
#ifndef LF_LFORCING_H
#define LF_LFORCING_H

#include "shared/bind.h"

/* The largest number of parts of a system's forcing (lf_forcing_sum's limit) */
#define LFB_MAX_FORCING_PARTS 64

/* A damping {linear = c, angular = {a1, a2, a3} | a} at idx (fn names it in errors: "lf.rigidbody:
 * field 'damping'"): lf_forcing_damping(c, a), its description "damping(linear = ..., angular = (...))"
 * into desc. translating: 0 for bodies that only rotate (a linear damping is then refused), 1 for
 * bodies that translate, -1 unknown (an lf.forcing object). Raises on bad input. */
lf_forcing *lfb_read_damping(lua_State *L, int idx, const char *fn, int translating, char *desc, size_t size);

/* The forcing of a rigid system being built (userdata s at stack index ud) from the fields `forcing`
 * (a Lua function(t, state [, p]), an lf.forcing object or an array of them) and `damping` of the table
 * at pt: nb bodies at the initial state y0 (R 9 nb, omega 3 nb, then x 3 nb and v 3 nb when
 * translating), a Lua forcing compiled with backend (lfb_compile_option; -1: interpreted) or called.
 * The system owns what is made (s->forcing_own), retains the objects; sys.compiled gains "; forcing:
 * <what runs>" for a Lua forcing; the description goes to s->ref[LFB_REF_FORCING_INFO]. Returns the
 * forcing to attach to the system (lf_rigid_set_forcing) or NULL (none). Raises on bad input. */
const lf_forcing *lfb_system_forcing(lua_State *L, lfb_system *s, int ud, int pt, int nb, const double *y0,
                                     int translating, int backend, const char *fn);

/* A system's controller (the field controller = {every = k, fn = function(t, state [, p])}, a held input
 * among its forcing's parts): call fn at (t, y) and hold what it returns (then tell the stepper:
 * lf_stepper_forcing_changed). LF_OK, or an error naming the controller and t. */
int lfb_controller_update(lua_State *L, lfb_system *s, double t, const double *y, lf_error *err);
/* Push the held output {torque = ..., force = ...} (arrays for several bodies), or nil without a
 * controller; lfb_controller_set holds the one at idx (a checkpoint's; raises on a bad one). */
int lfb_push_control(lua_State *L, const lfb_system *s);
void lfb_controller_set(lua_State *L, lfb_system *s, int idx, const char *fn);

/* sys.forcing_name (a string, or nil without a forcing) and sys.forcing_info ({name =, velocity =,
 * time =, affine =, jacobian =, compiled =} or nil): push the value and return 1. */
int lfb_push_forcing_name(lua_State *L, const lfb_system *s);
int lfb_push_forcing_info(lua_State *L, const lfb_system *s);

#endif
