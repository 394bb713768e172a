# SPDX-License-Identifier: GPL-3.0-or-later
"""Check rkn6p as lieflow ships it: read PRK_K* (kernel: kick b1, flow a1, ..., up to the middle flow)
and PRK_P* (processor, kick first) from core/method/compose.c and print, in 40-digit arithmetic on
fresh generic test problems (seed 99), the largest scaled coefficient of h^1..h^6 of
P o K o P^-1 - (exact flow): round-off of the printed digits (~1e-23) for effective order 6.

usage (from the top of the tree): /usr/bin/python3 tools/processed/rkn/check_shipped_coefficients.py [core/method/compose.c]
"""
import re
import sys

import mpmath as mp
import numpy as np

from residuals import problems, scales

mp.mp.dps = 40
src = open(sys.argv[1] if len(sys.argv) > 1 else "core/method/compose.c").read()
macros = dict(re.findall(r"#define (PRK_[KP]\d+) (-?[0-9.]+)", src))


def coefs(prefix):
    out, i = [], 1
    while f"{prefix}{i}" in macros:
        out.append(mp.mpf(macros[f"{prefix}{i}"]))
        i += 1
    return out


half, pc = coefs("PRK_K"), coefs("PRK_P")
kernel = half + half[-2::-1]  # palindromic around the middle flow
seq = [("K" if i % 2 == 0 else "D", c) for i, c in enumerate(pc)]
seq = [(t, -c) for t, c in seq[::-1]] + [("K" if i % 2 == 0 else "D", c) for i, c in enumerate(kernel)] + seq
M = 8
P = problems(M, use_mp=True, dps=40, seed=99)
sc = scales(problems(M, seed=99), M)
r = P.residual_coeffs(seq, dtype=object)
res = [max(abs(mp.mpf(x)) / sc[n][k] for k, row in enumerate(r[n]) for x in row) for n in range(1, 7)]
sums = (sum(kernel[0::2]), sum(kernel[1::2]))
print("rkn6p: %d kernel sub-steps (kicks sum %s, flows %s), %d processor sub-steps" %
      (len(kernel), mp.nstr(sums[0], 20), mp.nstr(sums[1], 20), len(pc)))
print("  largest scaled residual of h^1..h^6: " + ", ".join(mp.nstr(v, 3) for v in res))
h7 = max(abs(mp.mpf(x)) / sc[7][k] for k, row in enumerate(r[7]) for x in row)
print("  h^7 (the leading error, not zero):", mp.nstr(h7, 3))
sys.exit(0 if max(res) < 1e-20 else 1)
