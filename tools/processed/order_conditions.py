# SPDX-License-Identifier: GPL-3.0-or-later
"""Order conditions for processed methods psi = P o K o P^{-1}.

Operator form: psi  <->  P_op^{-1} K_op P_op,  P_op = E(b_1)...E(b_k), K_op = E(a_1)...E(a_m),
E(c) = exp(log S_{c h}).   Residual = log(psi) - Y1, weights 1..r (h=1 by grading).

Kernel ("effective order") conditions: with Z = log P_op a free Lie element,
log(exp(-Z) exp(K) exp(Z)) = exp(-ad Z) K.  At weight n the processor contributes
[Y1, Z_{n-1}] (+ known lower terms), so the part of the weight-n term outside
im(ad Y1 : L_{n-1} -> L_n) is a condition on the kernel alone.  kernel_conditions()
computes those components sequentially (Z_{n-1} chosen to cancel the removable part).
"""
import numpy as np
import mpmath as mp
from free_algebra import Alg, palin, psi_coeffs


class Setup:
    def __init__(self, r, W=None):
        self.r = r
        self.W = W if W is not None else r + 1
        A = self.A = Alg(self.W)
        self.B = {n: A.lie_basis(n) for n in range(1, self.W + 1)}
        self.dim = {n: len(self.B[n]) for n in self.B}
        Y1 = A.gen(1)
        self.M, self.C = {}, {}
        for n in range(2, self.W + 1):
            ix = A.byweight[n]
            # preimage basis (ad Y1 kills only multiples of Y1, i.e. weight 1)
            self.Bpre = getattr(self, 'Bpre', {})
            self.Bpre[n] = [v for v in self.B[n - 1] if np.any(A.bracket(Y1, v))]
            M = [A.bracket(Y1, v)[ix] for v in self.Bpre[n]]
            C = []
            for v in self.B[n]:
                trial = M + C + [v[ix]]
                if np.linalg.matrix_rank(np.array(trial), tol=1e-9) == len(trial):
                    C.append(v[ix])
            self.M[n] = np.array(M).T if M else np.zeros((len(ix), 0))
            self.C[n] = np.array(C).T if C else np.zeros((len(ix), 0))
        # mp copies (exact integers)
        self.Mmp = {n: mp.matrix([[int(round(x)) for x in row] for row in self.M[n]]) if self.M[n].size else None
                    for n in self.M}
        self.MCmp = {}
        for n in self.M:
            MC = np.hstack([self.M[n], self.C[n]])
            self.MCmp[n] = mp.matrix([[int(round(x)) for x in row] for row in MC]) if MC.size else None
        # Lie coordinates for full residuals (basis B_n)
        self.Bmat = {n: np.array([v[A.byweight[n]] for v in self.B[n]]).T for n in self.B if self.B[n]}
        self.Bmp = {n: mp.matrix([[int(round(x)) for x in row] for row in self.Bmat[n]]) for n in self.Bmat}

    def ncond_kernel(self, upto=None):
        upto = upto or self.r
        return 1 + sum(self.C[n].shape[1] for n in range(2, upto + 1))  # +1: consistency

    # ---------- float ----------
    def kernel_conditions(self, a, upto=None, return_err=False):
        A = self.A
        upto = upto or self.r
        K = A.log(A.prodS(a))
        Z = np.zeros(A.N)
        out = []
        err = None
        for n in range(2, upto + 1):
            X = A.log(A.mul(A.mul(A.exp(-Z), A.exp(K)), A.exp(Z))) if np.any(Z) else K
            ix = A.byweight[n]
            R = X[ix]
            M, C = self.M[n], self.C[n]
            MC = np.hstack([M, C])
            if MC.shape[1] == 0:
                continue
            sol = np.linalg.lstsq(MC, R, rcond=None)[0]
            z, y = sol[:M.shape[1]], sol[M.shape[1]:]
            out.extend(y)
            for zi, v in zip(z, self.Bpre[n]):
                Z = Z - zi * v
        return np.array(out)

    def effective_error(self, a):
        """weight r+1 part of log(P^-1 K P) modulo im(ad Y1) (what no processor can remove),
        2-norm in the word basis (orthogonal projection), plus coordinates."""
        A = self.A
        n = self.r + 1
        K = A.log(A.prodS(a))
        Z = np.zeros(A.N)
        for j in range(2, n + 1):
            X = A.log(A.mul(A.mul(A.exp(-Z), A.exp(K)), A.exp(Z)))
            R = X[A.byweight[j]]
            M = self.M[j]
            if M.shape[1] == 0:
                continue
            z = np.linalg.lstsq(M, R, rcond=None)[0]
            if j < n:
                for zi, v in zip(z, self.Bpre[j]):
                    Z = Z - zi * v
            else:
                return np.linalg.norm(R - M @ z)

    def full_residual(self, a, b, upto=None):
        A = self.A
        upto = upto or self.r
        X = A.log(A.prodS(psi_coeffs(a, b)))
        X[A.idx[(1,)]] -= 1.0
        return X[(A.wt >= 1) & (A.wt <= upto)]

    def full_residual_weight(self, a, b, n):
        A = self.A
        X = A.log(A.prodS(psi_coeffs(a, b)))
        return X[A.byweight[n]]

    # ---------- mpmath ----------
    def mkernel_conditions(self, a, upto=None):
        A = self.A
        upto = upto or self.r
        K = A.mlog(A.mprodS(a))
        Z = [mp.mpf(0)] * A.N
        out = []
        nz = False
        for n in range(2, upto + 1):
            if nz:
                X = A.mlog(A.mmul(A.mmul(A.mexp([-x for x in Z]), A.mexp(K)), A.mexp(Z)))
            else:
                X = K
            ix = A.byweight[n]
            R = mp.matrix([X[i] for i in ix])
            MC = self.MCmp[n]
            if MC is None:
                continue
            sol = mp.lu_solve(MC.T * MC, MC.T * R)
            nm = self.M[n].shape[1]
            out.extend([sol[i] for i in range(nm, MC.cols)])
            for i, v in enumerate(self.Bpre[n]):
                for t in np.nonzero(v)[0]:
                    Z[t] -= sol[i] * int(round(v[t]))
                nz = True
        return out

    def mfull_residual_lie(self, a, b, upto=None):
        """Lie coordinates (basis B_n) of log(psi)-Y1, weights 1..upto, mpmath."""
        A = self.A
        upto = upto or self.r
        X = A.mlog(A.mprodS(psi_coeffs(a, b)))
        X[A.idx[(1,)]] -= 1
        out, raw = [], []
        for n in range(1, upto + 1):
            ix = A.byweight[n]
            raw.extend([X[i] for i in ix])
            if n not in self.Bmp:
                continue
            Bm = self.Bmp[n]
            R = mp.matrix([X[i] for i in ix])
            out.extend(list(mp.lu_solve(Bm.T * Bm, Bm.T * R)))
        return out, raw


