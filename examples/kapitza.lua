-- SPDX-License-Identifier: GPL-3.0-or-later
-- Kapitza's pendulum: a pendulum whose pivot oscillates fast along the vertical, z_p = a cos(w t), stands
-- upside down when a^2 w^2 > 2 g l (Kapitza 1951; Landau & Lifshitz, Mechanics §30). Written as a rigid
-- body with a fixed point (the pivot) and a forcing of the time: in the pivot's frame gravity becomes
-- g_eff(t) = g + z_p''(t) = g - a w^2 cos(w t), and the body feels the torque of U = m g_eff(t) l e3 . (R chi)
-- (chi = l e3 in the body), tau = m g_eff(t) l (R^T e3) x e3, here a Lua function of (t, state), traced and
-- compiled (lf.rigidbody{forcing = ...}). With J = (m l^2, m l^2, J3) and no spin about the rod the body is
-- the spherical pendulum of length l.
-- Averaging over the fast motion (Landau & Lifshitz §30) gives the effective potential of the tilt theta
-- from the upward vertical, U_eff = m g l cos(theta) + m a^2 w^2 / 4 sin^2(theta): the inverted position is
-- stable when a^2 w^2 > 2 g l, and oscillates there with Omega^2 = a^2 w^2 / (2 l^2) - g / l (corrections of
-- relative order (Omega/w)^2 and (a/l)^2).
--  1. the forcing at a = 0 is the heavy top: the run equals lf.potential.top's to round-off;
--  2. above the threshold (a w = 10 > sqrt(2 g l) = 4.43) the pendulum released 0.1 rad from the top stays
--     up; the slow frequency (zero crossings of the tilt averaged over each fast period) against Omega,
--     for w = 200 and 400 at the same a w (the error must shrink) and for vlv and split_exact;
--  3. Omega^2 against a^2 w^2 over a w = 7 .. 12: slope 1/(2 l^2) and the threshold, where Omega^2
--     extrapolates to 0, against sqrt(2 g l);
--  4. below the threshold (a w = 3) the pendulum falls (the tilt passes pi/2).
-- Writes out/kapitza/summary.json and a figure. `--quick`: shorter runs.
local lf = lf or require "lieflow"
local experiment = require "lieflow.experiment"
local study = experiment.start("kapitza", arg)
local quick, out, summary, check = study.quick, study.out, study.summary, study.check
local sqrt, pi, abs = math.sqrt, math.pi, math.abs
local clock = os.clock()

local g, l, m = 9.81, 1, 1
local threshold = sqrt(2 * g * l)
local e3 = lf.vec3{0, 0, 1}

-- the pendulum in the pivot's frame: the forcing of t (params a, w), released at tilt theta0 at rest
local function pendulum(a, w, theta0, extra)
  local spec = {inertia = {m * l ^ 2, m * l ^ 2, 0.2 * m * l ^ 2}, R = lf.so3.exp(lf.vec3{theta0, 0, 0}),
                omega = {0, 0, 0}, params = {a = a, w = w},
                forcing = function(t, s, p)
                  local k = m * l * (g - p.a * p.w ^ 2 * math.cos(p.w * t))
                  return {torque = k * (s.R:T() * e3):cross(l * e3)}
                end}
  for k, v in pairs(extra or {}) do spec[k] = v end
  return lf.rigidbody(spec)
end

-- the tilt from the upward vertical in the plane of the motion: R = R_x(theta) has R e3 = (0, -sin, cos)
local function tilt(R) return math.atan(-R[2][3], R[3][3]) end

