/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — models from expression graphs (compiled models): the potentials of rigid bodies, pair
 * kernels, the vector field and first integral of a Lie-group ODE and the potential of a system on
 * spheres, each made from a graph of its value (core/graph/, traced from a Lua function by the
 * binding, or built in C) with its derivatives derived on the graph:
 *   rigid bodies   U(R_1..R_n): tau_i = trhat(R_i^T G_i), G_i = dU/dR_i (reverse mode; so3.h's
 *                  convention tau . y = -d/de U(R exp(e hat y)), since tr(G^T R hat y) =
 *                  -y . trhat(R^T G)), and the torque Jacobian along the left trivialization
 *                  (forward mode along R_j hat(e_m)) for the implicit methods;
 *   pair kernels   U = sum over listed pairs (i, j) of u(x_i, x_j, r_ij) (+ an inner potential):
 *                  one kernel graph, the loop over pairs in C;
 *   Lie-group ODEs xi = f(t, y), its Euclidean Jacobian d xi/d y turned into the Jacobian along
 *                  the action with the manifold's velocities (lf_manifold_velocity), a first
 *                  integral H with its trivialized differential likewise, an energy;
 *   spheres        V(q_1..q_n) and its Euclidean gradient.
 * Parameters are inputs of the graph (LF_G_PARAM nodes), so changing them (lf_compiled_set_params)
 * needs no new compilation. The graph is the caller's (derivative nodes are added to
 * it; free it after the model is made). */
#ifndef LF_MODEL_GRAPH_H
#define LF_MODEL_GRAPH_H

#include "base/export.h"
#include "graph/graph_module.h"
#include "model/forcing.h"
#include "model/lie_ode.h"
#include "model/potential.h"
#include "model/spheres.h"

LF_BEGIN_DECLS

/* A compiled model: the module that evaluates it and the values of its parameters. */
typedef struct lf_compiled lf_compiled;

typedef struct lf_model_graph_opts {
    int backend;               /* lf_backend */
    const lf_jit_opts *jit;    /* NULL: defaults */
    int jacobian;              /* also compile the Jacobian (0: not, when no implicit method needs it) */
} lf_model_graph_opts;

/* The largest number of bodies (rigid, full potentials) and of y's parameters (Lie ODEs) for which
 * the Jacobian is compiled (its size grows with the square, its graph with the cube). */
#define LF_MODEL_GRAPH_MAX_JAC_BODIES 4
#define LF_MODEL_GRAPH_MAX_JAC 64

/* ---- rigid bodies */
/* A potential of nb bodies from graph g: inputs 0 .. 9 nb - 1 are R_1..R_nb (row-major), node U
 * is the potential, tau the nodes of the torques (3 nb; NULL: derived from U), par the values of
 * the graph's parameters (lf_graph_nparams(g) of them). */
lf_potential *lf_potential_graph(lf_graph *g, int U, const int *tau, int nb, const double *par,
                                 const lf_model_graph_opts *o, lf_error *err);
/* A potential of nb translating bodies from graph g: inputs 0 .. 3 nb - 1 are the centres of mass
 * x_1..x_nb, then 9 nb for R_1..R_nb; node U. The forces F = -dU/dx and the torques come from one
 * reverse sweep, the torque Jacobian (along the attitudes, the positions fixed) by forward mode. */
lf_potential *lf_potential_graph_x(lf_graph *g, int U, int nb, const double *par, const lf_model_graph_opts *o,
                                   lf_error *err);
/* A pair potential: U(R) = sum_p u(R_i, R_j, r_p) over the pairs (i, j) = (pairs[2p], pairs[2p+1])
 * (0-based, i != j, < nb) with the fixed vectors r_p = r[3p..], plus inner (borrowed, may be NULL).
 * Kernel graph g: inputs 0..8 = R_i, 9..17 = R_j, 18..20 = r_ij; node u. */
lf_potential *lf_potential_pairs(lf_graph *g, int u, int nb, int npairs, const int *pairs, const double *r,
                                 const lf_potential *inner, const double *par, const lf_model_graph_opts *o,
                                 lf_error *err);
/* A pair potential of translating bodies (moving centres): the same kernel with r_ij = x_j - x_i at each
 * evaluation, the pairs (i, j) with |r_ij| < cutoff only (INFINITY: all listed pairs), plus inner (a
 * potential of positions or of R alone, or NULL). The forces F_i = du/dr, F_j = -du/dr with the
 * torques from one reverse sweep of the kernel. */
lf_potential *lf_potential_pairs_x(lf_graph *g, int u, int nb, int npairs, const int *pairs, double cutoff,
                                   const lf_potential *inner, const double *par, const lf_model_graph_opts *o,
                                   lf_error *err);
