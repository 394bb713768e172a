-- SPDX-License-Identifier: GPL-3.0-or-later
-- A short guided tour of lieflow's Lie group maps: run with `lieflow examples/tour.lua`
-- (or `make demo`). Everything printed is computed here and then.
local lf = lf or require "lieflow"
local quick = arg and arg[1] == "--quick"

local function section(title) print(("\n== %s"):format(title)) end
local function show(label, value) print(("%-46s %s"):format(label, tostring(value))) end

section("Vectors and matrices")
local v = lf.vec3{1, 2, 3}
local M = lf.mat3{{0, -1, 0}, {1, 0, 0}, {0, 0, 1}}
show("v = lf.vec3{1, 2, 3}", v)
show("M * v (M = rotation by 90° about z)", M * v)
show("v:cross{0, 0, 1}, v:dot(v), v:norm()", ("%s  %g  %.6f"):format(tostring(v:cross{0, 0, 1}), v:dot(v), v:norm()))

section("SO(3): R maps body to space, R' = R hat(w)")
local x = lf.vec3{0.3, -0.2, 0.9}
local R = lf.so3.exp(x)
show("R = so3.exp{0.3, -0.2, 0.9}", "\n" .. tostring(R))
show("so3.log(R) (recovers x)", lf.so3.log(R))
show("||R^T R - I||, det R", ("%.2e  %.17g"):format(lf.so3.orth_error(R), R:det()))
show("hat(x) * v == x:cross(v)", tostring(lf.so3.hat(x) * v) .. "  " .. tostring(x:cross(v)))
show("cay(x) (Cayley) vs exp: dist", ("%.3e (they agree to second order)"):format(lf.so3.dist(lf.so3.cay(x), R)))
local small = lf.vec3{1e-9, 0, 0}
show("log(exp(x)) at |x| = 1e-9, relative error", ("%.1e"):format((lf.so3.log(lf.so3.exp(small)) - small):norm() / 1e-9))
local Rpi = lf.so3.exp{0, math.pi, 0}
show("angle of exp{0, pi, 0}", ("%.17g"):format(lf.so3.angle(Rpi)))

section("Right-trivialized differentials: d/dt exp(x(t)) = hat(dexp(x) x') exp(x)")
local d, e = lf.vec3{0.2, 0.1, -0.4}, 1e-6
local fd = (lf.so3.exp(x + e * d) - lf.so3.exp(x - e * d)) * (1 / (2 * e)) * R:T()
show("finite difference vee(...)", lf.so3.vee(fd))
show("dexp(x) * d", lf.so3.dexp(x) * d)
show("dexp(x) * dexpinv(x) - I (Frobenius)", ("%.1e"):format((lf.so3.dexp(x) * lf.so3.dexpinv(x) - lf.mat3()):norm()))

section("Distances ([BOS] eq. 11) and the nearest rotation")
local R2 = lf.so3.random(7)
show("so3.dist(R, R2) = sqrt(2 tr(I - R^T R2))", ("%.15f"):format(lf.so3.dist(R, R2)))
show("so3.angle(R, R2) (geodesic)", ("%.15f"):format(lf.so3.angle(R, R2)))
local noisy = R + lf.mat3{1e-3, 0, 0, 0, 0, 2e-3, 0, 0, 0}
show("so3.project(R + noise): distance back to R", ("%.2e"):format(lf.so3.dist(lf.so3.project(noisy), R)))

section("The sphere S^2 and unit quaternions [w, x, y, z]")
local p, q = lf.vec3{1, 0, 0}, lf.vec3{0, 1, 0}
show("s2.dist(e1, e2) = pi/2", ("%.15f"):format(lf.s2.dist(p, q)))
show("s2.midpoint(e1, e2)", lf.s2.midpoint(p, q))
local qt = lf.quat.from_matrix(R)
show("quat.from_matrix(R)", ("{%.6f, %.6f, %.6f, %.6f}"):format(qt[1], qt[2], qt[3], qt[4]))
show("quat.to_matrix back: dist to R", ("%.1e"):format(lf.so3.dist(lf.quat.to_matrix(qt), R)))

section("A rigid body in the stress-test potential of [BOS]")
local body = lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7227, 0}, omega = {0, 0, 0.625},
                          potential = lf.potential.stress{alpha = 0.3}}
local steps = quick and 800 or 80000
for _, name in ipairs{"eln", "vlv"} do
  local it = lf.integrator(name, body, {h = 0.125})
  local E0 = it:energy()
  it:step(steps)
  show(("%s: energy error after %d steps (t = %g)"):format(name, steps, it.t), ("%.3e"):format(it:energy() - E0))
end
print("\nSee docs/guide.md for the module, docs/methods.md for the integrators and docs/experiments.md\nfor the experiments.")
