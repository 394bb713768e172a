-- SPDX-License-Identifier: GPL-3.0-or-later
-- lf.lie_ode (Lie-group ODEs with a Lua or built-in vector field), lf.rkmk (user tableaux), and the
-- generic tooling (lf.integrator, lf.run, lf.order, lf.reference) on them.
local lf = require "lieflow"
local T = require "testlib"
local errmsg, has = T.errmsg, T.has

local function s2_flow(q0, D)
  return lf.lie_ode{factors = {"s2"}, y0 = {q0}, f = "s2_gradient_flow", params = {D = D or {1, 1, 3}}}
end

describe("lf.lie_ode", function()
  it("runs a rigid body written in Lua on SO(3) x R^3 like the rigid system (generic methods)", function()
    local J, tauC = {2, 2, 4}, lf.potential.stress{}
    local R0, w0 = lf.so3.exp{0, 0.7227, 0}, {0, 0, 0.625}
    local ode = lf.lie_ode{factors = {"so3", "r3"}, trivialization = "left", y0 = {R0, w0},
      f = function(t, y)
        local R, w = y[1], lf.vec3(y[2])
        local tau = tauC:torque(R)
        local Jw = lf.vec3{J[1] * w[1], J[2] * w[2], J[3] * w[3]}
        local g = Jw:cross(w) + tau
        return {w, {g[1] / J[1], g[2] / J[2], g[3] / J[3]}}
      end}
    local body = lf.rigidbody{inertia = J, R = R0, omega = w0, potential = tauC}
    for _, m in ipairs{"rkmk4", "rkmk_gl4", "cf4"} do
      local a = lf.integrator(m, ode, {h = 0.1}):step(50)
      local b = lf.integrator(m, body, {h = 0.1}):step(50)
      assert.is_true((a.y[1] - b.R):norm() < 1e-13, m)
      assert.is_true((lf.vec3(a.y[2]) - b.omega):norm() < 1e-13, m)
    end
  end)

  it("is exact for y' = A y with constant A in any RKMK method (u = t A commutes with A)", function()
    local A = lf.mat3{{0.1, -0.8, 0.3}, {0.9, -0.2, 0.5}, {-0.4, 0.6, 0.05}}
    local ode = lf.lie_ode{factors = {"gl3"}, y0 = {lf.so3.I}, f = function() return {A} end}
    local ref = lf.reference(ode, 2, {rtol = 1e-14, atol = 1e-14})
    for _, m in ipairs{"lie_euler", "rkmk_heun", "rkmk4", "rkmk_gl4", "rkmk_gl6_sym"} do
      local it = lf.integrator(m, ode, {h = 0.5}):advance_to(2)
      local e = it:error(ref).y
      assert.is_true(e < 1e-12, m .. ": " .. e)
    end
  end)

  it("gives the S2 gradient flow its closed form and the orders of the methods (lf.order)", function()
    local q0 = lf.vec3{0.3, -0.5, 0.6}:normalized()
    local ode = s2_flow(q0)
    local D, t = {1, 1, 3}, 2
    local q = lf.vec3{math.exp(-D[1] * t) * q0[1], math.exp(-D[2] * t) * q0[2], math.exp(-D[3] * t) * q0[3]}:normalized()
    local ref = lf.reference(ode, t, {rtol = 1e-14, atol = 1e-14})
    assert.is_true((ref.y[1] - q):norm() < 1e-12)
    assert.is_true(ref.manifold_defect < 1e-12)
    local o = lf.order{system = ode, method = "rkmk4", T = t, steps = {0.1, 0.05, 0.025}, reference = {y = {q}}}
    assert.is_true(math.abs(o.order - 4) < 0.15, o.order)
    assert.are.equal(o.order, o.order_y)
    assert.is_number(o.table[1].err_y)
  end)

  it("records a trajectory with the system's columns (manifold_defect, energy when given)", function()
    local ode = s2_flow(lf.vec3{0, 0.6, 0.8})
    local tr = lf.run(ode, {method = "rkmk_gl4", h = 0.05, T = 1})
    assert.are.same({"t", "energy", "energy_error", "manifold_defect"}, tr.columns)
    assert.is_true(tr.energy[#tr.energy] < tr.energy[1]) -- a gradient flow descends
    for _, d in ipairs(tr.manifold_defect) do assert.is_true(d < 1e-14) end
    local plain = lf.lie_ode{factors = {"r2"}, y0 = {{1, 0}}, f = function(t, y) return {{-y[1][2], y[1][1]}} end}
    local tp = lf.run(plain, {method = "rkmk4", h = 0.1, T = 1})
    assert.are.same({"t", "manifold_defect"}, tp.columns)
  end)

  it("runs the adaptive rkmk_dp45 through lf.run on the sampling grid", function()
    local ode = s2_flow(lf.vec3{0.6, 0, 0.8})
    local tr = lf.run(ode, {method = "rkmk_dp45", h = 0.1, T = 1, every = 2})
    assert.are.equal(6, #tr.t)
    for k, t in ipairs(tr.t) do assert.is_true(math.abs(t - 0.2 * (k - 1)) < 1e-14) end
    local it = lf.integrator("rkmk_dp45", ode, {h = 0.1, rtol = 1e-10, atol = 1e-10}):advance_to(1)
    assert.is_true(it.next_h > 0 and it.steps > 0)
  end)

  it("takes a Lua energy and Jacobian; the Newton variants agree", function()
    local D = {1, 1, 3}
    local function f(t, y)
      local q = lf.vec3(y[1])
      return {lf.vec3{D[1] * q[1], D[2] * q[2], D[3] * q[3]}:cross(q)}
    end
    local function jac(t, y) -- along the action, column j: D(e_j x q) x q + D q x (e_j x q)
      local q = lf.vec3(y[1])
      local Dq = lf.vec3{D[1] * q[1], D[2] * q[2], D[3] * q[3]}
      local cols = {}
      for j = 1, 3 do
        local e = lf.vec3{j == 1 and 1 or 0, j == 2 and 1 or 0, j == 3 and 1 or 0}
        local dq = e:cross(q)
        cols[j] = lf.vec3{D[1] * dq[1], D[2] * dq[2], D[3] * dq[3]}:cross(q) + Dq:cross(dq)
      end
      return {{cols[1][1], cols[2][1], cols[3][1]}, {cols[1][2], cols[2][2], cols[3][2]}, {cols[1][3], cols[2][3], cols[3][3]}}
    end
    local q0 = lf.vec3{0.3, -0.5, 0.6}:normalized()
    local ode = lf.lie_ode{factors = {"s2"}, y0 = {q0}, f = f, jacobian = jac,
                           energy = function(y) local q = y[1] return 0.5 * (q[1]^2 + q[2]^2 + 3 * q[3]^2) end}
    local builtin = s2_flow(q0)
    local ys = {}
    for k, o in ipairs{{jacobian = "analytic"}, {jacobian = "fd"}, {jacobian = "block"}, {solver = "fixed_point"}} do
      o.h = 0.2
      ys[k] = lf.integrator("lie_euler_implicit", ode, o):step(10).y[1]
    end
    local yb = lf.integrator("lie_euler_implicit", builtin, {h = 0.2, jacobian = "analytic"}):step(10).y[1]
    for k = 2, 4 do assert.is_true((ys[k] - ys[1]):norm() < 1e-13) end
    assert.is_true((yb - ys[1]):norm() < 1e-14)
    assert.is_true(math.abs(ode:energy() - builtin:energy()) < 1e-15)
  end)

  it("caps the order with a truncated dexpinv (dexpinv_order = q: order q + 1 on a nonlinear field)", function()
    local q = {0.9, 0.1, -0.3, 0.2}
    local n = math.sqrt(0.95)
    for i = 1, 4 do q[i] = q[i] / n end
    local ode = lf.lie_ode{factors = {"s3"}, y0 = {q}, f = "free_rigid_quat",
                           params = {J = {0.9144, 1.098, 1.66}, m0 = {0.4, 0.9, -0.3}}}
    local ref = lf.reference(ode, 2, {rtol = 1e-14, atol = 1e-14})
    local function order(opts)
      local e = {}
      for k, h in ipairs{0.0625, 0.03125} do
        opts.h = h
        e[k] = lf.integrator("rkmk4", ode, opts):advance_to(2):error(ref).y
      end
      return math.log(e[1] / e[2], 2)
    end
    assert.is_true(math.abs(order{} - 4) < 0.2)
    assert.is_true(math.abs(order{dexpinv_order = 2} - 3) < 0.2)
  end)

  it("rejects bad definitions with clear messages", function()
    has(errmsg(lf.lie_ode, {factors = {"so4"}, y0 = {1}, f = function() end}), "factors[1] = so4 is not a factor")
    has(errmsg(lf.lie_ode, {factors = {"s2"}, y0 = {}, f = function() end}), "'y0' must be an array of 1 values")
    has(errmsg(lf.lie_ode, {factors = {"s2"}, y0 = {{1, 0, 0}}, f = function() end, colour = 1}), "unknown field 'colour'")
    has(errmsg(lf.lie_ode, {factors = {"s2"}, y0 = {{1, 1, 0}}, f = function() end}), "not a unit vector")
    has(errmsg(lf.lie_ode, {factors = {"s2"}, y0 = {{1, 0, 0}}, f = 3}), "field 'f' must be a function")
    has(errmsg(lf.lie_ode, {factors = {"s2"}, y0 = {{1, 0, 0}}, trivialization = "up", f = function() end}),
        "trivialization must be")
    has(errmsg(lf.lie_ode, {factors = {"s2"}, y0 = {{1, 0, 0}}, f = "nope"}), "unknown built-in vector field 'nope'")
    has(errmsg(lf.lie_ode, {factors = {"s2"}, y0 = {{1, 0, 0}}, f = "s2_gradient_flow", params = {E = {1, 1, 1}}}),
        "params.D of 's2_gradient_flow' (3 numbers) is required")
    has(errmsg(lf.lie_ode, {factors = {"gl3"}, y0 = {lf.so3.I}, f = "s2_gradient_flow", params = {D = {1, 1, 1}}}),
        "acts on the factors")
    -- a model bug: said when the system is made (compile = "auto" would otherwise hide it behind the
    -- interpreter), at the step when interpreted by choice
    has(errmsg(lf.lie_ode, {factors = {"s2", "r2"}, y0 = {{1, 0, 0}, {0, 0}}, f = function() return {{0, 0, 1}, "x"} end}),
        "lf.lie_ode: the model fails at the initial state: f(t, y): element 2 of the result is string")
    has(errmsg(lf.lie_ode, {factors = {"s2"}, y0 = {{1, 0, 0}}, f = function() return {{0, 0, 1}, {1, 2}} end}),
        "f(t, y) returned 2 elements, expected 1 (one algebra element per factor)")
    local bad = lf.lie_ode{factors = {"s2", "r2"}, y0 = {{1, 0, 0}, {0, 0}}, compile = false,
                           f = function() return {{0, 0, 1}, "x"} end}
    has(errmsg(function() lf.integrator("rkmk4", bad, {h = 0.1}):step() end),
        "element 2 of the result is string, expected an array of numbers (2 numbers) for factor 2")
    local raising = lf.lie_ode{factors = {"r1"}, y0 = {{0}}, compile = false, f = function() error("boom") end}
    local it = lf.integrator("rkmk4", raising, {h = 0.1})
    has(errmsg(it.step, it), "rkmk4: step from t=0 with h=0.1 failed: f(t, y) raised an error:")
    assert.are.equal(0, it.t)
    has(errmsg(lf.integrator, "vlv", raising, {h = 0.1}), "method vlv integrates rigid-body systems")
  end)
end)

describe("lf.integrator options", function()
  local ode = s2_flow(lf.vec3{0, 0.6, 0.8})
  it("names unknown options and invalid choices", function()
    has(errmsg(lf.integrator, "rkmk4", ode, {h = 0.1, hh = 1}), "unknown option 'hh'")
    has(errmsg(lf.integrator, "rkmk_gl4", ode, {h = 0.1, solver = "magic"}),
        "option 'solver' must be one of newton, fixed_point, got magic")
    has(errmsg(lf.integrator, "rkmk_gl4", ode, {h = 0.1, jacobian = "x"}), "option 'jacobian' must be one of")
    has(errmsg(lf.integrator, "rkmk4", ode, {h = 0.1, dexpinv_order = 1.5}), "dexpinv_order must be an integer")
  end)
  it("exposes fields, observables, statistics and the method's metadata", function()
    local it = lf.integrator("rkmk_gl4", ode, {h = 0.1}):step(3)
    assert.is_true(lf.so3.is_rotation ~= nil)
    assert.are.equal("rkmk", it.method.family)
    assert.are.equal("lie_ode", it.method.form)
    assert.is_true(it.method.implicit)
    assert.is_true(it.f_evals > 0 and it.newton_iters > 0)
    assert.is_number(it.manifold_defect)
    assert.are.same({"energy", "manifold_defect"}, it:columns())
    local st = it:state()
    assert.are.equal(it.t, st.t)
    it:set_state{y = {{1, 0, 0}}}
    assert.are.equal(lf.vec3{1, 0, 0}, it.y[1])
    has(errmsg(it.set_state, it, {q = {{1, 0, 0}}}), "unknown field 'q' (fields: t, y)")
  end)
end)

describe("lf.rkmk (user tableaux)", function()
  local ode = lf.lie_ode{factors = {"s3"}, y0 = {{1, 0, 0, 0}}, f = "free_rigid_quat",
                         params = {J = {1, 2, 3}, m0 = {0.3, 0.9, -0.2}}}
  it("runs the classical RK4 tableau exactly like rkmk4, with its order from the conditions", function()
    local rk4 = lf.rkmk{name = "my_rk4", A = {{0, 0, 0, 0}, {0.5, 0, 0, 0}, {0, 0.5, 0, 0}, {0, 0, 1, 0}},
                        b = {1 / 6, 1 / 3, 1 / 3, 1 / 6}, c = {0, 0.5, 0.5, 1}}
    assert.are.equal(4, rk4.order)
    local a = lf.integrator(rk4, ode, {h = 0.1}):step(20).y[1]
    local b = lf.integrator("rkmk4", ode, {h = 0.1}):step(20).y[1]
    for i = 1, 4 do assert.are.equal(b[i], a[i]) end
    local tr = lf.run(ode, {method = rk4, h = 0.1, T = 1})
    assert.are.equal("my_rk4", tr.method)
  end)
  it("makes a symmetric method from a symmetric tableau with symmetric = true", function()
    local s = math.sqrt(3) / 6
    local gl = lf.rkmk{name = "my_gl4", A = {{0.25, 0.25 - s}, {0.25 + s, 0.25}}, b = {0.5, 0.5},
                       c = {0.5 - s, 0.5 + s}, symmetric = true}
    assert.is_true(gl.symmetric and gl.implicit)
    local it = lf.integrator(gl, ode, {h = 0.25}):step(1)
    it.h = -0.25
    it:step(1)
    local y = it.y[1]
    assert.is_true(math.abs(y[1] - 1) + math.abs(y[2]) + math.abs(y[3]) + math.abs(y[4]) < 1e-14)
  end)
  it("refuses inconsistent or over-declared tableaux", function()
    has(errmsg(lf.rkmk, {name = "x", A = {{0}}, b = {0.5}, c = {0}}), "the weights b sum to 0.5")
    has(errmsg(lf.rkmk, {name = "x", A = {{0, 0}, {1, 0}}, b = {0.5, 0.5}, c = {0, 1}, order = 3}),
        "satisfies the order conditions up to order 2 only")
    has(errmsg(lf.rkmk, {name = "rkmk4", A = {{0}}, b = {1}, c = {0}}), "is the name of a built-in method")
    has(errmsg(lf.rkmk, {name = "x", A = {{0}}, b = {1}, c = {0}, extra = 1}), "unknown field 'extra' (fields: name, A, b, c, order, symmetric)")
  end)
end)

describe("autodiff along the action of every factor", function()
  it("gives the Jacobian of a Lua f on so3 x s2 x s3 x gl3 x r2 equal to finite differences", function()
    local M = lf.math
    local function f(t, y)
      local R, q, Q, Y, r = y[1], y[2], y[3], y[4], y[5]
      local a = R * q                         -- so3 acting on s2
      local s = Q[1] * Q[2] + M.sin(Q[3]) - Q[4] * r[1]
      return {a:cross(q) + lf.vec3{1, 0, 0} * s, q * r[2], lf.vec3{Y[1][2], Y[2][3] * s, Y[3][1]},
              Y * Y:T() * 0.1, {Y:det() * r[1], a:dot(q)}}
    end
    local y0 = {lf.so3.exp{0.3, -0.2, 0.5}, lf.vec3{0.6, 0, 0.8}, {0.9, 0.1, -0.3, math.sqrt(1 - 0.91)},
                lf.mat3{{1, 0.2, 0}, {0.1, 1.3, -0.2}, {0, 0.4, 0.9}}, {0.5, -1.5}}
    for _, triv in ipairs{"right", "left"} do
      local names = {"so3", "s2", "s3", "gl3", "r2"}
      local D = lf.autodiff.lie_jacobian(f, 0, y0, names, triv)
      local ode = lf.lie_ode{factors = names, trivialization = triv, y0 = y0, f = f}
      -- central differences along the action: act(e e_j, y0) through one explicit Lie-Euler step of
      -- a constant field e_j (exact: the action of exp(e e_j))
      local worst = 0
      for j = 1, 20 do
        local function moved(eps)
          local dir = {}
          local k = 0
          for _, n in ipairs(names) do
            local d = ({so3 = 3, s2 = 3, s3 = 3, gl3 = 9})[n] or 2
            local x = {}
            for c = 1, d do k = k + 1; x[c] = (k == j) and eps or 0 end
            dir[#dir + 1] = n == "gl3" and lf.mat3(x) or x
          end
          local move = lf.lie_ode{factors = names, trivialization = triv, y0 = y0, f = function() return dir end}
          return lf.integrator("lie_euler", move, {h = 1}):step(1).y
        end
        local fp, fm = ode:f(0, {y = moved(1e-6)}), ode:f(0, {y = moved(-1e-6)})
        local row = 0
        for i = 1, 5 do
          local pa, pb = fp[i], fm[i]
          local na = ({3, 3, 3, 9, 2})[i]
          for c = 1, na do
            local va = type(pa) == "userdata" and (na == 9 and pa[(c - 1) // 3 + 1][(c - 1) % 3 + 1] or pa[c]) or pa[c]
            local vb = type(pb) == "userdata" and (na == 9 and pb[(c - 1) // 3 + 1][(c - 1) % 3 + 1] or pb[c]) or pb[c]
            row = row + 1
            worst = math.max(worst, math.abs((va - vb) / 2e-6 - D[row][j]))
          end
        end
      end
      assert.is_true(worst < 1e-7, triv .. ": " .. worst)
    end
  end)

  it("serves jacobian = \"autodiff\" to the implicit methods (same result as the analytic Jacobian)", function()
    local D = {1, 1, 3}
    local function f(t, y)
      local q = y[1]
      return {lf.vec3{D[1] * q[1], D[2] * q[2], D[3] * q[3]}:cross(q)}
    end
    local q0 = lf.vec3{0.3, -0.5, 0.6}:normalized()
    local auto = lf.lie_ode{factors = {"s2"}, y0 = {q0}, f = f, jacobian = "autodiff"}
    local builtin = s2_flow(q0)
    local a = lf.integrator("lie_euler_implicit", auto, {h = 2, jacobian = "analytic"}):step(5).y[1]
    local b = lf.integrator("lie_euler_implicit", builtin, {h = 2, jacobian = "analytic"}):step(5).y[1]
    assert.is_true((a - b):norm() < 1e-14)
  end)

  it("gives the trivialized gradient of a scalar function", function()
    local m0 = lf.vec3{0.3, 0.9, -0.2}
    local J = {1, 2, 3}
    local function H(y) -- the free rigid body's energy in quaternions
      local q = y[1]
      local w, x, yy, z = q[1], q[2], q[3], q[4]
      local R = lf.autodiff.mat3{{1 - 2 * (yy * yy + z * z), 2 * (x * yy - w * z), 2 * (x * z + w * yy)},
                                 {2 * (x * yy + w * z), 1 - 2 * (x * x + z * z), 2 * (yy * z - w * x)},
                                 {2 * (x * z - w * yy), 2 * (yy * z + w * x), 1 - 2 * (x * x + yy * yy)}}
      local P = R:T() * m0
      return 0.5 * (P[1] * P[1] / J[1] + P[2] * P[2] / J[2] + P[3] * P[3] / J[3])
    end
    local q = {0.9, 0.1, -0.3, math.sqrt(1 - 0.91)}
    local g = lf.autodiff.lie_gradient(H, {q}, {"s3"}, "right")
    -- dH along the spatial rotation e_j: the spatial angular velocity w_s = R J^-1 R^T m0 gives
    -- dH = w_s x m0 (d/de 1/2 m0.R J^-1 R^T m0 with R -> exp(e hat e_j) R)
    local R = lf.quat.to_matrix(q)
    local P = R:T() * m0
    local ws = R * lf.vec3{P[1] / J[1], P[2] / J[2], P[3] / J[3]}
    local expect = ws:cross(m0)
    for j = 1, 3 do assert.is_true(math.abs(g[j] - expect[j]) < 1e-14, j) end
  end)
end)

describe("the se3 factor (rigid motions (R, p), twists (w, v))", function()
  local so3 = lf.so3
  -- exp of the twist (w, v): (exp(hat w), V(w) v), V = I + (1 - cos t)/t^2 hat w + (t - sin t)/t^3 hat w^2
  local function se3_exp(w, v)
    w = lf.vec3(w)
    local t, W = w:norm(), so3.hat(w)
    local V = so3.I + W * ((1 - math.cos(t)) / t ^ 2) + W * W * ((t - math.sin(t)) / t ^ 3)
    return so3.exp(w), V * lf.vec3(v)
  end
  local function close(a, b, tol) return (a - b):norm() <= tol end
  local R0, p0 = so3.exp{0.3, -0.2, 0.5}, lf.vec3{1, -2, 0.5}
  local w, v = lf.vec3{0.4, -0.7, 0.9}, lf.vec3{1.2, -0.5, 0.8}

  it("reads {R = mat3, p = vec3} or 12 numbers, shows {R, p}, and refuses what is not a rigid motion", function()
    local a = lf.lie_ode{factors = {"se3"}, y0 = {{R = R0, p = p0}}, f = function() return {{w, v}} end}
    local flat = {}
    for i = 1, 3 do for j = 1, 3 do flat[#flat + 1] = R0[i][j] end end
    flat[10], flat[11], flat[12] = 1, -2, 0.5
    local b = lf.lie_ode{factors = {"se3"}, y0 = {flat}, f = function() return {{0.4, -0.7, 0.9, 1.2, -0.5, 0.8}} end}
    assert.are.equal(getmetatable(so3.I), getmetatable(a.y[1].R))       -- a mat3
    assert.are.equal(getmetatable(lf.vec3{0, 0, 0}), getmetatable(a.y[1].p)) -- a vec3
    assert.is_true(a.y[1].R == b.y[1].R and a.y[1].p == b.y[1].p)
    local fa, fb = a:f(0)[1], b:f(0)[1] -- the twist as {w, v}, from either form
    assert.is_true(fa[1] == w and fa[2] == v and fb[1] == w and fb[2] == v)
    has(errmsg(lf.lie_ode, {factors = {"se3"}, y0 = {{R = lf.mat3{1, 0, 0, 0, 1, 0, 0, 0, 1.01}, p = p0}},
      f = function() end}), "y0[1] (se3): R is not a rotation")
    has(errmsg(lf.lie_ode, {factors = {"se3"}, y0 = {{R = R0}}, f = function() end}), "field 'p' is missing")
    has(errmsg(lf.lie_ode, {factors = {"se3"}, y0 = {{1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0}}, f = function() end}),
        "y0[1]: {R = mat3, p = vec3} or 12 numbers expected, got a table of length 11")
    has(errmsg(lf.lie_ode, {factors = {"se3"}, y0 = {{R = R0, p = {0, 0, 1 / 0}}}, f = function() end}), "not finite")
    local bad = lf.lie_ode{factors = {"se3"}, y0 = {{R = R0, p = p0}}, compile = false, f = function() return {{1, 2, 3}} end}
    has(errmsg(function() lf.integrator("rkmk4", bad, {h = 0.1}):step() end),
        "expected a twist {w, v} (two vec3) or 6 numbers (6 numbers) for factor 1")
    has(errmsg(lf.lie_ode, {factors = {"se4"}, y0 = {1}, f = function() end}), "\"se3\"")
    assert.are.same({{{1, 2, 3}, {4, 5, 6}}}, lf.autodiff.algebra_elements({1, 2, 3, 4, 5, 6}, {"se3"}))
  end)

  it("integrates a constant twist exactly (y0 exp(T xi), exp(T xi) y0) in rkmk4, rkmk_gl4, cf4, cg3", function()
    local E, d = se3_exp(w * 3, v * 3)
    local ref = {left = {R = R0 * E, p = p0 + R0 * d}, right = {R = E * R0, p = E * p0 + d}}
    for triv, r in pairs(ref) do
      local ode = lf.lie_ode{factors = {"se3"}, trivialization = triv, y0 = {{R = R0, p = p0}},
                             f = function() return {{w, v}} end}
      for _, m in ipairs{"rkmk4", "rkmk_gl4", "cf4", "cg3"} do
        local y = lf.integrator(m, ode, {h = 0.1}):advance_to(3).y[1]
        assert.is_true(close(y.R, r.R, 1e-14) and close(y.p, r.p, 1e-14), triv .. " " .. m)
      end
    end
  end)

  -- the free rigid body on se3 x r6 (left-trivialized): body twist (w, v) = (J^-1 Pi, P/m) and body momenta
  -- (Pi, P): Pi' = Pi x w, P' = P x w; R' = R hat w, p' = R v
  local J, m = {0.9144, 1.098, 1.66}, 2
  local w0, v0 = lf.vec3{0.45549, 0.82623, 0.03476}, lf.vec3{0.3, -0.2, 0.5}
  local function free_body(compile)
    return lf.lie_ode{factors = {"se3", "r6"}, trivialization = "left", compile = compile,
      y0 = {{R = R0, p = p0}, {J[1] * w0.x, J[2] * w0.y, J[3] * w0.z, m * v0.x, m * v0.y, m * v0.z}},
      f = function(t, y)
        local M = y[2]
        local Pi, P = lf.vec3{M[1], M[2], M[3]}, lf.vec3{M[4], M[5], M[6]}
        local om, vel = lf.vec3{M[1] / J[1], M[2] / J[2], M[3] / J[3]}, P / m
        local dPi, dP = Pi:cross(om), P:cross(om)
        return {{om, vel}, {dPi.x, dPi.y, dPi.z, dP.x, dP.y, dP.z}}
      end}
  end

  it("runs the free rigid body on se3 x r6 like the rigid system, the position along R0 v0 (rkmk4 order 4)", function()
    local ode = free_body()
    local body = lf.rigidbody{inertia = J, R = R0, omega = w0}
    local ref = lf.integrator("rkmk4", body, {h = 0.001}):advance_to(5)
    local function err(h)
      local y = lf.integrator("rkmk4", ode, {h = h}):advance_to(5).y
      return math.max((y[1].R - ref.R):norm(), (y[1].p - (p0 + R0 * v0 * 5)):norm())
    end
    for _, mth in ipairs{"rkmk4", "rkmk_gl4", "cf4"} do -- the same rotation as the rigid system's generic step
      local a = lf.integrator(mth, ode, {h = 0.1}):step(50)
      local b = lf.integrator(mth, body, {h = 0.1}):step(50)
      assert.is_true((a.y[1].R - b.R):norm() < 1e-13, mth)
    end
    local e1, e2 = err(0.1), err(0.05)
    local order = math.log(e1 / e2, 2)
    assert.is_true(math.abs(order - 4) < 0.15, order)
  end)

  it("gives the Jacobian of a Lua f on se3 x r6 (jacobian = \"autodiff\") equal to differences along the action", function()
    local function f(t, y)
      local R, p, M = y[1].R, y[1].p, y[2]
      local a = R:T() * p
      return {{lf.vec3{M[1], M[2], M[3]} + a:cross(R[1]), R * lf.vec3{M[4], M[5], M[6]}},
              {p:dot(R[2]), a.x * M[1], p.z * M[6], R[3][1] * M[2], a:norm(), M[3] * M[4]}}
    end
    local y0 = {{R = R0, p = p0}, {0.3, -0.1, 0.7, 1.1, -0.4, 0.2}}
    for _, triv in ipairs{"right", "left"} do
      local names = {"se3", "r6"}
      local D = lf.autodiff.lie_jacobian(f, 0, y0, names, triv)
      local ode = lf.lie_ode{factors = names, trivialization = triv, y0 = y0, f = f}
      local worst = 0
      for j = 1, 12 do
        local function moved(eps)
          local x = {}
          for k = 1, 12 do x[k] = (k == j) and eps or 0 end
          local dir = {{{x[1], x[2], x[3]}, {x[4], x[5], x[6]}}, {x[7], x[8], x[9], x[10], x[11], x[12]}}
          local move = lf.lie_ode{factors = names, trivialization = triv, y0 = y0, f = function() return dir end}
          return lf.integrator("lie_euler", move, {h = 1}):step(1).y
        end
        local fp, fm = ode:f(0, {y = moved(1e-6)}), ode:f(0, {y = moved(-1e-6)})
        local row = 0
        for i = 1, 2 do
          for c = 1, 6 do
            local va = i == 1 and fp[1][(c - 1) // 3 + 1][(c - 1) % 3 + 1] or fp[2][c]
            local vb = i == 1 and fm[1][(c - 1) // 3 + 1][(c - 1) % 3 + 1] or fm[2][c]
            row = row + 1
            worst = math.max(worst, math.abs((va - vb) / 2e-6 - D[row][j]))
          end
        end
      end
      assert.is_true(worst < 1e-7, triv .. ": " .. worst)
      local auto = lf.lie_ode{factors = names, trivialization = triv, y0 = y0, f = f, jacobian = "autodiff"}
      local a = lf.integrator("rkmk_gl4", auto, {h = 0.05, jacobian = "analytic"}):step(20).y
      local b = lf.integrator("rkmk_gl4", ode, {h = 0.05, jacobian = "fd"}):step(20).y
      assert.is_true((a[1].R - b[1].R):norm() < 1e-12 and (a[1].p - b[1].p):norm() < 1e-12, triv)
    end
  end)
end)
