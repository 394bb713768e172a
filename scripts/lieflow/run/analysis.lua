-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — analysis of integrators: convergence orders (lf.order), energy drift (lf.drift), the
-- [BOS] stress test (lf.stress_test), least-squares fits (lf.fit_linear, GSL) and JSON output
-- (lf.json, lf.write_json, lf.mkdir_p).
local core = require "lieflow.core"
local options = require "lieflow.options"
local json = require "lieflow.files.json"
local run = require "lieflow.run"
local trajectory = require "lieflow.run.trajectory"

local M = {json = json}

--- lf.fit_linear(xs, ys) -> slope, intercept, slope_stderr, resid_std
--- Ordinary least squares (GSL gsl_fit_linear, core/analysis/analysis.c). resid_std is the standard
--- deviation of the residuals about the line (n - 2 degrees of freedom); slope_stderr is nil for
--- two points (undefined), never NaN.
function M.fit_linear(xs, ys)
  if type(xs) ~= "table" or type(ys) ~= "table" then
    error(("lf.fit_linear: two arrays of numbers expected, got %s and %s"):format(type(xs), type(ys)), 2)
  end
  local r = table.pack(pcall(core.fit_linear, xs, ys))
  if not r[1] then error("lf." .. options.strip_position(r[2]), 2) end
  return table.unpack(r, 2, r.n)
end

--- lf.mkdir_p(path): create a directory and its missing parents (like mkdir -p).
function M.mkdir_p(path)
  if type(path) ~= "string" then error(("lf.mkdir_p: path (string) expected, got %s"):format(type(path)), 2) end
  return core.mkdir_p(path)
end

--- lf.write_json(path, value [, {indent=true}]) -> path: lf.json.encode(value) into a file,
--- indented by default; missing parent directories are created.
function M.write_json(path, value, opts)
  if type(path) ~= "string" then error(("lf.write_json: path (string) expected, got %s"):format(type(path)), 2) end
  local ok, s = pcall(json.encode, value, opts or {indent = true})
  if not ok then error("lf.write_json: " .. tostring(s), 2) end
  if path:find("\0", 1, true) then error("lf.write_json: the path contains a NUL byte", 2) end
  -- the whole file or nothing: a temporary file renamed when complete (core.atomic_open), and a
  -- write error (full disk, /dev/full) is an error with the OS's reason
  local wok, werr = pcall(function()
    local dir = path:match("^(.*)/[^/]*$")
    if dir and dir ~= "" then core.mkdir_p(dir) end
    local f <close> = core.atomic_open(path, "lf.write_json")
    f:write(s, "\n")
    f:commit()
  end)
  if not wok then
    local msg = options.strip_position(tostring(werr))
    error(msg:find("^lf%.write_json") and msg or ("lf.write_json: " .. msg), 2)
  end
  return path
end

-- ------------------------------------------------------------------------------ orders
local function loglog_slope(hs, errs, what, fn)
  local lx, ly = {}, {}
  for i = 1, #hs do
    local e = errs[i]
    if not (e > 0) or e == math.huge then
      error(("%s: %s error at h=%g is %s: no log-log fit possible"):format(fn, what, hs[i], tostring(e)), 3)
    end
    lx[i], ly[i] = math.log(hs[i]), math.log(e)
  end
  local slope, _, se = core.fit_linear(lx, ly)
  return slope, se
end

