-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow Lua API fuzzer — the hostile values (tests/fuzz/fuzz.lua).
--
-- Every value the fuzzer passes is made by one of the constructors below, called by name with
-- plain arguments (numbers, strings, booleans, pool references). The fuzzer logs each call as the
-- Lua expression that rebuilds its arguments (V.deep(200), V.liar_len({1, 2, 3}, 2^61), ...), so
-- a log is a script that replays the run: `build/lieflow <log>` (see fuzz.lua, "Replaying").
local V = {}

V.sandbox = os.getenv("LIEFLOW_FUZZ_DIR") or "."

-- ------------------------------------------------------------------ numbers
V.numbers = {
  "0", "-0.0", "1", "-1", "2", "3", "0.5", "0.125", "1e-3", "100", "1e4",
  "0/0", "1/0", "-1/0", "5e-324", "-5e-324", "2.2250738585072014e-308", "1e-310", "1e-160", "1e154",
  "1e200", "1e308", "-1e308", "1.7976931348623157e308", "math.maxinteger", "math.mininteger",
  "2^53", "2^53 + 1", "2^63", "(1 << 61) + 1", "-(1 << 31)", "1 << 31", "math.pi", "-math.pi",
  "1e-9", "3.14159265358979",
}
V.sane_numbers = {"0", "1", "0.5", "0.125", "0.25", "2", "3", "1e-3", "10", "0.3", "0.7227", "-1", "4"}

-- ------------------------------------------------------------------ strings
V.strings = {
  '""', '"%s%s%s%n"', '"%d%99999999d"', '"a\\0b"', '"\\255\\254\\0"', '("x"):rep(100000)',
  '"vlv"', '"eln"', '"rkmk4"', '"nonexistent_method"', '"energy"', '"energy_error"', '"t"',
  '"__index"', '"__gc"', '"R"', '"omega"', '"x"', '"-x.png"', '"$x.png"', '"x.svg"', '"x.csv"',
  '"/dev/full"', '"/dev/null"', '"/proc/nonexistent/f.csv"',
  'V.sandbox .. "/f.json"', 'V.sandbox .. "/sub/dir/p.png"', 'V.sandbox .. "/a\\0b.csv"', 'V.sandbox',
  '"top left"', '"nan"', '"1e400"', '"  3  "', '"\\n\\r\\t"', '"\'\\"`$(echo x)`"',
}
-- strings that must never be used as a program to run (lf.plot{gnuplot=}, gnuplot_available)
V.safe_exe = {'"/nonexistent/gnuplot"', '"gnuplot"', 'V.sandbox .. "/not-a-program"', '"/dev/null"'}

-- ------------------------------------------------------------------ tables
function V.t(...) return {...} end
function V.nested(n) -- {{...}} n levels deep
  local t = {}
  for _ = 1, n do t = {t} end
  return t
end
function V.deep(n) -- n levels, with numbers along the way
  local t = {1, 2, 3}
  for i = 1, n do t = {t, i, {x = t}} end
  return t
end
function V.cyclic()
  local t = {1, 2, 3}
  t[4] = t
  t.self = t
  return t
end
function V.vec(a, b, c) return {a, b, c} end
-- t with t[k] = v (a checkpoint with one field changed: V.with(it:checkpoint(), "noise_step", -1))
function V.with(t, k, v)
  if type(t) == "table" then t[k] = v end
  return t
end
function V.rows(a, b, c) return {a, b, c} end
function V.mat9(...) return {...} end
function V.holes() return {1, nil, 3, [5] = 5, [2 ^ 40] = 1} end
function V.big_array(n, x)
  local t = {}
  for i = 1, n do t[i] = x or i end
  return t
end
function V.liar_len(t, n) return setmetatable(t, {__len = function() return n end}) end
function V.len_error(t) return setmetatable(t, {__len = function() error("fuzz: __len raised") end}) end
function V.len_yield(t) return setmetatable(t, {__len = function() coroutine.yield("fuzz: __len yielded") end}) end
function V.len_string(t) return setmetatable(t, {__len = function() return "7" end}) end
function V.index_fn(t, kind)
  return setmetatable(t, {__index = function(_, k)
    if kind == "error" then error("fuzz: __index raised") end
    if kind == "yield" then coroutine.yield("fuzz: __index yielded") end
    if kind == "gc" then collectgarbage() return 1 end
    if kind == "nan" then return 0 / 0 end
    if kind == "self" then return t end
    return k
  end})
