-- SPDX-License-Identifier: GPL-3.0-or-later
-- The slow Lagrangian top of [K] §3.3 and §3.6 (Figs. 5-7, 11-13): J = diag(5, 5, 1), spatial
-- torque -20 R(:,3) x e3 (lf.potential.top{}: U = 20 e3.R e3), R0 = exp(0.05, 0, 0), w0 = (0, 0, 5).
--  * Hamiltonian at h = 1/8 for LIEMID[I], [E1], [E2], [EA] (Figs. 7, 12) with lf.drift's verdicts on a
--    long run, and LIEMID[E], whose Hamiltonian the paper says "was growing linearly";
--  * the spatial angular momentum of LIEMID[I] at h = 1/16 (Fig. 5: the component along gravity is
--    conserved);
--  * the four invariants of the symmetric heavy top ([K] §3.5): H, pi.chi (= Pi3, body momentum
--    along the symmetry axis), pi.gamma (= pi3, spatial momentum along gravity), |R^T gamma|, for
--    every method: which are conserved to round-off;
--  * the Hamiltonian error of LIEMID[EA] scaled by 1/h^2 for three h (Fig. 13);
--  * convergence at t = 20 against lf.reference (Figs. 6, 11), fitted orders.
-- Writes out/slow_top/summary.json, figures and CSVs. `--quick`: shorter runs, fewer step sizes.
local lf = lf or require "lieflow"
local experiment = require "lieflow.experiment"
local study = experiment.start("slow_top", arg)
local quick, out, summary, check = study.quick, study.out, study.summary, study.check
local slice, range_str = experiment.slice, experiment.range_str

local J, psi0, w0 = {5, 5, 1}, {0.05, 0, 0}, {0, 0, 5}
local body = lf.rigidbody{inertia = J, R = lf.so3.exp(psi0), omega = w0, potential = lf.potential.top{}}
local E0 = body:energy()

