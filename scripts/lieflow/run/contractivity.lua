-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — the one-step contractivity diagnostic (Tumiotto, Cokaj, Celledoni, Owren, Arnold,
-- "Nonlinear stability of Lie group integrators": Fig. 1 made into a tool).
--
--   local r = lf.contractivity{system = sys, method = "lie_euler_implicit", pairs = {{a1, b1}, ...},
--                              h = {0.01, 0.1, 1, 10, 100}, distance = fn, tol = 1e-12, bisect = 40,
--                              options = {newton_tol = ...}}
--
-- For each step size h and each pair (a, b) of initial states: one step of the method from both,
-- the ratio d(a1, b1) / d(a, b) with the distance d (default: the Sasaki distance on a system with
-- the single factor ts2, falling back to its upper bound where the shooting fails — counted in
-- r.fallbacks —; else the system's own distance, root sum of squares over its fields). A pair is a
-- state table {y = ...} or, for a system with one field of one factor, the factor's value itself.
-- Returns
--   r.h             the step sizes (ascending), r.ratios[k][i] the ratio of pair i at h[k],
--   r.max_ratio[k]  the largest over the pairs, r.nonexpansive[k] = max_ratio <= 1 + tol,
--   r.h_star        the largest non-expansive step: sup{h : every h' <= h on the grid is
--                   non-expansive}, refined by bisection between the last good and the first bad
--                   grid point (`bisect` halvings; the bisection assumes one crossing between them),
--   r.status        "all in range" (every h non-expansive: h_star = the largest h), "none in range"
--                   (the smallest h already expands: h_star = nil), or "bracketed" (then r.h_bad,
--                   the first expanding grid point),
--   r.fallbacks     distances computed with the Sasaki bound instead of the shooting (of them
--                   r.fallbacks_bisection during the bisection for h_star).
-- Errors (a failing step, an unknown method, a pair at distance 0) name the pair and the step.
local options = require "lieflow.options"

local M = {}

local function copy(t) local c = {} for k, v in pairs(t or {}) do c[k] = v end return c end

function M.new(lf, core)
  local function fields(sys) return sys.fields end

  local function as_state(sys, v, what)
    local names = fields(sys)
    if type(v) == "table" and rawget(v, names[1]) ~= nil then return v end
    if #names == 1 and #sys.factors == 1 then return {[names[1]] = {v}} end
    error(("lf.contractivity: %s must be a state table {%s = ...}"):format(what, table.concat(names, " = ..., ")), 3)
  end

  local function default_distance(sys)
    local f = sys.factors
    local names = fields(sys)
    if #f == 1 and f[1] == "ts2" then
      local fallbacks = 0
      local function d(a, b)
        local p, q = a[names[1]][1], b[names[1]][1]
        local ok, dist = pcall(core.ts2_sasaki, p, q)
        if ok then return dist end
        fallbacks = fallbacks + 1
        return core.ts2_sasaki_bound(p, q)
      end
      return d, function() return fallbacks end, "Sasaki (shooting; bound as fallback)"
    end
    return function(a, b)
      local e, s = sys:error(a, b), 0
      for _, n in ipairs(names) do s = s + e[n] ^ 2 end
      return math.sqrt(s)
    end, function() return 0 end, "the system's distance"
  end

  function M.contractivity(spec)
    local fn = "lf.contractivity"
    if type(spec) ~= "table" then error(fn .. ": a table {system=, method=, pairs=, h=} expected", 2) end
    local known = {system = 1, method = 1, pairs = 1, h = 1, distance = 1, tol = 1, bisect = 1, options = 1}
    for k in pairs(spec) do
      if not known[k] then error(("%s: unknown field '%s' (fields: system, method, pairs, h, distance, tol, bisect, options)"):format(fn, tostring(k)), 2) end
    end
    local sys, method = spec.system, spec.method
    if sys == nil or method == nil then error(fn .. ": fields 'system' and 'method' are required", 2) end
    local hs = spec.h
    if type(hs) == "number" then hs = {hs} end
    if type(hs) ~= "table" or #hs == 0 then error(fn .. ": field 'h' must be a step size or an array of them", 2) end
    hs = copy(hs)
    for i, h in ipairs(hs) do
      if type(h) ~= "number" or not (h > 0) or h == math.huge then
        error(("%s: h[%d] = %s must be a positive finite number"):format(fn, i, tostring(h)), 2)
      end
    end
    table.sort(hs)
    if type(spec.pairs) ~= "table" or #spec.pairs == 0 then error(fn .. ": field 'pairs' must be a non-empty array of {a, b}", 2) end
    local tol = spec.tol or 1e-12
    local nbis = spec.bisect or 40
    local dist, nfallback, dname = default_distance(sys)
    if spec.distance ~= nil then
      if type(spec.distance) ~= "function" then error(fn .. ": field 'distance' must be a function(a, b)", 2) end
      dist, nfallback, dname = spec.distance, function() return 0 end, "user distance"
    end
    local prs, d0 = {}, {}
    for i, p in ipairs(spec.pairs) do
      if type(p) ~= "table" or p[1] == nil or p[2] == nil then error(("%s: pairs[%d] must be {a, b}"):format(fn, i), 2) end
      prs[i] = {as_state(sys, p[1], ("pairs[%d][1]"):format(i)), as_state(sys, p[2], ("pairs[%d][2]"):format(i))}
      prs[i][1].t, prs[i][2].t = 0, 0
      d0[i] = dist(prs[i][1], prs[i][2])
      if not (d0[i] > 0) then error(("%s: the states of pairs[%d] are at distance %s"):format(fn, i, tostring(d0[i])), 2) end
    end

    -- the largest ratio over the pairs after one step of size h
    local function max_ratio(h, out)
      local o = copy(spec.options)
      o.h = h
      local okc, it = pcall(lf.integrator, method, sys, o)
      if not okc then error(("%s: %s"):format(fn, options.strip_position(it)), 3) end
      local m = 0
      for i, p in ipairs(prs) do
        local s = {}
        for k = 1, 2 do
          it:set_state(p[k])
          local ok, err = pcall(it.step, it)
          if not ok then error(("%s: pairs[%d][%d], h = %g: %s"):format(fn, i, k, h, options.strip_position(err)), 3) end
          s[k] = it:state()
        end
        local r = dist(s[1], s[2]) / d0[i]
        if out then out[i] = r end
        m = math.max(m, r)
      end
      return m
    end

    local res = {h = hs, ratios = {}, max_ratio = {}, nonexpansive = {}, tol = tol, distance = dname}
    local last_good, first_bad = nil, nil
    for k, h in ipairs(hs) do
      res.ratios[k] = {}
      res.max_ratio[k] = max_ratio(h, res.ratios[k])
      res.nonexpansive[k] = res.max_ratio[k] <= 1 + tol
      if res.nonexpansive[k] and not first_bad then last_good = h end
      if not res.nonexpansive[k] and not first_bad then first_bad = h end
    end
    if not first_bad then
      res.status, res.h_star = "all in range", hs[#hs]
    elseif not last_good then
      res.status, res.h_bad = "none in range", first_bad
    else
      local lo, hi = last_good, first_bad
      local before = nfallback()
      for _ = 1, nbis do
        local mid = 0.5 * (lo + hi)
        if mid == lo or mid == hi then break end
        if max_ratio(mid) <= 1 + tol then lo = mid else hi = mid end
      end
      res.status, res.h_star, res.h_bad = "bracketed", lo, first_bad
      res.fallbacks_bisection = nfallback() - before
    end
    res.fallbacks = nfallback()
    return res
  end
  return M
end

return M
