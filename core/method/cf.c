/* lieflow — commutator-free Lie group methods (Celledoni, Marthinsen & Owren 2003), Crouch–Grossman
 * methods (Crouch & Grossman 1993) among them, from the tables of tableaux.def.
 *
 * Stage i: Y_i = exp(h S_{i,J}) ... exp(h S_{i,1}) y0 with S = sum_j alpha_j K_j, K_j = f(t + c_j h, Y_j),
 * each exponential acting through the manifold's action (on the left for right-trivialized systems;
 * on the right, in the same order, for left-trivialized ones: y0 exp(h S_1) exp(h S_2) ..., which is
 * the method applied to z = y^{-1}). No dexpinv, no commutators: only exponentials of linear
 * combinations of the stage values. */
#include <string.h>

#include "method_internal.h"

#define MAXS 4
#define MAXE 4

typedef struct {
    int nexp;
    double a[MAXE * MAXS]; /* row e: the coefficients of exponential e, stride = stages */
} cf_product;

typedef struct {
    int s;
    double c[MAXS];
    cf_product stage[MAXS];
    cf_product out;
} cf_tableau;

#define CF_STAGE(n, ...) {n, {__VA_ARGS__}}
#define CF_OUT(n, ...) {n, {__VA_ARGS__}}
#define RKMK(...)
#define RKMK_EMBEDDED(...)
#define RKMK_MIDPOINT(...)
#define CF(id, title, ref, order, s_, c_, stages, out_) static const cf_tableau id##_tab = {s_, {c_}, {stages}, out_};
#include "tableaux.def"
#undef CF

/* y0 (np) | Y (np) | K (s nd) | S (nd) */
static size_t cf_work(const lf_stepper *st)
{
    const cf_tableau *T = st->method->data;
    return 2 * (size_t)st->np + ((size_t)T->s + 1) * st->nd;
}

static size_t cf_cache(const lf_stepper *st)
{
    (void)st;
    return 0;
}

/* y <- exp(h S_J) ... exp(h S_1) y (through the action), for the exponentials of product p. */
static void apply_product(lf_stepper *st, const cf_product *p, int s, const double *K, double h, double *S, double *y)
{
    const int nd = st->nd;
    for (int e = 0; e < p->nexp; e++) {
        for (int k = 0; k < nd; k++) {
            double a = 0;
            for (int j = 0; j < s; j++) a += p->a[e * s + j] * K[j * nd + k];
            S[k] = h * a;
        }
        lf_manifold_act(st->M, S, y);
    }
}

static int cf_step(lf_stepper *st, double h)
{
    const cf_tableau *T = st->method->data;
    const int np = st->np, nd = st->nd, s = T->s;
    double *y0 = st->work, *Y = y0 + np, *K = Y + np, *S = K + (size_t)s * nd;
    memcpy(y0, st->y, (size_t)np * sizeof(double));
    for (int i = 0; i < s; i++) {
        memcpy(Y, y0, (size_t)np * sizeof(double));
        apply_product(st, &T->stage[i], s, K, h, S, Y);
        int rc = lf_stepper_f(st, st->t + T->c[i] * h, Y, K + (size_t)i * nd);
        if (rc != LF_OK) return rc;
    }
    apply_product(st, &T->out, s, K, h, S, st->y);
    return LF_OK;
}

#define CF(id, title_, ref, order_, s_, c_, stages, out_)                                                       \
    const lf_method lf_method_##id = {                                                                         \
        .info = {.name = #id, .title = title_, .reference = ref, .family = "commutator_free", .order = order_, \
                 .symmetric = 0, .symplectic = "no", .implicit = 0, .form = LF_FORM_LIE_ODE},                \
        .work_doubles = cf_work, .cache_doubles = cf_cache, .step = cf_step, .data = &id##_tab};
#include "tableaux.def"
#undef CF
#undef RKMK
#undef RKMK_EMBEDDED
#undef RKMK_MIDPOINT
#undef CF_STAGE
#undef CF_OUT
