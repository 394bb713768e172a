-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow — the finalizer sweep: every function and method reachable from `lf`, called while Lua
-- code it runs finalizes an object by hand (getmetatable(x).__gc(x)).
--
-- The random fuzzer (fuzz.lua) found two use-after-frees of this kind in turn (a potential, then a
-- system finalized by an option table's __index while lf.reference read it). This sweep tries the
-- pattern systematically and deterministically: for every function, every target object (systems of
-- each kind, a potential, integrators, user methods and a composition) and every argument shape of
-- the list below, the argument is a table whose __index and __len finalize the target. Targets whose
-- own Lua callbacks finalize them (a potential or right-hand side that collects its system) are
-- called plainly. Afterwards a finalized target must be refused by name ("finalized") by its typical
-- use. Memory errors show as a crash here and as a sanitizer report under `make asan`.
--   lieflow tests/fuzz/finalize_sweep.lua       exit 0: clean; 1: findings (printed)
local lf = lf or require "lieflow"

local function finalize(obj)
  local ok, gc = pcall(function() return getmetatable(obj).__gc end)
  if ok and type(gc) == "function" then pcall(gc, obj) end
end

-- a table whose reads finalize obj (base: its raw contents)
local function finalizing(obj, base)
  return setmetatable(base or {}, {__index = function() finalize(obj) end,
                                   __len = function() finalize(obj) return 3 end})
end

local s2_flow = {factors = {"s2"}, y0 = {{0.6, 0, 0.8}}, f = "s2_gradient_flow", params = {D = {1, 1, 3}}}
local function rigid() return lf.rigidbody{inertia = {1, 2, 3}, omega = {1, 2, 3}} end
local function tableau() return lf.rkmk{name = "sweep_midpoint", A = {{0.5}}, b = {1}, c = {0.5}, order = 2, symmetric = true} end

-- targets: name -> {make = function() -> object [, holder], use = typical use, refused once finalized}
local targets = {
  rigid = {make = rigid, use = function(o) return o:energy() end},
  rigid_top = {make = function() return lf.rigidbody{inertia = {1, 2, 3}, omega = {1, 2, 3}, potential = lf.potential.top{}} end,
               use = function(o) return o:energy() end},
  pendulum = {make = function() return lf.spheres.pendulum{q = {1, 0, 0}, omega = {0, 0, 1}} end,
              use = function(o) return o:energy() end},
  dipoles = {make = function()
               return lf.spheres.dipoles{rows = 1, cols = 2, spacing = 1, m = 1, l = 1, moment = 1,
                                         q = {{1, 0, 0}, {0, 1, 0}}, omega = {{0, 0, 0}, {0, 0, 1}}}
             end, use = function(o) return o:alpha() end},
  lie_ode = {make = function() return lf.lie_ode(s2_flow) end, use = function(o) return o:f(0) end},
  potential = {make = function() return lf.potential.top{} end, use = function(o) return o:energy(lf.so3.I) end},
  integrator = {make = function() return lf.integrator("vlv", rigid(), {h = 0.1}) end, use = function(o) return o:step() end},
  integrator_ode = {make = function() return lf.integrator("rkmk4", lf.lie_ode(s2_flow), {h = 0.1}) end,
                    use = function(o) return o:step() end},
  method = {make = tableau, use = function(o) return lf.integrator(o, lf.lie_ode(s2_flow), {h = 0.1}) end},
  composition = {make = function() return lf.compose(tableau(), "suzuki4") end,
                 use = function(o) return lf.integrator(o, lf.lie_ode(s2_flow), {h = 0.1}) end},
}

-- targets that finalize themselves from their own Lua callbacks (every evaluation)
local function self_finalizing_rigid()
  local sys
  sys = lf.rigidbody{inertia = {1, 2, 3}, omega = {1, 2, 3}, potential = function(R) finalize(sys) return R[3][3] end}
  return sys
end
local function self_finalizing_ode()
  local sys
  sys = lf.lie_ode{factors = {"s2"}, y0 = {{0.6, 0, 0.8}}, f = function(_, y) finalize(sys) return {y[1]:cross{0, 0, 1}} end}
  return sys
end
targets.rigid_self = {make = self_finalizing_rigid, use = function(o) return o:energy() end, self = true}
targets.lie_ode_self = {make = self_finalizing_ode, use = function(o) return o:f(0) end, self = true}

-- argument shapes: X the target, F / F3 a finalizing table (empty / {1, 2, 3}), N 1, S "vlv", E "energy"
local shapes = {{"F"}, {"X", "F"}, {"X", "F3"}, {"X", "N", "F"}, {"X", "N", "F3"}, {"S", "X", "F"}, {"S", "X", "F3"},
                {"X", "E", "F"}, {"X", "F", "F"}, {"X", "N", "N", "F"}, {"F", "X"}, {"N", "F"}, {"X"}, {"S", "X"},
                {"X", "N"}, {"X", "E"}}

-- everything callable: lf's functions (depth 3, no private fields) and the targets' methods and metamethods
local never = {"proc", "fork", "exec", "sleep", "repl", "mkdir", "signal", "exit", "mpi", "plot", "write", "ensemble",
               "isatty", "stream", "load", "save", "view", "animate", "private_dir"}
local function excluded(path)
  for _, w in ipairs(never) do if path:find(w, 1, true) then return true end end
  return false
end
local calls = {}
local seen = {}
local function collect(t, path, depth)
  if seen[t] or depth > 3 then return end
  seen[t] = true
  local keys = {}
  for k in pairs(t) do if type(k) == "string" and not k:match("^_") then keys[#keys + 1] = k end end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v, p = t[k], path .. "." .. k
    if type(v) == "function" and not excluded(p) then calls[#calls + 1] = {path = p, fn = v}
    elseif type(v) == "table" then collect(v, p, depth + 1) end
  end
end
collect(lf, "lf", 0)
local tnames = {}
for name in pairs(targets) do tnames[#tnames + 1] = name end
table.sort(tnames)
for _, name in ipairs(tnames) do
  local o = targets[name].make()
  local mt = getmetatable(o)
  local methods = type(mt.__index) == "table" and mt.__index or mt.methods or {}
  local keys = {}
  for k, v in pairs(methods) do if type(v) == "function" then keys[#keys + 1] = k end end
  for k, v in pairs(mt) do if type(v) == "function" and k ~= "__gc" and k ~= "__close" then keys[#keys + 1] = k end end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local fn = methods[k] or mt[k]
    if not excluded(k) then calls[#calls + 1] = {path = name .. ":" .. k, fn = fn, self = name} end
  end
end

local findings, ncalls = {}, 0
local function finding(msg) findings[#findings + 1] = msg end

local function run(c, tname, shape)
  local target = targets[tname]
  local ok, obj = pcall(target.make)
  if not ok then return finding(("%s: cannot make the target: %s"):format(tname, tostring(obj))) end
  local args = {}
  for i, k in ipairs(shape) do
    args[i] = k == "X" and obj or k == "F" and finalizing(obj) or k == "F3" and finalizing(obj, {1, 2, 3})
              or k == "N" and 1 or k == "S" and "vlv" or "energy"
  end
  if c.self then -- a method: self is the target if it is of the same kind, else a fresh object of that kind
    args[1] = c.self == tname and obj or targets[c.self].make()
  end
  local co = coroutine.create(function() return pcall(c.fn, table.unpack(args, 1, #shape)) end)
  debug.sethook(co, function() error("finalize_sweep: call too long") end, "", 10000000)
  coroutine.resume(co)
  ncalls = ncalls + 1
  -- a finalized target is refused by its typical use, and says so
  if tostring(obj):find("finalized", 1, true) then
    local ok2, err = pcall(target.use, obj)
    if ok2 or not tostring(err):find("finalized", 1, true) then
      finding(("%s(%s) finalized %s, then its use %s"):format(c.path, table.concat(shape, ", "), tname,
        ok2 and "succeeded" or ("raised another error: " .. tostring(err))))
    end
  end
end

for _, c in ipairs(calls) do
  for _, tname in ipairs(tnames) do
    for _, shape in ipairs(targets[tname].self and {{"X"}, {"X", "N"}, {"X", "E"}, {"S", "X"}, {"X", "N", "N"}} or shapes) do
      run(c, tname, shape)
    end
  end
  collectgarbage()
end

for _, f in ipairs(findings) do io.stderr:write("finalize_sweep: ", f, "\n") end
io.stderr:write(("finalize_sweep: %d functions x %d targets, %d calls, %d finding(s)\n"):format(#calls, #tnames, ncalls,
  #findings))
os.exit(#findings == 0 and 0 or 1)
