-- SPDX-License-Identifier: GPL-3.0-or-later
-- The methods beyond the seeds from Lua: no_squish and dlm against Lua implementations of the formulas of
-- Miller et al. (2002) and Dullweber, Leimkuhler & McLachlan (1997); split_exact against a Lua
-- kick / lf.exact.free_body / kick; lf.compose on names, on lf.rkmk tableaux and on Lua methods (composed
-- in Lua, equal to the C composition); bounded energy in lf.stress_test at T = 1e4; the baselines of the
-- work-precision example (their orders and energy checks) and lieflow.workprec's bookkeeping.
local lf = require "lieflow"
local T = require "testlib"
local wp = require "lieflow.workprec"

local J = {2, 2, 4}
local function stress() return lf.stress_system() end

local function dist(a, b) return math.max((a.R - b.R):norm(), (a.omega - b.omega):norm()) end

-- one step of a rotation splitting in Lua: kick h/2, exact rotations about body axes (order = list of
-- {axis, fraction}), kick h/2, on (R, Pi) with lf.so3.exp
local function dlm_like(order)
  return function(s, h, sys)
    local Pi = lf.vec3{J[1] * s.omega.x, J[2] * s.omega.y, J[3] * s.omega.z} + sys:torque(s.R) * (h / 2)
    local R = s.R
    for _, o in ipairs(order) do
      local k, c = o[1], o[2]
      local e = {0, 0, 0}
      e[k] = c * h * Pi[k] / J[k]
      local E = lf.so3.exp(e)
      R, Pi = R * E, E:T() * Pi
    end
    Pi = Pi + sys:torque(R) * (h / 2)
    s.R, s.omega = R, lf.vec3{Pi.x / J[1], Pi.y / J[2], Pi.z / J[3]}
  end
end

-- NO_SQUISH in its own variables: P_k q = q e_k, p = 2 S(q) (0, Pi), rotations in the (q, P_k q) plane
local function P(k, q)
  if k == 1 then return {-q[2], q[1], q[4], -q[3]} end
  if k == 2 then return {-q[3], -q[4], q[1], q[2]} end
  return {-q[4], q[3], -q[2], q[1]}
end
local function dot4(a, b) return a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] end
local function no_squish_lua(s, h, sys)
  local q = lf.quat.from_matrix(s.R)
  q = {q[1], q[2], q[3], q[4]}
  local Pi = lf.vec3{J[1] * s.omega.x, J[2] * s.omega.y, J[3] * s.omega.z} + sys:torque(s.R) * (h / 2)
  local p = {0, 0, 0, 0}
  for k = 1, 3 do
    local r = P(k, q)
    for l = 1, 4 do p[l] = p[l] + 2 * Pi[k] * r[l] end
  end
  for _, o in ipairs{{3, 0.5}, {2, 0.5}, {1, 1}, {2, 0.5}, {3, 0.5}} do
    local k, tau = o[1], o[2] * h
    local Pq, Pp = P(k, q), P(k, p)
    local zeta = dot4(p, Pq) / (4 * J[k])
    local c, sn = math.cos(zeta * tau), math.sin(zeta * tau)
    for l = 1, 4 do q[l], p[l] = c * q[l] + sn * Pq[l], c * p[l] + sn * Pp[l] end
  end
  local R = lf.quat.to_matrix(q)
  local Pi1 = {}
  for k = 1, 3 do Pi1[k] = dot4(p, P(k, q)) / (2 * dot4(q, q)) end
  Pi = lf.vec3(Pi1) + sys:torque(R) * (h / 2)
  s.R, s.omega = R, lf.vec3{Pi.x / J[1], Pi.y / J[2], Pi.z / J[3]}
end

local function split_exact_lua(s, h, sys)
  local Pi = lf.vec3{J[1] * s.omega.x, J[2] * s.omega.y, J[3] * s.omega.z} + sys:torque(s.R) * (h / 2)
  local w, R = lf.exact.free_body(J, {Pi.x / J[1], Pi.y / J[2], Pi.z / J[3]}, h, s.R)
  Pi = lf.vec3{J[1] * w.x, J[2] * w.y, J[3] * w.z} + sys:torque(R) * (h / 2)
  s.R, s.omega = R, lf.vec3{Pi.x / J[1], Pi.y / J[2], Pi.z / J[3]}
end

local function run(method, n, h)
  local it = lf.integrator(method, stress(), {h = h})
  it:step(n)
  return it:state()
end

