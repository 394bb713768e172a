-- SPDX-License-Identifier: GPL-3.0-or-later
-- Rigid bodies made of sites (lf.molecule), LAMMPS data files (lf.read_lammps_data) and LAMMPS's rigid
-- example side by side: examples/rigid/in.rigid.nve (9 clumps of 9 Lennard-Jones atoms, fix rigid/nve, lj
-- units, dt 1e-4, 10,000 steps), its state after `velocity create` and the energies at every thermo step
-- kept as fixtures by tools/lammps/rigid_nve/run.sh (LAMMPS is not needed here). lieflow's no_squish is
-- LAMMPS's fix rigid/nve algorithm when the body frame is LAMMPS's (principal moments in decreasing
-- order), so the energies agree to round-off; the measured numbers are printed.
local lf = require "lieflow"
local T = require "testlib"
local errmsg, has = T.errmsg, T.has

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local FIX = here .. "/../fixtures/lammps/rigid_nve/"
local function clump(id) return (id - 1) // 9 + 1 end

local function thermo()
  local rows = {}
  for l in io.lines(FIX .. "thermo.txt") do
    local w = {}
    for x in l:gmatch("%S+") do w[#w + 1] = tonumber(x) end
    rows[#rows + 1] = w
  end
  return rows
end

-- the energies at every thermo step of a no_squish run against LAMMPS's TotEng: the largest relative
-- difference, and the integrator at the end
local function compare(cutoff)
  local sys = lf.read_lammps_data(FIX .. "data.rigid.start", {bodies = clump, cutoff = cutoff, skin = 0.3})
  local it = lf.integrator("no_squish", sys, {h = 1e-4})
  local worst, th = 0, thermo()
  for k, row in ipairs(th) do
    if k > 1 then it:step(row[1] - th[k - 1][1]) end
    worst = math.max(worst, math.abs(it:energy() - row[4]) / math.abs(row[4]))
  end
  return worst, it, #th
end

describe("LAMMPS's rigid example", function()
  it("no_squish's total energy equals LAMMPS's TotEng at every thermo step (201 of them, 10,000 steps)", function()
    local worst, _, n = compare(2.5)
    print(("\n  rc = 2.5: largest relative difference of E from LAMMPS's TotEng over %d thermo steps: %.2e"):format(n, worst))
    assert.is_true(n == 201 and worst < 1e-6, tostring(worst))
    -- the initial lattice has 4 site pairs at exactly r = rc: LAMMPS's rsq < cutsq leaves them out, the sites
    -- lieflow rebuilds from the bodies (x + R s, rounded) fall inside by round-off; a cutoff 1e-12 smaller
    -- removes that coincidence, and the runs agree to round-off
    local w2, it = compare(2.5 * (1 - 1e-12))
    print(("  rc = 2.5 (1 - 1e-12): %.2e"):format(w2))
    assert.is_true(w2 < 1e-10, tostring(w2))
    -- the centres of mass after 10,000 steps against LAMMPS's atoms (unwrapped with their image flags)
    local d = lf.read_lammps_data(FIX .. "data.rigid.end", {bodies = clump, cutoff = 2.5})
    local dx = 0
    for b = 1, 9 do dx = math.max(dx, (it.x[b] - d.x[b]):norm()) end
    print(("  centres of mass at step 10,000 against LAMMPS's: %.2e"):format(dx))
    assert.is_true(dx < 1e-6, tostring(dx)) -- 4.3e-7 in a box of 24 after 10,000 steps of hot clumps
  end)
end)

describe("lf.molecule", function()
  local th = math.rad(109.47) / 2
  local spce = {{mass = 15.9994, type = 1, charge = -0.8476, x = {0, 0, 0}},
                {mass = 1.008, type = 2, charge = 0.4238, x = {math.sin(th), math.cos(th), 0}},
                {mass = 1.008, type = 2, charge = 0.4238, x = {-math.sin(th), math.cos(th), 0}}}

  it("computes the mass, centre, principal moments and body frame (LAMMPS's order: decreasing)", function()
    local w = lf.molecule{sites = spce}
    assert.are.equal(15.9994 + 2 * 1.008, w.mass)
    local yc = 2 * 1.008 * math.cos(th) / w.mass
    assert.is_true(math.abs(w.com.y - yc) < 1e-15 and w.com.x == 0)
    -- in-plane moments by hand, the third their sum (a planar body)
    local Ixx = 15.9994 * yc ^ 2 + 2 * 1.008 * (math.cos(th) - yc) ^ 2
    local Iyy = 2 * 1.008 * math.sin(th) ^ 2
    local J = w.inertia
    assert.is_true(J[1] >= J[2] and J[2] >= J[3])
    assert.is_true(math.abs(J[1] - (Ixx + Iyy)) < 1e-14 and math.abs(J[2] - math.max(Ixx, Iyy)) < 1e-14 and
                   math.abs(J[3] - math.min(Ixx, Iyy)) < 1e-14)
    -- the sites in the body frame reproduce the input through the axes
    for i, s in ipairs(w.sites) do
      local back = w.com + w.axes * s.x
      for k = 1, 3 do assert.is_true(math.abs(back[k] - spce[i].x[k]) < 1e-15) end
    end
    assert.is_true(math.abs(w.axes:det() - 1) < 1e-15)
  end)

  it("gives a body's state from its sites' positions and velocities (LAMMPS's v_cm and L)", function()
    local w = lf.molecule{sites = spce}
    local R0 = lf.so3.exp(lf.vec3{0.3, -0.2, 0.5})
    local x0, v0, w0 = lf.vec3{1, 2, 3}, lf.vec3{0.1, -0.2, 0.3}, lf.vec3{0.4, 0.1, -0.2}
    local r, u = {}, {}
    for i, s in ipairs(w.sites) do
      local d = R0 * s.x
      r[i], u[i] = x0 + d, v0 + (R0 * w0):cross(d)
    end
    local st = w:state_of(r, u)
    assert.is_true((st.x - x0):norm() < 1e-14 and (st.v - v0):norm() < 1e-14 and (st.omega - w0):norm() < 1e-13)
    assert.is_true(lf.so3.dist(st.R, R0) < 1e-14)
  end)

  it("refuses a linear molecule, bad sites and unknown fields, naming them", function()
    has(errmsg(lf.molecule, {sites = {{mass = 12, x = {0, 0, 0}}, {mass = 16, x = {1.2, 0, 0}}}}), "lie on a line")
    has(errmsg(lf.molecule, {sites = {{mass = 1, x = {0, 0, 0}}, {mass = 1, x = {1, 0, 0}}, {mass = 1, x = {2, 0, 0}}}}),
        "a linear molecule")
    has(errmsg(lf.molecule, {sites = {{mass = 0, x = {0, 0, 0}}}}), "site 1: mass = 0")
    has(errmsg(lf.molecule, {sites = {{mass = 1, x = {0, 0}}}}), "site 1")
    has(errmsg(lf.molecule, {sites = {{mass = 1, x = {0, 0, 0}, chrage = 1}}}), "unknown field 'chrage'")
    has(errmsg(lf.molecule, {atoms = {}}), "unknown field 'atoms'")
    has(errmsg(lf.molecule, {sites = {{mass = 1, x = {0, 0, 0}}}}), "lie on a line")
    local water = lf.molecule{sites = {{mass = 16, x = {0, 0, 0}}, {mass = 1, x = {1, 0, 0}}, {mass = 1, x = {0, 1, 0}}}}
    has(errmsg(water.body, 0.5), "call it as a method") -- (a fuzz finding: the methods indexed any self)
    has(errmsg(water.place, water, 5), "a rotation (mat3) expected")
  end)
end)

describe("lf.read_lammps_data", function()
  local function file(text)
    local p = os.tmpname()
    local f = assert(io.open(p, "w"))
    f:write(text)
    f:close()
    return p
  end
  local head = "title\n\n3 atoms\n1 atom types\n\n0 10 xlo xhi\n0 10 ylo yhi\n0 10 zlo zhi\n\nMasses\n\n1 1\n\n"
  local atoms = "Atoms # atomic\n\n1 1 1 1 1\n2 1 2 1 1\n3 1 1 2 1\n"

  it("reads the example's files and builds the bodies, with thermodynamic observers", function()
    local sys, info = lf.read_lammps_data(FIX .. "data.rigid.start", {bodies = clump, cutoff = 2.5})
    assert.are.equal(9, sys.n)
    assert.are.equal(9, sys.mass[1])
    local tr = lf.run(sys, {method = "no_squish", h = 1e-4, T = 0.01, every = 50, observe = info.observe})
    -- f = 6 N - 3 = 51 degrees of freedom in the box; U of the sites is the system's potential energy
    for k = 1, #tr.t do
      assert.is_true(math.abs(tr.temperature[k] - 2 * (tr.kinetic_translation[k] + tr.kinetic_rotation[k]) / 51) < 1e-9)
      local U = tr.energy[k] - tr.kinetic_translation[k] - tr.kinetic_rotation[k]
      assert.is_true(math.abs(tr.potential_energy[k] - U) < 1e-9 * math.abs(U))
    end
    -- without interactions (epsilon 0) the pressure is the ideal gas's, P V = 2/3 K_trans
    local free, finfo = lf.read_lammps_data(FIX .. "data.rigid.start", {bodies = clump, cutoff = 2.5, lj = {{0, 1}}})
    local it = lf.integrator("no_squish", free, {h = 1e-4}):step(10)
    local P = finfo.observe.pressure(it)
    assert.is_true(math.abs(P * 24 ^ 3 - 2 / 3 * it.kinetic_translation) < 1e-12 * it.kinetic_translation)
  end)

  it("refuses missing and malformed sections, unknown styles, triclinic boxes, atoms without a body", function()
    local function refuses(text, what, opts)
      local p = file(text)
      local msg = errmsg(lf.read_lammps_data, p, opts or {bodies = function() return 1 end, cutoff = 1})
      os.remove(p)
      has(msg, what)
    end
    refuses(head, "the Atoms section is missing")
    refuses(head .. "Atoms # atomic\n\n1 1 1 1\n", "an Atoms line of style atomic has 5 or 8 fields, got 4")
    refuses(head .. "Atoms\n\n1 1 1 1\n", "no atom style has that many")
    refuses(head .. "Atoms # charge\n\n1 1 1 1 1\n", "atom style 'charge' is not supported")
    refuses(head:gsub("0 10 zlo zhi\n", "0 10 zlo zhi\n0 0 0 xy xz yz\n") .. atoms, "triclinic")
    refuses(head .. "Atoms # atomic\n\n1 1 1 1 x\n", "z is \"x\"")
    refuses(head:gsub("3 atoms", "4 atoms") .. atoms, "the header says 4 atoms")
    refuses(head:gsub("Masses\n\n1 1\n", "Masses\n\n1 -1\n") .. atoms, "the mass of type 1 is -1")
    refuses(head .. atoms, "no molecule IDs", {cutoff = 1})
    refuses(head .. atoms, "bodies(1) returned nil", {bodies = function() return nil end, cutoff = 1})
    refuses("title\n\n1 atom types\n", "no 'N atoms'")
    -- options (fuzz findings: a misspelt option was ignored, a negative epsilon accepted, 10^5 types
    -- allocated their K^2 tables)
    refuses(head .. atoms, "unknown option 'cutof'", {bodies = function() return 1 end, cutof = 1})
    refuses(head .. atoms, "option 'kB' must be a positive number", {bodies = function() return 1 end, kB = -1})
    refuses(head .. atoms, "epsilon", {bodies = function() return 1 end, cutoff = 1, lj = {{-1, 1}}})
    refuses(head:gsub("1 atom types", "1025 atom types"):gsub("Masses\n\n1 1\n", "Masses\n\n1 1\n1025 1\n") ..
            atoms:gsub("3 1 1 2 1", "3 1025 1 2 1"),
            "atom type 1025: at most 1024 types")
    local p = file(head .. "Atoms # atomic\n\n1 1 1 1 1\n")
    has(errmsg(lf.read_lammps_data, p, {bodies = function() return 1 end, cutoff = 1}), "lf.read_lammps_data: ")
    os.remove(p)
    has(errmsg(lf.read_lammps_data, "/nonexistent/data"), "cannot open")
  end)
end)

describe("bodies of sites in ensembles and checkpoints", function()
  it("run bitwise the same with 1 and 2 workers (thermostatted, seed + i - 1) and resume from a checkpoint bit for bit", function()
    local function make()
      local sys = lf.read_lammps_data(FIX .. "data.rigid.start", {bodies = clump, cutoff = 2.5, skin = 0.3})
      return sys, {thermostat = {kind = "langevin", T = 1.5, gamma = 1, gamma_rot = 1, seed = 7}}
    end
    local opts = {n = 3, make = make, method = "no_squish", h = 1e-4, T = 0.02, every = 50}
    opts.workers = 1
    local r1 = lf.ensemble(opts)
    opts.workers = 2
    local r2 = lf.ensemble(opts)
    assert.is_true(r1[1].ok and r1[2].ok and r1[3].ok and lf.ensemble.identical(r1, r2))
    assert.is_true(r1[1].state.x[1] ~= r1[2].state.x[1]) -- members have their own noise
    local sys = make()
    local it = lf.integrator("split_exact", sys, {h = 1e-4}):step(100)
    local path = os.tmpname()
    it:save(path)
    it:step(100)
    local back = lf.load(path, sys):step(100) -- the neighbour list built anew, the same steps
    os.remove(path)
    for b = 1, 9 do assert.is_true(it.x[b] == back.x[b] and it.R[b] == back.R[b] and it.v[b] == back.v[b]) end
  end)
end)

describe("lf.write_xyz and lf.write_lammps_dump", function()
  it("write the sites, which ASE (Debian's python3-ase) reads back exactly", function()
    local sys, info = lf.read_lammps_data(FIX .. "data.rigid.start", {bodies = clump, cutoff = 2.5})
    local it = lf.integrator("no_squish", sys, {h = 1e-4})
    local s1 = it:state()
    it:step(200)
    local s2 = it:state()
    local xyz, dump = os.tmpname(), os.tmpname()
    lf.write_xyz(xyz, {templates = info.templates, states = {s1, s2}, box = info.box, species = {"Ar"}, times = {0, 0.02}})
    lf.write_lammps_dump(dump, {templates = info.templates, states = {s1, s2}, box = info.data.box, timesteps = {0, 200}})
    -- ASE prints the positions of frame 2 of each file
    local py = [[
import ase.io, sys
for name, fmt in ((sys.argv[1], 'extxyz'), (sys.argv[2], 'lammps-dump-text')):
    fr = ase.io.read(name, index=':', format=fmt)
    print(len(fr), len(fr[1]), fr[0].get_chemical_symbols()[0])
    for p in fr[1].positions: print('%.17g %.17g %.17g' % tuple(p))
]]
    local script = os.tmpname()
    local sf = assert(io.open(script, "w"))
    sf:write(py)
    sf:close()
    local p = io.popen(("/usr/bin/python3 '%s' '%s' '%s' 2>&1"):format(script, xyz, dump))
    local out = p:read("a")
    p:close()
    os.remove(xyz)
    os.remove(dump)
    os.remove(script)
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.are.equal(2 * 82, #lines, out)
    local sites = require("lieflow.files.xyz").sites(info.templates, s2)
    local worst = 0
    for f = 0, 1 do
      assert.is_true(lines[82 * f + 1]:find("^2 81") ~= nil, lines[82 * f + 1])
      for i = 1, 81 do
        local k = 0
        for v in lines[82 * f + 1 + i]:gmatch("%S+") do
          k = k + 1
          worst = math.max(worst, math.abs(tonumber(v) - sites[i][k]))
        end
      end
    end
    assert.is_true(lines[1]:find("Ar") ~= nil)
    print(("\n  sites read back by ASE (extended XYZ, LAMMPS dump): largest difference %.1e"):format(worst))
    assert.is_true(worst == 0, tostring(worst))
  end)

  it("refuse what is not a state of bodies that translate, naming the field", function()
    local _, info = lf.read_lammps_data(FIX .. "data.rigid.start", {bodies = clump, cutoff = 2.5})
    has(errmsg(lf.write_xyz, os.tmpname(), {templates = info.templates}), "'states'")
    has(errmsg(lf.write_xyz, os.tmpname(), {templates = info.templates, state = {omega = 1}}), "a state with x and R")
    has(errmsg(lf.write_lammps_dump, "/nonexistent/dir/f", {templates = info.templates, state = {x = {}, R = {}}}),
        "the state has 0 centres")
  end)
end)

describe("site_pair: site-site pair potentials written in Lua", function()
  -- three bodies of three sites (types 0, 1, 1 with charges) in a box, close enough for every pair type
  local s9 = {0, 0, 0.5, 0, 0, -0.5, 0.3, 0, 0}
  local function spec(extra)
    local t = {nsites = {3, 3, 3}, s = {}, type = {}, charge = {}, ntypes = 2, cutoff = 2.5, box = {10, 10, 10}, skin = 0.4}
    for b = 1, 3 do
      for k = 1, 9 do t.s[#t.s + 1] = s9[k] end
      t.type[#t.type + 1], t.type[#t.type + 2], t.type[#t.type + 3] = 0, 1, 1
      t.charge[#t.charge + 1], t.charge[#t.charge + 2], t.charge[#t.charge + 3] = -0.8, 0.4, 0.4
    end
    for k, v in pairs(extra) do t[k] = v end
    return t
  end
  local function bodies(p)
    return lf.bodies{{inertia = {1, 1, 0.5}, mass = 2, x = {0, 0, 0}, omega = {0.3, -0.2, 0.5}},
      {inertia = {1, 1, 0.5}, mass = 2, x = {1.4, 0.2, 0}, v = {0.1, 0, 0}},
      {inertia = {1, 1, 0.5}, mass = 2, x = {0.1, 1.5, 0.3}, omega = {0, 1, 0}}, potential = p}
  end
  local eps, sig = {1, 0.7, 0.7, 0.5}, {1, 0.9, 0.9, 0.8}

  it("equal the built-in Lennard-Jones and Coulomb (shifted force) to round-off, compiled once per pair of types", function()
    local traces = 0
    local user = lf.potential.sites(spec{site_pair = function(r, si, sj, p)
      traces = traces + 1
      local k = 2 * si.type + sj.type + 1
      local sr6 = (sig[k] / r) ^ 6
      -- plain shifted force Coulomb: DSF with alpha = 0, k q_i q_j (1/r - 1/rc + (r - rc)/rc^2)
      return 4 * eps[k] * (sr6 * sr6 - sr6) + p.k * si.charge * sj.charge * (1 / r - 1 / 2.5 + (r - 2.5) / 2.5 ^ 2)
    end, params = {k = 1.7}})
    local builtin = lf.potential.sites(spec{lj_epsilon = eps, lj_sigma = sig, coulomb_k = 1.7, coulomb_alpha = 0})
    assert.are.equal(3, traces) -- (0, 0), (0, 1), (1, 1): traced once each, then compiled
    local a = lf.integrator("no_squish", bodies(builtin), {h = 0.002})
    local b = lf.integrator("no_squish", bodies(user), {h = 0.002})
    local su, sb = lf.potential.sites_stats(user), lf.potential.sites_stats(builtin)
    local dU, dx = 0, 0
    for _ = 1, 10 do
      a:step(50); b:step(50)
      su, sb = lf.potential.sites_stats(user), lf.potential.sites_stats(builtin)
      dU = math.max(dU, math.abs(su.pair_energy - sb.pair_energy) / math.abs(sb.pair_energy))
      for i = 1, 3 do dx = math.max(dx, (a.x[i] - b.x[i]):norm(), (a.R[i] - b.R[i]):norm()) end
    end
    print(("  site_pair LJ + Coulomb in Lua against the built-in styles: pair energy %.1e relative, x and R after "
      .. "500 steps %.1e (%d pairs in range); traced %d times"):format(dU, dx, sb.pairs_in_range, traces))
    assert.is_true(dU < 1e-13 and dx < 1e-12 and sb.pairs_in_range > 10 and su.self_energy == 0)
    assert.are.equal(3, traces)
    assert.is_true(math.abs(su.user_energy - su.pair_energy) < 1e-15 and su.lj_energy == 0)
  end)

  it("give forces that are their energy's: a Morse potential conserved to order 2 (error ratio 4 at h/2)", function()
    local user = lf.potential.sites(spec{site_pair = function(r, si, sj)
      local e = math.exp(-1.5 * (r - 1.1))
      return 0.8 * (e * e - 2 * e)
    end})
    local sys = bodies(user)
    local it = lf.integrator("split_exact", sys, {h = 1e-3})
    local E0 = it:energy()
    local worst = 0
    for _ = 1, 20 do it:step(100); worst = math.max(worst, math.abs(it:energy() - E0)) end
    -- halving h divides the energy error by 4 (order 2): the forces are the energy's
    local it2 = lf.integrator("split_exact", sys, {h = 5e-4})
    local worst2 = 0
    for _ = 1, 20 do it2:step(200); worst2 = math.max(worst2, math.abs(it2:energy() - E0)) end
    print(("  Morse site_pair, split_exact over T = 2: max |E - E0| %.2e at h = 1e-3, %.2e at h/2 (ratio %.2f)")
      :format(worst, worst2, worst / worst2))
    assert.is_true(worst < 1e-4 * math.abs(E0) and worst / worst2 > 3.5 and worst / worst2 < 4.5)
  end)

  it("give forces, torques and the virial of their energy (a Buckingham site_pair against central differences)", function()
    local function buck(box)
      return lf.potential.sites(spec{box = box, charge = nil, site_pair = function(r, si, sj, p)
        local A = si.type == sj.type and p.A or 0.5 * p.A
        return A * math.exp(-r / 0.3) - p.C / (r * r * r * r * r * r)
      end, params = {A = 40, C = 0.2}})
    end
    local sys = bodies(buck{10, 10, 10})
    local xs = {lf.vec3{0, 0, 0}, lf.vec3{1.4, 0.2, 0}, lf.vec3{0.1, 1.5, 0.3}}
    local Rs = {lf.so3.exp{0.1, 0.2, 0.3}, lf.so3.exp{-0.3, 0.1, 0}, lf.so3.exp{0, 0.4, -0.2}}
    local F, tau = sys:force(xs, Rs), sys:torque(xs, Rs)
    local d, worst = 1e-6, 0
    for b = 1, 3 do
      for k = 1, 3 do
        local e = lf.vec3{k == 1 and d or 0, k == 2 and d or 0, k == 3 and d or 0}
        local xp, xm, Rp, Rm = {table.unpack(xs)}, {table.unpack(xs)}, {table.unpack(Rs)}, {table.unpack(Rs)}
        xp[b], xm[b] = xs[b] + e, xs[b] - e
        Rp[b], Rm[b] = Rs[b] * lf.so3.exp(e), Rs[b] * lf.so3.exp(-e)
        local fd = -(sys:potential(xp, Rs) - sys:potential(xm, Rs)) / (2 * d)
        local td = -(sys:potential(xs, Rp) - sys:potential(xs, Rm)) / (2 * d)
        worst = math.max(worst, math.abs(fd - F[b][k]) / (1 + math.abs(F[b][k])), math.abs(td - tau[b][k]) / (1 + math.abs(tau[b][k])))
      end
    end
    -- the molecular virial W = -dU/de of U(x (1 + e)) in the box scaled by 1 + e, the attitudes fixed
    local function U_scaled(f)
      local sc = bodies(buck{10 * f, 10 * f, 10 * f})
      return sc:potential({xs[1] * f, xs[2] * f, xs[3] * f}, Rs)
    end
    local pot = buck{10, 10, 10}
    bodies(pot):potential(xs, Rs)
    local W = lf.potential.sites_stats(pot).virial
    local Wd = -(U_scaled(1 + d) - U_scaled(1 - d)) / (2 * d)
    print(("  Buckingham site_pair: forces and torques against central differences %.1e, virial %.10g against %.10g")
      :format(worst, W, Wd))
    assert.is_true(worst < 1e-7 and math.abs(W - Wd) < 1e-7 * (1 + math.abs(W)))
  end)

  it("take LAMMPS's types in lf.read_lammps_data (1, 2, ...) and reproduce its Lennard-Jones", function()
    local lj = function(r, si, sj)
      assert(si.type == 1 and sj.type == 1)
      local sr6 = (1 / r) ^ 6
      return 4 * (sr6 * sr6 - sr6)
    end
    local a = lf.read_lammps_data(FIX .. "data.rigid.start", {bodies = clump, cutoff = 2.5, lj = {{1, 1}}})
    local b = lf.read_lammps_data(FIX .. "data.rigid.start", {bodies = clump, cutoff = 2.5, site_pair = lj})
    assert.is_true(math.abs(a:energy() - b:energy()) < 1e-13 * math.abs(a:energy()))
  end)

  it("refuse what cannot be compiled or is not finite, naming the pair of types", function()
    has(errmsg(lf.potential.sites, spec{site_pair = 5}), "site_pair must be a function")
    has(errmsg(lf.potential.sites, spec{site_pair = function(r) if r < 1 then return 0 end return 1 / r end}),
        "site_pair of the site types 0 and 0")
    has(errmsg(lf.potential.sites, spec{site_pair = function(r) return lf.vec3(r, 0, 0) end}), "site types 0 and 0")
    has(errmsg(lf.potential.sites, spec{site_pair = function(r) return 1 / r end, compile = "fast"}),
        "compile must be")
    has(errmsg(lf.potential.sites, spec{lj_epsilon = eps, lj_sigma = sig, params = {k = 1}}),
        "params and compile go with a site_pair")
    has(errmsg(lf.potential.sites, spec{site_pair = function(r) return 1 / r end, ntypes = 40}),
        "at most 32 site types")
    -- not finite at a configuration: log(r - 2) at r < 2
    local p = lf.potential.sites(spec{site_pair = function(r) return math.log(r - 2) end})
    has(errmsg(function() return bodies(p):energy() end), "is not finite")
    has(errmsg(lf.read_lammps_data, FIX .. "data.rigid.start", {bodies = clump, cutoff = 2.5, site_pair = "lj"}),
        "lf.read_lammps_data: site_pair: site_pair must be a function")
  end)
end)
