-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow files fuzzer (issue 22): the readers of files given corrupted, truncated and lying input.
--
-- Valid files are written first by lieflow itself (a trajectory with the bodies' states as CSV, as
-- HDF5 with traj:write_hdf5 and streamed by lf.run, a checkpoint of a fixed-step and of an adaptive
-- integrator with it:save, a trajectory's JSON); each case then mutates one of them (bit flips,
-- interesting bytes, truncation, a slice deleted, duplicated or spliced in from another file, a
-- number replaced by a lying one: 1e999, -0, 2^63, a huge count, a NaN) and hands it to its reader:
--   lf.read_csv, lf.read_hdf5, traj:load (a streamed run's file), lf.load (then two steps of the
--   loaded integrator), lf.json.decode.
-- A reader must return a usable value (a trajectory whose methods work: #, columns, write_csv,
-- totable, to_json) or raise an error that starts with its own name and says what is wrong.
-- Findings:
--   * an error that is not the reader's own ("attempt to index a nil value", "bad argument #1");
--   * a loaded integrator whose state is not finite, or whose steps fail with a raw error;
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

local function read(seed, path, case)
  if seed.json then
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
    local what
    bytes, what = m(bytes, other)
    how[#how + 1] = what
  end
  local path = "last-case." .. seed.ext
  spill(path, bytes)
  local case = ("%d of seed %d: %s, %s (file kept as %s while it is the last case)")
    :format(cases, opt.seed, seed.name, table.concat(how, "; "), path)
  spill("last-case.txt", case .. "\n") -- what a crash's harness prints
  read(seed, path, case)
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
for _, f in pairs(findings) do
  io.stderr:write(("  %dx %s\n    first at case %s\n"):format(f.count, f.what, f.first))
end
os.remove("last-case.csv"); os.remove("last-case.h5"); os.remove("last-case.ckpt"); os.remove("last-case.json")
os.remove("last-case.txt")
os.exit(nfind == 0 and 0 or 1)
