-- SPDX-License-Identifier: GPL-3.0-or-later
-- Nonlinear stability of Lie group integrators (Tumiotto, Cokaj, Celledoni, Owren, Arnold): the
-- gradient flows of E(q) = 1/2 q^T D q on S^2 (their eq. (2)) and of E + 1/2 |w|^2 on TS^2 (eq. (3),
-- acted on by SE(3)), D = diag(2, 2, 1), with explicit and implicit Lie-Euler (Def. 1).
--   * their Fig. 1: the one-step distance ratio d(y1, y1~)/d(y0, y0~) against the step size, for
--     initial pairs inside the region (4) and outside it (Riemannian distance on S^2, Sasaki on
--     TS^2), with the exact flow for comparison (a method written in Lua: its closed form);
--   * the largest step for which explicit Lie-Euler is non-expansive (lf.contractivity on random
--     pairs in the region), and implicit Lie-Euler non-expansive for every h up to 100 there;
--   * region (4) from the logarithmic norm (Def. 2, lf.lognorm) and Hypothesis 1 with nu < 0;
--   * both flows against their closed forms (rk8pd).
-- Choices the extended abstract does not fix (stated in summary.json): D = diag(2, 2, 1) (two equal
-- entries, the distinct smaller one on the polar axis: the only arrangement with a contractive
-- region), the pairs, and the step grid 1e-3 ... 1e2. `--quick`: coarser grid, fewer random pairs.
local lf = lf or require "lieflow"
local experiment = require "lieflow.experiment"
local study = experiment.start("contractivity", arg)
local quick, out, check = study.quick, study.out, study.check
local S = study.summary
S.papers = {"[TCCOA] (Tumiotto, Cokaj, Celledoni, Owren, Arnold)"}

local D = {2, 2, 1}
local k = D[1] - D[3]
local rad, deg = math.rad, math.deg
local function pt(lat, az) return lf.vec3{math.cos(lat) * math.cos(az), math.cos(lat) * math.sin(az), math.sin(lat)} end
local function e_theta(az) return lf.vec3{-math.sin(az), math.cos(az), 0} end
local function e_phi(lat, az) return lf.vec3{-math.sin(lat) * math.cos(az), -math.sin(lat) * math.sin(az), math.cos(lat)} end
local function tpt(lat, az, w1, w2) return {q = pt(lat, az), omega = e_theta(az) * w1 + e_phi(lat, az) * w2} end

local s2 = lf.lie_ode{factors = {"s2"}, y0 = {pt(-1, 0)}, f = "s2_gradient_flow", params = {D = D}}
local ts2 = lf.lie_ode{factors = {"ts2"}, y0 = {tpt(-1, 0, 0, 0)}, f = "ts2_gradient_flow", params = {D = D}}

-- the exact flows: q(t) = e^{-Dt} q0/|.|; w(t) = e^{-t} (alpha N x q(t) + beta N)
local function flow_q(q0, t)
  return lf.vec3{math.exp(-D[1] * t) * q0[1], math.exp(-D[2] * t) * q0[2], math.exp(-D[3] * t) * q0[3]}:normalized()
end
local function flow_ts2(y, t)
  local q0, w0 = lf.vec3(y.q), lf.vec3(y.omega)
  local N = lf.vec3{0, 0, 1}:cross(q0):normalized()
  local q = flow_q(q0, t)
  local al, be = w0:dot(N:cross(q0)), w0:dot(N)
  return {q = q, omega = (N:cross(q) * al + N * be) * math.exp(-t)}
end
local exact = lf.method{name = "exact_flow", order = 99, step = function(st, h)
  local v = st.y[1]
  if type(v) == "table" and v.q then st.y[1] = flow_ts2(v, h) else st.y[1] = flow_q(v, h) end
  st.t = st.t + h
  return st
end}

