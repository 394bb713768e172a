-- SPDX-License-Identifier: GPL-3.0-or-later
-- Rigid SPC/E water in NVE, lieflow beside LAMMPS (issue 32, item 6b): energy drift and the O-O g(r).
--
-- The model (Berendsen, Grigera & Straatsma 1987): 512 rigid molecules at 1 g/cm^3, O-H 1 A, H-O-H
-- 109.47 deg, q_O = -0.8476 e, q_H = +0.4238 e, Lennard-Jones on O-O only (sigma 3.166 A, epsilon 0.1553
-- kcal/mol, shifted to 0 at the cutoff: the forces of the plain truncation, an energy without the jumps of
-- pairs crossing 10 A), damped shifted force Coulomb (alpha 0.2 /A; LAMMPS lj/cut/coul/dsf 0.2 10), cutoff
-- 10 A, skin 2 A, real units (kcal/mol, g/mol, A: lieflow's time unit is 48.88821291 fs).
-- The state: LAMMPS's equilibration at 300 K (tools/lammps/water_nve/run.sh: lattice, 0.5 ps of
-- rigid/nvt/small at 0.5 fs, 20 ps at 2 fs); both codes run NVE from it: LAMMPS's fix rigid/nve/small
-- (NO_SQUISH) and lieflow's no_squish, dlm, split_exact and split_exact_s4 (Blanes & Moan's order-4
-- Runge-Kutta-Nystrom splitting of kicks and exact free flows, 6 torques a step: the composition of
-- split_exact that gave the smallest energy error per torque evaluation at 1-4 fs, against split_exact_s6,
-- split_exact + rkn6p and + triple_jump4), at h = 1 and 2 fs.
-- Printed, for each method and h beside LAMMPS's (its thermo table, TotEng every 100 fs):
--   drift: the slope of a least-squares line of (E - E0)/N against t, kcal/mol per ns per molecule, with
--          its standard error (an AR(1) correction for the correlated fluctuations: a 10-ps slope of a
--          second-order method is mostly its fluctuations);
--   rms:   the RMS fluctuation of E/N about its mean, kcal/mol;
--   cost:  torque (force) evaluations per step, steps/s and CPU s per ps (os.clock around the steps only;
--          LAMMPS's loop time times its CPU use);
-- and the O-O g(r) (bins of 0.05 A to 8 A, minimum image, frames every 0.1 ps, LAMMPS's normalisation:
-- 2 n V / (N (N - 1) 4/3 pi (r2^3 - r1^3))) of each run against LAMMPS's at the same h: the largest
-- |difference| and the statistical error of the difference from block averages (5 blocks of 1/5 of the run
-- each, both codes), the number of bins beyond 2 and 3 standard errors; LAMMPS's 1 fs against its 2 fs
-- run for scale.
--
-- Usage: lieflow examples/water_nve.lua [--quick] [--T=ps] [--data=PATH] [--lammps=DIR] [--work=DIR]
--                                       [--methods=a,b] [--h=1,2] [--out=DIR]
--   --data:   the equilibrated LAMMPS data file (tools/lammps/water_nve/run.sh writes WORKDIR/data.equil);
--             without it, WORKDIR/data.equil is used when present, else run.sh makes it (needs LAMMPS, about
--             6 min of CPU; not in a run shorter than 10 ps such as --quick, which then only says how to get
--             the state: make test-examples runs this example only when the state is there); WORKDIR is --work,
--             default /tmp/lieflow_water_nve;
--   --lammps: the directory of LAMMPS's thermo.1fs.txt, thermo.2fs.txt, rdf.1fs.txt, rdf.2fs.txt (default:
--             beside the data file when there, else the fixtures in tools/lammps/water_nve/fixtures);
--   --T:      the length of each run in ps (default 10); --quick: 0.5 ps (about 70 s of CPU);
--   --out:    write each run's energies (t/ps, E, T/K every 100 fs) and g(r) (r, g, its standard error) to
--             DIR/<method>_<h>fs.energy.txt and DIR/<method>_<h>fs.rdf.txt (for figures).
-- The full run (8 runs of 10 ps) takes about 23 min of CPU on this project's 2-core machine (~100 torque
-- evaluations per CPU second: split_exact_s4's 6 a step make it 2/3 of the time); the numbers it printed are
-- in tools/lammps/water_nve/README.md.
local lf = require "lieflow"

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
if here:sub(1, 1) ~= "/" then here = (os.getenv("PWD") or ".") .. "/" .. here end
local TOOL = here .. "/../tools/lammps/water_nve/"

