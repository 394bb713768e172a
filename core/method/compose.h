/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — composition methods: a symmetric method Phi of order 2 composed with itself,
 *     Psi_h = Phi_{g_s h} o ... o Phi_{g_1 h},   g palindromic, sum g_i = 1,
 * is symmetric of a higher order (Yoshida 1990; Suzuki 1990; McLachlan 1995; Kahan & Li 1997;
 * Blanes & Moan 2002), and
 * symplectic if Phi is. The composite is a method like any other (lf_stepper_new, the registry
 * battery): its metadata are the composed order and the symmetry, symplecticity and momentum
 * conservation of its base. Schemes:
 *   triple_jump4   order 4, 3 stages, g_1 = g_3 = 1/(2 - 2^(1/3)) (Yoshida 1990; Creutz & Gocksch 1989)
 *   suzuki4        order 4, 5 stages, g_1 = g_2 = g_4 = g_5 = 1/(4 - 4^(1/3)) (Suzuki 1990)
 *   blanes_moan4   order 4, the optimized 6-stage splitting S6 of Blanes & Moan (2002, Table 2), written
 *                  as a composition of a first-order method Phi and its adjoint Phi* (12 maps,
 *                  Phi*_{c12 h} o Phi_{c11 h} o ... o Phi*_{c2 h} o Phi_{c1 h}), which has order 4 for
 *                  any first-order Phi. It needs the splitting methods (dlm, no_squish, split_exact),
 *                  which are Phi*_{h/2} o Phi_{h/2} for Phi = "kick, then the free-rotor parts": 7 kicks
 *                  (6 torque evaluations) and 6 free flows per step
 *   rkn4, rkn6     order 4 and 6, Blanes & Moan's (2002, Table 3) Runge–Kutta–Nystrom splittings SRKN_6^b
 *                  (6 torque evaluations) and SRKN_11^b (11): kick / free flow / kick ... with sub-steps
 *                  optimized for H = T + U with T quadratic in the momenta, which a rigid body is in its
 *                  body momenta ({U, {U, {U, T}}} = 0). They need the exact free flow: split_exact only
 *   blanes_moan6   order 6, Blanes & Moan's (2002, Table 2) S10 as 20 maps Phi, Phi* (splitting bases)
 *   rkn6a          order 6, Blanes & Moan's (2002, Table 3) SRKN_14^a (14 torques; split_exact only)
 *   kahan_li6      order 6, 9 stages (Kahan & Li 1997, s9odr6a)
 *   kahan_li8      order 8, 17 stages (Kahan & Li 1997, s17odr8a)
 *   mclachlan8     order 8, 15 stages (McLachlan 1995)
 *   processed6     effective order 6: a 7-stage kernel with a 5-stage processor, processed8 effective
 *                  order 8: 11 stages, processor 10 (after Blanes, Casas & Ros 1999; derived for
 *                  lieflow, tools/processed/). A step costs the kernel's stages; the processor runs
 *                  when a run starts, when h changes and for each state shown (the np fields below)
 *   rkn6p          a processed Runge-Kutta-Nystrom splitting (split_exact only) of effective order 6:
 *                  kick / flow kernel with 7 torques, a 31-entry processor (after Blanes, Casas & Ros
 *                  2001; derived for lieflow, tools/processed/rkn/)
 * The orders are those reached from a base of order 2; from a base of order p >= 4 the composite
 * has order max(p, scheme order) (the schemes also satisfy the conditions of the higher bases).
 * The coefficients were checked in 50-digit arithmetic (mpmath) before use: Blanes & Moan's S6 has
 * order 4.00 on a four-part splitting of random matrices, SRKN_6^b and SRKN_11^b orders 4.00 and 6.00
 * on the Henon-Heiles system; Kahan & Li's satisfy sum g = 1, sum g^3 = sum g^5 (= sum g^7) = 0 to
 * 1e-26. tests/c/test_compose.c measures every order again on rigid bodies. */
#ifndef LF_COMPOSE_H
#define LF_COMPOSE_H

#include "base/export.h"
#include "method/method.h"

LF_BEGIN_DECLS

typedef enum {
    LF_COMPOSE_SYMMETRIC = 0, /* stages g_i h of a symmetric method (any symmetric base) */
    LF_COMPOSE_ADJOINT = 1,   /* maps Phi_{c1 h}, Phi*_{c2 h}, Phi_{c3 h}, ... (a splitting base) */
    LF_COMPOSE_RKN = 3        /* the sub-steps kick c1 h, free flow c2 h, kick c3 h, ... of a splitting of
                                 H = T + U with T quadratic in the momenta (split_exact only) */
} lf_compose_form;

typedef struct lf_compose_scheme {
    const char *name;      /* "triple_jump4", ... */
    const char *title;     /* one line */
    const char *reference; /* authors and year */
    int order;             /* from a symmetric base of order 2 */
    int form;              /* lf_compose_form: how the coefficients are used */
    int n;                 /* number of coefficients (stages, maps Phi / Phi*, or sub-steps) */
    double c[32];
    /* Processed schemes (np > 0): the composition above is a kernel K_h whose steps run in the
     * variable z = P_h^{-1}(y) of a processor P_h given in the same form by p[0..np-1] (applied in
     * that order; P_h^{-1} is the list reversed and negated, exact for symmetric bases). N steps are
     * P_h o K_h^N o P_h^{-1}: the stepper pre-processes when a run starts or h changes and
     * post-processes the state it shows after each call (stepper.c). The order is the effective order
     * of P K P^{-1}. */
    int np;
    double p[32];
} lf_compose_scheme;

/* The registered schemes (triple_jump4, suzuki4, kahan_li6, ...): their number, and scheme i
 * (0-based; NULL outside 0 .. count - 1). */
int lf_compose_scheme_count(void);
const lf_compose_scheme *lf_compose_scheme_at(int i);

/* The composition of `base` (borrowed: it must outlive the composite and every stepper using it) with
 * the named scheme, named "<base>_<scheme>". Refused (NULL, err filled, LF_EINVAL): an unknown scheme,
 * a base that is not symmetric or is adaptive, an adjoint scheme on a base that is not a splitting
 * method, an RKN scheme on another base than split_exact. Free with lf_method_free. */
lf_method *lf_compose_method_new(const lf_method *base, const char *scheme, lf_error *err);
/* For a composite (registered or made above): its base and scheme; NULL for other methods. */
const lf_method *lf_compose_base(const lf_method *m);
const lf_compose_scheme *lf_compose_scheme_of(const lf_method *m);

LF_END_DECLS

#endif
