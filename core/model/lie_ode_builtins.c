/* lieflow — built-in Lie-ODE vector fields in C (the list and formulas are in lie_ode.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lie_ode.h"
#include "linalg.h"
#include "quat.h"

typedef struct {
    double p[18];
    lf_trivialization triv;
} builtin_ctx;

/* ---------------------------------------------------------------- S^2 gradient flow */
/* q' = -D q + (q^T D q) q is the tangential part of -D q; with q' = xi x q, xi = D q x q:
 * (Dq x q) x q = q (q . Dq) - Dq (q . q). Along the action q_e = exp(e hat(e_j)) q, q_e' = e_j x q,
 * so column j of the Jacobian is D(e_j x q) x q + D q x (e_j x q). */
static int s2gf_f(void *ctx, double t, const double *q, double *xi, lf_error *err)
{
    (void)t; (void)err;
    const double *D = ((builtin_ctx *)ctx)->p;
    double Dq[3];
    lf_v3_mul(D, q, Dq);
    lf_v3_cross(Dq, q, xi);
    return LF_OK;
}

static int s2gf_jac(void *ctx, double t, const double *q, double *J, lf_error *err)
{
    (void)t; (void)err;
    const double *D = ((builtin_ctx *)ctx)->p;
    double Dq[3];
    lf_v3_mul(D, q, Dq);
    for (int j = 0; j < 3; j++) {
        double e[3] = {0, 0, 0}, dq[3], Ddq[3], a[3], b[3];
        e[j] = 1;
        lf_v3_cross(e, q, dq);
        lf_v3_mul(D, dq, Ddq);
        lf_v3_cross(Ddq, q, a);
        lf_v3_cross(Dq, dq, b);
        for (int i = 0; i < 3; i++) J[3 * i + j] = a[i] + b[i];
    }
    return LF_OK;
}

static int s2gf_energy(void *ctx, const double *q, double *E, lf_error *err)
{
    (void)err;
    const double *D = ((builtin_ctx *)ctx)->p;
    *E = 0.5 * (D[0] * q[0] * q[0] + D[1] * q[1] * q[1] + D[2] * q[2] * q[2]);
    return LF_OK;
}

/* ---------------------------------------------------------------- linear ODE on GL(3) */
static int gl3lin_f(void *ctx, double t, const double *Y, double *xi, lf_error *err)
{
    (void)Y; (void)err;
    const double *A0 = ((builtin_ctx *)ctx)->p, *A1 = A0 + 9, s = sin(t);
    for (int k = 0; k < 9; k++) xi[k] = A0[k] + s * A1[k];
    return LF_OK;
}

static int gl3lin_jac(void *ctx, double t, const double *Y, double *J, lf_error *err)
{
    (void)ctx; (void)t; (void)Y; (void)err;
    memset(J, 0, 81 * sizeof(double));
    return LF_OK;
}

/* ---------------------------------------------------------------- free rigid body on S^3 */
/* The attitude R(q) of a free rigid body with spatial momentum m0 moves with the spatial angular
 * velocity w_s = R J^{-1} R^T m0 (R' = hat(w_s) R), or the body one w = J^{-1} R^T m0 (R' = R hat(w)).
 * With the s3 action q <- quat_exp(xi/2) q, R(q) moves by exp(hat(xi)): xi = w_s (right-trivialized)
 * or w (left). H = 1/2 m0^T R J^{-1} R^T m0. */
static void frq_body(const builtin_ctx *c, const double *q, double *R, double *w)
{
    const double *J = c->p, *m0 = c->p + 3;
    lf_quat_to_matrix(q, R);
    lf_m3_tapply(R, m0, w);
    lf_v3_div(w, J, w);
}

