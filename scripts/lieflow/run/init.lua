-- SPDX-License-Identifier: GPL-3.0-or-later
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
-- Columns (traj.columns lists them in order; traj[name] is an array, one entry per sample): t,
-- then the system's own columns (system:columns(), from its observables), with energy_error
-- (E - E(0)) right after energy when the system has an energy, then one column per observer,
-- sorted by name. Rigid bodies: t, energy, energy_error, pi1, pi2, pi3 (total spatial angular
-- momentum), Pi1, Pi2, Pi3 (body momentum J w of body 1), casimir (|Pi| of body 1),
-- orthogonality (max_i ||R_i^T R_i - I||). Lie-group ODEs: t, [energy, energy_error],
-- manifold_defect.
-- observe: {name = function(it) return number end, ...} (names: no commas, quotes or control
-- characters, as they head CSV columns); array entries may also name the system's columns
-- ("energy", ...), which are always recorded anyway. An observer that errors or returns a
-- non-number stops the run with an error naming it and the time.
-- adapt = true | {monitor = "torque" | function(state) return rate end}: reversible adaptive steps
-- (lf.integrator's option; h is the step at the start): samples every `every` steps, the last step
-- landing on T, and the columns step (the last time step) and rho (the step density).
-- thermostat = {kind = "langevin", T = kT, gamma =, gamma_rot =, seed =}: a Langevin thermostat of
-- rigid bodies (lf.integrator's option): friction -gamma v and -gamma_rot w_k with the matching noise,
-- reproducible from the seed (checkpoints carry the noise counter).
-- A system with a controller (lf.rigidbody{controller = {every = k, fn = ...}}) records its held output,
-- control1..3 (the body torque of body 1; control_force1..3 for bodies that translate; k_ for body k > 1).
-- progress: nil = a progress line on stderr (\r, percentage, steps/s) when stderr is a terminal
-- and the run has lasted more than 1 s; true = always; false = never.
-- record = {"R", "omega", "quaternion", "euler_zyx", ...}: columns of the state itself, without one
-- observer per number: any field of the system (R11 .. R33 for a rotation, omega1 .. omega3 for a
-- vector, y1_w .. for a quaternion, with the item's index in front when a field holds several:
-- R2_11 ...), and for rigid bodies "quaternion" (q_w, q_x, q_y, q_z; w >= 0) and Euler angles
-- "euler_<axes>" of a convention such as zyx (intrinsic, R = R_z(a1) R_y(a2) R_x(a3)): euler_a1,
-- euler_a2, euler_a3 (of body 1; bodies k > 1 get a k_ prefix).
-- stream = "path.csv": write every sample to that CSV file as it is taken (header row, then %.17g
-- rows, flushed as it goes) instead of keeping it in memory; the trajectory then holds `file`,
-- `samples` and `last` (the final sample, column -> value) and no arrays (traj:load() reads the
-- file back). A run that fails keeps the samples taken so far in the file and says so.
-- stream = "path.h5" (or .hdf5): the same into an HDF5 file (scripts/lieflow/files/hdf5.lua),
-- written beside path and renamed when the run ends: complete, or, for a run that failed or was
-- interrupted, the samples so far with the attributes complete = 0 and error; a failed write leaves
-- no file.
-- states = true: keep the full state of every sample (each body's R and omega, each sphere's q and
-- omega, each factor of a Lie ODE) packed as doubles (scripts/lieflow/run/states.lua: 8 bytes per
-- number of the state, 96 per rigid body); traj:state(k) -> {t =, R =, omega =, ...}, traj.R[k]
-- (the field's value at sample k), traj:animate(path), traj:write_gltf(path); traj.scene describes
-- what the view draws (scripts/lieflow/run/scene.lua). With stream, the state's numbers are
-- columns of the file (CSV or HDF5).
-- memory_limit (bytes, default 1e9): a run that would keep more samples in memory (about 16 bytes
-- per value) is refused before it starts, with the advice to sample less often or to stream.
-- The trajectory, its methods and lf.read_csv / lf.read_hdf5: scripts/lieflow/run/trajectory.lua.
local core = require "lieflow.core"
local options = require "lieflow.options"
local luamethod = require "lieflow.run.luamethod"
local states = require "lieflow.run.states"
local scene = require "lieflow.run.scene"
local trajectory = require "lieflow.run.trajectory"
local events = require "lieflow.run.events"
local hdf5 = require "lieflow.files.hdf5"

local M = {}
local run_interrupt_mt
local traj_mt, columns_mt, reserved = trajectory.trajectory_mt, trajectory.columns_mt, trajectory.reserved
local strip_position = options.strip_position

--- The columns lf.run records for a system (before observers): t, the system's columns with
--- energy_error after energy.
function M.system_columns(system)
  local cols = {"t"}
  for _, c in ipairs(system:columns()) do
    cols[#cols + 1] = c
    if c == "energy" then cols[#cols + 1] = "energy_error" end
  end
  return cols
end

-- The numbers of one factor's value (a mat3, vec3, quaternion table or array), row-major.
local function numbers_of(v)
  if type(v) == "number" then return {v} end
  if type(v) == "userdata" then
    local t = v:totable()
    if type(t[1]) == "table" then return {t[1][1], t[1][2], t[1][3], t[2][1], t[2][2], t[2][3], t[3][1], t[3][2], t[3][3]} end
    return t
  end
  return v
end

-- Suffixes of a factor value's numbers: 11..33 for a 3x3 matrix, 1..3 for a vector,
-- _w _x _y _z for a quaternion, 1..m for an array.
local function suffixes(kind, n)
  if kind == "so3" or kind == "gl3" then return {"11", "12", "13", "21", "22", "23", "31", "32", "33"} end
  if kind == "s3" then return {"_w", "_x", "_y", "_z"} end
  local s = {}
  for i = 1, n do s[i] = tostring(i) end
  return s
end

-- Euler angles (a1, a2, a3) of a rotation for the intrinsic axes sequence seq (e.g. "zyx":
-- R = R_z(a1) R_y(a2) R_x(a3)), from the rotation matrix (Tait–Bryan and proper Euler sequences).
local axis_index = {x = 1, y = 2, z = 3}
local function euler(R, seq)
  local i, j, k = axis_index[seq:sub(1, 1)], axis_index[seq:sub(2, 2)], axis_index[seq:sub(3, 3)]
  local M = R:totable()
  if i ~= k then -- Tait–Bryan: i, j, k distinct
    local sgn = ((j - i) % 3 == 1) and 1 or -1
    local a2 = math.asin(math.max(-1, math.min(1, sgn * M[i][k])))
    local a1 = math.atan(-sgn * M[j][k], M[k][k])
    local a3 = math.atan(-sgn * M[i][j], M[i][i])
    return a1, a2, a3
  end
  local l = 6 - i - j -- proper Euler: i = k; l is the third axis
  local sgn = ((j - i) % 3 == 1) and 1 or -1
  local a2 = math.acos(math.max(-1, math.min(1, M[i][i])))
  local a1 = math.atan(M[j][i], -sgn * M[l][i])
  local a3 = math.atan(M[i][j], sgn * M[i][l])
  return a1, a2, a3
end
M.euler = euler

--- The recorders for lf.run's option record: {columns = {...}, values = function(it) -> numbers}.
function M.recorders(system, record, fn)
  if record == nil then return {} end
  if type(record) ~= "table" then error(("%s: option 'record' must be an array of field names, got %s"):format(fn, type(record)), 3) end
  local fields, factors, out = {}, system.factors, {}
  for _, f in ipairs(system.fields) do fields[f] = true end
  local nb = system.kind == "rigidbody" and system.n or 0
  local listed, euler_seq = {}, nil
  for _, name in ipairs(record) do
    if type(name) ~= "string" then error(("%s: option 'record' lists %s, expected field names"):format(fn, type(name)), 3) end
    -- each column once: a name twice, or two Euler sequences (both give euler_a1..a3), would leave
    -- one column holding the other's numbers
    if listed[name] then error(("%s: option 'record' lists '%s' twice"):format(fn, name), 3) end
    listed[name] = true
    if name:match("^euler_") then
      if euler_seq then
        error(("%s: option 'record' lists '%s' and '%s': both give the columns euler_a1..a3; record one Euler " ..
               "sequence per run"):format(fn, euler_seq, name), 3)
      end
      euler_seq = name
    end
    if fields[name] then
      local value = system[name]
      local many = not (type(value) == "userdata" or (type(value) == "table" and type(value[1]) == "number"))
      local items = many and value or {value}
      local cols = {}
      for k, item in ipairs(items) do
        local nums = numbers_of(item)
        local kind = (type(item) == "userdata" and #nums == 9) and "so3" or (#nums == 4 and not many and name == "y") and "s3" or "r"
        if type(item) == "table" and #nums == 4 then kind = "s3" end
        for _, sfx in ipairs(suffixes(kind, #nums)) do cols[#cols + 1] = (many and (k .. "_") or "") .. name .. sfx end
      end
      out[#out + 1] = {columns = cols, values = function(it)
        local v, r = it[name], {}
        for _, item in ipairs(many and v or {v}) do for _, x in ipairs(numbers_of(item)) do r[#r + 1] = x end end
        return r
      end}
    elseif nb > 0 and (name == "quaternion" or name:match("^euler_[xyz][xyz][xyz]$")) then
      local seq = name:match("^euler_(.*)$")
      if seq and (seq:sub(1, 1) == seq:sub(2, 2) or seq:sub(2, 2) == seq:sub(3, 3)) then
        error(("%s: record '%s': consecutive axes of an Euler sequence must differ"):format(fn, name), 3)
      end
      local cols = {}
      for k = 1, nb do
        local pre = nb > 1 and (k .. "_") or ""
        if seq then for a = 1, 3 do cols[#cols + 1] = pre .. "euler_a" .. a end
        else for _, c in ipairs{"q_w", "q_x", "q_y", "q_z"} do cols[#cols + 1] = pre .. c end end
      end
      out[#out + 1] = {columns = cols, values = function(it)
        local Rs, r = it.R, {}
        if nb == 1 then Rs = {Rs} end
        for _, R in ipairs(Rs) do
          if seq then
            local a1, a2, a3 = euler(R, seq)
            r[#r + 1], r[#r + 2], r[#r + 3] = a1, a2, a3
          else
            for _, x in ipairs(core.quat.from_matrix(R)) do r[#r + 1] = x end
          end
        end
        return r
      end}
    else
      local valid = table.concat(system.fields, ", ") .. (nb > 0 and ", quaternion, euler_<axes> (e.g. euler_zyx)" or "")
      error(("%s: option 'record' names '%s', which is not a field of this system (%s)"):format(fn, name, valid), 3)
    end
  end
  return out
end

--- Make an integrator for a method name or an lf.method (as lf.integrator does).
function M.integrator(method, system, opts)
  if luamethod.is(method) then return luamethod.integrator(method, system, opts) end
  return core.integrator(method, system, opts)
end

-- a method made by lf.rkmk (a C method from a user tableau)
local function is_rkmk(m)
  local mt = type(m) == "userdata" and getmetatable(m)
  return mt and mt.__name == "lf.rkmk_method"
end
M.is_rkmk = is_rkmk

local function method_name(m)
  if luamethod.is(m) or is_rkmk(m) then return m.name end
  return m
end
M.method_name = method_name

local function check_method(method, fn)
  if type(method) == "string" or luamethod.is(method) or is_rkmk(method) then return end
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

-- The option `every` (steps between samples): an integer >= 1 (an integral float is taken), or the default.
local function every_option(x, default, fn)
  local every = x == nil and default or x
  if math.type(every) ~= "integer" and type(every) == "number" and every == math.floor(every) then
    every = math.tointeger(every)
  end
  if math.type(every) ~= "integer" or every < 1 then
    error(("%s: option 'every' must be an integer >= 1, got %s"):format(fn,
      type(x) == "string" and ("the string %q"):format(x) or tostring(x)), 3)
  end
  return every
end
M.every_option = every_option

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

-- ------------------------------------------------------------------ options
-- The integrator options a run forwards to lf.integrator (solver and tolerances of the methods).
M.INTEGRATOR_KEYS = {"newton_tol", "max_iter", "dexpinv_order", "solver", "jacobian", "rtol", "atol", "quadrature",
                     "adapt", "thermostat"}

--- M.integrator_opts(opts, h [, skip]) -> the lf.integrator options in opts (M.INTEGRATOR_KEYS, but
--- those in the set skip) with h.
function M.integrator_opts(opts, h, skip)
  local o = {h = h}
  for _, k in ipairs(M.INTEGRATOR_KEYS) do
    if not (skip and skip[k]) then o[k] = opts[k] end
  end
  return o
end

-- The error an interrupted lf.run raises: {message =, trajectory =}, printed as its message.
run_interrupt_mt = {__name = "lf.run_interrupted", __tostring = function(e) return e.message end}
M.run_interrupt_mt = run_interrupt_mt

--- M.check_keys(opts, keys, fn [, level]): strict option tables (lieflow.options).
M.check_keys = options.check_keys

local RUN_KEYS = {"method", "h", "T", "every", "observe", "progress", "stream", "memory_limit", "record", "states",
                  "at", "events", "dense"}
for _, k in ipairs(M.INTEGRATOR_KEYS) do RUN_KEYS[#RUN_KEYS + 1] = k end

-- ------------------------------------------------------------------ lf.run in parts
-- A run's state, the table r the functions below share: fn, system, it (the integrator), name (the
-- method's), h, T, every, n (whole steps), progress, stream and out (the stream's file, or nil),
-- columns, data (column -> array), recorders, observers, obs_names, nrow (samples taken so far),
-- and the clocks and progress line: clock, wall0, cpu0, show, check_every, shown, last. Errors
-- with a position are raised at level 3: the caller of lf.run.

-- The observers of option observe: name -> function, and their names sorted.
local function observers_of(observe, builtin, is_builtin, fn)
  local observers, obs_names = {}, {}
  if observe == nil then return observers, obs_names end
  if type(observe) ~= "table" then
    error(("%s: option 'observe' must be a table {name = function(it) ... end}, got %s"):format(fn, type(observe)), 3)
  end
  for k, f in pairs(observe) do
    if math.type(k) == "integer" then
      if not (type(f) == "string" and is_builtin[f]) then
        error(("%s: observe[%d] = %s: array entries must name built-in columns (%s); give other observers as name = function(it) ... end")
          :format(fn, k, tostring(f), table.concat(builtin, ", ")), 3)
      end
    elseif type(k) ~= "string" then
      error(("%s: observer keys must be column names (strings), got %s"):format(fn, type(k)), 3)
    elseif is_builtin[k] then
      error(("%s: observer '%s' clashes with a built-in column"):format(fn, k), 3)
    elseif reserved[k] then
      error(("%s: observer name '%s' is reserved (a trajectory field or method)"):format(fn, k), 3)
    elseif k == "" or k:find("[%c,\"]") then
      -- the name is a CSV header field (write_csv): no commas, quotes, line breaks
      error(("%s: observer name %q must be non-empty and free of commas, quotes and control characters"):format(fn, k), 3)
    elseif type(f) ~= "function" then
      error(("%s: observer '%s' must be a function(it) returning a number, got %s"):format(fn, k, type(f)), 3)
    else
      observers[k] = f
      obs_names[#obs_names + 1] = k
    end
  end
  table.sort(obs_names)
  return observers, obs_names
end

-- The columns of a run in order: t and the system's (builtin), the recorded ones, the observers'.
local function run_columns(builtin, is_builtin, recorders, observers, obs_names, fn)
  local columns = {}
  for i, c in ipairs(builtin) do columns[i] = c end
  for _, rec in ipairs(recorders) do
    for _, c in ipairs(rec.columns) do
      if is_builtin[c] or observers[c] then error(("%s: recorded column '%s' clashes with another column"):format(fn, c), 3) end
      columns[#columns + 1] = c
    end
  end
  for _, c in ipairs(obs_names) do columns[#columns + 1] = c end
  return columns
end

-- Before the first step: refuse a run in memory whose samples would exceed memory_limit, or open
-- the stream (r.out) and write its header row.
local function open_output(r, memory_limit)
  local fn, n, every, columns = r.fn, r.n, r.every, r.columns
  if not r.stream then
    local cells = (n // every + 2) * #columns
    local per_sample = #columns * 16 + (r.states_layout and states.bytes_per_sample(r.states_layout) or 0)
    if (n // every + 2) * per_sample > memory_limit then
      error(("%s: the run would keep %d samples of %d columns%s in memory (about %.3g MB, memory_limit = %.3g MB): "
             .. "sample less often (every = %d or more) or stream to a file (stream = \"traj.csv\")")
            :format(fn, n // every + 2, #columns, r.states_layout and " and their states" or "",
                    (n // every + 2) * per_sample / 1e6, memory_limit / 1e6,
                    math.ceil(n * per_sample / memory_limit)), 3)
    end
  elseif hdf5.is_path(r.stream) then
    local ok, w = pcall(hdf5.writer, r.stream, columns, fn)
    if not ok then error(strip_position(w), 3) end
    r.h5 = w
  else
    local out, err = io.open(r.stream, "w")
    if not out then error(("%s: cannot open the stream '%s' for writing: %s"):format(fn, r.stream, tostring(err)), 3) end
    out:setvbuf("full")
    out:write(table.concat(columns, ","), "\n")
    r.out = out
  end
end

-- The function that takes one sample of run r: the system's columns come in one call (it:observe()
-- -> t, then its columns in order), the energy error is the energy minus its first sample, then
-- the recorders' and the observers' columns. A stream keeps only the current row in memory (row 1
-- of r.data) and writes it out.
local function sampler(r)
  local fn, it, data, columns, out, stream = r.fn, r.it, r.data, r.columns, r.out, r.stream
  local recorders, observers, obs_names = r.recorders, r.observers, r.obs_names
  local sys_cols = {}
  for i, c in ipairs(r.system:columns()) do sys_cols[i] = data[c] end
  local nsys = #sys_cols
  local ienergy
  for i, c in ipairs(r.system:columns()) do if c == "energy" then ienergy = i end end
  local cT, cdE = data.t, data.energy_error
  local E0 = r.E0 -- (runs with option at: E at t = 0, not at the first sample)
  local nobs = #obs_names
  local row_fmt = ("%.17g,"):rep(#columns):sub(1, -2) .. "\n"
  local row_vals = {}
  -- a sample of the run's integrator, or of another one (option at: a probe at an interpolated state)
  return function(itx)
    local it = itx or it
    r.nrow = r.nrow + 1
    local row = (out or r.h5) and 1 or r.nrow
    local vals = table.pack(it:observe())
    if vals.n ~= nsys + 1 then error(("%s: the integrator observed %d values, expected %d"):format(fn, vals.n - 1, nsys), 0) end
    local t = vals[1]
    cT[row] = t
    for j = 1, nsys do sys_cols[j][row] = vals[j + 1] end
    if ienergy then
      local E = vals[ienergy + 1]
      E0 = E0 or E
      cdE[row] = E - E0
    end
    for _, rec in ipairs(recorders) do
      local v = rec.values(it)
      for i, c in ipairs(rec.columns) do data[c][row] = v[i] end
    end
    if r.states_rec then r.states_rec.add(it) end
    for j = 1, nobs do
      local k = obs_names[j]
      local ok, v = pcall(observers[k], it)
      if not ok then error(("observer '%s' failed at t=%.15g: %s"):format(k, t, tostring(v)), 0) end
      if type(v) ~= "number" or v ~= v then
        error(("observer '%s' returned %s at t=%.15g, expected a number"):format(k, v ~= v and "nan" or type(v), t), 0)
      end
      data[k][row] = v
    end
    if out then
      for i, c in ipairs(columns) do row_vals[i] = data[c][1] end
      local ok, err = out:write(row_fmt:format(table.unpack(row_vals, 1, #columns)))
      if not ok then error(("%s: writing the stream '%s' failed: %s"):format(fn, stream, tostring(err)), 0) end
      r.written = r.written + 1
    elseif r.h5 then
      for i, c in ipairs(columns) do row_vals[i] = data[c][1] end
      local ok, err = pcall(r.h5.append, r.h5, table.unpack(row_vals, 1, #columns))
      if not ok then r.h5_failed = true; error(strip_position(err), 0) end
      r.written = r.written + 1
    end
  end
end

-- The trajectory of the samples run r took so far (an interrupted run hands it over).
local function partial(r)
  local tr = {columns = setmetatable(r.columns, columns_mt), method = r.name, h = r.h, T = r.T, every = r.every,
              steps = r.it.steps, samples = r.nrow, cpu_time = os.clock() - r.cpu0, wall_time = r.clock() - r.wall0,
              interrupted = true, system = r.desc, params = r.params}
  if r.out or r.h5 then tr.file = r.stream else for c, a in pairs(r.data) do tr[c] = a end end
  M.attach_states(r, tr)
  return setmetatable(tr, traj_mt)
end

-- Run r failed near t (err: a step's or a sample's error): close the stream (the samples taken stay
-- in it) and raise lf.run's error; Ctrl-C raises an error object carrying the trajectory so far.
local function fail(r, err, t)
  local fn, name = r.fn, r.name
  local where = ""
  if r.out then
    r.out:close()
    where = (" (the %d samples up to there are in '%s')"):format(r.written, r.stream)
  elseif r.h5 and r.h5_failed then
    r.h5:abort()
  elseif r.h5 then -- the samples so far, marked incomplete (complete = 0, error)
    local msg = strip_position(tostring(err))
    local tr = partial(r)
    tr.samples = r.written
    local ok = pcall(r.h5.commit, r.h5, hdf5.attrs(tr, false, ("near t=%.15g: %s"):format(t, msg)))
    where = ok and (" (the %d samples up to there are in '%s', marked incomplete)"):format(r.written, r.stream) or ""
  end
  local msg = strip_position(tostring(err))
  if msg:find("^interrupted") then
    -- Ctrl-C: an error object carrying the trajectory so far (tostring gives the message)
    error(setmetatable({message = ("%s: %s interrupted at t=%.15g after %d samples%s (the samples so far: "
                                   .. "err.trajectory)"):format(fn, name, t, r.nrow, where), trajectory = partial(r)},
                       run_interrupt_mt), 0)
  end
  error(("%s: %s with h=%g failed near t=%.15g: %s%s"):format(fn, name, r.h, t, msg, where), 0)
end

-- The recorded states of run r (option states) into trajectory tr: layout, packed blocks, scene.
function M.attach_states(r, tr)
  if not r.states_layout then return end
  tr.state_layout = r.states_layout
  if r.states_rec then tr.state_blocks = r.states_rec.finish() end
  tr.scene = r.scene
end

-- Start run r's clocks; the progress line is shown when asked (progress = true) or on a terminal.
local function start_clocks(r)
  local isatty = core.isatty and core.isatty(2)
  r.show = r.progress == true or (r.progress == nil and isatty)
  r.clock = core.wall_time or os.clock
  r.wall0, r.cpu0 = r.clock(), os.clock()
  r.shown, r.last = false, r.wall0
  -- check the clock about every 256 steps or every sample, whichever is rarer
  r.check_every = math.max(1, 256 // r.every)
end

-- The steps of run r, take() after every r.every of them: r.n steps of h, then, when n h falls
-- short of T (by more than round-off), one last shorter step that lands on T exactly; with n = 0
-- (T far below h) too, so that the final time is always recorded. Adaptive methods (r.adaptive)
-- choose their steps: they are sampled on the grid of every * h (h: the first trial step), through
-- it:advance_to.
local function step_all(r, take)
  local it, n, every, h = r.it, r.n, r.every, r.h
  take()
  if r.adapt then -- reversible adaptive steps: every `every` steps, the last one landing on T
    local k = 0
    while it.t < r.T do
      local ok, err = pcall(it.advance_to, it, r.T, every)
      if not ok then fail(r, err, it.t) end
      take()
      k = k + 1
      if r.show and k % r.check_every == 0 and r.clock() - r.last > 0.2 and (r.progress == true or r.clock() - r.wall0 > 1) then
        progress_line(r.name, h, math.floor(n * it.t / r.T), n, it.t, it.steps / (r.clock() - r.wall0), false)
        r.shown, r.last = true, r.clock()
      end
    end
    return
  end
  local done, k = 0, 0
  while done < n do
    local m = math.min(every, n - done)
    local ok, err
    if r.adaptive then ok, err = pcall(it.advance_to, it, (done + m) * h)
    else ok, err = pcall(it.step, it, m) end
    if not ok then fail(r, err, it.t) end
    done = done + m
    take()
    k = k + 1
    if r.show and k % r.check_every == 0 then
      local now = r.clock()
      if (r.progress == true or now - r.wall0 > 1) and now - r.last > 0.2 then
        progress_line(r.name, h, done, n, it.t, done / (now - r.wall0), false)
        r.shown, r.last = true, now
      end
    end
  end
  if n == 0 or r.T - n * h > 1e-9 * h then
    local ok, err = pcall(it.advance_to, it, r.T)
    if not ok then fail(r, err, it.t) end
    take()
  end
end

-- The trajectory of run r, completed: its arrays, or for a stream (closed here) the file and the
-- last sample.
local function finish(r)
  local wall = r.clock() - r.wall0
  local cpu = os.clock() - r.cpu0
  local steps = r.it.steps or r.n
  if r.shown or r.progress == true then progress_line(r.name, r.h, r.n, r.n, r.it.t, steps / math.max(wall, 1e-9), true) end
  local traj = {columns = setmetatable(r.columns, columns_mt), method = r.name, h = r.h, T = r.T, every = r.every,
                steps = steps, samples = r.nrow, cpu_time = cpu, wall_time = wall, system = r.desc, params = r.params,
                events = r.event_list}
  if r.h5 then
    local ok, err = pcall(r.h5.commit, r.h5, hdf5.attrs(traj, true))
    if not ok then error(strip_position(err), 3) end -- ("lf.run: writing 'run.h5': No space left on device")
    traj.file = r.stream
    traj.last = {}
    for c, a in pairs(r.data) do traj.last[c] = a[1] end
  elseif r.out then
    local ok, err = r.out:close()
    if not ok then error(("%s: writing the stream '%s' failed: %s"):format(r.fn, r.stream, tostring(err)), 3) end
    traj.file = r.stream
    traj.last = {}
    for c, a in pairs(r.data) do traj.last[c] = a[1] end
  else
    for c, a in pairs(r.data) do traj[c] = a end
  end
  M.attach_states(r, traj)
  return setmetatable(traj, traj_mt)
end

-- A system's description (tostring) and its parameters (a copy of system.params, or nil), which
-- trajectories carry (and HDF5 files write).
local function describe(system)
  local ok, s = pcall(tostring, system)
  return ok and type(s) == "string" and s or nil
end
local function system_params(system)
  local ok, p = pcall(function() return system.params end)
  if not ok or type(p) ~= "table" then return nil end
  local c = {}
  for k, v in pairs(p) do c[k] = v end
  return c
end

-- The columns of a forcing or thermostat (work, heat) and of a controller (its held output) added to
-- recorders; returns whether the system has a forcing.
local function extra_recorders(system, opts, recorders)
  -- a forcing, a thermostat: the work done and the heat exchanged since the start (E - E(0) - work - heat is
  -- the conservative method's energy error)
  local okf, forced = pcall(function() return system.forcing_name end)
  if (okf and forced ~= nil) or opts.thermostat then
    recorders[#recorders + 1] = {columns = {"work", "heat"}, values = function(it) return {it.work, it.heat} end}
  end
  -- a controller: its held output, control1..3 (body torque) and control_force1..3 (bodies that translate),
  -- body k > 1 with the prefix k_
  local okc, control = pcall(function() return system.control end)
  if okc and control ~= nil then
    local n, cols, translating = system.n, {}, control.force ~= nil
    for b = 1, n do
      local pre = b > 1 and (b .. "_") or ""
      for k = 1, 3 do cols[#cols + 1] = pre .. "control" .. k end
      for k = 1, translating and 3 or 0 do cols[#cols + 1] = pre .. "control_force" .. k end
    end
    recorders[#recorders + 1] = {columns = cols, values = function(it)
      local c, v = it.system.control, {}
      for b = 1, n do
        local tau, F = n > 1 and c.torque[b] or c.torque, translating and (n > 1 and c.force[b] or c.force)
        for k = 1, 3 do v[#v + 1] = tau[k] end
        for k = 1, translating and 3 or 0 do v[#v + 1] = F[k] end
      end
      return v
    end}
  end
  return okf and forced ~= nil
end

--- lf.run(system, opts) -> trajectory (see the header of this file).
function M.run(system, opts)
  local fn = "lf.run"
  local smt = type(system) == "userdata" and getmetatable(system)
  if not (smt and smt.__name == "lf.system") then
    error(("%s: argument #1 must be a system (lf.rigidbody, lf.bodies, lf.lie_ode, ...), got %s"):format(fn,
      smt and smt.__name or type(system)), 2)
  end
  if type(opts) ~= "table" then error(("%s: argument #2 must be an options table {method=, h=, T=, ...}, got %s"):format(fn, type(opts)), 2) end
  M.check_keys(opts, RUN_KEYS, fn)
  check_method(opts.method, fn)
  local h = positive(opts.h, "option 'h' (step size)", fn)
  local T = positive(opts.T, "option 'T' (final time)", fn)
  local every = every_option(opts.every, 1, fn)
  local progress = opts.progress
  if progress ~= nil and type(progress) ~= "boolean" then
    error(("%s: option 'progress' must be true, false or nil, got %s"):format(fn, type(progress)), 2)
  end
  local stream = opts.stream
  if stream ~= nil and (type(stream) ~= "string" or stream == "" or stream:find("\0", 1, true)) then
    error(("%s: option 'stream' must be a file path (string), got %s"):format(fn, type(stream) == "string" and ("%q"):format(stream) or type(stream)), 2)
  end
  local memory_limit = opts.memory_limit == nil and 1e9 or opts.memory_limit
  positive(memory_limit, "option 'memory_limit' (bytes)", fn)
  local recorders = M.recorders(system, opts.record, fn)
  -- reversible adaptive steps: every sample records the last step and the step density
  if opts.adapt then
    recorders[#recorders + 1] = {columns = {"step", "rho"}, values = function(it) return {it.last_h, it.rho} end}
  end
  local forced = extra_recorders(system, opts, recorders)
  if opts.dense ~= nil and type(opts.dense) ~= "boolean" then
    error(("%s: option 'dense' must be true or false, got %s"):format(fn, type(opts.dense)), 2)
  end
  if opts.dense and (every ~= 1 or stream or opts.at or opts.thermostat) then
    error(("%s: option 'dense' records every step's state (every = 1, in memory, not with at or a thermostat), got %s")
      :format(fn, every ~= 1 and ("every = " .. every) or stream and "stream" or opts.at and "at" or "a thermostat"), 2)
  end
  if opts.states ~= nil and type(opts.states) ~= "boolean" then
    error(("%s: option 'states' must be true or false, got %s"):format(fn, type(opts.states)), 2)
  end
  local lay, desc
  if opts.states or opts.dense then
    local okl, l = pcall(states.layout, system)
    if not okl then error(("%s: %s"):format(fn, strip_position(l)), 2) end
    lay, desc = l, scene.describe(system)
    -- streamed: the state's numbers are columns of the file; those a recorded field gives already
    -- (record = {"R"}, {"x", "v"}: the same numbers under the same names) once, not twice
    if stream then
      local taken, keep, cols = {}, {}, {}
      for _, rec in ipairs(recorders) do for _, c in ipairs(rec.columns) do taken[c] = true end end
      for i, c in ipairs(lay.columns) do
        if not taken[c] then keep[#keep + 1], cols[#cols + 1] = i, c end
      end
      recorders[#recorders + 1] = {columns = cols, values = function(it)
        local v, out = states.sample(lay, it, {}), {}
        for j, i in ipairs(keep) do out[j] = v[i] end
        return out
      end}
    end
  end

  local builtin = M.system_columns(system)
  local is_builtin = {}
  for _, c in ipairs(builtin) do is_builtin[c] = true end
  local observers, obs_names = observers_of(opts.observe, builtin, is_builtin, fn)
  local name = method_name(opts.method)
  -- samples at given times and events: the integrator keeps its dense output; a probe integrator takes the
  -- samples at interpolated states (scripts/lieflow/run/events.lua)
  local at = opts.at ~= nil and events.check_at(opts.at, T, fn) or nil
  local evs = opts.events ~= nil and events.check_events(opts.events, fn) or nil
  if at and (opts.thermostat or forced or opts.adapt) then
    error(("%s: option 'at' is not available with a %s (its samples are of interpolated states)"):format(fn,
      opts.thermostat and "thermostat" or opts.adapt and "reversible adaptive steps (adapt)" or "forcing"), 2)
  end
  if (at or evs) and stream then error(("%s: options 'at' and 'events' do not stream (stream =)"):format(fn), 2) end
  local iopts = M.integrator_opts(opts, h)
  iopts.dense = (at or evs) and true or nil
  local ok_it, it = pcall(M.integrator, opts.method, system, iopts)
  if not ok_it then error(("%s: %s"):format(fn, strip_position(it)), 2) end
  local columns = run_columns(builtin, is_builtin, recorders, observers, obs_names, fn)
  local data = {}
  for _, c in ipairs(columns) do data[c] = {} end
  local r = {fn = fn, system = system, it = it, name = name, h = h, T = T, every = every, progress = progress,
             stream = stream, columns = columns, data = data, recorders = recorders, observers = observers,
             obs_names = obs_names, nrow = 0, written = 0, desc = describe(system), params = system_params(system),
             states_layout = lay, scene = desc, at = at, events = evs}
  if lay and not stream then r.states_rec = states.recorder(lay) end
  r.n = step_count(T, h, fn)
  open_output(r, memory_limit)
  if at then r.E0 = it:energy() end -- (energy_error against E(0), which option at may not sample)
  local sample = sampler(r)
  start_clocks(r)
  r.adaptive = type(it.method) == "table" and it.method.adaptive
  r.adapt = it.adaptive
  local function take(itx)
    local ok, err = pcall(sample, itx)
    if not ok then fail(r, err, it.t) end
  end
  r.failed = function(err, t) fail(r, err, t) end
  local step_fn = step_all
  if at or evs then
    iopts.dense = nil -- a probe integrator: samples at the times of at, events' times refined by steps
    local probe = M.integrator(opts.method, system, iopts)
    step_fn = function(rr, tk) return events.step_all(rr, tk, probe) end
  end
  -- the run under pcall: Ctrl-C (the interpreter's "interrupted!" raised in this Lua code, or a
  -- step that stopped on the cancel flag) becomes an error object carrying the samples so far
  local ok_run, run_err = pcall(step_fn, r, take)
  if not ok_run then
    if getmetatable(run_err) == run_interrupt_mt then error(run_err, 0) end
    if strip_position(tostring(run_err)):find("^interrupted") then fail(r, run_err, it.t) end
    error(run_err, 0)
  end
  local traj = finish(r) -- (not a tail call: finish's errors are at level 3, lf.run's caller)
  if opts.dense then -- traj:at(t): a probe with dense output steps again from the recorded states
    local dopts = M.integrator_opts(opts, h)
    dopts.dense = true
    trajectory.set_dense(traj, {make = function() return M.integrator(opts.method, system, dopts) end})
  end
  return traj
end

return M
