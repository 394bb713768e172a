-- SPDX-License-Identifier: GPL-3.0-or-later
-- The symplecticity stress test of [BOS] (§3 and Appendix A) and [O] §4.2:
-- a rigid body (J = diag(2,2,4)) in the potential U = (dist(R,I) - 1)^2 - alpha/dist(R,Rm).
-- Energy error on [0, 10000] at h = 0.125 and 0.25 for eln, tln, liemid_ea, prk, mcg, new3 and vlv;
-- least-squares drift slopes with their signs beside the thesis's; the ratio slope(0.25)/slope(0.125)
-- (O(T h^2) drift predicts 4), and slope(0.125)/slope(0.0625); orders at T = 5 for h = 1 ... 2^-9; run times relative to eln.
-- Writes out/stress_test/summary.json and figures. `--quick`: shorter order table (for make test).
local lf = lf or require "lieflow"
local experiment = require "lieflow.experiment"
local study = experiment.start("stress_test", arg)
local quick, out, check = study.quick, study.out, study.check

local T = 10000
local methods = {"eln", "tln", "liemid_ea", "prk", "mcg", "new3", "vlv"}
-- the thesis' Figs. 4.1-4.3 (and [BOS] Figs. 1, 4): sign of the energy drift, 0 = bounded
local thesis_sign = {eln = -1, tln = -1, prk = -1, mcg = 1, new3 = 1, liemid_ea = 1, vlv = 0}

local body = lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7227, 0}, omega = {0, 0, 0.625},
                          potential = lf.potential.stress{alpha = 0.3}}

local results = {}

print(("Stress test ([BOS]): energy drift on [0, %d]"):format(T))
print(("%-10s %12s %12s %8s %8s %9s %9s %10s %8s"):format("method", "slope h=1/8", "slope h=1/4", "ratio",
  "ratio'", "verdict", "thesis", "statistic", "cpu s"))
