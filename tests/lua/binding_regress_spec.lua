-- SPDX-License-Identifier: GPL-3.0-or-later
-- Regressions of the Lua binding (lua/*.c, scripts/lieflow/run/luamethod.lua): stack use, GC,
-- errors raised through C code, and argument checks. Several of these crashed or corrupted memory
-- before the fix; run under valgrind they must be clean (make valgrind).
local lf = require "lieflow"

local R0 = lf.so3.exp{0, 0.7227, 0}
local T = require "testlib"
local errmsg, has = T.errmsg, T.has

describe("lf.bodies", function()
  it("takes many bodies (they were all pushed on the C stack without lua_checkstack)", function()
    local bs = {}
    for i = 1, 2000 do bs[i] = {inertia = {1, 2, 2.5}, omega = {1e-3 * i, 0, 0}} end
    bs.potential = function() return 0 end
    local b = lf.bodies(bs)
    assert.are.equal(2000, b.n)
    local E = 0
    for i = 1, 2000 do E = E + 0.5 * (1e-3 * i) ^ 2 end
    assert.is_true(math.abs(b:energy() - E) <= 1e-12 * E)
    has(errmsg(lf.bodies, {{inertia = {1, 2, 2.5}}, 5}), "lf.bodies: body 2 must be a table, got number")
  end)
end)

describe("a system resurrected by a finalizer", function()
  it("raises an error instead of dereferencing its freed core system", function()
    do
      local b = lf.rigidbody{inertia = {1, 2, 3}}
      setmetatable({}, {__gc = function() _G.__lf_resurrected = b end})
    end
    collectgarbage(); collectgarbage()
    local B = _G.__lf_resurrected
    _G.__lf_resurrected = nil
    assert.is_not_nil(B)
    has(errmsg(function() return B.n end), "finalized")
    has(errmsg(lf.integrator, "vlv", B, {h = 0.1}), "finalized")
    has(errmsg(lf.reference, B, 1), "finalized")
  end)
end)

describe("a Lua torque whose result raises in a metamethod", function()
  local bad = false
  local body = lf.rigidbody{inertia = {2, 2, 4}, R = R0, omega = {0, 0, 0.625}, compile = false,
    potential = function(R) return R[3][3] end,
    torque = function(R)
      if bad then return setmetatable({}, {__len = function() error("len boom") end}) end
      return lf.vec3{-R[3][2], R[3][1], 0}
    end}
  it("fails the step cleanly: the state is rolled back (no longjmp through the integrator)", function()
    bad = false
    local it = lf.integrator("vlv", body, {h = 0.125})
    it:step(3)
    local t, R, w = it.t, it.R, it.omega
    bad = true
    has(errmsg(it.step, it), "vlv: step from t=0.375 with h=0.125 failed: torque of body 1 is table")
    assert.are.equal(t, it.t)
    assert.is_true(it.R == R and it.omega == w)
    bad = false
    it:step() -- still usable
    assert.are.equal(0.5, it.t)
  end)
  it("fails lf.reference with the message", function()
    bad = true
    has(errmsg(lf.reference, body, 1.0), "torque of body 1 is table, expected a vec3")
    bad = false
  end)
end)

describe("a potential that evaluates its system from a coroutine", function()
  it("keeps the system bound to the running thread (the coroutine is collected)", function()
    local body
    local function nested() coroutine.wrap(function() body:potential(lf.so3.I) end)() end
    body = lf.rigidbody{inertia = {2, 2, 4}, R = R0, omega = {0, 0, 0.625},
      potential = function(R) return R[3][3] end,
      torque = function(R)
        nested()
        collectgarbage()
        return lf.vec3{-R[3][2], R[3][1], 0}
      end}
    local it = lf.integrator("eln", body, {h = 0.125})
    it:step(5)
    assert.are.equal(0.625, it.t)
    assert.is_number(it:energy())
  end)
end)

describe("an integrator used from its own torque callback", function()
  local function body_with(cb)
    return lf.rigidbody{inertia = {2, 2, 4}, R = R0, omega = {0, 0, 0.625}, compile = false,
      potential = function(R) return R[3][3] end,
      torque = function(R) cb(); return lf.vec3{-R[3][2], R[3][1], 0} end}
  end
  it("refuses to step re-entrantly (the outer step silently continued from the inner one's state)", function()
    local it
    it = lf.integrator("vlv", body_with(function() if it then it:step(3) end end), {h = 0.125})
    has(errmsg(it.step, it, 2), "integrator is in the middle of a step")
    assert.are.equal(0, it.t)
    assert.are.equal(0, it.steps)
  end)
  it("refuses to be closed in the middle of a step (use after free)", function()
    local it
    it = lf.integrator("vlv", body_with(function() if it then getmetatable(it).__close(it) end end), {h = 0.125})
    has(errmsg(it.step, it), "integrator is in the middle of a step")
    assert.are.equal(0, it.t)
  end)
end)

describe("argument checks of the binding", function()
  local body = lf.rigidbody{inertia = {1, 2, 3}, omega = {0.1, 0.2, 0.3}}
  it("reports non-unit vectors and quaternions with their norm (was: invalid option '%.' to 'lua_pushfstring')", function()
    has(errmsg(lf.s2.dist, {1, 1, 0}, {1, 0, 0}), "argument #1 to 's2.dist': unit vector expected, |p| = 1.4142135623730951")
    has(errmsg(lf.s2.midpoint, {1, 0, 0}, {0, 2, 0}), "argument #2 to 's2.midpoint': unit vector expected, |p| = 2")
    has(errmsg(lf.quat.log, {2, 0, 0, 0}), "unit quaternion expected, |q| = 2")
  end)
  it("names the missing second array of fit_linear (it saw its own scratch userdata)", function()
    has(errmsg(lf.core.fit_linear, {1, 2, 3}), "argument 'ys' must be an array of numbers, got nil")
  end)
  it("rejects max_iter that is not an integer >= 1 (it was converted to int first: undefined for 1e10)", function()
    has(errmsg(lf.integrator, "vlv", body, {h = 0.125, max_iter = 1e10}), "max_iter must be an integer >= 1")
    has(errmsg(lf.integrator, "vlv", body, {h = 0.125, max_iter = 2.5}), "max_iter must be an integer >= 1, got 2.5")
    assert.is_not_nil(lf.integrator("vlv", body, {h = 0.125, max_iter = 7}))
  end)
  it("refuses advance_to with more steps than an integer holds (it took one step of h = 1e20)", function()
    local it = lf.integrator("eln", body, {h = 0.125})
    has(errmsg(it.advance_to, it, 1e20), "are too many")
    assert.are.equal(0, it.t)
    assert.are.equal(0, it.steps)
  end)
  it("refuses set_state with both omega and momentum", function()
    local it = lf.integrator("vlv", body, {h = 0.125})
    has(errmsg(it.set_state, it, {omega = {1, 2, 3}, momentum = {1, 1, 1}}), "either 'omega' or 'momentum'")
    assert.is_true(it.omega == lf.vec3{0.1, 0.2, 0.3})
  end)
  it("checks lf.reference's options 'at' and the tolerances", function()
    has(errmsg(lf.reference, body, 1, {at = 3}), "option 'at' must be an array of times, got number")
    has(errmsg(lf.reference, body, 1, {rtol = -1}), "must not be negative")
  end)
  it("names the state argument of system:energy", function()
    has(errmsg(body.energy, body, 5), "argument #1 to 'system:energy': state {R=, omega=} expected, got number")
  end)
end)

describe("integrators written in Lua", function()
  local euler = lf.method{name = "euler", step = function(s, h)
    if getmetatable(s.R) then s.R = s.R * lf.so3.exp(h * s.omega)
    else for i = 1, #s.R do s.R[i] = s.R[i] * lf.so3.exp(h * s.omega[i]) end end
  end}
  local body = lf.rigidbody{inertia = {1, 2, 3}, omega = {0.1, 0.2, 0.3}}
  it("neither rewrite nor alias the arrays given to set_state", function()
    local b2 = lf.bodies{{inertia = {1, 2, 3}}, {inertia = {1, 2, 3}}}
    local it = lf.integrator(euler, b2, {h = 0.1})
    local Rs, ws = {lf.so3.I, lf.so3.exp{0, 0, 1}}, {{1, 0, 0}, {0, 1, 0}}
    it:set_state{R = Rs, omega = ws}
    assert.are.equal("table", type(ws[1]))
    ws[1], Rs[2] = lf.vec3{5, 5, 5}, "garbage"
    assert.is_true(it.omega[1] == lf.vec3{1, 0, 0})
    it:step()
    assert.is_true(math.abs(it.t - 0.1) < 1e-15)
  end)
  it("take a step count given as a float with an integer value, like the built-in ones", function()
    local it = lf.integrator(euler, body, {h = 0.125})
    it:step(1e2)
    assert.are.equal(100, it.steps)
    assert.are.equal(12.5, it.t)
  end)
  it("check h, t0, t, the system and advance_to's target", function()
    local it = lf.integrator(euler, body, {h = 0.1})
    has(errmsg(function() it.t = 5 end), "field 't' is read-only")
    has(errmsg(function() it.h = 0 end), "integrator.h must be a finite nonzero number, got 0")
    it.h = 0.25
    it:step()
    assert.are.equal(0.25, it.h)
    assert.are.equal(0.25, it.t)
    has(errmsg(it.set_state, it, {t = 0 / 0}), "set_state: field 't' must be a finite number")
    has(errmsg(it.advance_to, it), "advance_to: finite target time expected, got nil")
    has(errmsg(lf.integrator, euler, body, {h = 0.1, t0 = 1 / 0}), "option 't0' must be a finite number")
    has(errmsg(lf.integrator, euler, nil, {h = 0.1}), "argument #2 must be a system")
  end)
end)

describe("overflowing and ill-posed map arguments", function()
  local lf = require "lieflow"
  -- These raised "is too large" until the maps learned to evaluate huge arguments on the unit axis
  -- (core/lie/so3.c HUGE_ANGLE) and to scale quaternions: now they give the exact answer, and a
  -- result that really overflows (dcayinv ~ |x|^2) still raises instead of returning NaN.
  it("give the right rotation for huge arguments, and raise when the result overflows", function()
    local R = lf.so3.exp{1e200, 1e200, 0}
    assert.is_true(lf.so3.is_rotation(R, 1e-14))
    local n = lf.vec3{1, 1, 0} / math.sqrt(2)
    assert.is_true((R * n - n):norm() < 1e-15)                    -- the axis is fixed
    assert.is_true(math.abs((R:trace() - 1) / 2 - math.cos(lf.vec3{1e200, 1e200, 0}:norm())) < 1e-15)
    assert.is_true(lf.so3.dist(lf.quat.to_matrix{1e300, 1e300, 0, 0}, lf.quat.to_matrix{1, 1, 0, 0}) == 0)
    local y = lf.s2.exp({1, 0, 0}, {0, 1e200, 1e200})
    assert.is_true(math.abs(y:norm() - 1) < 1e-15)
    for _, f in ipairs{function() return lf.so3.dcayinv{1e200, 0, 0} end,
                       function() return lf.so3.hat{1e308, 0, 0} * lf.so3.hat{1e308, 0, 0} end} do
      local ok, msg = pcall(f)
      assert.is_false(ok)
      assert.is_truthy(tostring(msg):find("is too large", 1, true) or tostring(msg):find("non-finite", 1, true), msg)
    end
  end)
  it("project refuses a matrix whose nearest rotation is not unique", function()
    local ok, msg = pcall(lf.so3.project, lf.mat3{0, 0, 0, 0, 0, 0, 0, 0, 0})
    assert.is_false(ok); assert.is_truthy(msg:find("not unique", 1, true))
    assert.has_error(function() lf.so3.project{1, 0, 0, 0, 0, 0, 0, 0, 0} end)      -- rank 1
    assert.has_error(function() lf.so3.project{1, 0, 0, 0, 1, 0, 0, 0, -1} end)     -- reflection, tie
    assert.is_true(lf.so3.is_rotation(lf.so3.project{1, 0, 0, 0, 1, 0, 0, 0, 0}))  -- rank 2: unique
  end)
end)

describe("a potential whose value becomes non-finite", function()
  it("is caught inside it:step (autodiff torque), not only by it:energy; the state is kept", function()
    local body = lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.3, 0}, omega = {0, 0.5, 0.625}, compile = false,
      potential = function(R) return R[3][3] > 0.99 and R[3][3] or 0 / 0 end}
    local it = lf.integrator("vlv", body, {h = 0.125})
    local ok, msg
    for _ = 1, 100 do
      local t, R = it.t, it.R
      ok, msg = pcall(it.step, it)
      if not ok then
        assert.are.equal(t, it.t)
        assert.is_true(it.R == R)
        break
      end
    end
    assert.is_false(ok)
    has(msg, "potential U(R): the value is not finite")
  end)

  it("a rotation copied with 8 digits is refused with a hint to project it", function()
    local R = lf.so3.exp{0.3, -0.2, 0.5}
    local t = {}
    for i = 1, 3 do
      t[i] = {}
      for j = 1, 3 do t[i][j] = tonumber(("%.8f"):format(R[i][j])) end
    end
    local msg = errmsg(lf.rigidbody, {inertia = {1, 2, 2.5}, R = t})
    has(msg, "is not a rotation")
    has(msg, "lf.so3.project(R)")
    local body = lf.rigidbody{inertia = {1, 2, 2.5}, R = lf.so3.project(t)}
    assert.is_true(body ~= nil)
    -- far from SO(3): no hint
    assert.is_nil(errmsg(lf.rigidbody, {inertia = {1, 2, 2.5}, R = {{2, 0, 0}, {0, 1, 0}, {0, 0, 1}}}):find("project", 1, true))
  end)

  it("mat3 entries and rows can be set: A[i][j] = x, A[i] = row (before: silently nothing / a raw error)", function()
    local A = lf.mat3()
    A[1][2] = 5
    assert.are.equal(5, A[1][2])
    A[3] = {7, 8, 9}
    assert.are.equal(8, A[3][2])
    A[2] = lf.vec3{0, 2, 0}
    assert.are.equal(18, A:det()) -- {{1, 5, 0}, {0, 2, 0}, {7, 8, 9}}
    has(errmsg(function() A.x = 1 end), "mat3: cannot set field x")
    has(errmsg(function() A[4] = {1, 2, 3} end), "mat3: cannot set field 4")
    has(errmsg(function() A[1][1] = 0 / 0 end), "finite number expected")
    assert.are.equal(1, A[1][1])
  end)
end)
