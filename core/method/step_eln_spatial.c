/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — eln_spatial: the explicit Lie–Newmark method in spatial form, Ortolan's thesis (7.1),
 * on any system of form second_order y = (g_1..g_n, v_1..v_n), f = (v, a(t, y)):
 *   (7.1a)  v_{k+1/2} = v_k + h/2 a(t_k, g_k, v_k)
 *   (7.1b,c) g_{k+1}  = act(h v_{k+1/2}, g_k)        (spheres: q_{k+1} = exp(h hat Omega_{k+1/2}) q_k)
 *   (7.1d)  v_{k+1}   = v_{k+1/2} + h/2 a(t_{k+1}, g_{k+1}, v_{k+1})
 * (7.1c) is printed q_{k+1} = R_{k+1} q_k with the cumulative R_{k+1} = exp(h Omega_{k+1/2}) R_k;
 * the consistent reading (with (6.6), q = R q(0)) is q_{k+1} = R_{k+1} q(0) = exp(h Omega_{k+1/2}) q_k.
 * The configuration moves by the manifold's action: exp from the left on spheres (right-
 * trivialized), R <- R exp(h W) on rigid bodies (left-trivialized), where the method is the
 * exponential Lie–Newmark method eln_exp (tests/c/test_spheres.c compares the two).
 * (7.1d) is implicit when a depends on v:
 *  - a second-order form whose acceleration is affine in the centripetal terms (system.h; spheres,
 *    spheres.h): alpha depends on Omega only through s_k = |Omega_k|^2 and affinely,
 *    alpha = alphaV(q) + L(q) s. With u = Omega_{k+1/2} + h/2 alphaV,
 *    Omega(s) = u + h/2 L s, (7.1d) is the n equations F_k(s) = s_k - |Omega_k(s)|^2 = 0, solved by
 *    Newton with J_kl = delta_kl - h Omega_k . L_kl (LU), from s = |Omega_{k+1/2}|^2, stopping on
 *    |ds| <= newton_tol (1 + |s|). Diagonal M (pendulum, dipole arrays): L = 0, the method is
 *    explicit. alpha at the new state (alphaV + L s) is cached for the next step's (7.1a).
 *  - any other second-order system (rigid bodies): Newton on v_{k+1} (R^{nv}) with a forward-
 *    difference Jacobian formed once per step, from the predictor v_{k+1/2} + h/2 a(g_{k+1}, v_{k+1/2}).
 * Exact properties (spheres): |q_i| = 1 to rounding (rotations) and q_i . Omega_i is conserved for
 * every M, also by the Newton iterates (q_i . alpha_i = 0 and q_i . L_ik = 0, and the rotation
 * exp(h Omega_{k+1/2}) fixes its axis). For diagonal M the step is the Strang splitting of the
 * exact flows of V (the kick) and of the free kinetic energy (the rotation of q about Omega), hence
 * symplectic; for coupled M it is not (test_spheres.c measures an O(h^3) symplecticity defect on
 * the double pendulum), nor on rigid bodies (it is eln_exp there): registry "no". */
#include <math.h>
#include <string.h>

#include "base/linalg.h"
#include "base/dense.h"
#include "method/method_internal.h"
#include "lie/so3.h"

/* ------------------------------------------------------------------------------------ affine (spheres) */
/* work: alpha1 (3n) | L (3n n) | u (3n) | s (n) | F (n) | J (n n) | alpha work; decoupled (diagonal M:
 * explicit, alpha needs no scratch): alpha1 only */
static size_t affine_work(const lf_system *sys, const lf_form_second_order *so)
{
    const int n = so->nconfig;
    if (so->decoupled) return 3 * (size_t)n;
    return 7 * (size_t)n + 4 * (size_t)n * n + so->affine_work(sys);
}

