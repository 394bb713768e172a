-- SPDX-License-Identifier: GPL-3.0-or-later
-- busted spec for reverse-mode automatic differentiation on the expression graph (one traced
-- evaluation, one sweep: lf.autodiff.torque, lie_gradient, reverse.gradient), against central
-- differences and against the compiled models' derivatives (built on the same graph by a different
-- route: symbolic reverse mode, generated code).
local lf = require "lieflow"
local T = require "testlib"
local ad = lf.autodiff
local rev = ad.reverse
local so3, M = lf.so3, lf.math

-- ---------------------------------------------------------------- helpers
local worst = {} -- label -> worst measured relative difference, printed at the end
local function record(label, r)
  if not worst[label] or r > worst[label] then worst[label] = r end
end

-- |a - b| / max(|b|, floor) for two vec3
local function rel(a, b, floor) return (a - b):norm() / math.max(b:norm(), floor or 1e-300) end

-- the largest relative difference between two arrays of torques, relative to the largest torque
local function rel_all(ta, tb)
  local scale, w = 1e-300, 0
  for i = 1, #tb do scale = math.max(scale, tb[i]:norm()) end
  for i = 1, #tb do w = math.max(w, (ta[i] - tb[i]):norm() / scale) end
  return w
end

-- -dU/de along R_i exp(e hat e_k) by a 4-point central difference
local function fd_torques(U, Rs, h)
  h = h or 1e-3
  local taus = {}
  for i = 1, #Rs do
    local t = {}
    for k = 1, 3 do
      local function u(s)
        local x = { 0, 0, 0 }
        x[k] = s
        local R2 = {}
        for j = 1, #Rs do R2[j] = Rs[j] end
        R2[i] = Rs[i] * so3.exp(x)
        return U(R2)
      end
      t[k] = -(8 * (u(h) - u(-h)) - (u(2 * h) - u(-2 * h))) / (12 * h)
    end
    taus[i] = lf.vec3(t)
  end
  return taus
end

local I = so3.I
local Rm = so3.exp { 2.5 / math.sqrt(2), 0, 2.5 / math.sqrt(2) }
local B, m = lf.vec3 { 0.3, -1.2, 2.0 }, lf.vec3 { 0.5, 0.1, -0.7 }
local R1 = so3.random(21)

-- single-body potentials (math.* made differentiable by ad.natural, as lf.rigidbody does)
local function dist(A, C) -- the Frobenius distance written out with math.sqrt
  local s = 0
  for i = 1, 3 do for j = 1, 3 do s = s + (A[i][j] - C[i][j]) ^ 2 end end
  return math.sqrt(s)
end
local single = {
  stress = function(R) return (dist(R, I) - 1) ^ 2 - 0.3 / dist(R, Rm) end,
  stress_so3 = function(R) return (so3.dist(R, I) - 1) ^ 2 - 0.3 / so3.dist(R, Rm) end,
  field = function(R) return -B:dot(R * m) end,
  log = function(R) return so3.log(R):norm() ^ 2 + so3.log(R1:T() * R):dot { 1, -2, 0.5 } end,
  angle = function(R) return so3.angle(R, Rm) ^ 3 + so3.angle(R) + so3.angle(Rm, R) end,
  det_inv = function(R) return R:det() * R[3][3] + (R + 2 * I):inv()[1][2] + math.exp(0.3 * R:trace()) end,
  cross = function(R) return R[1]:cross(R[2]):dot(m) + R:col(2):cross(B).z + (m * R):dot(B) end,
  atan2_max = function(R)
    return math.atan2(R[2][1], R[1][1]) + math.max(R[1][1], R[2][2], R[3][3]) - math.min(R[1][3], 0.1)
        + math.atan(R.x or R[3][2]) + math.abs(R[3][1])
  end,
  trig = function(R)
    return math.sin(R[1][1]) * math.cos(R[2][2]) + math.tan(0.5 * R[3][3]) + math.asin(0.9 * R[1][2])
        + math.acos(0.5 * R[2][3]) + math.log(2 + R[1][1]) + math.log(3 + R[2][1], 2)
        + (2.2 + R[3][3]) ^ R[1][1] + math.pow(1.5 + R[2][1], 1.5) + math.sqrt(2 + R[1][2])
  end,
  maps = function(R)
    return so3.exp(so3.log(R) * 0.5):trace() + so3.cay(R[1]):det() + so3.hat(R[2])[1][2]
        + so3.vee(R - R:T()):dot(m) + so3.dist(R * so3.exp { 0.1, 0.2, 0.3 }, so3.cay { 1, -1, 0.5 })
  end,
  constructors = function(R)
    return lf.vec3 { R[1][1], 2, R[3][2] }:norm() + lf.vec3(R[2][2], R[1][3], 1):dot(m)
        + lf.mat3 { R[1], R[2], { 1, 2, 3 } }:det() + lf.mat3 { { R[1][1], 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } }:trace()
        + (R / 3 - (-R) * 0.5):norm() + (R:T() * R1 - I):norm() + R:row(3):normalized():dot(B)
        + lf.mat3(R)[2][1] * lf.vec3(R[3]):dot(m) + lf.mat3(R:totable())[1][3]
  end,
}
for _, U in pairs(single) do ad.natural(U) end

