# SPDX-License-Identifier: GPL-3.0-or-later
"""Derive processed composition methods  psi = P o K o P^{-1}  (Blanes-Casas-Ros type).

usage:  python3 derive_processed.py r m k [--seed S] [--starts N] [--sumabs L] [--name NAME]
   r = effective order (6 or 8), m = kernel stages (odd, palindromic), k = processor stages
   (k=0: only search the kernel).  Writes results/NAME.json (mp strings, 40 digits).
"""
import sys, json, time, argparse, os
import numpy as np
import mpmath as mp
from scipy.optimize import least_squares, minimize
from order_conditions import Setup, mp_newton
from free_algebra import palin, psi_coeffs

DPS = 45
PSCALE = float(os.environ.get('PSCALE', '1.0'))


def find_kernels(S, m, starts, rng, sumabs):
    nh = (m - 1) // 2
    nc = S.ncond_kernel() - 1  # conditions besides consistency (built in)
    sols = []
    for t in range(starts):
        x0 = rng.uniform(-1.2, 1.2, nh) * rng.uniform(0.3, 1.5)
        if nh == nc:
            res = least_squares(lambda x: S.kernel_conditions(palin(x, m)), x0, xtol=1e-15, ftol=1e-15, gtol=1e-15)
            if np.abs(res.fun).max() > 1e-11:
                continue
            x = res.x
        else:
            # free parameters: minimise effective error subject to the kernel conditions
            cons = [{'type': 'eq', 'fun': lambda x: S.kernel_conditions(palin(x, m))},
                    {'type': 'ineq', 'fun': lambda x: sumabs - np.sum(np.sqrt(np.array(palin(x, m)) ** 2 + 1e-12))}]
            res0 = least_squares(lambda x: S.kernel_conditions(palin(x, m)), x0, xtol=1e-14, ftol=1e-14, gtol=1e-14)
            if np.abs(res0.fun).max() > 1e-9:
                continue
            try:
                res = minimize(lambda x: np.log(S.effective_error(palin(x, m))), res0.x, method='SLSQP',
                               constraints=cons, options={'maxiter': 300, 'ftol': 1e-14})
            except Exception:
                continue
            x = res.x
            if np.abs(S.kernel_conditions(palin(x, m))).max() > 1e-9:
                continue
        a = palin(x, m)
        if np.abs(a).sum() > sumabs + 1e-6:
            continue
        if not any(np.allclose(a, s, atol=1e-6) for s in sols):
            sols.append(a)
    sols.sort(key=lambda a: S.effective_error(a))
    return sols


def proc_conditions(S, a, b):
    """independent processor conditions: im(ad Y1)-components of the weight-n residual, n=2..r"""
    A = S.A
    X = A.log(A.prodS(psi_coeffs(a, b)))
    out = []
    for n in range(2, S.r + 1):
        M, C = S.M[n], S.C[n]
        if M.shape[1] == 0:
            continue
        MC = np.hstack([M, C])
        sol = np.linalg.lstsq(MC, X[A.byweight[n]], rcond=None)[0]
        out.extend(sol[:M.shape[1]])
    return np.array(out)


def find_processor(S, a, k, starts, rng):
    best = []
    minres = np.inf
    for t in range(starts):
        x0 = rng.uniform(-1, 1, k) * rng.uniform(0.1, PSCALE)
        res = least_squares(lambda b: S.full_residual(a, b), x0, xtol=1e-15, ftol=1e-15, gtol=1e-15)
        minres = min(minres, np.abs(res.fun).max())
        if np.abs(res.fun).max() > 1e-10:
            continue
        b = res.x
        # minimise sum b^2 on the solution manifold
        try:
            r2 = minimize(lambda b: np.sum(b ** 2), b, method='SLSQP',
                          constraints=[{'type': 'eq', 'fun': lambda b: proc_conditions(S, a, b)}],
                          options={'maxiter': 300, 'ftol': 1e-15})
            if np.abs(S.full_residual(a, r2.x)).max() < 1e-9:
                b = r2.x
        except Exception:
            pass
        best.append(b)
    best.sort(key=lambda b: np.sum(b ** 2))
    print('  processor search k=%d: %d/%d converged, min max-residual %.2e' % (k, len(best), starts, minres))
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('r', type=int); ap.add_argument('m', type=int); ap.add_argument('k', type=int)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--starts', type=int, default=200)
    ap.add_argument('--pstarts', type=int, default=100)
    ap.add_argument('--sumabs', type=float, default=1e9)
    ap.add_argument('--pick', type=int, default=0)
    ap.add_argument('--name', default=None)
    ap.add_argument('--kernel', default=None, help='json file with kernel a (skip kernel search)')
    args = ap.parse_args()
    r, m, k = args.r, args.m, args.k
    name = args.name or f'proc{r}_m{m}_k{k}'
    rng = np.random.default_rng(args.seed)
    S = Setup(r)           # float, W = r+1
    t0 = time.time()
    if args.kernel:
        a = [float(x) for x in json.load(open(args.kernel))['a']]
        sols = [a]
    else:
        sols = find_kernels(S, m, args.starts, rng, args.sumabs)
        print(f'{len(sols)} kernel solutions (r={r}, m={m}):')
        for s in sols[:10]:
            print('  eff_err %.4e  sum|a| %.4f  ' % (S.effective_error(s), np.abs(s).sum()), np.round(s, 6))
        if not sols or k == 0:
            return
        a = sols[args.pick]
    # --- mp polish of kernel
    mp.mp.dps = DPS
    Smp = Setup(r, W=r)
    nh = (m - 1) // 2
    xh, fk = mp_newton(lambda x: Smp.mkernel_conditions(palin(x, m)), a[:nh], dps=DPS)
    amp = palin(xh, m)
    print('kernel polished: max|kernel cond| =', mp.nstr(fk, 5), ' time', round(time.time() - t0, 1))
    afl = [float(x) for x in amp]
    # --- processor
    bs = find_processor(S, afl, k, args.pstarts, rng)
    print(f'{len(bs)} processors with k={k}')
    if not bs:
        return
    for b in bs[:3]:
        print('   |b|2=%.4f max|b|=%.4f ' % (np.linalg.norm(b), np.abs(b).max()), np.round(b, 5))
    b = bs[0]
    bx, fb = mp_newton(lambda bb: Smp.mfull_residual_lie(amp, bb)[0], b, dps=DPS)
    lie, raw = Smp.mfull_residual_lie(amp, bx)
    kc = Smp.mkernel_conditions(amp)
    eff = S.effective_error(afl)
    res = dict(name=name, r=r, m=m, k=k,
               a=[mp.nstr(x, 40) for x in amp], b=[mp.nstr(x, 40) for x in bx],
               max_kernel_cond=mp.nstr(max(abs(x) for x in kc), 5),
               max_full_residual_lie=mp.nstr(max(abs(x) for x in lie), 5),
               max_full_residual_words=mp.nstr(max(abs(x) for x in raw), 5),
               eff_err=eff, sum_abs_a=float(sum(abs(x) for x in amp)),
               sum_abs_b=float(sum(abs(x) for x in bx)), max_abs_b=float(max(abs(x) for x in bx)),
               sum_b=float(sum(bx)))
    os.makedirs('results', exist_ok=True)
    json.dump(res, open(f'results/{name}.json', 'w'), indent=1)
    print(json.dumps(res, indent=1))
    print('total time', round(time.time() - t0, 1))


if __name__ == '__main__':
    main()
