/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — potentials: the object (a callback of the host's, or a class with its parameter
 * vector) and what every class gets from its schema: creation with the generic check, the defaults,
 * the description, the lanes with a fallback lane by lane. The built-in classes themselves, with
 * their torques derived in comments, are in potential_classes.c. */
#include "model/potential.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/lanes_internal.h"
#include "base/linalg.h"
#include "lie/so3.h"

struct lf_potential {
    const lf_potential_class *cls; /* NULL: a callback */
    const char *name;
    lf_potential_eval_fn eval;     /* U(R), or */
    lf_potential_eval_x_fn eval_x; /* U(x, R) of translating bodies */
    void *ctx;
    void (*destroy)(void *ctx);
    double par[LF_POTENTIAL_MAXPAR];       /* a class's parameter vector */
    lf_potential_jacobian_fn jacobian;     /* optional */
    lf_potential_jacobian_x_fn jacobian_x; /* optional, of a potential of positions */
};

static lf_potential *alloc_pot(const lf_potential_class *cls, const char *name, lf_potential_eval_fn eval,
                               lf_potential_eval_x_fn eval_x, lf_error *err)
{
    lf_potential *p = calloc(1, sizeof *p);
    if (!p) {
        lf_error_set(err, LF_ENOMEM, "potential %s: out of memory", name);
        return NULL;
    }
    p->cls = cls;
    p->name = name;
    p->eval = eval;
    p->eval_x = eval_x;
    p->ctx = p->par;
    return p;
}

lf_potential *lf_potential_new(const char *name, lf_potential_eval_fn eval, void *ctx, void (*destroy)(void *ctx),
                               lf_error *err)
{
    if (!eval) {
        lf_error_set(err, LF_EINVAL, "lf_potential_new: an evaluation function is required");
        return NULL;
    }
    lf_potential *p = alloc_pot(NULL, name ? name : "callback", eval, NULL, err);
    if (!p) return NULL;
    p->ctx = ctx;
    p->destroy = destroy;
    return p;
}

lf_potential *lf_potential_new_x(const char *name, lf_potential_eval_x_fn eval, void *ctx, void (*destroy)(void *ctx),
                                 lf_error *err)
{
    if (!eval) {
        lf_error_set(err, LF_EINVAL, "lf_potential_new_x: an evaluation function is required");
        return NULL;
    }
    lf_potential *p = alloc_pot(NULL, name ? name : "callback", NULL, eval, err);
    if (!p) return NULL;
    p->ctx = ctx;
    p->destroy = destroy;
    return p;
}

int lf_potential_of_positions(const lf_potential *p) { return p && p->eval_x; }

void lf_potential_free(lf_potential *p)
{
    if (!p) return;
    if (p->destroy) p->destroy(p->ctx);
    free(p);
}

const char *lf_potential_name(const lf_potential *p) { return p ? p->name : "free"; }

void lf_potential_set_jacobian(lf_potential *p, lf_potential_jacobian_fn jac)
{
    if (p) p->jacobian = jac;
}

void lf_potential_set_jacobian_x(lf_potential *p, lf_potential_jacobian_x_fn jac)
{
    if (p) p->jacobian_x = jac;
}

int lf_potential_has_jacobian(const lf_potential *p)
{
    return p && (p->eval_x ? p->jacobian_x != NULL : p->jacobian != NULL);
}

void *lf_potential_context(const lf_potential *p, lf_potential_eval_fn eval)
{
    return p && !p->cls && p->eval && p->eval == eval ? p->ctx : NULL;
}

void *lf_potential_context_x(const lf_potential *p, lf_potential_eval_x_fn eval)
{
    return p && !p->cls && p->eval_x && p->eval_x == eval ? p->ctx : NULL;
}

/* K finite (both Jacobian functions) */
static int check_jacobian(const lf_potential *p, int nb, const double *K, lf_error *err)
{
    for (int i = 0; i < 9 * nb * nb; i++)
        if (!isfinite(K[i]))
            return lf_error_set(err, LF_EDOMAIN, "torque Jacobian of potential %s is not finite (%g)", p->name, K[i]);
    return LF_OK;
}

int lf_potential_jacobian(const lf_potential *p, int nb, const double *R, double *K, lf_error *err)
{
    if (!p || !p->jacobian)
        return lf_error_set(err, LF_EINVAL, "potential %s has no torque Jacobian", lf_potential_name(p));
    int rc = p->jacobian(p->ctx, nb, R, K, err);
    return rc != LF_OK ? rc : check_jacobian(p, nb, K, err);
}

