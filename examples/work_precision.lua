-- SPDX-License-Identifier: GPL-3.0-or-later
-- Work against precision: which integrator to pick for a given accuracy (issue "beyond the papers").
-- Four problems: the [BOS] stress test, the slow and the fast Lagrangian top ([K] §3.3, §3.5)
-- and the McLachlan–Zanna free body ([K] §2.2); and a fifth, the body in a Coulomb potential
-- with a soft wall ([K] §3.7: triaxial, mostly free between short steep contacts), which shows
-- where a fixed step loses to rk8pd's adaptive one. Two accuracies:
--   global error at T = 10: max(||R - R_ref||_F, |w - w_ref|/|w_ref|) against rk8pd at 1e-14 (the
--     free body: against the exact flow lf.exact.free_body);
--   energy error over T = 1e4: max |E - E(0)| over every step (checked in a separate run).
-- Against the run time of the integration loop in C: the CPU time of the thread (the wall time on an
-- idle core; this project's machine is shared, and its wall clock also counts the time other
-- processes hold the core), median of 3 runs; the wall-clock medians are in summary.json too
-- (lf.workprec, lf.core.timed_run, lf.core.baseline).
-- Methods: every registered rigid-body method (the paper methods, no_squish, dlm, split_exact and the
-- registered compositions), twelve more compositions made with lf.compose (three processed ones
-- among them), reversible adaptive runs, and what users run
-- otherwise (core/solve/baseline.h): GSL rk8pd and a classical RK4 loop on the embedded equations
-- (R as 9 numbers, w) with and without renormalization of R after each step, and a quaternion + RK4
-- loop with renormalization. Step sizes h = T/N, N growing by 2^(1/4) from T/h0 until a run takes
-- longer than the budget or reaches the error floor; rk8pd's tolerance from 1e-3 down by 10^(1/4).
-- Methods that conserve a problem's energy by construction (every run's energy error below
-- 1e-11 max(1, |E0|): tln and akw on the tops, whose potential is linear in R; prk, akw, lgvi on the
-- free body; split_exact there too, being exact) are listed apart: for them the energy error says
-- nothing about accuracy, and they are left out of the energy winners.
-- For each problem, accuracy and target (1e-2 ... 1e-10) the fastest method, the fastest
-- non-geometric one and the speed ratio; for the stress test's energy error (the comparison of the
-- issue) the winner, the best rk8pd and the best quaternion RK4 runs are then timed again, 5 times
-- interleaved, with the next two lieflow candidates, and the median ratios are the numbers quoted in
-- docs/work_precision.md.
-- Also: bounded energy (lf.stress_test at T = 1e4) for every method beyond the papers.
-- Writes out/work_precision/summary.json, wp_<problem>_<accuracy>.png (+ .dat, .gp).
-- `--quick`: short times, few methods, one repetition (for make test; no timing claims).
local lf = lf or require "lieflow"
local experiment = require "lieflow.experiment"
local wp = require "lieflow.workprec"
local study = experiment.start("work_precision", arg)
local quick, out, check, summary = study.quick, study.out, study.check, study.summary

local T_global, T_energy = quick and 2 or 10, quick and 50 or 10000
local budget, reps = quick and 0.01 or 0.2, quick and 1 or 3
local targets = {1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10}

local problems = {
  {name = "stress", title = "stress test ([BOS])", system = lf.stress_system(), h0 = 1},
  {name = "slow_top", title = "slow top ([K] §3.3)", h0 = 0.5,
   system = lf.rigidbody{inertia = {5, 5, 1}, R = lf.so3.exp{0.05, 0, 0}, omega = {0, 0, 5}, potential = lf.potential.top{}}},
  -- the fast top over T = 1e4 is 8e4 revolutions: the non-geometric solvers get 1.5 s per run. The
  -- sweeps start at h = 0.25 (h|w| = 12.5): the splittings with the exact free flow take the spin
  -- exactly and converge from there; the others fail or are O(1) off until h|w| < 1.
  {name = "fast_top", title = "fast top ([K] §3.5)", h0 = 0.25, energy_budget = quick and 0.01 or 1.5,
   system = lf.rigidbody{inertia = {5, 5, 1}, R = lf.so3.exp{0.3, 0, 0}, omega = {0, 0, 50}, potential = lf.potential.top{}}},
  {name = "free_body", title = "free body (McLachlan-Zanna, [K] §2.2)", h0 = 10, free = true,
   system = lf.rigidbody{inertia = {0.9144, 1.098, 1.66}, R = lf.so3.I, omega = {0.45549, 0.82623, 0.03476},
                         potential = lf.potential.free()}},
  {name = "coulomb_wall", title = "Coulomb potential with a soft wall ([K] §3.7)", h0 = 1,
   system = lf.rigidbody{inertia = {2, 3, 4.5}, R = lf.so3.I, omega = {1, 2 / 3, 2 / 4.5},
                         potential = lf.potential.coulomb_wall()}},
}

