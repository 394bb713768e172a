/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — interaction sites of rigid bodies (sites.h): the engine, its evaluation and statistics.
 *
 * An evaluation puts the sites at r_k = x_b + a_k, a_k = R_b s_k (in the cell order of the last
 * build, k the sorted index), as p_k = r_k - img_k with the images of the build; rebuilds the cells and
 * the list (cells.c) when a site has moved more than skin/2 since (or always with skin 0); runs the
 * pair loop over the list (the styles of pair_styles_internal.h) with the site forces f_k; and sums
 * them per body: F_b = sum f_k, tau_b = R_b^T sum a_k x f_k (= sum s_k x R_b^T f_k, potential.h's
 * convention). The molecular virial is the atomic one minus sum_k a_k . f_k (sum over pairs of
 * (d_ij - a_i + a_j) . f_ij, d_ij - a_i + a_j the centres' separation in the pair's image). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "md/cells_internal.h"
#include "md/pair_styles_internal.h"
#include "md/sites.h"

#define DEFAULT_MAX_BYTES ((size_t)1 << 30)
#define NSITE_DOUBLES 21 /* p, a, f, img, p0, r (by site), s (sorted): 3 each */

/* the engine's memory per site: the buffers, the copies of s and q, the charges and 4 ints */
static size_t own_bytes(int ns) { return (size_t)ns * ((NSITE_DOUBLES + 5) * sizeof(double) + 4 * sizeof(int)); }

struct lf_sites {
    pthread_mutex_t lock;
    int nb, ns;
    int *first;     /* nb + 1: the sites of body b are first[b] .. first[b + 1] - 1 */
    int *site_body; /* ns, by site */
    double *s;      /* 3 ns body-frame positions, by site */
    int *type;      /* ns, by site */
    double *q;      /* ns, by site (NULL: no charges) */
    lf_md_pairs pairs;
    lf_sites_pair_fn pair_fn; /* the user's pair function (NULL: none) and its context */
    void *pair_ctx;
    lf_md_cells cells;
    double skin;   /* in use */
    double u_self; /* the DSF self energy */
    int built;
    /* by sorted index k (the cell order of the last build) */
    int *bk, *tk; /* body, type */
    double *qk;   /* charge */
    double *dbl;  /* NSITE_DOUBLES ns */
    double *p[3], *a[3], *f[3], *img[3], *p0[3], *r[3], *sk[3];
    /* the pairs in range of one site: j and d, r^2 (4 cap_c doubles), for the longest list of a site */
    int *cj;
    double *cd;
    size_t cap_c;
    lf_sites_stats st;
};

void lf_sites_free(lf_sites *s)
{
    if (!s) return;
    pthread_mutex_destroy(&s->lock);
    lf_md_pairs_free(&s->pairs);
    lf_md_cells_free(&s->cells);
    free(s->first);
    free(s->site_body);
    free(s->s);
    free(s->type);
    free(s->q);
    free(s->bk);
    free(s->tk);
    free(s->qk);
    free(s->dbl);
    free(s->cj);
    free(s->cd);
    free(s);
}

int lf_sites_nbodies(const lf_sites *s) { return s ? s->nb : 0; }
int lf_sites_count(const lf_sites *s) { return s ? s->ns : 0; }

/* the counts of sites: spec->nsites, their total into *ns */
static int check_counts(const lf_sites_spec *spec, int *ns, lf_error *err)
{
    if (spec->nb < 1 || !spec->nsites || !spec->s)
        return lf_error_set(err, LF_EINVAL, "sites: %d bodies (expected 1 or more, with their sites)", spec->nb);
    long total = 0;
    for (int b = 0; b < spec->nb; b++) {
        if (spec->nsites[b] < 1)
            return lf_error_set(err, LF_EINVAL, "sites: body %d has %d sites (expected 1 or more)", b + 1,
                                spec->nsites[b]);
        total += spec->nsites[b];
        if (total > LF_MD_MAXSITES) return lf_error_set(err, LF_EINVAL, "sites: more than %d sites", LF_MD_MAXSITES);
    }
    *ns = (int)total;
    return LF_OK;
}

