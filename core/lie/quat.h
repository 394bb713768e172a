/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — unit quaternions q = [w, x, y, z] (scalar first), Hamilton product.
 * The rotation of a unit quaternion is R(q) v = q (0,v) q^*, i.e. R(q) = exp(hat(2 v)) for
 * q = (cos|v|, sin|v| v/|v|) = quat_exp(v). */
#ifndef LF_QUAT_H
#define LF_QUAT_H

#include "base/export.h"

LF_BEGIN_DECLS

/* r = p q (Hamilton product; r may alias p or q). */
void lf_quat_mul(const double p[4], const double q[4], double r[4]);
/* r = conjugate (w, -x, -y, -z). */
void lf_quat_conj(const double q[4], double r[4]);
/* R = rotation matrix of the quaternion q (Euler–Rodrigues); q is normalized first (any finite
 * nonzero q; scaled by a power of two when |q|^2 would over- or underflow). */
void lf_quat_to_matrix(const double q[4], double R[9]);
/* q with w >= 0 from a rotation matrix (Shepperd's method, stable for every angle). */
void lf_quat_from_matrix(const double R[9], double q[4]);
/* exp of the pure quaternion (0, v): (cos|v|, sin|v| v/|v|); series for small |v|. */
void lf_quat_exp(const double v[3], double q[4]);
/* log of a unit quaternion: v with exp(v) = q, |v| <= pi (q and -q give different v). */
void lf_quat_log(const double q[4], double v[3]);

LF_END_DECLS

#endif
