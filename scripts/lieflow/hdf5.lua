-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — trajectories in HDF5 files (traj:write_hdf5, lf.run{stream = "run.h5"}, lf.read_hdf5),
-- over the binding's writer and reader (lua/lhdf5.c).
--
-- The file: one 1-D float64 dataset per column, /columns/NAME (chunked, compressed; the recorded
-- states too: R11 ... R33, omega1 ..., q_w ..., euler_a1 ...), with an attribute "units" where lieflow
-- knows them (angles "rad", rotation entries, quaternions and defects "1"); on the root group the
-- attributes format = "lieflow-trajectory", lieflow_version, columns (the names in order, joined by
-- commas), method, h, T, every, steps, samples, cpu_time, wall_time, system (its description),
-- parameters (the system's params as JSON, when it has any), complete (1; 0 for the samples of a
-- run that failed or was interrupted, with its message in the attribute error). A file appears
-- only when it is complete or marked so: it is written beside its path and renamed at the end, and
-- a failed write (a full disk, an unwritable directory) removes it and raises an error.
local core = require "lieflow.core"
local json = require "lieflow.json"

local M = {}
M.format = "lieflow-trajectory"

--- hdf5_available() -> true, HDF5 version | false, reason
function M.available()
  if core.hdf5 then return true, core.hdf5 end
  return false, "lieflow was built without HDF5 (install libhdf5-dev, e.g. `make deps-opt`, and rebuild)"
end

--- Does path name an HDF5 file (.h5, .hdf5)? (lf.run's stream option chooses the format by it)
function M.is_path(path)
  return type(path) == "string" and (path:find("%.h5$") or path:find("%.hdf5$")) ~= nil
end

local function need(who)
  local ok, why = M.available()
  if not ok then error(("%s: %s"):format(who, why), 0) end
end

-- the units lieflow knows for its columns
local function units_of(columns)
  local u = {}
  for _, c in ipairs(columns) do
    if c:find("euler_a%d$") then u[c] = "rad"
    elseif c:find("R%d%d$") or c:find("q_[wxyz]$") or c == "orthogonality" or c == "manifold_defect" then u[c] = "1" end
  end
  return u
end

--- M.writer(path, columns, who) -> a writer (w:append(row values...), w:commit(attrs), w:abort()).
function M.writer(path, columns, who)
  need(who)
  return core.h5_create(path, columns, units_of(columns), who)
end

--- M.attrs(t, complete [, err]) -> the root attributes of trajectory fields t (method, h, T, ...).
function M.attrs(t, complete, err)
  local a = {format = M.format, lieflow_version = core.version, columns = table.concat(t.columns, ","),
             complete = complete and 1 or 0, error = err}
  for _, k in ipairs{"method", "h", "T", "every", "steps", "samples", "cpu_time", "wall_time", "system"} do
    local v = rawget(t, k)
    if type(v) == "number" or type(v) == "string" then a[k] = v elseif v ~= nil then a[k] = tostring(v) end
  end
  local p = rawget(t, "params")
  if type(p) == "table" and next(p) ~= nil then
    local ok, s = pcall(json.encode, p)
    if ok then a.parameters = s end
  end
  return a
end

--- M.write(t, arrays, path, who) -> path: trajectory fields t with one array per column (arrays[i]
--- for t.columns[i], all of one length), written complete.
function M.write(t, arrays, path, who)
  local w <close> = M.writer(path, t.columns, who)
  local ncol, row = #arrays, {}
  for r = 1, #arrays[1] do
    for i = 1, ncol do row[i] = arrays[i][r] end
    w:append(table.unpack(row, 1, ncol))
  end
  return w:commit(M.attrs(t, true))
end

--- M.read(path, who) -> {attrs =, columns =, data =, units =} of a file lieflow wrote.
function M.read(path, who)
  need(who)
  local r = core.h5_read(path, who)
  if r.attrs.format ~= M.format then
    error(("%s: '%s' is not a lieflow trajectory (its attribute format is %s)"):format(who, path,
      r.attrs.format == nil and "missing" or ("%q"):format(tostring(r.attrs.format))), 0)
  end
  return r
end

return M
