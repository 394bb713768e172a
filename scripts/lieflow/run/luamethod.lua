-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — integrators written in Lua (lf.method), driven through the same interface as the
-- built-in ones: it:step(n), it:advance_to(T), it.t, the system's fields (it.R, it.omega, it.y, ...),
-- its observables, it:energy(), it:state(), it:set_state(s), it:observe(), it:error(ref).
-- The step function receives a copy of the state {t=, <fields>=} (the system's fields: R and omega
-- for rigid bodies, y for Lie-group ODEs, ...) and the system; it returns the new state or updates
-- the one it was given. The result is checked on the manifold within 1e-6 (Lua steps may
-- accumulate round-off) and converted to the canonical types.
local core = require "lieflow.core"
local options = require "lieflow.options"

local M = {}
local method_mt = {__name = "lf.method"}
method_mt.__index = method_mt
method_mt.__tostring = function(m)
  if getmetatable(m) ~= method_mt then error(("lf.method __tostring: lf.method expected, got %s"):format(type(m)), 2) end
  return ("lf.method(%s, order %s)"):format(m.name, tostring(m.order))
end

--- lf.method{name=, order=, step=function(state, h, system) -> state' or nothing (mutate state)}
function M.define(spec)
  if type(spec) ~= "table" then error("lf.method: table {name=, order=, step=} expected", 2) end
  options.check_keys(spec, {"name", "step", "order", "title", "symmetric", "symplectic"}, "lf.method")
  if type(spec.name) ~= "string" then error("lf.method: field 'name' (string) is required", 2) end
  if type(spec.step) ~= "function" then
    error(("lf.method %s: field 'step' must be a function(state, h, system), got %s"):format(spec.name, type(spec.step)), 2)
  end
  if spec.order ~= nil and (math.type(spec.order) ~= "integer" or spec.order < 1) then
    error(("lf.method %s: field 'order' must be a positive integer, got %s"):format(spec.name, tostring(spec.order)), 2)
  end
  local m = {name = spec.name, title = spec.title or spec.name, order = spec.order, step = spec.step,
             symmetric = spec.symmetric, symplectic = spec.symplectic or "unknown", implementation = "Lua"}
  return setmetatable(m, method_mt)
end

function M.is(x) return getmetatable(x) == method_mt end

-- The state after a step function returned (res, second) for the state s it was given: a new
-- state table, the values of the first two fields (e.g. return R, omega), or nothing (s mutated).
-- Fields a new table leaves out keep their values in s, as in the two other forms (a step written
-- for {R, omega} given a body that translates: x and v stay where they are, not reset to the
-- system's initial x and v by canonical).
local function step_result(s, res, second, system)
  if type(res) == "table" and getmetatable(res) == nil then
    local out = {}
    for k, v in pairs(res) do out[k] = v end -- (the step's own table is not changed: it may keep it)
    for _, f in ipairs(system.fields) do
      if out[f] == nil then out[f] = s[f] end
    end
    return out
  end
  if res ~= nil then
    local names = system.fields
    s[names[1]] = res
    if names[2] then s[names[2]] = second end
  end
  return s
end

--- The composition of a symmetric Lua method with a scheme (a table of core.compose_schemes():
--- name, order, form, coefficients): an lf.method whose step runs the base's step with the
--- sub-steps c_i h, the state's t advancing through the stages, as the C composition does
--- (core/method/compose.c). Order max(base order, scheme order); symplectic as the base.
function M.compose(base, scheme)
  if base.symmetric ~= true then
    error(("lf.compose: the Lua method %s does not declare symmetric = true; composition schemes raise the "
           .. "order of symmetric methods only"):format(base.name), 3)
  end
  if scheme.form ~= "symmetric" then
    error(("lf.compose: scheme %s is a splitting of the C splitting methods (dlm, no_squish, split_exact), not a "
           .. "composition of any symmetric method; use triple_jump4, suzuki4, kahan_li6 or kahan_li8"):format(scheme.name), 3)
  end
  if scheme.processor then
    error(("lf.compose: scheme %s is processed (a kernel run in variables of a processor that changes with "
           .. "h); the C methods take it, a Lua method takes the unprocessed schemes (triple_jump4, suzuki4, "
           .. "kahan_li6, kahan_li8, mclachlan8)"):format(scheme.name), 3)
  end
  local c, step = scheme.coefficients, base.step
  local function composed(state, h, system)
    local t0, elapsed, s = state.t, 0, state
    for i = 1, #c do
      s.t = t0 + elapsed
      local res, second = step(s, c[i] * h, system)
      s = step_result(s, res, second, system)
      elapsed = elapsed + c[i] * h
    end
    s.t = t0
    return s
  end
  return M.define{name = base.name .. "_" .. scheme.name, order = math.max(base.order or 2, scheme.order),
                  title = ("%s composed by %s"):format(base.name, scheme.title), step = composed,
                  symmetric = true, symplectic = base.symplectic}
end

local it_mt = {__name = "lf.luaintegrator"}

local function finite(x) return type(x) == "number" and x == x and x ~= math.huge and x ~= -math.huge end
local methods = {}

-- A deep copy of a state value (vec3/mat3 have :copy(); tables are copied recursively). A state is
-- at most a few levels deep: deeper (a cyclic table) is an error, as is a userdata without copy.
local function copy(x, depth)
  depth = depth or 0
  if depth > 16 then error("a state value nested more than 16 levels deep (a cyclic table?)", 0) end
  if type(x) == "userdata" then
    local ok, c = pcall(function() return x:copy() end)
    if not ok then
      local mt = getmetatable(x)
      error(("a state value is a %s, not a vec3, mat3 or number"):format(type(mt) == "table" and mt.__name or "userdata"), 0)
    end
    return c
  end
  if type(x) ~= "table" then return x end
  local t = {}
  for k, v in pairs(x) do t[k] = copy(v, depth + 1) end
  return t
end

-- Check a state produced by a Lua step and convert it to the canonical types; errors name the
-- method and the time.
local function canonical(it, s, h)
  if type(s) ~= "table" then
    error(("%s: step from t=%.17g returned a malformed state (a table of fields expected)"):format(it.method.name, it.t), 0)
  end
  local ok, res = pcall(it.system.canonical, it.system, s, 1e-6)
  if not ok then
    error(("%s: step from t=%.17g with h=%g left an invalid state: %s"):format(it.method.name, it.t, h, tostring(res)), 0)
  end
  return res
end

function methods:step(nsteps)
  nsteps = math.tointeger(nsteps or 1) -- 1e3 is accepted, as by the built-in integrators
  if not nsteps or nsteps < 0 then error("step: number of steps must be an integer >= 0", 2) end
  -- a failing step's error (raised without a position) is reported at the caller's line
  local ok, err = pcall(function() for _ = 1, nsteps do self:_step(self.h) end end)
  if not ok then error(err, 2) end
  return self
end

function methods:_step(h)
  local s = copy(self.state_)
  local ok, res, second = pcall(self.method.step, s, h, self.system)
  if not ok then
    error(("%s: step from t=%.17g with h=%g failed: %s"):format(self.method.name, self.state_.t, h, tostring(res)), 0)
  end
  s = step_result(s, res, second, self.system)
  s.t = self.state_.t
  s = canonical(self, s, h)
  -- t += h with compensated (Kahan) summation, as the built-in integrators do: after k steps
  -- t is k h to round-off, not k h plus k accumulated rounding errors
  local t0 = self.state_.t
  local y = h - self.tc_
  local t = t0 + y
  if not finite(t) then
    error(("%s: step from t=%.17g with h=%g: the time overflows"):format(self.method.name, t0, h), 0)
  end
  self.tc_ = (t - t0) - y
  s.t = t
  self.state_ = s
  self.steps = self.steps + 1
end

function methods:advance_to(T)
  if type(T) ~= "number" or T ~= T or T == math.huge or T == -math.huge then
    error(("advance_to: finite target time expected, got %s"):format(tostring(T)), 2)
  end
  local h, t = self.h, self.state_.t
  if (T - t) * h < 0 then error(("advance_to(%g): target lies behind t=%g for h=%g"):format(T, t, h), 2) end
  local n = math.floor((T - t) / h * (1 + 1e-12))
  local ok, err = pcall(function()
    for _ = 1, n do self:_step(h) end
    local rest = T - self.state_.t
    if math.abs(rest) > 1e-12 * math.abs(h) * (1 + n) then self:_step(rest) end
  end)
  if not ok then error(err, 2) end
  self.state_.t = T
  self.tc_ = 0
  return self
end

function methods:energy() return self.system:energy(self.state_) end
function methods:state() return copy(self.state_) end
function methods:set_state(s)
  if type(s) ~= "table" then error(("set_state: state table expected, got %s"):format(type(s)), 2) end
  if s.momentum then error("set_state: give omega for a Lua integrator", 2) end
  local new, known = copy(self.state_), {t = true}
  for _, f in ipairs(self.system.fields) do known[f] = true end
  for k, v in pairs(s) do
    if not known[k] then
      error(("set_state: unknown field '%s' (fields: t, %s)"):format(tostring(k), table.concat(self.system.fields, ", ")), 2)
    end
    local ok, c = pcall(copy, v)
    if not ok then error(("set_state: field '%s': %s"):format(k, c), 2) end
    new[k] = c
  end
  if not finite(new.t) then error(("set_state: field 't' must be a finite number, got %s"):format(tostring(new.t)), 2) end
  local t = new.t
  local ok, res = pcall(self.system.canonical, self.system, new, 1e-9)
  if not ok then error("set_state: " .. tostring(res), 2) end
  res.t = t
  self.state_ = res
  self.tc_ = 0
  return self
end
function methods:columns() return self.system:columns() end
function methods:checkpoint()
  local c = copy(self.state_)
  c.t_comp, c.h, c.steps, c.next_h = self.tc_, self.h_, self.steps, 0
  return c
end
function methods:restore(c)
  if type(c) ~= "table" then error(("restore: checkpoint table expected, got %s"):format(type(c)), 2) end
  local s = {}
  for _, f in ipairs(self.system.fields) do s[f] = c[f] end
  s.t = c.t
  self:set_state(s)
  self.tc_ = c.t_comp or 0
  if c.h then rawset(self, "h_", c.h) end
  if c.steps then rawset(self, "steps", c.steps) end
  return self
end
function methods:observe() return self.state_.t, self.system:observe(self.state_, self.state_.t) end
function methods:error(ref) return self.system:error(self.state_, ref) end

local fields = {
  t = function(it) return it.state_.t end,
  name = function(it) return it.method.name end,
  h = function(it) return it.h_ end,
}

-- the integrator's methods and metamethods called by hand on another value: a clear error
local function check_it(it, what)
  if getmetatable(it) ~= it_mt or rawget(it, "state_") == nil then
    error(("%s: an integrator expected (call it as it:%s(...)), got %s"):format(what, what, type(it)), 3)
  end
end
for name, f in pairs(methods) do
  methods[name] = function(it, ...)
    check_it(it, name)
    return f(it, ...)
  end
end

it_mt.__index = function(it, k)
  check_it(it, "__index")
  local f = fields[k]
  if f then return f(it) end
  local m = methods[k]
  if m then return m end
  local state = rawget(it, "state_")
  if state[k] ~= nil and k ~= "t" then return copy(state[k]) end
  local ok, v = pcall(it.system.observable, it.system, k, state, state.t)
  if ok then return v end
  return nil
end
-- Only h can be set (as for the built-in integrators); the raw fields (method, system, steps,
-- state_, h_, tc_) never reach __newindex.
it_mt.__newindex = function(it, k, v)
  check_it(it, "__newindex")
  if k == "h" then
    if not finite(v) or v == 0 then error(("integrator.h must be a finite nonzero number, got %s"):format(tostring(v)), 2) end
    rawset(it, "h_", v)
    return
  end
  error(("integrator: field '%s' is read-only (use set_state or h)"):format(tostring(k)), 2)
end
it_mt.__tostring = function(it)
  check_it(it, "__tostring")
  return ("lf.integrator(%s [Lua], h = %g, t = %g)"):format(it.method.name, it.h, it.state_.t)
end

--- An integrator running a Lua method on a system.
function M.integrator(method, system, opts)
  opts = opts or {}
  if type(opts) ~= "table" then error(("lf.integrator: argument #3 must be an options table, got %s"):format(type(opts)), 3) end
  options.check_keys(opts, {"h", "t0"}, ("lf.integrator (method %s written in Lua)"):format(tostring(method.name)), 3)
  local mt = type(system) == "userdata" and getmetatable(system)
  if not (mt and mt.__name == "lf.system") then
    error(("lf.integrator: argument #2 must be a system (lf.rigidbody, lf.bodies, lf.lie_ode, ...), got %s"):format(
      mt and mt.__name or type(system)), 3)
  end
  local h = opts.h
  if not finite(h) or h == 0 then
    error(("lf.integrator: option 'h' must be a finite nonzero number, got %s"):format(tostring(h)), 3)
  end
  local t0 = opts.t0 or 0
  if not finite(t0) then error(("lf.integrator: option 't0' must be a finite number, got %s"):format(tostring(t0)), 3) end
  local state = {t = t0}
  for _, f in ipairs(system.fields) do state[f] = system[f] end
  local it = {method = method, system = system, h_ = h, steps = 0, tc_ = 0, state_ = state}
  return setmetatable(it, it_mt)
end

M.methods = methods

return M
