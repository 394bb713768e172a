-- SPDX-License-Identifier: GPL-3.0-or-later
-- Models written in Lua, at the speed of C: run with `lieflow examples/lua_models.lua [--quick]`.
--
-- A potential, a pair kernel or any function written in Lua is traced into an expression graph,
-- differentiated on it and compiled (docs/guide.md: "Compiled models"). This example writes a model that
-- lieflow does not have built in — a rigid body in a gravity-gradient field, as a spacecraft in a
-- circular orbit feels it when the orbit's rotation is neglected — and checks it: the compiled
-- torque against the torque derived by hand, a parameter sweep without recompiling, a built-in model
-- written in Lua against its C version (values, trajectories, speed), the dipole array as a pair
-- kernel, and lf.compile against central differences. Every check below is asserted.
local lf = lf or require "lieflow"
local quick = arg and arg[1] == "--quick"

local function check(ok, what, ...)
  if not ok then error(("lua_models: %s"):format(what:format(...)), 2) end
  print(("  ok  " .. what):format(...))
end
local function section(title) print(("\n== %s"):format(title)) end

-- ---------------------------------------------------------------- a new model
section("A rigid body in a gravity-gradient field")
-- U(R) = (3k/2) b.(J b), b = R^T e: the direction e (nadir) seen in the body frame. Perturbing
-- R -> R exp(eps hat y) gives b -> b - eps y x b, so dU = -3k y.(b x J b) and the body torque
-- (tau . y = -dU) is tau = 3k b x J b.
local J = lf.vec3{1.2, 1.6, 2.0}
local function gravity_gradient(R, p)
  local b = R:T() * p.e
  return 1.5 * p.k * (b.x * b.x * J.x + b.y * b.y * J.y + b.z * b.z * J.z)
end
local params = {k = 3e-3, e = lf.vec3{0, 0, 1}}
local sat = lf.rigidbody{inertia = J, R = lf.so3.exp{0.4, -0.3, 0.2}, omega = {0.01, 0.02, 0.05},
                         potential = gravity_gradient, params = params}
print("  sys.compiled: " .. sat.compiled)
local worst = 0
for seed = 1, 20 do
  local R = lf.so3.random(seed)
  local b = R:T() * params.e
  local Jb = lf.vec3{J.x * b.x, J.y * b.y, J.z * b.z}
  local tau = 3 * params.k * b:cross(Jb)
  worst = math.max(worst, (sat:torque(R) - tau):norm() / math.max(tau:norm(), 1e-300))
end
check(worst <= 1e-13, "compiled torque = 3k b x J b at 20 random attitudes: worst relative difference %.1e", worst)

-- a libration: the energy of vlv stays bounded (symplectic), over many periods
local it = lf.integrator("vlv", sat, {h = 0.5})
local E0, dE = it:energy(), 0
for _ = 1, quick and 200 or 20000 do
  it:step(10)
  dE = math.max(dE, math.abs(it:energy() - E0))
end
check(dE <= 1e-3 * math.abs(E0), "vlv over t = %g: max |E - E0| = %.2e (|E0| = %.2e)", it.t, dE, math.abs(E0))

