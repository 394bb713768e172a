# SPDX-License-Identifier: GPL-3.0-or-later
"""Kernel-only evaluation of effective order 6 conditions and E7 (Lie-algebra route).

Truncated tensor algebra in letters A (drift, index 0) and B (kick, index 1), grades 0..7,
product in application order (first applied factor leftmost).  The evaluation maps
Eval_n : words of length n -> R^36 (h^n Taylor coefficient of the flow on the 6 scaled test
problems of residuals.py) are fitted once by regression against power_series.py compositions.

For a kernel with log X = X1 + X3 + X5 + X7 (symmetric, X1 = A+B) and processor log
Y = Y2 + Y4 + Y6 (free Lie elements), the processed log is e^{ad Y} X.  Grades 3 and 5 must
vanish (Y2, Y4 by linear least squares; what is left = the 3 kernel conditions), E7 is the
norm of the grade-7 residual after the least-squares Y6.  This equals the minimum over all
processors of the h^7 residual norm used in solver/optim (E7 of best_processor is >= this).
"""
import numpy as np, os
from math import factorial

G = 7
A, B = 0, 1


def zero():
    return [np.zeros(2 ** n) for n in range(G + 1)]


def one():
    t = zero(); t[0][0] = 1.0; return t


def mul(x, y):
    z = zero()
    for n in range(G + 1):
        for k in range(n + 1):
            if x[k].any() and y[n - k].any():
                z[n] = z[n] + np.kron(x[k], y[n - k])
    return z


def add(x, y, a=1.0, b=1.0):
    return [a * u + b * v for u, v in zip(x, y)]


def letter_exp_right(x, L, c):
    """x * exp(c L)"""
    z = [v.copy() for v in x]
    for n in range(1, G + 1):
        for k in range(1, n + 1):
            e = np.zeros(2 ** k); e[0 if L == A else -1] = c ** k / factorial(k)
            if x[n - k].any():
                z[n] = z[n] + np.kron(x[n - k], e)
    return z


def seq_product(seq):
    t = one()
    for typ, c in seq:
        t = letter_exp_right(t, A if typ == 'D' else B, c)
    return t


def log(g):
    u = [v.copy() for v in g]; u[0] = np.zeros(1)
    res = zero(); p = one()
    for k in range(1, G + 1):
        p = mul(p, u)
        res = add(res, p, 1.0, (-1) ** (k + 1) / k)
    return res


def br(x, y):
    return add(mul(x, y), mul(y, x), 1.0, -1.0)


def gen(L):
    t = zero(); t[1][L] = 1.0; return t


def grade(x, n):
    t = zero(); t[n] = x[n].copy(); return t


def right_normed(word):
    t = gen(word[-1])
    for L in word[-2::-1]:
        t = br(gen(L), t)
    return t


def words(n):
    return [[(i >> (n - 1 - j)) & 1 for j in range(n)] for i in range(2 ** n)]


# ------------------------------------------------------------ evaluation maps
def fit_eval(nc=500, seed=7):
    from residuals import problems, scales
    P = problems(G + 1); sc = scales(P, G + 1)
    rng = np.random.default_rng(seed)
    T = [[] for _ in range(G + 1)]; Yv = [[] for _ in range(G + 1)]
    for i in range(nc):
        L = rng.integers(6, 14)
        seq = [('K' if (j + rng.integers(2)) % 2 == 0 else 'D', rng.normal() * 0.6) for j in range(L)]
        q, p = P.compose(seq)
        c = np.concatenate([q, p], axis=1)               # (NP,2d,M)
        c = np.transpose(c, (2, 0, 1)) / sc[:, :, None]  # (M,NP,2d)
        tp = seq_product(seq)
        for n in range(1, G + 1):
            T[n].append(tp[n]); Yv[n].append(c[n].ravel())
    E = [None]
    for n in range(1, G + 1):
        Tn = np.array(T[n]); Yn = np.array(Yv[n])
        En, res, rk, sv = np.linalg.lstsq(Tn, Yn, rcond=None)
        fitres = np.linalg.norm(Tn @ En - Yn) / np.linalg.norm(Yn)
        print('grade', n, 'rank', rk, 'cond %.1e' % (sv[0] / sv[-1]), 'fit rel res %.1e' % fitres)
        E.append(En.T)        # (36, 2^n)
    return E


_cache = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'lie_eval.npz')
if os.path.exists(_cache):
    _d = np.load(_cache)
    EV = [None] + [_d['E%d' % n] for n in range(1, G + 1)]
