# SPDX-License-Identifier: GPL-3.0-or-later
"""Processor for a given kernel (kernel from a kernel_search_batched.py json line), E7-optimal, then mpmath polish and
an independent series check.  usage: python3 processor_fit.py ks2_K6.txt rank name [npc]"""
import numpy as np, sys, json, time, mpmath as mp
import lie_conditions as lie, lie_conditions_batched as lieb
from kernel_search import split
from power_series import Problems
from residuals import problems, scales
C7 = lie.C7


def kseq(x, s, form):
    a, b = split(list(x), s, form)
    return lie.kernel_tensor_seq(a, b, 'kick-first' if form == 'K' else 'drift-first')


def full_seq(kernel, pc):
    pl = [('K' if i % 2 == 0 else 'D', c) for i, c in enumerate(pc)]
    pinv = [(t, -c) for t, c in pl[::-1]]
    return pinv + list(kernel) + pl


def proc_res(kernel, PC):
    """batched residual for processors PC (nb,npc)"""
    nb, npc = PC.shape
    seqs = [full_seq(kernel, pc) for pc in PC]
    types = [t for t, _ in seqs[0]]
    C = np.array([[c for _, c in sq] for sq in seqs])
    X = lieb.log(lieb.seq_product(types, C))
    parts = [lieb.ev(X, n) for n in range(2, 7)] + [lieb.ev(X, 7) @ C7]
    return np.concatenate(parts, 1), lieb.ev(X, 7)


def fit_proc(kernel, npc, rng, ntry=40, verbose=False):
    best = None
    for t in range(ntry):
        pc = rng.normal(size=npc) * 0.2
        for it in range(60):
            h = 1e-7
            P = np.vstack([pc] + [pc + h * np.eye(npc)[i] for i in range(npc)])
            r, _ = proc_res(kernel, P)
            J = (r[1:] - r[0]).T / h
            nr = np.linalg.norm(r[0])
            if nr < 1e-13 or not np.isfinite(nr):
                break
            dx = -np.linalg.lstsq(J, r[0], rcond=1e-10)[0]
            st = 1.0
            while st > 1e-4 and np.linalg.norm(proc_res(kernel, (pc + st * dx)[None])[0][0]) > nr:
                st /= 2
            pc = pc + st * dx
        r, r7 = proc_res(kernel, pc[None])
        nr = np.linalg.norm(r[0])
        if nr < 1e-11:
            sz = np.abs(pc).sum()
            if verbose: print('  proc try', t, 'ok, sum|pc| = %.3f  E7 = %.4e' % (sz, np.linalg.norm(r7[0])))
            if best is None or sz < best[1]:
                best = (pc, sz)
    return best


def series_check(seq, M=8, P=None):
    P = P or problems(M); sc = scales(P, M)
    r = P.residual_coeffs(seq) / sc[:, :, None]
    return [float(np.linalg.norm(r[n])) for n in range(1, M)]


def mp_polish(s, form, x, pc, dps=45, iters=6):
    """Newton (min-norm) in mpmath on orders 1..6 over the non-free kernel params + processor;
    the first s-4 kernel params are held fixed."""
    mp.mp.dps = dps
    nfree = s - 1 - 3
    Pm = problems(8, use_mp=True, dps=dps); scm = scales(problems(8), 8)
    Pf = problems(8)

    def seqz(z, lib):
        xk = list(x[:nfree]) + list(z[:3]); p = list(z[3:])
        return full_seq(kseq(xk, s, form), p)

    def F(z, P, dtype=float):
        r = P.residual_coeffs(seqz(z, None), dtype=dtype)
        return (r[1:7] / scm[1:7, :, None]).reshape(-1)

    z = [mp.mpf(float(v)) for v in list(x[nfree:]) + list(pc)]
    xm = [mp.mpf(float(v)) for v in x[:nfree]]
    x = xm + [None] * 3
    for it in range(iters):
        r = F(z, Pm)
        zf = np.array([float(v) for v in z])
        cols = []
        for i in range(len(zf)):
            zc = zf.astype(complex); zc[i] += 1e-30j
            xs = x; 
            cols.append(F_c(zc, s, form, [float(v) for v in xm], Pf, scm))
        J = np.array(cols).T
        rn = max(abs(v) for v in r)
        dz = np.linalg.pinv(J, rcond=1e-12) @ np.array([float(v) for v in r])
        z = [zi - mp.mpf(float(d)) for zi, d in zip(z, dz)]
        print('  mp polish it', it, 'max|res| =', mp.nstr(rn, 5), flush=True)
        if rn < mp.mpf(10) ** (-(dps - 6)):
            break
    xk = xm + z[:3]
    return xk, z[3:]


def F_c(zc, s, form, xfree, Pf, scm):
    xk = list(xfree) + list(zc[:3]); p = list(zc[3:])
    r = Pf.residual_coeffs(full_seq(kseq(xk, s, form), p), dtype=complex)
    return (r[1:7] / scm[1:7, :, None]).reshape(-1).imag / 1e-30


if __name__ == '__main__':
    fn, rank, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    npc = int(sys.argv[4]) if len(sys.argv) > 4 else 19
    L = [json.loads(l) for l in open(fn)]
    L.sort(key=lambda d: d['Ef'])
    d = L[rank]; s, form = d['s'], d['form']; x = np.array(d['x'])
    print('kernel', name, 's', s, form, 'Ef', d['Ef'], 'E7', d['E7'], 'size', d['size'])
    kernel = kseq(x, s, form)
    rng = np.random.default_rng(0)
    t = time.time()
    bp = fit_proc(kernel, npc, rng, ntry=int(sys.argv[5]) if len(sys.argv) > 5 else 30, verbose=True)
    print('proc fit time', time.time() - t)
    pc = bp[0]
    print('float series check |res h^1..h^7|:', ['%.1e' % v for v in series_check(full_seq(kernel, pc))])
    xk, pcm = mp_polish(s, form, x, pc)
    a, b = split(xk, s, form)
    kern = kseq(xk, s, form)
    Pc = Problems(NP=4, d=2, K=5, seed=99, M=8, use_mp=True, dps=45)
    rr = Pc.residual_coeffs(full_seq(kern, pcm))
    chk = [mp.nstr(max(abs(v) for v in rr[n].ravel()), 3) for n in range(1, 8)]
    print('independent mp check max|coef h^n| n=1..7:', chk)
    e7 = series_check(full_seq([(t, float(c)) for t, c in kern], [float(v) for v in pcm]))
    print('E7 after polish (float):', e7[6], ' Ef =', s * e7[6] ** (1 / 6))
    out = dict(kernel=[[t, mp.nstr(c, 25)] for t, c in kern], proc=[mp.nstr(v, 25) for v in pcm], E_next=e7[6],
               s=s, order=6, size=float(sum(abs(v) for v in a) + sum(abs(v) for v in b)),
               form='kick-first' if form == 'K' else 'drift-first', Ef=s * e7[6] ** (1 / 6), check=chk)
    db = json.load(open('methods.json')) if __import__('os').path.exists('methods.json') else {}
    db[name] = out
    json.dump(db, open('methods.json', 'w'), indent=1)