end
-- a table whose __index finalizes an object by hand (closes an integrator while the library reads
-- the table, e.g. it:set_state(V.index_finalize({}, it)))
function V.index_finalize(t, obj)
  return setmetatable(t, {__index = function(_, k)
    local ok, gc = pcall(function() return getmetatable(obj).__gc end)
    if ok and type(gc) == "function" then pcall(gc, obj) end
    return nil
  end})
end
function V.newindex_error(t) return setmetatable(t, {__newindex = function() error("fuzz: __newindex raised") end}) end
function V.eq_liar(t) return setmetatable(t, {__eq = function() return true end, __lt = function() return true end,
                                             __le = function() error("fuzz: __le raised") end}) end
function V.tostring_error(t) return setmetatable(t, {__tostring = function() error("fuzz: __tostring raised") end}) end
function V.tostring_nonstring(t) return setmetatable(t, {__tostring = function() return {} end}) end
function V.name_nonstring(t) return setmetatable(t, {__name = 42}) end
function V.protected(t) return setmetatable(t, {__metatable = "locked", __index = function() return 0 end}) end
-- a finalizer that misbehaves: raises, collects, or resurrects the object into a global
function V.gc_bomb(kind)
  return setmetatable({}, {__gc = function(o)
    if kind == "error" then error("fuzz: __gc raised") end
    if kind == "collect" then collectgarbage() end
    if kind == "resurrect" then _G.__fuzz_resurrected = o end
  end})
end
function V.closeable(kind)
  return setmetatable({}, {__close = function() if kind == "error" then error("fuzz: __close raised") end end})
end
-- a table that looks like a dual number to the binding (metatable with __lf_dual)
function V.fake_dual() return setmetatable({1, 2, 3}, {__lf_dual = true, __index = function() return 0 end}) end

-- ------------------------------------------------------------------ functions (callbacks)
-- kind: what the callback does; arg: a number or an object it uses
function V.fn(kind, arg)
  local depth = 0
  return function(...)
    if kind == "const" then return arg end
    if kind == "nan" then return 0 / 0 end
    if kind == "inf" then return 1 / 0 end
    if kind == "nil" then return nil end
    if kind == "string" then return "1" end
    if kind == "table" then return {1, 2, 3} end
    if kind == "vec3" then return lf.vec3{1e-3, 0, 0} end
    if kind == "mat3" then return lf.so3.I end
    if kind == "error" then error("fuzz: callback raised") end
    if kind == "error_table" then error({code = 1}) end
    if kind == "error_long" then error(("fuzz callback raised a very long message "):rep(40)) end
    if kind == "yield" then return coroutine.yield("fuzz: callback yielded") end
    if kind == "gc" then collectgarbage(); return 0 end
    if kind == "busy" then local x = 0 for i = 1, 1e12 do x = x + i end return x end
    if kind == "recurse" and type(arg) == "function" then
      -- call an API function from inside the callback, with the callback's own arguments
      depth = depth + 1
      if depth <= 3 then pcall(arg, ...) end
      depth = depth - 1
      return 0
    end
    if kind == "reenter" and arg ~= nil then
      -- step the object that may be calling us (an integrator stepping from its own potential)
      local ok, step = pcall(function() return arg.step end)
      if ok and type(step) == "function" then pcall(step, arg) end
      return 0
    end
    if kind == "finalize" and arg ~= nil then
      -- run the object's finalizer by hand from inside a callback (a potential closing its system)
      local ok, gc = pcall(function() return getmetatable(arg).__gc end)
      if ok and type(gc) == "function" then pcall(gc, arg) end
      return 0
    end
    if kind == "energy" and arg then local ok, e = pcall(function() return arg:energy() end) return ok and e or 0 end
    return 0
  end
end

return V
