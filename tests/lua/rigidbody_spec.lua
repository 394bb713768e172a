-- SPDX-License-Identifier: GPL-3.0-or-later
-- Rigid bodies from Lua: systems, potentials (built-in, Lua, autodiff), integrators, Lua methods,
-- and the errors a user meets.
local lf = require "lieflow"

local R0 = lf.so3.exp{0, 0.7227, 0}
local function stress_body(extra)
  local t = {inertia = {2, 2, 4}, R = R0, omega = {0, 0, 0.625}, potential = lf.potential.stress{}}
  for k, v in pairs(extra or {}) do t[k] = v end
  return lf.rigidbody(t)
end
-- the stress potential of [BOS] eq. (12) written in Lua
local Rm = lf.so3.exp{2.5 / math.sqrt(2), 0, 2.5 / math.sqrt(2)}
local function U_stress(R) return (lf.so3.dist(R, lf.so3.I) - 1) ^ 2 - 0.3 / lf.so3.dist(R, Rm) end

describe("lf.methods()", function()
  it("lists every registered method with its metadata", function()
    local names = {}
    for _, m in ipairs(lf.methods()) do
      names[m.name] = true
      assert.is_string(m.title); assert.is_string(m.reference)
      assert.is_true(math.type(m.order) == "integer" and m.order >= 1 and m.order <= 8)
      assert.is_boolean(m.symmetric); assert.is_boolean(m.momentum_conserving)
      assert.is_boolean(m.explicit_in_torque)
      assert.is_truthy(({proved = 1, no = 1, unknown = 1})[m.symplectic])
    end
    for _, n in ipairs{"eln", "eln_exp", "tln", "vlv", "liemid", "liemid_i", "liemid_e", "liemid_e1",
                       "liemid_e2", "liemid_ea", "prk", "mcg", "new3", "akw", "lgvi"} do
      assert.is_true(names[n], n)
    end
  end)
end)

describe("lf.rigidbody", function()
  it("evaluates its model", function()
    local body = stress_body()
    assert.are.equal(1, body.n)
    assert.are.same({2, 2, 4}, body.inertia:totable())
    local E = body:energy()
    assert.is_true(math.abs(E - (0.5 * 4 * 0.625 ^ 2 + U_stress(R0))) < 1e-14)
    assert.is_true(math.abs(body:potential(R0) - U_stress(R0)) < 1e-14)
    assert.are.equal("lf.vec3", getmetatable(body:torque(R0)).__name)
  end)
  it("accepts momentum instead of omega", function()
    local b = lf.rigidbody{inertia = {2, 3, 4}, momentum = {2, 3, 4}}
    assert.are.same({1, 1, 1}, b.omega:totable())
  end)
  it("rejects bad input with clear messages", function()
    assert.has_error(function() lf.rigidbody{inertia = {2, 0, 4}} end,
      "lf.rigidbody: inertia moment 2 = 0.0, expected a positive number")
    assert.has_error(function() lf.rigidbody{inertia = {2, 2, -4}} end)
    assert.has_error(function() lf.rigidbody{} end, "lf.rigidbody: field 'inertia' (3 principal moments) is required")
    assert.has_error(function() lf.rigidbody{inertia = {2, 2, 4}, omega = {0, 0/0, 0}} end)
    local ok, msg = pcall(lf.rigidbody, {inertia = {2, 2, 4}, R = lf.mat3{1, 0, 0, 0, 1, 0, 0, 0, 1.001}})
    assert.is_false(ok); assert.is_truthy(msg:find("is not a rotation", 1, true))
    assert.has_error(function() lf.rigidbody{inertia = {2, 2, 4}, potential = 3} end)
    assert.has_error(function() lf.rigidbody{inertia = {2, 2, 4}, omega = {1, 0, 0}, momentum = {1, 0, 0}} end)
  end)
end)

