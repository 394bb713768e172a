-- SPDX-License-Identifier: GPL-3.0-or-later
-- HDF5 output (scripts/lieflow/hdf5.lua, lua/lib/hdf5.c): traj:write_hdf5, lf.run{stream = "run.h5"},
-- lf.read_hdf5. Every number comes back exactly; h5dump (Debian's hdf5-tools) reads the file; a
-- full disk or an unwritable path is a clear error and never leaves a partial file that looks
-- complete. Without HDF5 (a build that did not find libhdf5-dev, or WITHOUT_OPTIONAL=1) the specs
-- are pending, saying so, and the functions say how to get it.
local lf = require "lieflow"
local T = require "testlib"
local errmsg, has, shq, read = T.errmsg, T.has, T.shq, T.read

local EXE = os.getenv("LIEFLOW_EXE") or "build/lieflow"
local have_exe = io.open(EXE, "rb") ~= nil
local have_h5, why = lf.hdf5_available()

local function sh(cmd)
  local out = os.tmpname()
  local ok, how, code = os.execute(cmd .. " >" .. out .. " 2>&1")
  local o = read(out) or ""
  os.remove(out)
  if how == "signal" then code = 128 + code end
  return ok and 0 or code, o
end
local function files_in(dir)
  local _, out = sh("ls -A " .. shq(dir))
  local t = {}
  for l in out:gmatch("[^\n]+") do t[#t + 1] = l end
  table.sort(t)
  return t
end

if not have_h5 then
  describe("HDF5", function()
    pending("skipped: " .. why)
    it("says how to get it when asked for a file", function()
      local tr = lf.run(lf.stress_system(), {method = "vlv", h = 0.25, T = 1})
      has(errmsg(tr.write_hdf5, tr, os.tmpname() .. ".h5"), "write_hdf5: lieflow was built without HDF5 (install libhdf5-dev")
      has(errmsg(lf.read_hdf5, "x.h5"), "read_hdf5: lieflow was built without HDF5")
      has(errmsg(lf.run, lf.stress_system(), {method = "vlv", h = 0.25, T = 1, stream = "x.h5"}), "without HDF5")
    end)
  end)
  return
end

describe("HDF5 files", function()
  local dir
  before_each(function() dir = T.make_tmpdir() end)
  after_each(function() os.execute("rm -rf " .. shq(dir)) end)
  local function run(opts)
    local o = {method = "vlv", h = 0.125, T = 50, record = {"R", "quaternion", "euler_zyx"}}
    for k, v in pairs(opts or {}) do o[k] = v end
    return lf.run(lf.stress_system(), o)
  end

  it("traj:write_hdf5 and lf.read_hdf5: every column bit for bit, the run's attributes, units", function()
    local tr = run()
    local p = dir .. "/t.h5"
    assert.are.equal(p, tr:write_hdf5(p))
    local back = lf.read_hdf5(p)
    assert.are.same(tr:columns(), back:columns())
    for _, c in ipairs(tr.columns) do
      for i = 1, tr.samples do assert(back[c][i] == tr[c][i], c .. "[" .. i .. "]") end
    end
    assert.are.equal(tr.samples, #back)
    for _, k in ipairs{"method", "h", "T", "every", "steps", "system"} do assert.are.equal(tr[k], back[k], k) end
    assert.is_nil(back.incomplete)
    assert.are.equal("rad", back.units.euler_a1)
    assert.are.equal("1", back.units.R11)
    assert.are.equal("1", back.units.q_w)
    assert.is_nil(back.units.energy)
    assert.are.same({"t.h5"}, files_in(dir))
  end)

  it("h5dump reads the file: datasets, values and attributes", function()
    local tr = run{T = 2}
    local p = dir .. "/t.h5"
    tr:write_hdf5(p)
    local rc, out = sh("h5dump -d /columns/t " .. shq(p))
    assert.are.equal(0, rc, out)
    has(out, 'DATASET "/columns/t"')
    has(out, "DATASPACE  SIMPLE { ( 17 ) / ( H5S_UNLIMITED ) }")
    has(out, "(0): 0, 0.125, 0.25, 0.375, 0.5")
    rc, out = sh("h5dump -A " .. shq(p))
    assert.are.equal(0, rc, out)
    for _, want in ipairs{'ATTRIBUTE "format"', '"lieflow-trajectory"', 'ATTRIBUTE "lieflow_version"',
                          '"' .. lf.version .. '"', 'ATTRIBUTE "method"', '"vlv"', 'ATTRIBUTE "complete"',
                          'ATTRIBUTE "system"', '"lf.rigidbody(inertia', 'DATASET "q_w"', 'ATTRIBUTE "units"'} do
      has(out, want)
    end
    rc, out = sh("h5dump -p -H -d /columns/energy " .. shq(p))
    has(out, "CHUNKED ( 4096 )")
    has(out, "DEFLATE")
  end)

  it("lf.run{stream = 'run.h5'} writes what the run in memory holds; traj:load reads it", function()
    local mem = run()
    local p = dir .. "/run.h5"
    local s = run{stream = p}
    assert.are.equal(p, s.file)
    assert.is_nil(s.t)
    assert.are.equal(mem.samples, s.samples)
    local back = s:load()
    for _, c in ipairs(mem.columns) do
      for i = 1, mem.samples do assert(back[c][i] == mem[c][i], c .. "[" .. i .. "]") end
    end
    local big = lf.run(lf.stress_system(), {method = "vlv", h = 0.125, T = 1250, stream = dir .. "/big.h5"})
    assert.are.equal(10001, #lf.read_hdf5(dir .. "/big.h5").t) -- more than two chunks
    assert.are.equal(big.last.energy, lf.read_hdf5(dir .. "/big.h5").energy[10001])
  end)

  it("a system's parameters go along as JSON", function()
    local sys = lf.rigidbody{inertia = {1, 2, 3}, omega = {0, 0.2, 1}, params = {k = 0.5},
                             potential = function(R, p) return p.k * R[3][3] end}
    local tr = lf.run(sys, {method = "vlv", h = 0.1, T = 1})
    tr:write_hdf5(dir .. "/p.h5")
    assert.are.same({k = 0.5}, lf.read_hdf5(dir .. "/p.h5").params)
  end)

  it("a run that fails keeps its samples in the file, marked incomplete with the error", function()
    local p = dir .. "/fail.h5"
    local msg = errmsg(lf.run, lf.rigidbody{inertia = {1, 2, 3}, omega = {0, 0, 1}},
      {method = "vlv", h = 0.1, T = 10, stream = p,
       observe = {boom = function(it) if it.t > 5 then error("boom") end return 1 end}})
    has(msg, "(the 51 samples up to there are in '" .. p .. "', marked incomplete)")
    local back = lf.read_hdf5(p)
    assert.is_true(back.incomplete)
    has(back.error, "observer 'boom' failed at t=5.1")
    assert.are.equal(51, #back.t)
    local _, out = sh("h5dump -a /complete " .. shq(p))
    has(out, "(0): 0")
  end)

  it("an unwritable path or a device is a clear error and leaves nothing", function()
    local tr = run{T = 1}
    has(errmsg(tr.write_hdf5, tr, dir .. "/no/such/dir/t.h5"), "write_hdf5: cannot create '" .. dir .. "/no/such/dir/t.h5': No such file or directory")
    has(errmsg(tr.write_hdf5, tr, "/dev/full"), "write_hdf5: cannot write '/dev/full': not a regular file")
    has(errmsg(tr.write_hdf5, tr, dir), "write_hdf5: cannot write '" .. dir .. "': Is a directory")
    has(errmsg(tr.write_hdf5, tr, dir .. "/a\0b.h5"), "write_hdf5: the path contains a NUL byte")
    has(errmsg(lf.run, lf.stress_system(), {method = "vlv", h = 0.25, T = 1, stream = dir .. "/no/x.h5"}),
        "lf.run: cannot create '" .. dir .. "/no/x.h5': No such file or directory")
    os.execute("chmod 555 " .. shq(dir))
    local rc = sh("touch " .. shq(dir .. "/probe")) -- (root may write anyway)
    if rc ~= 0 then has(errmsg(tr.write_hdf5, tr, dir .. "/t.h5"), "Permission denied") end
    os.execute("chmod 755 " .. shq(dir) .. "; rm -f " .. shq(dir .. "/probe"))
    assert.are.same({}, files_in(dir))
  end)

  local it_exe = have_exe and it or pending
  it_exe("a disk that fills up midway (ulimit -f): an error naming the path, the old file kept, no temporary", function()
    local p, s = dir .. "/t.h5", dir .. "/s.h5"
    for _, f in ipairs{p, s} do local h = io.open(f, "w"); h:write("OLD\n"); h:close() end
    local code = ("local tr = lf.run(lf.stress_system(), {method = 'vlv', h = 0.125, T = 4000, record = {'R'}})\n" ..
      "print(pcall(tr.write_hdf5, tr, %q))\n" ..
      "print(pcall(lf.run, lf.stress_system(), {method = 'vlv', h = 0.125, T = 4000, record = {'R'}, stream = %q}))"):format(p, s)
    local rc, out = sh("ulimit -f 16; trap '' XFSZ; " .. EXE .. " -e " .. shq(code))
    assert.are.equal(0, rc, out)
    has(out, "write_hdf5: writing '" .. p .. "': File too large")
    has(out, "lf.run: writing '" .. s .. "': File too large")
    assert.are.equal("OLD\n", read(p))
    assert.are.equal("OLD\n", read(s))
    assert.are.same({"s.h5", "t.h5"}, files_in(dir))
  end)

  it("lf.read_hdf5 refuses what it cannot read, by name", function()
    has(errmsg(lf.read_hdf5, dir .. "/none.h5"), "read_hdf5: cannot open '" .. dir .. "/none.h5': No such file or directory")
    local f = io.open(dir .. "/text.h5", "w"); f:write("not hdf5\n"); f:close()
    has(errmsg(lf.read_hdf5, dir .. "/text.h5"), "read_hdf5: '" .. dir .. "/text.h5' is not an HDF5 file")
    has(errmsg(lf.read_hdf5, "/dev/null"), "read_hdf5: cannot read '/dev/null': not a regular file")
    has(errmsg(lf.read_hdf5, 42), "read_hdf5: path (string) expected, got number")
    local w = lf.core.h5_create(dir .. "/other.h5", {"x"}, {}, "test")
    w:append(1)
    w:commit{}
    has(errmsg(lf.read_hdf5, dir .. "/other.h5"), "is not a lieflow trajectory (its attribute format is missing)")
  end)

  it("traj:write_hdf5 refuses a bad self, path or changed arrays", function()
    local tr = run{T = 1}
    has(errmsg(tr.write_hdf5, 1, "x.h5"), "write_hdf5: call it as traj:write_hdf5(path) on a trajectory, got number")
    has(errmsg(tr.write_hdf5, tr, 3), "write_hdf5: path (string) expected, got number")
    tr.energy[3] = "x"
    has(errmsg(tr.write_hdf5, tr, dir .. "/t.h5"), "traj:write_hdf5: column 'energy' entry 3 is string, expected a number")
    local s = run{T = 1, stream = dir .. "/s.csv"}
    has(errmsg(s.write_hdf5, s, dir .. "/t.h5"), "traj:write_hdf5: this trajectory was streamed to")
    assert.are.same({"s.csv"}, files_in(dir))
  end)
end)
