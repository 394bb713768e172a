-- lf.exact.free_body from Lua: the closed-form free rigid body (core/solve/exact.c) against lf.reference,
-- and the errors a user meets.
local lf = require "lieflow"
local exact = lf.exact or require("lieflow.core").exact

local J, w0 = {0.9144, 1.098, 1.66}, {0.45549, 0.82623, 0.03476} -- seed 003 §2.2 (McLachlan–Zanna)

describe("lf.exact.free_body", function()
  it("matches lf.reference for the seed-003 body at t = 100", function()
    local w = exact.free_body(J, w0, 100)
    assert.are.equal("userdata", type(w))
    local body = lf.rigidbody{inertia = J, R = lf.so3.I, omega = w0}
    local ref = lf.reference(body, 100, {rtol = 1e-14, atol = 1e-14})
    local d = (w - ref.omega):norm()
    print(string.format("  |free_body(t=100) - reference| = %.2e", d))
    assert.is_true(d < 1e-11, d)
  end)

  it("accepts vec3 arguments, t = 0 and negative t, and conserves 2E and |Pi|", function()
    local Jv, wv = lf.vec3(J), lf.vec3(w0)
    assert.is_true((exact.free_body(Jv, wv, 0) - wv):norm() < 1e-15)
    local function inv(w) return J[1] * w.x ^ 2 + J[2] * w.y ^ 2 + J[3] * w.z ^ 2,
                                 lf.vec3{J[1] * w.x, J[2] * w.y, J[3] * w.z}:norm() end
    local E0, M0 = inv(wv)
    for _, t in ipairs{-100, -3.5, 7.25, 1e3} do
      local E, M = inv(exact.free_body(Jv, wv, t))
      assert.is_true(math.abs(E - E0) < 1e-14 and math.abs(M - M0) < 1e-14)
    end
    local body = lf.rigidbody{inertia = J, R = lf.so3.I, omega = w0}
    local ref = lf.reference(body, -10, {rtol = 1e-14, atol = 1e-14})
    assert.is_true((exact.free_body(J, w0, -10) - ref.omega):norm() < 1e-12)
  end)

  it("handles the degenerate cases: principal axis, axisymmetric, sphere", function()
    assert.are.same({0, 1.5, 0}, exact.free_body(J, {0, 1.5, 0}, 50):totable())
    assert.are.same({0.1, 0.2, 0.3}, exact.free_body({2, 2, 2}, {0.1, 0.2, 0.3}, 50):totable())
    -- J = (2, 2, 4): w3 constant, (w1, w2) turns at rate (C - A) w3 / A = 0.625
    local w = exact.free_body({2, 2, 4}, {1, 0, 0.625}, 2)
    local th = 0.625 * 2
    assert.is_true((w - lf.vec3{math.cos(th), math.sin(th), 0.625}):norm() < 1e-15)
  end)

  it("reports non-positive moments and non-finite arguments clearly", function()
    assert.has_error(function() exact.free_body({1, 0, 2}, w0, 1) end,
                     "exact.free_body: moment of inertia J[2] = 0 must be finite and > 0")
    assert.has_error(function() exact.free_body({1, 2, -3}, w0, 1) end,
                     "exact.free_body: moment of inertia J[3] = -3 must be finite and > 0")
    local ok, msg = pcall(exact.free_body, J, w0, 0 / 0)
    assert.is_false(ok)
    assert.is_truthy(msg:find("argument #3 't' to 'lf.exact.free_body': finite number expected", 1, true), msg)
    ok, msg = pcall(exact.free_body, J, w0, math.huge)
    assert.is_false(ok)
    assert.is_truthy(msg:find("finite number expected", 1, true), msg)
    ok, msg = pcall(exact.free_body, J, w0, "soon")
    assert.is_false(ok)
    assert.is_truthy(msg:find("number expected, got string", 1, true), msg)
    ok, msg = pcall(exact.free_body, J, {1, 0 / 0, 0}, 1)
    assert.is_false(ok)
    assert.is_truthy(msg:find("omega0", 1, true), msg)
    ok, msg = pcall(exact.free_body, {1, 2}, w0, 1)
    assert.is_false(ok)
    assert.is_truthy(msg:find("'J'", 1, true), msg)
  end)
end)
