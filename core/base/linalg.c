/* lieflow — n x n LU with partial pivoting and Newton's method (see linalg.h). */
#include "linalg.h"

int lf_lu_factor(int n, double *A, int *piv)
{
    for (int k = 0; k < n; k++) {
        /* pivot: largest |A[i][k]| for i >= k; piv[k] = row swapped with row k */
        int p = k;
        for (int i = k + 1; i < n; i++)
            if (fabs(A[i * n + k]) > fabs(A[p * n + k])) p = i;
        piv[k] = p;
        if (A[p * n + k] == 0) return LF_EDOMAIN;
        if (p != k)
            for (int j = 0; j < n; j++) {
                double t = A[k * n + j];
                A[k * n + j] = A[p * n + j];
                A[p * n + j] = t;
            }
        /* eliminate below the pivot; the multipliers L[i][k] are stored in place */
        for (int i = k + 1; i < n; i++) {
            double l = A[i * n + k] /= A[k * n + k];
            for (int j = k + 1; j < n; j++) A[i * n + j] -= l * A[k * n + j];
        }
    }
    return LF_OK;
}

void lf_lu_solve(int n, const double *LU, const int *piv, double *b)
{
    for (int k = 0; k < n; k++) { /* b <- P b, then L y = b (unit diagonal) */
        double t = b[k]; b[k] = b[piv[k]]; b[piv[k]] = t;
    }
    for (int i = 1; i < n; i++)
        for (int j = 0; j < i; j++) b[i] -= LU[i * n + j] * b[j];
    for (int i = n - 1; i >= 0; i--) { /* U x = y */
        for (int j = i + 1; j < n; j++) b[i] -= LU[i * n + j] * b[j];
        b[i] /= LU[i * n + i];
    }
}

static double maxabs(int n, const double *v)
{
    double m = 0;
    for (int i = 0; i < n; i++) {
        double a = fabs(v[i]);
        if (isnan(a)) return a; /* a NaN anywhere makes the norm NaN (stops Newton) */
        if (a > m) m = a;
    }
    return m;
}

/* Forward-difference Jacobian, column j from x_j + h_j with h_j = sqrt(eps) max(1, |x_j|);
 * h_j is rounded to the exactly representable step (x_j + h_j) - x_j. */
static int fd_jacobian(lf_residual_fn F, void *ctx, int n, double *x, const double *F0,
                       double *Fp, double *J, lf_error *err)
{
    const double sq_eps = 1.4901161193847656e-08; /* 2^-26 */
    for (int j = 0; j < n; j++) {
        double xj = x[j];
        volatile double xp = xj + sq_eps * (fabs(xj) > 1 ? fabs(xj) : 1);
        double h = xp - xj;
        x[j] = xp;
        int st = F(ctx, x, Fp, NULL, err);
        x[j] = xj;
        if (st != LF_OK) return st;
        for (int i = 0; i < n; i++) J[i * n + j] = (Fp[i] - F0[i]) / h;
    }
    return LF_OK;
}

int lf_newton(lf_residual_fn F, void *ctx, int n, double *x, const lf_newton_opts *opts,
              double *work, int *iwork, lf_newton_info *info, lf_error *err)
{
    double tol = opts && opts->tol > 0 ? opts->tol : 1e-14;
    int max_iter = opts && opts->max_iter > 0 ? opts->max_iter : 50;
    int analytic = opts ? opts->analytic_jac : 0;
    double *J = work, *Fx = J + (size_t)n * n, *Fp = Fx + n, *dx = Fp + n;
    lf_newton_info loc = {0, 0, 0};
    int st = LF_OK;

    for (;;) {
        st = F(ctx, x, Fx, analytic ? J : NULL, err);
        if (st != LF_OK) break;
        loc.residual = maxabs(n, Fx);
        if (loc.residual == 0) break; /* exact root */
        if (loc.iters >= max_iter || !isfinite(loc.residual)) {
            st = lf_error_set(err, LF_ENOCONV, "newton did not converge in %d iterations (|residual|=%.3g)",
                              loc.iters, loc.residual);
            break;
        }
        if (!analytic && (st = fd_jacobian(F, ctx, n, x, Fx, Fp, J, err)) != LF_OK) break;
        if (lf_lu_factor(n, J, iwork) != LF_OK) {
            st = lf_error_set(err, LF_EDOMAIN, "newton: singular Jacobian at iteration %d (|residual|=%.3g)",
                              loc.iters + 1, loc.residual);
            break;
        }
        for (int i = 0; i < n; i++) dx[i] = -Fx[i];
        lf_lu_solve(n, J, iwork, dx);
        for (int i = 0; i < n; i++) x[i] += dx[i];
        loc.iters++;
        loc.update = maxabs(n, dx);
        /* Converged on a small update: the residual at the new x is not evaluated (it is
         * second order in the update); info->residual is the one before this last step. */
        if (loc.update <= tol * (1 + maxabs(n, x))) break;
    }
    if (info) *info = loc;
    return st;
}
