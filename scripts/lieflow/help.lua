-- SPDX-License-Identifier: GPL-3.0-or-later
-- lieflow.help — lf.help(x) (and help(x) in the REPL): the reference text of a lieflow function,
-- object or topic, from docs/api.md (compiled into the lieflow executable as lieflow.apidoc;
-- read from the source tree or the installed share/doc/lieflow/api.md otherwise).
--
-- docs/api.md is organized in sections "## topic" and entries "### name(args) -> result"; an entry
-- runs to the next heading of its level or above. help(lf.run), help("lf.run"), help("run") and
-- help("it:step") find an entry by its name; help(it) for an integrator shows "lf.integrator";
-- help() lists the entries; help("word") with no entry of that name lists the entries whose text
-- mentions it.
local M = {}

local text, entries, order

local function read_file(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local t = f:read("a")
  f:close()
  return t
end

local function load_text()
  if text then return text end
  local ok, t = pcall(require, "lieflow.apidoc")
  if ok and type(t) == "string" then text = t return t end
  local src = debug.getinfo(1, "S").source
  if src:sub(1, 1) == "@" then
    local dir = src:sub(2):match("^(.*)/[^/]*$") or "."
    for _, p in ipairs{dir .. "/../../docs/api.md", dir .. "/../../../doc/lieflow/api.md",
                       dir .. "/../../../../share/doc/lieflow/api.md"} do
      t = read_file(p)
      if t then text = t return t end
    end
  end
  return nil
end

-- The entry's name: the heading up to its argument list or result ("lf.run(system, opts) -> ..."
-- gives "lf.run"; "it:step(n)" gives "it:step"; "lf.potential.stress{alpha=}" gives
-- "lf.potential.stress").
local function entry_name(heading)
  return heading:match("^`?([%w_%.:]+)")
end

local function build_index()
  if entries then return entries end
  entries, order = {}, {}
  local t = load_text()
  if not t then return entries end
  local cur, buf
  local function flush()
    if cur then entries[cur.name] = {heading = cur.heading, body = table.concat(buf, "\n")} end
  end
  for line in (t .. "\n"):gmatch("(.-)\n") do
    local level, heading = line:match("^(#+)%s+(.*)$")
    if level then
      if #level <= 3 then flush(); cur = nil end
      if #level == 3 then
        local name = entry_name(heading)
        if name then
          cur, buf = {name = name, heading = heading}, {line}
          order[#order + 1] = name
        end
      end
    elseif cur then
      buf[#buf + 1] = line
    end
  end
  flush()
  return entries
end

-- The names under which lf (the module table) holds the value x, breadth first (shortest paths
-- first: lf.so3.exp before lf.autodiff...), skipping lf.core (the C binding, whose functions are the
-- same values as lf.*): the first that has an entry, else the first found.
local function name_of(x, idx)
  local lf = package.loaded.lieflow
  if type(lf) ~= "table" then return nil end
  local queue, seen, first = {{lf, "lf"}}, {[lf] = true}, nil
  local head = 1
  while queue[head] do
    local t, prefix = queue[head][1], queue[head][2]
    head = head + 1
    local keys = {}
    for k in pairs(t) do if type(k) == "string" then keys[#keys + 1] = k end end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local v = rawget(t, k)
      local path = prefix .. "." .. k
      if rawequal(v, x) then
        if idx[path] then return path end
        first = first or path
      elseif type(v) == "table" and not seen[v] and path ~= "lf.core" and #queue < 2000 then
        seen[v] = true
        queue[#queue + 1] = {v, path}
      end
    end
  end
  return first
end

-- objects: the entry that documents a value's type
local TYPE_ENTRY = {["lf.integrator"] = "lf.integrator", ["lf.luaintegrator"] = "lf.integrator",
                    ["lf.system"] = "lf.rigidbody", ["lf.vec3"] = "lf.vec3", ["lf.mat3"] = "lf.mat3",
                    ["lf.potential"] = "lf.potential", ["lf.trajectory"] = "lf.run", ["lf.method"] = "lf.method",
                    ["lf.rkmk_method"] = "lf.rkmk", ["lf.ensemble_result"] = "lf.ensemble"}

local SYSTEM_ENTRY = {rigidbody = "lf.rigidbody", bodies = "lf.bodies", lie_ode = "lf.lie_ode", spheres = "lf.spheres"}

local function type_entry(x)
  local mt = getmetatable(x)
  local name = type(mt) == "table" and rawget(mt, "__name")
  if name == "lf.system" then
    local ok, kind = pcall(function() return x.kind end)
    if ok and SYSTEM_ENTRY[kind] then return SYSTEM_ENTRY[kind] end
  end
  return name and TYPE_ENTRY[name]
end

--- M.text(x) -> the text lf.help(x) prints.
function M.text(x)
  local idx = build_index()
  local out
  if not load_text() then
    out = "lieflow help: the reference (docs/api.md) is not available in this installation"
  elseif x == nil then
    local lines = {"lieflow reference (docs/api.md): help(name) or help(value) for one of"}
    local row = {}
    for _, n in ipairs(order) do
      row[#row + 1] = n
      if #table.concat(row, "  ") > 90 then lines[#lines + 1] = "  " .. table.concat(row, "  ", 1, #row - 1); row = {n} end
    end
    if #row > 0 then lines[#lines + 1] = "  " .. table.concat(row, "  ") end
    out = table.concat(lines, "\n")
  else
    local name = type(x) == "string" and x or name_of(x, idx) or type_entry(x)
    local e = name and (idx[name] or idx["lf." .. name] or idx[(name:gsub("^lf%.", "it:"))])
    if e then out = e.body
    elseif type(x) == "string" then
      local hits = {}
      for _, n in ipairs(order) do
        if idx[n].body:lower():find(x:lower(), 1, true) then hits[#hits + 1] = n end
      end
      out = #hits > 0 and ("no entry '%s'; the entries that mention it: %s"):format(x, table.concat(hits, ", "))
        or ("no entry '%s' and no entry mentions it: help() lists them"):format(x)
    else
      out = ("no reference entry for this %s%s: help() lists them"):format(type(x), name and (" (" .. name .. ")") or "")
    end
  end
  return out
end

--- lf.help(x): prints the reference text (see the header of this file).
function M.help(x) print(M.text(x)) end

return M
