# SPDX-License-Identifier: GPL-3.0-or-later
"""Check the processed schemes as lieflow ships them: read the PR6_* and PR8_* coefficients from
core/method/compose.c (26 digits) and print, in 40-digit arithmetic, the largest coefficient of
log(P o K o P^-1) - Y1 at weights 1..r (r = 6, 8): round-off of the printed digits (~1e-25) when the
kernel and processor have effective order r.

usage: /usr/bin/python3 tools/processed/check_shipped_coefficients.py [core/method/compose.c]
"""
import re
import sys

import mpmath as mp

from order_conditions import Setup
from free_algebra import palin

mp.mp.dps = 40
src = open(sys.argv[1] if len(sys.argv) > 1 else "core/method/compose.c").read()
macros = dict(re.findall(r"#define (PR[68]_[AP]\d+) (-?[0-9.]+)", src))


def coefs(prefix):
    out, i = [], 1
    while f"{prefix}{i}" in macros:
        out.append(mp.mpf(macros[f"{prefix}{i}"]))
        i += 1
    return out


worst = 0
for r, m in ((6, 7), (8, 11)):
    half = coefs(f"PR{r}_A")[: (m - 1) // 2]
    a, b = palin(half, m), coefs(f"PR{r}_P")
    # the middle stage: compose.c prints it; palin() recomputes it as 1 - 2 sum(half)
    mid = coefs(f"PR{r}_A")[(m - 1) // 2]
    S = Setup(r)
    lie, raw = S.mfull_residual_lie(a, b)
    res = max(abs(v) for v in raw)
    worst = max(worst, res, abs(mid - a[(m - 1) // 2]))
    print(f"processed{r}: {m} kernel stages, {len(b)} processor stages, max residual {mp.nstr(res, 3)}, "
          f"middle stage printed - 1 + 2 sum: {mp.nstr(abs(mid - a[(m - 1) // 2]), 3)}")
sys.exit(0 if worst < 1e-22 else 1)
