-- lieflow — lf.run: integrate a system and record invariants along the way (trajectories).
--
--   traj = lf.run(system, {method=, h=, T=, every=1, observe={...}, progress=nil|true|false,
--                          newton_tol=, max_iter=})
--
-- The stepping happens in C: between two samples the integrator takes `every` steps in one call
-- (it:step(every)), so the cost of observing is one sample per `every` steps. A run takes
-- n = floor(T/h) steps (T/h within 1e-12 of an integer counts as that integer); when n h falls
-- short of T by more than 1e-9 h (or T < h), a last shorter step lands on T exactly (it:advance_to).
-- T/h >= 2^53 is an error. Samples: t = 0, every `every` steps, and the final time (always recorded
-- once).
--
-- Columns (traj.columns lists them in order; traj[name] is an array, one entry per sample):
--   t, energy, energy_error (E - E(0)), pi1, pi2, pi3 (total spatial angular momentum),
--   Pi1, Pi2, Pi3 (body momentum J w), casimir (|Pi|), orthogonality (max_i ||R_i^T R_i - I||),
--   then one column per observer, sorted by name. With several bodies, Pi and casimir are those
--   of body 1.
-- observe: {name = function(it) return number end, ...} (names: no commas, quotes or control
-- characters, as they head CSV columns); array entries may also name built-in
-- columns ("energy", ...), which are always recorded anyway. An observer that errors or returns a
-- non-number stops the run with an error naming it and the time.
-- progress: nil = a progress line on stderr (\r, percentage, steps/s) when stderr is a terminal
-- and the run has lasted more than 1 s; true = always; false = never.
local core = require "lieflow.core"
local luamethod = require "lieflow.luamethod"
local json = require "lieflow.json"

local M = {}

M.builtin_columns = {"t", "energy", "energy_error", "pi1", "pi2", "pi3", "Pi1", "Pi2", "Pi3",
                     "casimir", "orthogonality"}
local is_builtin = {}
for _, c in ipairs(M.builtin_columns) do is_builtin[c] = true end
-- trajectory fields and methods: not usable as observer names
local reserved = {}
for _, c in ipairs{"columns", "method", "h", "T", "every", "steps", "samples", "cpu_time", "wall_time",
                   "write_csv", "to_json", "totable", "plot"} do reserved[c] = true end

local traj_mt = {__name = "lf.trajectory"}
local traj_methods = {}
traj_mt.__index = traj_methods

--- Make an integrator for a method name or an lf.method (as lf.integrator does).
function M.integrator(method, system, opts)
  if luamethod.is(method) then return luamethod.integrator(method, system, opts) end
  return core.integrator(method, system, opts)
end

local function method_name(m)
  if luamethod.is(m) then return m.name end
  return m
end
M.method_name = method_name

local function check_method(method, fn)
  if type(method) == "string" or luamethod.is(method) then return end
  if method == nil then error(("%s: option 'method' (a method name or an lf.method) is required"):format(fn), 3) end
  error(("%s: option 'method' must be a method name or an lf.method, got %s"):format(fn, type(method)), 3)
end
M.check_method = check_method

local function positive(x, what, fn)
  if type(x) ~= "number" or x ~= x or x <= 0 or x == math.huge then
    error(("%s: %s must be a finite positive number, got %s"):format(fn, what, tostring(x)), 3)
  end
  return x
end
M.positive = positive

-- Most steps a run may take: beyond 2^53 neither the step count nor t = k h is exact (and such a
-- run would not finish anyway).
M.max_steps = 2 ^ 53

--- Number of whole steps of h in T (T/h within 1e-12 of an integer counts as that integer);
--- an error when T/h is too large to be counted (a run that would never end).
local function step_count(T, h, fn)
  local q = T / h
  if not (q < M.max_steps) then
    error(("%s: T/h = %g/%g = %g steps is too many (at most 2^53)"):format(fn, T, h, q), 3)
  end
  return math.floor(q * (1 + 1e-12))
end
M.step_count = step_count

local function progress_line(name, h, done, n, t, rate, final)
  local pct = n > 0 and 100 * done / n or 100
  io.stderr:write(("\rlf.run %s h=%g: %5.1f%%  t=%-10.6g %9.3g steps/s%s"):format(
    name, h, pct, t, rate, final and "\n" or ""))
  io.stderr:flush()
end

