-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — experiment helpers: the pieces that the example scripts (examples/*.lua) share.
--
--   local experiment = require "lieflow.experiment"
--   local study = experiment.start("fast_top", arg)  -- study.quick, .out, .summary, .check ...
--   ...                                              -- runs, tables, figures, study.check(ok, msg)
--   experiment.finish(study, {files = "Figures and summary.json", reproduced = {"..."}})
--
-- Bookkeeping: start, check, write_summary, report, finish (failures are collected, written to
-- out/<name>/summary.json and raised at the end, after everything has been written).
-- Arrays: max_abs, max_deviation, slice, max_over_min, join, on_grid.
-- Step sizes: pow2_str, range_str.
-- Convergence against a reference: torque_methods, errors_at, error_table, measure_convergence,
-- nominal_order_header, report_nominal_order, error_ratio_range, label_hidden_series, convergence_plotter.
-- Energy drift: drift_run, drift_table_header, drift_table_row.
-- The symmetric heavy top: top_invariants.
-- The machine a measurement ran on (examples and benchmarks): cpu_name, load_average.
local lf = require "lieflow"
local frames = require "lieflow.view.frames"

local M = {}

-- ------------------------------------------------------------------ bookkeeping

--- experiment.start(name, args [, out]) -> study: the state of one experiment script, with fields
---   name; quick = args and args[1] == "--quick" (args: the script's `arg`; nil without one);
---   out: the output directory, created now (default "out/" .. name, relative to the current
---   directory);
---   summary = {} (what summary.json will hold); failures, differences = {} (messages);
---   check(ok, msg): records msg in failures when ok is false. The script goes on: all failures
---   are raised together by finish/report, after summary.json and the figures are written.
function M.start(name, args, out)
  local study = {name = name, quick = args and args[1] == "--quick", out = out or ("out/" .. name),
                 summary = {}, failures = {}, differences = {}}
  lf.mkdir_p(study.out)
  function study.check(ok, msg) if not ok then study.failures[#study.failures + 1] = msg end end
  return study
end

--- experiment.write_summary(study) -> path: completes study.summary with experiment = study.name,
--- drift_rule = lf.drift_rule, failures and differences (the study's lists, JSON arrays even
--- when empty) and writes it to <study.out>/summary.json.
function M.write_summary(study)
  local s = study.summary
  s.experiment = study.name
  s.drift_rule = lf.drift_rule
  s.failures = setmetatable(study.failures, lf.json.array_mt)
  s.differences = setmetatable(study.differences, lf.json.array_mt)
  return lf.write_json(study.out .. "/summary.json", s)
end

-- report's work; error level 3 makes the message name the script line that called report/finish
local function conclude(study, opts)
  for _, d in ipairs(study.differences) do print("Difference from the paper: " .. d) end
  print(("\n%s in %s/"):format(opts.files or "Figures and summary.json", study.out))
  if #study.failures > 0 then
    error((opts.failure or (study.name .. " does not reproduce the paper")) .. ":\n  "
          .. table.concat(study.failures, "\n  "), 3)
  end
  for _, line in ipairs(opts.reproduced or {}) do print(line) end
end

--- experiment.report(study, opts): the end of an experiment whose summary.json is written. Prints
--- "Difference from the paper: <d>" for each of study.differences, then "\n<opts.files> in <out>/"
--- (files default "Figures and summary.json"). Raises an error if study.failures is not empty:
--- "<opts.failure>:\n  <failure 1>\n  <failure 2>..." (failure default "<name> does not
--- reproduce the paper"); otherwise prints the lines of opts.reproduced (a list of strings).
function M.report(study, opts)
  conclude(study, opts or {})
end

--- experiment.finish(study, opts): write_summary(study), then report(study, opts).
function M.finish(study, opts)
  M.write_summary(study)
  conclude(study, opts or {})
end

--- experiment.view(study, trajs, opts) -> path | nil: the example's page, <out>/view.html
--- (lf.animate of the trajectories with opts), and the glTF of the first one, <out>/view.gltf (the
--- same window and frame budget); their sizes and frame counts go into study.summary.view. Without
--- three.js (Debian's libjs-three) a notice stands in for the page: the example's claims do not
--- depend on it.
function M.view(study, trajs, opts)
  opts = opts or {}
  local page, gltf = study.out .. "/view.html", study.out .. "/view.gltf"
  local spec = {path = page}
  for i, t in ipairs(trajs) do spec[i] = t end
  for k, v in pairs(opts) do spec[k] = v end
  local ok, err = pcall(lf.animate, spec)
  if not ok and tostring(err):find("three.js not found", 1, true) then
    print("view: no page: " .. tostring(err))
    study.summary.view = {skipped = tostring(err)}
    return nil
  end
  if not ok then error(err, 2) end
  trajs[1]:write_gltf(gltf, {frames = opts.frames, t0 = opts.t0, t1 = opts.t1})
  local function size(p)
    local f = assert(io.open(p, "rb"))
    local n = f:seek("end")
    f:close()
    return n
  end
  local samples = {}
  for i, t in ipairs(trajs) do samples[i] = t.samples end
  study.summary.view = {page = page, page_bytes = size(page), gltf = gltf, gltf_bytes = size(gltf), samples = samples,
                        t0 = opts.t0, t1 = opts.t1}
  print(("view: %s (%d bytes), %s (%d bytes)"):format(page, study.summary.view.page_bytes, gltf, study.summary.view.gltf_bytes))
  if os.getenv("LIEFLOW_VIEW_CHECK") == "1" then M.view_check(study.out .. "/view.check.json", trajs, opts) end
  return page
end

--- experiment.view_check(path, trajs, opts): for the browser test (tests/view/run.sh sets
--- LIEFLOW_VIEW_CHECK=1): per panel the sample index, time and recorded values
--- (lieflow.view.frames.recorded) of every frame of the page, and each object's shape.
function M.view_check(path, trajs, opts)
  local panels = {}
  for i, traj in ipairs(trajs) do
    local sc = opts.scene or traj.scene
    local idx = frames.select(traj, opts)
    local t = {}
    for f, k in ipairs(idx) do t[f] = traj.t[k] end
    local shapes = {}
    for o, obj in ipairs(sc.objects) do shapes[o] = obj.shape end
    panels[i] = {samples = idx, t = t, shapes = shapes, values = frames.recorded(traj, sc, idx)}
  end
  lf.write_json(path, {panels = panels})
end

-- ------------------------------------------------------------------ arrays

--- experiment.max_abs(a [, from, to]) -> max |a[i]| for i = from (1) ... to (#a); 0 if empty.
function M.max_abs(a, from, to)
  local m = 0
  for i = from or 1, to or #a do m = math.max(m, math.abs(a[i])) end
  return m
end

--- experiment.max_deviation(a) -> max |a[i] - a[1]|: how far a recorded invariant moves.
function M.max_deviation(a)
  local m, a0 = 0, a[1]
  for i = 1, #a do m = math.max(m, math.abs(a[i] - a0)) end
  return m
end

--- experiment.slice(a, n) -> {a[1], ..., a[n]} (a new table).
function M.slice(a, n) return {table.unpack(a, 1, n)} end

--- experiment.max_over_min(values) -> max(values) / min(values): 1 when they all agree.
function M.max_over_min(values)
  return math.max(table.unpack(values)) / math.min(table.unpack(values))
end

--- experiment.join(list, fmt [, sep]) -> string: each entry formatted with fmt (a format string
--- or a function(value, i) -> string), joined by sep (", ").
function M.join(list, fmt, sep)
  local s = {}
  for i, v in ipairs(list) do
    if type(fmt) == "function" then s[i] = fmt(v, i) else s[i] = fmt:format(v) end
  end
  return table.concat(s, sep or ", ")
end

--- experiment.on_grid(tg, ts, ys) -> values of the polyline through (ts[i], ys[i]) at the times
--- tg (ascending): linear interpolation, NaN outside [ts[1], ts[#ts]] (1e-12 slack) and for an
--- empty polyline; a single point gives ys[1] at its own time. Drawn with lines, the result is
--- the polyline through the step values, so series of different steps share one x axis.
function M.on_grid(tg, ts, ys)
  local r, j = {}, 1
  for i, t in ipairs(tg) do
    while j < #ts - 1 and ts[j + 1] < t - 1e-12 do j = j + 1 end
    if #ts == 0 or t < ts[1] - 1e-12 or t > ts[#ts] + 1e-12 then r[i] = 0 / 0
    elseif #ts == 1 then r[i] = ys[1]
    else
      local a = (t - ts[j]) / (ts[j + 1] - ts[j])
      r[i] = ys[j] + math.max(0, math.min(1, a)) * (ys[j + 1] - ys[j])
    end
  end
  return r
end

-- ------------------------------------------------------------------ step sizes

--- experiment.pow2_str(h) -> "2^k" with k the integer nearest log2(h).
function M.pow2_str(h) return ("2^%d"):format(math.floor(math.log(h, 2) + 0.5)) end

--- experiment.range_str(hs) -> "2^a ... 2^b" for the first and last of the steps hs; "2^a" for
--- a single step.
function M.range_str(hs)
  return #hs == 1 and M.pow2_str(hs[1]) or (M.pow2_str(hs[1]) .. " ... " .. M.pow2_str(hs[#hs]))
end

-- ------------------------------------------------------------------ convergence

--- experiment.rigid_methods() -> the entries of lf.methods() of the rigid-body family (form
--- "rigid") of order at most 2, in registry order: the methods the rigid-body papers compare (with
--- no_squish, dlm and split_exact beside them). The compositions of order 4 and 6 are measured where
--- their convergence windows are chosen for them (tests/c/test_methods.c, test_compose.c) and in
--- examples/work_precision.lua.
function M.rigid_methods()
  local r = {}
  for _, m in ipairs(lf.methods()) do if m.form == "rigid" and m.order <= 2 then r[#r + 1] = m end end
  return r
end

--- experiment.torque_methods() -> the rigid-body methods that integrate systems with a torque
--- (all but those marked free_body_only), in registry order.
function M.torque_methods()
  local r = {}
  for _, m in ipairs(M.rigid_methods()) do if not m.free_body_only then r[#r + 1] = m end end
  return r
end

--- experiment.errors_at(system, method, h, T, reference [, extra]) -> row | nil, message
--- Integrates system with the method at step h to time T (it:advance_to) and compares with the
--- reference state (what lf.reference returns): row = {h, err_<field> = the manifold distance of
--- each field (rigid bodies: err_R = ||R - R_ref||_F, err_omega = |w - w_ref|), steps, cpu_time}.
--- extra(it, row), if given, may add fields. nil and the error message if the integrator cannot
--- be made or a step fails (Newton, domain ...).
function M.errors_at(system, method, h, T, reference, extra)
  local ok, it = pcall(lf.integrator, method, system, {h = h})
  if not ok then return nil, tostring(it) end
  local c0 = os.clock()
  local ok2, err = pcall(it.advance_to, it, T)
  if not ok2 then return nil, tostring(err) end
  local row = {h = h, steps = it.steps}
  for f, e in pairs(it:error(reference)) do row["err_" .. f] = e end
  if extra then extra(it, row) end
  row.cpu_time = os.clock() - c0
  return row
end

--- experiment.error_table(system, method, steps, T, reference [, extra]) -> rows, failed, cpu
--- errors_at for each h of steps: rows[i] is its row, or {h =, failed = message} where the method
--- fails; failed = how many failed, cpu = the summed cpu_time of the others.
function M.error_table(system, method, steps, T, reference, extra)
  local rows, nfail, cpu = {}, 0, 0
  for i, h in ipairs(steps) do
    local r, msg = M.errors_at(system, method, h, T, reference, extra)
    if r then cpu = cpu + r.cpu_time else nfail = nfail + 1; r = {h = h, failed = msg} end
    rows[i] = r
  end
  return rows, nfail, cpu
end

--- experiment.measure_convergence(system, m, opts) -> res
--- m: an entry of lf.methods(); opts = {steps =, fit =, T =, reference =}. The error table over
--- opts.steps (error_table) and the orders fitted by lf.order over opts.fit:
--- res = {method, nominal_order, table, failed_steps, cpu_time (table and fit), fit_steps = opts.fit,
---        order_R, order_omega, fit_table} or, when the fit fails, res.error (its message) in place
--- of the orders.
function M.measure_convergence(system, m, opts)
  local rows, nfail, cpu = M.error_table(system, m.name, opts.steps, opts.T, opts.reference)
  local ok, o = pcall(lf.order, {system = system, method = m.name, T = opts.T, steps = opts.fit, reference = opts.reference})
  local res = {method = m.name, nominal_order = m.order, table = rows, failed_steps = nfail, cpu_time = cpu,
               fit_steps = opts.fit}
  if ok then
    res.order_R, res.order_omega, res.fit_table = o.order_R, o.order_omega, o.table
    for _, row in ipairs(o.table) do res.cpu_time = res.cpu_time + row.cpu_time end
  else
    res.error = tostring(o)
  end
  return res
end

--- experiment.nominal_order_header() -> the header line of the table of report_nominal_order.
function M.nominal_order_header()
  return ("%-10s %5s %8s %8s %12s %12s %6s %8s  %s"):format("method", "nom.", "order R", "order w", "err R", "err w",
    "fails", "cpu s", "fit range")
end

--- experiment.report_nominal_order(res, check, fit_range): prints the row of a convergence table
--- (columns method, nom., order R, order w, err R, err w at the smallest step, fails, cpu s,
--- fit range = the string fit_range) for a measure_convergence result, and checks that both
--- fitted orders are within 0.15 of the nominal order; a failed fit is printed and is a failure.
function M.report_nominal_order(res, check, fit_range)
  local name, order = res.method, res.nominal_order
  if res.error then
    print(("%-10s %5d  failed in the fit range: %s"):format(name, order, res.error))
    check(false, name .. ": failed in the fit range")
    return
  end
  local last = res.table[#res.table]
  print(("%-10s %5d %8.3f %8.3f %12.3e %12.3e %6d %8.3f  %s"):format(name, order, res.order_R, res.order_omega,
    last.err_R or 0 / 0, last.err_omega or 0 / 0, res.failed_steps, res.cpu_time, fit_range))
  check(math.abs(res.order_R - order) <= 0.15 and math.abs(res.order_omega - order) <= 0.15,
    ("%s: fitted order %.3f / %.3f not within 0.15 of %d"):format(name, res.order_R, res.order_omega, order))
end

--- experiment.error_ratio_range(a, b, steps, hmin, hmax) -> smallest, largest
--- a, b: error tables (rows with err_R, err_omega, as error_table makes them) on the same steps.
--- Over the steps h with hmin <= h <= hmax where neither method failed, the ratio
--- max(err_R(a) / err_R(b), err_omega(a) / err_omega(b)): its smallest (math.huge if there is no
--- such step) and its largest value (0 if none). largest < 1: a is more accurate in both at every h.
function M.error_ratio_range(a, b, steps, hmin, hmax)
  local lo, hi = math.huge, 0
  for i, h in ipairs(steps) do
    if h >= hmin and h <= hmax and a[i].err_R and b[i].err_R then
      local rR, rw = a[i].err_R / b[i].err_R, a[i].err_omega / b[i].err_omega
      lo, hi = math.min(lo, math.max(rR, rw)), math.max(hi, rR, rw)
    end
  end
  return lo, hi
end

--- experiment.label_hidden_series(series [, n, rel]) -> series: a series that a later one would
--- hide in a plot says so in its label: series[i].label gets " (under <label of j>)" for the first
--- j > i whose data agree with series[i]'s within rel (0.01) relative to series[j] at each of the
--- first n points (default #series[i].data), with NaN (a failed run) at the same points and at
--- least one point that is a number in both. Changes the labels in place.
function M.label_hidden_series(series, n, rel)
  rel = rel or 0.01
  for i = 1, #series do
    for j = i + 1, #series do
      local same, any = true, false
      for k = 1, n or #series[i].data do
        local a, b = series[i].data[k], series[j].data[k]
        if a == a and b == b then any = true; if math.abs(a - b) > rel * math.abs(b) then same = false end
        elseif (a == a) ~= (b == b) then same = false end
      end
      if same and any then series[i].label = ("%s (under %s)"):format(series[i].label, series[j].label); break end
    end
  end
  return series
end

--- experiment.convergence_plotter(opts) -> plot(field, file, ylabel, names, title)
--- opts = {results = {[method] = measure_convergence result}, steps =, out = directory,
---         slopes = {{order =, label =, method =, factor =}, ...}}.
--- plot draws field ("err_R", "err_omega") of the methods names against h (log-log, NaN where a
--- run failed, labels by label_hidden_series) into out/file, with a reference slope per entry of
--- opts.slopes through (smallest h, factor * error of that method at the smallest h).
function M.convergence_plotter(opts)
  local conv, steps = opts.results, opts.steps
  return function(field, file, ylabel, names, title)
    local ys = {}
    for _, n in ipairs(names) do
      local d = {}
      for i, row in ipairs(conv[n].table) do d[i] = row[field] or 0 / 0 end
      ys[#ys + 1] = {label = n, data = d}
    end
    M.label_hidden_series(ys, #steps)
    local slopes = {}
    for i, s in ipairs(opts.slopes) do
      slopes[i] = {order = s.order, label = s.label, through = {steps[#steps], conv[s.method].table[#steps][field] * s.factor}}
    end
    lf.plot{x = steps, y = ys, logx = true, logy = true, style = "linespoints", key = "bottom right", slopes = slopes,
            title = title, xlabel = "h", ylabel = ylabel, size = {950, 650}, file = opts.out .. "/" .. file}
  end
end

-- ------------------------------------------------------------------ energy drift

--- experiment.drift_run(system, method, h, T) -> traj, drift, record
--- lf.run at step h on [0, T], lf.drift of its energy error, and the summary record
--- {method, max_abs_error, slope, statistic, verdict, cpu_time}.
function M.drift_run(system, method, h, T)
  local tr = lf.run(system, {method = method, h = h, T = T})
  local d = lf.drift(tr)
  return tr, d, {method = method, max_abs_error = d.max_error, slope = d.slope, statistic = d.statistic,
                 verdict = d.verdict, cpu_time = tr.cpu_time}
end

--- experiment.drift_table_header() -> the header line of a drift table (drift_table_row's columns).
function M.drift_table_header()
  return ("%-10s %12s %12s %10s %9s %8s"):format("method", "max|H-H0|", "slope", "statistic", "verdict", "cpu s")
end

--- experiment.drift_table_row(record) -> one line of a drift table for a drift_run record.
function M.drift_table_row(r)
  return ("%-10s %12.4e %12.3e %10.3g %9s %8.3f"):format(r.method, r.max_abs_error, r.slope, r.statistic, r.verdict,
    r.cpu_time)
end

-- ------------------------------------------------------------------ the symmetric heavy top

--- experiment.top_invariants(body, opts) -> {h, T, tolerance, methods}
--- The four invariants of the symmetric heavy top with symmetry axis and gravity along e3 (seed
--- 003 §3.5): H, pi.e3 (pi3, spatial momentum along gravity), Pi3 (body momentum along the axis)
--- and |R^T e3|. opts = {J =, omega0 =, E0 =, h =, T =, check =}. Every method of
--- torque_methods() runs on [0, T] at step h; prints a table (header and one row per
--- method: the largest deviation of each invariant from its initial value, '*' where it is
--- conserved to round-off, <= 1e-12 max(1, |initial value|)); checks that the LIEMID family
--- conserves pi.e3 and every method |R^T e3|. Returns the summary of the table.
function M.top_invariants(body, opts)
  local J, w0, check = opts.J, opts.omega0, opts.check
  local e3 = lf.vec3{0, 0, 1}
  local pi3_0 = (body.R * lf.vec3{J[1] * w0[1], J[2] * w0[2], J[3] * w0[3]})[3]
  local Pi3_0 = J[3] * w0[3]
  local tol = function(x0) return 1e-12 * math.max(1, math.abs(x0)) end
  local observe = {gamma_norm_error = function(it) return (it.R:T() * e3):norm() - 1 end}
  print(("%-10s %12s %12s %12s %12s   %s"):format("method", "H", "pi.e3 (pi3)", "Pi3 (body)", "|R^T e3|-1", "conserved"))
  local summary = {h = opts.h, T = opts.T, tolerance = "1e-12 * max(1, |initial value|)", methods = {}}
  for _, m in ipairs(M.torque_methods()) do
    local tr = lf.run(body, {method = m.name, h = opts.h, T = opts.T, observe = observe})
    local r = {method = m.name, H = M.max_deviation(tr.energy), pi3 = M.max_deviation(tr.pi3),
               Pi3 = M.max_deviation(tr.Pi3), gamma_norm = M.max_deviation(tr.gamma_norm_error)}
    local cons = {}
    for _, k in ipairs{{"H", opts.E0}, {"pi3", pi3_0}, {"Pi3", Pi3_0}, {"gamma_norm", 1}} do
      r[k[1] .. "_conserved"] = r[k[1]] <= tol(k[2])
      if r[k[1] .. "_conserved"] then cons[#cons + 1] = k[1] end
    end
    r.conserved = cons
    summary.methods[#summary.methods + 1] = r
    local function f(v, c) return ("%11.2e%s"):format(v, c and "*" or " ") end
    print(("%-10s %s %s %s %s   %s"):format(m.name, f(r.H, r.H_conserved), f(r.pi3, r.pi3_conserved),
      f(r.Pi3, r.Pi3_conserved), f(r.gamma_norm, r.gamma_norm_conserved), table.concat(cons, ", ")))
    if m.name:match("^liemid") then
      check(r.pi3_conserved, ("%s: pi.e3 changes by %.3g (LIEMID family: round-off by construction)"):format(m.name, r.pi3))
    end
    check(r.gamma_norm_conserved, ("%s: |R^T e3| - 1 = %.3g"):format(m.name, r.gamma_norm))
  end
  return summary
end

-- ------------------------------------------------------------------ the machine

--- experiment.cpu_name() -> the CPU's model name from /proc/cpuinfo ("unknown CPU" elsewhere).
function M.cpu_name()
  local f = io.open("/proc/cpuinfo")
  local cpu = f and f:read("a"):match("model name%s*:%s*([^\n]+)") or "unknown CPU"
  if f then f:close() end
  return cpu
end

--- experiment.load_average() -> "1m 5m 15m" from /proc/loadavg ("?" elsewhere): how busy the
--- machine was while timing.
function M.load_average()
  local g = io.open("/proc/loadavg")
  local s = g and g:read("l") or "?"
  if g then g:close() end
  return s:match("^(%S+ %S+ %S+)") or s
end

return M