/* the scalars: cutoff, skin, box, max_bytes */
static int check_scalars(const lf_sites_spec *spec, lf_error *err)
{
    const double rc = spec->cutoff;
    if (!isfinite(rc) || !(rc > 0))
        return lf_error_set(err, LF_EINVAL, "sites: cutoff = %g (expected a finite number > 0)", rc);
    if (!isfinite(spec->skin) || spec->skin < 0)
        return lf_error_set(err, LF_EINVAL, "sites: skin = %g (expected a finite number >= 0)", spec->skin);
    for (int d = 0; spec->box && d < 3; d++) {
        const double L = spec->box[d];
        if (!isfinite(L) || !(L > 0))
            return lf_error_set(err, LF_EINVAL, "sites: box length L%c = %g (expected a finite number > 0)", 'x' + d,
                                L);
        if (rc > L / 2)
            return lf_error_set(err, LF_EINVAL,
                                "sites: the cutoff %g is larger than half the box length L%c = %g (%g): the minimum "
                                "image would miss pairs",
                                rc, 'x' + d, L, L / 2);
    }
    return LF_OK;
}

/* the sites' positions, types and charges */
static int check_sites(const lf_sites_spec *spec, lf_error *err)
{
    for (int b = 0, i = 0; b < spec->nb; b++)
        for (int m = 1; m <= spec->nsites[b]; m++, i++) {
            for (int d = 0; d < 3; d++)
                if (!isfinite(spec->s[3 * i + d]))
                    return lf_error_set(err, LF_EINVAL, "sites: site %d of body %d: position %g is not finite", m,
                                        b + 1, spec->s[3 * i + d]);
            if (spec->type && (spec->type[i] < 0 || spec->type[i] >= spec->ntypes))
                return lf_error_set(err, LF_EINVAL, "sites: site %d of body %d has the type %d (ntypes = %d: 0 .. %d)",
                                    m, b + 1, spec->type[i], spec->ntypes, spec->ntypes - 1);
            if (spec->charge && !isfinite(spec->charge[i]))
                return lf_error_set(err, LF_EINVAL, "sites: site %d of body %d has the charge %g", m, b + 1,
                                    spec->charge[i]);
        }
    return LF_OK;
}

/* the copies of the spec's arrays and the buffers */
static int alloc_engine(lf_sites *e, const lf_sites_spec *spec, lf_error *err)
{
    const size_t n = (size_t)e->ns;
    e->first = malloc(((size_t)e->nb + 1) * sizeof *e->first);
    e->site_body = malloc(n * sizeof *e->site_body);
    e->s = malloc(3 * n * sizeof *e->s);
    e->type = calloc(n, sizeof *e->type);
    e->q = spec->charge ? malloc(n * sizeof *e->q) : NULL;
    e->bk = malloc(n * sizeof *e->bk);
    e->tk = malloc(n * sizeof *e->tk);
    e->qk = calloc(n, sizeof *e->qk);
    e->dbl = calloc(NSITE_DOUBLES * n, sizeof *e->dbl);
    if (!e->first || !e->site_body || !e->s || !e->type || (spec->charge && !e->q) || !e->bk || !e->tk || !e->qk ||
        !e->dbl)
        return lf_error_set(err, LF_ENOMEM, "sites: out of memory (%d sites)", e->ns);
    double **arr[7] = {e->p, e->a, e->f, e->img, e->p0, e->r, e->sk};
    for (int v = 0; v < 7; v++)
        for (int d = 0; d < 3; d++) arr[v][d] = e->dbl + (3 * v + d) * n;
    e->first[0] = 0;
    for (int b = 0; b < e->nb; b++) {
        e->first[b + 1] = e->first[b] + spec->nsites[b];
        for (int i = e->first[b]; i < e->first[b + 1]; i++) e->site_body[i] = b;
    }
    memcpy(e->s, spec->s, 3 * n * sizeof *e->s);
    if (spec->type) memcpy(e->type, spec->type, n * sizeof *e->type);
    if (spec->charge) memcpy(e->q, spec->charge, n * sizeof *e->q);
    return LF_OK;
}

