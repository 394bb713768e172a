# SPDX-License-Identifier: GPL-3.0-or-later
"""Fast kernel-only search using lieb (batched FD Jacobians).
usage: python3 kernel_search_batched.py form s nstart Smax seed tmax  -> appends json lines to ks2_<form><s>.txt"""
import numpy as np, sys, json, time, warnings
from scipy.optimize import minimize, least_squares
import lie_conditions_batched as lieb
from kernel_search import split, size
warnings.filterwarnings('ignore')


class F:
    def __init__(self, s, form):
        self.s, self.form = s, form
        self.types = ['K', 'D'] * s + ['K'] if form == 'K' else ['D', 'K'] * s + ['D']
        self.k = None

    def coefs(self, X):
        out = []
        for x in X:
            a, b = split(x, self.s, self.form)
            row = []
            if self.form == 'K':
                for i in range(self.s):
                    row += [b[i], a[i]]
                row.append(b[-1])
            else:
                for i in range(self.s):
                    row += [a[i], b[i]]
                row.append(a[-1])
            out.append(row)
        return np.array(out)

    def eval(self, x, h=1e-7):
        k = x.tobytes()
        if k == self.k:
            return self.v
        n = len(x)
        X = np.vstack([x] + [x + h * np.eye(n)[i] for i in range(n)])
        c, e = lieb.analyse(self.types, self.coefs(X))
        le = np.log(e)
        self.v = (c[0], (c[1:] - c[0]).T / h, e[0], (le[1:] - le[0]) / h)
        self.k = k
        return self.v


def run_start(f, x0, Smax):
    s, form = f.s, f.form
    sz = lambda x: Smax - size(x, s, form, 1e-10)
    def szj(x):
        n = len(x); h = 1e-7
        return np.array([(sz(x + h * np.eye(n)[i]) - sz(x)) / h for i in range(n)])
    n = len(x0); lam = 1e-3
    r = least_squares(lambda x: np.concatenate([f.eval(x)[0] * 100, lam * (x - x0)]), x0,
                      jac=lambda x: np.vstack([f.eval(x)[1] * 100, lam * np.eye(n)]), method='lm', max_nfev=150)
    x = r.x
    for _ in range(8):
        c, J, e, g = f.eval(x)
        if not np.all(np.isfinite(J)): return None
        x = x - np.linalg.lstsq(J, c, rcond=None)[0]
    if np.linalg.norm(f.eval(x)[0]) > 1e-9 or size(x, s, form) > 3 * Smax:
        return None
    cons = [dict(type='eq', fun=lambda x: f.eval(x)[0] * 100, jac=lambda x: f.eval(x)[1] * 100),
            dict(type='ineq', fun=sz, jac=szj)]
    r = minimize(lambda x: np.log(f.eval(x)[2]), x, jac=lambda x: f.eval(x)[3], method='SLSQP', constraints=cons,
                 options=dict(maxiter=100, ftol=1e-10))
    x = r.x
    # clean the constraints with a few min-norm Newton steps
    for _ in range(5):
        c, J, e, g = f.eval(x)
        x = x - np.linalg.lstsq(J, c, rcond=None)[0]
    c, J, e, g = f.eval(x)
    return x, float(np.linalg.norm(c)), float(e), float(size(x, s, form))


if __name__ == '__main__':
    form, s, nst, Smax, seed, tmax = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
    rng = np.random.default_rng(seed)
    f = F(s, form)
    nf = s - 1
    t0 = time.time(); best = None; nconv = 0
    out = open(f'ks2_{form}{s}.txt', 'a')
    for k in range(nst):
        if time.time() - t0 > tmax:
            break
        x0 = rng.normal(size=nf) * rng.choice([0.1, 0.2, 0.4]) + 1.0 / (s + 1)
        try:
            res = run_start(f, x0, Smax)
        except Exception as ex:
            continue
        if res is None:
            continue
        x, cn, e, sz = res
        if cn < 1e-11 and sz <= Smax + 1e-6:
            nconv += 1
            Ef = s * e ** (1 / 6)
            out.write(json.dumps(dict(form=form, s=s, x=list(x), E7=e, Ef=Ef, size=sz, cond=cn, Smax=Smax)) + '\n'); out.flush()
            if best is None or Ef < best:
                best = Ef
                a, b = split(x, s, form)
                print(f'{k} NEW BEST Ef={Ef:.4f} E7={e:.3e} size={sz:.3f} a={np.round(a,5).tolist()} b={np.round(b,5).tolist()}', flush=True)
    print('done', k + 1, 'starts,', nconv, 'feasible; best', best, 'time', time.time() - t0)
