-- busted spec for scripts/lieflow/reverse.lua (reverse-mode autodiff: one taped evaluation, one
-- backward sweep) against forward mode (scripts/lieflow/autodiff.lua) and central differences.
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
  it("registers its dispatch table in the values' metatables", function()
    local seen
    rev.gradient(function(A)
      seen = getmetatable(A).__lf_dual
      return A[1][1]
    end, I)
    assert.are.equal(rev.dispatch, seen)
    for _, name in ipairs { "__add", "__sub", "__mul", "__div", "__unm", "dot", "cross", "T", "det", "trace",
      "norm", "so3.exp", "so3.log", "so3.cay", "so3.hat", "so3.vee", "so3.dist", "so3.angle", "vec3", "mat3" } do
      assert.is_function(rev.dispatch[name], name)
    end
  end)

  it("single-body torques agree with forward mode to 1e-13 and with central differences", function()
    for name, U in pairs(single) do
      for seed = 1, 8 do
        local R = so3.random(100 + seed)
        local tf = ad.torque(U, R, 1, "forward")
        local tr = ad.torque(U, R, 1, "reverse")
        assert.are.equal("lf.vec3", getmetatable(tr).__name)
        local r = rel(tr, tf, 1e-3)
        record("single vs forward: " .. name, r)
        assert(r <= 1e-13, ("%s seed %d: reverse vs forward %.3g"):format(name, seed, r))
        local r2 = rel(tr, fd_torques(function(Rs) return U(Rs[1]) end, { R })[1], 1e-3)
        record("single vs FD: " .. name, r2)
        assert(r2 <= 1e-7, ("%s seed %d: reverse vs FD %.3g"):format(name, seed, r2))
      end
    end
  end)

  it("so3.log on both of its branches (angle below and above pi/2)", function()
    local U = function(R) return so3.log(R):dot { 0.3, -1, 2 } + so3.log(R):norm() end
    for _, t in ipairs { 1e-9, 0.3, 1.5, 1.6, 2.5, 3.1 } do
      local R = so3.exp(lf.vec3 { 0.6, -0.3, 0.74 }:normalized() * t)
      local tf, tr = ad.torque(U, R, 1, "forward"), ad.torque(U, R, 1, "reverse")
      local r = rel(tr, tf, 1e-3)
      record("so3.log branches", r)
      assert(r <= 1e-13, ("angle %g: %.3g"):format(t, r))
    end
  end)

  for _, P in ipairs { { "dipole", dipole }, { "lj", lj } } do
    it(P[1] .. " pair potential of 2, 5, 20 bodies: reverse = forward to 1e-13, = central differences", function()
      for _, n in ipairs { 2, 5, 20 } do
        local x, Rs = lattice(n)
        local U = P[2](x)
        local tf = ad.torque(U, Rs, n, "forward")
        local tr = ad.torque(U, Rs, n, "reverse")
        assert.are.equal(n, #tr)
        local r = rel_all(tr, tf)
        record(P[1] .. " vs forward", r)
        assert(r <= 1e-13, ("%s n = %d: %.3g"):format(P[1], n, r))
        if n <= 5 then
          local r2 = rel_all(tr, fd_torques(U, Rs))
          record(P[1] .. " vs FD", r2)
          assert(r2 <= 1e-7, ("%s n = %d vs FD: %.3g"):format(P[1], n, r2))
        end
      end
    end)
  end

  it("one sweep: the tape holds a constant number of nodes per pair", function()
    local x, Rs = lattice(20)
    local U = dipole(x)
    local size
    rev.torque(function(R)
      local u = U(R)
      size = rev._tape_size()
      return u
    end, Rs)
    assert.is_true(size > 0 and size <= 20 * 2 + 190 * 16, tostring(size))
    assert.is_nil(rev._tape_size()) -- no tape outside an evaluation
  end)

  it("auto: forward mode for one body, reverse mode from two", function()
    local function kind_of(Rs)
      -- U returns a vector: the message names the kind of value U got
      local ok, msg = pcall(ad.torque, function(R) return R.T and R[1] or R[1][1] end, Rs)
      assert.is_false(ok)
      return msg
    end
    T.has(kind_of(R1), "lf.dual.vec3")
    T.has(kind_of { R1, Rm }, "lf.reverse.vec3")
    T.has(T.errmsg(ad.torque, single.field, R1, 1, "sideways"), "autodiff mode must be")
  end)

  it("lf.bodies / lf.rigidbody{autodiff = ...}: the same torques and trajectories", function()
    local x, Rs = lattice(5)
    local U = dipole(x)
    local function system(mode)
      local spec = { potential = U, autodiff = mode }
      for i = 1, 5 do spec[i] = { inertia = { 1, 2, 2.5 }, R = Rs[i], omega = { 0.1 * i, -0.2, 0.3 } } end
      return lf.bodies(spec)
    end
    local sf, sr, sa = system("forward"), system("reverse"), system(nil)
    local tf, tr, ta = sf:torque(Rs), sr:torque(Rs), sa:torque(Rs)
    assert(rel_all(tr, tf) <= 1e-13)
    assert(rel_all(ta, tr) == 0)
    local itf = lf.integrator("vlv", sf, { h = 0.05 })
    local itr = lf.integrator("vlv", sr, { h = 0.05 })
    itf:step(50)
    itr:step(50)
    assert(math.abs(itf:energy() - itr:energy()) <= 1e-12 * math.abs(itf:energy()))
    for i = 1, 5 do assert((itf.R[i] - itr.R[i]):norm() <= 1e-12) end
    -- one body
    local bf = lf.rigidbody { inertia = { 2, 2, 4 }, potential = single.stress, autodiff = "forward" }
    local br = lf.rigidbody { inertia = { 2, 2, 4 }, potential = single.stress, autodiff = "reverse" }
    local R = so3.random(5)
    assert(rel(br:torque(R), bf:torque(R)) <= 1e-13)
    -- the option is checked
    T.has(T.errmsg(lf.rigidbody, { inertia = { 1, 2, 3 }, potential = single.field, autodiff = "backward" }),
      "field 'autodiff' must be \"forward\", \"reverse\" or \"auto\", got \"backward\"")
    T.has(T.errmsg(lf.rigidbody, { inertia = { 1, 2, 3 }, potential = lf.potential.stress {}, autodiff = "reverse" }),
      "field 'autodiff' applies to a Lua potential U without a 'torque' function")
    T.has(T.errmsg(lf.bodies, { { inertia = { 1, 2, 3 } }, potential = U, autodiff = true }), "got boolean")
  end)

  it("ad.lie_gradient: reverse = forward on so3, s2, s3, gl3, r<m> factors", function()
    local q = { 0.9, 0.1, -0.3, math.sqrt(1 - 0.91) }
    local y = { so3.exp { 0.3, -0.2, 0.5 }, lf.vec3 { 0.3, 0.4, 0.5 }:normalized(), q,
      lf.mat3 { { 1, 0.2, 0.1 }, { 0.3, 2, -0.4 }, { 0.5, 0.1, 1.5 } }, { 0.1, -0.2, 0.3, 0.7, 1.1 } }
    local names = { "so3", "s2", "s3", "gl3", "r5" }
    local function H(v)
      local R, p, Q, A, r = v[1], v[2], v[3], v[4], v[5]
      local w, a, b, c = Q[1], Q[2], Q[3], Q[4]
      local RQ = lf.mat3 { { 1 - 2 * (b * b + c * c), 2 * (a * b - w * c), 2 * (a * c + w * b) },
        { 2 * (a * b + w * c), 1 - 2 * (a * a + c * c), 2 * (b * c - w * a) },
        { 2 * (a * c - w * b), 2 * (b * c + w * a), 1 - 2 * (a * a + b * b) } }
      local s = 0
      for i = 1, 5 do s = s + i * r[i] * r[i] end
      return (R * p):dot(m) + (RQ * R):trace() + A:det() * M.sin(r[1]) + (A * p):norm() + s + so3.angle(R, RQ)
    end
    for _, triv in ipairs { "right", "left" } do
      local gf = ad.lie_gradient(H, y, names, triv, "forward")
      local gr = ad.lie_gradient(H, y, names, triv, "reverse")
      local ga = ad.lie_gradient(H, y, names, triv)
      assert.are.equal(3 + 3 + 3 + 9 + 5, #gr)
      local w = 0
      for j = 1, #gf do
        w = math.max(w, math.abs(gr[j] - gf[j]) / math.max(1, math.abs(gf[j])))
        assert.are.equal(gr[j], ga[j]) -- several passes: auto is reverse
      end
      record("lie_gradient vs forward (" .. triv .. ")", w)
      assert(w <= 1e-13, ("%s: %.3g"):format(triv, w))
      -- each factor alone
      for i, name in ipairs(names) do
        local function Hi(v)
          local vv = {}
          for k = 1, #y do vv[k] = y[k] end
          vv[i] = v[1]
          return H(vv)
        end
        local a = ad.lie_gradient(Hi, { y[i] }, { name }, triv, "forward")
        local b = ad.lie_gradient(Hi, { y[i] }, { name }, triv, "reverse")
        for j = 1, #a do assert(math.abs(a[j] - b[j]) <= 1e-13 * math.max(1, math.abs(a[j])), name) end
      end
    end
  end)

  it("ad.lie_gradient: reverse = forward on the ts2 and tgl3 factors (two-part values)", function()
    local q = lf.vec3 { 0.3, 0.4, 0.5 }:normalized()
    local y = { { q = q, omega = q:cross { 0.2, -1, 0.4 } },
      { F = lf.mat3 { { 1.05, 0.1, 0 }, { -0.1, 0.97, 0.05 }, { 0, 0, 1 } },
        P = lf.mat3 { { 0.1, 0.3, 0 }, { 0, 0.05, -0.2 }, { 0.1, 0, 0.2 } } } }
    local names = { "ts2", "tgl3" }
    local function H(v)
      local a, b = v[1], v[2]
      return a.q:dot(a.omega) ^ 2 + a.omega:norm() * a.q[3] + (b.F * b.P:T()):trace() + b.F:det() * (b.P * a.q):norm()
    end
    for _, triv in ipairs { "right", "left" } do
      local gf = ad.lie_gradient(H, y, names, triv, "forward")
      local gr = ad.lie_gradient(H, y, names, triv, "reverse")
      assert.are.equal(6 + 18, #gr)
      local w = 0
      for j = 1, #gf do w = math.max(w, math.abs(gr[j] - gf[j]) / math.max(1, math.abs(gf[j]))) end
      record("lie_gradient ts2/tgl3 vs forward (" .. triv .. ")", w)
      assert(w <= 1e-13, ("%s: %.3g"):format(triv, w))
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
      assert.are.equal(R[1], R[1]) -- rows and components are cached
      assert.are.equal(R[2][3], R[2].z)
      assert.is_true(R[1][1] < 2 and R[1][1] <= R[1][1] and 0.4 < s and s <= 0.5)
      assert.is_truthy(tostring(s):find("reverse(0.5)", 1, true))
      assert.is_truthy(tostring(R[1]):find("reverse.vec3{", 1, true))
      assert.is_truthy(tostring(R):find("reverse.mat3{", 1, true))
      assert.is_true(ad.is_dual(R) and rev.is_value(s) and not rev.is_value(0.5))
      assert.are.same(R1:totable(), ad.value(R):totable())
      assert.are.equal(0.5, ad.value(s))
      assert.are.equal(R1[2][3], ad.value(R:totable()[2][3]))
      assert.are.equal(R, R:copy())
      T.has(T.errmsg(ad.grad, s), "reverse-mode value")
      return s * R[1][1]
    end, R1, 0.5)
  end)

  it("a U that computes a gradient itself keeps the outer tape intact", function()
    local x, Rs = lattice(4)
    local U0 = dipole(x)
    local function U(R)
      local inner = rev.gradient(function(t) return t * t end, 3) -- a nested tape: 9
      local _, g = rev.gradient(function(t) return t * t end, 3)  -- its gradient: 6
      local tau = ad.torque(single.field, R1, 1, "reverse")       -- and a torque of plain values
      return U0(R) * (inner - 8) + (g - 6) + tau:norm() * 0
    end
    local tf = ad.torque(U0, Rs, 4, "forward")
    local tr = ad.torque(U, Rs, 4, "reverse")
    assert(rel_all(tr, tf) <= 1e-13)
  end)

  describe("errors", function()
    local x, Rs = lattice(3)
    local function rtorque(U) return T.errmsg(ad.torque, U, Rs, 3, "reverse") end

    it("a U that is not finite, or whose derivative is not", function()
      T.has(rtorque(function(R) return 1 / (R[1][1][1] - R[1][1][1]) end), "potential U(Rs) is not finite (inf) at this R")
      T.has(rtorque(function(R) return R[1][1][1] * (0 / 0) end), "potential U(Rs) is not finite")
      local msg = rtorque(function(R) return M.atan2(R[2][1][2] * 0, R[2][1][1] * 0) + R[1][1][1] end)
      T.has(msg, "potential U(Rs): the derivative for body 2 is not finite")
      T.has(msg, "not differentiable at this R")
      T.has(T.errmsg(ad.torque, function(R) return M.log(R[1][1] * 0) end, R1, 1, "reverse"),
        "potential U(R) is not finite (-inf)")
    end)

    it("a U that returns no number", function()
      T.has(rtorque(function() return "abc" end), "potential U(Rs) returned string, expected a number")
      T.has(rtorque(function(R) return R[1][1] end), "potential U(Rs) returned lf.reverse.vec3, expected a number")
      T.has(rtorque(function() return nil end), "potential U(Rs) returned nil, expected a number")
      T.has(rtorque(function() error("boom in U") end), "boom in U")
      -- through the system
      local sys = lf.bodies { { inertia = { 1, 2, 3 } }, { inertia = { 1, 2, 3 } }, potential = function(R) return R end,
        autodiff = "reverse" }
      T.has(T.errmsg(sys.torque, sys, { R1, Rm }), "returned table, expected a number")
    end)

    it("a tape value used after its evaluation", function()
      local kept
      ad.torque(function(R)
        kept = R[1]
        return R[1][1][1] + R[2][2][2]
      end, Rs, 3, "reverse")
      T.has(T.errmsg(function() return kept + kept end), "used after its evaluation ended")
      T.has(T.errmsg(function() return kept[1][1] * 2 end), "used after its evaluation ended")
      T.has(T.errmsg(function() return kept[3]:dot(m) end), "used after its evaluation ended")
      T.has(T.errmsg(function() return kept * m end), "used after its evaluation ended")
      -- kept from one call of U and used in the next
      local first = true
      local U = function(R)
        if first then kept, first = R[1], false end
        return kept[1]:dot(R[2]:row(1)) + R[3][1][1]
      end
      ad.torque(U, Rs, 3, "reverse")
      T.has(rtorque(U), "of another evaluation")
    end)

    it("forward and reverse values do not mix", function()
      local d = ad.dual(1, { 1, 0, 0 })
      T.has(rtorque(function(R) return R[1][1][1] * d end), "cannot mix forward-mode and reverse-mode")
      T.has(rtorque(function(R) return d * R[1][1][1] end), "cannot mix forward-mode and reverse-mode")
      T.has(rtorque(function(R) return so3.dist(R[1], ad.mat3(R1)) end), "cannot mix forward-mode and reverse-mode")
      T.has(rtorque(function(R) return R[1][1]:dot(ad.vec3 { d, 0, 0 }) * 1 end), "cannot mix forward-mode and reverse-mode")
      T.has(rtorque(function(R) return M.atan2(R[1][1][1], d) end), "cannot mix forward-mode and reverse-mode")
      T.has(rtorque(function(R) return ad.vec3 { d, 0, 0 }:dot(R[1][1]) end), "cannot mix forward-mode and reverse-mode")
      T.has(rtorque(function(R) return (ad.mat3(R1) * R[2]):trace() end), "cannot mix forward-mode and reverse-mode")
    end)

    it("tape values are immutable; plain-number functions are explained", function()
      T.has(rtorque(function(R)
        local v = R[1] * m
        v.x = 0
        return v:norm()
      end), "lf.reverse.vec3 is immutable")
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
