/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — bodies made of point masses attracting each other (lf_potential_point_masses, potential.h):
 * the mutual gravitational potential of the full body problem with each body a set of point masses
 * (as in Lee, Leok & McClamroch, "Lie group variational integrators for the full body problem",
 * Comput. Methods Appl. Mech. Engrg. 196 (2007) 2907, and Fahnestock & Scheeres' polyhedra sampled by
 * points). With a point i of body a at r_i = x_a + R_a s_i and the pair force f = -G m_i m_j d / |d|^3,
 * d = r_i - r_j (on i; -f on j), the force on a body is the sum over its points and the body torque
 * tau_a = sum_i s_i x (R_a^T f_i) (so3.h's convention: d r_i = R_a (y x s_i) e along R_a exp(e hat y),
 * dU = -f_i . R_a (y x s_i) = -y . (s_i x R_a^T f_i)). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/linalg.h"
#include "model/potential.h"

typedef struct {
    int nb, ntotal;
    double G;
    int *first; /* nb + 1: the points of body b are first[b] .. first[b + 1] - 1 */
    double *s;  /* 3 ntotal body-frame positions */
    double *m;  /* ntotal masses */
} point_masses;

/* the points in space at an evaluation: a buffer of the calling thread, grown once (a potential may
 * be evaluated by several threads at a time) */
static _Thread_local double *tls_points;
static _Thread_local size_t tls_size;

static double *points_buffer(size_t n)
{
    if (n > tls_size) {
        double *r = realloc(tls_points, n * sizeof *r);
        if (!r) return NULL;
        tls_points = r;
        tls_size = n;
    }
    return tls_points;
}

static void pm_free(void *ctx)
{
    point_masses *q = ctx;
    if (!q) return;
    free(q->first);
    free(q->s);
    free(q->m);
    free(q);
}

static int pm_eval(void *ctx, const lf_bodies_config *c, double *U, double *F, double *tau, lf_error *err)
{
    const point_masses *q = ctx;
    if (c->nb != q->nb)
        return lf_error_set(err, LF_EINVAL, "point_masses potential of %d bodies evaluated for %d", q->nb, c->nb);
    double *r = points_buffer(3 * (size_t)q->ntotal);
    if (!r) return lf_error_set(err, LF_ENOMEM, "point_masses potential: out of memory (%d points)", q->ntotal);
    for (int b = 0; b < q->nb; b++)
        for (int i = q->first[b]; i < q->first[b + 1]; i++) {
            lf_m3_apply(c->R + 9 * b, q->s + 3 * i, r + 3 * i);
            lf_v3_add(r + 3 * i, c->x + 3 * b, r + 3 * i);
        }
    if (F) memset(F, 0, 3 * (size_t)q->nb * sizeof(double));
    if (tau) memset(tau, 0, 3 * (size_t)q->nb * sizeof(double));
    double Usum = 0;
    for (int a = 0; a < q->nb; a++)
        for (int b = a + 1; b < q->nb; b++)
            for (int i = q->first[a]; i < q->first[a + 1]; i++)
                for (int j = q->first[b]; j < q->first[b + 1]; j++) {
                    double d[3], f[3], t[3];
                    lf_v3_sub(r + 3 * i, r + 3 * j, d);
                    const double dn = lf_v3_norm(d), gmm = q->G * q->m[i] * q->m[j];
                    if (!(dn > 0))
                        return lf_error_set(err, LF_EDOMAIN,
                                            "point_masses potential: point %d of body %d and point "
                                            "%d of body %d coincide",
                                            i - q->first[a] + 1, a + 1, j - q->first[b] + 1, b + 1);
                    Usum -= gmm / dn;
                    lf_v3_scale(d, -gmm / (dn * dn * dn), f); /* on i */
                    if (F) {
                        lf_v3_add(F + 3 * a, f, F + 3 * a);
                        lf_v3_sub(F + 3 * b, f, F + 3 * b);
                    }
                    if (tau) {
                        double fb[3];
                        lf_m3_tapply(c->R + 9 * a, f, fb);
                        lf_v3_cross(q->s + 3 * i, fb, t);
                        lf_v3_add(tau + 3 * a, t, tau + 3 * a);
                        lf_m3_tapply(c->R + 9 * b, f, fb);
                        lf_v3_cross(q->s + 3 * j, fb, t);
                        lf_v3_sub(tau + 3 * b, t, tau + 3 * b);
                    }
                }
    if (U) *U = Usum;
    return LF_OK;
}

lf_potential *lf_potential_point_masses(int nb, const int *npoints, const double *s, const double *pm, double G,
                                        lf_error *err)
{
    if (nb < 2 || !npoints || !s || !pm) {
        lf_error_set(err, LF_EINVAL, "point_masses potential: %d bodies (expected 2 or more, with their points)", nb);
        return NULL;
    }
    if (!isfinite(G) || !(G > 0)) {
        lf_error_set(err, LF_EINVAL, "point_masses potential: G = %g, expected a finite positive number", G);
        return NULL;
    }
    long total = 0;
    for (int b = 0; b < nb; b++) {
        if (npoints[b] < 1) {
            lf_error_set(err, LF_EINVAL, "point_masses potential: body %d has %d points (expected 1 or more)", b + 1,
                         npoints[b]);
            return NULL;
        }
        total += npoints[b];
    }
    if (total > 1000000) {
        lf_error_set(err, LF_EINVAL, "point_masses potential: %ld points is too many", total);
        return NULL;
    }
    for (long i = 0; i < total; i++) {
        if (!isfinite(pm[i]) || !(pm[i] > 0)) {
            lf_error_set(err, LF_EINVAL, "point_masses potential: point %ld has the mass %g (expected > 0)", i + 1,
                         pm[i]);
            return NULL;
        }
        for (int k = 0; k < 3; k++)
            if (!isfinite(s[3 * i + k])) {
                lf_error_set(err, LF_EINVAL, "point_masses potential: point %ld is not finite", i + 1);
                return NULL;
            }
    }
    point_masses *q = calloc(1, sizeof *q);
    if (q) {
        q->first = malloc(((size_t)nb + 1) * sizeof *q->first);
        q->s = malloc(3 * (size_t)total * sizeof *q->s);
        q->m = malloc((size_t)total * sizeof *q->m);
    }
    if (!q || !q->first || !q->s || !q->m) {
        pm_free(q);
        lf_error_set(err, LF_ENOMEM, "point_masses potential: out of memory (%ld points)", total);
        return NULL;
    }
    q->nb = nb;
    q->ntotal = (int)total;
    q->G = G;
    q->first[0] = 0;
    for (int b = 0; b < nb; b++) q->first[b + 1] = q->first[b] + npoints[b];
    memcpy(q->s, s, 3 * (size_t)total * sizeof(double));
    memcpy(q->m, pm, (size_t)total * sizeof(double));
    points_buffer(3 * (size_t)total); /* grown here, so that steps in this thread allocate nothing */
    lf_potential *p = lf_potential_new_x("point_masses", pm_eval, q, pm_free, err);
    if (!p) pm_free(q);
    return p;
}
