# SPDX-License-Identifier: GPL-3.0-or-later
"""Independent numerical verification of processed methods psi = P o K^N o P^{-1}.

S_h = Strang kick-drift-kick (leapfrog), symmetric, order 2, S_{-h} = S_h^{-1}.
Map conventions exactly as specified: P^{-1} applies S_{-b_k h} first ... S_{-b_1 h} last,
K applies S_{a_1 h} first ... S_{a_m h} last, P applies S_{b_1 h} first ... S_{b_k h} last.
Reference: mpmath (dps=30) run of Kahan-Li s17odr8a with a small step, cross-checked
against scipy DOP853 (rtol=atol=1e-13).

usage: python3 verify_orders.py results/proc6_m5.json [more.json ...]
"""
import sys, json, math
import numpy as np
import mpmath as mp
from scipy.integrate import solve_ivp

KL6 = ['0.39216144400731413927925056', '0.33259913678935943859974864', '-0.70624617255763935980996482',
       '0.08221359629355080023149045', '0.79854399093482996339895035']
KL8 = ['0.13020248308889008087881763', '0.56116298177510838456196441', '-0.38947496264484728640807860',
       '0.15884190655515560089621075', '-0.39590389413323757733623154', '0.18453964097831570709183254',
       '0.25837438768632204729397911', '0.29501172360931029887096624', '-0.60550853383003451169892108']


def mirror(half):
    return half + half[-2::-1]


T = 10.0


class Pendulum:
    name = 'pendulum q0=2'
    y0 = [2.0, 0.0]
    dim = 1

    @staticmethod
    def force(q, sin=math.sin):
        return [-sin(q[0])]

    @staticmethod
    def rhs(t, y):
        return [y[1], -np.sin(y[0])]


class HenonHeiles:
    name = 'Henon-Heiles'
    y0 = [0.1, 0.2, 0.3, -0.2]   # q1,q2,p1,p2 ; E ~ 0.089 < 1/6
    dim = 2

    @staticmethod
    def force(q, sin=None):
        q1, q2 = q
        return [-(q1 + 2 * q1 * q2), -(q2 + q1 * q1 - q2 * q2)]

    @staticmethod
    def rhs(t, y):
        q1, q2, p1, p2 = y
        return [p1, p2, -(q1 + 2 * q1 * q2), -(q2 + q1 * q1 - q2 * q2)]


def run(sys_, seq_K, seq_pre, seq_post, N, h, num=float, sin=math.sin):
    """seq_* : lists of c (application order) of S_{c h}. Kick-drift-kick leapfrog."""
    d = sys_.dim
    q = [num(v) for v in sys_.y0[:d]]
    p = [num(v) for v in sys_.y0[d:]]
    f = sys_.force(q, sin)

    def S(c, q, p, f):
        hh = c * h
        p = [pi + 0.5 * hh * fi for pi, fi in zip(p, f)]
        q = [qi + hh * pi for qi, pi in zip(q, p)]
        f = sys_.force(q, sin)
        p = [pi + 0.5 * hh * fi for pi, fi in zip(p, f)]
        return q, p, f

    for c in seq_pre:
        q, p, f = S(c, q, p, f)
    for _ in range(N):
        for c in seq_K:
            q, p, f = S(c, q, p, f)
    for c in seq_post:
        q, p, f = S(c, q, p, f)
    return q + p


def reference(sys_):
    mp.mp.dps = 30
    K = [mp.mpf(x) for x in mirror(KL8)]
    out = []
    for N in (1500, 3000):
        out.append(run(sys_, K, [], [], N, mp.mpf(T) / N, num=mp.mpf, sin=mp.sin))
    diff = max(abs(x - y) for x, y in zip(*out))
    ref = np.array([float(x) for x in out[1]])
    dop = solve_ivp(sys_.rhs, (0, T), sys_.y0, method='DOP853', rtol=1e-13, atol=1e-13).y[:, -1]
    return ref, float(diff), float(np.abs(dop - ref).max())


def method_seqs(meth):
    a = meth['a']; b = meth.get('b', [])
    pre = [-x for x in b[::-1]]
    post = list(b)
    return a, pre, post


def study(sys_, ref, meth, Ns):
    a, pre, post = method_seqs(meth)
    rows = []
    for N in Ns:
        y = run(sys_, a, pre, post, N, T / N)
        err = float(np.abs(np.array(y) - ref).max())
        rows.append((N, T / N, N * len(a) + len(pre) + len(post), err))
    return rows


def slope(rows, lo=3e-13, hi=1e-3):
    pts = [(math.log(r[1]), math.log(r[3])) for r in rows if lo < r[3] < hi]
    if len(pts) < 2:
        return float('nan'), len(pts)
    x, y = np.array(pts).T
    return float(np.polyfit(x, y, 1)[0]), len(pts)


def cost_at(rows, target):
    """log-log interpolation of cost needed to reach global error `target`"""
    rows = sorted(rows, key=lambda r: r[2])
    for r1, r2 in zip(rows, rows[1:]):
        if r1[3] >= target >= r2[3] and r2[3] > 0:
            t = (math.log(target) - math.log(r1[3])) / (math.log(r2[3]) - math.log(r1[3]))
            return math.exp(math.log(r1[2]) + t * (math.log(r2[2]) - math.log(r1[2])))
    return float('nan')


def geom(lo, hi, n):
    return sorted(set(int(round(x)) for x in np.geomspace(lo, hi, n)))


def main(files):
    meths = []
    for fn in files:
        d = json.load(open(fn))
        meths.append(dict(name=d['name'], a=[float(x) for x in d['a']], b=[float(x) for x in d['b']], r=d['r']))
        meths.append(dict(name=d['name'] + ' kernel only (no P)', a=[float(x) for x in d['a']], b=[], r=None))
    meths.append(dict(name='KahanLi s9odr6a (unprocessed)', a=[float(x) for x in mirror(KL6)], b=[], r=6))
    meths.append(dict(name='KahanLi s17odr8a (unprocessed)', a=[float(x) for x in mirror(KL8)], b=[], r=8))
    meths.append(dict(name='Strang (S alone)', a=[1.0], b=[], r=2))
    for sys_ in (HenonHeiles, Pendulum):
        ref, d, dd = reference(sys_)
        print(f'\n=== {sys_.name}, T={T}: reference = mp s17odr8a N=3000 (change vs N=1500: {d:.1e}); '
              f'|DOP853(1e-13) - ref| = {dd:.1e}')
        print(f'{"method":44s} {"slope":>6s} {"npts":>4s} {"cost@1e-8":>10s} {"cost@1e-11":>10s}   (N, err) samples')
        for meth in meths:
            m = len(meth['a'])
            Ns = geom(max(2, 20 // m * 0 + 3), 6000 // m + 50, 22) if meth['name'].startswith('Strang') is False else geom(50, 200000, 14)
            rows = study(sys_, ref, meth, Ns)
            s, npt = slope(rows)
            c8, c11 = cost_at(rows, 1e-8), cost_at(rows, 1e-11)
            samp = ' '.join(f'({r[0]},{r[3]:.1e})' for r in rows[::4])
            print(f'{meth["name"]:44s} {s:6.2f} {npt:4d} {c8:10.0f} {c11:10.0f}   {samp}')


if __name__ == '__main__':
    main(sys.argv[1:])
