/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — Newton's method and the fixed-point iteration (newton.h). */
#include "solve/newton.h"

#include <string.h>

#include "base/linalg.h"
#include "base/dense.h"

/* Forward-difference Jacobian, column j from x_j + h_j with h_j = sqrt(eps) max(1, |x_j|);
 * h_j is rounded to the exactly representable step (x_j + h_j) - x_j. */
static int fd_jacobian(lf_residual_fn F, void *ctx, int n, double *x, const double *F0, double *Fp, double *J,
                       lf_newton_info *info, lf_error *err)
{
    const double sq_eps = 1.4901161193847656e-08; /* 2^-26 */
    for (int j = 0; j < n; j++) {
        double xj = x[j];
        volatile double xp = xj + sq_eps * (fabs(xj) > 1 ? fabs(xj) : 1);
        double h = xp - xj;
        x[j] = xp;
        int st = F(ctx, x, Fp, NULL, err);
        info->f_evals++;
        x[j] = xj;
        if (st != LF_OK) return st;
        for (int i = 0; i < n; i++) J[i * n + j] = (Fp[i] - F0[i]) / h;
    }
    return LF_OK;
}

/* The layout of a block-diagonal Jacobian (LF_JAC_BLOCK_FD): unknowns sorted by block (perm, a
 * stable counting sort), block b holding perm[start[b] .. start[b+1]), its dense row-major matrix
 * at J + off[b] (the blocks one after the other: sum of size^2 <= n^2 doubles), pos[j] the place of
 * unknown j in its block. ints: perm, pos (n each), start, off (nb + 1 each, nb <= n). */
typedef struct {
    int nb, *perm, *pos, *start, *off;
} block_layout;

static int block_layout_make(int n, const int *block, int *iw, block_layout *L)
{
    int nb = 0;
    for (int j = 0; j < n; j++) {
        if (block[j] < 0 || block[j] >= n) return LF_EINVAL;
        if (block[j] + 1 > nb) nb = block[j] + 1;
    }
    L->nb = nb;
    L->perm = iw;
    L->pos = iw + n;
    L->start = iw + 2 * n;
    L->off = L->start + nb + 1;
    for (int b = 0; b <= nb; b++) L->start[b] = 0;
    for (int j = 0; j < n; j++) L->start[block[j] + 1]++;
    for (int b = 0; b < nb; b++) L->start[b + 1] += L->start[b];
    L->off[0] = 0;
    for (int b = 0; b < nb; b++) {
        const int m = L->start[b + 1] - L->start[b];
        L->off[b + 1] = L->off[b] + m * m;
    }
    for (int b = 0; b < nb; b++) L->pos[b] = 0; /* fill counters (pos is overwritten below) */
    for (int j = 0; j < n; j++) { /* stable: unknowns keep their order within a block */
        const int b = block[j];
        L->perm[L->start[b] + L->pos[b]++] = j;
    }
    for (int b = 0; b < nb; b++)
        for (int k = L->start[b]; k < L->start[b + 1]; k++) L->pos[L->perm[k]] = k - L->start[b];
    return LF_OK;
}

/* Block-diagonal forward differences: all unknowns of one color are perturbed at once; column j
 * (of that color) is read from the rows of j's block, into the block storage of L. dx holds the
 * steps. */
static int block_fd_jacobian(lf_residual_fn F, void *ctx, int n, double *x, const double *F0, double *Fp, double *J,
                             double *dx, const lf_newton_opts *o, const block_layout *L, lf_newton_info *info,
                             lf_error *err)
{
    const double sq_eps = 1.4901161193847656e-08;
    memset(J, 0, (size_t)L->off[L->nb] * sizeof(double));
    for (int c = 0; c < o->ncolors; c++) {
        for (int j = 0; j < n; j++) {
            dx[j] = 0;
            if (o->color[j] != c) continue;
            double xj = x[j];
            volatile double xp = xj + sq_eps * (fabs(xj) > 1 ? fabs(xj) : 1);
            dx[j] = xp - xj;
            x[j] = xp;
        }
        int st = F(ctx, x, Fp, NULL, err);
        info->f_evals++;
        for (int j = 0; j < n; j++)
            if (dx[j] != 0) x[j] -= dx[j];
        if (st != LF_OK) return st;
        for (int j = 0; j < n; j++) {
            if (o->color[j] != c) continue;
            const int b = o->block[j], m = L->start[b + 1] - L->start[b];
            double *Jb = J + L->off[b];
            for (int k = L->start[b]; k < L->start[b + 1]; k++) {
                const int i = L->perm[k];
                Jb[(k - L->start[b]) * m + L->pos[j]] = (Fp[i] - F0[i]) / dx[j];
            }
        }
    }
    return LF_OK;
}