def mp_newton(F, x0, dps=60, tol=None, maxit=30, verbose=False):
    """Minimum-norm Gauss-Newton (SVD pseudo-inverse) in mpmath; F: list->list."""
    mp.mp.dps = dps
    tol = tol or mp.mpf(10) ** (-(dps - 10))
    x = [mp.mpf(v) for v in x0]
    hstep = mp.mpf(10) ** (-(dps // 2))
    for it in range(maxit):
        f = F(x)
        nf = max(abs(v) for v in f)
        if verbose:
            print('  newton', it, mp.nstr(nf, 5))
        if nf < tol:
            break
        J = mp.matrix(len(f), len(x))
        for j in range(len(x)):
            xp = list(x); xp[j] += hstep
            xm = list(x); xm[j] -= hstep
            fp, fm = F(xp), F(xm)
            for i in range(len(f)):
                J[i, j] = (fp[i] - fm[i]) / (2 * hstep)
        U, S, V = mp.svd_r(J)
        smax = max(S)
        fv = mp.matrix(f)
        Utf = U.T * fv
        dx = mp.matrix(len(x), 1)
        for i in range(len(S)):
            if S[i] > smax * mp.mpf(10) ** (-(dps // 3)):
                dx += (Utf[i] / S[i]) * V[i, :].T
        x = [x[j] - dx[j] for j in range(len(x))]
    f = F(x)
    return x, max(abs(v) for v in f)
