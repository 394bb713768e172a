-- SPDX-License-Identifier: GPL-3.0-or-later
-- A first experiment: the stress test of [BOS]. Does the energy drift, and at what order do the methods converge?
local lf = lf or require "lieflow"
local body = lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7227, 0}, omega = {0, 0, 0.625},
                          potential = lf.potential.stress{alpha = 0.3}}

for _, method in ipairs{"eln", "vlv", "split_exact_s4"} do
  local traj = lf.run(body, {method = method, h = 0.125, T = 10000, every = 40})
  local drift = lf.drift(traj)
  local order = lf.order{system = body, method = method, T = 5, steps = {1/16, 1/32, 1/64}}
  print(("%-15s energy: %-7s slope %9.2e  max |E - E0| %8.2e   order %.3f   %.3f s"):format(
    method, drift.verdict, drift.slope, drift.max_error, order.order, traj.cpu_time))
  traj:plot{file = "out/first/" .. method .. ".png", title = method .. ", h = 1/8"}
end
