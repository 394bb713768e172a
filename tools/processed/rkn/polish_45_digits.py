# SPDX-License-Identifier: GPL-3.0-or-later
"""mp polish (45 digits) of kernel+processor from processor_fit_staged.py output; writes methods.json.
usage: python3 polish_45_digits.py file.npy s form name"""
import numpy as np, sys, json, mpmath as mp, time
import lie_conditions as lie
from processor_fit import mp_polish, kseq, full_seq, series_check
from kernel_search import split
from power_series import Problems
fn, s, form, name = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
z = np.load(fn); x = z[:s - 1]; pc = z[s - 1:]
t = time.time()
xk, pcm = mp_polish(s, form, x, pc)
print('polish time', time.time() - t)
a, b = split(xk, s, form)
kern = kseq(xk, s, form)
Pc = Problems(NP=4, d=2, K=5, seed=99, M=8, use_mp=True, dps=45)
rr = Pc.residual_coeffs(full_seq(kern, pcm))
chk = [mp.nstr(max(abs(v) for v in rr[n].ravel()), 3) for n in range(1, 8)]
print('independent mp check (seed 99) max|coef h^n| n=1..7:', chk)
kf = [(t_, float(c)) for t_, c in kern]; pf = [float(v) for v in pcm]
e = series_check(full_seq(kf, pf))
cnd, e7min = lie.analyse_seq(kf)
print('float series |res h^n| n=1..7:', ['%.2e' % v for v in e])
print('kernel conditions', cnd, 'E7min (ideal processor) %.4e Ef_kernel %.4f ; E7 with this processor %.4e Ef_proc %.4f' % (e7min, s * e7min ** (1 / 6), e[6], s * e[6] ** (1 / 6)))
out = dict(kernel=[[t_, mp.nstr(c, 25)] for t_, c in kern], proc=[mp.nstr(v, 25) for v in pcm], E7_kernel=e7min,
           E7_with_proc=e[6], s=s, order=6, size=float(sum(abs(v) for v in a) + sum(abs(v) for v in b)),
           form='kick-first' if form == 'K' else 'drift-first', Ef_kernel=s * e7min ** (1 / 6), Ef_with_proc=s * e[6] ** (1 / 6), check=chk)
import os
db = json.load(open('methods.json')) if os.path.exists('methods.json') else {}
db[name] = out
json.dump(db, open('methods.json', 'w'), indent=1)