describe("Lua potentials", function()
  it("autodiff torque equals the built-in C torque", function()
    local lua_body = lf.rigidbody{inertia = {2, 2, 4}, R = R0, potential = U_stress}
    local c_body = stress_body()
    for seed = 1, 10 do
      local R = lf.so3.random(seed)
      local a, b = lua_body:torque(R), c_body:torque(R)
      assert.is_true((a - b):norm() <= 1e-12 * b:norm(), ("seed %d: %s vs %s"):format(seed, tostring(a), tostring(b)))
    end
  end)
  it("integrates to the same trajectory as the C potential", function()
    local lua_body = lf.rigidbody{inertia = {2, 2, 4}, R = R0, omega = {0, 0, 0.625}, potential = U_stress}
    local a = lf.integrator("vlv", lua_body, {h = 0.125}):step(200)
    local b = lf.integrator("vlv", stress_body(), {h = 0.125}):step(200)
    assert.is_true((a.R - b.R):norm() < 1e-12)
    assert.is_true(math.abs(a:energy() - b:energy()) < 1e-12)
  end)
  it("uses a Lua torque function when given", function()
    local calls = 0
    local body = lf.rigidbody{inertia = {2, 2, 4}, R = R0, omega = {0, 0, 0.625}, potential = U_stress,
                              torque = function(R) calls = calls + 1; return stress_body():torque(R) end}
    lf.integrator("eln", body, {h = 0.1}):step(10)
    assert.is_true(calls >= 10)
  end)
  it("reports a potential that errors or returns a non-number, and keeps the state", function()
    local n = 0
    local body = lf.rigidbody{inertia = {2, 2, 4}, R = R0, omega = {0, 0, 0.625}, compile = false,
                              potential = function(R) n = n + 1; if n > 5 then error("boom") end; return 0 end,
                              torque = function() return {0, 0, 0} end}
    assert.has_error(function() body:potential(R0); body:potential(R0); body:potential(R0)
                                body:potential(R0); body:potential(R0); body:potential(R0) end)
    local okb, msgb = pcall(lf.rigidbody, {inertia = {2, 2, 4}, R = R0, potential = function() return "x" end})
    assert.is_false(okb) -- (compile = "auto": the model bug said when the system is made)
    assert.is_truthy(msgb:find("lf.rigidbody: the model fails at the initial state: potential U(R) returned string", 1, true))
    local bad = lf.rigidbody{inertia = {2, 2, 4}, R = R0, compile = false, potential = function() return "x" end}
    local ok, msg = pcall(bad.potential, bad, R0)
    assert.is_false(ok); assert.is_truthy(msg:find("returned string, expected a number", 1, true))
    local ok2, msg2 = pcall(bad.torque, bad, R0)
    assert.is_false(ok2); assert.is_truthy(msg2:find("expected a number", 1, true))
    local badtau = lf.rigidbody{inertia = {2, 2, 4}, R = R0, omega = {0, 0, 1}, potential = function() return 0 end,
                                torque = function() return "no" end}
    local it = lf.integrator("vlv", badtau, {h = 0.1})
    local ok3, msg3 = pcall(it.step, it)
    assert.is_false(ok3); assert.is_truthy(msg3:find("vlv: step from t=0", 1, true))
    assert.are.equal(0, it.t)
  end)
end)

