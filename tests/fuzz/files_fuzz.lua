-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow files fuzzer (issue 22): the readers of files given corrupted, truncated and lying input.
--
-- Valid files are written first by lieflow itself (a trajectory with the bodies' states as CSV, as
-- HDF5 with traj:write_hdf5 and streamed by lf.run, a checkpoint of a fixed-step and of an adaptive
-- integrator with it:save, a trajectory's JSON); LAMMPS data files (tests/fuzz/files/: LAMMPS's
-- examples/rigid data file, atom style atomic; a molecular and a full one with image flags, velocities,
-- Pair Coeffs and Bonds/Angles sections) and the extended XYZ and LAMMPS dump files lf.write_xyz and
-- lf.write_lammps_dump write of the rigid example; each case then mutates one of them (bit flips,
-- interesting bytes, truncation, a slice deleted, duplicated or spliced in from another file, a
-- number replaced by a lying one: 1e999, -0, 2^63, a huge count, a NaN; for LAMMPS files also edits
-- that know the format: lying atom and type counts, image flags, box bounds, a triclinic box, sections
-- dropped, repeated or renamed, atom styles, huge velocities, masses and Pair Coeffs) and hands it to its reader:
--   lf.read_csv, lf.read_hdf5, traj:load (a streamed run's file), lf.load (then two steps of the
--   loaded integrator), lf.json.decode, lf.read_lammps_data (with plausible options: bodies by
--   molecule or by a function of the atom id, cutoff, skin, shift, lj, coulomb, box = false; then two
--   steps of no_squish, split_exact or dlm, the thermodynamic observers, lf.write_xyz of the state).
--   There is no XYZ or dump reader: those files go to lf.read_lammps_data (another format: a clean
--   refusal) and into the splices.
-- A reader must return a usable value (a trajectory whose methods work: #, columns, write_csv,
-- totable, to_json) or raise an error that starts with its own name and says what is wrong.
-- Findings:
--   * an error that is not the reader's own ("attempt to index a nil value", "bad argument #1");
--   * a loaded integrator whose state is not finite, or whose steps fail with a raw error;
--   * a system read from a LAMMPS file whose steps, observers or lf.write_xyz fail with a raw error, or
--     whose state after steps that worked is not finite;
--   * a read that grows the process's peak memory by more than --max-mb (a size field believed):
--     VmHWM from /proc/self/status after every case.
-- A crash (a signal, a sanitizer report) ends the process; the harness (tests/fuzz/run.sh) prints
-- the last case from last-case.txt: the mutated file is kept as last-case.<ext> in the working directory.
--
-- Usage: lieflow tests/fuzz/files_fuzz.lua [--seed N] [--cases N] [--seconds S] [--max-mb M] [--verbose]
--   --verbose: the outcomes counted by reader and kind of error (how deep the cases get)
--   --keep-crashes: keep each file on which the HDF5 library crashed (in its child process) as
--     crash-<case>.h5, and each whose column claims more values than it stores as lying-size-<case>.h5
--     (the fixtures tests/fuzz/files/hdf5-crash.h5 and lying-size.h5 were found so)
--   Run it in a scratch directory (make test and make fuzz do that). Exit 0: no finding; 1: findings.
--   KNOWN_FINDINGS (below): reported bugs not fixed yet, counted apart unless LIEFLOW_FUZZ_ALL=1.
local lf = rawget(_G, "lf") or require "lieflow"
local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."

local opt = {seed = 1, cases = math.huge, seconds = 10, max_mb = 256}
do
  local i = 1
  while arg and arg[i] do
    local a = arg[i]
    if a == "--seed" then opt.seed = assert(tonumber(arg[i + 1]), "--seed N"); i = i + 1
    elseif a == "--cases" then opt.cases = assert(tonumber(arg[i + 1]), "--cases N"); i = i + 1
    elseif a == "--seconds" then opt.seconds = assert(tonumber(arg[i + 1]), "--seconds S"); i = i + 1
    elseif a == "--max-mb" then opt.max_mb = assert(tonumber(arg[i + 1]), "--max-mb M"); i = i + 1
    elseif a == "--verbose" then opt.verbose = true
    elseif a == "--keep-crashes" then opt.keep_crashes = true
    else error("files_fuzz.lua: unknown argument " .. a) end
    i = i + 1
  end
