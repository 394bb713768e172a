# SPDX-License-Identifier: GPL-3.0-or-later
"""Processor for a fixed kernel: complex-step Jacobians (lieb), staged LM (grades 2..4, then 2..6),
then weighted LM that also minimises the removable h^7 part (C7), then Gauss-Newton cleanup.
usage: python3 processor_fit_staged.py ks2_K6.txt rank npc ntry seed"""
import numpy as np, sys, json, time
from scipy.optimize import least_squares
import lie_conditions as lie, lie_conditions_batched as lieb
from processor_fit import kseq, full_seq, series_check

C7 = lie.C7


def res_all(kernel, PC):
    seqs = [full_seq(kernel, pc) for pc in PC]
    types = [t for t, _ in seqs[0]]
    C = np.array([[c for _, c in sq] for sq in seqs])
    X = lieb.log(lieb.seq_product(types, C))
    return [lieb.ev(X, n) for n in range(2, 7)] + [lieb.ev(X, 7) @ C7, lieb.ev(X, 7)]


def make(kernel, npc, grades, w7=None):
    cache = {}
    def fj(pc):
        k = pc.tobytes()
        if k in cache: return cache[k]
        P = np.vstack([pc.astype(complex)] + [pc + 1e-30j * np.eye(npc)[i] for i in range(npc)])
        parts = res_all(kernel, P)
        sel = [parts[g - 2] for g in grades]  # g=7 -> C7 part
        if w7 is not None:
            sel = [1e3 * p for p in sel] + [parts[5]]
        R = np.concatenate(sel, 1)
        r = R[0].real; J = (R[1:].imag / 1e-30).T
        cache.clear(); cache[k] = (r, J)
        return r, J
    return fj


def fit(kernel, npc, rng, ntry, scale=0.15, verbose=True):
    out = []
    for t in range(ntry):
        pc = rng.normal(size=npc) * scale
        for grades in [(2, 3, 4), (2, 3, 4, 5, 6)]:
            fj = make(kernel, npc, grades)
            r = least_squares(lambda p: fj(p)[0], pc, jac=lambda p: fj(p)[1], method='lm', max_nfev=400, xtol=1e-15, ftol=1e-15, gtol=1e-15)
            pc = r.x
        fj = make(kernel, npc, (2, 3, 4, 5, 6))
        for _ in range(12):
            rr, J = fj(pc)
            pc = pc - np.linalg.lstsq(J, rr, rcond=1e-12)[0]
        lo = np.linalg.norm(fj(pc)[0])
        if lo > 1e-8 or np.abs(pc).sum() > 30:
            if verbose: print('  try', t, 'fail lo %.1e sum|pc| %.1f' % (lo, np.abs(pc).sum()), flush=True)
            continue
        fw = make(kernel, npc, (2, 3, 4, 5, 6), w7=True)
        r = least_squares(lambda p: fw(p)[0], pc, jac=lambda p: fw(p)[1], method='lm', max_nfev=300)
        pc2 = r.x
        for _ in range(8):
            rr, J = fj(pc2)
            pc2 = pc2 - np.linalg.lstsq(J, rr, rcond=1e-12)[0]
        if np.linalg.norm(fj(pc2)[0]) < 1e-12 and np.abs(pc2).sum() < 30:
            pc = pc2
        for _ in range(5):
            rr, J = fj(pc)
            pc = pc - np.linalg.lstsq(J, rr, rcond=1e-12)[0]
        # stage: damped min-norm Gauss-Newton on grades 2..6 AND the removable h^7 part (C7 = 0)
        fa = make(kernel, npc, (2, 3, 4, 5, 6, 7))
        pcg = pc.copy()
        for it in range(40):
            rr, J = fa(pcg)
            nr = np.linalg.norm(rr)
            if nr < 1e-14: break
            dx = -np.linalg.lstsq(J, rr, rcond=1e-12)[0]
            st = 1.0
            while st > 1e-3 and np.linalg.norm(fa(pcg + st * dx)[0]) >= nr:
                st /= 2
            pcg = pcg + st * dx
        if np.linalg.norm(fa(pcg)[0]) < 1e-12 and np.abs(pcg).sum() < 15:
            pc = pcg
        parts = res_all(kernel, pc[None])
        lo = np.linalg.norm(np.concatenate([p[0] for p in parts[:5]])); c7 = np.linalg.norm(parts[5][0]); e7 = np.linalg.norm(parts[6][0])
        if verbose: print('  try %d lo %.1e C7part %.3e E7tot %.3e sum|pc| %.2f' % (t, lo, c7, e7, np.abs(pc).sum()), flush=True)
        if lo < 1e-12:
            out.append((c7, pc))
    out.sort(key=lambda v: v[0])
    return out


if __name__ == '__main__':
    fn, rank, npc, ntry = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    seed = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    L = [json.loads(l) for l in open(fn)]; L.sort(key=lambda d: d['Ef'])
    d = L[rank]; x = np.array(d['x']); s, form = d['s'], d['form']
    print('kernel Ef %.4f E7 %.3e size %.3f' % (d['Ef'], d['E7'], d['size']), flush=True)
    kernel = kseq(x, s, form)
    t0 = time.time()
    out = fit(kernel, npc, np.random.default_rng(seed), ntry)
    print('time', time.time() - t0)
    if out:
        c7, pc = out[0]
        print('best C7part', c7, 'series check:', ['%.2e' % v for v in series_check(full_seq(kernel, pc))])
        np.save(f'pf4_{form}{s}_r{rank}_n{npc}_s{seed}.npy', np.concatenate([x, pc]))
