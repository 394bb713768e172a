# SPDX-License-Identifier: GPL-3.0-or-later
import numpy as np, time
from power_series import *
# Strang check
P = Problems(NP=5, d=3, K=6, seed=1, M=10)
r = P.residual_coeffs([('K',.5),('D',1.),('K',.5)])
print('strang coeff norms', [float(np.abs(r[n]).max()) for n in range(10)])
# genericity: rank of jacobian of generic composition wrt coefficients
def rank_test(NP, d, K, N=60, maxo=8, seed=3):
    P = Problems(NP=NP, d=d, K=K, seed=seed, M=maxo+1)
    rng = np.random.default_rng(0)
    c = rng.normal(size=N)*0.3
    def F(c):
        seq=[('K' if i%2==0 else 'D', ci) for i,ci in enumerate(c)]
        return P.residual_coeffs(seq, dtype=complex)
    J = np.zeros((maxo+1, NP*2*d, N))
    eps=1e-30
    for i in range(N):
        cc = c.astype(complex); cc[i]+=1j*eps
        J[:,:,i] = (F(cc).reshape(maxo+1,-1)).imag/eps
    out=[]
    for n in range(1,maxo+1):
        Jn = J[1:n+1].reshape(-1,N)
        sv = np.linalg.svd(Jn, compute_uv=False)
        out.append(int((sv > sv[0]*1e-9).sum()))
    return out
t=time.time()
for NP,d,K in [(3,2,4),(5,2,6),(4,3,6),(6,3,6),(8,3,8)]:
    print(NP,d,K, rank_test(NP,d,K), time.time()-t)
print('expected cumulative RKN dims: 2 3 5 7 11 16 26 41')
