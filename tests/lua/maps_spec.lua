-- SPDX-License-Identifier: GPL-3.0-or-later
-- lf.so3, lf.s2, lf.quat from Lua: agreement with the definitions and clear errors.
local lf = require "lieflow"

local function mdist(A, B) return (A - B):norm() end

describe("lf.so3", function()
  local x = lf.vec3{0.3, -0.2, 0.9}
  it("exp and log are inverse and exp is Rodrigues", function()
    local R = lf.so3.exp(x)
    assert.is_true((lf.so3.log(R) - x):norm() < 1e-15)
    local t, X = x:norm(), lf.so3.hat(x)
    local rod = lf.mat3() + math.sin(t) / t * X + (1 - math.cos(t)) / t ^ 2 * (X * X)
    assert.is_true(mdist(R, rod) < 1e-15)
    assert.is_true(lf.so3.orth_error(R) < 1e-15)
  end)
  it("hat/vee, cay/cayinv, Ad", function()
    assert.are.same({{0, -3, 2}, {3, 0, -1}, {-2, 1, 0}}, lf.so3.hat{1, 2, 3}:totable())
    assert.are.same({1, 2, 3}, lf.so3.vee(lf.so3.hat{1, 2, 3}):totable())
    local C = lf.so3.cay(x)
    local X = lf.so3.hat(x)
    local cay = (lf.mat3() - 0.5 * X):inv() * (lf.mat3() + 0.5 * X) -- (I - X/2)^-1 (I + X/2)
    assert.is_true(mdist(C, cay) < 1e-15)
    assert.is_true((lf.so3.cayinv(C) - x):norm() < 1e-15)
    local R = lf.so3.random(3)
    assert.is_true(mdist(lf.so3.exp(lf.so3.Ad(R, x)), R * lf.so3.exp(x) * R:T()) < 1e-14)
  end)
  it("dexp and dcay are right-trivialized (finite differences)", function()
    local d, e = lf.vec3{0.2, 0.1, -0.4}, 1e-5
    for _, pair in ipairs{{lf.so3.exp, lf.so3.dexp}, {lf.so3.cay, lf.so3.dcay}} do
      local F, dF = pair[1], pair[2]
      local fd = (F(x + e * d) - F(x - e * d)) * (1 / (2 * e)) * F(x):T()
      assert.is_true((lf.so3.vee(fd) - dF(x) * d):norm() < 1e-9)
    end
    assert.is_true((lf.so3.dexp(x) * lf.so3.dexpinv(x) - lf.mat3()):norm() < 1e-14)
    assert.is_true((lf.so3.dcay(x) * lf.so3.dcayinv(x) - lf.mat3()):norm() < 1e-14)
  end)
  it("dist, angle, project, random", function()
    local A, B = lf.so3.random(1), lf.so3.random(2)
    assert.is_true(math.abs(lf.so3.dist(A, B) - math.sqrt(2 * (3 - (A:T() * B):trace()))) < 1e-14)
    assert.is_true(math.abs(lf.so3.angle(A, B) - lf.so3.log(A:T() * B):norm()) < 1e-14)
    assert.is_true(mdist(lf.so3.project(A), A) < 1e-15)
    assert.is_true(mdist(lf.so3.random(5), lf.so3.random(5)) == 0)
    assert.is_true(mdist(lf.so3.random(5), lf.so3.random(6)) > 0.01)
    assert.is_true(lf.so3.is_rotation(lf.so3.project{{1, 0.1, 0}, {0, 1, 0.2}, {0.3, 0, 1}}))
  end)
  it("accepts plain tables and rejects non-rotations with the defect", function()
    assert.is_true((lf.so3.log{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}):norm() == 0)
    assert.has_error(function() lf.so3.log{{1, 0, 0}, {0, 1, 0}, {0, 0, 2}} end,
      "argument #1 to 'so3.log' is not a rotation: ||R^T R - I|| = 3 > 1e-09")
    local ok, msg = pcall(lf.so3.dist, lf.so3.exp{0, 0, 1} + lf.mat3{1e-6, 0, 0, 0, 0, 0, 0, 0, 0}, lf.so3.I)
    assert.is_false(ok)
    assert.is_truthy(msg:find("argument #1 to 'so3.dist' is not a rotation", 1, true))
    assert.has_error(function() lf.so3.exp("x") end, "argument #1 to 'so3.exp': vec3 or table of 3 numbers expected, got string")
    assert.has_error(function() lf.so3.exp{0, 0/0, 0} end)
    assert.has_error(function() lf.so3.cayinv(lf.so3.exp{math.pi, 0, 0}) end)
    assert.has_error(function() lf.so3.random(-1) end)
  end)
end)

describe("lf.s2 and lf.quat", function()
  it("sphere maps", function()
    local p, q = lf.vec3{1, 0, 0}, lf.vec3{0, 0.6, 0.8}
    assert.is_true(math.abs(lf.s2.dist(p, q) - math.acos(p:dot(q))) < 1e-15)
    local m = lf.s2.midpoint(p, q)
    assert.is_true(math.abs(lf.s2.dist(p, m) - lf.s2.dist(m, q)) < 1e-15)
    local r = lf.vec3{0.6, 0.8, 0}
    local v = lf.s2.retract_inv(p, r)
    assert.is_true((lf.s2.retract(p, v) - r):norm() < 1e-15)
    assert.has_error(function() lf.s2.retract_inv(p, q) end) -- p . q = 0: outside the chart
    assert.is_true(math.abs(lf.s2.tangent(p, {1, 2, 3}):dot(p)) == 0)
    assert.has_error(function() lf.s2.dist({1, 1, 0}, p) end)
    assert.has_error(function() lf.s2.midpoint(p, -p) end)
  end)
  it("quaternions {w, x, y, z}", function()
    local R = lf.so3.exp{0.1, 0.2, 0.3}
    local q = lf.quat.from_matrix(R)
    assert.is_true(mdist(lf.quat.to_matrix(q), R) < 1e-15)
    local q2 = lf.quat.exp{0.05, 0.1, 0.15} -- rotation exp(2v)
    assert.is_true(mdist(lf.quat.to_matrix(q2), R) < 1e-15)
    local p = lf.quat.mul(q, lf.quat.conj(q))
    assert.is_true(math.abs(p[1] - 1) < 1e-15)
    local v = lf.quat.log(q2)
    assert.is_true(math.abs(v[1] - 0.05) < 1e-15)
    assert.has_error(function() lf.quat.log{2, 0, 0, 0} end)
    assert.has_error(function() lf.quat.mul({1, 0, 0}, {1, 0, 0, 0}) end)
  end)
end)
