# SPDX-License-Identifier: GPL-3.0-or-later
"""Kernel-only random-start search: minimise E7 (lie_conditions.py, optimal processor implied) subject to
the 3 kernel conditions and sum|a|+sum|b| <= Smax.
usage: python3 kernel_search.py form s nstart Smax seed tmax     (form: K = kick-first, D = drift-first)
Appends results to ks_<form><s>.txt (one json per converged start)."""
import numpy as np, sys, json, time, warnings
from scipy.optimize import minimize
import lie_conditions as lie

warnings.filterwarnings('ignore')


def pal(free, n):
    """palindrome of length n with sum 1 from floor((n-1)/2) free values"""
    h = list(free)
    if n % 2 == 0:
        h = h + [0.5 - sum(h)]
        return h + h[::-1]
    return h + [1 - 2 * sum(h)] + h[::-1]


def split(x, s, form):
    if form == 'K':   # s drifts, s+1 kicks
        na, nb = s, s + 1
    else:             # s kicks, s+1 drifts
        na, nb = s + 1, s
    fa = (na - 1) // 2
    a = pal(x[:fa], na); b = pal(x[fa:], nb)
    return a, b


def seq_of(x, s, form):
    a, b = split(x, s, form)
    return lie.kernel_tensor_seq(a, b, 'kick-first' if form == 'K' else 'drift-first')


def size(x, s, form, eps=0.0):
    a, b = split(x, s, form)
    return sum(np.sqrt(v * v + eps) for v in a + b)


class Cache:
    def __init__(self, s, form):
        self.s, self.form, self.k, self.v = s, form, None, None

    def __call__(self, x):
        k = tuple(np.round(x, 15))
        if k != self.k:
            self.k = k; self.v = lie.analyse_seq(seq_of(x, self.s, self.form))
        return self.v


def run_start(x0, s, form, Smax):
    C = Cache(s, form)
    cons = [dict(type='eq', fun=lambda x: C(x)[0] * 1e3),
            dict(type='ineq', fun=lambda x: Smax - size(x, s, form, 1e-8))]
    obj = lambda x: np.log(C(x)[1])
    # phase 1: feasibility
    r = minimize(lambda x: 0.0, x0, method='SLSQP', constraints=cons, options=dict(maxiter=200, ftol=1e-12))
    x = r.x
    r = minimize(obj, x, method='SLSQP', constraints=cons, options=dict(maxiter=300, ftol=1e-10))
    x = r.x
    c, e = C(x)
    return x, float(np.linalg.norm(c)), float(e), float(size(x, s, form))


if __name__ == '__main__':
    form, s, nst, Smax, seed, tmax = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
    rng = np.random.default_rng(seed)
    nf = s - 1
    t0 = time.time(); best = None
    out = open(f'ks_{form}{s}.txt', 'a')
    for k in range(nst):
        if time.time() - t0 > tmax:
            break
        x0 = rng.normal(size=nf) * rng.choice([0.15, 0.3, 0.5]) + 1.0 / (s + 1)
        try:
            x, cn, e, sz = run_start(x0, s, form, Smax)
        except Exception as ex:
            continue
        if cn < 1e-10 and sz <= Smax + 1e-6:
            Ef = s * e ** (1 / 6)
            out.write(json.dumps(dict(form=form, s=s, x=list(x), E7=e, Ef=Ef, size=sz, cond=cn, Smax=Smax)) + '\n'); out.flush()
            if best is None or Ef < best:
                best = Ef
                a, b = split(x, s, form)
                print(f'{k} NEW BEST Ef={Ef:.4f} E7={e:.3e} size={sz:.3f} a={np.round(a,5).tolist()} b={np.round(b,5).tolist()}', flush=True)
    print('done', k, 'starts, best', best, time.time() - t0)
