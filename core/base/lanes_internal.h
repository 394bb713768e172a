/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow (internal) — lanes: B independent copies of the same small computation stored as a
 * structure of arrays, entry k of lane j at X[k * B + j], so that a loop over j runs the scalar code
 * of one copy on every lane with unit-stride loads and stores, which the compiler vectorizes.
 *
 * A lane loop gathers lane j into local arrays, calls the same inline scalar code the one-copy path
 * uses, and scatters the results: one copy of every formula, and results bitwise equal to the
 * scalar path (no FMA contraction: ISO C modes compile with -ffp-contract=off, and the AVX2 clone
 * below does not enable FMA). Branches inside lane loops must be selects (c ? a : b) on values
 * computed in every lane; failures are flags reduced over the lanes and located afterwards.
 *
 * LF_LANE_LOOPS marks a function whose lane loops should also be compiled for AVX2 (4 doubles per
 * instruction instead of SSE2's 2) on x86-64 Linux; the loader picks the clone the CPU supports
 * (GCC/Clang function multiversioning, target_clones). Elsewhere it is empty. */
#ifndef LF_LANES_INTERNAL_H
#define LF_LANES_INTERNAL_H

#if defined(__x86_64__) && defined(__linux__) && defined(__has_attribute) && !defined(LF_NO_TARGET_CLONES) && \
    !defined(__SANITIZE_ADDRESS__)
#if __has_attribute(target_clones)
#define LF_LANE_LOOPS __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef LF_LANE_LOOPS
#define LF_LANE_LOOPS
#endif

/* Before a lane loop: its iterations touch separate lanes (no dependence between them), which the
 * compiler cannot prove through the kernels' context pointers. */
#if defined(__GNUC__) && !defined(__clang__)
#define LF_LANES_INDEPENDENT _Pragma("GCC ivdep")
#elif defined(__clang__)
#define LF_LANES_INDEPENDENT _Pragma("clang loop vectorize(assume_safety)")
#else
#define LF_LANES_INDEPENDENT
#endif

/* x[k] = X[k B + j] for k < n, and back */
static inline void lf_lane_get(int n, const double *X, int B, int j, double *x)
{
    for (int k = 0; k < n; k++) x[k] = X[k * B + j];
}
static inline void lf_lane_put(int n, const double *x, double *X, int B, int j)
{
    for (int k = 0; k < n; k++) X[k * B + j] = x[k];
}

#endif
