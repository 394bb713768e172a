-- SPDX-License-Identifier: GPL-3.0-or-later
-- Dense output, samples at given times and events (lf.integrator's option dense and it:dense(t);
-- lf.run's options at and events: scripts/lieflow/run/events.lua, core/method/dense.c; the interpolant's
-- order for every method is measured in tests/c/test_dense.c), checked against exact answers: the
-- Dzhanibekov flips of a free body near its intermediate axis against lf.exact.free_body and the period
-- of its elliptic functions, 4 K(m) / lambda.
local lf = require "lieflow"
local T = require "testlib"
local errmsg, has = T.errmsg, T.has

local J, w0 = {1, 2, 3}, {0.01, 1, 0.01}
local function body() return lf.rigidbody{inertia = J, omega = w0} end
local I3 = lf.mat3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}

-- the exact omega_2 (lf.exact.free_body) and a root of it in [a, b] by bisection to round-off
local function w2(t) return (lf.exact.free_body(J, w0, t))[2] end
local function root(f, a, b)
  local fa = f(a)
  for _ = 1, 200 do
    local m = 0.5 * (a + b)
    if m == a or m == b then break end
    local fm = f(m)
    if (fm < 0) == (fa < 0) then a, fa = m, fm else b = m end
  end
  return 0.5 * (a + b)
end

-- K(m), the complete elliptic integral of the first kind, by the arithmetic-geometric mean (Abramowitz &
-- Stegun 17.6: K = pi / (2 AGM(1, sqrt(1 - m)))): independent of the Carlson R_F (GSL) the exact free
-- body uses
local function ellipk(m)
  local a, b = 1, math.sqrt(1 - m)
  for _ = 1, 40 do a, b = 0.5 * (a + b), math.sqrt(a * b) end
  return math.pi / (2 * a)
end

describe("dense output", function()
  it("it:dense(t) is on the manifold, at the step's ends the states, in between as accurate as the steps", function()
    local it = lf.integrator("dlm_s6", body(), {h = 0.05, dense = true}):step(10)
    local s = it:dense(0.475)
    local w, R = lf.exact.free_body(J, w0, 0.475)
    assert.is_true((s.R:T() * s.R - I3):norm() < 1e-14)
    assert.is_true((s.R - R):norm() < 1e-9 and (s.omega - w):norm() < 1e-9)
    local e = it:dense(0.5)
    assert.is_true(e.R == it.R and e.omega == it.omega and e.t == 0.5)
    has(errmsg(it.dense, it, 0.3), "outside the last step")
    has(errmsg(lf.integrator("vlv", body(), {h = 0.1}).dense, lf.integrator("vlv", body(), {h = 0.1}), 0), "off")
    has(errmsg(lf.integrator, "dlm_p6", body(), {h = 0.1, dense = true}), "processed methods")
    has(errmsg(lf.integrator, "vlv", body(), {h = 0.1, dense = 1}), "option 'dense' must be true or false")
  end)
end)

