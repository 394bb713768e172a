-- SPDX-License-Identifier: GPL-3.0-or-later
-- busted spec for compiled models (lua/lib/compile.c, shared/pairs.c; core/graph, core/model/model_graph.c):
-- every built-in potential and vector field rewritten in Lua, compiled natively and on the tape,
-- against the C built-in and against the interpreted path (compile = false); models that use every
-- traced function and map; parameters; branches; lf.compile; the fallbacks of the code cache.
local lf = require "lieflow"
local T = require "testlib"
local has, errmsg = T.has, T.errmsg
local so3 = lf.so3

local worst = {}
local function record(label, r) if not worst[label] or r > worst[label] then worst[label] = r end end
local function rel(a, b, floor) -- numbers, vec3, mat3, or arrays of those
  if type(a) == "number" then return math.abs(a - b) / math.max(math.abs(b), floor or 1) end
  if type(a) == "table" then
    local w = 0
    for i = 1, #a do w = math.max(w, rel(a[i], b[i], floor)) end
    return w
  end
  return (a - b):norm() / math.max(b:norm(), floor or 1)
end
-- Without a C compiler (make test's suite test-tape: LIEFLOW_CC=/nonexistent and an empty cache)
-- "native" cannot be had: the battery runs with "auto", which must then be the tape, and compares
-- it with the tape and the interpreted path as usual (the cache's own tests need a compiler).
local NO_CC = os.getenv("LIEFLOW_CC") == "/nonexistent"
local NATIVE = NO_CC and "auto" or "native"
local backends = { NATIVE, "tape", false }
local function bname(c) return c == false and "interpreted" or c end
-- what a system made with compile = b runs
local function runs(b) return (b == "auto" or b == "native") and (NO_CC and "tape" or "native") or b end

local Rm = so3.exp { 2.5 / math.sqrt(2), 0, 2.5 / math.sqrt(2) }
local B, mvec = lf.vec3 { 0.4, -1.3, 2.2 }, lf.vec3 { -0.6, 0.25, 0.9 }

-- the rigid-body built-ins, written in Lua with parameters
local rigid = {
  stress = { lf.potential.stress { alpha = 0.3 }, { alpha = 0.3 },
    function(R, p) return (so3.dist(R, so3.I) - 1) ^ 2 - p.alpha / so3.dist(R, Rm) end },
  top = { lf.potential.top { mgl = 20, chi = { 0.1, 0, 1 } }, { mgl = 20, chi = lf.vec3 { 0.1, 0, 1 } },
    function(R, p) return p.mgl * (R * p.chi).z end },
  field = { lf.potential.field { B = B, m = mvec }, { B = B, m = mvec },
    function(R, p) return -p.B:dot(R * p.m) end },
  coulomb_wall = { lf.potential.coulomb_wall(), nil, function(R)
    local s = 1.1 + R[3][3]
    return 1 / s - 0.001 / s ^ 10
  end },
}

-- every traced function and map in one potential (smooth where it is evaluated)
local R1 = so3.random(3)
local function everything(R)
  local M = lf.math
  local x = lf.so3.log(R1:T() * R)                          -- angles well inside (0, pi)
  local v = R * lf.vec3 { 0.3, -0.2, 0.5 }
  local q = lf.quat.from_matrix(R)
  local u = R[1][1] * 0.4
  local e = lf.s2.exp(lf.vec3 { 0, 0, 1 }, lf.vec3 { R[1][2], R[2][1], 0 } * 0.3)
  return M.sqrt(2 + u) + M.exp(u) + M.log(2 + u) + M.log(3 + u, 2) + M.sin(u) + M.cos(u) + M.tan(u)
      + M.asin(u) + M.acos(u) + M.atan(u) + M.atan(u, 1.5) + M.atan2(R[2][3], 2) + M.abs(R[3][1] - 2)
      + M.min(R[1][2], R[2][1], 0.9) + M.max(R[3][3], -0.8) + (2.5 + u) ^ 1.5 + u ^ 3 + 2 ^ u
      + M.select(M.lt(R[1][3], 0.25), R[1][3], 0.5 * R[1][3]) + M.select(M.ge(u, 0), u * u, -u)
      + x:dot { 1, 2, 3 } + x:norm() ^ 2 + x:cross(v):dot(mvec) + v:normalized()[2] + (v * 2):norm()
      + so3.exp(x):trace() + so3.cay(x * 0.5)[1][2] + so3.cayinv(R)[3] + so3.dexp(x)[2][1]
      + so3.dexpinv(x * 0.5)[1][3] + so3.dcay(x)[3][2] + so3.dcayinv(x)[2][2] + so3.dist(R, Rm) + so3.angle(R, R1)
      + so3.angle(R) + so3.hat(v)[1][2] + so3.vee(R - R:T()):dot(B) + so3.Ad(R, B).y + so3.Ad(R)[2][2]
      + R:det() * R[3][3] + (R + 2 * so3.I):inv()[1][2] + R:row(2):dot(R:col(3)) + R:T()[1][3] + R:norm()
      + lf.s2.dist(e, lf.vec3 { 0, 1, 0 }) + lf.s2.tangent(e, B):norm() + lf.s2.retract(e, B * 0.1)[1]
      + lf.s2.midpoint(e, lf.vec3 { 1, 0, 0 })[3] + lf.s2.retract_inv(lf.vec3 { 0, 0, 1 }, e)[2]
      + lf.quat.mul(q, lf.quat.conj(q))[1] + lf.quat.to_matrix(q)[1][3] + lf.quat.log(q)[2]
      + lf.quat.exp(x * 0.5)[3] + lf.quat.to_matrix(lf.quat.exp(v))[2][3]
      + lf.vec3(R[1][1], R[2][2], 1):dot(B) + lf.mat3 { R[1], R[2], { 1, 2, 3 } }:det() + R:totable()[2][3]
end

local function body(pot, params, compile, R0)
  return lf.rigidbody { inertia = { 2, 2, 4 }, R = R0 or so3.exp { 0, 0.7227, 0 }, omega = { 0, 0, 0.625 },
    potential = pot, params = params, compile = compile }
end

describe("compiled rigid potentials", function()
  for name, c in pairs(rigid) do
    it(name .. ": value and torque = the C built-in and = interpreted to 1e-13, trajectories to 1e-11", function()
      local ref = body(c[1])
      local its = {}
      for _, b in ipairs(backends) do
        local sys = body(c[3], c[2], b)
        if b then has(sys.compiled, runs(b)) else has(sys.compiled, "interpreted") end
        for seed = 1, 20 do
          local R = so3.random(seed)
          if name ~= "coulomb_wall" or 1.1 + R[3][3] > 0.2 then
            local r1 = rel(sys:potential(R), ref:potential(R))
            local r2 = rel(sys:torque(R), ref:torque(R))
            record(name .. " " .. bname(b) .. " vs C", math.max(r1, r2))
            assert(r1 <= 1e-13 and r2 <= 1e-13, ("%s %s seed %d: %.3g %.3g"):format(name, bname(b), seed, r1, r2))
          end
        end
        its[bname(b)] = lf.integrator("vlv", sys, { h = 0.05 }):step(1000)
      end
      local itc = lf.integrator("vlv", ref, { h = 0.05 }):step(1000)
      for k, it in pairs(its) do
        local r = math.max(rel(it.R, itc.R), rel(it.omega, itc.omega))
        record(name .. " " .. k .. " trajectory", r)
        assert(r <= 1e-11, ("%s %s: trajectory %.3g"):format(name, k, r))
      end
    end)
  end

  it("a potential using every traced function and map: native = tape = interpreted to 1e-13", function()
    local sys = {}
    for _, b in ipairs(backends) do
      sys[bname(b)] = body(everything, nil, b)
      if b then assert.is_truthy(sys[bname(b)].compiled:find("^" .. runs(b)), sys[bname(b)].compiled) end
    end
    for seed = 1, 20 do
      local R = R1 * so3.exp(lf.vec3 { math.sin(seed), math.cos(seed), 0.3 } * 0.6)
      local ui, ti = sys.interpreted:potential(R), sys.interpreted:torque(R)
      for _, b in ipairs { NATIVE, "tape" } do
        local r1, r2 = rel(sys[b]:potential(R), ui), rel(sys[b]:torque(R), ti)
        record("every map " .. b, math.max(r1, r2))
        assert(r1 <= 1e-13 and r2 <= 1e-13, ("%s seed %d: %.3g %.3g"):format(b, seed, r1, r2))
      end
    end
  end)

  it("several bodies: U(Rs) and its torques, and a Lua torque given with U", function()
    local U = function(Rs, p) return p.k * so3.dist(Rs[1], Rs[2]) ^ 2 + Rs[3][3][3] * Rs[1][1][1] end
    local tau = function(Rs, p) return { lf.vec3 { p.k, 0, 0 }, lf.vec3 { 0, 0, 0 }, lf.vec3 { 0, 1, 0 } } end
    local spec = function(b, t)
      local s = { potential = U, torque = t, params = { k = 0.7 }, compile = b }
      for i = 1, 3 do s[i] = { inertia = { 1, 2, 2.5 }, R = so3.random(40 + i) } end
      return lf.bodies(s)
    end
    local Rs = { so3.random(7), so3.random(8), so3.random(9) }
    local ti = spec(false):torque(Rs)
    for _, b in ipairs { NATIVE, "tape" } do
      local s = spec(b)
      has(s.compiled, runs(b))
      assert(rel(s:torque(Rs), ti) <= 1e-13)
      assert(rel(s:potential(Rs), spec(false):potential(Rs)) <= 1e-13)
      local g = spec(b, tau):torque(Rs) -- the given torque, traced
      assert.are.equal(0.7, g[1].x)
      assert.are.equal(1, g[3].y)
    end
  end)
end)

describe("compiled models and the implicit methods", function()
  it("tln, akw, liemid_i take Newton's Jacobian from the compiled torque (fewer torque evaluations, same solution)", function()
    local c = rigid.stress
    for _, m in ipairs { "tln", "akw", "liemid_i" } do
      local a = lf.integrator(m, body(c[3], c[2], NATIVE), { h = 0.125 }):step(200)
      local b = lf.integrator(m, body(c[1]), { h = 0.125 }):step(200)
      local r = rel(a.R, b.R)
      record(m .. " analytic vs differences", r)
      assert(r <= 1e-11, ("%s: %.3g"):format(m, r))
      assert(a.f_evals < b.f_evals / 2, ("%s: %d vs %d torque evaluations"):format(m, a.f_evals, b.f_evals))
      assert(a.newton_iters <= 1.05 * b.newton_iters) -- quadratic convergence kept
    end
  end)
end)

-- the Lie-ODE built-ins (lie_ode.h), written in Lua
local function diag(d) return lf.mat3 { { d[1], 0, 0 }, { 0, d[2], 0 }, { 0, 0, d[3] } } end
local lie = {
  s2_gradient_flow = { { "s2" }, { lf.vec3 { 0.3, 0.4, 0.5 }:normalized() }, { D = { 1, 2, 3 } },
    function(t, y, p) local q = y[1]; return { (diag(p.D) * q):cross(q) } end },
  gl3_linear = { { "gl3" }, { lf.mat3 { { 1, 0.1, 0 }, { 0, 1, 0.2 }, { 0.1, 0, 1 } } },
    { A0 = lf.mat3 { 0, 1, 0, -1, 0, 0, 0, 0, 0.1 }, A1 = lf.mat3 { 0.2, 0, 0, 0, 0, 0.3, 0, -0.3, 0 } },
    function(t, y, p) return { p.A0 + math.sin(t) * p.A1 } end },
  free_rigid_quat = { { "s3" }, { { 0.9, 0.1, -0.3, math.sqrt(1 - 0.91) } }, { J = { 1, 2, 3 }, m0 = { 0.3, -0.4, 0.8 } },
    function(t, y, p)
      local R = lf.quat.to_matrix(y[1])
      local w = R:T() * lf.vec3(p.m0)
      return { R * lf.vec3 { w.x / p.J[1], w.y / p.J[2], w.z / p.J[3] } }
    end },
  rigid_body_s2 = { { "s2" }, { lf.vec3 { 0.3, 0.4, 0.866 }:normalized() }, { I = { 1, 2, 3 } },
    function(t, y, p) local m = y[1]; return { lf.vec3 { -m.x / p.I[1], -m.y / p.I[2], -m.z / p.I[3] } } end },
  ts2_gradient_flow = { { "ts2" }, { { q = lf.vec3 { 0.6, 0, 0.8 }, omega = lf.vec3 { 0, 0.3, 0 } } }, { D = { 1, 2, 3 } },
    function(t, y, p)
      local q, w = y[1].q, y[1].omega
      return { { (diag(p.D) * q):cross(q), w:cross(q) } }
    end },
}

describe("compiled Lie ODEs", function()
  for name, c in pairs(lie) do
    it(name .. ": f = the C built-in to 1e-13; rkmk4 and rkmk_gl4 trajectories to 1e-11", function()
      local ref = lf.lie_ode { factors = c[1], y0 = c[2], f = name, params = c[3] }
      for _, b in ipairs(backends) do
        local sys = lf.lie_ode { factors = c[1], y0 = c[2], f = c[4], params = c[3], compile = b }
        if b then has(sys.compiled, runs(b)) end
        for _, t in ipairs { 0, 0.3, 1.7 } do
          local r = rel(sys:f(t)[1], ref:f(t)[1])
          if type(sys:f(t)[1]) == "table" and sys:f(t)[1].T == nil then r = rel(sys:f(t)[1], ref:f(t)[1]) end
          record(name .. " f " .. bname(b), r)
          assert(r <= 1e-13, ("%s %s t = %g: %.3g"):format(name, bname(b), t, r))
        end
        for _, m in ipairs { "rkmk4", "rkmk_gl4" } do
          local a = lf.integrator(m, sys, { h = 0.05 }):step(m == "rkmk4" and 1000 or 200)
          local e = lf.integrator(m, ref, { h = 0.05 }):step(m == "rkmk4" and 1000 or 200)
          local r = sys:error(a:state(), e:state()).y
          record(name .. " " .. m .. " " .. bname(b), r)
          assert(r <= 1e-11, ("%s %s %s: %.3g"):format(name, m, bname(b), r))
        end
      end
    end)
  end

  -- se3 x r6 (no built-in to compare with): a rigid body on a spring (spatial force -k p) in a field
  -- (body torque m x R^T B), body twist (w, v) and body momenta (Pi, P); y[1] = {R = mat3, p = vec3} traced
  it("se3: f compiled natively and on the tape = interpreted to 1e-13; rkmk4, rkmk_gl4, cf4 trajectories to 1e-11", function()
    local R0 = so3.exp { 0.3, -0.2, 0.5 }
    local y0 = { { R = R0, p = lf.vec3 { 1, -2, 0.5 } }, { 0.4, 0.9, -0.3, 0.6, -0.4, 1 } }
    local params = { J = lf.vec3 { 0.9144, 1.098, 1.66 }, m = 2, k = 3, B = lf.vec3 { 0.2, -0.5, 1 },
      mb = lf.vec3 { 0.1, 0.3, -0.2 } }
    local function f(t, y, p)
      local R, x, M = y[1].R, y[1].p, y[2]
      local Pi, P = lf.vec3 { M[1], M[2], M[3] }, lf.vec3 { M[4], M[5], M[6] }
      local w = lf.vec3 { M[1] / p.J.x, M[2] / p.J.y, M[3] / p.J.z }
      local v = P / p.m
      local dPi = Pi:cross(w) + p.mb:cross(R:T() * p.B)
      local dP = P:cross(w) - R:T() * x * p.k
      return { { w, v }, { dPi.x, dPi.y, dPi.z, dP.x, dP.y, dP.z } }
    end
    for _, triv in ipairs { "left", "right" } do
      local function sys(b)
        return lf.lie_ode { factors = { "se3", "r6" }, trivialization = triv, y0 = y0, f = f, params = params, compile = b }
      end
      local ref = sys(false)
      for _, b in ipairs(backends) do
        local s = sys(b)
        if b then has(s.compiled, runs(b)) end
        for _, t in ipairs { 0, 0.3 } do
          local a, e = s:f(t), ref:f(t)
          local r = math.max(rel(a[1][1], e[1][1]), rel(a[1][2], e[1][2]), rel(a[2], e[2]))
          record("se3 f " .. triv .. " " .. bname(b), r)
          assert(r <= 1e-13, ("se3 %s %s: %.3g"):format(triv, bname(b), r))
        end
        for _, m in ipairs { "rkmk4", "rkmk_gl4", "cf4" } do
          local a = lf.integrator(m, s, { h = 0.05 }):step(200)
          local e = lf.integrator(m, ref, { h = 0.05 }):step(200)
          local r = s:error(a:state(), e:state()).y
          record("se3 " .. triv .. " " .. m .. " " .. bname(b), r)
          assert(r <= 1e-11, ("se3 %s %s %s: %.3g"):format(triv, m, bname(b), r))
        end
      end
    end
  end)

  it("H compiled: dH, the first-integral form, the discrete gradients keep H to round-off", function()
    local I = { 1, 2, 3 }
    local H = function(y, p) local m = y[1]; return 0.5 * (m.x ^ 2 / p.I[1] + m.y ^ 2 / p.I[2] + m.z ^ 2 / p.I[3]) end
    local c = lie.rigid_body_s2
    local ref = lf.lie_ode { factors = { "s2" }, y0 = c[2], f = "rigid_body_s2", params = { I = I }, skew = "mqr" }
    for _, b in ipairs(backends) do
      local sys = lf.lie_ode { factors = { "s2" }, y0 = c[2], f = c[4], H = H, params = { I = I }, compile = b }
      for _, m in ipairs { "ep2_avf", "ep2_gonzalez" } do
        local a = lf.integrator(m, sys, { h = 0.1 }):step(300)
        local e = lf.integrator(m, ref, { h = 0.1 }):step(300)
        assert(math.abs(a:energy() - sys:energy()) <= 1e-14, m)
        local r = sys:error(a:state(), e:state()).y
        record("H " .. m .. " " .. bname(b), r)
        assert(r <= 1e-11, ("%s %s: %.3g"):format(m, bname(b), r))
      end
    end
  end)
end)

describe("compiled sphere potentials and pair kernels", function()
  local q2 = { lf.vec3 { 0.6, 0, -0.8 }, lf.vec3 { 0, 0.6, -0.8 } }
  local w2 = { { 0, 0.5, 0 }, { 0.3, 0, 0 } }
  it("the double pendulum in Lua = the built-in (V, gradient, eln_spatial and rattle)", function()
    local ref = lf.spheres.double_pendulum { q = q2, omega = w2 }
    for _, b in ipairs(backends) do
      local sys = lf.spheres { M = { { 2, 1 }, { 1, 1 } }, q = q2, omega = w2, compile = b, params = { g = 9.81 },
        potential = function(qs, p) return 2 * p.g * qs[1].z + p.g * qs[2].z end }
      assert(rel(sys:potential(), ref:potential()) <= 1e-13)
      assert(rel(sys:gradient(), ref:gradient()) <= 1e-13)
      for _, m in ipairs { "eln_spatial", "rattle" } do
        local a = lf.integrator(m, sys, { h = 0.01 }):step(1000)
        local e = lf.integrator(m, ref, { h = 0.01 }):step(1000)
        local r = math.max(rel(a.q, e.q), rel(a.omega, e.omega))
        record("double pendulum " .. m .. " " .. bname(b), r)
        assert(r <= 1e-11, ("%s %s: %.3g"):format(m, bname(b), r))
      end
    end
  end)

  it("the 4 x 4 dipole array as a pair kernel = the built-in dipoles", function()
    local rows, cols, spacing, mass, l, moment = 4, 4, 0.02, 0.001, 0.01, 0.05
    local q, pos, M = {}, {}, {}
    for i = 1, rows * cols do
      q[i] = lf.vec3 { math.cos(0.7 * i), math.sin(0.7 * i), 0.2 * math.sin(1.3 * i) }:normalized()
      pos[i] = lf.vec3 { spacing * ((i - 1) % cols), spacing * ((i - 1) // cols), 0 }
      M[i] = {}
      for j = 1, rows * cols do M[i][j] = i == j and mass * l ^ 2 / 12 or 0 end
    end
    local ref = lf.spheres.dipoles { rows = rows, cols = cols, spacing = spacing, m = mass, l = l, moment = moment, q = q }
    local kernel = function(qi, qj, r, p)
      local d = r:norm()
      local e = r / d
      return p.kappa / d ^ 3 * (qi:dot(qj) - 3 * qi:dot(e) * qj:dot(e))
    end
    for _, b in ipairs(backends) do
      local sys = lf.spheres { M = M, q = q, positions = pos, pair = kernel, params = { kappa = 1e-7 * moment ^ 2 }, compile = b }
      has(sys.compiled, "120 pairs")
      local rv, rg = rel(sys:potential(), ref:potential(), 1e-300), rel(sys:gradient(), ref:gradient(), 1e-300)
      record("dipoles " .. bname(b), math.max(rv, rg))
      assert(rv <= 1e-13 and rg <= 1e-13, ("%s: %.3g %.3g"):format(bname(b), rv, rg))
      local a = lf.integrator("eln_spatial", sys, { h = 1e-4 }):step(b == false and 20 or 1000)
      local e = lf.integrator("eln_spatial", ref, { h = 1e-4 }):step(b == false and 20 or 1000)
      local r = rel(a.q, e.q)
      record("dipoles trajectory " .. bname(b), r)
      assert(r <= 1e-11, ("%s trajectory: %.3g"):format(bname(b), r))
      -- a cutoff leaves out the far pairs
      local near = lf.spheres { M = M, q = q, positions = pos, pair = kernel, params = { kappa = 1 }, cutoff = 0.021, compile = b }
      has(near.compiled, "24 pairs")
    end
  end)

  it("lf.bodies with a pair kernel over a one-body potential = the same sum written as U(Rs)", function()
    local pos = { lf.vec3 { 0, 0, 0 }, lf.vec3 { 1, 0, 0 }, lf.vec3 { 0, 1.5, 0 } }
    local kernel = function(Ri, Rj, r, p) return p.c * (Ri * mvec):dot(Rj * mvec) / r:norm() ^ 3 end
    local U1 = function(Rs, p) return Rs[1][3][3] + Rs[2][3][3] + Rs[3][3][3] end
    local Ufull = function(Rs, p)
      local u = U1(Rs, p)
      for i = 1, 3 do for j = i + 1, 3 do u = u + kernel(Rs[i], Rs[j], pos[j] - pos[i], p) end end
      return u
    end
    local function make(spec, b)
      for i = 1, 3 do spec[i] = { inertia = { 1, 2, 2.5 }, R = so3.random(60 + i), omega = { 0.1, 0.2 * i, 0 } } end
      spec.params, spec.compile = { c = 0.3 }, b
      return lf.bodies(spec)
    end
    local ref = make({ potential = Ufull }, false)
    local Rs = { so3.random(1), so3.random(2), so3.random(3) }
    for _, b in ipairs(backends) do
      local sys = make({ potential = U1, pair = kernel, positions = pos }, b)
      has(sys.compiled, "3 pairs")
      assert(rel(sys:potential(Rs), ref:potential(Rs)) <= 1e-13)
      assert(rel(sys:torque(Rs), ref:torque(Rs)) <= 1e-13)
      local a = lf.integrator("vlv", sys, { h = 0.05 }):step(200)
      local e = lf.integrator("vlv", ref, { h = 0.05 }):step(200)
      assert(rel(a.R, e.R) <= 1e-11)
      if b then -- the torque Jacobian of the pair kernel: tln as with differences
        local t1 = lf.integrator("tln", sys, { h = 0.05 }):step(50)
        local t2 = lf.integrator("tln", ref, { h = 0.05 }):step(50)
        assert(rel(t1.R, t2.R) <= 1e-11)
      end
    end
    has(errmsg(lf.bodies, { { inertia = { 1, 1, 1 } }, { inertia = { 1, 1, 1 } }, pair = kernel }), "'positions'")
  end)
end)

describe("parameters", function()
  it("set_params changes a compiled model without compiling again; the interpreted path sees the same", function()
    local c = rigid.stress
    local R = so3.random(5)
    for _, b in ipairs(backends) do
      local sys = body(c[3], { alpha = 0.3 }, b)
      local before = sys.compiled
      sys:set_params { alpha = 0.7 }
      assert.are.equal(before, sys.compiled)
      assert.are.equal(0.7, sys.params.alpha)
      local ref = body(lf.potential.stress { alpha = 0.7 })
      assert(rel(sys:torque(R), ref:torque(R)) <= 1e-13)
      assert(rel(sys:potential(R), ref:potential(R)) <= 1e-13)
    end
    local sys = body(c[3], { alpha = 0.3 })
    has(errmsg(sys.set_params, sys, { beta = 1 }), "unknown parameter 'beta'")
    has(errmsg(sys.set_params, sys, { alpha = { 1, 2, 3 } }), "parameter 'alpha' is a number, got a vec3")
    has(errmsg(sys.set_params, sys, { alpha = 0 / 0 }), "finite number expected")
    has(errmsg(body, c[3], { alpha = "x" }), "params.alpha: a number, vec3 or mat3 expected, got string")
    local free = body(nil)
    has(errmsg(free.set_params, free, { alpha = 1 }), "made without 'params'")
  end)
end)

describe("what cannot be compiled", function()
  it("a branch on the state falls back to the interpreted path and says where; select compiles", function()
    local U = function(R) if R[3][3] > 0.5 then return R[3][3] end return 0.5 end
    local sys = body(U)
    has(sys.compiled, "interpreted: ")
    has(sys.compiled, "compile_spec.lua:")
    has(sys.compiled, "compares a state-dependent value")
    has(sys.compiled, "lf.math.select")
    has(errmsg(body, U, nil, "tape"), "compile = \"tape\": the model cannot be compiled")
    local S = function(R) return lf.math.select(lf.math.gt(R[3][3], 0.5), R[3][3], 0.5) end
    local cs = body(S)
    has(cs.compiled, runs("auto"))
    for seed = 1, 10 do
      local R = so3.random(seed)
      assert(rel(cs:potential(R), sys:potential(R)) <= 1e-15)
      assert(rel(cs:torque(R), sys:torque(R)) <= 1e-13)
    end
  end)
  it("math.floor of the state, a map without a traced version, an error: interpreted with the reason", function()
    has(body(function(R) return math.floor(R[1][1] * 3) end).compiled, "math.floor of a state-dependent value cannot be compiled")
    has(body(function(R) return so3.project(R):trace() end).compiled, "so3.project of a traced value: not supported")
    has(body(function(R) error("boom") end, nil, false).compiled, "interpreted: compile = false")
    local sqrt = math.sqrt
    has(body(function(R) return sqrt(R[1][1] + 2) end).compiled, "got lf.traced")
  end)
  it("a traced value kept after the trace is refused when used", function()
    local kept
    body(function(R) kept = R; return R[1][1] end)
    has(errmsg(function() return kept * 2 end), "used after the function that was traced returned")
  end)
end)

describe("lf.compile", function()
  it("a function of numbers, vec3 and mat3: value, gradient, backend, source", function()
    local f = lf.compile(function(A, x, s, p) return (A * x):dot(x) * s + p.k * math.sin(s) end,
      { args = { "mat3", "vec3", "number" }, params = { k = 2 } })
    local A, x = lf.mat3 { { 1, 2, 0 }, { 0, 1, 0 }, { 0, 0, 3 } }, lf.vec3 { 1, 1, 1 }
    assert.is_true(math.abs(f(A, x, 0.5) - (7 * 0.5 + 2 * math.sin(0.5))) < 1e-15)
    local v, gA, gx, gs = f:gradient(A, x, 0.5)
    assert.are.equal(f(A, x, 0.5), v)
    assert.are.equal(0.5, gA[1][2])
    assert.is_true(rel(gx, lf.vec3 { 4, 4, 6 } * 0.5) < 1e-15)
    assert.is_true(math.abs(gs - (7 + 2 * math.cos(0.5))) < 1e-15)
    assert.is_truthy(f.backend == "native" or f.backend == "tape")
    assert.is_true(f.nodes > 5)
    assert.is_string(f.source)
    -- no user text reaches the compiler: generated names and hexadecimal constants only
    local g = lf.compile(function(x) local secret_name = 0.1; return x * secret_name end, { args = { "number" } })
    assert.is_nil(g.source:find("secret_name", 1, true))
    has(g.source, "0x1.999999999999ap-4")
    local h = lf.compile(function(x) return lf.vec3 { x, 2 * x, 3 } end, { args = { "number" }, backend = "tape" })
    assert.are.equal("tape", h.backend)
    assert.is_true(h(2) == lf.vec3 { 2, 4, 3 })
    has(errmsg(h.gradient, h, 1), "gradient needs a function returning a number")
    has(errmsg(lf.compile, function(x) return x end, { args = { "quat" } }), "args[1] must be")
    has(errmsg(lf.compile, function(x) if x > 0 then return x end return -x end, { args = { "number" } }),
      "compares a state-dependent value")
  end)
end)

describe("the code cache and the compiler (subprocesses with their own environment)", function()
  if NO_CC then
    it("needs a C compiler (skipped: LIEFLOW_CC=/nonexistent; tests/c/test_jit.c covers the cache)", function()
      assert.are.equal("tape", lf.compile(function(x) return x * x end, { args = { "number" } }).backend)
    end)
    return
  end
  local exe = os.getenv("LIEFLOW_EXE") or "build/lieflow"
  local prog = [[local b = lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7, 0},
    potential = function(R) return (lf.so3.dist(R, lf.so3.I) - 1) ^ 2 + R[3][3] * 0.123 end}
    io.write(b.compiled, "\n", string.format("%.17g", b:torque(lf.so3.exp{0.3, 0.2, 0.1}).x), "\n")]]
  local errfile = os.tmpname()
  local function run(env) -- report, value, stderr
    local f = io.popen(env .. " " .. T.shq(exe) .. " -e " .. T.shq(prog) .. " 2>" .. T.shq(errfile))
    local out = f:read("a")
    f:close()
    local report, value = out:match("^(.-)\n(.-)\n")
    return report or out, tonumber(value), T.read(errfile) or ""
  end
  local dir = T.make_tmpdir()
  local function script(name, body)
    local p = dir .. "/" .. name
    local f = assert(io.open(p, "w"))
    f:write("#!/bin/sh\n" .. body .. "\n")
    f:close()
    os.execute("chmod 755 " .. T.shq(p))
    return p
  end
  local cache = "XDG_CACHE_HOME=" .. T.shq(dir .. "/cache")

  it("native, then cached; no compiler, a failing and a hanging one: the tape with the reason, the same numbers", function()
    local r1, v1 = run(cache)
    has(r1, "native (compiled in")
    local r2, v2 = run(cache)
    has(r2, "native (cached")
    assert.are.equal(v1, v2)
    local r3, v3 = run(cache .. " LIEFLOW_CC=/nonexistent/cc")
    has(r3, "tape: no C compiler: /nonexistent/cc not found (set LIEFLOW_CC)")
    local r4, v4 = run("XDG_CACHE_HOME=" .. T.shq(dir .. "/c2") .. " LIEFLOW_CC=" .. script("fail.sh", "echo boom >&2; exit 1"))
    has(r4, "tape: ")
    has(r4, "boom")
    local t0 = os.time()
    local r5, v5 = run("XDG_CACHE_HOME=" .. T.shq(dir .. "/c3") .. " LIEFLOW_CC_TIMEOUT=0.5 LIEFLOW_CC=" .. script("hang.sh", "sleep 30"))
    has(r5, "tape: C compiler timed out")
    assert.is_true(os.time() - t0 < 10)
    for _, v in ipairs { v2, v3, v4, v5 } do assert(math.abs(v - v1) <= 1e-13 * math.abs(v1)) end
  end)

  it("a cache directory writable by others, a corrupt cached file: refused or recompiled, never loaded", function()
    local c = dir .. "/open/lieflow"
    os.execute("mkdir -p " .. T.shq(c) .. " && chmod 777 " .. T.shq(c))
    local r, v, out = run("XDG_CACHE_HOME=" .. T.shq(dir .. "/open"))
    has(r, "tape: ")
    has(r, "refused")
    has(out, "lieflow: notice:") -- said on stderr too
    assert.is_number(v)
    -- a truncated shared object in a private cache: recompiled
    run(cache)
    local so = io.popen("ls " .. T.shq(dir .. "/cache/lieflow") .. "/*.so"):read("l")
    os.execute("truncate -s 100 " .. T.shq(so))
    local r2 = run(cache)
    has(r2, "native (compiled in")
  end)
  os.execute("rm -rf " .. T.shq(dir))
end)

describe("compiled models", function()
  it("report the worst measured differences", function()
    local names = {}
    for k in pairs(worst) do names[#names + 1] = k end
    table.sort(names)
    io.stdout:write("\n")
    for _, k in ipairs(names) do io.stdout:write(("  %-44s %.3g\n"):format(k, worst[k])) end
  end)
end)

describe("findings of tests/fuzz/graph_fuzz.lua", function()
  it("native = tape bit for bit where gcc could rewrite cos(atan(x)) (the JIT keeps errno semantics)", function()
    local fn = function(x) return math.cos(math.atan(x)) + math.sin(math.atan(2 * x)) end
    local n = lf.compile(fn, { args = { "number" }, backend = NO_CC and "tape" or "native" })
    local t = lf.compile(fn, { args = { "number" }, backend = "tape" })
    for _, x in ipairs { 11.808573214720575, 0.3, -7.25, 1e3 } do assert.are.equal(t(x), n(x)) end
  end)
  it("gradients at singular points agree: compiled = interpreted (0 where a norm or angle is at 0)", function()
    local U = function(v) return (v - v):norm() + v.x end
    for _, b in ipairs { NATIVE, "tape" } do
      local _, g = lf.compile(U, { args = { "vec3" }, backend = b == "auto" and "tape" or b }):gradient(lf.vec3 { 1, 2, 3 })
      assert.are.equal(lf.vec3 { 1, 0, 0 }, g)
    end
    assert.are.equal(lf.vec3 { 1, 0, 0 }, select(2, lf.autodiff.reverse.gradient(U, lf.vec3 { 1, 2, 3 })))
    local A = function(R) return lf.so3.angle(R) + lf.so3.dist(R, R) end
    for _, b in ipairs(backends) do
      assert.are.equal(lf.vec3 { 0, 0, 0 }, body(A, nil, b):torque(so3.I))
    end
  end)
  it("lf.compile's args = {n}: an array of n numbers for every n, 1, 3 and 9 included", function()
    assert.are.equal(6, lf.compile(function(a) return a[1] * 2 end, { args = { 1 } })({ 3 }))
    local f = lf.compile(function(a) return a[1] * a[2] * a[3] end, { args = { 3 } })
    local v, g = f:gradient { 1, 2, 3 }
    assert.are.equal(6, v)
    assert.is_nil(getmetatable(g))
    assert.are.same({ 6, 3, 2 }, g)
    local s9 = lf.compile(function(a) local s = 0 for i = 1, 9 do s = s + a[i] end return s end, { args = { 9 } })
    assert.are.equal(45, s9 { 1, 2, 3, 4, 5, 6, 7, 8, 9 })
  end)
  it("backend = \"native\" that cannot be had is an error saying why (here: too many operations)", function()
    local big = function(x) local s = x for i = 1, 12000 do s = s + math.sin(s * i) end return s end
    has(errmsg(lf.compile, big, { args = { "number" }, backend = "native" }), "no native code: ")
    assert.are.equal("tape", lf.compile(big, { args = { "number" } }).backend)
  end)
  it("a traced quaternion given to quat.log is checked as the C map checks it; refusals name the user's line", function()
    has(errmsg(lf.autodiff.reverse.gradient, function(q) return lf.quat.log(q)[1] end, { 2, 0, 0, 0 }),
      "unit quaternion expected")
    has(errmsg(lf.compile, function(R) return lf.so3.project(R)[1][1] end, { args = { "mat3" } }), "compile_spec.lua:")
  end)
end)
