/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the Langevin thermostat of rigid bodies (lf_stepper_opts.thermostat, method.h).
 *
 * The bodies feel, beside their potential (and forcing), a friction and a random force and torque:
 *   m dv = (F - gamma v) dt + sqrt(2 gamma kT) dW,     J_k dw_k = (... - gamma_rot w_k) dt + sqrt(2 gamma_rot kT) dW_k
 * (the torque and the noise in the body frame, independent per axis). Without the friction and the
 * noise this is the Hamiltonian flow; the friction and noise alone are Ornstein–Uhlenbeck processes
 * of v and w (R and x fixed) with the exact solution over tau
 *   w_k <- e^{-gamma_rot tau / J_k} w_k + sqrt(kT / J_k (1 - e^{-2 gamma_rot tau / J_k})) xi,
 *   v   <- e^{-gamma tau / m} v + sqrt(kT / m (1 - e^{-2 gamma tau / m})) xi,
 * which leaves the Gibbs density exp(-E/kT) invariant (equipartition: <1/2 m v_i^2> = <1/2 J_k w_k^2>
 * = kT/2). A thermostatted step is O(h/2) Phi_h O(h/2): the method's deterministic step between two
 * exact OU half steps (the "OBABO" arrangement of a symmetric splitting; Davidchack, Ouldridge &
 * Tretyakov, J. Chem. Phys. 142 (2015) 144114, build their rigid-body Langevin integrators from the
 * same two parts, a NO_SQUISH step and exactly integrated OU processes, and prove weak order 2 for
 * them). The noise of body b in half a of step n comes from Philox keyed by the seed at the counter
 * (n, b, a): a run, its checkpoints and restarts, its ensemble members and MPI ranks are bitwise
 * reproducible and independent of the number of workers. */
#include <math.h>
#include <stdio.h>

#include "base/philox.h"
#include "method/method_internal.h"

int lf_langevin_accepts(const lf_stepper *s, const lf_thermostat *th, lf_error *err)
{
    if (!(th->kT >= 0) || !isfinite(th->kT))
        return lf_error_set(err, LF_EINVAL, "thermostat: T = %g, expected a finite temperature >= 0 (kT, energy units)",
                            th->kT);
    if (!(th->gamma >= 0) || !isfinite(th->gamma))
        return lf_error_set(err, LF_EINVAL, "thermostat: gamma = %g, expected a finite friction >= 0", th->gamma);
    if (!(th->gamma_rot >= 0) || !isfinite(th->gamma_rot))
        return lf_error_set(err, LF_EINVAL, "thermostat: gamma_rot = %g, expected a finite friction >= 0",
                            th->gamma_rot);
    const lf_method_rigid_info *ri = lf_method_get_rigid_info(s->method);
    if (!s->rigid || s->method->info.form != LF_FORM_RIGID || !ri->forcing)
        return lf_error_set(err, LF_EINVAL,
                            "method %s does not take a thermostat: the rigid-body methods that take a forcing "
                            "do (vlv, lgvi, no_squish, dlm, split_exact and their compositions without a processor)",
                            s->method->info.name);
    if (s->method->cls->process)
        return lf_error_set(err, LF_EINVAL, "method %s is processed and does not take a thermostat",
                            s->method->info.name);
    if (s->lanes > 1) return lf_error_set(err, LF_EINVAL, "lanes do not take a thermostat: use an ensemble");
    if (s->opts.adapt) return lf_error_set(err, LF_EINVAL, "reversible adaptive steps do not take a thermostat");
    return LF_OK;
}

/* O(tau): the exact Ornstein–Uhlenbeck flow of every body's w and v over tau, noise of half `half` */
static void ou(lf_stepper *s, double tau, unsigned half)
{
    const lf_thermostat *th = &s->thermostat;
    double dT = 0; /* the kinetic energy the bath gives: the heat */
    const uint32_t key[2] = {(uint32_t)th->seed, (uint32_t)(th->seed >> 32)};
    for (int b = 0; b < s->nb; b++) {
        double z[8];
        for (uint32_t j = 0; j < 2; j++) {
            const uint32_t ctr[4] = {(uint32_t)s->noise_step, (uint32_t)(s->noise_step >> 32), (uint32_t)b,
                                     2 * half + j};
            lf_philox_normal4(ctr, key, z + 4 * j);
        }
        double *w = s->w + 3 * b;
        for (int k = 0; k < 3; k++) {
            const double J = s->J[3 * b + k], a = exp(-th->gamma_rot * tau / J), w0 = w[k];
            w[k] = a * w[k] + sqrt(th->kT / J * (1 - a * a)) * z[k];
            dT += 0.5 * J * (w[k] * w[k] - w0 * w0);
        }
        if (!s->trans) continue;
        const double m = s->rigid->mass[b], a = exp(-th->gamma * tau / m), sd = sqrt(th->kT / m * (1 - a * a));
        for (int k = 0; k < 3; k++) {
            double *v = s->v + 3 * b + k;
            const double v0 = *v;
            *v = a * v0 + sd * z[3 + k];
            dT += 0.5 * m * (*v * *v - v0 * v0);
        }
    }
    s->heat += dT;
    s->momenta_changed = 1; /* NO_SQUISH's cached conjugate momenta are stale (step_splitting.c) */
}

int lf_langevin_step(lf_stepper *s, double h)
{
    if (!(h > 0)) return lf_error_set(&s->err, LF_EINVAL, "a thermostatted run steps forward only (h = %g)", h);
    ou(s, 0.5 * h, 0);
    int rc = s->base_step(s, h);
    if (rc != LF_OK) return rc;
    ou(s, 0.5 * h, 1);
    if (!isfinite(s->heat))
        return lf_error_set(&s->err, LF_EDOMAIN,
                            "the thermostat's step made the kinetic energy overflow (heat %g): the velocities are "
                            "beyond the range of doubles",
                            s->heat);
    s->noise_step++;
    return LF_OK;
}
