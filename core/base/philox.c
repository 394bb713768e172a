/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — Philox4x32-10 (philox.h). */
#include "base/philox.h"

#include <math.h>

static void mulhilo(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo)
{
    const uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    *lo = (uint32_t)p;
}

void lf_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        uint32_t hi0, lo0, hi1, lo1;
        mulhilo(0xD2511F53u, c0, &hi0, &lo0);
        mulhilo(0xCD9E8D57u, c2, &hi1, &lo1);
        const uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
        c0 = n0, c1 = lo1, c2 = n2, c3 = lo0;
        k0 += 0x9E3779B9u; /* the Weyl sequence of the key */
        k1 += 0xBB67AE85u;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

/* a uniform in (0, 1): the top 53 bits and a half */
static double uniform(uint32_t hi, uint32_t lo)
{
    const uint64_t u = ((uint64_t)hi << 32 | lo) >> 11;
    return ((double)u + 0.5) * 0x1p-53;
}

void lf_philox_normal4(const uint32_t ctr[4], const uint32_t key[2], double z[4])
{
    uint32_t r[4], s[4];
    lf_philox4x32_10(ctr, key, r);
    const uint32_t ctr2[4] = {ctr[0], ctr[1], ctr[2], ctr[3] ^ 0x80000000u}; /* the second pair's counter */
    lf_philox4x32_10(ctr2, key, s);
    const double u[4] = {uniform(r[0], r[1]), uniform(r[2], r[3]), uniform(s[0], s[1]), uniform(s[2], s[3])};
    for (int k = 0; k < 4; k += 2) {
        const double rad = sqrt(-2 * log(u[k])), th = 6.283185307179586 * u[k + 1];
        z[k] = rad * cos(th);
        z[k + 1] = rad * sin(th);
    }
}