static int affine_step(lf_stepper *st, const lf_form_second_order *so, double h)
{
    const lf_system *sys = st->sys;
    const int n = so->nconfig;
    double *q = st->y, *w = st->y + 3 * n, *alpha0 = st->cache;
    const int diag = so->decoupled;
    double *al = st->work, *L = NULL, *u = NULL, *s = NULL, *F = NULL, *J = NULL, *aw = NULL;
    if (!diag) { /* the rest of the workspace: coupled M only (affine_work) */
        L = al + 3 * n;
        u = L + 3 * (size_t)n * n;
        s = u + 3 * n;
        F = s + n;
        J = F + n;
        aw = J + (size_t)n * n;
    }
    int rc;
    if (!st->cache_valid) {
        st->stats.f_evals++;
        rc = so->accel_work(sys, st->y, alpha0, aw, &st->err);
        if (rc != LF_OK) return rc;
        st->cache_valid = 1;
    }
    for (int i = 0; i < 3 * n; i++) w[i] += 0.5 * h * alpha0[i]; /* (7.1a): w = Omega_{k+1/2} */
    for (int i = 0; i < n; i++) {                                /* (7.1b,c) */
        double x[3];
        lf_v3_scale(w + 3 * i, h, x);
        lf_so3_rotate(x, q + 3 * i);
    }
    st->stats.f_evals++;
    rc = so->accel_affine(sys, q, al, diag ? NULL : L, aw, &st->err);
    if (rc != LF_OK) return rc;
    if (diag) { /* explicit (7.1d) */
        for (int i = 0; i < 3 * n; i++) w[i] += 0.5 * h * al[i];
        memcpy(alpha0, al, 3 * (size_t)n * sizeof(double));
        st->cache_set = 1;
        return LF_OK;
    }
    /* (7.1d) by Newton on s = (|Omega_k|^2) */
    const double tol = st->opts.newton_tol;
    for (int i = 0; i < 3 * n; i++) u[i] = w[i] + 0.5 * h * al[i];
    for (int k = 0; k < n; k++) s[k] = lf_v3_dot(w + 3 * k, w + 3 * k);
    int it = 0;
    for (;;) {
        double res = 0;
        for (int k = 0; k < n; k++) { /* Omega_k(s) into w, F_k, row k of J */
            for (int c = 0; c < 3; c++) {
                const double *Lr = L + (size_t)(3 * k + c) * n;
                double x = u[3 * k + c];
                for (int l = 0; l < n; l++) x += 0.5 * h * Lr[l] * s[l];
                w[3 * k + c] = x;
            }
            F[k] = s[k] - lf_v3_dot(w + 3 * k, w + 3 * k);
            res = fmax(res, fabs(F[k]));
            if (isnan(F[k])) res = NAN;
            for (int l = 0; l < n; l++) {
                double d = 0;
                for (int c = 0; c < 3; c++) d += w[3 * k + c] * L[(size_t)(3 * k + c) * n + l];
                J[(size_t)k * n + l] = (k == l) - h * d;
            }
        }
        if (res == 0) break;
        if (it >= st->opts.max_iter || !isfinite(res)) {
            st->stats.newton_iters += it;
            return lf_error_set(&st->err, LF_ENOCONV, "newton on (7.1d) did not converge in %d iterations (|residual|=%.3g)",
                                it, res);
        }
        if (lf_lu_factor(n, J, st->iwork) != LF_OK)
            return lf_error_set(&st->err, LF_EDOMAIN, "singular Newton Jacobian in (7.1d) at iteration %d", it + 1);
        for (int k = 0; k < n; k++) F[k] = -F[k];
        lf_lu_solve(n, J, st->iwork, F);
        double dmax = 0, smax = 0;
        for (int k = 0; k < n; k++) {
            s[k] += F[k];
            dmax = fmax(dmax, fabs(F[k]));
            smax = fmax(smax, fabs(s[k]));
        }
        it++;
        if (dmax <= tol * (1 + smax)) break;
    }
    st->stats.newton_iters += it;
    for (int r = 0; r < 3 * n; r++) { /* Omega_{k+1} and alpha(q_{k+1}, Omega_{k+1}) = alphaV + L s */
        const double *Lr = L + (size_t)r * n;
        double Ls = 0;
        for (int l = 0; l < n; l++) Ls += Lr[l] * s[l];
        w[r] = u[r] + 0.5 * h * Ls;
        alpha0[r] = al[r] + Ls;
    }
    st->cache_set = 1;
    return LF_OK;
}

/* ------------------------------------------------------------------------------------ generic */
typedef struct {
    lf_stepper *st;
    const lf_form_second_order *so;
    double t, h;
    const double *vh;  /* v_{k+1/2} */
    double *ytmp;      /* the state with the trial velocity */
    double *a;         /* scratch: the acceleration */
    size_t voff;       /* parameter offset of the velocities */
    int nv;
} gen_ctx;

static void layout(const lf_stepper *st, size_t *voff, int *nv)
{
    const int nc = lf_system_second_order(st->sys)->nconfig;
    const lf_factor *f = lf_manifold_factor(st->M, nc);
    *voff = (size_t)f->op;
    *nv = st->nd - f->od;
}