describe("lf.run{at = ...}", function()
  it("samples at exactly those times, from the interpolant, without changing the steps", function()
    local at = {0.123, 1.5, 7.77, 10}
    local tr = lf.run(body(), {method = "dlm_s6", h = 0.05, T = 10, at = at})
    local plain = lf.integrator("dlm_s6", body(), {h = 0.05}):step(200)
    assert.are.equal(4, #tr.t)
    local worst = 0
    for i, t in ipairs(at) do
      assert.are.equal(t, tr.t[i])
      local w = lf.exact.free_body(J, w0, t)
      worst = math.max(worst, math.abs(tr.Pi2[i] - 2 * w[2]))
    end
    print(("  at = {0.123, 1.5, 7.77, 10}: |pi2 - exact| <= %.1e, energy_error at 0.123: %.1e"):format(worst,
      tr.energy_error[1]))
    assert.is_true(worst < 1e-8)
    assert.is_true(math.abs(tr.energy_error[1]) < 1e-8) -- against E(0), not the first sample's
    -- the last sample, at T, is the state of the plain run's steps, bit for bit
    assert.are.equal(plain:energy(), tr.energy[4])
    has(errmsg(lf.run, body(), {method = "vlv", h = 0.1, T = 1, at = {0.5, 0.2}}), "the times must increase")
    has(errmsg(lf.run, body(), {method = "vlv", h = 0.1, T = 1, at = {2}}), "expected a time in [0, T = 1]")
    has(errmsg(lf.run, body(), {method = "vlv", h = 0.1, T = 1, at = {0.5}, thermostat = {T = 1}}),
        "not available with a thermostat")
  end)
end)

describe("lf.run{dense = true} and traj:at(t)", function()
  it("give the state anywhere in the run: the step taken again, its interpolant, as it:dense gives it", function()
    local tr = lf.run(body(), {method = "dlm_s6", h = 0.05, T = 20, dense = true})
    local it = lf.integrator("dlm_s6", body(), {h = 0.05, dense = true}):step(67)
    local a, b = tr:at(3.33), it:dense(3.33)
    assert.is_true(a.R == b.R and a.omega == b.omega) -- bit for bit
    local worst = 0
    for _, t in ipairs{0.01, 3.33, 7.77, 19.99} do
      local s = tr:at(t)
      local w = lf.exact.free_body(J, w0, t)
      worst = math.max(worst, (s.omega - w):norm())
      local k = math.floor(t / 0.05) + 1 -- the step's start: the interpolant adds nothing to its round-off
      local R0 = tr:state(k).R
      assert.is_true(s.t == t and (s.R:T() * s.R - I3):norm() < (R0:T() * R0 - I3):norm() + 1e-15)
    end
    assert.is_true(worst < 3e-9) -- (dlm_s6's own error near the flip at 10.9)
    assert.is_true(tr:at(10).omega == tr:state(201).omega) -- a recorded time: the recorded state
    has(errmsg(tr.at, tr, 25), "outside the run [0, 20]")
    has(errmsg(lf.run(body(), {method = "vlv", h = 0.1, T = 1}).at, lf.run(body(), {method = "vlv", h = 0.1, T = 1}), 0.5),
        "no dense output")
    has(errmsg(lf.run, body(), {method = "vlv", h = 0.1, T = 1, dense = true, every = 2}), "every = 2")
  end)
end)

describe("events", function()
  it("the Dzhanibekov flips: the times of omega_2 = 0 to 1e-10, their spacing the period 2 K(m) / lambda", function()
    local tr = lf.run(body(), {method = "rkmk_gl6", h = 0.025, T = 80, every = 400,
                               events = {{g = function(t, s) return s.omega[2] end, name = "flip"}}})
    -- the elliptic functions of the motion (J1 < J2 < J3, |L|^2 > 2 E J2: omega_2 ~ sn(lambda t, m))
    local E2, L2 = 0, 0
    for k = 1, 3 do E2, L2 = E2 + J[k] * w0[k] ^ 2, L2 + (J[k] * w0[k]) ^ 2 end
    local m = (J[2] - J[1]) * (E2 * J[3] - L2) / ((J[3] - J[2]) * (L2 - E2 * J[1]))
    local lambda = math.sqrt((J[3] - J[2]) * (L2 - E2 * J[1]) / (J[1] * J[2] * J[3]))
    local half = 2 * ellipk(m) / lambda -- sn changes sign every 2 K
    assert.is_true(#tr.events == 4)
    local dt, dspace = 0, 0
    for i, e in ipairs(tr.events) do
      assert.are.equal("flip", e.name)
      local exact = root(w2, e.t - 0.01, e.t + 0.01)
      dt = math.max(dt, math.abs(e.t - exact))
      if i > 1 then dspace = math.max(dspace, math.abs(e.t - tr.events[i - 1].t - half)) end
      assert.is_true(math.abs(e.state.omega[2]) < 1e-9 and e.state.t == e.t)
    end
    print(("  %d flips at %.6f, %.6f, ...: against the exact omega_2's roots %.1e, spacing against 2 K(m)/lambda = "
      .. "%.10f (m = %.6f): %.1e"):format(#tr.events, tr.events[1].t, tr.events[2].t, dt, half, m, dspace))
    assert.is_true(dt < 1e-10 and dspace < 1e-10)
  end)

  it("the heavy top's turning points (u' = 0, u = cos theta) at the roots of its effective-potential cubic", function()
    -- a Lagrange top J = (1, 1, 0.4), U = mgl u, u = R33 = e_z . R e_3; with alpha = 2E'/J1 (E' = E - L3^2/2J3),
    -- beta = 2 mgl/J1, a = L3/J1, b = Lz/J1: u'^2 = f(u) = (1 - u^2)(alpha - beta u) - (b - a u)^2
    -- (Goldstein, Classical Mechanics, 5.7); the turning points are the roots of f in [-1, 1] around u(0)
    local Jt, mgl = {1, 1, 0.4}, 2
    local top = lf.rigidbody{inertia = Jt, potential = lf.potential.top{mgl = mgl}, R = lf.so3.exp{0.6, 0.1, 0},
                             omega = {0.3, -0.4, 3}}
    local it0 = lf.integrator("vlv", top, {h = 0.1})
    local R0, w = it0.R, it0.omega
    local L3, Lz = Jt[3] * w[3], (R0 * lf.vec3{Jt[1] * w[1], Jt[2] * w[2], Jt[3] * w[3]})[3]
    local E = it0:energy()
    local alpha, beta = 2 * (E - L3 ^ 2 / (2 * Jt[3])) / Jt[1], 2 * mgl / Jt[1]
    local a, b = L3 / Jt[1], Lz / Jt[1]
    local function f(u) return (1 - u * u) * (alpha - beta * u) - (b - a * u) ^ 2 end
    local u0 = R0[3][3]
    local function neg(u) return -f(u) end
    local u1, u2 = root(neg, -1, u0), root(neg, u0, 1) -- f(+-1) <= 0 <= f(u0)
    local g = function(t, s) return s.R[3][1] * s.omega[2] - s.R[3][2] * s.omega[1] end -- u' = (R (w x e3))_z
    local tr = lf.run(top, {method = "rkmk_gl6", h = 0.01, T = 10, every = 100, events = {{g = g, name = "turn"}}})
    local worst = 0
    for _, e in ipairs(tr.events) do
      local u = e.state.R[3][3]
      worst = math.max(worst, math.min(math.abs(u - u1), math.abs(u - u2)))
    end
    print(("  heavy top: %d turning points between u1 = %.12f and u2 = %.12f (the cubic's roots): |u - root| <= %.1e")
      :format(#tr.events, u1, u2, worst))
    assert.is_true(#tr.events >= 4 and worst < 1e-10)
  end)

  it("a terminal event ends the run at its time with the state there; direction selects the crossings", function()
    local g = function(t, s) return s.omega[2] end
    local tr = lf.run(body(), {method = "vlv", h = 0.05, T = 80, events = {{g = g, stop = true, direction = "down"}}})
    local e = tr.events[1]
    assert.are.equal(1, #tr.events)
    assert.are.equal("event 1", e.name)
    assert.are.equal(e.t, tr.t[#tr.t]) -- the last sample is the event's
    assert.is_true(math.abs(tr.Pi2[#tr.t]) < 1e-9 and e.t > 10 and e.t < 11)
    -- g = 0 at the start: no event at t0
    local at0 = lf.run(body(), {method = "vlv", h = 0.05, T = 1, events = {{g = function(t) return t end}}})
    assert.are.equal(0, #at0.events)
    local up = lf.run(body(), {method = "vlv", h = 0.05, T = 40, events = {{g = g, direction = "up"}}})
    assert.is_true(#up.events == 1 and up.events[1].t > 30) -- the second flip, upwards
  end)

  it("lf.ensemble gives each member's events, the same with 1 and 2 workers", function()
    local spec = {n = 3, method = "rkmk_gl6", h = 0.05, T = 25,
                  make = function(i) return lf.rigidbody{inertia = J, omega = {0.01 * i, 1, 0.01}} end,
                  events = {{g = function(t, s) return s.omega[2] end, name = "flip"}}}
    spec.workers = 1
    local a = lf.ensemble(spec)
    spec.workers = 2
    local b = lf.ensemble(spec)
    assert.is_true(lf.ensemble.identical(a, b))
    for i = 1, 3 do assert.is_true(#a[i].trajectory.events == 1 and a[i].trajectory.events[1].name == "flip") end
    for i = 1, 3 do assert.is_true(math.abs(a[i].trajectory.events[1].state.omega[2]) < 1e-9) end
    assert.is_true(a[1].trajectory.events[1].t ~= a[2].trajectory.events[1].t) -- (members of their own)
  end)

  it("refuse bad events and g that fail or are not finite, naming the event", function()
    local run = function(ev) return errmsg(lf.run, body(), {method = "vlv", h = 0.1, T = 1, events = ev}) end
    has(run({{}}), "events[1].g must be a function")
    has(run({{g = print, when = 1}}), "unknown field 'when'")
    has(run({{g = function() return 0 end, direction = "left"}}), "direction must be")
    has(run({{g = function() return 0 / 0 end, name = "bad"}}), "event 'bad': g returned")
    has(run({{g = function() error("boom") end, name = "b"}}), "event 'b': g failed at t = 0: ")
    has(run(5), "option 'events' must be an array")
  end)
end)
