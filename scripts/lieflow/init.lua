-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — geometric numerical integration on Lie groups (the Lua module).
-- `local lf = require "lieflow"`: the C core (lieflow.core) plus the pure-Lua parts.
-- The pure-Lua parts by concern (one folder each, a folder requiring only those before it):
-- files/ (JSON, HDF5) and the helpers options.lua and pretty.lua at the bottom; run/ (lf.run and
-- the trajectory class, lf.method, lf.autodiff, the analysis, lf.ensemble, lf.contractivity);
-- view/ (lf.plot, lf.animate, lf.view, traj:write_gltf: it adds traj:animate, traj:write_gltf and
-- traj:plot to every trajectory); this file, lf, on top.
local core = require "lieflow.core"
local options = require "lieflow.options"
local hdf5 = require "lieflow.files.hdf5"
local xyz = require "lieflow.files.xyz"
local ad = require "lieflow.run.autodiff"
local luamethod = require "lieflow.run.luamethod"
local run = require "lieflow.run"
local trajectory = require "lieflow.run.trajectory"
local an = require "lieflow.run.analysis"
local contractivity = require "lieflow.run.contractivity"
local ensemble = require "lieflow.run.ensemble"
local plot = require "lieflow.view.plot"
local animate = require "lieflow.view.animate"
local view = require "lieflow.view" -- (the view layer: also traj:animate, traj:write_gltf, traj:plot)
local help = require "lieflow.help"
local molecule = require "lieflow.molecule"
local strip_position = options.strip_position

local lf = {
  version = core.version, _VERSION = "lieflow " .. core.version,
  vec3 = core.vec3, mat3 = core.mat3,
  so3 = core.so3, s2 = core.s2, quat = core.quat,
  potential = molecule.potentials(core.potential), forcing = core.forcing,
  rkmk = core.rkmk,
  reference = core.reference, exact = core.exact,
  math = core.math, autodiff = ad, compile = core.compile,
  run = run.run, read_csv = trajectory.read_csv, read_hdf5 = trajectory.read_hdf5,
  hdf5_available = hdf5.available,
  order = an.order, drift = an.drift, stress_test = an.stress_test, stress_system = an.stress_system,
  drift_rule = an.drift_rule, drift_threshold = an.drift_threshold,
  fit_linear = an.fit_linear, json = an.json, write_json = an.write_json, mkdir_p = an.mkdir_p,
  plot = plot.plot, gnuplot_available = plot.gnuplot_available,
  molecule = molecule.molecule, write_xyz = xyz.write_xyz, write_lammps_dump = xyz.write_lammps_dump,
  read_lammps_data = function(path, opts) return molecule.read_lammps_data(path, opts, core.bodies) end,
  core = core,
  -- contractivity (Tumiotto, Cokaj, Celledoni, Owren, Arnold): the logarithmic norm of Def. 2 in a
  -- metric G, the Sasaki distance on TS^2 (ts2.h) and the one-step diagnostic lf.contractivity
  lognorm = core.lognorm,
  ts2 = {sasaki = core.ts2_sasaki, sasaki_bound = core.ts2_sasaki_bound, dist = core.ts2_dist},
}
lf.contractivity = contractivity.new(lf, core).contractivity

--- Metadata of every built-in integrator (name, title, reference, order, symmetric, symplectic,
--- explicit_in_torque, momentum_conserving), in registry order.
function lf.methods() return core.methods() end

--- Find a method's metadata by name (nil if unknown).
function lf.method_info(name)
  for _, m in ipairs(core.methods()) do if m.name == name then return m end end
end

--- lf.rigidbody{inertia=, R=, omega= | momentum=, potential=, torque=, forcing=, damping=, params=, compile=}:
--- one rigid body (core.rigidbody). A Lua potential U(R [, p]) is compiled (compile = "auto" | "native" |
--- "tape" | false; body.compiled says what runs and why); its torque comes from the same graph.
--- forcing = function(t, state [, p]) return {torque = ..., force = ...} end (state.R, state.omega and,
--- with a mass, state.x, state.v; the torque in the body frame, the force in space), an lf.forcing
--- object (lf.forcing.damping, .torque, .torque_table) or an array of them: compiled like the potential
--- (with its Jacobian in the velocities); damping = {linear = c, angular = {a1, a2, a3} | a} adds the force
--- -c v and the body torque -a_k omega_k. body.forcing_name, body.forcing_info say what acts.
function lf.rigidbody(spec)
  local ok, sys = pcall(core.rigidbody, spec)
  if not ok then error(strip_position(sys), 2) end
  return sys
end

