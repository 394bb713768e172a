-- lieflow — integrators written in Lua (lf.method), driven through the same interface as the
-- built-in ones: it:step(n), it:advance_to(T), it.t, it.R, it.omega, it:energy(), ...
local core = require "lieflow.core"

local M = {}
local method_mt = {__name = "lf.method"}
method_mt.__index = method_mt
method_mt.__tostring = function(m) return ("lf.method(%s, order %s)"):format(m.name, tostring(m.order)) end

--- lf.method{name=, order=, step=function(state, h, system) -> state' or nothing (mutate state)}
--- state = {t=, R=, omega=} (R a mat3 and omega a vec3 for one body, arrays of them for several).
function M.define(spec)
  if type(spec) ~= "table" then error("lf.method: table {name=, order=, step=} expected", 2) end
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

local it_mt = {__name = "lf.luaintegrator"}

local function finite(x) return type(x) == "number" and x == x and x ~= math.huge and x ~= -math.huge end
local methods = {}

local function copy_state(s, n)
  local function cp(x) return n == 1 and x:copy() or (function() local t = {} for i, v in ipairs(x) do t[i] = v:copy() end return t end)() end
  return {t = s.t, R = cp(s.R), omega = cp(s.omega)}
end

-- Check a state produced by a Lua step: rotations (within 1e-6: Lua methods may accumulate
-- round-off) and finite velocities; errors name the method and the time.
local function check_state(it, s, h)
  local n = it.system.n
  local Rs, ws = s.R, s.omega
  if n == 1 then Rs, ws = {Rs}, {ws} end
  if type(Rs) ~= "table" or type(ws) ~= "table" or #Rs ~= n or #ws ~= n then
    error(("%s: step from t=%.17g returned a malformed state (fields R and omega expected)"):format(it.method.name, it.t), 3)
  end
  -- fresh arrays of copies: the caller's arrays (set_state) are neither rewritten nor aliased
  local outR, outw = {}, {}
  for i = 1, n do
    if Rs[i] == nil or ws[i] == nil then
      error(("%s: state at t=%.17g has no R or omega for body %d"):format(it.method.name, it.t, i), 3)
    end
    local R = core.mat3(Rs[i])
    if not core.so3.is_rotation(R, 1e-6) then
      error(("%s: step from t=%.17g with h=%g left R%s off SO(3) (||R^T R - I|| = %.3g)"):format(
        it.method.name, it.t, h, n > 1 and "[" .. i .. "]" or "", core.so3.orth_error(R)), 3)
    end
    outR[i], outw[i] = R, core.vec3(ws[i])
  end
  if n == 1 then s.R, s.omega = outR[1], outw[1] else s.R, s.omega = outR, outw end
end

function methods:step(nsteps)
  nsteps = math.tointeger(nsteps or 1) -- 1e3 is accepted, as by the built-in integrators
  if not nsteps or nsteps < 0 then error("step: number of steps must be an integer >= 0", 2) end
  for _ = 1, nsteps do self:_step(self.h) end
  return self
end

function methods:_step(h)
  local s = copy_state(self.state_, self.system.n)
  local ok, res, w = pcall(self.method.step, s, h, self.system)
  if not ok then
    error(("%s: step from t=%.17g with h=%g failed: %s"):format(self.method.name, self.state_.t, h, tostring(res)), 3)
  end
  if type(res) == "table" then s = res elseif res ~= nil then s.R, s.omega = res, w end
  check_state(self, s, h)
  -- t += h with compensated (Kahan) summation, as the built-in integrators do: after k steps
  -- t is k h to round-off, not k h plus k accumulated rounding errors
  local t0 = self.state_.t
  local y = h - self.tc_
  local t = t0 + y
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
  self:step(n)
  local rest = T - self.state_.t
  if math.abs(rest) > 1e-12 * math.abs(h) * (1 + n) then self:_step(rest) end
  self.state_.t = T
  self.tc_ = 0
  return self
end

function methods:energy() return self.system:energy(self.state_) end
function methods:state() return copy_state(self.state_, self.system.n) end
function methods:set_state(s)
  local new = copy_state(self.state_, self.system.n)
  for k, v in pairs(s) do new[k] = v end
  if s.momentum then error("set_state: give omega for a Lua integrator", 2) end
  if not finite(new.t) then error(("set_state: field 't' must be a finite number, got %s"):format(tostring(new.t)), 2) end
  check_state(self, new, 0)
  self.state_ = new
  self.tc_ = 0
  return self
end

local fields = {
  t = function(it) return it.state_.t end,
  R = function(it) return copy_state(it.state_, it.system.n).R end,
  omega = function(it) return copy_state(it.state_, it.system.n).omega end,
  name = function(it) return it.method.name end,
  momentum = function(it)
    local J, w = it.system.inertia, it.state_.omega
    if it.system.n == 1 then return core.vec3{J[1] * w[1], J[2] * w[2], J[3] * w[3]} end
    local out = {}
    for i = 1, it.system.n do out[i] = core.vec3{J[i][1] * w[i][1], J[i][2] * w[i][2], J[i][3] * w[i][3]} end
    return out
  end,
  spatial_momentum = function(it)
    local J, R, w = it.system.inertia, it.state_.R, it.state_.omega
    if it.system.n == 1 then J, R, w = {J}, {R}, {w} end
    local pi = core.vec3{0, 0, 0}
    for i = 1, #R do pi = pi + R[i] * core.vec3{J[i][1] * w[i][1], J[i][2] * w[i][2], J[i][3] * w[i][3]} end
    return pi
  end,
  orthogonality = function(it)
    local R = it.state_.R
    if it.system.n == 1 then return core.so3.orth_error(R) end
    local worst = 0
    for i = 1, #R do worst = math.max(worst, core.so3.orth_error(R[i])) end
    return worst
  end,
}

fields.h = function(it) return it.h_ end

it_mt.__index = function(it, k)
  local f = fields[k]
  if f then return f(it) end
  return methods[k]
end
-- Only h can be set (as for the built-in integrators); the raw fields (method, system, steps,
-- state_, h_, tc_) never reach __newindex.
it_mt.__newindex = function(it, k, v)
  if k == "h" then
    if not finite(v) or v == 0 then error(("integrator.h must be a finite nonzero number, got %s"):format(tostring(v)), 2) end
    rawset(it, "h_", v)
    return
  end
  error(("integrator: field '%s' is read-only (use set_state or h)"):format(tostring(k)), 2)
end
it_mt.__tostring = function(it) return ("lf.integrator(%s [Lua], h = %g, t = %g)"):format(it.method.name, it.h, it.state_.t) end

--- An integrator running a Lua method on a system.
function M.integrator(method, system, opts)
  opts = opts or {}
  local mt = type(system) == "userdata" and getmetatable(system)
  if not (mt and mt.__name == "lf.system") then
    error(("lf.integrator: argument #2 must be a system (lf.rigidbody or lf.bodies), got %s"):format(
      mt and mt.__name or type(system)), 3)
  end
  local h = opts.h
  if not finite(h) or h == 0 then
    error(("lf.integrator: option 'h' must be a finite nonzero number, got %s"):format(tostring(h)), 3)
  end
  local t0 = opts.t0 or 0
  if not finite(t0) then error(("lf.integrator: option 't0' must be a finite number, got %s"):format(tostring(t0)), 3) end
  local it = {method = method, system = system, h_ = h, steps = 0, tc_ = 0,
              state_ = {t = t0, R = system.R, omega = system.omega}}
  return setmetatable(it, it_mt)
end

return M
