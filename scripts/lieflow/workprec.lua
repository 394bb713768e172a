-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow.workprec — work against precision: sweeps of step sizes (or tolerances), timed runs in C,
-- the cheapest run that reaches an accuracy, winners per accuracy, and the diagram.
--
--   local wp = require "lieflow.workprec"
--   local pts = wp.sweep(system, {method = "split_exact_s4"}, {T = 1e4, mode = "energy", h0 = 1})
--   local pts = wp.sweep(system, {method = "dlm_s4", adapt = true}, ...)  (reversible adaptive steps:
--                        h is the step at the start, lf.integrator's option adapt)
--   local pts = wp.sweep(system, {solver = "rk8pd", renormalize = true}, {T = 10, mode = "global",
--                        reference = ref})
--   wp.time_to(pts, 1e-6) -> seconds, point          (nil if no run reached 1e-6)
--   wp.winners(curves, targets) -> rows              (per target: the fastest curve, the fastest
--                                                     non-geometric one, rk8pd's and quat_rk4's best)
--   wp.plot{file=, title=, curves=, targets=}        (log-log: error against seconds, one line per curve)
--
-- A run goes from the system's initial state to T in C (core.timed_run for lieflow methods,
-- core.baseline for rk8pd / rk4 / quat_rk4, core/solve/baseline.h): `seconds` is the CPU time of the
-- integration loop alone (the thread's CPU clock: the wall time on an idle core, and on a shared
-- machine far steadier than the wall clock, which also counts the time other processes hold the
-- core), the median of `reps` runs; `wall_seconds` is the median wall time. The error:
--   mode "energy": max |E - E(0)| over every step (a separate run that checks the energy after each
--                  step; the timed runs do not);
--   mode "global": max(||R - R_ref||_F, |w - w_ref| / |w_ref|) at T against `reference` (a state
--                  {R=, omega=}).
-- Fixed-step runs use h = T/N with N a whole number; a sweep multiplies N by `ratio` (2^(1/4)) from
-- N0 = T/h0 until a run takes longer than `budget` seconds, the error falls below `floor`, or
-- max_points; a run that fails (e.g. Newton at too large a step) is recorded as failed and the sweep
-- goes on. rk8pd sweeps its tolerance from 1e-3 down by 10^(1/4) (for an 8th-order method about the
-- same change of work per point as 2^(1/4) in h for the 4th-order ones).
local core = require "lieflow.core"
local plot = require "lieflow.view.plot"

local M = {}

local function median(t)
  local s = {}
  for i, v in ipairs(t) do s[i] = v end
  table.sort(s)
  local n = #s
  if n % 2 == 1 then return s[(n + 1) / 2] end
  return 0.5 * (s[n / 2] + s[n / 2 + 1])
end
M.median = median

--- max(||R - R_ref||_F, |w - w_ref| / |w_ref|) (absolute in w when w_ref = 0)
function M.state_error(state, ref)
  local eR = (state.R - ref.R):norm()
  local wn = ref.omega:norm()
  local ew = (state.omega - ref.omega):norm() / (wn > 0 and wn or 1)
  return math.max(eR, ew)
end

local function run_once(system, spec, T, param, every)
  if spec.solver then
    return core.baseline(system, {solver = spec.solver, renormalize = spec.renormalize, T = T,
                                  h = spec.solver ~= "rk8pd" and param or nil,
                                  tol = spec.solver == "rk8pd" and param or nil, energy_every = every})
  end
  return core.timed_run(spec.method, system, {T = T, h = param, energy_every = every, adapt = spec.adapt})
end

--- One measured point: {param=, err=, seconds= (CPU, median), seconds_all=, wall_seconds= (median),
--- steps=, f_evals=, check_seconds=}.
function M.measure(system, spec, T, param, mode, reference, reps)
  reps = reps or 3
  local p = {param = param}
  local times, walls = {}, {}
  if mode == "energy" then
    local c = run_once(system, spec, T, param, 1)
    p.err, p.check_seconds, p.steps, p.f_evals = c.max_energy_error, c.cpu_seconds, c.steps, c.f_evals
  end
  -- runs of more than 0.5 s are timed once: their CPU time varies by about 1% between runs
  if p.check_seconds and p.check_seconds > 0.5 then reps = 1 end
  for r = 1, reps do
    local res = run_once(system, spec, T, param, 0)
    times[r], walls[r] = res.cpu_seconds, res.seconds
    if r == 1 then
      p.steps, p.f_evals = res.steps, res.f_evals
      if mode == "global" then p.err = M.state_error(res.state, reference) end
      p.check_seconds = p.check_seconds or res.cpu_seconds
    end
  end
  p.seconds, p.seconds_all, p.wall_seconds = median(times), times, median(walls)
  return p
