-- SPDX-License-Identifier: GPL-3.0-or-later
-- lf.spheres: systems on (S^2)^n lifted to SO(3) (Ortolan's thesis Part II) — construction, strict
-- arguments and bad input, the built-in potentials' gradients against autodiff of the potentials
-- written in Lua, Lua potentials (with and without a gradient), the fields and observables, and the
-- tooling (lf.integrator, lf.run, lf.order) with eln_spatial, rattle and the generic methods.
local lf = require "lieflow"
local T = require "testlib"
local errmsg, has = T.errmsg, T.has

local q1 = {0.577350269189626, 0.577350269189626, -0.577350269189626}
local function pendulum() return lf.spheres.pendulum{m = 2, l = 2, g = 9.81, q = q1, omega = {1, 1, 2}} end
local qd0 = {{0.866019052628739, 0, 0.500011000363013}, {0, 0, -1}}
local function double() return lf.spheres.double_pendulum{m1 = 2, m2 = 1, l1 = 1, l2 = 1, g = 9.81, up = {0, 0, -1},
  q = qd0, qdot = {{0, 0.865980947790423, 0}, {-1, 0, 0}}} end

-- random unit vectors (deterministic)
local seed = 12345
local function rnd() seed = (1103515245 * seed + 12345) % 2147483648; return seed / 2147483648 end
local function unit() local v = lf.vec3{rnd() - 0.5, rnd() - 0.5, rnd() - 0.5}; return v / v:norm() end

-- the built-in potentials written in Lua (vec3 arithmetic: autodiff runs through it)
local function V_pendulum(qs) return 2 * 9.81 * 2 * qs[1]:dot{0, 0, 1} end
local function V_double(qs) return 3 * 9.81 * 1 * qs[1]:dot{0, 0, -1} + 1 * 9.81 * 1 * qs[2]:dot{0, 0, -1} end
local function V_dipoles(rows, cols, s, moment)
  local kappa = 1e-7 * moment * moment
  return function(qs)
    local V = 0
    for i = 1, rows * cols do
      for j = i + 1, rows * cols do
        local r = lf.vec3{s * ((j - 1) % cols - (i - 1) % cols), s * ((j - 1) // cols - (i - 1) // cols), 0}
        local rn = r:norm()
        local e = r / rn
        V = V + kappa / rn ^ 3 * (qs[i]:dot(qs[j]) - 3 * qs[i]:dot(e) * qs[j]:dot(e))
      end
    end
    return V
  end
end

local function maxdiff(a, b)
  local m = 0
  for i = 1, #a do m = math.max(m, (lf.vec3(a[i]) - lf.vec3(b[i])):norm()) end
  return m
end

describe("lf.spheres", function()
  it("builds the thesis's examples with fields q, omega and the observables", function()
    local s = pendulum()
    assert.are.equal(1, s.n)
    assert.are.equal(8, s.M)
    assert.are.same({"q", "omega"}, s.fields)
    assert.are.same({"energy", "norm_error", "qdotw", "L1", "L2", "L3", "Lk"}, s:columns())
    assert.is_true(math.abs(s:energy() - 1.344775437) < 1e-9) -- spheres_spec §7.1
    local d = double()
    assert.are.same({{3, 1}, {1, 1}}, d.M)
    assert.is_false(d.diagonal)
    assert.is_true(math.abs(d:energy() + 3.280439238) < 1e-9)
    -- omega from qdot: omega_i = q_i x qdot_i (the thesis's (-0.433, 0, 0.749956), (0, 1, 0))
    assert.is_true((d.omega[1] - lf.vec3{-0.433, 0, 0.749956}):norm() < 1e-6)
    assert.is_true((d.omega[2] - lf.vec3{0, 1, 0}):norm() < 1e-15)
    local it = lf.integrator("eln_spatial", d, {h = 0.01}):step(10)
    assert.are.equal(2, #it.q)
    assert.are.equal("lf.vec3", getmetatable(it.q[2]).__name)
    assert.is_true(math.abs(it.q[2]:norm() - 1) < 1e-15)
    assert.is_true(it.qdotw < 1e-14)
    assert.are.equal(tostring(d), "lf.spheres(n = 2, coupled M, potential = double_pendulum)")
    local dp = lf.spheres.dipoles{rows = 2, cols = 3}
    assert.are.equal(6, dp.n)
    assert.is_true(dp.diagonal)
    assert.are.same({1, 0, 0}, dp.q[6]:totable())
  end)

  it("rejects unknown keys naming the valid ones", function()
    local m = errmsg(lf.spheres, {M = 1, q = {q1}, omgea = {{0, 0, 0}}})
    has(m, "unknown field 'omgea'"); has(m, "M, q, qdot, omega, potential, gradient, axis")
    m = errmsg(lf.spheres.pendulum, {mass = 1, q = q1})
    has(m, "unknown field 'mass'"); has(m, "m, l, g, up, q, qdot, omega, axis")
    has(errmsg(lf.spheres.dipoles, {rows = 2, cols = 2, kappa = 1}), "unknown field 'kappa'")
    has(errmsg(lf.spheres.double_pendulum, {q = qd0, m = 1}), "unknown field 'm'")
  end)

  it("reports bad input clearly", function()
    has(errmsg(lf.spheres, {M = 1, q = {{0, 0, 1.01}}}), "q[1] = (0, 0, 1.01) is not a unit vector")
    has(errmsg(lf.spheres, {M = {{1, 2}, {2, 1}}, q = {{0, 0, 1}, {1, 0, 0}}}), "not positive definite")
    has(errmsg(lf.spheres, {M = -1, q = {{0, 0, 1}}}), "M = -1 must be positive")
    has(errmsg(lf.spheres, {M = {{3, 1}, {0.5, 1}}, q = {{0, 0, 1}, {1, 0, 0}}}), "not symmetric")
    has(errmsg(lf.spheres, {M = {{3, 1}}, q = {{0, 0, 1}, {1, 0, 0}}}), "'M' must have 2 rows")
    has(errmsg(lf.spheres, {M = 2, q = {{0, 0, 1}, {1, 0, 0}}}), "'M' is a number but there are 2 spheres")
    has(errmsg(lf.spheres, {M = 1, q = {{0, 0, 1}}, omega = {{0, 0.5, 1}}}), "omega[1] is not orthogonal to q[1]")
    has(errmsg(lf.spheres, {M = 1, q = {{0, 0, 1}}, qdot = {{0, 1, 0.5}}}), "qdot[1] is not tangent")
    has(errmsg(lf.spheres, {M = 1, q = {{0, 0, 1}}, qdot = {{0, 1, 0}}, omega = {{1, 0, 0}}}), "either 'qdot' or 'omega'")
    has(errmsg(lf.spheres, {M = {{3, 1}, {1, 1}}, q = {{0, 0, 1}, {1, 0, 0}}, omega = {{1, 0, 0}}}), "'omega' must hold 2 vectors")
    has(errmsg(lf.spheres, {M = 1}), "field 'q'")
    has(errmsg(lf.spheres, {M = 1, q = {{0, 0, 1}}, potential = 3}), "'potential' must be a function")
    has(errmsg(lf.spheres.dipoles, {rows = 2, cols = 2, q = {{1, 0, 0}}}), "rows x cols = 4 unit vectors, got 1")
    has(errmsg(lf.spheres.dipoles, {rows = 0, cols = 2}), "'rows' and 'cols' must be integers")
    has(errmsg(lf.spheres.pendulum, {q = q1, l = 0}), "l = 0 must be a finite positive number")
    has(errmsg(lf.spheres.pendulum, {q = {q1, q1}}), "'q' must be one unit vector")
    has(errmsg(lf.spheres.pendulum, {q = {0, 0, 1}, axis = {0, 0, 0}}), "axis must be a finite nonzero vector")
    -- a Lua potential that errors or returns garbage stops the step with a message
    local bad = lf.spheres{M = 1, q = {{0, 0, 1}}, omega = {{1, 0, 0}},
      potential = function(qs) return qs[1][3] end, gradient = function() return "x" end}
    has(errmsg(function() lf.integrator("rkmk4", bad, {h = 0.1}):step() end), "gradient dV(qs) returned string")
    has(errmsg(lf.spheres, {M = 1, q = {{0, 0, 1}}, potential = function() error("boom") end}),
        "lf.spheres: the model fails at the initial state") -- (compile = "auto": said when it is made)
    local boom = lf.spheres{M = 1, q = {{0, 0, 1}}, compile = false, potential = function() error("boom") end}
    has(errmsg(function() lf.integrator("eln_spatial", boom, {h = 0.1}):step() end), "boom")
  end)

  it("has built-in gradients equal to autodiff of the potentials written in Lua", function()
    local cases = {
      {pendulum(), V_pendulum, 1},
      {double(), V_double, 2},
      {lf.spheres.dipoles{rows = 4, cols = 4, spacing = 0.024, m = 0.05, l = 0.02, moment = 0.1}, V_dipoles(4, 4, 0.024, 0.1), 16},
      {lf.spheres.dipoles{rows = 3, cols = 5, spacing = 0.03, moment = 0.2}, V_dipoles(3, 5, 0.03, 0.2), 15},
    }
    for k, c in ipairs(cases) do
      local sys, V, n = c[1], c[2], c[3]
      for _ = 1, 5 do
        local qs = {}
        for i = 1, n do qs[i] = unit() end
        local Vc, Vl = sys:potential(qs), V(qs)
        local gc, ga = sys:gradient(qs), lf.autodiff.r3_gradient(V, qs)
        local scale = 0
        for i = 1, n do scale = math.max(scale, ga[i]:norm()) end
        assert.is_true(math.abs(Vc - Vl) <= 1e-14 * math.max(math.abs(Vl), scale), k)
        assert.is_true(maxdiff(gc, ga) <= 1e-14 * scale, ("case %d: %g"):format(k, maxdiff(gc, ga) / scale))
      end
    end
  end)

  it("integrates a Lua potential like the C built-in (gradient by autodiff or given)", function()
    local C = double()
    local A = lf.spheres{M = {{3, 1}, {1, 1}}, q = qd0, omega = C.omega, potential = V_double}
    local G = lf.spheres{M = {{3, 1}, {1, 1}}, q = qd0, omega = C.omega, potential = V_double,
      gradient = function() return {{0, 0, -3 * 9.81}, lf.vec3{0, 0, -9.81}} end}
    for _, m in ipairs{"eln_spatial", "rattle", "rkmk4"} do
      local c = lf.integrator(m, C, {h = 0.01}):step(200)
      local a = lf.integrator(m, A, {h = 0.01}):step(200)
      local g = lf.integrator(m, G, {h = 0.01}):step(200)
      assert.is_true(maxdiff(c.q, a.q) < 1e-13 and maxdiff(c.omega, a.omega) < 1e-12, m)
      assert.is_true(maxdiff(c.q, g.q) < 1e-13 and maxdiff(c.omega, g.omega) < 1e-12, m)
      assert.is_true(math.abs(c:energy() - a:energy()) < 1e-12, m)
    end
  end)

  it("runs every method that offers its form, with lf.run, lf.order and lf.reference", function()
    local s = pendulum()
    local tr = lf.run(s, {method = "rattle", h = 0.01, T = 2})
    assert.are.same({"t", "energy", "energy_error", "norm_error", "qdotw", "L1", "L2", "L3", "Lk"}, tr.columns)
    local L0 = tr.Lk[1]
    for i = 1, #tr.t do assert.is_true(math.abs(tr.Lk[i] - L0) < 1e-13 * L0) end
    local it = lf.integrator("rattle", s, {h = 0.01}):step(200)
    assert.is_true(it.constraint_position <= 1e-15 and it.constraint_velocity <= 1e-14)
    local o = lf.order{system = s, method = "eln_spatial", T = 1, steps = {2 ^ -5, 2 ^ -6, 2 ^ -7, 2 ^ -8}}
    assert.is_true(math.abs(o.order_q - 2) < 0.1 and math.abs(o.order_omega - 2) < 0.1)
    o = lf.order{system = double(), method = "rkmk_gl4", T = 1, steps = {2 ^ -5, 2 ^ -6, 2 ^ -7, 2 ^ -8}}
    assert.is_true(math.abs(o.order_q - 4) < 0.15 and math.abs(o.order_omega - 4) < 0.15)
    local names = {}
    for _, m in ipairs(lf.methods()) do names[m.name] = m end
    assert.are.equal("second_order", names.eln_spatial.form)
    assert.are.equal("no", names.eln_spatial.symplectic)
    assert.are.equal("constrained", names.rattle.form)
    assert.are.equal("proved", names.rattle.symplectic)
    has(errmsg(lf.integrator, "vlv", s, {h = 0.1}), "form 'rigid'")
    has(errmsg(lf.integrator, "rattle", lf.stress_system(), {h = 0.1}), "form 'constrained'")
  end)

  it("evaluates alpha, and keeps it.q, it.omega consistent with set_state", function()
    local d = double()
    local a = d:alpha()
    for i = 1, 2 do assert.is_true(math.abs(a[i]:dot(d.q[i])) < 1e-15) end
    local it = lf.integrator("eln_spatial", d, {h = 0.01})
    it:set_state{q = {{0, 0, 1}, {1, 0, 0}}, omega = {{1, 0, 0}, {0, 1, 0}}}
    assert.are.same({1, 0, 0}, it.q[2]:totable())
    it:step(10)
    has(errmsg(it.set_state, it, {q = {{0, 0, 2}, {1, 0, 0}}}), "q[1]")
    has(errmsg(d.alpha, d, {q = {{0, 0, 1}}}), "array of 2 values")
  end)
end)
