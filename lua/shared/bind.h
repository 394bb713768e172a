/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — shared declarations between the binding's files (not public). */
#ifndef LF_LBIND_H
#define LF_LBIND_H

#include <lauxlib.h>
#include <lua.h>
#include <signal.h>

#include "lieflow.h"

#define LFB_VEC3 "lf.vec3"
#define LFB_MAT3 "lf.mat3"

/* Values (shared/value.c). The to* functions accept the userdata or a plain table (3 numbers; 9 numbers or
 * 3 rows of 3) and raise an error naming `what` (e.g. "argument #1 'x' to 'so3.exp'") otherwise,
 * including for non-finite components. */
void lfb_tovec3(lua_State *L, int idx, double v[3], const char *what);
void lfb_tomat3(lua_State *L, int idx, double M[9], const char *what);
/* A rotation: as lfb_tomat3 and then ||R^T R - I|| and |det R - 1| <= 1e-9. */
void lfb_torotation(lua_State *L, int idx, double R[9], const char *what);
double *lfb_pushvec3(lua_State *L, const double v[3]);
double *lfb_pushmat3(lua_State *L, const double M[9]);
double *lfb_testvec3(lua_State *L, int idx);
double *lfb_testmat3(lua_State *L, int idx);
double lfb_checkfinite(lua_State *L, int idx, const char *what);
/* Optional fields of the options table at index t: the number t[key] (def when nil) and the vec3
 * t[key] into v (untouched when nil; returns whether it was present); errors name "fn: field 'key'". */
double lfb_optfield_number(lua_State *L, int t, const char *key, double def, const char *fn);
/* The same, with the word for the key in messages ("field", "option"). */
double lfb_optnumber(lua_State *L, int t, const char *key, double def, const char *fn, const char *noun);
int lfb_optfield_vec3(lua_State *L, int t, const char *key, double v[3], const char *fn);
/* The same for a rotation (checked as by lfb_torotation). */
int lfb_optfield_rotation(lua_State *L, int t, const char *key, double R[9], const char *fn);
/* If one of the arguments is an autodiff value (a table whose metatable has __lf_dual), call the
 * function registered under `name` in the dual dispatch table with all arguments and return 1 (the
 * results are on the stack, their count in *nres). */
int lfb_dual_dispatch(lua_State *L, const char *name, int *nres);
/* In a C function of nargs arguments: keep only those (a call by hand may pass more, which must
 * not hand the call to the autodiff version), then return the autodiff version's results if an
 * argument is an autodiff value. */
#define LFB_DUAL(name, nargs)                                     \
    do {                                                          \
        int nres_;                                                \
        lua_settop(L, nargs);                                     \
        if (lfb_dual_dispatch(L, name, &nres_)) return nres_;     \
    } while (0)
/* Raise a Lua error from an lf_error record. */
int lfb_error(lua_State *L, const lf_error *e);
/* The same with the message prefixed by the Lua function's name fn (unless it starts with it). */
int lfb_error_in(lua_State *L, const char *fn, const lf_error *e);
/* Describe the value at idx for messages ("string", "table", "lf.vec3", ...). */
const char *lfb_typename(lua_State *L, int idx);

void lfb_open_values(lua_State *L);  /* vec3, mat3 constructors and metatables (into module table at -1) */

/* The callback layer (shared/callback.c): every call from C into Lua goes through lfb_call. */
/* Call the function stored under registry reference ref with the arguments push(L, ud) pushes
 * (returning their count), under lua_pcall with a traceback handler; on success nres results are
 * left on the stack. A Lua error becomes LF_ECALLBACK "<what> raised an error: ..." (LF_EINTR
 * "interrupted" when the host's cancel flag is set); nothing crosses into C as a Lua error. */
int lfb_call(lua_State *L, int ref, int (*push)(lua_State *L, void *ud), void *ud, int nres, const char *what,
             lf_error *err);
/* The host's cancel flag (registry "lieflow.cancel", set by the lieflow executable), or NULL. */
volatile sig_atomic_t *lfb_cancel_flag(lua_State *L);