end
math.randomseed(opt.seed)
local clock = lf.core and lf.core.wall_time or os.clock

-- ------------------------------------------------------------------ the valid files
local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function spill(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

local function body() return lf.stress_system() end

local seeds = {}   -- {name, ext, bytes, read = function(path) ... end}
do
  local tr = lf.run(body(), {method = "vlv", h = 0.125, T = 3, states = true})
  tr:write_csv("seed.csv")
  seeds[#seeds + 1] = {name = "csv", ext = "csv", bytes = slurp("seed.csv")}
  local streamed = lf.run(body(), {method = "vlv", h = 0.125, T = 2, every = 2, stream = "seed-stream.csv"})
  seeds[#seeds + 1] = {name = "stream-csv", ext = "csv", bytes = slurp("seed-stream.csv"), traj = streamed}
  if lf.hdf5_available() then
    tr:write_hdf5("seed.h5")
    seeds[#seeds + 1] = {name = "h5", ext = "h5", bytes = slurp("seed.h5")}
    local s5 = lf.run(body(), {method = "rkmk_dp45", h = 0.125, T = 2, stream = "seed-stream.h5", states = true})
    seeds[#seeds + 1] = {name = "stream-h5", ext = "h5", bytes = slurp("seed-stream.h5"), traj = s5}
    -- the format other tools write (HDF5 1.8, no checksums: h5repack --low=0 --high=1 -f NONE -l CHUNK=8
    -- of a lieflow file): damage reaches HDF5's parser, whose crashes the reader must turn into errors
    seeds[#seeds + 1] = {name = "h5-legacy", ext = "h5", bytes = slurp(here .. "/files/legacy-format.h5")}
  end
  for _, m in ipairs{"vlv", "rkmk_dp45", "lgvi"} do
    local it = lf.integrator(m, body(), {h = 0.1}):step(7)
    it:save("seed.ckpt")
    seeds[#seeds + 1] = {name = "checkpoint-" .. m, ext = "ckpt", bytes = slurp("seed.ckpt"), checkpoint = true}
  end
  seeds[#seeds + 1] = {name = "json", ext = "json", bytes = lf.json.encode(tr:to_json()), json = true}
  -- LAMMPS data files (each with its options: see lammps_opts), and the XYZ and dump files of the rigid example
  for _, name in ipairs{"lammps-rigid", "lammps-molecular", "lammps-full"} do
    seeds[#seeds + 1] = {name = name, ext = "data", bytes = slurp(here .. "/files/" .. name .. ".data"), lammps = name,
                         data_file = true}
  end
  local sys, info = lf.read_lammps_data(here .. "/files/lammps-rigid.data", {bodies = function(id) return (id - 1) // 9 + 1 end,
                                                                            cutoff = 2.5})
  local it = lf.integrator("no_squish", sys, {h = 1e-4})
  local states = {it:state()}
  states[2] = it:step(3):state()
  lf.write_xyz("seed.xyz", {templates = info.templates, states = states, box = info.box, species = {"Ar"}, times = {0, 3e-4}})
  seeds[#seeds + 1] = {name = "xyz", ext = "data", bytes = slurp("seed.xyz"), lammps = "lammps-rigid"}
  lf.write_lammps_dump("seed.dump", {templates = info.templates, states = states, box = info.box, timesteps = {0, 3}})
  seeds[#seeds + 1] = {name = "lammps-dump", ext = "data", bytes = slurp("seed.dump"), lammps = "lammps-rigid"}
end

-- ------------------------------------------------------------------ mutations
local interesting_bytes = {0, 1, 0x7f, 0x80, 0xff, 0x20, 0x2c, 0x0a, 0x22, 0x5b, 0x7b, 0x5c}
local lying_numbers = {"1e999", "-1e999", "-0", "0", "9223372036854775807", "9223372036854775808",
  "18446744073709551616", "4294967296", "1e-320", "nan", "-nan", "inf", "NaN", "1e308", "-1",
  "99999999999999999999999", "0x7fffffff", "2.5", "1e", "--1", "", "[]", "{}", "\"x\"", "null", "true"}

local MAX_FILE = 1 << 22   -- a mutated file stays below 4 MB: memory beyond that is the reader's
local function rnd(n) return math.random(1, math.max(n, 1)) end
local function set_byte(s, i, b) return s:sub(1, i - 1) .. string.char(b) .. s:sub(i + 1) end

local mutations = {
  function(s) -- flip 1..8 bits
    for _ = 1, rnd(8) do
      local i = rnd(#s)
      if i <= #s then s = set_byte(s, i, s:byte(i) ~ (1 << math.random(0, 7))) end
    end
    return s, "bit flips"
  end,
  function(s) -- interesting bytes
    for _ = 1, rnd(4) do
      local i = rnd(#s)
      if i <= #s then s = set_byte(s, i, interesting_bytes[rnd(#interesting_bytes)]) end
    end
    return s, "interesting bytes"
  end,
  function(s) local n = math.random(0, #s); return s:sub(1, n), "truncated at " .. n end,
  function(s) -- delete a slice
    local i = rnd(#s); local j = math.min(#s, i + rnd(64) - 1)
    return s:sub(1, i - 1) .. s:sub(j + 1), "bytes " .. i .. ".." .. j .. " deleted"
  end,
  function(s) -- duplicate a slice
    local i = rnd(#s); local j = math.min(#s, i + rnd(512) - 1)
    return s:sub(1, j) .. s:sub(i, j) .. s:sub(j + 1), "bytes " .. i .. ".." .. j .. " duplicated"
  end,
  function(s, other) -- splice a slice of another file
    local i, k = rnd(#s), rnd(#other)
    local n = rnd(256)
    return s:sub(1, i - 1) .. other:sub(k, k + n - 1) .. s:sub(i + n), "spliced from another file"
  end,
  function(s) -- a number replaced by a lying one (text formats; a binary file gets it at random)
    local starts = {}
    for p in s:gmatch("()[%-%d]") do starts[#starts + 1] = p; if #starts > 4000 then break end end
    if #starts == 0 then return s, "no number" end
    local p = starts[rnd(#starts)]
    local q = s:find("[^%-%+%deE%.]", p) or #s + 1
    local by = lying_numbers[rnd(#lying_numbers)]
    return s:sub(1, p - 1) .. by .. s:sub(q), ("number at %d replaced by '%s'"):format(p, by)
  end,
  function(s) -- a 4- or 8-byte little-endian field set to a huge value (sizes and offsets of HDF5)
    local i = rnd(math.max(#s - 8, 1))
    local v = ({0xffffffff, 0x7fffffff, 0x10000000, 0xffffffffffffffff, 0x7fffffffffffffff})[rnd(5)]
    local w = math.random(2) == 1 and 4 or 8
    local le = string.pack("<I" .. w, v & (w == 4 and 0xffffffff or -1))
    return s:sub(1, i - 1) .. le .. s:sub(i + w), ("%d-byte field at %d set to 0x%x"):format(w, i, v)
  end,
  function(s) -- lines or lists repeated: a long file (at most MAX_FILE bytes)
    if #s == 0 then return s, "nothing to repeat" end
    local i = rnd(#s)
    local j = math.min(s:find("\n", i, true) or #s, i + 4096)
    local n = math.min(rnd(200), (MAX_FILE - #s) // (j - i + 1))
    if n < 1 then return s, "no room to repeat a slice" end
    return s:sub(1, j) .. s:sub(i, j):rep(n) .. s:sub(j + 1), ("a slice repeated %d times"):format(n)
  end,
}

-- Edits of LAMMPS data files that know the format (a case of a LAMMPS seed uses one of them with
-- probability 0.4 beside the generic mutations).
local function lines_of(s)
  local t = {}
  for l in (s .. "\n"):gmatch("([^\n]*)\n") do t[#t + 1] = l end
  if t[#t] == "" then t[#t] = nil end
  return t
end
local function section_at(t, key) -- the line of a section keyword, and the first and last row of the section
  for i, l in ipairs(t) do
    if l:match("^%s*" .. key .. "%f[%s%z#]") or l == key then
      local a = i + 1
      while t[a] and t[a]:match("^%s*$") do a = a + 1 end
      if not t[a] then return i end -- a keyword without rows
      local b = a
      while t[b + 1] and not t[b + 1]:match("^%s*$") do b = b + 1 end
      return i, a, b
    end
  end
end
local function atom_cols(t) -- the column of the type, of x, and the number of columns before the image flags
  local i = section_at(t, "Atoms")
  local style = i and t[i]:match("#%s*(%S+)") or "atomic"
  if style == "molecular" then return 3, 4, 6 elseif style == "full" then return 3, 5, 7 end
  return 2, 3, 5
end
local function fields(l) local w = {} for x in l:gmatch("%S+") do w[#w + 1] = x end return w end
local function pick_lie(t) return t[rnd(#t)] end
local LIE_INT = {"0", "-1", "1", "2", "2147483647", "2147483648", "4294967296", "9223372036854775807", "1e3", "1.5", "1e308", "nan"}
local LIE_REAL = {"1e300", "-1e300", "1e160", "1e-300", "5e-324", "0", "-0", "1e308", "-1e308", "inf", "nan", "1e154", "0.1", "-3"}
local lammps_mutations = {
  function(t) -- the number of atom types K, an atom of type K and its mass (the type tables have K^2 entries)
    local K = math.random() < 0.9 and ({2, 3, 17, 64, 200})[rnd(5)] or ({1024, 1025, 4097, 100000, 2147483647, 4294967297})[rnd(6)]
    for i, l in ipairs(t) do if l:match("atom types") then t[i] = K .. " atom types" end end
    local _, a = section_at(t, "Masses")
    if a then table.insert(t, a, K .. " 1.5") end
    local _, a1, b1 = section_at(t, "Atoms")
    if a1 then
      local r = math.random(a1, b1)
      local w = fields(t[r])
      local tc = atom_cols(t)
      if w[tc] then w[tc] = tostring(K); t[r] = table.concat(w, " ") end
    end
    return t, "atom types " .. K
  end,
  function(t) -- image flags: huge, fractional, missing, extra
    local _, a, b = section_at(t, "Atoms")
    if not a then return t, "no Atoms section" end
    local _, _, nbefore = atom_cols(t)
    local r = math.random(a, b)
    local w = fields(t[r])
    local what = ({"lie", "drop", "extra"})[rnd(3)]
    if what == "drop" then for _ = nbefore + 1, #w do w[#w] = nil end
    elseif what == "extra" then w[#w + 1] = pick_lie(LIE_INT)
    else for k = #w + 1, nbefore do w[k] = "0" end for k = nbefore + 1, nbefore + 3 do w[k] = math.random() < 0.5 and pick_lie(LIE_INT) or (w[k] or "0") end end
    t[r] = table.concat(w, " ")
    return t, "image flags of line " .. r .. ": " .. what
  end,
  function(t) -- a box bound: swapped, tiny, huge, a triclinic tilt line, a missing bound
    for i, l in ipairs(t) do
      if l:match("[xyz]lo [xyz]hi") then
        local how = rnd(5)
        if how == 1 then local w = fields(l); t[i] = ("%s %s %s %s"):format(w[2], w[1], w[3], w[4])
        elseif how == 2 then t[i] = l:gsub("^%s*%S+%s+%S+", pick_lie(LIE_REAL) .. " " .. pick_lie(LIE_REAL))
        elseif how == 3 then table.insert(t, i + 1, "0 0 0 xy xz yz")
        elseif how == 4 then table.remove(t, i)
        else local w = fields(l); t[i] = ("%s %.17g %s %s"):format(w[1], (tonumber(w[1]) or 0) + ({3, 4.9, 5, 1e-9, 0})[rnd(5)], w[3], w[4]) end
        return t, "box line " .. i .. " edited (" .. how .. ")"
      end
    end
    return t, "no box line"
  end,
  function(t) -- the atom count lies
    for i, l in ipairs(t) do
      if l:match("^%s*%S+%s+atoms%s*$") then
        local n = tonumber(l:match("%S+")) or 0
        t[i] = ({tostring(n - 1), tostring(n + 1), "0", pick_lie(LIE_INT)})[rnd(4)] .. " atoms"
        return t, "atom count: " .. t[i]
      end
    end
    return t, "no atom count"
  end,
  function(t) -- a section dropped, repeated, renamed, or its keyword's style comment changed
    local keys = {"Masses", "Atoms", "Velocities", "Pair Coeffs", "Bonds", "Angles"}
    local key = keys[rnd(#keys)]
    local i, a, b = section_at(t, key)
    if not a then return t, "no " .. key end
    local how = rnd(4)
    if how == 1 then for _ = i, b do table.remove(t, i) end
    elseif how == 2 then for k = b, i, -1 do table.insert(t, b + 1, t[k]) end table.insert(t, b + 1, "")
    elseif how == 3 then t[i] = ({"Atom", "atoms", "Atoms # charge", "Atoms # full", "Atoms # molecular", "Atoms # atomic",
                                   "Ellipsoids", "Velocities", "Masses", "Atoms #"})[rnd(10)]
    else table.insert(t, math.random(a, b + 1), t[math.random(a, b)] ) end
    return t, ("section %s: %s"):format(key, ({"dropped", "repeated", "renamed", "a row repeated"})[how])
  end,
  function(t) -- a number of a row of Atoms, Velocities, Masses or Pair Coeffs set to an extreme
    local keys = {"Masses", "Atoms", "Velocities", "Pair Coeffs"}
    local key = keys[rnd(#keys)]
    local _, a, b = section_at(t, key)
    if not a then return t, "no " .. key end
    local r = math.random(a, b)
    local w = fields(t[r])
    local k = math.random(1, math.max(#w, 1))
    w[k] = pick_lie(k == 1 and LIE_INT or LIE_REAL)
    t[r] = table.concat(w, " ")
    return t, ("%s row %d field %d set to %s"):format(key, r, k, w[k])
  end,
}
local function lammps_mutate(s)
  local t = lines_of(s)
  local how
  t, how = lammps_mutations[rnd(#lammps_mutations)](t)
  return table.concat(t, "\n") .. "\n", how
end

-- ------------------------------------------------------------------ known findings
-- Reported bugs (not fixed yet): their cases are counted apart and do not fail the run unless
-- LIEFLOW_FUZZ_ALL=1. Delete an entry when its bug is fixed. `skip(seed, how)` skips a case before it
-- is read (a case that would take the machine's memory or time); `match(who, msg)` takes a finding.
local RUN_ALL = os.getenv("LIEFLOW_FUZZ_ALL") == "1"
local KNOWN_FINDINGS = {
}
local known_hits = {}
local function known(kind, ...)
  if RUN_ALL then return nil end
  for _, k in ipairs(KNOWN_FINDINGS) do
    if k[kind] and k[kind](...) then known_hits[k.id] = (known_hits[k.id] or 0) + 1; return k end
  end
end

-- ------------------------------------------------------------------ the readers and their checks
local findings, nfind = {}, 0
local function finding(what, case)
  nfind = nfind + 1
  local key = what:gsub("%d+", "N"):sub(1, 160)
  local f = findings[key]
  if not f then
    findings[key] = {count = 1, first = case, what = what}
    io.stderr:write(("files_fuzz: FINDING %s\n  case %s\n"):format(what, case))
  else
    f.count = f.count + 1
  end
end

-- an error is the reader's own: it names the reader, and is not a raw Lua runtime error
local raw_error = {"attempt to ", "bad argument", "stack overflow", "table index is", "number has no integer",
  "string length overflow", "not enough memory", "C stack overflow", "invalid value %(at index"}
local function check_error(who, err, case)
  local msg = tostring(err)
  if known("match", who, msg) then return end
  if msg:find("^[^:]*%.lua:%d+:") then
    return finding(("%s: error with the position of library code: %s"):format(who, msg:sub(1, 300)), case)
  end
  for _, p in ipairs(raw_error) do
    if msg:find(p) then return finding(("%s: raw error: %s"):format(who, msg:sub(1, 300)), case) end
  end
  if not msg:find(who, 1, true) then finding(("%s: error without the reader's name: %s"):format(who, msg:sub(1, 300)), case) end
end

-- a trajectory read back: its methods work (or fail cleanly)
local function exercise_traj(who, tr, case)
  local ok, err = pcall(function()
    local n = #tr
    local cols = tr:columns()
    assert(type(cols) == "table", "columns() is not a table")
    for _, c in ipairs(cols) do
      local a = tr[c]
      if type(a) ~= "table" then error(("column '%s' is %s, not an array"):format(c, type(a))) end
      if #a ~= n then error(("column '%s' has %d values, the trajectory %d samples"):format(c, #a, n)) end
    end
    tr:write_csv("readback.csv")
    tr:totable()
    lf.json.encode(tr:to_json())
  end)
  if not ok then
    local msg = tostring(err)
    -- the trajectory's methods may refuse what they find (a column name that is not UTF-8 has no
    -- JSON): an error that names its function and is not a raw one
    local raw = false
    for _, p in ipairs(raw_error) do raw = raw or msg:find(p) ~= nil end
    if msg:find("^[%w_.:]+: ") and not raw then return end
    finding(("%s: the trajectory read is not usable: %s"):format(who, msg:sub(1, 300)), case)
  end
end

local function exercise_integrator(it, case)
  local ok, err = pcall(function()
    for _, x in ipairs{it.t, it.h} do
      if x ~= x or x == math.huge or x == -math.huge then error("non-finite t or h after load: " .. tostring(x)) end
    end
    it:step(2)
  end)
  if not ok then
    local msg = tostring(err)
    if msg:find("non-finite t or h") or msg:find("attempt to") or msg:find("bad argument") then
      finding("lf.load: the integrator loaded: " .. msg:sub(1, 300), case)
    end
  end
end

local outcomes = {}   -- "reader: ok" / "reader: <error, numbers and quoted names blanked>" -> count
local function outcome(who, msg)
  local k = who .. ": " .. (msg and tostring(msg):gsub("'[^']*'", "'_'"):gsub("%-?%d[%d%.e%-+]*", "N"):sub(1, 90) or "read")
  outcomes[k] = (outcomes[k] or 0) + 1
  return msg
end

-- plausible options of lf.read_lammps_data for a seed (its own, with variations)
local function clump(id) return (id - 1) // 9 + 1 end
local function lammps_opts(name)
  local o
  if name == "lammps-rigid" then o = {bodies = clump, cutoff = ({2.5, 2.5, 1.5, 3})[rnd(4)], skin = ({0.3, 0, 1})[rnd(3)]}
  elseif name == "lammps-molecular" then
    o = {bodies = math.random() < 0.8 and "molecule" or function(id) return (id - 1) // 4 + 1 end, cutoff = ({3, 2.5, 1})[rnd(3)],
         skin = ({0.5, 0})[rnd(2)], shift = math.random() < 0.5}
  else
    o = {bodies = "molecule", cutoff = ({3.5, 3, 4.4})[rnd(3)], skin = ({0.4, 0})[rnd(2)], lj = {{0.15, 2.5}, {0, 1}},
         coulomb = {alpha = ({0.25, 0, 1})[rnd(3)], k = ({1, 332.06371})[rnd(2)]}}
  end
  if math.random() < 0.15 then o.box = false end
  if math.random() < 0.1 then o.lj_pairs = {[1] = {[2] = {0.2, 1.1}}} end
  return o
end
local METHODS = {"no_squish", "split_exact", "dlm"}
local function raw_msg(msg)
  for _, p in ipairs(raw_error) do if msg:find(p) then return true end end
  return false
end
local function finite3(v) return v[1] == v[1] and v[2] == v[2] and v[3] == v[3] and math.abs(v[1]) ~= math.huge and
  math.abs(v[2]) ~= math.huge and math.abs(v[3]) ~= math.huge end
-- a system read from a LAMMPS file: two steps of a method, its observers, lf.write_xyz of its state
local function exercise_lammps(sys, info, case)
  local h = ({1e-4, 1e-3, 1e-2})[rnd(3)]
  local m = METHODS[rnd(#METHODS)]
  local ok, err = pcall(function()
    local n = sys.n
    if type(info) ~= "table" or type(info.templates) ~= "table" or #info.templates ~= n then
      error(("read_lammps_data's info has %s templates for %s bodies"):format(type(info) == "table" and #info.templates or "no", n))
    end
    local it = lf.integrator(m, sys, {h = h})
    local stepped = pcall(it.step, it, 2)
    if stepped then
      local xs, vs = it.x, it.v
      if type(xs) ~= "table" then xs, vs = {xs}, {vs} end
      for b = 1, #xs do
        if not finite3(xs[b]) or not finite3(vs[b]) then error(("body %d not finite after 2 steps that worked"):format(b)) end
      end
      local e = it:energy()
      if e ~= e or math.abs(e) == math.huge then error("the energy after 2 steps that worked is " .. tostring(e)) end
    end
    for k, f in pairs(info.observe or {}) do
      local okf, v = pcall(f, it)
      if okf and stepped and (type(v) ~= "number" or v ~= v or math.abs(v) == math.huge) then
        error(("observer %s gave %s"):format(k, tostring(v)))
      elseif not okf and raw_msg(tostring(v)) then error(("observer %s: %s"):format(k, tostring(v))) end
    end
    local okw, werr = pcall(lf.write_xyz, "readback.xyz", {templates = info.templates, state = it:state(), box = info.box})
    if not okw then error("lf.write_xyz of the state: " .. tostring(werr)) end
  end)
  if not ok then
    local msg = tostring(err)
    if raw_msg(msg) or msg:find("not finite after") or msg:find("after 2 steps") or msg:find("observer ") or
       msg:find("write_xyz") or msg:find("info has") then
      if known("match", "system", msg) then return end
      finding(("lf.read_lammps_data: the system read (%s, h = %g): %s"):format(m, h, msg:sub(1, 300)), case)
    end
  end
end

local function read(seed, path, case)
  if seed.lammps then
    local ok, sys, info = pcall(lf.read_lammps_data, path, lammps_opts(seed.lammps))
    outcome("read_lammps_data", not ok and sys)
    if ok then exercise_lammps(sys, info, case) else check_error("lf.read_lammps_data", sys, case) end
  elseif seed.json then
    local ok, err = pcall(lf.json.decode, slurp(path))
    outcome("json.decode", not ok and err)
    if not ok then check_error("json.decode", err, case) end
  elseif seed.checkpoint then
    local ok, it = pcall(lf.load, path, body())
    outcome("lf.load", not ok and it)
    if ok then exercise_integrator(it, case) else check_error("lf.load", it, case) end
  elseif seed.traj then
    local t = seed.traj
    local saved = t.file
    rawset(t, "file", path)
    local ok, tr = pcall(t.load, t)
    rawset(t, "file", saved)
    local who = seed.ext == "h5" and "read_hdf5" or "read_csv"
    outcome("traj:load " .. seed.ext, not ok and tr)
    if ok then exercise_traj("traj:load", tr, case) else check_error("traj:load: " .. who, tr, case) end
  else
    local who = seed.ext == "h5" and "read_hdf5" or "read_csv"
    local ok, tr = pcall(lf[who], path)
    outcome(who, not ok and tr)
    local kept = opt.keep_crashes and not ok and (tostring(tr):find("library crashed", 1, true) and "crash"
      or tostring(tr):find("size claims more", 1, true) and "lying-size")
    if kept then spill(("%s-%s.h5"):format(kept, case:match("^%d+")), slurp(path)) end
    if ok then exercise_traj(who, tr, case) else check_error(who, tr, case) end
  end
end

local function peak_mb()
  local f = io.open("/proc/self/status", "r")
  if not f then return 0 end
  local s = f:read("a")
  f:close()
  return (tonumber(s:match("VmHWM:%s*(%d+)")) or 0) / 1024
end

-- ------------------------------------------------------------------ the run
local t_end = clock() + opt.seconds
local cases, by_seed = 0, {}
local base_mb = peak_mb()
while cases < opt.cases and clock() < t_end do
  cases = cases + 1
  local seed = seeds[rnd(#seeds)]
  local other = seeds[rnd(#seeds)].bytes
  local bytes, how = seed.bytes, {}
  for _ = 1, rnd(3) do
    local m = mutations[rnd(#mutations)]
    if seed.data_file and math.random() < 0.4 then m = lammps_mutate end
    local what
    bytes, what = m(bytes, other)
    how[#how + 1] = what
  end
  local path = "last-case." .. seed.ext
  spill(path, bytes)
  local case = ("%d of seed %d: %s, %s (file kept as %s while it is the last case)")
    :format(cases, opt.seed, seed.name, table.concat(how, "; "), path)
  spill("last-case.txt", case .. "\n") -- what a crash's harness prints
  if not known("skip", seed, table.concat(how, "; ")) then read(seed, path, case) end
  by_seed[seed.name] = (by_seed[seed.name] or 0) + 1
  if cases % 64 == 0 then collectgarbage() end
  local grown = peak_mb() - base_mb
  if grown > opt.max_mb then
    finding(("peak memory grew by %.0f MB (more than %d MB): a size read from the file was believed"):format(grown, opt.max_mb), case)
    base_mb = peak_mb()
  end
end

local parts = {}
for _, s in ipairs(seeds) do parts[#parts + 1] = ("%s %d"):format(s.name, by_seed[s.name] or 0) end
io.stderr:write(("files_fuzz: seed %d, %d cases (%s), %d findings\n"):format(opt.seed, cases, table.concat(parts, ", "), nfind))
if opt.verbose then
  local keys = {}
  for k in pairs(outcomes) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do io.stderr:write(("  %6d  %s\n"):format(outcomes[k], k)) end
end
for _, k in ipairs(KNOWN_FINDINGS) do
  if known_hits[k.id] then
    io.stderr:write(("  known (%d cases not counted): %s [%s]: %s\n    repro: %s\n"):format(known_hits[k.id], k.id, k.owner,
      k.what, k.repro))
  end
end
for _, f in pairs(findings) do
  io.stderr:write(("  %dx %s\n    first at case %s\n"):format(f.count, f.what, f.first))
end
os.remove("last-case.data"); os.remove("readback.xyz")
os.remove("last-case.csv"); os.remove("last-case.h5"); os.remove("last-case.ckpt"); os.remove("last-case.json")
os.remove("last-case.txt")
os.exit(nfind == 0 and 0 or 1)