-- the contestants
local curves_spec = {}
local quick_methods = {vlv = true, split_exact = true, split_exact_s4 = true, split_exact_s6 = true, dlm_s4 = true}
for _, m in ipairs(lf.methods()) do
  if m.form == "rigid" and (not quick or quick_methods[m.name]) then
    curves_spec[#curves_spec + 1] = {label = m.name, method = m.name, geometric = true, free_body_only = m.free_body_only}
  end
end
local extra = quick and {{"split_exact", "kahan_li8"}} or
  {{"split_exact", "kahan_li8"}, {"dlm", "kahan_li8"}, {"no_squish", "blanes_moan4"}, {"vlv", "suzuki4"},
   {"vlv", "kahan_li6"}, {"lgvi", "suzuki4"}, {"dlm", "blanes_moan6"}, {"split_exact", "rkn6a"},
   {"dlm", "mclachlan8"}, {"split_exact", "processed6"}, {"split_exact", "processed8"}, {"split_exact", "rkn6p"}}
for _, c in ipairs(extra) do
  local m = lf.compose(c[1], c[2])
  curves_spec[#curves_spec + 1] = {label = m.name, method = m, geometric = true}
end
-- reversible adaptive steps (lf.integrator's option adapt; h: the step at the start)
for _, name in ipairs(quick and {"dlm_s4"} or {"dlm_s4", "split_exact_s4", "split_exact_s6"}) do
  curves_spec[#curves_spec + 1] = {label = name .. "+adapt", method = name, adapt = true, geometric = true}
end
local baselines = {
  {label = "rk8pd", solver = "rk8pd", renormalize = false},
  {label = "rk8pd+renorm", solver = "rk8pd", renormalize = true},
  {label = "rk4", solver = "rk4", renormalize = false},
  {label = "rk4+renorm", solver = "rk4", renormalize = true},
  {label = "quat_rk4+renorm", solver = "quat_rk4", renormalize = true},
}
for _, b in ipairs(baselines) do b.geometric = false; curves_spec[#curves_spec + 1] = b end

local cpu = experiment.cpu_name()
local loadavg = experiment.load_average
summary.parameters = {T_global = T_global, T_energy = T_energy, budget_seconds = budget, repetitions = reps,
                      targets = targets, cpu = cpu, load_average_start = loadavg(), quick = quick,
                      error_global = "max(||R - R_ref||_F, |w - w_ref|/|w_ref|) at T_global",
                      error_energy = "max |E - E(0)| over every step of [0, T_energy]",
                      timing = "CPU time of the thread over the C integration loop (CLOCK_THREAD_CPUTIME_ID), " ..
                               "median of the repetitions; wall_seconds: median wall time",
                      machine = "shared with other jobs (2 cores); see the load averages"}
print(("Work-precision on %s, shared (load average %s); budget %.2g s per run, %d repetition(s);"):format(cpu,
  loadavg(), budget, reps))
print("times: CPU seconds of the integration loop (the wall time on an idle core)")

local function fmt_param(c, p)
  if c.solver == "rk8pd" then return ("tol=%.0e"):format(p.param) end
  return ("h=%.3g"):format(p.param)
end

local function run_problem(pb)
  local res = {title = pb.title, measures = {}}
  local ref
  if pb.free then
    local w, R = lf.exact.free_body({0.9144, 1.098, 1.66}, {0.45549, 0.82623, 0.03476}, T_global)
    ref = {R = R, omega = w}
  else
    ref = lf.reference(pb.system, T_global, {rtol = 1e-14, atol = 1e-14})
  end
  for _, mode in ipairs{"global", "energy"} do
    local T = mode == "global" and T_global or T_energy
    local curves = {}
    io.stderr:write(("%s, %s error: "):format(pb.name, mode))
    for _, c in ipairs(curves_spec) do
      if not c.free_body_only or pb.free then
        -- the longer budget of a problem is for the non-geometric solvers (the ones that need it)
        local b = (mode == "energy" and not c.geometric and pb.energy_budget) or budget
        local pts = wp.sweep(pb.system, c, {T = T, mode = mode, reference = ref, h0 = pb.h0, budget = b,
                                            floor = mode == "global" and 1e-12 or 1e-13, reps = reps,
                                            max_points = quick and 5 or 48})
        curves[#curves + 1] = {label = c.label, geometric = c.geometric, points = pts, spec = c}
        io.stderr:write(".")
      end
    end
    io.stderr:write("\n")
    -- energy conserved by construction: every run at round-off (1e-11 |E0|, at least 1e-11)
    local contest, conserving = {}, {}
    local E0 = pb.system:energy()
    for _, c in ipairs(curves) do
      local all_round = mode == "energy" and #c.points > 0
      for _, p in ipairs(c.points) do if p.err > 1e-11 * math.max(1, math.abs(E0)) then all_round = false end end
      c.conserves = all_round
      if all_round then conserving[#conserving + 1] = c.label else contest[#contest + 1] = c end
    end
    local rows = wp.winners(contest, targets)
    res.losses = res.losses or {}
    for _, r in ipairs(rows) do
      if r.ratio_nongeo and r.ratio_nongeo < 1 then
        res.losses[#res.losses + 1] = {mode = mode, target = r.target, ratio = r.ratio_nongeo, winner = r.nongeo}
      end
    end
    local what = mode == "global" and ("global error at T = %g"):format(T) or ("max |E - E0| over T = %g"):format(T)
    print(("\n%s — %s"):format(pb.title, what))
    if #conserving > 0 then
      print(("(energy at round-off for every step size, so not a measure of their accuracy; left out: %s)"):format(
        table.concat(conserving, ", ")))
    end
    print(("%-7s %-24s %-11s %9s  %-16s %-11s %9s %7s %7s %8s"):format("target", "fastest lieflow", "param", "seconds",
      "non-geometric", "param", "seconds", "ratio", "rk8pd", "quat_rk4"))
    local by_label = {}
    for _, c in ipairs(curves) do by_label[c.label] = c end
    for _, r in ipairs(rows) do
      local function rat(x) return x and ("%.1f"):format(x) or "-" end
      local gc, nc = by_label[r.geo], by_label[r.nongeo]
      print(("%-7.0e %-24s %-11s %9s  %-16s %-11s %9s %7s %7s %8s"):format(r.target, r.geo or "none",
        gc and fmt_param(gc.spec, r.geo_point) or "-", r.geo_time and ("%.2e"):format(r.geo_time) or "-",
        r.nongeo or "none", nc and fmt_param(nc.spec, r.nongeo_point) or "-",
        r.nongeo_time and ("%.2e"):format(r.nongeo_time) or "-", rat(r.ratio_nongeo), rat(r.ratio_rk8pd),
        rat(r.ratio_quat_rk4)))
    end
    -- the figures: every curve, and the key ones (the fastest lieflow and non-geometric curve at some
    -- target, vlv as the papers' reference, rk8pd and quat_rk4)
    local png = ("%s/wp_%s_%s.png"):format(out, pb.name, mode)
    local ylabel = mode == "global" and "global error at T" or "max |E - E(0)|"
    local title = ("%s: %s against run time"):format(pb.title, what)
    local img, msg = wp.plot{file = png, curves = curves, title = title, ylabel = ylabel, yrange = {1e-13, 10}}
    if not img then print("  (figure: " .. tostring(msg) .. ")") end
    local key = {vlv = true, rk8pd = true, ["rk8pd+renorm"] = true, ["quat_rk4+renorm"] = true}
    for _, r in ipairs(rows) do
      if r.geo then key[r.geo] = true end
      if r.nongeo then key[r.nongeo] = true end
    end
    local kc = {}
    for _, c in ipairs(curves) do if key[c.label] and not c.conserves then kc[#kc + 1] = c end end
    wp.plot{file = ("%s/wp_%s_%s_key.png"):format(out, pb.name, mode), curves = kc, title = title, ylabel = ylabel,
            yrange = {1e-13, 10}}
    -- summary: every point of every curve, and the winners
    local scurves = {}
    for _, c in ipairs(curves) do
      local pts = {}
      for i, p in ipairs(c.points) do
        pts[i] = {param = p.param, err = p.err, seconds = p.seconds, wall_seconds = p.wall_seconds, steps = p.steps,
                  f_evals = p.f_evals}
      end
      scurves[#scurves + 1] = {label = c.label, geometric = c.geometric, points = setmetatable(pts, lf.json.array_mt),
                               failed_runs = c.points.failed or 0, conserves_energy = c.conserves}
    end
    local srows = {}
    for i, r in ipairs(rows) do
      srows[i] = {target = r.target, winner = r.winner, winner_geometric = r.geometric, winner_seconds = r.time,
                  lieflow = r.geo, lieflow_seconds = r.geo_time, lieflow_param = r.geo_point and r.geo_point.param,
                  best_nongeometric = r.nongeo, nongeometric_seconds = r.nongeo_time,
                  nongeometric_param = r.nongeo_point and r.nongeo_point.param, ratio_nongeometric = r.ratio_nongeo,
                  rk8pd_seconds = r.rk8pd_time, ratio_rk8pd = r.ratio_rk8pd, quat_rk4_seconds = r.quat_rk4_time,
                  ratio_quat_rk4 = r.ratio_quat_rk4}
    end
    res.measures[mode] = {T = T, curves = scurves, winners = srows, figure = png, rows_ = rows, curves_ = curves,
                          conserving = setmetatable(conserving, lf.json.array_mt)}
  end
  return res
end

local results = {}
for _, pb in ipairs(problems) do results[pb.name] = run_problem(pb) end

-- ------------------------------------------------------------------ the issue's comparison, re-timed
-- stress test, energy error over T = 1e4: for each target the cheapest qualifying runs of the three
-- fastest lieflow methods, the best rk8pd run (with or without renormalization) and the best
-- quaternion RK4 run, timed again 5x interleaved; the fastest lieflow median is the one compared.
local st = results.stress.measures.energy
local confirm = {}
print(("\nStress test, max |E - E0| over T = %g: the fastest lieflow run per target against rk8pd and"):format(T_energy))
print("quaternion RK4, re-timed 5 times interleaved with the next two lieflow candidates (median CPU seconds; ratios")
print("of the medians, > 1: lieflow faster)")
print(("%-7s %-18s %-9s %9s  %-13s %-9s %9s %6s  %-15s %-8s %9s %6s"):format("target", "lieflow", "param", "seconds",
  "rk8pd", "tol", "seconds", "ratio", "quat_rk4", "h", "seconds", "ratio"))
local spec_of = {}
for _, c in ipairs(st.curves_) do spec_of[c.label] = c.spec end
local function time_run(sp, param)
  if sp.solver then
    return lf.core.baseline(problems[1].system, {solver = sp.solver, renormalize = sp.renormalize, T = T_energy,
      h = sp.solver ~= "rk8pd" and param or nil, tol = sp.solver == "rk8pd" and param or nil}).cpu_seconds
  end
  return lf.core.timed_run(sp.method, problems[1].system, {T = T_energy, h = param}).cpu_seconds
end
-- lieflow candidates per target: the cheapest qualifying run of each of the three fastest lieflow curves
local function candidates(target)
  local c = {}
  for _, cv in ipairs(st.curves_) do
    if cv.geometric and not cv.conserves then
      local t, p = wp.time_to(cv.points, target)
      if t then c[#c + 1] = {label = cv.label, spec = cv.spec, point = p, t = t} end
    end
  end
  table.sort(c, function(a, b) return a.t < b.t end)
  return {c[1], c[2], c[3]}
end
for _, r in ipairs(st.rows_) do
  if r.geo_time then
    local cand = candidates(r.target)
    local runs = {}
    for _, c in ipairs(cand) do runs[#runs + 1] = {spec = c.spec, param = c.point.param, label = c.label, point = c.point, times = {}} end
    local nl = #runs
    local base = {}
    if r.rk8pd_point then base.rk8pd = {spec = spec_of[r.rk8pd_label], param = r.rk8pd_point.param, label = r.rk8pd_label, point = r.rk8pd_point, times = {}} end
    if r.quat_rk4_point then base.quat = {spec = spec_of[r.quat_rk4_label], param = r.quat_rk4_point.param, label = r.quat_rk4_label, point = r.quat_rk4_point, times = {}} end
    runs[#runs + 1] = base.rk8pd
    runs[#runs + 1] = base.quat
    for _ = 1, quick and 1 or 5 do
      for _, x in ipairs(runs) do x.times[#x.times + 1] = time_run(x.spec, x.param) end
    end
    local best
    for k = 1, nl do
      runs[k].med = wp.median(runs[k].times)
      if not best or runs[k].med < best.med then best = runs[k] end
    end
    local t1 = best.med
    local t2 = base.rk8pd and wp.median(base.rk8pd.times)
    local t3 = base.quat and wp.median(base.quat.times)
    local lieflow_runs = {}
    for k = 1, nl do lieflow_runs[k] = {label = runs[k].label, h = runs[k].param, err = runs[k].point.err, seconds = runs[k].med} end
    confirm[#confirm + 1] = {target = r.target, lieflow = best.label, h = best.param, err = best.point.err,
                             seconds = t1, candidates = lieflow_runs, rk8pd = base.rk8pd and base.rk8pd.label,
                             rk8pd_tol = base.rk8pd and base.rk8pd.param, rk8pd_err = base.rk8pd and base.rk8pd.point.err,
                             rk8pd_seconds = t2, ratio_rk8pd = t2 and t2 / t1, quat_rk4 = base.quat and base.quat.label,
                             quat_rk4_h = base.quat and base.quat.param, quat_rk4_err = base.quat and base.quat.point.err,
                             quat_rk4_seconds = t3, ratio_quat_rk4 = t3 and t3 / t1, fastest_overall = r.winner}
    local function opt(x, f) return x and f:format(x) or "-" end
    print(("%-7.0e %-18s %-9s %9.2e  %-13s %-9s %9s %6s  %-15s %-8s %9s %6s"):format(r.target, best.label,
      ("%.3g"):format(best.param), t1, base.rk8pd and base.rk8pd.label or "-", opt(base.rk8pd and base.rk8pd.param, "%.1e"),
      opt(t2, "%.2e"), opt(t2 and t2 / t1, "%.1f"), base.quat and base.quat.label or "-",
      opt(base.quat and base.quat.param, "%.3g"), opt(t3, "%.2e"), opt(t3 and t3 / t1, "%.1f")))
    if not quick and r.target >= 1e-8 then
      check(t2 and t2 / t1 > 1, ("stress energy %.0e: rk8pd (%s s) is not slower than %s (%s s)"):format(r.target,
        tostring(t2), best.label, tostring(t1)))
      check(not t3 or t3 / t1 > 1, ("stress energy %.0e: quat_rk4 (%s s) is not slower than %s (%s s)"):format(r.target,
        tostring(t3), best.label, tostring(t1)))
    end
  end
end
summary.stress_energy_confirmed = confirm

-- ------------------------------------------------------------------ bounded energy at T = 1e4
-- lf.stress_test (h = 0.125 and 0.25, T = 1e4) for every method beyond the papers. The drift statistic
-- (lf.drift) grows like T for a drifting energy and shrinks for a bounded one; a method called "drift"
-- at T = 1e4 is run again at T = 4e4, and the longer run decides (the high-order methods' tiny energy
-- errors oscillate on long periods, which 1e4 time units may not average out).
local T_b = quick and 1000 or 1e4
print(("\nBounded energy (lf.stress_test, T = %g) of the methods beyond the papers:"):format(T_b))
local bounded = {}
for _, m in ipairs(lf.methods()) do
  if m.family == "splitting" or m.family == "composition" then
    local row = {}
    for _, h in ipairs{0.125, 0.25} do
      local stt = lf.stress_test(m.name, {h = h, T = T_b})
      local e = {verdict = stt.verdict, statistic = stt.statistic, slope = stt.slope, T = T_b,
                 max_abs_energy_error = experiment.max_abs(stt.runs[1].traj.energy_error)}
      if stt.verdict == "drift" and not quick then
        local long = lf.stress_test(m.name, {h = h, T = 4 * T_b, every = 160})
        e.long = {verdict = long.verdict, statistic = long.statistic, slope = long.slope, T = 4 * T_b}
      end
      local final = e.long and e.long.verdict or e.verdict
      print(("  %-16s h=%-6g %-8s statistic %7.3f  max|dE| %.2e%s"):format(m.name, h, e.verdict, e.statistic,
        e.max_abs_energy_error, e.long and (" -> T = %g: %s, statistic %.3f"):format(e.long.T, e.long.verdict,
        e.long.statistic) or ""))
      if not quick then check(final == "bounded", ("%s: energy verdict %s at h = %g"):format(m.name, final, h)) end
      row["h" .. h] = e
    end
    bounded[m.name] = row
  end
end
summary.bounded_energy = bounded

-- ------------------------------------------------------------------ every cell
-- The claim: lieflow's fastest run is at least as fast as the fastest non-geometric one in every cell
-- (problem, measure, target; from the sweeps). The cells where it is not are printed; each one fails
-- the example unless it is listed here with its reason, which docs/work_precision.md's closing note
-- shows with the measurement ("Where lieflow does not win, and why").
local smooth_triaxial = "smooth motion, no wall contact from this state (1.1 + R33 >= 0.69 over T = 1e4): a "
  .. "triaxial body (exact free flow 0.67 us, dlm's axis splitting) against rk8pd's 13 cheap stages of order 8"
local expected_losses = {
  ["coulomb_wall global"] = smooth_triaxial,
  ["coulomb_wall energy"] = smooth_triaxial,
  ["free_body energy"] = "without the exact methods: the axis-rotation splittings' error in T1 + T2 + T3 against "
                         .. "rk8pd's long steps on a smooth motion",
  ["free_body global"] = "at loose targets: one exact step of split_exact costs more than a few RK4 steps",
  ["stress global"] = "over T = 10 a bounded energy error buys nothing: fixed-step order 4-6 against adaptive order 8",
}
print("\nCells where the fastest non-geometric solver is faster than lieflow's fastest run:")
local nloss = 0
for _, pb in ipairs(problems) do
  for _, l in ipairs(results[pb.name].losses or {}) do
    nloss = nloss + 1
    local reason = expected_losses[pb.name .. " " .. l.mode]
    print(("  %-12s %-6s %-7.0e %s %.2f of lieflow's time (%s)"):format(pb.name, l.mode, l.target, l.winner, l.ratio,
      reason or "NOT EXPECTED"))
    if not quick then
      check(reason ~= nil, ("%s, %s error, %.0e: %s is faster than lieflow (ratio %.2f)"):format(pb.name, l.mode,
        l.target, l.winner, l.ratio))
    end
  end
end
if nloss == 0 then print("  none") end
summary.losing_cells = nloss

-- ------------------------------------------------------------------ summary
local sres = {}
for name, r in pairs(results) do
  sres[name] = {title = r.title, measures = {}}
  for mode, m in pairs(r.measures) do
    sres[name].measures[mode] = {T = m.T, curves = setmetatable(m.curves, lf.json.array_mt),
                                 winners = setmetatable(m.winners, lf.json.array_mt), figure = m.figure,
                                 conserving_energy = m.conserving}
  end
end
summary.problems = sres
summary.parameters.load_average_end = loadavg()
experiment.finish(study, {files = "Figures (wp_<problem>_<global|energy>.png) and summary.json",
  failure = "work_precision: a claim does not hold",
  reproduced = {"Every claim of work_precision.lua holds (bounded energies; lieflow fastest on the stress test " ..
                (quick and "— not timed in --quick)" or "at every target 1e-2 ... 1e-8).")}})
