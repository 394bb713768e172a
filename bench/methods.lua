-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow benchmark: steps per second of every method on the [BOS] stress test, with the
-- built-in C potential, with a Lua torque function, with the torque written in Lua, and with a Lua
-- potential U alone, compiled (its torque from the graph; compile = "auto") and interpreted
-- (compile = false: U called and differentiated at every evaluation).
-- Run: make bench  (or build/lieflow bench/methods.lua [seconds-per-case])
local lf = lf or require "lieflow"
local budget = tonumber(arg and arg[1]) or 0.25 -- CPU seconds per measurement

local R0 = lf.so3.exp{0, 0.7227, 0}
local Rm = lf.so3.exp{2.5 / math.sqrt(2), 0, 2.5 / math.sqrt(2)}
local I = lf.so3.I
local function U(R) return (lf.so3.dist(R, I) - 1) ^ 2 - 0.3 / lf.so3.dist(R, Rm) end
local C = lf.potential.stress{}
local function tau(R) return C:torque(R) end -- a Lua torque function (the work is the call overhead)
-- the same torque written out in Lua, as a user would ([BOS] eq. 12 differentiated by hand)
local function tau_lua(R)
  local D1, D2 = R - I, R - Rm
  local d1, d2 = D1:norm(), D2:norm()
  local M = Rm:T() * R
  local c1, c2 = 2 * (d1 - 1) / d1, 0.3 / (d2 * d2 * d2)
  return lf.vec3{c1 * (R[2][3] - R[3][2]) + c2 * (M[2][3] - M[3][2]),
                 c1 * (R[3][1] - R[1][3]) + c2 * (M[3][1] - M[1][3]),
                 c1 * (R[1][2] - R[2][1]) + c2 * (M[1][2] - M[2][1])}
end

local function body(pot, torque, compile)
  return lf.rigidbody{inertia = {2, 2, 4}, R = R0, omega = {0, 0, 0.625}, potential = pot, torque = torque, compile = compile}
end
local bodies = {
  C = body(C),                  -- built-in C potential
  call = body(U, tau, false),   -- Lua torque function that calls the C torque: the callback path itself
  lua = body(U, tau_lua, false),-- the torque written in Lua with vec3/mat3 arithmetic, called each time
  compiled = body(U),           -- the Lua U compiled, its torque from the graph
  interpreted = body(U, nil, false), -- the Lua U called and differentiated at each evaluation
}

-- steps/s: double the batch until it takes `budget` CPU seconds
local function rate(name, body)
  local it = lf.integrator(name, body, {h = 0.125})
  local n = 16
  while true do
    local t0 = os.clock()
    it:step(n)
    local dt = os.clock() - t0
    if dt >= budget then return n / dt end
    n = n * (dt < budget / 8 and 8 or 2)
  end
end

-- check the Lua torque is right before timing it
local dtau = (tau_lua(lf.so3.random(3)) - C:torque(lf.so3.random(3))):norm()
assert(dtau < 1e-12, "bench: the Lua torque disagrees with the C one: " .. dtau)

local cpu = require("lieflow.experiment").cpu_name()
print(("lieflow %s benchmark — stress test ([BOS]), h = 0.125, one core (%s)"):format(lf.version, cpu))
print("columns: steps/s with the C potential; with a Lua torque callback (calling the C torque); with the")
print("torque written in Lua (vec3/mat3 arithmetic); with a Lua U compiled (" .. bodies.compiled.compiled .. ");")
print("with the Lua U interpreted (differentiated at each evaluation); then the ratios C/each (slow-down factors).")
print(("%-14s %11s %11s %11s %11s %11s %7s %7s %7s %7s"):format("method", "C", "callback", "Lua arith", "compiled",
  "interp.", "C/call", "C/Lua", "C/comp", "C/int"))
for _, m in ipairs(lf.methods()) do
  if m.form == "rigid" and not m.free_body_only then
    local c, k, l = rate(m.name, bodies.C), rate(m.name, bodies.call), rate(m.name, bodies.lua)
    local a, i = rate(m.name, bodies.compiled), rate(m.name, bodies.interpreted)
    print(("%-14s %11.0f %11.0f %11.0f %11.0f %11.0f %7.2f %7.1f %7.2f %7.1f"):format(m.name, c, k, l, a, i, c / k,
      c / l, c / a, c / i))
  end
end

-- The generic Lie-group methods: steps/s on the rigid stress problem (as a Lie-group ODE, C potential)
-- and on two built-in C vector fields; each batch starts afresh from the initial state, so that the
-- explicit first-order methods stay in their stable range.
local function fresh_rate(name, sys, h)
  local n, total, time = 2000, 0, 0
  while time < budget do
    local it = lf.integrator(name, sys, {h = h})
    local t0 = os.clock()
    it:step(n)
    time = time + os.clock() - t0
    total = total + n
  end
  return total / time
end
local s3 = lf.lie_ode{factors = {"s3"}, y0 = {{1, 0, 0, 0}}, f = "free_rigid_quat",
                      params = {J = {0.9144, 1.098, 1.66}, m0 = {0.4, 0.9, -0.3}}}
local s2 = lf.lie_ode{factors = {"s2"}, y0 = {lf.vec3{0.3, -0.5, 0.6}:normalized()}, f = "s2_gradient_flow", params = {D = {1, 1, 3}}}
print()
print("generic Lie-group methods, steps/s (h = 0.05): the stress problem as a Lie ODE on SO(3) x R^3;")
print("the free rigid body's attitude on S^3; the gradient flow on S^2 (built-in C vector fields)")
print(("%-14s %11s %11s %11s"):format("method", "stress", "S3", "S2"))
for _, m in ipairs(lf.methods()) do
  if m.form == "lie_ode" and not m.adaptive then
    print(("%-14s %11.0f %11.0f %11.0f"):format(m.name, fresh_rate(m.name, bodies.C, 0.05),
      fresh_rate(m.name, s3, 0.05), fresh_rate(m.name, s2, 0.05)))
  end
end
