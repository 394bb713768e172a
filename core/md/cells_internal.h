/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — cell lists and Verlet neighbour lists of sites (sites.h), in an orthorhombic periodic box
 * or in open space.
 *
 * lf_md_cells_sort puts the sites into cells of side at least rl (the list radius rc + skin): in the
 * box a grid of the box (positions wrapped into [0, L)), in open space a grid over the bounding box of
 * the sites; at most about 2 cells per site (a sparse grid is coarsened). It returns the sites in cell
 * order (perm: sorted index k -> site), their wrapped positions p and images img (r = p + img).
 * lf_md_cells_list then finds the pairs of sites of different bodies closer than rl with the half
 * stencil (the cell itself with j > k, and 13 of its 26 neighbours): each pair and image once, also
 * with 1 or 2 cells across the box (the neighbours are tiles of the periodic tiling, each holding one
 * image of a site). A pair is stored under its first site k as (j << 5 | code), code 0 .. 26 naming
 * the shift of j's image: the separation is d = p_k - p_j - shift[code]. Memory grows geometrically up
 * to max_bytes, above which the build fails with LF_ENOMEM; no allocation when the buffers suffice. */
#ifndef LF_MD_CELLS_INTERNAL_H
#define LF_MD_CELLS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define LF_MD_MAXSITES (1 << 26) /* j << 5 fits 32 bits */
#define LF_MD_NOSHIFT 13         /* the code of the zero shift */

typedef struct lf_md_cells {
    int periodic;
    double L[3];
    double rl;        /* the list radius */
    size_t max_bytes; /* the limit of the engine's memory (sites.h) */
    size_t reserved;  /* of it, the engine's own (per site) */
    int nc[3], ncell;
    double lo[3], inv[3]; /* cell index of p: floor((p - lo) inv) */
    int *cell_start;      /* ncell + 1 (capacity cap_cell + 1) */
    int *cell_of;         /* n: the cell of each site, by site */
    int *perm;            /* n: sorted index -> site */
    int cap_cell;
    long *start;   /* n + 1: the pairs of sorted site k are nbr[start[k] .. start[k + 1] - 1] */
    uint32_t *nbr; /* (j << 5) | code */
    size_t cap_nbr;
    double shift[3][27];
    size_t bytes; /* allocated here */
} lf_md_cells;

/* Set up for n sites (allocates the per-site arrays); box NULL: open space. The cells and the list may
 * take max_bytes - reserved bytes. */
int lf_md_cells_init(lf_md_cells *c, int n, const double *box, double rl, size_t max_bytes, size_t reserved,
                     lf_error *err);
void lf_md_cells_free(lf_md_cells *c);
/* Sort the n sites at r (structure of arrays rx, ry, rz; by site) into cells: c->perm, and in sorted
 * order the wrapped positions p and the images img (3 arrays each). */
int lf_md_cells_sort(lf_md_cells *c, int n, const double *rx, const double *ry, const double *rz, double *px,
                     double *py, double *pz, double *ix, double *iy, double *iz, lf_error *err);
/* The half list of the pairs of sorted sites of different bodies (body: by sorted index) closer than
 * rl at the sorted positions p (those of lf_md_cells_sort). */
int lf_md_cells_list(lf_md_cells *c, int n, const int *body, const double *px, const double *py, const double *pz,
                     lf_error *err);

#endif
