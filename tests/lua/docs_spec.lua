-- SPDX-License-Identifier: GPL-3.0-or-later
-- docs/api.md, the reference of the Lua module, checked against the module itself:
-- (a) every public function has an entry: the functions reachable from `lf` (to depth 3: lf.a.b.c)
--     and the methods of the objects lieflow makes (integrators, systems, trajectories, vec3, mat3,
--     potentials), found by walking them, not from a list kept here; the methods table of
--     "## methods" is the output of docs/methods_table.lua (every registered method, its metadata);
-- (b) every ```lua example of docs/api.md runs (each block on its own, with `lf` in scope);
-- (c) lf.help(x) / require("lieflow.help").text(x) show the entry of x, by value and by name, also
--     in the executable (docs/api.md compiled in as lieflow.apidoc).
local lf = require "lieflow"
local help = require "lieflow.help"
local luamethod = require "lieflow.run.luamethod"

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local ROOT = here .. "/../.."

local function read(p)
  local f = assert(io.open(p, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- Public names that have no entry, on purpose (prefix match on the dotted name).
local EXCLUDED = {
  -- the C binding (lieflow.core): its public functions are re-exported as lf.* and checked under
  -- those names (the same function values); the rest (core.proc, core.dual,
  -- core.isatty, core.wall_time, core.binary, ...) are the internals of lf.run, lf.ensemble and
  -- the autodiff module
  ["lf.core"] = true,
}
-- Names that start with "_" (it:_step of the integrators written in Lua) are internal too.

-- ------------------------------------------------------------------ docs/api.md

local API_TEXT = read(ROOT .. "/docs/api.md")

-- The entries ("### name(args) -> result", named as help.lua names them), their ```lua blocks, and
-- the lines inside code blocks (help.lua does not know about code blocks: a line "# x" in one
-- would end the entry).
local function parse(text)
  local entries, list, blocks, code_headings = {}, {}, {}, {}
  local cur, section, in_code, lang, buf, start
  local n = 0
  for line in (text .. "\n"):gmatch("(.-)\n") do
    n = n + 1
    if in_code then
      if line:match("^```%s*$") then
        in_code = false
        if lang == "lua" then
          blocks[#blocks + 1] = {entry = cur and cur.name or ("## " .. tostring(section)), code = table.concat(buf, "\n"),
                                 line = start}
          if cur then cur.examples = cur.examples + 1 end
        end
      else
        buf[#buf + 1] = line
        if line:match("^#+%s") then code_headings[#code_headings + 1] = n end
      end
    elseif line:match("^```") then
      in_code, lang, buf, start = true, line:match("^```%s*(%S*)"), {}, n
    else
      local level, heading = line:match("^(#+)%s+(.*)$")
      if level and #level <= 2 then cur, section = nil, heading end
      if level and #level == 3 then
        local name = heading:match("^`?([%w_%.:]+)")
        cur = {name = name, heading = heading, section = section, examples = 0, line = n}
        list[#list + 1] = cur
        entries[name] = entries[name] or {}
        table.insert(entries[name], cur)
      end
    end
  end
  return entries, list, blocks, code_headings
end

local ENTRIES, LIST, BLOCKS, CODE_HEADINGS = parse(API_TEXT)

local function has_entry(name) return ENTRIES[name] ~= nil end

-- ------------------------------------------------------------------ the public surface

local function callable(v)
  if type(v) == "function" then return true end
  local mt = type(v) == "table" and getmetatable(v)
  return type(mt) == "table" and type(rawget(mt, "__call")) == "function"
end

local function excluded(name)
  for p in pairs(EXCLUDED) do
    if name == p or name:sub(1, #p + 1) == p .. "." then return true end
  end
  return false
end

-- function value -> the names it is reachable under (lf.math.sqrt is also lf.autodiff.math.sqrt)
local function module_functions()
  local names, order = {}, {}
  local function add(v, name)
    if not names[v] then names[v] = {}; order[#order + 1] = v end
    table.insert(names[v], name)
  end
  local function walk(t, prefix, depth, stack)
    local keys = {}
    for k in pairs(t) do if type(k) == "string" then keys[#keys + 1] = k end end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local v, name = rawget(t, k), prefix .. k
      if not k:match("^_") and not excluded(name) then
        if callable(v) then add(v, name) end
        if type(v) == "table" and depth < 3 and not stack[v] then
          stack[v] = true
          walk(v, name .. ".", depth + 1, stack)
          stack[v] = nil
        end
      end
    end
  end
  walk(lf, "lf.", 1, {[lf] = true})
  return names, order
end

-- Names an object may answer to with a method: its metatable's method tables, its __lf_fields
-- (what the REPL completes), its own keys, and every name the C binding's __index functions
-- compare a key with (strcmp(k, "...") in lua/*.c): a method added there is found here.
local C_NAMES = {}
do
  local p = io.popen("ls " .. ROOT .. "/lua/*.c 2>/dev/null")
  for f in p:lines() do
    for name in read(f):gmatch('strcmp%(k, "([%w_]+)"%)') do C_NAMES[name] = true end
  end
  p:close()
end

local function candidate_names(obj)
  local set = {}
  local function add_keys(t) if type(t) == "table" then for k in pairs(t) do if type(k) == "string" then set[k] = true end end end end
  local mt = getmetatable(obj)
  if type(mt) == "table" then
    add_keys(rawget(mt, "methods"))
    if type(rawget(mt, "__index")) == "table" then add_keys(mt.__index) end
    if type(rawget(mt, "__lf_fields")) == "function" then
      local ok, names = pcall(mt.__lf_fields, obj)
      if ok and type(names) == "table" then for _, n in ipairs(names) do set[n] = true end end
    end
  end
  if type(obj) == "table" then add_keys(obj) end
  for k in pairs(C_NAMES) do set[k] = true end
  local out = {}
  for k in pairs(set) do out[#out + 1] = k end
  table.sort(out)
  return out
end

-- {label, object, prefixes}: a method m of the object must have an entry "<prefix>:m" for one of
-- the prefixes (the variable names docs/api.md uses for the object).
local function objects()
  local body = lf.rigidbody{inertia = {2, 2, 4}, R = lf.so3.exp{0, 0.7227, 0}, omega = {0, 0, 0.625},
                            potential = lf.potential.stress{alpha = 0.3}}
  local bodies = lf.bodies{{inertia = {1, 2, 2}}, {inertia = {2, 2, 3}}}
  local ode = lf.lie_ode{factors = {"s2"}, y0 = {{0, 0, 1}}, f = function(_, y) return {y[1]:cross{0, 0, 1}} end}
  local sph = lf.spheres.pendulum{q = {1, 0, 0}, omega = {0, 0, 1}}
  local lua_method = lf.method{name = "docs_spec_euler", step = function(s, h) s.R = s.R * lf.so3.exp(s.omega * h) end}
  local sys_prefixes = {"sys", "body", "sph"}
  return {
    {"integrator (lf.integrator)", lf.integrator("vlv", body, {h = 0.1}), {"it"}},
    {"integrator of an lf.method", lf.integrator(lua_method, body, {h = 0.1}), {"it"}},
    {"integrator with lanes", lf.integrator("vlv", body, {h = 0.1, lanes = {{}, {}}}), {"it"}},
    {"rigid-body system (lf.rigidbody)", body, sys_prefixes},
    {"rigid-body system (lf.bodies)", bodies, sys_prefixes},
    {"lie_ode system", ode, sys_prefixes},
    {"spheres system", sph, sys_prefixes},
    {"trajectory (lf.run)", lf.run(body, {method = "vlv", h = 0.1, T = 0.2}), {"traj"}},
    {"vec3", lf.vec3{1, 2, 3}, {"v"}},
    {"mat3", lf.mat3(), {"A"}},
    {"potential (lf.potential.*)", lf.potential.stress(), {"pot"}},
  }
end

local function method_entry(name, prefixes)
  for _, p in ipairs(prefixes) do
    if has_entry(p .. ":" .. name) then return p .. ":" .. name end
  end
end

-- ------------------------------------------------------------------ (a) coverage

describe("docs/api.md covers the public Lua surface", function()
  it("has an entry for every function reachable from lf (to lf.a.b.c)", function()
    local names, order = module_functions()
    local missing = {}
    for _, fn in ipairs(order) do
      local documented = false
      for _, n in ipairs(names[fn]) do if has_entry(n) then documented = true end end
      if not documented then missing[#missing + 1] = table.concat(names[fn], " = ") end
    end
    assert(#order > 100, "the walk found only " .. #order .. " functions")
    assert(#missing == 0, ("docs/api.md has no entry (### name(args) -> result) for %d public function(s):\n  %s")
      :format(#missing, table.concat(missing, "\n  ")))
  end)

  it("has an entry for every method of integrators, systems, trajectories, vec3, mat3, potentials", function()
    local missing, count = {}, 0
    for _, o in ipairs(objects()) do
      local label, obj, prefixes = o[1], o[2], o[3]
      for _, name in ipairs(candidate_names(obj)) do
        local ok, v = pcall(function() return obj[name] end)
        if ok and callable(v) and not name:match("^_") then
          count = count + 1
          if not method_entry(name, prefixes) then
            missing[#missing + 1] = ("%s:%s  (%s)"):format(prefixes[1], name, label)
          end
        end
      end
    end
    -- the Lua integrators' methods (luamethod.methods) are methods of the objects above too
    for name in pairs(luamethod.methods) do
      if not name:match("^_") and not has_entry("it:" .. name) then missing[#missing + 1] = "it:" .. name .. "  (lf.method)" end
    end
    assert(count > 40, "the walk found only " .. count .. " methods")
    assert(#missing == 0, ("docs/api.md has no entry for %d method(s):\n  %s"):format(#missing, table.concat(missing, "\n  ")))
  end)

  it("lists every built-in method in the table of ## methods, as docs/methods_table.lua makes it", function()
    local generate = assert(loadfile(ROOT .. "/docs/methods_table.lua"))
    local want = generate("--text")
    local a = API_TEXT:find(want, 1, true)
    assert(a, "the methods table of docs/api.md is not the output of docs/methods_table.lua: run "
      .. "`build/lieflow docs/methods_table.lua --update` (a method was added or its metadata changed)")
    for _, m in ipairs(lf.methods()) do
      assert(want:find("| `" .. m.name .. "` |", 1, true), "method " .. m.name .. " missing in the table")
    end
  end)

  it("has one entry per name, each with a runnable example", function()
    local dup, without = {}, {}
    for name, list in pairs(ENTRIES) do
      if #list > 1 then dup[#dup + 1] = ("%s (lines %d and %d)"):format(name, list[1].line, list[2].line) end
    end
    for _, e in ipairs(LIST) do
      if e.examples == 0 then without[#without + 1] = ("%s (line %d)"):format(e.name, e.line) end
    end
    table.sort(dup)
    assert(#dup == 0, "entries with the same name (help() would show only the last): " .. table.concat(dup, ", "))
    assert(#without == 0, "entries without a ```lua example: " .. table.concat(without, ", "))
    assert(#CODE_HEADINGS == 0, "lines inside code blocks that help() would read as headings (\"# ...\"): lines "
      .. table.concat(CODE_HEADINGS, ", "))
  end)

  it("cites the papers by the keys of docs/references.md, never by internal names", function()
    local refs = read(ROOT .. "/docs/references.md")
    for _, word in ipairs{"seed 0", "seed-0", "thesis 0", "DESIGN"} do
      assert(not API_TEXT:find(word, 1, true), ("docs/api.md says %q: cite the paper by its key"):format(word))
    end
    local prose = API_TEXT:gsub("```.-```", ""):gsub("`[^`\n]*`", "")
    for key in prose:gmatch("[^%w_%]]%[(%u[%u%d]*)%]") do
      assert(refs:find("**[" .. key .. "]**", 1, true), ("docs/api.md cites [%s], which docs/references.md does not define"):format(key))
    end
  end)
end)

-- ------------------------------------------------------------------ (b) the examples run

describe("the examples of docs/api.md", function()
  it("run, each block on its own", function()
    assert(#BLOCKS > 100, "only " .. #BLOCKS .. " examples")
    local failed = {}
    for _, b in ipairs(BLOCKS) do
      local out = {}
      local env = setmetatable({lf = lf, print = function(...) out[#out + 1] = select("#", ...) end},
                               {__index = _G})
      local chunk, err = load(b.code, "=docs/api.md:" .. b.line, "t", env)
      local ok = chunk ~= nil
      local print0 = _G.print -- lf.help prints with the global print: keep the test's output clean
      _G.print = env.print
      if ok then ok, err = pcall(chunk) end
      _G.print = print0
      if not ok then failed[#failed + 1] = ("%s (the example at line %d): %s"):format(b.entry, b.line, tostring(err)) end
    end
    assert(#failed == 0, ("%d example(s) of docs/api.md fail:\n  %s"):format(#failed, table.concat(failed, "\n  ")))
  end)
end)

-- ------------------------------------------------------------------ (c) help()

-- the text help() shows for an entry: from its heading to the next heading of level <= 3
local function entry_text(name)
  local e = assert(ENTRIES[name], "no entry " .. name)[1]
  local lines, i, on = {}, 0, false
  for line in (API_TEXT .. "\n"):gmatch("(.-)\n") do
    i = i + 1
    if i == e.line then on = true
    elseif on and line:match("^#%s") or on and line:match("^##%s") or on and line:match("^###%s") then break end
    if on then lines[#lines + 1] = line end
  end
  return table.concat(lines, "\n")
end

describe("help()", function()
  it("lf.help(lf.run) prints the entry of lf.run, as require('lieflow.help').text does", function()
    local want = entry_text("lf.run")
    assert(want:find("^### lf%.run%(system, opts%) %-> trajectory"))
    assert.are.equal(want, help.text(lf.run))
    assert.are.equal(want, help.text("lf.run"))
    assert.are.equal(want, help.text("run"))
    local printed = {}
    local print0 = _G.print
    _G.print = function(s) printed[#printed + 1] = s end
    local ok, err = pcall(lf.help, lf.run)
    _G.print = print0
    assert(ok, err)
    assert.are.same({want}, printed)
  end)

  it("finds every entry by its name", function()
    for _, e in ipairs(LIST) do assert.are.equal(entry_text(e.name), help.text(e.name)) end
  end)

  it("lf.help(f) shows the entry of every documented function f", function()
    local names, order = module_functions()
    local wrong = {}
    for _, fn in ipairs(order) do
      local name
      for _, n in ipairs(names[fn]) do if has_entry(n) then name = n break end end
      if name and help.text(fn) ~= entry_text(name) then
        local shown = help.text(fn):match("^[^\n]*")
        wrong[#wrong + 1] = ("%s: %s"):format(name, shown)
      end
    end
    assert(#wrong == 0, "help(f) does not show the entry of:\n  " .. table.concat(wrong, "\n  "))
  end)

  it("shows the entry of an object's kind: integrator, system, vec3, mat3, potential, trajectory", function()
    local body = lf.rigidbody{inertia = {1, 2, 2}}
    assert.are.equal(entry_text("lf.integrator"), help.text(lf.integrator("vlv", body, {h = 0.1})))
    assert.are.equal(entry_text("lf.rigidbody"), help.text(body))
    assert.are.equal(entry_text("lf.vec3"), help.text(lf.vec3()))
    assert.are.equal(entry_text("lf.mat3"), help.text(lf.mat3()))
    assert.are.equal(entry_text("lf.potential"), help.text(lf.potential.top()))
    assert.are.equal(entry_text("lf.run"), help.text(lf.run(body, {method = "vlv", h = 0.1, T = 0.1})))
    assert.are.equal(entry_text("it:step"), help.text("it:step"))
  end)

  it("in the executable shows the same text (docs/api.md compiled in)", function()
    local exe = os.getenv("LIEFLOW_EXE") or (ROOT .. "/build/lieflow")
    local f = io.open(exe, "rb")
    if not f then pending("build/lieflow not built") return end
    f:close()
    local p = io.popen(exe .. [[ -E -e 'io.write(require("lieflow.help").text(lf.run))' 2>&1]])
    local got = p:read("a")
    p:close()
    assert.are.equal(entry_text("lf.run"), got,
      "build/lieflow shows another text for help(lf.run): rebuild it (make) after changing docs/api.md")
  end)
end)
