# SPDX-License-Identifier: GPL-3.0-or-later
"""Truncated power series in h for compositions of exact kick/drift flows.

Generic test problems: H = |p|^2/2 + V(q), q in R^d, V a sum of K ridge
exponentials  V(q) = sum_k alpha_k exp(beta_k w_k.q)  (all derivatives generic,
unlike a low-degree polynomial whose high derivatives vanish).
Force f(q) = -sum_k w_k alpha_k beta_k exp(beta_k w_k.q).

State: q, p arrays of shape (NP, d, M) (NP problems, coefficients of h^0..h^{M-1}).
Every map is near identity, so the h^0 coefficient never changes -> exp(beta u0)
is precomputed per problem.

Works with dtype float, complex (complex-step derivatives) and object (mpmath).
"""
import numpy as np
import mpmath as mp


class Problems:
    def __init__(self, NP=5, d=3, K=6, seed=1, M=10, use_mp=False, dps=40):
        rng = np.random.default_rng(seed)
        self.NP, self.d, self.K, self.M = NP, d, K, M
        W = rng.normal(size=(NP, K, d)) / np.sqrt(d)
        alpha = rng.normal(size=(NP, K))
        beta = rng.uniform(0.5, 1.5, size=(NP, K)) * rng.choice([-1, 1], size=(NP, K))
        q0 = rng.normal(size=(NP, d)) * 0.5
        p0 = rng.normal(size=(NP, d))
        self.use_mp = use_mp
        if use_mp:
            mp.mp.dps = dps
            conv = np.frompyfunc(lambda x: mp.mpf(float(x)), 1, 1)
            W, alpha, beta, q0, p0 = [conv(x).astype(object) for x in (W, alpha, beta, q0, p0)]
            expf = np.frompyfunc(mp.exp, 1, 1)
        else:
            expf = np.exp
        self.W, self.alpha, self.beta, self.q0, self.p0 = W, alpha, beta, q0, p0
        self.WT = np.transpose(W, (0, 2, 1))
        u0 = np.matmul(W, q0[:, :, None])[:, :, 0]           # (NP,K)
        self.E0 = expf(beta * u0)
        self.ab = alpha * beta
        self.zero = mp.mpf(0) if use_mp else 0.0
        self.exact = self.exact_series(M)

    def force(self, q):
        """f(q(h)) as series; q: (NP,d,M)."""
        M = q.shape[2]
        u = np.matmul(self.W, q)                  # (NP,K,M)
        E = np.empty(u.shape, dtype=np.result_type(u.dtype, self.E0.dtype) if u.dtype != object else object)
        E[:, :, 0] = self.E0
        j = np.arange(M)
        bu = self.beta[:, :, None] * u * j        # beta * j * u_j
        for n in range(1, M):
            # E_n = (1/n) sum_{j=1}^n j beta u_j E_{n-j}
            s = bu[:, :, 1] * E[:, :, n - 1]
            for jj in range(2, n + 1):
                s = s + bu[:, :, jj] * E[:, :, n - jj]
            E[:, :, n] = s / n
        return -np.matmul(self.WT, self.ab[:, :, None] * E)  # (NP,d,M)

    def init_state(self, dtype=float):
        M = self.M
        if self.use_mp:
            q = np.full((self.NP, self.d, M), self.zero, dtype=object)
            p = np.full((self.NP, self.d, M), self.zero, dtype=object)
        else:
            q = np.zeros((self.NP, self.d, M), dtype=dtype)
            p = np.zeros((self.NP, self.d, M), dtype=dtype)
        q[:, :, 0] = self.q0
        p[:, :, 0] = self.p0
        return q, p

    def exact_series(self, M):
        Me = M + 1
        if self.use_mp:
            q = np.full((self.NP, self.d, Me), self.zero, dtype=object)
        else:
            q = np.zeros((self.NP, self.d, Me))
        q[:, :, 0] = self.q0
        q[:, :, 1] = self.p0
        for n in range(Me - 2):
            f = self.force(q[:, :, :n + 1])
            q[:, :, n + 2] = f[:, :, n] / ((n + 1) * (n + 2))
        p = q[:, :, 1:] * np.arange(1, Me)
        return q[:, :, :M], p[:, :, :M]

    def compose(self, seq, dtype=float):
        """seq: list of ('K'|'D', coef) applied left to right. Returns (q,p) series."""
        q, p = self.init_state(dtype)
        if dtype != float and not self.use_mp:
            q = q.astype(dtype); p = p.astype(dtype)
        for typ, c in seq:
            if typ == 'D':
                q = q.copy()
                q[:, :, 1:] = q[:, :, 1:] + c * p[:, :, :-1]
            else:
                f = self.force(q)
                p = p.copy()
                p[:, :, 1:] = p[:, :, 1:] + c * f[:, :, :-1]
        return q, p

    def residual_coeffs(self, seq, dtype=float):
        """array (M, NP, 2d): coefficient of h^n of composed - exact."""
        q, p = self.compose(seq, dtype)
        eq, ep = self.exact
        dq = q - eq
        dp = p - ep
        r = np.concatenate([dq, dp], axis=1)      # (NP,2d,M)
        return np.transpose(r, (2, 0, 1))


# ---------------------------------------------------------------- methods
def kernel_seq(x, s):
    """Palindromic kick-first kernel with s drifts.  x = s-1 free parameters.
    Returns (a list, b list) full coefficient lists."""
    na = (s + 1) // 2          # independent a's (incl. determined one)
    nb = (s + 2) // 2          # independent b's
    xa = list(x[:na - 1])
    xb = list(x[na - 1:na - 1 + nb - 1])
    one = 1 if not isinstance(x[0], mp.mpf) else mp.mpf(1)
    # a
    if s % 2 == 0:   # no middle a: 2*sum(a_1..a_{s/2}) = 1
        ah = xa + [one / 2 - sum(xa)]
        a = ah + ah[::-1]
    else:
        ah = xa
        a = ah + [one - 2 * sum(xa)] + ah[::-1]
    if (s + 1) % 2 == 0:   # s odd -> s+1 even b's, no middle
        bh = xb + [one / 2 - sum(xb)]
        b = bh + bh[::-1]
    else:
        bh = xb
        b = bh + [one - 2 * sum(xb)] + bh[::-1]
    return a, b


def kernel_list(a, b):
    seq = []
    for i in range(len(a)):
        seq += [('K', b[i]), ('D', a[i])]
    seq.append(('K', b[-1]))
    return seq


def proc_list(pc):
    return [('K' if i % 2 == 0 else 'D', c) for i, c in enumerate(pc)]


def proc_inv_list(pc):
    return [(t, -c) for t, c in proc_list(pc)[::-1]]


def processed_seq(x, pc, s):
    a, b = kernel_seq(x, s)
    return proc_inv_list(pc) + kernel_list(a, b) + proc_list(pc)