--- lf.run(system, opts) -> trajectory (see the header of this file).
function M.run(system, opts)
  local fn = "lf.run"
  if system == nil then error(("%s: argument #1 must be a system (lf.rigidbody, lf.bodies, ...), got nil"):format(fn), 2) end
  if type(opts) ~= "table" then error(("%s: argument #2 must be an options table {method=, h=, T=, ...}, got %s"):format(fn, type(opts)), 2) end
  check_method(opts.method, fn)
  local h = positive(opts.h, "option 'h' (step size)", fn)
  local T = positive(opts.T, "option 'T' (final time)", fn)
  local every = opts.every == nil and 1 or opts.every
  if math.type(every) ~= "integer" then
    if type(every) == "number" and every == math.floor(every) then every = math.tointeger(every) end
  end
  if math.type(every) ~= "integer" or every < 1 then
    error(("%s: option 'every' must be an integer >= 1, got %s"):format(fn, tostring(opts.every)), 2)
  end
  local progress = opts.progress
  if progress ~= nil and type(progress) ~= "boolean" then
    error(("%s: option 'progress' must be true, false or nil, got %s"):format(fn, type(progress)), 2)
  end

  -- observers
  local observers, obs_names = {}, {}
  if opts.observe ~= nil then
    if type(opts.observe) ~= "table" then
      error(("%s: option 'observe' must be a table {name = function(it) ... end}, got %s"):format(fn, type(opts.observe)), 2)
    end
    for k, f in pairs(opts.observe) do
      if math.type(k) == "integer" then
        if not (type(f) == "string" and is_builtin[f]) then
          error(("%s: observe[%d] = %s: array entries must name built-in columns (%s); give other observers as name = function(it) ... end")
            :format(fn, k, tostring(f), table.concat(M.builtin_columns, ", ")), 2)
        end
      elseif type(k) ~= "string" then
        error(("%s: observer keys must be column names (strings), got %s"):format(fn, type(k)), 2)
      elseif is_builtin[k] then
        error(("%s: observer '%s' clashes with a built-in column"):format(fn, k), 2)
      elseif reserved[k] then
        error(("%s: observer name '%s' is reserved (a trajectory field or method)"):format(fn, k), 2)
      elseif k == "" or k:find("[%c,\"]") then
        -- the name is a CSV header field (write_csv): no commas, quotes, line breaks
        error(("%s: observer name %q must be non-empty and free of commas, quotes and control characters"):format(fn, k), 2)
      elseif type(f) ~= "function" then
        error(("%s: observer '%s' must be a function(it) returning a number, got %s"):format(fn, k, type(f)), 2)
      else
        observers[k] = f
        obs_names[#obs_names + 1] = k
      end
    end
    table.sort(obs_names)
  end

  local name = method_name(opts.method)
  local it = M.integrator(opts.method, system, {h = h, newton_tol = opts.newton_tol, max_iter = opts.max_iter})
  local columns = {}
  for i, c in ipairs(M.builtin_columns) do columns[i] = c end
  for _, c in ipairs(obs_names) do columns[#columns + 1] = c end
  local data = {}
  for _, c in ipairs(columns) do data[c] = {} end

  local E0 = it:energy()
  local nrow = 0
  local cT, cE, cdE = data.t, data.energy, data.energy_error
  local cp1, cp2, cp3, cP1, cP2, cP3 = data.pi1, data.pi2, data.pi3, data.Pi1, data.Pi2, data.Pi3
  local cC, cO = data.casimir, data.orthogonality
  local nobs = #obs_names
  -- Fast path: an integrator may offer it:observe() -> t, E, pi1, pi2, pi3, Pi1, Pi2, Pi3,
  -- orthogonality (Pi of body 1) in one call; otherwise the fields are read one by one.
  local fast = it.observe
  if type(fast) ~= "function" then fast = nil end
  local function sample()
    nrow = nrow + 1
    local r = nrow
    local t, E, p1, p2, p3, P1, P2, P3, orth
    if fast then
      t, E, p1, p2, p3, P1, P2, P3, orth = fast(it)
    else
      t, E = it.t, it:energy()
      local pi, Pi = it.spatial_momentum, it.momentum
      if getmetatable(Pi) == nil then Pi = Pi[1] end -- several bodies: body 1
      p1, p2, p3, P1, P2, P3 = pi[1], pi[2], pi[3], Pi[1], Pi[2], Pi[3]
      orth = it.orthogonality
    end
    cT[r], cE[r], cdE[r] = t, E, E - E0
    cp1[r], cp2[r], cp3[r] = p1, p2, p3
    cP1[r], cP2[r], cP3[r] = P1, P2, P3
    cC[r] = math.sqrt(P1 * P1 + P2 * P2 + P3 * P3)
    cO[r] = orth
    for j = 1, nobs do
      local k = obs_names[j]
      local ok, v = pcall(observers[k], it)
      if not ok then error(("%s: observer '%s' failed at t=%.15g: %s"):format(fn, k, t, tostring(v)), 0) end
      if type(v) ~= "number" then
        error(("%s: observer '%s' returned %s at t=%.15g, expected a number"):format(fn, k, type(v), t), 0)
      end
      data[k][r] = v
    end
  end

  local n = step_count(T, h, fn)
  local isatty = core.isatty and core.isatty(2)
  local show = progress == true or (progress == nil and isatty)
  local clock = core.wall_time or os.clock
  local wall0, cpu0 = clock(), os.clock()
  local shown, last = false, wall0
  -- check the clock about every 256 steps or every sample, whichever is rarer
  local check_every = math.max(1, 256 // every)

  local function fail(err, t)
    error(("%s: %s with h=%g failed near t=%.15g: %s"):format(fn, name, h, t, tostring(err)), 0)
  end

  sample()
  local done, k = 0, 0
  while done < n do
    local m = math.min(every, n - done)
    local ok, err = pcall(it.step, it, m)
    if not ok then fail(err, it.t) end
    done = done + m
    sample()
    k = k + 1
    if show and k % check_every == 0 then
      local now = clock()
      if (progress == true or now - wall0 > 1) and now - last > 0.2 then
        progress_line(name, h, done, n, it.t, done / (now - wall0), false)
        shown, last = true, now
      end
    end
  end
  -- n h short of T (by more than round-off): one last shorter step lands on T exactly; with
  -- n = 0 (T far below h) too, so that the final time is always recorded
  if n == 0 or T - n * h > 1e-9 * h then
    local ok, err = pcall(it.advance_to, it, T)
    if not ok then fail(err, it.t) end
    sample()
  end
  local wall = clock() - wall0
  local cpu = os.clock() - cpu0
  local steps = it.steps or n
  if shown or progress == true then progress_line(name, h, n, n, it.t, steps / math.max(wall, 1e-9), true) end

  local traj = {columns = columns, method = name, h = h, T = T, every = every, steps = steps,
                samples = nrow, cpu_time = cpu, wall_time = wall}
  for c, a in pairs(data) do traj[c] = a end
  return setmetatable(traj, traj_mt)
end

--- traj:write_csv(path) -> path: header row of column names, then one row per sample (%.17g).
--- The file appears complete or not at all (a temporary file renamed at the end); write errors
--- (full disk, /dev/full) are errors with the OS's reason.
function traj_methods:write_csv(path)
  if getmetatable(self) ~= traj_mt then
    error(("write_csv: call it as traj:write_csv(path) on a trajectory, got %s"):format(type(self)), 2)
  end
  if type(path) ~= "string" then error(("write_csv: path (string) expected, got %s"):format(type(path)), 2) end
  if path:find("\0", 1, true) then error("write_csv: the path contains a NUL byte", 2) end
  local ok, err = pcall(function()
    local f <close> = core.atomic_open(path, "write_csv")
    local cols = self.columns
    f:write(table.concat(cols, ","), "\n")
    local arrays = {}
    for i, c in ipairs(cols) do arrays[i] = self[c] end
    local fmt = ("%.17g,"):rep(#cols):sub(1, -2) .. "\n"
    local vals, buf = {}, {}
    for r = 1, #arrays[1] do
      for i = 1, #cols do vals[i] = arrays[i][r] end
      buf[#buf + 1] = fmt:format(table.unpack(vals, 1, #cols))
      if #buf == 256 then f:write(table.concat(buf)); buf = {} end
    end
    f:write(table.concat(buf))
    f:commit()
  end)
  if not ok then error(err, 2) end
  return path
end

--- The trajectory as plain data: {method=, h=, T=, every=, steps=, samples=, cpu_time=,
--- wall_time=, columns={...}, data={name = array, ...}}.
function traj_methods:totable()
  local data = {}
  for _, c in ipairs(self.columns) do data[c] = self[c] end
  return {method = self.method, h = self.h, T = self.T, every = self.every, steps = self.steps,
          samples = self.samples, cpu_time = self.cpu_time, wall_time = self.wall_time,
          columns = self.columns, data = data}
end
traj_mt.__tojson = traj_methods.totable

--- traj:to_json([{indent=true}]) -> string (lf.json.encode of traj:totable()).
function traj_methods:to_json(opts) return json.encode(self:totable(), opts) end

--- traj:plot{y={"energy_error", ...}, x="t", file=, title=, ...}: columns against t with lf.plot
--- (other fields go to lf.plot unchanged). Returns what lf.plot returns.
function traj_methods:plot(opts)
  opts = opts or {}
  if type(opts) ~= "table" then error("traj:plot: options table expected", 2) end
  -- lf.plot lives in scripts/lieflow/plot.lua; looked up at call time (no load-time cycle)
  local lfmod = package.loaded["lieflow"]
  local plot = type(lfmod) == "table" and lfmod.plot
  if not plot then
    local p = require "lieflow.plot"
    plot = type(p) == "function" and p or p.plot
  end
  local ys = opts.y or {"energy_error"}
  if type(ys) == "string" then ys = {ys} end
  local series = {}
  for i, y in ipairs(ys) do
    if type(y) == "string" then
      if not self[y] or type(self[y]) ~= "table" then
        error(("traj:plot: unknown column '%s' (columns: %s)"):format(y, table.concat(self.columns, ", ")), 2)
      end
      series[i] = {label = y, data = self[y]}
    else
      series[i] = y
    end
  end
  local xname = opts.x or "t"
  if type(xname) == "string" and type(self[xname]) ~= "table" then
    error(("traj:plot: unknown column '%s'"):format(xname), 2)
  end
  local p = {}
  for k, v in pairs(opts) do p[k] = v end
  p.x = type(xname) == "string" and self[xname] or xname
  p.y = series
  p.xlabel = p.xlabel or (type(xname) == "string" and xname or nil)
  p.title = p.title or ("%s, h = %g"):format(self.method, self.h)
  return plot(p)
end

traj_mt.__tostring = function(t)
  return ("lf.trajectory(%s, h = %g, T = %g, %d samples, columns: %s)"):format(
    t.method, t.h, t.T, t.samples, table.concat(t.columns, " "))
end

-- Lines of f, at most `cap` bytes each: a file that is not text (/dev/zero, /dev/full, a binary)
-- gives an error instead of one endless line that eats the memory. Returns an iterator.
local function capped_lines(f, path, cap)
  local buf, pos = "", 1
  return function()
    while true do
      local nl = buf:find("\n", pos, true)
      if nl then
        local l = buf:sub(pos, nl - 1)
        pos = nl + 1
        return l
      end
      if #buf - pos + 1 > cap then
        error(("read_csv: '%s' has a line longer than %d bytes: not a CSV file"):format(path, cap), 0)
      end
      local chunk, err = f:read(65536)
      if not chunk then
        if err then error(("read_csv: cannot read '%s': %s"):format(path, err), 0) end
        if pos <= #buf then
          local l = buf:sub(pos)
          buf, pos = "", 1
          return l
        end
        return nil
      end
      buf, pos = buf:sub(pos) .. chunk, 1
    end
  end
end

M.read_csv_max_line = 1 << 20

--- read_csv(path) -> {columns = {...}, [name] = array, ...}: reads what write_csv wrote.
function M.read_csv(path)
  if type(path) ~= "string" then error(("read_csv: path (string) expected, got %s"):format(type(path)), 2) end
  if path:find("\0", 1, true) then error("read_csv: the path contains a NUL byte", 2) end
  local f, err = io.open(path, "r")
  if not f then error(("read_csv: cannot open '%s': %s"):format(path, err), 2) end
  local ok, res = pcall(function()
    local next_line = capped_lines(f, path, M.read_csv_max_line)
    local header = next_line()
    -- a directory opens but cannot be read ("Is a directory": raised by capped_lines); only a
    -- readable end of file is "empty"
    if not header then error(("read_csv: '%s' is empty"):format(path), 0) end
    local out = {columns = {}}
    for c in header:gmatch("[^,]+") do out.columns[#out.columns + 1] = c; out[c] = {} end
    local r = 0
    for line in next_line do
      if line ~= "" then
        r = r + 1
        local i = 0
        for v in line:gmatch("[^,]+") do
          i = i + 1
          local x = tonumber(v)
          if not x then
            x = ({nan = 0 / 0, ["-nan"] = 0 / 0, inf = math.huge, ["-inf"] = -math.huge})[v]
          end
          if not x or i > #out.columns then
            error(("read_csv: %s line %d: bad field %d '%s'"):format(path, r + 1, i, v), 0)
          end
          out[out.columns[i]][r] = x
        end
        if i ~= #out.columns then
          error(("read_csv: %s line %d has %d fields, expected %d"):format(path, r + 1, i, #out.columns), 0)
        end
      end
    end
    return out
  end)
  f:close()
  if not ok then error(res, 2) end
  return res
end

M.trajectory_mt = traj_mt
function M.is_trajectory(x) return getmetatable(x) == traj_mt end

return M