/* ---- the object layer (shared/object.c): systems, potentials, methods, holds, kinds */
/* Systems: a userdata over an lf_system, with the Lua callbacks it uses. */
#define LFB_SYSTEM "lf.system"
#define LFB_POTENTIAL "lf.potential"
#define LFB_METHOD "lf.rkmk_method"
#define LFB_NREF 12
/* A built-in potential as a userdata (lf.potential.*): systems using it retain it. */
typedef struct lfb_potential {
    lf_potential *p; /* NULL for the free body */
    int free_body;
    int users;       /* systems using p (they keep the userdata alive through a uservalue) */
    int finalized;   /* __gc has run */
} lfb_potential;
/* A built-in forcing as a userdata (lf.forcing.*): systems using it retain it (like potentials). */
#define LFB_FORCING "lf.forcing"
typedef struct lfb_forcing {
    lf_forcing *f;
    int users;      /* systems using f */
    int finalized;  /* __gc has run */
    char desc[200]; /* what it is: "damping(linear = 0, angular = (0.1, 0.1, 0.1))" */
} lfb_forcing;
enum { LFB_FORCING_OWN = 4 };
typedef struct lfb_system {
    lf_system *sys;
    lua_State *L;        /* the running thread, set by lfb_checksystem before C calls back */
    int ref[LFB_NREF];   /* registry references of Lua callbacks (LUA_NOREF if none); meaning per kind */
    lf_potential *pot;   /* a potential the system owns (Lua or compiled potentials) */
    lf_potential *pot_inner; /* a potential pot is made of, owned too (pair kernels over a potential) */
    lfb_potential *pot_object; /* the lf.potential userdata whose potential it uses, retained */
    int users;           /* integrators and holds using the system (they keep it alive) */
    int finalized;       /* __gc has run: no entry point may use it */
    int fell_back;       /* compile = "auto" could not trace a Lua function: it runs interpreted */
    /* a forcing (rigid bodies, shared/forcing.c): the forcings the system owns (its Lua forcing, its
     * damping, the sum of its parts; NULL: none), freed after the system; the compiled model of its Lua
     * forcing (NULL: none, or interpreted); the lf.forcing objects it uses, retained */
    lf_forcing *forcing_own[LFB_FORCING_OWN]; /* [3]: the controller's held input */
    int control_every;                        /* a controller: the steps between its calls (0: none) */
    lf_compiled *forcing_compiled;
    struct lfb_forcing **forcing_objects;
    int nforcing_objects;
} lfb_system;
/* uservalues of a system userdata: 1 = the lf.potential it uses, 2 = its hold, 3 = a table of the
 * lf.forcing objects it uses */
enum { LFB_SYSTEM_UV_POTENTIAL = 1, LFB_SYSTEM_UV_HOLD = 2, LFB_SYSTEM_UV_FORCING = 3, LFB_SYSTEM_NUV = 3 };
enum {
    LFB_REF_U = 0,
    LFB_REF_TAU = 1,
    LFB_REF_F = 0,
    LFB_REF_JAC = 1,
    LFB_REF_ENERGY = 2,
    LFB_REF_H = 3,
    LFB_REF_DH = 4,
    LFB_REF_SKEW = 5,
    LFB_REF_FORCING = 6,
    LFB_REF_FORCING_INFO = 7,
    LFB_REF_PAIR = 8,
    LFB_REF_PARAMS = 9,
    LFB_REF_COMPILED = 10,
    LFB_REF_CONTROLLER = 11
};

/* The system at idx (errors if it is not one or has been finalized); binds it to L. */
lfb_system *lfb_checksystem(lua_State *L, int idx);
/* Push a new system userdata (its C system, callbacks and potential are set by the caller). */
lfb_system *lfb_newsystem(lua_State *L);
/* A new system whose Lua model fell back to the interpreter under compile = "auto" (s->fell_back), or
 * whose pair kernel was compiled (pairs = 1), evaluated once at its initial state (a Lie ODE's f, and the
 * energy when it has one): a model that fails or is not finite there is a bug, raised now as "<fn>: the
 * model fails at the initial state: ..." instead of at the first step (or never: a trace that failed on a
 * model bug looked like a limit of the tracer). */