local series = {[0.125] = {}, [0.25] = {}}
local tgrid = {}
for _, name in ipairs(methods) do
  local st = lf.stress_test(name, {h = {0.125, 0.25}, T = T, every = 40})
  -- the same scaling one halving further down: slope(1/8)/slope(1/16)
  local fine = lf.stress_test(name, {h = {0.0625, 0.125}, T = T, every = 80})
  local r = {method = name, ratio = st.ratio, exponent = st.exponent, runs = {},
             ratio_fine = fine.ratio, slope_h0625 = fine.runs[1].slope, verdict_h0625 = fine.runs[1].verdict}
  local cpu = 0
  for _, run in ipairs(st.runs) do
    r.runs[#r.runs + 1] = {h = run.h, slope = run.slope, verdict = run.verdict, statistic = run.statistic,
                           max_abs_energy_error = experiment.max_abs(run.traj.energy_error),
                           cpu_time = run.traj.cpu_time}
    cpu = cpu + run.traj.cpu_time
    series[run.h][#series[run.h] + 1] = {label = name, data = run.traj.energy_error}
    tgrid[run.h] = run.traj.t
  end
  r.cpu_time = cpu
  local s1, s2 = st.runs[1], st.runs[2]
  local sign = s1.verdict == "drift" and (s1.slope > 0 and 1 or -1) or 0
  r.sign, r.thesis_sign = sign, thesis_sign[name]
  local function ratio(x) return s1.verdict == "drift" and ("%.2f"):format(x) or "-" end
  print(("%-10s %12.3e %12.3e %8s %8s %9s %9s %10.1f %8.2f"):format(name, s1.slope, s2.slope, ratio(st.ratio),
    ratio(fine.ratio), s1.verdict, ({[-1] = "drift -", [1] = "drift +", [0] = "bounded"})[thesis_sign[name]],
    s1.statistic, cpu))
  check(sign == thesis_sign[name], ("%s: verdict/sign %d, thesis %d"):format(name, sign, thesis_sign[name]))
  check(s2.verdict == s1.verdict, ("%s: verdicts differ between h = 0.125 and 0.25"):format(name))
  check(fine.runs[1].verdict == s1.verdict, ("%s: verdict at h = 1/16 differs"):format(name))
  if sign ~= 0 then
    -- O(T h^2): ratios near 4. tln at h = 1/4 moves to another region of the well after t ~ 4000
    -- (its energy error bends, see energy_h0.25.png), so its 1/4 : 1/8 ratio is lower (2.5); the
    -- 1/8 : 1/16 ratio shows the h^2 law for every drifting method.
    check(st.ratio > 2 and st.ratio < 6, ("%s: slope ratio 1/4 : 1/8 = %.2f not near 4"):format(name, st.ratio))
    check(fine.ratio > 3 and fine.ratio < 5, ("%s: slope ratio 1/8 : 1/16 = %.2f not near 4"):format(name, fine.ratio))
  end
  results[#results + 1] = r
end
local eln_cpu = results[1].cpu_time
for _, r in ipairs(results) do r.time_relative_to_eln = r.cpu_time / eln_cpu end

for _, h in ipairs{0.125, 0.25} do
  lf.plot{x = tgrid[h], y = series[h], title = ("Energy error, stress test, h = %g"):format(h),
          xlabel = "t", ylabel = "E - E(0)", file = ("%s/energy_h%g.png"):format(out, h)}
end

-- orders at T = 5 ([BOS] Figs. 3, 5; thesis Fig. 4.3)
local steps = {}
for k = 0, quick and 6 or 9 do steps[#steps + 1] = 2 ^ -k end
local ref = lf.reference(body, 5, {rtol = 1e-13, atol = 1e-13})
print(("\nOrders at T = 5, h = 1 ... 2^-%d (least-squares slope over h <= 1/8)"):format(#steps - 1))
print(("%-10s %8s %8s %14s %8s"):format("method", "order R", "order w", "err R (min h)", "time/eln"))
local errR, errW = {}, {}
for i, name in ipairs(methods) do
  -- fit on h <= 1/8: at h = 1 ... 1/4 the error is O(1) (h|w| ~ 1) and outside the asymptotic range
  local fit_steps = {}
  for _, h in ipairs(steps) do if h <= 0.125 then fit_steps[#fit_steps + 1] = h end end
  local o = lf.order{system = body, method = name, T = 5, steps = steps, reference = ref}
  local of = lf.order{system = body, method = name, T = 5, steps = fit_steps, reference = ref}
  results[i].order_R, results[i].order_omega = of.order_R, of.order_omega
  results[i].order_table = o.table
  errR[#errR + 1] = {label = name, data = {}}
  errW[#errW + 1] = {label = name, data = {}}
  for k, row in ipairs(o.table) do errR[#errR].data[k], errW[#errW].data[k] = row.err_R, row.err_omega end
  print(("%-10s %8.3f %8.3f %14.3e %8.2f"):format(name, of.order_R, of.order_omega,
    o.table[#o.table].err_R, results[i].time_relative_to_eln))
  check(math.abs(of.order_R - 2) <= 0.15 and math.abs(of.order_omega - 2) <= 0.15,
    ("%s: fitted order %.3f / %.3f not within 0.15 of 2"):format(name, of.order_R, of.order_omega))
end
lf.plot{x = steps, y = errR, logx = true, logy = true, style = "linespoints", slopes = {{order = 2, label = "h^2"}},
        title = "Global error in R at T = 5 (stress test)", xlabel = "h", ylabel = "||R - R_ref||_F",
        file = out .. "/order_R.png"}
lf.plot{x = steps, y = errW, logx = true, logy = true, style = "linespoints", slopes = {{order = 2, label = "h^2"}},
        title = "Global error in w at T = 5 (stress test)", xlabel = "h", ylabel = "|w - w_ref|",
        file = out .. "/order_w.png"}

-- ------------------------------------------------------------------ the view: eln beside vlv after a long run
-- The last 60 time units of a run to T (quick: 1000) at h = 1/8, every sample (480 frames), and the
-- energy error of the whole run under each; out/stress_test/view.html, view.gltf.
local Tv = quick and 1000 or T
local view_runs = {}
for i, name in ipairs{"eln", "vlv"} do view_runs[i] = lf.run(body, {method = name, h = 0.125, T = Tv, states = true}) end
local view_summary
do
  local st = {summary = {}, out = out}
  experiment.view(st, view_runs, {t0 = Tv - 60, t1 = Tv, trace = {0.7, 0, 0},
    title = ("Stress test: eln beside vlv, t = %g ... %g (h = 1/8)"):format(Tv - 60, Tv)})
  view_summary = st.summary.view
end

-- its own summary.json layout (no differences; failures as they are: an empty list is written as {})
lf.write_json(out .. "/summary.json", {
  experiment = "stress_test", papers = {"[BOS] §3, App. A", "[O] §4.2"},
  parameters = {J = {2, 2, 4}, alpha = 0.3, v_m = {2.5 / math.sqrt(2), 0, 2.5 / math.sqrt(2)},
                v0 = {0, 0.7227, 0}, omega0 = {0, 0, 0.625}, T = T, h = {0.125, 0.25}, order_T = 5,
                order_steps = steps, quick = quick},
  drift_rule = lf.drift_rule, methods = results, failures = study.failures, view = view_summary})
experiment.report(study, {files = "Figures and summary.json", failure = "stress test does not reproduce the papers", reproduced = {
  "All verdicts agree with the papers: eln, tln, prk drift down, mcg, new3, liemid_ea drift up, vlv is bounded."}})
