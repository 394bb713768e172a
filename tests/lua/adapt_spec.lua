-- SPDX-License-Identifier: GPL-3.0-or-later
-- Reversible adaptive steps from Lua (lf.integrator's option adapt; the measurements are in
-- tests/c/test_adapt.c): there and back, a Lua monitor, lf.run's columns, checkpoints, refusals.
local lf = require "lieflow"
local T = require "testlib"
local errmsg, has = T.errmsg, T.has

local function wall()
  return lf.rigidbody{inertia = {2, 3, 4.5}, R = lf.so3.I, omega = {1, 2 / 3, 2 / 4.5},
                      potential = lf.potential.coulomb_wall()}
end

describe("adapt", function()
  it("steps back with -h to round-off, with the torque monitor and a Lua monitor", function()
    for _, a in ipairs{true, {monitor = function(s) return 1 + s.omega:norm() ^ 2 end}} do
      local it = lf.integrator("dlm_s4", wall(), {h = 0.1, adapt = a})
      local s0 = it:state()
      it:step(40)
      assert.is_true(it.adaptive and it.rho > 0 and it.last_h > 0 and it.last_h ~= 0.1)
      it.h = -0.1
      it:step(40)
      local e = it:error(s0)
      assert.is_true(e.R < 1e-12 and e.omega < 1e-12 and math.abs(it.t) < 1e-12)
    end
  end)

  it("advance_to lands on T; max_steps stops short", function()
    local it = lf.integrator("vlv", wall(), {h = 0.1, adapt = true})
    it:advance_to(1.2345, 3)
    assert.are.equal(3, it.steps)
    assert.is_true(it.t < 1.2345)
    it:advance_to(1.2345)
    assert.are.equal(1.2345, it.t)
  end)

  it("lf.run records the steps and the density; a checkpoint resumes bit for bit", function()
    local tr = lf.run(wall(), {method = "split_exact", h = 0.1, T = 2, adapt = true})
    assert.are.equal(2, tr.t[#tr.t])
    assert.are.equal(#tr.t, #tr.step)
    assert.are.equal(#tr.t, #tr.rho)
    local it = lf.integrator("split_exact", wall(), {h = 0.1, adapt = true}):step(5)
    local c = it:checkpoint()
    assert.is_true(c.rho > 0 and c.monitor0 > 0)
    it:step(5)
    local a = it:state()
    it:restore(c)
    it:step(5)
    assert.are.equal(a.t, it.t)
    assert.are.equal(0, (a.R - it.R):norm())
  end)

  it("refuses with messages that name the method and the value", function()
    has(errmsg(lf.integrator, "liemid_e", wall(), {h = 0.1, adapt = true}), "liemid_e is not symmetric")
    has(errmsg(lf.integrator, "rkmk_dp45", wall(), {h = 0.1, adapt = true}), "chooses its own step")
    has(errmsg(lf.integrator, "vlv", wall(), {h = 0.1, adapt = 3}), "must be true or a table")
    has(errmsg(lf.integrator, "vlv", wall(), {h = 0.1, adapt = {tol = 1}}), "unknown adapt option 'tol'")
    has(errmsg(lf.integrator, "vlv", wall(), {h = 0.1, adapt = {monitor = "speed"}}), "got speed")
    local it = lf.integrator("vlv", wall(), {h = 0.1, adapt = {monitor = function() return -1 end}})
    has(errmsg(it.step, it), "the monitor returned -1")
    assert.are.equal(0, it.t) -- the failed step left the state
    local sys = lf.lie_ode{factors = {"s2"}, y0 = {{0, 0, 1}}, f = "s2_gradient_flow", params = {D = {1, 1, 3}}}
    has(errmsg(lf.integrator, "rkmk_gl4_sym", sys, {h = 0.1, adapt = true}), "needs a monitor")
  end)
end)
