/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow (internal) — the rigid-body splitting methods (step_splitting.c): no_squish, dlm and
 * split_exact, and the runner that the compositions (compose.c) use to compose them without calling
 * the base step once per stage. Not installed.
 *
 * A splitting method is a sequence of exactly solvable flows of the parts of H = U(R) + T(Pi):
 *   LF_SPLIT_KICK  the potential: R fixed, Pi += tau tau(R)          (tau: the sub-step)
 *   LF_SPLIT_FLOW  the exact free rigid-body flow of T (exact.h; closed form for axisymmetric bodies)
 *   LF_SPLIT_R1..3 the free rotation about body axis k, the flow of T_k = Pi_k^2 / (2 J_k)
 * Bodies that translate add T_trans = |p|^2/(2m), whose flow x += tau v commutes with every rotation:
 * it rides with one kind of free part (`drift`), and the kicks push v by the forces of the same
 * evaluation. One step of the method is `step` (symmetric), and `half` is a first-order method Phi with
 * step_h = Phi*_{h/2} o Phi_{h/2}, Phi* (the adjoint) being `half` in reverse order; compositions
 * of a method and its adjoint (Blanes & Moan 2002, as a composition) use it. */
#ifndef LF_SPLITTING_INTERNAL_H
#define LF_SPLITTING_INTERNAL_H

#include "method/method_internal.h"

enum { LF_SPLIT_KICK, LF_SPLIT_FLOW, LF_SPLIT_R1, LF_SPLIT_R2, LF_SPLIT_R3 };

typedef struct {
    int kind;
    double c; /* fraction of the step */
} lf_split_op;

typedef struct lf_split_method {
    int quaternion;       /* 1: NO_SQUISH variables (quaternion q, conjugate momentum p), 0: (R, Pi) */
    int drift;            /* the free part whose sub-steps move the centres of mass (translating bodies):
                             one with the weight 1 per step (the middle rotation, or the free flow) */
    int n, nhalf;
    lf_split_op step[8];  /* one step, symmetric */
    lf_split_op half[4];  /* Phi, first order */
} lf_split_method;

/* The exact torque-free flow (free_flow.c). lf_split_consts: the constants of the bodies (symmetry
 * axis, ...), found at the first call on a stepper and kept in its workspace (lf_split_work counts
 * them); lf_free_flow: the flow of body b over tau on its R (s->R) and Pi, in place, errors in
 * s->err; lf_split_strang_exact: split_exact's step. */
const double *lf_split_consts(lf_stepper *s);
int lf_free_flow(lf_stepper *s, const double *fc, int b, double *Pi, double tau);
int lf_split_strang_exact(lf_stepper *s, double h);
/* The splitting data of a registered splitting method (NULL for any other method). */
const lf_split_method *lf_split_of(const lf_method *m);
/* 1 if b is kick / exact free flow (the parts of a Runge–Kutta–Nystrom splitting). */
int lf_split_rkn_ok(const lf_split_method *b);
/* Workspace (doubles) lf_split_run needs on the stepper. */
size_t lf_split_work(const lf_stepper *s);
/* Advance the rigid state of s by the composition of the splitting method b with coefficients
 * c[0..nc-1]: pairs = 0: the symmetric composition b_{c[nc-1] h} o ... o b_{c[0] h}; pairs = 1: the
 * composition of Phi and its adjoint, Phi*_{c[nc-1] h} o Phi_{c[nc-2] h} o ... o Phi*_{c[1] h} o
 * Phi_{c[0] h} (nc even); pairs = 3: the alternating sub-steps kick c[0] h, flow c[1] h, kick c[2] h,
 * ... of a two-part splitting (a method with lf_split_rkn_ok). Adjacent flows of the same part are merged (their sub-steps add: exact
 * for every part), so a composition costs one torque evaluation per kick that follows a flow. */
int lf_split_run(lf_stepper *s, const lf_split_method *b, const double *c, int nc, int pairs, double h);

#endif