--- lf.bodies{ {inertia=, R=, omega=}, ..., potential = U(Rs [, p]), torque = tau(Rs [, p]), forcing=,
--- damping=, params=, compile=, pair=, positions=, cutoff= }: several bodies (a Lua forcing sees arrays:
--- state.R[i], state.omega[i], ..., and returns arrays of torques and forces, one per body).
function lf.bodies(spec)
  local ok, sys = pcall(core.bodies, spec)
  if not ok then error(strip_position(sys), 2) end
  return sys
end

-- The fields `...` of a constructor's table, read under pcall: a table whose __index raises (an
-- autodiff value, a proxy) is refused naming the function, not with an error inside this file.
-- Nothing for a non-table (the C constructor says what it expected).
local function spec_fields(spec, fn, ...)
  if core.is_traced(spec) then -- a traced value (made inside a function being compiled or differentiated)
    error(("%s: argument #1 must be a table of fields, got lf.traced"):format(fn), 3)
  end
  if type(spec) ~= "table" then return end
  local keys = table.pack(...)
  local ok, vals = pcall(function()
    local v = {}
    for i = 1, keys.n do v[i] = spec[keys[i]] end
    return v
  end)
  if not ok then
    error(("%s: argument #1 must be a table of fields, got %s (reading its fields raised: %s)")
      :format(fn, options.kind(spec), strip_position(vals)), 3)
  end
  return table.unpack(vals, 1, keys.n)
end

--- lf.lie_ode{factors=, trivialization=, y0=, f=, params=, energy=, jacobian=, H=, dH=, skew=, compile=}: a
--- Lie-group ODE (core.lie_ode). A Lua f (and energy, H) is compiled (compile = "auto" by default:
--- traced into an expression graph, lieflow/core), which also gives its Jacobian along the action and
--- dH; jacobian = "autodiff" and dH = "autodiff" (the default with H) differentiate the interpreted
--- functions at each point when they are not compiled.
function lf.lie_ode(spec)
  spec_fields(spec, "lf.lie_ode", "f") -- a table whose fields raise is refused here, by name
  local ok, sys = pcall(core.lie_ode, spec)
  if not ok then error(strip_position(sys), 2) end
  return sys
end

