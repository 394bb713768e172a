-- lieflow — geometric numerical integration on Lie groups (the Lua module).
-- `local lf = require "lieflow"`: the C core (lieflow.core) plus the pure-Lua parts.
local core = require "lieflow.core"
local ad = require "lieflow.autodiff"
local luamethod = require "lieflow.luamethod"
local run = require "lieflow.run"
local an = require "lieflow.analysis"
local plot = require "lieflow.plot"
local contractivity = require "lieflow.contractivity"

local lf = {
  version = core.version,
  vec3 = core.vec3, mat3 = core.mat3,
  so3 = core.so3, s2 = core.s2, quat = core.quat,
  rigidbody = core.rigidbody, bodies = core.bodies, potential = core.potential,
  rkmk = core.rkmk,
  reference = core.reference, exact = core.exact,
  math = ad.math, autodiff = ad,
  run = run.run, read_csv = run.read_csv,
  order = an.order, drift = an.drift, stress_test = an.stress_test, stress_system = an.stress_system,
  drift_rule = an.drift_rule, drift_threshold = an.drift_threshold,
  fit_linear = an.fit_linear, json = an.json, write_json = an.write_json, mkdir_p = an.mkdir_p,
  plot = plot.plot, gnuplot_available = plot.gnuplot_available,
  core = core,
  -- contractivity (Tumiotto, Cokaj, Celledoni, Owren, Arnold): the logarithmic norm of Def. 2 in a
  -- metric G, the Sasaki distance on TS^2 (ts2.h) and the one-step diagnostic lf.contractivity
  lognorm = core.lognorm,
  ts2 = {sasaki = core.ts2_sasaki, sasaki_bound = core.ts2_sasaki_bound, dist = core.ts2_dist},
}
lf.contractivity = contractivity.new(lf, core, run).contractivity

--- Metadata of every built-in integrator (name, title, reference, order, symmetric, symplectic,
--- explicit_in_torque, momentum_conserving), in registry order.
function lf.methods() return core.methods() end

--- Find a method's metadata by name (nil if unknown).
function lf.method_info(name)
  for _, m in ipairs(core.methods()) do if m.name == name then return m end end
end

--- lf.lie_ode{factors=, trivialization=, y0=, f=, params=, energy=, jacobian=, H=, dH=, skew=}: a
--- Lie-group ODE (core.lie_ode); jacobian = "autodiff" differentiates a Lua f along the action by
--- forward-mode autodiff (f must then compute with the values it is given, lf.math for functions).
--- H (a first integral) with dH = function(y) ... | "autodiff" (the default when H is given: the
--- trivialized differential of H by forward-mode autodiff, ad.lie_gradient) and an optional skew
--- map skew = function(y, a) ... | "mqr" give the first-integral form (the discrete-gradient methods).
function lf.lie_ode(spec)
  local copy
  local function own()
    if not copy then copy = {} for k, v in pairs(spec) do copy[k] = v end end
    return copy
  end
  if type(spec) == "table" and spec.jacobian == "autodiff" then
    if type(spec.f) ~= "function" then error("lf.lie_ode: jacobian = \"autodiff\" needs a Lua function f", 2) end
    local f, names, triv = spec.f, spec.factors, spec.trivialization or "right"
    own().jacobian = function(t, y) return ad.lie_jacobian(f, t, y, names, triv) end
  end
  if type(spec) == "table" and type(spec.H) == "function" and (spec.dH == nil or spec.dH == "autodiff")
     and type(spec.f) == "function" then
    local H, names, triv = spec.H, spec.factors, spec.trivialization or "right"
    own().dH = function(y) return ad.algebra_elements(ad.lie_gradient(H, y, names, triv), names) end
  elseif type(spec) == "table" and spec.dH == "autodiff" then
    error("lf.lie_ode: dH = \"autodiff\" needs a Lua function H (and a Lua f)", 2)
  end
  spec = copy or spec
  local ok, sys = pcall(core.lie_ode, spec)
  if not ok then error(run.strip_position(sys), 2) end
  return sys
end

--- Define a method in Lua: lf.method{name=, order=, step=function(state, h, system) ... end}.
lf.method = luamethod.define

--- lf.integrator(method, system, {h=, t0=, newton_tol=, max_iter=, dexpinv_order=, solver=,
--- jacobian=, rtol=, atol=}): `method` is a built-in method's name, a method made by lf.method
--- (written in Lua) or by lf.rkmk (a user tableau).
function lf.integrator(method, system, opts)
  if luamethod.is(method) then return luamethod.integrator(method, system, opts) end
  if type(method) ~= "string" and not run.is_rkmk(method) then
    error(("lf.integrator: method name, lf.method or lf.rkmk method expected, got %s"):format(type(method)), 2)
  end
  return core.integrator(method, system, opts)
end

return lf
