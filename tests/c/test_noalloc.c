/* SPDX-License-Identifier: GPL-3.0-or-later */
/* No heap allocation inside a step: malloc/calloc/realloc are wrapped (-Wl,--wrap, see the Makefile)
 * and counted while every method takes 1000 steps with a built-in C potential (methods for spheres:
 * on the built-in rigid body on S^2; the discrete-gradient methods also on the T*GL(3) and S^3
 * built-ins). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "problems.h"

static long allocations;
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n) { allocations++; return __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { allocations++; return __real_calloc(n, m); }
void *__wrap_realloc(void *p, size_t n) { allocations++; return __real_realloc(p, n); }

static void test_steps_do_not_allocate(void **state)
{
    (void)state;
    for (int i = 0; i < lf_method_count(); i++) {
        const lf_method *m = lf_method_at(i);
        const lf_method_info *mi = lf_method_get_info(m);
        if (mi->form == LF_FORM_CONSTRAINED) continue; /* rattle: on the sphere systems below */
        problem p = lf_method_get_rigid_info(m)->free_body_only ? problem_free_body() : problem_stress();
        lf_error e;
        double y0[12];
        lf_system *sys = problem_system(&p, y0, &e);
        if (lf_method_accepts(m, sys, NULL) != LF_OK) { /* a method for spheres: the rigid body on S^2 */
            lf_system_free(sys);
            lf_factor_kind k = LF_S2;
            lf_manifold *M = lf_manifold_new(1, &k, NULL, LF_RIGHT_TRIVIALIZED, &e);
            double I[3] = {1, 2, 2.5};
            y0[0] = cos(1.1), y0[1] = 0, y0[2] = sin(1.1);
            sys = lf_lie_ode_builtin("rigid_body_s2", M, y0, I, &e);
            lf_manifold_free(M);
        }
        lf_stepper *st = lf_stepper_new(m, sys, y0, 0, NULL, &e);
        assert_non_null(st);
        long before = allocations;
        assert_int_equal(lf_stepper_step(st, 0.125, 1000), LF_OK);
        long during = allocations - before;
        printf("  %-18s allocations in 1000 steps: %ld\n", mi->name, during);
        assert_int_equal(during, 0);
        lf_stepper_free(st);
        lf_system_free(sys);
        problem_free(&p);
    }
    /* bodies that translate: one in the central field (a class of positions), two of point masses */
    {
        lf_error e;
        const double J[6] = {0.05, 0.08, 0.11, 0.5, 0.5, 0.02}, m[2] = {1, 1.2},
                     s[12] = {0, 0, 0.5, 0, 0, -0.5, 0, 0, 0.5, 0, 0, -0.5};
        const double pm[4] = {0.5, 0.5, 0.6, 0.6};
        const int np[2] = {2, 2};
        lf_potential *pots[2] = {lf_potential_central(1, NULL, &e), lf_potential_point_masses(2, np, s, pm, 1, &e)};
        double y[2][36] = {{1, 0, 0, 0, 1, 0, 0, 0, 1, 0.3, -0.2, 1, 1, 0, 0, 0, 1.05, 0.05},
                           {1,  0,   0, 0, 1,    0,   0,    0,      1,    1,     0,     0,
                            0,  1,   0, 0, 0,    1,   0.3,  -0.4,   1,    -0.2,  0.5,   0.8,
                            -1, 0.1, 0, 1, -0.1, 0.2, 0.02, -0.573, 0.05, -0.01, 0.477, -0.04}};
        for (int k = 0; k < 2; k++) {
            lf_system *sys = lf_rigid_new_translating(k + 1, J, m, pots[k], &e);
            assert_non_null(sys);
            for (int i = 0; i < lf_method_count(); i++) {
                const lf_method *meth = lf_method_at(i);
                if (lf_method_accepts(meth, sys, NULL) != LF_OK || lf_method_get_info(meth)->adaptive) continue;
                lf_stepper *st = lf_stepper_new(meth, sys, y[k], 0, NULL, &e);
                assert_non_null(st);
                long before = allocations;
                assert_int_equal(lf_stepper_step(st, 0.01, 300), LF_OK);
                long during = allocations - before;
                if (during)
                    printf("  %-18s %s: allocations in 300 steps: %ld\n", lf_method_get_info(meth)->name,
                           k ? "two dumbbells" : "central field", during);
                assert_int_equal(during, 0);
                lf_stepper_free(st);
            }
            printf("  translating bodies (%s): no allocation in 300 steps of any method that accepts them\n",
                   k ? "two dumbbells of point masses" : "central field");
            lf_system_free(sys);
            lf_potential_free(pots[k]);
        }
    }
    /* systems on spheres: the double pendulum (coupled M: Newton in eln_spatial and rattle, scratch of
     * the generic f on the stack) and a 3x3 array of needles (diagonal M, the O(n^2) pair sum) */
    {
        lf_error e;
        const double up[3] = {0, 0, -1}, qd[6] = {0.6, 0, 0.8, 0, 0, -1}, wd[6] = {0, 1, 0, 0.5, 0, 0};
        double qa[27], wa[27] = {0};
        for (int i = 0; i < 9; i++) {
            qa[3 * i] = 1;
            qa[3 * i + 1] = qa[3 * i + 2] = 0;
        }
        wa[1] = 0.5;
        lf_system *sph[2] = {lf_spheres_double_pendulum(2, 1, 1, 1, 9.81, up, qd, wd, &e),
                             lf_spheres_dipoles(3, 3, 0.024, 0.05, 0.02, 0.1, qa, wa, &e)};
        const char *meth[6] = {"eln_spatial", "rattle", "rkmk4", "rkmk_gl4", "rkmk_gl6", "cf4"};
        /* the needles with the fixed point and with Newton (108 unknowns for rkmk_gl4: the block
         * Jacobian by sphere) */
        for (int c = 0; c < 3; c++)
            for (int j = 0; j < 6; j++) {
                const int k = c > 0;
                assert_non_null(sph[k]);
                lf_stepper_opts o = {.solver = c == 1 ? LF_SOLVER_FIXED_POINT : LF_SOLVER_NEWTON};
                lf_stepper *st = lf_stepper_new(lf_method_find(meth[j]), sph[k], lf_system_initial(sph[k]), 0, &o, &e);
                assert_non_null(st);
                long before = allocations;
                assert_int_equal(lf_stepper_step(st, 0.01, 1000), LF_OK);
                long during = allocations - before;
                printf("  %-18s %-15s %-12s allocations in 1000 steps: %ld\n", meth[j],
                       k ? "dipoles 3x3" : "double pendulum", c == 1 ? "fixed point" : "newton", during);
                assert_int_equal(during, 0);
                lf_stepper_free(st);
            }
        lf_system_free(sph[0]);
        lf_system_free(sph[1]);
    }
    /* the discrete-gradient methods on the pseudo-rigid body (T*GL(3)) and the quaternion attitude */
    for (int i = 0; i < lf_method_count(); i++) {
        const lf_method *m = lf_method_at(i);
        if (lf_method_get_info(m)->form != LF_FORM_FIRST_INTEGRAL) continue;
        lf_error e;
        lf_factor_kind k[2] = {LF_TGL3, LF_S3};
        double yc[18] = {1.05, 0.1, 0, -0.1, 0.97, 0.05, 0, 0, 1, 0.1, 0.3, 0, 0, 0.05, -0.2, 0.1, 0, 0.2};
        double q[4] = {0.8, 0.2, -0.4, 0.4}, pc[5] = {1, 0.8, 0.6, 2, 2}, pb[6] = {1, 2, 2.5, 0.3, -0.5, 0.8};
        const char *names[2] = {"pseudo_rigid_svk", "free_rigid_quat"};
        const double *y0s[2] = {yc, q}, *ps[2] = {pc, pb};
        for (int j = 0; j < 2; j++) {
            lf_manifold *M = lf_manifold_new(1, &k[j], NULL, LF_RIGHT_TRIVIALIZED, &e);
            lf_system *sys = lf_lie_ode_builtin(names[j], M, y0s[j], ps[j], &e);
            lf_manifold_free(M);
            assert_non_null(sys);
            lf_stepper *st = lf_stepper_new(m, sys, y0s[j], 0, NULL, &e);
            if (!st) { /* the methods for spheres */
                lf_system_free(sys);
                continue;
            }
            long before = allocations;
            assert_int_equal(lf_stepper_step(st, 0.02, 200), LF_OK);
            long during = allocations - before;
            printf("  %-18s allocations in 200 steps on %s: %ld\n", lf_method_get_info(m)->name, names[j], during);
            assert_int_equal(during, 0);
            lf_stepper_free(st);
            lf_system_free(sys);
        }
    }
    /* the wrapper itself works: creating a system allocates */
    long before = allocations;
    problem p = problem_stress();
    lf_system *sys = lf_rigid_new(1, p.J, p.pot, NULL);
    assert_true(allocations > before);
    lf_system_free(sys);
    problem_free(&p);
}

