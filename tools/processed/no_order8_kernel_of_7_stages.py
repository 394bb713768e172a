# SPDX-License-Identifier: GPL-3.0-or-later
"""Show that m=7 kernels cannot reach effective order 8: min over many starts of ||kernel conditions||."""
import numpy as np
from scipy.optimize import least_squares
from order_conditions import Setup
from free_algebra import palin
S=Setup(8, W=8); rng=np.random.default_rng(5); best=[]
for t in range(300):
    x0=rng.uniform(-2,2,3)
    res=least_squares(lambda x: S.kernel_conditions(palin(x,7)), x0, xtol=1e-15, ftol=1e-15, gtol=1e-15)
    best.append((np.linalg.norm(res.fun), np.round(palin(res.x,7),4)))
best.sort(key=lambda t:t[0])
print('m=7, r=8: smallest ||kernel conditions|| over 300 starts:', best[0][0], best[0][1])
print('next:', [b[0] for b in best[1:6]])
