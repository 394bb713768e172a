/* lieflow — rigid-body systems: construction, energy, momentum, state checks. */
#include "system.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linalg.h"
#include "so3.h"

lf_system *lf_system_new(int nb, const double *J, const lf_potential *pot, lf_error *err)
{
    if (nb < 1) {
        lf_error_set(err, LF_EINVAL, "number of bodies must be >= 1, got %d", nb);
        return NULL;
    }
    for (int i = 0; i < 3 * nb; i++)
        if (!isfinite(J[i]) || !(J[i] > 0)) {
            lf_error_set(err, LF_EINVAL, "inertia of body %d: moment %d = %g, expected a finite positive number",
                         i / 3 + 1, i % 3 + 1, J[i]);
            return NULL;
        }
    lf_system *s = calloc(1, sizeof *s);
    double *Jc = malloc(3 * (size_t)nb * sizeof(double));
    if (!s || !Jc) {
        free(s); free(Jc);
        lf_error_set(err, LF_ENOMEM, "out of memory");
        return NULL;
    }
    memcpy(Jc, J, 3 * (size_t)nb * sizeof(double));
    s->nb = nb;
    s->J = Jc;
    if (pot) s->pot = *pot;
    else lf_potential_free_body(&s->pot);
    return s;
}

void lf_system_free(lf_system *sys)
{
    if (!sys) return;
    free(sys->J);
    free(sys);
}

int lf_system_potential(const lf_system *sys, const double *R, double *U, double *tau, lf_error *err)
{
    const lf_potential *p = &sys->pot;
    if (!p->eval) {
        if (U) *U = 0;
        if (tau) memset(tau, 0, 3 * (size_t)sys->nb * sizeof(double));
        return LF_OK;
    }
    int rc = p->eval(p, sys->nb, R, U, tau, err);
    if (rc != LF_OK) return rc;
    if (U && !isfinite(*U)) return lf_error_set(err, LF_EDOMAIN, "potential %s is not finite (U=%g)", p->name, *U);
    if (tau)
        for (int i = 0; i < 3 * sys->nb; i++)
            if (!isfinite(tau[i]))
                return lf_error_set(err, LF_EDOMAIN, "torque of potential %s on body %d is not finite (%g)", p->name,
                                    i / 3 + 1, tau[i]);
    return LF_OK;
}

double lf_system_kinetic(const lf_system *sys, const double *w)
{
    double T = 0;
    for (int i = 0; i < 3 * sys->nb; i++) T += 0.5 * sys->J[i] * w[i] * w[i];
    return T;
}

int lf_system_energy(const lf_system *sys, const double *R, const double *w, double *E, lf_error *err)
{
    double U;
    int rc = lf_system_potential(sys, R, &U, NULL, err);
    if (rc != LF_OK) return rc;
    *E = lf_system_kinetic(sys, w) + U;
    return LF_OK;
}

void lf_system_spatial_momentum(const lf_system *sys, const double *R, const double *w, double pi[3])
{
    pi[0] = pi[1] = pi[2] = 0;
    for (int i = 0; i < sys->nb; i++) {
        double Pi[3], p[3];
        lf_v3_mul(sys->J + 3 * i, w + 3 * i, Pi);
        lf_m3_apply(R + 9 * i, Pi, p);
        lf_v3_add(pi, p, pi);
    }
}

int lf_system_check_state(const lf_system *sys, const double *R, const double *w, double tol, lf_error *err)
{
    for (int i = 0; i < sys->nb; i++) {
        char what[32];
        snprintf(what, sizeof what, sys->nb == 1 ? "R" : "R[%d]", i + 1);
        int rc = lf_so3_check(R + 9 * i, tol, what, err);
        if (rc != LF_OK) return rc;
        if (!lf_v3_isfinite(w + 3 * i))
            return lf_error_set(err, LF_EINVAL, "angular velocity of body %d is not finite: (%g, %g, %g)", i + 1,
                                w[3 * i], w[3 * i + 1], w[3 * i + 2]);
    }
    return LF_OK;
}