/* F(v) = v - v_{k+1/2} - h/2 a(t, g_{k+1}, v) */
static int gen_residual(void *p, const double *v, double *F, double *J, lf_error *err)
{
    (void)J;
    (void)err; /* accel reports into st->err, the err lf_stepper_solve passes */
    gen_ctx *c = p;
    memcpy(c->ytmp + c->voff, v, (size_t)c->nv * sizeof(double));
    c->st->stats.f_evals++;
    int rc = c->so->accel(c->st->sys, c->t, c->ytmp, c->a, &c->st->err);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < c->nv; i++) F[i] = v[i] - c->vh[i] - 0.5 * c->h * c->a[i];
    return LF_OK;
}

/* work: a (nv) | vh (nv) | x (nv) | xi (nd) | ytmp (np) | newton */
static size_t gen_work(const lf_stepper *st)
{
    size_t voff;
    int nv;
    layout(st, &voff, &nv);
    return 3 * (size_t)nv + (size_t)st->nd + (size_t)st->np + lf_newton_work_size(nv);
}

static int gen_step(lf_stepper *st, const lf_form_second_order *so, double h)
{
    size_t voff;
    int nv;
    layout(st, &voff, &nv);
    double *a = st->work, *vh = a + nv, *x = vh + nv, *xi = x + nv, *ytmp = xi + st->nd, *nw = ytmp + st->np;
    double *v = st->y + voff;
    st->stats.f_evals++;
    int rc = so->accel(st->sys, st->t, st->y, a, &st->err);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < nv; i++) vh[i] = v[i] + 0.5 * h * a[i];  /* (7.1a) */
    memset(xi, 0, (size_t)st->nd * sizeof(double));                /* (7.1b,c): the configuration only */
    for (int i = 0; i < nv; i++) xi[i] = h * vh[i];
    lf_manifold_act(st->M, xi, st->y);
    memcpy(v, vh, (size_t)nv * sizeof(double));
    memcpy(ytmp, st->y, (size_t)st->np * sizeof(double));
    gen_ctx c = {st, so, st->t + h, h, vh, ytmp, a, voff, nv};
    st->stats.f_evals++; /* predictor v_{k+1/2} + h/2 a(g_{k+1}, v_{k+1/2}) */
    rc = so->accel(st->sys, c.t, ytmp, a, &st->err);
    if (rc != LF_OK) return rc;
    for (int i = 0; i < nv; i++) x[i] = vh[i] + 0.5 * h * a[i];
    lf_newton_opts o = {.jacobian = LF_JAC_FD, .simplified = 1};
    rc = lf_stepper_solve(st, gen_residual, &c, nv, x, o, nw); /* (7.1d) */
    if (rc != LF_OK) return rc;
    memcpy(v, x, (size_t)nv * sizeof(double));
    return LF_OK;
}

/* ------------------------------------------------------------------------------------ method */
static size_t eln_spatial_work(const lf_stepper *st)
{
    const lf_form_second_order *so = lf_system_second_order(st->sys);
    return so->accel_affine ? affine_work(st->sys, so) : gen_work(st);
}

/* the affine form caches alpha at the current state */
static size_t eln_spatial_cache(const lf_stepper *st)
{
    const lf_form_second_order *so = lf_system_second_order(st->sys);
    return so->accel_affine ? 3 * (size_t)so->nconfig : 0;
}

static int eln_spatial_step(lf_stepper *st, double h)
{
    const lf_form_second_order *so = lf_system_second_order(st->sys);
    return so->accel_affine ? affine_step(st, so, h) : gen_step(st, so, h);
}

static int eln_spatial_accepts(const lf_method *m, const lf_system *sys, lf_error *err)
{
    (void)m;
    const int nc = lf_system_second_order(sys)->nconfig;
    const lf_manifold *M = lf_system_manifold(sys);
    if (nc < 1 || 2 * nc != lf_manifold_nfactors(M))
        return lf_error_set(err, LF_EINVAL, "eln_spatial: a second-order system has as many velocity factors as configuration "
                                            "factors (%d configuration factors of %d)", nc, lf_manifold_nfactors(M));
    for (int i = 0; i < nc; i++) {
        const lf_factor *g = lf_manifold_factor(M, i), *v = lf_manifold_factor(M, nc + i);
        if (v->kind != LF_RM || v->nd != g->nd)
            return lf_error_set(err, LF_EINVAL, "eln_spatial: velocity factor %d must be r%d (the algebra of configuration "
                                                "factor %d)", nc + i + 1, g->nd, i + 1);
    }
    return LF_OK;
}

const lf_method_class lf_class_eln_spatial = {.work_doubles = eln_spatial_work, .cache_doubles = eln_spatial_cache,
                                              .accepts = eln_spatial_accepts, .step = eln_spatial_step};
