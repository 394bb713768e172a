-- SPDX-License-Identifier: GPL-3.0-or-later
-- Energy-preserving symmetric Lie group methods (Celledoni & Owren, "Preserving
-- first integrals with symmetric Lie group methods", §5): discrete-gradient methods keep the first
-- integral to round-off where the comparison methods do not.
--   (a) free rigid body, angular momentum m on the unit sphere, m' = m x I^-1 m (their Example 1):
--       the retraction methods ep2_s2 (Gonzalez (19)) and ep2_s2_avf (AVF (18)); trajectories,
--       energy and |m| over 1e4 steps, order 2 against the exact (Jacobi elliptic) solution.
--   (b) free rigid body attitude in unit quaternions (their §5.1, Fig. 2): ep2_avf, ep2_gonzalez,
--       ep4 against the explicit Heun RKMK method rkmk_heun; energy error over 1e4 steps, orders
--       against the exact attitude.
--   (c) St Venant–Kirchhoff pseudo-rigid body on T*GL(3) (their §5.2, Fig. 3): explicit Heun at half
--       the step, the symmetric midpoint Lie method (lie_midpoint: their (30) without the correction
--       term) and the energy-preserving ep2_gonzalez ((30)); energy errors and |det F_sym - det F_EP|.
-- Data (the paper's were lost; chosen here): I = diag(1, 2, 2.5),
-- m(0) = (cos 1.1, 0, sin 1.1); m0 = (0.3, -0.5, 0.8), q0 = (0.9, 0.2, -0.3, 0.25)/|.|; Lame
-- constants lambda = mu = 2, J = diag(1, 0.8, 0.6), F0 = exp(hat(0.1, -0.2, 0.3)) diag(1.05, 0.97, 1),
-- F0' = hat(0.3, 0.2, 1) F0 + D0, P0 = F0' J. Writes out/energy_preserving/summary.json and figures.
-- `--quick`: 1000 steps and three step sizes per order fit (for make test).
local lf = lf or require "lieflow"
local experiment = require "lieflow.experiment"
local study = experiment.start("energy_preserving", arg)
local quick, out, check = study.quick, study.out, study.check

local N = quick and 1000 or 10000
local S = study.summary
S.papers = {"[CO] §5 (Celledoni & Owren)"}
S.parameters = {steps = N, quick = quick}

local function clock() return lf.core.wall_time() end
local floor_ = 1e-17 -- log-axis floor for exact zeros
local function flo(a) local r = {} for i, v in ipairs(a) do r[i] = math.max(math.abs(v), floor_) end return r end

-- One run: n steps of h from the system's initial state, recording t and (H - H0)/|H0| every step;
-- the observer (optional) records more per step. Returns the record, the integrator and its cpu time.
local function run(sys, method, h, n, opts, observer)
  local o = {h = h}
  for k, v in pairs(opts or {}) do o[k] = v end
  local it = lf.integrator(method, sys, o)
  local H0 = sys:energy()
  local rec = {t = {0}, e = {0}, extra = {}}
  if observer then rec.extra[1] = observer(it) end
  local t0 = clock()
  for k = 1, n do
    it:step()
    rec.t[k + 1] = it.t
    rec.e[k + 1] = (it:energy() - H0) / math.abs(H0)
    if observer then rec.extra[k + 1] = observer(it) end
  end
  rec.cpu = clock() - t0
  rec.iterations_per_step = it.newton_iters / n
  return rec, it
end

-- the round-off random walk: rms of the per-step changes s, max |e| against s sqrt(N), and the
-- growth exponent of the running maximum between N/100 and N (a walk: ~1/2, a drift: 1)
local function walk(e)
  local n, s2 = #e - 1, 0
  for k = 2, #e do s2 = s2 + (e[k] - e[k - 1]) ^ 2 end
  local s = math.sqrt(s2 / n)
  local function runmax(m) local r = 0 for k = 1, m + 1 do r = math.max(r, math.abs(e[k])) end return r end
  local m1, m2 = runmax(math.max(1, n // 100)), runmax(n)
  local expo = (m1 > 0 and m2 > 0) and math.log(m2 / m1) / math.log(n / math.max(1, n // 100)) or 0
  return {rms_step = s, max = m2, max_over_walk = m2 / (s * math.sqrt(n)), growth_exponent = expo}
end

local function fit(hs, es) local slope = lf.fit_linear((function() local x = {} for i, h in ipairs(hs) do x[i] = math.log(h) end return x end)(),
  (function() local y = {} for i, e in ipairs(es) do y[i] = math.log(e) end return y end)()) return slope end

local order_steps = {}
for k = 0, quick and 2 or 4 do order_steps[#order_steps + 1] = 0.1 / 2 ^ k end
S.parameters.order_steps, S.parameters.order_T = order_steps, 2

-- ==================================================================== (a) S^2, retraction methods
print("(a) Free rigid body, angular momentum on S^2 (Example 1): retraction methods, h = 0.1")
local I = {1, 2, 2.5}
local m0 = lf.vec3{math.cos(1.1), 0, math.sin(1.1)}
local sa = lf.lie_ode{factors = {"s2"}, y0 = {m0}, f = "rigid_body_s2", params = {I = I}}
S.a = {I = I, m0 = {m0[1], m0[2], m0[3]}, H0 = sa:energy(), h = 0.1, methods = {}}
print(("  %-12s %14s %14s %10s %10s %9s"):format("method", "max|dH|/H0", "max||m|-1|", "order", "walk", "cpu s"))
local exact_a = function(t)
  local w = lf.exact.free_body(I, {m0[1] / I[1], m0[2] / I[2], m0[3] / I[3]}, t)
  return lf.vec3{I[1] * w[1], I[2] * w[2], I[3] * w[3]}
end
local series_a = {}
for _, m in ipairs{"ep2_s2", "ep2_s2_avf", "ep2_gonzalez", "rkmk_heun"} do
  local rec = run(sa, m, 0.1, N, nil, function(it) return math.abs(it.y[1]:norm() - 1) end)
  local errs = {}
  for i, h in ipairs(order_steps) do
    local it = lf.integrator(m, sa, {h = h}):step(math.floor(2 / h + 0.5))
    errs[i] = (it.y[1] - exact_a(2)):norm()
  end
  local o = fit(order_steps, errs)
  local r = {method = m, max_energy_error = experiment.max_abs(rec.e), max_norm_defect = experiment.max_abs(rec.extra),
             order = o, order_errors = errs, cpu_time = rec.cpu, walk = walk(rec.e)}
  S.a.methods[#S.a.methods + 1] = r
  series_a[#series_a + 1] = {label = m, data = flo(rec.e)}
  print(("  %-12s %14.2e %14.2e %10.3f %10.2f %9.2f"):format(m, r.max_energy_error, r.max_norm_defect, o, r.walk.max_over_walk, rec.cpu))
  if m ~= "rkmk_heun" then
    check(r.max_energy_error <= 1e-13, ("(a) %s: energy error %.2e > 1e-13"):format(m, r.max_energy_error))
    check(math.abs(o - 2) <= 0.1, ("(a) %s: order %.3f, expected 2"):format(m, o))
  else
    check(r.max_energy_error > 1e-6, "(a) rkmk_heun should not conserve the energy")
  end
  check(r.max_norm_defect <= 1e-13, ("(a) %s: |m| drifts (%.2e)"):format(m, r.max_norm_defect))
  if m == "ep2_s2" then series_a.t = rec.t end
end
lf.plot{x = series_a.t, y = series_a, logy = true, title = "(a) relative energy error, h = 0.1", xlabel = "t",
        ylabel = "|H - H0|/H0", file = out .. "/a_energy.png"}

-- Fig. 1: trajectories of ep2_s2 from several initial momenta on the unit sphere (gnuplot splot)
do
  local starts = {{1.1, 0}, {0.7, 0}, {0.3, 0}, {1.45, 0}, {0.2, 1.2}, {0.9, 1.9}, {-0.4, 2.6}, {0.05, 1.57}}
  local dat = io.open(out .. "/a_trajectories.dat", "w")
  for _, s in ipairs(starts) do
    local p = lf.vec3{math.cos(s[1]) * math.cos(s[2]), math.cos(s[1]) * math.sin(s[2]), math.sin(s[1])}
    local sys = lf.lie_ode{factors = {"s2"}, y0 = {p}, f = "rigid_body_s2", params = {I = I}}
    local it = lf.integrator("ep2_s2", sys, {h = 0.1})
    for _ = 0, quick and 200 or 600 do
      local m = it.y[1]
      dat:write(("%.17g %.17g %.17g\n"):format(m[1], m[2], m[3]))
      it:step()
    end
    dat:write("\n\n")
  end
  dat:close()
  local gp = io.open(out .. "/a_trajectories.gp", "w")
  gp:write([[
set terminal pngcairo size 800,800
set output 'a_trajectories.png'
set title '(a) free rigid body on S^2, ep2\_s2 (h = 0.1): trajectories'
set view equal xyz
set view 60, 30
set xyplane at -1
unset key
set parametric
set isosamples 24, 12
set urange [0:2*pi]
set vrange [-pi/2:pi/2]
splot cos(u)*cos(v), sin(u)*cos(v), sin(v) lc rgb '#dddddd', 'a_trajectories.dat' index 0:99 with lines lw 2
]])
  gp:close()
  if lf.gnuplot_available() then os.execute(("cd %s && gnuplot a_trajectories.gp"):format(out)) end
end

-- ==================================================================== (b) S^3 attitude
print("\n(b) Free rigid body attitude in unit quaternions (§5.1, Fig. 2), h = 0.1")
local Jb, mb = {1, 2, 2.5}, {0.3, -0.5, 0.8}
local q0 = {0.9, 0.2, -0.3, 0.25}
do local n = math.sqrt(q0[1] ^ 2 + q0[2] ^ 2 + q0[3] ^ 2 + q0[4] ^ 2) for i = 1, 4 do q0[i] = q0[i] / n end end
local sb = lf.lie_ode{factors = {"s3"}, y0 = {q0}, f = "free_rigid_quat", params = {J = Jb, m0 = mb}}
S.b = {J = Jb, m0 = mb, q0 = q0, H0 = sb:energy(), h = 0.1, methods = {}}
local R0 = lf.quat.to_matrix(q0)
local M0 = R0:T() * lf.vec3(mb)
local w0b = {M0[1] / Jb[1], M0[2] / Jb[2], M0[3] / Jb[3]}
local _, Rref = lf.exact.free_body(Jb, w0b, 2, R0)
print(("  %-13s %14s %10s %12s %10s %9s %8s"):format("method", "max|dH|/H0", "order", "err(h_min)", "walk", "cpu s", "it/step"))
local series_b, tb = {}, nil
for _, m in ipairs{"ep2_avf", "ep2_gonzalez", "ep4", "lie_midpoint", "rkmk_heun"} do
  local rec = run(sb, m, 0.1, N)
  local errs = {}
  for i, h in ipairs(order_steps) do
    local it = lf.integrator(m, sb, {h = h}):step(math.floor(2 / h + 0.5))
    errs[i] = (lf.quat.to_matrix(it.y[1]) - Rref):norm()
  end
  local o = fit(order_steps, errs)
  local nominal = m == "ep4" and 4 or 2
  local r = {method = m, max_energy_error = experiment.max_abs(rec.e), order = o, order_errors = errs, cpu_time = rec.cpu,
             walk = walk(rec.e), drift = lf.drift({t = rec.t, energy_error = rec.e}).verdict,
             iterations_per_step = rec.iterations_per_step}
  S.b.methods[#S.b.methods + 1] = r
  series_b[#series_b + 1] = {label = m, data = flo(rec.e)}
  tb = rec.t
  print(("  %-13s %14.2e %10.3f %12.2e %10.2f %9.2f %8.1f"):format(m, r.max_energy_error, o, errs[#errs], r.walk.max_over_walk,
    rec.cpu, rec.iterations_per_step))
  check(math.abs(o - nominal) <= (nominal == 4 and 0.15 or 0.1), ("(b) %s: order %.3f, expected %d"):format(m, o, nominal))
  if m:match("^ep") then
    check(r.max_energy_error <= 1e-13, ("(b) %s: energy error %.2e > 1e-13"):format(m, r.max_energy_error))
  else
    check(r.max_energy_error > 1e-6, ("(b) %s should not conserve the energy (%.2e)"):format(m, r.max_energy_error))
  end
end
lf.plot{x = tb, y = series_b, logy = true, title = "(b) attitude in quaternions: relative energy error, h = 0.1",
        xlabel = "t", ylabel = "|H - H0|/H0", file = out .. "/b_energy.png"}
do
  local y = {}
  for _, r in ipairs(S.b.methods) do y[#y + 1] = {label = r.method, data = r.order_errors} end
  lf.plot{x = order_steps, y = y, logx = true, logy = true, style = "linespoints",
          slopes = {{order = 2, label = "h^2"}, {order = 4, label = "h^4", through = {order_steps[1], S.b.methods[3].order_errors[1]}}},
          title = "(b) attitude error at t = 2 vs the exact solution", xlabel = "h", ylabel = "||R - R_exact||_F",
          file = out .. "/b_order.png"}
end

-- ==================================================================== (c) T*GL(3) pseudo-rigid body
print("\n(c) St Venant-Kirchhoff pseudo-rigid body on T*GL(3) (§5.2, Fig. 3), h = 0.05")
local Jc, lam, mu = {1, 0.8, 0.6}, 2, 2
local F0 = lf.so3.exp{0.1, -0.2, 0.3} * lf.mat3{{1.05, 0, 0}, {0, 0.97, 0}, {0, 0, 1}}
local Fd = lf.so3.hat{0.3, 0.2, 1} * F0 + lf.mat3{{0.05, 0.02, 0}, {0.02, -0.08, 0.01}, {0, 0.01, 0.03}}
local P0 = lf.mat3{{Fd[1][1] * Jc[1], Fd[1][2] * Jc[2], Fd[1][3] * Jc[3]}, {Fd[2][1] * Jc[1], Fd[2][2] * Jc[2], Fd[2][3] * Jc[3]},
                   {Fd[3][1] * Jc[1], Fd[3][2] * Jc[2], Fd[3][3] * Jc[3]}}
local sc = lf.lie_ode{factors = {"tgl3"}, y0 = {{F = F0, P = P0}}, f = "pseudo_rigid_svk",
                      params = {J = Jc, lambda = lam, mu = mu}}
local hc = 0.05
S.c = {J = Jc, lambda = lam, mu = mu, F0 = F0:totable(), P0 = P0:totable(), H0 = sc:energy(), h = hc, T = N * hc,
       methods = {}}
local function detF(it) return it.y[1].F:det() end
local runs = {}
print(("  %-22s %14s %12s %12s %9s %8s"):format("method", "max|dH|/H0", "min det F", "max det F", "cpu s", "it/step"))
for _, spec in ipairs{{"rkmk_heun", hc / 2, 2 * N}, {"lie_midpoint", hc, N}, {"ep2_gonzalez", hc, N}, {"ep2_avf", hc, N},
                      {"ep4", hc, N}} do
  local m, h, n = spec[1], spec[2], spec[3]
  local rec = run(sc, m, h, n, nil, detF)
  local dmin, dmax = math.huge, -math.huge
  for _, d in ipairs(rec.extra) do dmin, dmax = math.min(dmin, d), math.max(dmax, d) end
  local r = {method = m, h = h, steps = n, max_energy_error = experiment.max_abs(rec.e), det_min = dmin, det_max = dmax,
             cpu_time = rec.cpu, walk = walk(rec.e), drift = lf.drift({t = rec.t, energy_error = rec.e}).verdict,
             iterations_per_step = rec.iterations_per_step}
  runs[m] = rec
  S.c.methods[#S.c.methods + 1] = r
  print(("  %-22s %14.2e %12.4f %12.4f %9.2f %8.1f"):format(m .. (m == "rkmk_heun" and " (h/2)" or ""), r.max_energy_error, dmin,
    dmax, rec.cpu, rec.iterations_per_step))
  check(dmin > 0, ("(c) %s: det F <= 0"):format(m))
  if m:match("^ep") then
    check(r.max_energy_error <= 1e-13, ("(c) %s: energy error %.2e > 1e-13"):format(m, r.max_energy_error))
  end
end
-- why half the step for Heun: at h itself it blows up on this problem
do
  local it = lf.integrator("rkmk_heun", sc, {h = hc})
  local H0, worst, t_fail = sc:energy(), 0, nil
  for _ = 1, N do
    local ok = pcall(it.step, it)
    local e = ok and math.abs(it:energy() - H0) / H0 or math.huge
    if not ok or e ~= e or e > 1 then t_fail = it.t break end
    worst = math.max(worst, e)
  end
  S.c.heun_full_step = {h = hc, max_energy_error = worst, t_fail = t_fail}
  print(("  rkmk_heun at h = %g itself: %s"):format(hc, t_fail and ("energy error above 100%% (or a failed step) at t = %g"):format(t_fail)
    or ("max|dH|/H0 = %.2e up to t = %g"):format(worst, N * hc)))
end
local heun, sym, ep = S.c.methods[1], S.c.methods[2], S.c.methods[3]
check(heun.max_energy_error > 10 * sym.max_energy_error, "(c) Heun at h/2 should lose more energy than the symmetric method")
check(sym.max_energy_error > 1e-8 and sym.max_energy_error < 1e-2, ("(c) lie_midpoint energy error %.2e: expected small but not round-off"):format(sym.max_energy_error))
if not quick then -- (T = 50 in the quick run resolves too few oscillations for lf.drift)
  check(sym.drift == "bounded", "(c) the symmetric method's energy error should be bounded (lf.drift)")
  check(heun.drift == "drift", "(c) explicit Heun's energy error should drift (lf.drift)")
end
-- Fig. 3 bottom right: |det F_sym - det F_EP|
local ddiff, dmaxdiff = {}, 0
for k = 1, #runs.lie_midpoint.extra do
  ddiff[k] = math.abs(runs.lie_midpoint.extra[k] - runs.ep2_gonzalez.extra[k])
  dmaxdiff = math.max(dmaxdiff, ddiff[k])
end
S.c.det_difference_max = dmaxdiff
S.c.det_difference_final = ddiff[#ddiff]
print(("  |det F_sym - det F_EP|: max %.2e, at t = %g: %.2e"):format(dmaxdiff, N * hc, ddiff[#ddiff]))
local tc = runs.ep2_gonzalez.t
local heun_on_grid = {}
for k = 1, #tc do heun_on_grid[k] = runs.rkmk_heun.e[2 * k - 1] end
lf.plot{x = tc, y = {{label = "Heun RKMK, h/2", data = heun_on_grid}}, title = "(c) Fig. 3: explicit Heun (h = 0.025), (H - H0)/H0",
        xlabel = "t", ylabel = "(H - H0)/H0", file = out .. "/c_energy_heun.png"}
lf.plot{x = tc, y = {{label = "lie_midpoint (sym)", data = runs.lie_midpoint.e}}, title = "(c) Fig. 3: symmetric Lie method (h = 0.05), (H - H0)/H0",
        xlabel = "t", ylabel = "(H - H0)/H0", file = out .. "/c_energy_sym.png"}
lf.plot{x = tc, y = {{label = "ep2_gonzalez (EP)", data = runs.ep2_gonzalez.e}, {label = "ep4", data = runs.ep4.e}},
        title = "(c) Fig. 3: energy-preserving methods (h = 0.05), (H - H0)/H0", xlabel = "t", ylabel = "(H - H0)/H0",
        file = out .. "/c_energy_ep.png"}
lf.plot{x = tc, y = {{label = "|det F_sym - det F_EP|", data = flo(ddiff)}}, logy = true,
        title = "(c) Fig. 3: |det F_sym - det F_EP| (h = 0.05)", xlabel = "t", ylabel = "|det F difference|",
        file = out .. "/c_det_difference.png"}

-- orders on (c) against rk8pd
do
  local ref = lf.reference(sc, 2, {rtol = 1e-14, atol = 1e-14})
  S.c.orders = {}
  for _, m in ipairs{"ep2_gonzalez", "ep4", "lie_midpoint", "rkmk_heun"} do
    local errs = {}
    for i, h in ipairs(order_steps) do
      local it = lf.integrator(m, sc, {h = h}):step(math.floor(2 / h + 0.5))
      errs[i] = it:error(ref).y
    end
    local o = fit(order_steps, errs)
    local nominal = m == "ep4" and 4 or 2
    S.c.orders[m] = {order = o, errors = errs}
    print(("  order %-13s %.3f (nominal %d; errors %.2e .. %.2e at t = 2)"):format(m, o, nominal, errs[1], errs[#errs]))
    check(math.abs(o - nominal) <= 0.15, ("(c) %s: order %.3f, expected %d"):format(m, o, nominal))
  end
end

-- the EP errors are a round-off random walk, not a drift
print("\nEnergy-preserving runs: max|dH|/H0 vs the random walk of the per-step rounding (rms s): max/(s sqrt(N)),")
print("growth exponent of the running maximum from N/100 to N (walk ~0.5, drift 1)")
for _, P in ipairs{{"a", S.a}, {"b", S.b}, {"c", S.c}} do
  for _, r in ipairs(P[2].methods) do
    if r.method:match("^ep") then
      print(("  (%s) %-13s max %.2e  rms step %.2e  max/(s sqrt N) %.2f  exponent %.2f"):format(P[1], r.method,
        r.max_energy_error, r.walk.rms_step, r.walk.max_over_walk, r.walk.growth_exponent))
    end
  end
end

experiment.finish(study, {files = "Figures and summary.json", failure = "energy_preserving does not reproduce the paper",
  reproduced = {"The discrete-gradient methods keep the energy to round-off (<= 1e-13 relative) on all three problems;",
                "the explicit Heun method drifts, the symmetric midpoint method oscillates; orders 2 and 4 measured."}})
