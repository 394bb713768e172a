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

--- Define a method in Lua: lf.method{name=, order=, step=function(state, h, system) ... end}.
lf.method = luamethod.define

lf.ensemble = require "lieflow.ensemble" -- lf.ensemble{...}: members in parallel (scripts/lieflow/ensemble.lua)

--- lf.integrator(method, system, {h=, newton_tol=, max_iter=, t0=}): `method` is a built-in
--- method's name or a method made by lf.method.
function lf.integrator(method, system, opts)
  if luamethod.is(method) then return luamethod.integrator(method, system, opts) end
  if type(method) ~= "string" then
    error(("lf.integrator: method name or lf.method expected, got %s"):format(type(method)), 2)
  end
  return core.integrator(method, system, opts)
end

return lf