/* reversible adaptive steps (adapt.c): every symmetric fixed-step rigid method, 1000 steps of the
 * Coulomb wall with the torque monitor, and advance_to (its last, shortened step) */
static void test_adaptive_steps_do_not_allocate(void **state)
{
    (void)state;
    for (int i = 0; i < lf_method_count(); i++) {
        const lf_method *m = lf_method_at(i);
        const lf_method_info *mi = lf_method_get_info(m);
        if (mi->form != LF_FORM_RIGID || !mi->symmetric || lf_method_get_rigid_info(m)->free_body_only) continue;
        const lf_compose_scheme *sc = lf_compose_scheme_of(m);
        if (sc && sc->np > 0) continue; /* processed: no adaptive steps (refused; test_compose.c) */
        problem p = problem_coulomb_wall();
        lf_error e;
        double y0[12];
        lf_system *sys = problem_system(&p, y0, &e);
        lf_stepper_opts o = {.adapt = 1};
        lf_stepper *st = lf_stepper_new(m, sys, y0, 0, &o, &e);
        assert_non_null(st);
        long before = allocations;
        assert_int_equal(lf_stepper_step(st, 0.05, 1000), LF_OK);
        assert_int_equal(lf_stepper_advance_to(st, lf_stepper_time(st) + 1.234, 0.05), LF_OK);
        long during = allocations - before;
        printf("  %-18s allocations in 1000 adaptive steps: %ld\n", mi->name, during);
        assert_int_equal(during, 0);
        lf_stepper_free(st);
        lf_system_free(sys);
        problem_free(&p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_steps_do_not_allocate),
                                       cmocka_unit_test(test_adaptive_steps_do_not_allocate)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