--- Systems on products of spheres (Ortolan's thesis Part II), lifted to SO(3):
---   lf.spheres{M=, q=, qdot= | omega=, potential=V, gradient=dV, axis=}   (V(qs) -> number;
---     without `gradient` it is derived from V by forward-mode autodiff, ad.r3_gradient)
---   lf.spheres.pendulum{m=, l=, g=, up=, q=, qdot= | omega=}, .double_pendulum{m1=, m2=, l1=, l2=,
---   g=, up=, q=, qdot= | omega=}, .dipoles{rows=, cols=, spacing=, m=, l=, moment=, q=, omega=}
lf.spheres = setmetatable({pendulum = core.spheres.pendulum, double_pendulum = core.spheres.double_pendulum,
                           dipoles = core.spheres.dipoles, new = core.spheres.new}, {
  __call = function(_, spec)
    spec_fields(spec, "lf.spheres", "potential")
    local ok, sys = pcall(core.spheres.new, spec)
    if not ok then error(strip_position(sys), 2) end
    return sys
  end,
})

--- Define a method in Lua: lf.method{name=, order=, step=function(state, h, system) ... end}.
lf.method = luamethod.define

lf.animate = animate.animate -- lf.animate{traj1, traj2, path = "x.html"}: the motion as a web page
lf.view = view.view -- lf.view(traj): that page in the user's browser (or its path)
lf.help = help.help -- lf.help(x): the reference text of x (docs/api.md)
lf.ensemble = ensemble -- lf.ensemble{...}: members in parallel (scripts/lieflow/run/ensemble.lua)
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
  if not ok then error((strip_position(m):gsub("^compose: ", "lf.compose: ")), 2) end
  return m
end
lf.compose_schemes = core.compose_schemes

--- lf.integrator(method, system, {h=, t0=, newton_tol=, max_iter=, dexpinv_order=, solver=,
--- jacobian=, rtol=, atol=, lanes=}): `method` is a built-in method's name, a method made by lf.method
--- (written in Lua) or by lf.rkmk (a user tableau). lanes = {state, state, ...}: one integrator
--- stepping copies of a one-body rigid system from those states at once (methods with
--- method.lanes: eln, eln_exp, vlv, lgvi), each lane bitwise as an integrator of its own;
--- it:lane(j), it:set_lane(j, state) and it:energy(j) read and write lane j.
function lf.integrator(method, system, opts)
  if luamethod.is(method) then
    local ok, it = pcall(luamethod.integrator, method, system, opts)
    if not ok then error(strip_position(it), 2) end
    return it
  end
  if type(method) ~= "string" and not run.is_rkmk(method) then
    error(("lf.integrator: method name, lf.method or lf.rkmk method expected, got %s"):format(type(method)), 2)
  end
  local ok, it = pcall(core.integrator, method, system, opts)
  if not ok then error(strip_position(it), 2) end
  return it
end

-- ---------------------------------------------------------------- checkpoints
local checkpoint_format = "lieflow-checkpoint"

--- it:save(path) -> path: a checkpoint of the integrator (method, h, time and its summation's
--- compensation, state, the adaptive step) as JSON with every number exact (%.17g); lf.load(path,
--- system) makes an integrator on `system` that resumes the run bit for bit.
local function save(it, path)
  local oki, cp = pcall(function() return it.checkpoint end)
  if not oki or type(cp) ~= "function" then
    error(("it:save: integrator expected as self, got %s (call it as it:save(path))"):format(type(it)), 2)
  end
  if type(path) ~= "string" then error(("it:save: path (string) expected, got %s"):format(type(path)), 2) end
  local okc, c = pcall(it.checkpoint, it)
  if not okc then error("it:save: " .. strip_position(c), 2) end
  c.format, c.version = checkpoint_format, 1
  c.method = it.name
  c.system_kind = it.system.kind
  local ok, err = pcall(an.write_json, path, c)
  if not ok then error("it:save: " .. strip_position(err), 2) end
  return path
end

--- lf.load(path, system [, method]) -> integrator: resumes a checkpoint written by it:save on the same
--- system (its Lua callbacks cannot be saved: give the system again). method: an lf.rkmk or lf.method
--- when the checkpoint's method is not built in.
lf.load_max_bytes = 1 << 26

function lf.load(path, system, method)
  if type(path) ~= "string" then error(("lf.load: path (string) expected, got %s"):format(type(path)), 2) end
  if path:find("\0", 1, true) then error("lf.load: the path contains a NUL byte", 2) end
  local f, err = io.open(path, "r")
  if not f then error(("lf.load: cannot open '%s': %s"):format(path, tostring(err)), 2) end
  -- at most lf.load_max_bytes: a device or a huge file (/dev/zero) is refused instead of read forever
  local text, rerr = f:read(lf.load_max_bytes + 1)
  f:close()
  if text == nil and rerr then error(("lf.load: cannot read '%s': %s"):format(path, tostring(rerr)), 2) end
  text = text or ""
  if #text > lf.load_max_bytes then
    error(("lf.load: '%s' is larger than %d bytes: not a lieflow checkpoint"):format(path, lf.load_max_bytes), 2)
  end
  local ok, c = pcall(an.json.decode, text)
  if not ok or type(c) ~= "table" or c.format ~= checkpoint_format then
    error(("lf.load: '%s' is not a lieflow checkpoint (written by it:save)"):format(path), 2)
  end
  -- the fields lf.integrator needs, checked first: a damaged file is named as such
  for _, f in ipairs{{"system_kind", "string"}, {"method", "string"}, {"h", "number"}} do
    local v = c[f[1]]
    if type(v) ~= f[2] or (f[2] == "number" and not (v == v and math.abs(v) < math.huge)) then
      error(("lf.load: '%s' is damaged: its field %s (a %s%s) is %s"):format(path, f[1],
        f[2] == "number" and "finite " or "", f[2], type(v) == f[2] and tostring(v) or type(v)), 2)
    end
  end
  -- (the kind read under pcall: argument #2 may be anything, a number or a table whose fields raise)
  local okk, kind = pcall(function() return system.kind end)
  if not okk or kind == nil or kind ~= c.system_kind then
    error(("lf.load: the checkpoint is of a %s system; give that system as argument #2 (got %s)")
      :format(tostring(c.system_kind), okk and kind ~= nil and ("a %s system"):format(tostring(kind)) or type(system)), 2)
  end
  local m = method or c.method
  local ok2, it = pcall(lf.integrator, m, system, {h = c.h, thermostat = c.thermostat})
  if not ok2 then error("lf.load: " .. strip_position(it), 2) end
  local state = {}
  for k, v in pairs(c) do
    if k ~= "format" and k ~= "version" and k ~= "method" and k ~= "system_kind" and k ~= "thermostat" then
      state[k] = v
    end
  end
  local ok3, e3 = pcall(it.restore, it, state)
  if not ok3 then error("lf.load: " .. strip_position(e3), 2) end
  return it
end

do -- it:save on the built-in integrators (their metatable's method table) and the Lua ones
  local mt = debug.getregistry()["lf.integrator"]
  if mt and mt.methods then mt.methods.save = save end
  luamethod.methods.save = save
end

return lf