describe("the splitting methods against the formulas, written in Lua", function()
  it("dlm is kick, rotations about axes 1, 2, 3, 2, 1, kick", function()
    local m = lf.method{name = "dlm_lua", step = dlm_like{{1, 0.5}, {2, 0.5}, {3, 1}, {2, 0.5}, {1, 0.5}}, symmetric = true}
    local d = dist(run("dlm", 40, 0.25), run(m, 40, 0.25))
    print(("  dlm - Lua DLM after 40 steps: %.2e"):format(d))
    assert.is_true(d < 1e-12, d)
  end)

  it("no_squish is Miller et al.'s quaternion scheme, and DLM's splitting with the axes 3, 2, 1, 2, 3", function()
    local ns = run("no_squish", 40, 0.25)
    local m = lf.method{name = "ns_lua", step = no_squish_lua}
    local d = dist(ns, run(m, 40, 0.25))
    local r = lf.method{name = "dlm_321", step = dlm_like{{3, 0.5}, {2, 0.5}, {1, 1}, {2, 0.5}, {3, 0.5}}}
    local d2 = dist(ns, run(r, 40, 0.25))
    local d3 = dist(ns, run("dlm", 40, 0.25))
    print(("  no_squish - Lua NO_SQUISH: %.2e; - Lua DLM 3,2,1,2,3: %.2e; - dlm (1,2,3,2,1): %.2e"):format(d, d2, d3))
    assert.is_true(d < 1e-12, d)
    assert.is_true(d2 < 1e-12, d2)
    assert.is_true(d3 > 1e-6, d3) -- another order of the axes: another method (O(h^3) per step)
  end)

  it("split_exact is kick / lf.exact.free_body / kick", function()
    local m = lf.method{name = "se_lua", step = split_exact_lua}
    local d = dist(run("split_exact", 40, 0.25), run(m, 40, 0.25))
    print(("  split_exact - Lua kick/exact flow/kick after 40 steps: %.2e"):format(d))
    assert.is_true(d < 1e-12, d)
  end)
end)

describe("lf.compose", function()
  it("composes registered methods, with the composed order and the base's symplecticity", function()
    local m = lf.compose("vlv", "kahan_li8")
    assert.are.equal(8, m.order)
    assert.are.equal("proved", m.symplectic)
    assert.are.equal("vlv_kahan_li8", m.name)
    assert.are.equal("C (composition)", m.implementation)
    T.has(tostring(m), "lf.compose(vlv_kahan_li8, order 8)")
    local it = lf.integrator(m, stress(), {h = 0.25})
    it:step(10)
    assert.is_true(it.t == 2.5)
    local names = {}
    for _, sc in ipairs(lf.compose_schemes()) do names[sc.name] = sc end
    for _, n in ipairs{"triple_jump4", "suzuki4", "blanes_moan4", "rkn4", "rkn6", "kahan_li6", "kahan_li8"} do
      assert.is_truthy(names[n], n)
      local s = 0
      for _, c in ipairs(names[n].coefficients) do s = s + c end
      -- stages of a symmetric method and maps Phi, Phi* sum to 1; the RKN sub-steps to 1 per part
      assert.is_true(math.abs(s - (names[n].form == "rkn" and 2 or 1)) < 1e-14, n .. " " .. s)
    end
  end)

  it("refuses what it cannot compose, naming the method and the scheme", function()
    T.has(T.errmsg(lf.compose, "liemid_e", "suzuki4"), "liemid_e is not symmetric")
    T.has(T.errmsg(lf.compose, "rkmk_dp45", "suzuki4"), "adaptive")
    T.has(T.errmsg(lf.compose, "vlv", "blanes_moan4"), "only the splitting methods")
    T.has(T.errmsg(lf.compose, "dlm", "rkn4"), "which only split_exact is, not dlm")
    T.has(T.errmsg(lf.compose, "vlv", "nope"), "unknown scheme 'nope'")
    T.has(T.errmsg(lf.compose, "no_such_method", "suzuki4"), "unknown method 'no_such_method'")
    T.has(T.errmsg(lf.compose, "vlv", 4), "argument #2 must be a scheme name")
  end)

  it("composes a symmetric lf.rkmk tableau in C, keeping it alive", function()
    local s3 = math.sqrt(3)
    local gl = lf.rkmk{name = "gl4_user", A = {{1 / 4, 1 / 4 - s3 / 6}, {1 / 4 + s3 / 6, 1 / 4}}, b = {0.5, 0.5},
                       c = {0.5 - s3 / 6, 0.5 + s3 / 6}, symmetric = true}
    local m = lf.compose(gl, "kahan_li6")
    gl = nil
    collectgarbage()
    collectgarbage()
    assert.are.equal(6, m.order)
    local sys = lf.lie_ode{factors = {"s2"}, y0 = {{0.6, 0, 0.8}}, f = "s2_gradient_flow", params = {D = {1, 1, 3}}}
    local o = lf.order{system = sys, method = m, T = 2, steps = {0.25, 0.125, 0.0625}}
    print(("  gl4_user + kahan_li6 on the S2 gradient flow: order %.2f"):format(o.order))
    assert.is_true(math.abs(o.order - 6) < 0.5, o.order)
  end)

  it("composes an lf.method in Lua, equal to the C composition of the same method", function()
    local m = lf.method{name = "se_lua", order = 2, step = split_exact_lua, symmetric = true, symplectic = "proved"}
    local c = lf.compose(m, "triple_jump4")
    assert.are.equal(4, c.order)
    assert.are.equal("proved", c.symplectic)
    assert.are.equal("se_lua_triple_jump4", c.name)
    local d = dist(run(c, 20, 0.25), run(lf.compose("split_exact", "triple_jump4"), 20, 0.25))
    print(("  Lua composition - C composition of split_exact, 20 steps: %.2e"):format(d))
    assert.is_true(d < 1e-12, d)
    T.has(T.errmsg(lf.compose, lf.method{name = "x", step = split_exact_lua}, "suzuki4"), "does not declare symmetric = true")
    T.has(T.errmsg(lf.compose, m, "rkn4"), "use triple_jump4, suzuki4, kahan_li6 or kahan_li8")
    T.has(T.errmsg(lf.compose, m, "nope"), "unknown scheme 'nope'")
  end)
end)

