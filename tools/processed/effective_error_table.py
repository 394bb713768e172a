# SPDX-License-Identifier: GPL-3.0-or-later
"""Effective-error table: weight-(r+1) part of log(P^-1 K P) modulo im(ad Y1) (word-basis 2-norm,
what no processor can remove) for processed kernels; for unprocessed Kahan-Li methods the full
weight-(r+1) part of log K (and also its part mod im(ad Y1)). E_f = m * err^(1/r) (cost-scaled)."""
import json, sys, numpy as np
from order_conditions import Setup
from verify_orders import KL6, KL8, mirror
for r in (6, 8):
    S = Setup(r)
    A = S.A
    for fn in sys.argv[1:]:
        d = json.load(open(fn))
        if d['r'] != r: continue
        a = [float(x) for x in d['a']]; m = len(a)
        e = S.effective_error(a)
        print(f"{d['name']:16s} r={r} m={m:2d} k={d['k']:2d}  eff_err={e:.4e}  E_f=m*err^(1/r)={m*e**(1/r):.3f}  sum|a|={np.abs(a).sum():.3f}  sum|b|={d['sum_abs_b']:.3f} max|b|={d['max_abs_b']:.3f}")
    kl = [float(x) for x in mirror(KL6 if r == 6 else KL8)]
    X = A.log(A.prodS(kl)); R = X[A.byweight[r + 1]]
    M = S.M[r + 1]; z = np.linalg.lstsq(M, R, rcond=None)[0]
    full = np.linalg.norm(R); eff = S.effective_error(kl)
    print(f"KahanLi m={len(kl)}       r={r}  |weight {r+1} of log K|={full:.4e}  E_f={len(kl)*full**(1/r):.3f}   (mod im ad Y1: {eff:.4e})")