lf_sites *lf_sites_new(const lf_sites_spec *spec, lf_error *err)
{
    int ns = 0;
    if (!spec) {
        lf_error_set(err, LF_EINVAL, "sites: no spec");
        return NULL;
    }
    if (check_counts(spec, &ns, err) != LF_OK || check_scalars(spec, err) != LF_OK) return NULL;
    if (spec->ntypes < 1) {
        lf_error_set(err, LF_EINVAL, "sites: ntypes = %d (expected 1 or more)", spec->ntypes);
        return NULL;
    }
    if (check_sites(spec, err) != LF_OK) return NULL;
    const size_t max_bytes = spec->max_bytes ? spec->max_bytes : DEFAULT_MAX_BYTES;
    const size_t own = own_bytes(ns);
    if (own > max_bytes) {
        lf_error_set(err, LF_ENOMEM, "sites: %d sites need %zu bytes, more than max_bytes = %zu", ns, own, max_bytes);
        return NULL;
    }
    lf_sites *e = calloc(1, sizeof *e);
    if (!e) {
        lf_error_set(err, LF_ENOMEM, "sites: out of memory");
        return NULL;
    }
    pthread_mutex_init(&e->lock, NULL);
    e->nb = spec->nb;
    e->ns = ns;
    if (lf_md_pairs_init(&e->pairs, spec, err) != LF_OK || alloc_engine(e, spec, err) != LF_OK) {
        lf_sites_free(e);
        return NULL;
    }
    e->skin = spec->skin;
    for (int d = 0; spec->box && d < 3; d++) e->skin = fmin(e->skin, spec->box[d] - spec->cutoff);
    if (lf_md_cells_init(&e->cells, ns, spec->box, spec->cutoff + e->skin, max_bytes, own, err) != LF_OK) {
        lf_sites_free(e);
        return NULL;
    }
    e->pair_fn = spec->pair_fn;
    e->pair_ctx = spec->pair_ctx;
    e->u_self = e->pairs.coulomb ? lf_sites_self(spec->coulomb_self, spec->cutoff, spec->coulomb_alpha, spec->coulomb_k,
                                                 ns, spec->charge)
                                 : 0;
    if (!isfinite(e->u_self)) { /* charges whose energies overflow: refused here, not U = -inf at each evaluation */
        lf_error_set(err, LF_EINVAL,
                     "sites: the Coulomb self energy of the charges is not finite (%g): charges too large", e->u_self);
        lf_sites_free(e);
        return NULL;
    }
    e->st.skin = e->skin;
    e->st.self_energy = e->u_self;
    e->st.bytes = own + e->cells.bytes;
    return e;
}

/* the gather buffers of pair_loop as long as the longest list of a site (grown geometrically) */
static int grow_gather(lf_sites *e, lf_error *err)
{
    long longest = 0;
    for (int k = 0; k < e->ns; k++) longest = fmax(longest, e->cells.start[k + 1] - e->cells.start[k]);
    if ((size_t)longest <= e->cap_c) return LF_OK;
    const size_t cap = (size_t)longest > 2 * e->cap_c ? (size_t)longest : 2 * e->cap_c;
    free(e->cj);
    free(e->cd);
    e->cj = malloc(cap * sizeof *e->cj);
    e->cd = malloc(4 * cap * sizeof *e->cd);
    e->cap_c = e->cj && e->cd ? cap : 0;
    if (!e->cap_c) return lf_error_set(err, LF_ENOMEM, "sites: out of memory (%zu neighbours of a site)", cap);
    return LF_OK;
}

/* the sites in space by site (r), sorted into cells, the per-site data gathered, the list built */
static int rebuild(lf_sites *e, const double *x, const double *R, lf_error *err)
{
    for (int i = 0; i < e->ns; i++) {
        const int b = e->site_body[i];
        const double *Rb = R + 9 * b, *si = e->s + 3 * i;
        for (int d = 0; d < 3; d++)
            e->r[d][i] = x[3 * b + d] + (Rb[3 * d] * si[0] + Rb[3 * d + 1] * si[1] + Rb[3 * d + 2] * si[2]);
    }
    e->built = 0;
    int st = lf_md_cells_sort(&e->cells, e->ns, e->r[0], e->r[1], e->r[2], e->p[0], e->p[1], e->p[2], e->img[0],
                              e->img[1], e->img[2], err);
    if (st != LF_OK) return st;
    for (int k = 0; k < e->ns; k++) {
        const int i = e->cells.perm[k];
        e->bk[k] = e->site_body[i];
        e->tk[k] = e->type[i];
        e->qk[k] = e->q ? e->q[i] : 0;
        for (int d = 0; d < 3; d++) {
            e->sk[d][k] = e->s[3 * i + d];
            e->p0[d][k] = e->p[d][k];
        }
    }
    st = lf_md_cells_list(&e->cells, e->ns, e->bk, e->p[0], e->p[1], e->p[2], err);
    if (st != LF_OK) return st;
    st = grow_gather(e, err);
    if (st != LF_OK) return st;
    e->built = 1;
    e->st.rebuilds++;
    return LF_OK;
}

