-- SPDX-License-Identifier: GPL-3.0-or-later
-- The 4 x 4 array of magnetic needles of Ortolan's thesis §7.2.3 (Figs. 7.7-7.9, Table 7.3) with the
-- Lee–Leok–McClamroch parameters: needles of mass m = 0.05 kg and length l = 0.02 m pinned at their
-- middles (M = diag(m l^2/12)), moment 0.1 A m^2, grid edge 1.2 l = 0.024 m, pair potential
-- (mu0/4pi) nu^2 / |r|^3 [q_i.q_j - 3 (q_i.e)(q_j.e)] (lf.spheres.dipoles, O(n^2) pair sum in C).
-- Initial data: q_i = e1 and omega_i = 0 except q16 = (0.353508623948073, 0.353608626387662,
-- -0.866021126843087) and omega1 = (0, 0.5, 0) (printed next to q16; it belongs to dipole 1: omega1 is
-- orthogonal to q1 = e1, and would not be to q16). The pivot layout is not given in the thesis: ours
-- is the plane z = 0, row-major, x fastest, dipole 1 at the origin and 16 at (3s, 3s, 0).
--  * energy error, ||q|| - 1, q . omega over T = 200 at h = 0.01 (the thesis does not state T and h for
--    this example; those of the pendulums) for ELN, RKMK4, RKMKGL4, RATTLE (Figs. 7.7, 7.8);
--  * global errors at T = 1 for h = 2^-2 ... 2^-9 against rk8pd, orders fitted on the thesis's 2^-4 ... 2^-9
--    (Fig. 7.9);
--  * run times beside the thesis's MATLAB times (Table 7.3).
-- Writes out/dipoles/summary.json and figures. `--quick`: the run times over T = 50 instead of T = 200.
local lf = lf or require "lieflow"
local experiment = require "lieflow.experiment"
local S = require "lieflow.spheres_study"
local study = experiment.start("dipoles", arg)
local quick, out, summary, check = study.quick, study.out, study.summary, study.check
local diff = function(s) study.differences[#study.differences + 1] = s end

local rows, cols, m, l, moment = 4, 4, 0.05, 0.02, 0.1
local spacing = 1.2 * l
local q0, omega0 = {}, {}
for i = 1, rows * cols do q0[i], omega0[i] = {1, 0, 0}, {0, 0, 0} end
q0[16] = {0.353508623948073, 0.353608626387662, -0.866021126843087}
omega0[1] = {0, 0.5, 0}
local sys = lf.spheres.dipoles{rows = rows, cols = cols, spacing = spacing, m = m, l = l, moment = moment, q = q0,
                               omega = omega0}
local E0 = sys:energy()
print(("Array of %d x %d magnetic needles (Ortolan's thesis §7.2.3, Lee-Leok-McClamroch): m = %g kg, l = %g m, M_i = m l^2/12 = %.5g,"):format(
  rows, cols, m, l, sys.M[1][1]))
print(("moment %g A m^2, kappa = (mu0/4pi) moment^2 = %g J m^3, grid edge %g m; E0 = %.10e J"):format(moment, 1e-7 * moment ^ 2,
  spacing, E0))

-- ------------------------------------------------------------------ Figs. 7.7, 7.8: T = 200, h = 0.01
local T, h = 200, 0.01
local runs, records = S.long_runs(sys, {h = h, T = T, every = 5, out = out, title = "4 x 4 magnetic needles", lk = true})
local eln, rk4, gl4, rat = runs.eln_spatial, runs.rkmk4, runs.rkmk_gl4, runs.rattle
S.check_long_runs(runs, check, {"eln_spatial", "rattle"})
check(eln.max_qdotw <= 1e-12 and gl4.max_qdotw >= 1e3 * eln.max_qdotw and rk4.max_qdotw >= 1e3 * eln.max_qdotw,
  "thesis: ELN's error on the orthogonality q . omega is much smaller than RKMK4's and RKMKGL4's")
local lk_min = math.min(eln.max_dLk, rk4.max_dLk, gl4.max_dLk, rat.max_dLk)
print(("L_k (not a first integral here: the fixed pivots break the rotation symmetry): max |dL_k| ELN %.1e, RKMK4 %.1e, RKMKGL4 %.1e, RATTLE %.1e"):format(
  eln.max_dLk, rk4.max_dLk, gl4.max_dLk, rat.max_dLk))
check(lk_min > 1e-8, "L_k should change for every method (no symmetry), even for RATTLE")
diff(("The thesis shows no angular momentum for the needles: L_k is not conserved (fixed pivots), every method changes it by "
  .. "%.1e ... %.1e, RATTLE included"):format(lk_min, math.max(eln.max_dLk, rk4.max_dLk, gl4.max_dLk, rat.max_dLk)))

-- ------------------------------------------------------------------ Fig. 7.9: orders at T = 1
local res, ref_acc, trunc = S.orders(sys, {T = 1, kmin = 2, fit_kmin = 4, kmax = 9, out = out, title = "4 x 4 magnetic needles",
                                        check = check})
local facts = S.accuracy_orderings(res, check, 2 ^ -4)
local failed = S.failures(res)
if failed then
  diff(("Steps that fail within [0, 1]: %s. RATTLE has no real position multiplier at h = 2^-4 (the needles reach "
    .. "|v| ~ 15 rad/s: |a x q| > 1), so its order is fitted on 2^-5 ... 2^-9"):format(failed))
end

-- ------------------------------------------------------------------ Table 7.3: run times
local tim = S.timings(sys, "dipoles", {h = h, T = quick and 50 or T, reps = 3})
S.check_rkmk_gl4_slowest(tim, check)
-- The reason, counted (machine-independent): ELN evaluates the pair sum once per step, RATTLE twice.
check(eln.f_evals_per_step < rat.f_evals_per_step, ("ELN evaluates the forces %.2f times per step, RATTLE %.2f"):format(
  eln.f_evals_per_step, rat.f_evals_per_step))
check(tim.eln_spatial.cpu < tim.rattle.cpu, "thesis: ELN faster than RATTLE")
diff(("Table 7.3 ratios to ELN: lieflow RKMK4 %.2f, RKMKGL4 %.1f, RATTLE %.2f vs MATLAB 2.44, 15.04, 1.05 (the orderings hold: "
  .. "ELN fastest, RKMKGL4 slowest). ELN evaluates the O(n^2) pair sum once per step (alpha cached), RKMK4 four times, "
  .. "RKMKGL4 %.1f times (fixed point, %.1f iterations), RATTLE twice"):format(tim.rkmk4.ratio, tim.rkmk_gl4.ratio,
  tim.rattle.ratio, gl4.f_evals_per_step, gl4.newton_per_step))
diff("Table 7.3's caption says 'double spherical pendulum'; it is the array of needles")
diff("The thesis does not give T and h for Figs. 7.7-7.8 and Table 7.3, nor the pivot layout: T = 200, h = 0.01 as for the "
  .. "pendulums; pivots in the plane z = 0, row-major with x fastest (the dynamics depend on this choice)")
diff("Equation (7.8) prints mu0 = 4 pi 1^-7 and mu0/(nu_i nu_j) 4 pi |r|^3; read mu0 = 4 pi 1e-7 N/A^2 and "
  .. "mu0 nu_i nu_j / (4 pi |r_ij|^3)")

summary.seed = "Ortolan's thesis §7.2.3, Figs. 7.7-7.9, Table 7.3"
summary.parameters = {rows = rows, cols = cols, m = m, l = l, moment = moment, spacing = spacing, M_i = sys.M[1][1],
                      kappa = 1e-7 * moment ^ 2, q0 = q0, omega0 = omega0, E0 = E0, T = T, h = h, order_T = 1,
                      order_steps = "2^-2 ... 2^-9, fitted on 2^-4 ... 2^-9", pivots = "z = 0, r_i = spacing ((i-1) mod cols, floor((i-1)/cols), 0)",
                      quick = quick, rkmk_gl4_solver = "fixed_point (thesis §7.1.2)",
                      reference = "GSL rk8pd, rtol = atol = 1e-14"}
-- the view: the 4 x 4 needles under ELN, T = 200 at h = 0.01 (2000 of the 20001 samples)
do
  local v = lf.run(sys, {method = "eln_spatial", h = h, T = T, states = true})
  experiment.view(study, {v}, {titles = {"ELN (eln_spatial), h = 0.01"}, title = "4 x 4 magnetic needles (ELN), t = 0 ... 200"})
end
summary.long_runs = records
summary.orders = res
summary.reference_accuracy = ref_acc
summary.truncated_dexpinv = trunc
summary.accuracy = facts
summary.run_times = tim
experiment.finish(study, {files = "Figures and summary.json", failure = "the array of needles does not reproduce the thesis",
  reproduced = {
    "Reproduced: ELN and RATTLE energy errors bounded, RKMK4 and RKMKGL4 drift; |q| = 1 to round-off; ELN keeps q.omega;",
    "orders 2, 4, 4, 2; RKMKGL4 most accurate, RATTLE least; ELN fastest, RKMKGL4 slowest."}})