-- ------------------------------------------------------------------ the closed forms vs rk8pd
do
  local q0, y0 = pt(-0.9, 0.4), tpt(-0.9, 0.4, 0.3, -0.2)
  local a = lf.lie_ode{factors = {"s2"}, y0 = {q0}, f = "s2_gradient_flow", params = {D = D}}
  local b = lf.lie_ode{factors = {"ts2"}, y0 = {y0}, f = "ts2_gradient_flow", params = {D = D}}
  local times = {}
  for i = 1, 20 do times[i] = 0.5 * i end
  local ra = lf.reference(a, 10, {rtol = 1e-14, atol = 1e-14, at = times})
  local rb = lf.reference(b, 10, {rtol = 1e-14, atol = 1e-14, at = times})
  local ea, eb = 0, 0
  for i, t in ipairs(times) do
    ea = math.max(ea, (ra[i].y[1] - flow_q(q0, t)):norm())
    local ex = flow_ts2(y0, t)
    eb = math.max(eb, (rb[i].y[1].q - ex.q):norm(), (rb[i].y[1].omega - ex.omega):norm())
  end
  print(("Closed forms vs rk8pd (t <= 10): S^2 %.2e, TS^2 %.2e"):format(ea, eb))
  S.closed_form_error = {s2 = ea, ts2 = eb}
  check(ea < 1e-12 and eb < 1e-12, "the flows do not match their closed forms")
end