/* a_k = R_b s_k and p_k = x_b + a_k - img_k in sorted order; the largest squared displacement from p0 */
static double place(lf_sites *e, const double *x, const double *R)
{
    double m = 0;
    for (int k = 0; k < e->ns; k++) {
        const int b = e->bk[k];
        const double *Rb = R + 9 * b, s0 = e->sk[0][k], s1 = e->sk[1][k], s2 = e->sk[2][k];
        double d2 = 0;
        for (int d = 0; d < 3; d++) {
            const double a = Rb[3 * d] * s0 + Rb[3 * d + 1] * s1 + Rb[3 * d + 2] * s2;
            const double p = (x[3 * b + d] + a) - e->img[d][k], dp = p - e->p0[d][k];
            e->a[d][k] = a;
            e->p[d][k] = p;
            d2 += dp * dp;
        }
        m = fmax(m, d2);
    }
    return m;
}

typedef struct {
    double ulj, uc, uu, w;
    long count;
    int bad_k, bad_j; /* a pair at distance 0 */
    int status;       /* of the user's pair function (LF_OK), its message in *err */
    lf_error *err;
} loop_out;

/* the user's pair function at r = sqrt(r2) for the sites of types ta, tb with charges qa, qb: u added to
 * *uu, returns fpair = -du/dr / r (the force on a is fpair (r_a - r_b)) */
static inline double user_pair(const lf_sites *e, int ta, int tb, double qa, double qb, double r2, double *uu,
                               loop_out *o)
{
    const double r = sqrt(r2);
    double u = 0, du = 0;
    const int st = ta <= tb ? e->pair_fn(e->pair_ctx, ta, tb, r, qa, qb, &u, &du, o->err)
                            : e->pair_fn(e->pair_ctx, tb, ta, r, qb, qa, &u, &du, o->err);
    if (st != LF_OK) o->status = st;
    *uu += u;
    return -du / r;
}

/* the pair loop over the list: site forces f (zeroed first), energies, atomic virial, pairs in range.
 * lj, coul and user are constants at each call (the compiler makes one loop of each). */
static inline void pair_loop(lf_sites *e, const int lj, const int coul, const int user, loop_out *o)
{
    const lf_md_pairs *P = &e->pairs;
    const int n = e->ns, nt = P->ntypes;
    const double rc2 = P->rc2, *px = e->p[0], *py = e->p[1], *pz = e->p[2];
    const double *shx = e->cells.shift[0], *shy = e->cells.shift[1], *shz = e->cells.shift[2], *q = e->qk;
    const long *start = e->cells.start;
    const uint32_t *nbr = e->cells.nbr;
    const int *tk = e->tk;
    int *cj = e->cj;
    /* the gathered pairs' buffers (none before the list has held a pair: no pointer arithmetic on NULL) */
    double *cx = e->cd, *cy = cx ? cx + e->cap_c : NULL, *cz = cy ? cy + e->cap_c : NULL,
           *cr = cz ? cz + e->cap_c : NULL;
    double *fx = e->f[0], *fy = e->f[1], *fz = e->f[2], ulj = 0, uc = 0, uu = 0, w = 0;
    long count = 0;
    memset(e->dbl + 6 * (size_t)n, 0, 3 * (size_t)n * sizeof(double)); /* f */
    for (int k = 0; k < n; k++) {
        const double xk = px[k], yk = py[k], zk = pz[k], qk = coul || user ? q[k] : 0;
        const int row = tk[k] * nt;
        double fxk = 0, fyk = 0, fzk = 0;
        int nin = 0; /* the pairs in range, gathered without a branch (the cutoff test is unpredictable) */
        for (long m = start[k]; m < start[k + 1]; m++) {
            const uint32_t v = nbr[m];
            const int j = (int)(v >> 5), c = (int)(v & 31);
            const double dx = xk - px[j] - shx[c], dy = yk - py[j] - shy[c], dz = zk - pz[j] - shz[c];
            const double r2 = dx * dx + dy * dy + dz * dz;
            cj[nin] = j;
            cx[nin] = dx;
            cy[nin] = dy;
            cz[nin] = dz;
            cr[nin] = r2;
            nin += r2 < rc2;
        }
        for (int m = 0; m < nin; m++) {
            const int j = cj[m];
            const double dx = cx[m], dy = cy[m], dz = cz[m], r2 = cr[m];
            if (r2 == 0) {
                o->bad_k = k;
                o->bad_j = j;
                return;
            }
            const double ir2 = 1 / r2;
            double fp = 0;
            if (lj) fp += lf_md_lj(P, row + tk[j], ir2, &ulj);
            if (coul) {
                const double qq = qk * q[j];
                if (qq != 0) fp += lf_md_dsf(P, qq, sqrt(r2), ir2, &uc);
            }
            if (user) {
                fp += user_pair(e, tk[k], tk[j], qk, q[j], r2, &uu, o);
                if (o->status != LF_OK) return;
            }
            w += fp * r2;
            fxk += fp * dx;
            fyk += fp * dy;
            fzk += fp * dz;
            fx[j] -= fp * dx;
            fy[j] -= fp * dy;
            fz[j] -= fp * dz;
        }
        count += nin;
        fx[k] += fxk;
        fy[k] += fyk;
        fz[k] += fzk;
    }
    o->ulj = ulj;
    o->uc = uc;
    o->uu = uu;
    o->w = w;
    o->count = count;
}

