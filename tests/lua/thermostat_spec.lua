-- SPDX-License-Identifier: GPL-3.0-or-later
-- The Langevin thermostat from Lua (lf.integrator's option thermostat; the statistics are measured in
-- tests/c/test_langevin.c): lf.run and ensembles reproducible from the seed whatever the workers,
-- checkpoints (it:checkpoint, it:save / lf.load) resuming bit for bit, refusals naming the field.
local lf = require "lieflow"
local T = require "testlib"
local errmsg, has = T.errmsg, T.has

local function bodies()
  return lf.bodies{{inertia = {1, 2, 3}, mass = 1.5, x = {0, 0, 0}},
                   {inertia = {1, 1, 2}, mass = 2, x = {3, 0, 0}, v = {0, 0.1, 0}}}
end
local TH = {T = 0.7, gamma = 1, gamma_rot = 0.5, seed = 11}

describe("thermostat", function()
  it("lf.run is reproducible from the seed, another seed differs, the energy moves", function()
    local function run(seed)
      local th = {T = TH.T, gamma = TH.gamma, gamma_rot = TH.gamma_rot, seed = seed}
      return lf.run(bodies(), {method = "no_squish", h = 0.05, T = 20, every = 40, thermostat = th,
                               record = {"v"}})
    end
    local a, b, c = run(11), run(11), run(12)
    for k = 1, #a.t do
      assert.are.equal(a.energy[k], b.energy[k])
      assert.are.equal(a["2_v3"][k], b["2_v3"][k])
    end
    assert.are_not.equal(a.energy[#a.t], c.energy[#c.t])
    assert.is_true(math.abs(a.energy[#a.t] - a.energy[1]) > 1e-3) -- heat exchanged with the bath
  end)

  it("lf.run records the heat: E - E(0) - heat is the deterministic step's energy error (0 for the free flow)", function()
    local free = lf.bodies{{inertia = {1, 2, 3}, mass = 1.5, x = {0, 0, 0}}, {inertia = {1, 1, 2}, mass = 2}}
    local tr = lf.run(free, {method = "split_exact", h = 0.05, T = 20, every = 40, thermostat = TH})
    local n = #tr.t
    assert.is_true(math.abs(tr.heat[n]) > 0.1)
    for k = 1, n do assert.is_true(math.abs(tr.energy_error[k] - tr.heat[k]) < 1e-12, tostring(k)) end
    for k = 1, n do assert.are.equal(0, tr.work[k]) end
  end)

  it("it:checkpoint and it:save / lf.load resume bit for bit", function()
    for _, m in ipairs{"vlv", "dlm", "split_exact_s4"} do
      local it = lf.integrator(m, bodies(), {h = 0.05, thermostat = TH})
      it:step(30)
      local cp = it:checkpoint()
      assert.are.equal(30, cp.noise_step)
      assert.are.equal(it.heat, cp.heat)
      assert.are.equal(11, cp.thermostat.seed)
      local path = os.tmpname()
      it:save(path)
      it:step(20)
      local it2 = lf.integrator(m, bodies(), {h = 0.05, thermostat = TH})
      it2:restore(cp)
      it2:step(20)
      local it3 = lf.load(path, bodies())
      os.remove(path)
      it3:step(20)
      for _, o in ipairs{it2, it3} do
        local s, r = it:state(), o:state()
        for b = 1, 2 do
          for k = 1, 3 do
            assert.are.equal(s.omega[b][k], r.omega[b][k])
            assert.are.equal(s.v[b][k], r.v[b][k])
            assert.are.equal(s.x[b][k], r.x[b][k])
          end
        end
        assert.are.equal(it.heat, o.heat)
      end
    end
  end)

  it("ensemble members get their own streams, the same with 1 and 2 workers", function()
    local function ens(workers)
      return lf.ensemble{n = 4, make = function() return bodies() end, method = "dlm", h = 0.05, T = 5,
                         every = 100, thermostat = TH, workers = workers, trajectory = false}
    end
    local r1, r2 = ens(1), ens(2)
    for i = 1, 4 do
      assert.is_true(r1[i].ok and r2[i].ok)
      assert.are.equal(r1[i].state.v[1][1], r2[i].state.v[1][1])
      if i > 1 then assert.are_not.equal(r1[i].state.v[1][1], r1[1].state.v[1][1]) end
    end
  end)

  it("refuses bad thermostats and methods that cannot take one, naming the field", function()
    local sys = bodies()
    local function refuses(th, ...)
      local msg = errmsg(lf.integrator, "vlv", sys, {h = 0.1, thermostat = th})
      for _, w in ipairs{...} do has(msg, w) end
    end
    refuses({T = -1}, "T = -1")
    refuses({T = 1, gamma = -2}, "gamma = -2")
    refuses({T = 1, gamma_rot = 0 / 0}, "gamma_rot")
    refuses({T = 1, seed = 1.5}, "seed", "integer")
    refuses({T = 1, seed = -3}, "seed")
    refuses({T = 1, kind = "nose_hoover"}, "langevin")
    refuses({T = 1, temperature = 2}, "temperature")
    refuses({gamma = 1}, "thermostat.T")
    refuses(3, "table")
    local msg = errmsg(lf.integrator, "eln", sys, {h = 0.1, thermostat = {T = 1}})
    has(msg, "eln")
    has(msg, "no_squish")
    msg = errmsg(lf.integrator, "rkmk4", sys, {h = 0.1, thermostat = {T = 1}})
    has(msg, "rkmk4")
    local it = lf.integrator("dlm", sys, {h = -0.1, thermostat = {T = 1}})
    msg = errmsg(it.step, it, 1)
    has(msg, "forward")
  end)
end)

describe("NVT", function()
  it("LAMMPS's hot clumps (rigid bodies of sites, T ~ 1e4) cooled to the set temperature and held there", function()
    local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
    local sys = lf.read_lammps_data(here .. "/../fixtures/lammps/rigid_nve/data.rigid.start",
                                    {bodies = function(id) return (id - 1) // 9 + 1 end, cutoff = 2.5, skin = 0.3})
    local it = lf.integrator("no_squish", sys, {h = 1e-4, thermostat = {T = 1.5, gamma = 5, gamma_rot = 5, seed = 7}})
    it:step(50000) -- the hot start needs the small step (T ~ 40 after it)
    it.h = 2e-3
    it:step(10000) -- t = 25: equilibrated
    -- 9 bodies, 54 degrees of freedom (the thermostat does not keep the momentum); 10 batches of 100 samples
    local batches, sum = {}, 0
    for b = 1, 10 do
      local s = 0
      for _ = 1, 100 do
        it:step(100)
        s = s + 2 * (it.kinetic_translation + it.kinetic_rotation) / 54
      end
      batches[b] = s / 100
      sum = sum + batches[b]
    end
    local mean, var = sum / 10, 0
    for b = 1, 10 do var = var + (batches[b] - mean) ^ 2 end
    local se = math.sqrt(var / 90)
    print(("\n  NVT clumps: <T> = %.4f +- %.4f (set 1.5), the bath took %.4g"):format(mean, se, -it.heat))
    assert.is_true(math.abs(mean - 1.5) < math.max(4 * se, 0.03), ("%g +- %g"):format(mean, se))
  end)

  it("rigid SPC/E water (27 molecules, DSF Coulomb, real units) warmed from rest to 300 K and held there", function()
    local W = require "water_box"
    local path = W.write(os.tmpname(), 3, 3.1, 7)
    local sys, info = lf.read_lammps_data(path, W.options(4.5, 1))
    os.remove(path)
    local h = 1 / W.TAU -- 1 fs
    local it = lf.integrator("split_exact", sys, {h = h, thermostat = {T = W.KB * 300, gamma = 0.1, gamma_rot = 1,
                                                                   seed = 3}})
    local T0 = info.observe.temperature(it)
    it:step(5000) -- 5 ps: equilibrated
    local batches, sum = {}, 0 -- then 10 ps in 10 batches of 100 samples 10 fs apart
    for b = 1, 10 do
      local s = 0
      for _ = 1, 100 do
        it:step(10)
        s = s + info.observe.temperature(it)
      end
      batches[b] = s / 100
      sum = sum + batches[b]
    end
    local mean, var = sum / 10, 0
    for b = 1, 10 do var = var + (batches[b] - mean) ^ 2 end
    local se = math.sqrt(var / 90)
    print(("  NVT water: T(0) = %.1f K, <T> = %.1f +- %.1f K over 10 ps (set 300 K; 6N - 3 = 159 degrees of freedom)")
      :format(T0, mean, se))
    assert.is_true(T0 < 1 and math.abs(mean - 300) < math.max(4 * se, 6), ("%g +- %g"):format(mean, se))
  end)
end)