-- ---------------------------------------------------------------- parameters
section("A parameter sweep: set_params changes inputs of the compiled code, nothing is compiled again")
local before = sat.compiled
local omegas = {}
for _, k in ipairs{1e-3, 3e-3, 1e-2} do
  sat:set_params{k = k}
  local r = lf.integrator("vlv", sat, {h = 0.5}):step(quick and 100 or 2000)
  omegas[#omegas + 1] = r.omega:norm()
  print(("  k = %-6g  |omega| at t = %g: %.6f"):format(k, r.t, omegas[#omegas]))
end
check(sat.compiled == before and omegas[1] ~= omegas[3], "the same module (%s) for every k, different motions",
      sat.compiled:match("^%a+"))

-- ---------------------------------------------------------------- a built-in written in Lua
section("The stress-test potential of Bou-Rabee, Ortolan & Saccon, written in Lua with plain math")
local Rm = lf.so3.exp{2.5 / math.sqrt(2), 0, 2.5 / math.sqrt(2)}
local function stress(R, p)
  local s1, s2 = 0, 0
  for i = 1, 3 do
    for j = 1, 3 do
      s1 = s1 + (R[i][j] - (i == j and 1 or 0)) ^ 2
      s2 = s2 + (R[i][j] - Rm[i][j]) ^ 2
    end
  end
  return (math.sqrt(s1) - 1) ^ 2 - p.alpha / math.sqrt(s2)
end
local function body(pot, compile)
  return lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7227, 0}, omega = {0, 0, 0.625}, potential = pot,
                      params = type(pot) == "function" and {alpha = 0.3} or nil, compile = compile}
end
local systems = {{"C built-in", body(lf.potential.stress{alpha = 0.3})}, {"Lua, compiled", body(stress)},
                 {"Lua, tape", body(stress, "tape")}, {"Lua, interpreted", body(stress, false)}}
local n = quick and 200 or 20000
for k, s in ipairs(systems) do
  local m = k == 4 and math.max(1, n // 20) or n -- (the interpreted path: fewer steps)
  local its = lf.integrator("eln", s[2], {h = 0.125})
  local t0 = os.clock()
  its:step(m)
  local rate = m / (os.clock() - t0)
  local d = (its.R - lf.integrator("eln", systems[1][2], {h = 0.125}):step(m).R):norm()
  print(("  %-18s %12.0f steps/s   |R - R_C| after %d steps: %.1e   (%s)"):format(s[1], rate, m, d, s[2].compiled))
  if k > 1 then check(d <= 1e-11, "%s follows the C trajectory to 1e-11", s[1]) end
end

-- ---------------------------------------------------------------- many bodies: a pair kernel
section("The 4 x 4 array of magnetic needles as a pair kernel")
local q, pos = {}, {}
for i = 1, 16 do
  q[i] = lf.vec3{math.cos(0.7 * i), math.sin(0.7 * i), 0.2 * math.sin(1.3 * i)}:normalized()
  pos[i] = lf.vec3{0.024 * ((i - 1) % 4), 0.024 * ((i - 1) // 4), 0}
end
local builtin = lf.spheres.dipoles{rows = 4, cols = 4, q = q}
local function dipole(qi, qj, r, p) -- two dipoles along q_i, q_j at r = x_j - x_i
  local r2 = r:dot(r)
  return p.kappa * (qi:dot(qj) - 3 * qi:dot(r) * qj:dot(r) / r2) / (r2 * math.sqrt(r2))
end
local needles = lf.spheres{M = builtin.M, q = q, positions = pos, pair = dipole, params = {kappa = 1e-7 * 0.1 ^ 2}}
print("  sys.compiled: " .. needles.compiled)
local g1, g2, gw = needles:gradient(), builtin:gradient(), 0
for i = 1, 16 do gw = math.max(gw, (g1[i] - g2[i]):norm() / g2[i]:norm()) end
check(gw <= 1e-12, "gradients = the built-in dipoles' to %.1e", gw)
local a = lf.integrator("eln_spatial", needles, {h = 1e-3}):step(quick and 50 or 2000)
local b = lf.integrator("eln_spatial", builtin, {h = 1e-3}):step(quick and 50 or 2000)
local qd = 0
for i = 1, 16 do qd = math.max(qd, (a.q[i] - b.q[i]):norm()) end
check(qd <= 1e-11, "eln_spatial trajectories agree to %.1e after t = %g", qd, a.t)

-- ---------------------------------------------------------------- any function
section("lf.compile: any function of numbers, vec3 and mat3, with its gradient")
local f = lf.compile(function(R, x, p) return p.c * lf.so3.angle(R) ^ 2 + (R * x):dot(x) end,
                     {args = {"mat3", "vec3"}, params = {c = 0.7}})
local R, x = lf.so3.exp{0.3, 0.1, -0.2}, lf.vec3{1, -2, 0.5}
local _, gR, gx = f:gradient(R, x)
local e, dmax = 1e-6, 0
for k = 1, 3 do
  local dx = lf.vec3{k == 1 and e or 0, k == 2 and e or 0, k == 3 and e or 0}
  local fd = (f(R, x + dx) - f(R, x - dx)) / (2 * e)
  dmax = math.max(dmax, math.abs(fd - gx[k]))
end
print(("  %s; d/dR (a mat3):\n%s"):format(tostring(f), tostring(gR)))
check(dmax <= 1e-8, "the gradient in x = central differences to %.1e", dmax)
print("\nEvery claim of lua_models.lua holds.")
