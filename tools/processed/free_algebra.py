# SPDX-License-Identifier: GPL-3.0-or-later
"""Truncated free associative algebra over Y1,Y3,Y5,Y7,Y9 (weights 1,3,5,7,9).

Element = vector of coefficients indexed by words (tuples of generator weights),
all words of total weight <= W.  Two back-ends: numpy float64 and mpmath (python lists).

Operator (Lie-derivative) convention: a map composition Phi_n o ... o Phi_1 (Phi_1 first)
corresponds to exp(X_1) exp(X_2) ... exp(X_n).  (By the reversal anti-automorphism, which
fixes every Y_j, the order conditions log(...) = Y1 + O(h^{r+1}) are the same in either
convention, so this choice cannot spoil the conditions; the numerical test confirms.)

log S_{c h} = c h Y1 + c^3 h^3 Y3 + c^5 h^5 Y5 + ...   (h = 1 by grading)
exp(sum_j c^j Y_j)[w] = c^{wt(w)} / len(w)!    (generator-only exponent, closed form)
"""
import math
import numpy as np
import mpmath as mp

GENS = (1, 3, 5, 7, 9)


class Alg:
    def __init__(self, W):
        self.W = W
        words = [()]
        frontier = [()]
        while frontier:
            nf = []
            for w in frontier:
                for g in GENS:
                    if sum(w) + g <= W:
                        nf.append(w + (g,))
            words += nf
            frontier = nf
        words.sort(key=lambda w: (sum(w), w))
        self.words = words
        self.N = len(words)
        self.idx = {w: i for i, w in enumerate(words)}
        self.wt = np.array([sum(w) for w in words])
        self.ln = np.array([len(w) for w in words])
        # multiplication table
        I, J, K = [], [], []
        for i, u in enumerate(words):
            for j, v in enumerate(words):
                if sum(u) + sum(v) <= W:
                    I.append(i); J.append(j); K.append(self.idx[u + v])
        self.I, self.J, self.K = np.array(I), np.array(J), np.array(K)
        self.mtab = list(zip(I, J, K))
        # splits for right multiplication by exp of a generator element
        T, Pf, Sw, Sl = [], [], [], []
        for t, w in enumerate(words):
            for p in range(len(w) + 1):
                T.append(t); Pf.append(self.idx[w[:p]]); Sw.append(sum(w[p:])); Sl.append(len(w) - p)
        self.sT, self.sP, self.sW, self.sL = map(np.array, (T, Pf, Sw, Sl))
        self.sfact = np.array([1.0 / math.factorial(l) for l in Sl])
        self.splits = list(zip(T, Pf, Sw, Sl))
        self.byweight = {n: [i for i, w in enumerate(words) if sum(w) == n] for n in range(W + 1)}

    # ---------------- float back-end ----------------
    def mul(self, u, v):
        return np.bincount(self.K, weights=u[self.I] * v[self.J], minlength=self.N)

    def expS(self, c):
        return c ** self.wt / np.array([math.factorial(l) for l in self.ln])

    def mulS(self, u, c):
        """u * exp(log S_c)"""
        return np.bincount(self.sT, weights=u[self.sP] * c ** self.sW * self.sfact, minlength=self.N)

    def prodS(self, cs):
        u = np.zeros(self.N); u[0] = 1.0
        for c in cs:
            u = self.mulS(u, c)
        return u

    def log(self, u):
        v = u.copy(); v[0] = 0.0
        res = np.zeros(self.N); p = v.copy()
        for j in range(1, self.W + 1):
            res += ((-1) ** (j + 1) / j) * p
            p = self.mul(p, v)
        return res

    def exp(self, x):
        res = np.zeros(self.N); res[0] = 1.0; p = res.copy()
        for j in range(1, self.W + 1):
            p = self.mul(p, x) / j
            res += p
        return res

    # ---------------- mpmath back-end ----------------
    def mmul(self, u, v):
        out = [mp.mpf(0)] * self.N
        for i, j, k in self.mtab:
            ui = u[i]
            if ui:
                vj = v[j]
                if vj:
                    out[k] += ui * vj
        return out

    def mmulS(self, u, c):
        pw = [mp.mpf(1)]
        for _ in range(self.W):
            pw.append(pw[-1] * c)
        fac = [mp.mpf(1) / math.factorial(l) for l in range(self.W + 1)]
        out = [mp.mpf(0)] * self.N
        for t, p, sw, sl in self.splits:
            if u[p]:
                out[t] += u[p] * pw[sw] * fac[sl]
        return out

    def mprodS(self, cs):
        u = [mp.mpf(0)] * self.N; u[0] = mp.mpf(1)
        for c in cs:
            u = self.mmulS(u, c)
        return u

    def mlog(self, u):
        v = list(u); v[0] = mp.mpf(0)
        res = [mp.mpf(0)] * self.N; p = list(v)
        for j in range(1, self.W + 1):
            f = mp.mpf((-1) ** (j + 1)) / j
            res = [r + f * q for r, q in zip(res, p)]
            p = self.mmul(p, v)
        return res

    def mexp(self, x):
        res = [mp.mpf(0)] * self.N; res[0] = mp.mpf(1); p = list(res)
        for j in range(1, self.W + 1):
            p = [q / j for q in self.mmul(p, x)]
            res = [r + q for r, q in zip(res, p)]
        return res

    # ---------------- Lie structure (exact integer vectors) ----------------
    def gen(self, g):
        v = np.zeros(self.N); v[self.idx[(g,)]] = 1.0
        return v

    def bracket(self, u, v):
        return self.mul(u, v) - self.mul(v, u)

    def lie_basis(self, n):
        """Independent right-normed brackets of generators of total weight n (integer word vectors)."""
        seqs = [w for w in self.words if sum(w) == n]
        vecs = []
        for s in seqs:
            v = self.gen(s[-1])
            for g in reversed(s[:-1]):
                v = self.bracket(self.gen(g), v)
            vecs.append(v)
        # greedy independent subset
        basis = []
        for v in vecs:
            if not np.any(v):
                continue
            trial = basis + [v]
            if np.linalg.matrix_rank(np.array(trial), tol=1e-9) == len(trial):
                basis.append(v)
        return basis


def palin(half, m):
    """full palindromic list of m (odd) coefficients, middle fixed so that sum = 1.
    half = a_1..a_{(m-1)/2}"""
    half = list(half)
    mid = 1 - 2 * sum(half)
    return half + [mid] + half[::-1]


def psi_coeffs(a, b):
    """Sequence of c's of S_{c h} in APPLICATION order for P o K o P^{-1}:
    S_{-b_k},...,S_{-b_1}, S_{a_1},...,S_{a_m}, S_{b_1},...,S_{b_k}."""
    b = list(b)
    return [-x for x in b[::-1]] + list(a) + b
