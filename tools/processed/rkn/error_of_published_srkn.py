# SPDX-License-Identifier: GPL-3.0-or-later
import numpy as np
from residuals import *
from verify_orders import srkn11b, srkn14a
P = problems(8); sc = scales(P, 8)
for name, seq in [('SRKN11b', srkn11b()), ('SRKN14a', srkn14a())]:
    r = P.residual_coeffs(seq) / sc[:, :, None]
    e = [np.linalg.norm(r[n]) for n in range(1, 8)]
    c = 11 if name == 'SRKN11b' else 14
    print(name, 'scaled |res| h^1..h^7:', ['%.1e' % v for v in e], ' Ef=cost*E7^(1/6)=%.3f' % (c * e[6] ** (1 / 6)))
print('prkn6_s6: E7=1.71e-3  Ef=%.3f' % (6 * 1.706e-3 ** (1 / 6)))
