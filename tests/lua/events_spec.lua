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

  it("a terminal event ends the run at its time with the state there; direction selects the crossings", function()
    local g = function(t, s) return s.omega[2] end
    local tr = lf.run(body(), {method = "vlv", h = 0.05, T = 80, events = {{g = g, stop = true, direction = "down"}}})
    local e = tr.events[1]
    assert.are.equal(1, #tr.events)
    assert.are.equal("event 1", e.name)
    assert.are.equal(e.t, tr.t[#tr.t]) -- the last sample is the event's
    assert.is_true(math.abs(tr.Pi2[#tr.t]) < 1e-9 and e.t > 10 and e.t < 11)
    local up = lf.run(body(), {method = "vlv", h = 0.05, T = 40, events = {{g = g, direction = "up"}}})
    assert.is_true(#up.events == 1 and up.events[1].t > 30) -- the second flip, upwards
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
