-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow benchmark: systems on spheres (Ortolan's thesis §7.2).
--  1. steps/s of eln_spatial, rattle, rkmk4 and rkmk_gl4 (the thesis's fixed-point iteration) on
--     rows x cols arrays of magnetic needles, 4 x 4, 16 x 16 and 32 x 32 (n = 16, 256, 1024), h = 0.01,
--     and the growth of the cost per step between the sizes against the n^2 of the pair sum;
--  2. the run times of the thesis's T = 200, h = 0.01 runs (Tables 7.1-7.3) as ratios to ELN, beside
--     the thesis's MATLAB ratios (and its text's "227 times" for RKMKGL4/ELN on the pendulum).
-- CPU time (os.clock). Run: make bench  (or build/lieflow bench/spheres.lua [seconds-per-case])
local lf = lf or require "lieflow"
local S = require "lieflow.spheres_study"
local budget = tonumber(arg and arg[1]) or 0.5 -- CPU seconds per measurement

local cpu = require("lieflow.experiment").cpu_name()

-- needles along e1, needle 1 spinning, the last one tilted (the thesis's initial data for 4 x 4)
local function needles(rows, cols)
  local n = rows * cols
  local q, w = {}, {}
  for i = 1, n do q[i], w[i] = {1, 0, 0}, {0, 0, 0} end
  q[n] = {0.353508623948073, 0.353608626387662, -0.866021126843087}
  w[1] = {0, 0.5, 0}
  return lf.spheres.dipoles{rows = rows, cols = cols, q = q, omega = w}
end

-- steps/s: one integrator from the initial state, batches doubled until one takes `budget` seconds
-- (the whole measurement stays within the first ~2 budgets of simulated time)
local function rate(m, sys)
  local it = S.integrator(m, sys, 0.01)
  local n = 1
  while true do
    local t0 = os.clock()
    it:step(n)
    local dt = os.clock() - t0
    if dt >= budget then return n / dt, it.f_evals / it.steps end
    n = n * (dt < budget / 8 and 8 or 2)
  end
end

print(("lieflow %s benchmark — systems on spheres, one core (%s)"):format(lf.version, cpu))
print("\n1. Arrays of magnetic needles (lf.spheres.dipoles), h = 0.01: steps/s, and the growth of the cost per step")
print("   between the sizes beside that of the pair sum, n^2 (256 from 4 x 4 to 16 x 16, 16 from 16 x 16 to 32 x 32)")
local sizes = {{4, 4}, {16, 16}, {32, 32}}
local rates, fev = {}, {}
print(("%-10s %12s %12s %12s   %14s %14s   %s"):format("method", "4 x 4", "16 x 16", "32 x 32", "16x16 : 4x4", "32x32 : 16x16",
  "f evals/step"))
for _, m in ipairs(S.methods) do
  rates[m.name], fev[m.name] = {}, {}
  for k, sz in ipairs(sizes) do rates[m.name][k], fev[m.name][k] = rate(m, needles(sz[1], sz[2])) end
  local r, e = rates[m.name], fev[m.name]
  print(("%-10s %12.1f %12.2f %12.3f   %14.1f %14.2f   %.1f, %.1f, %.1f"):format(m.label, r[1], r[2], r[3], r[1] / r[2],
    r[2] / r[3], e[1], e[2], e[3]))
end
print(("%-10s %12s %12s %12s   %14d %14d"):format("n^2", "", "", "", 256, 16))
local g = rates.rkmk_gl4
print(("RKMKGL4 per f evaluation (its fixed-point iteration count depends on the motion): %.1f and %.2f"):format(
  g[1] / g[2] * fev.rkmk_gl4[2] / fev.rkmk_gl4[1], g[2] / g[3] * fev.rkmk_gl4[3] / fev.rkmk_gl4[2]))
print("(16 -> 256 needles grows less than n^2: at 4 x 4 the O(n) work per step (rotations, dexpinv) is a good part of")
print(" the step; from 256 to 1024 needles the O(n^2) pair sum dominates every method)")

print("\n2. The thesis's runs (T = 200, h = 0.01): CPU time as ratios to ELN, mean of 3 interleaved runs, vs MATLAB")
local q1 = {0.577350269189626, 0.577350269189626, -0.577350269189626}
local systems = {
  {"pendulum", "spherical pendulum", lf.spheres.pendulum{m = 2, l = 2, g = 9.81, q = q1, omega = {1, 1, 2}}},
  {"double_pendulum", "double pendulum", lf.spheres.double_pendulum{m1 = 2, m2 = 1, l1 = 1, l2 = 1, g = 9.81,
    up = {0, 0, -1}, q = {{0.866019052628739, 0, 0.500011000363013}, {0, 0, -1}},
    qdot = {{0, 0.865980947790423, 0}, {-1, 0, 0}}}},
  {"dipoles", "4 x 4 needles", needles(4, 4)},
}
print(("%-20s %-10s %12s %12s %12s"):format("example", "method", "lieflow s", "lieflow/ELN", "MATLAB/ELN"))
local silent = print
for _, s in ipairs(systems) do
  print = function() end -- S.timings prints its own table; here only the ratios
  local ok, t = pcall(S.timings, s[3], s[1], {h = 0.01, T = 200, reps = 3})
  print = silent
  if not ok then error(t) end
  for _, m in ipairs(S.methods) do
    local r = t[m.name]
    print(("%-20s %-10s %12.4f %12.2f %12.2f"):format(s[2], m.label, r.cpu, r.ratio, r.matlab_ratio))
  end
  if s[1] == "pendulum" then
    print(("%-20s RKMKGL4/ELN: thesis text 227, its Table 7.1 %.1f, lieflow %.1f; RKMKGL4/RKMK4: text 'five', table %.2f, lieflow %.2f"):format(
      "", 83.17 / 0.34, t.rkmk_gl4.ratio, 83.17 / 17.41, t.rkmk_gl4.cpu / t.rkmk4.cpu))
  end
end
