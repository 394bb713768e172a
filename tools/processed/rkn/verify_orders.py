# SPDX-License-Identifier: GPL-3.0-or-later
"""Independent double-precision check of processed RKN methods.
Usage: python3 verify_orders.py methods.json
methods.json: {name: {"kernel": [["K",b1],["D",a1],...], "proc": [p0,p1,...] or null}}
"""
import json, sys
import numpy as np
from scipy.integrate import solve_ivp

BM11 = dict(b=[0.0414649985182624, 0.198128671918067, -0.0400061921041533, 0.0752539843015807, -0.0115113874206879],
            a=[0.123229775946271, 0.290553797799558, -0.127049212625417, -0.246331761062075, 0.357208872795928])
BM14 = dict(a=[0.0378593198406116, 0.102635633102435, -0.0258678882665587, 0.314241403071447, -0.130144459517415,
               0.106417700369543, -0.00879424312851058],
            b=[0.0917191526244617, 0.183983170005006, -0.0565343658328883, 0.00491468877471285, 0.143761127168358,
               0.328567693746804])


def srkn11b():
    b = BM11['b'] + [0.5 - sum(BM11['b'])]
    a = BM11['a'] + [1 - 2 * sum(BM11['a'])]
    seq = []
    for i in range(6):
        seq += [('K', b[i]), ('D', a[i])]
    seq += [('K', b[5])]
    for i in range(4, -1, -1):
        seq += [('D', a[i]), ('K', b[i])]
    return seq


def srkn14a():
    a = BM14['a'] + [1 - 2 * sum(BM14['a'])]
    b = BM14['b'] + [0.5 - sum(BM14['b'])]
    seq = []
    for i in range(7):
        seq += [('D', a[i]), ('K', b[i])]
    seq += [('D', a[7])]
    for i in range(6, -1, -1):
        seq += [('K', b[i]), ('D', a[i])]
    return seq


def cost(seq):
    """force evaluations per step when consecutive steps are chained."""
    nk = sum(1 for t, _ in seq if t == 'K')
    if seq[0][0] == 'K' and seq[-1][0] == 'K':
        nk -= 1
    return nk


# ------------------------------------------------------------------ problems
def hh_force(q):
    x, y = q
    return np.array([-x - 2 * x * y, -y - x * x + y * y])


def hh_H(q, p):
    x, y = q
    return 0.5 * (p @ p) + 0.5 * (x * x + y * y) + x * x * y - y ** 3 / 3


def pend_force(q):
    return -np.sin(q)


def fpu3_force(q):   # 3-D: anharmonic coupled oscillators (quartic) on R^3
    x = np.concatenate([[0.0], q, [0.0]])
    dx = np.diff(x)
    g = dx + dx ** 3          # derivative of V(r)= r^2/2 + r^4/4 per bond
    return g[1:] - g[:-1]


PROBLEMS = {
    'HenonHeiles': (hh_force, np.array([0.2, -0.1]), np.array([0.3, 0.25])),
    'Pendulum': (pend_force, np.array([2.0]), np.array([0.0])),
    'Chain3D': (fpu3_force, np.array([0.5, -0.3, 0.8]), np.array([0.2, 0.6, -0.4])),
}


def reference(name, T=10.0):
    f, q0, p0 = PROBLEMS[name]
    d = len(q0)
    rhs = lambda t, y: np.concatenate([y[d:], f(y[:d])])
    sol = solve_ivp(rhs, (0, T), np.concatenate([q0, p0]), method='DOP853', rtol=1e-14, atol=1e-16)
    return sol.y[:, -1]


def apply(seq, f, q, p, h):
    for t, c in seq:
        if t == 'D':
            q = q + (c * h) * p
        else:
            p = p + (c * h) * f(q)
    return q, p


def integrate(kernel, proc, f, q, p, h, N):
    if proc:
        pl = [('K' if i % 2 == 0 else 'D', c) for i, c in enumerate(proc)]
        pinv = [(t, -c) for t, c in pl[::-1]]
        q, p = apply(pinv, f, q, p, h)
    for _ in range(N):
        q, p = apply(kernel, f, q, p, h)
    if proc:
        q, p = apply(pl, f, q, p, h)
    return q, p


def error(kernel, proc, name, N, T=10.0, ref=None):
    f, q0, p0 = PROBLEMS[name]
    q, p = integrate(kernel, proc, f, q0.copy(), p0.copy(), T / N, N)
    return np.max(np.abs(np.concatenate([q, p]) - ref))


def study(methods, names=('HenonHeiles', 'Pendulum', 'Chain3D'), T=10.0, out=print):
    Ns = np.unique(np.round(np.geomspace(8, 4000, 28)).astype(int))
    results = {}
    for name in names:
        ref = reference(name, T)
        # sanity of reference: compare against SRKN14a with tiny step
        out(f'\n=== {name} (T={T}) ===')
        for mname, m in methods.items():
            ker = [(t, float(c)) for t, c in m['kernel']]
            proc = [float(c) for c in m['proc']] if m.get('proc') else None
            c = cost(ker)
            errs = np.array([error(ker, proc, name, N, T, ref) for N in Ns])
            ev = Ns * c
            # slope over the clean asymptotic range (errors between 1e-4 and 1e-12)
            sel = (errs < 1e-4) & (errs > 3e-13)
            slope = np.polyfit(np.log(T / Ns[sel]), np.log(errs[sel]), 1)[0] if sel.sum() >= 3 else np.nan
            tab = {}
            for tol in (1e-6, 1e-8, 1e-10):
                # first N from which the error stays below tol
                ok = np.where(errs < tol)[0]
                idx = None
                for i in ok:
                    if np.all(errs[i:] < tol * 1.0001) or i == len(errs) - 1:
                        idx = i; break
                if idx is None or idx == 0:
                    tab[tol] = None
                else:
                    # log-log interpolation between Ns[idx-1], Ns[idx]
                    e0, e1 = np.log(errs[idx - 1]), np.log(errs[idx])
                    n0, n1 = np.log(ev[idx - 1]), np.log(ev[idx])
                    tab[tol] = float(np.exp(n0 + (np.log(tol) - e0) * (n1 - n0) / (e1 - e0)))
            results[(name, mname)] = dict(slope=slope, tab=tab, errs=errs, Ns=Ns)
            fm = lambda v: '   n/a' if v is None else f'{v:8.0f}'
            out(f'{mname:22s} cost/step {c:2d}  slope {slope:5.2f}  evals@1e-6 {fm(tab[1e-6])}  @1e-8 {fm(tab[1e-8])}  @1e-10 {fm(tab[1e-10])}')
    return results


if __name__ == '__main__':
    methods = {'SRKN11b (BM, ord6)': {'kernel': srkn11b(), 'proc': None},
               'SRKN14a (BM, ord6)': {'kernel': srkn14a(), 'proc': None}}
    if len(sys.argv) > 1:
        extra = json.load(open(sys.argv[1]))
        for k, v in extra.items():
            methods[k] = {'kernel': v['kernel'], 'proc': v.get('proc')}
            methods[k + ' [no proc]'] = {'kernel': v['kernel'], 'proc': None}
    study(methods)