/* LU of every block (pivots of block b at piv + start[b]). */
static int block_lu_factor(double *J, int *piv, const block_layout *L)
{
    for (int b = 0; b < L->nb; b++) {
        const int m = L->start[b + 1] - L->start[b];
        if (m > 0 && lf_lu_factor(m, J + L->off[b], piv + L->start[b]) != LF_OK) return LF_EDOMAIN;
    }
    return LF_OK;
}

/* x = J^{-1} r block by block (tmp: n doubles). */
static void block_lu_solve(const double *J, const int *piv, const block_layout *L, const double *r, double *x,
                           double *tmp)
{
    for (int k = 0; k < L->start[L->nb]; k++) tmp[k] = r[L->perm[k]];
    for (int b = 0; b < L->nb; b++) {
        const int m = L->start[b + 1] - L->start[b];
        if (m > 0) lf_lu_solve(m, J + L->off[b], piv + L->start[b], tmp + L->start[b]);
    }
    for (int k = 0; k < L->start[L->nb]; k++) x[L->perm[k]] = tmp[k];
}

int lf_newton(lf_residual_fn F, void *ctx, int n, double *x, const lf_newton_opts *opts, double *work, int *iwork,
              lf_newton_info *info, lf_error *err)
{
    const double tol = opts && opts->tol > 0 ? opts->tol : 1e-14;
    const int max_iter = opts && opts->max_iter > 0 ? opts->max_iter : 50;
    const int jac = opts ? opts->jacobian : LF_JAC_FD;
    const int fixed = opts && opts->fixed_point, simplified = opts && opts->simplified;
    if (jac == LF_JAC_BLOCK_FD && !fixed && (!opts->block || !opts->color || opts->ncolors < 1))
        return lf_error_set(err, LF_EINVAL, "newton: a block-diagonal Jacobian needs block ids and colors");
    /* the fixed-point mode has no Jacobian: its workspace starts with Fx */
    double *Fx = work, *Fp = Fx + n, *dx = Fp + n, *tmp = dx + n, *J = tmp + n; /* J last: n^2 or the blocks */
    lf_newton_info loc = {0, 0, 0, 0, 0};
    int st = LF_OK, have_jac = 0;
    block_layout L = {0, NULL, NULL, NULL, NULL};
    if (jac == LF_JAC_BLOCK_FD && !fixed && block_layout_make(n, opts->block, iwork + n, &L) != LF_OK)
        return lf_error_set(err, LF_EINVAL, "newton: block ids must lie in 0 .. n-1");

    for (;;) {
        const int want_analytic = !fixed && jac == LF_JAC_ANALYTIC && !(simplified && have_jac);
        st = F(ctx, x, Fx, want_analytic ? J : NULL, err);
        loc.f_evals++;
        if (st != LF_OK) break;
        if (want_analytic) {
            loc.jac_evals++;
            have_jac = 0; /* factor below */
        }
        loc.residual = lf_maxabs(n, Fx);
        if (loc.residual == 0) break; /* exact root */
        if (loc.iters >= max_iter || !isfinite(loc.residual)) {
            st = lf_error_set(err, LF_ENOCONV, "%s did not converge in %d iterations (|residual|=%.3g)",
                              fixed ? "fixed-point iteration" : "newton", loc.iters, loc.residual);
            break;
        }
        if (fixed) {
            memcpy(dx, Fx, (size_t)n * sizeof(double));
        } else {
            if (!(simplified && have_jac)) {
                if (jac == LF_JAC_FD || jac == LF_JAC_AUTO) st = fd_jacobian(F, ctx, n, x, Fx, Fp, J, &loc, err);
                else if (jac == LF_JAC_BLOCK_FD)
                    st = block_fd_jacobian(F, ctx, n, x, Fx, Fp, J, dx, opts, &L, &loc, err);
                if (st != LF_OK) break;
                if (jac != LF_JAC_ANALYTIC) loc.jac_evals++;
                if ((L.nb ? block_lu_factor(J, iwork, &L) : lf_lu_factor(n, J, iwork)) != LF_OK) {
                    st = lf_error_set(err, LF_EDOMAIN, "newton: singular Jacobian at iteration %d (|residual|=%.3g)",
                                      loc.iters + 1, loc.residual);
                    break;
                }
                have_jac = 1;
            }
            for (int i = 0; i < n; i++) dx[i] = -Fx[i];
            if (L.nb) block_lu_solve(J, iwork, &L, dx, dx, tmp);
            else lf_lu_solve(n, J, iwork, dx);
        }
        for (int i = 0; i < n; i++) x[i] += dx[i];
        loc.iters++;
        loc.update = lf_maxabs(n, dx);
        /* Converged on a small update: the residual at the new x is not evaluated; info->residual
         * is the one before this last step. */
        if (lf_newton_converged(loc.update, lf_maxabs(n, x), tol)) break;
    }
    if (info) *info = loc;
    return st;
}
