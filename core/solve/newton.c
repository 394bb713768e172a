/* lieflow — Newton's method and the fixed-point iteration (newton.h). */
#include "newton.h"

#include <string.h>

#include "linalg.h"

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

/* Block-diagonal forward differences: all unknowns of one color are perturbed at once; column j
 * (of that color) is read from the rows of j's block. dx holds the steps. */
static int block_fd_jacobian(lf_residual_fn F, void *ctx, int n, double *x, const double *F0, double *Fp, double *J,
                             double *dx, const lf_newton_opts *o, lf_newton_info *info, lf_error *err)
{
    const double sq_eps = 1.4901161193847656e-08;
    memset(J, 0, (size_t)n * n * sizeof(double));
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
            for (int i = 0; i < n; i++)
                if (o->block[i] == o->block[j]) J[i * n + j] = (Fp[i] - F0[i]) / dx[j];
        }
    }
    return LF_OK;
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
    double *J = work, *Fx = fixed ? work : J + (size_t)n * n, *Fp = Fx + n, *dx = Fp + n;
    lf_newton_info loc = {0, 0, 0, 0, 0};
    int st = LF_OK, have_jac = 0;

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
                else if (jac == LF_JAC_BLOCK_FD) st = block_fd_jacobian(F, ctx, n, x, Fx, Fp, J, dx, opts, &loc, err);
                if (st != LF_OK) break;
                if (jac != LF_JAC_ANALYTIC) loc.jac_evals++;
                if (lf_lu_factor(n, J, iwork) != LF_OK) {
                    st = lf_error_set(err, LF_EDOMAIN, "newton: singular Jacobian at iteration %d (|residual|=%.3g)",
                                      loc.iters + 1, loc.residual);
                    break;
                }
                have_jac = 1;
            }
            for (int i = 0; i < n; i++) dx[i] = -Fx[i];
            lf_lu_solve(n, J, iwork, dx);
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
