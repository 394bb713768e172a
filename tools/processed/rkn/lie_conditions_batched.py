# SPDX-License-Identifier: GPL-3.0-or-later
"""Batched (over kernels) version of lie.analyse_seq: arrays (Nb, 2^n) per grade."""
import numpy as np
from math import factorial
import lie_conditions as lie
G = 7
EV, C3, N3, C5, N5, C7 = lie.EV, lie.C3, lie.N3, lie.C5, lie.N5, lie.C7
C7P = C7 @ C7.T


DT = [float]


def zero(nb):
    return [np.zeros((nb, 2 ** n), dtype=DT[0]) for n in range(G + 1)]


def mul(x, y, lo=0):
    nb = max(x[0].shape[0], y[0].shape[0])
    z = zero(nb)
    for n in range(G + 1):
        for k in range(n + 1):
            if np.any(x[k]) and np.any(y[n - k]):
                z[n] = z[n] + (x[k][:, :, None] * y[n - k][:, None, :]).reshape(nb, -1)
    return z


def add(x, y, b=1.0):
    return [u + b * v for u, v in zip(x, y)]


def br(x, y):
    return add(mul(x, y), mul(y, x), -1.0)


def const(t, nb):
    return [np.repeat(v[None, :], nb, 0) for v in t]


def seq_product(types, C):
    """types: list of 'K'/'D'; C: (nb, len) coefficients"""
    nb = C.shape[0]
    DT[0] = C.dtype
    z = zero(nb); z[0][:, 0] = 1
    for j, typ in enumerate(types):
        idx = 0 if typ == 'D' else -1
        c = C[:, j]
        new = [v.copy() for v in z]
        for n in range(1, G + 1):
            for k in range(1, n + 1):
                if np.any(z[n - k]):
                    blk = np.zeros((nb, 2 ** n), dtype=DT[0]).reshape(nb, 2 ** (n - k), 2 ** k)
                    blk[:, :, idx] = z[n - k] * (c ** k / factorial(k))[:, None]
                    new[n] += blk.reshape(nb, -1)
        z = new
    return z


def log(g):
    nb = g[0].shape[0]
    u = [v.copy() for v in g]; u[0] = np.zeros_like(u[0])
    res = zero(nb); p = zero(nb); p[0][:, 0] = 1
    for k in range(1, G + 1):
        p = mul(p, u)
        res = add(res, p, (-1) ** (k + 1) / k)
    return res


def grade(x, n):
    z = [np.zeros_like(v) for v in x]; z[n] = x[n].copy(); return z


def ev(x, n):
    return x[n] @ EV[n].T      # (nb,36)


X1c = lie.X1; Y2c = lie.Y2g
M4 = np.array([lie.ev(lie.br(g, lie.X1), 5) for g in lie.g4]).T
M4p = np.linalg.pinv(M4, rcond=1e-10)
g4 = lie.g4


def analyse(types, C):
    nb = C.shape[0]
    X = log(seq_product(types, C))
    X1 = const(X1c, nb)
    X3, X5, X7 = grade(X, 3), grade(X, 5), grade(X, 7)
    r3 = ev(X3, 3)
    y = -(r3 @ C3[:, 0]) / (C3[:, 0] @ C3[:, 0])
    c3 = (r3 + y[:, None] * C3[:, 0]) @ N3
    Y2 = [v * y[:, None] for v in const(Y2c, nb)]
    Y2X1 = br(Y2, X1)
    t5 = add(add(X5, br(Y2, X3)), br(Y2, Y2X1), 0.5)
    r5 = ev(t5, 5)
    z = -(r5 @ M4p.T)
    Y4 = zero(nb)
    for j, g in enumerate(g4):
        Y4 = add(Y4, [v[None, :] * z[:, j:j + 1] for v in g])
    c5 = (r5 + z @ M4.T) @ N5
    t7 = X7
    t7 = add(t7, br(Y2, X5))
    t7 = add(t7, br(Y2, br(Y2, X3)), 0.5)
    t7 = add(t7, br(Y2, br(Y2, Y2X1)), 1 / 6)
    t7 = add(t7, br(Y4, X3))
    t7 = add(t7, br(Y2, br(Y4, X1)), 0.5)
    t7 = add(t7, br(Y4, Y2X1), 0.5)
    r7 = ev(t7, 7)
    e7 = r7 - r7 @ C7P
    return np.concatenate([c3, c5], 1), np.linalg.norm(e7, axis=1)
