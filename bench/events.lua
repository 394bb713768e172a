-- SPDX-License-Identifier: GPL-3.0-or-later
-- The cost of dense output and events (lf.run's options at and events; scripts/lieflow/run/events.lua,
-- core/method/dense.c): the stress test with vlv, h = 0.01, 10^4 steps, CPU time, median of 5 interleaved
-- runs. Printed: a run recording every step; the same run with at = 10^4 times on the steps' grid and off
-- it (mid-step: each sample an interpolation, two evaluations of f at the step's ends); a run watching an
-- event g = omega_1 after every step (the run steps one at a time), and the evaluations of g per located
-- event (the interpolant's root, then the refinement by steps).
local lf = require "lieflow"
local body = lf.stress_system()
local N = 10000
local on, off = {}, {}
for i = 1, N do on[i], off[i] = i * 0.01, (i - 0.5) * 0.01 end
local calls = 0
local g = function(t, s) calls = calls + 1; return s.omega[1] end
local cases = {
  {"record every step", {every = 1}},
  {"at = 10^4 times on the grid", {at = on}},
  {"at = 10^4 times mid-step", {at = off}},
  {"an event watched every step", {every = 100, events = {{g = g}}}},
}
local function median(t) table.sort(t); return t[(#t + 1) // 2] end
local times = {}
for c = 1, #cases do times[c] = {} end
local located, evals = 0, 0
for _ = 1, 5 do
  for c, case in ipairs(cases) do
    local opts = {method = "vlv", h = 0.01, T = N * 0.01}
    for k, v in pairs(case[2]) do opts[k] = v end
    calls = 0
    local t0 = os.clock()
    local tr = lf.run(body, opts)
    times[c][#times[c] + 1] = os.clock() - t0
    if tr.events then located, evals = #tr.events, calls - (N + 1) end
  end
end
print(("\ndense output and events (stress test, vlv, h = 0.01, %d steps; CPU time, median of 5 interleaved runs)"):format(N))
local base = median(times[1])
for c, case in ipairs(cases) do
  local m = median(times[c])
  print(("  %-32s %8.1f ms  %5.2f x recording every step"):format(case[1], 1e3 * m, m / base))
end
print(("  the event: %d located, %.1f extra evaluations of g each (the interpolant's root, then steps)")
  :format(located, evals / math.max(located, 1)))
