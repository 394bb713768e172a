-- SPDX-License-Identifier: GPL-3.0-or-later
-- The file readers given damaged input (issue 22; found by tests/fuzz/files_fuzz.lua): lf.read_csv,
-- lf.read_hdf5, traj:load and lf.load raise an error that names the reader and the file and says
-- what is wrong, never a raw Lua error, a crash or megabytes allocated from a lying size field.
-- Each test states what happened before the fix. The HDF5 fixtures in tests/fuzz/files/ are files
-- the fuzzer made: legacy-format.h5 (a lieflow file rewritten by h5repack in the HDF5 1.8 format,
-- without checksums: what another writer may produce), hdf5-crash.h5 (a mutation of it on which
-- HDF5 1.10 dies of a segmentation fault) and lying-size.h5 (one whose size field claims 8388633
-- values where 25 are stored), no-columns.h5 (one whose group /columns lost its links).
local lf = require "lieflow"
local T = require "testlib"
local errmsg, has, shq, read = T.errmsg, T.has, T.shq, T.read

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local FILES = here .. "/../fuzz/files/"
local have_h5 = lf.hdf5_available()
local EXE = os.getenv("LIEFLOW_EXE") or "build/lieflow"
local it_h5 = have_h5 and it or pending

local function spill(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

local function small_run(opts)
  local o = {method = "vlv", h = 0.125, T = 3}
  for k, v in pairs(opts or {}) do o[k] = v end
  return lf.run(lf.stress_system(), o)
end

describe("damaged files", function()
  local dir
  before_each(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. shq(dir)))
  end)
  after_each(function() os.execute("rm -rf " .. shq(dir)) end)

  it("CSV: no columns, reserved or repeated names are refused by name (before: a trajectory whose methods raised raw errors)", function()
    local p = dir .. "/x.csv"
    spill(p, "\n1,2\n")
    has(errmsg(lf.read_csv, p), "read_csv: '" .. p .. "' has no columns")
    spill(p, "t,t\n1,2\n")
    has(errmsg(lf.read_csv, p), "read_csv: '" .. p .. "' has two columns named 't'")
    for _, name in ipairs{"samples", "columns", "units", "incomplete", "error", "write_csv"} do
      spill(p, "t," .. name .. "\n1,2\n")
      has(errmsg(lf.read_csv, p), ("has a column named '%s', which is a trajectory field or method"):format(name))
    end
  end)

  it("traj:load: the reader's error with the prefix traj:load and no Lua position; samples and columns from the file", function()
    local p = dir .. "/run.csv"
    local tr = small_run{stream = p}
    local full = tr:load()
    assert.are.equal(25, #full)
    assert.are.equal(25, full.samples)
    local text = read(p)
    spill(p, text .. "1,2,x\n")
    local msg = errmsg(tr.load, tr)
    has(msg, "traj:load: read_csv: " .. p .. " line 27")
    assert.is_nil(msg:find("%.lua:%d+:"), msg)
    -- a file that holds other columns than the run: what the file says wins
    spill(p, "t,energy\n0,1\n0.5,1\n")
    local got = tr:load()
    assert.are.same({"t", "energy"}, {table.unpack(got:columns())})
    assert.are.equal(2, got.samples)
    assert.are.equal(2, #got)
  end)

  it("lf.load: a checkpoint without its method, step or system kind says which field (before: 'lf.integrator: method name ... got nil')", function()
    local it = lf.integrator("vlv", lf.stress_system(), {h = 0.125})
    it:step(3)
    local p = dir .. "/c.ckpt"
    it:save(p)
    local good = read(p)
    assert.are.equal(it.t, lf.load(p, lf.stress_system()).t)
    for field, want in pairs{method = "its field method (a string) is nil", h = "its field h (a finite number) is nil",
                             system_kind = "its field system_kind (a string) is nil"} do
      local c = lf.json.decode(good)
      c[field] = nil
      spill(p, lf.json.encode(c))
      has(errmsg(lf.load, p, lf.stress_system()), "lf.load: '" .. p .. "' is damaged: " .. want)
    end
    local c = lf.json.decode(good)
    c.h = "0.125"
    spill(p, lf.json.encode(c))
    has(errmsg(lf.load, p, lf.stress_system()), "its field h (a finite number) is string")
  end)

  it_h5("HDF5: every truncation of a lieflow file is an error naming the file (checksummed format)", function()
    local p, q = dir .. "/t.h5", dir .. "/cut.h5"
    small_run():write_hdf5(p)
    local bytes = read(p)
    assert.are.equal(25, #lf.read_hdf5(p))
    for _, keep in ipairs{0, 8, 512, #bytes // 4, #bytes // 2, #bytes - 600, #bytes - 1} do
      spill(q, bytes:sub(1, keep))
      local msg = errmsg(lf.read_hdf5, q)
      has(msg, "read_hdf5: ")
      has(msg, "'" .. q .. "'")
      assert.is_truthy(msg:find("damaged", 1, true) or msg:find("not an HDF5 file", 1, true), msg)
    end
  end)

  it_h5("HDF5: a size field that claims more values than the file stores (before: 8388633 samples, 4 GB of memory, from 33 KB)", function()
    local p = FILES .. "lying-size.h5"
    has(errmsg(lf.read_hdf5, p), "column 't': damaged: its size claims more values than its chunks hold")
  end)

  it_h5("HDF5: a file on which the HDF5 library crashes is an error, read in a child process (before: the process died)", function()
    local msg = errmsg(lf.read_hdf5, FILES .. "hdf5-crash.h5")
    has(msg, "read_hdf5: '" .. FILES .. "hdf5-crash.h5' is damaged: ")
    -- a signal; under AddressSanitizer the child reports and exits with its own status
    assert.is_truthy(msg:find("the HDF5 library crashed reading it", 1, true)
      or msg:find("the process reading it ended without an answer", 1, true), msg)
    -- and this process goes on reading files
    local legacy = lf.read_hdf5(FILES .. "legacy-format.h5")
    assert.are.equal(25, #legacy)
    assert.are.equal(25, #legacy.t)
    assert.are.equal(3, legacy.t[25])
  end)

  it_h5("HDF5: a FIFO is refused at once (before: the reader's open of it to learn its size blocked forever)", function()
    local p = dir .. "/pipe.h5"
    assert(os.execute("mkfifo " .. shq(p)))
    -- in a child process under timeout(1), so that the old hang fails the test instead of stalling it
    local out = dir .. "/out.txt"
    os.execute(("timeout -s KILL 20 %s -e %s > %s 2>&1"):format(EXE,
      shq(("print(select(2, pcall(lf.read_hdf5, %q)))"):format(p)), shq(out)))
    has(read(out) or "", "read_hdf5: cannot read '" .. p .. "': not a regular file")
  end)

  it_h5("HDF5: no columns, reserved, repeated names and columns of unequal length are refused by name", function()
    local core = lf.core
    local function file(name, columns, attrs, rows)
      local p = dir .. "/" .. name
      local w = core.h5_create(p, columns, {}, "test")
      for r = 1, rows or 2 do
        local row = {}
        for i = 1, #columns do row[i] = r end
        w:append(table.unpack(row))
      end
      attrs.format = "lieflow-trajectory"
      w:commit(attrs)
      return p
    end
    -- an empty /columns (a mutation of legacy-format.h5; before: a trajectory whose write_csv raised
    -- "attempt to get length of a nil value")
    local p = FILES .. "no-columns.h5"
    has(errmsg(lf.read_hdf5, p), "read_hdf5: '" .. p .. "' has no columns: not a lieflow trajectory")
    p = file("noname.h5", {"t"}, {columns = ",t"})
    has(errmsg(lf.read_hdf5, p), "read_hdf5: '" .. p .. "': column '': a column without a name")
    p = file("reserved.h5", {"t", "samples"}, {})
    has(errmsg(lf.read_hdf5, p), "has a column named 'samples', which is a trajectory field or method")
    p = file("twice.h5", {"t"}, {columns = "t,t"})
    has(errmsg(lf.read_hdf5, p), "read_hdf5: '" .. p .. "' has two columns named 't'")
    -- columns of 3 and 5 values: the second copied in from another file by h5copy (hdf5-tools)
    assert(os.execute("command -v h5copy >/dev/null 2>&1"), "h5copy (Debian's hdf5-tools, installed by make test) is needed")
    local a = file("a.h5", {"t"}, {}, 3)
    local b = file("b.h5", {"t"}, {}, 5)
    assert(os.execute(("h5copy -i %s -o %s -s /columns/t -d /columns/x"):format(shq(b), shq(a))))
    has(errmsg(lf.read_hdf5, a), "read_hdf5: '" .. a .. "': column 'x' has 5 values, column 't' 3")
  end)
end)
