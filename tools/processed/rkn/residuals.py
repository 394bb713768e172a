# SPDX-License-Identifier: GPL-3.0-or-later
"""Residual functions / Jacobians / solvers for processed RKN methods."""
import numpy as np
import mpmath as mp
from scipy.optimize import least_squares
from power_series import Problems, kernel_seq, kernel_list, proc_list, proc_inv_list, processed_seq

NP, D, K, SEED = 6, 3, 6, 3


def problems(M, use_mp=False, dps=40, seed=SEED):
    return Problems(NP=NP, d=D, K=K, seed=seed, M=M, use_mp=use_mp, dps=dps)


def scales(P, M):
    eq, ep = P.exact
    c = np.concatenate([eq, ep], axis=1).astype(float)        # (NP,2d,M)
    nrm = np.sqrt((c ** 2).sum(axis=1))                       # (NP,M)
    rho = np.max(nrm[:, 1:] ** (1.0 / np.arange(1, M)), axis=1)
    return rho[None, :] ** np.arange(M)[:, None]              # (M,NP)


class System:
    """Unknowns z = [kernel free params (s-1), processor coeffs (npc)].
    Residual = scaled coefficients h^1..h^order of P K P^-1 - exact."""

    def __init__(self, s, npc, order, fix=None, P=None):
        self.s, self.npc, self.order = s, npc, order
        self.P = P if P is not None else problems(order + 2)
        self.sc = scales(self.P, self.P.M)
        self.nk = s - 1
        self.fix = fix    # dict index->value of kernel params held fixed

    def full(self, z):
        if not self.fix:
            return z
        z = list(z)
        for i in sorted(self.fix):
            z.insert(i, self.fix[i])
        return np.array(z, dtype=object if isinstance(z[0], mp.mpf) else None)

    def coeffs(self, z, dtype=float):
        zf = self.full(z)
        x, pc = zf[:self.nk], zf[self.nk:]
        r = self.P.residual_coeffs(processed_seq(x, pc, self.s), dtype=dtype)  # (M,NP,2d)
        return r / self.sc[:, :, None]

    def F(self, z, orders=None, dtype=float):
        r = self.coeffs(z, dtype)
        lo, hi = (1, self.order) if orders is None else orders
        return r[lo:hi + 1].reshape(-1)

    def J(self, z, orders=None):
        z = np.asarray(z, float)
        cols = []
        for i in range(len(z)):
            zc = z.astype(complex)
            zc[i] += 1e-30j
            cols.append(self.F(zc, orders, dtype=complex).imag / 1e-30)
        return np.array(cols).T

    def solve(self, z0, orders=None, **kw):
        f = lambda z: self.F(z, orders)
        j = lambda z: self.J(z, orders)
        return least_squares(f, z0, jac=j, method='lm', xtol=1e-15, ftol=1e-15, gtol=1e-15, **kw)


def gn_minnorm(sysm, z, orders, iters=30, tol=1e-14, verbose=False):
    """Gauss-Newton with minimum-norm steps for underdetermined systems."""
    for it in range(iters):
        r = sysm.F(z, orders)
        J = sysm.J(z, orders)
        dz = np.linalg.lstsq(J, -r, rcond=1e-12)[0]
        z = z + dz
        if verbose:
            print(it, np.linalg.norm(r), np.linalg.norm(dz))
        if np.linalg.norm(dz) < tol:
            break
    return z


def mp_polish(sysm_mp, sysm_f, z, orders, iters=6, verbose=True):
    """Newton (min-norm) in mpmath using float Jacobian (converges linearly with
    ratio ~1e-14, i.e. ~14 digits per iteration)."""
    z = np.array([mp.mpf(v) if not isinstance(v, mp.mpf) else v for v in z], dtype=object)
    for it in range(iters):
        r = sysm_mp.F(z, orders)
        J = sysm_f.J(np.array([float(v) for v in z]), orders)
        Jp = np.linalg.pinv(J, rcond=1e-12)
        # residual in mp -> float after scaling is fine for the *step* (step is tiny)
        rn = max(abs(v) for v in r)
        dz = Jp @ np.array([float(v) for v in r])
        z = z - np.array([mp.mpf(v) for v in dz], dtype=object)
        if verbose:
            print('  mp polish it', it, 'max|res| =', mp.nstr(rn, 5))
        if rn < mp.mpf(10) ** (-(mp.mp.dps - 8)):
            break
    return z
