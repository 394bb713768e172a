-- lieflow — geometric numerical integration on Lie groups (the Lua module).
-- `local lf = require "lieflow"`: the C core (lieflow.core) plus the pure-Lua parts.
local core = require "lieflow.core"
local ad = require "lieflow.autodiff"
local luamethod = require "lieflow.luamethod"
local run = require "lieflow.run"
local an = require "lieflow.analysis"
local plot = require "lieflow.plot"

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
}

--- Metadata of every built-in integrator (name, title, reference, order, symmetric, symplectic,
--- explicit_in_torque, momentum_conserving), in registry order.
function lf.methods() return core.methods() end

--- Find a method's metadata by name (nil if unknown).
function lf.method_info(name)
  for _, m in ipairs(core.methods()) do if m.name == name then return m end end
end

--- lf.lie_ode{factors=, trivialization=, y0=, f=, params=, energy=, jacobian=}: a Lie-group ODE
--- (core.lie_ode); jacobian = "autodiff" differentiates a Lua f along the action by forward-mode
--- autodiff (f must then compute with the values it is given, lf.math for functions).
function lf.lie_ode(spec)
  if type(spec) == "table" and spec.jacobian == "autodiff" then
    if type(spec.f) ~= "function" then error("lf.lie_ode: jacobian = \"autodiff\" needs a Lua function f", 2) end
    local copy = {}
    for k, v in pairs(spec) do copy[k] = v end
    local f, names, triv = spec.f, spec.factors, spec.trivialization or "right"
    copy.jacobian = function(t, y) return ad.lie_jacobian(f, t, y, names, triv) end
    spec = copy
  end
  local ok, sys = pcall(core.lie_ode, spec)
  if not ok then error(run.strip_position(sys), 2) end
  return sys
end

--- Define a method in Lua: lf.method{name=, order=, step=function(state, h, system) ... end}.
lf.method = luamethod.define

--- lf.compose(method, scheme) -> a method: the composition of a symmetric method (a registered
--- method's name, an lf.rkmk / lf.compose method, or an lf.method written in Lua declaring
--- symmetric = true) with a scheme: "triple_jump4", "suzuki4", "blanes_moan4" (splitting methods
--- only), "kahan_li6", "kahan_li8" (lf.compose_schemes() lists them with their coefficients).
--- C methods compose in C (core/method/compose.h), Lua methods in Lua.
function lf.compose(method, scheme)
  if type(scheme) ~= "string" then
    error(("lf.compose: argument #2 must be a scheme name, got %s"):format(type(scheme)), 2)
  end
  if luamethod.is(method) then
    for _, sc in ipairs(core.compose_schemes()) do
      if sc.name == scheme then return luamethod.compose(method, sc) end
    end
    local names = {}
    for _, sc in ipairs(core.compose_schemes()) do names[#names + 1] = sc.name end
    error(("lf.compose: unknown scheme '%s' (known: %s)"):format(scheme, table.concat(names, ", ")), 2)
  end
  local ok, m = pcall(core.compose, method, scheme)
  if not ok then error(run.strip_position(m), 2) end
  return m
end
lf.compose_schemes = core.compose_schemes

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