-- a run of n fast periods, nf steps each: the tilt at every step, and averaged over each fast period
local function run(method, a, w, periods, nf)
  local sys = pendulum(a, w, 0.1)
  local h = 2 * pi / w / nf
  local it = lf.integrator(method, sys, {h = h})
  local th, avg, tavg = {tilt(it:state().R)}, {}, {}
  local sum = 0
  for k = 1, periods * nf do
    it:step(1)
    th[k + 1] = tilt(it:state().R)
    sum = sum + th[k + 1]
    if k % nf == 0 then -- the mean over the last fast period, at its middle
      avg[#avg + 1], tavg[#tavg + 1], sum = sum / nf, (k - nf / 2) * h, 0
    end
  end
  return {h = h, theta = th, avg = avg, tavg = tavg, compiled = sys.forcing_info.compiled}
end

-- the slow angular frequency: zero crossings of the averaged tilt (linear interpolation), fitted
local function slow_frequency(r)
  local z = {}
  for k = 2, #r.avg do
    local a, b = r.avg[k - 1], r.avg[k]
    if a * b < 0 then z[#z + 1] = r.tavg[k - 1] + (r.tavg[k] - r.tavg[k - 1]) * a / (a - b) end
  end
  if #z < 3 then return nil, #z end
  return pi * (#z - 1) / (z[#z] - z[1]), #z -- crossings every half period
end

local function max_abs(t) local mx = 0 for _, v in ipairs(t) do mx = math.max(mx, abs(v)) end return mx end

-- 1. a = 0: the heavy top
do
  local R0 = lf.so3.exp(lf.vec3{0.1, 0, 0})
  local forced = lf.integrator("vlv", pendulum(0, 200, 0.1), {h = 1e-3})
  local top = lf.integrator("vlv", lf.rigidbody{inertia = {1, 1, 0.2}, R = R0, omega = {0, 0, 0},
                                                potential = lf.potential.top{mgl = m * g * l, chi = {0, 0, 1}}}, {h = 1e-3})
  forced:step(2000)
  top:step(2000)
  local d = forced:error(top:state())
  summary.heavy_top_difference = {R = d.R, omega = d.omega}
  print(("1. a = 0: the forced pendulum against lf.potential.top, 2000 vlv steps: |R - R_top| = %.1e, |w - w_top| = %.1e")
    :format(d.R, d.omega))
  check(d.R < 1e-12 and d.omega < 1e-12, "the forcing at a = 0 must be the heavy top's torque")
end

-- 2. above the threshold: stays up, slow frequency against Kapitza's Omega
local periods = quick and 400 or 1600
local cases = {}
print(("\n2. a w = 10 (threshold sqrt(2 g l) = %.3f), released 0.1 rad from the top, %d fast periods, 32 steps each")
  :format(threshold, periods))
print(("   %-12s %6s %7s %10s %10s %12s %10s  %s"):format("method", "w", "a", "max tilt", "Omega", "Omega_Kap", "rel.err", "forcing"))
for _, c in ipairs{{"vlv", 200}, {"split_exact", 200}, {"vlv", 400}} do
  local method, w = c[1], c[2]
  local a = 10 / w
  local r = run(method, a, w, periods * w // 200, 32)
  local Om, nz = slow_frequency(r)
  local OmK = sqrt(a ^ 2 * w ^ 2 / (2 * l ^ 2) - g / l)
  local row = {method = method, w = w, a = a, max_tilt = max_abs(r.theta), omega_slow = Om, omega_kapitza = OmK,
               rel_error = Om and Om / OmK - 1, crossings = nz, compiled = r.compiled}
  cases[#cases + 1] = row
  print(("   %-12s %6d %7.4f %10.4f %10.5f %12.5f %10.2e  %s"):format(method, w, a, row.max_tilt, Om or 0, OmK,
    row.rel_error or 0, r.compiled))
  check(row.max_tilt < 0.25, ("%s, w = %d: the inverted pendulum must stay up (max tilt %.3f)"):format(method, w, row.max_tilt))
  check(Om and abs(row.rel_error) < 0.02,
    ("%s, w = %d: slow frequency %s vs Kapitza's %.5f (more than 2%%)"):format(method, w, tostring(Om), OmK))
end
summary.above_threshold = cases
check(abs(cases[3].rel_error) < abs(cases[1].rel_error),
  ("the averaged theory must improve with w at fixed a w: %.2e (w = 400) vs %.2e (w = 200)"):format(
    cases[3].rel_error, cases[1].rel_error))
check(abs(cases[1].omega_slow - cases[2].omega_slow) < 1e-3 * cases[1].omega_slow,
  "vlv and split_exact must measure the same slow frequency")

-- 3. Omega^2 against a^2 w^2: slope 1/(2 l^2), threshold where Omega^2 = 0
local X, Y = {}, {}
local w3 = 400
for _, aw in ipairs{7, 8.5, 10, 12} do
  local r = run("split_exact", aw / w3, w3, (quick and 300 or 1000) * w3 // 200, 32)
  local Om = slow_frequency(r)
  X[#X + 1], Y[#Y + 1] = aw ^ 2, Om ^ 2
end
local slope, intercept = lf.fit_linear(X, Y)
local aw_c = sqrt(-intercept / slope)
summary.threshold = {aw2 = X, Omega2 = Y, slope = slope, intercept = intercept, measured = aw_c, theory = threshold}
print(("\n3. Omega^2 against a^2 w^2 (w = %d): slope %.5f (theory 1/(2 l^2) = 0.5), intercept %.4f (-g/l = %.4f),")
  :format(w3, slope, intercept, -g / l))
print(("   threshold a w where Omega^2 = 0: %.4f, theory sqrt(2 g l) = %.4f (%.2e relative)"):format(aw_c, threshold,
  aw_c / threshold - 1))
check(abs(slope / 0.5 - 1) < 0.02, ("slope of Omega^2 against a^2 w^2: %.5f, expected 0.5"):format(slope))
check(abs(aw_c / threshold - 1) < 0.02, ("measured threshold %.4f vs sqrt(2 g l) = %.4f"):format(aw_c, threshold))

-- 4. below the threshold: it falls
local below = run("vlv", 3 / 200, 200, quick and 200 or 400, 32)
summary.below_threshold = {aw = 3, max_tilt = max_abs(below.theta)}
print(("\n4. a w = 3 < %.3f: max tilt %.3f rad (falls past pi/2)"):format(threshold, summary.below_threshold.max_tilt))
check(summary.below_threshold.max_tilt > pi / 2, "below the threshold the pendulum must fall")

-- the figure: the tilt over the first slow periods (w = 200), with the averaged one and the theory
do
  local r = run("vlv", 10 / 200, 200, 400, 32)
  local x, th, kap = {}, {}, {}
  local OmK = sqrt(50 - g)
  for k = 1, #r.theta, 4 do
    local t = (k - 1) * r.h
    x[#x + 1], th[#th + 1], kap[#kap + 1] = t, r.theta[k], 0.1 * math.cos(OmK * t)
  end
  lf.plot{x = x, y = {{label = "tilt from the top (vlv, w = 200, a w = 10)", data = th},
                      {label = "0.1 cos(Omega t), Omega^2 = a^2 w^2/(2 l^2) - g/l", data = kap}},
          title = "Kapitza's pendulum upside down", xlabel = "t (s)", ylabel = "tilt (rad)", style = "lines",
          file = out .. "/kapitza.png"}
end

summary.parameters = {g = g, l = l, m = m, quick = quick, steps_per_fast_period = 32}
summary.cpu_seconds = os.clock() - clock
experiment.finish(study, {files = "Figures and summary.json", failure = "Kapitza's pendulum does not follow the theory",
  reproduced = {
    ("Reproduced: the inverted pendulum stays up above a^2 w^2 = 2 g l, with the slow frequency of the averaged potential to %.1e (w = 200) and %.1e (w = 400);")
      :format(abs(cases[1].rel_error), abs(cases[3].rel_error)),
    ("the threshold from Omega^2 -> 0 at a w = %.4f (sqrt(2 g l) = %.4f); below it the pendulum falls."):format(aw_c, threshold)}})
