-- SPDX-License-Identifier: GPL-3.0-or-later
-- lf.ensemble under MPI (run by tests/mpi_test.sh): the same sweep as a serial run must come out
-- bitwise identical when its members are spread over the ranks of `mpirun -n N`.
--   lieflow tests/mpi/ensemble_mpi.lua dump FILE        serial (no MPI): writes the results to FILE
--   mpirun -n N lieflow tests/mpi/ensemble_mpi.lua check FILE [workers] [gather]
--                                                       compares with FILE on rank 0, checks the ranks
local proc = require("lieflow.core").proc
local mode, file, workers, gather = arg[1], arg[2], tonumber(arg[3]), arg[4]

local function stress(alpha)
  return lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7227, 0}, omega = {0, 0, 0.625},
                      potential = lf.potential.stress{alpha = alpha}}
end
local methods = {"vlv", "eln", "tln", "lgvi", "prk", "mcg", "new3", "liemid_ea"}
local params = {}
for i = 1, 11 do params[i] = {method = methods[(i - 1) % #methods + 1], h = 2 ^ -(2 + i % 3), alpha = 0.1 + 0.02 * i} end

local function sweep(opts)
  local o = {params = params, T = 20, every = 5, progress = false, quiet = true,
    observe = {R11 = function(it) return it.R[1][1] end},
    make = function(i, p)
      if i == 7 then error("member 7 fails on purpose") end
      return stress(p.alpha), {method = p.method, h = p.h}
    end,
    summarize = function(m) return {E_end = m.trajectory.energy[m.stats.samples], rank = lf.ensemble.rank()} end,
    reduce = function(res) return res.completed end}
  for k, v in pairs(opts) do o[k] = v end
  return lf.ensemble(o)
end

local function members(res)
  local t = {n = res.n, failed = res.failed, completed = res.completed, reduced = res.reduced}
  for i = 1, res.n do
    local r = {}
    for k, v in pairs(res[i]) do if k ~= "params" and k ~= "summary" then r[k] = v end end
    if res[i].summary then r.E_end = res[i].summary.E_end end
    t[i] = r
  end
  return t
end

if mode == "dump" then
  local res = sweep{mpi = false, workers = 1}
  assert(res.completed == 10 and res.failed[1] == 7, "serial run: unexpected failures")
  local f = assert(io.open(file, "wb"))
  f:write(proc.encode(members(res)))
  f:close()
  print("serial results written")
  return
end

assert(mode == "check", "usage: ensemble_mpi.lua dump|check FILE [workers] [gather]")
local rank, size = lf.ensemble.rank()
assert(size > 1, "not started by mpirun with several ranks (size " .. size .. ")")
local res = sweep{workers = workers, gather = gather}
if rank ~= 0 and gather ~= "all" then
  assert(res.root == false and res[1] == nil and res.rank == rank, "rank " .. rank .. ": results on a non-root rank")
  return
end
local f = assert(io.open(file, "rb"))
local serial = proc.decode(f:read("a"))
f:close()
local same, where = lf.ensemble.identical(members(res), serial)
if not same then error(("rank %d: MPI results differ from the serial ones: %s"):format(rank, where)) end
assert(res.ranks == size, "res.ranks")
-- every rank took its share: member i on rank (i - 1) % size
for i = 1, res.n do
  if i ~= 7 then
    local want = (i - 1) % size
    assert(res[i].timing.rank == want and res[i].summary.rank == want,
      ("member %d ran on rank %s, expected %d"):format(i, tostring(res[i].timing.rank), want))
  end
end
assert(res.reduced == 10, "reduce on rank 0")
print(("rank %d of %d: %d members identical to the serial run (workers %s, gather %s)"):format(rank, size, res.n,
  tostring(workers or "default"), gather or "root"))