-- ------------------------------------------------------------------ Figs. 7, 12: Hamiltonian at h = 1/8
local h_H = 1 / 8
local T_plot = 20
local T_long = quick and 100 or 1000
local n_plot = math.floor(T_plot / h_H + 0.5) + 1
print(("Slow top ([K] §3.3): Hamiltonian at h = 1/8; H0 = %.10f; drift verdicts from [0, %d]"):format(E0, T_long))
print(experiment.drift_table_header())
summary.hamiltonian = {h = h_H, T = T_long, runs = {}}
local Hser, tH = {}, nil
local maxH = {}
for _, name in ipairs{"liemid_i", "liemid_e1", "liemid_e2", "liemid_ea"} do
  local tr, d, rec = experiment.drift_run(body, name, h_H, T_long)
  maxH[name] = d.max_error
  summary.hamiltonian.runs[#summary.hamiltonian.runs + 1] = rec
  print(experiment.drift_table_row(rec))
  check(d.verdict == "bounded", ("%s: Hamiltonian verdict '%s' at h = 1/8 (statistic %.3g); seed Figs. 7, 12: periodic, no drift"):format(name, d.verdict, d.statistic))
  tH = slice(tr.t, n_plot)
  Hser[#Hser + 1] = {label = name, data = slice(tr.energy, n_plot)}
  if name == "liemid_e1" or name == "liemid_e2" then
    summary.hamiltonian[name .. "_error_20"] = slice(tr.energy_error, n_plot)
  end
end
-- LIEMID[E]: on [0, 20] (it fails later; the paper's Fig. 7 caption: "growing linearly")
local tr_e, d_e, rec_e = experiment.drift_run(body, "liemid_e", h_H, T_plot)
print(experiment.drift_table_row(rec_e) .. ("   (on [0, %d])"):format(T_plot))
rec_e.method, rec_e.T = nil, T_plot
summary.hamiltonian.liemid_e = rec_e
check(d_e.verdict == "drift" and d_e.slope > 0, ("liemid_e: Hamiltonian verdict '%s', slope %.3g; seed: growing linearly"):format(d_e.verdict, d_e.slope))
local ok_long, err_long = pcall(lf.run, body, {method = "liemid_e", h = h_H, T = T_long})
summary.hamiltonian.liemid_e.long_run = ok_long and "completed" or tostring(err_long)
if not ok_long then print("  liemid_e on [0, " .. T_long .. "]: " .. tostring(err_long):gsub("\n", " ")) end
-- E1 and E2 errors "cancel, not quite perfectly" (Fig. 7): max |(dH_E1 + dH_E2)/2| vs max |dH_E1|
do
  local a, b = summary.hamiltonian.liemid_e1_error_20, summary.hamiltonian.liemid_e2_error_20
  local m, m1 = 0, 0
  for i = 1, #a do m = math.max(m, math.abs(a[i] + b[i]) / 2); m1 = math.max(m1, math.abs(a[i])) end
  summary.hamiltonian.e1_e2_cancellation = m / m1
  summary.hamiltonian.liemid_e1_error_20, summary.hamiltonian.liemid_e2_error_20 = nil, nil
  summary.hamiltonian.ea_over_i = maxH.liemid_ea / maxH.liemid_i
  summary.hamiltonian.ea_over_e1 = maxH.liemid_ea / maxH.liemid_e1
  print(("max|H-H0|: [EA]/[I] = %.3f, [EA]/[E1] = %.3f; max|(dH_E1 + dH_E2)/2| / max|dH_E1| = %.3f (on [0, %d])")
    :format(summary.hamiltonian.ea_over_i, summary.hamiltonian.ea_over_e1, m / m1, T_plot))
  check(m / m1 < 0.5, ("E1/E2 Hamiltonian errors do not cancel: ratio %.3f"):format(m / m1))
  check(maxH.liemid_ea < maxH.liemid_i / 2, "LIEMID[EA]'s Hamiltonian error is not much lower than LIEMID[I]'s (seed Fig. 12)")
  check(maxH.liemid_ea < maxH.liemid_e1 / 2 and maxH.liemid_ea < maxH.liemid_e2 / 2,
    "LIEMID[EA]'s Hamiltonian error is not substantially below E1's and E2's (seed Fig. 12)")
end
lf.plot{x = tH, y = Hser, title = "Slow top: Hamiltonian, h = 1/8 ([K] Figs. 7, 12)", xlabel = "t", ylabel = "H",
        style = "lines", file = out .. "/hamiltonian.png"}
do
  local n = #tr_e.t
  local ys = {{label = "liemid_e", data = tr_e.energy_error}}
  for _, s in ipairs(Hser) do
    local d = {}
    for i = 1, n do d[i] = s.data[i] - E0 end
    ys[#ys + 1] = {label = s.label, data = d}
  end
  lf.plot{x = tr_e.t, y = ys, title = "Slow top: H - H0 at h = 1/8, LIEMID[E] grows linearly", xlabel = "t",
          ylabel = "H - H0", style = "lines", file = out .. "/hamiltonian_liemid_e.png"}
end

-- ------------------------------------------------------------------ Fig. 13: scaled Hamiltonian error of [EA]
summary.scaled_hamiltonian_ea = {}
local sc_steps = {1 / 8, 1 / 16, 1 / 32}
local sc_ser, sc_t = {}, nil
local sc_vals = {}
for _, h in ipairs(sc_steps) do
  local tr = lf.run(body, {method = "liemid_ea", h = h, T = T_plot, every = math.floor(1 / (8 * h) + 0.5)})
  local d = {}
  for i = 1, #tr.t do d[i] = tr.energy_error[i] / h ^ 2 end
  local m = experiment.max_abs(d)
  sc_vals[#sc_vals + 1] = m
  summary.scaled_hamiltonian_ea[#summary.scaled_hamiltonian_ea + 1] = {h = h, max_abs_error_over_h2 = m, T = T_plot}
  sc_t = tr.t
  sc_ser[#sc_ser + 1] = {label = ("h = 1/%d"):format(math.floor(1 / h + 0.5)), data = d}
end
local sc_ratio = experiment.max_over_min(sc_vals)
print(("LIEMID[EA] max|H-H0|/h^2 on [0, %d]: %s (max/min %.3f)"):format(T_plot, experiment.join(sc_vals, "%.4g"), sc_ratio))
check(sc_ratio < 1.5, ("LIEMID[EA] scaled Hamiltonian errors differ by %.2f (seed Fig. 13: same amplitude)"):format(sc_ratio))
summary.scaled_hamiltonian_ea_ratio = sc_ratio
lf.plot{x = sc_t, y = sc_ser, title = "Slow top: LIEMID[EA] Hamiltonian error / h^2 ([K] Fig. 13)", xlabel = "t",
        ylabel = "(H - H0) / h^2", style = "lines", file = out .. "/hamiltonian_scaled_ea.png"}

-- ------------------------------------------------------------------ Fig. 5: spatial momentum, LIEMID[I], h = 1/16
do
  local tr = lf.run(body, {method = "liemid_i", h = 1 / 16, T = T_plot})
  tr:write_csv(out .. "/liemid_i_h0.0625.csv")
  summary.spatial_momentum_liemid_i = {h = 1 / 16, T = T_plot, max_abs_pi3_change = experiment.max_deviation(tr.pi3),
                                       pi1_range = {math.min(table.unpack(tr.pi1)), math.max(table.unpack(tr.pi1))}}
  print(("LIEMID[I], h = 1/16 on [0, %d]: max |pi3 - pi3(0)| = %.2e (Fig. 5: the component along gravity is conserved)")
    :format(T_plot, summary.spatial_momentum_liemid_i.max_abs_pi3_change))
  check(summary.spatial_momentum_liemid_i.max_abs_pi3_change <= 1e-12, "LIEMID[I] h = 1/16: pi3 not conserved (seed Fig. 5)")
  lf.plot{x = tr.t, y = {{label = "pi1", data = tr.pi1}, {label = "pi2", data = tr.pi2}, {label = "pi3 (along gravity)", data = tr.pi3}},
          title = "Slow top: spatial angular momentum, LIEMID[I], h = 1/16 ([K] Fig. 5)", xlabel = "t",
          ylabel = "spatial angular momentum", style = "lines", file = out .. "/spatial_momentum.png"}
end

-- ------------------------------------------------------------------ invariants of the symmetric top
local T_inv = T_plot
print(("\nInvariants ([K] §3.5) at h = 1/8 on [0, %d]: max deviation; '*' = conserved to round-off (<= 1e-12 max(1, |I0|))"):format(T_inv))
summary.invariants = experiment.top_invariants(body, {J = J, omega0 = w0, E0 = E0, h = h_H, T = T_inv, check = check})

-- ------------------------------------------------------------------ Figs. 6, 11: convergence at t = 20
local T = 20
local ref = lf.reference(body, T, {rtol = 1e-13})
local wide, fit2 = {}, {}
for k = 1, quick and 8 or 10 do wide[#wide + 1] = 2.0 ^ -k end
for k = 5, quick and 8 or 10 do fit2[#fit2 + 1] = 2.0 ^ -k end
-- first-order methods: the attitude error of E1/E2 falls like h^2 down to h ~ 2^-8 and the O(h) term
-- dominates only below h ~ 2^-12 ([K] §3.3: "trouble for smaller time steps"); LIEMID[E] has an
-- O(1) error over the whole of the paper's range and becomes first order only below h ~ 2^-14
local fit1 = {liemid_e1 = quick and {2.0 ^ -13, 2.0 ^ -14} or {2.0 ^ -13, 2.0 ^ -14, 2.0 ^ -15, 2.0 ^ -16}}
fit1.liemid_e2 = fit1.liemid_e1
fit1.liemid_e = quick and {2.0 ^ -15, 2.0 ^ -16} or {2.0 ^ -15, 2.0 ^ -16, 2.0 ^ -17}
print(("\nConvergence at t = %d against rk8pd (rtol 1e-13). Fit ranges (asymptotic regime): second order h = %s;")
  :format(T, range_str(fit2)))
print(("LIEMID[E1], [E2] h = %s; LIEMID[E] h = %s. Errors in the table: at h = %s."):format(range_str(fit1.liemid_e1),
  range_str(fit1.liemid_e), range_str({wide[#wide]})))
print(experiment.nominal_order_header())
summary.convergence = {T = T, steps = wide, methods = {}}
local conv = {}
for _, m in ipairs(experiment.torque_methods()) do
  local fit = fit1[m.name] or fit2
  local res = experiment.measure_convergence(body, m, {steps = wide, fit = fit, T = T, reference = ref})
  experiment.report_nominal_order(res, check, range_str(fit))
  if fit1[m.name] and not res.error then
    -- first-order methods: the error table continued down to the end of the fit range (for the figure)
    local ext = {table.unpack(res.table)}
    local h = wide[#wide] / 2
    while h > fit[1] * 1.5 do
      local r, msg = experiment.errors_at(body, m.name, h, T, ref)
      ext[#ext + 1] = r or {h = h, failed = msg}
      h = h / 2
    end
    for _, row in ipairs(res.fit_table) do ext[#ext + 1] = row end
    res.table_extended = ext
  end
  summary.convergence.methods[#summary.convergence.methods + 1] = res
  conv[m.name] = res
end
-- [K] §3.3, Fig. 6: "the explicit midpoint Lie algorithm does not converge at all" (over the
-- seed's range of h); E1/E2: "excellent accuracy for larger time steps, but ... trouble for smaller"
do
  local mine = math.huge
  for _, row in ipairs(conv.liemid_e.table) do if row.err_omega then mine = math.min(mine, row.err_omega) end end
  summary.liemid_e_min_err_omega_in_range = mine
  print(("liemid_e: smallest error in w over h = %s is %.3g (no convergence in that range)."):format(range_str(wide), mine))
  check(mine > 0.1, ("liemid_e converges in h = %s (min error %.3g); seed: does not converge at all"):format(range_str(wide), mine))
  -- E1/E2 in the paper's range: attitude error falling like h^2 (pre-asymptotic; the O(h) term takes
  -- over below h ~ 2^-10, hence the fitted order 1 on h = 2^-13 ... above)
  summary.pre_asymptotic = {}
  for _, name in ipairs{"liemid_e1", "liemid_e2"} do
    local lx, lyR, lyw = {}, {}, {}
    for _, row in ipairs(conv[name].table) do
      if row.h <= 2 ^ -5 and row.h >= 2 ^ -9 and row.err_R then
        lx[#lx + 1] = math.log(row.h); lyR[#lyR + 1] = math.log(row.err_R); lyw[#lyw + 1] = math.log(row.err_omega)
      end
    end
    local pR = lf.fit_linear(lx, lyR)
    local pw = lf.fit_linear(lx, lyw)
    local hi = wide[#wide] < 2 ^ -9 and 2 ^ -9 or wide[#wide]
    summary.pre_asymptotic[name] = {range = range_str({2 ^ -5, hi}), order_R = pR, order_omega = pw}
    print(("%s, pre-asymptotic h = %s: order R %.3f, order w %.3f (h^2 in the attitude before the O(h) term shows)")
      :format(name, summary.pre_asymptotic[name].range, pR, pw))
    check(math.abs(pR - 2) <= 0.15, ("%s: attitude error not ~h^2 over h = 2^-5 ... 2^-9 (order %.3f)"):format(name, pR))
  end
  local i = #wide
  summary.e1_over_ea_at_min_h = {h = wide[i], err_R = conv.liemid_e1.table[i].err_R / conv.liemid_ea.table[i].err_R,
                                 err_omega = conv.liemid_e1.table[i].err_omega / conv.liemid_ea.table[i].err_omega}
  -- Fig. 11: LIEMID[EA] "clearly the most accurate algorithm overall" (vs the paper's second-order methods)
  local worst = 0
  for _, name in ipairs{"akw", "eln", "liemid_i"} do
    local _, w = experiment.error_ratio_range(conv.liemid_ea.table, conv[name].table, wide, 0, 2 ^ -5)
    worst = math.max(worst, w)
  end
  summary.ea_vs_akw_eln_liemid_i_worst_ratio = worst
  print(("LIEMID[EA] error / best of AKW, eln (NMB), LIEMID[I] for h <= 2^-5: at most %.3f"):format(worst))
  check(worst < 1, "LIEMID[EA] is not the most accurate of EA, AKW, NMB, LIEMID[I] (seed Fig. 11)")
end
local plot_conv = experiment.convergence_plotter{results = conv, steps = wide, out = out,
  slopes = {{order = 2, label = "h^2", method = "liemid_ea", factor = 0.3}, {order = 1, label = "h", method = "liemid_e1", factor = 3}}}
local seed_set = {"akw", "eln", "liemid_i", "liemid_e", "liemid_e1", "liemid_e2", "liemid_ea"}
plot_conv("err_omega", "order_w.png", "|w - w_ref|", seed_set, "Slow top: error in w at t = 20 ([K] Figs. 6, 11 left)")
plot_conv("err_R", "order_R.png", "||R - R_ref||_F", seed_set, "Slow top: error in R at t = 20 ([K] Figs. 6, 11 right)")
do
  -- the first-order methods down to their asymptotic range
  local xs = {}
  for _, row in ipairs(conv.liemid_e.table_extended) do xs[#xs + 1] = row.h end
  for _, f in ipairs{{"err_R", "R", "||R - R_ref||_F"}, {"err_omega", "w", "|w - w_ref|"}} do
    local ys = {}
    for _, n in ipairs{"liemid_e", "liemid_e1", "liemid_e2", "liemid_ea", "liemid_i"} do
      local d, byh = {}, {}
      for _, row in ipairs(conv[n].table_extended or conv[n].table) do byh[row.h] = row[f[1]] end
      for i, h in ipairs(xs) do d[i] = byh[h] or 0 / 0 end
      ys[#ys + 1] = {label = n, data = d}
    end
    local last = conv.liemid_e1.table_extended[#conv.liemid_e1.table_extended]
    lf.plot{x = xs, y = ys, logx = true, logy = true, style = "linespoints", key = "bottom right",
            slopes = {{order = 1, label = "h", through = {last.h, last[f[1]] / 3}}},
            title = ("Slow top: error in %s at t = 20, first-order LIEMID variants down to their asymptotic range"):format(f[2]),
            xlabel = "h", ylabel = f[3], size = {950, 650}, file = ("%s/order_%s_first_order.png"):format(out, f[2])}
  end
end
plot_conv("err_R", "order_R_others.png", "||R - R_ref||_F", {"liemid_ea", "eln_exp", "tln", "vlv", "prk", "mcg", "new3", "lgvi"},
          "Slow top: error in R at t = 20, other methods")

summary.seed = "003 §3.3, §3.5, §3.6, Figs. 5-7, 11-13"
summary.parameters = {J = J, psi0 = psi0, omega0 = w0, potential = "top{} (mgl = 20, chi = e3)", H0 = E0,
                      h_hamiltonian = h_H, T_plot = T_plot, T_drift = T_long, T_convergence = T, steps = wide,
                      fit_steps_second_order = fit2, fit_steps_first_order = fit1, quick = quick}
experiment.finish(study, {files = "Figures, CSVs and summary.json", reproduced = {
  "Reproduced: bounded Hamiltonians of LIEMID[I], [E1], [E2], [EA], linear growth for [E]; pi.e3 to round-off in the",
  "LIEMID family; [EA]'s scaled Hamiltonian error independent of h; orders; [E] not converging over the paper's range."}})
