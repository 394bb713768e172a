/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the one nonlinear solver: Newton's method on F(x) = 0 in R^n with a choice of
 * Jacobian (analytic, forward differences, block-diagonal forward differences), full or
 * simplified (the Jacobian of the first iteration reused), and a fixed-point mode.
 *
 * Stopping rule (the same for every mode and for the inline 3x3 driver of the rigid-body methods,
 * core/method/newton3_internal.h): stop when the max-norm of the last update is
 * <= tol (1 + max|x|), or when F(x) is exactly 0. No allocation: the caller passes workspace. */
#ifndef LF_NEWTON_H
#define LF_NEWTON_H

#include "base/export.h"
#include <math.h>
#include <stddef.h>

#include "base/error.h"

LF_BEGIN_DECLS

/* Residual F(x) in R^n; if J != NULL it must also fill the n x n Jacobian (row-major, J[i*n+j] =
 * dF_i/dx_j). Return LF_OK or an error status (which aborts Newton, message in err). */
typedef int (*lf_residual_fn)(void *ctx, const double *x, double *F, double *J, lf_error *err);

typedef enum {
    LF_JAC_AUTO = 0,     /* the caller's default (lf_newton: forward differences) */
    LF_JAC_FD = 1,       /* forward differences, step sqrt(eps) max(1, |x_j|): n residuals */
    LF_JAC_ANALYTIC = 2, /* F fills J */
    LF_JAC_BLOCK_FD = 3  /* forward differences of a block-diagonal Jacobian: unknowns of equal
                            color (in different blocks) are perturbed together, so ncolors
                            residuals suffice; entries between different blocks are taken as 0 */
} lf_jacobian_kind;

typedef struct lf_newton_opts {
    double tol;          /* see the stopping rule; 0 -> 1e-14 */
    int max_iter;        /* 0 -> 50 */
    int jacobian;        /* lf_jacobian_kind (LF_JAC_AUTO: forward differences) */
    int fixed_point;     /* 1: iterate x <- x + F(x) (for F(x) = G(x) - x: the fixed-point
                            iteration of G) instead of Newton; no Jacobian */
    int simplified;      /* 1: compute and factor the Jacobian once, at the first iteration */
    const int *block;    /* LF_JAC_BLOCK_FD: block id of each unknown (n entries) */
    const int *color;    /* LF_JAC_BLOCK_FD: color of each unknown, 0 .. ncolors-1 */
    int ncolors;
} lf_newton_opts;

typedef struct lf_newton_info {
    int iters;        /* iterations used (updates made) */
    int jac_evals;    /* Jacobians formed */
    int f_evals;      /* residual evaluations (including those for finite differences) */
    double residual;  /* max-norm of F at the last evaluation: at the returned x when F was 0 or at
                         failure; after a converged update, at the x before that update (F is
                         not re-evaluated: for Newton the true residual is then second order smaller) */
    double update;    /* max-norm of the last update */
} lf_newton_info;

/* Workspace size (doubles) that lf_newton needs for dimension n; iwork: lf_newton_iwork_size(n)
 * ints. A block-diagonal Jacobian is stored and factored block by block (the sum of the blocks'
 * squares, LU of each block). */
static inline size_t lf_newton_work_size(int n) { return (size_t)n * n + 5 * (size_t)n; }
static inline size_t lf_newton_iwork_size(int n) { return 5 * (size_t)n + 2; }
/* With LF_JAC_BLOCK_FD only the blocks are stored: sumsq = the sum of the blocks' squared sizes. */
static inline size_t lf_newton_block_work_size(int n, size_t sumsq) { return sumsq + 5 * (size_t)n; }
/* The fixed-point mode (opts->fixed_point) needs no Jacobian: this much suffices. */
static inline size_t lf_newton_fixed_point_work_size(int n) { return 5 * (size_t)n; }

/* Solve F(x) = 0 from the start x (overwritten with the solution). work: lf_newton_work_size(n)
 * doubles; iwork: lf_newton_iwork_size(n) ints (n suffice without a block Jacobian). Returns LF_OK, LF_ENOCONV (after max_iter updates, or at once on a
 * non-finite residual; message "newton did not converge in N iterations (|residual|=...)" or
 * "fixed-point iteration did not converge ..."), LF_EDOMAIN for an exactly singular Jacobian, or
 * the residual's error. info and err may be NULL. */
int lf_newton(lf_residual_fn F, void *ctx, int n, double *x, const lf_newton_opts *opts, double *work, int *iwork,
              lf_newton_info *info, lf_error *err);

/* max-norm of v (NaN if any component is NaN, so that a NaN residual stops the iteration). */
static inline double lf_maxabs(int n, const double *v)
{
    double m = 0;
    for (int i = 0; i < n; i++) {
        double a = fabs(v[i]);
        if (isnan(a)) return a;
        if (a > m) m = a;
    }
    return m;
}

/* The stopping rule on an update dx at the new iterate x. */
static inline int lf_newton_converged(double update, double xnorm, double tol) { return update <= tol * (1 + xnorm); }

LF_END_DECLS

#endif
