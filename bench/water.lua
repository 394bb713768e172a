-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow against LAMMPS on rigid SPC/E water (issue 32, item 6c): Berendsen, Grigera & Straatsma (1987),
-- O-H 1 A, H-O-H 109.47 deg, q_O = -0.8476 e, q_H = +0.4238 e, LJ on O-O only (sigma 3.166 A, epsilon
-- 0.1553 kcal/mol, not shifted), damped shifted force Coulomb (alpha 0.2 /A, LAMMPS lj/cut/coul/dsf 0.2
-- 10), rc 10 A, real units (k = 332.06371), 512 and 4096 molecules at 1 g/cm^3. Both serial on this
-- machine, the same skin (2 A, the list checked at every step), dt 1 fs, NVE: lieflow's no_squish against
-- LAMMPS's fix rigid/nve/small molecule (NO_SQUISH too).
-- The state: 512 molecules on a cubic lattice with random attitudes (written here), warmed up by LAMMPS
-- (tools/lammps/water/in.water_prep.lieflow: 300 K, rigid/nvt/small, 200 steps of 0.5 fs and 200 of 1 fs),
-- written with write_data and replicated 2 x 2 x 2 for 4096; both codes start from these files.
-- Printed: steps/s of both (the median of interleaved runs; CPU time: LAMMPS's loop time times its CPU
-- use), the ratio, ns per molecule per step (flat from 512 to 4096?), lieflow's memory per molecule
-- (lf.potential.sites_stats(pot).bytes / N; LAMMPS's "Per MPI rank memory" beside it), and the potential
-- energies at step 0 of both (LAMMPS's erfc is Abramowitz & Stegun 7.1.26, 1.5e-7 relative; the self
-- energy is LAMMPS's in both). `make bench` installs Debian's lammps when it is missing; without it this
-- benchmark is skipped (its state comes from LAMMPS's warm-up). About a minute; part of `make bench`.
local lf = require "lieflow"
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
if here:sub(1, 1) ~= "/" then here = (os.getenv("PWD") or ".") .. "/" .. here end -- LAMMPS runs in a temporary dir
local TOOL = here .. "/../tools/lammps/water/"

local K = 332.06371       -- LAMMPS real units: qqrd2e, kcal/mol A / e^2
local TAU = 48.88821291   -- fs per time unit of (kcal/mol, g/mol, A): LAMMPS real units' ftm2v = 1/TAU^2
local STEPS = {[512] = 400, [4096] = 60}
local REPEATS = 3

local function run(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok = p:close()
  return ok, out
end

-- the lattice: n^3 molecules, O at the sites of a cubic lattice filling a box of 1 g/cm^3, random attitudes
local function write_lattice(path, n)
  local N = n ^ 3
  local L = (N * 18.01528 / 0.602214076) ^ (1 / 3) -- A^3 per molecule at 1 g/cm^3: 18.01528 / 0.602214076
  local a = L / n
  local th = math.rad(109.47 / 2)
  local body = {{0, 0, 0}, {math.sin(th), math.cos(th), 0}, {-math.sin(th), math.cos(th), 0}}
  math.randomseed(32)
  local f = assert(io.open(path, "w"))
  f:write(("SPC/E water on a lattice (bench/water.lua)\n\n%d atoms\n2 atom types\n\n"):format(3 * N))
  for _, ax in ipairs{"x", "y", "z"} do f:write(("0 %.17g %slo %shi\n"):format(L, ax, ax)) end
  f:write("\nMasses\n\n1 15.9994\n2 1.008\n\nAtoms # full\n\n")
  local id, mol = 0, 0
  for i = 0, n - 1 do
    for j = 0, n - 1 do
      for k = 0, n - 1 do
        mol = mol + 1
        -- a uniform random rotation (Shoemake's quaternion)
        local u1, u2, u3 = math.random(), math.random(), math.random()
        local w, x, y, z = math.sqrt(1 - u1) * math.sin(2 * math.pi * u2), math.sqrt(1 - u1) * math.cos(2 * math.pi * u2),
                           math.sqrt(u1) * math.sin(2 * math.pi * u3), math.sqrt(u1) * math.cos(2 * math.pi * u3)
        local R = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                   {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                   {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}
        local c = {(i + 0.5) * a, (j + 0.5) * a, (k + 0.5) * a}
        for s = 1, 3 do
          id = id + 1
          local p, img = {}, {}
          for d = 1, 3 do
            local v = c[d] + R[d][1] * body[s][1] + R[d][2] * body[s][2] + R[d][3] * body[s][3]
            img[d] = math.floor(v / L)
            p[d] = v - img[d] * L
          end
          f:write(("%d %d %d %.4f %.17g %.17g %.17g %d %d %d\n"):format(id, mol, s == 1 and 1 or 2,
            s == 1 and -0.8476 or 0.4238, p[1], p[2], p[3], img[1], img[2], img[3]))
        end
      end
    end
  end
  f:close()
end

-- lieflow's copy of a LAMMPS data file: the velocities in A per time unit (A/fs times TAU)
local function lieflow_copy(src, dst)
  local out, section = {}, nil
  for line in io.lines(src) do
    local key = line:match("^(%a[%a ]*%a)%s*#?")
    if key then section = key end
    local id, vx, vy, vz = line:match("^%s*(%d+)%s+(%S+)%s+(%S+)%s+(%S+)%s*$")
    if section == "Velocities" and id then
      line = ("%s %.17g %.17g %.17g"):format(id, tonumber(vx) * TAU, tonumber(vy) * TAU, tonumber(vz) * TAU)
    end
    out[#out + 1] = line
  end
  local f = assert(io.open(dst, "w"))
  f:write(table.concat(out, "\n"), "\n")
  f:close()
end

local LJ = {[1] = {[1] = {0.1553, 3.166}, [2] = {0, 1}}, [2] = {[2] = {0, 1}}}

-- lieflow: steps/s (CPU time), U at step 0, the sites' statistics
local function lieflow_run(path, nsteps)
  local sys, info = lf.read_lammps_data(path, {bodies = "molecule", cutoff = 10, skin = 2, lj_pairs = LJ,
                                               coulomb = {alpha = 0.2, k = K}})
  sys:energy()
  local U0 = lf.potential.sites_stats(info.potential).energy
  local it = lf.integrator("no_squish", sys, {h = 1 / TAU})
  local c = os.clock()
  it:step(nsteps)
  local t = os.clock() - c
  return nsteps / t, U0, lf.potential.sites_stats(info.potential), #info.templates
end

-- LAMMPS: steps/s (CPU time: loop time x CPU use), its own timesteps/s, PotEng at step 0, memory, builds
local function lammps_run(dir, data, nsteps)
  local ok, out = run(("cd '%s' && lmp -in '%sin.water.lieflow' -var data %s -var nsteps %d -log none -nocite")
    :format(dir, TOOL, data, nsteps))
  local loop = tonumber(out:match("Loop time of ([%d%.e+-]+) on"))
  local cpu = tonumber(out:match("([%d%.]+)%% CPU use"))
  local pe = tonumber(out:match("\n%s*0%s+(%S+)%s+%S+%s+%S+%s*\n"))
  if not (ok and loop and cpu and pe) then error("LAMMPS did not run:\n" .. out) end
  return nsteps / (loop * cpu / 100), tonumber(out:match("([%d%.]+) timesteps/s")), pe,
         tonumber(out:match("Per MPI rank memory allocation %(min/avg/max%) = %S+ | ([%d%.]+)")),
         tonumber(out:match("Neighbor list builds = (%d+)"))
end

local function median(t)
  local s = {table.unpack(t)}
  table.sort(s)
  return s[(#s + 1) // 2]
end

if not os.execute("command -v lmp >/dev/null 2>&1") then
  print("\nrigid SPC/E water against LAMMPS: LAMMPS not installed (apt-get install lammps): skipped")
  return
end
local dir = os.tmpname()
os.remove(dir)
assert(os.execute(("mkdir -p '%s'"):format(dir)))
write_lattice(dir .. "/lattice.512", 8)
local ok, out = run(("cd '%s' && lmp -in '%sin.water_prep.lieflow' -var lattice lattice.512 -var nprep 200 " ..
                     "-var out512 data.512 -var out4096 data.4096 -log none -nocite"):format(dir, TOOL))
if not ok then error("LAMMPS's warm-up did not run:\n" .. out) end
local T_end = out:match("\n%s*400%s+(%S+)")
for _, N in ipairs{512, 4096} do lieflow_copy(("%s/data.%d"):format(dir, N), ("%s/data.%d.lieflow"):format(dir, N)) end

local res = {}
for _, N in ipairs{512, 4096} do res[N] = {lf = {}, lmp = {}, lmp_own = {}} end
for _ = 1, REPEATS do
  for _, N in ipairs{512, 4096} do
    local r = res[N]
    local rate, U0, st, nb = lieflow_run(("%s/data.%d.lieflow"):format(dir, N), STEPS[N])
    r.lf[#r.lf + 1], r.U_lf, r.st, r.nb = rate, U0, st, nb
    local lr, own, pe, mem, builds = lammps_run(dir, "data." .. N, STEPS[N])
    r.lmp[#r.lmp + 1], r.lmp_own[#r.lmp_own + 1], r.U_lmp, r.mem, r.builds = lr, own, pe, mem, builds
  end
end
os.execute(("rm -rf '%s'"):format(dir))

print(("\nrigid SPC/E water, DSF Coulomb (alpha 0.2 /A, rc 10 A), skin 2 A, dt 1 fs, NVE from LAMMPS's warm-up " ..
       "(its Temp at the end: %s K); median of %d interleaved runs, CPU time"):format(T_end or "?", REPEATS))
print("  molecules  steps   lieflow steps/s  LAMMPS steps/s (own)  lieflow/LAMMPS  ns/molecule/step (lieflow, LAMMPS)")
local per = {}
for _, N in ipairs{512, 4096} do
  local r = res[N]
  local a, b = median(r.lf), median(r.lmp)
  per[N] = {1e9 / a / N, 1e9 / b / N}
  print(("  %9d  %5d  %15.1f  %12.1f (%6.1f)  %14.2f  %8.0f %8.0f"):format(N, STEPS[N], a, b, median(r.lmp_own), a / b,
    per[N][1], per[N][2]))
end
print(("  cost per molecule, 4096 / 512: lieflow %.2f, LAMMPS %.2f (goal <= 1.3)"):format(per[4096][1] / per[512][1],
  per[4096][2] / per[512][2]))
for _, N in ipairs{512, 4096} do
  local r = res[N]
  print(("  %4d molecules: lieflow %6.0f bytes/molecule (%d pairs listed, %d list builds in %d steps); LAMMPS %.2f MB " ..
         "(%.0f bytes/molecule, %d builds)"):format(N, r.st.bytes / N, r.st.list_pairs, r.st.rebuilds, STEPS[N],
    r.mem, r.mem * 2 ^ 20 / N, r.builds))
  print(("  %4d molecules: U at step 0: lieflow %.10f, LAMMPS %.10f kcal/mol, relative difference %.2e"):format(N,
    r.U_lf, r.U_lmp, math.abs(r.U_lf - r.U_lmp) / math.abs(r.U_lmp)))
end