else:
    EV = fit_eval()
    np.savez(_cache, **{'E%d' % n: EV[n] for n in range(1, G + 1)})


def ev(x, n):
    return EV[n] @ x[n]


def orth(M, tol=1e-9):
    U, s, _ = np.linalg.svd(M, full_matrices=False)
    return U[:, s > s[0] * tol]


X1 = add(gen(A), gen(B))
Y2g = br(gen(A), gen(B))
g4 = [right_normed(w) for w in words(4)]
g6 = [right_normed(w) for w in words(6)]
# evaluated ranges of Lie elements per grade
V = {n: orth(np.array([ev(right_normed(w), n) for w in words(n)]).T) for n in (3, 5, 7)}
C3 = ev(br(Y2g, X1), 3)[:, None]
C5 = orth(np.array([ev(br(g, X1), 5) for g in g4]).T)
C7 = orth(np.array([ev(br(g, X1), 7) for g in g6]).T)


def compl(Vn, Cn):
    # orthonormal basis of range(Vn) orthogonal to range(Cn)
    Q = orth(Cn)
    W = Vn - Q @ (Q.T @ Vn)
    return orth(W, 1e-8)


N3 = compl(V[3], C3); N5 = compl(V[5], C5); N7 = compl(V[7], C7)
DIMS = (V[3].shape[1], V[5].shape[1], V[7].shape[1], N3.shape[1], N5.shape[1], N7.shape[1])


def analyse_log(X, full=False):
    """X: log of kernel (tensor).  Returns (cond vector (3), E7, extras)."""
    X3, X5, X7 = grade(X, 3), grade(X, 5), grade(X, 7)
    r3 = ev(X3, 3)
    y = -np.linalg.lstsq(C3, r3, rcond=None)[0][0]
    Y2 = add(zero(), Y2g, 0, y)
    c3 = N3.T @ (r3 + y * C3[:, 0])
    t5 = add(add(X5, br(Y2, X3)), br(Y2, br(Y2, X1)), 1, 0.5)
    r5 = ev(t5, 5)
    M4 = np.array([ev(br(g, X1), 5) for g in g4]).T
    z = -np.linalg.lstsq(M4, r5, rcond=1e-10)[0]
    Y4 = zero()
    for zi, g in zip(z, g4):
        Y4 = add(Y4, g, 1, zi)
    c5 = N5.T @ (r5 + M4 @ z)
    a2Y2X1 = br(Y2, X1)
    t7 = X7
    t7 = add(t7, br(Y2, X5))
    t7 = add(t7, br(Y2, br(Y2, X3)), 1, 0.5)
    t7 = add(t7, br(Y2, br(Y2, a2Y2X1)), 1, 1 / 6)
    t7 = add(t7, br(Y4, X3))
    t7 = add(t7, br(Y2, br(Y4, X1)), 1, 0.5)
    t7 = add(t7, br(Y4, a2Y2X1), 1, 0.5)
    r7 = ev(t7, 7)
    e7 = r7 - C7 @ (C7.T @ r7)
    cond = np.concatenate([c3, c5])
    if full:
        return cond, np.linalg.norm(e7), dict(y=y, z=z, r7=r7, lowres=[np.linalg.norm(ev(X, n)) for n in (2, 4, 6)])
    return cond, np.linalg.norm(e7)


def kernel_tensor_seq(a, b, form='kick-first'):
    seq = []
    if form == 'kick-first':
        for i in range(len(a)):
            seq += [('K', b[i]), ('D', a[i])]
        seq.append(('K', b[-1]))
    else:
        for i in range(len(b)):
            seq += [('D', a[i]), ('K', b[i])]
        seq.append(('D', a[-1]))
    return seq


def analyse_seq(seq, full=False):
    return analyse_log(log(seq_product(seq)), full)


if __name__ == '__main__':
    print('dims V3,V5,V7,N3,N5,N7 =', DIMS)
    import json
    from verify_orders import srkn11b, srkn14a
    for nm, sq in [('SRKN11b', srkn11b()), ('SRKN14a', srkn14a())]:
        X = log(seq_product(sq))
        print(nm, 'raw |X7| eval', np.linalg.norm(ev(X, 7)), analyse_log(X, True)[:2])
    m = json.load(open('methods.json'))
    for nm, v in m.items():
        sq = [(t, float(c)) for t, c in v['kernel']]
        c, e, ex = analyse_seq(sq, True)
        print(nm, 'cond', c, 'E7min', e, 'E7 (best_processor)', v['E_next'], 'low grades', ex['lowres'])
