# SPDX-License-Identifier: GPL-3.0-or-later
import numpy as np, json, mpmath as mp
from residuals import *
# number of independent kernel conditions at order 6 = rank(J_total) - rank(J_processor) at a solution
m = json.load(open('methods.json'))
for name in ['prkn6_s6', 'prkn6_s5']:
    s = m[name]['s']; a = [float(c) for t, c in m[name]['kernel'] if t == 'D']; b = [float(c) for t, c in m[name]['kernel'] if t == 'K']
    na, nb = (s+1)//2, (s+2)//2
    x = a[:na-1] + b[:nb-1]; pc = [float(c) for c in m[name]['proc']]
    S = System(s, len(pc), 6); z = np.array(x + pc)
    J = S.J(z); sv = np.linalg.svd(J, compute_uv=False); rt = (sv > sv[0]*1e-9).sum()
    sv2 = np.linalg.svd(J[:, s-1:], compute_uv=False); rp = (sv2 > sv2[0]*1e-9).sum()
    print(name, 'residual', np.linalg.norm(S.F(z)), 'rank total', rt, 'rank proc', rp, '=> kernel conditions', rt - rp)