--- lf.order{system=, method=, T=, steps={h1, h2, ...}, reference=nil|state, rtol=1e-13,
---          newton_tol=, max_iter=}
--- Runs the method to T with each step size h (it:advance_to(T): a last shorter step if T/h is not
--- an integer) and compares with the reference state (default lf.reference(system, T, {rtol = 1e-13})):
--- the error of each field of the system's state is the manifold distance (it:error(ref)):
--- err_R = ||R - Rref||_F and err_omega = ||w - wref||_2 for rigid bodies (root sum of squares over
--- several bodies), err_y for Lie-group ODEs (Frobenius on so3/gl3, great-circle angle on s2/s3,
--- Euclidean on r<m>), ... The orders are least-squares slopes of log(err) against log(h)
--- (lf.fit_linear).
--- Returns {order = (the first field's), order_<field>=, order_<field>_stderr=, fields = {...},
---          method=, T=, table = {{h=, steps=, err_<field>=, cpu_time=}, ...}}.
--- `method` is a built-in method's name or an lf.method.
-- An array option read raw (a metatable's __len or __index cannot lie or run): a copy, or the
-- value itself when it is not a table.
local function plain_array(v, what, fn)
  if type(v) ~= "table" then return v end
  local t = {}
  for i = 1, rawlen(v) do t[i] = rawget(v, i) end
  return t
end

local ORDER_KEYS = {"system", "method", "T", "steps", "reference", "rtol"}
for _, k in ipairs(run.INTEGRATOR_KEYS) do if k ~= "rtol" and k ~= "atol" then ORDER_KEYS[#ORDER_KEYS + 1] = k end end

function M.order(opts)
  local fn = "lf.order"
  if type(opts) ~= "table" then error(("%s: options table {system=, method=, T=, steps={...}} expected, got %s"):format(fn, type(opts)), 2) end
  run.check_keys(opts, ORDER_KEYS, fn)
  if opts.system == nil then error(fn .. ": option 'system' is required", 2) end
  local smt = type(opts.system) == "userdata" and getmetatable(opts.system)
  if not (smt and smt.__name == "lf.system") then
    error(("%s: option 'system' must be a system (lf.rigidbody, lf.lie_ode, ...), got %s"):format(fn,
      smt and smt.__name or type(opts.system)), 2)
  end
  run.check_method(opts.method, fn)
  local T = run.positive(opts.T, "option 'T' (final time)", fn)
  local hs = plain_array(opts.steps, "steps", fn)
  if type(hs) ~= "table" or #hs < 2 then
    error(("%s: option 'steps' must list at least 2 step sizes, got %s"):format(fn,
      type(hs) == "table" and (#hs .. " value(s)") or type(hs)), 2)
  end
  local seen = {}
  for i = 1, #hs do
    run.positive(hs[i], ("steps[%d]"):format(i), fn)
    run.step_count(T, hs[i], fn)
    if seen[hs[i]] then error(("%s: step size %g listed twice in 'steps'"):format(fn, hs[i]), 2) end
    seen[hs[i]] = true
  end
  local fields = opts.system.fields
  local ref = opts.reference
  if ref == nil then
    ref = core.reference(opts.system, T, {rtol = opts.rtol or 1e-13})
  else
    local missing
    if type(ref) == "table" then
      for _, f in ipairs(fields) do if ref[f] == nil then missing = missing or f end end
    end
    if type(ref) ~= "table" or missing then
      error(("%s: option 'reference' must be a table {%s=} (the state at T)%s"):format(fn, table.concat(fields, "=, "),
        missing and (", field '%s' is missing"):format(missing) or ""), 2)
    end
  end
  local rows, errs = {}, {}
  for _, f in ipairs(fields) do errs[f] = {} end
  for i, h in ipairs(hs) do
    local it = run.integrator(opts.method, opts.system, run.integrator_opts(opts, h, {rtol = true, atol = true}))
    local c0 = os.clock()
    it:advance_to(T)
    local cpu = os.clock() - c0
    local e = it:error(ref)
    rows[i] = {h = h, steps = it.steps, cpu_time = cpu}
    for _, f in ipairs(fields) do
      errs[f][i] = e[f]
      rows[i]["err_" .. f] = e[f]
    end
  end
  local res = {method = run.method_name(opts.method), T = T, table = rows, fields = fields}
  for k, f in ipairs(fields) do
    local p, se = loglog_slope(hs, errs[f], f, fn)
    res["order_" .. f], res["order_" .. f .. "_stderr"] = p, se
    if k == 1 then res.order = p end
  end
  return res
end

-- ------------------------------------------------------------------------------ drift
--[[ lf.drift: does the energy error drift or stay bounded?

The energy error e(t) = E(t) - E(0) of a symplectic / variational method oscillates about a constant
for exponentially long times (it conserves a modified energy); a method that is not conjugate
symplectic shows a systematic trend growing linearly in t on top of the oscillation ([BOS] §3:
O(T h^2)). We fit e(t) ~ a + s t by least squares (lf.fit_linear) and compare the trend over the
run with the oscillation about it:

    statistic = |s| (t_end - t_0) / sigma,   sigma = std of the residuals e - (a + s t)

i.e. how many oscillation standard deviations the fitted trend accumulates over the run. For a
bounded error the fitted slope averages the oscillation out and the statistic shrinks as the run
grows; for a drift it grows linearly with the length of the run. verdict = "drift" when
statistic > threshold, else "bounded". Default threshold 0.5.

Calibration ([BOS] stress test, T = 10000, lf.stress_test's default sampling every = 40 steps;
the numbers with every = 1 are in parentheses):

    method      h = 0.125          h = 0.25
    vlv         0.002  (0.003)     0.009  (0.004)     bounded
    lgvi        0.012  (0.000)     0.007  (0.000)     bounded
    eln        24.3   (24.3)      23.3   (23.2)       drift
    tln        26.7   (27.0)      13.8   (13.8)       drift
    prk        54.9   (54.6)      45.7   (45.5)       drift
    mcg        16.9   (16.9)      16.4   (16.4)       drift
    new3       16.0   (16.0)      15.8   (15.8)       drift
    liemid_ea   4.24   (4.22)      4.15   (4.20)      drift

Largest bounded value 0.012, smallest drift value 4.15: the threshold 0.5 lies 42x above the first
and 8.3x below the second (the two groups are 340x apart). Why not lower (the geometric middle is
0.22)? The bounded values grow when there are few samples: the fitted slope of a bounded signal
has a noise floor of about sqrt(12/N) oscillation std's over N independent samples; vlv and lgvi
reached 0.21 (T = 1000, every = 40, 101 samples) and 0.31 (T = 10000, every = 400, 101 samples),
and never more in any run we made (T from 500 to 10000, every from 1 to 400). 0.5 keeps those
runs bounded. The statistic of a drifting method is proportional to the length of the run
(liemid_ea: 0.38 at T = 1000, 0.84 at T = 2000, 4.2 at T = 10000): a weak drift needs a long enough
run to be called (liemid_ea from T ~ 2000 on; eln, prk, mcg, new3 from T ~ 500).
Not calibrated, for the record (T = 10000, every = 40): eln_exp 11.0 / 9.5, liemid_i 21.3 / 6.2,
akw 17.9 / 0.33, liemid_e1 0.42 / 0.81, liemid_e2 0.40 / 0.81 (h = 0.125 / 0.25). The first-order
liemid_e1/e2 have energy slopes that scale like h^2 (ratio 4.0 and 4.1) but an oscillation ~40x
larger than vlv's: at h = 0.125 their trend over T = 10000 is only 0.4 std's, called "bounded".

Reliability: the residuals about the fitted line must change sign often enough for the run to
resolve the oscillation; fewer than 20 sign changes (~10 periods) and a slow oscillation cannot be
told from a trend; with fewer than 200 samples the noise floor above approaches the threshold.
Either way the result has reliable = false (the verdict is still given). The stress
runs above have 360-930 sign changes at T = 10000 and 7-19 at T = 200.

Round-off rule: when max |e| <= roundoff (default 1e-11 max(1, |E(0)|)), the energy is conserved
to round-off and the verdict is "bounded" whatever the statistic (an energy-preserving method's
error is a random walk of rounding errors: a trend, but not a method's drift).
]]
M.drift_threshold = 0.5
M.drift_min_crossings = 20
M.drift_min_samples = 200
M.drift_rule = "statistic = |slope| * (t_end - t_0) / std(residuals of the linear fit of energy_error on t); " ..
  "verdict 'drift' if statistic > threshold, else 'bounded' ('bounded' too when max |energy_error| <= roundoff)"

--- lf.drift(traj [, {threshold=0.5, roundoff=}]) -> {slope=, intercept=, slope_stderr=,
---   resid_std=, statistic=, threshold=, verdict="drift"|"bounded", rule=, max_error=, roundoff=,
---   span= (t_end - t_0), samples=, crossings= (sign changes of the residuals), reliable=}
--- traj: a trajectory from lf.run, or any table with arrays t and energy_error.
function M.drift(traj, opts)
  local fn = "lf.drift"
  if trajectory.is_trajectory(traj) then trajectory.check_in_memory(traj, fn) end
  -- (fields read under pcall: a table whose __index raises, e.g. an autodiff value, is not a trajectory)
  local okf, tt, ee = pcall(function() return traj.t, traj.energy_error end)
  if type(traj) ~= "table" or not okf or type(tt) ~= "table" or type(ee) ~= "table" then
    error(fn .. ": argument #1 must be a trajectory (lf.run) or a table with arrays t and energy_error", 2)
  end
  if opts ~= nil and type(opts) ~= "table" then error(("%s: options must be a table, got %s"):format(fn, type(opts)), 2) end
  opts = opts or {}
  run.check_keys(opts, {"threshold", "roundoff"}, fn)
  local threshold = opts.threshold == nil and M.drift_threshold or opts.threshold
  run.positive(threshold, "option 'threshold'", fn)
  local t, e = traj.t, traj.energy_error
  -- raw lengths and elements: a __len or __index on the arrays can neither lie nor run
  local n, ne = rawlen(t), rawlen(e)
  if n < 3 then error(("%s: at least 3 samples needed, the trajectory has %d"):format(fn, n), 2) end
  if ne ~= n then error(("%s: t and energy_error differ in length (%d and %d)"):format(fn, n, ne), 2) end
  local ok, slope, intercept, se, rs = pcall(core.fit_linear, t, e)
  if not ok then error(fn .. ": " .. tostring(slope), 2) end
  local span = rawget(t, n) - rawget(t, 1)
  local maxerr = 0
  for i = 1, n do maxerr = math.max(maxerr, math.abs(rawget(e, i))) end
  local E0 = 0
  if traj.energy ~= nil then
    E0 = type(traj.energy) == "table" and rawget(traj.energy, 1) or nil
    if type(E0) ~= "number" then
      error(fn .. ": traj.energy must be an array of numbers (its first entry sets the round-off level)", 2)
    end
  end
  local roundoff = opts.roundoff == nil and 1e-11 * math.max(1, math.abs(E0)) or opts.roundoff
  if type(roundoff) ~= "number" or not (roundoff >= 0) then
    error(("%s: option 'roundoff' must be a number >= 0, got %s"):format(fn, tostring(opts.roundoff)), 2)
  end
  -- |slope| span / rs, in an order that cannot overflow to inf * 0 (data up to 1e308)
  local stat
  if slope == 0 then stat = 0
  elseif rs > 0 then stat = (math.abs(slope) / rs) * span
  else stat = math.huge end
  if stat ~= stat then
    error(("%s: the drift statistic is undefined (slope %g, residual std %g, span %g)"):format(fn, slope, rs, span), 2)
  end
  local verdict = (stat > threshold and maxerr > roundoff) and "drift" or "bounded"
  -- sign changes of the residuals: how many oscillations the run resolves (in units of the
  -- largest error, a power of two, so that errors near 1e308 do not overflow to inf - inf)
  local scale = maxerr > 0 and 2.0 ^ math.floor(math.log(maxerr, 2)) or 1
  local crossings, prev = 0, nil
  for i = 1, n do
    local r = rawget(e, i) / scale - (intercept / scale + (slope / scale) * rawget(t, i))
    if r ~= 0 then
      local pos = r > 0
      if prev ~= nil and pos ~= prev then crossings = crossings + 1 end
      prev = pos
    end
  end
  return {slope = slope, intercept = intercept, slope_stderr = se, resid_std = rs, statistic = stat,
          threshold = threshold, verdict = verdict, rule = M.drift_rule, max_error = maxerr,
          roundoff = roundoff, span = span, samples = n, crossings = crossings,
          reliable = crossings >= M.drift_min_crossings and n >= M.drift_min_samples}
end

-- ------------------------------------------------------------------------------ stress test
--- The [BOS] stress problem (§3): J = diag(2, 2, 4), U = (||R - I||_F - 1)^2 - alpha/||R - Rm||_F
--- with alpha = 0.3, Rm = exp(v_m), v_m = (2.5, 0, 2.5)/sqrt 2, R0 = exp(0, 0.7227, 0),
--- w0 = (0, 0, 0.625).
function M.stress_system(opts)
  if opts ~= nil and type(opts) ~= "table" then
    error(("lf.stress_system: argument #1 must be an options table {alpha = }, got %s"):format(type(opts)), 2)
  end
  opts = opts or {}
  run.check_keys(opts, {"alpha"}, "lf.stress_system")
  local s = 2.5 / math.sqrt(2)
  local ok, sys = pcall(core.rigidbody, {
    inertia = {2, 2, 4},
    R = core.so3.exp{0, 0.7227, 0},
    omega = {0, 0, 0.625},
    potential = core.potential.stress{alpha = opts.alpha == nil and 0.3 or opts.alpha, Rm = core.so3.exp{s, 0, s}},
  })
  if not ok then error("lf.stress_system: " .. tostring(sys), 2) end
  return sys
end

--- lf.stress_test(method, {h = {0.125, 0.25} | number, T = 10000, every = 40, threshold=,
---                         progress=, newton_tol=, max_iter=})
--- -> {method=, T=, every=, runs = {{h=, slope=, verdict=, statistic=, drift=, cpu_time=, steps=,
---     traj=}, ...}, slope= (of the first h), verdict= ("drift" if any run drifts), ratio=
---     slope(h2)/slope(h1) and exponent= log(ratio)/log(h2/h1) (with two or more h and both slopes nonzero; [BOS]
---     says O(T h^2): ratio ~4 and exponent ~2 between h = 0.125 and 0.25)}.
--- `method` is a built-in method's name or an lf.method.
local STRESS_KEYS = {"h", "T", "every", "progress", "threshold"}
for _, k in ipairs(run.INTEGRATOR_KEYS) do STRESS_KEYS[#STRESS_KEYS + 1] = k end

function M.stress_test(method, opts)
  local fn = "lf.stress_test"
  run.check_method(method, fn)
  if opts ~= nil and type(opts) ~= "table" then error(("%s: options must be a table, got %s"):format(fn, type(opts)), 2) end
  opts = opts or {}
  run.check_keys(opts, STRESS_KEYS, fn)
  local hs = opts.h == nil and {0.125, 0.25} or plain_array(opts.h, "h", fn)
  if type(hs) == "number" then hs = {hs} end
  if type(hs) ~= "table" or #hs < 1 then error(fn .. ": option 'h' must be a step size or a list of them", 2) end
  local seen = {}
  for i = 1, #hs do
    run.positive(hs[i], ("h[%d]"):format(i), fn)
    -- the same h twice: ratio 1 and exponent log(1)/log(1) = NaN
    if seen[hs[i]] then error(("%s: step size %g listed twice in 'h'"):format(fn, hs[i]), 2) end
    seen[hs[i]] = true
  end
  local T = opts.T == nil and 10000 or opts.T
  run.positive(T, "option 'T'", fn)
  local every = run.every_option(opts.every, 40, fn)
  for _, h in ipairs(hs) do -- lf.drift fits a line: at least 3 samples
    local samples = run.step_count(T, h, fn) // every + 1
    if samples < 3 then
      error(("%s: T = %g with h = %g and every = %d gives %d samples; the drift fit needs at least 3 (raise T or "
             .. "lower every)"):format(fn, T, h, every, samples), 2)
    end
  end
  local res = {method = run.method_name(method), T = T, every = every, runs = {}, verdict = "bounded"}
  for i, h in ipairs(hs) do
    local ro = run.integrator_opts(opts, h)
    ro.method, ro.T, ro.every, ro.progress = method, T, every, opts.progress
    local traj = run.run(M.stress_system(), ro)
    local d = M.drift(traj, {threshold = opts.threshold})
    res.runs[i] = {h = h, slope = d.slope, verdict = d.verdict, statistic = d.statistic, drift = d,
                   cpu_time = traj.cpu_time, wall_time = traj.wall_time, steps = traj.steps, traj = traj}
    if d.verdict == "drift" then res.verdict = "drift" end
  end
  res.slope = res.runs[1].slope
  res.statistic = res.runs[1].statistic
  res.threshold = res.runs[1].drift.threshold
  if #hs >= 2 then
    local h1, h2 = hs[1], hs[2]
    -- defined when both slopes are nonzero (a method that keeps the energy exactly has none): a ratio
    -- 0/0 or x/0 would be NaN or inf
    local s1, s2 = res.runs[1].slope, res.runs[2].slope
    if s1 ~= 0 and s2 ~= 0 then
      res.ratio = s2 / s1
      res.exponent = math.log(math.abs(res.ratio)) / math.log(h2 / h1)
    end
  end
  return res
end

return M