-- ------------------------------------------------------------------ region (4) from the log norm
-- The covariant Jacobian of X(q) = -Dq + (q^T D q) q on T_qS^2, -P D P + (q^T D q) I, in the
-- orthonormal frame (e_phi, e_theta), and the coordinate Jacobian of the latitude/azimuth flow
-- phi' = (k/2) sin 2 phi, theta' = 0, diag(k cos 2 phi, 0), in the metric G = diag(1, cos^2 phi)
-- (their Def. 2 with G): both are <= 0 exactly on |phi| >= 45 deg.
do
  local function mu_cov(phi)
    local q, ep, et = pt(phi, 0.3), e_phi(phi, 0.3), e_theta(0.3)
    local qDq = D[1] * q[1] ^ 2 + D[2] * q[2] ^ 2 + D[3] * q[3] ^ 2
    local function Xv(v) -- -P D v + (q^T D q) v
      local Dv = lf.vec3{D[1] * v[1], D[2] * v[2], D[3] * v[3]}
      return (Dv - q * q:dot(Dv)) * -1 + v * qDq
    end
    local A = {{ep:dot(Xv(ep)), ep:dot(Xv(et))}, {et:dot(Xv(ep)), et:dot(Xv(et))}}
    return lf.lognorm(A)
  end
  local function mu_coord(phi) return lf.lognorm({{k * math.cos(2 * phi), 0}, {0, 0}}, {{1, 0}, {0, math.cos(phi) ^ 2}}) end
  local boundary_cov, boundary_coord, rows = nil, nil, {}
  for d = -89, 0, 0.5 do
    local phi = rad(d)
    local a, b = mu_cov(phi), mu_coord(phi)
    rows[#rows + 1] = {lat = d, mu_covariant = a, mu_coordinate = b}
    if a <= 1e-14 then boundary_cov = d end
    if b <= 1e-14 then boundary_coord = d end
  end
  print(("Region (4): the logarithmic norm is <= 0 for latitude <= %.1f deg (covariant Jacobian) and <= %.1f deg "
         .. "(coordinate Jacobian in G = diag(1, cos^2 phi)); the paper: -pi/2 <= phi <= -pi/4"):format(boundary_cov, boundary_coord))
  S.region = {boundary_covariant_deg = boundary_cov, boundary_coordinate_deg = boundary_coord, table = rows}
  check(boundary_cov == -45 and boundary_coord == -45, "region (4): the log norm changes sign elsewhere than at -45 deg")
  -- the signed largest eigenvalue, not max |lambda| (their print): at the pole the covariant
  -- Jacobian is -k I (contraction), max |lambda| would give +k
  S.region.mu_at_pole = mu_cov(rad(-89.999))
  check(math.abs(S.region.mu_at_pole + k) < 1e-6, "log norm at the pole should be -k")
end

-- ------------------------------------------------------------------ Fig. 1
local hs = {}
local per_decade = quick and 2 or 5
for i = 0, 5 * per_decade do hs[#hs + 1] = 10 ^ (-3 + i / per_decade) end
S.parameters = {D = D, h = hs, quick = quick}

local pairs_s2 = {
  A = {pt(rad(-60), 0.3), pt(rad(-55), 0.6), inside = true},
  B = {pt(rad(-46), 0), pt(rad(-46), math.pi), inside = true},
  C = {pt(rad(-85), 0), pt(rad(-80), 2), inside = true},
  D = {pt(rad(-30), 0.3), pt(rad(-25), 0.6), inside = false},
  E = {pt(rad(-10), 0), pt(rad(10), 0), inside = false},
  F = {pt(rad(-5), 0.3), pt(rad(-15), 0.3), inside = false},
}
local pairs_ts2 = {
  A = {tpt(rad(-60), 0.3, 0.2, -0.1), tpt(rad(-55), 0.6, 0.1, 0.05), inside = true},
  C = {tpt(rad(-85), 0, 0.3, 0), tpt(rad(-80), 2, 0, 0.2), inside = true},
  D = {tpt(rad(-30), 0.3, 0.2, -0.1), tpt(rad(-25), 0.6, 0.1, 0.05), inside = false},
  F = {tpt(rad(-5), 0.3, 0.2, -0.1), tpt(rad(-15), 0.3, 0.1, 0.05), inside = false},
}
local methods = {{"lie_euler", "explicit Lie-Euler"}, {"lie_euler_implicit", "implicit Lie-Euler"}, {exact, "exact flow"}}

local function scan(sys, prs, names, label)
  local res = {}
  print(("\n%s: one-step ratio d(y1, y1~)/d(y0, y0~); h = 1e-3 ... 1e2 (%d values)"):format(label, #hs))
  print(("  %-6s %-20s %10s %10s %10s %10s %14s"):format("pair", "method", "h=1e-3", "h=1", "h=1e2", "max", "h* (non-exp.)"))
  for _, name in ipairs(names) do
    local p = prs[name]
    res[name] = {inside = p.inside}
    for _, m in ipairs(methods) do
      local r = lf.contractivity{system = sys, method = m[1], pairs = {{p[1], p[2]}}, h = hs}
      local mx = 0
      for _, v in ipairs(r.max_ratio) do mx = math.max(mx, v) end
      local key = type(m[1]) == "string" and m[1] or "exact"
      res[name][key] = {ratios = r.max_ratio, status = r.status, h_star = r.h_star, max = mx, fallbacks = r.fallbacks}
      local hstar = r.status == "all in range" and ">= 100" or r.status == "none in range" and "none" or ("%.4g"):format(r.h_star)
      print(("  %-6s %-20s %10.4f %10.4f %10.4f %10.4f %14s"):format(name .. (p.inside and " (in)" or ""), m[2], r.max_ratio[1],
        r.max_ratio[3 * per_decade + 1], r.max_ratio[#hs], mx, hstar))
    end
  end
  return res
end

local fig_s2 = scan(s2, pairs_s2, {"A", "B", "C", "D", "E", "F"}, "S^2 (Riemannian distance)")
local fig_ts2 = scan(ts2, pairs_ts2, {"A", "C", "D", "F"}, "TS^2 (Sasaki distance)")
S.fig1 = {s2 = fig_s2, ts2 = fig_ts2}

for _, P in ipairs{{"S^2", fig_s2}, {"TS^2", fig_ts2}} do
  for name, r in pairs(P[2]) do
    if r.inside then
      check(r.lie_euler_implicit.status == "all in range",
        ("%s pair %s (inside (4)): implicit Lie-Euler expands somewhere (max ratio %.4f)"):format(P[1], name, r.lie_euler_implicit.max))
      check(r.lie_euler.status == "bracketed",
        ("%s pair %s (inside (4)): explicit Lie-Euler should expand for large h"):format(P[1], name))
      check(r.exact.status == "all in range", ("%s pair %s: the exact flow should contract"):format(P[1], name))
    end
  end
end
check(fig_s2.E.exact.status == "none in range" and fig_s2.E.lie_euler_implicit.status == "none in range",
  "S^2 pair E (across the equator): everything should expand")

-- the figures: ratio vs h, pair A inside (4) and pair F outside (on both manifolds); the ratio of
-- the exact flow falls to 0 (both points reach the pole): the axis stops at 1e-3
for _, P in ipairs{{"s2", fig_s2, "S^2"}, {"ts2", fig_ts2, "TS^2"}} do
  local y = {}
  for _, name in ipairs{"A", "F"} do
    for _, m in ipairs{{"lie_euler", "explicit"}, {"lie_euler_implicit", "implicit"}, {"exact", "exact"}} do
      local r = {}
      for i, v in ipairs(P[2][name][m[1]].ratios) do r[i] = math.max(v, 1e-17) end
      y[#y + 1] = {label = ("%s, pair %s (%s)"):format(m[2], name, P[2][name].inside and "in (4)" or "outside"), data = r}
    end
  end
  lf.plot{x = hs, y = y, logx = true, logy = true, style = "linespoints", key = "bottom left", yrange = {1e-3, 1e3},
          title = ("Fig. 1 (%s): one-step distance ratio vs step size, D = diag(2, 2, 1)"):format(P[3]),
          xlabel = "h", ylabel = "d(y1, y1~) / d(y0, y0~)", file = ("%s/fig1_%s.png"):format(out, P[1])}
end

-- ------------------------------------------------------------------ the step bound on random pairs
local function random_pairs(n, seed, lo, hi, ts)
  local state = seed
  local function u() state = (state * 1103515245 + 12345) % 2147483648; return state / 2147483648 end
  local prs = {}
  for i = 1, n do
    local function one()
      local lat, az = rad(lo + (hi - lo) * u()), 2 * math.pi * u()
      if ts then return tpt(lat, az, 0.7 * (2 * u() - 1), 0.7 * (2 * u() - 1)) end
      return pt(lat, az)
    end
    prs[i] = {one(), one()}
  end
  return prs
end
local npairs = quick and 20 or 200
local bound = {}
for _, P in ipairs{{"s2", s2, false}, {"ts2", ts2, true}} do
  local prs = random_pairs(P[3] and npairs // 4 or npairs, 12345, -90, -45, P[3])
  local re = lf.contractivity{system = P[2], method = "lie_euler", pairs = prs, h = hs}
  local ri = lf.contractivity{system = P[2], method = "lie_euler_implicit", pairs = prs, h = hs}
  local mi = 0
  for _, v in ipairs(ri.max_ratio) do mi = math.max(mi, v) end
  bound[P[1]] = {pairs = #prs, explicit_h_star = re.h_star, explicit_status = re.status, implicit_status = ri.status,
                 implicit_max_ratio = mi, fallbacks = re.fallbacks + ri.fallbacks,
                 fallbacks_bisection = re.fallbacks_bisection}
  print(("\n%s, %d random pairs in the cap (4): explicit Lie-Euler non-expansive up to h* = %.4f (for pairs at the "
         .. "pole: 2/k = %g); implicit: %s, max ratio %.5f; Sasaki bound used for %d distances (%d in the bisection)")
        :format(P[1], #prs, re.h_star or 0, 2 / k, ri.status, mi, re.fallbacks + ri.fallbacks, re.fallbacks_bisection or 0))
  check(ri.status == "all in range", P[1] .. ": implicit Lie-Euler expands for some random pair in the cap")
  -- explicit Lie-Euler is explicit Euler on the latitude: the one-step map's derivative along the
  -- meridian is 1 + h k cos 2 phi, -1 + h k at the pole; pairs near the pole expand just above 2/k
  -- (on S^2 never below it). On TS^2 the velocity part is multiplied by 1 - h in the parallel frame,
  -- but the Sasaki distance couples base and fibre (its geodesics bend with the curvature term), and
  -- pairs at a finite distance can expand slightly below 2/k (measured 1.99 on 50 pairs)
  local lo = P[1] == "s2" and 2 / k - 1e-6 or 0.9 * 2 / k
  check(re.status == "bracketed" and re.h_star >= lo and re.h_star <= 1.15 * 2 / k,
    ("%s: explicit step bound %s not in [%g, 1.15 * 2/k]"):format(P[1], tostring(re.h_star), lo))
end
S.step_bound = bound

-- ------------------------------------------------------------------ Hypothesis 1 with nu < 0
-- on the sub-cap |phi| >= 60 deg the covariant log norm is max(k cos 2 phi, -k sin^2 phi) <= -k/2 =: nu,
-- and the hypothesis bounds the implicit ratio by 1/(1 - h nu)
do
  local nu = -k / 2
  local prs = random_pairs(quick and 10 or 100, 777, -90, -60, false)
  local ri = lf.contractivity{system = s2, method = "lie_euler_implicit", pairs = prs, h = hs}
  local worst = 0
  for i, h in ipairs(hs) do worst = math.max(worst, ri.max_ratio[i] * (1 - h * nu)) end
  print(("\nHypothesis 1 on |phi| >= 60 deg (nu = %g): max ratio (1 - h nu) = %.5f (<= 1 confirms it)"):format(nu, worst))
  S.hypothesis1 = {nu = nu, max_scaled_ratio = worst, pairs = #prs}
  check(worst <= 1 + 1e-12, "Hypothesis 1 with nu = -k/2 fails on the sub-cap")
end

experiment.finish(study, {files = "Figures and summary.json", failure = "contractivity does not reproduce the paper",
  reproduced = {"Inside region (4) implicit Lie-Euler is non-expansive for every step up to 100 (S^2 and TS^2);",
                "explicit Lie-Euler expands beyond h ~ 2/k; outside the region nothing is guaranteed."}})