/* the site forces summed per body: F, tau (each if not NULL); returns sum_k a_k . f_k */
static double reduce(const lf_sites *e, const double *R, double *F, double *tau)
{
    if (F) memset(F, 0, 3 * (size_t)e->nb * sizeof *F);
    if (tau) memset(tau, 0, 3 * (size_t)e->nb * sizeof *tau);
    double af = 0;
    for (int k = 0; k < e->ns; k++) {
        const int b = e->bk[k];
        const double f[3] = {e->f[0][k], e->f[1][k], e->f[2][k]}, a[3] = {e->a[0][k], e->a[1][k], e->a[2][k]};
        af += a[0] * f[0] + a[1] * f[1] + a[2] * f[2];
        if (F)
            for (int d = 0; d < 3; d++) F[3 * b + d] += f[d];
        if (tau) { /* spatial torque about the centre first */
            tau[3 * b] += a[1] * f[2] - a[2] * f[1];
            tau[3 * b + 1] += a[2] * f[0] - a[0] * f[2];
            tau[3 * b + 2] += a[0] * f[1] - a[1] * f[0];
        }
    }
    for (int b = 0; tau && b < e->nb; b++) { /* body frame: R^T T */
        const double *Rb = R + 9 * b, T[3] = {tau[3 * b], tau[3 * b + 1], tau[3 * b + 2]};
        for (int d = 0; d < 3; d++) tau[3 * b + d] = Rb[d] * T[0] + Rb[3 + d] * T[1] + Rb[6 + d] * T[2];
    }
    return af;
}

/* the error of a result that is not finite: the closest pair of sites (of different bodies) named */
static int closest(const lf_sites *e, lf_error *err)
{
    double best = INFINITY;
    int bk = 0, bj = 0;
    for (int k = 0; k < e->ns; k++)
        for (long m = e->cells.start[k]; m < e->cells.start[k + 1]; m++) {
            const int j = (int)(e->cells.nbr[m] >> 5), c = (int)(e->cells.nbr[m] & 31);
            double r2 = 0;
            for (int d = 0; d < 3; d++) {
                const double dd = e->p[d][k] - e->p[d][j] - e->cells.shift[d][c];
                r2 += dd * dd;
            }
            if (r2 < best) {
                best = r2;
                bk = k;
                bj = j;
            }
        }
    const int i = e->cells.perm[bk], j = e->cells.perm[bj], bi = e->site_body[i], bjj = e->site_body[j];
    return lf_error_set(err, LF_EDOMAIN,
                        "sites: the energy is not finite: site %d of body %d and site %d of body %d are %g apart",
                        i - e->first[bi] + 1, bi + 1, j - e->first[bjj] + 1, bjj + 1, sqrt(best));
}

