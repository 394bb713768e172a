/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — a counter-based random number generator: Philox4x32-10 (Salmon, Moraes, Dror & Shaw,
 * "Parallel random numbers: as easy as 1, 2, 3", SC 2011). Its output is a function of a 128-bit
 * counter and a 64-bit key, so a stream keyed by (seed, body, step) gives the same numbers whatever
 * the order of evaluation, the number of workers or a checkpoint in between. */
#ifndef LF_PHILOX_H
#define LF_PHILOX_H

#include "base/export.h"
#include <stdint.h>

LF_BEGIN_DECLS

/* out = Philox4x32-10(ctr, key): ten rounds (Random123's known answers: tests/c/test_langevin.c). */
void lf_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
/* Four standard normal numbers from one counter: Box–Muller on four uniforms in (0, 1) (53 bits each)
 * from the generator at ctr and at ctr with the top bit of ctr[3] flipped (callers leave that bit 0). */
void lf_philox_normal4(const uint32_t ctr[4], const uint32_t key[2], double z[4]);

LF_END_DECLS

#endif
