-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow benchmark: lf.ensemble throughput for 1, 2, ... worker processes and MPI ranks.
-- Run: make bench  (or build/lieflow bench/ensemble.lua [members [T [repeats]]])
--
-- The workload: `members` runs of the [BOS] stress test (vlv, h = 1/8, T steps of lf.run sampled
-- every 100 steps), alpha varied per member so that no two are alike. The configurations run
-- interleaved, `repeats` rounds; the table shows the fastest of each (the machine is shared: the
-- minimum is the run least disturbed by other work) and the median. speed-up = best serial time /
-- best time; efficiency = speed-up / k.
-- "serial" is workers = 1: the members in this process, no fork (what a plain loop costs).
-- Every configuration's results are checked to be bitwise identical to the serial ones.
-- cpu/wall: the CPU seconds the members got (sum over members) per wall second: the number of cores
-- the ensemble really had. On a machine shared with other work it shows when the speed-up is capped
-- by the cores others use rather than by lf.ensemble (Linux's autogroup scheduling gives each busy
-- session an equal share of the machine, whatever the number of its processes).
-- cpu-bound: serial CPU seconds / max(CPU seconds of the busiest worker or rank, all CPU seconds /
-- CPUs) (medians over the rounds): the speed-up the schedule would give on this machine without
-- other work. A model, not a measurement: the measured speed-up reaches it only on an idle machine.
-- MPI rows (when mpirun and lieflow.mpi are there) start `mpirun -n k` on this script; the time is
-- the ensemble's on rank 0 (distribution, runs, gather), without mpirun's own start-up, shown apart.
local lf = lf or require "lieflow"
local core = require "lieflow.core"
local clock = core.wall_time

local members = tonumber(arg and arg[1]) or 16
local T = tonumber(arg and arg[2]) or 25000
local repeats = tonumber(arg and arg[3]) or 5
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

local ncpu, online = core.proc.ncpu()

if mpi_child then
  -- one measurement under mpirun: rank 0 prints the time of the ensemble (distribution, runs,
  -- gather) and the CPU seconds of its members, and writes the members to the file arg[5]
  local mpi = assert(lf.ensemble.mpi_module())
  mpi.init()
  mpi.barrier()
  local t0 = clock()
  local res = sweep(nil, true)
  if res.root then
    local t = clock() - t0
    local c, m = 0, {}
    for i = 1, members do c, m[i] = c + res[i].timing.cpu_time, res[i] end
    local f = assert(io.open(arg[5], "wb"))
    f:write(core.proc.encode(m))
    f:close()
    print(("MPI-RESULT %.6f %.6f"):format(t, c))
  end
  return
end

local cpu = require("lieflow.experiment").cpu_name()
local loadavg = require("lieflow.experiment").load_average
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

-- The least wall time this run could take on this machine's CPUs alone (no other work): the CPU
-- seconds of the busiest worker (or rank), and at least all CPU seconds / number of CPUs.
-- serial CPU / this = the speed-up the schedule allows ("cpu-bound").
local function critical_of(members_list, key)
  local per, total = {}, 0
  for _, r in ipairs(members_list) do
    local w = r.timing[key] or 0
    per[w] = (per[w] or 0) + r.timing.cpu_time
    total = total + r.timing.cpu_time
  end
  local m = total / ncpu
  for _, c in pairs(per) do m = math.max(m, c) end
  return m
end

-- the members of a result as plain data (for the comparison with the serial run)
local function members_of(res)
  local t = {}
  for i = 1, res.n do t[i] = res[i] end
  return t
end

local mpirun = os.execute("command -v mpirun >/dev/null 2>&1")
local have_mpi = mpirun and lf.ensemble.mpi_module() ~= nil
local tmp = os.tmpname()

-- one MPI measurement: mpirun -n k on this script; returns time, cpu, identical, where, whole | nil, message
local function mpi_once(k, serial)
  local exe = arg[-1] or "lieflow"
  local cmd = ("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none "
    .. "timeout 600 mpirun --oversubscribe --allow-run-as-root -n %d %s %s %d %.17g 1 --mpi-child %s 2>&1"):format(
    k, exe, arg[0], members, T, tmp)
  local w0 = clock()
  local p = io.popen(cmd)
  local out = p:read("a")
  p:close()
  local whole = clock() - w0
  local t, c = out:match("MPI%-RESULT (%S+) (%S+)")
  if not t then return nil, out:sub(1, 400) end
  local f = assert(io.open(tmp, "rb"))
  local got = core.proc.decode(f:read("a"))
  f:close()
  local same, where = lf.ensemble.identical(got, members_of(serial))
  return tonumber(t), tonumber(c), same, where, whole, critical_of(got, "rank")
end

-- The configurations run interleaved (serial, 2, 3, 4 workers, MPI 1, 2, 4 ranks; then again), so
-- that changes of the machine's load hit them alike.
local configs = {{label = "serial (in process)", k = 1}, {label = "2 workers", k = 2}, {label = "3 workers", k = 3},
                 {label = "4 workers", k = 4}}
