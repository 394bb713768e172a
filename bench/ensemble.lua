-- lieflow benchmark: lf.ensemble throughput for 1, 2, ... worker processes and MPI ranks.
-- Run: make bench  (or build/lieflow bench/ensemble.lua [members [T [repeats]]])
--
-- The workload: `members` runs of the seed-000 stress test (vlv, h = 1/8, T steps of lf.run sampled
-- every 100 steps), alpha varied per member so that no two are alike. Each configuration runs
-- `repeats` times; the table shows the fastest (the machine is shared: the minimum is the run least
-- disturbed by other work) and the median. speed-up = serial time / time; efficiency = speed-up / k.
-- "serial" is workers = 1: the members in this process, no fork (what a plain loop costs).
-- Every configuration's results are checked to be bitwise identical to the serial ones.
-- cpu/wall: the CPU seconds the members got (sum over members) per wall second: the number of cores
-- the ensemble really had. On a machine shared with other work it shows when the speed-up is capped
-- by the cores others use rather than by lf.ensemble.
-- MPI rows (when mpirun and lieflow.mpi are there) start `mpirun -n k` on this script; the time is
-- the ensemble's on rank 0 (distribution, runs, gather), without mpirun's own start-up, shown apart.
local lf = lf or require "lieflow"
local core = require "lieflow.core"
local clock = core.wall_time

local members = tonumber(arg and arg[1]) or 16
local T = tonumber(arg and arg[2]) or 50000
local repeats = tonumber(arg and arg[3]) or 3
local mpi_child = arg and arg[4] == "--mpi-child"

local h = 0.125
local function make(i)
  local s = 2.5 / math.sqrt(2)
  return lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7227, 0}, omega = {0, 0, 0.625},
                      potential = lf.potential.stress{alpha = 0.2 + 0.2 * i / members, Rm = lf.so3.exp{s, 0, s}}}
end
local function sweep(workers, mpi)
  return lf.ensemble{n = members, make = make, method = "vlv", h = h, T = T, every = 100, workers = workers,
                     mpi = mpi, progress = false,
                     summarize = function(m) return {E_end = m.trajectory.energy_error[m.stats.samples]} end,
                     trajectory = false}
end

if mpi_child then
  -- one measurement under mpirun: rank 0 prints the time of the ensemble and a digest of its results
  local mpi = assert(lf.ensemble.mpi_module())
  mpi.init()
  local best = math.huge
  local res
  for _ = 1, repeats do
    mpi.barrier()
    local t0 = clock()
    res = sweep(nil, true)
    if res.root then best = math.min(best, clock() - t0) end
  end
  if res.root then
    local digest = {}
    for i = 1, members do digest[i] = ("%a"):format(res[i].summary.E_end) end
    print(("MPI-RESULT %.6f %s"):format(best, table.concat(digest, ",")))
  end
  return
end

local ncpu, online = core.proc.ncpu()
local f = io.open("/proc/cpuinfo")
local cpu = f and f:read("a"):match("model name%s*:%s*([^\n]+)") or "unknown CPU"
if f then f:close() end
local function loadavg()
  local g = io.open("/proc/loadavg")
  local s = g and g:read("l") or "?"
  if g then g:close() end
  return s:match("^(%S+ %S+ %S+)") or s
end
print(("lieflow %s ensemble benchmark: %d members x %d steps (stress test, vlv, h = 1/8, T = %g), best and median of %d"):format(
  lf.version, members, math.floor(T / h), T, repeats))
print(("%s, %d CPUs usable (%d online); load average before: %s"):format(cpu, ncpu, online, loadavg()))

local function median(xs)
  local s = {table.unpack(xs)}
  table.sort(s)
  local n = #s
  return n % 2 == 1 and s[(n + 1) // 2] or 0.5 * (s[n // 2] + s[n // 2 + 1])
end

-- CPU seconds the members got, over the wall time: how many cores the ensemble really had
local function cpu_of(res)
  local c = 0
  for i = 1, res.n do c = c + res[i].timing.cpu_time end
  return c
end

local function time_it(k)
  local ts, res, best, util = {}, nil, math.huge, nil
  for r = 1, repeats do
    local t0 = clock()
    res = sweep(k, false)
    ts[r] = clock() - t0
    assert(res.completed == members, ("bench: %d of %d members failed"):format(#res.failed, members))
    if ts[r] < best then best, util = ts[r], cpu_of(res) / ts[r] end
  end
  return best, median(ts), res, util
end

local rows = {}
local t1, m1, serial, u1 = time_it(1)
rows[1] = {label = "serial (in process)", k = 1, best = t1, med = m1, identical = true, util = u1}
for _, k in ipairs{2, 3, 4} do
  local tb, tm, res, u = time_it(k)
  local same, where = lf.ensemble.identical(res, serial)
  rows[#rows + 1] = {label = ("%d workers"):format(k), k = k, best = tb, med = tm, identical = same, where = where,
                     util = u}
end

-- MPI
local mpirun = os.execute("command -v mpirun >/dev/null 2>&1")
local have_mpi = mpirun and lf.ensemble.mpi_module() ~= nil
local mpi_note
if have_mpi then
  local exe = arg[-1] or "lieflow"
  local script = arg[0]
  local digest = {}
  for i = 1, members do digest[i] = ("%a"):format(serial[i].summary.E_end) end
  digest = table.concat(digest, ",")
  for _, k in ipairs{1, 2, 4} do
    local cmd = ("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none "
      .. "timeout 600 mpirun --oversubscribe --allow-run-as-root -n %d %s %s %d %.17g %d --mpi-child 2>&1"):format(
      k, exe, script, members, T, repeats)
    local w0 = clock()
    local p = io.popen(cmd)
    local out = p:read("a")
    p:close()
    local whole = clock() - w0
    local t, d = out:match("MPI%-RESULT (%S+) (%S+)")
    if t then
      rows[#rows + 1] = {label = ("MPI %d rank%s"):format(k, k > 1 and "s" or ""), k = k, best = tonumber(t),
                         identical = d == digest, where = d ~= digest and "final energy errors differ" or nil,
                         launch = whole}
    else
      rows[#rows + 1] = {label = ("MPI %d ranks"):format(k), k = k, failed = out:sub(1, 300)}
    end
  end
else
  mpi_note = "MPI: not measured (mpirun or lieflow.mpi missing)"
end

print(("%-22s %4s %9s %9s %10s %9s %10s %9s %10s"):format("configuration", "k", "best s", "median s", "members/s",
  "speed-up", "efficiency", "cpu/wall", "= serial"))
local bad = false
for _, r in ipairs(rows) do
  if r.failed then
    print(("%-22s %4d  failed: %s"):format(r.label, r.k, r.failed))
    bad = true
  else
    local su = t1 / r.best
    print(("%-22s %4d %9.3f %9s %10.1f %9.2f %9.0f%% %9s %10s"):format(r.label, r.k, r.best,
      r.med and ("%.3f"):format(r.med) or "-", members / r.best, su, 100 * su / r.k,
      r.util and ("%.2f"):format(r.util) or "-", r.identical and "yes" or "NO"))
    if not r.identical then bad = true; print("   first difference: " .. tostring(r.where)) end
  end
end
for _, r in ipairs(rows) do
  if r.launch then print(("%s: whole mpirun %.2f s (start-up and %d repeats)"):format(r.label, r.launch, repeats)) end
end
if mpi_note then print(mpi_note) end
print(("load average after: %s"):format(loadavg()))
if bad then error("bench/ensemble.lua: a configuration failed or differs from the serial results") end