/* ---- forcings of rigid bodies */
/* A forcing (forcing.h) named name (borrowed: a string that outlives the forcing; NULL: "compiled")
 * of nb bodies from graph g: input 0 is t, then R_1..R_nb (9 nb), w_1..w_nb
 * (3 nb) and, for bodies that translate (F != NULL), x_1..x_nb (3 nb) and v_1..v_nb (3 nb); tau the
 * nodes of the body torques (3 nb), F those of the spatial forces (3 nb; NULL: bodies that only
 * rotate). What it depends on is read from the graph (LF_FORCING_VELOCITY when an output reaches an
 * input w or v, LF_FORCING_TIME when one reaches t); a forcing of the velocities of at most
 * LF_MODEL_GRAPH_MAX_JAC_BODIES bodies gets its Jacobian in (w, v) by forward mode on the graph when
 * o->jacobian is set (otherwise none: differences serve), and LF_FORCING_AFFINE when no node of that
 * Jacobian reaches w or v. *compiled (if not NULL): its compiled model,
 * owned by the forcing (lf_compiled_set_params changes its parameters). */
lf_forcing *lf_forcing_graph(lf_graph *g, const char *name, const int *tau, const int *F, int nb, const double *par,
                             const lf_model_graph_opts *o, lf_compiled **compiled, lf_error *err);
/* ---- Lie-group ODEs */
/* Nodes of the definition on graph g with inputs t (input 0) and y (inputs 1 .. np of manifold M):
 * xi (nd nodes, required), energy and H (-1: none). */
typedef struct lf_lie_ode_graph {
    const int *xi;
    int energy, H;
    /* the caller's own Jacobian, dH and skew map (NULL: the derived ones, no skew map), called with
     * ctx user in place of the derived ones */
    lf_lie_ode_jacobian_fn jacobian;
    lf_lie_ode_dH_fn dH;
    lf_lie_ode_skew_fn skew;
    void *user;
} lf_lie_ode_graph;
/* The definition of a Lie ODE on M from graph nodes (pass it to lf_lie_ode_new, which owns it from
 * then on); dH is derived from H when H is given, the Jacobian when o->jacobian is set. */
int lf_lie_ode_graph_def(lf_graph *g, const lf_manifold *M, const lf_lie_ode_graph *nodes, const double *par,
                         const lf_model_graph_opts *o, lf_lie_ode_def *def, lf_error *err);
/* The Jacobian along the action D = J V (nd x nd) from the Euclidean Jacobian J (nd x np) of a
 * vector field at y, and the trivialized differential g = V^T ge (nd) from a Euclidean gradient ge
 * (np), with V the velocities of the action (lf_manifold_velocity of the unit algebra vectors).
 * work: np nd + np + nd doubles. */
void lf_lie_trivialize_jacobian(const lf_manifold *M, const double *y, const double *J, double *D, double *work);
void lf_lie_trivialize_gradient(const lf_manifold *M, const double *y, const double *ge, double *g, double *work);

/* ---- systems on spheres */
/* The potential definition of n spheres from graph g with inputs q (3n), node V and the nodes of
 * its gradient (3n; NULL: derived from V), or from a
 * pair kernel (g: inputs 0..2 = q_i, 3..5 = q_j, 6..8 = r_ij; node V is u) over the listed pairs
 * (npairs > 0) plus an inner potential (NULL: none; owned: destroyed with the definition). */
int lf_spheres_graph_def(lf_graph *g, int V, const int *grad, int n, int npairs, const int *pairs, const double *r,
                         lf_spheres_def *inner, const double *par, const lf_model_graph_opts *o, lf_spheres_def *def,
                         lf_error *err);
/* ---- any compiled model */
/* The compiled model behind a potential made by lf_potential_graph or lf_potential_pairs, behind a
 * definition made by lf_lie_ode_graph_def or lf_spheres_graph_def, or behind a Lie ODE or spheres
 * system made from such a definition; NULL for anything else. */
lf_compiled *lf_potential_compiled(const lf_potential *p);
lf_compiled *lf_lie_ode_def_compiled(const lf_lie_ode_def *def);
lf_compiled *lf_spheres_def_compiled(const lf_spheres_def *def);
lf_compiled *lf_system_compiled(const lf_system *s);
/* What runs and why (lf_gmodule_report: "native (cached, 183 operations)", ...), the module, and
 * replacing the parameters (n = the graph's count; no new compilation). A NULL model: NULL, NULL,
 * LF_EINVAL. */
const char *lf_compiled_report(const lf_compiled *c);
lf_gmodule *lf_compiled_module(const lf_compiled *c);
int lf_compiled_set_params(lf_compiled *c, int n, const double *par, lf_error *err);

LF_END_DECLS

#endif