if have_mpi then
  for _, k in ipairs{1, 2, 4} do configs[#configs + 1] = {label = ("MPI %d rank%s"):format(k, k > 1 and "s" or ""), k = k, mpi = true} end
end
for _, c in ipairs(configs) do c.times, c.utils, c.crit, c.identical = {}, {}, {}, true end
local serial_cpu = {}
local serial
for _ = 1, repeats do
  for _, c in ipairs(configs) do
    if c.mpi then
      local t, cpu_s, same, where, whole, crit = mpi_once(c.k, serial)
      if not t then c.failed = cpu_s else
        c.times[#c.times + 1], c.utils[#c.utils + 1], c.crit[#c.crit + 1] = t, cpu_s / t, crit
        c.launch = math.max(c.launch or 0, whole)
        if not same then c.identical, c.where = false, where end
      end
    else
      local t0 = clock()
      local res = sweep(c.k, false)
      local t = clock() - t0
      assert(res.completed == members, ("bench: %d of %d members failed"):format(#res.failed, members))
      c.times[#c.times + 1], c.utils[#c.utils + 1] = t, cpu_of(res) / t
      c.crit[#c.crit + 1] = critical_of(members_of(res), "worker")
      if c.k == 1 then serial_cpu[#serial_cpu + 1] = cpu_of(res) end
      if c.k == 1 and not serial then serial = res end
      local same, where = lf.ensemble.identical(res, serial)
      if not same then c.identical, c.where = false, where end
    end
  end
end
os.remove(tmp)

local rows = {}
for _, c in ipairs(configs) do
  if c.failed then rows[#rows + 1] = c else
    local best, bi = math.huge, 1
    for i, t in ipairs(c.times) do if t < best then best, bi = t, i end end
    rows[#rows + 1] = {label = c.label, k = c.k, best = best, med = median(c.times), util = c.utils[bi],
                       cpubound = median(serial_cpu) / median(c.crit),
                       identical = c.identical, where = c.where, launch = c.launch}
  end
end
local t1 = rows[1].best
local mpi_note = not have_mpi and "MPI: not measured (mpirun or lieflow.mpi missing)" or nil

print(("%-22s %4s %9s %9s %10s %9s %10s %9s %10s %10s"):format("configuration", "k", "best s", "median s", "members/s",
  "speed-up", "efficiency", "cpu/wall", "cpu-bound", "= serial"))
local bad = false
for _, r in ipairs(rows) do
  if r.failed then
    print(("%-22s %4d  failed: %s"):format(r.label, r.k, r.failed))
    bad = true
  else
    local su = t1 / r.best
    print(("%-22s %4d %9.3f %9s %10.1f %9.2f %9.0f%% %9s %10s %10s"):format(r.label, r.k, r.best,
      r.med and ("%.3f"):format(r.med) or "-", members / r.best, su, 100 * su / r.k,
      r.util and ("%.2f"):format(r.util) or "-", r.cpubound and ("%.2f"):format(r.cpubound) or "-",
      r.identical and "yes" or "NO"))
    if not r.identical then bad = true; print("   first difference: " .. tostring(r.where)) end
  end
end
for _, r in ipairs(rows) do
  if r.launch then print(("%s: whole mpirun up to %.2f s (with its start-up)"):format(r.label, r.launch)) end
end
if mpi_note then print(mpi_note) end
print(("load average after: %s"):format(loadavg()))
if bad then error("bench/ensemble.lua: a configuration failed or differs from the serial results") end

-- Lanes: a Monte Carlo over initial attitudes of one model (the same potential object), final states
-- only, in this process (workers = 1) member by member and with lanes = 16; bitwise the same.
do
  local P = lf.potential.stress{}
  local mc = 256
  local function mk(i)
    return lf.rigidbody{inertia = {2, 2, 4}, potential = P, omega = {0, 0, 0.625},
                        R = lf.so3.exp{0.3 * math.sin(1.7 * i), 0.7227 + 0.2 * math.cos(2.3 * i), 0.25 * math.sin(0.9 * i)}}
  end
  local function go(lanes)
    return lf.ensemble{n = mc, make = mk, method = "vlv", h = h, T = T / 25, every = 100, workers = 1, lanes = lanes,
                       trajectory = false, progress = false}
  end
  local tm, tl = {}, {}
  local ref
  for _ = 1, repeats do
    local t0 = clock()
    local a = go(nil)
    local t1 = clock()
    local b = go(16)
    local t2 = clock()
    tm[#tm + 1], tl[#tl + 1] = t1 - t0, t2 - t1
    local same, where = lf.ensemble.identical(a, b)
    if not same then error("bench/ensemble.lua: lanes differ from member by member: " .. tostring(where)) end
    ref = a
  end
  local steps = ref[1].stats.steps
  print(("lanes: %d members of %d vlv steps, one process: member by member %.0f body-steps/s, lanes = 16 %.0f "
    .. "body-steps/s (x%.2f, medians of %d), bitwise identical"):format(mc, steps, mc * steps / median(tm),
    mc * steps / median(tl), median(tm) / median(tl), repeats))
end
