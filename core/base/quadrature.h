/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — Gauss–Legendre quadrature nodes and weights on [0, 1] without allocation (the
 * discrete-gradient methods compute theirs once per stepper). */
#ifndef LF_QUADRATURE_H
#define LF_QUADRATURE_H

#include "base/export.h"

LF_BEGIN_DECLS

/* n >= 1 nodes s (ascending) and weights w on [0, 1]: Newton on the Legendre polynomial P_n from
 * Tricomi's estimate cos(pi (i + 3/4)/(n + 1/2)); exact for polynomials of degree 2n - 1; nodes
 * and weights agree with GSL's gsl_integration_glfixed tables to ~1e-16 (tests/c/test_dg.c). */
void lf_gauss_legendre(int n, double *s, double *w);

LF_END_DECLS

#endif