-- many-body pair potentials on a lattice: dipole-dipole between body-fixed moments; a Lennard-Jones-
-- like potential on body-fixed sites
local function lattice(n)
  local x, R = {}, {}
  for i = 1, n do
    x[i] = lf.vec3 { 1.5 * ((i - 1) % 3), 1.5 * (((i - 1) // 3) % 3), 1.5 * ((i - 1) // 9) }
    R[i] = so3.random(300 + i)
  end
  return x, R
end
local function dipole(x)
  return function(Rs)
    local mu, U = {}, 0
    for i = 1, #Rs do mu[i] = Rs[i] * m end
    for i = 1, #Rs do
      for j = i + 1, #Rs do
        local d = x[j] - x[i]
        local r = d:norm()
        local e = d / r
        U = U + (mu[i]:dot(mu[j]) - 3 * mu[i]:dot(e) * mu[j]:dot(e)) / r ^ 3
      end
    end
    return U
  end
end
local site = lf.vec3 { 0.4, 0.1, -0.2 }
local function lj(x)
  return ad.natural(function(Rs)
    local s, U = {}, 0
    for i = 1, #Rs do s[i] = x[i] + Rs[i] * site end
    for i = 1, #Rs do
      for j = i + 1, #Rs do
        local d = s[i] - s[j]
        local r = math.sqrt(d:dot(d))
        U = U + 4 * ((1 / r) ^ 12 - (1 / r) ^ 6) + 0.1 * math.exp(-r)
      end
    end
    return U
  end)
end

-- ---------------------------------------------------------------- specs
describe("reverse-mode autodiff", function()
  it("traced values hand every map to the tracer", function()
    local seen
    rev.gradient(function(A)
      seen = getmetatable(A).__lf_dual
      return A[1][1]
    end, I)
    for _, name in ipairs { "__add", "__sub", "__mul", "__div", "__unm", "dot", "cross", "T", "det", "trace",
      "norm", "so3.exp", "so3.log", "so3.cay", "so3.hat", "so3.vee", "so3.dist", "so3.angle", "vec3", "mat3" } do
      assert.is_function(seen[name], name)
    end
  end)

  it("single-body torques: = central differences, = the compiled torque to 1e-13", function()
    for name, U in pairs(single) do
      local body = lf.rigidbody { inertia = { 2, 2, 4 }, potential = U }
      assert.is_truthy(body.compiled:find("^native") or body.compiled:find("^tape"), name .. ": " .. body.compiled)
      for seed = 1, 8 do
        local R = so3.random(100 + seed)
        local tr = ad.torque(U, R)
        assert.are.equal("lf.vec3", getmetatable(tr).__name)
        local r = rel(tr, body:torque(R), 1e-3)
        record("single vs compiled: " .. name, r)
        assert(r <= 1e-13, ("%s seed %d: point vs compiled %.3g"):format(name, seed, r))
        local r2 = rel(tr, fd_torques(function(Rs) return U(Rs[1]) end, { R })[1], 1e-3)
        record("single vs FD: " .. name, r2)
        assert(r2 <= 1e-7, ("%s seed %d: reverse vs FD %.3g"):format(name, seed, r2))
      end
    end
  end)

  it("so3.log on both of its branches (angle below and above pi/2)", function()
    local U = function(R) return so3.log(R):dot { 0.3, -1, 2 } + so3.log(R):norm() ^ 2 end
    for _, t in ipairs { 1e-9, 0.3, 1.5, 1.6, 2.5, 3.1 } do
      local R = so3.exp(lf.vec3 { 0.6, -0.3, 0.74 }:normalized() * t)
      local tr = ad.torque(U, R)
      local r = rel(tr, fd_torques(function(Rs) return U(Rs[1]) end, { R }, 1e-4)[1], 1e-3)
      record("so3.log branches vs FD", r)
      assert(r <= 1e-7, ("angle %g: %.3g"):format(t, r))
    end
  end)

  for _, P in ipairs { { "dipole", dipole }, { "lj", lj } } do
    it(P[1] .. " pair potential of 2, 5, 20 bodies: = central differences, = compiled to 1e-13", function()
      for _, n in ipairs { 2, 5, 20 } do
        local x, Rs = lattice(n)
        local U = P[2](x)
        local tr = ad.torque(U, Rs)
        assert.are.equal(n, #tr)
        local spec = { potential = U }
        for i = 1, n do spec[i] = { inertia = { 1, 2, 2.5 }, R = Rs[i] } end
        local r = rel_all(tr, lf.bodies(spec):torque(Rs))
        record(P[1] .. " vs compiled", r)
        assert(r <= 1e-13, ("%s n = %d: %.3g"):format(P[1], n, r))
        if n <= 5 then
          local r2 = rel_all(tr, fd_torques(U, Rs))
          record(P[1] .. " vs FD", r2)
          assert(r2 <= 1e-7, ("%s n = %d vs FD: %.3g"):format(P[1], n, r2))
        end
      end
    end)
  end

  it("lf.bodies / lf.rigidbody{autodiff = ...}: the option is accepted and checked (one sweep either way)", function()
    local x, Rs = lattice(5)
    local U = dipole(x)
    local function system(mode, compile)
      local spec = { potential = U, autodiff = mode, compile = compile }
      for i = 1, 5 do spec[i] = { inertia = { 1, 2, 2.5 }, R = Rs[i], omega = { 0.1 * i, -0.2, 0.3 } } end
      return lf.bodies(spec)
    end
    local sf, sr = system("forward", false), system("reverse", false)
    assert(rel_all(sr:torque(Rs), sf:torque(Rs)) == 0)
    T.has(T.errmsg(lf.rigidbody, { inertia = { 1, 2, 3 }, potential = single.field, autodiff = "backward" }),
      "field 'autodiff' must be \"forward\", \"reverse\" or \"auto\", got \"backward\"")
    T.has(T.errmsg(lf.rigidbody, { inertia = { 1, 2, 3 }, potential = lf.potential.stress {}, autodiff = "reverse" }),
      "field 'autodiff' applies to a Lua potential U without a 'torque' function")
    T.has(T.errmsg(lf.bodies, { { inertia = { 1, 2, 3 } }, potential = U, autodiff = true }), "got boolean")
  end)

  -- g_j = d/de H(exp(e e_j) . y) by central differences along the action (lf.autodiff on one factor
  -- at a time, the other factors fixed)
  local function fd_lie_gradient(H, y, names, triv)
    local g, h = {}, 1e-5
    local sys = lf.lie_ode { factors = names, trivialization = triv, y0 = y, f = function(t, v)
      local xi = {}
      for i, n in ipairs(names) do
        local nd = ({ so3 = 3, s2 = 3, s3 = 3, gl3 = 9, ts2 = 6, tgl3 = 18, se3 = 6 })[n] or tonumber(n:sub(2))
        local z = {}
        for k = 1, nd do z[k] = 0 end
        xi[i] = nd == 3 and lf.vec3(z) or ((n == "ts2" or n == "se3") and { { 0, 0, 0 }, { 0, 0, 0 } }) or
            (n == "tgl3" and { lf.mat3 { 0, 0, 0, 0, 0, 0, 0, 0, 0 }, lf.mat3 { 0, 0, 0, 0, 0, 0, 0, 0, 0 } }) or
            (nd == 9 and lf.mat3(z)) or z
      end
      return xi
    end, compile = false }
    local nd = #ad.lie_gradient(H, y, names, triv)
    for j = 1, nd do
      local function at(e)
        local it = lf.integrator("lie_euler", lf.lie_ode { factors = names, trivialization = triv, y0 = y,
          f = function() local xi, o = {}, 0
            for i, n in ipairs(names) do
              local d = ({ so3 = 3, s2 = 3, s3 = 3, gl3 = 9, ts2 = 6, tgl3 = 18, se3 = 6 })[n] or tonumber(n:sub(2))
              local z = {}
              for k = 1, d do z[k] = (o + k == j) and e or 0 end
              xi[i] = (n == "ts2" or n == "se3") and { { z[1], z[2], z[3] }, { z[4], z[5], z[6] } } or
                  (n == "tgl3") and { { table.unpack(z, 1, 9) }, { table.unpack(z, 10, 18) } } or z
              o = o + d
            end
            return xi end, compile = false }, { h = 1 })
        it:step(1)
        return H(it.y)
      end
      g[j] = (8 * (at(h) - at(-h)) - (at(2 * h) - at(-2 * h))) / (12 * h)
    end
    return g, sys
  end

  it("ad.lie_gradient on so3, s2, s3, gl3, r<m>, ts2, tgl3, se3 factors = central differences along the action", function()
    local q = { 0.9, 0.1, -0.3, math.sqrt(1 - 0.91) }
    local qq = lf.vec3 { 0.3, 0.4, 0.5 }:normalized()
    local y = { so3.exp { 0.3, -0.2, 0.5 }, lf.vec3 { 0.3, 0.4, 0.5 }:normalized(), q,
      lf.mat3 { { 1, 0.2, 0.1 }, { 0.3, 2, -0.4 }, { 0.5, 0.1, 1.5 } }, { 0.1, -0.2, 0.3, 0.7, 1.1 },
      { q = qq, omega = qq:cross { 0.2, -1, 0.4 } },
      { F = lf.mat3 { { 1.05, 0.1, 0 }, { -0.1, 0.97, 0.05 }, { 0, 0, 1 } },
        P = lf.mat3 { { 0.1, 0.3, 0 }, { 0, 0.05, -0.2 }, { 0.1, 0, 0.2 } } },
      { R = so3.exp { -0.4, 0.1, 0.6 }, p = lf.vec3 { 0.5, -1.2, 0.3 } } }
    local names = { "so3", "s2", "s3", "gl3", "r5", "ts2", "tgl3", "se3" }
    local function H(v)
      local R, p, Q, A, r, a, b, g = v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]
      local w, x1, x2, x3 = Q[1], Q[2], Q[3], Q[4]
      local RQ = lf.mat3 { { 1 - 2 * (x2 * x2 + x3 * x3), 2 * (x1 * x2 - w * x3), 2 * (x1 * x3 + w * x2) },
        { 2 * (x1 * x2 + w * x3), 1 - 2 * (x1 * x1 + x3 * x3), 2 * (x2 * x3 - w * x1) },
        { 2 * (x1 * x3 - w * x2), 2 * (x2 * x3 + w * x1), 1 - 2 * (x1 * x1 + x2 * x2) } }
      local s = 0
      for i = 1, 5 do s = s + i * r[i] * r[i] end
      return (R * p):dot(m) + (RQ * R):trace() + A:det() * M.sin(r[1]) + (A * p):norm() + s + so3.angle(R, RQ)
          + a.q:dot(a.omega) ^ 2 + a.omega:norm() * a.q[3] + (b.F * b.P:T()):trace() + b.F:det() * (b.P * a.q):norm()
          + (g.R * m):dot(g.p) + g.p:norm() * g.R[2][3] + (g.R:T() * R):trace()
    end
    for _, triv in ipairs { "right", "left" } do
      local g = ad.lie_gradient(H, y, names, triv)
      assert.are.equal(3 + 3 + 3 + 9 + 5 + 6 + 18 + 6, #g)
      local fd = fd_lie_gradient(H, y, names, triv)
      local w = 0
      for j = 1, #g do w = math.max(w, math.abs(g[j] - fd[j]) / math.max(1, math.abs(fd[j]))) end
      record("lie_gradient vs FD (" .. triv .. ")", w)
      assert(w <= 1e-7, ("%s: %.3g"):format(triv, w))
    end
  end)

  it("rev.gradient: every backward rule against central differences", function()
    local function f(A, v, s)
      return (A:inv() * v):dot(v) + (v * A):norm() + (A * A:T()):trace() * s + A:det() + A:norm()
          + v:cross(A:col(2)):normalized():dot { 1, 2, 3 } + so3.hat(v)[1][3] * s ^ 2 + so3.vee(A)[2]
          + (A / s)[2][1] + (-A)[3][3] + so3.exp(v * 0.3):trace() + so3.cay(v)[1][2] + (-v).y / s
          + lf.vec3 { s, 1, v[2] }:dot(v) + lf.mat3 { A[3], { s, 0, 1 }, v }:det() + M.exp(-s) * (A - 2 * A:T())[1][3]
          + A:row(1):dot(A[2]) + (v + lf.vec3 { 1, 2, 3 }):norm() + ({ 1, 0, 2 } - v):norm()
    end
    local A = lf.mat3 { { 1.2, 0.3, -0.4 }, { 0.1, 0.9, 0.2 }, { -0.3, 0.5, 1.4 } }
    local v, s = lf.vec3 { 0.3, -0.7, 0.5 }, 1.3
    local u, gA, gv, gs = rev.gradient(f, A, v, s)
    assert.is_true(math.abs(u - f(A, v, s)) <= 1e-14 * math.abs(u))
    local h = 1e-4
    local function cd(g) return (8 * (g(h) - g(-h)) - (g(2 * h) - g(-2 * h))) / (12 * h) end
    local w = 0
    local At = A:totable()
    for i = 1, 3 do
      for j = 1, 3 do
        local d = cd(function(e)
          local B2 = { { At[1][1], At[1][2], At[1][3] }, { At[2][1], At[2][2], At[2][3] }, { At[3][1], At[3][2], At[3][3] } }
          B2[i][j] = B2[i][j] + e
          return f(lf.mat3(B2), v, s)
        end)
        w = math.max(w, math.abs(gA[i][j] - d) / math.max(1, math.abs(d)))
      end
      local d = cd(function(e)
        local t = v:totable()
        t[i] = t[i] + e
        return f(A, lf.vec3(t), s)
      end)
      w = math.max(w, math.abs(gv[i] - d) / math.max(1, math.abs(d)))
    end
    local d = cd(function(e) return f(A, v, s + e) end)
    w = math.max(w, math.abs(gs - d) / math.max(1, math.abs(d)))
    record("rev.gradient vs FD", w)
    assert(w <= 1e-8, ("%.3g"):format(w))
  end)

  it("values: printing, reading, comparing", function()
    rev.gradient(function(R, s)
      assert.are.equal(3, #R)
      assert.are.equal(3, #R[1])
      assert.is_true(R[1] == R[1]) -- compared by value at the point
      assert.is_true(R[2][3] == R[2].z)
      assert.is_true(R[1][1] < 2 and R[1][1] <= R[1][1] and 0.4 < s and s <= 0.5)
      assert.is_truthy(tostring(s):find("traced{0.5}", 1, true))
      assert.is_truthy(tostring(R[1]):find("traced vec3{", 1, true))
      assert.is_truthy(tostring(R):find("traced mat3{", 1, true))
      assert.is_true(ad.is_dual(R) and rev.is_value(s) and not rev.is_value(0.5))
      assert.are.same(R1:totable(), ad.value(R):totable())
      assert.are.equal(0.5, ad.value(s))
      assert.are.equal(R1[2][3], ad.value(R:totable()[2][3]))
      assert.is_true(R == R:copy())
      T.has(T.errmsg(ad.grad, s), "a traced value without directions")
      return s * R[1][1]
    end, R1, 0.5)
  end)

  it("a U that computes a gradient itself keeps the outer trace intact", function()
    local x, Rs = lattice(4)
    local U0 = dipole(x)
    local function U(R)
      local inner = rev.gradient(function(t) return t * t end, 3) -- a nested trace: 9
      local _, g = rev.gradient(function(t) return t * t end, 3)  -- its gradient: 6
      local tau = ad.torque(single.field, R1)                     -- and a torque of plain values
      return U0(R) * (inner - 8) + (g - 6) + tau:norm() * 0
    end
    local a = ad.torque(U0, Rs)
    local b = ad.torque(U, Rs)
    assert(rel_all(b, a) <= 1e-13)
  end)

  describe("errors", function()
    local x, Rs = lattice(3)
    local function rtorque(U) return T.errmsg(ad.torque, U, Rs) end

    it("a U that is not finite, or whose derivative is not", function()
      T.has(rtorque(function(R) return 1 / (R[1][1][1] - R[1][1][1]) end), "potential U(Rs) is not finite (inf) at this point")
      T.has(rtorque(function(R) return R[1][1][1] * (0 / 0) end), "potential U(Rs) is not finite")
      local a, b = Rs[2][1][2], Rs[2][1][1] -- atan2 at (0, 0): no derivative
      local msg = rtorque(function(R) return M.atan2(R[2][1][2] - a, R[2][1][1] - b) + R[1][1][1] end)
      T.has(msg, "potential U(Rs): the derivative is not finite")
      T.has(msg, "not differentiable at this point")
      T.has(T.errmsg(ad.torque, function(R) return M.log(R[1][1] * 0) end, R1), "potential U(R) is not finite (-inf)")
    end)

    it("a U that returns no number", function()
      T.has(rtorque(function() return "abc" end), "potential U(Rs) returned string, expected a number")
      T.has(rtorque(function(R) return R[1][1] end), "potential U(Rs) returned lf.traced, expected a number")
      T.has(rtorque(function() return nil end), "potential U(Rs) returned nil, expected a number")
      T.has(rtorque(function() error("boom in U") end), "boom in U")
      -- through the system
      local sys = lf.bodies { { inertia = { 1, 2, 3 } }, { inertia = { 1, 2, 3 } }, compile = false, potential = function(R) return R end }
      T.has(T.errmsg(sys.torque, sys, { R1, Rm }), "returned a table of length 2, expected a number")
    end)

    it("a traced value used after its evaluation", function()
      local kept
      ad.torque(function(R)
        kept = R[1]
        return R[1][1][1] + R[2][2][2]
      end, Rs)
      local used = "used after the function that was traced returned"
      T.has(T.errmsg(function() return kept + kept end), used)
      T.has(T.errmsg(function() return kept[1][1] * 2 end), used)
      T.has(T.errmsg(function() return kept[3]:dot(m) end), used)
      T.has(T.errmsg(function() return kept * m end), used)
      -- kept from one call of U and used in the next
      local first = true
      local U = function(R)
        if first then kept, first = R[1], false end
        return kept[1]:dot(R[2]:row(1)) + R[3][1][1]
      end
      ad.torque(U, Rs)
      T.has(rtorque(U), used)
    end)

    it("values of two traces do not mix", function()
      local d = ad.dual(1, { 1, 0, 0 })
      local other = "of another trace"
      T.has(rtorque(function(R) return R[1][1][1] * d end), other)
      T.has(rtorque(function(R) return d * R[1][1][1] end), other)
      T.has(rtorque(function(R) return so3.dist(R[1], R1 * d) end), other)
      T.has(rtorque(function(R) return M.atan2(R[1][1][1], d) end), other)
    end)

    it("traced values are immutable; plain-number functions are explained", function()
      T.has(rtorque(function(R)
        local v = R[1] * m
        v.x = 0
        return v:norm()
      end), "traced values cannot be changed")
      local sqrt = math.sqrt
      T.has(rtorque(function(R) return sqrt(R[1][1][1] + 2) end), "local alias")
    end)
  end)

  it("reports the worst measured differences", function()
    local names = {}
    for k in pairs(worst) do names[#names + 1] = k end
    table.sort(names)
    io.stdout:write("\n")
    for _, k in ipairs(names) do io.stdout:write(("  %-44s %.3g\n"):format(k, worst[k])) end
  end)
end)