describe("lf.integrator", function()
  it("steps, advances to a time, reports its state", function()
    local it = lf.integrator("vlv", stress_body(), {h = 0.125})
    it:step(); it:step(7)
    assert.are.equal(1, it.t)
    it:advance_to(2.3)
    assert.are.equal(2.3, it.t)
    local s = it:state()
    assert.are.equal(2.3, s.t)
    it:set_state{t = 0, R = R0, omega = {0, 0, 0.625}}
    assert.are.equal(0, it.t)
    assert.is_true(it.orthogonality < 1e-14)
    assert.are.equal("lf.vec3", getmetatable(it.spatial_momentum).__name)
  end)
  it("names unknown methods and bad options", function()
    assert.has_error(function() lf.integrator("nope", stress_body(), {h = 1}) end)
    assert.has_error(function() lf.integrator("vlv", stress_body(), {}) end, "lf.integrator: option 'h' (step size) is required")
    assert.has_error(function() lf.integrator("vlv", stress_body(), {h = 0}) end)
    assert.has_error(function() lf.integrator("vlv", stress_body(), {h = 0.1, max_iter = 0}) end)
    assert.has_error(function() lf.integrator("liemid", stress_body(), {h = 0.1}):step() end)
  end)
  it("reports Newton failure with method, time and residual, leaving the state", function()
    local it = lf.integrator("tln", stress_body(), {h = 0.5, max_iter = 1, newton_tol = 1e-16})
    local ok, msg = pcall(it.step, it)
    assert.is_false(ok)
    assert.is_truthy(msg:find("tln: step from t=0", 1, true), msg)
    assert.is_truthy(msg:find("newton did not converge", 1, true), msg)
    assert.is_truthy(msg:find("residual", 1, true), msg)
    assert.are.equal(0, it.t)
    assert.is_true((it.R - R0):norm() == 0)
  end)
  it("integrates several bodies", function()
    local sys = lf.bodies{{inertia = {2, 2, 4}, R = R0, omega = {0, 0, 0.625}},
                          {inertia = {2, 2, 4}, R = R0, omega = {0, 0, 0.625}},
                          potential = function(Rs) return U_stress(Rs[1]) + U_stress(Rs[2]) end}
    local it = lf.integrator("vlv", sys, {h = 0.125}):step(40)
    local one = lf.integrator("vlv", stress_body(), {h = 0.125}):step(40)
    assert.are.equal(2, #it.R)
    assert.is_true((it.R[1] - one.R):norm() < 1e-12 and (it.R[2] - one.R):norm() < 1e-12)
  end)
end)

describe("lf.method (integrators written in Lua)", function()
  -- Lie–Euler on the body equations, first order: R <- R exp(h w), w <- w + h J^-1 (J w x w + tau)
  local euler = lf.method{name = "lua_lie_euler", order = 1, step = function(s, h, sys)
    local J = sys.inertia
    local tau = sys:torque(s.R)
    local Jw = lf.vec3{J[1] * s.omega[1], J[2] * s.omega[2], J[3] * s.omega[3]}
    local f = Jw:cross(s.omega) + tau
    s.R = s.R * lf.so3.exp(h * s.omega)
    s.omega = s.omega + h * lf.vec3{f[1] / J[1], f[2] / J[2], f[3] / J[3]}
  end}
  it("runs through lf.integrator with the same interface", function()
    local it = lf.integrator(euler, stress_body(), {h = 0.01})
    it:step(10):advance_to(0.25)
    assert.is_true(math.abs(it.t - 0.25) < 1e-15)
    assert.is_number(it:energy())
    assert.is_true(it.orthogonality < 1e-13)
  end)
  it("converges at first order against the rk8pd reference", function()
    local body = stress_body()
    local ref = lf.reference(body, 1)
    local errs = {}
    for k, h in ipairs{0.01, 0.005} do
      errs[k] = (lf.integrator(euler, body, {h = h}):advance_to(1).R - ref.R):norm()
    end
    local order = math.log(errs[1] / errs[2], 2)
    assert.is_true(math.abs(order - 1) < 0.1, order)
  end)
  it("reports errors of the Lua step with the method name and time", function()
    local bad = lf.method{name = "bad", step = function() error("oops") end}
    local ok, msg = pcall(function() lf.integrator(bad, stress_body(), {h = 0.1}):step() end)
    assert.is_false(ok); assert.is_truthy(msg:find("bad: step from t=0", 1, true))
    local drift = lf.method{name = "drift", step = function(s) s.R = 1.1 * s.R end}
    assert.has_error(function() lf.integrator(drift, stress_body(), {h = 0.1}):step() end)
    assert.has_error(function() lf.method{name = "x"} end)
  end)
end)
