/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — cell lists and Verlet neighbour lists of sites (cells_internal.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "md/cells_internal.h"

void lf_md_cells_free(lf_md_cells *c)
{
    if (!c) return;
    free(c->cell_start);
    free(c->cell_of);
    free(c->perm);
    free(c->start);
    free(c->nbr);
    memset(c, 0, sizeof *c);
}

int lf_md_cells_init(lf_md_cells *c, int n, const double *box, double rl, size_t max_bytes, size_t reserved,
                     lf_error *err)
{
    memset(c, 0, sizeof *c);
    c->periodic = box != NULL;
    for (int d = 0; d < 3; d++) c->L[d] = box ? box[d] : 0;
    c->rl = rl;
    c->max_bytes = max_bytes;
    c->reserved = reserved;
    c->cap_cell = 2 * n + 27;
    c->bytes = (size_t)(c->cap_cell + 1) * sizeof(int) + 2 * (size_t)n * sizeof(int) + ((size_t)n + 1) * sizeof(long);
    if (reserved > max_bytes || c->bytes > max_bytes - reserved)
        return lf_error_set(err, LF_ENOMEM, "sites: %d sites and their cells need %zu bytes, more than max_bytes = %zu",
                            n, reserved + c->bytes, max_bytes);
    c->cell_start = malloc((size_t)(c->cap_cell + 1) * sizeof *c->cell_start);
    c->cell_of = malloc((size_t)n * sizeof *c->cell_of);
    c->perm = malloc((size_t)n * sizeof *c->perm);
    c->start = malloc(((size_t)n + 1) * sizeof *c->start);
    if (!c->cell_start || !c->cell_of || !c->perm || !c->start) {
        lf_md_cells_free(c);
        return lf_error_set(err, LF_ENOMEM, "sites: out of memory (cells of %d sites)", n);
    }
    for (int code = 0; code < 27; code++) {
        const int w[3] = {code % 3 - 1, code / 3 % 3 - 1, code / 9 - 1};
        for (int d = 0; d < 3; d++) c->shift[d][code] = w[d] * c->L[d];
    }
    return LF_OK;
}

/* nc[d] cells of side >= rl (a margin of 1e-9 for the rounding of the cell indices) over the extents
 * ext[d], coarsened (the largest count halved) until they are at most cap_cell */
static void grid(lf_md_cells *c, const double *ext)
{
    for (int d = 0; d < 3; d++) {
        const double m = floor(ext[d] / (c->rl * (1 + 1e-9)));
        c->nc[d] = m >= 1 ? (m < c->cap_cell ? (int)m : c->cap_cell) : 1;
    }
    while ((double)c->nc[0] * c->nc[1] * c->nc[2] > c->cap_cell) {
        int d = c->nc[1] > c->nc[0] ? 1 : 0;
        if (c->nc[2] > c->nc[d]) d = 2;
        c->nc[d] = c->nc[d] / 2 > 1 ? c->nc[d] / 2 : 1;
    }
    c->ncell = c->nc[0] * c->nc[1] * c->nc[2];
    for (int d = 0; d < 3; d++) { /* a span so small that nc / span overflows: one cell across */
        c->inv[d] = ext[d] > 0 ? c->nc[d] / ext[d] : 0;
        if (!isfinite(c->inv[d])) c->inv[d] = 0;
    }
}

static int cell_index(const lf_md_cells *c, int d, double p)
{
    const double t = floor((p - c->lo[d]) * c->inv[d]);
    return !(t >= 0) ? 0 : t >= c->nc[d] ? c->nc[d] - 1 : (int)t; /* NaN (0 * inf of a subnormal span): cell 0 */
}

int lf_md_cells_sort(lf_md_cells *c, int n, const double *rx, const double *ry, const double *rz, double *px,
                     double *py, double *pz, double *ix, double *iy, double *iz, lf_error *err)
{
    const double *r[3] = {rx, ry, rz};
    double ext[3];
    if (c->periodic) {
        for (int d = 0; d < 3; d++) {
            c->lo[d] = 0;
            ext[d] = c->L[d];
        }
    } else {
        for (int d = 0; d < 3; d++) {
            double lo = INFINITY, hi = -INFINITY;
            for (int i = 0; i < n; i++) {
                lo = fmin(lo, r[d][i]);
                hi = fmax(hi, r[d][i]);
            }
            c->lo[d] = lo;
            ext[d] = hi - lo;
            if (!isfinite(ext[d]))
                return lf_error_set(err, LF_EINVAL, "sites: the sites span %g in coordinate %d (not finite)", ext[d],
                                    d + 1);
        }
    }
    grid(c, ext);
    memset(c->cell_start, 0, ((size_t)c->ncell + 1) * sizeof *c->cell_start);
    for (int i = 0; i < n; i++) {
        int id[3];
        for (int d = 0; d < 3; d++) {
            double p = r[d][i];
            if (c->periodic) p -= c->L[d] * floor(p / c->L[d]);
            id[d] = cell_index(c, d, p);
        }
        c->cell_of[i] = id[0] + c->nc[0] * (id[1] + c->nc[1] * id[2]);
        c->cell_start[c->cell_of[i] + 1]++;
    }
    for (int a = 0; a < c->ncell; a++) c->cell_start[a + 1] += c->cell_start[a];
    for (int i = 0; i < n; i++) c->perm[c->cell_start[c->cell_of[i]]++] = i; /* cell_start[a] moves to a + 1's */
    for (int a = c->ncell; a > 0; a--) c->cell_start[a] = c->cell_start[a - 1];
    c->cell_start[0] = 0;
    double *p[3] = {px, py, pz}, *img[3] = {ix, iy, iz};
    for (int k = 0; k < n; k++) {
        const int i = c->perm[k];
        for (int d = 0; d < 3; d++) {
            const double im = c->periodic ? c->L[d] * floor(r[d][i] / c->L[d]) : 0;
            p[d][k] = r[d][i] - im;
            img[d][k] = im;
        }
    }
    return LF_OK;
}

/* the half stencil: the cell itself, then the 13 neighbours (ox, oy, oz) > 0 in lexicographic order (z, y, x) */
static const int stencil[14][3] = {{0, 0, 0},  {1, 0, 0},  {-1, 1, 0}, {0, 1, 0}, {1, 1, 0},  {-1, -1, 1}, {0, -1, 1},
                                   {1, -1, 1}, {-1, 0, 1}, {0, 0, 1},  {1, 0, 1}, {-1, 1, 1}, {0, 1, 1},   {1, 1, 1}};

/* the 14 neighbour cells of the cell of index triple id in the half stencil: their indices (-1:
 * outside the grid of open space) and the shift codes of their images */
static void neighbours(const lf_md_cells *c, const int *id, int *cell, int *code)
{
    for (int s = 0; s < 14; s++) {
        int b[3], w[3], ok = 1;
        for (int d = 0; d < 3; d++) {
            b[d] = id[d] + stencil[s][d];
            w[d] = 0;
            if (b[d] < 0 || b[d] >= c->nc[d]) {
                if (!c->periodic) ok = 0;
                w[d] = b[d] < 0 ? -1 : 1;
                b[d] -= w[d] * c->nc[d];
            }
        }
        cell[s] = ok ? b[0] + c->nc[0] * (b[1] + c->nc[1] * b[2]) : -1;
        code[s] = (w[0] + 1) + 3 * (w[1] + 1) + 9 * (w[2] + 1);
    }
}

/* room for one more pair: grow the list geometrically within max_bytes */
static int grow(lf_md_cells *c, size_t m, int k, int n, lf_error *err)
{
    const size_t fixed = c->bytes - c->cap_nbr * sizeof(uint32_t);
    const size_t budget = c->max_bytes - c->reserved; /* >= fixed (lf_md_cells_init) */
    const size_t limit = budget > fixed ? (budget - fixed) / sizeof(uint32_t) : 0;
    size_t cap = c->cap_nbr < 4096 ? 4096 : 2 * c->cap_nbr;
    if (cap > limit) cap = limit;
    if (cap <= m)
        return lf_error_set(err, LF_ENOMEM,
                            "sites: the neighbour list needs more than max_bytes = %zu bytes: %zu site pairs "
                            "within rc + skin = %g after %d of %d sites",
                            c->max_bytes, m, c->rl, k, n);
    uint32_t *nb = realloc(c->nbr, cap * sizeof *nb);
    if (!nb) return lf_error_set(err, LF_ENOMEM, "sites: out of memory (a neighbour list of %zu pairs)", cap);
    c->nbr = nb;
    c->bytes = fixed + cap * sizeof *nb;
    c->cap_nbr = cap;
    return LF_OK;
}

int lf_md_cells_list(lf_md_cells *c, int n, const int *body, const double *px, const double *py, const double *pz,
                     lf_error *err)
{
    const double rl2 = c->rl * c->rl;
    size_t m = 0;
    for (int a = 0; a < c->ncell; a++) {
        const int id[3] = {a % c->nc[0], a / c->nc[0] % c->nc[1], a / (c->nc[0] * c->nc[1])};
        int cell[14], code[14];
        neighbours(c, id, cell, code);
        for (int k = c->cell_start[a]; k < c->cell_start[a + 1]; k++) {
            c->start[k] = (long)m;
            const double xk = px[k], yk = py[k], zk = pz[k];
            const int bk = body[k];
            for (int s = 0; s < 14; s++) {
                if (cell[s] < 0) continue;
                const double sx = c->shift[0][code[s]], sy = c->shift[1][code[s]], sz = c->shift[2][code[s]];
                const int j0 = s == 0 ? k + 1 : c->cell_start[cell[s]], j1 = c->cell_start[cell[s] + 1];
                for (int j = j0; j < j1; j++) {
                    const double dx = xk - px[j] - sx, dy = yk - py[j] - sy, dz = zk - pz[j] - sz;
                    if (dx * dx + dy * dy + dz * dz >= rl2 || body[j] == bk) continue;
                    if (m == c->cap_nbr) {
                        const int st = grow(c, m, k, n, err);
                        if (st != LF_OK) return st;
                    }
                    c->nbr[m++] = (uint32_t)j << 5 | (uint32_t)code[s];
                }
            }
        }
    }
    c->start[n] = (long)m;
    return LF_OK;
}