int lf_potential_jacobian_x(const lf_potential *p, const lf_bodies_config *c, double *K, lf_error *err)
{
    if (!c) return lf_error_set(err, LF_EINVAL, "lf_potential_jacobian_x: a configuration is required");
    if (!p || !p->eval_x) return lf_potential_jacobian(p, c->nb, c->R, K, err);
    if (!p->jacobian_x) return lf_error_set(err, LF_EINVAL, "potential %s has no torque Jacobian", p->name);
    int rc = p->jacobian_x(p->ctx, c, K, err);
    return rc != LF_OK ? rc : check_jacobian(p, c->nb, K, err);
}

/* the outputs of an evaluation finite: U, then each body's force and torque */
static int check_outputs(const lf_potential *p, int nb, const double *U, const double *F, const double *tau,
                         lf_error *err)
{
    if (U && !isfinite(*U)) return lf_error_set(err, LF_EDOMAIN, "potential %s is not finite (U=%g)", p->name, *U);
    if ((!F || lf_all_finite(F, 3 * (size_t)nb)) && (!tau || lf_all_finite(tau, 3 * (size_t)nb))) return LF_OK;
    for (int i = 0; F && i < 3 * nb; i++)
        if (!isfinite(F[i]))
            return lf_error_set(err, LF_EDOMAIN, "force of potential %s on body %d is not finite (%g)", p->name,
                                i / 3 + 1, F[i]);
    for (int i = 0; tau && i < 3 * nb; i++)
        if (!isfinite(tau[i]))
            return lf_error_set(err, LF_EDOMAIN, "torque of potential %s on body %d is not finite (%g)", p->name,
                                i / 3 + 1, tau[i]);
    return LF_OK;
}

int lf_potential_eval(const lf_potential *p, int nb, const double *R, double *U, double *tau, lf_error *err)
{
    if (!p) {
        if (U) *U = 0;
        if (tau) memset(tau, 0, 3 * (size_t)nb * sizeof(double));
        return LF_OK;
    }
    if (p->eval_x)
        return lf_error_set(err, LF_EINVAL,
                            "potential %s depends on the bodies' positions: it acts on bodies with a "
                            "mass (translating bodies) only",
                            p->name);
    int rc = p->eval(p->ctx, nb, R, U, tau, err);
    return rc != LF_OK ? rc : check_outputs(p, nb, U, NULL, tau, err);
}

int lf_potential_eval_x(const lf_potential *p, const lf_bodies_config *c, double *U, double *F, double *tau,
                        lf_error *err)
{
    if (!c || !c->R || (p && p->eval_x && (!c->x || !c->mass || !c->J)))
        return lf_error_set(err, LF_EINVAL,
                            "lf_potential_eval_x: a configuration with masses, moments, positions "
                            "and attitudes is required");
    if (!p || !p->eval_x) {
        if (F) memset(F, 0, 3 * (size_t)c->nb * sizeof(double));
        return lf_potential_eval(p, c->nb, c->R, U, tau, err);
    }
    for (int i = 0; F && i < 3 * c->nb; i++) F[i] = 0;
    for (int i = 0; i < 3 * c->nb; i++) /* a NaN position would drop out of a cutoff test unseen */
        if (!isfinite(c->x[i]))
            return lf_error_set(err, LF_EDOMAIN, "potential %s: the position of body %d is not finite (%g, %g, %g)",
                                lf_potential_name(p), i / 3 + 1, c->x[i - i % 3], c->x[i - i % 3 + 1],
                                c->x[i - i % 3 + 2]);
    int rc = p->eval_x(p->ctx, c, U, F, tau, err);
    return rc != LF_OK ? rc : check_outputs(p, c->nb, U, F, tau, err);
}

/* ---------------------------------------------------------------- classes */
int lf_param_size(lf_param_type type) { return type == LF_PARAM_NUMBER ? 1 : type == LF_PARAM_VEC3 ? 3 : 9; }

int lf_potential_class_npar(const lf_potential_class *c)
{
    int n = 0;
    for (int i = 0; i < c->nparams; i++) n += lf_param_size(c->params[i].type);
    return n;
}