void lfb_check_initial(lua_State *L, lfb_system *s, int pairs, const char *fn);
/* An integrator starts / stops using a system (the last one frees a finalized system). */
void lfb_system_retain(lfb_system *s);
void lfb_system_release(lua_State *L, lfb_system *s);
/* Holds: the system at sys_idx (checked: not finalized) and the lf.rkmk / lf.compose method at
 * method_idx (if it is one; 0: none) are kept alive until the calling C function returns or raises,
 * through a to-be-closed slot pushed on the stack: call it after the function has fixed its stack
 * with lua_settop, and remove nothing below the slot. For entry points that run Lua code (metamethods
 * of their arguments, callbacks) while they use the C system or method: a __gc called by that code
 * only marks them finalized; the last release frees them. Returns the system. */
lfb_system *lfb_hold(lua_State *L, int sys_idx, int method_idx);

/* A kind of system registers, when its library is opened, what its systems add to the surface every
 * system has (shared/object.c: the schema's fields and observables, energy, f, ...): sys.<key> (index:
 * push the value and return 1, or return 0), tostring (push the text, return 1), its methods
 * (sys:torque, sph:gradient, ...) and the names of its fields for completion. The record must
 * outlive the Lua state (a static const). */
typedef struct lfb_kind {
    const char *name; /* lf_system_kind(): "rigidbody", "lie_ode", "spheres" */
    const char *what; /* in messages: "rigid bodies", "Lie ODEs", "systems on spheres" */
    int (*index)(lua_State *L, lfb_system *s, const char *k);
    int (*tostring)(lua_State *L, lfb_system *s);
    const luaL_Reg *methods;
    const char *const *fields;
} lfb_kind;
void lfb_register_kind(lua_State *L, const lfb_kind *k);

/* Observable `name` at (t, y): pushes its value and returns 1, or returns 0 (no such observable). */
int lfb_push_observable(lua_State *L, const lf_system *sys, const char *name, double t, const double *y);
/* Push the values of every trajectory column at (t, y); returns their count. */
int lfb_push_columns(lua_State *L, const lf_system *sys, double t, const double *y);
/* Push {field = distance, ...}: the manifold's distance field by field between two states. */
void lfb_push_errors(lua_State *L, const lf_system *sys, const double *a, const double *b);
/* The field `params` of the table at t: a copy kept by the system (s->ref[LFB_REF_PARAMS]); its values
 * (sorted names) into par (NULL: not wanted); their count (0 without params). */
int lfb_store_params(lua_State *L, lfb_system *s, int t, double *par, int maxpar, const char *fn);
/* The system's parameters table (sys.params; returns 1) or nothing (0); what runs (sys.compiled). */
int lfb_push_params(lua_State *L, const lfb_system *s);
int lfb_push_compiled(lua_State *L, const lfb_system *s);

/* Potentials: a new lf.potential userdata over p (raises e when p is NULL and not the free body);
 * the one at idx (errors if finalized); a system starts using the one at pot_idx (kept alive as
 * its uservalue, its C potential until the system is freed) and gets its C potential. */
void lfb_newpotential(lua_State *L, lf_potential *p, int free_body, const lf_error *e);
lfb_potential *lfb_checkpotential(lua_State *L, int idx);
const lf_potential *lfb_system_use_potential(lua_State *L, lfb_system *s, int sys_idx, int pot_idx);

/* Forcings: a new lf.forcing userdata over f described by desc (raises e when f is NULL); the one at
 * idx (errors if finalized) or NULL if the value is not one (lfb_testforcing); a system starts using
 * the one at obj_idx (kept alive in its uservalue LFB_SYSTEM_UV_FORCING, its C forcing until the
 * system is freed) and gets its C forcing. */
void lfb_newforcing(lua_State *L, lf_forcing *f, const char *desc, const lf_error *e);
lfb_forcing *lfb_testforcing(lua_State *L, int idx);
const lf_forcing *lfb_system_use_forcing(lua_State *L, lfb_system *s, int sys_idx, int obj_idx);

/* Methods made in Lua (lf.rkmk, lf.compose): a userdata over an lf_method. Integrators, compositions
 * (uservalue 1: their base) and holds retain it; __gc frees the C method when no one uses it. */