describe("bounded energy over T = 1e4 (lf.stress_test, h = 0.125)", function()
  for _, info in ipairs(lf.methods()) do
    if info.family == "splitting" or info.family == "composition" then
      it(info.name, function()
        local st = lf.stress_test(info.name, {h = 0.125, T = 1e4})
        print(("  %-16s %s, statistic %.3f, max|dE| %.2e"):format(info.name, st.verdict, st.statistic,
          st.runs[1].drift.max_error))
        assert.are.equal("bounded", st.verdict)
      end)
    end
  end
end)

describe("the work-precision baselines", function()
  it("rk4 and quaternion rk4 are of order 4, rk8pd meets its tolerance, the energy check is per step", function()
    local sys = stress()
    local ref = lf.reference(sys, 5, {rtol = 1e-14, atol = 1e-14})
    for _, solver in ipairs{"rk4", "quat_rk4"} do
      local e = {}
      for i, h in ipairs{1 / 16, 1 / 32} do
        e[i] = wp.state_error(lf.core.baseline(sys, {solver = solver, T = 5, h = h, renormalize = true}).state, ref)
      end
      local p = math.log(e[1] / e[2], 2)
      print(("  %s: errors %.2e, %.2e at h = 1/16, 1/32: order %.2f"):format(solver, e[1], e[2], p))
      assert.is_true(math.abs(p - 4) < 0.3, p)
    end
    local r = lf.core.baseline(sys, {solver = "rk8pd", T = 5, tol = 1e-12})
    assert.is_true(wp.state_error(r.state, ref) < 1e-9)
    -- the C energy check equals a check after every step from Lua
    local c = lf.core.timed_run("vlv", sys, {T = 5, h = 0.25, energy_every = 1})
    local it = lf.integrator("vlv", sys, {h = 0.25})
    local E0, m = it:energy(), 0
    for _ = 1, 20 do
      it:step()
      m = math.max(m, math.abs(it:energy() - E0))
    end
    assert.are.equal(m, c.max_energy_error)
    assert.is_true(c.cpu_seconds >= 0 and c.seconds >= 0)
    T.has(T.errmsg(lf.core.timed_run, "vlv", sys, {T = 1, h = 0.3}), "not a whole number of steps")
    T.has(T.errmsg(lf.core.baseline, sys, {solver = "rk4", T = 1, h = 0.3}), "not a whole number of steps")
    T.has(T.errmsg(lf.core.baseline, sys, {solver = "euler", T = 1, h = 0.1}), "invalid option 'euler'")
  end)

  it("workprec: the cheapest run reaching a target, and the winners", function()
    local curves = {
      {label = "a", geometric = true, points = {{err = 1e-2, seconds = 1}, {err = 1e-4, seconds = 3}}},
      {label = "rk8pd", geometric = false, points = {{err = 1e-3, seconds = 2}, {err = 1e-5, seconds = 4}}},
      {label = "quat_rk4", geometric = false, points = {{err = 1e-2, seconds = 0.5}}},
    }
    local t, p = wp.time_to(curves[1].points, 1e-3)
    assert.are.equal(3, t)
    assert.are.equal(1e-4, p.err)
    assert.is_nil(wp.time_to(curves[3].points, 1e-3))
    local rows = wp.winners(curves, {1e-2, 1e-3, 1e-5, 1e-6})
    assert.are.equal("quat_rk4", rows[1].winner)
    assert.are.equal("a", rows[1].geo)
    assert.are.equal(0.5, rows[1].ratio_nongeo)
    assert.are.equal("rk8pd", rows[2].winner)
    assert.are.equal("a", rows[2].geo)
    assert.are.equal(2 / 3, rows[2].ratio_rk8pd)
    assert.are.equal("rk8pd", rows[3].winner)
    assert.is_nil(rows[3].geo)
    assert.is_nil(rows[4].winner)
    assert.are.equal(2, wp.median{3, 1, 2})
    assert.are.equal(2.5, wp.median{4, 1, 2, 3})
  end)
end)