static int frq_f(void *ctx, double t, const double *q, double *xi, lf_error *err)
{
    (void)t; (void)err;
    const builtin_ctx *c = ctx;
    double R[9], w[3];
    frq_body(c, q, R, w);
    if (c->triv == LF_RIGHT_TRIVIALIZED) lf_m3_apply(R, w, xi);
    else lf_v3_copy(w, xi);
    return LF_OK;
}

static int frq_energy(void *ctx, const double *q, double *E, lf_error *err)
{
    (void)err;
    const builtin_ctx *c = ctx;
    double R[9], w[3], P[3];
    frq_body(c, q, R, w);
    lf_m3_tapply(R, c->p + 3, P); /* R^T m0 */
    *E = 0.5 * lf_v3_dot(P, w);
    return LF_OK;
}

/* ---------------------------------------------------------------- the table */
typedef struct {
    const char *name;
    lf_factor_kind factor;
    int nparams;
    lf_lie_ode_param params[2];
    lf_lie_ode_fn f;
    lf_lie_ode_jacobian_fn jacobian;
    lf_lie_ode_energy_fn energy;
} builtin;

static const builtin builtins[] = {
    {"s2_gradient_flow", LF_S2, 1, {{"D", 3}}, s2gf_f, s2gf_jac, s2gf_energy},
    {"gl3_linear", LF_GL3, 2, {{"A0", 9}, {"A1", 9}}, gl3lin_f, gl3lin_jac, NULL},
    {"free_rigid_quat", LF_S3, 2, {{"J", 3}, {"m0", 3}}, frq_f, NULL, frq_energy},
};
#define NBUILTIN ((int)(sizeof builtins / sizeof builtins[0]))

static const char *const builtin_names[] = {"s2_gradient_flow", "gl3_linear", "free_rigid_quat", NULL};

const char *const *lf_lie_ode_builtin_names(void) { return builtin_names; }

static const builtin *find(const char *name)
{
    for (int i = 0; name && i < NBUILTIN; i++)
        if (strcmp(builtins[i].name, name) == 0) return &builtins[i];
    return NULL;
}

const lf_lie_ode_param *lf_lie_ode_builtin_params(const char *name, int *nparams)
{
    const builtin *b = find(name);
    if (!b) return NULL;
    *nparams = b->nparams;
    return b->params;
}

lf_system *lf_lie_ode_builtin(const char *name, const lf_manifold *M, const double *y0, const double *params,
                              lf_error *err)
{
    const builtin *b = find(name);
    if (!b) {
        lf_error_set(err, LF_EINVAL, "unknown built-in vector field '%s' (known: s2_gradient_flow, gl3_linear, "
                                     "free_rigid_quat)", name ? name : "(null)");
        return NULL;
    }
    if (lf_manifold_nfactors(M) != 1 || lf_manifold_factor(M, 0)->kind != b->factor) {
        lf_error_set(err, LF_EINVAL, "built-in vector field '%s' acts on the factors {\"%s\"}", name,
                     lf_factor_kind_name(b->factor));
        return NULL;
    }
    int n = 0;
    for (int i = 0; i < b->nparams; i++) n += b->params[i].size;
    for (int i = 0; i < n; i++)
        if (!isfinite(params[i])) {
            lf_error_set(err, LF_EINVAL, "built-in vector field '%s': parameter value %d is not finite", name, i + 1);
            return NULL;
        }
    if (b->f == frq_f)
        for (int i = 0; i < 3; i++)
            if (!(params[i] > 0)) {
                lf_error_set(err, LF_EINVAL, "free_rigid_quat: inertia J[%d] = %g must be positive", i + 1, params[i]);
                return NULL;
            }
    builtin_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        lf_error_set(err, LF_ENOMEM, "out of memory");
        return NULL;
    }
    memcpy(c->p, params, (size_t)n * sizeof(double));
    c->triv = lf_manifold_trivialization(M);
    lf_lie_ode_def def = {name, b->f, b->jacobian, b->energy, c, free};
    return lf_lie_ode_new(M, y0, &def, err);
}