typedef struct lfb_method {
    lf_method *m;
    int users;
    int finalized;
} lfb_method;
/* A new method userdata owning m; base_idx: the base method userdata it must keep alive (0: none). */
lfb_method *lfb_newmethod(lua_State *L, lf_method *m, int base_idx);
/* The method at idx: a registered method's name, or an lf.rkmk / lf.compose method (fn's error names
 * a finalized one as such); the userdata alone. */
const lf_method *lfb_checkmethod(lua_State *L, int idx, const char *fn);
lfb_method *lfb_checkusermethod(lua_State *L, int idx, const char *fn);
/* The userdata at idx (anything else: nothing) starts / stops being used. */
void lfb_method_retain(lua_State *L, int idx);
void lfb_method_release(lua_State *L, int idx);
/* A method's metadata as a table (what lf.methods() lists); impl: "C", "C (user tableau)", ... */
void lfb_push_method_info(lua_State *L, const lf_method *m, const char *impl);
/* Parameters of a system changed by sys:set_params (also a method of every system). */
int lfb_sys_set_params(lua_State *L);
void lfb_open_objects(lua_State *L); /* the metatables of systems, potentials, methods; the kinds */

/* Names for the REPL's completion (__lf_fields): append name to the list at stack index list unless
 * the table at index set has it (set[name] = true then): each name once (shared/object.c). */
void lfb_list_add_once(lua_State *L, int list, int set, const char *name);

/* States (shared/state.c): values of the system's fields <-> the C state vector. */
/* Push one factor's value: mat3 (so3, gl3), vec3 (s2; r3 when rm_as_vec3), quaternion table
 * {w, x, y, z} (s3), array of m numbers (r<m>), {q = vec3, omega = vec3} (ts2), {F = mat3,
 * P = mat3} (tgl3), {R = mat3, p = vec3} (se3; read also from its 12 numbers). */
void lfb_push_factor(lua_State *L, const lf_factor *f, const double *p, int rm_as_vec3);
/* Read one factor's value at idx (the same shapes, plain tables accepted) into p. */
void lfb_read_factor(lua_State *L, int idx, const lf_factor *f, double *p, const char *what);
/* The same with rotations checked within tol (lfb_read_factor: 1e-9); likewise for fields and states. */
void lfb_read_factor_tol(lua_State *L, int idx, const lf_factor *f, double *p, const char *what, double tol);
void lfb_read_field_tol(lua_State *L, int idx, const lf_system *sys, const lf_field *field, double *y,
                        const char *what, double tol);
/* Push / read a field (one value if field->count == 1 and scalar_if_one, else an array). */
void lfb_push_field(lua_State *L, const lf_system *sys, const lf_field *field, const double *y);
void lfb_read_field(lua_State *L, int idx, const lf_system *sys, const lf_field *field, double *y, const char *what);
/* Push {t = t, <field> = ...} for every field. */
void lfb_push_state(lua_State *L, const lf_system *sys, double t, const double *y);
/* Update y (and *t when t != NULL) from the fields present in the table at idx; fields absent keep
 * their values; unknown keys are errors naming the valid ones. `extra` lists further accepted keys
 * (NULL-terminated, may be NULL) that the caller handles. */
void lfb_read_state(lua_State *L, int idx, const lf_system *sys, double *y, double *t, const char *const *extra,
                    const char *what);
void lfb_read_state_tol(lua_State *L, int idx, const lf_system *sys, double *y, double *t, const char *const *extra,
                    const char *what, double tol);
/* Every key of the table at idx must be one of keys (NULL-terminated): else the error
 * "<fn>: unknown <noun> 'k' (<noun>s: a, b, ...)". */
void lfb_check_keys(lua_State *L, int idx, const char *const *keys, const char *fn, const char *noun);
/* Push an algebra element of the manifold (one value per factor: vec3 / mat3 / array) as an array. */
void lfb_push_algebra(lua_State *L, const lf_manifold *M, const double *xi);
/* Read f's result at idx (an array with one algebra element per factor) into xi; no metamethod
 * runs and no Lua error is raised: returns LF_OK or LF_ECALLBACK with a message. */
int lfb_read_algebra(lua_State *L, int idx, const lf_manifold *M, double *xi, const char *what, lf_error *err);

#endif
