-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow against LAMMPS on LAMMPS's rigid example (examples/rigid/in.rigid.nve: 9 clumps of 9
-- Lennard-Jones atoms, lj units, rc 2.5, dt 1e-4, 10,000 steps, fix rigid/nve), both serial on this
-- machine, the same cutoff and skin (0.3, LAMMPS's default in lj units; its list checked every step),
-- interleaved runs, the median of 5: steps per second. lieflow runs no_squish, LAMMPS's algorithm
-- (tests/lua/lammps_spec.lua: the same energies to round-off); LAMMPS's input is
-- tools/lammps/rigid_nve/in.rigid.nve.lieflow (its own timing, "timesteps/s", from its log).
-- `make bench` installs Debian's lammps when it is missing. Then the same run with the Lennard-Jones written
-- in Lua (site_pair, compiled once per pair of types, called per pair in range) against the built-in style.
local lf = require "lieflow"
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local FIX = here .. "/../tests/fixtures/lammps/rigid_nve/"
local TOOL = here .. "/../tools/lammps/rigid_nve/"

-- the Lennard-Jones of the example (epsilon = sigma = 1, unshifted) as a site_pair; the powers as products
-- ((1 / r) ^ 6 is a call of pow in the compiled code: 0.78 of the built-in instead of 0.89)
local function lj(r)
  local i2 = 1 / (r * r)
  local i6 = i2 * i2 * i2
  return 4 * i6 * (i6 - 1)
end

local function lieflow_rate(site_pair)
  local sys = lf.read_lammps_data(FIX .. "data.rigid.start", {bodies = function(id) return (id - 1) // 9 + 1 end,
                                                               cutoff = 2.5, skin = 0.3, site_pair = site_pair})
  local it = lf.integrator("no_squish", sys, {h = 1e-4})
  local c = os.clock()
  it:step(10000)
  return 10000 / (os.clock() - c)
end

local function lammps_rate()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute(("mkdir -p '%s' && cp '%s'in.rigid.nve.lieflow '%s'data.rigid '%s/'"):format(dir, TOOL, TOOL, dir)))
  local p = io.popen(("cd '%s' && lmp -in in.rigid.nve.lieflow -log none 2>&1"):format(dir))
  local out = p:read("a")
  p:close()
  os.execute(("rm -rf '%s'"):format(dir))
  return tonumber(out:match("([%d%.]+) timesteps/s")), out
end

local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end

local has_lmp = os.execute("command -v lmp >/dev/null 2>&1")
local a, b = {}, {}
for _ = 1, 5 do
  a[#a + 1] = lieflow_rate()
  if has_lmp then
    local r, out = lammps_rate()
    if not r then error("LAMMPS did not run:\n" .. out) end
    b[#b + 1] = r
  end
end
print("\nLAMMPS's rigid example (81 atoms in 9 rigid clumps, 10,000 steps; median of 5 interleaved runs)")
print(("  lieflow no_squish: %10.0f steps/s"):format(median(a)))
if has_lmp then
  print(("  LAMMPS rigid/nve:  %10.0f steps/s"):format(median(b)))
  print(("  lieflow / LAMMPS:  %10.2f (goal >= 1.0)"):format(median(a) / median(b)))
else
  print("  LAMMPS: not installed (apt-get install lammps)")
end

local u = {}
for _ = 1, 5 do u[#u + 1] = lieflow_rate(lj) end
print(("  lieflow no_squish, LJ as a Lua site_pair: %10.0f steps/s (%.2f of the built-in style)")
  :format(median(u), median(u) / median(a)))