local K = 332.06371        -- LAMMPS real units: qqrd2e, kcal/mol A / e^2
local TAU = 48.88821291    -- fs per time unit of (kcal/mol, g/mol, A)
local KB = 0.0019872067    -- LAMMPS real units' Boltzmann constant, kcal/mol/K
local LJ = {[1] = {[1] = {0.1553, 3.166}, [2] = {0, 1}}, [2] = {[2] = {0, 1}}}
local EVERY = 100          -- fs between energies (LAMMPS's thermo) and between g(r) frames
local NBIN, DR = 160, 0.05 -- g(r): 160 bins of 0.05 A, to 8 A
local NBLOCK = 5

-- options
-- the default work directory: private to this user (lf.core.private_dir refuses one another user made or can
-- write: run.sh writes there and this script reads it back)
local function private_work()
  local base = os.getenv("XDG_RUNTIME_DIR")
  if not base or base:sub(1, 1) ~= "/" then base = os.getenv("TMPDIR") end
  if not base or base:sub(1, 1) ~= "/" then base = "/tmp" end
  return lf.core.private_dir(("%s/lieflow-water-nve-%d"):format(base, lf.core.uid()))
end
local opt = {T = 10, methods = "no_squish,dlm,split_exact,split_exact_s4", h = "1,2"}
local quick = false
local SETTABLE = {data = true, lammps = true, out = true}
for _, a in ipairs(arg or {}) do
  local k, v = a:match("^%-%-([%w_]+)=(.*)$")
  if a == "--quick" then opt.T, quick = 0.5, true
  elseif k and (opt[k] ~= nil or SETTABLE[k] or k == "work") then opt[k] = v
  else error(("water_nve.lua: unknown argument '%s' (--quick, --T=ps, --data=PATH, --lammps=DIR, --work=DIR, " ..
              "--methods=a,b, --h=1,2, --out=DIR)"):format(a)) end
end
local T_ps = tonumber(opt.T)
opt.T = T_ps
assert(T_ps and T_ps > 0 and math.abs(T_ps * 1000 / EVERY - math.floor(T_ps * 1000 / EVERY + 0.5)) < 1e-9,
       "--T must be a positive multiple of 0.1 ps")
local NREC = math.floor(T_ps * 1000 / EVERY + 0.5) -- records after t = 0
assert(NREC % NBLOCK == 0, "--T must be a multiple of 0.5 ps (5 blocks of whole frames)")
local methods, hs = {}, {}
for m in opt.methods:gmatch("[^,]+") do methods[#methods + 1] = m end
for h in opt.h:gmatch("[^,]+") do hs[#hs + 1] = assert(tonumber(h), "--h: numbers in fs") end

local function exists(p) local f = io.open(p) if f then f:close() return true end return false end

-- the equilibrated state and LAMMPS's outputs
local data = opt.data
if not data and quick then -- (make test-examples: a smoke test runs nothing it has not been given)
  print("water_nve.lua --quick: give --data=PATH (the equilibrated state tools/lammps/water_nve/run.sh writes, about " ..
        "6 min of LAMMPS), or run this example without --quick (it calls run.sh when LAMMPS is installed)")
  return
end
opt.work = opt.work or private_work()
if not data then
  data = opt.work .. "/data.equil"
  if not exists(data) then
    if not os.execute("command -v lmp >/dev/null 2>&1") then
      print("water_nve.lua: no equilibrated state: give --data=PATH (tools/lammps/water_nve/run.sh writes it; it needs " ..
            "LAMMPS: apt-get install lammps)")
      return
    end
    print(("making the equilibrated state and LAMMPS's NVE runs with tools/lammps/water_nve/run.sh in %s " ..
           "(about 6 min of CPU)"):format(opt.work))
    lf.mkdir_p(opt.work)
    -- (argv, no shell: the paths are arguments, not parsed; its output kept in run.log)
    local status, code, out, err = lf.core.spawn({"bash", TOOL .. "run.sh", opt.work}, nil, 7200)
    local log = assert(io.open(opt.work .. "/run.log", "w"))
    log:write(out or "", err or "")
    log:close()
    if status ~= "exited" or code ~= 0 then
      error(("water_nve.lua: run.sh failed (%s %s): see %s/run.log"):format(tostring(status), tostring(code), opt.work))
    end
  end
end
local lmpdir = opt.lammps
if not lmpdir then
  local d = data:match("^(.*)/[^/]*$") or "."
  lmpdir = exists(d .. "/thermo.1fs.txt") and d or TOOL .. "fixtures"
end

-- lieflow's copy of the data file: velocities in A per time unit (LAMMPS's A/fs times TAU)
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
local copy = os.tmpname()
lieflow_copy(data, copy)

-- statistics
local function fit(t, y) -- least-squares slope, its standard error (AR(1)-corrected), the rms of y about its mean
  local n, st, sy = #t, 0, 0
  for i = 1, n do st, sy = st + t[i], sy + y[i] end
  local mt, my = st / n, sy / n
  local stt, sty, syy = 0, 0, 0
  for i = 1, n do stt, sty, syy = stt + (t[i] - mt) ^ 2, sty + (t[i] - mt) * (y[i] - my), syy + (y[i] - my) ^ 2 end
  local b = sty / stt
  local res, s2 = {}, 0
  for i = 1, n do res[i] = y[i] - my - b * (t[i] - mt); s2 = s2 + res[i] ^ 2 end
  local c1 = 0
  for i = 2, n do c1 = c1 + res[i] * res[i - 1] end
  local rho = s2 > 0 and math.max(0, c1 / s2) or 0
  local se = math.sqrt(s2 / math.max(1, n - 2) / stt * (1 + rho) / (1 - math.min(rho, 0.99)))
  return b, se, math.sqrt(syy / n)
end

-- g(r) of the O sites: histogram of one frame (counts of pairs), minimum image in a cubic box
local function histogram(ox, oy, oz, L, hist)
  local n, inv, rmax2 = #ox, 1 / L, (NBIN * DR) ^ 2
  local floor, sqrt = math.floor, math.sqrt
  for i = 1, n - 1 do
    local xi, yi, zi = ox[i], oy[i], oz[i]
    for j = i + 1, n do
      local dx, dy, dz = ox[j] - xi, oy[j] - yi, oz[j] - zi
      dx = dx - L * floor(dx * inv + 0.5)
      dy = dy - L * floor(dy * inv + 0.5)
      dz = dz - L * floor(dz * inv + 0.5)
      local r2 = dx * dx + dy * dy + dz * dz
      if r2 < rmax2 then
        local b = floor(sqrt(r2) / DR) + 1
        if b <= NBIN then hist[b] = hist[b] + 1 end
      end
    end
  end
end
local function normalise(hist, frames, n, V) -- LAMMPS's compute rdf: 2 pairs / (N (N - 1) / V * shell)
  local g = {}
  for b = 1, NBIN do
    local shell = 4 / 3 * math.pi * ((b * DR) ^ 3 - ((b - 1) * DR) ^ 3)
    g[b] = 2 * hist[b] / frames / (n * (n - 1) / V * shell)
  end
  return g
end
local function block_stats(blocks) -- mean and standard error of the mean over the blocks, per bin
  local nb, mean, se = #blocks, {}, {}
  for b = 1, NBIN do
    local s = 0
    for k = 1, nb do s = s + blocks[k][b] end
    mean[b] = s / nb
    local v = 0
    for k = 1, nb do v = v + (blocks[k][b] - mean[b]) ^ 2 end
    se[b] = math.sqrt(v / (nb - 1) / nb)
  end
  return mean, se
end

-- LAMMPS's outputs
local function read_thermo(path)
  local rows, head = {}, {}
  for line in io.lines(path) do
    if line:match("^#") then head[#head + 1] = line
    else
      local step, time, temp, pe, ke, etot = line:match("^(%S+) (%S+) (%S+) (%S+) (%S+) (%S+)")
      if step then rows[#rows + 1] = {step = tonumber(step), t = tonumber(time), T = tonumber(temp), E = tonumber(etot)} end
    end
  end
  local text = table.concat(head, "\n")
  local loop, nsteps = text:match("Loop time of ([%d%.e+-]+) on %d+ procs for (%d+) steps")
  local cpu = text:match("([%d%.]+)%% CPU use")
  return rows, tonumber(loop), tonumber(nsteps), tonumber(cpu)
end
local function read_rdf(path)
  local blocks, cur = {}, nil
  for line in io.lines(path) do
    if not line:match("^#") then
      local a, b, c, d = line:match("^%s*(%S+)%s+(%S+)%s*(%S*)%s*(%S*)")
      if d == "" then cur = {}; blocks[#blocks + 1] = cur -- "TimeStep Number-of-rows"
      else cur[tonumber(a)] = tonumber(c) end
    end
  end
  return blocks
end
local lmp = {}
for _, h in ipairs(hs) do
  local tp, rp = ("%s/thermo.%gfs.txt"):format(lmpdir, h), ("%s/rdf.%gfs.txt"):format(lmpdir, h)
  if exists(tp) then
    local rows, loop, nsteps, cpu = read_thermo(tp)
    local r = {rows = rows, cpu_per_ps = loop and cpu and loop * cpu / 100 / (nsteps * h / 1000),
               steps_per_s = loop and cpu and nsteps / (loop * cpu / 100)}
    if exists(rp) then r.g, r.g_se = block_stats(read_rdf(rp)) end
    lmp[h] = r
  end
end

-- lieflow's runs
local N, L, V = 512, nil, nil -- set by the runs (512 molecules in run.sh's state)
local results = {}
local total_clock = os.clock()
for _, h in ipairs(hs) do
  for _, name in ipairs(methods) do
    local sys, info = lf.read_lammps_data(copy, {bodies = "molecule", cutoff = 10, skin = 2, shift = true, lj_pairs = LJ,
                                                 coulomb = {alpha = 0.2, k = K}, kB = KB})
    N, L = sys.n, info.box[1]
    V = info.box[1] * info.box[2] * info.box[3]
    -- the body-frame position of each body's O (site of type 1)
    local sO = {}
    for i, tpl in ipairs(info.templates) do
      for _, s in ipairs(tpl.sites) do if s.type == 1 then sO[i] = s.x end end
    end
    local it = lf.integrator(name, sys, {h = h / TAU})
    local per = math.floor(EVERY / h + 0.5)
    assert(math.abs(per * h - EVERY) < 1e-9, "h must divide 100 fs")
    local E0 = it:energy()
    local ts, es, temps = {0}, {E0}, {info.observe.temperature(it)}
    local hist, blocks, frames = nil, {}, 0
    local cpu, evals0 = 0, it.torque_evals
    for k = 1, NREC do
      local c = os.clock()
      it:step(per)
      cpu = cpu + os.clock() - c
      ts[#ts + 1], es[#es + 1], temps[#temps + 1] = k * EVERY / 1000, it:energy(), info.observe.temperature(it)
      -- a g(r) frame
      local st = it:state()
      local ox, oy, oz = {}, {}, {}
      for i = 1, N do
        local p = st.x[i] + st.R[i] * sO[i]
        ox[i], oy[i], oz[i] = p.x, p.y, p.z
      end
      if not hist then hist = {}; for b = 1, NBIN do hist[b] = 0 end end
      histogram(ox, oy, oz, L, hist)
      frames = frames + 1
      if frames == NREC // NBLOCK then blocks[#blocks + 1] = normalise(hist, frames, N, V); hist, frames = nil, 0 end
    end
    local y = {}
    for i = 1, #es do y[i] = (es[i] - E0) / N end
    local ns = {}
    for i = 1, #ts do ns[i] = ts[i] / 1000 end
    local eN = {}
    for i = 1, #es do eN[i] = es[i] / N end
    local drift, drift_se = fit(ns, y)
    local _, _, rms = fit(ns, eN)
    local g, g_se = block_stats(blocks)
    local steps = NREC * per
    results[#results + 1] = {name = name, h = h, E0 = E0, drift = drift, drift_se = drift_se, rms = rms,
      evals = (it.torque_evals - evals0) / it.steps, steps_per_s = steps / cpu, cpu_per_ps = cpu / T_ps,
      g = g, g_se = g_se, E = es, temps = temps, t = ts, maxdev = 0}
    for i = 1, #y do results[#results].maxdev = math.max(results[#results].maxdev, math.abs(y[i])) end
    if opt.out then
      lf.mkdir_p(opt.out)
      local f = assert(io.open(("%s/%s_%gfs.energy.txt"):format(opt.out, name, h), "w"))
      f:write(("# lieflow %s, h = %g fs, NVE from %s: t/ps, E/(kcal/mol), T/K\n"):format(name, h, data))
      for i = 1, #ts do f:write(("%.4f %.10f %.6f\n"):format(ts[i], es[i], temps[i])) end
      f:close()
      f = assert(io.open(("%s/%s_%gfs.rdf.txt"):format(opt.out, name, h), "w"))
      f:write(("# lieflow %s, h = %g fs: O-O g(r) of %d frames every %d fs; r/A (bin centre), g, standard error (%d blocks)\n")
        :format(name, h, NREC, EVERY, NBLOCK))
      for b = 1, NBIN do f:write(("%.3f %.6f %.6f\n"):format((b - 0.5) * DR, g[b], g_se[b])) end
      f:close()
    end
    io.stderr:write(("  %s h = %g fs: %.0f CPU s, drift %+.2e +- %.1e kcal/mol/ns/molecule, rms(E/N) %.2e\n"):format(name, h,
      cpu, drift, drift_se, rms))
  end
end
os.remove(copy)

-- LAMMPS's drift over the same window
for h, r in pairs(lmp) do
  local ns, y, eN = {}, {}, {}
  local E0 = r.rows[1] and r.rows[1].E
  for _, row in ipairs(r.rows) do
    if row.t <= T_ps * 1000 + 1e-9 then
      ns[#ns + 1], y[#y + 1], eN[#eN + 1] = row.t / 1e6, (row.E - E0) / N, row.E / N
    end
  end
  r.E0, r.n = E0, #ns
  r.drift, r.drift_se = fit(ns, y)
  _, _, r.rms = fit(ns, eN)
  r.maxdev = 0
  for i = 1, #y do r.maxdev = math.max(r.maxdev, math.abs(y[i])) end
end

print(("\nrigid SPC/E water, %d molecules, DSF Coulomb (alpha 0.2 /A) + LJ (shifted), rc 10 A, NVE from %s " ..
       "(T0 = %.2f K), %g ps per run, E every %d fs"):format(N, data, results[1] and results[1].temps[1] or 0, T_ps, EVERY))
print("  drift: slope of (E - E0)/N against t, kcal/mol/ns/molecule (+- standard error); rms: of E/N about its mean; " ..
      "max: max |E - E0|/N; kcal/mol")
print(("  %-24s %4s  %16s  %22s  %9s  %9s  %8s  %8s  %8s"):format("method", "h/fs", "E0 kcal/mol", "drift", "rms",
  "max", "torques", "steps/s", "CPU s/ps"))
for _, h in ipairs(hs) do
  local r = lmp[h]
  if r and r.E0 then
    print(("  %-24s %4g  %16.6f  %+10.2e +- %8.1e  %9.2e  %9.2e  %8d  %8.1f  %8.1f"):format("LAMMPS rigid/nve/small", h, r.E0,
      r.drift, r.drift_se, r.rms, r.maxdev, 1, r.steps_per_s or 0 / 0, r.cpu_per_ps or 0 / 0))
  else
    print(("  LAMMPS at %g fs: no thermo table in %s"):format(h, lmpdir))
  end
  for _, x in ipairs(results) do
    if x.h == h then
      print(("  %-24s %4g  %16.6f  %+10.2e +- %8.1e  %9.2e  %9.2e  %8.2f  %8.1f  %8.1f"):format(x.name, h, x.E0, x.drift,
        x.drift_se, x.rms, x.maxdev, x.evals, x.steps_per_s, x.cpu_per_ps))
    end
  end
end

-- no_squish against LAMMPS (the same algorithm): until when do the two trajectories agree?
for _, x in ipairs(results) do
  local r = lmp[x.h]
  if x.name == "no_squish" and r and r.rows[1] then
    local dE0, t_T, t_E = x.E0 - r.E0, nil, nil
    for i, row in ipairs(r.rows) do
      if i > #x.t then break end
      if not t_T and math.abs(x.temps[i] - row.T) > 0.01 then t_T = row.t end
      if not t_E and math.abs(x.E[i] - row.E - dE0) > 1e-3 then t_E = row.t end
    end
    print(("  no_squish and LAMMPS at %g fs (the same algorithm): E0 differ by %.2e kcal/mol (%.1e relative: LAMMPS's " ..
           "erfc); Temp equal to 0.01 K until %s, E - E0 to 1e-3 kcal/mol until %s%s")
      :format(x.h, dE0, math.abs(dE0 / r.E0), t_T and ("%g ps"):format(t_T / 1000) or "the end of the run",
              t_E and ("%g ps"):format(t_E / 1000) or "the end of the run",
              (t_T or t_E) and " (then chaos separates them)" or ""))
  end
end

-- g(r)
local function compare(g1, s1, g2, s2)
  local maxd, at, maxz, zat, n2, n3, nb = 0, 0, 0, 0, 0, 0, 0
  for b = 1, NBIN do
    local d = math.abs(g1[b] - g2[b])
    local s = math.sqrt(s1[b] ^ 2 + s2[b] ^ 2)
    if d > maxd then maxd, at = d, b end
    if s > 0 then
      nb = nb + 1
      local z = d / s
      if z > maxz then maxz, zat = z, b end
      if z > 2 then n2 = n2 + 1 end
      if z > 3 then n3 = n3 + 1 end
    elseif d > 0 then n3, n2 = n3 + 1, n2 + 1 end
  end
  return maxd, (at - 0.5) * DR, math.sqrt(s1[at] ^ 2 + s2[at] ^ 2), maxz, (zat - 0.5) * DR, n2, n3, nb
end
local function peak(g)
  local m, at = 0, 0
  for b = 1, NBIN do if g[b] > m then m, at = g[b], b end end
  return m, (at - 0.5) * DR
end
print(("\nO-O g(r): %d bins of %.2f A, frames every %d fs (%d per run), error: standard error of the mean of %d blocks"):format(
  NBIN, DR, EVERY, NREC, NBLOCK))
print(("  %-34s %8s  %14s  %6s  %8s  %10s  %9s  %s"):format("run - LAMMPS at the same h", "max|dg|", "at r/A (err)", "max z",
  "at r/A", "bins>2err", "bins>3err", "first peak g, r/A"))
for _, h in ipairs(hs) do
  local r = lmp[h]
  if r and r.g then
    local m, pr = peak(r.g)
    print(("  %-34s %8s  %14s  %6s  %8s  %10s  %9s  %.3f +- %.3f at %.3f"):format(("LAMMPS %g fs (10 ps)"):format(h), "", "", "",
      "", "", "", m, r.g_se[math.floor(pr / DR) + 1], pr))
  end
  for _, x in ipairs(results) do
    if x.h == h and r and r.g then
      local maxd, at, s, maxz, zat, n2, n3, nb = compare(x.g, x.g_se, r.g, r.g_se)
      local m, pr = peak(x.g)
      print(("  %-34s %8.4f  %5.3f (%6.4f)  %6.2f  %8.3f  %4d/%-5d  %4d/%-4d  %.3f +- %.3f at %.3f"):format(
        ("%s %g fs - LAMMPS"):format(x.name, h), maxd, at, s, maxz, zat, n2, nb, n3, nb, m, x.g_se[math.floor(pr / DR) + 1], pr))
    end
  end
end
if lmp[1] and lmp[2] and lmp[1].g and lmp[2].g then
  local maxd, at, s, maxz, zat, n2, n3, nb = compare(lmp[1].g, lmp[1].g_se, lmp[2].g, lmp[2].g_se)
  print(("  %-34s %8.4f  %5.3f (%6.4f)  %6.2f  %8.3f  %4d/%-5d  %4d/%-4d"):format("LAMMPS 1 fs - LAMMPS 2 fs", maxd, at, s,
    maxz, zat, n2, nb, n3, nb))
end
if T_ps < 10 then
  print(("  (lieflow's runs are %g ps, LAMMPS's 10 ps: the blocks of the short runs are short, their errors rough)"):format(T_ps))
end
print(("\nlieflow: %.0f CPU s in all (runs and g(r))"):format(os.clock() - total_clock))
