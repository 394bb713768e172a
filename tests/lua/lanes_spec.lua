-- SPDX-License-Identifier: GPL-3.0-or-later
-- Lanes: one integrator stepping copies of a one-body rigid system from many initial states at
-- once (vectorized in C), each lane bitwise as an integrator of its own.
local lf = require "lieflow"
local T = require "testlib"
local errmsg, has = T.errmsg, T.has

local function body(pot)
  return lf.rigidbody{inertia = {2, 2, 4}, potential = pot or lf.potential.stress{}}
end

local function states(n)
  local s = {}
  for j = 1, n do
    s[j] = {R = lf.so3.exp{0.05 * j, 0.7227, -0.03 * j}, omega = {0.01 * j, 0, 0.625}}
  end
  return s
end

local function same(a, b)
  for i = 1, 3 do
    if a.omega[i] ~= b.omega[i] then return false end
    for k = 1, 3 do if a.R[i][k] ~= b.R[i][k] then return false end end
  end
  return true
end

describe("lanes", function()
  it("give every lane the bits of an integrator of its own, for every method with lanes", function()
    local s = states(9)
    local n = 0
    for _, m in ipairs(lf.methods()) do
      if m.lanes then
        n = n + 1
        for _, pot in ipairs{lf.potential.stress{}, lf.potential.top{mgl = 2, chi = {0, 0, 1}}, lf.potential.free()} do
          local sys = body(pot)
          local it = lf.integrator(m.name, sys, {h = 0.02, lanes = s})
          assert.are.equal(9, it.lanes)
          it:advance_to(1.01)
          for j = 1, 9 do
            local one = lf.integrator(m.name, sys, {h = 0.02})
            one:set_state(s[j])
            one:advance_to(1.01)
            assert.is_true(same(it:lane(j), one:state()), m.name .. " lane " .. j)
            assert.are.equal(one:energy(), it:energy(j))
          end
        end
      end
    end
    assert.are.equal(4, n) -- eln, eln_exp, vlv, lgvi
  end)

  it("write one lane with set_lane and keep the others", function()
    local s = states(3)
    local it = lf.integrator("vlv", body(), {h = 0.05, lanes = s})
    it:set_lane(2, {omega = {0, 0, 1}})
    assert.are.equal(1, it:lane(2).omega[3])
    assert.is_true(same(it:lane(3), s[3]))
    it:step(10)
    assert.are.equal(10, it.steps)
  end)

  it("refuse what they cannot do, with the reason", function()
    local s = states(4)
    has(errmsg(lf.integrator, "rkmk4", body(), {h = 0.1, lanes = s}),
        "rkmk4 has no lane kernel (methods with lanes: eln, eln_exp, vlv, lgvi)")
    has(errmsg(lf.integrator, "vlv", body(), {h = 0.1, lanes = {}}), "array of initial states")
    has(errmsg(lf.integrator, "vlv", body(), {h = 0.1, lanes = {s[1], {R = 3}}}), "lanes[2]: field 'R'")
    has(errmsg(lf.integrator, "vlv", body(), {h = 0.1, lanes = {s[1], {Q = 3}}}), "unknown field 'Q'")
    local two = lf.bodies{{inertia = {2, 2, 4}}, {inertia = {1, 2, 3}}, potential = lf.potential.stress{}}
    has(errmsg(lf.integrator, "vlv", two, {h = 0.1, lanes = {{}, {}}}), "has 2 bodies")
    local it = lf.integrator("eln", body(), {h = 0.1, lanes = s})
    has(errmsg(it.state, it), "steps 4 lanes; read one with it:lane(j)")
    has(errmsg(it.checkpoint, it), "steps 4 lanes")
    has(errmsg(function() return it.R end), "it.R: this integrator steps 4 lanes")
    has(errmsg(function() return it.spatial_momentum end), "steps 4 lanes")
    has(errmsg(it.lane, it, 5), "lane 5 of 4")
    has(errmsg(it.lane, it, 0), "lane 0 of 4")
  end)

  it("name the failing lane and roll every lane back", function()
    local s = states(5)
    s[4].omega = {0, 0, 40} -- lgvi: F does not exist for h |w| > 1
    local it = lf.integrator("lgvi", body(lf.potential.top{mgl = 20, chi = {0, 0, 1}}), {h = 0.1, lanes = s})
    local before = it:lane(3)
    local msg = errmsg(it.step, it)
    has(msg, "lane 4")
    assert.is_true(same(before, it:lane(3)))
    assert.are.equal(0, it.t)
  end)
end)