void lf_potential_class_defaults(const lf_potential_class *c, double *par)
{
    for (int i = 0; i < c->nparams; i++) {
        const lf_potential_param *q = &c->params[i];
        const int n = lf_param_size(q->type);
        if (q->required) memset(par, 0, (size_t)n * sizeof(double));
        else if (q->type == LF_PARAM_ROTATION) lf_so3_exp(q->def, par);
        else memcpy(par, q->def, (size_t)n * sizeof(double));
        par += n;
    }
}

/* every parameter finite, rotations rotations (the check of a class without its own) */
static int generic_check(const lf_potential_class *c, const double *par, lf_error *err)
{
    for (int i = 0; i < c->nparams; i++) {
        const lf_potential_param *q = &c->params[i];
        const int n = lf_param_size(q->type);
        if (q->type == LF_PARAM_ROTATION) {
            char what[96];
            snprintf(what, sizeof what, "%s potential: %s", c->name, q->name);
            if (lf_so3_check(par, 1e-9, what, err) != LF_OK) return LF_EINVAL;
        } else
            for (int k = 0; k < n; k++)
                if (!isfinite(par[k])) {
                    if (n == 1)
                        return lf_error_set(err, LF_EINVAL, "%s potential: %s = %g must be finite", c->name, q->name,
                                            par[0]);
                    return lf_error_set(err, LF_EINVAL, "%s potential: %s[%d] = %g must be finite", c->name, q->name,
                                        k + 1, par[k]);
                }
        par += n;
    }
    return LF_OK;
}

lf_potential *lf_potential_create(const lf_potential_class *c, const double *par, lf_error *err)
{
    if (!c || !c->eval == !c->eval_x || c->nparams < 0 || c->nparams > LF_POTENTIAL_MAXPARAMS ||
        lf_potential_class_npar(c) > LF_POTENTIAL_MAXPAR || (c->nparams > 0 && !par)) {
        lf_error_set(err, LF_EINVAL, "lf_potential_create: %s is not a valid potential class",
                     c && c->name ? c->name : "(null)");
        return NULL;
    }
    if ((c->check ? c->check(par, err) : generic_check(c, par, err)) != LF_OK) return NULL;
    lf_potential *p = alloc_pot(c, c->name, c->eval, c->eval_x, err);
    if (p && c->nparams > 0) memcpy(p->par, par, (size_t)lf_potential_class_npar(c) * sizeof(double));
    return p;
}

const lf_potential_class *lf_potential_class_of(const lf_potential *p) { return p ? p->cls : NULL; }

const double *lf_potential_params(const lf_potential *p) { return p && p->cls ? p->par : NULL; }

/* the built-ins by their parameters */
static lf_potential *create_builtin(const char *name, const double *par, lf_error *err)
{
    return lf_potential_create(lf_potential_class_find(name), par, err);
}

lf_potential *lf_potential_stress(double alpha, const double Rm[9], lf_error *err)
{
    double par[10];
    lf_potential_class_defaults(lf_potential_class_find("stress"), par); /* Rm NULL: the default */
    par[0] = alpha;
    if (Rm) memcpy(par + 1, Rm, 9 * sizeof(double));
    return create_builtin("stress", par, err);
}

lf_potential *lf_potential_field(const double B[3], const double m[3], lf_error *err)
{
    if (!B || !m) return lf_error_set(err, LF_EINVAL, "lf_potential_field: B and m are required"), NULL;
    const double par[6] = {B[0], B[1], B[2], m[0], m[1], m[2]};
    return create_builtin("field", par, err);
}

lf_potential *lf_potential_top(double mgl, const double chi[3], lf_error *err)
{
    double par[4] = {mgl, 0, 0, 1}; /* chi NULL: e3 */
    if (chi) memcpy(par + 1, chi, 3 * sizeof(double));
    return create_builtin("top", par, err);
}

lf_potential *lf_potential_coulomb_wall(lf_error *err) { return create_builtin("coulomb_wall", NULL, err); }

lf_potential *lf_potential_gravity(const double g[3], lf_error *err)
{
    if (!g) return lf_error_set(err, LF_EINVAL, "lf_potential_gravity: g is required"), NULL;
    return create_builtin("gravity", g, err);
}

lf_potential *lf_potential_central(double mu, const double c[3], lf_error *err)
{
    const double par[4] = {mu, c ? c[0] : 0, c ? c[1] : 0, c ? c[2] : 0};
    return create_builtin("central", par, err);
}

