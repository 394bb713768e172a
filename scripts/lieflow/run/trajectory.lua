-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — the trajectory class: what lf.run returns (scripts/lieflow/run/init.lua), what
-- lf.read_csv and lf.read_hdf5 read back, what lf.ensemble hands over.
--
-- A trajectory is a table with the metatable M.trajectory_mt ("lf.trajectory"): the fields columns
-- (the column names in order; traj:columns() returns a copy), one array per column, method, h, T,
-- every, steps, samples, cpu_time, wall_time, system, params, and for a run with states = true
-- state_layout, state_blocks and scene; a streamed run's holds file, samples and last instead of
-- arrays. traj.<field> of the recorded states is a proxy: traj.R[k] = traj:state(k).R.
-- Its methods, in the table M.methods (the metatable's __index looks them up there):
--   here: traj:state(k), traj:load(), traj:write_csv(path), traj:write_hdf5(path), traj:totable(),
--   traj:to_json([opts]);
--   added by the view layer (scripts/lieflow/view/, loaded by `require "lieflow"`): traj:animate
--   (view/animate.lua), traj:write_gltf (view/gltf.lua), traj:plot (view/plot.lua).
-- M.reserved: the names of the fields and methods (no observer or column may take one of them).
local core = require "lieflow.core"
local options = require "lieflow.options"
local json = require "lieflow.files.json"
local hdf5 = require "lieflow.files.hdf5"
local states = require "lieflow.run.states"

local M = {}

-- trajectory fields and methods: not usable as observer names (lf.run) or column names (files)
local reserved = {}
for _, c in ipairs{"columns", "method", "h", "T", "every", "steps", "samples", "cpu_time", "wall_time",
                   "write_csv", "to_json", "totable", "plot", "file", "last", "load", "state", "animate",
                   "write_gltf", "state_layout", "state_blocks", "scene", "interrupted", "system", "params",
                   "write_hdf5", "units", "incomplete", "error", "at", "events"} do reserved[c] = true end
M.reserved = reserved

-- A column name read from a file: a trajectory field or method would be overwritten by it (a file
-- that is not lieflow's, or a damaged one), and an empty name is no column.
local function check_column_name(who, path, c)
  if reserved[c] or c == "" then
    error(("%s: '%s' has a column named '%s', which is a trajectory field or method: not a lieflow trajectory")
      :format(who, path, c), 0)
  end
end

local traj_mt = {__name = "lf.trajectory"}
local traj_methods = {}
traj_mt.methods = traj_methods
M.methods = traj_methods
-- traj.<method>, else traj.<field> of the recorded states: a proxy, traj.R[k] = traj:state(k).R
traj_mt.__index = function(t, k)
  local m = traj_methods[k]
  if m ~= nil then return m end
  if type(t) ~= "table" then return nil end -- (the metamethod called by hand on something else)
  local lay = rawget(t, "state_layout")
  if type(k) ~= "string" or type(lay) ~= "table" then return nil end
  for _, f in ipairs(lay.fields) do
    if f == k then
      return setmetatable({}, {__index = function(_, i)
        if math.type(i) ~= "integer" or i < 1 or i > (rawget(t, "samples") or 0) then return nil end
        return traj_methods.state(t, i)[k]
      end, __len = function() return rawget(t, "samples") or 0 end})
    end
  end
end

-- self of a trajectory method (called as traj.name(x) by mistake: a clear error, not a raw one)
local function check_traj(self, what)
  if getmetatable(self) ~= traj_mt then
    error(("%s: a trajectory expected (call it as traj:%s(...)), got %s"):format(what, what:match("[%w_]+$"),
      type(self)), 3)
  end
end
M.check = check_traj

-- A streamed run (stream = "file.csv") keeps no arrays in memory: what needs them says so.
local function check_in_memory(self, what)
  local file = rawget(self, "file")
  if file ~= nil then
    error(("%s: this trajectory was streamed to %s and keeps no arrays in memory; traj:load() reads them back")
      :format(what, tostring(file)), 3)
  end
end
M.check_in_memory = check_in_memory

traj_mt.__len = function(t) check_traj(t, "__len"); return t.samples end
-- traj.columns is the array of column names; traj:columns() returns a copy of it
local columns_mt = {__call = function(self) return {table.unpack(self)} end}
M.columns_mt = columns_mt

--- traj:state(k) -> {t =, <field> = value, ...}: the state at sample k (run with states = true).
function traj_methods:state(k)
  check_traj(self, "traj:state")
  if type(rawget(self, "state_layout")) ~= "table" then
    error("traj:state: this trajectory has no recorded states (run it with lf.run{..., states = true})", 2)
  end
  if rawget(self, "file") then check_in_memory(self, "traj:state") end
  local n = rawget(self, "samples") or 0
  if math.type(k) ~= "integer" or k < 1 or k > n then
    error(("traj:state: sample index must be an integer in 1..%d, got %s"):format(n, tostring(k)), 2)
  end
  local ok, st = pcall(states.state, self, k)
  if not ok then error(options.strip_position(st), 2) end
  return st
end

-- Runs made with lf.run{dense = true}: what traj:at needs to take a step again (the system, the method and
-- the integrator's options), kept beside the trajectory (weak keys: not one of its fields).
local dense_of = setmetatable({}, {__mode = "k"})
function M.set_dense(traj, d) dense_of[traj] = d end

--- traj:at(t) -> {t =, <field> = value, ...}: the state at any t in the run (lf.run{dense = true}): the
--- recorded state of the step that contains t, that step taken again by an integrator with dense output
--- (the same state at its end, the same steps), and its interpolant at t (it:dense).
function traj_methods:at(t)
  check_traj(self, "traj:at")
  local d = dense_of[self]
  if not d then error("traj:at: this trajectory has no dense output (run it with lf.run{..., dense = true})", 2) end
  local ts, n = self.t, self.samples
  if type(t) ~= "number" or not (t >= ts[1] and t <= ts[n]) then
    error(("traj:at: t = %s is outside the run [%.17g, %.17g]"):format(tostring(t), ts[1], ts[n]), 2)
  end
  local lo, hi = 1, n -- the last sample at or before t
  while lo < hi do
    local mid = (lo + hi + 1) // 2
    if ts[mid] <= t then lo = mid else hi = mid - 1 end
  end
  local st = self:state(lo)
  if t == ts[lo] then return st end
  d.probe = d.probe or d.make()
  d.probe:set_state(st)
  d.probe:advance_to(ts[lo + 1])
  return d.probe:dense(t)
end

--- traj:load() -> the trajectory a streamed run wrote (its arrays read back from traj.file).
function traj_methods:load()
  check_traj(self, "traj:load")
  if not self.file then error("traj:load: this trajectory was not streamed to a file (its arrays are in memory)", 2) end
  local ok, d = pcall(hdf5.is_path(self.file) and M.read_hdf5 or M.read_csv, self.file)
  if not ok then error("traj:load: " .. options.strip_position(d), 2) end
  local t = {}
  for k, v in pairs(self) do t[k] = v end
  t.file, t.samples, t.columns = nil, d.samples, d.columns
  for _, c in ipairs(d.columns) do t[c] = d[c] end
  return setmetatable(t, traj_mt)
end

-- The arrays of trajectory t in the order of t.columns, checked: the arrays are plain tables the
-- caller may have changed, so one number per sample in each.
local function checked_arrays(t, who)
  local cols, arrays = t.columns, {}
  for i, c in ipairs(cols) do
    local a = rawget(t, c)
    if type(a) ~= "table" then error(("%s: column '%s' has no array (got %s)"):format(who, c, type(a)), 0) end
    if i > 1 and #a ~= #arrays[1] then
      error(("%s: column '%s' has %d values, column '%s' %d (the arrays were changed after the run?)")
        :format(who, c, #a, cols[1], #arrays[1]), 0)
    end
    for r = 1, #a do
      if math.type(a[r]) == nil then error(("%s: column '%s' entry %d is %s, expected a number"):format(who, c, r, type(a[r])), 0) end
    end
    arrays[i] = a
  end
  return arrays
end

--- traj:write_hdf5(path) -> path: the trajectory as an HDF5 file (scripts/lieflow/files/hdf5.lua: a dataset
--- per column, the run's attributes), complete or not at all.
function traj_methods:write_hdf5(path)
  if getmetatable(self) ~= traj_mt then
    error(("write_hdf5: call it as traj:write_hdf5(path) on a trajectory, got %s"):format(type(self)), 2)
  end
  if type(path) ~= "string" then error(("write_hdf5: path (string) expected, got %s"):format(type(path)), 2) end
  if path:find("\0", 1, true) then error("write_hdf5: the path contains a NUL byte", 2) end
  check_in_memory(self, "traj:write_hdf5")
  local ok, res = pcall(function()
    local arrays = checked_arrays(self, "traj:write_hdf5")
    if #arrays == 0 then error("traj:write_hdf5: the trajectory has no columns", 0) end
    return hdf5.write(self, arrays, path, "write_hdf5")
  end)
  if not ok then error(options.strip_position(res), 2) end
  return res
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
  check_in_memory(self, "traj:write_csv")
  local ok, err = pcall(function()
    local cols, arrays = self.columns, checked_arrays(self, "traj:write_csv")
    local f <close> = core.atomic_open(path, "write_csv")
    f:write(table.concat(cols, ","), "\n")
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
  check_traj(self, "traj:totable")
  check_in_memory(self, "traj:totable")
  local data = {}
  for _, c in ipairs(self.columns) do data[c] = self[c] end
  return {method = self.method, h = self.h, T = self.T, every = self.every, steps = self.steps,
          samples = self.samples, cpu_time = self.cpu_time, wall_time = self.wall_time,
          columns = self.columns, data = data}
end
traj_mt.__tojson = traj_methods.totable

--- traj:to_json([{indent=true}]) -> string (lf.json.encode of traj:totable()).
function traj_methods:to_json(opts)
  check_traj(self, "traj:to_json")
  check_in_memory(self, "traj:to_json")
  return json.encode(self:totable(), opts)
end

traj_mt.__tostring = function(t)
  check_traj(t, "__tostring")
  if t.method == nil then
    return ("lf.trajectory(%d samples, columns: %s)"):format(t.samples or 0, table.concat(t.columns, " "))
  end
  return ("lf.trajectory(%s, h = %g, T = %g, %d samples, columns: %s)"):format(
    tostring(t.method), t.h or 0 / 0, t.T or 0 / 0, t.samples or 0, table.concat(t.columns, " "))
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

--- read_csv(path) -> a trajectory {columns = {...}, [name] = array, samples =} (what write_csv or a
--- streamed lf.run wrote): #traj, traj:columns(), traj:plot{...}, traj:write_csv(path) work on it.
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
    for c in header:gmatch("[^,]+") do
      check_column_name("read_csv", path, c)
      if out[c] then error(("read_csv: '%s' has two columns named '%s'"):format(path, c), 0) end
      out.columns[#out.columns + 1] = c
      out[c] = {}
    end
    if #out.columns == 0 then error(("read_csv: '%s' has no columns (its first line names none)"):format(path), 0) end
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
    out.samples = r
    setmetatable(out.columns, columns_mt)
    return setmetatable(out, traj_mt)
  end)
  f:close()
  if not ok then error(res, 2) end
  return res
end

--- read_hdf5(path) -> a trajectory (what traj:write_hdf5 or a run streamed to .h5 wrote): its arrays,
--- columns, method, h, T, every, steps, samples, cpu_time, wall_time, system, params, and for the
--- samples of a run that did not finish incomplete = true and error (the file's attributes).
function M.read_hdf5(path)
  if type(path) ~= "string" then error(("read_hdf5: path (string) expected, got %s"):format(type(path)), 2) end
  if path:find("\0", 1, true) then error("read_hdf5: the path contains a NUL byte", 2) end
  local ok, d = pcall(hdf5.read, path, "read_hdf5")
  if not ok then error(options.strip_position(d), 2) end
  if #d.columns == 0 then error(("read_hdf5: '%s' has no columns: not a lieflow trajectory"):format(path), 2) end
  local a, n, seen = d.attrs, nil, {}
  for _, c in ipairs(d.columns) do
    check_column_name("read_hdf5", path, c)
    if seen[c] then error(("read_hdf5: '%s' has two columns named '%s'"):format(path, c), 2) end
    seen[c] = true
    if n and #d.data[c] ~= n then
      error(("read_hdf5: '%s': column '%s' has %d values, column '%s' %d"):format(path, c, #d.data[c], d.columns[1], n), 2)
    end
    n = #d.data[c]
  end
  local out = {columns = setmetatable(d.columns, columns_mt), samples = n or 0, units = d.units}
  for _, k in ipairs{"method", "h", "T", "every", "steps", "cpu_time", "wall_time", "system"} do out[k] = a[k] end
  if type(a.parameters) == "string" then
    local okp, p = pcall(json.decode, a.parameters)
    if okp then out.params = p end
  end
  if a.complete ~= 1 then out.incomplete, out.error = true, a.error end
  for _, c in ipairs(d.columns) do out[c] = d.data[c] end
  return setmetatable(out, traj_mt)
end

M.trajectory_mt = traj_mt
function M.is_trajectory(x) return getmetatable(x) == traj_mt end

return M