static int check_config(const lf_sites *e, int nb, const double *x, const double *R, lf_error *err)
{
    if (nb != e->nb || !x || !R)
        return lf_error_set(err, LF_EINVAL, "sites: an engine of %d bodies evaluated for %d", e->nb, nb);
    for (int b = 0; b < nb; b++) {
        for (int d = 0; d < 3; d++)
            if (!isfinite(x[3 * b + d]))
                return lf_error_set(err, LF_EINVAL, "sites: the position of body %d is not finite (%g)", b + 1,
                                    x[3 * b + d]);
        for (int d = 0; d < 9; d++)
            if (!isfinite(R[9 * b + d]))
                return lf_error_set(err, LF_EINVAL, "sites: the attitude of body %d is not finite (%g)", b + 1,
                                    R[9 * b + d]);
    }
    return LF_OK;
}

/* the evaluation under the lock */
static int eval_locked(lf_sites *e, const double *x, const double *R, double *U, double *F, double *tau, lf_error *err)
{
    const double half = 0.5 * e->skin * (1 - 1e-9);
    if (!e->built || e->skin == 0 || place(e, x, R) > half * half) {
        const int st = rebuild(e, x, R, err);
        if (st != LF_OK) return st;
        place(e, x, R);
    }
    loop_out o = {.bad_k = -1, .bad_j = -1, .status = LF_OK, .err = err};
    const int lj = e->pairs.lj, coul = e->pairs.coulomb;
    if (e->pair_fn) { /* a call per pair in range: the built-in styles' loops stay as they are */
        if (lj && coul) pair_loop(e, 1, 1, 1, &o);
        else if (lj) pair_loop(e, 1, 0, 1, &o);
        else if (coul) pair_loop(e, 0, 1, 1, &o);
        else pair_loop(e, 0, 0, 1, &o);
    } else if (lj && coul) pair_loop(e, 1, 1, 0, &o);
    else if (lj) pair_loop(e, 1, 0, 0, &o);
    else if (coul) pair_loop(e, 0, 1, 0, &o);
    else pair_loop(e, 0, 0, 0, &o);
    if (o.status != LF_OK) return o.status;
    if (o.bad_k >= 0) {
        const int i = e->cells.perm[o.bad_k], j = e->cells.perm[o.bad_j], bi = e->site_body[i], bj = e->site_body[j];
        return lf_error_set(err, LF_EDOMAIN,
                            "sites: site %d of body %d and site %d of body %d coincide (u is infinite)",
                            i - e->first[bi] + 1, bi + 1, j - e->first[bj] + 1, bj + 1);
    }
    const double af = reduce(e, R, F, tau);
    if (!isfinite(o.ulj + o.uc + o.uu) || !isfinite(o.w) || !isfinite(af)) return closest(e, err);
    e->st.lj_energy = o.ulj;
    e->st.user_energy = o.uu;
    e->st.pair_energy = o.ulj + o.uc + o.uu;
    e->st.energy = e->st.pair_energy + e->u_self;
    e->st.atomic_virial = o.w;
    e->st.virial = o.w - af;
    e->st.pairs_in_range = o.count;
    e->st.list_pairs = e->cells.start[e->ns];
    e->st.evaluations++;
    e->st.bytes = own_bytes(e->ns) + e->cells.bytes + e->cap_c * (sizeof(int) + 4 * sizeof(double));
    if (U) *U = e->st.energy;
    return LF_OK;
}

int lf_sites_eval(lf_sites *e, int nb, const double *x, const double *R, double *U, double *F, double *tau,
                  lf_error *err)
{
    if (!e) return lf_error_set(err, LF_EINVAL, "sites: no engine");
    int st = check_config(e, nb, x, R, err);
    if (st != LF_OK) return st;
    pthread_mutex_lock(&e->lock);
    st = eval_locked(e, x, R, U, F, tau, err);
    if (st != LF_OK) e->built = 0; /* e.g. a list cut short: build again next time */
    pthread_mutex_unlock(&e->lock);
    return st;
}

void lf_sites_get_stats(const lf_sites *s, lf_sites_stats *st)
{
    if (!st) return;
    memset(st, 0, sizeof *st);
    if (!s) return;
    lf_sites *e = (lf_sites *)s; /* the lock only: the engine is allocated, never const */
    pthread_mutex_lock(&e->lock);
    *st = e->st;
    pthread_mutex_unlock(&e->lock);
}
