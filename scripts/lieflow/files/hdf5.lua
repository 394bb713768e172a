-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — trajectories in HDF5 files (traj:write_hdf5, lf.run{stream = "run.h5"}, lf.read_hdf5),
-- over the binding's writer and reader (lua/lib/hdf5.c).
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
local json = require "lieflow.files.json"

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

-- core.h5_read(path, who) in a child process. The HDF5 library (1.10) is not hardened against
-- damaged files: a flipped byte in a heap or a B-tree of the file can make it crash, free memory
-- twice or loop (tests/fuzz/files_fuzz.lua crashed it within seconds). The child reads the file and
-- sends back the exact bytes of what it read (core.proc.encode); its crash is an error naming the
-- file, and Ctrl-C or a time limit (30 s, and 1 s per 20 MB of the file) ends it. The files lieflow
-- writes carry checksums (lua/lib/hdf5.c), so that most damage is refused by HDF5 before it parses it;
-- the child covers the rest and other writers' files.
local function read_in_child(path, who)
  local proc = core.proc
  local fd, child_fd = proc.socketpair()
  local pid = proc.fork(true) -- quiet: glibc's "double free" of a crash is said below in our words
  if pid == 0 then
    collectgarbage("stop") -- no finalizer of the parent's objects runs here
    proc.close(fd)
    local ok = pcall(function()
      local okr, r = pcall(core.h5_read, path, who)
      assert(proc.send(child_fd, proc.encode(okr and {r = r} or {err = tostring(r)})))
    end)
    proc.exit(ok and 0 or 70)
  end
  local group <close> = proc.group() -- no zombie and no orphan, whatever happens below
  group:add(pid, fd)
  proc.close(child_fd)
  -- a damaged file can make HDF5 loop: the child gets 30 s and one more per 20 MB of the file (its
  -- size by lstat of the path's target: never opened here, a FIFO would block the open)
  local info = core.file_info(path)
  if info and info.kind == "link" and info.real then info = core.file_info(info.real) end
  local limit = 30 + (info and info.kind == "file" and info.size or 0) / 20e6
  local deadline = core.wall_time() + limit
  local reader, frames, eof = proc.reader(fd), {}, false
  while not frames[1] and not eof do
    local _, interrupted = proc.poll({fd}, 1000)
    if interrupted then error("interrupted!", 0) end
    frames, eof = reader:pump()
    if not frames[1] and not eof and core.wall_time() > deadline then
      proc.kill(pid, "KILL")
      error(("%s: '%s' is damaged: the HDF5 library did not finish reading it in %.0f s (stopped)"):format(who, path, limit), 0)
    end
  end
  local how, code, name = group:reap(pid)
  if frames[1] then
    local msg = proc.decode(frames[1])
    if msg.err then error(msg.err, 0) end
    return msg.r
  end
  if how == "signaled" then
    error(("%s: '%s' is damaged: the HDF5 library crashed reading it (%s)"):format(who, path, name or code), 0)
  end
  -- (under AddressSanitizer the child reports the damage and exits with its status)
  error(("%s: '%s' is damaged: the process reading it ended without an answer (%s %s)"):format(who, path, how, tostring(code)), 0)
end

--- M.read(path, who) -> {attrs =, columns =, data =, units =} of a file lieflow wrote.
function M.read(path, who)
  need(who)
  local r = read_in_child(path, who)
  if r.attrs.format ~= M.format then
    error(("%s: '%s' is not a lieflow trajectory (its attribute format is %s)"):format(who, path,
      r.attrs.format == nil and "missing" or ("%q"):format(tostring(r.attrs.format))), 0)
  end
  return r
end

return M
