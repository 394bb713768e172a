/* lieflow Lua binding — shared declarations between the binding's files (not public). */
#ifndef LF_LBIND_H
#define LF_LBIND_H

#include <lauxlib.h>
#include <lua.h>

#include "lieflow.h"

#define LFB_VEC3 "lf.vec3"
#define LFB_MAT3 "lf.mat3"

/* Values (lvalue.c). The to* functions accept the userdata or a plain table (3 numbers; 9 numbers or
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
/* If one of the arguments is an autodiff value (a table whose metatable has __lf_dual), call the
 * function registered under `name` in the dual dispatch table with all arguments and return 1 (the
 * results are on the stack, their count in *nres). */
int lfb_dual_dispatch(lua_State *L, const char *name, int *nres);
/* Raise a Lua error from an lf_error record. */
int lfb_error(lua_State *L, const lf_error *e);
/* Describe the value at idx for messages ("string", "table", "lf.vec3", ...). */
const char *lfb_typename(lua_State *L, int idx);

void lfb_open_values(lua_State *L);     /* vec3, mat3 constructors and metatables (into module table at -1) */
void lfb_open_maps(lua_State *L);       /* so3, s2, quat tables */
void lfb_open_systems(lua_State *L);    /* rigidbody, bodies, potential.* */
void lfb_open_integrators(lua_State *L);/* methods, integrator, reference */
void lfb_open_analysis(lua_State *L);   /* fit_linear, isatty, wall_time, mkdir_p */
void lfb_open_exact(lua_State *L);      /* exact.free_body */
void lfb_open_proc(lua_State *L);       /* proc: fork, sockets, poll, waitpid, encode (lf.ensemble) */

/* Systems (lsystem.c) */
#define LFB_SYSTEM "lf.system"
typedef struct lfb_system lfb_system;
lf_system *lfb_checksystem(lua_State *L, int idx);
/* Push the initial state of a system: R (mat3 or array of mat3), omega. */
void lfb_push_rotations(lua_State *L, int nb, const double *R);
void lfb_push_vectors(lua_State *L, int nb, const double *v);
/* Read nb rotations / vectors (a single value when nb == 1, else an array). */
void lfb_read_rotations(lua_State *L, int idx, int nb, double *R, const char *what);
void lfb_read_vectors(lua_State *L, int idx, int nb, double *v, const char *what);
/* Attach the lua_State to the system's Lua callbacks before C code evaluates the potential. */
void lfb_system_bind(lua_State *L, int idx);

#endif
