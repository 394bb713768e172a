# SPDX-License-Identifier: GPL-3.0-or-later
"""Count kernel (effective-order) conditions by Jacobian ranks at a solution.

Kernel is padded with identity pairs  S_x o S_{-x}  at both ends (same map, more parameters):
 a' = (x, -x, a_1..a_m, -x, x) palindromic; parameters = free palindromic half incl. middle
(sum NOT enforced).  F = Lie coordinates of log(P^{-1} K P) - Y1 at weights 1..r.
rank J_(a,b) - rank J_b = number of conditions that only the kernel can satisfy.
usage: python3 count_conditions.py results/X.json [npad]
"""
import sys, json
import mpmath as mp
from order_conditions import Setup

d = json.load(open(sys.argv[1]))
npad = int(sys.argv[2]) if len(sys.argv) > 2 else 2
mp.mp.dps = 40
r = d['r']
S = Setup(r, W=r)
a = [mp.mpf(x) for x in d['a']]
b = [mp.mpf(x) for x in d['b']]
pad = []
for i in range(npad):
    x = mp.mpf('0.1') * (i + 1) + mp.mpf('0.0371') * i * i
    pad += [x, -x]
full = pad + a + pad[::-1]
m = len(full)
half = full[:(m + 1) // 2]          # includes middle


def unhalf(h):
    return list(h) + list(h[:-1])[::-1]


def F(p):
    hh, bb = p[:len(half)], p[len(half):]
    return S.mfull_residual_lie(unhalf(hh), bb)[0]


x0 = half + b
f0 = F(x0)
print('residual at padded solution:', mp.nstr(max(abs(v) for v in f0), 3))
eps = mp.mpf(10) ** -18
J = mp.matrix(len(f0), len(x0))
for j in range(len(x0)):
    xp = list(x0); xp[j] += eps
    xm = list(x0); xm[j] -= eps
    fp, fm = F(xp), F(xm)
    for i in range(len(f0)):
        J[i, j] = (fp[i] - fm[i]) / (2 * eps)


def rank(M, tol=mp.mpf(10) ** -12):
    s = mp.svd_r(M, compute_uv=False)
    s = sorted([abs(v) for v in s], reverse=True)
    return sum(1 for v in s if v > tol * s[0]), [mp.nstr(v, 3) for v in s]


na = len(half)
Jb = J[:, na:]
Ja = J[:, :na]
rA, sA = rank(J)
rB, sB = rank(Jb)
rK, sK = rank(Ja)
print(f'r={r}: #equations (Lie dims weights 1..r) = {len(f0)}, kernel params = {na}, processor params = {len(b)}')
print('rank J_(a,b) =', rA, ' sv:', sA)
print('rank J_b     =', rB, ' sv:', sB)
print('rank J_a     =', rK)
print('=> kernel-only (effective order) conditions incl. consistency:', rA - rB)