end

--- The sweep of one method or baseline (see the header). opts: T, mode, reference, h0, ratio,
--- budget (seconds per run), floor, max_points, reps, tols (rk8pd).
function M.sweep(system, spec, opts)
  local T, mode = opts.T, opts.mode
  local budget, floor = opts.budget or 0.25, opts.floor or 1e-12
  local pts, params = {}, {}
  if spec.solver == "rk8pd" then
    for k = 0, (opts.max_points or 48) - 1 do
      local tol = 1e-3 * 10 ^ (-k / 4)
      if tol < 1e-14 then break end
      params[#params + 1] = tol
    end
  else
    local N, ratio = math.max(1, math.floor(T / opts.h0 + 0.5)), opts.ratio or 2 ^ 0.25
    for _ = 1, opts.max_points or 48 do
      params[#params + 1] = T / N
      N = math.max(N + 1, math.floor(N * ratio + 0.5))
    end
  end
  local fails = 0
  for _, param in ipairs(params) do
    local ok, p = pcall(M.measure, system, spec, T, param, mode, opts.reference, opts.reps)
    if ok and p.err == p.err then
      pts[#pts + 1] = p
      fails = 0
      if p.check_seconds > budget or p.err < floor then break end
    else
      fails = fails + 1
      pts.failed = (pts.failed or 0) + 1
      if #pts > 0 and fails >= 3 then break end -- failing again after it worked: give up
    end
  end
  return pts
end

--- The cheapest run reaching err <= target: seconds, point (nil when none does).
function M.time_to(points, target)
  local best
  for _, p in ipairs(points) do
    if p.err <= target and (not best or p.seconds < best.seconds) then best = p end
  end
  if best then return best.seconds, best end
end

--- Per target: the fastest curve overall (winner), the fastest geometric (lieflow) and non-geometric
--- curve (curve.geometric), and the fastest of the curves whose label starts with "rk8pd" and
--- "quat_rk4"; the ratios are their times over the fastest lieflow time (> 1: lieflow is faster).
--- curves: {{label=, geometric=, points=}, ...} -> {{target=, winner=, time=, point=, geometric=,
--- geo=, geo_time=, geo_point=, nongeo=, nongeo_time=, nongeo_point=, rk8pd_label=, rk8pd_time=,
--- rk8pd_point=, quat_rk4_label=, quat_rk4_time=, quat_rk4_point=, ratio_nongeo=, ratio_rk8pd=,
--- ratio_quat_rk4=}, ...}
function M.winners(curves, targets)
  local rows = {}
  for i, target in ipairs(targets) do
    local row = {target = target}
    local function better(key, t, label, p)
      if not row[key .. "_time"] or t < row[key .. "_time"] then
        row[key .. "_time"], row[key], row[key .. "_point"] = t, label, p
      end
    end
    for _, c in ipairs(curves) do
      local t, p = M.time_to(c.points, target)
      if t then
        if not row.time or t < row.time then row.time, row.winner, row.point, row.geometric = t, c.label, p, c.geometric end
        better(c.geometric and "geo" or "nongeo", t, c.label, p)
        for _, k in ipairs{"rk8pd", "quat_rk4"} do
          if c.label:sub(1, #k) == k and (not row[k .. "_time"] or t < row[k .. "_time"]) then
            row[k .. "_time"], row[k .. "_label"], row[k .. "_point"] = t, c.label, p
          end
        end
      end
    end
    if row.geo_time then
      if row.nongeo_time then row.ratio_nongeo = row.nongeo_time / row.geo_time end
      if row.rk8pd_time then row.ratio_rk8pd = row.rk8pd_time / row.geo_time end
      if row.quat_rk4_time then row.ratio_quat_rk4 = row.quat_rk4_time / row.geo_time end
    end
    rows[i] = row
  end
  return rows
end

--- The work-precision diagram: error against seconds (log-log), one line per curve, written as
--- <file>.dat (one gnuplot data block per curve: seconds, error) and <file>.gp, rendered to <file>
--- (PNG) when gnuplot is available. opts: file, title, curves, xlabel, ylabel, yrange = {lo, hi}.
--- Returns the image path or nil, and a message.
function M.plot(opts)
  opts.xlabel = opts.xlabel or "CPU time of the integration [s]"
  local base = opts.file:gsub("%.png$", "")
  local dat, gp = base .. ".dat", base .. ".gp"
  local f = assert(io.open(dat, "w"))
  local titles = {}
  for _, c in ipairs(opts.curves) do
    local pts = {}
    for _, p in ipairs(c.points) do pts[#pts + 1] = p end
    table.sort(pts, function(a, b) return a.seconds < b.seconds end)
    if #pts > 0 then
      titles[#titles + 1] = {label = c.label, geometric = c.geometric}
      f:write(("# %s\n"):format(c.label))
      for _, p in ipairs(pts) do f:write(("%.17g %.17g\n"):format(p.seconds, p.err)) end
      f:write("\n\n")
    end
  end
  f:close()
  local name = dat:match("([^/]*)$")
  -- an apostrophe as a string of its own, as lf.plot quotes (gnuplot 5.4 misreads 'a''''b')
  local function q(x) return "'" .. tostring(x):gsub("'", "'.\"'\".'") .. "'" end
  local g = assert(io.open(gp, "w"))
  g:write("# work-precision diagram (lieflow.workprec); re-render with: gnuplot <this file>\n")
  g:write("# data and image are found next to this script, whatever the working directory\n")
  g:write('if (!exists("ARG0")) ARG0 = ""\n')
  g:write("scriptdir = ARG0; i = strlen(scriptdir)\n")
  g:write('while (i > 0 && scriptdir[i:i] ne "/") { i = i - 1 }\n')
  g:write('scriptdir = (i > 0) ? scriptdir[1:i] : ""\n')
  g:write("set terminal pngcairo size 1200,800 noenhanced font 'Sans,10'\n")
  g:write(("set output scriptdir.%s\n"):format(q(opts.file:match("([^/]*)$"))))
  g:write(("datafile = scriptdir.%s\n"):format(q(name)))
  g:write("set logscale xy\nset format x '%.0e'\nset format y '%.0e'\nset grid\n")
  g:write("set key outside right top\n")
  g:write(("set title %s\n"):format(q(opts.title or "")))
  g:write(("set xlabel %s\nset ylabel %s\n"):format(q(opts.xlabel), q(opts.ylabel or "error")))
  if opts.yrange then g:write(("set yrange [%g:%g]\n"):format(opts.yrange[1], opts.yrange[2])) end
  -- lieflow's curves in colours (never black), the non-geometric solvers black and dashed
  local colours = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
                   "#bcbd22", "#7f7f7f", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd"}
  local parts, ng, nn = {}, 0, 0
  for i, t in ipairs(titles) do
    local style
    if t.geometric then
      ng = ng + 1
      style = ("linespoints lw 2 pt %d ps 1.1 lc rgb '%s'"):format((ng - 1) % 13 + 1, colours[(ng - 1) % #colours + 1])
    else
      nn = nn + 1
      style = ("linespoints dt 2 lw 2 pt %d ps 1.2 lc rgb 'black'"):format((nn - 1) % 5 + 4)
    end
    parts[#parts + 1] = ("datafile index %d using 1:2 with %s title %s"):format(i - 1, style, q(t.label))
  end
  g:write("plot ", table.concat(parts, ", \\\n     "), "\n")
  g:close()
  if #parts == 0 then return nil, "no data" end
  local ok = plot.gnuplot_available()
  if not ok then return nil, ("gnuplot not found: render with `gnuplot %s`"):format(gp) end
  local cmd = ("gnuplot '%s' 2>&1"):format(gp:gsub("'", [['\'']]))
  local p = io.popen(cmd)
  local out = p:read("a")
  p:close()
  if out ~= "" then return nil, out end
  return opts.file
end

return M
