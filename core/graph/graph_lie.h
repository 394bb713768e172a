/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — vectors, matrices and the maps of SO(3), S^2 and unit quaternions on expression
 * graphs: the same formulas as core/lie/ (so3.h, s2.h, quat.h, linalg.h), written branch-free over
 * graph nodes so that a traced function that uses them compiles, and smooth where the map is, so
 * that their derivatives (graph.h) are accurate everywhere:
 *   - the coefficients of Rodrigues' formula and of the differentials are Stumpff functions of
 *     s = |x|^2 (stumpff.h): exp(hat x) = I + c1(s) hat x + c2(s) hat x^2,
 *     dexp(x) = I + c2(s) hat x + c3(s) hat x^2, dexpinv(x) = I - hat x/2 + D hat x^2 with
 *     D = (1 - (t/2) cot(t/2))/t^2 = (c3(s) - 2 c4(s))/(2 c2(s)) (since (t/2) cot(t/2) = c1/(2 c2)
 *     and 2 c2 - c1 = s (c3 - 2 c4)), analytic up to t = 2 pi;
 *   - log(R) = w t/|w| with w = vee(R), c = (tr R - 1)/2, t = atan2(|w|, c), written
 *     w / (c1(t^2) sqrt(|w|^2 + c^2)) for angles below pi/2 (t/|w| = t/(sin t rho), rho =
 *     sqrt(|w|^2 + c^2) = 1 for a rotation; no 0/0 at the identity), and from the symmetric part
 *     beyond, as lf_so3_log does (the column of largest diagonal, the sign from w), by select();
 *   - the quaternion maps likewise (Shepperd's method for from_matrix by select()).
 * Where a C map reports a domain error (cayinv near pi, the midpoint of antipodal points,
 * retract_inv outside its chart, a singular matrix) the graph gives a non-finite value, which the
 * evaluation of a model reports as an error.
 * Vectors are int[3] of node ids, matrices int[9] (row-major), quaternions int[4] {w, x, y, z};
 * results may not alias arguments. */
#ifndef LF_GRAPH_LIE_H
#define LF_GRAPH_LIE_H

#include "base/export.h"
#include "graph/graph.h"

LF_BEGIN_DECLS

/* vectors */
int lf_gv3_dot(lf_graph *g, const int *a, const int *b);
void lf_gv3_cross(lf_graph *g, const int *a, const int *b, int *r);
int lf_gv3_norm(lf_graph *g, const int *a);
void lf_gv3_normalized(lf_graph *g, const int *a, int *r);      /* a / |a| */
/* matrices */
void lf_gm3_sub(lf_graph *g, const int *A, const int *B, int *R);
void lf_gm3_mul(lf_graph *g, const int *A, const int *B, int *R);
void lf_gm3_apply(lf_graph *g, const int *A, const int *x, int *r);  /* A x */
void lf_gm3_tapply(lf_graph *g, const int *A, const int *x, int *r); /* A^T x = x^T A */
void lf_gm3_transpose(const int *A, int *R);
int lf_gm3_det(lf_graph *g, const int *A);
int lf_gm3_trace(lf_graph *g, const int *A);
int lf_gm3_fnorm(lf_graph *g, const int *A);
void lf_gm3_inv(lf_graph *g, const int *A, int *R);               /* adjugate / det */
void lf_gm3_identity(lf_graph *g, int *R);
/* tr(M hat y) = y . trhat(M): trhat(M) = (M23 - M32, M31 - M13, M12 - M21) */
void lf_gm3_trhat(lf_graph *g, const int *M, int *r);
/* SO(3) (so3.h) */
void lf_gso3_hat(lf_graph *g, const int *w, int *W);
void lf_gso3_vee(lf_graph *g, const int *W, int *w);
void lf_gso3_exp(lf_graph *g, const int *x, int *R);
void lf_gso3_log(lf_graph *g, const int *R, int *x);
void lf_gso3_cay(lf_graph *g, const int *x, int *R);
void lf_gso3_cayinv(lf_graph *g, const int *R, int *x);
void lf_gso3_dexp(lf_graph *g, const int *x, int *D);
void lf_gso3_dexpinv(lf_graph *g, const int *x, int *D);
void lf_gso3_dcay(lf_graph *g, const int *x, int *D);
void lf_gso3_dcayinv(lf_graph *g, const int *x, int *D);
int lf_gso3_dist(lf_graph *g, const int *R1, const int *R2);
int lf_gso3_angle(lf_graph *g, const int *R1, const int *R2);
int lf_gso3_orth_error(lf_graph *g, const int *A);
/* S^2 (s2.h) */
int lf_gs2_dist(lf_graph *g, const int *p, const int *q);
void lf_gs2_midpoint(lf_graph *g, const int *p, const int *q, int *m);
void lf_gs2_retract(lf_graph *g, const int *x, const int *v, int *y);
void lf_gs2_retract_inv(lf_graph *g, const int *x, const int *y, int *v);
void lf_gs2_tangent(lf_graph *g, const int *x, const int *v, int *t);
void lf_gs2_exp(lf_graph *g, const int *x, const int *v, int *y);
/* unit quaternions (quat.h) */
void lf_gquat_mul(lf_graph *g, const int *p, const int *q, int *r);
void lf_gquat_conj(lf_graph *g, const int *q, int *r);
void lf_gquat_to_matrix(lf_graph *g, const int *q, int *R);
void lf_gquat_from_matrix(lf_graph *g, const int *R, int *q);
void lf_gquat_exp(lf_graph *g, const int *v, int *q);
void lf_gquat_log(lf_graph *g, const int *q, int *v);

LF_END_DECLS

#endif
