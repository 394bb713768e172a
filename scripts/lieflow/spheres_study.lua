-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow.spheres_study — the pieces the three sphere examples share (examples/spherical_pendulum.lua,
-- double_pendulum.lua, dipoles.lua reproduce Ortolan's thesis §7.2, Figs. 7.1-7.9, Tables 7.1-7.3):
--   methods            ELN (eln_spatial), RKMK4, RKMKGL4 (rkmk_gl4 with the thesis's fixed-point
--                      iteration), RATTLE, with their labels and integrator options
--   matlab             the thesis's run times (s, MATLAB R2009b, mean of three T = 200 runs)
--   long_run           a sampled run: energy error, ||q| - 1|, q . omega, L_k, with lf.drift's verdict
--   long_runs          all four methods, printed as a table, plotted (Figs. 7.1/7.2, 7.4/7.5, 7.7/7.8)
--   orders             global errors at T = 1 for h = 2^-kmin ... 2^-kmax against rk8pd, fitted orders
--   timings            CPU time of the T = 200 run (no sampling), interleaved repetitions, vs MATLAB
--   energy_windows     window statistics of the energy error on a long run
local lf = require "lieflow"
local experiment = require "lieflow.experiment"

local M = {}

M.methods = {
  {name = "eln_spatial", label = "ELN", order = 2},
  {name = "rkmk4", label = "RKMK4", order = 4},
  {name = "rkmk_gl4", label = "RKMKGL4", order = 4, opts = {solver = "fixed_point"}},
  {name = "rattle", label = "RATTLE", order = 2},
}

-- Tables 7.1-7.3 (Table 7.3's caption says "double spherical pendulum": it is the dipole array)
M.matlab = {
  pendulum = {eln_spatial = 0.34, rkmk4 = 17.41, rkmk_gl4 = 83.17, rattle = 2.72},
  double_pendulum = {eln_spatial = 19.71, rkmk4 = 44.67, rkmk_gl4 = 166.57, rattle = 12.64},
  dipoles = {eln_spatial = 118.74, rkmk4 = 289.28, rkmk_gl4 = 1785.53, rattle = 125.22},
}

function M.integrator(m, sys, h)
  local o = {h = h}
  for k, v in pairs(m.opts or {}) do o[k] = v end
  return lf.integrator(m.name, sys, o)
end

local function index_of(list, name)
  for i, v in ipairs(list) do if v == name then return i end end
end

--- long_run(sys, m, h, T, every) -> run: samples every `every` steps of t, energy_error, norm_error,
--- qdotw, dLk = L_k - L_k(0); with the maxima, the energy error's maxima over the first and last tenth,
--- lf.drift of it, the statistics of the integrator (Newton iterations and f evaluations per step,
--- RATTLE's constraint residuals) and the CPU time (sampling included).
function M.long_run(sys, m, h, T, every)
  local it = M.integrator(m, sys, h)
  local cols = sys:columns()
  local iE, iN, iQ, iL = index_of(cols, "energy"), index_of(cols, "norm_error"), index_of(cols, "qdotw"), index_of(cols, "Lk")
  local r = {method = m.name, label = m.label, t = {}, energy = {}, energy_error = {}, norm_error = {}, qdotw = {}, dLk = {}}
  local E0, L0
  local function sample()
    local v = table.pack(it:observe())
    local n = #r.t + 1
    E0, L0 = E0 or v[iE + 1], L0 or v[iL + 1]
    r.t[n], r.energy[n], r.energy_error[n] = v[1], v[iE + 1], v[iE + 1] - E0
    r.norm_error[n], r.qdotw[n], r.dLk[n] = v[iN + 1], v[iQ + 1], v[iL + 1] - L0
  end
  local N = math.floor(T / h + 0.5)
  local c0 = os.clock()
  sample()
  for _ = 1, N // every do
    it:step(every)
    sample()
  end
  r.cpu_time = os.clock() - c0
  local n = #r.t
  r.samples, r.steps = n, it.steps
  r.max_abs_energy_error = experiment.max_abs(r.energy_error)
  r.energy_error_first_tenth = experiment.max_abs(r.energy_error, 1, n // 10)
  r.energy_error_last_tenth = experiment.max_abs(r.energy_error, n - n // 10 + 1, n)
  local d = lf.drift(r)
  r.slope, r.statistic, r.verdict, r.reliable = d.slope, d.statistic, d.verdict, d.reliable
  r.max_norm_error = experiment.max_abs(r.norm_error)
  r.max_qdotw = experiment.max_abs(r.qdotw)
  r.max_dLk = experiment.max_abs(r.dLk)
  r.newton_per_step = it.newton_iters / it.steps
  r.f_evals_per_step = it.f_evals / it.steps
  if m.name == "rattle" then r.constraint_position, r.constraint_velocity = it.constraint_position, it.constraint_velocity end
  return r
end

-- the run's record for summary.json (no sample arrays)
local function record(r)
  local c = {}
  for k, v in pairs(r) do if type(v) ~= "table" then c[k] = v end end
  return c
end
M.record = record

--- long_runs(sys, opts) -> runs (by method name), records (array for summary.json)
--- opts = {h, T, every, out, title, lk = true (plot the angular momentum error)}: runs every method,
--- prints the table and draws energy_error.png (|E - E0|, log), energy_error_eln_rattle.png (signed),
--- norm_error.png, qdotw.png (not RATTLE: it works with the linear velocity, its analogue is the
--- velocity constraint residual of the table) and, with opts.lk, angular_momentum.png.
function M.long_runs(sys, opts)
  local runs, records = {}, {}
  print(("\nLong runs: T = %g, h = %g (%d steps), sampled every %d steps; lf.drift: %s"):format(opts.T, opts.h,
    math.floor(opts.T / opts.h + 0.5), opts.every, lf.drift_rule))
  print(("%-8s %10s %10s %10s %10s %9s %8s %10s %10s %10s %6s"):format("method", "max|dE|", "first 10%", "last 10%",
    "slope /s", "statistic", "verdict", "max||q|-1|", "max|q.w|", "max|dL_k|", "it/st"))
  for _, m in ipairs(M.methods) do
    local r = M.long_run(sys, m, opts.h, opts.T, opts.every)
    runs[m.name] = r
    records[#records + 1] = record(r)
    local qw = m.name == "rattle" and ("%10s"):format("(q.v " .. ("%.0e"):format(r.constraint_velocity) .. ")")
                                    or ("%10.2e"):format(r.max_qdotw)
    print(("%-8s %10.3e %10.3e %10.3e %+10.2e %9.3g %8s %10.2e %s %10.2e %6.2f"):format(m.label, r.max_abs_energy_error,
      r.energy_error_first_tenth, r.energy_error_last_tenth, r.slope, r.statistic, r.verdict, r.max_norm_error, qw,
      r.max_dLk, r.newton_per_step))
  end
  local rat = runs.rattle
  print(("RATTLE constraint residuals after every step: max ||q|^2 - 1| = %.2e, max |q . v| = %.2e"):format(
    rat.constraint_position, rat.constraint_velocity))
  -- figures
  local t = runs.eln_spatial.t
  local function series(field, which, abs)
    local ys = {}
    for _, m in ipairs(M.methods) do
      if not which or which[m.name] then
        local d = {}
        for i, v in ipairs(runs[m.name][field]) do d[i] = abs and math.max(math.abs(v), 1e-17) or v end
        ys[#ys + 1] = {label = m.label, data = d}
      end
    end
    return ys
  end
  local function plot(file, field, ylabel, title, which, abs)
    lf.plot{x = t, y = series(field, which, abs), logy = abs, title = opts.title .. ": " .. title, xlabel = "t",
            ylabel = ylabel, style = "lines", key = "outside", size = {1000, 600}, file = opts.out .. "/" .. file}
  end
  plot("energy_error.png", "energy_error", "|E - E(0)| (floored at 1e-17)", "energy error", nil, true)
  plot("energy_error_eln_rattle.png", "energy_error", "E - E(0)", "energy error of ELN and RATTLE",
       {eln_spatial = true, rattle = true}, false)
  plot("norm_error.png", "norm_error", "max_i ||q_i| - 1| (floored at 1e-17)", "unit length", nil, true)
  plot("qdotw.png", "qdotw", "max_i |q_i . omega_i| (floored at 1e-17)", "orthogonality q . omega",
       {eln_spatial = true, rkmk4 = true, rkmk_gl4 = true}, true)
  if opts.lk then
    plot("angular_momentum.png", "dLk", "|L_k - L_k(0)| (floored at 1e-17)", "angular momentum about k", nil, true)
  end
  return runs, records
end

--- orders(sys, opts) -> res (by method name: {table, order_q, order_omega, fit_h = {hmax, hmin}, points}),
--- reference accuracy. opts = {T = 1, kmin, kmax = 9, fit_kmin = kmin, floor = 1e-11, out, title, check}:
--- errors of q (root sum of squares of the great-circle angles) and omega (Euclidean) at T against
--- GSL rk8pd (rtol = atol = 1e-14) for h = 2^-kmin ... 2^-kmax (a step that fails is recorded with its
--- message); orders fitted (lf.fit_linear of the logs) over h <= 2^-fit_kmin (the thesis's range)
--- where the method succeeded and both errors exceed opts.floor; checked within 0.15 of nominal;
--- order_q.png and order_omega.png.
function M.orders(sys, opts)
  local T, floor = opts.T or 1, opts.floor or 1e-11
  local ref = lf.reference(sys, T, {rtol = 1e-14, atol = 1e-14})
  local ref2 = lf.reference(sys, T, {rtol = 1e-12, atol = 1e-12})
  local acc = sys:error(ref2, ref)
  local steps = {}
  for k = opts.kmin, opts.kmax or 9 do steps[#steps + 1] = 2.0 ^ -k end
  print(("\nGlobal errors at T = %g against rk8pd (rtol 1e-14; |ref(1e-14) - ref(1e-12)| = %.1e in q, %.1e in omega),"):format(
    T, acc.q, acc.omega))
  print(("h = %s; orders fitted over h <= 2^-%d (the thesis's range) where both errors are > %g"):format(
    experiment.range_str(steps), opts.fit_kmin or opts.kmin, floor))
  local header = ("%-8s"):format("h")
  for _, m in ipairs(M.methods) do header = header .. ("  %-21s"):format(m.label .. " q / omega") end
  header = header:gsub("%s+$", "")
  print(header)
  local res = {}
  for _, m in ipairs(M.methods) do
    local rows = {}
    for i, h in ipairs(steps) do
      local it = M.integrator(m, sys, h)
      local ok, err = pcall(it.advance_to, it, T)
      if ok then
        local e = it:error(ref)
        rows[i] = {h = h, err_q = e.q, err_omega = e.omega}
      else
        rows[i] = {h = h, failed = tostring(err)}
      end
    end
    local lx, lq, lw, used = {}, {}, {}, {}
    for _, r in ipairs(rows) do
      if not r.failed and r.h <= 2.0 ^ -(opts.fit_kmin or opts.kmin) and r.err_q > floor and r.err_omega > floor then
        lx[#lx + 1], lq[#lq + 1], lw[#lw + 1] = math.log(r.h), math.log(r.err_q), math.log(r.err_omega)
        used[#used + 1] = r.h
      end
    end
    local oq = #lx >= 2 and lf.fit_linear(lx, lq) or 0 / 0
    local ow = #lx >= 2 and lf.fit_linear(lx, lw) or 0 / 0
    res[m.name] = {method = m.name, label = m.label, nominal = m.order, table = rows, order_q = oq, order_omega = ow,
                   points = #used, fit_h = {used[1], used[#used]}}
    if opts.check then
      opts.check(#used >= 3 and math.abs(oq - m.order) <= 0.15 and math.abs(ow - m.order) <= 0.15,
        ("%s: fitted orders %.3f / %.3f (%d points) not within 0.15 of %d"):format(m.label, oq, ow, #used, m.order))
    end
  end
  for i, h in ipairs(steps) do
    local line = ("%-8s"):format(experiment.pow2_str(h))
    for _, m in ipairs(M.methods) do
      local r = res[m.name].table[i]
      line = line .. ("  %-21s"):format(r.failed and "fails (see below)" or ("%.2e / %.2e"):format(r.err_q, r.err_omega))
    end
    print((line:gsub("%s+$", "")))
  end
  local line = ("%-8s"):format("order")
  for _, m in ipairs(M.methods) do
    line = line .. ("  %-21s"):format(("%5.3f / %5.3f"):format(res[m.name].order_q, res[m.name].order_omega))
  end
  print(line)
  for _, m in ipairs(M.methods) do
    local r = res[m.name]
    print(("%-8s fitted on h = %s ... %s (%d points)"):format(m.label, experiment.pow2_str(r.fit_h[1]),
      experiment.pow2_str(r.fit_h[2]), r.points))
    for _, row in ipairs(r.table) do
      if row.failed then print(("%-8s h = %s: %s"):format(m.label, experiment.pow2_str(row.h), row.failed)) end
    end
  end
  -- the thesis truncates dexpinv at order 4 (Bernoulli terms up to ad_u^3, dexpinv_order = 4); lieflow's
  -- default is exact: the relative difference of the errors (those above the floor), at the largest step
  -- and over h <= 2^-4
  local trunc = {}
  for _, name in ipairs{"rkmk4", "rkmk_gl4"} do
    local m = name == "rkmk4" and M.methods[2] or M.methods[3]
    local big, small = 0, 0
    for i, h in ipairs(steps) do
      local row = res[name].table[i]
      if not row.failed and row.err_q > floor and row.err_omega > floor then
        local o = {h = h, dexpinv_order = 4}
        for k, v in pairs(m.opts or {}) do o[k] = v end
        local it = lf.integrator(name, sys, o)
        local ok = pcall(it.advance_to, it, T)
        if ok then
          local e = it:error(ref)
          local d = math.max(math.abs(e.q - row.err_q) / row.err_q, math.abs(e.omega - row.err_omega) / row.err_omega)
          if i == 1 then big = d end
          if h <= 2 ^ -4 then small = math.max(small, d) end
        end
      end
    end
    trunc[name] = {largest_step = big, h_le_2_4 = small}
  end
  print(("Truncated dexpinv (order 4, the thesis) vs exact: relative change of the errors %.1e (RKMK4), %.1e (RKMKGL4) at h = %s, "
    .. "at most %.1e, %.1e for h <= 2^-4 (errors > floor)"):format(trunc.rkmk4.largest_step, trunc.rkmk_gl4.largest_step,
    experiment.pow2_str(steps[1]), trunc.rkmk4.h_le_2_4, trunc.rkmk_gl4.h_le_2_4))
  -- figures (Figs. 7.3, 7.6, 7.9)
  for _, f in ipairs{{"err_q", "order_q.png", "error in q"}, {"err_omega", "order_omega.png", "error in omega"}} do
    local ys = {}
    for _, m in ipairs(M.methods) do
      local d = {}
      for i, r in ipairs(res[m.name].table) do d[i] = r[f[1]] or 0 / 0 end
      ys[#ys + 1] = {label = m.label, data = d}
    end
    lf.plot{x = steps, y = ys, logx = 2, logy = true, style = "linespoints", key = "bottom right",
            slopes = {{order = 2, label = "h^2", through = {steps[#steps], res.rattle.table[#steps][f[1]] * 2}},
                      {order = 4, label = "h^4", through = {steps[#steps], res.rkmk4.table[#steps][f[1]] / 2}}},
            title = ("%s: global %s at T = %g"):format(opts.title, f[3], T), xlabel = "h", ylabel = f[3],
            size = {950, 650}, file = opts.out .. "/" .. f[2]}
  end
  return res, {q = acc.q, omega = acc.omega}, trunc
end

--- failures(res) -> text: "RATTLE h = 2^-2, 2^-3; ELN h = 2^-2" (the steps where a method failed), or nil.
function M.failures(res)
  local parts = {}
  for _, m in ipairs(M.methods) do
    local hs = {}
    for _, r in ipairs(res[m.name].table) do if r.failed then hs[#hs + 1] = experiment.pow2_str(r.h) end end
    if #hs > 0 then parts[#parts + 1] = m.label .. " h = " .. table.concat(hs, ", ") end
  end
  return #parts > 0 and table.concat(parts, "; ") or nil
end

--- accuracy_orderings(res, check [, hmax]) -> facts: at every h <= hmax (default: all) where all four
--- succeeded, RKMKGL4 <= RKMK4 and every Lie method < RATTLE in both errors (the thesis: "RKMKGL4 the
--- most accurate", "RATTLE the largest error", "all Lie methods more accurate than RATTLE");
--- ELN/RATTLE error ratio range.
function M.accuracy_orderings(res, check, hmax)
  local gl4_best, rattle_worst, n = true, true, 0
  local lo, hi = math.huge, 0
  for i, r in ipairs(res.rattle.table) do
    local e, k, g = res.eln_spatial.table[i], res.rkmk4.table[i], res.rkmk_gl4.table[i]
    if not (r.failed or e.failed or k.failed or g.failed) and r.h <= (hmax or math.huge) then
      n = n + 1
      for _, f in ipairs{"err_q", "err_omega"} do
        gl4_best = gl4_best and g[f] <= k[f]
        rattle_worst = rattle_worst and r[f] > math.max(e[f], k[f], g[f])
        lo, hi = math.min(lo, e[f] / r[f]), math.max(hi, e[f] / r[f])
      end
    end
  end
  print(("Over the %d common steps%s: RKMKGL4 <= RKMK4 in q and omega: %s; RATTLE the largest error: %s; ELN/RATTLE error %.2f ... %.2f"):format(
    n, hmax and (" h <= " .. experiment.pow2_str(hmax)) or "", tostring(gl4_best), tostring(rattle_worst), lo, hi))
  check(gl4_best, "RKMKGL4 is not the most accurate at every step")
  check(rattle_worst, "RATTLE does not have the largest error at every step")
  return {common_steps = n, gl4_most_accurate = gl4_best, rattle_largest_error = rattle_worst,
          eln_over_rattle = {lo, hi}}
end

--- timings(sys, key, opts) -> table by method {cpu = mean, cpu_min, cpu_runs, ratio, matlab, matlab_ratio}
--- opts = {h, T, reps}: CPU time (os.clock) of T/h steps in one it:step call (no sampling), the
--- methods interleaved, reps repetitions (the thesis: mean of three); printed beside Table 7.x.
-- The thesis's claims shared by its three systems over the long runs: the methods named in `bounded`
-- keep the energy error bounded, RKMK4 and RKMKGL4 drift, the Lie methods keep |q_i| = 1 to 1e-13,
-- RATTLE its constraints to 1e-12.
function M.check_long_runs(runs, check, bounded)
  for _, name in ipairs(bounded) do
    check(runs[name].verdict == "bounded", ("%s: energy error verdict %s, the thesis: bounded"):format(name, runs[name].verdict))
  end
  for _, name in ipairs{"rkmk4", "rkmk_gl4"} do
    check(runs[name].verdict == "drift", ("%s: energy error verdict %s, the thesis: drift"):format(name, runs[name].verdict))
  end
  for _, name in ipairs{"eln_spatial", "rkmk4", "rkmk_gl4"} do
    local r = runs[name]
    check(r.max_norm_error <= 1e-13, ("%s: max ||q| - 1| = %.2e > 1e-13"):format(r.label, r.max_norm_error))
  end
  local rat = runs.rattle
  check(rat.constraint_position <= 1e-12 and rat.constraint_velocity <= 1e-12, "RATTLE constraint residuals above 1e-12")
end

-- Tables 7.1-7.3: RKMKGL4 the slowest of the four.
function M.check_rkmk_gl4_slowest(tim, check)
  local slowest = true
  for _, name in ipairs{"eln_spatial", "rkmk4", "rattle"} do slowest = slowest and tim.rkmk_gl4.cpu > tim[name].cpu end
  check(slowest, "thesis: RKMKGL4 the slowest")
end

--- timings(sys, key, opts) -> {[method] = {cpu, cpu_mean, cpu_runs, matlab, ratio, matlab_ratio}}: CPU
--- seconds of an unsampled run of opts.T / opts.h steps for each method, beside the thesis's MATLAB
--- times (M.matlab[key]). Each method first runs min(N, 200) untimed steps (first-touch and cache
--- effects would otherwise fall on whichever method runs first); then opts.reps rounds, the methods
--- interleaved in each. cpu is the minimum over the rounds (the run least disturbed by the rest of the
--- machine), cpu_mean the mean; ratio = cpu / ELN's cpu.
function M.timings(sys, key, opts)
  local N = math.floor(opts.T / opts.h + 0.5)
  local t = {}
  for _, m in ipairs(M.methods) do
    t[m.name] = {}
    M.integrator(m, sys, opts.h):step(math.min(N, 200))
  end
  for _ = 1, opts.reps do
    for _, m in ipairs(M.methods) do
      local it = M.integrator(m, sys, opts.h)
      local c0 = os.clock()
      it:step(N)
      local a = t[m.name]
      a[#a + 1] = os.clock() - c0
    end
  end
  local res, ml = {}, M.matlab[key]
  for _, m in ipairs(M.methods) do
    local a, s, mn = t[m.name], 0, math.huge
    for _, x in ipairs(a) do s, mn = s + x, math.min(mn, x) end
    res[m.name] = {cpu = mn, cpu_mean = s / #a, cpu_runs = a, matlab = ml[m.name]}
  end
  print(("\nRun times of the T = %g run (%d steps, no sampling): CPU seconds, least of %d interleaved runs after a warm-up; the thesis's MATLAB R2009b seconds (Table)"):format(
    opts.T, N, opts.reps))
  print(("%-8s %12s %10s %12s %11s"):format("method", "lieflow s", "/ ELN", "MATLAB s", "/ ELN"))
  for _, m in ipairs(M.methods) do
    local r = res[m.name]
    r.ratio = r.cpu / res.eln_spatial.cpu
    r.matlab_ratio = r.matlab / ml.eln_spatial
    print(("%-8s %12.4f %10.2f %12.2f %11.2f"):format(m.label, r.cpu, r.ratio, r.matlab, r.matlab_ratio))
  end
  return res
end

--- energy_windows(sys, m, h, T, nwin) -> {max = {...}, mean = {...}, spread_of_means}: the energy error
--- over nwin consecutive windows of a long run (sampled every 10 steps).
function M.energy_windows(sys, m, h, T, nwin)
  local it = M.integrator(m, sys, h)
  local E0 = it:energy()
  local per = math.floor(T / h / nwin / 10 + 0.5)
  local mx, mean = {}, {}
  for w = 1, nwin do
    local a, s = 0, 0
    for _ = 1, per do
      it:step(10)
      local e = it:energy() - E0
      a, s = math.max(a, math.abs(e)), s + e
    end
    mx[w], mean[w] = a, s / per
  end
  local lo, hi = math.huge, -math.huge
  for _, v in ipairs(mean) do lo, hi = math.min(lo, v), math.max(hi, v) end
  return {method = m.name, h = h, T = T, windows = nwin, max = mx, mean = mean, spread_of_means = hi - lo}
end

return M