/* ---------------------------------------------------------------- lanes */
int lf_potential_torque_lanes(const lf_potential *p, int B, const double *R, double *tau, lf_error *err)
{
    if (B < 1 || !R || !tau) return lf_error_set(err, LF_EINVAL, "lf_potential_torque_lanes: %d lanes", B);
    if (!p) {
        memset(tau, 0, 3 * (size_t)B * sizeof(double));
        return LF_OK;
    }
    if (p->cls && p->cls->torque_lanes && !p->cls->torque_lanes(p->par, B, R, tau)) return LF_OK;
    /* a callback, a class without a lanes kernel, or one that failed somewhere: lane by lane, which
     * also finds the lane */
    for (int j = 0; j < B; j++) {
        double Rb[9], t[3];
        lf_lane_get(9, R, B, j, Rb);
        int rc = lf_potential_eval(p, 1, Rb, NULL, t, err);
        if (rc != LF_OK) {
            if (err && B > 1) {
                char msg[sizeof err->msg];
                memcpy(msg, err->msg, sizeof msg);
                lf_error_set(err, rc, "lane %d: %s", j + 1, msg);
            }
            return rc;
        }
        lf_lane_put(3, t, tau, B, j);
    }
    return LF_OK;
}

int lf_potential_eval_x_lanes(const lf_potential *p, int B, double m, const double *J, const double *x, const double *R,
                              double *tau, double *F, lf_error *err)
{
    if (!p || !p->eval_x) {
        if (F) memset(F, 0, 3 * (size_t)B * sizeof(double));
        return lf_potential_torque_lanes(p, B, R, tau, err);
    }
    if (B < 1 || !x || !R || !tau || !J) return lf_error_set(err, LF_EINVAL, "lf_potential_eval_x_lanes: %d lanes", B);
    for (int j = 0; j < B; j++) { /* lane by lane */
        double xb[3], Rb[9], t[3], f[3];
        lf_lane_get(3, x, B, j, xb);
        lf_lane_get(9, R, B, j, Rb);
        const lf_bodies_config c = {1, &m, J, xb, Rb};
        int rc = lf_potential_eval_x(p, &c, NULL, f, t, err);
        if (rc != LF_OK) {
            if (err && B > 1) {
                char msg[sizeof err->msg];
                memcpy(msg, err->msg, sizeof msg);
                lf_error_set(err, rc, "lane %d: %s", j + 1, msg);
            }
            return rc;
        }
        lf_lane_put(3, t, tau, B, j);
        if (F) lf_lane_put(3, f, F, B, j);
    }
    return LF_OK;
}

/* ---------------------------------------------------------------- description */
/* "name(p = v, ...)" from the schema: numbers %g, vectors (x, y, z), matrices [a b c; d e f; g h i] */
static int describe_schema(const lf_potential_class *c, const double *q, char *buf, size_t size)
{
    char tmp[512];
    size_t n = (size_t)snprintf(tmp, sizeof tmp, "%s(", c->name);
    for (int i = 0; i < c->nparams && n < sizeof tmp; i++) {
        const lf_potential_param *d = &c->params[i];
        const char *sep = i ? ", " : "";
        char *o = tmp + n;
        size_t room = sizeof tmp - n;
        if (d->type == LF_PARAM_NUMBER) n += (size_t)snprintf(o, room, "%s%s = %g", sep, d->name, q[0]);
        else if (d->type == LF_PARAM_VEC3)
            n += (size_t)snprintf(o, room, "%s%s = (%g, %g, %g)", sep, d->name, q[0], q[1], q[2]);
        else
            n += (size_t)snprintf(o, room, "%s%s = [%g %g %g; %g %g %g; %g %g %g]", sep, d->name, q[0], q[1], q[2],
                                  q[3], q[4], q[5], q[6], q[7], q[8]);
        q += lf_param_size(d->type);
    }
    return snprintf(buf, size, "%.*s)", (int)(n < sizeof tmp ? n : sizeof tmp - 1), tmp);
}

int lf_potential_describe(const lf_potential *p, char *buf, size_t size)
{
    if (!p) return snprintf(buf, size, "free");
    if (!p->cls) return snprintf(buf, size, "%s", p->name);
    if (p->cls->describe) return p->cls->describe(p->par, buf, size);
    return describe_schema(p->cls, p->par, buf, size);
}
